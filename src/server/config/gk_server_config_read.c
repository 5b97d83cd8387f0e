/* gk_server_config_read.c: the typed readers behind every row of the
 * config table (gk_server_config_table.c), and the walker that drives
 * them.
 *
 * The walker goes over an object's keys in document order and looks each
 * one up in the object's table: a key not in the table is an error naming
 * its path, a key seen twice in one object is an error (cJSON keeps
 * duplicates, so the walker checks), and every value is checked for type
 * and range by the reader of its row's kind before it is stored.
 *
 * Numbers: JSON has only doubles; an integer key accepts a number only if
 * it is integral and inside the key's range (checked in double before any
 * conversion, so 1e300 or -0.5 cannot wrap).
 */
#include "gk_server_config_schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gk_config.h"

#define KEYS_PER_OBJECT_MAX 256

/* --- messages ------------------------------------------------------------ */

int sv_cfg_fail(sv_cfg_ctx *x, int code, const char *path, const char *fmt,
                ...) {
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
void sv_cfg_join(char *out, size_t cap, const char *path, const char *key) {
  int n = path && *path ? snprintf(out, cap, "%s.%s", path, key)
                        : snprintf(out, cap, "%s", key);
  if (n < 0) out[0] = '\0';
}

/* v, if a key before it in obj has its name: a duplicate. */
static int check_dup(sv_cfg_ctx *x, const cJSON *obj, const cJSON *v,
                     const char *path) {
  for (const cJSON *b = obj->child; b != v; b = b->next)
    if (strcmp(v->string, b->string) == 0)
      return sv_cfg_fail(x, GK_EINVAL, path, "duplicate key");
  return 0;
}

/* Rejects duplicate keys and oversized objects before anything is read. */
int sv_cfg_check_keys(sv_cfg_ctx *x, const cJSON *obj, const char *path) {
  int n = 0;
  for (const cJSON *a = obj->child; a; a = a->next) {
    if (++n > KEYS_PER_OBJECT_MAX)
      return sv_cfg_fail(x, GK_ETOOBIG, path, "more than %d keys",
                         KEYS_PER_OBJECT_MAX);
    char p[256];
    sv_cfg_join(p, sizeof(p), path, a->string);
    int rc = check_dup(x, obj, a, p);
    if (rc) return rc;
  }
  return 0;
}

/* "unknown key", and with SV_CFG_LIST the table's keys in parentheses. */
static int unknown_key(sv_cfg_ctx *x, const sv_cfg_table *t, const char *path) {
  if (!(t->flags & SV_CFG_LIST))
    return sv_cfg_fail(x, GK_ENOTFOUND, path, "unknown key");
  char keys[256];
  size_t used = 0;
  keys[0] = '\0';
  for (const sv_cfg_row *r = t->rows; r->key; r++) {
    int n = snprintf(keys + used, sizeof(keys) - used, "%s%s",
                     r == t->rows ? "" : ", ", r->key);
    if (n < 0 || (size_t)n >= sizeof(keys) - used) break;
    used += (size_t)n;
  }
  return sv_cfg_fail(x, GK_ENOTFOUND, path, "unknown key (%s%s)",
                     (t->flags & SV_CFG_EXPECTED) ? "expected " : "", keys);
}

/* --- storing ------------------------------------------------------------- */

static void put_uint(gk_server_config *c, size_t off, size_t size, uint64_t u) {
  char *at = (char *)c + off;
  if (size == sizeof(uint16_t)) {
    uint16_t w = (uint16_t)u;
    memcpy(at, &w, sizeof(w));
  } else if (size == sizeof(uint32_t)) {
    uint32_t w = (uint32_t)u;
    memcpy(at, &w, sizeof(w));
  } else {
    memcpy(at, &u, sizeof(u));
  }
}

/* An int member: a bool, an enum, a flag at aux. */
static void put_int(gk_server_config *c, size_t off, int i) {
  memcpy((char *)c + off, &i, sizeof(i));
}

/* --- the typed readers --------------------------------------------------- */

/* An integral JSON number in [min, max]. */
int sv_cfg_get_uint(sv_cfg_ctx *x, const cJSON *v, const char *path,
                    uint64_t min, uint64_t max, uint64_t *out) {
  if (!cJSON_IsNumber(v))
    return sv_cfg_fail(x, GK_EINVAL, path,
                       "must be an integer in %llu..%llu, got %s",
                       (unsigned long long)min, (unsigned long long)max,
                       gk_config_type_name(v));
  double d = v->valuedouble;
  /* the comparisons are false for NaN, so NaN is refused too */
  if (!(d >= (double)min && d <= (double)max) || (double)(uint64_t)d != d)
    return sv_cfg_fail(x, GK_ERANGE, path,
                       "must be an integer in %llu..%llu, got %g",
                       (unsigned long long)min, (unsigned long long)max, d);
  *out = (uint64_t)d;
  return 0;
}

static int read_uint(sv_cfg_ctx *x, const sv_cfg_table *t, const sv_cfg_row *r,
                     const cJSON *v, const char *path) {
  uint64_t u = 0;
  int rc;
  if (t->flags & SV_CFG_BRIEF) {
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
    rc = !cJSON_IsNumber(v) ? GK_EINVAL : 0;
    if (!rc && (!(d >= (double)r->min && d <= (double)r->max) ||
                (double)(uint64_t)d != d))
      rc = GK_ERANGE;
    if (rc)
      return sv_cfg_fail(x, rc, path, "must be an integer in %llu..%llu",
                         (unsigned long long)r->min,
                         (unsigned long long)r->max);
    u = (uint64_t)d;
  } else {
    rc = sv_cfg_get_uint(x, v, path, r->min, r->max, &u);
    if (rc) return rc;
  }
  put_uint(x->c, r->off, r->size, u);
  return 0;
}

/* lockstep.input_delay: "auto", or a fixed number of steps. */
static int read_delay(sv_cfg_ctx *x, const sv_cfg_table *t, const sv_cfg_row *r,
                      const cJSON *v, const char *path) {
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "auto") != 0)
      return sv_cfg_fail(
          x, GK_ERANGE, path, "must be \"auto\" or an integer in %llu..%llu",
          (unsigned long long)r->min, (unsigned long long)r->max);
    put_int(x->c, r->aux, 1);
    return 0;
  }
  int rc = read_uint(x, t, r, v, path);
  if (rc == 0) put_int(x->c, r->aux, 0);
  return rc;
}

/* A string of r->min..r->size-1 bytes into dst, its characters as the
 * row's flags allow. */
static int read_string(sv_cfg_ctx *x, const sv_cfg_row *r, const cJSON *v,
                       const char *path, char *dst) {
  if (!cJSON_IsString(v))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be a string, got %s",
                       gk_config_type_name(v));
  const char *s = v->valuestring;
  size_t n = strlen(s);
  if ((r->flags & SV_CFG_EMPTY) && n < r->min)
    return sv_cfg_fail(x, GK_ERANGE, path, "must not be empty");
  if ((r->flags & SV_CFG_EMPTY) && n >= r->size)
    return sv_cfg_fail(x, GK_ERANGE, path, "longer than %zu bytes",
                       r->size - 1);
  if (r->min == 0 && n >= r->size)
    return sv_cfg_fail(x, GK_ERANGE, path, "must be at most %zu bytes long",
                       r->size - 1);
  if (n < r->min || n >= r->size)
    return sv_cfg_fail(x, GK_ERANGE, path, "must be %llu to %zu bytes long",
                       (unsigned long long)r->min, r->size - 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if ((r->flags & SV_CFG_TOKEN) && (ch <= ' ' || ch == 0x7f))
      return sv_cfg_fail(x, GK_ERANGE, path,
                         "must have no space or control character");
    if ((r->flags & SV_CFG_NOCTRL) && (ch < ' ' || ch == 0x7f))
      return sv_cfg_fail(x, GK_ERANGE, path, "must have no control character");
  }
  memcpy(dst, s, n + 1);
  return 0;
}

/* An array of strings, each read as a string of this row. */
static int read_strings(sv_cfg_ctx *x, const sv_cfg_row *r, const cJSON *v,
                        const char *path) {
  if (!cJSON_IsArray(v))
    return sv_cfg_fail(x, GK_EINVAL, path,
                       "must be an array of strings, got %s",
                       gk_config_type_name(v));
  int n = cJSON_GetArraySize(v);
  if (n < 0 || (uint64_t)n > r->max)
    return sv_cfg_fail(x, GK_ERANGE, path, "at most %llu %s, got %d",
                       (unsigned long long)r->max, r->key, n);
  uint32_t i = 0;
  for (const cJSON *o = v->child; o; o = o->next, i++) {
    char p[256];
    snprintf(p, sizeof(p), "%.200s[%u]", path, i);
    int rc = read_string(x, r, o, p, (char *)x->c + r->off + i * r->size);
    if (rc) return rc;
  }
  put_uint(x->c, r->aux, sizeof(uint32_t), i);
  return 0;
}

int sv_cfg_get_bool(sv_cfg_ctx *x, const cJSON *v, const char *path, int *out) {
  if (!cJSON_IsBool(v))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be true or false, got %s",
                       gk_config_type_name(v));
  *out = cJSON_IsTrue(v);
  return 0;
}

static int read_bool(sv_cfg_ctx *x, const sv_cfg_row *r, const cJSON *v,
                     const char *path) {
  int b = 0;
  int rc = sv_cfg_get_bool(x, v, path, &b);
  if (rc == 0) put_int(x->c, r->off, b);
  return rc;
}

/* The choices of an enum row, as its messages say them: "a" or "b";
 * one of "a", "b", "c"; "a", "b" or an object. */
static void choices(const sv_cfg_row *r, char *out, size_t cap) {
  size_t n = 0, used = 0;
  while (r->names[n]) n++;
  size_t items = n + (r->sub ? 1 : 0);
  out[0] = '\0';
  for (size_t i = 0; i < items; i++) {
    const char *sep = i == 0 ? (items > 2 && !r->sub ? "one of " : "")
                      : i == items - 1 && (items == 2 || r->sub) ? " or "
                                                                 : ", ";
    int k = i < n
                ? snprintf(out + used, cap - used, "%s\"%s\"", sep, r->names[i])
                : snprintf(out + used, cap - used, "%san object", sep);
    if (k < 0 || (size_t)k >= cap - used) break;
    used += (size_t)k;
  }
}

static int read_enum(sv_cfg_ctx *x, const sv_cfg_table *t, const sv_cfg_row *r,
                     const cJSON *v, const char *path) {
  if (r->sub && cJSON_IsObject(v)) return sv_cfg_walk(x, v, r->sub, path);
  if (cJSON_IsString(v))
    for (int i = 0; r->names[i]; i++)
      if (strcmp(v->valuestring, r->names[i]) == 0) {
        put_int(x->c, r->off, i);
        return 0;
      }
  if ((t->flags & SV_CFG_BRIEF) && !cJSON_IsString(v))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be a string, got %s",
                       gk_config_type_name(v));
  char what[256];
  choices(r, what, sizeof(what));
  return sv_cfg_fail(x, cJSON_IsString(v) ? GK_ERANGE : GK_EINVAL, path,
                     "must be %s", what);
}

/* One value for row r of table t. */
static int read_row(sv_cfg_ctx *x, const sv_cfg_table *t, const sv_cfg_row *r,
                    const cJSON *v, const char *path) {
  int rc = GK_EINVAL;
  switch (r->kind) {
  case SV_CFG_OBJECT:
    return sv_cfg_walk(x, v, r->sub, path);
  case SV_CFG_GENRES:
    return sv_cfg_walk_genres(x, v, path);
  case SV_CFG_UINT:
    rc = read_uint(x, t, r, v, path);
    break;
  case SV_CFG_DELAY:
    rc = read_delay(x, t, r, v, path);
    break;
  case SV_CFG_STRING:
    rc = read_string(x, r, v, path, (char *)x->c + r->off);
    break;
  case SV_CFG_STRINGS:
    rc = read_strings(x, r, v, path);
    break;
  case SV_CFG_BOOL:
    rc = read_bool(x, r, v, path);
    break;
  case SV_CFG_ENUM:
    rc = read_enum(x, t, r, v, path);
    break;
  }
  if (rc == 0 && (r->flags & SV_CFG_SEEN)) put_int(x->c, r->aux, 1);
  if (rc == 0 && r->check) rc = r->check(x, r, path);
  return rc;
}

/* --- the walker ---------------------------------------------------------- */

int sv_cfg_walk(sv_cfg_ctx *x, const cJSON *obj, const sv_cfg_table *t,
                const char *path) {
  if (!cJSON_IsObject(obj))
    return sv_cfg_fail(x, GK_EINVAL, path, "must be an object, got %s",
                       gk_config_type_name(obj));
  int brief = (t->flags & SV_CFG_BRIEF) != 0;
  int rc = brief ? 0 : sv_cfg_check_keys(x, obj, path);
  for (const cJSON *v = obj->child; v && !rc; v = v->next) {
    char p[256];
    sv_cfg_join(p, sizeof(p), path, v->string);
    if (brief) rc = check_dup(x, obj, v, p);
    if (rc) break;
    const sv_cfg_row *r = t->rows;
    while (r->key && strcmp(r->key, v->string) != 0) r++;
    rc = r->key ? read_row(x, t, r, v, p) : unknown_key(x, t, p);
  }
  if (!rc && t->check) rc = t->check(x, path);
  return rc;
}

void sv_cfg_defaults(gk_server_config *c, const sv_cfg_table *t) {
  for (const sv_cfg_row *r = t->rows; r->key; r++) {
    switch (r->kind) {
    case SV_CFG_UINT:
      put_uint(c, r->off, r->size, r->def);
      break;
    case SV_CFG_DELAY:
      put_uint(c, r->off, r->size, r->def);
      put_int(c, r->aux, r->sdef != NULL);
      break;
    case SV_CFG_STRING:
      snprintf((char *)c + r->off, r->size, "%s", r->sdef ? r->sdef : "");
      break;
    case SV_CFG_BOOL:
    case SV_CFG_ENUM:
      put_int(c, r->off, (int)r->def);
      break;
    case SV_CFG_STRINGS: /* none */
    case SV_CFG_OBJECT:
    case SV_CFG_GENRES: /* gk_server_config_default */
      break;
    }
    if (r->flags & SV_CFG_SEEN) put_int(c, r->aux, 0);
    if (r->sub) sv_cfg_defaults(c, r->sub);
  }
}
