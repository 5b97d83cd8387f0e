/* gk_pp_xsb.c: reading XSB level sets (the .sok/.xsb text layout).
 *
 * The text is read line by line. A line whose first non-blank character is
 * one of the map characters (# @ + $ * . - _) is a map row; consecutive
 * rows make one level, which ends at a blank line, a `;` comment, a
 * metadata line (Title:, Author:, Comment:) or the end of the text. Any
 * other line between levels is free text and is skipped; inside a level it
 * is a row with an unknown character, reported as such.
 *
 * A finished level is checked and turned into cells: rows are padded to
 * the widest row, then every non-wall cell connected to the border (or to
 * the padding) is marked OUTSIDE by a flood fill. A pusher, box or goal on
 * an OUTSIDE cell is an "open edge" error. That one check is what lets the
 * rules index neighbours without bounds checks.
 *
 * Nothing here trusts the text: rows and levels are counted against hard
 * limits before anything is stored, and every error carries the name, the
 * line and the column.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_push_puzzle.h"

typedef struct row {
  size_t off;    /* offset of the row's first byte in the text */
  uint32_t len;  /* bytes, trailing blanks and \r removed */
  uint32_t line; /* 1-based */
} row;

typedef struct parser {
  const char *text;
  size_t len;
  const char *name;
  uint32_t max_w, max_h;
  char *err;
  size_t errlen;
  gk_pp_set *set;
  uint32_t cap;
  uint32_t nrows;
  char pending_title[GK_PP_TITLE_MAX];
  int last_titled;             /* the last finished level already has a title */
  int in_comment;              /* inside a Comment: ... Comment-End: block */
  row rows[GK_PP_DIM_MAX + 1]; /* last: not zeroed (rows < nrows are set) */
} parser;

static int fail(parser *p, int code, uint32_t line, uint32_t col,
                const char *what) {
  return gk_errf(p->err, p->errlen, code, "%s:%u:%u: %s", p->name,
                 (unsigned)line, (unsigned)col, what);
}

static int is_map_char(char c) {
  return c == '#' || c == '@' || c == '+' || c == '$' || c == '*' || c == '.' ||
         c == ' ' || c == '-' || c == '_';
}

static int starts_key(const char *s, size_t n, const char *key) {
  size_t k = strlen(key);
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != key[i]) return 0;
  }
  return 1;
}

static void copy_title(char *dst, const char *s, size_t n) {
  while (n > 0 && (*s == ' ' || *s == '\t')) {
    s++;
    n--;
  }
  size_t k = n < GK_PP_TITLE_MAX - 1 ? n : GK_PP_TITLE_MAX - 1;
  memcpy(dst, s, k);
  dst[k] = '\0';
}

/* Line and column of the cell (r, c), c possibly past the row's end. */
static void cell_pos(const parser *p, uint32_t r, uint32_t c, uint32_t *line,
                     uint32_t *col) {
  *line = p->rows[r].line;
  *col = c + 1;
}

/* From pusher cell `start`, the nearest border-touching cell reachable
 * through non-wall cells (for the open-edge message). `q` has w*h slots,
 * `seen` w*h bytes. */
static uint32_t nearest_edge(const uint8_t *cells, uint32_t w, uint32_t h,
                             uint32_t start, uint32_t *q, uint8_t *seen) {
  memset(seen, 0, (size_t)w * h);
  size_t head = 0, tail = 0;
  q[tail++] = start;
  seen[start] = 1;
  while (head < tail) {
    uint32_t c = q[head++];
    uint32_t x = c % w, y = c / w;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1 || (cells[c] & 0x80))
      return c;
    uint32_t nb[4];
    unsigned k = 0;
    nb[k++] = c - 1;
    nb[k++] = c + 1;
    nb[k++] = c - w;
    nb[k++] = c + w;
    for (unsigned i = 0; i < 4; i++) {
      uint32_t n = nb[i];
      if (!seen[n] && !(cells[n] & GK_PP_WALL)) {
        seen[n] = 1;
        q[tail++] = n;
      }
    }
  }
  return start;
}

/* What each map character is: its cell bits, XSB_OK for a map character,
 * XSB_PUSHER for `@` and `+` (0: not a map character). */
enum { XSB_OK = 0x10, XSB_PUSHER = 0x20, XSB_PAD = 0x80 };
static const uint8_t xsb_cell[256] = {
    ['#'] = GK_PP_WALL | XSB_OK,
    ['@'] = XSB_PUSHER | XSB_OK,
    ['+'] = GK_PP_GOAL | XSB_PUSHER | XSB_OK,
    ['$'] = GK_PP_BOX | XSB_OK,
    ['*'] = GK_PP_BOX | GK_PP_GOAL | XSB_OK,
    ['.'] = GK_PP_GOAL | XSB_OK,
    [' '] = XSB_OK,
    ['-'] = XSB_OK,
    ['_'] = XSB_OK,
};

/* Reads the h collected rows into cells (w*h, rows padded with XSB_PAD,
 * which marks padding while the level is built), filling lvl's pushers and
 * box count, *goals and *placed (boxes already on a goal). */
static int read_cells(parser *p, gk_pp_level *lvl, uint8_t *cells, uint32_t w,
                      uint32_t h, uint32_t *goals, uint32_t *placed) {
  /* boxes, goals and placed boxes of each cell value, as 21-bit fields of
   * one sum (a level has at most 2^16 cells) */
  static const uint64_t tally[8] = {
      [GK_PP_GOAL] = 1ull << 21,
      [GK_PP_BOX] = 1,
      [GK_PP_BOX | GK_PP_GOAL] = 1 | 1ull << 21 | 1ull << 42,
      [GK_PP_WALL | GK_PP_GOAL] = 1ull << 21,
      [GK_PP_WALL | GK_PP_BOX] = 1,
      [GK_PP_WALL | GK_PP_BOX | GK_PP_GOAL] = 1 | 1ull << 21 | 1ull << 42,
  };
  uint64_t sum = 0;
  for (uint32_t r = 0; r < h; r++) {
    const unsigned char *s = (const unsigned char *)p->text + p->rows[r].off;
    uint8_t *out = cells + (size_t)r * w;
    uint32_t len = p->rows[r].len;
    for (uint32_t c = 0; c < len; c++) {
      uint8_t t = xsb_cell[s[c]];
      if ((t & (XSB_OK | XSB_PUSHER)) != XSB_OK) {
        if (t == 0)
          return fail(p, GK_EPARSE, p->rows[r].line, c + 1,
                      "unknown character");
        if (lvl->npushers >= GK_PP_PUSHERS_MAX)
          return fail(p, GK_EPARSE, p->rows[r].line, c + 1,
                      "too many pushers (at most 16)");
        lvl->pushers[lvl->npushers++] = r * w + c;
      }
      uint8_t v = t & (GK_PP_WALL | GK_PP_GOAL | GK_PP_BOX);
      sum += tally[v];
      out[c] = v;
    }
    memset(out + len, XSB_PAD, w - len);
  }
  const uint64_t field = (1ull << 21) - 1;
  lvl->boxes += (uint32_t)(sum & field);
  *goals = (uint32_t)(sum >> 21 & field);
  *placed = (uint32_t)(sum >> 42 & field);
  return 0;
}

/* A level needs a pusher, a box, as many goals as boxes, and must not be
 * solved already. */
static int check_counts(parser *p, const gk_pp_level *lvl, uint32_t goals,
                        uint32_t placed) {
  uint32_t first = lvl->line;
  if (lvl->npushers == 0)
    return fail(p, GK_EPARSE, first, 1, "level has no pusher (@ or +)");
  if (lvl->boxes == 0) return fail(p, GK_EPARSE, first, 1, "level has no box");
  if (lvl->boxes == goals && placed == lvl->boxes)
    return fail(p, GK_EPARSE, first, 1, "level is already solved");
  if (lvl->boxes != goals) {
    char msg[96];
    snprintf(msg, sizeof msg, "level has %u boxes but %u goals",
             (unsigned)lvl->boxes, (unsigned)goals);
    return fail(p, GK_EPARSE, first, 1, msg);
  }
  return 0;
}

/* Marks cell n OUTSIDE and queues it, unless it is a wall or marked. */
static inline void flood_visit(uint8_t *cells, uint32_t n, uint32_t *q,
                               size_t *tail) {
  if (!(cells[n] & (GK_PP_WALL | GK_PP_OUTSIDE))) {
    cells[n] |= GK_PP_OUTSIDE;
    q[(*tail)++] = n;
  }
}

/* Marks OUTSIDE every non-wall cell connected to the border or the
 * padding. `q` has w*h slots. */
static void flood_outside(uint8_t *cells, uint32_t w, uint32_t h, uint32_t *q) {
  size_t head = 0, tail = 0;
  for (uint32_t y = 0; y < h; y++) {
    uint32_t base = y * w;
    if (y == 0 || y == h - 1) {
      for (uint32_t x = 0; x < w; x++) flood_visit(cells, base + x, q, &tail);
      continue;
    }
    flood_visit(cells, base, q, &tail);
    for (uint32_t x = 1; x + 1 < w; x++)
      if (cells[base + x] & XSB_PAD) flood_visit(cells, base + x, q, &tail);
    flood_visit(cells, base + w - 1, q, &tail);
  }
  while (head < tail) {
    uint32_t c = q[head++];
    uint32_t y = c / w, x = c - y * w;
    if (x > 0) flood_visit(cells, c - 1, q, &tail);
    if (x + 1 < w) flood_visit(cells, c + 1, q, &tail);
    if (y > 0) flood_visit(cells, c - w, q, &tail);
    if (y + 1 < h) flood_visit(cells, c + w, q, &tail);
  }
}

/* No pusher, box or goal may sit outside the walls; clears the padding
 * marks. */
static int check_edges(parser *p, const gk_pp_level *lvl, uint8_t *cells,
                       uint32_t w, uint32_t h, uint32_t *q, uint8_t *seen) {
  for (uint32_t i = 0; i < lvl->npushers; i++) {
    uint32_t c = lvl->pushers[i];
    if (cells[c] & GK_PP_OUTSIDE) {
      uint32_t e = nearest_edge(cells, w, h, c, q, seen);
      uint32_t line, col;
      cell_pos(p, e / w, e % w, &line, &col);
      return fail(p, GK_EPARSE, line, col,
                  "open edge: a pusher can walk off the map here");
    }
  }
  for (uint32_t c = 0; c < (size_t)w * h; c++) {
    if ((cells[c] & GK_PP_OUTSIDE) && (cells[c] & (GK_PP_BOX | GK_PP_GOAL))) {
      uint32_t line, col;
      cell_pos(p, c / w, c % w, &line, &col);
      const char *what = (cells[c] & GK_PP_BOX)
                             ? "open edge: a box outside the walls"
                             : "open edge: a goal outside the walls";
      return fail(p, GK_EPARSE, line, col, what);
    }
    cells[c] &= (uint8_t)~XSB_PAD;
  }
  return 0;
}

/* Appends lvl (which owns its cells on success) to the set. */
static int append_level(parser *p, gk_pp_level *lvl) {
  if (p->set->count == p->cap) {
    uint32_t ncap = p->cap ? p->cap * 2 : 8;
    gk_pp_level *nl = realloc(p->set->levels, ncap * sizeof *nl);
    if (nl == NULL)
      return gk_errf(p->err, p->errlen, GK_ENOMEM, "%s: out of memory",
                     p->name);
    p->set->levels = nl;
    p->cap = ncap;
  }
  memcpy(lvl->title, p->pending_title, sizeof lvl->title);
  p->last_titled = lvl->title[0] != '\0';
  p->pending_title[0] = '\0';
  p->set->levels[p->set->count++] = *lvl;
  return 0;
}

/* Turns the collected rows into a level and appends it to the set. */
static int finish_level(parser *p) {
  uint32_t h = p->nrows;
  p->nrows = 0;
  if (h == 0) return 0;
  uint32_t first = p->rows[0].line;
  if (p->set->count >= GK_PP_LEVELS_MAX)
    return fail(p, GK_ETOOBIG, first, 1, "too many levels in one set");
  uint32_t w = 0;
  for (uint32_t r = 0; r < h; r++)
    if (p->rows[r].len > w) w = p->rows[r].len;

  gk_pp_level lvl;
  memset(&lvl, 0, sizeof lvl);
  lvl.line = first;
  lvl.width = (uint16_t)w;
  lvl.height = (uint16_t)h;
  size_t n = (size_t)w * h;
  uint8_t *cells = malloc(n);
  uint32_t *q = malloc(n * sizeof *q);
  uint8_t *seen = malloc(n);
  uint32_t goals = 0, placed = 0;
  int rc;
  if (cells == NULL || q == NULL || seen == NULL)
    rc = gk_errf(p->err, p->errlen, GK_ENOMEM, "%s: out of memory", p->name);
  else if ((rc = read_cells(p, &lvl, cells, w, h, &goals, &placed)) == 0 &&
           (rc = check_counts(p, &lvl, goals, placed)) == 0) {
    flood_outside(cells, w, h, q);
    if ((rc = check_edges(p, &lvl, cells, w, h, q, seen)) == 0) {
      lvl.cells = cells;
      if ((rc = append_level(p, &lvl)) == 0) cells = NULL;
    }
  }
  /* the analyzer takes gk_errf's return for possibly 0 (see .clang-tidy) */
  free(cells); /* NOLINT(clang-analyzer-unix.Malloc) */
  free(q);
  free(seen);
  return rc;
}

static void take_title(parser *p, const char *s, size_t n) {
  gk_pp_set *set = p->set;
  if (set->count > 0 && !p->last_titled) {
    copy_title(set->levels[set->count - 1].title, s, n);
    p->last_titled = 1;
  } else {
    copy_title(p->pending_title, s, n);
  }
}

/* Takes line number `line`, the text in [start, end): no '\n', no trailing
 * blanks or '\r'. */
static int take_line(parser *p, size_t start, size_t end, uint32_t line) {
  size_t first = start;
  while (first < end && (p->text[first] == ' ' || p->text[first] == '\t'))
    first++;
  const char *s = p->text + first;
  size_t n = end - first;

  if (p->in_comment) {
    if (starts_key(s, n, "comment-end:")) p->in_comment = 0;
    return 0;
  }
  if (n == 0) return finish_level(p);
  if (is_map_char(*s)) {
    if (p->nrows >= p->max_h)
      return fail(p, GK_EPARSE, line, 1,
                  "level is taller than the limit (max_height)");
    if (end - start > p->max_w)
      return fail(p, GK_EPARSE, line, p->max_w + 1,
                  "level is wider than the limit (max_width)");
    p->rows[p->nrows].off = start;
    p->rows[p->nrows].len = (uint32_t)(end - start);
    p->rows[p->nrows].line = line;
    p->nrows++;
    return 0;
  }
  if (*s == ';') return finish_level(p);
  if (starts_key(s, n, "title:")) {
    int rc = finish_level(p);
    if (rc == 0) take_title(p, s + 6, n - 6);
    return rc;
  }
  if (starts_key(s, n, "comment-end:") || starts_key(s, n, "author:"))
    return finish_level(p);
  if (starts_key(s, n, "comment:")) {
    int rc = finish_level(p);
    size_t k = 8;
    while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
    if (k == n) p->in_comment = 1;
    return rc;
  }
  if (p->nrows > 0)
    return fail(p, GK_EPARSE, line, (uint32_t)(first - start) + 1,
                "unknown character");
  return 0; /* free text between levels */
}

int gk_pp_set_parse(gk_pp_set *set, const char *text, size_t len,
                    const char *name, uint32_t max_width, uint32_t max_height,
                    char *err, size_t errlen) {
  if (set == NULL) return gk_errf(err, errlen, GK_EINVAL, "no set given");
  set->levels = NULL;
  set->count = 0;
  if (name == NULL) name = "<levels>";
  if (text == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "%s: no text given", name);
  if (len > GK_PP_LEVELS_TEXT_MAX)
    return gk_errf(err, errlen, GK_ETOOBIG,
                   "%s: level text is %zu bytes, more than the limit %u", name,
                   len, (unsigned)GK_PP_LEVELS_TEXT_MAX);
  if (max_width > GK_PP_DIM_MAX) max_width = GK_PP_DIM_MAX;
  if (max_height > GK_PP_DIM_MAX) max_height = GK_PP_DIM_MAX;

  parser *p = malloc(sizeof *p);
  if (p == NULL)
    return gk_errf(err, errlen, GK_ENOMEM, "%s: out of memory", name);
  memset(p, 0, offsetof(parser, rows));
  p->text = text;
  p->len = len;
  p->name = name;
  p->max_w = max_width;
  p->max_h = max_height;
  p->err = err;
  p->errlen = errlen;
  p->set = set;
  p->last_titled = 1;

  int rc = 0;
  uint32_t line = 0;
  size_t pos = 0;
  while (rc == 0 && pos < len) {
    line++;
    size_t start = pos;
    while (pos < len && text[pos] != '\n') pos++;
    size_t end = pos;
    if (pos < len) pos++; /* the '\n' */
    while (end > start && (text[end - 1] == '\r' || text[end - 1] == ' ' ||
                           text[end - 1] == '\t'))
      end--;
    rc = take_line(p, start, end, line);
  }
  if (rc == 0) rc = finish_level(p);
  if (rc == 0 && set->count == 0)
    rc = gk_errf(err, errlen, GK_EPARSE, "%s:%u:1: no level found", name,
                 (unsigned)(line ? line : 1));
  free(p);
  if (rc != 0) gk_pp_set_close(set);
  return rc;
}

void gk_pp_set_close(gk_pp_set *set) {
  if (set == NULL) return;
  for (uint32_t i = 0; i < set->count; i++) free(set->levels[i].cells);
  free(set->levels);
  set->levels = NULL;
  set->count = 0;
}

int gk_pp_set_copy(gk_pp_set *dst, const gk_pp_set *src) {
  dst->levels = NULL;
  dst->count = 0;
  if (src->count == 0) return 0;
  dst->levels = malloc((size_t)src->count * sizeof *dst->levels);
  if (dst->levels == NULL) return GK_ENOMEM;
  for (uint32_t i = 0; i < src->count; i++) {
    const gk_pp_level *l = &src->levels[i];
    size_t n = (size_t)l->width * l->height;
    dst->levels[i] = *l;
    dst->levels[i].cells = malloc(n ? n : 1);
    if (dst->levels[i].cells == NULL) {
      gk_pp_set_close(dst);
      return GK_ENOMEM;
    }
    memcpy(dst->levels[i].cells, l->cells, n);
    dst->count = i + 1;
  }
  return 0;
}

int gk_pp_set_find(const gk_pp_set *set, const char *title) {
  if (set == NULL || title == NULL) return GK_EINVAL;
  for (uint32_t i = 0; i < set->count; i++)
    if (strcmp(set->levels[i].title, title) == 0) return (int)i;
  return GK_ENOTFOUND;
}
