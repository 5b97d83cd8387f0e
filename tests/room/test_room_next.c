/* test_room_next.c: Play again for a room its host made (NEXT_ROOM,
 * gk_room_next.c), with time set by hand: the host names its next room
 * on the old room's connection, after the room closed or while it still
 * drains, and the room's others still in no room get the code, once;
 * nobody else may. Players are the real peer engine (room_world.h). */
#include <criterion/criterion.h>
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

TestSuite(room_next, .init = setup, .fini = teardown, .timeout = 30);

#define NEXT "K7QX222222222222"

static void next_from(uint32_t id, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_NEXT_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN + 1);
  rw_send(w, id, &m);
}

static uint32_t spectate(const gk_room *r) {
  uint32_t s = rw_connect(w);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SPECTATE;
  memcpy(m.u.room.code, gk_room_code(r), GK_WIRE_CODE_LEN + 1);
  rw_send(w, s, &m);
  return s;
}

static void end_match(uint32_t host) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  rw_peer_send(w, host, &m);
  rw_pump(w);
}

/* A match of n players (ids[]) with a spectator (*s), played 300 ms,
 * ended by its host and closed. */
static void closed_match(uint32_t n, uint32_t *ids, uint32_t *s) {
  gk_room *r = rw_match(w, "survivors", n, n, NULL, ids);
  *s = spectate(r);
  rw_advance(w, 300);
  end_match(ids[0]);
  rw_advance(w, 300);
  cr_assert_eq(w->ngone, 1, "the room closed");
}

static void expect_refused(uint32_t id, uint32_t strikes) {
  gk_wire_msg m;
  cr_assert(rw_last(w, id, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_EPERM);
  cr_assert_eq(rw_conn_of(w, id)->strikes, strikes);
}

Test(room_next, the_hosts_next_room_reaches_its_players_and_watchers_once) {
  uint32_t id[3], s;
  closed_match(3, id, &s);
  /* one player went on to a room of its own: it is not told */
  cr_assert_not_null(rw_create(w, id[2], "survivors", 2, 0, NULL));
  next_from(id[0], NEXT);
  gk_wire_msg m;
  for (uint32_t who = 0; who < 2; who++) {
    uint32_t to = who ? s : id[1];
    cr_assert_eq(rw_count(w, to, GK_MSG_NEXT_ROOM), 1, "to %u", to);
    cr_assert(rw_last(w, to, GK_MSG_NEXT_ROOM, &m));
    cr_assert_str_eq(m.u.room.code, NEXT);
  }
  cr_assert_eq(rw_count(w, id[2], GK_MSG_NEXT_ROOM), 0, "in a room since");
  cr_assert_eq(rw_count(w, id[0], GK_MSG_NEXT_ROOM), 0, "not to the host");
  cr_assert_eq(w->host.stats.next_rooms, 1);
  char line[1024];
  cr_assert(rw_log_last(w, "next_room", line, sizeof line));
  cr_assert_eq(rw_log_u64(line, "told"), 2, "%s", line);
  /* once: the host's right ended with it */
  next_from(id[0], NEXT);
  expect_refused(id[0], 1);
  cr_assert_eq(rw_count(w, id[1], GK_MSG_NEXT_ROOM), 1);
  cr_assert_eq(w->host.stats.next_rooms, 1);
}

Test(room_next, a_guests_or_a_watchers_next_room_is_refused_and_told_nobody) {
  uint32_t id[2], s;
  closed_match(2, id, &s);
  next_from(id[1], NEXT);
  expect_refused(id[1], 1);
  next_from(s, NEXT);
  expect_refused(s, 1);
  /* a connection that was never in a room */
  uint32_t x = rw_connect(w);
  next_from(x, NEXT);
  expect_refused(x, 1);
  cr_assert_eq(rw_count(w, id[0], GK_MSG_NEXT_ROOM), 0);
  cr_assert_eq(rw_count(w, s, GK_MSG_NEXT_ROOM), 0);
  cr_assert_eq(w->host.stats.next_rooms, 0);
  /* the host still may */
  next_from(id[0], NEXT);
  cr_assert_eq(rw_count(w, id[1], GK_MSG_NEXT_ROOM), 1);
  cr_assert_eq(rw_count(w, s, GK_MSG_NEXT_ROOM), 1);
}

Test(room_next, while_the_room_drains_its_seats_are_told_at_once) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 300);
  end_match(id[0]);
  rw_advance(w, 1);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_DRAINING);
  next_from(id[1], NEXT); /* a guest: refused while draining too */
  expect_refused(id[1], 1);
  next_from(id[0], NEXT);
  cr_assert_eq(rw_count(w, id[1], GK_MSG_NEXT_ROOM), 1);
  rw_advance(w, 300);
  cr_assert_eq(w->ngone, 1);
  /* once: the closed room left the host no right to a second */
  next_from(id[0], NEXT);
  expect_refused(id[0], 1);
  cr_assert_eq(rw_count(w, id[1], GK_MSG_NEXT_ROOM), 1);
}

Test(room_next, a_lobby_that_closed_without_a_match_has_no_next_room) {
  uint32_t a = rw_connect(w), b = rw_connect(w);
  gk_room *r = rw_create(w, a, "survivors", 2, 0, NULL);
  cr_assert_not_null(r);
  rw_join(w, b, gk_room_code(r));
  rw_end_match(w, a, GK_WIRE_END_HOST); /* the lobby closes */
  cr_assert_eq(w->ngone, 1);
  next_from(a, NEXT);
  expect_refused(a, 1);
  cr_assert_eq(rw_count(w, b, GK_MSG_NEXT_ROOM), 0);
}
