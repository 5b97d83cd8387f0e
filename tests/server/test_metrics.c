/* test_metrics.c: the server's histograms as /metrics shows them.
 *
 * In process, as bench/bench_metrics.c does: a bare server
 * (sv_test_server_new) with a default config and no rooms, observations
 * recorded through the calls the server makes (sv_metrics_tick for the step
 * timer's lateness, sv_metrics_confirm for a room's confirm latency), and the
 * exposition read back from sv_metrics_write, the function GET /metrics answers
 * with.
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

#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"

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

static gk_server *srv;
static gk_server_config cfg;
static char text[1 << 16];

/* A bare server (gk_server_test.h): a default config, no rooms. */
static void fresh(void) {
  sv_test_server_free(srv);
  gk_server_config_default(&cfg);
  cfg.step_hz = 60;
  srv = sv_test_server_new(&cfg);
  cr_assert_not_null(srv);
}

static void expose(void) {
  size_t len = sv_metrics_write(srv, text, sizeof(text));
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
    sv_metrics_tick(srv, 5000000000u, bounds[i].ns);
    expose();
    snprintf(what, sizeof(what), "a tick %" PRIu64 " ns late", bounds[i].ns);
    expect_from("gk_tick_lateness_seconds", i, what);
    /* one nanosecond more: the next bucket (after the last: +Inf only) */
    fresh();
    sv_metrics_tick(srv, 5000000000u, bounds[i].ns + 1);
    expose();
    snprintf(what, sizeof(what), "a tick %" PRIu64 " ns late",
             bounds[i].ns + 1);
    expect_from("gk_tick_lateness_seconds", i + 1, what);
  }
}

/* A step is confirmed `late_ms` after its place on the match's
 * schedule. */
static void confirm_late(uint64_t late_ms) {
  fresh();
  sv_metrics_confirm(srv, late_ms);
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

/* --- quantiles and the status page's series (gk_server_series.c) --------- */

/* n observations of `ns` each. */
static void observe(sv_hist *h, uint64_t ns, int n) {
  for (int i = 0; i < n; i++) sv_hist_observe(h, ns);
}

Test(server_metrics, quantiles_interpolate_in_their_bucket_as_prometheus) {
  sv_hist h, before;
  memset(&h, 0, sizeof(h));
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 500), UINT64_MAX, "no data");
  /* 4 on time (bucket 0, up to 250 us): rank 2 of 4, half way */
  observe(&h, 0, 4);
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 500), 125000u);
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 990), 247500u);
  /* 9 in (0.5, 1] ms and 1 in (20, 50] ms: p50 is rank 5 of the 9 in
   * the third bucket, p99 rank 0.9 of the 1 in the eighth */
  memset(&h, 0, sizeof(h));
  observe(&h, 800000u, 9);
  observe(&h, 30000000u, 1);
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 500),
               500000u + 500000u * 5 / 9 + 1); /* rounded */
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 990), 47000000u);
  /* past the last bound: the last bound */
  memset(&h, 0, sizeof(h));
  observe(&h, 9000000000u, 3);
  cr_assert_eq(sv_hist_quantile_ns(&h, NULL, 500), 2500000000u);
  /* only what came after `before` counts */
  memset(&h, 0, sizeof(h));
  observe(&h, 30000000u, 100);
  before = h;
  cr_assert_eq(sv_hist_quantile_ns(&h, &before, 500), UINT64_MAX);
  observe(&h, 0, 2);
  cr_assert_eq(sv_hist_quantile_ns(&h, &before, 500), 125000u);
}

Test(server_metrics, the_series_ring_keeps_the_last_samples_of_the_figures) {
  fresh();
  sv_series se;
  sv_series_sample ring[3];
  sv_series_init(&se, ring, 3, 1000, 5000);
  cr_assert_null(sv_series_at(&se, 0));
  for (uint64_t i = 0; i < 5; i++) {
    sv_test_room_host(srv)->stats.room_steps = 10 * i;
    sv_test_room_host(srv)->stats.steps_confirmed = 10 * i;
    sv_test_room_host(srv)->stats.steps_late = i;
    if (i == 3) observe(&sv_test_metrics(srv)->confirm, 30000000u, 4);
    sv_series_take(&se, srv, 5000 + 1000 * i);
  }
  cr_assert_eq(se.taken, 5);
  cr_assert_null(sv_series_at(&se, 1), "the ring keeps only 3");
  cr_assert_null(sv_series_at(&se, 5), "not taken yet");
  for (uint64_t seq = 2; seq < 5; seq++) {
    const sv_series_sample *x = sv_series_at(&se, seq);
    cr_assert_not_null(x);
    cr_assert_eq(x->seq, seq);
    cr_assert_eq(x->ms, 1000 * seq);
    cr_assert_eq(x->f.steps, 10 * seq);
    cr_assert_eq(x->f.steps_late, seq);
    cr_assert_eq(x->confirms, seq >= 3 ? 4u : 0u);
    /* the quantiles are of the interval: only sample 3 had confirms */
    cr_assert_eq(x->p50_ns, seq == 3 ? 35000000u : UINT64_MAX, "seq %d",
                 (int)seq);
  }
  /* the figures are those /metrics prints */
  expose();
  cr_assert_not_null(strstr(text, "\ngk_steps_total 40\n"));
  cr_assert_not_null(strstr(text, "\ngk_steps_late_total 4\n"));
  cJSON *j = sv_series_json(&se, 0);
  cr_assert_not_null(j);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "samples")), 3);
  cr_assert_eq(cJSON_GetObjectItem(j, "taken")->valuedouble, 5);
  cr_assert_eq(cJSON_GetObjectItem(j, "capacity")->valuedouble, 3);
  const cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "samples"), 2);
  cr_assert_eq(cJSON_GetObjectItem(last, "steps")->valuedouble, 40);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItem(last, "confirm_p50_us")));
  const cJSON *mid = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "samples"), 1);
  cr_assert_eq(cJSON_GetObjectItem(mid, "confirm_p50_us")->valuedouble, 35000);
  cJSON_Delete(j);
  j = sv_series_json(&se, 4); /* since=3 */
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "samples")), 1);
  cJSON_Delete(j);
}

/* Every room counter of kind GK_ROOM_METRIC (gk_room_stats.h, the one
 * list) is exposed as gk_<name>_total with its value, and the "stopped"
 * record's list is the same list: a counter added there is in both. */
Test(server_metrics, every_room_counter_of_the_list_is_exposed_with_its_value) {
  fresh();
  gk_room_stats *st = &sv_test_room_host(srv)->stats;
  uint64_t v = 1000;
#define SET(name, kind, help) st->name = v++;
  GK_ROOM_COUNTERS(SET)
#undef SET
  expose();
  v = 1000;
  int exposed = 0;
#define CHECK(name, kind, help)                                                \
  do {                                                                         \
    char want[128];                                                            \
    snprintf(want, sizeof want, "\ngk_" #name "_total %" PRIu64 "\n", v++);    \
    if ((kind) == GK_ROOM_METRIC) {                                            \
      cr_assert_not_null(strstr(text, want), "no %s", want + 1);               \
      exposed++;                                                               \
    }                                                                          \
  } while (0);
  GK_ROOM_COUNTERS(CHECK)
#undef CHECK
  cr_assert_geq(exposed, 20, "only %d counters of kind GK_ROOM_METRIC",
                exposed);
}
