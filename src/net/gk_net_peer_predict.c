/* gk_net_peer_predict.c: the predicted head of the peer engine (see
 * gk_net_peer.h, "Prediction", and docs/PROTOCOL.md).
 *
 * The confirmed run (p->loop) is the one the peer hashes, reports and
 * answers state requests from; nothing here touches it. The head is a
 * second state of the same run:
 *
 *   - restore: the head becomes a copy of the confirmed run, so it starts
 *     at loop.steps: with the genre's copy hook (sim->copy_state, ABI 4)
 *     into the head's own state when the genre has one, else (and the
 *     first time) the confirmed run's canonical bytes (sim->write_state
 *     into a buffer kept for the match) read back with sim->read_state;
 *     the confirmed run is itself the saved state, so nothing is saved
 *     per step;
 *   - advance: sim->step on a merged input built for each step: the
 *     confirmed one if it is held, else this peer's own sampled record
 *     (the record ring; the source is never read here) and, for every
 *     other player, its last confirmed record; the input used is kept
 *     (assumed) until the step is confirmed;
 *   - check: each newly confirmed step the head ran is compared with what
 *     it assumed (records, active mask, flags); one difference marks the
 *     head for a restore at the next timeout call. A head that is not
 *     ahead (a round trip shorter than the delay) steps each newly
 *     confirmed step with its confirmed input instead, which costs a step
 *     rather than a restore.
 *
 * A timeout call runs at most predict_cap head steps; a head left behind
 * after a long stall or a rollback catches up over the next calls. The
 * head's events are drained and dropped (they would repeat on every
 * re-simulation); the head is never hashed.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_internal.h"
#include "gk_state.h"

/* --- the state buffer --------------------------------------------------- */

static void buf_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
  gk_net_peer_head *h = w->data;
  if (h->buf_err) return;
  if (h->buf_len + len > h->buf_cap) {
    size_t cap = h->buf_cap ? h->buf_cap : 4096;
    while (cap < h->buf_len + len) cap *= 2;
    uint8_t *nb = realloc(h->buf, cap);
    if (nb == NULL) {
      h->buf_err = GK_ENOMEM;
      return;
    }
    h->buf = nb;
    h->buf_cap = cap;
  }
  memcpy(h->buf + h->buf_len, bytes, len);
  h->buf_len += len;
}

/* Marks the head a copy of the confirmed run now. */
static void mark_restored(gk_net_peer *p) {
  gk_net_peer_head *h = &p->head;
  h->steps = p->loop.steps;
  h->version = p->loop.version;
  h->dirty = 0;
  h->restores++;
}

/* The head becomes a copy of the confirmed run. 0 or a code (the head is
 * then dropped: the view falls back on the confirmed run). */
static int restore(gk_net_peer *p) {
  gk_net_peer_head *h = &p->head;
  if (h->state != NULL && p->sim->copy_state != NULL &&
      p->sim->copy_state(h->state, gk_loop_state(&p->loop)) == 0) {
    h->copies++;
    mark_restored(p);
    return 0;
  }
  uint8_t stage[1024];
  gk_writer w = {
      .buf = stage, .cap = sizeof stage, .flush = buf_flush, .data = h};
  h->buf_len = 0;
  h->buf_err = 0;
  p->sim->write_state(gk_loop_state(&p->loop), &w);
  gk_writer_flush(&w);
  void *st = NULL;
  if (h->buf_err == 0) {
    char err[GK_ERRMSG_MAX];
    gk_reader r;
    gk_reader_init(&r, h->buf, h->buf_len);
    st = p->sim->read_state(p->sim_cfg, &r, err, sizeof err);
  }
  p->sim->destroy(h->state);
  h->state = st;
  if (st == NULL) return GK_ENOMEM;
  h->state_bytes = h->buf_len;
  mark_restored(p);
  return 0;
}

/* --- inputs ------------------------------------------------------------- */

static size_t rec_bytes(const gk_net_peer *p) {
  return (size_t)p->match.players * p->sim->input_size;
}

/* The merged input the head takes for step s into h->work (the view in
 * *in). */
static void build_input(gk_net_peer *p, uint64_t s, gk_step_input *in) {
  gk_net_peer_head *h = &p->head;
  uint32_t isz = p->sim->input_size, slot = p->match.slot;
  gk_step_input c;
  if (s < p->inbuf.confirmed && gk_inbuf_get(&p->inbuf, s, &c) == 0) {
    memcpy(h->work, c.inputs, rec_bytes(p));
    *in = c;
    in->inputs = h->work;
    return;
  }
  memcpy(h->work, h->last, rec_bytes(p));
  if (p->opts.predict_wrong)
    for (size_t i = 0; i < rec_bytes(p); i++) h->work[i] ^= 0xffu;
  uint8_t *mine = h->work + (size_t)slot * isz;
  if (s >= p->sched.first && s < gk_net_sched_next(&p->sched))
    memcpy(mine, p->unacked + (s % p->inbuf.window) * isz, isz);
  else
    memset(mine, 0, isz); /* before the first sample: neutral */
  *in = (gk_step_input){.step = s,
                        .active_mask = p->inbuf.active_mask,
                        .flags = 0,
                        .players = p->match.players,
                        .inputs = h->work};
}

static void drop_event(void *ctx, const gk_event *ev) {
  (void)ctx;
  (void)ev;
}

void gk__peer_note(uint32_t *arr, uint32_t *n, uint32_t cap, uint64_t now,
                   uint64_t since_ns) {
  if (*n >= cap || since_ns == 0 || now < since_ns) return;
  uint64_t us = (now - since_ns) / 1000u;
  arr[(*n)++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* Runs head step h->steps; keeps its input; notes display latency the
 * first time the head shows a step this peer sampled. */
static void head_step(gk_net_peer *p) {
  gk_net_peer_head *h = &p->head;
  uint64_t s = h->steps;
  gk_step_input in;
  build_input(p, s, &in);
  p->sim->step(h->state, &in);
  if (p->sim->drain_events != NULL)
    p->sim->drain_events(h->state, drop_event, NULL);
  memcpy(h->assumed + (s % p->inbuf.window) * rec_bytes(p), in.inputs,
         rec_bytes(p));
  h->assumed_mask[s % p->inbuf.window] = in.active_mask | (uint64_t)in.flags
                                                              << 32;
  h->steps++;
  h->steps_run++;
  if (h->steps > h->shown) {
    h->shown = h->steps;
    if (s >= p->sched.first && s < gk_net_sched_next(&p->sched))
      gk__peer_note(p->display_us, &p->ndisplay, p->opts.latency_cap, p->now,
                    p->sampled_ns[s % p->inbuf.window]);
  }
}

/* --- the engine's hooks ------------------------------------------------- */

static int predicting(const gk_net_peer *p) {
  return p->opts.predict && !p->opts.no_sim && p->started && !p->ended &&
         !p->spectator && !p->await_snapshot && !p->catching_up &&
         p->head.assumed != NULL;
}

int gk__peer_head_open(gk_net_peer *p, uint32_t players) {
  gk_net_peer_head *h = &p->head;
  memset(h, 0, sizeof *h);
  if (!p->opts.predict || p->opts.no_sim) return 0;
  size_t rb = (size_t)players * p->sim->input_size;
  h->assumed = calloc(p->inbuf.window, rb);
  h->assumed_mask = calloc(p->inbuf.window, sizeof(uint64_t));
  h->last = calloc(1, rb);
  h->work = calloc(1, rb);
  if (h->assumed == NULL || h->assumed_mask == NULL || h->last == NULL ||
      h->work == NULL) {
    gk__peer_head_close(p);
    return GK_ENOMEM;
  }
  h->dirty = 1;
  return 0;
}

void gk__peer_head_close(gk_net_peer *p) {
  gk_net_peer_head *h = &p->head;
  if (h->state != NULL && p->sim != NULL) p->sim->destroy(h->state);
  free(h->assumed);
  free(h->assumed_mask);
  free(h->last);
  free(h->work);
  free(h->buf);
  memset(h, 0, sizeof *h);
}

void gk__peer_head_confirmed(gk_net_peer *p, uint64_t before) {
  gk_net_peer_head *h = &p->head;
  if (h->assumed == NULL) return;
  size_t rb = rec_bytes(p);
  for (uint64_t s = before; s < p->inbuf.confirmed; s++) {
    gk_step_input in;
    if (gk_inbuf_get(&p->inbuf, s, &in) != 0) continue;
    memcpy(h->last, in.inputs, rb);
    if (!h->dirty && h->state != NULL && s == h->steps && s >= p->loop.steps &&
        h->version == p->loop.version) {
      head_step(p); /* a head not ahead follows the confirmed steps: no
                       restore needed */
      continue;
    }
    /* the head ran s after the confirmed run's base: it assumed it */
    if (h->dirty || h->state == NULL || s >= h->steps || s < p->loop.steps)
      continue;
    h->checked++;
    const uint8_t *a = h->assumed + (s % p->inbuf.window) * rb;
    if (memcmp(a, in.inputs, rb) != 0 ||
        h->assumed_mask[s % p->inbuf.window] !=
            (in.active_mask | (uint64_t)in.flags << 32)) {
      h->mispredicted++;
      h->dirty = 1;
    }
  }
}

/* The step the head aims for: the step whose time it is (the next sample
 * less the delay), within lead steps of the confirmed run. */
static uint64_t head_target(const gk_net_peer *p) {
  uint64_t next = gk_net_sched_next(&p->sched);
  uint64_t t = next > p->delay ? next - p->delay : 0;
  uint64_t c = p->loop.steps, most = c + p->match.lead;
  if (t > most) t = most;
  return t < c ? c : t;
}

void gk__peer_head_update(gk_net_peer *p) {
  if (!predicting(p)) return;
  gk_net_peer_head *h = &p->head;
  int restored = 0;
  uint64_t before = h->steps;
  if (h->dirty || h->state == NULL || h->steps < p->loop.steps ||
      h->version != p->loop.version) {
    int was = h->dirty && h->state != NULL;
    if (restore(p) != 0) return;
    if (was) h->rollbacks++;
    restored = 1;
  }
  uint64_t target = head_target(p);
  uint32_t cap =
      p->opts.predict_cap ? p->opts.predict_cap : (uint32_t)p->match.lead + 2u;
  uint64_t ran = 0, resim = 0;
  while (h->steps < target && ran < cap) {
    if (restored && h->steps < before) resim++;
    head_step(p);
    ran++;
  }
  if (h->steps < target) h->capped++;
  if (ran == 0 && !restored) return;
  h->resim_steps += resim;
  h->resim_hist[resim < GK_NET_PEER_RESIM_MAX ? resim
                                              : GK_NET_PEER_RESIM_MAX]++;
  if (p->cb.head != NULL) p->cb.head(p->cb.ctx, p, restored);
}

void gk__peer_pace(gk_net_peer *p) {
  if (!predicting(p)) return;
  uint64_t ahead = gk_net_sched_next(&p->sched) - p->inbuf.confirmed;
  uint64_t bound = (uint64_t)p->delay + p->match.lead;
  if (ahead + 2u > bound) p->t0 += p->step_ns * (ahead + 2u - bound) / 10u;
}

int gk_net_peer_view_predicted(const gk_net_peer *p) {
  /* steps a message confirmed since the last timeout call can pass a head
     its cap held back; the confirmed run is then the newer state */
  const gk_net_peer_head *h = &p->head;
  return p->opts.predict && h->state != NULL && h->steps >= p->loop.steps &&
         h->version == p->loop.version;
}

const void *gk_net_peer_view_state(const gk_net_peer *p) {
  if (gk_net_peer_view_predicted(p)) return p->head.state;
  return p->started && !p->opts.no_sim ? gk_loop_state(&p->loop) : NULL;
}

uint64_t gk_net_peer_view_steps(const gk_net_peer *p) {
  return gk_net_peer_view_predicted(p) ? p->head.steps : p->loop.steps;
}

uint32_t gk_net_peer_resim_pct(const gk_net_peer *p, uint32_t pct) {
  uint64_t n = 0;
  for (uint32_t i = 0; i <= GK_NET_PEER_RESIM_MAX; i++)
    n += p->head.resim_hist[i];
  if (n == 0) return 0;
  if (pct > 100) pct = 100;
  uint64_t rank = ((uint64_t)pct * n + 99u) / 100u, seen = 0;
  if (rank < 1) rank = 1;
  for (uint32_t i = 0; i <= GK_NET_PEER_RESIM_MAX; i++) {
    seen += p->head.resim_hist[i];
    if (seen >= rank) return i;
  }
  return GK_NET_PEER_RESIM_MAX;
}
