/* test_room_rejoin.c: a player whose connection goes keeps its slot for
 * reconnect.hold_ms and takes it back from a snapshot on a new connection
 * with its secret (REJOIN_ROOM); a wrong secret is refused; a hold that
 * expires removes the player. Players are the real peer engine
 * (room_world.h), time is set by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"
#include "room_world.h"

#define NS_PER_MS UINT64_C(1000000)

static rw_world *w;

static void setup(void) {
  w = rw_new();
  w->cfg.reconnect_hold_ms = 2000;
  w->cfg.stall_notice_ms = 200;
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_rejoin, .init = setup, .fini = teardown, .timeout = 30);

static gk_room_view view(const gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  return v;
}

/* The secret RECONNECT_SECRET gave connection `id` (for its slot). */
static void secret_of(uint32_t id, uint32_t slot,
                      uint8_t out[GK_WIRE_SECRET_LEN]) {
  gk_wire_msg m;
  cr_assert(rw_last(w, id, GK_MSG_RECONNECT_SECRET, &m));
  cr_assert_eq(m.u.secret.slot, slot);
  memcpy(out, m.u.secret.secret, GK_WIRE_SECRET_LEN);
}

/* A two-player match 400 ms in, then slot 1's connection goes; *secret
 * gets slot 1's secret. */
static gk_room *match_with_one_gone(uint32_t *id,
                                    uint8_t secret[GK_WIRE_SECRET_LEN]) {
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 400);
  secret_of(id[1], 1, secret);
  rw_disconnect(w, id[1]);
  return r;
}

/* REJOIN_ROOM for slot 1 of r from a new connection, sent as is. */
static uint32_t rejoin_raw(gk_room *r, const uint8_t *secret) {
  uint32_t c = rw_connect(w);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_REJOIN_ROOM;
  memcpy(m.u.rejoin.code, gk_room_code(r), GK_WIRE_CODE_LEN + 1);
  m.u.rejoin.slot = 1;
  memcpy(m.u.rejoin.secret, secret, GK_WIRE_SECRET_LEN);
  rw_send(w, c, &m);
  return c;
}

Test(room_rejoin, a_dropped_player_is_held_and_the_match_waits_for_it) {
  uint32_t id[2];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  gk_room *r = match_with_one_gone(id, secret);
  cr_assert_eq(w->host.stats.players_held, 1);
  char line[2048];
  cr_assert(rw_log_last(w, "player_away", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "slot"), 1);
  cr_assert_eq(rw_log_u64(line, "hold_ms"), 2000);
  uint64_t at = view(r).steps_confirmed;
  rw_advance(w, 600);
  gk_room_view v = view(r);
  cr_assert_eq(v.connected, 1);
  cr_assert_eq(v.active_mask, 3, "held, not removed");
  cr_assert_leq(v.steps_confirmed, at + 8, "the match stalls on slot 1");
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_STALL, &m));
  cr_assert_eq(m.u.stall.awaited, 2);
  cr_assert_eq(rw_count(w, id[0], GK_MSG_REMOVE_PLAYER), 0);
}

/* Checks what a rejoiner got: MATCH_START for its slot, its secret again,
 * then SNAPSHOT_BEGIN (kind REJOIN, the referee's head) and every chunk. */
static void check_rejoin_msgs(uint32_t c, uint64_t head,
                              const uint8_t *secret) {
  gk_wire_msg m;
  cr_assert(rw_nth(w, c, 0, 0, &m));
  cr_assert_eq(m.type, GK_MSG_MATCH_START);
  cr_assert_eq(m.u.match_start.slot, 1);
  cr_assert_eq(m.u.match_start.active_mask, 3);
  cr_assert(rw_nth(w, c, 0, 1, &m));
  cr_assert_eq(m.type, GK_MSG_RECONNECT_SECRET);
  cr_assert_eq(memcmp(m.u.secret.secret, secret, GK_WIRE_SECRET_LEN), 0);
  cr_assert(rw_nth(w, c, 0, 2, &m));
  cr_assert_eq(m.type, GK_MSG_SNAPSHOT_BEGIN);
  cr_assert_eq(m.u.snap_begin.kind, GK_WIRE_SNAP_REJOIN);
  cr_assert_eq(m.u.snap_begin.step, head);
  cr_assert_geq(m.u.snap_begin.next_input, head);
  cr_assert_gt(m.u.snap_begin.total, 0);
  uint32_t chunks = m.u.snap_begin.chunks;
  cr_assert_gt(chunks, 0);
  for (uint32_t i = 0; i < chunks; i++) {
    cr_assert(rw_nth(w, c, 0, 3 + i, &m));
    cr_assert_eq(m.type, GK_MSG_SNAPSHOT_CHUNK);
    cr_assert_eq(m.u.snap_chunk.index, i);
  }
}

Test(room_rejoin,
     a_rejoin_with_the_secret_takes_the_slot_back_from_a_snapshot) {
  uint32_t id[2];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  gk_room *r = match_with_one_gone(id, secret);
  rw_advance(w, 300);
  uint64_t head = r->session.loop.steps;
  uint32_t c = rw_connect(w);
  rw_player(w, c);
  cr_assert_eq(gk_net_peer_rejoin(&rw_conn_of(w, c)->peer,
                                  w->now_ms * NS_PER_MS, gk_room_code(r), 1,
                                  secret, NULL),
               0);
  rw_pump(w);
  cr_assert_eq(w->host.stats.rejoins, 1);
  check_rejoin_msgs(c, head, secret);
  cr_assert_eq(rw_conn_of(w, c)->snapshots, 1, "its player adopted it");
  cr_assert_eq(rw_conn_of(w, c)->rc.room, r);
  cr_assert_eq(rw_conn_of(w, c)->rc.slot, 1);
  gk_room_view v = view(r);
  cr_assert_eq(v.conn[1], c);
  cr_assert_eq(v.connected, 3);
  char line[2048];
  cr_assert(rw_log_last(w, "player_rejoined", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "away_ms"), 300);
  cr_assert_eq(rw_log_u64(line, "snapshot_step"), head);
  /* the match goes on, the rejoiner in step with the referee */
  rw_advance(w, 600);
  v = view(r);
  cr_assert_gt(v.steps_confirmed, head + 25);
  cr_assert_eq(v.desyncs, 0);
  const gk_net_peer *p = &rw_conn_of(w, c)->peer;
  uint64_t mine = 0, ref = 0, k = head + 20;
  cr_assert_eq(gk_loop_hash_at(&p->loop, k, &mine), 0);
  cr_assert_eq(gk_loop_hash_at(&r->session.loop, k, &ref), 0);
  cr_assert_eq(mine, ref);
  cr_assert_gt(p->stats.samples, 20, "it samples again");
}

Test(room_rejoin, a_rejoin_with_a_wrong_secret_is_refused_with_eauth) {
  uint32_t id[2];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  gk_room *r = match_with_one_gone(id, secret);
  secret[3] ^= 0x10;
  uint32_t c = rejoin_raw(r, secret);
  gk_wire_msg m;
  cr_assert_eq(rw_count(w, c, 0), 1);
  cr_assert(rw_last(w, c, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EAUTH);
  cr_assert_str_eq(m.u.error.text, "wrong reconnect secret for that slot");
  cr_assert_eq(rw_conn_of(w, c)->strikes, 1);
  cr_assert_null(rw_conn_of(w, c)->rc.room);
  cr_assert_eq(w->host.stats.rejoin_bad_secret, 1);
  cr_assert_eq(w->host.stats.rejoins_refused, 1);
  cr_assert_eq(w->host.stats.rejoins, 0);
  cr_assert_eq(view(r).conn[1], GK_ROOM_NO_CONN, "still held");
  /* the right one still works */
  secret[3] ^= 0x10;
  uint32_t d = rejoin_raw(r, secret);
  cr_assert_eq(w->host.stats.rejoins, 1);
  cr_assert_eq(view(r).conn[1], d);
}

Test(room_rejoin, a_hold_that_expires_removes_the_player) {
  w->cfg.reconnect_hold_ms = 500;
  uint32_t id[2];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  gk_room *r = match_with_one_gone(id, secret);
  rw_advance(w, 490);
  cr_assert_eq(w->host.stats.holds_expired, 0);
  cr_assert_eq(view(r).active_mask, 3);
  rw_advance(w, 20);
  cr_assert_eq(w->host.stats.holds_expired, 1);
  char line[2048];
  cr_assert(rw_log_last(w, "hold_expired", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "slot"), 1);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_REMOVE_PLAYER, &m));
  cr_assert_eq(m.u.remove.slot, 1);
  uint64_t at = view(r).steps_confirmed;
  rw_advance(w, 400);
  gk_room_view v = view(r);
  cr_assert_eq(v.active_mask, 1);
  cr_assert_gt(v.steps_confirmed, at + 15, "slot 0 plays on alone");
  /* too late now, even with the secret */
  uint32_t c = rejoin_raw(r, secret);
  cr_assert(rw_last(w, c, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EEXPIRED);
  cr_assert_eq(w->host.stats.rejoins, 0);
}

Test(room_rejoin, a_rejoin_while_the_old_connection_is_up_takes_the_slot_over) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 300);
  uint8_t secret[GK_WIRE_SECRET_LEN];
  secret_of(id[1], 1, secret);
  uint32_t c = rejoin_raw(r, secret);
  cr_assert_eq(w->host.stats.rejoin_takeovers, 1);
  cr_assert_eq(view(r).conn[1], c);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[1], GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EEXIST);
  cr_assert_eq(rw_conn_of(w, id[1])->closes, 1);
  cr_assert_null(rw_conn_of(w, id[1])->rc.room);
  rw_pump(w); /* the old connection's close happens */
  cr_assert_not(rw_conn_of(w, id[1])->used);
  cr_assert_eq(view(r).conn[1], c, "its end touches no room");
  cr_assert_eq(w->host.stats.players_held, 0);
}

Test(room_rejoin, a_held_slot_plays_neutral_with_while_away_neutral) {
  w->cfg.reconnect_neutral = 1;
  uint32_t id[2];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  gk_room *r = match_with_one_gone(id, secret);
  uint64_t gone_at = r->session.inbuf.confirmed;
  uint32_t seen = rw_count(w, id[0], GK_MSG_CONFIRMED);
  rw_advance(w, 600);
  gk_room_view v = view(r);
  cr_assert_eq(v.stalls, 0, "nobody waits for the held slot");
  cr_assert_gt(v.steps_confirmed, gone_at + 25);
  cr_assert_eq(v.active_mask, 3, "still held");
  /* past what it sampled before it went, its records are neutral */
  uint64_t checked = 0;
  gk_wire_msg m;
  for (uint32_t n = seen; rw_nth(w, id[0], GK_MSG_CONFIRMED, n, &m); n++) {
    for (uint32_t i = 0; i < m.u.confirmed.count; i++) {
      gk_step_input in;
      gk_wire_step_get(&m.u.confirmed, i, &in);
      if (in.step < gone_at + 8) continue;
      size_t isz = m.u.confirmed.input_size;
      for (size_t b = isz; b < 2 * isz; b++)
        cr_assert_eq(in.inputs[b], 0, "step %llu", (unsigned long long)in.step);
      checked++;
    }
  }
  cr_assert_gt(checked, 20);
}

/* The steps a match confirmed, until it confirmed `step`; fails the test
 * if that takes more than a minute of its time. */
static void play_to(gk_room *r, uint64_t step) {
  for (int ms = 0; view(r).steps_confirmed < step; ms++) {
    cr_assert_lt(ms, 60000, "step %llu never came", (unsigned long long)step);
    rw_advance(w, 1);
  }
}

/* A match of 2 in which slot 1 drops at step 300 and rejoins after
 * `away_ms`; it ends (END_MATCH from the creator) at step 900. Returns
 * the match_end line, in out. */
static void drop_and_rejoin(uint64_t away_ms, char *out, size_t cap) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  play_to(r, 300);
  uint8_t secret[GK_WIRE_SECRET_LEN];
  secret_of(id[1], 1, secret);
  rw_disconnect(w, id[1]);
  rw_advance(w, away_ms);
  uint32_t c = rw_connect(w);
  rw_player(w, c);
  cr_assert_eq(gk_net_peer_rejoin(&rw_conn_of(w, c)->peer,
                                  w->now_ms * NS_PER_MS, gk_room_code(r), 1,
                                  secret, NULL),
               0);
  rw_pump(w);
  cr_assert_eq(w->host.stats.rejoins, 1);
  play_to(r, 900);
  rw_end_match(w, id[0], GK_WIRE_END_HOST);
  rw_advance(w, 10);
  cr_assert(rw_log_last(w, "match_end", out, cap));
}

Test(room_rejoin,
     a_600_ms_drop_and_a_rejoin_is_one_stall_and_the_steps_after_are_on_time) {
  char line[2048];
  drop_and_rejoin(600, line, sizeof(line));
  uint64_t confirmed = rw_log_u64(line, "steps_confirmed");
  uint64_t late = rw_log_u64(line, "steps_late");
  cr_assert_geq(confirmed, 900, "%s", line);
  cr_assert_leq(late * 20, confirmed, "at most 5%% late: %s", line);
  cr_assert_eq(rw_log_u64(line, "stalls"), 1, "%s", line);
  /* the schedule moved by the wait: the drop, less the steps slot 0 could
   * sample ahead (input delay 2 + lead 4, 20 ms each) */
  uint64_t stalled = rw_log_u64(line, "stalled_ms");
  cr_assert(stalled >= 600 - 6 * 20 && stalled <= 600 + 100, "%s", line);
  /* every step's confirm latency went to env.confirmed, and adds up to
   * what match_end and the rooms' counters say */
  cr_assert_eq(w->confirms, confirmed, "%s", line);
  cr_assert_eq(w->confirm_ms, rw_log_u64(line, "confirm_ms"), "%s", line);
  cr_assert_leq(w->confirm_ms_max, 100, "%s", line);
  const gk_room_stats *st = &w->host.stats;
  cr_assert_eq(st->steps_confirmed, confirmed);
  cr_assert_eq(st->steps_late, late);
  cr_assert_eq(st->stalls, 1);
  cr_assert_eq(st->stalled_ms, stalled);
  cr_assert_eq(st->confirm_ms, w->confirm_ms);
  cr_assert_eq(st->stall_notices, rw_log_u64(line, "stall_notices"));
}
