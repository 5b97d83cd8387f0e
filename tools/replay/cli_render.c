/* cli_render.c: gk-replay's renderers of the canonical writer's fields, as
 * text and as JSON, and hash formatting (see gk_replay_cli_internal.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay_cli_internal.h"
#include "gk_state_diff.h"

static void indent(gkr_text_render *t) {
  fputs(t->indent0, t->out);
  for (int i = 0; i < t->depth && i < GKR_RENDER_DEPTH_MAX; i++)
    fputs("  ", t->out);
}

static void text_field(gk_writer *w, gk_field_kind kind, const char *name,
                       uint64_t value, const uint8_t *bytes, size_t len) {
  gkr_text_render *t = (gkr_text_render *)w;
  if (name == NULL) name = "?";
  switch (kind) {
  case GK_FIELD_BEGIN:
    indent(t);
    if (value == UINT64_MAX)
      fprintf(t->out, "%s:\n", name);
    else
      fprintf(t->out, "%s[%" PRIu64 "]:\n", name, value);
    t->depth++;
    return;
  case GK_FIELD_END:
    if (t->depth > 0) t->depth--;
    return;
  default:
    break;
  }
  indent(t);
  fprintf(t->out, "%s: ", name);
  switch (kind) {
  case GK_FIELD_I8:
  case GK_FIELD_I16:
  case GK_FIELD_I32:
  case GK_FIELD_I64:
    fprintf(t->out, "%" PRId64 "\n", (int64_t)value);
    break;
  case GK_FIELD_BOOL:
    fputs(value ? "true\n" : "false\n", t->out);
    break;
  case GK_FIELD_BYTES:
    for (size_t i = 0; i < len; i++) fprintf(t->out, "%02x", bytes[i]);
    fputc('\n', t->out);
    break;
  default:
    fprintf(t->out, "%" PRIu64 "\n", value);
    break;
  }
}

void gkr_text_render_init(gkr_text_render *t, FILE *out, const char *indent0) {
  memset(t, 0, sizeof *t);
  t->w.field = text_field;
  t->out = out;
  t->indent0 = indent0;
}

#define EXACT_MAX 9007199254740992.0 /* 2^53 */

/* The key to use for `name` in obj, so that every key is unique: `name`
 * if it is free, else "name#2", "name#3"... (a genre may write a count and
 * a list under one name, or repeat a name). For a list item (`arr` non-NULL)
 * an array already under one of those keys is reused and returned. NULL if
 * none is free. */
static const char *pick_key(cJSON *obj, const char *name, cJSON **arr,
                            char *buf, size_t n) {
  for (int k = 1; k <= 1000; k++) {
    const char *key = name;
    if (k > 1) {
      snprintf(buf, n, "%s#%d", name, k);
      key = buf;
    }
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL) {
      if (arr != NULL) *arr = NULL;
      return key;
    }
    if (arr != NULL && cJSON_IsArray(item)) {
      *arr = item;
      return key;
    }
  }
  return NULL;
}

static void json_add(gkr_json_render *j, const char *name, cJSON *item) {
  char buf[160];
  cJSON *obj = j->stack[j->depth];
  name = pick_key(obj, name, NULL, buf, sizeof buf);
  if (item == NULL || name == NULL || !cJSON_AddItemToObject(obj, name, item)) {
    cJSON_Delete(item);
    j->failed = 1;
  }
}

static void json_field(gk_writer *w, gk_field_kind kind, const char *name,
                       uint64_t value, const uint8_t *bytes, size_t len) {
  gkr_json_render *j = (gkr_json_render *)w;
  if (name == NULL) name = "?";
  if (kind == GK_FIELD_BEGIN &&
      (j->skip > 0 || j->depth >= GKR_RENDER_DEPTH_MAX)) {
    j->skip++;
    j->failed = 1;
    return;
  }
  if (kind == GK_FIELD_END) {
    if (j->skip > 0)
      j->skip--;
    else if (j->depth > 0)
      j->depth--;
    return;
  }
  if (j->skip > 0) return;
  cJSON *cur = j->stack[j->depth];
  if (kind == GK_FIELD_BEGIN) {
    cJSON *obj = cJSON_CreateObject();
    if (obj == NULL) {
      j->failed = 1;
      j->skip++;
      return;
    }
    char buf[160];
    if (value == UINT64_MAX) {
      const char *key = pick_key(cur, name, NULL, buf, sizeof buf);
      if (key == NULL || !cJSON_AddItemToObject(cur, key, obj)) {
        cJSON_Delete(obj);
        j->failed = 1;
        j->skip++;
        return;
      }
    } else {
      cJSON *arr = NULL;
      const char *key = pick_key(cur, name, &arr, buf, sizeof buf);
      if (arr == NULL) {
        arr = key != NULL ? cJSON_CreateArray() : NULL;
        if (arr == NULL || !cJSON_AddItemToObject(cur, key, arr)) {
          cJSON_Delete(arr);
          cJSON_Delete(obj);
          j->failed = 1;
          j->skip++;
          return;
        }
      }
      cJSON_AddItemToArray(arr, obj);
    }
    j->stack[++j->depth] = obj;
    return;
  }
  char buf[24];
  switch (kind) {
  case GK_FIELD_I8:
  case GK_FIELD_I16:
  case GK_FIELD_I32:
  case GK_FIELD_I64: {
    int64_t v = (int64_t)value;
    if (v > (int64_t)EXACT_MAX || v < -(int64_t)EXACT_MAX) {
      snprintf(buf, sizeof buf, "%" PRId64, v);
      json_add(j, name, cJSON_CreateString(buf));
    } else {
      json_add(j, name, cJSON_CreateNumber((double)v));
    }
    break;
  }
  case GK_FIELD_BOOL:
    json_add(j, name, cJSON_CreateBool(value != 0));
    break;
  case GK_FIELD_BYTES: {
    char *hex = malloc(len * 2 + 1);
    if (hex == NULL) {
      j->failed = 1;
      return;
    }
    for (size_t i = 0; i < len; i++) snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    hex[len * 2] = '\0';
    json_add(j, name, cJSON_CreateString(hex));
    free(hex);
    break;
  }
  default:
    if (value > (uint64_t)EXACT_MAX) {
      snprintf(buf, sizeof buf, "%" PRIu64, value);
      json_add(j, name, cJSON_CreateString(buf));
    } else {
      json_add(j, name, cJSON_CreateNumber((double)value));
    }
    break;
  }
}

int gkr_json_render_init(gkr_json_render *j) {
  memset(j, 0, sizeof *j);
  j->w.field = json_field;
  j->stack[0] = cJSON_CreateObject();
  return j->stack[0] != NULL ? 0 : GK_ENOMEM;
}

/* --- by path (dump) ------------------------------------------------------ */

static char *hex_of(const uint8_t *bytes, size_t len, const char *before) {
  size_t b = before != NULL ? strlen(before) : 0;
  char *hex = malloc(b + len * 2 + 1);
  if (hex == NULL) return NULL;
  if (b > 0) memcpy(hex, before, b);
  for (size_t i = 0; i < len; i++)
    snprintf(hex + b + 2 * i, 3, "%02x", bytes[i]);
  hex[b + len * 2] = '\0';
  return hex;
}

static void path_json(gkr_path_render *p, gk_field_kind kind, uint64_t value,
                      const uint8_t *bytes, size_t len) {
  const char *key = p->path.text;
  cJSON *item = NULL;
  if (kind == GK_FIELD_BYTES) {
    cJSON *old = p->path.offset > 0
                     ? cJSON_GetObjectItemCaseSensitive(p->obj, key)
                     : NULL;
    char *hex = hex_of(bytes, len, cJSON_GetStringValue(old));
    item = hex != NULL ? cJSON_CreateString(hex) : NULL;
    free(hex);
    if (old != NULL) {
      if (item == NULL ||
          !cJSON_ReplaceItemInObjectCaseSensitive(p->obj, key, item))
        p->failed = 1;
      return;
    }
  } else if (kind == GK_FIELD_BOOL) {
    item = cJSON_CreateBool(value != 0);
  } else {
    char t[24];
    gk_field_value_text(kind, value, t, sizeof t);
    int sgn = kind >= GK_FIELD_I8 && kind <= GK_FIELD_I64;
    double d = sgn ? (double)(int64_t)value : (double)value;
    item = (d > EXACT_MAX || d < -EXACT_MAX) ? cJSON_CreateString(t)
                                             : cJSON_CreateNumber(d);
  }
  if (item == NULL || !cJSON_AddItemToObject(p->obj, key, item)) {
    cJSON_Delete(item);
    p->failed = 1;
  }
}

static void path_field(gk_writer *w, gk_field_kind kind, const char *name,
                       uint64_t value, const uint8_t *bytes, size_t len) {
  gkr_path_render *p = (gkr_path_render *)w;
  if (!gk_path_feed(&p->path, kind, name, value, len)) return;
  if (p->obj != NULL) {
    path_json(p, kind, value, bytes, len);
    return;
  }
  int cont = kind == GK_FIELD_BYTES && p->path.offset > 0 && p->open;
  if (p->open && !cont) fputc('\n', p->out);
  p->open = 0;
  if (!cont) fprintf(p->out, "%s: ", p->path.text);
  if (kind == GK_FIELD_BYTES) {
    for (size_t i = 0; i < len; i++) fprintf(p->out, "%02x", bytes[i]);
    p->open = 1;
    return;
  }
  char t[24];
  fprintf(p->out, "%s\n", gk_field_value_text(kind, value, t, sizeof t));
}

void gkr_path_render_init(gkr_path_render *p, FILE *out, cJSON *obj) {
  memset(p, 0, sizeof *p);
  p->w.field = path_field;
  gk_path_init(&p->path);
  p->out = out;
  p->obj = obj;
}

void gkr_path_render_end(gkr_path_render *p) {
  if (p->open && p->out != NULL) fputc('\n', p->out);
  p->open = 0;
}

/* Prints a JSON item on one line and deletes it. */
void gkr_print_json(FILE *out, cJSON *item) {
  char *s = item != NULL ? cJSON_PrintUnformatted(item) : NULL;
  if (s != NULL) {
    fputs(s, out);
    fputc('\n', out);
    cJSON_free(s);
  } else {
    fputs("{\"error\":\"out of memory\"}\n", out);
  }
  cJSON_Delete(item);
}

void gkr_hex_hash(char *buf, size_t n, uint64_t h) {
  snprintf(buf, n, "0x%016" PRIx64, h);
}

void gkr_add_hash(cJSON *o, const char *key, uint64_t h) {
  char buf[24];
  gkr_hex_hash(buf, sizeof buf, h);
  cJSON_AddStringToObject(o, key, buf);
}
