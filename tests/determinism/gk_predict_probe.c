/* gk_predict_probe.c: the prediction sync test over the portable lockstep
 * library alone (the peer engine, libc + gk_core), so the determinism
 * matrix runs it natively and in WebAssembly under node
 * (scripts/determinism.sh), beside tests/net/test_peer_predict.c.
 *
 * A 2-player survivors match; two peers play slot 0 with the genre's bot
 * (the same seed, so the same records): P predicts every remote record
 * wrong (gk_net_peer_options.predict_wrong), Q does not predict. A hand
 * host confirms each step LAG step periods after P sampled it, with slot
 * 1's records from its bot, and sends both peers the same CONFIRMED.
 * Checked as it runs:
 *   - after every restore, P's head has the canonical bytes of a fresh
 *     run of the confirmed inputs and then the rule's (P's own records,
 *     slot 1's last confirmed record inverted);
 *   - P's and Q's confirmed runs have the same hash after every step.
 * Prints one line (steps, rollbacks, checks, the confirmed chain) that
 * must be byte-identical on every variant; exits 1 with a sentence on
 * stderr if a check fails.
 *
 * usage: gk-predict-probe [--steps N]   (default 600)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer.h"
#include "gk_state.h"
#include "gk_survivors.h"
#include "gk_testkit_probe.h"

#define STEPS_MAX 4096
#define LAG 5
#define DELAY 1
#define LEAD 8
#define SN UINT64_C(16666667)
#define AT(k) (UINT64_C(1000000000) + (uint64_t)(k)*SN)

static const gk_sim *sim = &gk_survivors_sim;
static uint32_t isz;
static uint8_t remote[STEPS_MAX][GK_INPUT_SIZE_MAX];
static uint8_t host[STEPS_MAX][2 * GK_INPUT_SIZE_MAX];
static uint64_t confirmed;
static int failed;

typedef struct pf {
  gk_net_peer p;
  uint8_t sent[STEPS_MAX][GK_INPUT_SIZE_MAX];
  uint8_t have[STEPS_MAX];
  uint64_t hash[STEPS_MAX];
  uint64_t nsteps, checks, restores;
} pf;

static pf P, Q;

static void fail(const char *what, uint64_t a, uint64_t b) {
  if (!failed)
    fprintf(stderr, "gk-predict-probe: %s (%llu, %llu)\n", what,
            (unsigned long long)a, (unsigned long long)b);
  failed = 1;
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int rel) {
  (void)rel;
  pf *f = ctx;
  gk_wire_msg m;
  if (gk_wire_decode(bytes, len, &m) != 0) fail("undecodable send", len, 0);
  if (m.type != GK_MSG_INPUT) return 0;
  for (uint32_t i = 0; i < m.u.input.count; i++) {
    uint64_t s = m.u.input.first + i;
    if (s >= STEPS_MAX) continue;
    memcpy(f->sent[s], m.u.input.records + (size_t)i * isz, isz);
    f->have[s] = 1;
  }
  return 0;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  (void)p;
  pf *f = ctx;
  if (in->step != f->nsteps || f->nsteps >= STEPS_MAX)
    fail("a confirmed step out of order", in->step, f->nsteps);
  else
    f->hash[f->nsteps++] = hash;
}

static uint8_t *bytes_of(const void *st, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(st, &b.w);
  return gk_buf_writer_take(&b, len);
}

/* The head against a fresh run of what it should have taken. */
static void check_head(gk_net_peer *p) {
  gk_loop l;
  char err[GK_ERRMSG_MAX];
  if (gk_loop_init(&l, NULL) != 0 ||
      gk_loop_start(&l, sim, p->sim_cfg, p->match.seed, 2, err, sizeof err)) {
    fail("fresh run", 0, 0);
    return;
  }
  uint64_t c = p->inbuf.confirmed;
  for (uint64_t s = 0; s < p->head.steps; s++) {
    uint8_t recs[2 * GK_INPUT_SIZE_MAX];
    if (s < c) {
      memcpy(recs, host[s], 2 * isz);
    } else {
      if (s >= DELAY)
        memcpy(recs, P.sent[s], isz);
      else
        memset(recs, 0, isz);
      for (uint32_t i = 0; i < isz; i++)
        recs[isz + i] = (uint8_t) ~(c > 0 ? host[c - 1][isz + i] : 0);
    }
    gk_const_input ci;
    gk_const_input_init(&ci, recs, 2, isz);
    ci.active_mask = 3;
    gk_loop_frame(&l, &ci.base, gk_budget_steps(1), 0);
  }
  size_t la = 0, lb = 0;
  uint8_t *a = bytes_of(p->head.state, &la);
  uint8_t *b = bytes_of(gk_loop_state(&l), &lb);
  if (a == NULL || b == NULL || la != lb || memcmp(a, b, la) != 0)
    fail("the head is not a fresh run's state at (steps, confirmed)",
         p->head.steps, c);
  free(a);
  free(b);
  gk_loop_close(&l);
  P.checks++;
}

static void on_head(void *ctx, gk_net_peer *p, int restored) {
  pf *f = ctx;
  if (p->head.steps > p->loop.steps + LEAD)
    fail("the head ran past the window", p->head.steps, p->loop.steps);
  if (restored && f == &P) {
    f->restores++;
    check_head(p);
  }
}

static void open_pf(pf *f, int predict) {
  memset(f, 0, sizeof *f);
  static const gk_sim *const genres[1] = {&gk_survivors_sim};
  gk_net_peer_options o = {.bot_seed = 77,
                           .genres = {.sims = genres, .count = 1},
                           .window = 64,
                           .predict = predict,
                           .predict_wrong = predict};
  gk_net_peer_callbacks cb = {
      .ctx = f, .send = on_send, .step = on_step, .head = on_head};
  gk_wire_match_start ms;
  memset(&ms, 0, sizeof ms);
  ms.seed = 9;
  ms.players = 2;
  ms.active_mask = 3;
  ms.input_delay = DELAY;
  ms.lead = LEAD;
  ms.step_seconds = (gk_ratio){1, 60};
  strcpy(ms.genre, "survivors");
  char err[GK_ERRMSG_MAX] = "";
  if (gk_net_peer_init(&f->p, &o, &cb) != 0 ||
      gk_net_peer_start(&f->p, AT(0), &ms, err, sizeof err) != 0)
    fail("a peer did not start", 0, 0);
}

/* Confirms every step below upto that P sent, to both peers. */
static void confirm(uint64_t now, uint64_t upto) {
  static uint8_t steps[32 * GK_WIRE_STEP_BYTES(2, GK_INPUT_SIZE_MAX)];
  size_t sb = GK_WIRE_STEP_BYTES(2, isz);
  while (confirmed < upto) {
    uint64_t first = confirmed;
    uint32_t n = 0;
    while (n < 32 && confirmed < upto &&
           (confirmed < DELAY || P.have[confirmed])) {
      uint64_t s = confirmed++;
      if (s < DELAY)
        memset(host[s], 0, isz);
      else
        memcpy(host[s], P.sent[s], isz);
      memcpy(host[s] + isz, remote[s], isz);
      gk_wire_step_pack(steps + n * sb, 3, 0, host[s], 2, isz);
      n++;
    }
    if (n == 0) return;
    gk_wire_msg m;
    m.type = GK_MSG_CONFIRMED;
    m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                        .input_size = (uint8_t)isz,
                                        .count = (uint8_t)n,
                                        .ack = first + n,
                                        .first = first,
                                        .steps = steps};
    uint8_t buf[GK_WIRE_MAX];
    size_t len = 0;
    if (gk_wire_encode(&m, buf, sizeof buf, &len) != 0 ||
        gk_net_peer_handle(&P.p, now, buf, len) != 0 ||
        gk_net_peer_handle(&Q.p, now, buf, len) != 0)
      fail("CONFIRMED refused", first, n);
  }
}

int main(int argc, char **argv) {
  uint64_t steps = 600;
  if (argc == 3 && strcmp(argv[1], "--steps") == 0)
    steps = strtoull(argv[2], NULL, 10);
  if (steps < 50 || steps > STEPS_MAX - 64) {
    fprintf(stderr, "usage: gk-predict-probe [--steps 50..%d]\n",
            STEPS_MAX - 64);
    return 2;
  }
  isz = sim->input_size;
  gk_bot_input bots;
  gk_sv_config cfg;
  sim->config_default(&cfg);
  gk_bot_input_init(&bots, sim, &cfg, 5, 2);
  for (uint64_t s = DELAY; s < STEPS_MAX; s++) {
    gk_step_input in;
    bots.base.read(&bots.base, s, &in);
    memcpy(remote[s], in.inputs + isz, isz);
  }
  open_pf(&P, 1);
  open_pf(&Q, 0);
  for (uint64_t k = 0; k < steps && !failed; k++) {
    gk_net_peer_handle_timeout(&P.p, AT(k));
    gk_net_peer_handle_timeout(&Q.p, AT(k));
    if (k >= LAG) confirm(AT(k), k - LAG + 1);
  }
  gk_testkit_chain chain = {0};
  for (uint64_t s = 0; s < P.nsteps && !failed; s++) {
    if (s >= Q.nsteps || P.hash[s] != Q.hash[s])
      fail("the confirmed chains part at (step, steps)", s, Q.nsteps);
    gk_testkit_chain_add(&chain, P.hash[s]);
  }
  if (P.nsteps != Q.nsteps || P.nsteps + LAG + 8 < steps)
    fail("confirmed steps (P, Q)", P.nsteps, Q.nsteps);
  const gk_net_peer_head *h = &P.p.head;
  if (h->checked == 0 || h->mispredicted != h->checked ||
      P.checks != P.restores || h->rollbacks < steps / 2)
    fail("not every predicted step rolled back (checked, mispredicted)",
         h->checked, h->mispredicted);
  printf("predict synctest %s v%u players=2 steps=%llu rollbacks=%llu "
         "checks=%llu final=%016llx chain=%016llx\n",
         sim->name, sim->version, (unsigned long long)P.nsteps,
         (unsigned long long)h->rollbacks, (unsigned long long)P.checks,
         (unsigned long long)chain.final_hash,
         (unsigned long long)chain.digest);
  gk_net_peer_free(&P.p);
  gk_net_peer_free(&Q.p);
  return failed;
}
