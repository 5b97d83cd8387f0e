/* gk_chain.c: prints the hash chains of fixed runs of every genre, for the
 * determinism matrix (scripts/determinism.sh).
 *
 * It links only gk_core (libc), so it builds with any C11 compiler for any
 * CPU. Each line names a run and gives its step count, its final step hash
 * and its chain digest, where chain = XXH3-64(LE64(chain) || LE64(hash))
 * folded over every step (chain starts at 0). The runs are the inputs of
 * the golden replays and more: every genre's built-in bots from a fixed
 * seed, and every published push-puzzle solution in DATA_DIR. Built with
 * gcc and clang, -O0 and -O3, for x86-64, i386 and aarch64, the output
 * must be byte-identical.
 *
 * The line labelled "golden" replays the inputs of the committed golden
 * survivors replay; tests/determinism/meson.build checks its final hash
 * against the replay file, so the matrix speaks for the golden replays too
 * (the push-puzzle golden is xsokoban0001's solution, also a line here).
 *
 * usage: gk-chain [--steps N] DATA_DIR   (DATA_DIR = tests/data/push-puzzle)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_loop.h"
#include "gk_push_puzzle.h"
#include "gk_survivors.h"
#include "gk_testkit_probe.h"

typedef gk_testkit_chain chain; /* folded by the test kit's probe code */

/* Steps `loop` one step at a time over `in`, folding every hash. */
static int run_chain(gk_loop *loop, gk_input *in, uint64_t steps, chain *c) {
  for (uint64_t s = 0; s < steps; s++) {
    if (gk_loop_frame(loop, in, gk_budget_steps(1), 0) != 1) return -1;
    gk_testkit_chain_add(c, loop->last_hash);
  }
  return 0;
}

/* Bots seeded by gk_bot_input_init, as `gk-replay record` seeds them:
 * player p gets the p-th gk_splitmix64 output from `seed`, and the run
 * gets `seed`. */
static int bot_run(const gk_sim *sim, uint32_t players, uint64_t seed,
                   uint64_t steps, const char *label) {
  if (players < sim->players_min || players > sim->players_max ||
      sim->bot_size == 0)
    return 0;
  void *cfg = calloc(1, sim->config_size);
  gk_loop loop;
  char err[GK_ERRMSG_MAX];
  if (cfg == NULL || gk_loop_init(&loop, NULL) != 0) {
    free(cfg);
    return -1;
  }
  sim->config_default(cfg);
  int rc = gk_loop_start(&loop, sim, cfg, seed, players, err, sizeof err);
  chain c = {0, 0, 0};
  if (rc == 0) {
    gk_bot_input b;
    rc = gk_bot_input_init(&b, sim, cfg, seed, players);
    if (rc == 0) rc = run_chain(&loop, &b.base, steps, &c);
    if (rc == 0)
      printf("%s %s players=%u seed=%llu steps=%llu final=%016llx "
             "chain=%016llx\n",
             label, sim->name, (unsigned)players, (unsigned long long)seed,
             (unsigned long long)c.steps, (unsigned long long)loop.last_hash,
             (unsigned long long)c.digest);
  } else {
    fprintf(stderr, "%s: %s\n", sim->name, err);
  }
  gk_loop_close(&loop);
  if (sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
  return rc;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0, got;
  char *buf = malloc(cap + 1);
  while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *p = realloc(buf, 2 * cap + 1);
      if (p == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf != NULL) {
    buf[n] = '\0';
    *len = n;
  }
  return buf;
}

/* Plays the published solution of xsokoban level `n` through GameLoop. */
static int solution_run(const char *dir, int n) {
  const gk_sim *sim = &gk_push_puzzle_sim;
  char path[1024], err[GK_ERRMSG_MAX];
  size_t sok_len = 0, sol_len = 0;
  snprintf(path, sizeof path, "%s/xsokoban/xsokoban%04d.sok", dir, n);
  char *sok = read_file(path, &sok_len);
  snprintf(path, sizeof path, "%s/xsokoban/xsokoban%04d.sol", dir, n);
  char *sol = read_file(path, &sol_len);
  gk_pp_config cfg;
  gk_pp_moves moves = {0};
  uint8_t *records = NULL;
  gk_loop loop;
  int rc = -1, loop_ok = 0;
  sim->config_default(&cfg);
  if (sok == NULL || sol == NULL) {
    fprintf(stderr, "cannot read level %d under %s\n", n, dir);
    goto done;
  }
  gk_value levels = {GK_VALUE_STRING, 0, sok};
  gk_value no = {GK_VALUE_BOOL, 0, NULL};
  if (sim->config_set(&cfg, "levels", &levels, err, sizeof err) != 0 ||
      sim->config_set(&cfg, "advance", &no, err, sizeof err) != 0 ||
      gk_pp_lurd_parse(&moves, sol, sol_len, path, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    goto done;
  }
  records = malloc(moves.count * GK_PP_INPUT_SIZE + 1);
  if (records == NULL ||
      gk_pp_script(moves.moves, moves.count, 1, 0, records) != 0 ||
      gk_loop_init(&loop, NULL) != 0)
    goto done;
  loop_ok = 1;
  if (gk_loop_start(&loop, sim, &cfg, 0, 1, err, sizeof err) != 0) {
    fprintf(stderr, "level %d: %s\n", n, err);
    goto done;
  }
  gk_script_input script;
  gk_script_input_init(&script, records, moves.count, 1, GK_PP_INPUT_SIZE);
  chain c = {0, 0, 0};
  if (run_chain(&loop, &script.base, moves.count, &c) != 0) goto done;
  printf("solution xsokoban%04d steps=%llu final=%016llx chain=%016llx\n", n,
         (unsigned long long)c.steps, (unsigned long long)loop.last_hash,
         (unsigned long long)c.digest);
  rc = 0;
done:
  if (loop_ok) gk_loop_close(&loop);
  free(records);
  gk_pp_moves_close(&moves);
  sim->config_free(&cfg);
  free(sok);
  free(sol);
  return rc;
}

int main(int argc, char **argv) {
  uint64_t steps = 18000;
  int argi = 1;
  if (argi + 1 < argc && strcmp(argv[argi], "--steps") == 0) {
    steps = strtoull(argv[argi + 1], NULL, 10);
    argi += 2;
  }
  if (argi + 1 != argc) {
    fprintf(stderr, "usage: gk-chain [--steps N] DATA_DIR\n");
    return 2;
  }
  int failed = 0;
  for (size_t i = 0; gk_genres[i] != NULL; i++)
    failed |= bot_run(gk_genres[i], 3, 0x5eed, steps, "bot") != 0;
  /* The inputs of tests/data/replays/survivors-2p-seed7-3000.gkr: its
   * final hash here must equal the one the replay records. */
  failed |= bot_run(&gk_survivors_sim, 2, 7, 3000, "golden") != 0;
  for (int n = 1; n <= 90; n++) failed |= solution_run(argv[argi], n) != 0;
  return failed ? 1 : 0;
}
