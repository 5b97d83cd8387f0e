/* test_room_quick.c: quick play (QUICK_PLAY) in one process, through the
 * public calls of gk_room with time set by hand (room_world.h): rooms are
 * packed, a full one starts by itself, nobody starts or joins one by
 * code, a seat left is taken again, the last one out closes it, and only
 * requests for the same room share one. */
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

TestSuite(room_quick, .init = setup, .fini = teardown, .timeout = 30);

static gk_wire_quick_joined joined(uint32_t id) {
  gk_wire_msg m;
  cr_assert(rw_last(w, id, GK_MSG_QUICK_JOINED, &m), "no QUICK_JOINED");
  return m.u.quick_joined;
}

static int error_of(uint32_t id) {
  gk_wire_msg m;
  cr_assert(rw_last(w, id, GK_MSG_ERROR, &m), "no ERROR");
  return m.u.error.code;
}

Test(room_quick,
     three_requests_for_two_seats_fill_one_room_that_starts_and_open_another) {
  uint32_t a = rw_connect(w), b = rw_connect(w), c = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 2, NULL);
  cr_assert_not_null(r);
  cr_assert_eq(joined(a).slot, 0);
  cr_assert_eq(joined(a).players, 1);
  cr_assert_str_eq(joined(a).code, gk_room_code(r));
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY);
  cr_assert_eq(rw_quick(w, b, "survivors", 2, NULL), r, "the open room");
  cr_assert_eq(joined(b).slot, 1);
  cr_assert_eq(joined(b).players, 2);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING, "full: it started");
  gk_wire_msg m;
  cr_assert(rw_last(w, a, GK_MSG_MATCH_START, &m));
  cr_assert_eq(m.u.match_start.slot, 0);
  cr_assert(rw_last(w, b, GK_MSG_MATCH_START, &m));
  cr_assert_eq(m.u.match_start.slot, 1);
  gk_room *r2 = rw_quick(w, c, "survivors", 2, NULL);
  cr_assert_not_null(r2);
  cr_assert_neq(r2, r, "a playing room takes nobody");
  cr_assert_eq(joined(c).slot, 0);
  gk_room_view v;
  gk_room_view_of(r2, &v);
  cr_assert(v.quick);
  cr_assert(v.listed, "a quick-play room is public");
  cr_assert_eq(gk_room_quick_free(r2), 1);
}

Test(room_quick, nobody_starts_a_quick_play_room_or_joins_it_by_code) {
  uint32_t a = rw_connect(w), b = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 3, NULL);
  rw_start(w, a);
  cr_assert_eq(error_of(a), GK_EPERM);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY);
  rw_join(w, b, gk_room_code(r));
  cr_assert_eq(error_of(b), GK_EPERM);
  cr_assert_null(rw_conn_of(w, b)->rc.room);
  rw_end_match(w, a, GK_WIRE_END_HOST);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY, "END_MATCH: no owner");
}

Test(room_quick, a_seat_left_in_the_lobby_is_taken_by_the_next_player) {
  uint32_t a = rw_connect(w), b = rw_connect(w), c = rw_connect(w),
           d = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 3, NULL);
  rw_quick(w, b, "survivors", 3, NULL);
  rw_disconnect(w, a); /* slot 0 leaves: the room stays */
  cr_assert_eq(rw_room(w, gk_room_code(r)), r);
  cr_assert_eq(gk_room_quick_free(r), 2);
  cr_assert_eq(rw_quick(w, c, "survivors", 3, NULL), r);
  cr_assert_eq(joined(c).slot, 0, "the seat left");
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_LOBBY);
  cr_assert_eq(rw_quick(w, d, "survivors", 3, NULL), r);
  cr_assert_eq(joined(d).slot, 2);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING);
  gk_room_view v;
  gk_room_view_of(r, &v);
  cr_assert_eq(v.active_mask, 7);
}

Test(room_quick, the_last_player_leaving_closes_a_quick_play_lobby) {
  uint32_t a = rw_connect(w), b = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 3, NULL);
  char code[GK_WIRE_CODE_LEN + 1];
  memcpy(code, gk_room_code(r), sizeof(code));
  rw_quick(w, b, "survivors", 3, NULL);
  rw_disconnect(w, b);
  cr_assert_not_null(rw_room(w, code));
  rw_disconnect(w, a);
  cr_assert_null(rw_room(w, code));
}

Test(room_quick,
     only_requests_for_the_same_genre_seats_and_options_share_a_room) {
  uint32_t a = rw_connect(w), b = rw_connect(w), c = rw_connect(w),
           d = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 3, NULL);
  gk_room *other_seats = rw_quick(w, b, "survivors", 4, NULL);
  gk_room *other_options =
      rw_quick(w, c, "survivors", 3, "{\"room\":{\"listed\":true}}");
  cr_assert(other_seats && other_seats != r);
  cr_assert(other_options && other_options != r &&
            other_options != other_seats);
  cr_assert_eq(rw_quick(w, d, "survivors", 3, NULL), r);
}

Test(room_quick, quick_play_with_server_bots_is_refused_and_makes_no_room) {
  uint32_t a = rw_connect(w);
  cr_assert_null(rw_quick(w, a, "survivors", 3, "{\"room\":{\"bots\":1}}"));
  cr_assert_eq(error_of(a), GK_EINVAL);
  cr_assert_eq(w->nrooms, 0);
}

Test(room_quick, a_quick_play_for_a_genre_not_offered_is_refused) {
  uint32_t a = rw_connect(w);
  cr_assert_null(rw_quick(w, a, "no-such-genre", 2, NULL));
  cr_assert_eq(error_of(a), GK_ENOTFOUND);
  cr_assert_eq(w->nrooms, 0);
}

Test(room_quick,
     players_asking_again_with_the_same_rematch_code_share_a_new_room) {
  uint32_t a = rw_connect(w), b = rw_connect(w), c = rw_connect(w),
           d = rw_connect(w);
  gk_room *open = rw_quick(w, a, "survivors", 3, NULL);
  const char *again = "{\"room\":{\"rematch\":\"K7QX\"}}";
  gk_room *r = rw_quick(w, b, "survivors", 3, again);
  cr_assert(r && r != open, "a rematch is no open room's");
  cr_assert_eq(rw_quick(w, c, "survivors", 3, again), r);
  cr_assert_neq(
      rw_quick(w, d, "survivors", 3, "{\"room\":{\"rematch\":\"ZZZ4\"}}"), r);
  uint32_t e = rw_connect(w);
  cr_assert_null(rw_quick(w, e, "survivors", 3,
                          "{\"room\":{\"rematch\":\"not a code\"}}"));
  gk_wire_msg m;
  cr_assert(rw_last(w, e, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EINVAL);
}
