/* test_room_names.c: players' names (NAME, ROSTER) through the public
 * calls of gk_room with time set by hand (room_world.h): every player and
 * spectator gets the roster when it changes and a newcomer gets it as it
 * is; only a seated player names itself, a bounded number of times; a
 * seat left in a quick-play lobby loses its name. */
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

TestSuite(room_names, .init = setup, .fini = teardown, .timeout = 30);

static void name(uint32_t id, const char *text) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_NAME;
  snprintf(m.u.name, sizeof m.u.name, "%s", text);
  rw_send(w, id, &m);
}

/* The last ROSTER `id` got, as "slot:name,..." ("" if none came). */
static const char *roster(uint32_t id) {
  static char out[512];
  gk_wire_msg m;
  out[0] = '\0';
  if (!rw_last(w, id, GK_MSG_ROSTER, &m)) return out;
  for (uint32_t i = 0; i < m.u.roster.count; i++)
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%u:%s",
             i ? "," : "", m.u.roster.slot[i], m.u.roster.name[i]);
  return out;
}

Test(room_names, a_name_reaches_every_player_and_a_newcomer_gets_the_roster) {
  uint32_t a = rw_connect(w), b = rw_connect(w);
  gk_room *r = rw_create(w, a, "survivors", 3, 0, NULL);
  name(a, "ada");
  cr_assert_str_eq(roster(a), "0:ada");
  rw_join(w, b, gk_room_code(r));
  cr_assert_str_eq(roster(b), "0:ada", "the newcomer's roster");
  name(b, "Zo\xc3\xab");
  cr_assert_str_eq(roster(a), "0:ada,1:Zo\xc3\xab");
  cr_assert_str_eq(roster(b), "0:ada,1:Zo\xc3\xab");
  uint32_t n = rw_count(w, a, GK_MSG_ROSTER);
  name(b, "Zo\xc3\xab"); /* the same name: nothing to tell */
  cr_assert_eq(rw_count(w, a, GK_MSG_ROSTER), n);
  cr_assert_str_eq(gk_room_slot_name(r, 1), "Zo\xc3\xab");
  cr_assert_null(gk_room_slot_name(r, 2));
  cr_assert_eq(rw_log_count(w, "player_named"), 2);
}

Test(room_names, only_a_seated_player_names_itself_and_only_16_times) {
  uint32_t a = rw_connect(w), stranger = rw_connect(w);
  rw_create(w, a, "survivors", 2, 0, NULL);
  name(stranger, "eve");
  gk_wire_msg m;
  cr_assert(rw_last(w, stranger, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ESTATE);
  cr_assert_eq(rw_count(w, a, GK_MSG_ROSTER), 0);
  char n[8];
  for (int i = 0; i < 16; i++) {
    snprintf(n, sizeof n, "p%d", i);
    name(a, n);
  }
  cr_assert_eq(rw_count(w, a, GK_MSG_ERROR), 0);
  name(a, "one more");
  cr_assert(rw_last(w, a, GK_MSG_ERROR, &m));
  cr_assert_eq(m.u.error.code, GK_ELIMIT);
  cr_assert_str_eq(roster(a), "0:p15");
}

Test(room_names, a_seat_left_in_a_quick_play_lobby_loses_its_name) {
  uint32_t a = rw_connect(w), b = rw_connect(w), c = rw_connect(w);
  gk_room *r = rw_quick(w, a, "survivors", 3, NULL);
  rw_quick(w, b, "survivors", 3, NULL);
  name(a, "ada");
  name(b, "bob");
  rw_disconnect(w, a);
  cr_assert_str_eq(roster(b), "1:bob");
  cr_assert_eq(rw_quick(w, c, "survivors", 3, NULL), r);
  cr_assert_str_eq(roster(c), "1:bob", "slot 0 is the newcomer's, unnamed");
}
