/* test_metrics.c: the server's histograms as /metrics shows them.
 *
 * In process, as bench/bench_metrics.c does: a gk_server struct with a
 * default config and no rooms, observations recorded through the calls
 * the server makes (sv_metrics_tick for the step timer's lateness,
 * sv_metrics_step for a room's confirm latency), and the exposition read
 * back from sv_metrics_write, the function GET /metrics answers with.
 *
 * Prometheus buckets are cumulative and `le` means "less than or equal":
 * an observation exactly at a bound counts in that bound's bucket, and
 * one just above it only from the next bound on.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_server_internal.h"

/* The buckets as the exposition must name them. */
static const struct {
  uint64_t ns;
  const char *le;
} bounds[] = {{250000u, "0.00025"}, {500000u, "0.0005"}, {1000000u, "0.001"},
              {2000000u, "0.002"},  {5000000u, "0.005"}, {10000000u, "0.01"},
              {20000000u, "0.02"},  {50000000u, "0.05"}, {100000000u, "0.1"},
              {250000000u, "0.25"}, {500000000u, "0.5"}, {1000000000u, "1"},
              {2500000000u, "2.5"}};
#define NB (sizeof(bounds) / sizeof(bounds[0]))

static gk_server srv;
static gk_server_config cfg;
static sv_room room;
static char text[1 << 16];

static void fresh(void) {
  memset(&srv, 0, sizeof(srv));
  gk_server_config_default(&cfg);
  srv.cfg = &cfg;
  srv.step_ns = 1000000000u / 60u;
}

static void expose(void) {
  size_t len = sv_metrics_write(&srv, text, sizeof(text));
  cr_assert_lt(len, sizeof(text), "the exposition was cut");
}

/* The cumulative count on `name`_bucket{le="le"}; fails if absent. */
static uint64_t bucket(const char *name, const char *le) {
  char key[128];
  snprintf(key, sizeof(key), "\n%s_bucket{le=\"%s\"} ", name, le);
  const char *at = strstr(text, key);
  cr_assert(at != NULL, "no %s", key + 1);
  return strtoull(at + strlen(key), NULL, 10);
}

/* One observation was recorded: it shows in every bucket from `from` on
 * (NB: only in +Inf), and in none below. */
static void expect_from(const char *name, size_t from, const char *what) {
  for (size_t j = 0; j < NB; j++)
    cr_assert_eq(bucket(name, bounds[j].le), j >= from ? 1u : 0u,
                 "%s: %s_bucket{le=\"%s\"} is %" PRIu64 ", wanted %d", what,
                 name, bounds[j].le, bucket(name, bounds[j].le), j >= from);
  cr_assert_eq(bucket(name, "+Inf"), 1u, "%s", what);
}

Test(server_metrics, the_exposition_names_the_buckets_the_server_keeps) {
  cr_assert_eq(SV_HIST_BUCKETS, NB);
  for (size_t i = 0; i < NB; i++)
    cr_assert_eq(sv_hist_bounds_ns[i], bounds[i].ns, "bound %zu", i);
  fresh();
  expose();
  for (size_t i = 0; i < NB; i++) {
    cr_assert_eq(bucket("gk_tick_lateness_seconds", bounds[i].le), 0u);
    cr_assert_eq(bucket("gk_confirm_latency_seconds", bounds[i].le), 0u);
  }
  cr_assert_eq(bucket("gk_tick_lateness_seconds", "+Inf"), 0u);
}

Test(server_metrics,
     a_tick_late_by_exactly_a_bound_counts_in_that_bound_s_bucket) {
  for (size_t i = 0; i < NB; i++) {
    char what[64];
    fresh();
    sv_metrics_tick(&srv, 5000000000u, bounds[i].ns);
    expose();
    snprintf(what, sizeof(what), "a tick %" PRIu64 " ns late", bounds[i].ns);
    expect_from("gk_tick_lateness_seconds", i, what);
    /* one nanosecond more: the next bucket (after the last: +Inf only) */
    fresh();
    sv_metrics_tick(&srv, 5000000000u, bounds[i].ns + 1);
    expose();
    snprintf(what, sizeof(what), "a tick %" PRIu64 " ns late",
             bounds[i].ns + 1);
    expect_from("gk_tick_lateness_seconds", i + 1, what);
  }
}

/* Room `room` confirms its first step `late_ms` after its place on the
 * schedule (10 ms steps from start_ms 1000: step 0 is due at 1010). */
static void confirm_late(uint64_t late_ms) {
  fresh();
  memset(&room, 0, sizeof(room));
  room.session.cfg.step_seconds.num = 1;
  room.session.cfg.step_seconds.den = 100;
  room.session.start_ms = 1000;
  room.session.now_ms = 1010 + late_ms;
  sv_metrics_step(&srv, &room, 0);
  expose();
}

Test(server_metrics,
     a_step_confirmed_late_by_exactly_a_bound_counts_in_that_bound_s_bucket) {
  /* confirm latency is measured in whole ms: the bounds from 1 ms up */
  for (size_t i = 0; i < NB; i++) {
    if (bounds[i].ns % 1000000u != 0) continue;
    uint64_t ms = bounds[i].ns / 1000000u;
    char what[64];
    confirm_late(ms);
    snprintf(what, sizeof(what), "a step confirmed %" PRIu64 " ms late", ms);
    expect_from("gk_confirm_latency_seconds", i, what);
    /* one ms more: the next bucket (the bounds are more than 1 ms apart) */
    confirm_late(ms + 1);
    snprintf(what, sizeof(what), "a step confirmed %" PRIu64 " ms late",
             ms + 1);
    expect_from("gk_confirm_latency_seconds", i + 1, what);
  }
  /* on time is 0: the first bucket */
  confirm_late(0);
  expect_from("gk_confirm_latency_seconds", 0, "a step confirmed on time");
}
