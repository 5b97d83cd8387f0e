/* test_host_actions.c: only a room's creator removes players and ends a
 * lobby (docs/PROTOCOL.md, "Stalls, removal, the end").
 *
 * In one process, over real ENet on 127.0.0.1 (rejoin_world.h): a
 * gk_server and three survivors players through the real room handshake.
 * Player 1, who did not create the room, sends REMOVE_PLAYER for player 2
 * during the match, or END_MATCH while the room is a lobby. The server
 * refuses either (a strike, no ERROR: the sender asked for what it may not
 * do), and the room goes on as if nothing was sent: player 2 plays to the
 * creator's end, or the creator starts the match and plays it out.
 */
#include <criterion/criterion.h>

#include "gk_err.h"
#include "rejoin_world.h"

Test(host_actions,
     a_remove_player_from_a_non_creator_is_refused_and_its_target_plays_on,
     .timeout = 90) {
  scen o = {.guest_remove_step = 200, .end_step = 600};
  static world w;
  rw_run(&w, &o);
  cr_assert(!w.timed_out, "the run timed out");
  cr_assert(w.guest_removed, "player 1 never sent its REMOVE_PLAYER");
  for (uint32_t i = 0; i < 3; i++) {
    cr_assert_eq(w.c[i].removals, 0,
                 "player %u heard a REMOVE_PLAYER: player 1's was honoured", i);
    cr_assert(w.c[i].last_mask >> 2 & 1u,
              "player %u's last step (%llu) has player 2 out (mask %#x)", i,
              (unsigned long long)w.c[i].nsteps - 1, w.c[i].last_mask);
  }
  cr_assert_eq(w.c[2].end_reason, GK_WIRE_END_HOST,
               "player 2's match ended with reason %d, not the host's end",
               w.c[2].end_reason);
  cr_assert_geq(w.c[2].nsteps, o.end_step, "player 2 stopped at step %llu",
                (unsigned long long)w.c[2].nsteps);
  cr_assert_geq(w.server_stats.strikes, 1,
                "the server held nothing against player 1: did its "
                "REMOVE_PLAYER arrive?");
  rw_expect_ended_normally(&w);
  rw_expect_agrees(&w, &w.c[2], "player 2");
  rw_free(&w);
}

Test(host_actions,
     an_end_match_from_a_non_creator_leaves_the_lobby_open_for_its_creator,
     .timeout = 90) {
  scen o = {.guest_lobby_end = 1, .end_step = 300};
  static world w;
  rw_run(&w, &o);
  cr_assert(!w.timed_out, "the run timed out");
  for (uint32_t i = 0; i < 3; i++)
    cr_assert(!w.c[i].lobby_end,
              "player %u got MATCH_END in the lobby: player 1's END_MATCH "
              "closed it",
              i);
  cr_assert_eq(w.c[0].error, 0, "the creator's start was refused: %s (%s)",
               gk_err_name(w.c[0].error), w.c[0].error_text);
  cr_assert_eq(w.c[1].error, 0, "player 1 got an ERROR: %s (%s)",
               gk_err_name(w.c[1].error), w.c[1].error_text);
  cr_assert_geq(w.server_stats.strikes, 1);
  cr_assert_eq(w.stats.matches_started, 1);
  rw_expect_ended_normally(&w);
  for (uint32_t i = 0; i < 3; i++)
    cr_assert_geq(w.c[i].nsteps, o.end_step, "player %u", i);
  rw_free(&w);
}
