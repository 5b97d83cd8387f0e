/* push-puzzle parsers: XSB level sets and LURD solutions, their errors
 * with names, lines and columns, and the strict solution checker. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_push_puzzle.h"
#include "pp_util.h"

static char err[GK_ERRMSG_MAX];

static int xsb(gk_pp_set *set, const char *text) {
  err[0] = '\0';
  return gk_pp_set_parse(set, text, strlen(text), "set.sok", 64, 64, err,
                         sizeof err);
}

static void expect_xsb_error(const char *text, const char *want) {
  gk_pp_set set;
  int rc = xsb(&set, text);
  cr_expect_eq(rc, GK_EPARSE, "rc %d for:\n%s", rc, text);
  cr_expect_str_eq(err, want);
  cr_expect_eq(set.count, 0);
  cr_expect_null(set.levels);
}

/* --- XSB -------------------------------------------------------------------*/

Test(push_puzzle_xsb, a_set_with_comments_titles_and_metadata_loads) {
  const char *text = "; a collection\n"
                     "Collection notes that are free text\n"
                     "\n"
                     "#####\n"
                     "#@$.#\n"
                     "#####\n"
                     "Title: One\n"
                     "Author: someone\n"
                     "Comment:\n"
                     "#### this is not a map ####\n"
                     "Comment-End:\n"
                     "\n"
                     "  ######\n"
                     "  #+ * #\n"
                     "###$   #\n"
                     "#  -_  #\n"
                     "########\n"
                     "Title: Two\n";
  gk_pp_set set;
  cr_assert_eq(xsb(&set, text), 0, "%s", err);
  cr_assert_eq(set.count, 2);
  cr_expect_str_eq(set.levels[0].title, "One");
  cr_expect_str_eq(set.levels[1].title, "Two");
  cr_expect_eq(set.levels[0].line, 4);
  cr_expect_eq(set.levels[1].line, 13);
  const gk_pp_level *l = &set.levels[1];
  cr_expect_eq(l->width, 8);
  cr_expect_eq(l->height, 5);
  cr_expect_eq(l->npushers, 1);
  cr_expect_eq(l->pushers[0], 1 * 8 + 3);
  cr_expect_eq(l->boxes, 2);
  /* leading blanks outside the walls are OUTSIDE; the inside is not */
  cr_expect(l->cells[0] & GK_PP_OUTSIDE);
  cr_expect_eq(l->cells[3 * 8 + 3], 0); /* a '-' floor cell */
  cr_expect_eq(l->cells[1 * 8 + 5], GK_PP_BOX | GK_PP_GOAL);
  cr_expect_eq(gk_pp_set_find(&set, "Two"), 1);
  cr_expect_eq(gk_pp_set_find(&set, "Three"), GK_ENOTFOUND);
  gk_pp_set_close(&set);
}

Test(push_puzzle_xsb, a_title_before_a_level_names_that_level) {
  gk_pp_set set;
  cr_assert_eq(xsb(&set, "Title: A\n#####\n#@$.#\n#####\n\nTitle: B\n"
                         "#####\n#.$@#\n#####\n"),
               0, "%s", err);
  cr_assert_eq(set.count, 2);
  cr_expect_str_eq(set.levels[0].title, "A");
  cr_expect_str_eq(set.levels[1].title, "B");
  gk_pp_set_close(&set);
}

Test(push_puzzle_xsb, windows_line_endings_and_trailing_blanks_are_accepted) {
  gk_pp_set set;
  cr_assert_eq(xsb(&set, "#####  \r\n#@$.#\r\n#####\r\n"), 0, "%s", err);
  cr_expect_eq(set.levels[0].width, 5);
  gk_pp_set_close(&set);
}

Test(push_puzzle_xsb, an_unknown_character_is_reported_at_its_position) {
  expect_xsb_error("#####\n#@$.#\n#####\n\n######\n#@$ x.#\n######\n",
                   "set.sok:6:5: unknown character");
}

Test(push_puzzle_xsb, a_text_line_inside_a_map_is_an_unknown_character) {
  expect_xsb_error("#####\n#@$.#\n  oops\n#####\n",
                   "set.sok:3:3: unknown character");
}

Test(push_puzzle_xsb, a_level_without_a_pusher_is_refused) {
  expect_xsb_error("\n#####\n# $.#\n#####\n",
                   "set.sok:2:1: level has no pusher (@ or +)");
}

Test(push_puzzle_xsb, boxes_and_goals_must_match) {
  expect_xsb_error("######\n#@$$.#\n######\n",
                   "set.sok:1:1: level has 2 boxes but 1 goals");
  expect_xsb_error("######\n#@ ..#\n######\n", "set.sok:1:1: level has no box");
  expect_xsb_error("#####\n#@* #\n#####\n",
                   "set.sok:1:1: level is already solved");
}

Test(push_puzzle_xsb, an_open_edge_is_reported_where_the_pusher_walks_off) {
  /* a gap in the right wall on line 2 */
  expect_xsb_error(
      "#####\n#@$. \n#####\n",
      "set.sok:2:5: open edge: a pusher can walk off the map here");
  /* a short row leaves the map open past its end */
  expect_xsb_error(
      "######\n#@$.\n######\n",
      "set.sok:2:5: open edge: a pusher can walk off the map here");
  /* a box outside the walls */
  expect_xsb_error("#####   \n#@$.#  $\n#####  .\n",
                   "set.sok:2:8: open edge: a box outside the walls");
}

Test(push_puzzle_xsb, levels_over_the_size_limits_are_refused) {
  gk_pp_set set;
  const char *text = "#######\n#@ $ .#\n#######\n";
  cr_expect_eq(
      gk_pp_set_parse(&set, text, strlen(text), "big", 6, 64, err, sizeof err),
      GK_EPARSE);
  cr_expect_str_eq(err, "big:1:7: level is wider than the limit (max_width)");
  cr_expect_eq(
      gk_pp_set_parse(&set, text, strlen(text), "big", 64, 2, err, sizeof err),
      GK_EPARSE);
  cr_expect_str_eq(err, "big:3:1: level is taller than the limit (max_height)");
}

Test(push_puzzle_xsb, more_than_sixteen_pushers_are_refused) {
  expect_xsb_error(
      "###################\n#@@@@@@@@@@@@@@@@@#\n#$               .#\n"
      "###################\n",
      "set.sok:2:18: too many pushers (at most 16)");
}

Test(push_puzzle_xsb, text_without_a_level_is_refused) {
  expect_xsb_error("; nothing here\nTitle: empty\n",
                   "set.sok:2:1: no level found");
  expect_xsb_error("", "set.sok:1:1: no level found");
}

Test(push_puzzle_xsb, the_two_player_map_has_two_pushers_in_reading_order) {
  size_t len;
  char *text = pp_read_file(
      GK_SOURCE_ROOT "/tests/data/push-puzzle/coop/multiplayer0001.sok", &len);
  gk_pp_set set;
  cr_assert_eq(
      gk_pp_set_parse(&set, text, len, "coop", 64, 64, err, sizeof err), 0,
      "%s", err);
  const gk_pp_level *l = &set.levels[0];
  cr_assert_eq(l->npushers, 2);
  cr_expect_eq(l->pushers[0], 3u * l->width + 1);
  cr_expect_eq(l->pushers[1], 8u * l->width + 6);
  cr_expect_eq(l->boxes, 5);
  gk_pp_set_close(&set);
  free(text);
}

/* --- LURD ------------------------------------------------------------------*/

static int lurd(gk_pp_moves *m, const char *text) {
  err[0] = '\0';
  return gk_pp_lurd_parse(m, text, strlen(text), "s.sol", err, sizeof err);
}

static void expect_moves(const char *text, const char *want) {
  gk_pp_moves m;
  cr_assert_eq(lurd(&m, text), 0, "%s: %s", text, err);
  static const char letters[] = "lurdLURD";
  char got[256];
  size_t n = m.count < sizeof got - 1 ? m.count : sizeof got - 1;
  for (size_t i = 0; i < n; i++) got[i] = letters[m.moves[i] & 7u];
  got[n] = '\0';
  cr_expect_str_eq(got, want, "%s", text);
  gk_pp_moves_close(&m);
}

Test(push_puzzle_lurd, letters_counts_and_nested_groups_expand) {
  expect_moves("luRD", "luRD");
  expect_moves("3r", "rrr");
  expect_moves("2(dull)", "dulldull");
  expect_moves("2(l2(uR))d", "luRuRluRuRd");
  expect_moves(" 1 2 L\n\tu ", "LLLLLLLLLLLLu");
  expect_moves("", "");
}

Test(push_puzzle_lurd, each_move_remembers_its_letter_in_the_text) {
  gk_pp_moves m;
  cr_assert_eq(lurd(&m, "r\n2(uD)"), 0);
  cr_assert_eq(m.count, 5);
  cr_expect_eq(m.where[0], 0);
  cr_expect_eq(m.where[1], 4);
  cr_expect_eq(m.where[2], 5);
  cr_expect_eq(m.where[3], 4);
  uint32_t line, col;
  gk_pp_text_pos("r\n2(uD)", 7, m.where[4], &line, &col);
  cr_expect_eq(line, 2);
  cr_expect_eq(col, 4);
  gk_pp_moves_close(&m);
}

static void expect_lurd_error(const char *text, int code, const char *want) {
  gk_pp_moves m;
  cr_expect_eq(lurd(&m, text), code, "%s", text);
  cr_expect_str_eq(err, want);
  cr_expect_eq(m.count, 0);
  cr_expect_null(m.moves);
}

Test(push_puzzle_lurd, malformed_solutions_are_reported_at_their_position) {
  expect_lurd_error("lurd\nlux", GK_EPARSE,
                    "s.sol:2:3: unknown character in LURD");
  expect_lurd_error("ll(ur", GK_EPARSE, "s.sol:1:3: '(' is never closed");
  expect_lurd_error("ur)", GK_EPARSE, "s.sol:1:3: ')' without '('");
  expect_lurd_error("u0r", GK_EPARSE, "s.sol:1:2: repeat count is 0");
  expect_lurd_error("u 12", GK_EPARSE,
                    "s.sol:1:3: repeat count with no move or group after it");
  expect_lurd_error("(u3)", GK_EPARSE,
                    "s.sol:1:3: repeat count with no move or group after it");
}

Test(push_puzzle_lurd, expansion_and_nesting_are_bounded) {
  expect_lurd_error("99999999r", GK_ETOOBIG,
                    "s.sol:1:1: repeat count is too large");
  expect_lurd_error("4000(4000(r))", GK_ETOOBIG,
                    "s.sol:1:1: solution expands to too many moves");
  char deep[GK_PP_LURD_DEPTH * 2 + 8];
  size_t k = 0;
  for (int i = 0; i < GK_PP_LURD_DEPTH + 1; i++) deep[k++] = '(';
  deep[k++] = 'r';
  for (int i = 0; i < GK_PP_LURD_DEPTH + 1; i++) deep[k++] = ')';
  deep[k] = '\0';
  gk_pp_moves m;
  cr_expect_eq(lurd(&m, deep), GK_ETOOBIG);
  cr_expect_str_eq(err, "s.sol:1:33: groups nested too deeply");
  /* exactly the limit is fine */
  k = 0;
  for (int i = 0; i < GK_PP_LURD_DEPTH; i++) deep[k++] = '(';
  deep[k++] = 'r';
  for (int i = 0; i < GK_PP_LURD_DEPTH; i++) deep[k++] = ')';
  deep[k] = '\0';
  cr_expect_eq(lurd(&m, deep), 0, "%s", err);
  cr_expect_eq(m.count, 1);
  gk_pp_moves_close(&m);
}

Test(push_puzzle_lurd, a_script_holds_one_press_per_step_for_one_slot) {
  gk_pp_moves m;
  cr_assert_eq(lurd(&m, "lUrD"), 0);
  uint8_t rec[4 * 3 * GK_PP_INPUT_SIZE];
  cr_assert_eq(gk_pp_script(m.moves, m.count, 3, 1, rec), 0);
  static const uint8_t want[4] = {GK_PP_LEFT, GK_PP_UP, GK_PP_RIGHT,
                                  GK_PP_DOWN};
  for (size_t s = 0; s < 4; s++) {
    for (size_t b = 0; b < 3 * GK_PP_INPUT_SIZE; b++) {
      uint8_t v = rec[s * 3 * GK_PP_INPUT_SIZE + b];
      cr_expect_eq(v, b == GK_PP_INPUT_SIZE + 1 ? want[s] : 0,
                   "step %zu byte %zu", s, b);
    }
  }
  cr_expect_eq(gk_pp_script(m.moves, m.count, 3, 3, rec), GK_EINVAL);
  gk_pp_moves_close(&m);
}

/* --- strict checking -------------------------------------------------------*/

static const char *strip = "########\n#@ $  .#\n#  $  .#\n########\n";

static int check(const char *moves, int strict, gk_pp_check_result *res) {
  gk_pp_set set;
  cr_assert_eq(xsb(&set, strip), 0, "%s", err);
  gk_pp_moves m;
  cr_assert_eq(lurd(&m, moves), 0, "%s", err);
  int rc = gk_pp_check(&set.levels[0], &m, strict, moves, strlen(moves), res,
                       err, sizeof err);
  gk_pp_moves_close(&m);
  gk_pp_set_close(&set);
  return rc;
}

Test(push_puzzle_check, a_correct_solution_checks_strictly) {
  gk_pp_check_result res;
  cr_expect_eq(check("rRRRllldRRR", 1, &res), 0, "%s", err);
  cr_expect(res.solved);
  cr_expect_eq(res.moves_done, 11);
  cr_expect_eq(res.solved_at, 11);
  cr_expect_eq(res.pushes, 6);
}

Test(push_puzzle_check, a_lower_case_push_is_a_mismatch_at_its_position) {
  gk_pp_check_result res;
  cr_expect_eq(check("r\nrRR", 1, &res), GK_EMISMATCH);
  cr_expect_str_eq(err, "move 2 ('r', line 2, column 1) pushes a box but is "
                        "lower case");
  cr_expect_eq(res.moves_done, 1);
  cr_expect_not(res.solved);
  /* not strict: the same moves play */
  cr_expect_eq(check("r\nrRR", 0, &res), 0, "%s", err);
  cr_expect_eq(res.pushes, 3);
}

Test(push_puzzle_check, an_upper_case_move_that_pushes_nothing_is_a_mismatch) {
  gk_pp_check_result res;
  cr_expect_eq(check("R", 1, &res), GK_EMISMATCH);
  cr_expect_str_eq(err, "move 1 ('R', line 1, column 1) is upper case but "
                        "pushes nothing");
  cr_expect_eq(res.moves_done, 0);
}

Test(push_puzzle_check, a_blocked_move_is_a_mismatch_even_when_not_strict) {
  gk_pp_check_result res;
  cr_expect_eq(check("rRRRR", 0, &res), GK_EMISMATCH);
  cr_expect_str_eq(err, "move 5 ('R', line 1, column 5) is blocked");
  cr_expect_eq(res.moves_done, 4);
  cr_expect_eq(res.pushes, 3);
}
