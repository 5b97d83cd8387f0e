/* test_lobby.c: a room's setup from the players' side (gk_net_lobby), the
 * one implementation both bots use: which request each player sends, what
 * the server's replies mean, and when the host starts the match. Messages
 * go through the codec, as they would on the wire. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_lobby.h"

/* m as the server would send it: encoded and decoded again. */
static gk_wire_msg wire(const gk_wire_msg *m) {
  static uint8_t buf[GK_WIRE_MAX];
  size_t len;
  gk_wire_msg out;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  cr_assert_eq(gk_wire_decode(buf, len, &out), 0);
  return out;
}

static gk_wire_msg room_msg(gk_wire_type type, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = type;
  memcpy(m.u.room.code, code, strlen(code));
  return wire(&m);
}

static gk_wire_msg joined(void) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_JOINED;
  m.u.joined = (gk_wire_joined){.slot = 1, .players = 3};
  return wire(&m);
}

#define CODE "ABCDEFGHIJKLMNOP"

Test(lobby, the_host_creates_the_room_and_the_others_join_with_its_code) {
  gk_net_lobby l;
  gk_net_lobby_room r = {"tally", 3, 4, "{\"start\": 2}", 0};
  cr_assert_eq(gk_net_lobby_init(&l, &r), 0);
  gk_wire_msg m;
  cr_assert_eq(gk_net_lobby_request(&l, 0, &m), 0);
  m = wire(&m);
  cr_assert_eq(m.type, GK_MSG_CREATE_ROOM);
  cr_assert_eq(m.u.create_room.max_players, 3);
  cr_assert_eq(m.u.create_room.input_delay, 4);
  cr_assert_str_eq(m.u.create_room.genre, "tally");
  cr_assert_str_eq(m.u.create_room.config, "{\"start\": 2}");
  cr_assert_eq(m.u.create_room.token_len, 0, "tokens are the caller's");
  cr_assert_eq(gk_net_lobby_request(&l, 1, &m), GK_ESTATE,
               "no code yet: a joiner has nothing to ask for");
  gk_wire_msg c = room_msg(GK_MSG_ROOM_CREATED, CODE);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 1, &c), GK_NET_LOBBY_NONE,
               "ROOM_CREATED is the host's only");
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &c), GK_NET_LOBBY_CREATED);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &c), GK_NET_LOBBY_NONE, "once");
  cr_assert(gk_net_lobby_is_in(&l, 0));
  cr_assert_not(gk_net_lobby_is_in(&l, 1));
  cr_assert_eq(gk_net_lobby_request(&l, 2, &m), 0);
  m = wire(&m);
  cr_assert_eq(m.type, GK_MSG_JOIN_ROOM);
  cr_assert_str_eq(m.u.room.code, CODE);
  cr_assert_eq(m.u.room.role, GK_WIRE_ROLE_PLAYER);
}

Test(lobby, the_host_starts_once_every_starter_is_in_and_only_once) {
  gk_net_lobby l;
  gk_net_lobby_room r = {"tally", 3, 0, NULL, 0};
  cr_assert_eq(gk_net_lobby_init(&l, &r), 0);
  gk_wire_msg m, j = joined(), c = room_msg(GK_MSG_ROOM_CREATED, CODE);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 1, &j), GK_NET_LOBBY_JOINED);
  cr_assert_eq(gk_net_lobby_start(&l, &m), 0, "the host is not in yet");
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &c), GK_NET_LOBBY_CREATED);
  cr_assert_eq(gk_net_lobby_start(&l, &m), 0, "player 2 is not in yet");
  cr_assert_eq(gk_net_lobby_on_msg(&l, 2, &j), GK_NET_LOBBY_JOINED);
  cr_assert_eq(gk_net_lobby_start(&l, &m), 1);
  cr_assert_eq(m.type, GK_MSG_START_MATCH);
  cr_assert(l.start_sent);
  cr_assert_eq(gk_net_lobby_start(&l, &m), 0, "once");
  l.start_sent = 0; /* the caller's send failed */
  cr_assert_eq(gk_net_lobby_start(&l, &m), 1, "given again");
}

Test(lobby, a_place_kept_for_a_late_joiner_does_not_hold_the_start) {
  gk_net_lobby l;
  gk_net_lobby_room r = {"tally", 3, 0, NULL, 2};
  cr_assert_eq(gk_net_lobby_init(&l, &r), 0);
  gk_wire_msg m, j = joined(), c = room_msg(GK_MSG_ROOM_CREATED, CODE);
  cr_assert_eq(gk_net_lobby_request(&l, 0, &m), 0);
  cr_assert_eq(m.u.create_room.max_players, 3, "the room has its place");
  gk_net_lobby_on_msg(&l, 0, &c);
  gk_net_lobby_on_msg(&l, 1, &j);
  cr_assert_eq(gk_net_lobby_start(&l, &m), 1);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 2, &j), GK_NET_LOBBY_JOINED);
  cr_assert(gk_net_lobby_is_in(&l, 2));
  cr_assert_eq(gk_net_lobby_on_msg(&l, 7, &j), GK_NET_LOBBY_JOINED,
               "an index past the room is told, not kept");
  cr_assert_not(gk_net_lobby_is_in(&l, 7));
}

Test(lobby, errors_and_shutdown_end_the_setup_and_the_rest_is_not_its) {
  gk_net_lobby l;
  gk_net_lobby_room r = {"tally", 2, 0, NULL, 0};
  cr_assert_eq(gk_net_lobby_init(&l, &r), 0);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_ERROR;
  m.u.error.code = GK_EFULL;
  strcpy(m.u.error.text, "room is full");
  gk_wire_msg e = wire(&m);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 1, &e), GK_NET_LOBBY_ERROR);
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SHUTDOWN;
  e = wire(&m);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &e), GK_NET_LOBBY_SHUTDOWN);
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STALL;
  m.u.stall = (gk_wire_stall){.step = 5, .awaited = 2, .waited_ms = 100};
  e = wire(&m);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &e), GK_NET_LOBBY_NONE);
  cr_assert_eq(l.in, 0);
}

Test(lobby, a_room_create_room_cannot_carry_is_refused_up_front) {
  gk_net_lobby l;
  char big[GK_WIRE_CONFIG_MAX + 2];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  gk_net_lobby_room ok = {"tally", 2, 0, NULL, 0};
  gk_net_lobby_room r = ok;
  r.genre = "";
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  r = ok;
  r.genre = "a-genre-name-longer-than-32-bytes";
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  r = ok;
  r.players = GK_PLAYERS_MAX + 1;
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  r = ok;
  r.starters = 3;
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  r = ok;
  r.input_delay = 256;
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  r = ok;
  r.config = big;
  cr_assert_eq(gk_net_lobby_init(&l, &r), GK_EINVAL);
  big[GK_WIRE_CONFIG_MAX] = '\0'; /* exactly the most it carries */
  cr_assert_eq(gk_net_lobby_init(&l, &r), 0);
  cr_assert_eq(gk_net_lobby_init(NULL, &ok), GK_EINVAL);
}

Test(lobby, players_joining_a_known_room_all_join_and_never_start_it) {
  gk_net_lobby l;
  gk_wire_msg m, s;
  cr_assert_eq(gk_net_lobby_init_join(&l, CODE, 2), 0);
  cr_assert(l.created && l.joining);
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert_eq(gk_net_lobby_request(&l, i, &m), 0);
    cr_assert_eq(m.type, GK_MSG_JOIN_ROOM, "player %u creates", i);
    cr_assert_eq(m.u.room.role, GK_WIRE_ROLE_PLAYER);
    cr_assert_eq(memcmp(m.u.room.code, CODE, GK_WIRE_CODE_LEN), 0);
  }
  /* a stray ROOM_CREATED does not change the code */
  gk_wire_msg rc = room_msg(GK_MSG_ROOM_CREATED, "QRSTUVWXYZ234567");
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &rc), GK_NET_LOBBY_NONE);
  cr_assert_str_eq(l.code, CODE);
  gk_wire_msg j = joined();
  cr_assert_eq(gk_net_lobby_on_msg(&l, 0, &j), GK_NET_LOBBY_JOINED);
  cr_assert_eq(gk_net_lobby_on_msg(&l, 1, &j), GK_NET_LOBBY_JOINED);
  cr_assert(gk_net_lobby_is_in(&l, 0) && gk_net_lobby_is_in(&l, 1));
  cr_assert_eq(gk_net_lobby_start(&l, &s), 0, "a joiner started the match");
  cr_assert_eq(gk_net_lobby_init_join(&l, "abc", 2), GK_EINVAL);
  cr_assert_eq(gk_net_lobby_init_join(&l, CODE, 0), GK_EINVAL);
  cr_assert_eq(gk_net_lobby_init_join(&l, CODE, GK_PLAYERS_MAX + 1), GK_EINVAL);
  cr_assert_eq(gk_net_lobby_init_join(NULL, CODE, 1), GK_EINVAL);
}

Test(lobby, an_error_without_its_text_is_worded_from_its_code) {
  gk_wire_error e;
  memset(&e, 0, sizeof e);
  e.code = GK_EFULL;
  cr_assert_str_eq(gk_net_lobby_error_text(&e), gk_strerror(GK_EFULL));
  strcpy(e.text, "the room is full");
  cr_assert_str_eq(gk_net_lobby_error_text(&e), "the room is full");
}
