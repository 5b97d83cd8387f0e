/* test_rejoin.c: reconnect, rejoin and spectators from the referee's
 * snapshots (issue 12).
 *
 * In one process, over real ENet on 127.0.0.1: a gk_server (the referee)
 * and three gk_net_peer players of survivors, created and started through
 * the real room handshake. Player 2 drops its connection at step 1000; a
 * new connection presents the room code, the slot and the secret from
 * RECONNECT_SECRET and rejoins from a snapshot. Every hash the rejoined
 * player computes after its return must equal player 0's (and the
 * server's own copy compares them too: a DESYNC notice fails the test);
 * the creator ends the match at step 1600 and everybody must see the end.
 * Variants: both while-away policies, 5% loss and 30 ms latency through
 * the fault relay, a tampered or misaddressed snapshot, a wrong secret, an
 * expired hold, and spectators (one throttled until it gets a newer
 * snapshot). The step rate is 200 Hz so that 1600 steps take 8 s.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "inproc.h"

static void rejoin_case(const scen *o) {
  static world w;
  inproc_run(&w, o);
  inproc_expect_ended(&w);
  client *r = inproc_rejoined(&w);
  cr_assert_not_null(r, "nobody tried to rejoin");
  cr_assert_eq(r->error, 0, "rejoin refused: %s %s", gk_err_name(r->error),
               r->error_text);
  cr_assert_eq(r->snaps, 1, "snapshot: %s", r->snap_err);
  cr_assert(r->resumed, "the rejoined player never resumed sampling");
  cr_assert(r->ended, "the rejoined player did not see the end");
  cr_assert_eq(r->desyncs, 0);
  cr_assert_geq(r->info.step, o->drop_step);
  inproc_expect_agrees(&w, r, "the rejoined player");
  cr_assert_eq(w.stats.rejoins, 1 + (o->tamper != T_NONE));
  cr_log_info("rejoin (%s%s): snapshot step %llu, %llu bytes, resumed %.1f ms "
              "after the request",
              o->neutral ? "neutral" : "stall", o->faults ? ", faults" : "",
              (unsigned long long)r->info.step,
              (unsigned long long)r->info.bytes,
              (double)(r->info.resumed_ns - r->info.request_ns) / 1e6);
  inproc_free(&w);
}

static scen base(void) {
  return (scen){.hold_ms = 10000,
                .drop_step = 1000,
                .away_ms = 2000,
                .expect_back = 1,
                .end_step = 1600};
}

Test(rejoin, a_player_back_after_2_s_stalled_agrees_with_the_referee,
     .timeout = 90) {
  scen o = base();
  rejoin_case(&o);
}

Test(rejoin, a_player_back_after_2_s_played_neutral_agrees_with_the_referee,
     .timeout = 90) {
  scen o = base();
  o.neutral = 1;
  rejoin_case(&o);
}

Test(rejoin, a_rejoin_through_5_percent_loss_and_30_ms_agrees_stalled,
     .timeout = 120) {
  scen o = base();
  o.faults = 1;
  rejoin_case(&o);
}

Test(rejoin, a_rejoin_through_5_percent_loss_and_30_ms_agrees_neutral,
     .timeout = 120) {
  scen o = base();
  o.faults = 1;
  o.neutral = 1;
  rejoin_case(&o);
}

static void refused_snapshot_case(int tamper, int want_rc, const char *want) {
  scen o = base();
  o.tamper = tamper;
  o.neutral = 1;
  static world w;
  inproc_run(&w, &o);
  inproc_expect_ended(&w);
  client *first = inproc_first_rejoin(&w);
  cr_assert_not_null(first);
  cr_assert_eq(first->snaps, 0, "the tampered snapshot was adopted");
  cr_assert_eq(first->snap_rc, want_rc, "refused with %s: %s",
               gk_err_name(first->snap_rc), first->snap_err);
  cr_assert_not_null(strstr(first->snap_err, want), "message: %s",
                     first->snap_err);
  cr_assert_eq(first->nsteps, 0, "it stepped from a refused snapshot");
  client *r = inproc_rejoined(&w);
  cr_assert_neq(r, first);
  cr_assert_eq(r->snaps, 1);
  inproc_expect_agrees(&w, r, "the second attempt");
  inproc_free(&w);
}

Test(rejoin, a_snapshot_with_one_byte_changed_is_refused_by_its_checksum,
     .timeout = 90) {
  refused_snapshot_case(T_FLIP, GK_ECORRUPT, "chunk");
}

Test(rejoin, a_changed_snapshot_with_good_checksums_is_refused_by_its_hash,
     .timeout = 90) {
  refused_snapshot_case(T_FLIP_FIXED, GK_EMISMATCH, "hashes to");
}

Test(rejoin, a_snapshot_for_another_room_is_refused, .timeout = 90) {
  refused_snapshot_case(T_ROOM, GK_EMISMATCH, "for room");
}

Test(rejoin, a_wrong_secret_is_refused_and_counted, .timeout = 90) {
  scen o = base();
  o.bad_secret = 1;
  static world w;
  inproc_run(&w, &o);
  inproc_expect_ended(&w);
  client *first = inproc_first_rejoin(&w);
  cr_assert_eq(first->error, GK_EAUTH, "%s", first->error_text);
  cr_assert_not_null(strstr(first->error_text, "secret"));
  cr_assert_eq(w.stats.rejoin_bad_secret, 1);
  cr_assert_eq(w.stats.rejoins, 1);
  cr_assert_eq(inproc_rejoined(&w)->snaps, 1);
  inproc_free(&w);
}

Test(rejoin, a_reconnect_after_the_hold_expired_is_refused, .timeout = 90) {
  scen o = base();
  o.hold_ms = 500;
  o.expect_back = 0;
  static world w;
  inproc_run(&w, &o);
  inproc_expect_ended(&w);
  client *r = inproc_rejoined(&w);
  cr_assert_not_null(r);
  cr_assert_eq(r->error, GK_EEXPIRED, "%s: %s", gk_err_name(r->error),
               r->error_text);
  cr_assert_eq(w.stats.holds_expired, 1);
  cr_assert_eq(w.stats.rejoins, 0);
  inproc_free(&w);
}

Test(spectators, two_spectators_agree_and_a_throttled_one_gets_a_newer_snapshot,
     .timeout = 90) {
  scen o = base();
  o.drop_step = 0;
  o.expect_back = 0;
  o.spectators = 2;
  o.throttle_spectator = 1;
  static world w;
  inproc_run(&w, &o);
  inproc_expect_ended(&w);
  int throttled_seen = 0;
  for (uint32_t i = 0; i < w.nc; i++) {
    client *c = &w.c[i];
    if (c->kind != K_SPECTATOR) continue;
    cr_assert_eq(c->error, 0, "%s", c->error_text);
    cr_assert(c->ended, "spectator %u did not see the end", i);
    cr_assert_geq(c->snaps, 1);
    inproc_expect_agrees(&w, c, "a spectator");
    cr_assert_eq(c->hashes[c->nsteps - 1], w.c[0].hashes[c->nsteps - 1]);
    if (c->relayed) {
      throttled_seen = 1;
      cr_assert_geq(c->snaps, 2,
                    "the throttled spectator got no newer "
                    "snapshot");
    }
  }
  cr_assert(throttled_seen);
  cr_assert_eq(w.stats.spectators_joined, 2);
  cr_assert_geq(w.stats.spectator_refreshes, 1);
  cr_assert_eq(w.stats.spectator_desyncs, 0);
  inproc_free(&w);
}
