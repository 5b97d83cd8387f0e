/* gk_server_config.c: the strict JSON config reader.
 *
 * The schema is a set of small tables, one per JSON object, each row a key
 * with its kind, range and place in gk_server_config. A walker goes over
 * the document's keys in order and looks each one up in the table of the
 * object it is in; a key not in the table is an error naming its path, a
 * key seen twice in one object is an error (cJSON keeps duplicates, so the
 * walker checks), and every value is checked for type and range before it
 * is stored. The "genres" object is walked by hand, because its keys are
 * genre names from the registry.
 *
 * Numbers: JSON has only doubles; an integer key accepts a number only if
 * it is integral and inside the key's range (checked in double before any
 * conversion, so 1e300 or -0.5 cannot wrap).
 */
#include "gk_server_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_net_wire.h"

#define KEYS_PER_OBJECT_MAX 256

typedef enum kind {
  K_OBJECT, /* a nested table */
  K_UINT,   /* uint32_t / uint16_t / uint64_t by size */
  K_STRING, /* char[size] */
  K_BOOL,   /* int */
  K_LEVEL,  /* gk_log_level */
  K_DESYNC, /* gk_desync_policy */
  K_AUTH,   /* the "auth" object: walk_auth */
  K_WS,     /* the "websocket" object: gk_server_config_ws.c */
  K_DELAY   /* "auto" or an integer in [min, max] (input_delay) */
} kind;

typedef struct field {
  const char *key;
  kind k;
  size_t off;
  size_t size;             /* of the member (K_UINT, K_STRING) */
  uint64_t min, max;       /* K_UINT range; K_STRING: min length */
  const struct field *sub; /* K_OBJECT */
} field;

#define OFF(m) offsetof(gk_server_config, m)
#define SZ(m) sizeof(((gk_server_config *)0)->m)
#define U(key, m, lo, hi)                                                      \
  { key, K_UINT, OFF(m), SZ(m), lo, hi, NULL }
#define END                                                                    \
  { NULL, K_OBJECT, 0, 0, 0, 0, NULL }

static const field listen_fields[] = {
    {"host", K_STRING, OFF(host), SZ(host), 1, 0, NULL},
    U("port", port, 0, 65535),
    U("socket_buffer", socket_buffer, 0, 64u << 20),
    END};

static const field limits_fields[] = {
    U("rooms", max_rooms, 1, GK_SERVER_ROOMS_MAX),
    U("players_per_room", max_players, 1, GK_PLAYERS_MAX),
    U("peers", max_peers, 1, GK_SERVER_PEERS_MAX),
    U("packet_bytes", max_packet, 64, GK_WIRE_MAX),
    U("strikes", strikes, 1, 1000000),
    U("lobby_timeout_ms", lobby_timeout_ms, 0, 86400000),
    /* abuse limits */
    U("conns_per_ip", conns_per_ip, 0, GK_SERVER_PEERS_MAX),
    U("connects_per_ip_per_s", connects_per_ip_per_s, 0, 100000),
    U("creates_per_min", creates_per_min, 0, 100000),
    U("handshake_ms", handshake_ms, 0, 600000),
    U("log_interval_ms", limit_log_ms, 100, 3600000), END};

static const field lockstep_fields[] = {
    {"input_delay", K_DELAY, OFF(input_delay), SZ(input_delay), 1, 60, NULL},
    U("input_delay_min", input_delay_min, 1, 60),
    U("delay_hold_ms", delay_hold_ms, 0, 600000),
    U("delay_every_ms", delay_every_ms, 0, 3600000),
    U("delay_jitter_x", delay_jitter_x, 0, 16),
    U("input_delay_max", input_delay_max, 1, 60),
    U("lead", lead, 0, 60),
    U("window", window, 64, 65536),
    U("late_slack_ms", late_slack_ms, 0, 60000),
    END};

static const field stall_fields[] = {
    U("notice_ms", stall_notice_ms, 1, 3600000),
    U("auto_remove_ms", stall_auto_remove_ms, 0, 3600000), END};

static const field replays_fields[] = {
    {"enabled", K_BOOL, OFF(replays_enabled), SZ(replays_enabled), 0, 0, NULL},
    {"dir", K_STRING, OFF(replay_dir), SZ(replay_dir), 1, 0, NULL},
    U("flush_ms", replay_flush_ms, 0, 600000),
    END};

static const field timing_fields[] = {
    U("service_ms", service_ms, 1, 1000),
    U("peer_timeout_ms", peer_timeout_ms, 1000, 600000),
    U("catchup_ticks", catchup_ticks, 1, 1000), U("ping_ms", ping_ms, 0, 10000),
    END};

/* admin and agones: checked as a whole by ops_finish */
#define B(key, m)                                                              \
  { key, K_BOOL, OFF(m), SZ(m), 0, 0, NULL }
static const field admin_fields[] = {
    B("enabled", admin.enabled),
    {"listen", K_STRING, OFF(admin.listen), SZ(admin.listen), 3, 0, NULL},
    {"token_file", K_STRING, OFF(admin.token_file), SZ(admin.token_file), 1, 0,
     NULL},
    U("connections", admin.connections, 1, 1024),
    U("request_ms", admin.request_ms, 100, 600000),
    U("request_bytes", admin.request_bytes, 4096, 1048576),
    U("headers", admin.headers, 4, 256),
    U("late_ms", admin.late_ms, 1, 600000),
    U("series_ms", admin.series_ms, 100, 60000),
    U("series_samples", admin.series_samples, 2, 86400),
    END};

static const field agones_fields[] = {
    B("enabled", agones.enabled), U("port", agones.port, 0, 65535),
    U("health_ms", agones.health_ms, 100, 600000), END};

/* reconnect and spectators: checked by reconnect_finish */
static const field reconnect_fields[] = {
    U("hold_ms", reconnect_hold_ms, 0, 3600000),
    {"while_away", K_STRING, OFF(reconnect_while_away),
     SZ(reconnect_while_away), 1, 0, NULL},
    END};

static const field spectator_fields[] = {
    U("delay_steps", spectator_delay_steps, 0, 999),
    U("behind_steps", spectator_behind_steps, 1, 1000),
    U("per_room", spectator_per_room, 0, 64), U("max", spectator_max, 0, 4096),
    END};

static const field top_fields[] = {
    {"listen", K_OBJECT, 0, 0, 0, 0, listen_fields},
    {"log_level", K_LEVEL, OFF(log_level), 0, 0, 0, NULL},
    U("step_hz", step_hz, 1, 1000),
    {"limits", K_OBJECT, 0, 0, 0, 0, limits_fields},
    {"lockstep", K_OBJECT, 0, 0, 0, 0, lockstep_fields},
    {"stall", K_OBJECT, 0, 0, 0, 0, stall_fields},
    {"desync", K_DESYNC, OFF(desync), 0, 0, 0, NULL},
    {"replays", K_OBJECT, 0, 0, 0, 0, replays_fields},
    U("shutdown_grace_ms", shutdown_grace_ms, 0, 600000),
    {"timing", K_OBJECT, 0, 0, 0, 0, timing_fields},
    {"genres", K_OBJECT, 0, 0, 0, 0, NULL}, /* walked by hand */
    {"admin", K_OBJECT, 0, 0, 0, 0, admin_fields},
    {"agones", K_OBJECT, 0, 0, 0, 0, agones_fields},
    {"auth", K_AUTH, 0, 0, 0, 0, NULL},
    {"websocket", K_WS, 0, 0, 0, 0, NULL},
    {"reconnect", K_OBJECT, 0, 0, 0, 0, reconnect_fields},
    {"spectator", K_OBJECT, 0, 0, 0, 0, spectator_fields},
    END};

/* --- messages ------------------------------------------------------------ */

typedef struct ctx {
  gk_server_config *c;
  const char *file;
  char *err;
  size_t errlen;
  uint32_t genre_max[GK_SERVER_GENRES_MAX]; /* 0 = not given */
  int genres_given;
} ctx;

static int fail(ctx *x, int code, const char *path, const char *fmt, ...)
    GK_PRINTF(4, 5);

static int fail(ctx *x, int code, const char *path, const char *fmt, ...) {
  if (x->err && x->errlen) {
    char reason[GK_SERVER_CONFIG_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (path && *path)
      snprintf(x->err, x->errlen, "%s: %s: %s", x->file, path, reason);
    else
      snprintf(x->err, x->errlen, "%s: %s", x->file, reason);
  }
  return code;
}

/* path.key into out; a path too long for out is cut (it is only text). */
static void join(char *out, size_t cap, const char *path, const char *key) {
  int n = path && *path ? snprintf(out, cap, "%s.%s", path, key)
                        : snprintf(out, cap, "%s", key);
  if (n < 0) out[0] = '\0';
}

/* Rejects duplicate keys and oversized objects before anything is read. */
static int check_keys(ctx *x, const cJSON *obj, const char *path) {
  int n = 0;
  for (const cJSON *a = obj->child; a; a = a->next) {
    if (++n > KEYS_PER_OBJECT_MAX)
      return fail(x, GK_ETOOBIG, path, "more than %d keys",
                  KEYS_PER_OBJECT_MAX);
    for (const cJSON *b = obj->child; b != a; b = b->next) {
      if (strcmp(a->string, b->string) == 0) {
        char p[256];
        join(p, sizeof(p), path, a->string);
        return fail(x, GK_EINVAL, p, "duplicate key");
      }
    }
  }
  return 0;
}

/* An integral JSON number in [min, max]. */
static int get_uint(ctx *x, const cJSON *v, const char *path, uint64_t min,
                    uint64_t max, uint64_t *out) {
  if (!cJSON_IsNumber(v))
    return fail(x, GK_EINVAL, path, "must be an integer in %llu..%llu, got %s",
                (unsigned long long)min, (unsigned long long)max,
                gk_config_type_name(v));
  double d = v->valuedouble;
  /* the comparisons are false for NaN, so NaN is refused too */
  if (!(d >= (double)min && d <= (double)max) || (double)(uint64_t)d != d)
    return fail(x, GK_ERANGE, path, "must be an integer in %llu..%llu, got %g",
                (unsigned long long)min, (unsigned long long)max, d);
  *out = (uint64_t)d;
  return 0;
}

/* lockstep.input_delay: "auto", or a fixed number of steps. */
static int set_delay(ctx *x, const field *f, const cJSON *v, const char *path) {
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "auto") != 0)
      return fail(x, GK_ERANGE, path,
                  "must be \"auto\" or an integer in %llu..%llu",
                  (unsigned long long)f->min, (unsigned long long)f->max);
    x->c->input_delay_auto = 1;
    return 0;
  }
  uint64_t u = 0;
  int rc = get_uint(x, v, path, f->min, f->max, &u);
  if (rc) return rc;
  x->c->input_delay = (uint32_t)u;
  x->c->input_delay_auto = 0;
  return 0;
}

static int set_field(ctx *x, const field *f, const cJSON *v, const char *path) {
  char *base = (char *)x->c;
  switch (f->k) {
  case K_DELAY:
    return set_delay(x, f, v, path);
  case K_UINT: {
    uint64_t u = 0;
    int rc = get_uint(x, v, path, f->min, f->max, &u);
    if (rc) return rc;
    if (f->size == sizeof(uint16_t)) {
      uint16_t w = (uint16_t)u;
      memcpy(base + f->off, &w, sizeof(w));
    } else if (f->size == sizeof(uint32_t)) {
      uint32_t w = (uint32_t)u;
      memcpy(base + f->off, &w, sizeof(w));
    } else {
      memcpy(base + f->off, &u, sizeof(u));
    }
    return 0;
  }
  case K_STRING: {
    if (!cJSON_IsString(v))
      return fail(x, GK_EINVAL, path, "must be a string, got %s",
                  gk_config_type_name(v));
    size_t n = strlen(v->valuestring);
    if (n < f->min || n >= f->size)
      return fail(x, GK_ERANGE, path, "must be %llu to %zu bytes long",
                  (unsigned long long)f->min, f->size - 1);
    memcpy(base + f->off, v->valuestring, n + 1);
    return 0;
  }
  case K_BOOL: {
    if (!cJSON_IsBool(v))
      return fail(x, GK_EINVAL, path, "must be true or false, got %s",
                  gk_config_type_name(v));
    int b = cJSON_IsTrue(v);
    memcpy(base + f->off, &b, sizeof(b));
    return 0;
  }
  case K_LEVEL: {
    gk_log_level l;
    if (!cJSON_IsString(v) || gk_log_level_parse(v->valuestring, &l) != 0)
      return fail(x, cJSON_IsString(v) ? GK_ERANGE : GK_EINVAL, path,
                  "must be one of \"debug\", \"info\", \"warn\", \"error\"");
    x->c->log_level = l;
    return 0;
  }
  case K_DESYNC: {
    char why[GK_SERVER_CONFIG_ERR_MAX];
    if (cJSON_IsObject(v)) {
      int rc = gk_server_config_desync(x->c, v, why, sizeof(why));
      return rc ? fail(x, rc, NULL, "%s", why) : 0;
    }
    if (cJSON_IsString(v) && strcmp(v->valuestring, "report") == 0)
      x->c->desync = GK_DESYNC_REPORT;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "end") == 0)
      x->c->desync = GK_DESYNC_END;
    else
      return fail(x, cJSON_IsString(v) ? GK_ERANGE : GK_EINVAL, path,
                  "must be \"report\", \"end\" or an object");
    return 0;
  }
  case K_WS: {
    char why[GK_SERVER_CONFIG_ERR_MAX];
    int rc = gk_server_config_ws(x->c, v, why, sizeof(why));
    return rc ? fail(x, rc, NULL, "%s", why) : 0;
  }
  case K_OBJECT:
  case K_AUTH:
    break;
  }
  return fail(x, GK_EINVAL, path, "internal: bad schema row");
}

static int walk_genres(ctx *x, const cJSON *obj, const char *path);
static int walk_auth(ctx *x, const cJSON *obj, const char *path);

static int walk(ctx *x, const cJSON *obj, const field *table,
                const char *path) {
  if (!cJSON_IsObject(obj))
    return fail(x, GK_EINVAL, path, "must be an object, got %s",
                gk_config_type_name(obj));
  int rc = check_keys(x, obj, path);
  if (rc) return rc;
  for (const cJSON *v = obj->child; v; v = v->next) {
    char p[256];
    join(p, sizeof(p), path, v->string);
    const field *f = table;
    while (f->key && strcmp(f->key, v->string) != 0) f++;
    if (!f->key) return fail(x, GK_ENOTFOUND, p, "unknown key");
    if (f->k == K_OBJECT) {
      rc = f->sub ? walk(x, v, f->sub, p) : walk_genres(x, v, p);
    } else if (f->k == K_AUTH) {
      rc = walk_auth(x, v, p);
    } else {
      rc = set_field(x, f, v, p);
    }
    if (rc) return rc;
  }
  return 0;
}

/* Checks a genre's server options by applying them to a scratch config. */
static int check_options(ctx *x, const gk_sim *sim, const cJSON *opts,
                         const char *path) {
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (!cfg) return fail(x, GK_ENOMEM, path, "out of memory");
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
static int check_genre_path(ctx *x, const cJSON *v, const char *path) {
  if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
    return fail(x, GK_EINVAL, path, "must be a non-empty string, got %s",
                gk_config_type_name(v));
  if (strlen(v->valuestring) >= GK_SERVER_PATH_MAX)
    return fail(x, GK_ERANGE, path, "longer than %d bytes",
                GK_SERVER_PATH_MAX - 1);
  return 0;
}

static int walk_genre(ctx *x, uint32_t gi, const cJSON *obj, const char *path) {
  gk_server_genre *g = &x->c->genres[gi];
  if (!cJSON_IsObject(obj))
    return fail(x, GK_EINVAL, path, "must be an object, got %s",
                gk_config_type_name(obj));
  int rc = check_keys(x, obj, path);
  if (rc) return rc;
  g->enabled = 1; /* listing a genre enables it unless it says otherwise */
  for (const cJSON *v = obj->child; v; v = v->next) {
    char p[256];
    join(p, sizeof(p), path, v->string);
    if (strcmp(v->string, "enabled") == 0) {
      if (!cJSON_IsBool(v))
        return fail(x, GK_EINVAL, p, "must be true or false, got %s",
                    gk_config_type_name(v));
      g->enabled = cJSON_IsTrue(v);
    } else if (strcmp(v->string, "max_players") == 0) {
      uint64_t u = 0;
      rc = get_uint(x, v, p, g->sim->players_min, g->sim->players_max, &u);
      if (rc) return rc;
      x->genre_max[gi] = (uint32_t)u;
    } else if (strcmp(v->string, "options") == 0) {
      rc = check_options(x, g->sim, v, p);
      if (rc) return rc;
      cJSON_Delete(g->options);
      g->options = cJSON_Duplicate(v, 1);
      if (!g->options) return fail(x, GK_ENOMEM, p, "out of memory");
    } else if (strcmp(v->string, "path") == 0) {
      rc = check_genre_path(x, v, p);
      if (rc) return rc;
    } else {
      return fail(x, GK_ENOTFOUND, p,
                  "unknown key (expected enabled, max_players, options, "
                  "path)");
    }
  }
  return 0;
}

static int walk_genres(ctx *x, const cJSON *obj, const char *path) {
  if (!cJSON_IsObject(obj))
    return fail(x, GK_EINVAL, path, "must be an object, got %s",
                gk_config_type_name(obj));
  int rc = check_keys(x, obj, path);
  if (rc) return rc;
  /* listing genres means: exactly these are offered */
  x->genres_given = 1;
  for (uint32_t i = 0; i < x->c->ngenres; i++) x->c->genres[i].enabled = 0;
  for (const cJSON *v = obj->child; v; v = v->next) {
    char p[256];
    join(p, sizeof(p), path, v->string);
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
      return fail(x, GK_ENOTFOUND, p, "unknown genre (this build has: %s)%s",
                  known,
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

/* --- auth: connect tokens --------------------------------------------------
 */

static const field auth_fields[] = {
    {"key_file", K_STRING, OFF(auth_key_file), SZ(auth_key_file), 1, 0, NULL},
    U("replay_cache", auth_replay_cache, 16, 1000000),
    END};

/* "auth": { "mode": "open" | "token", "key_file": PATH, "replay_cache": N }.
 * The key file is only named here: gk_server_start reads and checks it. */
static int walk_auth(ctx *x, const cJSON *obj, const char *path) {
  if (!cJSON_IsObject(obj))
    return fail(x, GK_EINVAL, path, "must be an object, got %s",
                gk_config_type_name(obj));
  int rc = check_keys(x, obj, path);
  for (const cJSON *v = obj->child; v && !rc; v = v->next) {
    char p[256];
    join(p, sizeof(p), path, v->string);
    if (strcmp(v->string, "mode") == 0) {
      const char *m = cJSON_IsString(v) ? v->valuestring : "";
      if (strcmp(m, "open") == 0)
        x->c->auth_mode = GK_AUTH_OPEN;
      else if (strcmp(m, "token") == 0)
        x->c->auth_mode = GK_AUTH_TOKEN;
      else
        rc = fail(x, cJSON_IsString(v) ? GK_ERANGE : GK_EINVAL, p,
                  "must be \"open\" or \"token\"");
      continue;
    }
    const field *f = auth_fields;
    while (f->key && strcmp(f->key, v->string) != 0) f++;
    rc = f->key ? set_field(x, f, v, p)
                : fail(x, GK_ENOTFOUND, p,
                       "unknown key (expected mode, key_file, replay_cache)");
  }
  if (!rc && x->c->auth_mode == GK_AUTH_TOKEN && !x->c->auth_key_file[0])
    rc = fail(x, GK_EINVAL, path,
              "mode \"token\" needs key_file (32 bytes, mode 0600: "
              "gk-token keygen --out FILE)");
  return rc;
}

/* --- cross-key checks ------------------------------------------------------
 */

/* admin.listen "HOST:PORT" or "[V6]:PORT" into host and port: a numeric
 * address or "localhost" (no name lookups at start-up). */
static int admin_listen(ctx *x, gk_server_admin_config *a) {
  const char *l = a->listen, *colon = strrchr(l, ':');
  const char *h = l, *he = colon;
  if (l[0] == '[') {
    h = l + 1;
    he = strchr(l, ']');
    if (!he || he[1] != ':')
      he = NULL;
    else
      colon = he + 1;
  }
  char *end = NULL;
  unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (!colon || !he || he == h || (size_t)(he - h) >= sizeof(a->host) ||
      !colon[1] || *end || port > 65535 || colon[1] == '-' || colon[1] == '+')
    return fail(x, GK_EINVAL, "admin.listen",
                "must be \"HOST:PORT\" (\"[V6]:PORT\" for IPv6), got \"%s\"",
                l);
  memcpy(a->host, h, (size_t)(he - h));
  a->host[he - h] = '\0';
  a->port = (uint16_t)port;
  if (strcmp(a->host, "localhost") == 0)
    snprintf(a->host, sizeof(a->host), "127.0.0.1");
  unsigned char addr[16];
  if (inet_pton(AF_INET, a->host, addr) == 1) {
    a->loopback = addr[0] == 127;
  } else if (inet_pton(AF_INET6, a->host, addr) == 1) {
    static const unsigned char one[16] = {[15] = 1};
    a->loopback = memcmp(addr, one, 16) == 0;
  } else {
    return fail(x, GK_EINVAL, "admin.listen",
                "host must be a numeric address or localhost, got \"%s\"",
                a->host);
  }
  return 0;
}

/* The admin listener's address, and its one safety rule: anything but
 * loopback needs a token for the mutating endpoints. */
static int ops_finish(ctx *x) {
  gk_server_admin_config *a = &x->c->admin;
  int rc = admin_listen(x, a);
  if (rc) return rc;
  if (a->enabled && !a->loopback && !a->token_file[0])
    return fail(x, GK_EINVAL, "admin.token_file",
                "required when admin.listen (%s) is not a loopback address",
                a->listen);
  return 0;
}

static int check_delay(ctx *x) {
  gk_server_config *c = x->c;
  if (c->input_delay_min > c->input_delay_max)
    return fail(x, GK_ERANGE, "lockstep.input_delay_min",
                "must not exceed lockstep.input_delay_max (%u), got %u",
                c->input_delay_max, c->input_delay_min);
  return 0;
}

/* reconnect.while_away, and spectators that a hash ring can follow. */
static int reconnect_finish(ctx *x) {
  gk_server_config *c = x->c;
  if (strcmp(c->reconnect_while_away, "stall") == 0)
    c->reconnect_neutral = 0;
  else if (strcmp(c->reconnect_while_away, "neutral") == 0)
    c->reconnect_neutral = 1;
  else
    return fail(x, GK_ERANGE, "reconnect.while_away",
                "must be \"stall\" or \"neutral\", got \"%s\"",
                c->reconnect_while_away);
  if (c->spectator_delay_steps + c->spectator_behind_steps > 1000u)
    return fail(x, GK_ERANGE, "spectator.behind_steps",
                "spectator.delay_steps + behind_steps must not exceed 1000 "
                "(a room keeps its last 1024 step hashes), got %u",
                c->spectator_delay_steps + c->spectator_behind_steps);
  return 0;
}

static int finish(ctx *x) {
  gk_server_config *c = x->c;
  int drc = check_delay(x);
  if (drc) return drc;
  if (!c->input_delay_auto && c->input_delay > c->input_delay_max)
    return fail(x, GK_ERANGE, "lockstep.input_delay",
                "must not exceed lockstep.input_delay_max (%u), got %u",
                c->input_delay_max, c->input_delay);
  if (c->window < 2u * (c->input_delay_max + c->lead) + 8u)
    return fail(x, GK_ERANGE, "lockstep.window",
                "must be at least 2 * (input_delay_max + lead) + 8 = %u",
                2u * (c->input_delay_max + c->lead) + 8u);
  for (uint32_t i = 0; i < c->ngenres; i++) {
    gk_server_genre *g = &c->genres[i];
    uint32_t cap = g->sim->players_max < c->max_players ? g->sim->players_max
                                                        : c->max_players;
    if (x->genre_max[i]) {
      if (x->genre_max[i] > c->max_players) {
        char p[128];
        snprintf(p, sizeof(p), "genres.%s.max_players", g->sim->name);
        return fail(x, GK_ERANGE, p,
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
      return fail(x, GK_ERANGE, p,
                  "needs at least %u players but limits.players_per_room is "
                  "%u",
                  g->sim->players_min, c->max_players);
    }
  }
  int rc = reconnect_finish(x);
  return rc ? rc : ops_finish(x);
}

/* --- entry points --------------------------------------------------------- */

static void ops_default(gk_server_config *c) {
  gk_server_admin_config *a = &c->admin;
  a->enabled = 0;
  snprintf(a->listen, sizeof(a->listen), "127.0.0.1:7778");
  snprintf(a->host, sizeof(a->host), "127.0.0.1");
  a->port = 7778;
  a->loopback = 1;
  a->connections = 32;
  a->request_ms = 5000;
  a->request_bytes = 16384;
  a->headers = 32;
  a->late_ms = 250;
  a->series_ms = 1000;
  a->series_samples = 600;
  c->agones.enabled = 0;
  c->agones.port = 0;
  c->agones.health_ms = 2000;
}

void gk_server_config_default(gk_server_config *c) {
  memset(c, 0, sizeof(*c));
  snprintf(c->host, sizeof(c->host), "0.0.0.0");
  c->port = 7777;
  c->log_level = GK_LOG_INFO;
  c->step_hz = 60;
  c->max_rooms = 256;
  c->max_players = 8;
  c->max_peers = 1024;
  c->max_packet = GK_WIRE_MAX;
  c->strikes = 16;
  c->lobby_timeout_ms = 600000;
  c->input_delay = 3;
  c->input_delay_max = 20;
  c->lead = 4;
  c->window = 256;
  c->late_slack_ms = 50;
  c->input_delay_auto = 1;
  c->input_delay_min = 2;
  c->delay_hold_ms = 2000;
  c->delay_every_ms = 5000;
  c->delay_jitter_x = 2;
  c->ping_ms = 100;
  c->stall_notice_ms = 1000;
  c->stall_auto_remove_ms = 0;
  gk_server_config_desync_default(c);
  c->replays_enabled = 1;
  snprintf(c->replay_dir, sizeof(c->replay_dir), "replays");
  c->replay_flush_ms = 1000;
  c->shutdown_grace_ms = 5000;
  c->service_ms = 5;
  c->socket_buffer = 0; /* ENet's 256 KiB: see configs/README.md */
  c->peer_timeout_ms = 10000;
  c->catchup_ticks = 5;
  c->auth_mode = GK_AUTH_OPEN;
  c->auth_replay_cache = 8192;
  c->conns_per_ip = 128;
  c->connects_per_ip_per_s = 100;
  c->creates_per_min = 60;
  c->handshake_ms = 10000;
  c->limit_log_ms = 10000;
  ops_default(c);
  gk_server_config_ws_default(c);
  snprintf(c->reconnect_while_away, sizeof(c->reconnect_while_away), "stall");
  c->spectator_delay_steps = 30;
  c->spectator_behind_steps = 600;
  c->spectator_per_room = 4;
  c->spectator_max = 64;
  for (uint32_t i = 0; gk_genre_at(i) && c->ngenres < GK_SERVER_GENRES_MAX;
       i++) {
    gk_server_genre *g = &c->genres[c->ngenres++];
    g->sim = gk_genre_at(i);
    g->enabled = 1;
    g->max_players = g->sim->players_max < c->max_players ? g->sim->players_max
                                                          : c->max_players;
  }
}

void gk_server_config_free(gk_server_config *c) {
  for (uint32_t i = 0; i < c->ngenres; i++) {
    cJSON_Delete(c->genres[i].options);
    c->genres[i].options = NULL;
  }
}

/* 1-based line and column of byte offset `at`. */
static void line_col(const char *s, size_t at, unsigned *line, unsigned *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at; i++) {
    if (s[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

int gk_server_config_parse(gk_server_config *c, const char *json, size_t len,
                           const char *file, char *err, size_t errlen) {
  ctx x;
  memset(&x, 0, sizeof(x));
  x.c = c;
  x.file = file ? file : "config";
  x.err = err;
  x.errlen = errlen;
  gk_server_config_default(c);
  if (err && errlen) err[0] = '\0';
  if (len > GK_SERVER_CONFIG_FILE_MAX)
    return fail(&x, GK_ETOOBIG, NULL, "larger than %u bytes",
                GK_SERVER_CONFIG_FILE_MAX);
  if (memchr(json, '\0', len))
    return fail(&x, GK_EPARSE, NULL, "contains a NUL byte");

  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    size_t at =
        end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    unsigned line, col;
    line_col(json, at, &line, &col);
    return fail(&x, GK_EPARSE, NULL, "invalid JSON at line %u, column %u", line,
                col);
  }
  /* nothing but whitespace may follow the object */
  size_t at = end ? (size_t)(end - json) : len;
  while (at < len && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
                      json[at] == '\r'))
    at++;
  int rc;
  if (at < len) {
    unsigned line, col;
    line_col(json, at, &line, &col);
    rc = fail(&x, GK_EPARSE, NULL,
              "unexpected text after the JSON value at line %u, column %u",
              line, col);
  } else if (!cJSON_IsObject(root)) {
    rc = fail(&x, GK_EPARSE, NULL, "must be a JSON object, got %s",
              gk_config_type_name(root));
  } else {
    rc = walk(&x, root, top_fields, "");
    if (rc == 0) rc = finish(&x);
  }
  cJSON_Delete(root);
  if (rc) {
    gk_server_config_free(c);
    gk_server_config_default(c);
  }
  return rc;
}

const gk_server_genre *gk_server_config_genre(const gk_server_config *c,
                                              const char *name) {
  for (uint32_t i = 0; i < c->ngenres; i++)
    if (strcmp(c->genres[i].sim->name, name) == 0) return &c->genres[i];
  return NULL;
}

int gk_server_room_config(const gk_server_genre *g, void *cfg,
                          const char *client_json, size_t len, char *err,
                          size_t errlen) {
  const gk_sim *sim = g->sim;
  memset(cfg, 0, sim->config_size);
  sim->config_default(cfg);
  int rc = gk_config_apply(sim, cfg, g->options, "server options", err, errlen);
  if (rc == 0)
    rc = gk_config_apply_text(sim, cfg, client_json, len, "options", err,
                              errlen);
  if (rc && sim->config_free) sim->config_free(cfg);
  return rc;
}
