/* test_admin.c: gk-server's admin HTTP listener, metrics, drain and
 * Agones client, end to end on 127.0.0.1.
 *
 * Each test spawns the real gk-server (admin listener on a free port, with
 * a bearer token file) and gk-bot players, and talks HTTP to it with
 * libcurl. /metrics is parsed by prometheus_client's parser and the Agones
 * SDK server is played by a recording stand-in, both in
 * tests/server/admin_helper.py. The status page is loaded in Debian's
 * headless Chromium. Every wait is bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "admin_http.h"
#include "e2e.h"
#include "gk_net_wire.h"

#define TOKEN ADMIN_TOKEN
#define STEP_HZ 120

typedef admin_srv srv;

/* --- the server and its players ------------------------------------------ */

static void start(srv *s, const char *extra) {
  admin_srv_start(s, STEP_HZ, extra);
}

static void bots(const srv *s, e2e_proc *b, const char *rooms,
                 const char *players, const char *steps) {
  e2e_start_bot(b, &s->d, "bot", s->udp, rooms, players, steps);
}

static void wait_events(const srv *s, const char *event, int n) {
  for (int waited = 0; e2e_count_events(&s->p, event) < n; waited += 20) {
    cr_assert_lt(waited, 30000, "fewer than %d %s events", n, event);
    e2e_sleep_ms(20);
  }
}

static void stop(srv *s) {
  kill(s->p.pid, SIGTERM);
  int done = e2e_wait(&s->p, 15000);
  if (!done) e2e_kill(&s->p);
  cr_assert(done, "gk-server did not exit after SIGTERM");
  cr_assert_eq(s->p.status, 0, "gk-server exit status %d", s->p.status);
}

/* The codes of the rooms /rooms lists (up to cap). */
static int room_codes(const srv *s, char (*codes)[17], int cap) {
  cJSON *j = admin_get_json(s, "/rooms");
  int n = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "rooms")) {
    if (n < cap)
      snprintf(codes[n], 17, "%s", cJSON_GetObjectItem(r, "code")->valuestring);
    n++;
  }
  cJSON_Delete(j);
  return n;
}

static double room_step(const srv *s, const char *code) {
  char path[64];
  snprintf(path, sizeof(path), "/rooms/%s", code);
  cJSON *j = admin_get_json(s, path);
  double step = cJSON_GetObjectItem(j, "step")->valuedouble;
  cJSON_Delete(j);
  return step;
}

/* --- raw sockets: oversized and slow requests ---------------------------- */

static int connect_http(const srv *s) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons(s->http);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  struct timeval tv = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  signal(SIGPIPE, SIG_IGN);
  return fd;
}

/* Sends one byte a second; returns the seconds until the server closed
 * the connection (or 30 if it never did). */
static int trickle(const srv *s) {
  int fd = connect_http(s);
  const char *req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  int secs = 0;
  for (; secs < 30; secs++) {
    char c = req[secs % (int)strlen(req)];
    if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) break;
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof(buf), 0); /* waits up to 1 s */
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
  }
  close(fd);
  return secs;
}

/* The status line of the answer to a raw request. */
static int raw_status(const srv *s, const char *req, size_t len) {
  int fd = connect_http(s);
  size_t sent = 0;
  while (sent < len) {
    ssize_t n = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += (size_t)n;
  }
  char buf[64] = {0};
  int status = 0;
  for (int tries = 0; tries < 10; tries++) {
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    if (n > 0) {
      sscanf(buf, "HTTP/1.%*d %d", &status);
      break;
    }
    if (n == 0) break;
  }
  close(fd);
  return status;
}

/* --- tests --------------------------------------------------------------- */

Test(server_admin, every_endpoint_answers_and_bad_requests_get_their_status) {
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc b;
  start(&s, NULL);
  bots(&s, &b, "2", "2", "1000000");
  wait_events(&s, "match_start", 2);
  char *text = NULL;
  cr_assert_eq(admin_http(&s, "GET", "/healthz", NULL, &text), 200);
  cr_assert_str_eq(text, "ok\n");
  free(text);
  char codes[4][17];
  cr_assert_eq(room_codes(&s, codes, 4), 2);
  char path[128];
  snprintf(path, sizeof(path), "/rooms/%s", codes[0]);
  cJSON *j = admin_get_json(&s, path);
  cr_assert_str_eq(cJSON_GetObjectItem(j, "genre")->valuestring, "survivors");
  cr_assert_str_eq(cJSON_GetObjectItem(j, "state")->valuestring, "playing");
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "players")), 2);
  cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "late_share")));
  cJSON_Delete(j);
  cr_assert_eq(admin_http(&s, "GET", "/", NULL, &text), 200);
  cr_assert_not_null(strstr(text, "<title>gk-server status</title>"));
  free(text);
  /* unknown things, wrong methods */
  cr_assert_eq(admin_http(&s, "GET", "/rooms/AAAAAAAAAAAAAAAA", NULL, NULL),
               404);
  cr_assert_eq(admin_http(&s, "GET", "/rooms/short", NULL, NULL), 404);
  cr_assert_eq(admin_http(&s, "GET", "/nothing", NULL, NULL), 404);
  cr_assert_eq(admin_http(&s, "DELETE", "/rooms", NULL, NULL), 405);
  cr_assert_eq(admin_http(&s, "POST", "/metrics", TOKEN, NULL), 405);
  cr_assert_eq(admin_http(&s, "GET", "/drain", TOKEN, NULL), 405);
  snprintf(path, sizeof(path), "/rooms/%s/end", codes[0]);
  cr_assert_eq(admin_http(&s, "GET", path, TOKEN, NULL), 405);
  /* the token */
  cr_assert_eq(admin_http(&s, "POST", path, NULL, NULL), 401);
  cr_assert_eq(
      admin_http(&s, "POST", path, "test-token-0123456789abcdeX", NULL), 401);
  cr_assert_eq(admin_http(&s, "POST", path, "short", NULL), 401);
  cr_assert_eq(admin_http(&s, "POST", "/drain", NULL, NULL), 401);
  cr_assert_eq(
      admin_http(&s, "POST", "/rooms/AAAAAAAAAAAAAAAA/end", TOKEN, NULL), 404);
  /* oversized requests: a 64 KiB header, too many headers, a body */
  static char big[70000];
  int n = snprintf(big, sizeof(big), "GET /healthz HTTP/1.1\r\nX-Big: ");
  memset(big + n, 'a', 65536);
  memcpy(big + n + 65536, "\r\n\r\n", 4);
  cr_assert_eq(raw_status(&s, big, (size_t)n + 65540), 431);
  n = snprintf(big, sizeof(big), "GET /healthz HTTP/1.1\r\n");
  for (int i = 0; i < 40; i++)
    n += snprintf(big + n, sizeof(big) - (size_t)n, "X-H%d: 1\r\n", i);
  n += snprintf(big + n, sizeof(big) - (size_t)n, "\r\n");
  cr_assert_eq(raw_status(&s, big, (size_t)n), 431);
  const char *post = "POST /drain HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n";
  cr_assert_eq(raw_status(&s, post, strlen(post)), 413);
  /* a client sending a byte a second is cut (request_ms 2000); the
   * rooms step on meanwhile */
  double before = room_step(&s, codes[1]);
  int secs = trickle(&s);
  cr_assert_leq(secs, 5, "a slow client held its connection %d s", secs);
  cr_assert_geq(secs, 1);
  cr_assert_gt(room_step(&s, codes[1]) - before, STEP_HZ * secs / 2);
  /* remove a player, then end that room; the other plays on */
  snprintf(path, sizeof(path), "/rooms/%s/players/1/remove", codes[0]);
  cr_assert_eq(admin_http(&s, "POST", path, TOKEN, &text), 202, "%s", text);
  free(text);
  cr_assert_eq(admin_http(&s, "POST", path, TOKEN, NULL), 409);
  snprintf(path, sizeof(path), "/rooms/%s/players/9/remove", codes[0]);
  cr_assert_eq(admin_http(&s, "POST", path, TOKEN, NULL), 404);
  snprintf(path, sizeof(path), "/rooms/%s/end", codes[0]);
  cr_assert_eq(admin_http(&s, "POST", path, TOKEN, NULL), 202);
  wait_events(&s, "match_end", 1);
  cJSON *end = e2e_last_event(&s.p, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(end, "room")->valuestring, codes[0]);
  cr_assert_str_eq(cJSON_GetObjectItem(end, "reason")->valuestring, "host");
  cJSON_Delete(end);
  before = room_step(&s, codes[1]);
  e2e_sleep_ms(300);
  cr_assert_gt(room_step(&s, codes[1]), before);
  cr_assert_eq(admin_http(&s, "GET", "/healthz", NULL, NULL), 200);
  stop(&s);
  e2e_kill(&b);
  e2e_dir_remove(&s.d);
}

/* Runs the helper; returns its stdout parsed as JSON. */
static cJSON *helper_metrics(const srv *s, const char *text) {
  char file[512];
  e2e_write(&s->d, "metrics.txt", text, file, sizeof(file));
  e2e_proc p;
  char *argv[] = {(char *)"/usr/bin/python3", (char *)GK_ADMIN_HELPER,
                  (char *)"metrics", file, NULL};
  e2e_spawn(&p, &s->d, "parse", argv);
  cr_assert(e2e_wait(&p, 30000));
  cr_assert_eq(p.status, 0, "the Prometheus parser refused /metrics (%s)",
               p.err);
  cJSON *j = e2e_read_json(p.out);
  cr_assert_not_null(j);
  return j;
}

static double sample(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItem(m, name);
  cr_assert(cJSON_IsNumber(v), "no sample %s", name);
  return v->valuedouble;
}

Test(server_admin, metrics_parse_and_agree_with_the_stopped_line) {
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc b;
  start(&s, NULL);
  bots(&s, &b, "2", "2", "240");
  cr_assert(e2e_wait(&b, 60000));
  cr_assert_eq(b.status, 0);
  for (int waited = 0;; waited += 50) { /* the rooms drain and go */
    char c[2][17];
    if (room_codes(&s, c, 2) == 0) break;
    cr_assert_lt(waited, 10000);
    e2e_sleep_ms(50);
  }
  /* A room leaves /rooms before its replay is finished: that happens on
   * the thread pool, and replays_written counts it when it is done. */
  wait_events(&s, "replay_written", 2);
  char *text = NULL;
  cr_assert_eq(admin_http(&s, "GET", "/metrics", NULL, &text), 200);
  cJSON *m = helper_metrics(&s, text);
  free(text);
  stop(&s);
  cJSON *st = e2e_last_event(&s.p, "stopped");
  cr_assert_not_null(st);
  static const char *const pairs[][2] = {
      {"rooms_created", "gk_rooms_created_total"},
      {"matches_started", "gk_matches_started_total"},
      {"matches_ended", "gk_matches_ended_total"},
      {"replays_written", "gk_replays_written_total"},
      {"replays_failed", "gk_replays_failed_total"},
      {"packets_in", "gk_datagrams_received_total"},
      {"packets_out", "gk_datagrams_sent_total"},
      {"drop_oversize", "gk_datagrams_dropped_total{reason=oversize}"},
      {"drop_malformed", "gk_datagrams_dropped_total{reason=malformed}"},
      {"drop_unexpected", "gk_datagrams_dropped_total{reason=unexpected}"},
      {"drop_session", "gk_datagrams_dropped_total{reason=session}"},
      {"drop_no_room", "gk_datagrams_dropped_total{reason=no_room}"},
      {"strikes", "gk_strikes_total"},
      {"room_steps", "gk_steps_total"},
      {"steps_confirmed", "gk_steps_confirmed_total"},
      {"steps_late", "gk_steps_late_total"},
      {"stalls", "gk_stalls_total"},
      {"desyncs", "gk_desyncs_total"}};
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
    const cJSON *v = cJSON_GetObjectItem(st, pairs[i][0]);
    cr_assert(cJSON_IsNumber(v), "stopped has no %s", pairs[i][0]);
    cr_assert_eq(v->valuedouble, sample(m, pairs[i][1]), "%s vs %s",
                 pairs[i][0], pairs[i][1]);
  }
  cr_assert_eq(sample(m, "gk_matches_ended_total"), 2);
  cr_assert_geq(sample(m, "gk_steps_total"), 2 * 240);
  cr_assert_leq(sample(m, "gk_ticks_total"),
                cJSON_GetObjectItem(st, "ticks")->valuedouble);
  cr_assert_gt(sample(m, "gk_tick_lateness_seconds_count"), 0);
  cr_assert_eq(sample(m, "gk_confirm_latency_seconds_count"),
               sample(m, "gk_steps_total"));
  cr_assert_gt(sample(m, "gk_process_resident_memory_bytes"), 1 << 20);
  cr_assert_gt(sample(m, "gk_process_cpu_seconds_total"), 0);
  cr_assert_eq(sample(m, "gk_rooms{state=playing}"), 0);
  cJSON_Delete(st);
  cJSON_Delete(m);
  e2e_dir_remove(&s.d);
}

/* Desync forensics in /metrics: a perturbed peer that answers (diffed) and
 * one that says it cannot, in two rooms of one server. */
Test(server_admin, desync_reports_are_counted_by_result_in_metrics) {
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc ok, cannot;
  /* a fixed input delay: the game at the perturbed step does not depend
   * on the machine's load */
  start(&s, "\"lockstep\":{\"input_delay\":2},"
            "\"desync\":{\"policy\":\"report\"}");
  const char *diffed[] = {"--perturb", "1:329:players[0].kills", NULL};
  const char *refuses[] = {"--perturb", "1:329:players[0].kills",
                           "--state-fault", "cannot", NULL};
  e2e_start_bot_x(&ok, &s.d, "ok", s.udp, "1", "3", "400", diffed);
  e2e_start_bot_x(&cannot, &s.d, "cannot", s.udp, "1", "2", "400", refuses);
  cr_assert(e2e_wait(&ok, 60000) && e2e_wait(&cannot, 60000));
  wait_events(&s, "desync_report", 2);
  char *text = NULL;
  cr_assert_eq(admin_http(&s, "GET", "/metrics", NULL, &text), 200);
  cr_assert_not_null(strstr(text, "# TYPE gk_desync_reports_total counter"));
  cJSON *m = helper_metrics(&s, text);
  free(text);
  cr_assert_eq(sample(m, "gk_desync_reports_total{result=diffed}"), 1);
  cr_assert_eq(sample(m, "gk_desync_reports_total{result=cannot}"), 1);
  static const char *const zero[] = {"no_answer", "garbage", "unreadable",
                                     "too_large", "room_closed"};
  for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
    char name[96];
    snprintf(name, sizeof(name), "gk_desync_reports_total{result=%s}", zero[i]);
    cr_assert_eq(sample(m, name), 0, "%s", name);
  }
  cr_assert_eq(sample(m, "gk_desync_bundles_written_total"), 2);
  cr_assert_eq(sample(m, "gk_desync_bundles_failed_total"), 0);
  cr_assert_eq(sample(m, "gk_desyncs_total"), 2);
  cJSON_Delete(m);
  stop(&s);
  e2e_dir_remove(&s.d);
}

/* Waits for the server to exit by itself; returns its status. */
static int wait_exit(srv *s, int ms) {
  int done = e2e_wait(&s->p, ms);
  if (!done) e2e_kill(&s->p);
  cr_assert(done, "gk-server did not exit after the drain");
  return s->p.status;
}

Test(server_admin, drain_lets_matches_finish_then_exits_0_with_good_replays) {
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc b;
  start(&s, NULL);
  bots(&s, &b, "2", "2", "600");
  wait_events(&s, "match_start", 2);
  char *text = NULL;
  cr_assert_eq(admin_http(&s, "POST", "/drain", TOKEN, &text), 202, "%s", text);
  free(text);
  cr_assert_eq(admin_http(&s, "GET", "/healthz", NULL, &text), 503);
  cr_assert_str_eq(text, "draining\n");
  free(text);
  cr_assert_eq(admin_http(&s, "POST", "/drain", TOKEN, NULL), 409);
  cr_assert_eq(wait_exit(&s, 30000), 0);
  cr_assert(e2e_wait(&b, 20000));
  cr_assert_eq(b.status, 0, "the bots' matches did not finish");
  cr_assert_eq(e2e_count_events(&s.p, "match_end"), 2);
  cJSON *end = e2e_last_event(&s.p, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(end, "reason")->valuestring, "host");
  cr_assert_geq(cJSON_GetObjectItem(end, "steps")->valuedouble, 600);
  cJSON_Delete(end);
  cr_assert_eq(e2e_count_events(&s.p, "stopped"), 1);
  char codes[4][17];
  uint64_t hashes[4];
  cr_assert_eq(e2e_verify_replays(s.d.replays, codes, hashes, 4), 2);
  e2e_dir_remove(&s.d);
}

/* --- Agones -------------------------------------------------------------- */

/* Starts the recording stand-in; returns its port. */
static uint16_t agones_stand_in(const e2e_dir *d, e2e_proc *p, char *record,
                                size_t cap) {
  char portfile[400];
  snprintf(portfile, sizeof(portfile), "%s/agones.port", d->path);
  snprintf(record, cap, "%s/agones.jsonl", d->path);
  char *argv[] = {(char *)"/usr/bin/python3",
                  (char *)GK_ADMIN_HELPER,
                  (char *)"agones",
                  portfile,
                  record,
                  NULL};
  e2e_spawn(p, d, "agones", argv);
  for (int waited = 0; waited < 20000; waited += 20) {
    FILE *f = fopen(portfile, "r");
    unsigned port = 0;
    if (f) {
      int ok = fscanf(f, "%u", &port) == 1;
      fclose(f);
      if (ok && port) return (uint16_t)port;
    }
    e2e_sleep_ms(20);
  }
  cr_assert_fail("the Agones stand-in did not start");
  return 0;
}

Test(server_admin, agones_hears_ready_health_counts_and_shutdown_after_drain) {
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc b, ag;
  e2e_dir_make(&s.d); /* the stand-in first: its port goes in the env */
  char record[512];
  uint16_t port = agones_stand_in(&s.d, &ag, record, sizeof(record));
  char env[16];
  snprintf(env, sizeof(env), "%u", (unsigned)port);
  setenv("AGONES_SDK_HTTP_PORT", env, 1);
  start(&s, "\"agones\":{\"health_ms\":200}");
  unsetenv("AGONES_SDK_HTTP_PORT");
  bots(&s, &b, "2", "2", "480");
  wait_events(&s, "match_start", 2);
  e2e_sleep_ms(800); /* a few health periods with two rooms */
  cr_assert_eq(admin_http(&s, "POST", "/drain", TOKEN, NULL), 202);
  cr_assert_eq(wait_exit(&s, 30000), 0);
  cr_assert(e2e_wait(&ag, 10000), "the stand-in saw no /shutdown");
  cr_assert_eq(e2e_count_events(&s.p, "agones_ready"), 1);
  cr_assert_eq(e2e_count_events(&s.p, "agones_shutdown"), 1);

  FILE *f = fopen(record, "r");
  cr_assert_not_null(f);
  char line[1024], first[256] = "", last[256] = "";
  int health = 0, n = 0;
  double max_rooms = -1, max_players = -1;
  while (fgets(line, sizeof(line), f)) {
    cJSON *j = cJSON_Parse(line);
    cr_assert_not_null(j, "%s", line);
    const char *m = cJSON_GetObjectItem(j, "method")->valuestring;
    const char *p = cJSON_GetObjectItem(j, "path")->valuestring;
    snprintf(last, sizeof(last), "%s %s", m, p);
    if (n++ == 0) snprintf(first, sizeof(first), "%s", last);
    if (strcmp(last, "POST /health") == 0) health++;
    if (strncmp(p, "/v1beta1/counters/", 18) == 0) {
      cr_assert_str_eq(m, "PATCH");
      cJSON *bj = cJSON_Parse(cJSON_GetObjectItem(j, "body")->valuestring);
      double c = strtod(cJSON_GetObjectItem(bj, "count")->valuestring, NULL);
      double *mx = strcmp(p + 18, "rooms") == 0 ? &max_rooms : &max_players;
      if (c > *mx) *mx = c;
      cJSON_Delete(bj);
    }
    cJSON_Delete(j);
  }
  fclose(f);
  cr_assert_str_eq(first, "POST /ready");
  cr_assert_str_eq(last, "POST /shutdown");
  cr_assert_geq(health, 3, "%d health pings", health);
  cr_assert_eq(max_rooms, 2);
  cr_assert_eq(max_players, 4);
  cr_assert(e2e_wait(&b, 20000));
  cr_assert_eq(b.status, 0);
  e2e_dir_remove(&s.d);
}

/* --- the status page in a browser ---------------------------------------- */

Test(server_admin, the_status_page_lists_the_rooms_in_headless_chromium) {
  struct stat st;
  if (stat("/usr/bin/chromium", &st) != 0)
    cr_skip_test("Debian's chromium is not installed");
  srv s;
  memset(&s, 0, sizeof(s));
  e2e_proc b, br;
  start(&s, NULL);
  bots(&s, &b, "2", "1", "1000000");
  wait_events(&s, "match_start", 2);
  char codes[4][17];
  cr_assert_eq(room_codes(&s, codes, 4), 2);
  char url[64], profile[400], prof_arg[420];
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/", (unsigned)s.http);
  snprintf(profile, sizeof(profile), "%s/chromium", s.d.path);
  mkdir(profile, 0700);
  snprintf(prof_arg, sizeof(prof_arg), "--user-data-dir=%s", profile);
  char *argv[] = {(char *)"/usr/bin/chromium",
                  (char *)"--headless",
                  (char *)"--no-sandbox",
                  (char *)"--disable-gpu",
                  (char *)"--disable-quic",
                  (char *)"--no-first-run",
                  (char *)"--disable-background-networking",
                  (char *)"--disable-component-update",
                  (char *)"--disable-sync",
                  prof_arg,
                  (char *)"--virtual-time-budget=5000",
                  (char *)"--dump-dom",
                  url,
                  NULL};
  e2e_spawn(&br, &s.d, "chromium", argv);
  int done = e2e_wait(&br, 90000);
  if (!done) e2e_kill(&br);
  cr_assert(done, "chromium did not finish");
  cr_assert_eq(br.status, 0, "chromium exit %d (%s)", br.status, br.err);
  FILE *f = fopen(br.out, "r");
  static char dom[1 << 20];
  size_t n = f ? fread(dom, 1, sizeof(dom) - 1, f) : 0;
  if (f) fclose(f);
  dom[n] = '\0';
  for (int i = 0; i < 2; i++) {
    char want[96], shown[GK_WIRE_CODE_LEN + 1];
    cr_assert_eq(gk_wire_code_shown(codes[i], shown), 0);
    snprintf(want, sizeof(want), "<code>%s</code>", shown);
    cr_assert_not_null(strstr(dom, want), "room %s not in the page", codes[i]);
  }
  cr_assert_not_null(strstr(dom, "running, 2 of 256 rooms"));
  stop(&s);
  e2e_kill(&b);
  e2e_dir_remove(&s.d);
}

/* --- refusals at start --------------------------------------------------- */

static int run_with(const e2e_dir *d, const char *json, const char *flag,
                    char *err, size_t cap) {
  char path[512];
  e2e_write(d, "bad.json", json, path, sizeof(path));
  e2e_proc p;
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, (char *)flag,
                  NULL};
  e2e_spawn(&p, d, "bad", argv);
  cr_assert(e2e_wait(&p, 10000));
  FILE *f = fopen(flag ? p.err : p.out, "r");
  size_t n = f ? fread(err, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  err[n] = '\0';
  return p.status;
}

Test(server_admin, a_listener_off_loopback_without_a_token_is_refused) {
  e2e_dir d;
  e2e_dir_make(&d);
  char err[4096];
  int st = run_with(&d,
                    "{\"admin\":{\"enabled\":true,"
                    "\"listen\":\"0.0.0.0:0\"}}",
                    "--check-config", err, sizeof(err));
  cr_assert_eq(st, 2);
  cr_assert_not_null(strstr(err, "admin.token_file: required"), "%s", err);
  st = run_with(&d, "{\"admin\":{\"listen\":\"127.0.0.1\"}}", "--check-config",
                err, sizeof(err));
  cr_assert_eq(st, 2);
  cr_assert_not_null(strstr(err, "admin.listen: must be"), "%s", err);
  /* a token too short stops the start (exit 1, logged) */
  char tok[512], json[1024];
  e2e_write(&d, "short", "abc\n", tok, sizeof(tok));
  snprintf(json, sizeof(json),
           "{\"listen\":{\"host\":\"127.0.0.1\",\"port\":0},"
           "\"replays\":{\"dir\":\"%s\"},\"admin\":{\"enabled\":true,"
           "\"listen\":\"127.0.0.1:0\",\"token_file\":\"%s\"}}",
           d.replays, tok);
  st = run_with(&d, json, NULL, err, sizeof(err));
  cr_assert_eq(st, 1);
  cr_assert_not_null(strstr(err, "the token must be 16 to 256"), "%s", err);
  e2e_dir_remove(&d);
}
