/* GameLoop: the step order, the fixed clock, samples, reentrancy, the hash
 * ring. One interleaved call log pins the order, as loop.test.ts did. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_loop.h"
#include "logsim.h"

/* A step input that logs read/end_step/end_frame into the same log. */
typedef struct log_input {
  gk_input base;
  logsim_log *log;
  uint8_t records[2];
} log_input;

static int li_read(gk_input *in, uint64_t step, gk_step_input *out) {
  log_input *li = (log_input *)in;
  char buf[32];
  snprintf(buf, sizeof buf, "read(%llu)", (unsigned long long)step);
  logsim_append(li->log, buf);
  out->step = step;
  out->players = 1;
  out->active_mask = 1;
  out->inputs = li->records;
  return 0;
}
static void li_end_step(gk_input *in) {
  logsim_append(((log_input *)in)->log, "end_step");
}
static void li_end_frame(gk_input *in) {
  logsim_append(((log_input *)in)->log, "end_frame");
}
static void log_event(void *ctx, gk_loop *loop, const gk_event *ev) {
  (void)loop;
  char buf[48];
  snprintf(buf, sizeof buf, "event(%s)", ev->name);
  logsim_append(ctx, buf);
}
static void log_sample(void *ctx, gk_loop *loop, uint64_t now_ms) {
  (void)loop;
  char buf[48];
  snprintf(buf, sizeof buf, "sample(%llu)", (unsigned long long)now_ms);
  logsim_append(ctx, buf);
}

typedef struct fixture {
  gk_loop loop;
  logsim_log log;
  logsim_cfg cfg;
  log_input in;
} fixture;

static void fixture_start(fixture *f, const gk_sim *sim) {
  memset(f, 0, sizeof *f);
  cr_assert_eq(gk_loop_init(&f->loop, NULL), 0);
  f->cfg.log = &f->log;
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_loop_start(&f->loop, sim, &f->cfg, 1, 1, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(gk_loop_on_event(&f->loop, log_event, &f->log), 0);
  cr_assert_eq(gk_loop_on_sample(&f->loop, log_sample, &f->log), 0);
  f->in.base.read = li_read;
  f->in.base.end_step = li_end_step;
  f->in.base.end_frame = li_end_frame;
  f->in.log = &f->log;
  f->log.len = 0;
  f->log.text[0] = '\0';
}

static void clear_log(fixture *f) {
  f->log.len = 0;
  f->log.text[0] = '\0';
}

Test(
    loop_order,
    a_steps_frame_runs_read_step_hash_end_step_per_step_then_end_frame_flush_sample) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  f.in.records[1] = 1; /* one event per step */
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(2), 0), 2);
  cr_assert_str_eq(f.log.text,
                   "read(0) step(0) hash end_step "
                   "read(1) step(1) hash end_step "
                   "end_frame flush event(ping) event(ping) sample(0)");
  gk_loop_close(&f.loop);
}

Test(loop_order, a_seconds_frame_runs_the_same_order) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  /* 50 ms at 1/60 s is exactly three steps. */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(50000000), 7), 3);
  cr_assert_str_eq(f.log.text, "read(0) step(0) hash end_step "
                               "read(1) step(1) hash end_step "
                               "read(2) step(2) hash end_step "
                               "end_frame flush sample(7)");
  gk_loop_close(&f.loop);
}

Test(loop_order, a_frame_that_runs_no_step_skips_end_frame_but_still_flushes) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(1000000), 0), 0);
  cr_assert_str_eq(f.log.text, "flush sample(0)");
  clear_log(&f);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(0), 1), 0);
  cr_assert_str_eq(f.log.text, "flush");
  gk_loop_close(&f.loop);
}

Test(loop_clock, a_seconds_frame_carries_the_remainder_to_the_next_frame) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_budget ten_ms = gk_budget_seconds_ns(10000000);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 0);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 1); /* 20 ms */
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 0); /* 13.3 */
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 1); /* 23.3 */
  cr_assert_eq(f.loop.steps, 2);
  gk_loop_close(&f.loop);
}

Test(loop_clock, exact_thirds_of_a_step_add_up_without_rounding) {
  fixture f;
  fixture_start(&f, &logsim_sim_tenth); /* 1/10 s: 100 ms per step */
  int total = 0;
  for (int i = 0; i < 300; i++)
    total += gk_loop_frame(&f.loop, &f.in.base,
                           gk_budget_seconds_ns(100000000ull / 3), 0);
  /* 300 thirds = 99.999999 steps in integer ns: exactly 99 whole steps. */
  cr_assert_eq(total, 99);
  gk_loop_close(&f.loop);
}

Test(loop_clock, at_most_a_quarter_second_is_counted_per_frame) {
  fixture f;
  fixture_start(&f, &logsim_sim_tenth);
  /* 1 s counts as 0.25 s: two steps, 50 ms carried. */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(1000000000), 0),
      2);
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(50000000), 0), 1);
  gk_loop_close(&f.loop);
}

Test(loop_clock,
     the_backlog_is_dropped_after_five_steps_keeping_the_sub_step_remainder) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  /* 210 ms owes 12 steps and 10 ms: five run, seven are dropped. */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(210000000), 0),
      5);
  /* 10 ms kept + 7 ms = 17 ms: one step, not eight. */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(7000000), 0), 1);
  gk_loop_close(&f.loop);
}

Test(loop_clock, a_steps_frame_runs_exactly_that_many_with_no_cap) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  ((logsim_state *)f.loop.state)->log = NULL;
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(1000), 0),
               1000);
  cr_assert_eq(f.loop.steps, 1000);
  gk_loop_close(&f.loop);
}

Test(loop_clock, a_steps_frame_clears_the_carried_remainder) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_budget ten_ms = gk_budget_seconds_ns(10000000);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 0);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(2), 0), 2);
  /* Had 10 ms survived, this would make 20 ms and run a step. */
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, ten_ms, 0), 0);
  gk_loop_close(&f.loop);
}

Test(loop_clock, a_paused_loop_runs_no_steps_and_returns_zero) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_loop_pause(&f.loop);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 0), 0);
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(100000000), 0),
      0);
  cr_assert_eq(f.loop.steps, 0);
  gk_loop_resume(&f.loop);
  cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 0), 3);
  gk_loop_close(&f.loop);
}

Test(loop_clock, a_loop_without_a_run_returns_zero) {
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  gk_const_input c;
  cr_assert_eq(gk_const_input_init(&c, NULL, 1, 2), 0);
  cr_assert_eq(gk_loop_frame(&loop, &c.base, gk_budget_steps(3), 0), 0);
  cr_assert_eq(gk_loop_frame(&loop, NULL, gk_budget_steps(3), 0), GK_EINVAL);
  gk_loop_close(&loop);
}

Test(loop_samples, every_ms_is_counted_on_now_ms) {
  fixture f;
  fixture_start(&f, &logsim_sim_250);
  int times[] = {0, 100, 249, 250, 300, 499, 500};
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
    gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(1), (uint64_t)times[i]);
  cr_assert(strstr(f.log.text, "sample(0)") != NULL);
  cr_assert(strstr(f.log.text, "sample(100)") == NULL);
  cr_assert(strstr(f.log.text, "sample(249)") == NULL);
  cr_assert(strstr(f.log.text, "sample(250)") != NULL);
  cr_assert(strstr(f.log.text, "sample(300)") == NULL);
  cr_assert(strstr(f.log.text, "sample(499)") == NULL);
  cr_assert(strstr(f.log.text, "sample(500)") != NULL);
  gk_loop_close(&f.loop);
}

static int count_samples(const char *log) {
  int n = 0;
  for (const char *p = log; (p = strstr(p, "sample(")) != NULL; p++) n++;
  return n;
}

Test(loop_samples, a_moved_version_samples_once_even_when_time_is_also_due) {
  fixture f;
  fixture_start(&f, &logsim_sim_250);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(1), 0);
  clear_log(&f);
  f.in.records[1] = 2; /* every step moves the version */
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 10);
  cr_assert_eq(count_samples(f.log.text), 1, "%s", f.log.text);
  clear_log(&f);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 300);
  cr_assert_eq(count_samples(f.log.text), 1, "%s", f.log.text);
  clear_log(&f);
  f.in.records[1] = 0;
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 310);
  cr_assert_eq(count_samples(f.log.text), 0, "%s", f.log.text);
  gk_loop_close(&f.loop);
}

static int add_ten(void *state, void *ctx) {
  (void)ctx;
  ((logsim_state *)state)->counter += 10;
  return 0;
}

Test(loop_samples, modify_moves_the_version_and_causes_one_sample) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(0), 0);
  clear_log(&f);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(0), 1);
  cr_assert_eq(count_samples(f.log.text), 0);
  uint64_t v = f.loop.version;
  int64_t before = ((const logsim_state *)gk_loop_state(&f.loop))->counter;
  cr_assert_eq(gk_loop_modify(&f.loop, add_ten, NULL), 0);
  cr_assert_eq(f.loop.version, v + 1);
  cr_assert_eq(((const logsim_state *)gk_loop_state(&f.loop))->counter,
               before + 10);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(0), 2);
  cr_assert_eq(count_samples(f.log.text), 1);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(0), 3);
  cr_assert_eq(count_samples(f.log.text), 1);
  gk_loop_close(&f.loop);
}

/* A listener that tries every forbidden call and records the results. */
typedef struct rude {
  gk_loop *loop;
  gk_input *in;
  logsim_cfg *cfg;
  int frame_rc, start_rc, modify_rc, stop_rc;
  int calls;
} rude;

static void rude_cb(rude *r) {
  r->calls++;
  r->frame_rc = gk_loop_frame(r->loop, r->in, gk_budget_steps(5), 0);
  r->start_rc = gk_loop_start(r->loop, &logsim_sim, r->cfg, 2, 1, NULL, 0);
  r->modify_rc = gk_loop_modify(r->loop, add_ten, NULL);
  r->stop_rc = gk_loop_stop(r->loop);
}
static void rude_event(void *ctx, gk_loop *loop, const gk_event *ev) {
  (void)loop;
  (void)ev;
  rude_cb(ctx);
}
static void rude_sample(void *ctx, gk_loop *loop, uint64_t now) {
  (void)loop;
  (void)now;
  rude_cb(ctx);
}

Test(
    loop_reentrancy,
    listeners_calling_frame_start_modify_or_stop_get_ebusy_and_nothing_changes) {
  for (int which = 0; which < 2; which++) {
    fixture f;
    fixture_start(&f, &logsim_sim);
    rude r = {.loop = &f.loop, .in = &f.in.base, .cfg = &f.cfg};
    if (which == 0)
      gk_loop_on_event(&f.loop, rude_event, &r);
    else
      gk_loop_on_sample(&f.loop, rude_sample, &r);
    f.in.records[1] = 1;
    const void *state = gk_loop_state(&f.loop);
    cr_assert_eq(gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(1), 0), 1);
    cr_assert_geq(r.calls, 1);
    cr_assert_eq(r.frame_rc, GK_EBUSY);
    cr_assert_eq(r.start_rc, GK_EBUSY);
    cr_assert_eq(r.modify_rc, GK_EBUSY);
    cr_assert_eq(r.stop_rc, GK_EBUSY);
    cr_assert_eq(f.loop.steps, 1);
    cr_assert_eq(gk_loop_state(&f.loop), state);
    /* Outside delivery the same calls work again. */
    cr_assert_eq(gk_loop_modify(&f.loop, add_ten, NULL), 0);
    gk_loop_close(&f.loop);
  }
}

/* Re-entry from inside a frame: a genre's step and an input source's read,
 * end_step and end_frame try every call that runs a step or replaces,
 * frees or changes the state. Each is refused with GK_EBUSY and the outer
 * frame runs exactly as it would have. */
enum { SITE_NONE, SITE_STEP, SITE_READ, SITE_END_STEP, SITE_END_FRAME, SITES };
enum { TRY_FRAME, TRY_START, TRY_ADOPT, TRY_MODIFY, TRY_STOP, TRIES };
static const char *const site_names[SITES] = {"none", "step", "read",
                                              "end_step", "end_frame"};
static const char *const try_names[TRIES] = {"frame", "start", "adopt",
                                             "modify", "stop"};

typedef struct reenter {
  gk_loop *loop;
  gk_input *in; /* what a nested frame would read */
  int site;     /* where to try the calls */
  int depth;    /* > 0 while trying: a nested frame that wrongly ran does
                   not try again (no endless recursion) */
  int tried;
  int rc[TRIES];
} reenter;

static reenter *g_reenter;

static void reenter_try(int site) {
  reenter *re = g_reenter;
  if (re == NULL || re->site != site || re->depth > 0) return;
  re->depth++;
  re->tried++;
  logsim_cfg quiet = {0}; /* no log: a wrong start would not show in it */
  for (int t = 0; t < TRIES; t++) {
    void *other;
    switch (t) {
    case TRY_FRAME:
      re->rc[t] = gk_loop_frame(re->loop, re->in, gk_budget_steps(2), 0);
      break;
    case TRY_START:
      re->rc[t] = gk_loop_start(re->loop, &logsim_sim, &quiet, 3, 1, NULL, 0);
      break;
    case TRY_ADOPT:
      other = logsim_sim.create(&quiet, 4, 1, NULL, 0);
      re->rc[t] = gk_loop_adopt(re->loop, &logsim_sim, other, 1, 0);
      break;
    case TRY_MODIFY:
      re->rc[t] = gk_loop_modify(re->loop, add_ten, NULL);
      break;
    default:
      re->rc[t] = gk_loop_stop(re->loop);
      break;
    }
    /* Stop here: a call that went through may have freed the state the
     * outer frame is using. */
    cr_assert_eq(re->rc[t], GK_EBUSY, "%s from inside %s: got %d (%s)",
                 try_names[t], site_names[site], re->rc[t],
                 gk_err_name(re->rc[t]));
  }
  re->depth--;
}

static void reenter_step(void *state, const gk_step_input *in) {
  logsim_sim.step(state, in);
  reenter_try(SITE_STEP);
}

static gk_sim reenter_sim; /* logsim with reenter_step */

static int re_read(gk_input *in, uint64_t step, gk_step_input *out) {
  int rc = li_read(in, step, out);
  reenter_try(SITE_READ);
  return rc;
}
static void re_end_step(gk_input *in) {
  li_end_step(in);
  reenter_try(SITE_END_STEP);
}
static void re_end_frame(gk_input *in) {
  li_end_frame(in);
  reenter_try(SITE_END_FRAME);
}

typedef struct reenter_run {
  char log[8192];
  uint64_t steps, last_hash, version;
  int64_t counter;
  int ran;
} reenter_run;

/* Runs one three-step frame of logsim with the calls tried at `site`. */
static void reenter_frame(int site, reenter *re, reenter_run *out) {
  reenter_sim = logsim_sim;
  reenter_sim.step = reenter_step;
  fixture f;
  fixture_start(&f, &reenter_sim);
  f.in.base.read = re_read;
  f.in.base.end_step = re_end_step;
  f.in.base.end_frame = re_end_frame;
  f.in.records[0] = 5;
  memset(re, 0, sizeof *re);
  re->loop = &f.loop;
  re->in = &f.in.base;
  re->site = site;
  g_reenter = re;
  const void *state = gk_loop_state(&f.loop);
  out->version = f.loop.version;
  out->ran = gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 0);
  g_reenter = NULL;
  cr_assert_eq(gk_loop_state(&f.loop), state,
               "site %s: the state was "
               "replaced",
               site_names[site]);
  memcpy(out->log, f.log.text, f.log.len + 1);
  out->steps = f.loop.steps;
  out->last_hash = f.loop.last_hash;
  out->version = f.loop.version - out->version;
  out->counter = ((const logsim_state *)state)->counter;
  /* Once the frame is over the same calls work again. */
  cr_assert_eq(gk_loop_modify(&f.loop, add_ten, NULL), 0);
  gk_loop_close(&f.loop);
}

static void expect_refused_inside(int site) {
  reenter_run plain, run;
  reenter re;
  reenter_frame(SITE_NONE, &re, &plain);
  cr_assert_eq(re.tried, 0);
  reenter_frame(site, &re, &run);
  cr_assert_gt(re.tried, 0, "site %s was never reached", site_names[site]);
  for (int t = 0; t < TRIES; t++) cr_assert_eq(re.rc[t], GK_EBUSY);
  /* The outer frame ran exactly as a frame without the calls. */
  cr_assert_eq(run.ran, 3);
  cr_assert_eq(run.steps, 3);
  cr_assert_str_eq(run.log, plain.log);
  cr_assert_str_eq(run.log, "read(0) step(0) hash end_step "
                            "read(1) step(1) hash end_step "
                            "read(2) step(2) hash end_step "
                            "end_frame flush sample(0)");
  cr_assert_eq(run.last_hash, plain.last_hash);
  cr_assert_eq(run.counter, plain.counter, "modify ran inside the frame");
  cr_assert_eq(run.version, 0, "the version moved inside the frame");
}

Test(loop_reentrancy,
     a_genre_step_calling_frame_start_adopt_modify_or_stop_gets_ebusy) {
  expect_refused_inside(SITE_STEP);
}

Test(loop_reentrancy,
     an_input_read_calling_frame_start_adopt_modify_or_stop_gets_ebusy) {
  expect_refused_inside(SITE_READ);
}

Test(loop_reentrancy,
     an_input_end_step_calling_frame_start_adopt_modify_or_stop_gets_ebusy) {
  expect_refused_inside(SITE_END_STEP);
}

Test(loop_reentrancy,
     an_input_end_frame_calling_frame_start_adopt_modify_or_stop_gets_ebusy) {
  expect_refused_inside(SITE_END_FRAME);
}

Test(loop_runs, start_replaces_the_previous_run_and_frees_it) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 0);
  clear_log(&f);
  cr_assert_eq(gk_loop_start(&f.loop, &logsim_sim, &f.cfg, 9, 1, NULL, 0), 0);
  cr_assert_str_eq(f.log.text, "create destroy");
  cr_assert_eq(f.loop.steps, 0);
  uint64_t h;
  cr_assert_eq(gk_loop_hash_at(&f.loop, 0, &h), GK_ENOTKEPT);
  gk_loop_close(&f.loop);
}

Test(loop_runs, a_restarted_run_starts_its_own_clock_with_nothing_carried) {
  fixture f;
  fixture_start(&f, &logsim_sim); /* 60 Hz: 16.67 ms per step */
  /* the first run ends with 16 ms carried: no step yet */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(16000000), 0), 0);
  cr_assert_eq(gk_loop_start(&f.loop, &logsim_sim, &f.cfg, 9, 1, NULL, 0), 0);
  clear_log(&f);
  /* 5 ms into the new run: had the 16 ms survived, 21 ms would run one */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(5000000), 0), 0,
      "the old run's carried time ran a step in the new one");
  cr_assert_eq(f.loop.steps, 0);
  cr_assert(strstr(f.log.text, "step(") == NULL, "%s", f.log.text);
  /* and the new clock counts from zero: 5 + 12 = 17 ms is one step */
  cr_assert_eq(
      gk_loop_frame(&f.loop, &f.in.base, gk_budget_seconds_ns(12000000), 0), 1);
  cr_assert_eq(f.loop.steps, 1);
  gk_loop_close(&f.loop);
}

Test(loop_runs, a_failed_start_keeps_the_previous_run) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_loop_frame(&f.loop, &f.in.base, gk_budget_steps(3), 0);
  logsim_cfg bad = {.start = -1};
  char err[GK_ERRMSG_MAX];
  cr_assert_neq(
      gk_loop_start(&f.loop, &logsim_sim, &bad, 9, 1, err, sizeof err), 0);
  cr_assert(strstr(err, "start") != NULL, "%s", err);
  cr_assert_eq(f.loop.steps, 3);
  cr_assert_neq(
      gk_loop_start(&f.loop, &logsim_sim, &f.cfg, 9, 9, err, sizeof err), 0);
  cr_assert(strstr(err, "players") != NULL, "%s", err);
  cr_assert_eq(f.loop.steps, 3);
  gk_loop_close(&f.loop);
}

static int failing_read(gk_input *in, uint64_t step, gk_step_input *out) {
  (void)in;
  (void)out;
  return step >= 2 ? GK_ENOTFOUND : 0;
}

Test(loop_runs, a_source_that_cannot_read_a_step_stops_the_frame_there) {
  fixture f;
  fixture_start(&f, &logsim_sim);
  gk_input bad = {.read = failing_read};
  /* failing_read fills nothing for steps 0 and 1: the loop rejects the
   * empty input instead of stepping on it. */
  cr_assert_eq(gk_loop_frame(&f.loop, &bad, gk_budget_steps(4), 0), 0);
  cr_assert_eq(f.loop.input_err, GK_EINPUT);
  gk_script_input s;
  uint8_t recs[4] = {1, 0, 2, 0};
  gk_script_input_init(&s, recs, 2, 1, 2);
  cr_assert_eq(gk_loop_frame(&f.loop, &s.base, gk_budget_steps(4), 0), 4);
  cr_assert_eq(f.loop.input_err, 0);
  gk_loop_close(&f.loop);
}

/* A one-player logsim run on a loop with a ring of 4 hashes. */
static void start_ring4(gk_loop *loop, const logsim_cfg *cfg, uint64_t seed) {
  gk_loop_options o = {.hash_ring = 4};
  cr_assert_eq(gk_loop_init(loop, &o), 0);
  cr_assert_eq(gk_loop_start(loop, &logsim_sim, cfg, seed, 1, NULL, 0), 0);
}

Test(loop_hashes,
     the_ring_answers_recent_steps_and_reports_older_ones_as_not_kept) {
  gk_loop loop;
  logsim_cfg cfg = {0};
  start_ring4(&loop, &cfg, 5);
  gk_const_input c;
  uint8_t rec[2] = {3, 0};
  gk_const_input_init(&c, rec, 1, 2);
  /* An identical second run hashes each step for comparison. */
  gk_loop ref;
  cr_assert_eq(gk_loop_init(&ref, NULL), 0);
  cr_assert_eq(gk_loop_start(&ref, &logsim_sim, &cfg, 5, 1, NULL, 0), 0);
  uint64_t expect[10];
  for (int i = 0; i < 10; i++) {
    gk_loop_frame(&ref, &c.base, gk_budget_steps(1), 0);
    expect[i] = ref.last_hash;
  }
  gk_loop_frame(&loop, &c.base, gk_budget_steps(10), 0);
  uint64_t h = 0;
  for (int s = 6; s < 10; s++) {
    cr_assert_eq(gk_loop_hash_at(&loop, (uint64_t)s, &h), 0, "step %d", s);
    cr_assert_eq(h, expect[s]);
  }
  cr_assert_eq(gk_loop_hash_at(&loop, 5, &h), GK_ENOTKEPT);
  cr_assert_eq(gk_loop_hash_at(&loop, 10, &h), GK_ENOTKEPT);
  cr_assert_eq(loop.last_hash, expect[9]);
  cr_assert_neq(expect[8], expect[9]);
  gk_loop_close(&ref);
  gk_loop_close(&loop);
}

/* b adopts a copy of a's state (written and read back) at a's step. */
static void adopt_copy(gk_loop *a, gk_loop *b, const logsim_cfg *cfg,
                       uint32_t players) {
  gk_buf_writer bw;
  gk_buf_writer_init(&bw);
  logsim_sim.write_state(gk_loop_state(a), &bw.w);
  size_t len;
  uint8_t *bytes = gk_buf_writer_take(&bw, &len);
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  char err[GK_ERRMSG_MAX];
  void *st = logsim_sim.read_state(cfg, &r, err, sizeof err);
  cr_assert_not_null(st, "%s", err);
  cr_assert_eq(gk_loop_adopt(b, &logsim_sim, st, players, a->steps), 0);
  free(bytes);
}

Test(loop_hashes, an_adopted_state_continues_with_the_same_hashes) {
  gk_loop a, b;
  cr_assert_eq(gk_loop_init(&a, NULL), 0);
  cr_assert_eq(gk_loop_init(&b, NULL), 0);
  logsim_cfg cfg = {0};
  cr_assert_eq(gk_loop_start(&a, &logsim_sim, &cfg, 11, 2, NULL, 0), 0);
  gk_const_input c;
  uint8_t rec[4] = {1, 0, 2, 0};
  gk_const_input_init(&c, rec, 2, 2);
  gk_loop_frame(&a, &c.base, gk_budget_steps(7), 0);
  adopt_copy(&a, &b, &cfg, 2);
  uint64_t ha, hb;
  cr_assert_eq(gk_loop_hash_at(&b, 6, &hb), GK_ENOTKEPT);
  for (int i = 0; i < 20; i++) {
    gk_loop_frame(&a, &c.base, gk_budget_steps(1), 0);
    gk_loop_frame(&b, &c.base, gk_budget_steps(1), 0);
    cr_assert_eq(gk_loop_hash_at(&a, a.steps - 1, &ha), 0);
    cr_assert_eq(gk_loop_hash_at(&b, b.steps - 1, &hb), 0);
    cr_assert_eq(ha, hb, "step %llu", (unsigned long long)a.steps - 1);
  }
  gk_loop_close(&a);
  gk_loop_close(&b);
}

/* A source that says its step input is for one player, whatever the run. */
static int one_player_read(gk_input *in, uint64_t step, gk_step_input *out) {
  static uint8_t records[GK_PLAYERS_MAX * 2];
  (void)in;
  out->step = step;
  out->players = 1;
  out->active_mask = 1;
  out->inputs = records;
  return 0;
}

Test(loop_runs, a_source_reporting_the_wrong_player_count_runs_no_step) {
  fixture f;
  memset(&f, 0, sizeof f);
  cr_assert_eq(gk_loop_init(&f.loop, NULL), 0);
  f.cfg.log = &f.log;
  cr_assert_eq(gk_loop_start(&f.loop, &logsim_sim, &f.cfg, 1, 3, NULL, 0), 0);
  clear_log(&f);
  gk_input one = {.read = one_player_read};
  uint64_t version = f.loop.version;
  cr_assert_eq(gk_loop_frame(&f.loop, &one, gk_budget_steps(3), 0), 0);
  cr_assert_eq(f.loop.input_err, GK_EINPUT);
  cr_assert_eq(f.loop.steps, 0);
  cr_assert_eq(f.loop.last_hash, 0);
  cr_assert_eq(f.loop.version, version);
  cr_assert(strstr(f.log.text, "step(") == NULL, "%s", f.log.text);
  uint64_t h;
  cr_assert_eq(gk_loop_hash_at(&f.loop, 0, &h), GK_ENOTKEPT);
  gk_loop_close(&f.loop);
}

Test(loop_hashes, a_small_ring_keeps_the_right_hashes_after_adopting_mid_ring) {
  gk_loop a, b;
  gk_loop_options o = {.hash_ring = 4};
  cr_assert_eq(gk_loop_init(&b, &o), 0);
  logsim_cfg cfg = {0};
  start_ring4(&a, &cfg, 3);
  gk_const_input c;
  uint8_t rec[2] = {5, 0};
  gk_const_input_init(&c, rec, 1, 2);
  gk_loop_frame(&a, &c.base, gk_budget_steps(7), 0); /* 7 % 4 != 0 */
  adopt_copy(&a, &b, &cfg, 1);
  for (int i = 0; i < 9; i++) {
    gk_loop_frame(&a, &c.base, gk_budget_steps(1), 0);
    gk_loop_frame(&b, &c.base, gk_budget_steps(1), 0);
    uint64_t first = b.steps > 4 && b.steps - 4 > 7 ? b.steps - 4 : 7;
    for (uint64_t s = first; s < b.steps; s++) {
      uint64_t ha = 0, hb = 0;
      cr_assert_eq(gk_loop_hash_at(&a, s, &ha), 0);
      cr_assert_eq(gk_loop_hash_at(&b, s, &hb), 0, "step %llu",
                   (unsigned long long)s);
      cr_assert_eq(ha, hb, "step %llu", (unsigned long long)s);
    }
    cr_assert_eq(gk_loop_hash_at(&b, b.steps - 1, &(uint64_t){0}), 0);
  }
  gk_loop_close(&a);
  gk_loop_close(&b);
}
