/* gk_config_kv.c: one flattened key into a genre's config (see
 * gk_config_kv.h). libc + gk_core: what a browser build links without
 * cJSON. The JSON walker (gk_config.c) hands every leaf to
 * gk_config_apply_kv, so both paths share the genre call and its message.
 */
#include "gk_config_kv.h"
#include "gk_config_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

int gk__config_failv(const char *path, const char *key, char *err,
                     size_t errlen, int code, const char *fmt, va_list ap) {
  if (err == NULL || errlen == 0) return code;
  char reason[GK_ERRMSG_MAX];
  vsnprintf(reason, sizeof reason, fmt, ap);
  int has_path = path != NULL && path[0] != '\0';
  int has_key = key != NULL && key[0] != '\0';
  if (!has_path && !has_key)
    snprintf(err, errlen, "%s", reason);
  else
    snprintf(err, errlen, "%s%s%s: %s", has_path ? path : "",
             has_path && has_key ? "." : "", has_key ? key : "", reason);
  return code;
}

static int fail(const char *path, const char *key, char *err, size_t errlen,
                int code, const char *fmt, ...) GK_PRINTF(6, 7);

static int fail(const char *path, const char *key, char *err, size_t errlen,
                int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gk__config_failv(path, key, err, errlen, code, fmt, ap);
  va_end(ap);
  return code;
}

int gk_config_apply_kv(const gk_sim *sim, void *cfg, const char *key,
                       const gk_value *v, const char *path, char *err,
                       size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return fail(path, NULL, err, errlen, GK_EINVAL, "no genre or config");
  if (key == NULL || key[0] == '\0')
    return fail(path, NULL, err, errlen, GK_EINVAL, "empty key");
  if (strnlen(key, GK_CONFIG_KEY_MAX + 1) > GK_CONFIG_KEY_MAX)
    return fail(path, NULL, err, errlen, GK_ETOOBIG,
                "a key longer than %d bytes", GK_CONFIG_KEY_MAX);
  if (v == NULL || (v->type == GK_VALUE_STRING && v->s == NULL))
    return fail(path, key, err, errlen, GK_EINVAL,
                "must be an integer, a boolean or a string, got nothing");
  char msg[GK_ERRMSG_MAX];
  msg[0] = '\0';
  int rc = sim->config_set(cfg, key, v, msg, sizeof msg);
  if (rc == 0) return 0;
  if (rc > 0) rc = GK_EINVAL; /* a genre broke the contract; stay negative */
  return fail(path, key, err, errlen, rc, "%s",
              msg[0] != '\0' ? msg : gk_strerror(rc));
}

int gk_config_apply_kv_number(const gk_sim *sim, void *cfg, const char *key,
                              double d, const char *path, char *err,
                              size_t errlen) {
  /* NaN fails every comparison, so the range test is written to reject it */
  if (!(d <= EXACT_INT_MAX && d >= -EXACT_INT_MAX) || (double)(int64_t)d != d)
    return fail(path, key, err, errlen, GK_EINVAL,
                "must be an integer within +/-2^53, got %g", d);
  gk_value v = {.type = GK_VALUE_INT, .i = (int64_t)d};
  return gk_config_apply_kv(sim, cfg, key, &v, path, err, errlen);
}

int gk_config_apply_kv_int(const gk_sim *sim, void *cfg, const char *key,
                           int64_t i, const char *path, char *err,
                           size_t errlen) {
  if (i > (int64_t)EXACT_INT_MAX || i < -(int64_t)EXACT_INT_MAX)
    return fail(path, key, err, errlen, GK_EINVAL,
                "must be an integer within +/-2^53, got %g", (double)i);
  gk_value v = {.type = GK_VALUE_INT, .i = i};
  return gk_config_apply_kv(sim, cfg, key, &v, path, err, errlen);
}

int gk_config_apply_kv_bool(const gk_sim *sim, void *cfg, const char *key,
                            int b, const char *path, char *err, size_t errlen) {
  gk_value v = {.type = GK_VALUE_BOOL, .i = b != 0};
  return gk_config_apply_kv(sim, cfg, key, &v, path, err, errlen);
}

int gk_config_apply_kv_text(const gk_sim *sim, void *cfg, const char *key,
                            const char *s, const char *path, char *err,
                            size_t errlen) {
  gk_value v = {.type = GK_VALUE_STRING, .s = s};
  return gk_config_apply_kv(sim, cfg, key, &v, path, err, errlen);
}

int gk__config_kv_name(gk_config_walk *w, size_t keylen, const char *part,
                       size_t index, const char *path, char *err,
                       size_t errlen) {
  char num[24];
  if (keylen > GK_CONFIG_KEY_MAX) keylen = GK_CONFIG_KEY_MAX;
  w->key[keylen] = '\0'; /* failures about the name are the parent's */
  if (part == NULL) {
    snprintf(num, sizeof num, "%zu", index);
    part = num;
  } else if (part[0] == '\0') {
    return fail(path, w->key, err, errlen, GK_EINVAL, "empty key");
  }
  size_t plen = strnlen(part, GK_CONFIG_KEY_MAX + 1);
  if (plen > GK_CONFIG_KEY_MAX ||
      keylen + (keylen ? 1 : 0) + plen > GK_CONFIG_KEY_MAX)
    return fail(path, w->key, err, errlen, GK_ETOOBIG,
                "a key longer than %d bytes", GK_CONFIG_KEY_MAX);
  size_t at = keylen;
  if (keylen) w->key[at++] = '.';
  memcpy(w->key + at, part, plen + 1);
  return 0;
}

int gk__config_kv_value(gk_config_walk *w, int kind, size_t children, int depth,
                        const char *path, char *err, size_t errlen) {
  if (kind == GK_CONFIG_NODE_OBJECT || kind == GK_CONFIG_NODE_ARRAY) {
    if (depth >= GK_CONFIG_DEPTH_MAX)
      return fail(path, w->key, err, errlen, GK_ETOOBIG,
                  "nested deeper than %d", GK_CONFIG_DEPTH_MAX);
    if (children == 0)
      return fail(path, w->key, err, errlen, GK_EINVAL, "empty %s",
                  kind == GK_CONFIG_NODE_OBJECT ? "object" : "array");
    return 0;
  }
  if (kind == GK_CONFIG_NODE_NULL)
    return fail(path, w->key, err, errlen, GK_EINVAL,
                "must be an integer, a boolean or a string, got null");
  if (++w->leaves > GK_CONFIG_KEYS_MAX)
    return fail(path, w->key, err, errlen, GK_ETOOBIG, "more than %d keys",
                GK_CONFIG_KEYS_MAX);
  return 0;
}

int gk_config_kv_node(gk_config_walk *w, size_t keylen, const char *part,
                      size_t index, int kind, size_t children, int depth,
                      const char *path, char *err, size_t errlen) {
  int rc = gk__config_kv_name(w, keylen, part, index, path, err, errlen);
  return rc != 0
             ? rc
             : gk__config_kv_value(w, kind, children, depth, path, err, errlen);
}
