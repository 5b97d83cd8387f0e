/* gk_pp_lurd.c: LURD solutions: parse, turn into a step script, check.
 *
 * LURD is the common notation for Sokoban solutions: one letter per move,
 * upper case when the move pushes a box. Run-length counts may precede a
 * letter or a parenthesised group, and groups nest: "2(dull)3R".
 *
 * The parser is a small recursive descent whose depth is capped, and the
 * expansion is counted before it is stored, so no text can make it recurse
 * or allocate without bound. Every move remembers the offset of the letter
 * it came from, so a mismatch found by the checker can point at the text.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_pp_internal.h"

typedef struct lurd {
  const char *text;
  size_t len;
  size_t pos;
  const char *name;
  char *err;
  size_t errlen;
  gk_pp_moves *out;
  size_t cap;
} lurd;

void gk_pp_text_pos(const char *text, size_t len, size_t off, uint32_t *line,
                    uint32_t *col) {
  uint32_t l = 1, c = 1;
  if (off > len) off = len;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

static int fail_at(lurd *p, int code, size_t off, const char *what) {
  uint32_t line, col;
  gk_pp_text_pos(p->text, p->len, off, &line, &col);
  return gk_errf(p->err, p->errlen, code, "%s:%u:%u: %s", p->name,
                 (unsigned)line, (unsigned)col, what);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

static void skip_space(lurd *p) {
  while (p->pos < p->len && is_space(p->text[p->pos])) p->pos++;
}

/* Makes room for `more` moves, refusing to pass GK_PP_LURD_MAX. */
static int reserve(lurd *p, size_t more, size_t at) {
  gk_pp_moves *m = p->out;
  if (more > GK_PP_LURD_MAX || m->count > GK_PP_LURD_MAX - more)
    return fail_at(p, GK_ETOOBIG, at, "solution expands to too many moves");
  size_t need = m->count + more;
  if (need <= p->cap) return 0;
  size_t ncap = p->cap ? p->cap : 256;
  while (ncap < need) ncap *= 2;
  uint8_t *nm = realloc(m->moves, ncap);
  if (nm == NULL)
    return gk_errf(p->err, p->errlen, GK_ENOMEM, "%s: out of memory", p->name);
  m->moves = nm;
  uint32_t *nw = realloc(m->where, ncap * sizeof *nw);
  if (nw == NULL)
    return gk_errf(p->err, p->errlen, GK_ENOMEM, "%s: out of memory", p->name);
  m->where = nw;
  p->cap = ncap;
  return 0;
}

static int letter_move(char c, uint8_t *mv) {
  switch (c) {
  case 'l':
    *mv = GK_PP_DIR_LEFT;
    return 1;
  case 'u':
    *mv = GK_PP_DIR_UP;
    return 1;
  case 'r':
    *mv = GK_PP_DIR_RIGHT;
    return 1;
  case 'd':
    *mv = GK_PP_DIR_DOWN;
    return 1;
  case 'L':
    *mv = GK_PP_DIR_LEFT | GK_PP_MOVE_PUSH;
    return 1;
  case 'U':
    *mv = GK_PP_DIR_UP | GK_PP_MOVE_PUSH;
    return 1;
  case 'R':
    *mv = GK_PP_DIR_RIGHT | GK_PP_MOVE_PUSH;
    return 1;
  case 'D':
    *mv = GK_PP_DIR_DOWN | GK_PP_MOVE_PUSH;
    return 1;
  default:
    return 0;
  }
}

/* seq := ( [count] ( letter | '(' seq ')' ) )*, ending at ')' when depth>0
 * or at the end of the text when depth == 0. */
static int parse_seq(lurd *p, unsigned depth, size_t open_at) {
  for (;;) {
    skip_space(p);
    if (p->pos >= p->len) {
      if (depth > 0)
        return fail_at(p, GK_EPARSE, open_at, "'(' is never closed");
      return 0;
    }
    size_t item_at = p->pos;
    char c = p->text[p->pos];
    if (c == ')') {
      if (depth == 0) return fail_at(p, GK_EPARSE, p->pos, "')' without '('");
      p->pos++;
      return 0;
    }
    size_t count = 1;
    if (c >= '0' && c <= '9') {
      count = 0;
      /* whitespace is ignored everywhere, also between digits */
      while (p->pos < p->len && p->text[p->pos] >= '0' &&
             p->text[p->pos] <= '9') {
        count = count * 10 + (size_t)(p->text[p->pos] - '0');
        if (count > GK_PP_LURD_MAX)
          return fail_at(p, GK_ETOOBIG, item_at, "repeat count is too large");
        p->pos++;
        skip_space(p);
      }
      if (count == 0)
        return fail_at(p, GK_EPARSE, item_at, "repeat count is 0");
      skip_space(p);
      if (p->pos >= p->len || p->text[p->pos] == ')')
        return fail_at(p, GK_EPARSE, item_at,
                       "repeat count with no move or group after it");
      c = p->text[p->pos];
    }
    uint8_t mv;
    if (letter_move(c, &mv)) {
      int rc = reserve(p, count, p->pos);
      if (rc != 0) return rc;
      gk_pp_moves *m = p->out;
      for (size_t i = 0; i < count; i++) {
        m->moves[m->count] = mv;
        m->where[m->count] = (uint32_t)p->pos;
        m->count++;
      }
      p->pos++;
      continue;
    }
    if (c == '(') {
      if (depth + 1 > GK_PP_LURD_DEPTH)
        return fail_at(p, GK_ETOOBIG, p->pos, "groups nested too deeply");
      size_t at = p->pos++;
      size_t start = p->out->count;
      int rc = parse_seq(p, depth + 1, at);
      if (rc != 0) return rc;
      size_t glen = p->out->count - start;
      if (count > 1 && glen > 0) {
        if (glen > GK_PP_LURD_MAX / (count - 1))
          return fail_at(p, GK_ETOOBIG, item_at,
                         "solution expands to too many moves");
        rc = reserve(p, glen * (count - 1), item_at);
        if (rc != 0) return rc;
        gk_pp_moves *m = p->out;
        for (size_t i = 1; i < count; i++) {
          memcpy(m->moves + m->count, m->moves + start, glen);
          memcpy(m->where + m->count, m->where + start,
                 glen * sizeof *m->where);
          m->count += glen;
        }
      }
      continue;
    }
    return fail_at(p, GK_EPARSE, p->pos, "unknown character in LURD");
  }
}

int gk_pp_lurd_parse(gk_pp_moves *out, const char *text, size_t len,
                     const char *name, char *err, size_t errlen) {
  if (out == NULL) return gk_errf(err, errlen, GK_EINVAL, "no output given");
  memset(out, 0, sizeof *out);
  if (name == NULL) name = "<lurd>";
  if (text == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "%s: no text given", name);
  if (len > (size_t)UINT32_MAX)
    return gk_errf(err, errlen, GK_ETOOBIG, "%s: text too long", name);
  lurd p;
  memset(&p, 0, sizeof p);
  p.text = text;
  p.len = len;
  p.name = name;
  p.err = err;
  p.errlen = errlen;
  p.out = out;
  int rc = parse_seq(&p, 0, 0);
  if (rc != 0) gk_pp_moves_close(out);
  return rc;
}

void gk_pp_moves_close(gk_pp_moves *m) {
  if (m == NULL) return;
  free(m->moves);
  free(m->where);
  m->moves = NULL;
  m->where = NULL;
  m->count = 0;
}

int gk_pp_script(const uint8_t *moves, size_t count, uint32_t players,
                 uint32_t player, uint8_t *records) {
  if (players == 0 || players > GK_PLAYERS_MAX || player >= players ||
      (count > 0 && (moves == NULL || records == NULL)))
    return GK_EINVAL;
  size_t stride = (size_t)players * GK_PP_INPUT_SIZE;
  memset(records, 0, count * stride);
  for (size_t i = 0; i < count; i++)
    records[i * stride + (size_t)player * GK_PP_INPUT_SIZE + 1] =
        (uint8_t)(1u << (moves[i] & 3u));
  return 0;
}

static const char move_letter[8] = {'l', 'u', 'r', 'd', 'L', 'U', 'R', 'D'};

int gk_pp_check(const gk_pp_level *lvl, const gk_pp_moves *m, int strict,
                const char *text, size_t textlen, gk_pp_check_result *res,
                char *err, size_t errlen) {
  gk_pp_check_result local;
  if (res == NULL) res = &local;
  memset(res, 0, sizeof *res);
  if (lvl == NULL || m == NULL || (m->count > 0 && m->moves == NULL))
    return gk_errf(err, errlen, GK_EINVAL, "no level or moves given");
  size_t n = (size_t)lvl->width * lvl->height;
  uint8_t *cells = malloc(n ? n : 1);
  if (cells == NULL) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  gk__pp_board b;
  gk__pp_board_load(&b, cells, lvl, lvl->npushers);
  int rc = 0;
  for (size_t i = 0; i < m->count; i++) {
    uint8_t mv = m->moves[i];
    int r = gk__pp_try_move(&b, 0, mv & 3u);
    const char *why = NULL;
    if (r == GK__PP_BLOCKED)
      why = "is blocked";
    else if (strict && r == GK__PP_PUSHED && !(mv & GK_PP_MOVE_PUSH))
      why = "pushes a box but is lower case";
    else if (strict && r == GK__PP_MOVED && (mv & GK_PP_MOVE_PUSH))
      why = "is upper case but pushes nothing";
    if (why != NULL) {
      /* undo a move the strict check refused, so the counts stay true */
      if (r != GK__PP_BLOCKED)
        gk__pp_unmove(&b, 0, mv & 3u, r == GK__PP_PUSHED);
      if (text != NULL && m->where != NULL) {
        uint32_t line, col;
        gk_pp_text_pos(text, textlen, m->where[i], &line, &col);
        rc = gk_errf(err, errlen, GK_EMISMATCH,
                     "move %zu ('%c', line %u, column %u) %s", i + 1,
                     move_letter[mv & 7u], (unsigned)line, (unsigned)col, why);
      } else {
        rc = gk_errf(err, errlen, GK_EMISMATCH, "move %zu ('%c') %s", i + 1,
                     move_letter[mv & 7u], why);
      }
      break;
    }
    res->moves_done++;
    if (r == GK__PP_PUSHED) res->pushes++;
    if (b.on_goals == b.boxes && !res->solved) {
      res->solved = 1;
      res->solved_at = res->moves_done;
    }
  }
  res->solved = b.on_goals == b.boxes;
  free(cells);
  return rc;
}
