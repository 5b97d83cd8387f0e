/* bench_survivors.c: how fast the survivors genre steps and hashes at scale.
 *
 * Eight players with a level-5 wand firing every step, 2,000 enemies that do
 * are topped up every step (tough enemies; the few that die respawn at
 * once) and 1,000 projectiles (topped up too, see below): the
 * densest state measured here. After a warm-up that fills the caps,
 * it times batches of steps, first step alone, then step + the per-step
 * hash (what GameLoop does), then the hash alone, and prints the median
 * ns per step of each (medians over batches), the entity counts and the
 * canonical state size.
 *
 * Usage: bench_survivors [batches [steps_per_batch]]   (defaults 15 200)
 *        bench_survivors --early [steps [warm]]   (default 300, 0 warm-up runs)
 * Wall-clock figures on a shared machine are noisy; for stable numbers run
 * it under `valgrind --tool=callgrind --collect-atstart=no`: the timed
 * steps (step alone) are the only code collected (client requests, when
 * valgrind's headers were there at build time), so the total instructions
 * divided by the steps is the cost of one step.
 *
 * --restore bytes|copy early|dense [reps]: only `reps` (default 100)
 * restores of a predicting peer's head from the run's state are timed and
 * collected (callgrind: Ir / reps = instructions per restore), after 300
 * steps of the --early run or the dense one's warm-up: bytes, through
 * write_state + read_state (+ destroy of the old head), or copy, with
 * gk_sim.copy_state into the head (gk_net_peer_predict.c does the latter
 * when a genre has the hook).
 *
 * --early: the start of a run, 2 players and the default config: after
 * 300 steps of play (a handful of enemies and shots), `steps` more steps
 * are measured. The bots always send pick 1, so a level-up resolves at
 * once and no step is a cheap frozen one. Prints ns per step; under
 * callgrind the instructions per step are the collected total / steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_genres.h"
#include "gk_sv_internal.h"

/* Collect only the measured steps under callgrind (--collect-atstart=no);
 * without valgrind's headers the toggles are no-ops. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COLLECT_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#endif
#endif
#ifndef COLLECT_TOGGLE
#define COLLECT_TOGGLE() ((void)0)
#endif

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return v[n / 2];
}

static const gk_sim *sim = &gk_survivors_sim;
static uint8_t records[GK_SV_PLAYERS_MAX * GK_SV_INPUT_SIZE];
static gk__sv_bot bots[GK_SV_PLAYERS_MAX];

static gk_rng top_rng;

/* Shots die on their first hits in a crowd this dense, so the wands alone
 * keep only ~100 alive; top the list up to the cap with shots of 3 pierces
 * flying from random points, so every step carries ~1,000 projectiles. */
static void top_up_projectiles(gk__sv_state *s) {
  while (s->n_proj < (uint32_t)s->cfg.max_projectiles) {
    gk__sv_proj *q = &s->proj[s->n_proj++];
    q->x = (gk_fx)gk_rng_below(&top_rng, (uint32_t)s->cfg.arena_width << 16);
    q->y = (gk_fx)gk_rng_below(&top_rng, (uint32_t)s->cfg.arena_height << 16);
    uint16_t a = (uint16_t)gk_rng_next(&top_rng);
    q->vx = gk_fx_cos(a) * 6;
    q->vy = gk_fx_sin(a) * 6;
    q->damage = 10;
    q->last_hit = 0;
    q->life = 75;
    q->pierce = 3;
    q->owner = 0;
  }
}

/* The bots' records for the next step, without pauses (and with pick 1
 * when `pick` is set). */
static void next_inputs(uint32_t players, int pick) {
  for (uint32_t i = 0; i < players; i++) {
    uint8_t *r = records + i * GK_SV_INPUT_SIZE;
    sim->bot_next(&bots[i], r);
    r[2] = 0; /* no pauses in a benchmark */
    if (pick) r[3] = 1;
  }
}

/* One step; `collect` brackets the step alone for callgrind. */
static void step_only(gk__sv_state *s, uint32_t players, int collect) {
  gk_step_input in = {s->step, (1u << players) - 1, 0, players, records};
  if (collect) COLLECT_TOGGLE();
  sim->step(s, &in);
  if (collect) COLLECT_TOGGLE();
  s->n_events = 0; /* nobody drains: drop them like a flush would */
}

static void one_step_c(gk__sv_state *s, uint32_t players, int collect) {
  top_up_projectiles(s);
  next_inputs(players, 0);
  step_only(s, players, collect);
}

static void one_step(gk__sv_state *s, uint32_t players) {
  one_step_c(s, players, 0);
}

/* A run of cfg from seed 42 with every player's bot ready; NULL (said on
 * stderr) if create fails. */
static gk__sv_state *start(const gk_sv_config *cfg, uint32_t players) {
  char err[GK_ERRMSG_MAX];
  gk__sv_state *s = sim->create(cfg, 42, players, err, sizeof err);
  if (s == NULL) {
    fprintf(stderr, "create: %s\n", err);
    return NULL;
  }
  for (uint32_t i = 0; i < players; i++) sim->bot_init(&bots[i], cfg, 42, i);
  return s;
}

/* --early: ns (and, under callgrind, collected instructions) per step of
 * a 2-player run's first seconds. */
/* A fresh 2-player run of cfg after its first 300 steps of play. */
static gk__sv_state *early_start(const gk_sv_config *cfg) {
  gk__sv_state *s = start(cfg, 2);
  for (int i = 0; s != NULL && i < 300; i++) {
    next_inputs(2, 1);
    step_only(s, 2, 0);
  }
  return s;
}

/* --early: steps 301..300+steps of a 2-player run. The bots' input is
 * recorded on a first run (the steps alone collected for callgrind),
 * then a second run of the same seed steps through those records with
 * one clock pair around them all: an early step is well under a
 * microsecond, and per-step clock reads (in wasm32 a call out to
 * JavaScript) would weigh more than the step. `warm` untimed runs go
 * first, so a JIT (V8 runs wasm in its baseline tier until a function
 * has run enough) is timed on the code a match runs after its first
 * seconds. */
static uint64_t restore_ns(const gk__sv_state *s, const gk_sv_config *cfg,
                           int reps, int copy, int collect);

static int early(int steps, int warm) {
  const uint32_t players = 2;
  const size_t rsz = players * GK_SV_INPUT_SIZE;
  gk_sv_config cfg;
  sim->config_default(&cfg);
  uint8_t *rec = malloc((size_t)steps * rsz);
  gk__sv_state *s = NULL;
  for (int w = 0; rec != NULL && w <= warm; w++) {
    if (s != NULL) sim->destroy(s);
    s = early_start(&cfg);
    for (int i = 0; s != NULL && i < steps; i++) {
      next_inputs(players, 1);
      memcpy(rec + (size_t)i * rsz, records, rsz);
      step_only(s, players, w == warm);
    }
  }
  gk__sv_state *t = s != NULL ? early_start(&cfg) : NULL;
  if (rec == NULL || s == NULL || t == NULL) {
    free(rec);
    if (s != NULL) sim->destroy(s);
    return 1;
  }
  uint32_t e0 = t->n_enemies, p0 = t->n_proj;
  uint64_t played = t->play_steps, t0 = now_ns();
  for (int i = 0; i < steps; i++) {
    memcpy(records, rec + (size_t)i * rsz, rsz);
    step_only(t, players, 0);
  }
  uint64_t ns = now_ns() - t0;
  int same = s->play_steps == t->play_steps && s->n_enemies == t->n_enemies;
  printf("survivors early step: %u players, steps %llu..%llu, enemies %u..%u, "
         "projectiles %u..%u%s\n",
         players, (unsigned long long)played + 1,
         (unsigned long long)t->play_steps, e0, t->n_enemies, p0, t->n_proj,
         same ? "" : " (the two runs differ!)");
  printf("  early step       %llu ns/step (mean of %d, one clock pair)\n",
         (unsigned long long)(ns / (uint64_t)steps), steps);
  for (int copy = 0; copy <= 1; copy++) {
    uint64_t rs = restore_ns(t, &cfg, 200, copy, 0);
    printf("  restore %s %llu ns (%s, mean of 200) = %.0f%% of a step\n",
           copy ? "copy " : "bytes", (unsigned long long)rs,
           copy ? "copy_state" : "write + read + destroy",
           ns ? 100.0 * (double)rs * (double)steps / (double)ns : 0.0);
  }
  printf("  measured steps   %d (callgrind: collected Ir / %d = "
         "instructions per step)\n",
         steps, steps);
  sim->destroy(s);
  sim->destroy(t);
  free(rec);
  return same ? 0 : 1;
}

/* One restore of a predicting peer's head (gk_net_peer_predict.c) from
 * s: copy, with copy_state into *head (made by a bytes restore if there is
 * none yet); else the canonical bytes of s read back into a new state,
 * the old head destroyed. `collect` brackets it for callgrind. */
static void restore_once(const gk__sv_state *s, const gk_sv_config *cfg,
                         void **head, int copy, int collect) {
  if (copy && *head != NULL) {
    if (collect) COLLECT_TOGGLE();
    sim->copy_state(*head, s);
    if (collect) COLLECT_TOGGLE();
    return;
  }
  if (collect) COLLECT_TOGGLE();
  gk_buf_writer bw;
  gk_buf_writer_init(&bw);
  sim->write_state(s, &bw.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&bw, &len);
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  char err[GK_ERRMSG_MAX];
  sim->destroy(*head);
  *head = sim->read_state(cfg, &r, err, sizeof err);
  free(bytes);
  gk_buf_writer_close(&bw);
  if (collect) COLLECT_TOGGLE();
}

/* ns per restore (see restore_once), the mean of `reps`. */
static uint64_t restore_ns(const gk__sv_state *s, const gk_sv_config *cfg,
                           int reps, int copy, int collect) {
  void *head = NULL;
  if (copy) restore_once(s, cfg, &head, 0, 0); /* the first is bytes */
  uint64_t t0 = now_ns();
  for (int i = 0; i < reps; i++) restore_once(s, cfg, &head, copy, collect);
  uint64_t ns = (now_ns() - t0) / (uint64_t)reps;
  sim->destroy(head);
  return ns;
}

/* The dense run (8 players, the caps full) after its 300-step warm-up. */
static gk__sv_state *dense_start(gk_sv_config *cfg) {
  sim->config_default(cfg);
  cfg->max_enemies = 2000;
  cfg->max_projectiles = 1000;
  cfg->spawn_interval_start = 1;
  cfg->spawn_interval_min = 1;
  cfg->spawn_batch = 200;
  cfg->player_health = 1000000;
  cfg->enemy_health_pct = 100000;
  cfg->wand_cooldown_steps = 1;
  cfg->start_weapon_level = 5;
  cfg->pick_timeout_steps = 1;
  cfg->duration_steps = 5184000;
  gk__sv_state *s = start(cfg, 8);
  gk_rng_seed(&top_rng, 1, 1);
  for (int i = 0; s != NULL && i < 300; i++) one_step(s, 8);
  return s;
}

/* --restore MODE WHEN [reps]: see the top of the file. */
static int restore_only(int argc, char **argv) {
  int copy = argc > 2 && strcmp(argv[2], "copy") == 0;
  int dense = argc > 3 && strcmp(argv[3], "dense") == 0;
  int reps = argc > 4 ? atoi(argv[4]) : 100;
  if (argc < 4 || (!copy && strcmp(argv[2], "bytes") != 0) ||
      (!dense && strcmp(argv[3], "early") != 0) || reps < 1 || reps > 100000) {
    fprintf(stderr, "usage: bench_survivors --restore bytes|copy early|dense "
                    "[reps 1..100000]\n");
    return 2;
  }
  gk_sv_config cfg;
  gk__sv_state *s = dense ? dense_start(&cfg) : NULL;
  if (!dense) {
    sim->config_default(&cfg);
    s = early_start(&cfg);
  }
  if (s == NULL) return 1;
  uint64_t ns = restore_ns(s, &cfg, reps, copy, 1);
  printf("survivors restore (%s, %s: %u players, %u enemies, %u projectiles):"
         " %llu ns (mean of %d)\n",
         copy ? "copy_state" : "write + read + destroy",
         dense ? "dense" : "early", s->players, s->n_enemies, s->n_proj,
         (unsigned long long)ns, reps);
  sim->destroy(s);
  return 0;
}

static void drop_events(void *ctx, const gk_event *ev) {
  (void)ctx;
  (void)ev;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--restore") == 0)
    return restore_only(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--early") == 0) {
    int steps = argc > 2 ? atoi(argv[2]) : 300;
    int warm = argc > 3 ? atoi(argv[3]) : 0;
    if (steps < 1 || steps > 100000 || warm < 0 || warm > 1000) {
      fprintf(stderr, "usage: bench_survivors --early [steps 1..100000 "
                      "[warm-up runs 0..1000]]\n");
      return 2;
    }
    return early(steps, warm);
  }
  int batches = argc > 1 ? atoi(argv[1]) : 15;
  int per = argc > 2 ? atoi(argv[2]) : 200;
  if (batches < 1 || batches > 1000 || per < 1 || per > 100000) {
    fprintf(stderr,
            "usage: bench_survivors [batches 1..1000 [steps 1..100000]]\n");
    return 2;
  }
  gk_sv_config cfg;
  const uint32_t players = 8;
  gk__sv_state *s = dense_start(&cfg);
  if (s == NULL) return 1;
  gk_hasher h;
  if (gk_hasher_init(&h) != 0) return 1;

  uint64_t *t_step = calloc((size_t)batches, sizeof(uint64_t));
  uint64_t *t_both = calloc((size_t)batches, sizeof(uint64_t));
  uint64_t *t_hash = calloc((size_t)batches, sizeof(uint64_t));
  if (!t_step || !t_both || !t_hash) return 1;
  uint64_t sink = 0, min_e = UINT64_MAX, min_p = UINT64_MAX;
  for (int b = 0; b < batches; b++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < per; i++) one_step_c(s, players, 1);
    t_step[b] = (now_ns() - t0) / (uint64_t)per;
    t0 = now_ns();
    for (int i = 0; i < per; i++) {
      one_step(s, players);
      sink ^= gk_sim_hash(sim, s, &h);
    }
    t_both[b] = (now_ns() - t0) / (uint64_t)per;
    t0 = now_ns();
    for (int i = 0; i < per; i++) sink ^= gk_sim_hash(sim, s, &h) + (uint64_t)i;
    t_hash[b] = (now_ns() - t0) / (uint64_t)per;
    if (s->n_enemies < min_e) min_e = s->n_enemies;
    top_up_projectiles(s);
    if (s->n_proj < min_p) min_p = s->n_proj;
  }
  gk_buf_writer bw;
  gk_buf_writer_init(&bw);
  sim->write_state(s, &bw.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&bw, &len);
  free(bytes);
  gk_buf_writer_close(&bw);
  sim->drain_events(s, drop_events, NULL);

  uint64_t ms = median(t_step, batches), mb = median(t_both, batches),
           mh = median(t_hash, batches);
  uint64_t rs = restore_ns(s, &cfg, 20, 0, 0),
           rc = restore_ns(s, &cfg, 20, 1, 0);
  printf("survivors bench: %u players, %d batches x %d steps\n", players,
         batches, per);
  printf("  live enemies     >= %llu, projectiles before each step %llu\n",
         (unsigned long long)min_e, (unsigned long long)min_p);
  printf("  state size       %zu bytes\n", len);
  printf("  step             %llu ns/step (median)\n", (unsigned long long)ms);
  printf("  step + hash      %llu ns/step (median)\n", (unsigned long long)mb);
  printf("  hash alone       %llu ns (median)\n", (unsigned long long)mh);
  printf("  hash / step      %.1f%%\n",
         ms ? 100.0 * (double)mh / (double)ms : 0.0);
  printf("  restore bytes    %llu ns (write + read + destroy, mean of 20) = "
         "%.0f%% of a step\n",
         (unsigned long long)rs, ms ? 100.0 * (double)rs / (double)ms : 0.0);
  printf("  restore copy     %llu ns (copy_state, mean of 20) = "
         "%.0f%% of a step\n",
         (unsigned long long)rc, ms ? 100.0 * (double)rc / (double)ms : 0.0);
  printf("  (checksum %016llx)\n", (unsigned long long)sink);
  gk_hasher_close(&h);
  free(t_step);
  free(t_both);
  free(t_hash);
  sim->destroy(s);
  return 0;
}
