/* test_room_predict.c: lockstep.prediction in a room (gk_room_delay.c):
 * where it comes from (the genre's default, the server's config, the
 * room's options), what it changes in MATCH_START (the lead is the
 * window W; the delay covers only the round trip past rtt_ms) and that a
 * predicting player and one that does not predict play one match to its
 * end with the referee, without a desync. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"
#include "room_world.h"

static rw_world *w;

static void setup(void) {
  w = rw_new();
  w->cfg.input_delay_auto = 1;
  w->cfg.input_delay_min = 2;
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_predict, .init = setup, .fini = teardown, .timeout = 60);

/* A 2-player room of `genre` with `config`, both players at `rtt` ms;
 * the MATCH_START slot 1 got. */
static gk_wire_match_start start(const char *genre, const char *config,
                                 uint32_t rtt) {
  uint32_t id[2];
  for (uint32_t i = 0; i < 2; i++) {
    id[i] = rw_connect(w);
    rw_player(w, id[i]);
    rw_conn_of(w, id[i])->rtt_ms = rtt;
  }
  gk_room *r = rw_create(w, id[0], genre, 2, 0, config);
  cr_assert_not_null(r, "%s", rw_log_text(w));
  rw_join(w, id[1], gk_room_code(r));
  rw_start(w, id[0]);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[1], GK_MSG_MATCH_START, &m));
  return m.u.match_start;
}

Test(room_predict,
     survivors_predicts_by_default_with_the_window_as_lead_and_a_small_delay) {
  /* step 20 ms; 50 ms of round trip is the heads': delay 1, not 3 */
  gk_wire_match_start ms = start("survivors", NULL, 50);
  cr_assert_eq(ms.lead, 8, "the window W, 8");
  cr_assert_eq(ms.input_delay, 1);
  cr_assert_eq(rw_log_count(w, "match_start"), 1);
  char line[4096];
  cr_assert(rw_log_last(w, "match_start", line, sizeof line));
  cr_assert(strstr(line, "\"prediction\":true"), "%s", line);
}

Test(room_predict, past_rtt_ms_the_delay_covers_the_rest_of_the_round_trip) {
  gk_wire_match_start ms = start("survivors", NULL, 150);
  cr_assert_eq(ms.input_delay, 3, "(150 - 100) / 20 = 2.5: 3 steps");
}

Test(room_predict, the_heads_cover_no_more_round_trip_than_their_window) {
  /* a window of 2 steps runs 40 ms past confirmed + delay: of rtt_ms 100,
   * the delay covers the rest, (100 - 40) / 20 = 3 steps */
  gk_wire_match_start ms =
      start("survivors", "{\"room\": {\"prediction_window\": 2}}", 100);
  cr_assert_eq(ms.lead, 4, "lockstep.lead, above the window");
  cr_assert_eq(ms.input_delay, 1, "4 steps of lead cover 80 ms: 1 step");
  w->cfg.lead = 1;
  ms = start("survivors", "{\"room\": {\"prediction_window\": 2}}", 100);
  cr_assert_eq(ms.lead, 2);
  cr_assert_eq(ms.input_delay, 3, "(100 - 40) / 20 = 3 steps, not 1");
}

Test(room_predict, push_puzzle_does_not_predict_by_default) {
  gk_wire_match_start ms = start("push-puzzle", NULL, 50);
  cr_assert_eq(ms.lead, 4, "lockstep.lead");
  cr_assert_eq(ms.input_delay, 3, "the round trip's: 50 / 20 = 2.5");
}

Test(room_predict, the_room_options_turn_it_off_or_on_with_a_window) {
  gk_wire_match_start ms =
      start("survivors", "{\"room\": {\"prediction\": false}}", 50);
  cr_assert_eq(ms.lead, 4);
  cr_assert_eq(ms.input_delay, 3);
  ms = start("push-puzzle",
             "{\"room\": {\"prediction\": true, \"prediction_window\": 12}}",
             50);
  cr_assert_eq(ms.lead, 12);
  cr_assert_eq(ms.input_delay, 1);
  cr_assert_eq(strstr(ms.config, "prediction"), NULL,
               "the room's options never reach MATCH_START's config");
}

Test(room_predict, the_server_config_overrides_the_genre_default) {
  w->cfg.prediction = GK_PREDICT_OFF;
  gk_wire_match_start ms = start("survivors", NULL, 50);
  cr_assert_eq(ms.lead, 4);
  w->cfg.prediction = GK_PREDICT_ON;
  w->cfg.prediction_window = 6;
  ms = start("push-puzzle", NULL, 50);
  cr_assert_eq(ms.lead, 6);
}

Test(room_predict, a_step_is_late_only_past_rtt_ms_more_in_a_predicting_room) {
  uint32_t id[2];
  w->cfg.late_slack_ms = 50;
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  cr_assert_eq(r->session.cfg.late_slack_ms, 150, "50 + rtt_ms 100");
  uint32_t id2[2];
  r = rw_match(w, "push-puzzle", 2, 2, NULL, id2);
  cr_assert_eq(r->session.cfg.late_slack_ms, 50);
}

Test(room_predict, bad_room_options_are_refused_with_the_key_and_reason) {
  static const struct {
    const char *config, *want;
  } bad[] = {
      {"{\"room\": {\"prediction\": 1}}", "options.room.prediction: must be "
                                          "true or false, got a number"},
      {"{\"room\": {\"prediction_window\": 0}}",
       "options.room.prediction_window: must be an integer in 1..60"},
      {"{\"room\": {\"prediction_window\": 2.5}}",
       "options.room.prediction_window: must be an integer in 1..60"},
      {"{\"room\": {\"prediction_window\": 60}}",
       "options.room.prediction_window: 60 needs lockstep.window >= 168"},
  };
  w->cfg.window = 64;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint32_t id = rw_connect(w);
    cr_assert_null(rw_create(w, id, "survivors", 2, 0, bad[i].config));
    gk_wire_msg m;
    cr_assert(rw_last(w, id, GK_MSG_ERROR, &m));
    cr_assert(strstr(m.u.error.text, bad[i].want), "%s: got \"%s\"",
              bad[i].config, m.u.error.text);
  }
}

Test(
    room_predict,
    a_predicting_and_a_non_predicting_player_agree_with_the_referee_to_the_end) {
  uint32_t id[2];
  for (uint32_t i = 0; i < 2; i++) {
    id[i] = rw_connect(w);
    rw_player_with(w, id[i], i == 0);
    rw_conn_of(w, id[i])->rtt_ms = 40;
  }
  gk_room *r =
      rw_create(w, id[0], "survivors", 2, 0, "{\"duration_steps\": 400}");
  cr_assert_not_null(r);
  rw_join(w, id[1], gk_room_code(r));
  rw_start(w, id[0]);
  rw_advance(w, 5000); /* about 250 steps */
  const gk_net_peer *a = &rw_conn_of(w, id[0])->peer;
  const gk_net_peer *b = &rw_conn_of(w, id[1])->peer;
  uint64_t ha = 0, hb = 0, ref = 0;
  cr_assert_eq(gk_loop_hash_at(&a->loop, 200, &ha), 0);
  cr_assert_eq(gk_loop_hash_at(&b->loop, 200, &hb), 0);
  cr_assert_eq(gk_loop_hash_at(&r->session.loop, 200, &ref), 0);
  cr_assert(ha == ref && hb == ref, "the players and the referee agree");
  cr_assert_gt(r->session.stats.hashes_compared, 300);
  /* 400 steps of play: pauses (a record's pause bit) and level-up picks
   * stop the count, as the room's random seed has it; the hand clock runs
   * on until the end, within a minute */
  for (int i = 0; i < 12 && !(a->ended && b->ended); i++) rw_advance(w, 5000);
  cr_assert(a->ended && b->ended,
            "the match ran to its end: steps %llu and %llu, referee %llu",
            (unsigned long long)a->loop.steps,
            (unsigned long long)b->loop.steps,
            (unsigned long long)r->session.loop.steps);
  cr_assert_eq(a->loop.steps, b->loop.steps);
  cr_assert_eq(a->loop.last_hash, b->loop.last_hash);
  char line[4096];
  cr_assert(rw_log_last(w, "match_end", line, sizeof line));
  cr_assert_eq(rw_log_u64(line, "desyncs"), 0, "%s", line);
  /* the world delivers at once: the head is seldom ahead, and follows
   * the confirmed steps without restoring */
  cr_assert_gt(a->head.steps_run, 300, "the predicting player kept a head");
  cr_assert_lt(a->head.restores, 20);
  cr_assert_eq(b->head.steps_run, 0);
}
