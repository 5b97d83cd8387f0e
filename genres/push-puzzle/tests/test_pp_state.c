/* push-puzzle state, config and bot: canonical write/read round trips,
 * hostile snapshot bytes, config keys and their messages, and the
 * deterministic built-in bot. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_loop.h"
#include "gk_push_puzzle.h"
#include "pp_util.h"

static const gk_sim *sim = &gk_push_puzzle_sim;
static char err[GK_ERRMSG_MAX];

static const char *coop_path =
    GK_SOURCE_ROOT "/tests/data/push-puzzle/coop/multiplayer0001.sok";

Test(push_puzzle_state, the_descriptor_checks_and_is_registered) {
  cr_expect_eq(gk_sim_check(sim, err, sizeof err), 0, "%s", err);
  cr_expect_eq(gk_genre_find("push-puzzle"), sim);
  cr_expect_eq(sim->input_size, GK_PP_INPUT_SIZE);
  cr_expect_leq(sim->bot_size, 256);
}

/* Bots for every player, stepping a harness; returns how many undo and
 * restart presses were made. */
typedef struct bots {
  uint32_t players;
  uint8_t bot[GK_PLAYERS_MAX][256];
} bots;

static void bots_init(bots *b, const gk_pp_config *cfg, uint32_t players,
                      uint64_t seed) {
  b->players = players;
  for (uint32_t i = 0; i < players; i++) sim->bot_init(b->bot[i], cfg, seed, i);
}

static void bots_next(bots *b, uint8_t *rec, uint32_t *undos) {
  for (uint32_t i = 0; i < b->players; i++) {
    sim->bot_next(b->bot[i], rec + i * GK_PP_INPUT_SIZE);
    if (undos != NULL && (rec[i * GK_PP_INPUT_SIZE + 1] & GK_PP_UNDO))
      (*undos)++;
  }
}

static void start_with_limit(pp_harness *h, const char *levels,
                             uint32_t players, int undo_limit) {
  memset(h, 0, sizeof *h);
  sim->config_default(&h->cfg);
  gk_value lv = {GK_VALUE_STRING, 0, levels};
  gk_value lim = {GK_VALUE_INT, undo_limit, NULL};
  cr_assert_eq(sim->config_set(&h->cfg, "levels", &lv, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(sim->config_set(&h->cfg, "undo_limit", &lim, err, sizeof err),
               0);
  h->players = players;
  h->state = sim->create(&h->cfg, 9, players, err, sizeof err);
  cr_assert_not_null(h->state, "%s", err);
}

static uint64_t hash_of(const void *state) {
  gk_hasher hs;
  cr_assert_eq(gk_hasher_init(&hs), 0);
  uint64_t v = gk_sim_hash(sim, state, &hs);
  gk_hasher_close(&hs);
  return v;
}

/* The two-player coop level with a bot for each player; returns the level
 * text (free it after pp_stop). */
static char *start_coop(pp_harness *h, bots *b, int undo_limit, uint64_t seed) {
  char *coop = pp_read_file(coop_path, NULL);
  start_with_limit(h, coop, 2, undo_limit);
  bots_init(b, &h->cfg, 2, seed);
  return coop;
}

Test(push_puzzle_state, write_read_write_gives_the_same_bytes_and_future) {
  pp_harness h;
  bots b;
  /* a small undo ring so the history wraps and its head moves */
  char *coop = start_coop(&h, &b, 7, 42);
  uint8_t rec[2 * GK_PP_INPUT_SIZE];
  uint32_t undos = 0;
  for (int round = 0; round < 20; round++) {
    for (int s = 0; s < 97; s++) {
      bots_next(&b, rec, &undos);
      pp_step(&h, rec);
    }
    size_t n1, n2;
    uint8_t *bytes = pp_state_bytes(sim, h.state, &n1);
    gk_reader r;
    gk_reader_init(&r, bytes, n1);
    void *copy = sim->read_state(&h.cfg, &r, err, sizeof err);
    cr_assert_not_null(copy, "round %d: %s", round, err);
    uint8_t *again = pp_state_bytes(sim, copy, &n2);
    cr_assert_eq(n1, n2);
    cr_assert_eq(memcmp(bytes, again, n1), 0, "round %d", round);
    /* the restored run has the same future: step both with the same input */
    bots fork = b;
    pp_harness h2 = h;
    h2.state = copy;
    for (int s = 0; s < 50; s++) {
      uint8_t r1[2 * GK_PP_INPUT_SIZE];
      bots_next(&fork, r1, NULL);
      gk_step_input in = {h.step + (uint64_t)s, 3, 0, 2, r1};
      sim->step(copy, &in);
    }
    /* replay the same 50 inputs on a second restore of the original */
    gk_reader_init(&r, bytes, n1);
    void *copy2 = sim->read_state(&h.cfg, &r, err, sizeof err);
    cr_assert_not_null(copy2);
    fork = b;
    for (int s = 0; s < 50; s++) {
      uint8_t r1[2 * GK_PP_INPUT_SIZE];
      bots_next(&fork, r1, NULL);
      gk_step_input in = {h.step + (uint64_t)s, 3, 0, 2, r1};
      sim->step(copy2, &in);
    }
    cr_expect_eq(hash_of(copy), hash_of(copy2));
    (void)h2;
    sim->destroy(copy);
    sim->destroy(copy2);
    free(bytes);
    free(again);
  }
  cr_expect_gt(undos, 0);
  pp_stop(&h);
  free(coop);
}

Test(push_puzzle_state, a_restored_run_continues_exactly_like_the_original) {
  pp_harness h;
  bots b;
  char *coop = start_coop(&h, &b, 5, 7);
  uint8_t rec[2 * GK_PP_INPUT_SIZE];
  for (int s = 0; s < 300; s++) {
    bots_next(&b, rec, NULL);
    pp_step(&h, rec);
  }
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  gk_reader r;
  gk_reader_init(&r, bytes, n);
  void *copy = sim->read_state(&h.cfg, &r, err, sizeof err);
  cr_assert_not_null(copy, "%s", err);
  for (int s = 0; s < 600; s++) {
    bots_next(&b, rec, NULL);
    gk_step_input in = {h.step, 3, 0, 2, rec};
    sim->step(copy, &in);
    pp_step(&h, rec);
    cr_assert_eq(hash_of(copy), hash_of(h.state), "step %d", s);
  }
  sim->destroy(copy);
  free(bytes);
  pp_stop(&h);
  free(coop);
}

Test(push_puzzle_state, an_undo_brings_back_the_hash_from_before_the_turn) {
  pp_harness h;
  start_with_limit(&h, "########\n#@ $  .#\n########\n", 1, 16);
  /* each press is followed by a step with nothing held, which ends the
   * press's hold, so only the board, counters and history differ */
  uint64_t h0 = hash_of(h.state);
  pp_press(&h, 0, 0, GK_PP_RIGHT); /* a move */
  pp_press(&h, 0, 0, 0);
  uint64_t h1 = hash_of(h.state);
  pp_press(&h, 0, 0, GK_PP_RIGHT); /* a push */
  pp_press(&h, 0, 0, 0);
  cr_expect_neq(hash_of(h.state), h1);
  pp_press(&h, 0, 0, GK_PP_UNDO);
  cr_expect_eq(hash_of(h.state), h1);
  pp_press(&h, 0, 0, GK_PP_UNDO);
  cr_expect_eq(hash_of(h.state), h0);
  pp_stop(&h);
}

Test(push_puzzle_state, two_histories_that_end_on_the_same_board_hash_apart) {
  const char *level = "#########\n#  @  $.#\n#########\n";
  pp_harness a, b;
  start_with_limit(&a, level, 1, 16);
  start_with_limit(&b, level, 1, 16);
  pp_press(&a, 0, 0, GK_PP_LEFT);
  pp_press(&a, 0, 0, GK_PP_RIGHT);
  pp_press(&a, 0, 0, 0);
  pp_press(&b, 0, 0, GK_PP_RIGHT);
  pp_press(&b, 0, 0, GK_PP_LEFT);
  pp_press(&b, 0, 0, 0);
  /* same cells, pusher, moves and pushes: only the history differs, and
   * the hash sees it through the digest */
  cr_expect_neq(hash_of(a.state), hash_of(b.state));
  /* a snapshot still carries the history bytes the hash leaves out */
  size_t na, nb;
  uint8_t *sa = pp_state_bytes(sim, a.state, &na);
  uint8_t *sb = pp_state_bytes(sim, b.state, &nb);
  cr_assert_eq(na, nb);
  cr_expect_eq(sa[na - 2], 0, "left, then right: (player 0, no push, dir)");
  cr_expect_eq(sa[na - 1], 2);
  cr_expect_eq(sb[nb - 2], 2);
  cr_expect_eq(sb[nb - 1], 0);
  free(sa);
  free(sb);
  pp_stop(&a);
  pp_stop(&b);
}

Test(push_puzzle_state, a_long_history_costs_the_hash_nothing) {
  const char *level = "#########\n#  @  $.#\n#########\n";
  pp_harness h;
  start_with_limit(&h, level, 1, 1024);
  gk_hasher hs;
  cr_assert_eq(gk_hasher_init(&hs), 0);
  gk_sim_hash(sim, h.state, &hs);
  uint64_t hashed_empty = hs.w.total;
  for (int i = 0; i < 500; i++)
    pp_press(&h, 0, 0, i % 2 ? GK_PP_LEFT : GK_PP_RIGHT);
  gk_sim_hash(sim, h.state, &hs);
  cr_expect_eq(hs.w.total, hashed_empty, "the hashed bytes do not grow");
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  cr_expect_eq(n, hashed_empty + 9 * 3 + 500,
               "the snapshot holds the 9x3 cells and all 500 turns");
  free(bytes);
  gk_hasher_close(&hs);
  pp_stop(&h);
}

Test(push_puzzle_state, the_hash_covers_the_box_digest_not_the_cells) {
  char *coop = pp_read_file(coop_path, NULL);
  pp_harness big, small;
  start_with_limit(&big, coop, 2, 16);
  start_with_limit(&small, "########\n#@ $  .#\n########\n", 2, 16);
  gk_hasher hs;
  cr_assert_eq(gk_hasher_init(&hs), 0);
  gk_sim_hash(sim, big.state, &hs);
  uint64_t hashed_big = hs.w.total;
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, big.state, &n);
  cr_expect_eq(n - hashed_big, 14 * 10, "all but the 14x10 cells is hashed");
  cr_expect_lt(hashed_big, 64);
  free(bytes);
  /* a push moves the hash, and its undo brings it back */
  uint64_t before = hash_of(small.state);
  pp_press(&small, 0, 0, GK_PP_RIGHT);
  pp_press(&small, 0, 0, 0);
  uint64_t pushed = hash_of(small.state);
  cr_expect_neq(pushed, before);
  pp_press(&small, 0, 0, GK_PP_UNDO);
  cr_expect_eq(hash_of(small.state), before);
  gk_hasher_close(&hs);
  pp_stop(&big);
  pp_stop(&small);
  free(coop);
}

Test(push_puzzle_state, the_running_box_digest_always_matches_the_cells) {
  /* read_state recomputes the digest from the cells and refuses a
   * snapshot that disagrees: bots pushing, undoing and restarting must
   * leave a readable snapshot after every step */
  pp_harness h;
  bots b;
  char *coop = start_coop(&h, &b, 64, 11);
  uint8_t rec[2 * GK_PP_INPUT_SIZE];
  uint32_t undos = 0;
  for (int s = 0; s < 3000; s++) {
    bots_next(&b, rec, &undos);
    pp_step(&h, rec);
    size_t n;
    uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
    gk_reader r;
    gk_reader_init(&r, bytes, n);
    void *copy = sim->read_state(&h.cfg, &r, err, sizeof err);
    cr_assert_not_null(copy, "step %d: %s", s, err);
    cr_assert_eq(hash_of(copy), hash_of(h.state), "step %d", s);
    sim->destroy(copy);
    free(bytes);
  }
  cr_expect_gt(undos, 10);
  pp_stop(&h);
  free(coop);
}

/* A hashing writer with a 16-byte stage: too small for write_state's
 * one-record fast path, so the fields go one by one; collects what the
 * stage hands out. */
typedef struct tiny_hashing {
  gk_writer w; /* must be first */
  uint8_t stage[16];
  uint8_t bytes[256];
  size_t len;
} tiny_hashing;

static void tiny_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
  tiny_hashing *t = (tiny_hashing *)w;
  cr_assert_leq(t->len + len, sizeof t->bytes);
  memcpy(t->bytes + t->len, bytes, len);
  t->len += len;
}

Test(push_puzzle_state, the_fast_hash_equals_the_fields_written_one_by_one) {
  pp_harness h;
  bots b;
  char *coop = start_coop(&h, &b, 64, 23);
  uint8_t rec[2 * GK_PP_INPUT_SIZE];
  uint32_t undos = 0, holds = 0;
  gk_hasher hs;
  cr_assert_eq(gk_hasher_init(&hs), 0);
  for (int s = 0; s < 3000; s++) {
    bots_next(&b, rec, &undos);
    pp_step(&h, rec);
    tiny_hashing t;
    memset(&t, 0, sizeof t);
    t.w.buf = t.stage;
    t.w.cap = sizeof t.stage;
    t.w.flush = tiny_flush;
    t.w.hashing = 1;
    sim->write_state(h.state, &t.w);
    gk_writer_flush(&t.w);
    cr_assert_eq(gk_sim_hash(sim, h.state, &hs), gk_hash_bytes(t.bytes, t.len),
                 "step %d", s);
    cr_assert_eq(hs.w.total, t.len, "step %d", s);
    holds += rec[0] != 0 && rec[1] == 0;
  }
  cr_expect_gt(undos, 10);
  cr_expect_gt(holds, 10);
  gk_hasher_close(&hs);
  pp_stop(&h);
  free(coop);
}

Test(push_puzzle_state, a_box_digest_that_disagrees_with_the_cells_is_refused) {
  pp_harness h;
  start_with_limit(&h, "########\n#@ $  .#\n########\n", 1, 16);
  pp_press(&h, 0, 0, GK_PP_RIGHT);
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  /* u8 players, u32 level, u16 width, u16 height, then the digest */
  bytes[1 + 4 + 2 + 2] ^= 0x10;
  gk_reader r;
  gk_reader_init(&r, bytes, n);
  cr_expect_null(sim->read_state(&h.cfg, &r, err, sizeof err));
  cr_expect_str_eq(err, "push-puzzle state: box digest disagrees with the "
                        "cells");
  free(bytes);
  pp_stop(&h);
}

Test(push_puzzle_state, every_truncation_of_a_snapshot_is_refused) {
  pp_harness h;
  start_with_limit(&h, "########\n#@ $  .#\n########\n", 1, 16);
  pp_press(&h, 0, 0, GK_PP_RIGHT);
  pp_press(&h, 0, 0, GK_PP_RIGHT);
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  for (size_t cut = 0; cut < n; cut++) {
    gk_reader r;
    gk_reader_init(&r, bytes, cut);
    err[0] = '\0';
    void *s = sim->read_state(&h.cfg, &r, err, sizeof err);
    cr_expect_null(s, "accepted %zu of %zu bytes", cut, n);
    cr_expect_neq(err[0], '\0');
    sim->destroy(s);
  }
  /* and one trailing byte too many */
  uint8_t *more = malloc(n + 1);
  memcpy(more, bytes, n);
  more[n] = 0;
  gk_reader r;
  gk_reader_init(&r, more, n + 1);
  cr_expect_null(sim->read_state(&h.cfg, &r, err, sizeof err));
  cr_expect_str_eq(err, "push-puzzle state: trailing bytes");
  free(more);
  free(bytes);
  pp_stop(&h);
}

Test(push_puzzle_state, corrupted_snapshots_are_refused_or_canonical) {
  pp_harness h;
  bots b;
  char *coop = start_coop(&h, &b, 32, 5);
  uint8_t rec[2 * GK_PP_INPUT_SIZE];
  for (int s = 0; s < 400; s++) {
    bots_next(&b, rec, NULL);
    pp_step(&h, rec);
  }
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  uint8_t *bad = malloc(n);
  uint32_t refused = 0, accepted = 0;
  static const uint8_t flips[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x80, 0xff};
  for (size_t i = 0; i < n; i++) {
    for (size_t f = 0; f < sizeof flips; f++) {
      memcpy(bad, bytes, n);
      bad[i] ^= flips[f];
      gk_reader r;
      gk_reader_init(&r, bad, n);
      void *s = sim->read_state(&h.cfg, &r, err, sizeof err);
      if (s == NULL) {
        refused++;
        continue;
      }
      accepted++;
      /* whatever is accepted is canonical and plays without harm */
      size_t m;
      uint8_t *again = pp_state_bytes(sim, s, &m);
      cr_assert_eq(m, n);
      cr_assert_eq(memcmp(again, bad, n), 0, "byte %zu flip %x", i, flips[f]);
      free(again);
      bots fork = b;
      for (int k = 0; k < 64; k++) {
        uint8_t r1[2 * GK_PP_INPUT_SIZE];
        bots_next(&fork, r1, NULL);
        r1[1] |= GK_PP_UNDO; /* walk the history back */
        gk_step_input in = {(uint64_t)k, 3, 0, 2, r1};
        sim->step(s, &in);
      }
      sim->destroy(s);
    }
  }
  cr_expect_gt(refused, 0);
  free(bad);
  free(bytes);
  pp_stop(&h);
  free(coop);
}

Test(push_puzzle_state, a_history_that_does_not_fit_the_board_is_refused) {
  pp_harness h;
  start_with_limit(&h, "########\n#@ $  .#\n########\n", 1, 16);
  pp_press(&h, 0, 0, GK_PP_RIGHT);
  size_t n;
  uint8_t *bytes = pp_state_bytes(sim, h.state, &n);
  /* the last byte is the one history entry: "moved right, no push";
   * claim it pushed a box instead */
  bytes[n - 1] |= 4;
  gk_reader r;
  gk_reader_init(&r, bytes, n);
  cr_expect_null(sim->read_state(&h.cfg, &r, err, sizeof err));
  cr_expect_str_eq(err, "push-puzzle state: undo history does not fit the "
                        "board");
  free(bytes);
  pp_stop(&h);
}

/* --- config --------------------------------------------------------------*/

typedef struct each_log {
  uint32_t n;
  const char *keys[8];
  gk_value values[8];
} each_log;

static void each_cb(void *ctx, const char *key, const gk_value *v) {
  each_log *l = ctx;
  if (l->n < 8) {
    l->keys[l->n] = key;
    l->values[l->n] = *v;
    l->n++;
  }
}

Test(push_puzzle_config, defaults_enumerate_in_a_fixed_order) {
  gk_pp_config c;
  sim->config_default(&c);
  each_log l = {0};
  sim->config_each(&c, each_cb, &l);
  cr_assert_eq(l.n, 6);
  static const char *const want[] = {"levels",    "level",      "advance",
                                     "max_width", "max_height", "undo_limit"};
  for (uint32_t i = 0; i < 6; i++) cr_expect_str_eq(l.keys[i], want[i]);
  cr_expect_str_eq(l.values[0].s, "");
  cr_expect_eq(l.values[1].i, 0);
  cr_expect_eq(l.values[2].type, GK_VALUE_BOOL);
  cr_expect_eq(l.values[2].i, 1);
  cr_expect_eq(l.values[5].i, 1024);
  sim->config_free(&c);
}

Test(push_puzzle_config, each_key_round_trips_through_config_each) {
  gk_pp_config a, b;
  sim->config_default(&a);
  sim->config_default(&b);
  gk_value v = {GK_VALUE_STRING, 0,
                "#####\n#@$.#\n#####\n\n#####\n#.$@#\n#####\n"};
  cr_assert_eq(sim->config_set(&a, "levels", &v, err, sizeof err), 0);
  gk_value one = {GK_VALUE_INT, 1, NULL};
  gk_value no = {GK_VALUE_BOOL, 0, NULL};
  gk_value nine = {GK_VALUE_INT, 9, NULL};
  cr_assert_eq(sim->config_set(&a, "level", &one, err, sizeof err), 0);
  cr_assert_eq(sim->config_set(&a, "advance", &no, err, sizeof err), 0);
  cr_assert_eq(sim->config_set(&a, "max_width", &nine, err, sizeof err), 0);
  cr_assert_eq(sim->config_set(&a, "undo_limit", &nine, err, sizeof err), 0);
  each_log l = {0};
  sim->config_each(&a, each_cb, &l);
  for (uint32_t i = 0; i < l.n; i++)
    cr_assert_eq(sim->config_set(&b, l.keys[i], &l.values[i], err, sizeof err),
                 0, "%s", err);
  cr_expect_str_eq(a.levels, b.levels);
  cr_expect_eq(a.level, b.level);
  cr_expect_eq(a.advance, b.advance);
  cr_expect_eq(a.max_width, b.max_width);
  cr_expect_eq(a.max_height, b.max_height);
  cr_expect_eq(a.undo_limit, b.undo_limit);
  gk_pp_config c;
  cr_assert_eq(gk_pp_config_copy(&c, &a), 0);
  cr_expect_neq(c.levels, a.levels);
  cr_expect_str_eq(c.levels, a.levels);
  void *run = sim->create(&c, 0, 1, err, sizeof err);
  cr_assert_not_null(run, "%s", err);
  cr_expect_eq(pp_sample(sim, run, "level"), 1);
  sim->destroy(run);
  sim->config_free(&a);
  sim->config_free(&b);
  sim->config_free(&c);
}

static void expect_set(const char *key, gk_value v, int code,
                       const char *want) {
  gk_pp_config c;
  sim->config_default(&c);
  err[0] = '\0';
  cr_expect_eq(sim->config_set(&c, key, &v, err, sizeof err), code, "%s", key);
  cr_expect_str_eq(err, want);
  sim->config_free(&c);
}

Test(push_puzzle_config, bad_values_are_refused_with_the_key_named) {
  gk_value s = {GK_VALUE_STRING, 0, "x"};
  gk_value i = {GK_VALUE_INT, 2, NULL};
  gk_value b = {GK_VALUE_BOOL, 1, NULL};
  gk_value big = {GK_VALUE_INT, 300, NULL};
  gk_value neg = {GK_VALUE_INT, -1, NULL};
  gk_value badxsb = {GK_VALUE_STRING, 0, "#####\n#@$.#\n#?###\n"};
  expect_set("speed", i, GK_ENOTFOUND, "speed: unknown key for push-puzzle");
  expect_set("levels", i, GK_EINVAL, "levels: expected a string");
  expect_set("levels", badxsb, GK_EPARSE, "levels:3:2: unknown character");
  expect_set("level", s, GK_EINVAL, "level: expected an integer");
  expect_set("level", neg, GK_ERANGE, "level: -1 is out of range (0..9999)");
  expect_set("advance", i, GK_EINVAL, "advance: expected a bool");
  expect_set("max_width", big, GK_ERANGE,
             "max_width: 300 is out of range (3..255)");
  expect_set("max_height", i, GK_ERANGE,
             "max_height: 2 is out of range (3..255)");
  expect_set("undo_limit", b, GK_EINVAL, "undo_limit: expected an integer");
}

Test(push_puzzle_config, create_refuses_a_bad_level_index_or_player_count) {
  gk_pp_config c;
  sim->config_default(&c);
  gk_value far = {GK_VALUE_INT, 99, NULL};
  cr_assert_eq(sim->config_set(&c, "level", &far, err, sizeof err), 0);
  cr_expect_null(sim->create(&c, 0, 1, err, sizeof err));
  cr_expect_str_eq(err, "level: 99 is past the last level (the set has 5)");
  sim->config_free(&c);
  sim->config_default(&c);
  cr_expect_null(sim->create(&c, 0, 0, err, sizeof err));
  cr_expect_null(sim->create(&c, 0, GK_PLAYERS_MAX + 1, err, sizeof err));
  /* a set that fits 64 columns but not a smaller max_width */
  gk_value nine = {GK_VALUE_INT, 4, NULL};
  cr_assert_eq(sim->config_set(&c, "max_width", &nine, err, sizeof err), 0);
  cr_expect_null(sim->create(&c, 0, 1, err, sizeof err));
  cr_expect_not_null(strstr(err, "wider than the limit"), "%s", err);
  sim->config_free(&c);
}

/* Two levels: 7x5, then 9x4 (the wide one). */
static const char two_levels[] = "#######\n"
                                 "#.    #\n"
                                 "# $ @ #\n"
                                 "#     #\n"
                                 "#######\n"
                                 "\n"
                                 "#########\n"
                                 "#.$ @   #\n"
                                 "#       #\n"
                                 "#########\n";

static void set_int(gk_pp_config *c, const char *key, int64_t v) {
  gk_value x = {GK_VALUE_INT, v, NULL};
  cr_assert_eq(sim->config_set(c, key, &x, err, sizeof err), 0, "%s", err);
}

/* The message a parse of two_levels with these limits gives. */
static void parse_message(uint32_t w, uint32_t h, char *out, size_t n) {
  gk_pp_set set;
  cr_assert_neq(gk_pp_set_parse(&set, two_levels, strlen(two_levels), "levels",
                                w, h, out, n),
                0);
}

/* Runs created from two configs start in the same state. */
static void expect_same_start(const gk_pp_config *x, const gk_pp_config *y) {
  void *a = sim->create(x, 0, 1, err, sizeof err);
  cr_assert_not_null(a, "%s", err);
  void *b = sim->create(y, 0, 1, err, sizeof err);
  cr_assert_not_null(b, "%s", err);
  cr_expect_eq(hash_of(a), hash_of(b));
  sim->destroy(a);
  sim->destroy(b);
}

Test(push_puzzle_config, a_kept_level_set_still_meets_size_limits_set_later) {
  gk_pp_config c;
  sim->config_default(&c);
  gk_value t = {GK_VALUE_STRING, 0, two_levels};
  cr_assert_eq(sim->config_set(&c, "levels", &t, err, sizeof err), 0, "%s",
               err);
  char want[GK_ERRMSG_MAX];
  set_int(&c, "max_width", 8);
  parse_message(8, GK_PP_DIM_MAX, want, sizeof want);
  cr_expect_null(sim->create(&c, 0, 1, err, sizeof err));
  cr_expect_str_eq(err, want);
  cr_expect_str_eq(err,
                   "levels:7:9: level is wider than the limit (max_width)");
  set_int(&c, "max_width", 64);
  set_int(&c, "max_height", 4);
  parse_message(64, 4, want, sizeof want);
  cr_expect_null(sim->create(&c, 0, 1, err, sizeof err));
  cr_expect_str_eq(err, want);
  set_int(&c, "max_height", 5);
  set_int(&c, "level", 1);
  /* the same run as from a config whose text create must parse */
  gk_pp_config raw;
  sim->config_default(&raw);
  raw.levels = strdup(two_levels);
  raw.level = 1;
  expect_same_start(&c, &raw);
  sim->config_free(&raw);
  sim->config_free(&c);
}

Test(push_puzzle_config, a_copied_config_plays_after_the_original_is_freed) {
  gk_pp_config a, b, ref;
  sim->config_default(&a);
  sim->config_default(&ref);
  gk_value t = {GK_VALUE_STRING, 0, two_levels};
  cr_assert_eq(sim->config_set(&a, "levels", &t, err, sizeof err), 0);
  cr_assert_eq(sim->config_set(&ref, "levels", &t, err, sizeof err), 0);
  cr_assert_eq(gk_pp_config_copy(&b, &a), 0);
  sim->config_free(&a);
  expect_same_start(&b, &ref);
  sim->config_free(&b);
  sim->config_free(&ref);
}

Test(push_puzzle_parse, a_copied_set_has_the_same_levels) {
  gk_pp_set s, d;
  cr_assert_eq(gk_pp_set_parse(&s, two_levels, strlen(two_levels), "t",
                               GK_PP_DIM_MAX, GK_PP_DIM_MAX, err, sizeof err),
               0);
  cr_assert_eq(gk_pp_set_copy(&d, &s), 0);
  cr_assert_eq(d.count, 2);
  for (uint32_t i = 0; i < s.count; i++) {
    const gk_pp_level *l = &s.levels[i], *m = &d.levels[i];
    cr_expect_eq(m->width, l->width);
    cr_expect_eq(m->height, l->height);
    cr_expect_eq(m->line, l->line);
    cr_expect_eq(m->npushers, l->npushers);
    cr_expect_eq(m->boxes, l->boxes);
    cr_expect_neq(m->cells, l->cells);
    cr_expect_eq(memcmp(m->cells, l->cells, (size_t)l->width * l->height), 0);
  }
  gk_pp_set_close(&s);
  gk_pp_set_close(&d);
}

/* --- bot -----------------------------------------------------------------*/

Test(push_puzzle_bot, a_seeded_bot_is_deterministic_and_varied) {
  gk_pp_config c;
  sim->config_default(&c);
  uint8_t a[256], b[256], o[256];
  sim->bot_init(a, &c, 11, 0);
  sim->bot_init(b, &c, 11, 0);
  sim->bot_init(o, &c, 11, 1);
  uint32_t presses = 0, holds = 0, undos = 0, differ = 0;
  for (int s = 0; s < 5000; s++) {
    uint8_t ra[2], rb[2], ro[2];
    sim->bot_next(a, ra);
    sim->bot_next(b, rb);
    sim->bot_next(o, ro);
    cr_assert_eq(memcmp(ra, rb, 2), 0, "step %d", s);
    differ += memcmp(ra, ro, 2) != 0;
    presses += (ra[1] & 0x0f) != 0;
    holds += ra[0] != 0 && ra[1] == 0;
    undos += (ra[1] & GK_PP_UNDO) != 0;
  }
  cr_expect_gt(presses, 500);
  cr_expect_gt(holds, 100);
  cr_expect_gt(undos, 50);
  cr_expect_gt(differ, 1000);
  sim->config_free(&c);
}

Test(push_puzzle_bot, bots_play_a_room_with_no_options_through_gameloop) {
  gk_pp_config c;
  sim->config_default(&c);
  uint64_t hashes[2];
  for (int run = 0; run < 2; run++) {
    gk_loop loop;
    cr_assert_eq(gk_loop_init(&loop, NULL), 0);
    cr_assert_eq(gk_loop_start(&loop, sim, &c, 5, 4, err, sizeof err), 0, "%s",
                 err);
    bots b;
    bots_init(&b, &c, 4, 77);
    uint8_t rec[4 * GK_PP_INPUT_SIZE];
    gk_const_input in;
    for (int s = 0; s < 3000; s++) {
      bots_next(&b, rec, NULL);
      cr_assert_eq(gk_const_input_init(&in, rec, 4, GK_PP_INPUT_SIZE), 0);
      cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(1), 0), 1);
    }
    cr_expect_gt(pp_sample(sim, gk_loop_state(&loop), "moves"), 0);
    hashes[run] = loop.last_hash;
    gk_loop_close(&loop);
  }
  cr_expect_eq(hashes[0], hashes[1]);
  sim->config_free(&c);
}
