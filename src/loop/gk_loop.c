/* gk_loop.c: GameLoop.
 *
 * The story of a frame: work out how many steps the budget owes (the fixed
 * clock for { seconds }, the number itself for { steps }), run each of them
 * as read -> step -> hash -> end_step, call end_frame once if anything ran,
 * then flush the genre's events to listeners, then take at most one sample.
 * That order is the contract of ADR-0010 and ADR-0004, pinned by
 * tests/core/test_loop.c's call log.
 *
 * The fixed clock is integer arithmetic: `carry` holds nanoseconds scaled
 * by step_seconds.den, so one step costs step_seconds.num * 1e9 units and
 * no rounding ever happens. A { steps } frame clears it.
 *
 * Reentrancy: `in_frame` is set for the whole of gk_loop_frame (every
 * read, step, end_step, end_frame, the flush and the sample) and
 * `delivering` while listeners run. frame, start, adopt, stop and modify
 * refuse with GK_EBUSY while either is set, so nothing called from inside
 * a frame (a genre's step, an input source, a listener) can run a nested
 * step, replace or free the state, or change it behind the step order.
 */
#include "gk_loop.h"

#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define NS_PER_S 1000000000ull

/* Inside a frame or a delivery: the calls that run steps or replace,
 * free or change the state are refused. */
static int busy(const gk_loop *loop) {
  return loop->in_frame || loop->delivering;
}

int gk_loop_init(gk_loop *loop, const gk_loop_options *opts) {
  memset(loop, 0, sizeof *loop);
  loop->ring_cap =
      (opts != NULL && opts->hash_ring > 0) ? opts->hash_ring : 256;
  /* Not zeroed: gk_loop_hash_at reads only slots written since the run
   * started, and a verifier opens one loop per file. */
  if ((uint64_t)loop->ring_cap * sizeof *loop->ring <= SIZE_MAX)
    loop->ring = malloc((size_t)loop->ring_cap * sizeof *loop->ring);
  loop->hasher = malloc(sizeof *loop->hasher);
  if (loop->ring == NULL || loop->hasher == NULL ||
      gk_hasher_init(loop->hasher) != 0) {
    free(loop->ring);
    free(loop->hasher);
    memset(loop, 0, sizeof *loop);
    return GK_ENOMEM;
  }
  return 0;
}

static void free_run(gk_loop *loop) {
  if (loop->sim != NULL && loop->state != NULL) loop->sim->destroy(loop->state);
  loop->sim = NULL;
  loop->state = NULL;
}

void gk_loop_close(gk_loop *loop) {
  free_run(loop);
  if (loop->hasher != NULL) gk_hasher_close(loop->hasher);
  free(loop->hasher);
  free(loop->ring);
  memset(loop, 0, sizeof *loop);
}

/* Installs a fresh run: counters, clock and sample history start over. */
static void install(gk_loop *loop, const gk_sim *sim, void *state,
                    uint32_t players, uint64_t steps) {
  free_run(loop);
  loop->sim = sim;
  loop->state = state;
  loop->players = players;
  loop->steps = steps;
  loop->ring_from = steps;
  loop->ring_at = loop->ring_cap ? (uint32_t)(steps % loop->ring_cap) : 0;
  loop->last_hash = 0;
  loop->carry = 0;
  loop->input_err = 0;
  loop->sampled = 0;
  loop->version++;
}

int gk_loop_start(gk_loop *loop, const gk_sim *sim, const void *cfg,
                  uint64_t seed, uint32_t players, char *err, size_t errlen) {
  if (busy(loop))
    return gk_errf(err, errlen, GK_EBUSY,
                   "gk_loop_start called from inside a frame");
  int rc = gk_sim_check(sim, err, errlen);
  if (rc != 0) return rc;
  if (players < sim->players_min || players > sim->players_max)
    return gk_errf(err, errlen, GK_ERANGE,
                   "%s: %u players, the genre takes %u to %u", sim->name,
                   (unsigned)players, (unsigned)sim->players_min,
                   (unsigned)sim->players_max);
  if (err != NULL && errlen > 0) err[0] = '\0';
  void *state = sim->create(cfg, seed, players, err, errlen);
  if (state == NULL) {
    if (err != NULL && errlen > 0 && err[0] == '\0')
      gk_errf(err, errlen, GK_EINVAL, "%s: create failed", sim->name);
    return GK_EINVAL;
  }
  install(loop, sim, state, players, 0);
  return 0;
}

int gk_loop_adopt(gk_loop *loop, const gk_sim *sim, void *state,
                  uint32_t players, uint64_t steps) {
  if (busy(loop) || gk_sim_check(sim, NULL, 0) != 0 || state == NULL ||
      players < sim->players_min || players > sim->players_max) {
    if (sim != NULL && sim->destroy != NULL && state != NULL)
      sim->destroy(state);
    return busy(loop) ? GK_EBUSY : GK_EINVAL;
  }
  install(loop, sim, state, players, steps);
  return 0;
}

int gk_loop_stop(gk_loop *loop) {
  if (busy(loop)) return GK_EBUSY;
  if (loop->sim != NULL) {
    free_run(loop);
    loop->version++;
  }
  return 0;
}

/* How many steps the budget owes now; updates the fixed clock. */
static uint64_t owed_steps(gk_loop *loop, gk_budget budget) {
  if (budget.kind == GK_BUDGET_STEPS) {
    loop->carry = 0;
    return budget.amount;
  }
  uint64_t ns = budget.amount < GK_LOOP_MAX_COUNTED_NS ? budget.amount
                                                       : GK_LOOP_MAX_COUNTED_NS;
  /* den < 2^32 and ns <= 2.5e8, so the product stays below 2^61. */
  uint64_t unit = (uint64_t)loop->sim->step_seconds.num * NS_PER_S;
  loop->carry += ns * loop->sim->step_seconds.den;
  uint64_t owed = loop->carry / unit;
  if (owed > GK_LOOP_MAX_CATCHUP) {
    /* Run five, drop the whole-step backlog, keep the sub-step part. */
    owed = GK_LOOP_MAX_CATCHUP;
    loop->carry %= unit;
  } else {
    loop->carry -= owed * unit;
  }
  return owed;
}

typedef struct flush_ctx {
  gk_loop *loop;
} flush_ctx;

static void deliver_event(void *ctx, const gk_event *ev) {
  gk_loop *loop = ((flush_ctx *)ctx)->loop;
  for (uint32_t i = 0; i < loop->n_event; i++)
    loop->on_event[i].cb(loop->on_event[i].ctx, loop, ev);
}

static void flush_events(gk_loop *loop) {
  if (loop->sim->drain_events == NULL) return;
  flush_ctx fc = {loop};
  loop->delivering = 1;
  loop->sim->drain_events(loop->state, deliver_event, &fc);
  loop->delivering = 0;
}

static void maybe_sample(gk_loop *loop, uint64_t now_ms) {
  const gk_sim *sim = loop->sim;
  uint64_t simv =
      sim->sample_version != NULL ? sim->sample_version(loop->state) : 0;
  int due;
  if (!loop->sampled)
    due = 1;
  else if (sim->every_ms != 0 && now_ms - loop->sample_ms >= sim->every_ms &&
           now_ms >= loop->sample_ms)
    due = 1;
  else
    due = simv != loop->sample_sim_version ||
          loop->version != loop->sample_version;
  if (!due) return;
  loop->sampled = 1;
  loop->sample_ms = now_ms;
  loop->sample_sim_version = simv;
  loop->sample_version = loop->version;
  loop->delivering = 1;
  for (uint32_t i = 0; i < loop->n_sample; i++)
    loop->on_sample[i].cb(loop->on_sample[i].ctx, loop, now_ms);
  loop->delivering = 0;
}

int gk_loop_frame(gk_loop *loop, gk_input *input, gk_budget budget,
                  uint64_t now_ms) {
  if (busy(loop)) return GK_EBUSY;
  if (input == NULL || input->read == NULL) return GK_EINVAL;
  if (budget.kind == GK_BUDGET_STEPS && budget.amount > INT_MAX)
    return GK_ERANGE;
  if (loop->sim == NULL) return 0;
  const gk_sim *sim = loop->sim;
  uint64_t owed = loop->paused ? 0 : owed_steps(loop, budget);
  uint64_t ran = 0;
  loop->input_err = 0;
  loop->in_frame = 1;
  for (; ran < owed; ran++) {
    gk_step_input in;
    memset(&in, 0, sizeof in);
    in.step = loop->steps;
    int rc = input->read(input, loop->steps, &in);
    if (rc == 0 && (in.players != loop->players || in.inputs == NULL))
      rc = GK_EINPUT;
    if (rc != 0) {
      loop->input_err = rc;
      break;
    }
    sim->step(loop->state, &in);
    uint64_t h = gk_sim_hash(sim, loop->state, loop->hasher);
    loop->ring[loop->ring_at] = h;
    if (++loop->ring_at == loop->ring_cap) loop->ring_at = 0;
    loop->last_hash = h;
    loop->steps++;
    if (input->end_step != NULL) input->end_step(input);
  }
  if (ran > 0 && input->end_frame != NULL) input->end_frame(input);
  flush_events(loop);
  maybe_sample(loop, now_ms);
  loop->in_frame = 0;
  return (int)ran;
}

void gk_loop_pause(gk_loop *loop) {
  loop->paused = 1;
}
void gk_loop_resume(gk_loop *loop) {
  loop->paused = 0;
}

int gk_loop_modify(gk_loop *loop, int (*fn)(void *state, void *ctx),
                   void *ctx) {
  if (busy(loop)) return GK_EBUSY;
  if (loop->sim == NULL) return GK_ENORUN;
  if (fn == NULL) return GK_EINVAL;
  int rc = fn(loop->state, ctx);
  loop->version++;
  return rc;
}

int gk_loop_replace(gk_loop *loop, void *state) {
  int rc = busy(loop)          ? GK_EBUSY
           : loop->sim == NULL ? GK_ENORUN
           : state == NULL     ? GK_EINVAL
                               : 0;
  if (rc != 0) {
    if (loop->sim != NULL && state != NULL) loop->sim->destroy(state);
    return rc;
  }
  loop->sim->destroy(loop->state);
  loop->state = state;
  loop->version++;
  return 0;
}

const void *gk_loop_state(const gk_loop *loop) {
  return loop->state;
}

int gk_loop_hash_at(const gk_loop *loop, uint64_t step, uint64_t *hash) {
  if (loop->sim == NULL || step >= loop->steps || step < loop->ring_from ||
      loop->steps - step > loop->ring_cap)
    return GK_ENOTKEPT;
  *hash = loop->ring[step % loop->ring_cap];
  return 0;
}

int gk_loop_on_event(gk_loop *loop, gk_loop_event_cb cb, void *ctx) {
  if (cb == NULL) return GK_EINVAL;
  if (loop->delivering) return GK_EBUSY;
  if (loop->n_event >= GK_LOOP_LISTENERS_MAX) return GK_EFULL;
  loop->on_event[loop->n_event].cb = cb;
  loop->on_event[loop->n_event].ctx = ctx;
  loop->n_event++;
  return 0;
}

int gk_loop_on_sample(gk_loop *loop, gk_loop_sample_cb cb, void *ctx) {
  if (cb == NULL) return GK_EINVAL;
  if (loop->delivering) return GK_EBUSY;
  if (loop->n_sample >= GK_LOOP_LISTENERS_MAX) return GK_EFULL;
  loop->on_sample[loop->n_sample].cb = cb;
  loop->on_sample[loop->n_sample].ctx = ctx;
  loop->n_sample++;
  return 0;
}

void gk_loop_write_sample(const gk_loop *loop, gk_writer *w) {
  if (loop->sim != NULL) loop->sim->write_sample(loop->state, w);
}
