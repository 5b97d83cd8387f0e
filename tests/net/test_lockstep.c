/* test_lockstep.c: a host and 2..4 peers in one process over ENet on
 * 127.0.0.1. Every engine's hash must agree at every step; faults, a
 * desync and a stall are made on purpose. Built twice: over the tests'
 * tiny genre (tally) and, with -DLOCKSTEP_SURVIVORS, over survivors with
 * its built-in bots. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_testkit.h"

#ifdef LOCKSTEP_SURVIVORS
#include "gk_survivors.h"
#define GENRE gk_survivors_sim
#define SUITE lockstep_survivors
/* Bots that cannot die, so the host decides when the match ends. */
#define CONFIG_JSON "{\"player_health\": 1000000}"
#else
#include "tally.h"
#define GENRE tally_sim
#define SUITE lockstep_tally
#define CONFIG_JSON "{\"start\": 5}"
#endif

static gk_testkit h;

static void fini(void) {
  gk_testkit_close(&h);
}

TestSuite(SUITE, .fini = fini, .timeout = 110);

static gk_testkit_options base_opts(uint32_t peers, uint64_t steps) {
  gk_testkit_options o;
  gk_testkit_options_init(&o, &GENRE, CONFIG_JSON, peers, steps);
  return o;
}

/* Every listed peer ran every step the host ran, in order, with the same
 * hash after each. */
static void expect_agreement(uint32_t skip_peer) {
  uint64_t steps = h.session.loop.steps;
  cr_assert_gt(steps, 0);
  cr_assert_eq(h.session.end_step + 1, steps, "the host ran past its end");
  /* The bots played: most steps carry input, and the state moves. */
  cr_assert_gt(h.input_steps, steps / 2);
  uint64_t moved = 0;
  for (uint64_t s = 1; s < steps; s++)
    moved += h.host_hashes[s] != h.host_hashes[s - 1];
  cr_assert_gt(moved, steps / 2);
  char why[256];
  cr_assert_eq(gk_testkit_agree(&h, skip_peer, why, sizeof why), 0, "%s", why);
}

Test(SUITE, four_peers_agree_with_the_host_at_every_step) {
  gk_testkit_options o = base_opts(4, 3600);
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  cr_assert_geq(h.session.loop.steps, 3600);
  expect_agreement(GK_TESTKIT_ALL);
  cr_assert_eq(h.session.stats.desyncs, 0);
  cr_assert_eq(h.ndesyncs, 0);
  /* Every step's hash from every peer was compared, bar the last few. */
  cr_assert_geq(h.session.stats.hashes_compared, 4 * 3500);
  cr_assert_eq(h.session.stats.drop_malformed, 0);
  cr_assert_eq(h.session.stats.drop_slot + h.session.stats.drop_perm, 0);
  cr_assert_eq(h.session.stats.drop_ahead + h.session.stats.drop_send, 0);
  cr_assert_eq(h.host_end_reason, GK_WIRE_END_HOST);
}

Test(SUITE, three_peers_agree_under_loss_latency_jitter_and_dups) {
  gk_testkit_options o = base_opts(3, 3600);
  o.faults = 1;
  o.up = (gk_net_fault_dir){
      .loss_ppm = 50000, .dup_ppm = 10000, .latency_ms = 30, .jitter_ms = 10};
  o.down = o.up;
#ifdef LOCKSTEP_SURVIVORS
  o.shared_fault = 1; /* host-wide faults; tally uses one relay per peer */
#endif
  o.input_delay = 3;
  o.lead = 40; /* a 60 ms round trip is ~30 steps of 2 ms */
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  cr_assert_geq(h.session.loop.steps, 3600);
  expect_agreement(GK_TESTKIT_ALL);
  cr_assert_eq(h.session.stats.desyncs, 0);
  uint64_t lost = 0, dup = 0;
  for (uint32_t i = 0; i < 3; i++) {
    lost += h.p[i].fault.stats.lost;
    dup += h.p[i].fault.stats.duplicated;
  }
  lost += h.shared.stats.lost;
  dup += h.shared.stats.duplicated;
  cr_assert_gt(lost, 100, "the relays lost only %llu datagrams",
               (unsigned long long)lost);
  cr_assert_gt(dup, 10);
  /* Redundancy, not resends, carried the inputs through. */
  cr_assert_gt(h.session.stats.inputs_dup + h.session.stats.inputs_stale, 0);
}

#define DESYNC_STEP 100

static void step_twice_at_k(void *state, const gk_step_input *in) {
  GENRE.step(state, in);
  if (in->step == DESYNC_STEP) GENRE.step(state, in);
}

Test(SUITE, an_altered_peer_is_reported_at_the_step_it_diverged) {
  gk_sim victim = GENRE;
  victim.step = step_twice_at_k;
  gk_testkit_options o = base_opts(2, 300);
  o.step = (gk_ratio){1, 250};
  o.victim_sim = &victim;
  o.victim = 1;
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  uint32_t slot = gk_testkit_slot(&h, 1);
  cr_assert_eq(h.ndesyncs, 1);
  cr_assert_eq(h.desyncs[0].step, DESYNC_STEP);
  cr_assert_eq(h.desyncs[0].player, slot);
  cr_assert_neq(h.desyncs[0].host_hash, h.desyncs[0].peer_hash);
  cr_assert_eq(h.desyncs[0].peer_hash, h.p[1].hashes[DESYNC_STEP]);
  cr_assert_eq(h.desyncs[0].host_hash, h.host_hashes[DESYNC_STEP]);
  cr_assert_eq(h.p[1].hashes[DESYNC_STEP - 1], h.host_hashes[DESYNC_STEP - 1]);
  /* Every player is told, naming the same player and step. */
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert_eq(h.p[i].desync_notices, 1);
    cr_assert_eq(h.p[i].desync.step, DESYNC_STEP);
    cr_assert_eq(h.p[i].desync.player, slot);
  }
  /* The kit's agreement check names the altered peer and the step. */
  char why[256];
  cr_assert_eq(gk_testkit_agree(&h, GK_TESTKIT_ALL, why, sizeof why),
               GK_EMISMATCH);
  char want[64];
  snprintf(want, sizeof want, "peer 1 differs from the host first at step %d",
           DESYNC_STEP);
  cr_assert(strstr(why, want), "%s", why);
  /* The honest peer still agrees everywhere. */
  expect_agreement(1);
}

Test(SUITE, a_stalled_peer_stops_everyone_until_the_creator_removes_it) {
  gk_testkit_options o = base_opts(3, 600);
  o.step = (gk_ratio){1, 250};
  o.faults = 1; /* clean relays; one link is cut at step 200 */
  o.cut_at_step = 200;
  o.cut_peer = 2;
  o.stall_notice_ms = 500;
  o.creator_removes_stalled = 1;
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  uint32_t slot = gk_testkit_slot(&h, 2);
  cr_assert_geq(h.host_stalls, 1);
  cr_assert_eq(h.host_stall_awaited, 1u << slot);
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert_geq(h.p[i].stall_notices, 1, "peer %u got no notice", i);
    cr_assert_eq(h.p[i].stall_awaited, 1u << slot);
    /* It had stopped: nothing past the awaited step ran. */
    cr_assert_leq(h.p[i].steps_at_stall, h.p[i].stall_step);
    cr_assert_geq(h.p[i].stall_step, 200);
  }
  cr_assert_eq(h.removed_slot, slot);
  cr_assert_geq(h.removed_step, h.p[0].stall_step);
  cr_assert_geq(h.session.loop.steps, 600);
  expect_agreement(2);
  /* From the removal on, the removed player is inactive and neutral. */
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&h.session.inbuf, h.session.loop.steps - 1, &in),
               0);
  cr_assert_eq(in.active_mask & (1u << slot), 0);
}

Test(SUITE, a_peer_that_disconnects_is_removed_and_the_rest_finish) {
  gk_testkit_options o = base_opts(3, 500);
  o.step = (gk_ratio){1, 250};
  o.leave_at_step = 150;
  o.leave_peer = 1;
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  uint32_t slot = gk_testkit_slot(&h, 1);
  cr_assert_eq(h.removed_slot, slot);
  cr_assert_geq(h.removed_step, 150);
  cr_assert_eq(h.host_stalls, 0);
  cr_assert_geq(h.session.loop.steps, 500);
  expect_agreement(1);
  /* It played until it left, in agreement with the host. */
  cr_assert_geq(h.p[1].nsteps, 140);
  for (uint64_t s = 0; s < h.p[1].nsteps; s++)
    cr_assert_eq(h.p[1].hashes[s], h.host_hashes[s]);
}

#ifdef LOCKSTEP_SURVIVORS
/* Prediction (docs/PROTOCOL.md, "Prediction"): a 100 ms round trip (50 ms
 * each way through the relays) at 60 steps a second, input delay 1 and a
 * window of 8 (what a predicting room gives at that round trip). */
Test(SUITE,
     at_100_ms_rtt_the_predicting_peer_shows_its_input_at_once_the_other_late) {
  gk_testkit_options o = base_opts(2, 600);
  o.step = (gk_ratio){1, 60};
  o.input_delay = 1;
  o.lead = 8;
  o.faults = 1;
  o.up.latency_ms = 50;
  o.down.latency_ms = 50;
  o.predict_mask = 1; /* peer 0 predicts, peer 1 does not */
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  expect_agreement(GK_TESTKIT_ALL);
  cr_assert_eq(h.session.stats.desyncs, 0);
  const gk_testkit_peer *a = &h.p[0], *b = &h.p[1];
  uint32_t period_us = 1000000u / 60u;
  uint32_t a50 = a->display_p50_us, b50 = b->display_p50_us;
  cr_assert_gt(a->ndisplay, 500);
  cr_assert_leq(a50, (o.input_delay + 2) * period_us,
                "the head showed a sample after %u us (p50)", a50);
  cr_assert_geq(b50, 100000, "without a head, after the round trip: %u us",
                b50);
  cr_assert_gt(a->head.rollbacks, 0, "the bots' inputs change");
  cr_assert_leq(h.p[0].head_ahead, 8, "the head ran %llu steps ahead",
                (unsigned long long)h.p[0].head_ahead);
  cr_assert_eq(b->head.restores, 0);
}

/* A player frozen for 5 s: the heads stop at the window and wait, the
 * re-simulation cap holds; after the creator removes it, every head is
 * restored onto the one chain, which every engine agrees on. */
Test(SUITE, a_5_s_stall_stops_every_head_at_the_window_until_the_removal) {
  gk_testkit_options o = base_opts(3, 600);
  o.step = (gk_ratio){1, 250};
  o.input_delay = 1;
  o.lead = 8;
  o.faults = 1;
  o.cut_at_step = 200;
  o.cut_peer = 2;
  o.stall_notice_ms = 5000;
  o.creator_removes_stalled = 1;
  o.predict_mask = 3;
  cr_assert_eq(gk_testkit_run(&h, &o), 0, "%s", h.why);
  expect_agreement(2);
  for (uint32_t i = 0; i < 2; i++) {
    const gk_testkit_peer *p = &h.p[i];
    cr_assert_eq(h.p[i].head_ahead, 8,
                 "peer %u's head stopped %llu steps ahead, not at 8", i,
                 (unsigned long long)h.p[i].head_ahead);
    cr_assert_eq(p->head.resim_hist[GK_NET_PEER_RESIM_MAX], 0);
    for (uint32_t n = 11; n < GK_NET_PEER_RESIM_MAX; n++)
      cr_assert_eq(p->head.resim_hist[n], 0, "%u re-simulated in one call", n);
    /* after the removal the confirmed steps passed the head: restored */
    cr_assert_gt(p->head.restores, 1);
  }
}
#endif
