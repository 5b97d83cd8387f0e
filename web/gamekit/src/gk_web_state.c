/* gk_web_state.c: the device input source, the state and sample maps, and
 * the test perturbation (see gk_web.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_push_puzzle.h"
#include "gk_state_diff.h"
#include "gk_survivors.h"
#include "gk_web_internal.h"

/* --- device input ------------------------------------------------------- */

/* The record of the genre the match plays, from axes and presses. */
static void pack_record(gk__web_input *d, const gk_sim *sim, uint8_t *rec) {
  memset(rec, 0, GK_INPUT_SIZE_MAX);
  uint32_t b = d->presses;
  if (sim == &gk_survivors_sim) {
    uint8_t pick = (b & GK_WEB_BTN_PICK1)   ? 1
                   : (b & GK_WEB_BTN_PICK2) ? 2
                   : (b & GK_WEB_BTN_PICK3) ? 3
                                            : 0;
    gk_sv_input_pack(rec, d->x, d->y, (b & GK_WEB_BTN_PAUSE) ? 1 : 0, pick);
  } else if (sim == &gk_push_puzzle_sim) {
    uint8_t held = 0;
    if (d->x < 0) held |= GK_PP_LEFT;
    if (d->x > 0) held |= GK_PP_RIGHT;
    if (d->y < 0) held |= GK_PP_UP;
    if (d->y > 0) held |= GK_PP_DOWN;
    rec[0] = held;
    rec[1] =
        (uint8_t)(b & (GK_WEB_BTN_LEFT | GK_WEB_BTN_UP | GK_WEB_BTN_RIGHT |
                       GK_WEB_BTN_DOWN | GK_WEB_BTN_UNDO | GK_WEB_BTN_RESTART));
  }
}

static int dev_read(gk_input *in, uint64_t step, gk_step_input *out) {
  gk__web_input *d = (gk__web_input *)in;
  pack_record(d, d->w->peer.sim, d->record);
  out->step = step;
  out->players = 1;
  out->active_mask = 1;
  out->flags = 0;
  out->inputs = d->record;
  return 0;
}

/* ADR-0004: a press reaches exactly one step. */
static void dev_end_step(gk_input *in) {
  ((gk__web_input *)in)->presses = 0;
}

void gk__web_input_init(gk_web *w) {
  memset(&w->dev, 0, sizeof w->dev);
  w->dev.base.read = dev_read;
  w->dev.base.end_step = dev_end_step;
  w->dev.w = w;
}

static int8_t clamp_axis(int32_t v) {
  return (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
}

void gk_web_axes(gk_web *w, int32_t x, int32_t y) {
  w->dev.x = clamp_axis(x);
  w->dev.y = clamp_axis(y);
}

void gk_web_press(gk_web *w, uint32_t buttons) {
  w->dev.presses |= buttons;
}

/* --- state map ---------------------------------------------------------- */

/* A column (gk_web.h, "Columns"): the fields `key` of every element of
 * the top-level array `list`, in the order they were written. */
#define COLS_MAX 32
#define LISTS_MAX 8
#define LIST_NAME_MAX 32
typedef struct map_col {
  uint8_t list;          /* its index in map_writer.list */
  uint8_t kind;          /* gk_field_kind of its first value */
  char key[GK_PATH_MAX]; /* "x", or "weapons[1].level" */
  uint32_t n, cap;       /* values held, room */
  uint32_t *v;           /* n pairs: lo, hi */
} map_col;

typedef struct map_writer {
  gk_writer w; /* must be first */
  gk__web_buf buf;
  gk_path path;
  char prev[GK_PATH_MAX];
  uint32_t count;
  /* columns: the lists named, the columns made */
  char list[LISTS_MAX][LIST_NAME_MAX];
  uint32_t nlists, ncols, last;
  map_col col[COLS_MAX];
} map_writer;

/* "enemies,gems" into m->list (names of [a-z0-9_], at most LISTS_MAX). */
static void lists_parse(map_writer *m, const char *lists) {
  for (const char *p = lists;
       p != NULL && *p != '\0' && m->nlists < LISTS_MAX;) {
    size_t n = strcspn(p, ",");
    if (n > 0 && n < LIST_NAME_MAX) {
      memcpy(m->list[m->nlists], p, n);
      m->list[m->nlists++][n] = '\0';
    }
    p += n + (p[n] == ',');
  }
}

/* The column of path t, made if new: NULL if t is in no listed list (or
 * every column is taken: it stays in the map). */
static map_col *col_of(map_writer *m, const char *t, gk_field_kind kind) {
  uint32_t l = 0;
  size_t n = 0;
  for (; l < m->nlists; l++) {
    n = strlen(m->list[l]);
    if (strncmp(t, m->list[l], n) == 0 && t[n] == '[') break;
  }
  if (l == m->nlists) return NULL;
  const char *close = strchr(t + n, ']');
  if (close == NULL) return NULL;
  const char *key = close[1] == '.' ? close + 2 : close + 1;
  /* fields repeat per element: the column after the last one first */
  for (uint32_t k = 0; k < m->ncols; k++) {
    map_col *c = &m->col[(m->last + 1 + k) % m->ncols];
    if (c->list == l && strcmp(c->key, key) == 0) {
      m->last = (uint32_t)(c - m->col);
      return c;
    }
  }
  if (m->ncols == COLS_MAX) return NULL;
  map_col *c = &m->col[m->ncols];
  c->list = (uint8_t)l;
  c->kind = (uint8_t)kind;
  snprintf(c->key, sizeof c->key, "%s", key);
  m->last = m->ncols++;
  return c;
}

static int col_put(map_col *c, uint64_t value) {
  if (c->n == c->cap) {
    uint32_t cap = c->cap ? 2 * c->cap : 256;
    uint32_t *nv = realloc(c->v, (size_t)cap * 2 * sizeof *nv);
    if (nv == NULL) return GK_ENOMEM;
    c->v = nv;
    c->cap = cap;
  }
  c->v[2 * c->n] = (uint32_t)value;
  c->v[2 * c->n + 1] = (uint32_t)(value >> 32);
  c->n++;
  return 0;
}

static uint8_t *map_reserve(gk__web_buf b, size_t n) {
  if (*b.len + n > *b.cap) {
    size_t cap = *b.cap ? *b.cap : 16384;
    while (cap < *b.len + n) cap *= 2;
    uint8_t *nb = realloc(*b.bytes, cap);
    if (nb == NULL) return NULL;
    *b.bytes = nb;
    *b.cap = cap;
  }
  uint8_t *p = *b.bytes + *b.len;
  *b.len += n;
  return p;
}

static void map_field(gk_writer *gw, gk_field_kind kind, const char *name,
                      uint64_t value, const uint8_t *bytes, size_t len) {
  map_writer *m = (map_writer *)gw;
  if (gw->err != 0 || !gk_path_feed(&m->path, kind, name, value, len)) return;
  const char *t = m->path.text;
  map_col *c =
      m->nlists > 0 && kind != GK_FIELD_BYTES ? col_of(m, t, kind) : NULL;
  if (c != NULL) {
    gw->err = col_put(c, value);
    return;
  }
  size_t keep = 0, n = strlen(t);
  while (keep < 255 && t[keep] != '\0' && t[keep] == m->prev[keep]) keep++;
  size_t add = n - keep; /* < GK_PATH_MAX */
  int cont = kind == GK_FIELD_BYTES && m->path.offset > 0;
  size_t vlen = kind == GK_FIELD_BYTES ? 4 + len : 8;
  uint8_t *p = map_reserve(m->buf, 3 + add + vlen);
  if (p == NULL) {
    gw->err = GK_ENOMEM;
    return;
  }
  p[0] = (uint8_t)(kind | (cont ? 0x80 : 0));
  p[1] = (uint8_t)keep;
  p[2] = (uint8_t)add;
  memcpy(p + 3, t + keep, add);
  p += 3 + add;
  if (kind == GK_FIELD_BYTES) {
    gk__web_put_le(p, len, 4);
    if (len > 0) memcpy(p + 4, bytes, len);
  } else {
    gk__web_put_le(p, value, 8);
  }
  memcpy(m->prev, t, n + 1);
  m->count++;
}

/* The columns section after the map's fields (gk_web.h, "Columns"). */
static int cols_write(map_writer *m) {
  uint8_t *p = map_reserve(m->buf, 8);
  if (p == NULL) return GK_ENOMEM;
  memcpy(p, "GKC1", 4);
  gk__web_put_le(p + 4, m->ncols, 4);
  for (uint32_t i = 0; i < m->ncols; i++) {
    const map_col *c = &m->col[i];
    size_t ln = strlen(m->list[c->list]), kn = strlen(c->key);
    size_t vn = (size_t)c->n * 8;
    p = map_reserve(m->buf, 1 + ln + 1 + kn + 1 + 4 + vn);
    if (p == NULL) return GK_ENOMEM;
    p[0] = (uint8_t)ln;
    memcpy(p + 1, m->list[c->list], ln);
    p += 1 + ln;
    p[0] = (uint8_t)kn;
    memcpy(p + 1, c->key, kn);
    p += 1 + kn;
    p[0] = c->kind;
    gk__web_put_le(p + 1, c->n, 4);
    for (uint32_t k = 0; k < 2 * c->n; k++)
      gk__web_put_le(p + 5 + 4 * (size_t)k, c->v[k], 4);
  }
  return 0;
}

const uint8_t *gk__web_map_cols_of(gk__web_buf b, const gk_sim *sim,
                                   const void *state, const gk_loop *sample_of,
                                   uint64_t steps, uint64_t hash,
                                   const char *lists, uint32_t *len) {
  *len = 0;
  if (state == NULL) return NULL;
  *b.len = 0;
  uint8_t *h = map_reserve(b, 24);
  if (h == NULL) return NULL;
  memcpy(h, "GKS1", 4);
  gk__web_put_le(h + 4, steps, 8);
  gk__web_put_le(h + 12, hash, 8);
  map_writer *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->w.field = map_field;
  m->buf = b;
  gk_path_init(&m->path);
  lists_parse(m, lists);
  if (sample_of != NULL)
    gk_loop_write_sample(sample_of, &m->w);
  else
    sim->write_state(state, &m->w);
  int rc = m->w.err;
  if (rc == 0) gk__web_put_le(*b.bytes + 20, m->count, 4);
  if (rc == 0 && m->nlists > 0) rc = cols_write(m);
  for (uint32_t i = 0; i < m->ncols; i++) free(m->col[i].v);
  free(m);
  if (rc != 0) return NULL;
  *len = (uint32_t)*b.len;
  return *b.bytes;
}

const uint8_t *gk__web_map_of(gk__web_buf b, const gk_sim *sim,
                              const void *state, const gk_loop *sample_of,
                              uint64_t steps, uint64_t hash, uint32_t *len) {
  return gk__web_map_cols_of(b, sim, state, sample_of, steps, hash, NULL, len);
}

static const uint8_t *map_of(gk_web *w, int sample, const char *lists,
                             uint32_t *len) {
  gk_net_peer *p = &w->peer;
  const void *st = p->started ? gk_loop_state(&p->loop) : NULL;
  gk__web_buf b = {&w->map, &w->map_len, &w->map_cap};
  return gk__web_map_cols_of(b, p->sim, st, sample ? &p->loop : NULL,
                             p->loop.steps, p->loop.last_hash, lists, len);
}

const uint8_t *gk_web_state(gk_web *w, uint32_t *len) {
  return map_of(w, 0, NULL, len);
}

const uint8_t *gk_web_state_cols(gk_web *w, const char *lists, uint32_t *len) {
  return map_of(w, 0, lists, len);
}

const uint8_t *gk_web_sample(gk_web *w, uint32_t *len) {
  return map_of(w, 1, NULL, len);
}

const uint8_t *gk_web_head_cols(gk_web *w, const char *lists, uint32_t *len) {
  gk_net_peer *p = &w->peer;
  gk__web_buf b = {&w->map, &w->map_len, &w->map_cap};
  int head = gk_net_peer_view_predicted(p);
  return gk__web_map_cols_of(b, p->sim, gk_net_peer_view_state(p), NULL,
                             gk_net_peer_view_steps(p),
                             head ? 0 : p->loop.last_hash, lists, len);
}

const uint8_t *gk_web_head(gk_web *w, uint32_t *len) {
  return gk_web_head_cols(w, NULL, len);
}

/* --- perturbation (tests) ----------------------------------------------- */

static void perturb_now(void *ctx, gk_net_peer *np) {
  gk_web *w = ctx;
  char err[GK_ERRMSG_MAX] = "";
  void *st = NULL;
  const void *cur = gk_loop_state(&np->loop);
  int rc = gk_state_patch_add(np->sim, np->sim_cfg, cur, w->perturb_path,
                              w->perturb_delta, &st, err, sizeof err);
  if (rc != 0 && rc != GK_ENOTFOUND && rc != GK_ENOMEM)
    rc = gk_state_patch_add(np->sim, np->sim_cfg, cur, w->perturb_path,
                            -(int64_t)w->perturb_delta, &st, err, sizeof err);
  if (rc == 0) rc = gk_loop_replace(&np->loop, st);
  w->perturb_rc = rc != 0 ? rc : 1;
}

int gk_web_perturb(gk_web *w, uint64_t step, const char *path, int32_t delta) {
  if (path == NULL || strlen(path) >= GK_PATH_MAX || delta == 0)
    return GK_EINVAL;
  memcpy(w->perturb_path, path, strlen(path) + 1);
  w->perturb_delta = delta;
  w->perturb_rc = 0;
  gk_net_peer_after_step(&w->peer, step, perturb_now, w);
  return 0;
}
