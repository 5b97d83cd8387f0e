/* test_rejoin.c: reconnect, rejoin and spectators over real sockets.
 *
 * In one process, over real ENet on 127.0.0.1 (rejoin_world.h): a
 * gk_server (the referee) and three gk_net_peer players of survivors.
 * Player 2 drops its connection at step 1000 and rejoins from a snapshot
 * through 5% loss and 30 ms latency (the fault relay), under both
 * while-away policies; every hash it computes after its return must equal
 * player 0's. Then what only a real peer and real bytes show: a tampered
 * or misaddressed snapshot is refused by the peer, a secret off in its
 * first, a middle or its last byte is refused by the server, and two
 * spectators agree (one throttled until it gets a newer snapshot).
 * What the room decides (holds, expiry, takeovers, a wrong secret, the
 * spectator delay from the first step) is tested with time set by hand
 * in tests/room.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "rejoin_world.h"

Test(rejoin, a_rejoin_through_5_percent_loss_and_30_ms_agrees_stalled,
     .timeout = 120) {
  scen o = rw_base();
  o.faults = 1;
  rw_rejoin_case(&o);
}

Test(rejoin, a_rejoin_through_5_percent_loss_and_30_ms_agrees_neutral,
     .timeout = 120) {
  scen o = rw_base();
  o.faults = 1;
  o.neutral = 1;
  rw_rejoin_case(&o);
}

static void refused_snapshot_case(int tamper, int want_rc, const char *want) {
  scen o = rw_base();
  o.tamper = tamper;
  o.neutral = 1;
  static world w;
  rw_run(&w, &o);
  rw_expect_ended_normally(&w);
  client *first = rw_first_rejoin(&w);
  cr_assert_not_null(first);
  cr_assert_eq(first->snaps, 0, "the tampered snapshot was adopted");
  cr_assert_eq(first->snap_rc, want_rc, "refused with %s: %s",
               gk_err_name(first->snap_rc), first->snap_err);
  cr_assert_not_null(strstr(first->snap_err, want), "message: %s",
                     first->snap_err);
  cr_assert_eq(first->nsteps, 0, "it stepped from a refused snapshot");
  client *r = rw_rejoined(&w);
  cr_assert_neq(r, first);
  cr_assert_eq(r->snaps, 1);
  rw_expect_agrees(&w, r, "the second attempt");
  rw_free(&w);
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

/* Rejoin attempts 1..3 each change one bit of one byte of the secret: the
 * first, a middle and the last byte; each must be refused (a compare that
 * skips a byte at either end, or stops early, lets one in). Attempt 4 has
 * the right secret and must get the slot back. */
Test(
    rejoin,
    a_secret_off_in_its_first_middle_or_last_byte_is_refused_the_right_one_is_not,
    .timeout = 90) {
  scen o = rw_base();
  o.bad_secret = 3;
  const uint8_t bytes[3] = {0, GK_WIRE_SECRET_LEN / 2, GK_WIRE_SECRET_LEN - 1};
  memcpy(o.bad_byte, bytes, sizeof bytes);
  static world w;
  rw_run(&w, &o);
  for (int k = 1; k <= 3; k++) {
    client *a = rw_rejoin_attempt(&w, k);
    cr_assert_not_null(a, "no rejoin attempt %d (the one before was let in)",
                       k);
    cr_assert_eq(a->error, GK_EAUTH,
                 "a secret with byte %u changed: %s (%s), want GK_EAUTH",
                 bytes[k - 1], gk_err_name(a->error), a->error_text);
    cr_assert_eq(a->snaps, 0, "a secret with byte %u changed got a snapshot",
                 bytes[k - 1]);
    cr_assert_eq(a->nsteps, 0);
  }
  rw_expect_ended_normally(&w);
  client *r = rw_expect_rejoined(&w, &o);
  cr_assert_eq(r, rw_rejoin_attempt(&w, 4), "the right secret was not next");
  cr_assert_eq(w.stats.rejoin_bad_secret, 3);
  cr_assert_eq(w.stats.rejoins_refused, 3);
  cr_assert_eq(w.stats.rejoins, 1);
  rw_free(&w);
}

Test(spectators, two_spectators_agree_and_a_throttled_one_gets_a_newer_snapshot,
     .timeout = 90) {
  scen o = rw_base();
  o.drop_step = 0;
  o.expect_back = 0;
  o.spectators = 2;
  o.throttle_spectator = 1;
  static world w;
  rw_run(&w, &o);
  rw_expect_ended_normally(&w);
  int throttled_seen = 0;
  for (uint32_t i = 0; i < w.nc; i++) {
    client *c = &w.c[i];
    if (c->kind != K_SPECTATOR) continue;
    cr_assert_eq(c->error, 0, "%s", c->error_text);
    cr_assert(c->ended, "spectator %u did not see the end", i);
    cr_assert_geq(c->snaps, 1);
    rw_expect_agrees(&w, c, "a spectator");
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
  rw_free(&w);
}
