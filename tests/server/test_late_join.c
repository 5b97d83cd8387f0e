/* test_late_join.c: a player joins a running match (late join).
 *
 * In one process, over real ENet on 127.0.0.1 (rejoin_world.h): a gk_server
 * (the referee) and three players, created and started through the real
 * room handshake. At step 600 of the creator's run one more player
 * connects and sends JOIN_ROOM with the room's code. In survivors (which
 * takes players after the start) with a free slot it joins from a
 * snapshot: every hash it computes must equal the creator's at the same
 * step (and the server compares every reported hash with its own: a
 * DESYNC notice fails the test), the match must end normally, the replay
 * must verify and `gk-replay info` must list the join. A genre that takes
 * nobody after the start (push-puzzle) and a full room refuse the joiner
 * with a clear ERROR and play on.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "rejoin_world.h"

#define JOIN_AT 600
#define END_AT 1200

static scen late_scen(const char *genre, uint32_t players, uint32_t cap) {
  return (scen){.genre = genre,
                .players = players,
                .max_players = cap,
                .late_step = JOIN_AT,
                .end_step = END_AT};
}

Test(late_join, a_late_joiner_in_survivors_agrees_with_the_referee,
     .timeout = 120) {
  static world w;
  scen o = late_scen("survivors", 3, 4);
  rw_run(&w, &o);
  rw_expect_ended_normally(&w);
  client *j = rw_late(&w);
  cr_assert_not_null(j, "nobody joined late");
  cr_assert_eq(j->error, 0, "refused: %s (%s)", j->error_text,
               gk_err_name(j->error));
  cr_assert_eq(j->snaps, 1, "snapshot: %s", j->snap_err);
  cr_assert_eq(j->info.kind, GK_WIRE_SNAP_JOIN);
  cr_assert(j->resumed, "the joiner never sampled");
  cr_assert(j->ended, "the joiner did not see the end");
  cr_assert_eq(j->end_reason, GK_WIRE_END_HOST);
  cr_assert_eq(j->desyncs, 0);
  cr_assert(j->have_secret, "no reconnect secret");
  cr_assert_eq(j->slot, 3);
  uint64_t at = j->info.step;
  cr_assert_geq(at, JOIN_AT);
  cr_assert_eq(j->first_run, at, "it runs from the join step on");
  for (uint32_t i = 0; i < 3; i++)
    cr_assert_eq(w.c[i].join_seen, at, "player %u saw the bit at %llu", i,
                 (unsigned long long)w.c[i].join_seen);
  cr_assert_eq(j->info.next_input, at + j->peer.eng.match.input_delay);
  rw_expect_agrees(&w, j, "the late joiner");
  cr_assert_gt(j->nsteps, at + 300, "it played on after the join");
  cr_log_info("late join: step %llu, snapshot %llu bytes, sampling %.1f ms "
              "after JOIN_ROOM",
              (unsigned long long)at, (unsigned long long)j->info.bytes,
              (double)(j->info.resumed_ns - j->info.request_ns) / 1e6);
  char want[96];
  snprintf(want, sizeof want, "\"joins\":[{\"slot\":3,\"step\":%llu}]",
           (unsigned long long)at);
  cr_assert(strstr(w.info, want) != NULL, "no %s in %s", want, w.info);
  cr_assert(strstr(w.info, "\"start_mask\":7") != NULL, "%s", w.info);
  cr_assert(strstr(w.info, "\"removals\":[]") != NULL, "%s", w.info);
  rw_free(&w);
}

/* The joiner is refused with `code`; the match plays on to its end. An
 * ERROR to an ENet connection not admitted is no larger than its request
 * (an abuse limit): a text that does not fit is left out whole, never cut,
 * and the client words the code. */
static void refused_case(const scen *o, int code) {
  static world w;
  rw_run(&w, o);
  rw_expect_ended_normally(&w);
  client *j = rw_late(&w);
  cr_assert_not_null(j, "nobody tried to join late");
  cr_assert_eq(j->error, code, "got %s: %s", gk_err_name(j->error),
               j->error_text);
  cr_assert_str_eq(j->error_text, "", "a cut text arrived");
  cr_assert_eq(j->snaps, 0);
  cr_assert_eq(j->nsteps, 0);
  cr_assert(strstr(w.info, "\"joins\":[]") != NULL, "%s", w.info);
  rw_free(&w);
}

Test(late_join, push_puzzle_takes_nobody_after_the_start, .timeout = 120) {
  scen o = late_scen("push-puzzle", 2, 3);
  refused_case(&o, GK_ESTATE);
}

Test(late_join, a_full_room_refuses_a_late_joiner, .timeout = 120) {
  scen o = late_scen("survivors", 3, 3);
  refused_case(&o, GK_EFULL);
}
