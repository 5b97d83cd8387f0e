/* push-puzzle rules: blocking and pushing, hold-to-repeat timing, undo and
 * restart, several players on one map, and one press = one turn when a
 * { seconds } frame runs five catch-up steps. The board is checked as a
 * picture rendered from the canonical state (pp_board). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_loop.h"
#include "gk_pp_internal.h"
#include "gk_push_puzzle.h"
#include "pp_util.h"

#define L GK_PP_LEFT
#define U GK_PP_UP
#define R GK_PP_RIGHT
#define D GK_PP_DOWN

static const gk_sim *sim = &gk_push_puzzle_sim;

static void expect_board(pp_harness *h, const char *want) {
  char *got = pp_board(sim, h->state);
  cr_expect_str_eq(got, want, "board is\n%s\nexpected\n%s", got, want);
  free(got);
}

static uint64_t hud(pp_harness *h, const char *name) {
  return pp_sample(sim, h->state, name);
}

/* A box, a second box, goals, and room to push in every direction. */
static const char *yard = "#########\n"
                          "#   .   #\n"
                          "#   $   #\n"
                          "#.$ @ $.#\n"
                          "#   $   #\n"
                          "#   .   #\n"
                          "#########\n";

Test(push_puzzle_rules, a_pusher_walks_onto_free_floor) {
  pp_harness h;
  pp_start(&h, "######\n#@ $.#\n######\n", 1, 0);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "######\n# @$.#\n######\n");
  cr_expect_eq(hud(&h, "moves"), 1);
  cr_expect_eq(hud(&h, "pushes"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, a_wall_blocks_and_costs_no_move) {
  pp_harness h;
  pp_start(&h, "######\n#@ $.#\n######\n", 1, 0);
  pp_press(&h, 0, 0, L);
  pp_press(&h, 0, 0, U);
  pp_press(&h, 0, 0, D);
  expect_board(&h, "######\n#@ $.#\n######\n");
  cr_expect_eq(hud(&h, "moves"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, a_box_is_pushed_onto_free_floor_in_each_direction) {
  pp_harness h;
  pp_start(&h, yard, 1, 0);
  pp_press(&h, 0, 0, U);
  expect_board(&h, "#########\n"
                   "#   *   #\n"
                   "#   @   #\n"
                   "#.$   $.#\n"
                   "#   $   #\n"
                   "#   .   #\n"
                   "#########\n");
  pp_press(&h, 0, 0, D); /* onto free floor: a move, no push */
  pp_press(&h, 0, 0, D); /* the lower box goes down onto its goal */
  expect_board(&h, "#########\n"
                   "#   *   #\n"
                   "#       #\n"
                   "#.$   $.#\n"
                   "#   @   #\n"
                   "#   *   #\n"
                   "#########\n");
  cr_expect_eq(hud(&h, "moves"), 3);
  cr_expect_eq(hud(&h, "pushes"), 2);
  pp_press(&h, 0, 0, U);
  pp_press(&h, 0, 0, L);
  pp_press(&h, 0, 0, L); /* left box onto the left goal */
  expect_board(&h, "#########\n"
                   "#   *   #\n"
                   "#       #\n"
                   "#*@   $.#\n"
                   "#       #\n"
                   "#   *   #\n"
                   "#########\n");
  cr_expect_not(sim->is_over(h.state));
  for (int i = 0; i < 4; i++)
    pp_press(&h, 0, 0, R); /* the last box onto the right goal */
  expect_board(&h, "#########\n"
                   "#   *   #\n"
                   "#       #\n"
                   "#*    @*#\n"
                   "#       #\n"
                   "#   *   #\n"
                   "#########\n");
  cr_expect_eq(hud(&h, "moves"), 10);
  cr_expect_eq(hud(&h, "pushes"), 4);
  cr_expect_eq(hud(&h, "boxes_on_goals"), 4);
  cr_expect(sim->is_over(h.state));
  pp_stop(&h);
}

Test(push_puzzle_rules, a_box_against_a_wall_does_not_move) {
  pp_harness h;
  pp_start(&h, "######\n#. @$#\n######\n", 1, 0);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "######\n#. @$#\n######\n");
  cr_expect_eq(hud(&h, "moves"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, two_boxes_in_a_row_do_not_move) {
  pp_harness h;
  pp_start(&h, "########\n#@$$ ..#\n########\n", 1, 0);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "########\n#@$$ ..#\n########\n");
  cr_expect_eq(hud(&h, "pushes"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, a_box_slides_off_a_goal_and_onto_one) {
  pp_harness h;
  pp_start(&h, "#######\n#@*  .#\n#  $  #\n#######\n", 1, 0);
  cr_expect_eq(hud(&h, "boxes_on_goals"), 1);
  cr_expect_eq(hud(&h, "boxes"), 2);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "#######\n# +$ .#\n#  $  #\n#######\n");
  cr_expect_eq(hud(&h, "boxes_on_goals"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, a_pusher_on_a_goal_renders_and_moves_like_on_floor) {
  pp_harness h;
  pp_start(&h, "######\n#+$ .#\n# $  #\n######\n", 1, 0);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "######\n#.@$.#\n# $  #\n######\n");
  pp_stop(&h);
}

Test(push_puzzle_rules, solving_reports_level_solved_with_moves_and_pushes) {
  pp_harness h;
  pp_start(&h, "#######\n#@ $ .#\n#######\n", 1, 0);
  cr_assert_eq(h.nevents, 1);
  cr_expect_str_eq(h.events[0].name, "level_started");
  pp_press(&h, 0, 0, R);
  pp_press(&h, 0, 0, R);
  cr_expect_eq(hud(&h, "solved"), 0);
  pp_press(&h, 0, 0, R);
  cr_assert_eq(h.nevents, 2);
  const gk_event *e = &h.events[1];
  cr_expect_str_eq(e->name, "level_solved");
  cr_expect_eq(e->step, 2);
  cr_expect_eq(e->player, 0);
  cr_assert_eq(e->nfields, 3);
  cr_expect_str_eq(e->fields[0].key, "moves");
  cr_expect_eq(e->fields[0].value, 3);
  cr_expect_str_eq(e->fields[1].key, "pushes");
  cr_expect_eq(e->fields[1].value, 2);
  cr_expect_str_eq(e->fields[2].key, "level");
  cr_expect_eq(e->fields[2].value, 0);
  cr_expect_eq(hud(&h, "solved"), 1);
  cr_expect(sim->is_over(h.state));
  /* an ended run ignores input */
  pp_press(&h, 0, 0, L);
  cr_expect_eq(hud(&h, "moves"), 3);
  pp_stop(&h);
}

Test(push_puzzle_rules, advance_starts_the_next_level_in_the_same_step) {
  pp_harness h;
  pp_start(&h, "#####\n#@$.#\n#####\n\n#####\n#.$@#\n#####\n", 1, 1);
  pp_press(&h, 0, 0, R);
  cr_assert_eq(h.nevents, 3);
  cr_expect_str_eq(h.events[1].name, "level_solved");
  cr_expect_str_eq(h.events[2].name, "level_started");
  cr_expect_eq(h.events[2].fields[0].value, 1);
  cr_expect_eq(hud(&h, "level"), 1);
  cr_expect_eq(hud(&h, "moves"), 0);
  cr_expect_not(sim->is_over(h.state));
  expect_board(&h, "#####\n#.$@#\n#####\n");
  pp_press(&h, 0, 0, L);
  cr_expect(sim->is_over(h.state));
  pp_stop(&h);
}

/* --- hold to repeat -------------------------------------------------------*/

static uint32_t pusher_x(pp_harness *h) {
  char *b = pp_board(sim, h->state);
  const char *at = strchr(b, '@');
  cr_assert_not_null(at);
  const char *row = at;
  while (row > b && row[-1] != '\n') row--;
  uint32_t x = (uint32_t)(at - row);
  free(b);
  return x;
}

Test(push_puzzle_rules, a_held_direction_repeats_after_12_steps_then_every_6) {
  pp_harness h;
  const char *level = "##############################\n"
                      "#@                        $.#\n"
                      "##############################\n";
  pp_start(&h, level, 1, 0);
  /* step 0: the press moves at once */
  pp_press(&h, 0, R, R);
  cr_expect_eq(pusher_x(&h), 2);
  uint32_t moved_at[8];
  uint32_t n = 0, x = 2;
  for (uint32_t s = 1; s <= 40; s++) {
    pp_press(&h, 0, R, 0);
    uint32_t nx = pusher_x(&h);
    if (nx != x && n < 8) moved_at[n++] = s;
    x = nx;
  }
  cr_assert_eq(n, 5);
  cr_expect_eq(moved_at[0], 12);
  cr_expect_eq(moved_at[1], 18);
  cr_expect_eq(moved_at[2], 24);
  cr_expect_eq(moved_at[3], 30);
  cr_expect_eq(moved_at[4], 36);
  /* releasing stops it; holding again without a press does nothing */
  pp_press(&h, 0, 0, 0);
  for (int s = 0; s < 30; s++) pp_press(&h, 0, R, 0);
  cr_expect_eq(pusher_x(&h), 7);
  /* a new press restarts the timer from zero */
  pp_press(&h, 0, R, R);
  cr_expect_eq(pusher_x(&h), 8);
  for (int s = 1; s < 12; s++) pp_press(&h, 0, R, 0);
  cr_expect_eq(pusher_x(&h), 8);
  pp_press(&h, 0, R, 0);
  cr_expect_eq(pusher_x(&h), 9);
  pp_stop(&h);
}

Test(push_puzzle_rules,
     several_directions_pressed_at_once_take_the_lowest_bit) {
  pp_harness h;
  pp_start(&h, "#####\n#   #\n# @ #\n#   #\n#$. #\n#####\n", 1, 0);
  pp_press(&h, 0, 0, U | R | D); /* up wins over right and down */
  expect_board(&h, "#####\n# @ #\n#   #\n#   #\n#$. #\n#####\n");
  cr_expect_eq(hud(&h, "moves"), 1);
  pp_stop(&h);
}

/* --- undo and restart -----------------------------------------------------*/

Test(push_puzzle_rules, undo_reverts_the_last_turn_including_its_push) {
  pp_harness h;
  pp_start(&h, "########\n#@ $  .#\n########\n", 1, 0);
  pp_press(&h, 0, 0, R);
  pp_press(&h, 0, 0, R);
  expect_board(&h, "########\n#  @$ .#\n########\n");
  pp_press(&h, 0, 0, GK_PP_UNDO);
  expect_board(&h, "########\n# @$  .#\n########\n");
  cr_expect_eq(hud(&h, "moves"), 1);
  cr_expect_eq(hud(&h, "pushes"), 0);
  pp_press(&h, 0, 0, GK_PP_UNDO);
  pp_press(&h, 0, 0, GK_PP_UNDO); /* nothing left: no change */
  expect_board(&h, "########\n#@ $  .#\n########\n");
  cr_expect_eq(hud(&h, "moves"), 0);
  pp_stop(&h);
}

Test(push_puzzle_rules, undo_wins_over_a_direction_in_the_same_press) {
  pp_harness h;
  pp_start(&h, "#######\n#@ $ .#\n#######\n", 1, 0);
  pp_press(&h, 0, 0, R);
  pp_press(&h, 0, R, R | GK_PP_UNDO);
  expect_board(&h, "#######\n#@ $ .#\n#######\n");
  /* and the undo ended the hold: holding on moves nothing */
  for (int s = 0; s < 20; s++) pp_press(&h, 0, R, 0);
  expect_board(&h, "#######\n#@ $ .#\n#######\n");
  pp_stop(&h);
}

Test(push_puzzle_rules, restart_resets_the_level_and_the_history) {
  pp_harness h;
  pp_start(&h, "########\n#@ $  .#\n########\n", 1, 0);
  pp_press(&h, 0, 0, R);
  pp_press(&h, 0, 0, R);
  pp_press(&h, 0, 0, GK_PP_RESTART);
  expect_board(&h, "########\n#@ $  .#\n########\n");
  cr_expect_eq(hud(&h, "moves"), 0);
  cr_expect_eq(hud(&h, "pushes"), 0);
  pp_press(&h, 0, 0, GK_PP_UNDO); /* history is gone */
  expect_board(&h, "########\n#@ $  .#\n########\n");
  cr_expect_str_eq(h.events[h.nevents - 1].name, "level_started");
  pp_stop(&h);
}

Test(push_puzzle_rules, the_undo_history_is_bounded_by_undo_limit) {
  pp_harness h;
  memset(&h, 0, sizeof h);
  char err[GK_ERRMSG_MAX];
  sim->config_default(&h.cfg);
  gk_value lv = {GK_VALUE_STRING, 0, "#########\n#@   $ .#\n#########\n"};
  gk_value lim = {GK_VALUE_INT, 2, NULL};
  cr_assert_eq(sim->config_set(&h.cfg, "levels", &lv, err, sizeof err), 0);
  cr_assert_eq(sim->config_set(&h.cfg, "undo_limit", &lim, err, sizeof err), 0);
  h.players = 1;
  h.state = sim->create(&h.cfg, 0, 1, err, sizeof err);
  cr_assert_not_null(h.state, "%s", err);
  for (int i = 0; i < 4; i++) pp_press(&h, 0, 0, R);
  for (int i = 0; i < 4; i++) pp_press(&h, 0, 0, GK_PP_UNDO);
  expect_board(&h, "#########\n#  @ $ .#\n#########\n");
  cr_expect_eq(hud(&h, "moves"), 2);
  pp_stop(&h);
}

/* --- several players ------------------------------------------------------*/

static const char *duo = "#########\n"
                         "#a  $  b#\n"
                         "#   .   #\n"
                         "#########\n";

static char *duo_level(void) {
  char *s = strdup(duo);
  *strchr(s, 'a') = '@';
  *strchr(s, 'b') = '@';
  return s;
}

Test(push_puzzle_rules,
     players_act_in_slot_order_when_they_contend_for_a_cell) {
  pp_harness h;
  char *lvl = duo_level();
  pp_start(&h, "#######\n#@ @ .#\n#  $  #\n#######\n", 2, 0);
  /* both step into the middle cell in the same step: slot 0 gets it */
  uint8_t rec[4] = {0, R, 0, L};
  pp_step(&h, rec);
  expect_board(&h, "#######\n# ab .#\n#  $  #\n#######\n");
  cr_expect_eq(hud(&h, "moves"), 1);
  pp_stop(&h);
  free(lvl);
}

Test(push_puzzle_rules, two_players_contend_for_one_box) {
  pp_harness h;
  char *lvl = duo_level();
  pp_start(&h, lvl, 2, 0);
  /* walk both next to the box: a at x=3, b at x=5 */
  uint8_t step1[4] = {0, R, 0, L};
  pp_step(&h, step1);
  pp_step(&h, step1);
  expect_board(&h, "#########\n#  a$b  #\n#   .   #\n#########\n");
  /* both push toward each other: the box is stuck between them */
  pp_step(&h, step1);
  expect_board(&h, "#########\n#  a$b  #\n#   .   #\n#########\n");
  cr_expect_eq(hud(&h, "pushes"), 0);
  /* a pusher never walks into another pusher */
  uint8_t down_b[4] = {0, 0, 0, D};
  pp_step(&h, down_b);
  uint8_t b_left[4] = {0, 0, 0, L};
  pp_step(&h, b_left);
  uint8_t a_down_b_up[4] = {0, 0, 0, U};
  pp_step(&h, a_down_b_up); /* b, under the box, pushes it at the wall */
  expect_board(&h, "#########\n#  a$   #\n#   B   #\n#########\n");
  uint8_t b_pushes_up[4] = {0, 0, 0, U};
  pp_step(&h, b_pushes_up); /* the box is against the wall: blocked */
  expect_board(&h, "#########\n#  a$   #\n#   B   #\n#########\n");
  uint8_t a_down[4] = {0, D, 0, 0};
  pp_step(&h, a_down);
  uint8_t a_right_into_b[4] = {0, R, 0, 0};
  pp_step(&h, a_right_into_b);
  expect_board(&h, "#########\n#   $   #\n#  aB   #\n#########\n");
  pp_stop(&h);
  free(lvl);
}

Test(push_puzzle_rules, a_box_is_never_pushed_into_a_pusher) {
  pp_harness h;
  pp_start(&h, "########\n#@$ @ .#\n#   .$ #\n########\n", 2, 0);
  uint8_t rec[4] = {0, R, 0, L}; /* a pushes right, b walks left first */
  pp_step(&h, rec);
  /* slot 0 pushes first while b still stands two cells away: ok */
  expect_board(&h, "########\n# a$b .#\n#   .$ #\n########\n");
  uint8_t again[4] = {0, R, 0, 0};
  pp_step(&h, again); /* now b is behind the box */
  expect_board(&h, "########\n# a$b .#\n#   .$ #\n########\n");
  pp_stop(&h);
}

Test(push_puzzle_rules, undo_reverts_the_last_turn_of_anyone) {
  pp_harness h;
  char *lvl = duo_level();
  pp_start(&h, lvl, 2, 0);
  uint8_t a_right[4] = {0, R, 0, 0};
  uint8_t b_left[4] = {0, 0, 0, L};
  pp_step(&h, a_right);
  pp_step(&h, b_left);
  uint8_t a_undo[4] = {0, GK_PP_UNDO, 0, 0};
  pp_step(&h, a_undo); /* player a undoes b's move */
  expect_board(&h, "#########\n# a $  b#\n#   .   #\n#########\n");
  pp_stop(&h);
  free(lvl);
}

Test(push_puzzle_rules, extra_slots_idle_and_extra_pushers_are_removed) {
  pp_harness h;
  char *lvl = duo_level();
  pp_start(&h, lvl, 1, 0); /* one player on a two-pusher map */
  expect_board(&h, "#########\n#@  $   #\n#   .   #\n#########\n");
  pp_stop(&h);
  pp_start(&h, "#####\n#@$.#\n#####\n", 3, 0); /* three on a one-pusher map */
  uint8_t rec[6] = {0, 0, 0, R, 0, R};
  pp_step(&h, rec);
  expect_board(&h, "#####\n#@$.#\n#####\n");
  cr_expect_eq(hud(&h, "moves"), 0);
  pp_stop(&h);
  free(lvl);
}

Test(push_puzzle_rules, the_two_player_map_loads_both_pushers) {
  size_t len;
  char *text = pp_read_file(
      GK_SOURCE_ROOT "/tests/data/push-puzzle/coop/multiplayer0001.sok", &len);
  pp_harness h;
  pp_start(&h, text, 2, 0);
  char *b = pp_board(sim, h.state);
  cr_expect_not_null(strchr(b, 'a'));
  cr_expect_not_null(strchr(b, 'b'));
  free(b);
  cr_expect_eq(hud(&h, "boxes"), 5);
  uint8_t both_up[4] = {0, U, 0, U};
  pp_step(&h, both_up);
  cr_expect_eq(hud(&h, "moves"), 2);
  pp_stop(&h);
  free(text);
}

/* --- one press, one turn, through GameLoop --------------------------------*/

/* A device-like source: a press is reported in the next step read, then
 * consumed in end_step (ADR-0004); held directions stay until released. */
typedef struct device {
  gk_input base;
  uint8_t rec[GK_PP_INPUT_SIZE];
  uint32_t end_steps, end_frames;
} device;

static int dev_read(gk_input *in, uint64_t step, gk_step_input *out) {
  device *d = (device *)in;
  out->step = step;
  out->players = 1;
  out->active_mask = 1;
  out->flags = 0;
  out->inputs = d->rec;
  return 0;
}
static void dev_end_step(gk_input *in) {
  device *d = (device *)in;
  d->rec[1] = 0;
  d->end_steps++;
}
static void dev_end_frame(gk_input *in) {
  ((device *)in)->end_frames++;
}

typedef struct samples {
  uint32_t count;
  uint64_t moves[64];
} samples;

static void on_sample(void *ctx, gk_loop *loop, uint64_t now_ms) {
  (void)now_ms;
  samples *s = ctx;
  if (s->count < 64)
    s->moves[s->count++] = pp_sample(loop->sim, gk_loop_state(loop), "moves");
}

Test(push_puzzle_rules, one_press_is_one_turn_when_a_frame_runs_five_steps) {
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  gk_pp_config cfg;
  sim->config_default(&cfg);
  char err[GK_ERRMSG_MAX];
  gk_value lv = {GK_VALUE_STRING, 0,
                 "##########\n#@      .#\n#  $     #\n"
                 "##########\n"};
  cr_assert_eq(sim->config_set(&cfg, "levels", &lv, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(gk_loop_start(&loop, sim, &cfg, 7, 1, err, sizeof err), 0, "%s",
               err);
  samples s = {0, {0}};
  cr_assert_eq(gk_loop_on_sample(&loop, on_sample, &s), 0);
  device dev;
  memset(&dev, 0, sizeof dev);
  dev.base.read = dev_read;
  dev.base.end_step = dev_end_step;
  dev.base.end_frame = dev_end_frame;

  /* a slow frame: 100 ms is six steps of 1/60 s; five are run, the rest
   * of the backlog is dropped */
  dev.rec[1] = R;
  int ran =
      gk_loop_frame(&loop, &dev.base, gk_budget_seconds_ns(100000000u), 100);
  cr_expect_eq(ran, GK_LOOP_MAX_CATCHUP);
  cr_expect_eq(dev.end_steps, 5);
  cr_expect_eq(dev.end_frames, 1);
  cr_expect_eq(pp_sample(sim, gk_loop_state(&loop), "moves"), 1);
  /* an undo pressed in another five-step frame undoes exactly one turn */
  dev.rec[1] = R;
  gk_loop_frame(&loop, &dev.base, gk_budget_seconds_ns(100000000u), 200);
  cr_expect_eq(pp_sample(sim, gk_loop_state(&loop), "moves"), 2);
  dev.rec[1] = GK_PP_UNDO;
  gk_loop_frame(&loop, &dev.base, gk_budget_seconds_ns(100000000u), 300);
  cr_expect_eq(pp_sample(sim, gk_loop_state(&loop), "moves"), 1);
  /* one HUD sample per frame whose turn moved the version */
  /* a frame without a turn takes no sample */
  gk_loop_frame(&loop, &dev.base, gk_budget_seconds_ns(100000000u), 400);
  cr_expect_eq(s.count, 3);
  cr_expect_eq(s.moves[0], 1);
  cr_expect_eq(s.moves[1], 2);
  cr_expect_eq(s.moves[2], 1);
  gk_loop_close(&loop);
  sim->config_free(&cfg);
}

typedef struct ev_count {
  int started;
  int64_t dropped;
} ev_count;

static void count_events(void *ctx, gk_loop *loop, const gk_event *ev) {
  ev_count *c = ctx;
  (void)loop;
  if (strcmp(ev->name, "level_started") == 0)
    c->started++;
  else if (strcmp(ev->name, "events_dropped") == 0)
    c->dropped += ev->fields[0].value;
}

Test(push_puzzle_events,
     a_frame_with_more_events_than_the_queue_reports_how_many_were_dropped) {
  const gk_sim *pp = &gk_push_puzzle_sim;
  gk_pp_config cfg;
  pp->config_default(&cfg);
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, pp, &cfg, 1, 1, NULL, 0), 0);
  ev_count c = {0, 0};
  cr_assert_eq(gk_loop_on_event(&loop, count_events, &c), 0);
  uint8_t restart[GK_PP_INPUT_SIZE] = {0, GK_PP_RESTART};
  gk_const_input in;
  cr_assert_eq(gk_const_input_init(&in, restart, 1, GK_PP_INPUT_SIZE), 0);
  /* The first level's level_started is flushed by a frame of no steps. */
  cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(0), 0), 0);
  c.started = 0;
  /* Every step restarts (one level_started each): 300 in one frame. */
  cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(300), 0), 300);
  cr_assert_gt(c.dropped, 0);
  cr_assert_eq(c.started + c.dropped, 300, "%d delivered + %lld dropped",
               c.started, (long long)c.dropped);
  /* A frame that fits loses nothing and reports no drop. */
  c.started = 0;
  c.dropped = 0;
  cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(10), 0), 10);
  cr_assert_eq(c.started, 10);
  cr_assert_eq(c.dropped, 0);
  gk_loop_close(&loop);
  pp->config_free(&cfg);
}

Test(push_puzzle_rules, the_row_of_a_cell_by_reciprocal_equals_division) {
  gk__pp_board b;
  memset(&b, 0, sizeof b);
  for (uint32_t w = 1; w <= GK_PP_DIM_MAX; w++) {
    b.width = (uint16_t)w;
    b.row_recip = ((1ull << 32) + w - 1) / w;
    for (uint32_t c = 0; c < w * GK_PP_DIM_MAX; c++)
      if (gk__pp_row(&b, c) != c / w)
        cr_assert_fail("width %u cell %u: %u, not %u", w, c, gk__pp_row(&b, c),
                       c / w);
  }
}
