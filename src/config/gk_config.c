/* gk_config.c: JSON <-> genre config (see gk_config.h).
 *
 * apply walks the object depth first, building dotted keys in a fixed
 * buffer, and hands each leaf to gk_config_apply_kv (gk_config_kv.c), and
 * so to the genre's config_set. The genre is the
 * only judge of keys and ranges; this file only judges JSON shapes that no
 * gk_value can carry (null, fractions, huge integers, empty containers,
 * duplicates) and bounds the walk (key length, depth, key count) so a
 * hostile document costs little. to_json is the inverse over config_each.
 */
#include "gk_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gk_config_internal.h"
#include "gk_err.h"
#include "gk_utf8.h"

#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

typedef struct walk {
  gk_config_walk kw; /* the dotted key and the leaf count */
  const gk_sim *sim;
  void *cfg;
  const char *path;
  char *err;
  size_t errlen;
} walk;

static int fail(const walk *w, int code, const char *fmt, ...) GK_PRINTF(3, 4);

/* A failure about the key in w->key. */
static int fail(const walk *w, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gk__config_failv(w->path, w->kw.key, w->err, w->errlen, code, fmt, ap);
  va_end(ap);
  return code;
}

static int fail_top(const char *path, char *err, size_t errlen, int code,
                    const char *fmt, ...) GK_PRINTF(5, 6);

/* A failure about the whole object. */
static int fail_top(const char *path, char *err, size_t errlen, int code,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gk__config_failv(path, NULL, err, errlen, code, fmt, ap);
  va_end(ap);
  return code;
}

const char *gk_config_type_name(const cJSON *v) {
  if (v == NULL) return "nothing";
  if (cJSON_IsObject(v)) return "an object";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsNumber(v)) return "a number";
  return "an invalid value";
}

/* gk_config_kv_node's kind of a cJSON value. */
static int kind_of(const cJSON *v) {
  return cJSON_IsObject(v)   ? GK_CONFIG_NODE_OBJECT
         : cJSON_IsArray(v)  ? GK_CONFIG_NODE_ARRAY
         : cJSON_IsBool(v)   ? GK_CONFIG_NODE_BOOL
         : cJSON_IsNumber(v) ? GK_CONFIG_NODE_NUMBER
         : cJSON_IsString(v) ? GK_CONFIG_NODE_STRING
                             : GK_CONFIG_NODE_NULL;
}

/* Applies one leaf (judged by gk_config_kv_node); w->kw.key is its full
 * dotted key. */
static int apply_leaf(walk *w, const cJSON *item) {
  gk_value v;
  memset(&v, 0, sizeof v);
  if (cJSON_IsBool(item)) {
    v.type = GK_VALUE_BOOL;
    v.i = cJSON_IsTrue(item) ? 1 : 0;
  } else if (cJSON_IsNumber(item)) {
    double d = item->valuedouble;
    /* NaN fails every comparison, so the range test is written to reject it */
    if (!(d <= EXACT_INT_MAX && d >= -EXACT_INT_MAX) || (double)(int64_t)d != d)
      return fail(w, GK_EINVAL, "must be an integer within +/-2^53, got %g", d);
    v.type = GK_VALUE_INT;
    v.i = (int64_t)d;
  } else if (cJSON_IsString(item) && item->valuestring != NULL) {
    v.type = GK_VALUE_STRING;
    v.s = item->valuestring;
  } else {
    return fail(w, GK_EINVAL,
                "must be an integer, a boolean or a string, got %s",
                gk_config_type_name(item));
  }
  return gk_config_apply_kv(w->sim, w->cfg, w->kw.key, &v, w->path, w->err,
                            w->errlen);
}

/* Walks the children of an object or array whose dotted key occupies
 * w->kw.key[0..keylen): each member's name and value judged by
 * gk_config_kv_node's halves (duplicate keys between them), as a walker
 * over another parser's tree judges them. */
static int walk_children(walk *w, const cJSON *node, size_t keylen, int depth) {
  size_t index = 0;
  for (const cJSON *c = node->child; c != NULL; c = c->next, index++) {
    const char *part = NULL;
    if (!cJSON_IsArray(node)) part = c->string != NULL ? c->string : "";
    int rc = gk__config_kv_name(&w->kw, keylen, part, index, w->path, w->err,
                                w->errlen);
    if (rc != 0) return rc;
    /* duplicates: later siblings are checked against earlier ones */
    if (cJSON_IsObject(node))
      for (const cJSON *p = node->child; p != c; p = p->next)
        if (p->string != NULL && strcmp(p->string, c->string) == 0)
          return fail(w, GK_EINVAL, "duplicate key");
    int kind = kind_of(c);
    rc = gk__config_kv_value(&w->kw, kind, (size_t)cJSON_GetArraySize(c), depth,
                             w->path, w->err, w->errlen);
    if (rc != 0) return rc;
    if (kind == GK_CONFIG_NODE_OBJECT || kind == GK_CONFIG_NODE_ARRAY)
      rc = walk_children(w, c, strlen(w->kw.key), depth + 1);
    else
      rc = apply_leaf(w, c);
    if (rc != 0) return rc;
  }
  return 0;
}

int gk_config_apply(const gk_sim *sim, void *cfg, const cJSON *obj,
                    const char *path, char *err, size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return fail_top(path, err, errlen, GK_EINVAL, "no genre or config");
  if (obj == NULL) return 0;
  if (!cJSON_IsObject(obj))
    return fail_top(path, err, errlen, GK_EINVAL,
                    "must be a JSON object, got %s", gk_config_type_name(obj));
  walk w = {.sim = sim, .cfg = cfg, .path = path, .err = err, .errlen = errlen};
  return walk_children(&w, obj, 0, 0);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int gk_config_parse_text(const char *text, size_t len, const char *path,
                         cJSON **out, char *err, size_t errlen) {
  *out = NULL;
  size_t at = 0;
  while (text != NULL && at < len && is_space(text[at])) at++;
  if (text == NULL || at == len) return 0;
  if (len > GK_CONFIG_TEXT_MAX)
    return fail_top(path, err, errlen, GK_ETOOBIG, "larger than %u bytes",
                    GK_CONFIG_TEXT_MAX);
  if (memchr(text, '\0', len) != NULL)
    return fail_top(path, err, errlen, GK_EPARSE,
                    "must be a JSON object (contains a NUL byte)");
  /* cJSON keeps a string's bytes as they come: what is not UTF-8 would
   * reach the replay's JSON header, which no reader takes */
  size_t bad = gk_utf8_check((const uint8_t *)text, len);
  if (bad < len)
    return fail_top(path, err, errlen, GK_EPARSE,
                    "must be UTF-8 (byte %zu is not)", bad);
  const char *end = NULL;
  cJSON *obj = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  at = obj != NULL && end != NULL ? (size_t)(end - text) : 0;
  while (obj != NULL && at < len && is_space(text[at])) at++;
  if (obj == NULL || at < len || !cJSON_IsObject(obj)) {
    cJSON_Delete(obj);
    return fail_top(path, err, errlen, GK_EPARSE, "must be a JSON object");
  }
  *out = obj;
  return 0;
}

int gk_config_apply_text(const gk_sim *sim, void *cfg, const char *text,
                         size_t len, const char *path, char *err,
                         size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return fail_top(path, err, errlen, GK_EINVAL, "no genre or config");
  cJSON *obj = NULL;
  int rc = gk_config_parse_text(text, len, path, &obj, err, errlen);
  if (rc == 0 && obj != NULL)
    rc = gk_config_apply(sim, cfg, obj, path, err, errlen);
  cJSON_Delete(obj);
  return rc;
}

int gk_config_match_options(void *ctx, const gk_sim *sim, void *cfg,
                            const char *text, size_t len, char *err,
                            size_t errlen) {
  (void)ctx;
  return gk_config_apply_text(sim, cfg, text, len, "options", err, errlen);
}

int gk_config_from_json(const gk_sim *sim, void *cfg, const cJSON *obj,
                        char *err, size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return fail_top("config", err, errlen, GK_EINVAL, "no genre or config");
  sim->config_default(cfg);
  int rc = gk_config_apply(sim, cfg, obj, "config", err, errlen);
  if (rc != 0) {
    if (sim->config_free != NULL) sim->config_free(cfg);
    sim->config_default(cfg);
  }
  return rc;
}

typedef struct emit {
  cJSON *obj;
  int failed;
} emit;

static void emit_key(void *ctx, const char *key, const gk_value *v) {
  emit *e = ctx;
  if (e->failed) return;
  cJSON *item = NULL;
  switch (v->type) {
  case GK_VALUE_INT:
    if (v->i > (int64_t)EXACT_INT_MAX || v->i < -(int64_t)EXACT_INT_MAX) {
      e->failed = 1;
      return;
    }
    item = cJSON_CreateNumber((double)v->i);
    break;
  case GK_VALUE_BOOL:
    item = cJSON_CreateBool(v->i != 0);
    break;
  case GK_VALUE_STRING:
    item = cJSON_CreateString(v->s != NULL ? v->s : "");
    break;
  }
  if (item == NULL || !cJSON_AddItemToObject(e->obj, key, item)) {
    cJSON_Delete(item);
    e->failed = 1;
  }
}

cJSON *gk_config_to_json(const gk_sim *sim, const void *cfg) {
  if (sim == NULL || cfg == NULL) return NULL;
  emit e = {cJSON_CreateObject(), 0};
  if (e.obj == NULL) return NULL;
  sim->config_each(cfg, emit_key, &e);
  if (e.failed) {
    cJSON_Delete(e.obj);
    return NULL;
  }
  return e.obj;
}
