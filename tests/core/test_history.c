/* test_history.c: gk_history against a straight run of survivors (three
 * bots): every state it regenerates is the state the run had, its memory
 * bound holds, and steps outside its window are a clear error. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_history.h"
#include "gk_loop.h"
#include "gk_state_diff.h"

/* The bots, recording every step into the history as the loop runs it. */
typedef struct rec_input {
  gk_input base; /* must be first */
  gk_bot_input bots;
  gk_history *h;
  gk_loop *loop;
  gk_step_input last;
} rec_input;

static int rec_read(gk_input *in, uint64_t step, gk_step_input *out) {
  rec_input *r = (rec_input *)in;
  int rc = r->bots.base.read(&r->bots.base, step, out);
  if (rc == 0) r->last = *out;
  return rc;
}

static void rec_end_step(gk_input *in) {
  rec_input *r = (rec_input *)in;
  gk_history_record(r->h, r->loop, &r->last);
}

typedef struct run {
  const gk_sim *sim;
  void *cfg;
  gk_loop loop;
  gk_history h;
  rec_input in;
} run;

static void run_open(run *x, const gk_history_options *o) {
  memset(x, 0, sizeof *x);
  x->sim = gk_genre_find("survivors");
  cr_assert_not_null(x->sim);
  x->cfg = calloc(1, x->sim->config_size);
  x->sim->config_default(x->cfg);
  gk_loop_options lo = {4096};
  cr_assert_eq(gk_loop_init(&x->loop, &lo), 0);
  cr_assert_eq(gk_loop_start(&x->loop, x->sim, x->cfg, 7, 3, NULL, 0), 0);
  cr_assert_eq(gk_history_init(&x->h, x->sim, x->cfg, 3, o), 0);
  cr_assert_eq(gk_history_mark(&x->h, &x->loop), 0);
  cr_assert_eq(gk_bot_input_init(&x->in.bots, x->sim, x->cfg, 7, 3), 0);
  x->in.base.read = rec_read;
  x->in.base.end_step = rec_end_step;
  x->in.h = &x->h;
  x->in.loop = &x->loop;
}

static void run_steps(run *x, uint64_t n) {
  cr_assert_eq(gk_loop_frame(&x->loop, &x->in.base, gk_budget_steps(n), 0),
               (int)n);
}

static void run_close(run *x) {
  gk_history_close(&x->h);
  gk_loop_close(&x->loop);
  if (x->sim->config_free != NULL) x->sim->config_free(x->cfg);
  free(x->cfg);
}

static uint8_t *bytes_of(const gk_sim *sim, const void *st, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(st, &b.w);
  return gk_buf_writer_take(&b, len);
}

Test(history, every_state_it_regenerates_is_the_state_the_run_had) {
  run x;
  gk_history_options o = {.every = 64, .window = 300};
  run_open(&x, &o);
  for (int round = 0; round < 3; round++) {
    run_steps(&x, 437);
    cr_assert_eq(x.h.last, x.loop.steps);
    cr_assert_geq(x.h.last - x.h.first, 300u, "the window is covered");
    for (uint64_t n = x.h.first; n <= x.h.last; n += 7) {
      uint8_t *b = NULL;
      size_t len = 0;
      uint64_t hash = 0, want = 0;
      char err[GK_ERRMSG_MAX] = "";
      cr_assert_eq(
          gk_history_state_at(&x.h, n, &b, &len, &hash, err, sizeof err), 0,
          "%s", err);
      if (n > 0) {
        cr_assert_eq(gk_loop_hash_at(&x.loop, n - 1, &want), 0);
        cr_assert_eq(hash, want, "state after %llu steps",
                     (unsigned long long)n);
        cr_assert_eq(gk_history_hash_at(&x.h, n, &want) == 0 ? want : hash,
                     hash);
      }
      free(b);
    }
  }
  /* the newest is byte for byte the run's own state */
  size_t la = 0, lb = 0;
  uint8_t *a = bytes_of(x.sim, gk_loop_state(&x.loop), &la);
  uint8_t *b = NULL;
  cr_assert_eq(gk_history_state_at(&x.h, x.h.last, &b, &lb, NULL, NULL, 0), 0);
  cr_assert_eq(la, lb);
  cr_assert_eq(memcmp(a, b, la), 0);
  free(a);
  free(b);
  run_close(&x);
}

Test(history, its_memory_bound_holds_by_dropping_the_oldest_snapshots) {
  run x;
  gk_history_options o = {.every = 16, .window = 400};
  run_open(&x, &o);
  run_steps(&x, 520);
  /* about one state (a buffer as large as the newest) */
  uint64_t one = x.h.snaps[(x.h.snap_head + x.h.nsnaps - 1) % x.h.snap_cap].cap;
  uint64_t ring = (uint64_t)x.h.in_cap * x.h.rec_size;
  gk_history_close(&x.h);
  o.max_bytes = ring + 6 * one;
  cr_assert_eq(gk_history_init(&x.h, x.sim, x.cfg, 3, &o), 0);
  cr_assert_eq(gk_history_mark(&x.h, &x.loop), 0);
  for (int i = 0; i < 40; i++) {
    run_steps(&x, 13);
    cr_assert_leq(x.h.bytes, o.max_bytes, "%llu > %llu",
                  (unsigned long long)x.h.bytes,
                  (unsigned long long)o.max_bytes);
  }
  cr_assert_leq(x.h.peak_bytes, o.max_bytes + 2 * one,
                "one more buffer at most, while a snapshot is written");
  cr_assert_gt(x.h.dropped, 0u, "the bound dropped snapshots");
  cr_assert_lt(x.h.last - x.h.first, 400u, "the window shrank");
  uint8_t *b = NULL;
  size_t len = 0;
  uint64_t hash = 0, want = 0;
  cr_assert_eq(gk_history_state_at(&x.h, x.h.first, &b, &len, &hash, NULL, 0),
               0);
  cr_assert_eq(gk_loop_hash_at(&x.loop, x.h.first - 1, &want), 0);
  cr_assert_eq(hash, want);
  free(b);
  run_close(&x);
}

Test(history, a_step_outside_its_window_is_a_clear_error) {
  run x;
  gk_history_options o = {.every = 32, .window = 100};
  run_open(&x, &o);
  run_steps(&x, 500);
  uint8_t *b = (uint8_t *)1;
  size_t len = 9;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_history_state_at(&x.h, 3, &b, &len, NULL, err, sizeof err),
               GK_ENOTKEPT);
  cr_assert_null(b);
  cr_assert_eq(len, 0);
  cr_assert(strstr(err, "not kept") != NULL, "%s", err);
  cr_assert_eq(gk_history_state_at(&x.h, 501, &b, &len, NULL, err, sizeof err),
               GK_ENOTKEPT);
  uint64_t h;
  cr_assert_eq(gk_history_hash_at(&x.h, 2, &h), GK_ENOTKEPT);
  run_close(&x);
}

Test(history, a_marked_change_is_answered_and_an_unmarked_one_restarts_it) {
  run x;
  gk_history_options o = {.every = 64, .window = 200};
  run_open(&x, &o);
  run_steps(&x, 100);
  void *patched = NULL;
  cr_assert_eq(gk_state_patch_add(x.sim, x.cfg, gk_loop_state(&x.loop),
                                  "players[0].health", -1, &patched, NULL, 0),
               0);
  cr_assert_eq(gk_loop_replace(&x.loop, patched), 0);
  cr_assert_eq(gk_history_mark(&x.h, &x.loop), 0);
  run_steps(&x, 5);
  uint64_t hash = 0, want = 0;
  uint8_t *b = NULL;
  size_t len;
  cr_assert_eq(gk_history_state_at(&x.h, 103, &b, &len, &hash, NULL, 0), 0);
  free(b);
  cr_assert_eq(gk_loop_hash_at(&x.loop, 102, &want), 0);
  cr_assert_eq(hash, want, "the change is in the regenerated state");
  cr_assert_eq(x.h.first, 0, "the steps before it are still kept");
  /* unmarked: the next record starts over from there */
  cr_assert_eq(gk_state_patch_add(x.sim, x.cfg, gk_loop_state(&x.loop),
                                  "players[0].health", -1, &patched, NULL, 0),
               0);
  cr_assert_eq(gk_loop_replace(&x.loop, patched), 0);
  run_steps(&x, 3);
  cr_assert_eq(x.h.restarts, 1u);
  cr_assert_eq(x.h.first, 106);
  cr_assert_eq(gk_history_state_at(&x.h, 104, &b, &len, NULL, NULL, 0),
               GK_ENOTKEPT);
  cr_assert_eq(gk_history_state_at(&x.h, 108, &b, &len, &hash, NULL, 0), 0);
  free(b);
  cr_assert_eq(gk_loop_hash_at(&x.loop, 107, &want), 0);
  cr_assert_eq(hash, want);
  run_close(&x);
}
