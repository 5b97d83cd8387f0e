/* bench_hash.c: what the per-step hash costs, against memcpy of the same
 * bytes.
 *
 * For every registered genre with a bot: play the bots for a while (so
 * the state is a mid-game state, not an empty one), then time
 *   - hash:   gk_sim_hash (canonical write through the staging writer into
 *             XXH3-64), the loop's per-step cost;
 *   - xxh3:   XXH3-64 over the already-written bytes (hashing alone);
 *   - memcpy: copying the same number of bytes once.
 * Each figure is the median of 15 batches. Output: one table.
 *
 * usage: bench-hash [WARMUP_STEPS [GENRE]]
 * (one genre only, e.g. under `valgrind --tool=callgrind
 * --toggle-collect=gk_sim_hash --toggle-collect=gk_hash_bytes`)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_genres.h"
#include "gk_loop.h"

#define BATCHES 15

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double median(uint64_t *v, int n, uint64_t iters) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return (double)v[n / 2] / (double)iters;
}

static volatile uint64_t sink;

int main(int argc, char **argv) {
  uint64_t warmup = argc > 1 ? strtoull(argv[1], NULL, 10) : 7200;
  const char *only = argc > 2 ? argv[2] : NULL;
  printf("%-12s %10s %12s %12s %12s %10s\n", "genre", "state_B", "hash_ns",
         "xxh3_ns", "memcpy_ns", "hash/memcpy");
  for (size_t g = 0; gk_genres[g] != NULL; g++) {
    const gk_sim *sim = gk_genres[g];
    if (sim->bot_size == 0 || (only != NULL && strcmp(sim->name, only) != 0))
      continue;
    uint32_t players = sim->players_max < 3 ? sim->players_max : 3;
    void *cfg = calloc(1, sim->config_size);
    gk_loop loop;
    char err[GK_ERRMSG_MAX];
    sim->config_default(cfg);
    if (gk_loop_init(&loop, NULL) != 0 ||
        gk_loop_start(&loop, sim, cfg, 42, players, err, sizeof err) != 0) {
      fprintf(stderr, "%s: cannot start: %s\n", sim->name, err);
      return 1;
    }
    gk_bot_input b;
    gk_bot_input_init(&b, sim, cfg, 42, players);
    gk_loop_frame(&loop, &b.base, gk_budget_steps(warmup), 0);

    gk_buf_writer bw;
    gk_buf_writer_init(&bw);
    sim->write_state(gk_loop_state(&loop), &bw.w);
    size_t len;
    uint8_t *bytes = gk_buf_writer_take(&bw, &len);
    uint8_t *copy = malloc(len + 1);
    gk_hasher h;
    gk_hasher_init(&h);
    /* Enough iterations for ~2 ms per batch. */
    uint64_t iters = 1 + 2000000 / (len + 64);
    uint64_t th[BATCHES], tx[BATCHES], tm[BATCHES];
    for (int k = 0; k < BATCHES; k++) {
      uint64_t t0 = now_ns();
      for (uint64_t i = 0; i < iters; i++)
        sink += gk_sim_hash(sim, gk_loop_state(&loop), &h);
      uint64_t t1 = now_ns();
      for (uint64_t i = 0; i < iters; i++) sink += gk_hash_bytes(bytes, len);
      uint64_t t2 = now_ns();
      for (uint64_t i = 0; i < iters; i++) {
        bytes[0] = (uint8_t)i;
        memcpy(copy, bytes, len);
        sink += copy[len - 1];
      }
      uint64_t t3 = now_ns();
      th[k] = t1 - t0;
      tx[k] = t2 - t1;
      tm[k] = t3 - t2;
    }
    double mh = median(th, BATCHES, iters), mx = median(tx, BATCHES, iters),
           mm = median(tm, BATCHES, iters);
    printf("%-12s %10zu %12.0f %12.0f %12.0f %10.1fx\n", sim->name, len, mh, mx,
           mm, mh / (mm > 0 ? mm : 1));
    gk_hasher_close(&h);
    free(copy);
    free(bytes);
    gk_buf_writer_close(&bw);
    gk_loop_close(&loop);
    if (sim->config_free != NULL) sim->config_free(cfg);
    free(cfg);
  }
  return 0;
}
