/* push-puzzle solutions: every one of the 90 published xsokoban solutions
 * is replayed through GameLoop with { steps } budgets, one press per step,
 * and must solve its level with the published number of moves. The
 * levels shipped with the genre are solved the same way, with advance on,
 * as a room with no options would play them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_loop.h"
#include "gk_push_puzzle.h"
#include "pp_util.h"

static const gk_sim *sim = &gk_push_puzzle_sim;

typedef struct solved_log {
  uint32_t solved;
  int64_t moves, pushes, level;
  uint64_t step;
  uint32_t started;
} solved_log;

static void on_event(void *ctx, gk_loop *loop, const gk_event *ev) {
  (void)loop;
  solved_log *s = ctx;
  if (strcmp(ev->name, "level_started") == 0) {
    s->started++;
    return;
  }
  if (strcmp(ev->name, "level_solved") != 0) return;
  s->solved++;
  s->step = ev->step;
  for (uint32_t i = 0; i < ev->nfields; i++) {
    if (strcmp(ev->fields[i].key, "moves") == 0)
      s->moves = ev->fields[i].value;
    else if (strcmp(ev->fields[i].key, "pushes") == 0)
      s->pushes = ev->fields[i].value;
    else if (strcmp(ev->fields[i].key, "level") == 0)
      s->level = ev->fields[i].value;
  }
}

/* Plays `lurd` on the level text through GameLoop in frames of `chunk`
 * steps. Returns the solved log; checks the run ended where it should. */
static solved_log play(const char *levels, const char *lurd, size_t lurdlen,
                       const char *name, uint64_t chunk) {
  char err[GK_ERRMSG_MAX] = "";
  gk_pp_moves m;
  cr_assert_eq(gk_pp_lurd_parse(&m, lurd, lurdlen, name, err, sizeof err), 0,
               "%s", err);
  uint8_t *records = malloc(m.count * GK_PP_INPUT_SIZE + 1);
  cr_assert_not_null(records);
  cr_assert_eq(gk_pp_script(m.moves, m.count, 1, 0, records), 0);

  gk_pp_config cfg;
  sim->config_default(&cfg);
  gk_value lv = {GK_VALUE_STRING, 0, levels};
  gk_value adv = {GK_VALUE_BOOL, 0, NULL};
  cr_assert_eq(sim->config_set(&cfg, "levels", &lv, err, sizeof err), 0,
               "%s: %s", name, err);
  cr_assert_eq(sim->config_set(&cfg, "advance", &adv, err, sizeof err), 0);

  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, sim, &cfg, 1, 1, err, sizeof err), 0,
               "%s: %s", name, err);
  solved_log s;
  memset(&s, 0, sizeof s);
  cr_assert_eq(gk_loop_on_event(&loop, on_event, &s), 0);
  gk_script_input in;
  gk_script_input_init(&in, records, m.count, 1, GK_PP_INPUT_SIZE);
  uint64_t left = m.count;
  while (left > 0) {
    uint64_t n = left < chunk ? left : chunk;
    cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(n), 0), (int)n);
    left -= n;
  }
  cr_expect_eq(loop.steps, m.count);
  cr_expect(sim->is_over(gk_loop_state(&loop)), "%s: not solved", name);
  cr_expect_eq(pp_sample(sim, gk_loop_state(&loop), "moves"), m.count);
  gk_loop_close(&loop);
  sim->config_free(&cfg);
  free(records);
  gk_pp_moves_close(&m);
  return s;
}

Test(push_puzzle_solutions,
     all_90_xsokoban_levels_are_solved_in_the_published_moves, .timeout = 120) {
  uint32_t done = 0;
  uint64_t total_moves = 0;
  for (int i = 1; i <= 90; i++) {
    char sok[512], sol[512];
    snprintf(sok, sizeof sok,
             GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban/xsokoban%04d.sok",
             i);
    snprintf(sol, sizeof sol,
             GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban/xsokoban%04d.sol",
             i);
    size_t ll, sl;
    char *level = pp_read_file(sok, &ll);
    char *lurd = pp_read_file(sol, &sl);

    /* the expected count comes from the published text itself */
    gk_pp_moves m;
    char err[GK_ERRMSG_MAX] = "";
    cr_assert_eq(gk_pp_lurd_parse(&m, lurd, sl, sol, err, sizeof err), 0, "%s",
                 err);
    size_t expected = m.count;
    gk_pp_moves_close(&m);

    /* frames of varied sizes: the result must not depend on them */
    solved_log s = play(level, lurd, sl, sol, (uint64_t)(1 + (i * 37) % 97));
    cr_expect_eq(s.solved, 1, "level %d: solved %u times", i, s.solved);
    cr_expect_eq(s.moves, (int64_t)expected, "level %d: %lld moves, want %zu",
                 i, (long long)s.moves, expected);
    cr_expect_eq(s.step + 1, expected, "level %d: solved on the last move", i);
    cr_expect_eq(s.level, 0);
    total_moves += expected;
    done++;
    free(level);
    free(lurd);
  }
  cr_expect_eq(done, 90);
  cr_expect_gt(total_moves, 90 * 50);
}

Test(push_puzzle_solutions, the_published_counts_match_a_strict_check) {
  /* gk_pp_check on a published (lower-case) solution with strict off
   * agrees with the simulation on moves and pushes */
  size_t ll, sl;
  char *level = pp_read_file(
      GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban/xsokoban0001.sok", &ll);
  char *lurd = pp_read_file(
      GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban/xsokoban0001.sol", &sl);
  char err[GK_ERRMSG_MAX] = "";
  gk_pp_set set;
  cr_assert_eq(gk_pp_set_parse(&set, level, ll, "x1", 64, 64, err, sizeof err),
               0, "%s", err);
  gk_pp_moves m;
  cr_assert_eq(gk_pp_lurd_parse(&m, lurd, sl, "x1.sol", err, sizeof err), 0);
  gk_pp_check_result res;
  cr_assert_eq(
      gk_pp_check(&set.levels[0], &m, 0, lurd, sl, &res, err, sizeof err), 0,
      "%s", err);
  cr_expect(res.solved);
  cr_expect_eq(res.moves_done, m.count);
  cr_expect_eq(res.solved_at, m.count);
  solved_log s = play(level, lurd, sl, "x1.sol", 1000);
  cr_expect_eq((uint32_t)s.pushes, res.pushes);
  /* the same solution checked strictly fails at its first push */
  cr_expect_eq(
      gk_pp_check(&set.levels[0], &m, 1, lurd, sl, &res, err, sizeof err),
      GK_EMISMATCH);
  cr_expect_eq(res.pushes, 0);
  cr_expect_not_null(strstr(err, "pushes a box but is lower case"), "%s", err);
  gk_pp_moves_close(&m);
  gk_pp_set_close(&set);
  free(level);
  free(lurd);
}

/* Known solutions of the shipped levels, in order. */
static const char *const shipped_solutions[] = {
    "R",
    "urDRlldRR",
    "rUruLLLDldRDuRRurDDldlL",
    "RurrddddlDRuuuuLLLrdRDrddlLdllUUdR",
    "luUluRRRDLulDrrrruLL",
};

Test(push_puzzle_solutions, a_room_with_no_options_plays_the_shipped_levels) {
  char err[GK_ERRMSG_MAX] = "";
  gk_pp_set set;
  cr_assert_eq(gk_pp_set_parse(&set, gk_pp_shipped_levels,
                               strlen(gk_pp_shipped_levels), "shipped", 64, 64,
                               err, sizeof err),
               0, "%s", err);
  size_t n = sizeof shipped_solutions / sizeof shipped_solutions[0];
  cr_assert_eq(set.count, n);
  cr_expect_str_eq(set.levels[0].title, "First Push");
  gk_pp_set_close(&set);

  /* one script of every solution back to back, default config */
  size_t total = 0;
  uint8_t *records = NULL;
  for (size_t i = 0; i < n; i++) {
    gk_pp_moves m;
    pp_lurd(&m, shipped_solutions[i]);
    records = realloc(records, (total + m.count) * GK_PP_INPUT_SIZE);
    cr_assert_not_null(records);
    gk_pp_script(m.moves, m.count, 1, 0, records + total * GK_PP_INPUT_SIZE);
    total += m.count;
    gk_pp_moves_close(&m);
  }
  gk_pp_config cfg;
  sim->config_default(&cfg);
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, sim, &cfg, 3, 1, err, sizeof err), 0, "%s",
               err);
  solved_log s;
  memset(&s, 0, sizeof s);
  gk_loop_on_event(&loop, on_event, &s);
  gk_script_input in;
  gk_script_input_init(&in, records, total, 1, GK_PP_INPUT_SIZE);
  for (size_t i = 0; i < total; i++)
    cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(1), i), 1);
  cr_expect_eq(s.solved, n);
  cr_expect_eq(s.started, n); /* the first level and each advance */
  cr_expect_eq(s.level, (int64_t)n - 1);
  cr_expect(sim->is_over(gk_loop_state(&loop)));
  gk_loop_close(&loop);
  sim->config_free(&cfg);
  free(records);
}
