/* gk_server_config_desync.c: the "desync" key in its object form (desync
 * forensics), kept out of gk_server_config.c, which calls it for an object
 * (a plain "report" / "end" string is still read there):
 *
 *   "desync": {"policy": "end", "dir": "desyncs", "timeout_ms": 5000,
 *              "max_state_bytes": 16777216, "fields": 8,
 *              "history_every": 64}
 *
 * As strict as the rest of the schema: unknown and duplicate keys, wrong
 * types and values out of range are errors naming "desync.<key>". */
#include <stdio.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_server_config.h"

void gk_server_config_desync_default(gk_server_config *c) {
  c->desync = GK_DESYNC_REPORT;
  c->desync_dir[0] = '\0'; /* <replays.dir>/desyncs */
  c->desync_timeout_ms = 5000;
  c->desync_max_state_bytes = 16u << 20;
  c->desync_fields = 8;
  c->desync_history_every = 64;
}

typedef struct dkey {
  const char *key;
  uint64_t min, max;
  size_t off; /* of a uint32_t in gk_server_config */
} dkey;

static const dkey keys[] = {
    {"timeout_ms", 1, 600000, offsetof(gk_server_config, desync_timeout_ms)},
    {"max_state_bytes", 1024, 64u << 20,
     offsetof(gk_server_config, desync_max_state_bytes)},
    {"fields", 1, 64, offsetof(gk_server_config, desync_fields)},
    {"history_every", 1, 4096,
     offsetof(gk_server_config, desync_history_every)},
};

static int set_string(gk_server_config *c, const cJSON *v, const char *key,
                      char *err, size_t errlen) {
  if (!cJSON_IsString(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "desync.%s: must be a string, got %s", key,
                   gk_config_type_name(v));
  if (strcmp(key, "dir") == 0) {
    if (v->valuestring[0] == '\0')
      return gk_errf(err, errlen, GK_ERANGE, "desync.dir: must not be empty");
    if (strlen(v->valuestring) >= sizeof(c->desync_dir))
      return gk_errf(err, errlen, GK_ERANGE,
                     "desync.dir: longer than %zu bytes",
                     sizeof(c->desync_dir) - 1);
    snprintf(c->desync_dir, sizeof(c->desync_dir), "%s", v->valuestring);
    return 0;
  }
  if (strcmp(v->valuestring, "report") == 0)
    c->desync = GK_DESYNC_REPORT;
  else if (strcmp(v->valuestring, "end") == 0)
    c->desync = GK_DESYNC_END;
  else
    return gk_errf(err, errlen, GK_ERANGE,
                   "desync.policy: must be \"report\" or \"end\"");
  return 0;
}

static int set_one(gk_server_config *c, const cJSON *v, char *err,
                   size_t errlen) {
  const char *key = v->string;
  if (strcmp(key, "policy") == 0 || strcmp(key, "dir") == 0)
    return set_string(c, v, key, err, errlen);
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    if (strcmp(key, keys[i].key) != 0) continue;
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
    if (!cJSON_IsNumber(v) || !(d >= (double)keys[i].min) ||
        !(d <= (double)keys[i].max) || (double)(uint64_t)d != d)
      return gk_errf(err, errlen, cJSON_IsNumber(v) ? GK_ERANGE : GK_EINVAL,
                     "desync.%s: must be an integer in %llu..%llu", key,
                     (unsigned long long)keys[i].min,
                     (unsigned long long)keys[i].max);
    uint32_t u = (uint32_t)d;
    memcpy((char *)c + keys[i].off, &u, sizeof(u));
    return 0;
  }
  return gk_errf(err, errlen, GK_ENOTFOUND,
                 "desync.%s: unknown key (policy, dir, timeout_ms, "
                 "max_state_bytes, fields, history_every)",
                 key);
}

int gk_server_config_desync(gk_server_config *c, const cJSON *obj, char *err,
                            size_t errlen) {
  for (const cJSON *a = obj->child; a; a = a->next) {
    for (const cJSON *b = obj->child; b != a; b = b->next)
      if (strcmp(a->string, b->string) == 0)
        return gk_errf(err, errlen, GK_EINVAL, "desync.%s: duplicate key",
                       a->string);
    int rc = set_one(c, a, err, errlen);
    if (rc != 0) return rc;
  }
  return 0;
}
