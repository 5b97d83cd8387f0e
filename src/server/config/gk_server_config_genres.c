/* gk_server_config_genres.c: the "genres" object of the config, the one
 * object whose keys are not rows of the config table: they are genre names
 * from the registry (gk_genres.h, and the libraries gk_server_config_load
 * loaded for "genres.<name>.path"). Each genre's object has four keys:
 * enabled, max_players (within the genre's own player range, and at the
 * end within limits.players_per_room), options (checked by the genre, as
 * a room will apply them) and path.
 */
#include "gk_server_config_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"

/* Checks a genre's server options by applying them to a scratch config. */
static int check_options(sv_cfg_ctx *x, const gk_sim *sim, const cJSON *opts,
                         const char *path) {
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (!cfg) return sv_cfg_fail(x, GK_ENOMEM, path, "out of memory");
  sim->config_default(cfg);
  char msg[GK_SERVER_CONFIG_ERR_MAX];
  msg[0] = '\0';
  int rc = gk_config_apply(sim, cfg, opts, path, msg, sizeof(msg));
  if (sim->config_free) sim->config_free(cfg);
  free(cfg);
  if (rc) {
    if (x->err && x->errlen)
      snprintf(x->err, x->errlen, "%s: %s", x->file, msg);
    return rc;
  }
  return 0;
}

/* genres.<name>.path: the genre library gk_server_config_load loaded
 * before parsing (see load_genre_libs); here it is only checked. */
static int check_genre_path(sv_cfg_ctx *x, const cJSON *v, const char *path) {
  if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
    return sv_cfg_fail(x, GK_EINVAL, path, "must be a non-empty string, got %s",
                       gk_config_type_name(v));
  if (strlen(v->valuestring) >= GK_SERVER_PATH_MAX)
    return sv_cfg_fail(x, GK_ERANGE, path, "longer than %d bytes",
                       GK_SERVER_PATH_MAX - 1);
  return 0;
}

static int walk_genre(sv_cfg_ctx *x, uint32_t gi, const cJSON *obj,
                      const char *path) {
  gk_server_genre *g = &x->c->genres[gi];
  if (!cJSON_IsObject(obj))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be an object, got %s",
                       gk_config_type_name(obj));
  int rc = sv_cfg_check_keys(x, obj, path);
  if (rc) return rc;
  g->enabled = 1; /* listing a genre enables it unless it says otherwise */
  for (const cJSON *v = obj->child; v; v = v->next) {
    char p[256];
    sv_cfg_join(p, sizeof(p), path, v->string);
    if (strcmp(v->string, "enabled") == 0) {
      rc = sv_cfg_get_bool(x, v, p, &g->enabled);
      if (rc) return rc;
    } else if (strcmp(v->string, "max_players") == 0) {
      uint64_t u = 0;
      rc = sv_cfg_get_uint(x, v, p, g->sim->players_min, g->sim->players_max,
                           &u);
      if (rc) return rc;
      x->genre_max[gi] = (uint32_t)u;
    } else if (strcmp(v->string, "options") == 0) {
      rc = check_options(x, g->sim, v, p);
      if (rc) return rc;
      cJSON_Delete(g->options);
      g->options = cJSON_Duplicate(v, 1);
      if (!g->options) return sv_cfg_fail(x, GK_ENOMEM, p, "out of memory");
    } else if (strcmp(v->string, "path") == 0) {
      rc = check_genre_path(x, v, p);
      if (rc) return rc;
    } else {
      return sv_cfg_fail(x, GK_ENOTFOUND, p,
                         "unknown key (expected enabled, max_players, options, "
                         "path)");
    }
  }
  return 0;
}

int sv_cfg_walk_genres(sv_cfg_ctx *x, const cJSON *obj, const char *path) {
  if (!cJSON_IsObject(obj))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be an object, got %s",
                       gk_config_type_name(obj));
  int rc = sv_cfg_check_keys(x, obj, path);
  if (rc) return rc;
  /* listing genres means: exactly these are offered */
  x->genres_given = 1;
  for (uint32_t i = 0; i < x->c->ngenres; i++) x->c->genres[i].enabled = 0;
  for (const cJSON *v = obj->child; v; v = v->next) {
    char p[256];
    sv_cfg_join(p, sizeof(p), path, v->string);
    uint32_t gi = 0;
    while (gi < x->c->ngenres &&
           strcmp(x->c->genres[gi].sim->name, v->string) != 0)
      gi++;
    if (gi == x->c->ngenres) {
      char known[256] = "";
      size_t used = 0;
      for (uint32_t i = 0; i < x->c->ngenres; i++) {
        int n = snprintf(known + used, sizeof(known) - used, "%s%s",
                         i ? ", " : "", x->c->genres[i].sim->name);
        if (n < 0 || (size_t)n >= sizeof(known) - used) break;
        used += (size_t)n;
      }
      return sv_cfg_fail(x, GK_ENOTFOUND, p,
                         "unknown genre (this build has: %s)%s", known,
                         cJSON_GetObjectItemCaseSensitive(v, "path")
                             ? "; a genre library named by \"path\" is loaded "
                               "only when the config is read from a file"
                             : "");
    }
    rc = walk_genre(x, gi, v, p);
    if (rc) return rc;
  }
  return 0;
}

/* Each genre's max_players: as given, else the genre's and the server's
 * limit, whichever is lower; an enabled genre must fit in a room. */
int sv_cfg_genres_finish(sv_cfg_ctx *x) {
  gk_server_config *c = x->c;
  for (uint32_t i = 0; i < c->ngenres; i++) {
    gk_server_genre *g = &c->genres[i];
    uint32_t cap = g->sim->players_max < c->max_players ? g->sim->players_max
                                                        : c->max_players;
    if (x->genre_max[i]) {
      if (x->genre_max[i] > c->max_players) {
        char p[128];
        snprintf(p, sizeof(p), "genres.%s.max_players", g->sim->name);
        return sv_cfg_fail(
            x, GK_ERANGE, p,
            "must not exceed limits.players_per_room (%u), got %u",
            c->max_players, x->genre_max[i]);
      }
      g->max_players = x->genre_max[i];
    } else {
      g->max_players = cap;
    }
    if (g->enabled && g->max_players < g->sim->players_min) {
      char p[128];
      snprintf(p, sizeof(p), "genres.%s", g->sim->name);
      return sv_cfg_fail(
          x, GK_ERANGE, p,
          "needs at least %u players but limits.players_per_room is %u",
          g->sim->players_min, c->max_players);
    }
  }
  return 0;
}
