/* gk_server_config_ws.c: the "websocket" object of the server config (the
 * WebSocket listener for browser players, gk_server_link_ws.c), kept out
 * of gk_server_config.c, which calls it:
 *
 *   "websocket": {"enabled": true, "host": "0.0.0.0", "port": 7779,
 *                 "path": "/play", "origins": ["https://play.example"],
 *                 "max_connections": 256, "ping_ms": 100,
 *                 "static_dir": "web"}
 *
 * As strict as the rest of the schema: unknown and duplicate keys, wrong
 * types and values out of range are errors naming "websocket.<key>". The
 * host must be a numeric address (the listener binds a literal), the path
 * begins with '/', an origin is non-empty and has no space or control
 * character (it is compared with the Origin header as bytes). static_dir
 * is a path of at most GK_SERVER_PATH_MAX - 1 bytes without control
 * characters, "" for none; whether it is a directory is the listener's
 * business at start (gk_server_link_ws.c). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_server_config.h"

void gk_server_config_ws_default(gk_server_config *c) {
  gk_server_ws_config *w = &c->ws;
  memset(w, 0, sizeof(*w));
  w->enabled = 0;
  snprintf(w->host, sizeof(w->host), "0.0.0.0");
  w->port = 7779;
  snprintf(w->path, sizeof(w->path), "/play");
  w->norigins = 0;
  w->max_connections = 256;
  w->ping_ms = 100;
  snprintf(w->static_dir, sizeof(w->static_dir), "%s", GK_WEB_DIR);
  w->static_dir_set = 0;
}

static int set_static_dir(gk_server_ws_config *w, const cJSON *v, char *err,
                          size_t errlen) {
  if (!cJSON_IsString(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "websocket.static_dir: must be a string, got %s",
                   gk_config_type_name(v));
  size_t n = strlen(v->valuestring);
  if (n >= sizeof(w->static_dir))
    return gk_errf(err, errlen, GK_ERANGE,
                   "websocket.static_dir: must be at most %zu bytes long",
                   sizeof(w->static_dir) - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)v->valuestring[i] < ' ' ||
        (unsigned char)v->valuestring[i] == 0x7f)
      return gk_errf(err, errlen, GK_ERANGE,
                     "websocket.static_dir: must have no control character");
  memcpy(w->static_dir, v->valuestring, n + 1);
  w->static_dir_set = 1;
  return 0;
}

static int is_literal(const char *h) {
  unsigned char buf[16];
  return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

/* A string of 1..cap-1 bytes, no space or control character. */
static int get_text(const cJSON *v, const char *key, size_t cap, char *out,
                    char *err, size_t errlen) {
  if (!cJSON_IsString(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "websocket.%s: must be a string, got %s", key,
                   gk_config_type_name(v));
  size_t n = strlen(v->valuestring);
  if (n == 0 || n >= cap)
    return gk_errf(err, errlen, GK_ERANGE,
                   "websocket.%s: must be 1 to %zu bytes long", key, cap - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)v->valuestring[i] <= ' ' ||
        (unsigned char)v->valuestring[i] == 0x7f)
      return gk_errf(err, errlen, GK_ERANGE,
                     "websocket.%s: must have no space or control character",
                     key);
  memcpy(out, v->valuestring, n + 1);
  return 0;
}

static int get_uint(const cJSON *v, const char *key, uint32_t min, uint32_t max,
                    uint32_t *out, char *err, size_t errlen) {
  double d = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
  if (!cJSON_IsNumber(v) || !(d >= (double)min) || !(d <= (double)max) ||
      (double)(uint32_t)d != d)
    return gk_errf(err, errlen, cJSON_IsNumber(v) ? GK_ERANGE : GK_EINVAL,
                   "websocket.%s: must be an integer in %u..%u", key, min, max);
  *out = (uint32_t)d;
  return 0;
}

static int set_origins(gk_server_ws_config *w, const cJSON *v, char *err,
                       size_t errlen) {
  if (!cJSON_IsArray(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "websocket.origins: must be an array of strings, got %s",
                   gk_config_type_name(v));
  int n = cJSON_GetArraySize(v);
  if (n > GK_SERVER_WS_ORIGINS_MAX)
    return gk_errf(err, errlen, GK_ERANGE,
                   "websocket.origins: at most %d origins, got %d",
                   GK_SERVER_WS_ORIGINS_MAX, n);
  uint32_t i = 0;
  for (const cJSON *o = v->child; o; o = o->next, i++) {
    char key[32];
    snprintf(key, sizeof(key), "origins[%u]", i);
    int rc =
        get_text(o, key, sizeof(w->origins[i]), w->origins[i], err, errlen);
    if (rc) return rc;
  }
  w->norigins = i;
  return 0;
}

static int set_one(gk_server_ws_config *w, const cJSON *v, char *err,
                   size_t errlen) {
  const char *key = v->string;
  uint32_t u = 0;
  int rc;
  if (strcmp(key, "enabled") == 0) {
    if (!cJSON_IsBool(v))
      return gk_errf(err, errlen, GK_EINVAL,
                     "websocket.enabled: must be true or false, got %s",
                     gk_config_type_name(v));
    w->enabled = cJSON_IsTrue(v);
    return 0;
  }
  if (strcmp(key, "host") == 0) {
    rc = get_text(v, key, sizeof(w->host), w->host, err, errlen);
    if (rc == 0 && !is_literal(w->host))
      rc = gk_errf(err, errlen, GK_ERANGE,
                   "websocket.host: must be a numeric IPv4 or IPv6 address, "
                   "got \"%s\"",
                   w->host);
    return rc;
  }
  if (strcmp(key, "path") == 0) {
    rc = get_text(v, key, sizeof(w->path), w->path, err, errlen);
    if (rc == 0 && w->path[0] != '/')
      rc = gk_errf(err, errlen, GK_ERANGE,
                   "websocket.path: must begin with '/', got \"%s\"", w->path);
    return rc;
  }
  if (strcmp(key, "origins") == 0) return set_origins(w, v, err, errlen);
  if (strcmp(key, "port") == 0) {
    rc = get_uint(v, key, 0, 65535, &u, err, errlen);
    if (rc == 0) w->port = (uint16_t)u;
    return rc;
  }
  if (strcmp(key, "max_connections") == 0)
    return get_uint(v, key, 1, GK_SERVER_PEERS_MAX, &w->max_connections, err,
                    errlen);
  if (strcmp(key, "ping_ms") == 0)
    return get_uint(v, key, 0, 60000, &w->ping_ms, err, errlen);
  if (strcmp(key, "static_dir") == 0) return set_static_dir(w, v, err, errlen);
  return gk_errf(err, errlen, GK_ENOTFOUND,
                 "websocket.%s: unknown key (enabled, host, port, path, "
                 "origins, max_connections, ping_ms, static_dir)",
                 key);
}

int gk_server_config_ws(gk_server_config *c, const cJSON *obj, char *err,
                        size_t errlen) {
  if (!cJSON_IsObject(obj))
    return gk_errf(err, errlen, GK_EINVAL,
                   "websocket: must be an object, got %s",
                   gk_config_type_name(obj));
  for (const cJSON *a = obj->child; a; a = a->next) {
    for (const cJSON *b = obj->child; b != a; b = b->next)
      if (strcmp(a->string, b->string) == 0)
        return gk_errf(err, errlen, GK_EINVAL, "websocket.%s: duplicate key",
                       a->string);
    int rc = set_one(&c->ws, a, err, errlen);
    if (rc != 0) return rc;
  }
  return 0;
}
