/* bench_push_puzzle.c: all 90 published xsokoban solutions replayed
 * through GameLoop with { steps } budgets, one press per step, the state
 * hashed (XXH3-64 over the canonical bytes) after every step, as a
 * lockstep room runs them.
 *
 * Usage: bench_push_puzzle [RUNS] [DATA_DIR]
 * Loads and parses every level and solution first (not timed), then times
 * RUNS passes over all 90 levels (each pass: start a run per level, one
 * frame per level with the whole script). Prints every pass and the
 * median steps/s and ns/step. Exits non-zero if any level is not solved
 * in its published number of moves, so the figures are for correct runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_loop.h"
#include "gk_push_puzzle.h"

#ifndef GK_SOURCE_ROOT
#define GK_SOURCE_ROOT "."
#endif
#define LEVELS 90
#define RUNS_MAX 101

typedef struct level_run {
  gk_pp_config cfg;
  uint8_t *records;
  size_t steps;
} level_run;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0, got;
  char *buf = malloc(cap + 1);
  while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *nb = realloc(buf, cap * 2 + 1);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf != NULL) buf[n] = '\0';
  return buf;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int load(level_run *lv, const char *dir, int i) {
  const gk_sim *sim = &gk_push_puzzle_sim;
  char path[1024], err[GK_ERRMSG_MAX];
  snprintf(path, sizeof path, "%s/xsokoban%04d.sok", dir, i);
  char *sok = read_file(path);
  snprintf(path, sizeof path, "%s/xsokoban%04d.sol", dir, i);
  char *sol = read_file(path);
  if (sok == NULL || sol == NULL) {
    fprintf(stderr, "cannot read level %d in %s\n", i, dir);
    free(sok);
    free(sol);
    return -1;
  }
  gk_pp_moves m;
  int rc = gk_pp_lurd_parse(&m, sol, strlen(sol), path, err, sizeof err);
  sim->config_default(&lv->cfg);
  gk_value v = {GK_VALUE_STRING, 0, sok};
  gk_value adv = {GK_VALUE_BOOL, 0, NULL};
  if (rc == 0) rc = sim->config_set(&lv->cfg, "levels", &v, err, sizeof err);
  if (rc == 0) rc = sim->config_set(&lv->cfg, "advance", &adv, err, sizeof err);
  if (rc == 0) {
    lv->steps = m.count;
    lv->records = malloc(m.count * GK_PP_INPUT_SIZE + 1);
    rc = lv->records == NULL
             ? GK_ENOMEM
             : gk_pp_script(m.moves, m.count, 1, 0, lv->records);
  }
  if (rc != 0) fprintf(stderr, "level %d: %s\n", i, err);
  gk_pp_moves_close(&m);
  free(sok);
  free(sol);
  return rc;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 7;
  const char *dir =
      argc > 2 ? argv[2] : GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban";
  if (runs < 1 || runs > RUNS_MAX) {
    fprintf(stderr, "RUNS must be 1..%d\n", RUNS_MAX);
    return 2;
  }
  const gk_sim *sim = &gk_push_puzzle_sim;
  static level_run lv[LEVELS];
  uint64_t total_steps = 0;
  for (int i = 0; i < LEVELS; i++) {
    if (load(&lv[i], dir, i + 1) != 0) return 1;
    total_steps += lv[i].steps;
  }
  gk_loop loop;
  if (gk_loop_init(&loop, NULL) != 0) return 1;
  uint64_t ns[RUNS_MAX];
  uint64_t check = 0;
  for (int r = 0; r < runs; r++) {
    uint64_t spent = 0;
    for (int i = 0; i < LEVELS; i++) {
      char err[GK_ERRMSG_MAX];
      if (gk_loop_start(&loop, sim, &lv[i].cfg, 1, 1, err, sizeof err) != 0) {
        fprintf(stderr, "level %d: %s\n", i + 1, err);
        return 1;
      }
      gk_script_input in;
      gk_script_input_init(&in, lv[i].records, lv[i].steps, 1,
                           GK_PP_INPUT_SIZE);
      uint64_t t0 = now_ns();
      int ran = gk_loop_frame(&loop, &in.base, gk_budget_steps(lv[i].steps), 0);
      spent += now_ns() - t0;
      if (ran != (int)lv[i].steps || !sim->is_over(gk_loop_state(&loop))) {
        fprintf(stderr, "level %d: not solved by its solution\n", i + 1);
        return 1;
      }
      check ^= loop.last_hash;
    }
    ns[r] = spent;
    printf("pass %d: %llu steps in %.3f ms, %.0f steps/s, %.1f ns/step\n",
           r + 1, (unsigned long long)total_steps, spent / 1e6,
           total_steps * 1e9 / (double)spent, spent / (double)total_steps);
  }
  qsort(ns, (size_t)runs, sizeof ns[0], cmp_u64);
  uint64_t med = ns[runs / 2];
  printf("push-puzzle: 90 xsokoban solutions, %llu steps per pass, "
         "hash every step (check %016llx)\n",
         (unsigned long long)total_steps, (unsigned long long)check);
  printf("median of %d passes: %.0f steps/s, %.1f ns/step\n", runs,
         total_steps * 1e9 / (double)med, med / (double)total_steps);
  gk_loop_close(&loop);
  for (int i = 0; i < LEVELS; i++) {
    sim->config_free(&lv[i].cfg);
    free(lv[i].records);
  }
  return 0;
}
