/* test_room_match.c: a running match, its players the real peer engine
 * (room_world.h), time set by hand: the steps confirm at the step rate,
 * the input delay chosen from round trips changes mid-match at the step
 * it announces, a silent player stalls the match and is removed (after
 * stall.auto_remove_ms, or by the creator), and server bots fill seats
 * with no connection. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"
#include "room_world.h"

static rw_world *w;

static void setup(void) {
  w = rw_new();
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_match, .init = setup, .fini = teardown, .timeout = 30);

static gk_room_view view(const gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  return v;
}

/* The delay step `step` announces in the CONFIRMED messages `id` got
 * (GK_STEP_DELAY_OF: 0 for none), or -1 if no CONFIRMED held the step. */
static int announced(uint32_t id, uint64_t step) {
  gk_wire_msg m;
  for (uint32_t n = 0; rw_nth(w, id, GK_MSG_CONFIRMED, n, &m); n++) {
    const gk_wire_confirmed *c = &m.u.confirmed;
    if (step < c->first || step >= c->first + c->count) continue;
    gk_step_input in;
    gk_wire_step_get(c, (uint32_t)(step - c->first), &in);
    return (int)GK_STEP_DELAY_OF(in.flags);
  }
  return -1;
}

Test(room_match, players_that_answer_confirm_steps_at_the_step_rate) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 1000);
  gk_room_view v = view(r);
  /* 50 steps a second: at 1000 ms the peers sampled deadlines 0..50, for
   * steps 2..52 (input delay 2; steps 0 and 1 are neutral) */
  cr_assert_geq(v.steps_confirmed, 50, "%llu",
                (unsigned long long)v.steps_confirmed);
  cr_assert_leq(v.steps_confirmed, 53, "%llu",
                (unsigned long long)v.steps_confirmed);
  cr_assert_eq(v.stalls, 0);
  cr_assert_eq(v.desyncs, 0);
  cr_assert_eq(w->steps, v.steps, "env.step once per step the room ran");
  for (uint32_t i = 0; i < 2; i++) {
    const gk_net_peer *p = &rw_conn_of(w, id[i])->peer;
    cr_assert_geq(p->loop.steps + 2, v.steps, "peer %u ran %llu", i,
                  (unsigned long long)p->loop.steps);
    uint64_t mine = 0, ref = 0;
    cr_assert_eq(gk_loop_hash_at(&p->loop, 40, &mine), 0);
    cr_assert_eq(gk_loop_hash_at(&r->session.loop, 40, &ref), 0);
    cr_assert_eq(mine, ref, "peer %u and the referee agree at step 40", i);
  }
  cr_assert_gt(r->session.stats.hashes_compared, 0);
  cr_assert_eq(r->session.stats.desyncs, 0);
}

Test(room_match,
     a_players_ping_is_measured_and_within_a_step_on_an_instant_link) {
  uint32_t id[2];
  rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 1000);
  for (uint32_t i = 0; i < 2; i++) {
    /* the link delivers at once; the host acknowledges an input with its
     * next CONFIRMED: at most a step period (20 ms at 50 Hz) later */
    uint64_t rtt = rw_conn_of(w, id[i])->peer.rtt_ns;
    cr_assert_geq(rw_conn_of(w, id[i])->peer.rtt_samples, 40,
                  "peer %u measured no round trip", i);
    cr_assert_leq(rtt, 20000000u, "peer %u: %llu ns", i,
                  (unsigned long long)rtt);
  }
}

/* The players' round trips, as the shell's links measure them. */
static void set_rtt(const uint32_t *id, uint32_t n, uint32_t rtt) {
  for (uint32_t i = 0; i < n; i++) rw_conn_of(w, id[i])->rtt_ms = rtt;
}

/* The last delay_change: from, to and its switch step, which the
 * announcing CONFIRMED and every peer's switch agree on. */
static uint64_t check_change(const uint32_t *id, uint32_t from, uint32_t to,
                             uint32_t nth) {
  char line[2048];
  cr_assert_eq(rw_log_count(w, "delay_change"), nth + 1);
  cr_assert(rw_log_last(w, "delay_change", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "from"), from, "%s", line);
  cr_assert_eq(rw_log_u64(line, "to"), to, "%s", line);
  uint64_t announce = rw_log_u64(line, "announce_step");
  uint64_t at = rw_log_u64(line, "switch_step");
  cr_assert_eq(at, announce + from + 4, "announce + old delay + lead");
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert_eq(announced(id[i], announce), (int)to, "slot %u", i);
    cr_assert_eq(announced(id[i], announce - 1), 0, "slot %u", i);
    const gk_net_peer *p = &rw_conn_of(w, id[i])->peer;
    cr_assert_eq(p->ndelays, nth + 2, "slot %u: %u delays", i, p->ndelays);
    cr_assert_eq(p->delays[nth + 1].step, at, "slot %u", i);
    cr_assert_eq(p->delays[nth + 1].delay, to, "slot %u", i);
    cr_assert_eq(p->delay, to, "slot %u samples with the new delay", i);
  }
  return at;
}

Test(room_match,
     an_auto_input_delay_is_raised_and_lowered_at_the_step_announced) {
  w->cfg.prediction = GK_PREDICT_OFF; /* the round trip's delay */
  w->cfg.input_delay_auto = 1;
  w->cfg.input_delay_min = 2;
  w->cfg.delay_hold_ms = 200;
  w->cfg.delay_every_ms = 500;
  w->cfg.delay_jitter_x = 2;
  w->cfg.ping_ms = 50;
  uint32_t id[2];
  for (uint32_t i = 0; i < 2; i++) {
    id[i] = rw_connect(w);
    rw_player(w, id[i]);
  }
  set_rtt(id, 2, 50); /* ceil(50 / 20) = 3 steps */
  gk_room *r = rw_create(w, id[0], "survivors", 2, 0, NULL);
  cr_assert_not_null(r);
  rw_join(w, id[1], gk_room_code(r));
  rw_start(w, id[0]);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[1], GK_MSG_MATCH_START, &m));
  cr_assert_eq(m.u.match_start.input_delay, 3, "chosen from the round trips");
  rw_advance(w, 400);
  cr_assert_eq(rw_log_count(w, "delay_change"), 0, "steady round trips");
  /* slot 1's round trip grows: 150 ms wants 8 steps */
  rw_conn_of(w, id[1])->rtt_ms = 150;
  rw_advance(w, 700);
  uint64_t up = check_change(id, 3, 8, 0);
  cr_assert_gt(view(r).steps, up, "the raise is behind us");
  /* and shrinks again: 20 ms wants the minimum, 2, but the slowest
   * player (slot 0, still 50 ms) wants 3 */
  rw_conn_of(w, id[1])->rtt_ms = 20;
  rw_advance(w, 1000);
  uint64_t down = check_change(id, 8, 3, 1);
  cr_assert_gt(down, up);
  rw_advance(w, 300);
  gk_room_view v = view(r);
  cr_assert_gt(v.steps, down + 5, "the match went on past the lowering");
  cr_assert_eq(v.desyncs, 0);
  cr_assert_eq(v.stalls, 0);
  cr_assert_eq(gk_net_session_delay(&r->session), 3);
}

Test(room_match, a_silent_player_stalls_the_match_and_is_removed_in_time) {
  w->cfg.stall_notice_ms = 200;
  w->cfg.stall_auto_remove_ms = 600;
  uint32_t id[3];
  gk_room *r = rw_match(w, "survivors", 3, 3, NULL, id);
  rw_advance(w, 300);
  uint64_t before = view(r).steps_confirmed;
  cr_assert_gt(before, 8);
  rw_conn_of(w, id[2])->mute = 1; /* slot 2 says nothing from now on */
  rw_advance(w, 350);
  gk_room_view v = view(r);
  cr_assert_eq(v.stall_notices, 1);
  cr_assert_eq(v.stalls, 0, "counted when it ends");
  cr_assert_leq(v.steps_confirmed, before + 8, "it waits for slot 2");
  for (uint32_t i = 0; i < 2; i++) {
    gk_wire_msg m;
    cr_assert(rw_last(w, id[i], GK_MSG_STALL, &m), "slot %u", i);
    cr_assert_eq(m.u.stall.awaited, 1u << 2);
    cr_assert_geq(m.u.stall.waited_ms, 200);
    cr_assert_eq(m.u.stall.step, v.steps_confirmed);
  }
  cr_assert_eq(rw_count(w, id[0], GK_MSG_REMOVE_PLAYER), 0, "not yet");
  rw_advance(w, 400);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_REMOVE_PLAYER, &m));
  cr_assert_eq(m.u.remove.slot, 2);
  char line[2048];
  cr_assert(rw_log_last(w, "player_removed", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "slot"), 2);
  rw_advance(w, 400);
  v = view(r);
  cr_assert_eq(v.active_mask, 3, "slots 0 and 1 play on");
  cr_assert_gt(v.steps_confirmed, rw_log_u64(line, "step") + 10);
  cr_assert_eq(v.state, GK_ROOM_PLAYING);
  /* the stall ended with the removal: one, the schedule moved by its
   * wait (auto_remove_ms, less what slot 0 and 1 sampled ahead) */
  cr_assert_eq(v.stalls, 1);
  cr_assert(v.stalled_ms >= 600 - 6 * 20 && v.stalled_ms <= 700, "%llu",
            (unsigned long long)v.stalled_ms);
  cr_assert_eq(v.steps_late, 0);
}

Test(room_match, remove_player_from_the_creator_ends_a_stall) {
  w->cfg.stall_notice_ms = 200;
  uint32_t id[3];
  gk_room *r = rw_match(w, "survivors", 3, 3, NULL, id);
  rw_advance(w, 300);
  rw_conn_of(w, id[2])->mute = 1;
  rw_advance(w, 1500);
  gk_room_view v = view(r);
  cr_assert_eq(v.stall_notices, 1);
  cr_assert_eq(v.active_mask, 7, "no auto removal: the host decides");
  uint64_t stalled = v.steps_confirmed;
  /* a player who is not the creator may not */
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){2, GK_WIRE_STEP_ASAP};
  rw_peer_send(w, id[1], &m);
  rw_pump(w);
  cr_assert_eq(rw_conn_of(w, id[1])->strikes, 1);
  cr_assert_eq(rw_count(w, id[0], GK_MSG_REMOVE_PLAYER), 0);
  rw_peer_send(w, id[0], &m);
  rw_pump(w);
  gk_wire_msg got;
  cr_assert(rw_last(w, id[1], GK_MSG_REMOVE_PLAYER, &got));
  cr_assert_eq(got.u.remove.slot, 2);
  cr_assert_eq(got.u.remove.step, stalled);
  rw_advance(w, 300);
  v = view(r);
  cr_assert_eq(v.active_mask, 3);
  cr_assert_gt(v.steps_confirmed, stalled + 10);
  cr_assert_eq(rw_conn_of(w, id[0])->strikes, 0);
}

Test(room_match, bots_fill_their_seats_with_no_connection) {
  uint32_t a = rw_connect(w);
  rw_player(w, a);
  gk_room *r = rw_create(w, a, "survivors", 1, 0, "{\"room\":{\"bots\":2}}");
  cr_assert_not_null(r);
  gk_room_view v = view(r);
  cr_assert_eq(v.bot_seats, 2);
  cr_assert_eq(v.bot_mask, 0, "no slot before the start");
  cr_assert_str_eq(v.options, "{}", "room.bots is no genre option");
  rw_start(w, a);
  gk_wire_msg m;
  cr_assert(rw_last(w, a, GK_MSG_MATCH_START, &m));
  cr_assert_eq(m.u.match_start.players, 3);
  cr_assert_eq(m.u.match_start.active_mask, 7);
  cr_assert_eq(w->host.stats.bot_seats, 2);
  v = view(r);
  cr_assert_eq(v.bot_mask, 6);
  cr_assert_eq(v.nslots, 3);
  cr_assert_eq(v.connected, 1, "the bots have no connection");
  rw_advance(w, 1000);
  v = view(r);
  cr_assert_geq(v.steps_confirmed, 45);
  cr_assert_eq(v.stalls, 0, "a step never waits for a bot");
  cr_assert_eq(v.desyncs, 0);
  /* the player samples input delay + lead steps ahead; a bot decides only
   * the next unconfirmed step (the steps held neutral at the start get no
   * record) */
  cr_assert_eq(v.bot_records, 2 * (v.steps_confirmed + 1 - v.input_delay),
               "%" PRIu64 " records for %" PRIu64 " steps, delay %u",
               v.bot_records, v.steps_confirmed, v.input_delay);
  /* the bots' records reach the player in the confirmed steps */
  uint32_t moved = 0;
  for (uint32_t n = 0; rw_nth(w, a, GK_MSG_CONFIRMED, n, &m); n++) {
    for (uint32_t i = 0; i < m.u.confirmed.count; i++) {
      gk_step_input in;
      gk_wire_step_get(&m.u.confirmed, i, &in);
      cr_assert_eq(in.active_mask, 7);
      size_t isz = m.u.confirmed.input_size;
      for (size_t b = isz; b < 3 * isz; b++) moved |= in.inputs[b];
    }
  }
  cr_assert_neq(moved, 0, "the bots pressed something");
  cr_assert_eq(w->lost, 0, "nothing was sent for a bot's slot");
  /* the creator ends it: the end log counts the bots' records */
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  rw_peer_send(w, a, &m);
  rw_advance(w, 100);
  char line[2048];
  cr_assert(rw_log_last(w, "match_end", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "bot_mask"), 6);
  cr_assert_geq(rw_log_u64(line, "bot_records"), 2 * 45);
  cr_assert_not_null(strstr(line, "\"reason\":\"host\""), "%s", line);
}
