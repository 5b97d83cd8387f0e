/* test_peer_predict_hold.c: ADR-0003's held repeat under prediction. A
 * 2-player push-puzzle match on a corridor level, slot 0 predicting; its
 * source holds RIGHT for 60 steps (the press in the first of them only,
 * ADR-0004); slot 1 leans on a wall with LEFT every other step, so every
 * step the head predicted from slot 1's last record is wrong and rolls
 * back. A hand host confirms each step 5 periods after it was sampled.
 * The pusher must move on the press step, 12 steps later, then every 6,
 * in the head after every call that moved it as in the confirmed run. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_config_kv.h"
#include "gk_err.h"
#include "gk_net_peer.h"
#include "gk_push_puzzle.h"

#define T0 UINT64_C(1000000000000)
#define SN UINT64_C(16666667)
#define AT(k) (T0 + (uint64_t)(k)*SN)
#define PRESS 20
#define HELD 60
#define LAG 5
#define STEPS 140

static const char *const level = "##############\n"
                                 "#@          .#\n"
                                 "#@  $        #\n"
                                 "##############\n";

typedef struct hold_src {
  gk_input base;
  uint8_t rec[GK_PP_INPUT_SIZE];
  uint32_t reads[STEPS + 16];
} hold_src;

static hold_src src;
static gk_net_peer peer;
static uint8_t sent[STEPS + 16][GK_PP_INPUT_SIZE];
static uint8_t have[STEPS + 16];
static uint64_t confirmed;
static uint64_t head_checks;

static int src_read(gk_input *in, uint64_t step, gk_step_input *out) {
  hold_src *h = (hold_src *)in;
  if (step < STEPS + 16) h->reads[step]++;
  int held = step >= PRESS && step < PRESS + HELD;
  h->rec[0] = held ? GK_PP_RIGHT : 0;
  h->rec[1] = step == PRESS ? GK_PP_RIGHT : 0;
  *out = (gk_step_input){step, 1, 0, 1, h->rec};
  return 0;
}

/* Moves the pusher makes by the end of step s (after s + 1 steps). */
static uint32_t moves_after(uint64_t s) {
  uint32_t n = 0;
  for (uint64_t t = PRESS; t <= s && t < PRESS + HELD; t++)
    n += t == PRESS ||
         (t >= PRESS + GK_PP_REPEAT_FIRST &&
          (t - PRESS - GK_PP_REPEAT_FIRST) % GK_PP_REPEAT_NEXT == 0);
  return n;
}

static uint32_t moves_seen;
static void field(gk_writer *w, gk_field_kind kind, const char *name,
                  uint64_t value, const uint8_t *bytes, size_t len) {
  (void)w;
  (void)kind;
  (void)bytes;
  (void)len;
  if (name != NULL && strcmp(name, "moves") == 0) moves_seen = (uint32_t)value;
}

static uint32_t moves_of(const void *state) {
  gk_writer w = {.field = field};
  gk_push_puzzle_sim.write_sample(state, &w);
  return moves_seen;
}

static void on_head(void *ctx, gk_net_peer *p, int restored) {
  (void)ctx;
  (void)restored;
  uint64_t steps = p->head.steps;
  if (steps == 0) return;
  cr_assert_eq(moves_of(p->head.state), moves_after(steps - 1),
               "the head after %llu steps shows %u moves, not %u",
               (unsigned long long)steps, moves_seen, moves_after(steps - 1));
  head_checks++;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  (void)ctx;
  (void)hash;
  cr_assert_eq(moves_of(gk_loop_state(&p->loop)), moves_after(in->step),
               "the confirmed run after step %llu",
               (unsigned long long)in->step);
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int rel) {
  (void)ctx;
  (void)rel;
  gk_wire_msg m;
  cr_assert_eq(gk_wire_decode(bytes, len, &m), 0);
  if (m.type != GK_MSG_INPUT) return 0;
  for (uint32_t i = 0; i < m.u.input.count; i++) {
    uint64_t s = m.u.input.first + i;
    if (s >= STEPS + 16) continue;
    memcpy(sent[s], m.u.input.records + (size_t)i * GK_PP_INPUT_SIZE,
           GK_PP_INPUT_SIZE);
    have[s] = 1;
  }
  return 0;
}

static int level_hook(void *ctx, const gk_sim *sim, void *cfg, const char *text,
                      size_t len, char *err, size_t errlen) {
  (void)ctx;
  (void)text;
  (void)len;
  return gk_config_apply_kv_text(sim, cfg, "levels", level, "options", err,
                                 errlen);
}

static void confirm(uint64_t now, uint64_t upto) {
  static uint8_t steps[32 * GK_WIRE_STEP_BYTES(2, GK_PP_INPUT_SIZE)];
  while (confirmed < upto) {
    uint64_t first = confirmed;
    uint32_t n = 0;
    while (n < 32 && confirmed < upto && (confirmed < 1 || have[confirmed])) {
      uint64_t s = confirmed++;
      uint8_t recs[2 * GK_PP_INPUT_SIZE] = {0};
      if (s >= 1) memcpy(recs, sent[s], GK_PP_INPUT_SIZE);
      recs[GK_PP_INPUT_SIZE] = s % 2 ? GK_PP_LEFT : 0; /* into the wall */
      gk_wire_step_pack(steps + n * GK_WIRE_STEP_BYTES(2, GK_PP_INPUT_SIZE), 3,
                        0, recs, 2, GK_PP_INPUT_SIZE);
      n++;
    }
    if (n == 0) return;
    gk_wire_msg m;
    m.type = GK_MSG_CONFIRMED;
    m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                        .input_size = GK_PP_INPUT_SIZE,
                                        .count = (uint8_t)n,
                                        .ack = first + n,
                                        .first = first,
                                        .steps = steps};
    uint8_t buf[GK_WIRE_MAX];
    size_t len;
    cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
    cr_assert_eq(gk_net_peer_handle(&peer, now, buf, len), 0);
  }
}

Test(peer_predict_hold,
     a_held_key_repeats_on_the_press_plus_12_then_every_6_in_the_head) {
  static const gk_sim *const genres[] = {&gk_push_puzzle_sim};
  src.base.read = src_read;
  gk_net_peer_options o = {.source = &src.base,
                           .genres = {.sims = genres, .count = 1},
                           .apply_options = level_hook,
                           .window = 64,
                           .predict = 1};
  gk_net_peer_callbacks cb = {
      .send = on_send, .step = on_step, .head = on_head};
  cr_assert_eq(gk_net_peer_init(&peer, &o, &cb), 0);
  gk_wire_match_start ms;
  memset(&ms, 0, sizeof ms);
  ms.seed = 3;
  ms.players = 2;
  ms.active_mask = 3;
  ms.input_delay = 1;
  ms.lead = 8;
  ms.step_seconds = (gk_ratio){1, 60};
  strcpy(ms.genre, "push-puzzle");
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_net_peer_start(&peer, T0, &ms, err, sizeof err), 0, "%s",
               err);
  for (uint64_t k = 0; k < STEPS; k++) {
    gk_net_peer_handle_timeout(&peer, AT(k));
    if (k >= LAG) confirm(AT(k), k - LAG + 1);
  }
  cr_assert_gt(peer.loop.steps, PRESS + HELD + 10);
  cr_assert_eq(moves_of(gk_loop_state(&peer.loop)), 9,
               "moves: 20, 32, 38, "
               "... 74");
  cr_assert_gt(peer.head.rollbacks, 50, "slot 1's records changed");
  cr_assert_gt(head_checks, 100);
  for (uint64_t s = 1; s < STEPS - 2; s++)
    cr_assert_eq(src.reads[s], 1, "step %llu read %u times",
                 (unsigned long long)s, src.reads[s]);
  gk_net_peer_free(&peer);
}
