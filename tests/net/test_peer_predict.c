/* test_peer_predict.c: the peer engine's predicted head, sans-I/O, time
 * driven by hand (as test_peer_engine.c): a hand host confirms steps a
 * fixed number of step periods after the peers sample them, with slot 0's
 * records taken from the INPUTs the peer under test sent and slot 1's from
 * a script.
 *
 *   - the sync test: a peer that predicts every remote record wrong (so
 *     every confirmed step it predicted rolls back) ends with the same
 *     confirmed chain, step by step, as a peer that does not predict; and
 *     after every restore the head equals a fresh run, from step 0, of the
 *     confirmed inputs then the inputs the documented rule gives; with
 *     tally (restores through the canonical bytes) and with survivors
 *     (restores through its copy_state hook, gk_sim ABI 4);
 *   - presses: the source is read once per step however often the head
 *     rolls back, and each record reaches exactly one confirmed step;
 *   - a stall: the head never runs more than the window past the
 *     confirmed run, nor more than the cap in one call. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_survivors.h"
#include "gk_net_peer.h"
#include "gk_state.h"
#include "tally.h"

#define T0 UINT64_C(1000000000000)
#define SN UINT64_C(2000000) /* 1/500 s */
#define AT(k) (T0 + (uint64_t)(k)*SN)
#define NSTEPS 400
#define ISZ 4
#define DELAY 1
#define LEAD 8

/* A source whose record for step s is {s, s >> 8, 0xa5, 1}; it counts the
 * reads of every step. */
typedef struct src {
  gk_input base;
  uint32_t reads[NSTEPS + 64];
  uint8_t rec[ISZ];
} src;

typedef struct pf {
  gk_net_peer p;
  src s;
  uint64_t hash[NSTEPS + 64];
  uint64_t nsteps;
  uint8_t sent[NSTEPS + 64][ISZ]; /* slot 0's records from its INPUTs */
  uint8_t have[NSTEPS + 64];
  uint64_t heads, restores_seen, checks;
  uint64_t max_ahead; /* head steps past the confirmed run, at most */
} pf;

static pf *P, *Q;
static uint8_t remote[NSTEPS + 64][ISZ];       /* slot 1's scripted records */
static uint8_t host_rec[NSTEPS + 64][2 * ISZ]; /* what the host confirmed */
static uint64_t host_confirmed;
static uint64_t flag_step = UINT64_MAX; /* the host's flags at this step */
static uint32_t flag_val;

static int src_read(gk_input *in, uint64_t step, gk_step_input *out) {
  src *s = (src *)in;
  if (step < NSTEPS + 64) s->reads[step]++;
  s->rec[0] = (uint8_t)step;
  s->rec[1] = (uint8_t)(step >> 8);
  s->rec[2] = 0xa5;
  s->rec[3] = 1;
  *out = (gk_step_input){step, 1, 0, 1, s->rec};
  return 0;
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int reliable) {
  (void)reliable;
  pf *f = ctx;
  gk_wire_msg m;
  cr_assert_eq(gk_wire_decode(bytes, len, &m), 0);
  if (m.type != GK_MSG_INPUT) return 0;
  for (uint32_t i = 0; i < m.u.input.count; i++) {
    uint64_t s = m.u.input.first + i;
    if (s >= NSTEPS + 64) continue;
    const uint8_t *r = m.u.input.records + (size_t)i * ISZ;
    if (f->have[s])
      cr_assert_eq(memcmp(f->sent[s], r, ISZ), 0,
                   "step %llu sent twice, "
                   "differently",
                   (unsigned long long)s);
    memcpy(f->sent[s], r, ISZ);
    f->have[s] = 1;
  }
  return 0;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  (void)p;
  pf *f = ctx;
  cr_assert_eq(in->step, f->nsteps);
  f->hash[f->nsteps++] = hash;
}

/* The canonical bytes of a state into a malloc'd buffer. */
static uint8_t *state_bytes(const gk_sim *sim, const void *st, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(st, &b.w);
  return gk_buf_writer_take(&b, len);
}

/* After a restore: a fresh run of the confirmed inputs below the peer's
 * confirmed run, then for each later step the rule's input (slot 0: its
 * sent record, neutral before the first sample; slot 1: the last
 * confirmed slot 1 record, inverted), gives the head's bytes. */
static void check_head(gk_net_peer *p) {
  gk_loop l;
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_loop_init(&l, NULL), 0);
  cr_assert_eq(
      gk_loop_start(&l, p->sim, p->sim_cfg, p->match.seed, 2, err, sizeof err),
      0);
  uint64_t c = p->inbuf.confirmed;
  for (uint64_t s = 0; s < p->head.steps; s++) {
    uint8_t recs[2 * ISZ];
    if (s < c) {
      memcpy(recs, host_rec[s], sizeof recs);
    } else {
      if (s >= DELAY)
        memcpy(recs, P->sent[s], ISZ);
      else
        memset(recs, 0, ISZ);
      for (int i = 0; i < ISZ; i++)
        recs[ISZ + i] = c > 0 ? (uint8_t)~host_rec[c - 1][ISZ + i] : 0xff;
    }
    gk_const_input ci;
    cr_assert_eq(gk_const_input_init(&ci, recs, 2, ISZ), 0);
    ci.active_mask = 3;
    gk_loop_frame(&l, &ci.base, gk_budget_steps(1), 0);
  }
  size_t la, lb;
  uint8_t *a = state_bytes(p->sim, p->head.state, &la);
  uint8_t *b = state_bytes(p->sim, gk_loop_state(&l), &lb);
  cr_assert_eq(la, lb);
  cr_assert_eq(memcmp(a, b, la), 0,
               "the head after %llu steps (confirmed %llu) is not a fresh "
               "run's state",
               (unsigned long long)p->head.steps, (unsigned long long)c);
  free(a);
  free(b);
  gk_loop_close(&l);
}

static void on_head(void *ctx, gk_net_peer *p, int restored) {
  pf *f = ctx;
  f->heads++;
  cr_assert_leq(p->head.steps, p->loop.steps + LEAD,
                "the head ran %llu steps past the confirmed run",
                (unsigned long long)(p->head.steps - p->loop.steps));
  if (p->head.steps - p->loop.steps > f->max_ahead)
    f->max_ahead = p->head.steps - p->loop.steps;
  if (restored) {
    f->restores_seen++;
    if (f == P && p->opts.predict_wrong) {
      check_head(p);
      f->checks++;
    }
  }
}

static const gk_sim *const genres[] = {&tally_sim, &gk_survivors_sim};
static const char *genre = "tally"; /* the match's genre (ISZ bytes) */

static void open_pf(pf *f, int predict, int wrong, uint32_t cap) {
  memset(f, 0, sizeof *f);
  f->s.base.read = src_read;
  gk_net_peer_options o = {.source = &f->s.base,
                           .genres = {.sims = genres, .count = 2},
                           .window = 64,
                           .predict = predict,
                           .predict_wrong = wrong,
                           .predict_cap = cap};
  gk_net_peer_callbacks cb = {
      .ctx = f, .send = on_send, .step = on_step, .head = on_head};
  cr_assert_eq(gk_net_peer_init(&f->p, &o, &cb), 0);
  gk_wire_match_start ms;
  memset(&ms, 0, sizeof ms);
  ms.seed = 11;
  ms.players = 2;
  ms.slot = 0;
  ms.active_mask = 3;
  ms.input_delay = DELAY;
  ms.lead = LEAD;
  ms.step_seconds = (gk_ratio){1, 500};
  strcpy(ms.genre, genre);
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_net_peer_start(&f->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
}

static void setup(void) {
  P = calloc(1, sizeof *P);
  Q = calloc(1, sizeof *Q);
  cr_assert(P && Q);
  host_confirmed = 0;
  flag_step = UINT64_MAX;
  for (uint32_t s = 0; s < NSTEPS + 64; s++) {
    uint32_t x = s * 2654435761u;
    remote[s][0] = (uint8_t)(x >> 24);
    remote[s][1] = (uint8_t)(x >> 16);
    remote[s][2] = (uint8_t)(s % 3);
    remote[s][3] = 0;
  }
}

static void teardown(void) {
  gk_net_peer_free(&P->p);
  gk_net_peer_free(&Q->p);
  free(P);
  free(Q);
}

TestSuite(peer_predict, .init = setup, .fini = teardown, .timeout = 60);

/* The host confirms every step up to `upto` whose slot 0 record P sent
 * (steps below DELAY neutral), to every peer given. */
static void host_confirm(uint64_t now, uint64_t upto, pf *const *to, int n) {
  static uint8_t steps[32 * GK_WIRE_STEP_BYTES(2, ISZ)];
  while (host_confirmed < upto) {
    uint64_t first = host_confirmed;
    uint32_t count = 0;
    while (count < 32 && host_confirmed < upto &&
           (host_confirmed < DELAY || P->have[host_confirmed])) {
      uint64_t s = host_confirmed;
      if (s < DELAY)
        memset(host_rec[s], 0, ISZ);
      else
        memcpy(host_rec[s], P->sent[s], ISZ);
      memcpy(host_rec[s] + ISZ, remote[s], ISZ);
      gk_wire_step_pack(steps + count * GK_WIRE_STEP_BYTES(2, ISZ), 3,
                        s == flag_step ? flag_val : 0, host_rec[s], 2, ISZ);
      count++;
      host_confirmed++;
    }
    if (count == 0) return;
    gk_wire_msg m;
    m.type = GK_MSG_CONFIRMED;
    m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                        .input_size = ISZ,
                                        .count = (uint8_t)count,
                                        .ack = first + count,
                                        .hash_ack = 0,
                                        .first = first,
                                        .steps = steps};
    uint8_t buf[GK_WIRE_MAX];
    size_t len;
    cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
    for (int i = 0; i < n; i++)
      cr_assert_eq(gk_net_peer_handle(&to[i]->p, now, buf, len), 0);
  }
}

/* Runs both peers to `k_end` deadlines, the host confirming `lag` periods
 * behind the deadlines (nothing from `stall_from` to `stall_to`). */
static void play(uint32_t k_end, uint32_t lag, uint32_t stall_from,
                 uint32_t stall_to) {
  pf *both[2] = {P, Q};
  for (uint32_t k = 0; k < k_end; k++) {
    for (int i = 0; i < 2; i++) gk_net_peer_handle_timeout(&both[i]->p, AT(k));
    if (k >= lag && !(k >= stall_from && k < stall_to))
      host_confirm(AT(k), k - lag + 1, both, 2);
  }
}

static void synctest(void) {
  open_pf(P, 1, 1, 0);
  open_pf(Q, 0, 0, 0);
  play(NSTEPS, 4, UINT32_MAX, 0);
  cr_assert_gt(P->nsteps, NSTEPS - 16);
  cr_assert_eq(P->nsteps, Q->nsteps);
  for (uint64_t s = 0; s < P->nsteps; s++)
    cr_assert_eq(P->hash[s], Q->hash[s],
                 "the confirmed chains part at step %llu",
                 (unsigned long long)s);
  for (uint64_t s = DELAY; s < P->nsteps; s++)
    cr_assert_eq(memcmp(P->sent[s], Q->sent[s], ISZ), 0);
  const gk_net_peer_head *h = &P->p.head;
  cr_assert_gt(h->checked, NSTEPS / 2);
  cr_assert_eq(h->mispredicted, h->checked,
               "%llu of %llu predicted steps were right",
               (unsigned long long)(h->checked - h->mispredicted),
               (unsigned long long)h->checked);
  cr_assert_gt(h->rollbacks, NSTEPS / 2);
  cr_assert_eq(P->checks, P->restores_seen);
  cr_assert_eq(Q->heads, 0, "a peer without prediction has no head");
  cr_assert_null(Q->p.head.state);
  /* the first restore makes the head through the canonical bytes; the
   * others copy into it when the genre has the hook */
  cr_assert_eq(h->copies, P->p.sim->copy_state ? h->restores - 1 : 0,
               "%llu copies of %llu restores", (unsigned long long)h->copies,
               (unsigned long long)h->restores);
}

Test(
    peer_predict,
    a_peer_mispredicting_every_step_keeps_the_confirmed_chain_of_a_peer_without) {
  synctest();
}

Test(peer_predict, the_same_with_a_genre_whose_hook_copies_the_head) {
  cr_assert_eq(GK_SV_INPUT_SIZE, ISZ);
  cr_assert_not_null(gk_survivors_sim.copy_state);
  genre = "survivors";
  synctest();
}

Test(peer_predict, a_head_near_its_bound_slows_by_a_tenth_per_step_over) {
  open_pf(P, 1, 0, 0);
  open_pf(Q, 0, 0, 0);
  /* nothing is confirmed: the samples climb to the bound D + W = 9 */
  uint64_t now = T0, gaps_p[16], gaps_q[16];
  for (int i = 0; i < 16; i++) {
    uint64_t dp = gk_net_peer_handle_timeout(&P->p, now);
    uint64_t dq = gk_net_peer_handle_timeout(&Q->p, now);
    gaps_p[i] = dp - now;
    gaps_q[i] = dq - now;
    now = dp > dq ? dp : dq;
  }
  /* after the k-th sample the next is for k + 2 (delay 1): within 2 of
   * the bound from the 7th on, a tenth longer per step over */
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(gaps_p[i], SN, "period %d", i);
    cr_assert_eq(gaps_q[i], SN, "period %d", i);
  }
  cr_assert_eq(gaps_p[6], SN + SN / 10, "1 over: a tenth longer");
  cr_assert_eq(gaps_p[7], SN + 2 * SN / 10, "2 over: two tenths");
  cr_assert_eq(gaps_q[6], SN, "without prediction: no slowing");
  cr_assert_gt(P->p.stats.waits, 0, "then it waits at the bound");
}

Test(peer_predict,
     a_press_is_sampled_once_and_confirmed_once_across_rollbacks) {
  open_pf(P, 1, 1, 0);
  open_pf(Q, 0, 0, 0);
  play(200, 5, UINT32_MAX, 0);
  cr_assert_gt(P->p.head.rollbacks, 50);
  for (uint64_t s = 0; s < 200; s++)
    cr_assert_leq(P->s.reads[s], 1, "step %llu was read %u times",
                  (unsigned long long)s, P->s.reads[s]);
  for (uint64_t s = DELAY; s < P->nsteps; s++) {
    cr_assert_eq(P->s.reads[s], 1, "step %llu was never read",
                 (unsigned long long)s);
    cr_assert_eq(host_rec[s][0], (uint8_t)s);
    cr_assert_eq(host_rec[s][2], 0xa5);
  }
}

Test(peer_predict, a_stall_stops_the_head_at_the_window_and_the_cap_holds) {
  open_pf(P, 1, 0, 3);
  open_pf(Q, 0, 0, 0);
  /* 5 s of stall at 500 Hz: 2500 deadlines without a confirmed step */
  play(2700, 4, 60, 2560);
  const gk_net_peer_head *h = &P->p.head;
  cr_assert_eq(P->nsteps, Q->nsteps);
  for (uint64_t s = 0; s < P->nsteps; s++) cr_assert_eq(P->hash[s], Q->hash[s]);
  for (uint32_t n = 4; n <= GK_NET_PEER_RESIM_MAX; n++)
    cr_assert_eq(h->resim_hist[n], 0, "%u steps re-simulated in one call", n);
  cr_assert_gt(h->capped, 0, "the cap of 3 never stopped the head");
  cr_assert_eq(P->max_ahead, LEAD,
               "the stalled head stopped %llu steps "
               "past the confirmed run, not the window's %d",
               (unsigned long long)P->max_ahead, LEAD);
}

Test(peer_predict, a_delay_change_rolls_the_head_back_once_and_both_switch) {
  open_pf(P, 1, 0, 0);
  open_pf(Q, 0, 0, 0);
  for (uint32_t s = 0; s < NSTEPS + 64; s++) { /* slot 1 never changes */
    remote[s][0] = 5;
    remote[s][1] = remote[s][2] = remote[s][3] = 0;
  }
  /* step 40 announces delay 2 (from 1): both switch at 40 + 1 + 8 = 49,
   * step 49 held neutral, as the host holds it */
  flag_step = 40;
  flag_val = GK_STEP_DELAY | 2u << GK_STEP_DELAY_SHIFT;
  play(200, 4, UINT32_MAX, 0);
  cr_assert_eq(P->nsteps, Q->nsteps);
  for (uint64_t s = 0; s < P->nsteps; s++) cr_assert_eq(P->hash[s], Q->hash[s]);
  cr_assert_eq(P->p.ndelays, 2);
  cr_assert_eq(P->p.delays[1].step, 49);
  cr_assert_eq(Q->p.delays[1].step, 49);
  const gk_net_peer_head *h = &P->p.head;
  /* step 0 (slot 1's first record) and step 40 (its flags) only */
  cr_assert_eq(h->mispredicted, 2, "%llu of %llu predicted steps missed",
               (unsigned long long)h->mispredicted,
               (unsigned long long)h->checked);
  cr_assert_gt(h->checked, 100);
}

/* Steps confirmed by a message (between two timeout calls) can pass a
 * head held back by its cap: the view is then the confirmed run's, never
 * a state older than it. */
Test(peer_predict, a_head_behind_the_confirmed_run_is_not_the_view) {
  open_pf(P, 1, 0, 1); /* one head step per timeout call */
  open_pf(Q, 0, 0, 0);
  pf *one[1] = {P};
  for (uint32_t k = 0; k < 12; k++) gk_net_peer_handle_timeout(&P->p, AT(k));
  host_confirm(AT(11), 12, one, 1);
  gk_net_peer *p = &P->p;
  cr_assert_lt(p->head.steps, p->loop.steps, "head %llu, confirmed %llu",
               (unsigned long long)p->head.steps,
               (unsigned long long)p->loop.steps);
  cr_assert_eq(gk_net_peer_view_steps(p), p->loop.steps);
  cr_assert_eq(gk_net_peer_view_state(p), gk_loop_state(&p->loop));
  gk_net_peer_handle_timeout(p, AT(12));
  cr_assert_geq(p->head.steps, p->loop.steps, "restored at the next call");
  cr_assert_eq(gk_net_peer_view_state(p), p->head.state);
}
