/* bench_replay.c: what verifying a replay costs over just stepping it.
 *
 * Workloads: one long survivors replay of the built-in bots, and the 90
 * xsokoban levels recorded from their published solutions (both recorded
 * here, through the gk-replay entry point, into a temporary directory).
 * For each workload three paths are timed, every one over the same steps:
 *
 *   verify  gk_replay_open_file + gk_replay_verify: read the file, check
 *           every block, parse the header and config, run gk_loop with
 *           { steps } budgets, hash every step, compare every hash
 *   hashed  sim->step then gk_sim_hash per step over inputs already in
 *           memory (no file, no loop, no comparison)
 *   bare    sim->step per step over inputs already in memory: no hashing,
 *           no file reading
 *
 * and reported as steps/s (median of --reps runs) and verify/bare. Run
 * `bench_replay --mode verify|hashed|bare --reps 1` under
 * `valgrind --tool=callgrind --toggle-collect=run_mode` (and
 * `--workload survivors|push-puzzle`) for instruction counts, which are
 * stable on a shared machine where seconds are not.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gk_genres.h"
#include "gk_replay.h"
#include "gk_replay_cli.h"

#define XSOK GK_SOURCE_ROOT "/tests/data/push-puzzle/xsokoban"
#define PP_LEVELS 90
#define REPS_MAX 51

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int quiet_cli(int argc, char **argv) {
  FILE *null = fopen("/dev/null", "w");
  int rc = gk_replay_cli(argc, argv, null != NULL ? null : stdout, stderr);
  if (null != NULL) fclose(null);
  return rc;
}

/* One replay, opened once; its inputs are read from the mapped bytes. */
typedef struct workload {
  char path[256];
  gk_replay r;
  const gk_sim *sim;
  void *cfg;
} workload;

static int load(workload *w) {
  if (gk_replay_open_file(&w->r, w->path) != 0) {
    fprintf(stderr, "%s: %s\n", w->path, w->r.damage.what);
    return -1;
  }
  w->sim = gk_genre_find(w->r.genre);
  w->cfg = w->sim ? calloc(1, w->sim->config_size) : NULL;
  char err[GK_ERRMSG_MAX];
  if (w->cfg == NULL ||
      gk_replay_prepare(&w->r, w->sim, w->cfg, err, sizeof err) != 0) {
    fprintf(stderr, "%s: cannot prepare\n", w->path);
    return -1;
  }
  return 0;
}

static void unload(workload *w) {
  if (w->sim != NULL && w->sim->config_free != NULL)
    w->sim->config_free(w->cfg);
  free(w->cfg);
  gk_replay_close(&w->r);
}

/* Steps the replay's inputs directly on the genre; hashes if `h`. */
static uint64_t run_direct(workload *w, gk_hasher *h) {
  char err[GK_ERRMSG_MAX];
  void *st = w->sim->create(w->cfg, w->r.seed, w->r.players, err, sizeof err);
  if (st == NULL) return 0;
  uint64_t acc = 0;
  size_t hint = 0;
  for (uint64_t s = 0; s < w->r.steps; s++) {
    gk_replay_step rs;
    gk_replay_step_at(&w->r, s, &rs, &hint);
    gk_step_input in = {s, rs.active_mask, rs.flags, w->r.players, rs.inputs};
    w->sim->step(st, &in);
    if (h != NULL) acc ^= gk_sim_hash(w->sim, st, h);
  }
  w->sim->destroy(st);
  return acc + 1;
}

static int run_verify(workload *w) {
  gk_replay r;
  gk_replay_open_file(&r, w->path);
  gk_replay_verdict v;
  int st = gk_replay_verify(&r, NULL, NULL, NULL, &v);
  gk_replay_close(&r);
  if (st != GK_REPLAY_OK) fprintf(stderr, "%s: %s\n", w->path, v.message);
  return st;
}

enum { MODE_VERIFY, MODE_HASHED, MODE_BARE, MODES };
static const char *mode_names[MODES] = {"verify", "hashed", "bare"};

/* Runs one mode over all workloads once; returns seconds. Not inlined, so
 * callgrind can collect just this (--toggle-collect=run_mode). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static double
run_mode(int mode, workload *ws, int n, gk_hasher *h) {
  double t0 = now_s();
  uint64_t sink = 0;
  for (int i = 0; i < n; i++) {
    if (mode == MODE_VERIFY)
      sink += (uint64_t)run_verify(&ws[i]);
    else
      sink += run_direct(&ws[i], mode == MODE_HASHED ? h : NULL);
  }
  double t = now_s() - t0;
  if (sink == 0xdeadbeef) puts("");
  return t;
}

static void bench(const char *name, workload *ws, int n, int reps, int only,
                  gk_hasher *h) {
  uint64_t steps = 0;
  for (int i = 0; i < n; i++) steps += ws[i].r.steps;
  double med[MODES] = {0};
  for (int m = 0; m < MODES; m++) {
    if (only >= 0 && m != only) continue;
    double t[REPS_MAX];
    for (int k = 0; k < reps; k++) t[k] = run_mode(m, ws, n, h);
    med[m] = median(t, reps);
    printf("%-22s %-7s %10" PRIu64 " steps  median %9.3f ms  %12.0f steps/s\n",
           name, mode_names[m], steps, med[m] * 1e3,
           med[m] > 0 ? (double)steps / med[m] : 0.0);
  }
  if (only < 0 && med[MODE_BARE] > 0)
    printf("%-22s verify/bare %.3f  hashed/bare %.3f  verify/hashed %.3f\n",
           name, med[MODE_VERIFY] / med[MODE_BARE],
           med[MODE_HASHED] / med[MODE_BARE],
           med[MODE_VERIFY] / med[MODE_HASHED]);
}

int main(int argc, char **argv) {
  int reps = 7, only = -1;
  const char *workload_only = NULL; /* "survivors" or "push-puzzle" */
  uint64_t sv_steps = 36000;        /* ten minutes at 60 steps/s */
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--reps") == 0)
      reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--steps") == 0)
      sv_steps = strtoull(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--workload") == 0)
      workload_only = argv[i + 1];
    else if (strcmp(argv[i], "--mode") == 0)
      for (int m = 0; m < MODES; m++)
        if (strcmp(argv[i + 1], mode_names[m]) == 0) only = m;
  }
  if (reps < 1 || reps > REPS_MAX) reps = 7;
  char dir[] = "/tmp/gk-bench-replay-XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;

  static workload sv[1], pp[PP_LEVELS];
  char steps_s[32];
  snprintf(steps_s, sizeof steps_s, "%" PRIu64, sv_steps);
  snprintf(sv[0].path, sizeof sv[0].path, "%s/survivors.gkr", dir);
  char *rec_sv[] = {"gk-replay", "record", "--genre", "survivors",
                    "--players", "4",      "--seed",  "42",
                    "--steps",   steps_s,  "--out",   sv[0].path};
  int want_sv =
      workload_only == NULL || strcmp(workload_only, "survivors") == 0;
  int want_pp =
      workload_only == NULL || strcmp(workload_only, "push-puzzle") == 0;
  int have_sv = want_sv && gk_genre_find("survivors") != NULL &&
                quiet_cli(12, rec_sv) == 0 && load(&sv[0]) == 0;
  int npp = 0;
  if (want_pp && gk_genre_find("push-puzzle") != NULL) {
    for (int l = 1; l <= PP_LEVELS; l++) {
      char sok[256], sol[256];
      snprintf(sok, sizeof sok, XSOK "/xsokoban%04d.sok", l);
      snprintf(sol, sizeof sol, "@" XSOK "/xsokoban%04d.sol", l);
      snprintf(pp[npp].path, sizeof pp[npp].path, "%s/pp%02d.gkr", dir, l);
      char *rec[] = {"gk-replay", "record",    "--genre", "push-puzzle",
                     "--level",   sok,         "--lurd",  sol,
                     "--out",     pp[npp].path};
      if (quiet_cli(10, rec) != 0 || load(&pp[npp]) != 0) break;
      npp++;
    }
  }
  gk_hasher h;
  gk_hasher_init(&h);
  printf("reps %d (median reported)\n", reps);
  if (have_sv)
    bench("survivors 4p bots", sv, 1, reps, only, &h);
  else if (want_sv)
    printf("survivors: not in this build\n");
  if (npp == PP_LEVELS)
    bench("push-puzzle 90 levels", pp, npp, reps, only, &h);
  else if (want_pp)
    printf("push-puzzle: not in this build (or a level failed)\n");
  gk_hasher_close(&h);
  if (have_sv) {
    unload(&sv[0]);
    unlink(sv[0].path);
  }
  for (int i = 0; i < npp; i++) {
    unload(&pp[i]);
    unlink(pp[i].path);
  }
  rmdir(dir);
  return 0;
}
