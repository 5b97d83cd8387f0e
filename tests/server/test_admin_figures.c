/* test_admin_figures.c: the figures add up. One two-player survivors room
 * on the real gk-server at 60 steps/s, gk-bot's players, one of which
 * drops at step 300 for 600 ms and rejoins (--drop 1:300:600), over ENet
 * and over WebSocket (--ws).
 *
 * The schedule's figures (configs/README.md, "Lateness, stalls and
 * confirm latency") must read the same wherever they are shown:
 *   - while the match runs, after the rejoin: /rooms' figures of the room
 *     lie between two /metrics scrapes taken around it (one room, the
 *     figures only grow), its late share is at most 5% (what the status
 *     page shows) and it has had its stall;
 *   - after the match, with nothing moving: match_end, /metrics'
 *     gk_<figure>_total, the newest /series sample and the "stopped" line
 *     are equal, and the confirm-latency histogram agrees with them: one
 *     observation per confirmed step, its sum the summed confirm latency,
 *     and the observations over 50 ms (lockstep.late_slack_ms) the late
 *     steps. The room does not predict: a predicting room's slack is
 *     prediction.rtt_ms more (150 ms, which no bucket bounds), so under a
 *     slow machine's missed ticks a step 50..150 ms late would be neither
 *     late nor in the 50 ms bucket (seen in the TSan and ASan legs). match_end
 * reads at most 5% late, one stall or more, and the stalls waited at least half
 * the drop. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_http.h"
#include "e2e.h"

#define STEP_HZ 60

/* The schedule's figures (GK_ROOM_SCHEDULE), as the outside sees them. */
static const char *const figures[] = {"steps_confirmed", "steps_late",
                                      "confirm_ms",      "stalls",
                                      "stalled_ms",      "stall_notices"};
#define NFIG (sizeof(figures) / sizeof(figures[0]))

static double num(const cJSON *x, const char *name) {
  const cJSON *v = cJSON_GetObjectItem(x, name);
  cr_assert(cJSON_IsNumber(v), "no number %s", name);
  return v->valuedouble;
}

/* The value of one /metrics line ("name value"; name with its labels). */
static double metric(const char *text, const char *name) {
  char key[160];
  snprintf(key, sizeof(key), "\n%s ", name);
  const char *at = strstr(text, key);
  cr_assert_not_null(at, "/metrics has no %s", name);
  return strtod(at + strlen(key), NULL);
}

static double metric_fig(const char *text, const char *fig) {
  char name[96];
  snprintf(name, sizeof(name), "gk_%s_total", fig);
  return metric(text, name);
}

static char *get_metrics(const admin_srv *s) {
  char *text = NULL;
  cr_assert_eq(admin_http(s, "GET", "/metrics", NULL, &text), 200);
  return text;
}

/* While the match plays on after the rejoin: /rooms between two scrapes. */
static void check_running(const admin_srv *s) {
  char *before = get_metrics(s);
  cJSON *rooms = admin_get_json(s, "/rooms");
  char *after = get_metrics(s);
  const cJSON *list = cJSON_GetObjectItem(rooms, "rooms");
  cr_assert_eq(cJSON_GetArraySize(list), 1);
  const cJSON *r = cJSON_GetArrayItem(list, 0);
  char *all = cJSON_PrintUnformatted(r);
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "state")),
                   "playing", "%s", all);
  for (size_t i = 0; i < NFIG; i++) {
    double v = num(r, figures[i]);
    cr_assert(metric_fig(before, figures[i]) <= v &&
                  v <= metric_fig(after, figures[i]),
              "/rooms %s %g is not between /metrics' %g and %g", figures[i], v,
              metric_fig(before, figures[i]), metric_fig(after, figures[i]));
  }
  double share = num(r, "late_share");
  cr_assert_leq(share, 0.05, "the status page's late share: %s", all);
  cr_assert_eq(share, num(r, "steps_late") / num(r, "steps_confirmed"));
  cr_assert_geq(num(r, "stalls"), 1, "the rejoin's stall: %s", all);
  cJSON_free(all);
  cJSON_Delete(rooms);
  free(before);
  free(after);
}

/* The newest /series sample taken after this call. */
static cJSON *next_sample(const admin_srv *s, cJSON **series) {
  cJSON *j = admin_get_json(s, "/series");
  double want = num(j, "taken") + 1;
  cJSON_Delete(j);
  for (int waited = 0;; waited += 50) {
    j = admin_get_json(s, "/series");
    if (num(j, "taken") >= want) break;
    cJSON_Delete(j);
    cr_assert_lt(waited, 10000, "no new /series sample");
    e2e_sleep_ms(50);
  }
  *series = j;
  const cJSON *a = cJSON_GetObjectItem(j, "samples");
  return cJSON_GetArrayItem(a, cJSON_GetArraySize(a) - 1);
}

/* After the match: every place says the same. */
static void check_ended(admin_srv *s) {
  char *m = get_metrics(s);
  for (int waited = 0; metric(m, "gk_rooms_closed_total") < 1; waited += 50) {
    cr_assert_lt(waited, 10000, "the room did not close");
    e2e_sleep_ms(50);
    free(m);
    m = get_metrics(s);
  }
  cJSON *series = NULL;
  const cJSON *x = next_sample(s, &series);
  cJSON *end = e2e_last_event(&s->p, "match_end");
  cr_assert_not_null(end);
  char *line = cJSON_PrintUnformatted(end);
  for (size_t i = 0; i < NFIG; i++) {
    double v = metric_fig(m, figures[i]);
    cr_assert_eq(num(end, figures[i]), v, "match_end %s vs /metrics %g: %s",
                 figures[i], v, line);
    cr_assert_eq(num(x, figures[i]), v, "/series %s %g vs /metrics %g",
                 figures[i], num(x, figures[i]), v);
  }
  /* the confirm latency: one observation per step, summed, over 50 ms */
  double count = metric(m, "gk_confirm_latency_seconds_count");
  double in50 = metric(m, "gk_confirm_latency_seconds_bucket{le=\"0.05\"}");
  double sum = metric(m, "gk_confirm_latency_seconds_sum");
  cr_assert_eq(count, num(end, "steps_confirmed"), "%s", line);
  cr_assert_eq(num(x, "confirms"), count);
  cr_assert_eq(count - in50, num(end, "steps_late"), "%s", line);
  cr_assert_eq((long long)(sum * 1000 + 0.5), (long long)num(end, "confirm_ms"),
               "%s", line);
  /* what players felt: one stall, the steps after it on time */
  double confirmed = num(end, "steps_confirmed");
  cr_assert_geq(confirmed, 900, "%s", line);
  cr_assert_leq(num(end, "steps_late"), 0.05 * confirmed, "%s", line);
  cr_assert_geq(num(end, "stalls"), 1, "%s", line);
  cr_assert_geq(num(end, "stalled_ms"), 300, "%s", line);
  e2e_stop_server(&s->p);
  for (size_t i = 0; i < NFIG; i++)
    cr_assert_eq(e2e_stat(&s->p, "stopped", figures[i]), num(end, figures[i]),
                 "stopped %s: %s", figures[i], line);
  cJSON_free(line);
  cJSON_Delete(end);
  cJSON_Delete(series);
  free(m);
}

/* One room of two, player 1 away 600 ms from step 300; `ws`: every
 * player over WebSocket. */
static void run(int ws) {
  admin_srv s;
  memset(&s, 0, sizeof(s));
  s.admin_extra = "\"series_ms\":100";
  admin_srv_start(&s, STEP_HZ,
                  "\"lockstep\":{\"prediction\":\"off\"},"
                  "\"reconnect\":{\"hold_ms\":10000},"
                  "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
                  "\"port\":0,\"static_dir\":\"\"}");
  char url[96];
  snprintf(url, sizeof(url), "ws://127.0.0.1:%.0f/play",
           e2e_stat(&s.p, "listening", "ws_port"));
  const char *enet[] = {"--drop", "1:300:600", NULL};
  const char *wsx[] = {"--drop", "1:300:600", "--ws", url, NULL};
  e2e_proc bot;
  e2e_start_bot_x(&bot, &s.d, "bot", s.udp, "1", "2", "900", ws ? wsx : enet);
  cr_assert(e2e_wait_events(&s.p, "player_rejoined", 1, 30000), "no rejoin");
  e2e_sleep_ms(1500); /* the stall is over: steps flow again */
  check_running(&s);
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  check_ended(&s);
  e2e_dir_remove(&s.d);
}

Test(server_figures,
     a_drop_and_rejoin_over_enet_reads_the_same_figures_everywhere,
     .timeout = 120) {
  run(0);
}

Test(server_figures,
     a_drop_and_rejoin_over_websocket_reads_the_same_figures_everywhere,
     .timeout = 120) {
  run(1);
}
