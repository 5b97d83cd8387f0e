/* test_room_lobby.c: a room's lobby and its host's actions, through the
 * public calls of gk_room, with time set by hand (room_world.h): create,
 * join, a full room, START_MATCH from the wrong player and the right one,
 * END_MATCH in a lobby, the creator leaving. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "room_world.h"

static rw_world *w;

static void setup(void) {
  w = rw_new();
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_lobby, .init = setup, .fini = teardown, .timeout = 30);

/* A survivors room for `max` players created by a new connection. */
static gk_room *lobby(uint32_t max, uint32_t *creator) {
  *creator = rw_connect(w);
  gk_room *r = rw_create(w, *creator, "survivors", max, 0, NULL);
  cr_assert_not_null(r);
  return r;
}

Test(room_lobby, a_created_room_seats_its_creator_in_slot_0) {
  uint32_t a;
  gk_room *r = lobby(3, &a);
  gk_wire_msg m;
  cr_assert_eq(rw_count(w, a, 0), 1);
  cr_assert(rw_last(w, a, GK_MSG_ROOM_CREATED, &m));
  cr_assert_eq(m.u.room.slot, 0);
  cr_assert(gk_wire_code_valid(m.u.room.code));
  cr_assert_str_eq(m.u.room.code, gk_room_code(r));
  cr_assert_eq(w->host.stats.rooms_created, 1);
  cr_assert_eq(rw_conn_of(w, a)->admits, 1);
  cr_assert_eq(rw_conn_of(w, a)->rc.room, r);
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.state, GK_ROOM_LOBBY);
  cr_assert_str_eq(v.genre, "survivors");
  cr_assert_eq(v.max_players, 3);
  cr_assert_eq(v.input_delay, 2, "the server's input_delay for a 0");
  cr_assert_eq(v.nslots, 1);
  cr_assert_eq(v.conn[0], a);
  cr_assert_eq(v.conn[1], GK_ROOM_NO_CONN);
  cr_assert_eq(v.connected, 1);
  cr_assert_eq(rw_log_count(w, "room_created"), 1);
}

Test(room_lobby, a_create_for_a_genre_not_offered_is_refused_with_its_name) {
  uint32_t a = rw_connect(w);
  cr_assert_null(rw_create(w, a, "no-such-genre", 2, 0, NULL));
  gk_wire_msg m;
  cr_assert(rw_last(w, a, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ENOTFOUND);
  cr_assert_str_eq(m.u.error.text, "genre not offered: no-such-genre");
  cr_assert_eq(w->host.stats.rooms_created, 0);
  cr_assert_eq(w->host.stats.refused, 1);
  cr_assert_null(rw_conn_of(w, a)->rc.room);
}

Test(room_lobby, a_join_gets_the_next_slot_and_a_full_room_refuses_with_efull) {
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w), c = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  gk_wire_msg m;
  cr_assert(rw_last(w, b, GK_MSG_JOINED, &m));
  cr_assert_eq(m.u.joined.slot, 1);
  cr_assert_eq(m.u.joined.players, 2);
  cr_assert_eq(rw_conn_of(w, b)->rc.room, r);
  cr_assert_eq(rw_conn_of(w, b)->rc.slot, 1);
  rw_join(w, c, gk_room_code(r));
  cr_assert_eq(rw_count(w, c, GK_MSG_JOINED), 0);
  cr_assert(rw_last(w, c, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EFULL);
  cr_assert_str_eq(m.u.error.text, "the room is full");
  cr_assert_null(rw_conn_of(w, c)->rc.room);
  cr_assert_eq(rw_conn_of(w, c)->strikes, 0, "a full room is no offence");
  cr_assert_eq(w->host.stats.refused, 1);
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.nslots, 2);
  cr_assert_eq(v.conn[1], b);
}

/* A guest who leaves the lobby frees the seat: the next joiner takes the
 * lowest free one, and a seat nobody holds at the end is not counted. */
Test(room_lobby, a_seat_a_guest_left_is_the_next_joiners_and_is_not_counted) {
  uint32_t a;
  gk_room *r = lobby(3, &a);
  uint32_t b = rw_connect(w), c = rw_connect(w), d = rw_connect(w),
           e = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_join(w, c, gk_room_code(r));
  rw_disconnect(w, b);
  cr_assert_eq(rw_log_count(w, "player_left"), 1);
  rw_join(w, d, gk_room_code(r));
  gk_wire_msg m;
  cr_assert(rw_last(w, d, GK_MSG_JOINED, &m), "the room had a free seat");
  cr_assert_eq(m.u.joined.slot, 1, "the seat b left");
  cr_assert_eq(m.u.joined.players, 3);
  rw_join(w, e, gk_room_code(r));
  cr_assert(rw_last(w, e, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EFULL);
  rw_disconnect(w, c); /* the last seat: the room counts 2 again */
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.nslots, 2);
  rw_start(w, a);
  cr_assert(rw_last(w, d, GK_MSG_MATCH_START, &m));
  cr_assert_eq(m.u.match_start.slot, 1);
  cr_assert_eq(m.u.match_start.active_mask, 3, "a and d, nobody for c");
}

Test(room_lobby, a_join_with_an_unknown_code_is_refused_and_struck) {
  uint32_t a = rw_connect(w);
  rw_join(w, a, "AAAAAAAAAAAAAAAA");
  gk_wire_msg m;
  cr_assert(rw_last(w, a, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ENOTFOUND);
  cr_assert_str_eq(m.u.error.text, "no room with that code");
  cr_assert_eq(rw_conn_of(w, a)->strikes, 1);
}

Test(room_lobby, a_start_by_a_non_creator_is_refused_with_a_strike) {
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_start(w, b);
  gk_wire_msg m;
  cr_assert(rw_last(w, b, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EPERM);
  cr_assert_str_eq(m.u.error.text, "only the room's creator starts");
  cr_assert_eq(rw_conn_of(w, b)->strikes, 1);
  cr_assert_eq(rw_count(w, a, GK_MSG_MATCH_START), 0);
  cr_assert_eq(rw_count(w, b, GK_MSG_MATCH_START), 0);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY);
  cr_assert_eq(w->host.stats.matches_started, 0);
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.strikes, 1, "the room counts the strike too");
}

Test(room_lobby, a_start_by_the_creator_sends_match_start_to_each_slot) {
  uint32_t a;
  gk_room *r = lobby(3, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_start(w, a);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING);
  cr_assert_eq(w->host.stats.matches_started, 1);
  uint32_t ids[2] = {a, b};
  uint64_t seed = 0;
  for (uint32_t i = 0; i < 2; i++) {
    gk_wire_msg m;
    cr_assert_eq(rw_count(w, ids[i], GK_MSG_MATCH_START), 1);
    cr_assert(rw_last(w, ids[i], GK_MSG_MATCH_START, &m));
    const gk_wire_match_start *ms = &m.u.match_start;
    cr_assert_eq(ms->slot, i);
    cr_assert_eq(ms->players, 3, "survivors takes late joiners: the cap");
    cr_assert_eq(ms->active_mask, 3);
    cr_assert_eq(ms->first_step, 0);
    cr_assert_eq(ms->input_delay, 2);
    cr_assert_eq(ms->lead, 8, "survivors predicts: the window, 8");
    cr_assert_eq(ms->step_seconds.num, 1);
    cr_assert_eq(ms->step_seconds.den, 50);
    cr_assert_str_eq(ms->genre, "survivors");
    if (i == 0) seed = ms->seed;
    cr_assert_eq(ms->seed, seed, "one seed for every player");
    cr_assert(rw_last(w, ids[i], GK_MSG_RECONNECT_SECRET, &m));
    cr_assert_eq(m.u.secret.slot, i);
  }
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.active_mask, 3);
  cr_assert_eq(rw_log_count(w, "match_start"), 1);
}

Test(room_lobby, a_start_twice_is_refused_as_not_in_a_lobby) {
  uint32_t a;
  gk_room *r = lobby(1, &a);
  rw_start(w, a);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING);
  rw_start(w, a);
  gk_wire_msg m;
  cr_assert(rw_last(w, a, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ESTATE);
  cr_assert_str_eq(m.u.error.text, "not in a room's lobby");
  cr_assert_eq(rw_count(w, a, GK_MSG_MATCH_START), 1);
  cr_assert_eq(w->host.stats.matches_started, 1);
}

Test(room_lobby, end_match_from_the_creator_in_a_lobby_closes_it) {
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_end_match(w, a, GK_WIRE_END_HOST);
  cr_assert_eq(w->ngone, 1);
  cr_assert_eq(w->gone[0], r);
  cr_assert_eq(w->nrooms, 0);
  cr_assert_eq(w->host.stats.rooms_closed, 1);
  uint32_t ids[2] = {a, b};
  for (uint32_t i = 0; i < 2; i++) {
    gk_wire_msg m;
    cr_assert(rw_last(w, ids[i], GK_MSG_MATCH_END, &m));
    cr_assert_eq(m.u.match_end.reason, GK_WIRE_END_HOST);
    cr_assert_eq(m.u.match_end.step, 0);
    cr_assert_null(rw_conn_of(w, ids[i])->rc.room);
  }
  char line[2048];
  cr_assert(rw_log_last(w, "room_closed", line, sizeof(line)));
  cr_assert_not_null(strstr(line, "\"reason\":\"host\""), "%s", line);
}

Test(room_lobby,
     end_match_from_a_joiner_in_a_lobby_is_struck_and_closes_nothing) {
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_end_match(w, b, GK_WIRE_END_HOST);
  cr_assert_eq(w->ngone, 0);
  cr_assert_eq(rw_conn_of(w, b)->strikes, 1);
  cr_assert_eq(rw_count(w, a, GK_MSG_MATCH_END), 0);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY);
}

Test(room_lobby, the_creator_leaving_a_lobby_closes_it) {
  uint32_t a;
  gk_room *r = lobby(3, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_disconnect(w, a);
  cr_assert_eq(w->ngone, 1);
  cr_assert_eq(w->gone[0], r);
  gk_wire_msg m;
  cr_assert(rw_last(w, b, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ECLOSED);
  cr_assert_str_eq(m.u.error.text, "the room's creator left");
  cr_assert_null(rw_conn_of(w, b)->rc.room);
  cr_assert_eq(w->host.stats.rooms_closed, 1);
}

Test(room_lobby, a_joiner_leaving_a_lobby_frees_nothing_but_its_slot) {
  uint32_t a;
  gk_room *r = lobby(3, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  rw_disconnect(w, b);
  cr_assert_eq(w->ngone, 0);
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.connected, 1);
  cr_assert_eq(v.conn[1], GK_ROOM_NO_CONN);
  cr_assert_eq(rw_count(w, a, GK_MSG_ERROR), 0);
}

Test(room_lobby, token_mode_binds_each_slot_to_its_client_id_at_the_start) {
  w->token_mode = 1;
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  uint64_t id = 0;
  cr_assert_eq(gk_room_slot_client(r, 1, &id), 0, "not before the start");
  rw_start(w, a);
  cr_assert_eq(gk_room_slot_client(r, 0, &id), 1);
  cr_assert_eq(id, 1000u + a);
  cr_assert_eq(gk_room_slot_client(r, 1, &id), 1);
  cr_assert_eq(id, 1000u + b);
  cr_assert_eq(gk_room_slot_client(r, 2, &id), 0, "no such slot");
}

Test(room_lobby, close_lobby_sends_its_error_to_every_player_and_frees_it) {
  uint32_t a;
  gk_room *r = lobby(2, &a);
  uint32_t b = rw_connect(w);
  rw_join(w, b, gk_room_code(r));
  gk_room_send_shutdown(r, 1500);
  gk_wire_msg m;
  cr_assert(rw_last(w, b, GK_MSG_SHUTDOWN, &m));
  cr_assert_eq(m.u.shutdown_grace_ms, 1500);
  cr_assert_eq(rw_count(w, a, GK_MSG_SHUTDOWN), 1);
  gk_room_close_lobby(r, GK_EEXPIRED, "the lobby timed out\n(600 s)",
                      GK_WIRE_END_HOST, w->now_ms);
  cr_assert_eq(w->ngone, 1);
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert(rw_last(w, i ? b : a, GK_MSG_ERROR, &m));
    cr_assert_eq(m.u.error.code, GK_EEXPIRED);
    cr_assert_str_eq(m.u.error.text, "the lobby timed out?(600 s)",
                     "printable ASCII only");
  }
}
