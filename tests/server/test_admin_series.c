/* test_admin_series.c: GET /series, the admin listener's ring of the main
 * figures behind the status page's charts (src/server/ops/gk_server_series.c),
 * end to end on 127.0.0.1.
 *
 * The real gk-server (admin listener with a token file, one sample every
 * 100 ms, a ring of 8) and gk-bot playing a 3-player room: the ring wraps
 * (8 samples, consecutive, the newest last, since= giving only newer
 * ones), the gauges while the match runs and the counters once it is over
 * equal /metrics', the quantiles are there exactly for the intervals in
 * which steps were confirmed. Bad queries and methods get the same JSON
 * errors and statuses as the other routes; the route needs no token, as
 * /rooms does not. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_http.h"
#include "e2e.h"
#include "e2e_raw.h"
#include "gk_survivors.h"

#define TOKEN ADMIN_TOKEN
#define STEP_HZ 120
#define RING 8

typedef admin_srv srv;

static void start(srv *s, const char *extra) {
  s->admin_extra = "\"series_ms\":100,\"series_samples\":8";
  admin_srv_start(s, STEP_HZ, extra);
}

static void stop(srv *s) {
  e2e_stop_server(&s->p);
  e2e_dir_remove(&s->d);
}

/* A sample's number field (fails the test if absent). */
static double num(const cJSON *x, const char *name) {
  const cJSON *v = cJSON_GetObjectItem(x, name);
  cr_assert(cJSON_IsNumber(v), "no number %s", name);
  return v->valuedouble;
}

static const cJSON *samples(const cJSON *j) {
  const cJSON *a = cJSON_GetObjectItem(j, "samples");
  cr_assert(cJSON_IsArray(a), "no samples array");
  return a;
}

/* The value of one /metrics line ("name value"; name with its labels). */
static double metric(const char *text, const char *name) {
  char key[160];
  snprintf(key, sizeof(key), "\n%s ", name);
  const char *at = strstr(text, key);
  cr_assert_not_null(at, "/metrics has no %s", name);
  return strtod(at + strlen(key), NULL);
}

static char *get_metrics(const srv *s) {
  char *text = NULL;
  cr_assert_eq(admin_http(s, "GET", "/metrics", NULL, &text), 200);
  return text;
}

/* Polls /series until it has taken at least n samples (bounded). */
static cJSON *series_after(const srv *s, const char *query, double taken) {
  char path[64];
  snprintf(path, sizeof(path), "/series%s", query);
  for (int waited = 0;; waited += 50) {
    cJSON *j = admin_get_json(s, path);
    if (num(j, "taken") >= taken && cJSON_GetArraySize(samples(j)) > 0)
      return j;
    cJSON_Delete(j);
    cr_assert_lt(waited, 20000, "/series did not reach %g samples", taken);
    e2e_sleep_ms(50);
  }
}

/* Every sample: its seq one more than the one before, its ms later. */
static void expect_consecutive(const cJSON *j, double first) {
  double seq = first, ms = -1;
  const cJSON *x;
  cJSON_ArrayForEach(x, samples(j)) {
    cr_assert_eq(num(x, "seq"), seq, "seq %g where %g was due", num(x, "seq"),
                 seq);
    cr_assert_gt(num(x, "ms"), ms);
    ms = num(x, "ms");
    seq++;
  }
  cr_assert_eq(seq, num(j, "taken"), "the newest sample is not last");
}

/* A sample's confirm quantiles are there exactly when steps were
 * confirmed since the one before, and p50 <= p99. */
static void expect_quantiles(const cJSON *j) {
  const cJSON *x, *prev = NULL;
  int with = 0;
  cJSON_ArrayForEach(x, samples(j)) {
    const cJSON *p50 = cJSON_GetObjectItem(x, "confirm_p50_us");
    const cJSON *p99 = cJSON_GetObjectItem(x, "confirm_p99_us");
    if (prev) {
      double moved = num(x, "confirms") - num(prev, "confirms");
      cr_assert_eq(cJSON_IsNumber(p50), moved > 0, "seq %g: p50 %s, %g new",
                   num(x, "seq"), cJSON_IsNull(p50) ? "null" : "set", moved);
      cr_assert_eq(cJSON_IsNumber(p99), moved > 0);
      if (moved > 0) {
        cr_assert_leq(p50->valuedouble, p99->valuedouble);
        cr_assert_leq(p99->valuedouble, 2500000.0);
        with++;
      }
    }
    prev = x;
  }
  cr_assert_gt(with, 0, "no interval had confirmed steps");
}

Test(server_series,
     the_ring_wraps_and_its_figures_equal_metrics_after_a_real_match) {
  srv s;
  memset(&s, 0, sizeof(s));
  start(&s, NULL);
  /* the ring wraps: 8 held of 20 taken, consecutive, newest last */
  cJSON *j = series_after(&s, "", 20);
  cr_assert_eq(num(j, "capacity"), RING);
  cr_assert_eq(num(j, "period_ms"), 100);
  cr_assert_eq(cJSON_GetArraySize(samples(j)), RING);
  double taken = num(j, "taken");
  expect_consecutive(j, taken - RING);
  cJSON_Delete(j);
  char q[48];
  snprintf(q, sizeof(q), "?since=%.0f", taken - 1);
  j = series_after(&s, q, taken + 1); /* only the newer ones */
  expect_consecutive(j, taken);
  cJSON_Delete(j);

  /* a match: the gauges while it runs */
  e2e_proc bot;
  e2e_start_bot(&bot, &s.d, "bot", s.udp, "1", "3", "480");
  cr_assert(e2e_wait_events(&s.p, "match_start", 1, 30000));
  char *text = get_metrics(&s);
  cr_assert_eq(metric(text, "gk_players"), 3);
  cr_assert_eq(metric(text, "gk_rooms{state=\"playing\"}"), 1);
  free(text);
  j = admin_get_json(&s, "/series");
  snprintf(q, sizeof(q), "?since=%.0f", num(j, "taken") - 1);
  cJSON_Delete(j);
  j = series_after(&s, q, 0);
  const cJSON *x = cJSON_GetArrayItem(samples(j), 0);
  cr_assert_eq(num(x, "players"), 3);
  cr_assert_eq(num(x, "rooms"), 1);
  cr_assert_eq(num(x, "rooms_playing"), 1);
  cJSON_Delete(j);
  j = series_after(&s, "", 0);
  expect_quantiles(j);
  cJSON_Delete(j);

  /* over: the counters stand still, and the samples taken since equal
   * /metrics */
  cr_assert(e2e_wait(&bot, 60000), "gk-bot did not finish");
  cr_assert_eq(bot.status, 0);
  for (int waited = 0;; waited += 50) {
    cJSON *r = admin_get_json(&s, "/rooms");
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(r, "rooms"));
    cJSON_Delete(r);
    if (!n) break;
    cr_assert_lt(waited, 10000, "the room did not close");
    e2e_sleep_ms(50);
  }
  text = get_metrics(&s);
  j = admin_get_json(&s, "/series");
  /* the second sample from now: it and the one before it were taken
   * after /metrics answered */
  snprintf(q, sizeof(q), "?since=%.0f", num(j, "taken"));
  cJSON_Delete(j);
  j = series_after(&s, q, 0);
  x = cJSON_GetArrayItem(samples(j), 0);
  static const char *const pairs[][2] = {
      {"steps", "gk_steps_total"},
      {"steps_confirmed", "gk_steps_confirmed_total"},
      {"steps_late", "gk_steps_late_total"},
      {"confirms", "gk_confirm_latency_seconds_count"},
      {"players", "gk_players"},
      {"bot_players", "gk_bot_players"},
      {"rooms_playing", "gk_rooms{state=\"playing\"}"}};
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
    cr_assert_eq(num(x, pairs[i][0]), metric(text, pairs[i][1]), "%s %g, %s %g",
                 pairs[i][0], num(x, pairs[i][0]), pairs[i][1],
                 metric(text, pairs[i][1]));
  cr_assert_eq(num(x, "rooms"), 0);
  cr_assert_geq(num(x, "steps"), 480, "the match's steps are not counted");
  cr_assert(cJSON_IsNull(cJSON_GetObjectItem(x, "confirm_p50_us")));
  free(text);
  double steps = num(x, "steps");
  cJSON_Delete(j);
  text = get_metrics(&s); /* still the same: the comparison was fair */
  cr_assert_eq(metric(text, "gk_steps_total"), steps);
  free(text);
  stop(&s);
}

/* The status and the body of a request. */
static long req(const srv *s, const char *method, const char *path,
                const char *token, char *body, size_t cap) {
  char *text = NULL;
  long st = admin_http(s, method, path, token, &text);
  snprintf(body, cap, "%s", text ? text : "");
  free(text);
  return st;
}

Test(server_series,
     bad_queries_and_methods_get_the_errors_the_other_routes_do) {
  srv s;
  memset(&s, 0, sizeof(s));
  start(&s, NULL);
  char body[512];
  static const char *const bad[] = {
      "/series?x=1",         "/series?since=abc",
      "/series?since=",      "/series?since",
      "/series?since=-1",    "/series?since=1&since=2",
      "/series?since=1&x=2", "/series?since=123456789012345678901",
      "/series?since=1%20"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cr_assert_eq(req(&s, "GET", bad[i], NULL, body, sizeof(body)), 400,
                 "GET %s", bad[i]);
    cJSON *j = cJSON_Parse(body);
    cr_assert_not_null(j, "GET %s: not JSON: %s", bad[i], body);
    const cJSON *e = cJSON_GetObjectItem(j, "error");
    cr_assert(cJSON_IsString(e), "GET %s: %s", bad[i], body);
    cr_assert_not_null(strstr(e->valuestring, "since=SEQ"), "%s", body);
    cJSON_Delete(j);
  }
  /* the other routes take no query at all */
  cr_assert_eq(req(&s, "GET", "/rooms?since=1", NULL, body, sizeof(body)), 400);
  cr_assert_not_null(strstr(body, "\"error\":\"this endpoint takes no query\""),
                     "%s", body);
  cr_assert_eq(req(&s, "GET", "/metrics?x", NULL, body, sizeof(body)), 400);
  /* methods: as for /rooms and /metrics */
  static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH"};
  for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
    char other[512];
    cr_assert_eq(req(&s, methods[i], "/series", TOKEN, body, sizeof(body)), 405,
                 "%s /series", methods[i]);
    cr_assert_eq(req(&s, methods[i], "/rooms", TOKEN, other, sizeof(other)),
                 405);
    cr_assert_str_eq(body, other);
  }
  cr_assert_eq(req(&s, "GET", "/series/x", NULL, body, sizeof(body)), 404);
  cr_assert_not_null(strstr(body, "no such endpoint"));
  /* a since past the newest: nothing yet, not an error */
  cr_assert_eq(req(&s, "GET", "/series?since=18446744073709551615", NULL, body,
                   sizeof(body)),
               200);
  cJSON *j = cJSON_Parse(body);
  cr_assert_eq(cJSON_GetArraySize(samples(j)), 0, "%s", body);
  cJSON_Delete(j);
  /* auth: the token file is set; a GET needs no token, like /rooms, and a
   * wrong one is not looked at */
  cr_assert_eq(req(&s, "GET", "/series", NULL, body, sizeof(body)), 200);
  cr_assert_eq(
      req(&s, "GET", "/series", "wrong-token-0123456789", body, sizeof(body)),
      200);
  cr_assert_eq(req(&s, "GET", "/rooms", NULL, body, sizeof(body)), 200);
  /* no WebSocket listener: /rooms says so */
  j = cJSON_Parse(body);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "websocket")), "%s", body);
  cJSON_Delete(j);
  stop(&s);
}

Test(server_series,
     rooms_names_the_websocket_port_and_whether_pages_are_served) {
  srv s;
  memset(&s, 0, sizeof(s));
  start(&s, "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
            "\"port\":0,\"static_dir\":\"\"}");
  cJSON *l = e2e_last_event(&s.p, "listening");
  cr_assert_not_null(l);
  double ws = num(l, "ws_port");
  cJSON_Delete(l);
  cJSON *j = admin_get_json(&s, "/rooms");
  const cJSON *w = cJSON_GetObjectItem(j, "websocket");
  cr_assert(cJSON_IsObject(w), "no websocket object");
  cr_assert_eq(num(w, "port"), ws);
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(w, "static")),
            "static files were off");
  cJSON_Delete(j);
  stop(&s);
}

/* The sum of /metrics' gk_rooms over its states. */
static double metric_rooms(const char *text) {
  return metric(text, "gk_rooms{state=\"lobby\"}") +
         metric(text, "gk_rooms{state=\"playing\"}") +
         metric(text, "gk_rooms{state=\"draining\"}");
}

/* A room of one raw player and a server bot; its match started, and the
 * player's records for the first steps sent, so those steps confirm; its
 * INPUT acknowledges none of them, and it sends nothing more. */
static void start_match(const srv *s, raw *c, char *path, size_t cap) {
  raw_connect(c, s->udp);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 1;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "survivors");
  snprintf(m.u.create_room.config, sizeof(m.u.create_room.config),
           "{\"room\":{\"bots\":1}}");
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_ROOM_CREATED, 3000);
  snprintf(path, cap, "/rooms/%s/end",
           c->last[GK_MSG_ROOM_CREATED].u.room.code);
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_MATCH_START, 3000);
  static const uint8_t records[GK_WIRE_STEPS_MAX * GK_SV_INPUT_SIZE];
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_INPUT;
  m.u.input.input_size = GK_SV_INPUT_SIZE;
  m.u.input.count = GK_WIRE_STEPS_MAX;
  m.u.input.records = records;
  raw_send_msg(c, &m);
  raw_pump(c, 200);
}

/* Ends the match at `path` and compares the next sample with /metrics
 * read before and after it: 1 if the room drained all along (the
 * comparison was made), 0 if it was gone before the second read. */
static int compare_while_draining(const srv *s, const char *path) {
  cr_assert_eq(admin_http(s, "POST", path, TOKEN, NULL), 202);
  char *before = get_metrics(s); /* the match ends at the next tick */
  for (int i = 0; i < 20 && metric(before, "gk_rooms{state=\"playing\"}");
       i++) {
    free(before);
    e2e_sleep_ms(5);
    before = get_metrics(s);
  }
  cr_assert_eq(metric(before, "gk_rooms{state=\"draining\"}"), 1,
               "the ended match does not drain");
  cJSON *j = admin_get_json(s, "/series");
  char q[48];
  snprintf(q, sizeof(q), "?since=%.0f", num(j, "taken"));
  cJSON_Delete(j);
  j = series_after(s, q, 0);
  char *after = get_metrics(s);
  int held = metric(after, "gk_rooms{state=\"draining\"}") == 1;
  if (held) {
    const cJSON *x = cJSON_GetArrayItem(samples(j), 0);
    cr_assert_eq(num(x, "rooms"), metric_rooms(before),
                 "/series counts %g rooms, /metrics %g", num(x, "rooms"),
                 metric_rooms(before));
    cr_assert_eq(num(x, "rooms"), 1);
    cr_assert_eq(num(x, "rooms_playing"),
                 metric(before, "gk_rooms{state=\"playing\"}"));
  }
  free(before);
  free(after);
  cJSON_Delete(j);
  return held;
}

/* A match ended by the admin drains (its last steps repeated to a player
 * that never acknowledges them, for GK_ROOM_DRAIN_MS): a sample taken
 * between two /metrics reads that both show the room draining counts it
 * in `rooms`, as gk_rooms does, and not in rooms_playing. */
Test(server_series, rooms_equal_metrics_gk_rooms_while_a_match_drains) {
  srv s;
  memset(&s, 0, sizeof(s));
  start(&s, NULL);
  cr_assert_eq(enet_initialize(), 0);
  int compared = 0;
  for (int tries = 0; tries < 3 && !compared; tries++) {
    raw c;
    char path[64];
    start_match(&s, &c, path, sizeof(path));
    compared = compare_while_draining(&s, path);
    raw_close(&c);
  }
  cr_assert(compared, "every drain ended before a sample was taken in it");
  enet_deinitialize();
  stop(&s);
}
