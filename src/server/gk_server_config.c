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
    END};

static const field limits_fields[] = {
    U("rooms", max_rooms, 1, GK_SERVER_ROOMS_MAX),
    U("players_per_room", max_players, 1, GK_PLAYERS_MAX),
    U("peers", max_peers, 1, GK_SERVER_PEERS_MAX),
    U("packet_bytes", max_packet, 64, GK_WIRE_MAX),
    U("strikes", strikes, 1, 1000000),
    U("lobby_timeout_ms", lobby_timeout_ms, 0, 86400000),
    END};

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
    END};

static const field timing_fields[] = {
    U("service_ms", service_ms, 1, 1000),
    U("peer_timeout_ms", peer_timeout_ms, 1000, 600000),
    U("catchup_ticks", catchup_ticks, 1, 1000), U("ping_ms", ping_ms, 0, 10000),
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
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

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
    if (cJSON_IsString(v) && strcmp(v->valuestring, "report") == 0)
      x->c->desync = GK_DESYNC_REPORT;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "end") == 0)
      x->c->desync = GK_DESYNC_END;
    else
      return fail(x, cJSON_IsString(v) ? GK_ERANGE : GK_EINVAL, path,
                  "must be \"report\" or \"end\"");
    return 0;
  }
  case K_OBJECT:
    break;
  }
  return fail(x, GK_EINVAL, path, "internal: bad schema row");
}

static int walk_genres(ctx *x, const cJSON *obj, const char *path);

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
    } else {
      return fail(x, GK_ENOTFOUND, p,
                  "unknown key (expected enabled, max_players, options)");
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
      return fail(x, GK_ENOTFOUND, p, "unknown genre (this build has: %s)",
                  known);
    }
    rc = walk_genre(x, gi, v, p);
    if (rc) return rc;
  }
  return 0;
}

/* --- cross-key checks ------------------------------------------------------
 */

static int check_delay(ctx *x) {
  gk_server_config *c = x->c;
  if (c->input_delay_min > c->input_delay_max)
    return fail(x, GK_ERANGE, "lockstep.input_delay_min",
                "must not exceed lockstep.input_delay_max (%u), got %u",
                c->input_delay_max, c->input_delay_min);
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
  return 0;
}

/* --- entry points --------------------------------------------------------- */

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
  c->desync = GK_DESYNC_REPORT;
  c->replays_enabled = 1;
  snprintf(c->replay_dir, sizeof(c->replay_dir), "replays");
  c->shutdown_grace_ms = 5000;
  c->service_ms = 5;
  c->peer_timeout_ms = 10000;
  c->catchup_ticks = 5;
  for (uint32_t i = 0; gk_genres[i] && c->ngenres < GK_SERVER_GENRES_MAX; i++) {
    gk_server_genre *g = &c->genres[c->ngenres++];
    g->sim = gk_genres[i];
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

int gk_server_config_load(gk_server_config *c, const char *path, char *err,
                          size_t errlen) {
  gk_server_config_default(c);
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    if (err && errlen)
      snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
    return e == ENOENT ? GK_ENOTFOUND : GK_EIO;
  }
  char *buf = malloc(GK_SERVER_CONFIG_FILE_MAX + 1);
  if (!buf) {
    fclose(f);
    if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
    return GK_ENOMEM;
  }
  size_t n = fread(buf, 1, GK_SERVER_CONFIG_FILE_MAX + 1, f);
  int bad = ferror(f);
  fclose(f);
  int rc;
  if (bad) {
    if (err && errlen) snprintf(err, errlen, "%s: read error", path);
    rc = GK_EIO;
  } else if (n > GK_SERVER_CONFIG_FILE_MAX) {
    if (err && errlen)
      snprintf(err, errlen, "%s: larger than %u bytes", path,
               GK_SERVER_CONFIG_FILE_MAX);
    rc = GK_ETOOBIG;
  } else {
    rc = gk_server_config_parse(c, buf, n, path, err, errlen);
  }
  free(buf);
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
