/* test_bots_option.c: the checks of the room option room.bots
 * (gk_room__bots_configure), in process, on the real function: a genre without
 * a built-in bot (survivors' descriptor with its bot taken away) is
 * refused by name, 0 bots is no part at all, and max_players 0 gives the
 * people what the bots leave of the genre's cap. The rest of the
 * refusals go over the wire in test_bots.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_genres.h"
#include "gk_server_config.h"
#include "gk_room_internal.h"

typedef struct world {
  gk_server_config cfg;
  gk_sim sim;
  gk_server_genre genre;
  gk_room room;
} world;

/* An open-mode server and a room being built for `sim` (cap 8) with
 * `seats` seats for people. */
static void world_init(world *w, const gk_sim *sim, uint32_t seats) {
  memset(w, 0, sizeof(*w));
  gk_server_config_default(&w->cfg);
  w->sim = *sim;
  w->genre.sim = &w->sim;
  w->genre.enabled = 1;
  w->genre.max_players = 8;
  w->room.genre = &w->genre;
  w->room.max_players = seats;
}

static int configure(world *w, int seats_asked, const char *room_json,
                     char *err, size_t cap) {
  cJSON *room = cJSON_Parse(room_json);
  cr_assert_not_null(room, "%s", room_json);
  err[0] = '\0';
  int rc = gk_room__bots_configure(&w->room, GK_PLAYERS_MAX, seats_asked, room,
                                   err, cap);
  cJSON_Delete(room);
  return rc;
}

Test(room_bots_option, a_genre_without_a_bot_is_refused_by_name) {
  world w;
  world_init(&w, gk_genre_find("survivors"), 1);
  w.sim.name = "botless";
  w.sim.bot_size = 0;
  w.sim.bot_init = NULL;
  w.sim.bot_next = NULL;
  char err[256];
  cr_assert_eq(configure(&w, 1, "{\"bots\":1}", err, sizeof(err)), GK_EINVAL);
  cr_assert_str_eq(err, "options.room.bots: genre botless has no built-in bot "
                        "the server can run");
  cr_assert_null(w.room.bots);
  /* asking for none is fine without a bot */
  cr_assert_eq(configure(&w, 1, "{\"bots\":0}", err, sizeof(err)), 0, "%s",
               err);
  cr_assert_null(w.room.bots);
  gk_server_config_free(&w.cfg);
}

Test(room_bots_option, max_players_0_leaves_the_people_what_the_bots_leave) {
  world w;
  world_init(&w, gk_genre_find("survivors"), 8);
  char err[256];
  cr_assert_eq(configure(&w, 0, "{\"bots\":3}", err, sizeof(err)), 0, "%s",
               err);
  cr_assert_not_null(w.room.bots);
  cr_assert_eq(gk_room__bots_seats(w.room.bots), 3);
  cr_assert_eq(w.room.max_players, 5, "8 seats in all, 3 of them bots");
  cr_assert_eq(gk_room__bots_mask(w.room.bots), 0, "no slot before the start");
  gk_room__bots_free(w.room.bots);
  /* all 8 as bots leaves nobody a seat */
  world_init(&w, gk_genre_find("survivors"), 8);
  cr_assert_eq(configure(&w, 0, "{\"bots\":8}", err, sizeof(err)), GK_ERANGE);
  cr_assert_str_eq(err, "options.room.bots: 8 bots and 1 seats for players "
                        "make 9 players, survivors rooms take at most 8");
  cr_assert_null(w.room.bots);
  gk_server_config_free(&w.cfg);
}
