/* test_room_watch.c: connections that come to a running match: a
 * spectator (a snapshot, then the confirmed steps spectator.delay_steps
 * behind the referee, never earlier) and a late joiner (a genre with
 * late_join: JOINED, MATCH_START, a snapshot, then it plays). Players and
 * watchers are the real peer engine (room_world.h); time is set by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"
#include "room_world.h"

#define NS_PER_MS UINT64_C(1000000)

static rw_world *w;

static void setup(void) {
  w = rw_new();
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_watch, .init = setup, .fini = teardown, .timeout = 30);

static gk_room_view view(const gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  return v;
}

/* A new connection with a peer that asks to watch r. */
static uint32_t spectate(gk_room *r) {
  uint32_t s = rw_connect(w);
  rw_player(w, s);
  cr_assert_eq(gk_net_peer_spectate(&rw_conn_of(w, s)->peer,
                                    w->now_ms * NS_PER_MS, gk_room_code(r),
                                    NULL),
               0);
  rw_pump(w);
  return s;
}

/* Every CONFIRMED spectator `s` got from message `from` on holds only
 * steps at least `delay` behind the referee's head when it was sent; the
 * highest step sent + 1. */
static uint64_t check_behind(uint32_t s, uint32_t from, uint64_t delay) {
  uint64_t top = 0;
  const rw_msg *raw;
  for (uint32_t k = from; (raw = rw_msg_at(w, s, k)) != NULL; k++) {
    gk_wire_msg m;
    cr_assert_eq(gk_wire_decode(raw->bytes, raw->len, &m), 0);
    if (m.type != GK_MSG_CONFIRMED || m.u.confirmed.count == 0) continue;
    uint64_t end = m.u.confirmed.first + m.u.confirmed.count;
    cr_assert_leq(end + delay, raw->steps_at,
                  "steps up to %llu sent with the head at %llu",
                  (unsigned long long)end, (unsigned long long)raw->steps_at);
    if (end > top) top = end;
  }
  return top;
}

Test(room_watch, a_spectator_gets_a_snapshot_then_steps_delay_steps_behind) {
  w->cfg.spectator_delay_steps = 10;
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 400);
  uint64_t head = r->session.loop.steps;
  uint32_t s = spectate(r);
  cr_assert_eq(w->host.stats.spectators_joined, 1);
  cr_assert_eq(view(r).spectators, 1);
  cr_assert(rw_conn_of(w, s)->rc.spectator);
  gk_wire_msg m;
  cr_assert(rw_nth(w, s, 0, 0, &m));
  cr_assert_eq(m.type, GK_MSG_MATCH_START);
  cr_assert(rw_nth(w, s, 0, 1, &m));
  cr_assert_eq(m.type, GK_MSG_SNAPSHOT_BEGIN);
  cr_assert_eq(m.u.snap_begin.kind, GK_WIRE_SNAP_SPECTATE);
  cr_assert_eq(m.u.snap_begin.step, head);
  cr_assert_eq(rw_conn_of(w, s)->snapshots, 1);
  uint32_t after_snapshot = rw_count(w, s, 0);
  /* nothing before the referee is delay_steps past the snapshot */
  rw_advance(w, 8 * 20);
  cr_assert_lt(r->session.loop.steps, head + 10);
  cr_assert_eq(check_behind(s, after_snapshot, 10), 0, "no step yet");
  /* then the steps, one ms at a time, never closer than 10 to the head */
  for (int t = 0; t < 800; t++) {
    rw_advance(w, 1);
    check_behind(s, after_snapshot, 10);
  }
  uint32_t n = 0;
  while (rw_nth(w, s, GK_MSG_CONFIRMED, n, &m) && m.u.confirmed.count == 0)
    n++; /* empty ones carry only the hash acknowledgement */
  cr_assert_gt(m.u.confirmed.count, 0);
  cr_assert_eq(m.u.confirmed.first, head, "from the snapshot's step on");
  uint64_t top = check_behind(s, after_snapshot, 10);
  uint64_t now_head = r->session.loop.steps;
  cr_assert_geq(top + 10 + 2, now_head, "and not far behind: %llu of %llu",
                (unsigned long long)top, (unsigned long long)now_head);
  const gk_net_peer *p = &rw_conn_of(w, s)->peer;
  cr_assert_geq(p->loop.steps + 1, top, "the watcher ran them");
  cr_assert_gt(w->host.stats.spectator_hashes, 0);
  cr_assert_eq(w->host.stats.spectator_desyncs, 0);
  cr_assert_eq(view(r).desyncs, 0);
}

Test(room_watch, spectate_on_a_lobby_is_refused_as_not_running) {
  uint32_t a = rw_connect(w);
  gk_room *r = rw_create(w, a, "survivors", 2, 0, NULL);
  cr_assert_not_null(r);
  uint32_t s = rw_connect(w);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_SPECTATE;
  memcpy(m.u.room.code, gk_room_code(r), GK_WIRE_CODE_LEN + 1);
  rw_send(w, s, &m);
  cr_assert(rw_last(w, s, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ECLOSED);
  cr_assert_str_eq(m.u.error.text, "the room's match is not running");
  cr_assert_eq(w->host.stats.spectators_refused, 1);
}

Test(room_watch, a_late_joiner_gets_joined_match_start_and_a_snapshot) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 3, NULL, id);
  rw_advance(w, 400);
  uint64_t head = r->session.loop.steps;
  uint32_t j = rw_connect(w);
  rw_player(w, j);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, gk_room_code(r), GK_WIRE_CODE_LEN + 1);
  rw_peer_send(w, j, &m);
  rw_pump(w);
  cr_assert(rw_nth(w, j, 0, 0, &m));
  cr_assert_eq(m.type, GK_MSG_JOINED);
  cr_assert_eq(m.u.joined.slot, 2);
  cr_assert_eq(m.u.joined.players, 3);
  cr_assert(rw_nth(w, j, 0, 1, &m));
  cr_assert_eq(m.type, GK_MSG_MATCH_START);
  cr_assert_eq(m.u.match_start.slot, 2);
  cr_assert_eq(m.u.match_start.active_mask, 3, "it is not in the start mask");
  cr_assert(rw_nth(w, j, 0, 2, &m));
  cr_assert_eq(m.type, GK_MSG_RECONNECT_SECRET);
  cr_assert(rw_nth(w, j, 0, 3, &m));
  cr_assert_eq(m.type, GK_MSG_SNAPSHOT_BEGIN);
  cr_assert_eq(m.u.snap_begin.kind, GK_WIRE_SNAP_JOIN);
  cr_assert_eq(m.u.snap_begin.step, head);
  cr_assert_eq(m.u.snap_begin.next_input, head + 2, "J + input delay");
  cr_assert_eq(rw_conn_of(w, j)->snapshots, 1);
  char line[2048];
  cr_assert(rw_log_last(w, "player_joined_late", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "slot"), 2);
  cr_assert_eq(rw_log_u64(line, "snapshot_step"), head);
  rw_advance(w, 600);
  gk_room_view v = view(r);
  cr_assert_eq(v.active_mask, 7);
  cr_assert_eq(v.nslots, 3);
  cr_assert_gt(v.steps_confirmed, head + 25, "nobody waits for the joiner");
  cr_assert_eq(v.desyncs, 0);
  cr_assert_eq(v.stalls, 0);
  const gk_net_peer *p = &rw_conn_of(w, j)->peer;
  uint64_t mine = 0, ref = 0, k = head + 20;
  cr_assert_eq(gk_loop_hash_at(&p->loop, k, &mine), 0);
  cr_assert_eq(gk_loop_hash_at(&r->session.loop, k, &ref), 0);
  cr_assert_eq(mine, ref);
  cr_assert_gt(p->stats.samples, 20);
}

Test(room_watch, a_late_join_of_a_full_room_is_refused_with_efull) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 200);
  uint32_t j = rw_connect(w);
  rw_join(w, j, gk_room_code(r));
  gk_wire_msg m;
  cr_assert_eq(rw_count(w, j, 0), 1);
  cr_assert(rw_last(w, j, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EFULL);
  cr_assert_str_eq(m.u.error.text, "the room is full");
  cr_assert_null(rw_conn_of(w, j)->rc.room);
}

Test(room_watch, a_spectator_that_stops_acknowledging_gets_a_newer_snapshot) {
  w->cfg.spectator_delay_steps = 5;
  w->cfg.spectator_behind_steps = 20;
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 200);
  uint32_t s = rw_connect(w);
  rw_conn_of(w, s)->drop_up = 1ull << GK_MSG_INPUT; /* no acknowledgement */
  rw_player(w, s);
  cr_assert_eq(gk_net_peer_spectate(&rw_conn_of(w, s)->peer,
                                    w->now_ms * NS_PER_MS, gk_room_code(r),
                                    NULL),
               0);
  rw_pump(w);
  uint64_t head = r->session.loop.steps;
  cr_assert_eq(rw_count(w, s, GK_MSG_SNAPSHOT_BEGIN), 1);
  /* 5 + 20 steps later it is too far behind to be sent the old ones */
  rw_advance(w, 22 * 20);
  cr_assert_eq(w->host.stats.spectator_refreshes, 0);
  rw_advance(w, 6 * 20);
  cr_assert_eq(w->host.stats.spectator_refreshes, 1);
  gk_wire_msg m;
  cr_assert_eq(rw_count(w, s, GK_MSG_SNAPSHOT_BEGIN), 2);
  cr_assert(rw_last(w, s, GK_MSG_SNAPSHOT_BEGIN, &m));
  cr_assert_eq(m.u.snap_begin.kind, GK_WIRE_SNAP_REFRESH);
  cr_assert_geq(m.u.snap_begin.step, head + 25);
  cr_assert_eq(rw_log_count(w, "spectator_refresh"), 1);
}

Test(room_watch, a_stall_notice_reaches_the_spectators_too) {
  w->cfg.stall_notice_ms = 200;
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 200);
  uint32_t s = spectate(r);
  rw_conn_of(w, id[1])->mute = 1;
  rw_advance(w, 400);
  gk_wire_msg m;
  cr_assert(rw_last(w, s, GK_MSG_STALL, &m));
  cr_assert_eq(m.u.stall.awaited, 2);
  cr_assert(rw_last(w, id[0], GK_MSG_STALL, &m));
  cr_assert_eq(m.u.stall.awaited, 2);
  cr_assert_eq(view(r).spectators, 1);
  rw_disconnect(w, s);
  cr_assert_eq(view(r).spectators, 0);
  cr_assert_eq(w->host.spectators, 0);
}

/* spectator.max is one limit for the whole server: with 2, a spectator in
 * each of two rooms fills it, and a third is refused in either room. */
Test(room_watch, spectator_max_is_a_limit_on_the_whole_server) {
  w->cfg.spectator_max = 2;
  uint32_t a[2], b[2];
  gk_room *ra = rw_match(w, "survivors", 2, 2, NULL, a);
  gk_room *rb = rw_match(w, "survivors", 2, 2, NULL, b);
  rw_advance(w, 100);
  spectate(ra);
  spectate(rb);
  cr_assert_eq(w->host.spectators, 2);
  uint32_t third = spectate(ra);
  gk_wire_msg m;
  cr_assert(rw_last(w, third, GK_MSG_ERROR, &m), "a third spectator let in");
  cr_assert_eq(m.u.error.code, GK_EFULL);
  cr_assert_str_eq(m.u.error.text,
                   "the server has its spectator.max spectators");
  cr_assert_eq(w->host.stats.spectators_joined, 2);
  cr_assert_eq(view(ra).spectators + view(rb).spectators, 2);
}

/* A spectator speaks for nobody: an INPUT of its that carries records is
 * dropped and is a strike (GK_EPERM); the match does not take them. */
Test(room_watch, a_spectator_s_input_with_records_is_dropped_with_a_strike) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 200);
  uint32_t s = spectate(r);
  rw_advance(w, 50);
  uint64_t unexpected = w->host.stats.drop_unexpected;
  uint32_t strikes = rw_conn_of(w, s)->strikes;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  static const uint8_t records[64];
  m.type = GK_MSG_INPUT;
  m.u.input.slot = 0;
  m.u.input.input_size = (uint8_t)r->genre->sim->input_size;
  m.u.input.count = 1;
  m.u.input.first = r->session.loop.steps + 2;
  m.u.input.records = records;
  rw_send(w, s, &m);
  cr_assert_eq(rw_conn_of(w, s)->strikes, strikes + 1,
               "a spectator's records were not struck");
  cr_assert_eq(w->host.stats.drop_unexpected, unexpected + 1);
  uint64_t before = r->session.loop.steps;
  rw_advance(w, 200); /* the match plays on with its players' records */
  cr_assert_geq(r->session.loop.steps, before + 10, "%llu -> %llu",
                (unsigned long long)before,
                (unsigned long long)r->session.loop.steps);
}
