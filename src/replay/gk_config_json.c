/* gk_config_json.c: JSON <-> genre config (see gk_config_json.h).
 *
 * from_json walks the object depth first, building dotted keys in a fixed
 * buffer, and hands each leaf to the genre's config_set. The genre is the
 * only judge of keys and ranges; this file only judges JSON shapes that no
 * gk_value can carry (null, fractions, huge integers) and bounds the walk
 * (key length, depth, key count) so a hostile document costs little.
 * to_json is the inverse over config_each.
 */
#include "gk_config_json.h"

#include <stdio.h>
#include <string.h>

#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

typedef struct walk {
  const gk_sim *sim;
  void *cfg;
  char *err;
  size_t errlen;
  size_t keys;
  char key[GK_CONFIG_KEY_MAX + 1];
} walk;

/* Applies one leaf; `key` is the full dotted key. */
static int apply_leaf(walk *w, const cJSON *item) {
  gk_value v;
  memset(&v, 0, sizeof v);
  if (cJSON_IsBool(item)) {
    v.type = GK_VALUE_BOOL;
    v.i = cJSON_IsTrue(item) ? 1 : 0;
  } else if (cJSON_IsNumber(item)) {
    double d = item->valuedouble;
    /* NaN fails every comparison, so the range test is written to reject it */
    if (!(d <= EXACT_INT_MAX && d >= -EXACT_INT_MAX) ||
        (double)(int64_t)d != d)
      return gk_errf(w->err, w->errlen, GK_EINVAL,
                     "config key '%s': expected an integer within +/-2^53",
                     w->key);
    v.type = GK_VALUE_INT;
    v.i = (int64_t)d;
  } else if (cJSON_IsString(item) && item->valuestring != NULL) {
    v.type = GK_VALUE_STRING;
    v.s = item->valuestring;
  } else {
    return gk_errf(w->err, w->errlen, GK_EINVAL,
                   "config key '%s': expected an integer, a boolean or a "
                   "string",
                   w->key);
  }
  if (++w->keys > GK_CONFIG_KEYS_MAX)
    return gk_errf(w->err, w->errlen, GK_ETOOBIG,
                   "config: more than %d keys", GK_CONFIG_KEYS_MAX);
  char msg[GK_ERRMSG_MAX];
  msg[0] = '\0';
  int rc = w->sim->config_set(w->cfg, w->key, &v, msg, sizeof msg);
  if (rc == 0)
    return 0;
  if (rc > 0)
    rc = GK_EINVAL; /* a genre broke the contract; stay negative */
  if (msg[0] == '\0')
    return gk_errf(w->err, w->errlen, rc, "config key '%s': %s", w->key,
                   gk_strerror(rc));
  if (strstr(msg, w->key) != NULL)
    return gk_errf(w->err, w->errlen, rc, "config: %s", msg);
  return gk_errf(w->err, w->errlen, rc, "config key '%s': %s", w->key, msg);
}

/* Walks the children of an object or array whose dotted key occupies
 * w->key[0..keylen). */
static int walk_children(walk *w, const cJSON *node, size_t keylen,
                         int depth) {
  size_t index = 0;
  for (const cJSON *c = node->child; c != NULL; c = c->next, index++) {
    char part[GK_CONFIG_KEY_MAX + 1];
    if (cJSON_IsArray(node)) {
      snprintf(part, sizeof part, "%zu", index);
    } else {
      if (c->string == NULL || c->string[0] == '\0')
        return gk_errf(w->err, w->errlen, GK_EINVAL,
                       "config: empty key under '%s'",
                       keylen ? w->key : "(top)");
      size_t n = strlen(c->string);
      if (n > GK_CONFIG_KEY_MAX)
        return gk_errf(w->err, w->errlen, GK_ETOOBIG,
                       "config: key longer than %d bytes",
                       GK_CONFIG_KEY_MAX);
      memcpy(part, c->string, n + 1);
      /* duplicates: later siblings are checked against earlier ones */
      for (const cJSON *p = node->child; p != c; p = p->next)
        if (p->string != NULL && strcmp(p->string, c->string) == 0) {
          w->key[keylen] = '\0';
          return gk_errf(w->err, w->errlen, GK_EINVAL,
                         "config: duplicate key '%s%s%s'", w->key,
                         keylen ? "." : "", part);
        }
    }
    size_t plen = strlen(part);
    size_t need = keylen + (keylen ? 1 : 0) + plen;
    if (need > GK_CONFIG_KEY_MAX)
      return gk_errf(w->err, w->errlen, GK_ETOOBIG,
                     "config: key '%.40s...' longer than %d bytes", w->key,
                     GK_CONFIG_KEY_MAX);
    size_t at = keylen;
    if (keylen)
      w->key[at++] = '.';
    memcpy(w->key + at, part, plen + 1);
    int rc;
    if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      if (depth >= GK_CONFIG_DEPTH_MAX)
        return gk_errf(w->err, w->errlen, GK_ETOOBIG,
                       "config key '%s': nested deeper than %d", w->key,
                       GK_CONFIG_DEPTH_MAX);
      if (c->child == NULL)
        return gk_errf(w->err, w->errlen, GK_EINVAL,
                       "config key '%s': empty %s", w->key,
                       cJSON_IsObject(c) ? "object" : "array");
      rc = walk_children(w, c, need, depth + 1);
    } else {
      rc = apply_leaf(w, c);
    }
    if (rc != 0)
      return rc;
    w->key[keylen] = '\0';
  }
  return 0;
}

int gk_config_from_json(const gk_sim *sim, void *cfg, const cJSON *obj,
                        char *err, size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "config: no genre or config");
  sim->config_default(cfg);
  if (obj == NULL)
    return 0;
  if (!cJSON_IsObject(obj))
    return gk_errf(err, errlen, GK_EINVAL,
                   "config: expected a JSON object");
  walk w;
  memset(&w, 0, sizeof w);
  w.sim = sim;
  w.cfg = cfg;
  w.err = err;
  w.errlen = errlen;
  int rc = walk_children(&w, obj, 0, 0);
  if (rc != 0) {
    if (sim->config_free != NULL)
      sim->config_free(cfg);
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
  if (e->failed)
    return;
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
  if (sim == NULL || cfg == NULL)
    return NULL;
  emit e = {cJSON_CreateObject(), 0};
  if (e.obj == NULL)
    return NULL;
  sim->config_each(cfg, emit_key, &e);
  if (e.failed) {
    cJSON_Delete(e.obj);
    return NULL;
  }
  return e.obj;
}
