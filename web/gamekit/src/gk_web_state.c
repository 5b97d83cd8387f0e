/* gk_web_state.c: the device input source, the state and sample maps, and
 * the test perturbation (see gk_web.h). */
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

typedef struct map_writer {
  gk_writer w; /* must be first */
  gk__web_buf buf;
  gk_path path;
  char prev[GK_PATH_MAX];
  uint32_t count;
} map_writer;

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

const uint8_t *gk__web_map_of(gk__web_buf b, const gk_sim *sim,
                              const void *state, const gk_loop *sample_of,
                              uint64_t steps, uint64_t hash, uint32_t *len) {
  *len = 0;
  if (state == NULL) return NULL;
  *b.len = 0;
  uint8_t *h = map_reserve(b, 24);
  if (h == NULL) return NULL;
  memcpy(h, "GKS1", 4);
  gk__web_put_le(h + 4, steps, 8);
  gk__web_put_le(h + 12, hash, 8);
  map_writer m;
  memset(&m, 0, sizeof m);
  m.w.field = map_field;
  m.buf = b;
  gk_path_init(&m.path);
  if (sample_of != NULL)
    gk_loop_write_sample(sample_of, &m.w);
  else
    sim->write_state(state, &m.w);
  if (m.w.err != 0) return NULL;
  gk__web_put_le(*b.bytes + 20, m.count, 4);
  *len = (uint32_t)*b.len;
  return *b.bytes;
}

static const uint8_t *map_of(gk_web *w, int sample, uint32_t *len) {
  gk_net_peer *p = &w->peer;
  const void *st = p->started ? gk_loop_state(&p->loop) : NULL;
  gk__web_buf b = {&w->map, &w->map_len, &w->map_cap};
  return gk__web_map_of(b, p->sim, st, sample ? &p->loop : NULL, p->loop.steps,
                        p->loop.last_hash, len);
}

const uint8_t *gk_web_state(gk_web *w, uint32_t *len) {
  return map_of(w, 0, len);
}

const uint8_t *gk_web_sample(gk_web *w, uint32_t *len) {
  return map_of(w, 1, len);
}

const uint8_t *gk_web_head(gk_web *w, uint32_t *len) {
  gk_net_peer *p = &w->peer;
  gk__web_buf b = {&w->map, &w->map_len, &w->map_cap};
  int head = gk_net_peer_view_predicted(p);
  return gk__web_map_of(b, p->sim, gk_net_peer_view_state(p), NULL,
                        gk_net_peer_view_steps(p), head ? 0 : p->loop.last_hash,
                        len);
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
