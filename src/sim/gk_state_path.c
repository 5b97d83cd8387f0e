/* gk_state_path.c: unique field paths from a writer's names and group
 * markers (see gk_state.h, "field paths"). Naming only: nothing here runs
 * on the hash path. */
#include <stdio.h>
#include <string.h>

#include "gk_state.h"

/* --- field paths --------------------------------------------------------- */

void gk_path_init(gk_path *p) {
  memset(p, 0, sizeof *p);
}

/* Appends `s` (n bytes) to the prefix at p->len into text; marks a cut. */
static size_t path_put(gk_path *p, size_t at, const char *s, size_t n) {
  if (at + n >= GK_PATH_MAX) {
    p->truncated = 1;
    n = at < GK_PATH_MAX - 1 ? GK_PATH_MAX - 1 - at : 0;
  }
  memcpy(p->text + at, s, n);
  p->text[at + n] = '\0';
  return at + n;
}

/* text[0..at) + ("." if needed) + name (+ "[index]"); returns the length. */
static size_t path_join(gk_path *p, size_t at, const char *name,
                        uint64_t index) {
  size_t n = name != NULL ? strlen(name) : 0;
  if (at > 0 && n > 0) at = path_put(p, at, ".", 1);
  at = path_put(p, at, name != NULL ? name : "", n);
  if (index != UINT64_MAX) {
    char num[24];
    int k = snprintf(num, sizeof num, "[%llu]", (unsigned long long)index);
    at = path_put(p, at, num, (size_t)k);
  }
  return at;
}

int gk_path_feed(gk_path *p, gk_field_kind kind, const char *name,
                 uint64_t value, size_t len) {
  if (kind == GK_FIELD_BEGIN) {
    if (p->depth < GK_PATH_DEPTH_MAX)
      p->mark[p->depth] = p->len;
    else
      p->truncated = 1;
    p->depth++;
    p->len = path_join(p, p->len, name, value);
    p->last_bytes = 0;
    return 0;
  }
  if (kind == GK_FIELD_END) {
    if (p->depth > 0) p->depth--;
    if (p->depth < GK_PATH_DEPTH_MAX) p->len = p->mark[p->depth];
    p->text[p->len] = '\0';
    p->last_bytes = 0;
    return 0;
  }
  char prev[GK_PATH_MAX];
  int cont = kind == GK_FIELD_BYTES && p->last_bytes;
  if (cont) memcpy(prev, p->text, GK_PATH_MAX);
  path_join(p, p->len, name, UINT64_MAX);
  p->offset = 0;
  if (cont && strcmp(prev, p->text) == 0) p->offset = p->bytes_end;
  if (kind == GK_FIELD_BYTES) p->bytes_end = p->offset + len;
  p->last_bytes = kind == GK_FIELD_BYTES;
  return 1;
}
