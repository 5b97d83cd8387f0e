/* test_session_drain.c: the host session's entry point for messages the
 * owner decoded already (it counts what the bytes entry point counts), and
 * its state after the match end: acknowledgements and hashes are still
 * taken, and gk_net_session_drained says when every connected player holds
 * the last confirmed step. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_session.h"
#include "tally.h"

typedef struct fixture {
  gk_net_session s;
  uint32_t sent_to[2]; /* CONFIRMED messages sent, per slot */
  int ended;
} fixture;

static fixture fx, fy;

static int on_send(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
                   int reliable) {
  fixture *f = ctx;
  (void)reliable;
  if (slot < 2 && len > 1 && bytes[1] == GK_MSG_CONFIRMED) f->sent_to[slot]++;
  return 0;
}

static void on_ended(void *ctx, uint64_t step, int reason) {
  fixture *f = ctx;
  (void)step;
  (void)reason;
  f->ended++;
}

static void open_one(fixture *f) {
  static const tally_cfg cfg = {0};
  memset(f, 0, sizeof *f);
  gk_net_session_config c = {.sim = &tally_sim,
                             .sim_config = &cfg,
                             .seed = 7,
                             .players = 2,
                             .input_delay = 1,
                             .lead = 2,
                             .window = 64,
                             .stall_notice_ms = 100};
  gk_net_session_callbacks cb = {.ctx = f, .send = on_send, .ended = on_ended};
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_net_session_init(&f->s, &c, &cb, 1000, err, sizeof err), 0,
               "%s", err);
}

static void init(void) {
  open_one(&fx);
  open_one(&fy);
}

static void fini(void) {
  gk_net_session_close(&fx.s);
  gk_net_session_close(&fy.s);
}

TestSuite(session_drain, .init = init, .fini = fini);

static size_t encode(const gk_wire_msg *m, uint8_t *buf) {
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, GK_WIRE_MAX, &len), 0);
  return len;
}

/* Decodes once and hands the message over, as gk-server does. */
static int feed_decoded(fixture *f, uint32_t slot, const uint8_t *bytes,
                        size_t len, uint64_t now) {
  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m);
  return gk_net_session_receive_decoded(&f->s, slot, rc, &m, len, now);
}

static int input(uint32_t slot, uint64_t first, uint8_t count, uint64_t ack,
                 uint64_t now) {
  uint8_t recs[64 * 4] = {0};
  for (uint32_t i = 0; i < count; i++) recs[i * 4] = (uint8_t)(slot + 1);
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = (uint8_t)slot,
                              .input_size = 4,
                              .count = count,
                              .ack = ack,
                              .first = first,
                              .records = recs};
  uint8_t buf[GK_WIRE_MAX];
  return feed_decoded(&fx, slot, buf, encode(&m, buf), now);
}

Test(session_drain, decoded_messages_are_counted_like_datagrams) {
  uint8_t msgs[4][GK_WIRE_MAX];
  size_t lens[4];
  uint8_t recs[8] = {1, 0, 0, 0, 2, 0, 0, 0};
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = 0,
                              .input_size = 4,
                              .count = 2,
                              .ack = 0,
                              .first = 1,
                              .records = recs};
  lens[0] = encode(&m, msgs[0]);
  m.u.input.slot = 1;
  lens[1] = encode(&m, msgs[1]);
  memcpy(msgs[2], msgs[0], lens[0]);
  lens[2] = lens[0] - 1; /* truncated: malformed */
  m.type = GK_MSG_SHUTDOWN;
  m.u.shutdown_grace_ms = 5;
  lens[3] = encode(&m, msgs[3]); /* not a type the session takes */
  static const uint32_t from[] = {0, 1, 1, 0, 5};
  for (int i = 0; i < 5; i++) {
    int k = i < 4 ? i : 0;
    int a = gk_net_session_receive(&fy.s, from[i], msgs[k], lens[k], 1001);
    int b = feed_decoded(&fx, from[i], msgs[k], lens[k], 1001);
    cr_assert_eq(a, b, "message %d: %d vs %d", i, a, b);
  }
  cr_assert_eq(memcmp(&fx.s.stats, &fy.s.stats, sizeof fx.s.stats), 0);
  cr_assert_eq(fx.s.stats.packets_in, 5);
  cr_assert_eq(fx.s.stats.drop_malformed, 1);
  cr_assert_eq(fx.s.stats.drop_unexpected, 1);
  cr_assert_eq(fx.s.stats.drop_slot, 1);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 3);
}

Test(session_drain, a_malformed_message_needs_no_decoded_struct) {
  cr_assert_eq(
      gk_net_session_receive_decoded(&fx.s, 0, GK_EPROTO, NULL, 9, 1001),
      GK_EPROTO);
  cr_assert_eq(fx.s.stats.packets_in, 1);
  cr_assert_eq(fx.s.stats.bytes_in, 9);
  cr_assert_eq(fx.s.stats.drop_malformed, 1);
}

/* Plays steps 0..2, ends the match at step 3 and runs it. */
static void play_to_the_end(void) {
  cr_assert_eq(input(0, 1, 2, 0, 1001), 0);
  cr_assert_eq(input(1, 1, 2, 0, 1001), 0);
  cr_assert_eq(gk_net_session_drained(&fx.s, 3), 0); /* not ended */
  cr_assert_eq(gk_net_session_end(&fx.s, GK_WIRE_END_HOST, 1002), 0);
  gk_net_session_tick(&fx.s, 1003);
  cr_assert_eq(fx.ended, 1);
  cr_assert(fx.s.ended);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 4);
}

Test(session_drain, drained_once_every_connected_player_acknowledged) {
  play_to_the_end();
  cr_assert_eq(gk_net_session_drained(&fx.s, 3), 0);
  cr_assert_eq(gk_net_session_drained(&fx.s, 0), 1); /* nobody connected */
  uint64_t stale = fx.s.stats.inputs_stale;
  cr_assert_eq(input(0, 3, 1, 4, 1004), GK_ECLOSED);
  cr_assert_eq(fx.s.stats.inputs_stale, stale + 1);
  cr_assert_eq(gk_net_session_drained(&fx.s, 3), 0);
  cr_assert_eq(gk_net_session_drained(&fx.s, 1), 1);
  cr_assert_eq(input(1, 3, 1, 2, 1005), GK_ECLOSED);
  cr_assert_eq(gk_net_session_drained(&fx.s, 3), 0);  /* step 3 missing */
  cr_assert_eq(input(1, 3, 1, 99, 1006), GK_ECLOSED); /* clamped to 4 */
  cr_assert_eq(gk_net_session_drained(&fx.s, 3), 1);
}

Test(session_drain, an_ack_for_another_slot_is_not_taken) {
  play_to_the_end();
  uint8_t recs[4] = {0};
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = 0,
                              .input_size = 4,
                              .count = 1,
                              .ack = 4,
                              .first = 3,
                              .records = recs};
  uint8_t buf[GK_WIRE_MAX];
  cr_assert_eq(feed_decoded(&fx, 1, buf, encode(&m, buf), 1004), GK_ECLOSED);
  cr_assert_eq(gk_net_session_drained(&fx.s, 2), 0);
}

Test(session_drain, tick_repeats_only_to_players_who_have_not_acknowledged) {
  play_to_the_end();
  cr_assert_eq(input(0, 3, 1, 4, 1004), GK_ECLOSED);
  uint32_t before0 = fx.sent_to[0], before1 = fx.sent_to[1];
  uint64_t steps = fx.s.loop.steps;
  gk_net_session_tick(&fx.s, 1100);
  gk_net_session_tick(&fx.s, 1200);
  cr_assert_eq(fx.sent_to[0], before0);
  cr_assert_gt(fx.sent_to[1], before1);
  cr_assert_eq(fx.s.loop.steps, steps); /* no step runs after the end */
  cr_assert_eq(fx.ended, 1);
}

Test(session_drain, hashes_are_compared_and_removals_refused_after_the_end) {
  play_to_the_end();
  gk_wire_msg m;
  m.type = GK_MSG_HASH;
  m.u.hash.first = 0;
  m.u.hash.count = 4;
  for (uint64_t st = 0; st < 4; st++)
    cr_assert_eq(gk_loop_hash_at(&fx.s.loop, st, &m.u.hash.hashes[st]), 0);
  uint8_t buf[GK_WIRE_MAX];
  cr_assert_eq(feed_decoded(&fx, 1, buf, encode(&m, buf), 1004), 0);
  cr_assert_eq(fx.s.stats.hashes_compared, 4);
  cr_assert_eq(fx.s.stats.desyncs, 0);
  cr_assert_eq(gk_net_session_remove(&fx.s, 1, GK_WIRE_STEP_ASAP, NULL, 1005),
               GK_ECLOSED);
  cr_assert_eq(gk_net_session_end(&fx.s, GK_WIRE_END_HOST, 1005), GK_ESTATE);
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){.slot = 1, .step = GK_WIRE_STEP_ASAP};
  cr_assert_eq(feed_decoded(&fx, 0, buf, encode(&m, buf), 1006), GK_ECLOSED);
}
