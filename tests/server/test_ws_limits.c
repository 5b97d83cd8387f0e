/* test_ws_limits.c: the server's limits on WebSocket links, through the
 * real gk-server (raw WebSocket clients, tests/net/ws_raw.c; gk-bot for
 * ENet players).
 *
 * websocket.max_connections and limits.peers: the listener takes at most
 * max_connections WebSocket connections (503 past them), and every link,
 * ENet or WebSocket, takes a place of limits.peers, the server's
 * connection table: when ENet players fill it, an upgrade is refused 503
 * before its 101 though the listener has room, and taken again once they
 * leave. limits.handshake_ms, limits.strikes and connect tokens apply to
 * a WebSocket link as to an ENet one.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gk_err.h"
#include "gk_token.h"
#include "ws_e2e.h"

#define HS(x) "gk_websocket_handshakes_total{result=\"" x "\"}"

TestSuite(server_ws_limits, .timeout = 200);

static raw A, B, C;

static int upgrade(raw *r, const ws_server *s) {
  raw_connect_to(r, NULL, s->ws, 0);
  return raw_handshake(r, "/play", "websocket", "13", "gamekit.1", NULL);
}

static void expect_full(const ws_server *s, const char *why) {
  uint64_t full = ws_metric(s, HS("full"));
  cr_assert_eq(upgrade(&C, s), 503, "%s: 503", why);
  raw_close(&C);
  cr_assert_eq(ws_metric_wait(s, HS("full"), full + 1, 2000), full + 1);
}

/* A room for each WebSocket client keeps it past limits.handshake_ms. */
static void hold(raw *r) {
  char code[GK_WIRE_CODE_LEN + 1];
  int err = 0;
  cr_assert_eq(ws_create_room(r, "push-puzzle", 2, NULL, code, &err),
               GK_MSG_ROOM_CREATED, "error %d", err);
}

Test(server_ws_limits,
     max_connections_caps_websocket_links_and_peers_caps_every_link) {
  static ws_server s;
  memset(&s, 0, sizeof(s));
  ws_server_start(&s, "\"max_connections\":2", "\"limits\":{\"peers\":3}");
  cr_assert_eq(upgrade(&A, &s), 101);
  hold(&A);
  cr_assert_eq(upgrade(&B, &s), 101);
  hold(&B);
  expect_full(&s, "a third WebSocket connection over max_connections 2");
  /* one WebSocket player leaves; two ENet players fill the table */
  raw_close(&B);
  uint64_t open = 2;
  for (int i = 0; i < 100 && open != 1; i++) {
    e2e_sleep_ms(20);
    open = ws_metric(&s, "gk_connections{transport=\"websocket\"}");
  }
  cr_assert_eq(open, 1, "the WebSocket player's place is free");
  e2e_proc bot;
  e2e_start_bot(&bot, &s.a.d, "bot", s.a.udp, "1", "2", "1200");
  cr_assert(e2e_wait_events(&s.a.p, "match_start", 1, 20000),
            "two ENet players take the table's last places");
  cr_assert_eq(ws_metric(&s, "gk_connections{transport=\"websocket\"}"), 1);
  expect_full(&s, "limits.peers 3 full (1 WebSocket + 2 ENet)");
  /* the ENet players leave: the place is a WebSocket link's again */
  cr_assert(e2e_wait(&bot, 60000), "gk-bot finishes");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  uint64_t end = uv_hrtime() / 1000000u + 5000;
  int st = 0;
  while (st != 101 && uv_hrtime() / 1000000u < end) {
    raw_close(&B);
    e2e_sleep_ms(50);
    st = upgrade(&B, &s);
  }
  cr_assert_eq(st, 101, "a place freed by ENet players is taken over WS");
  raw_close(&A);
  raw_close(&B);
  ws_server_stop(&s);
}

/* --- the handshake deadline, strikes and tokens ----------------------------
 */

static uint64_t now_s(void) {
  return (uint64_t)time(NULL);
}

static void mint_create(const uint8_t key[GK_TOKEN_KEY_BYTES], uint64_t client,
                        uint8_t out[GK_TOKEN_BYTES]) {
  gk_token_grant g;
  memset(&g, 0, sizeof(g));
  g.kind = GK_TOKEN_CREATE;
  g.max_players = 2;
  g.slot = GK_TOKEN_SLOT_ANY;
  snprintf(g.genre, sizeof(g.genre), "push-puzzle");
  cr_assert_eq(gk_token_mint(&g, client, now_s(), 60, key, out), 0);
}

Test(server_ws_limits,
     handshake_deadline_strikes_and_tokens_apply_to_websocket) {
  static ws_server s;
  memset(&s, 0, sizeof(s));
  e2e_dir_make(&s.a.d);
  char key_path[400], err[512], extra[1024];
  uint8_t key[GK_TOKEN_KEY_BYTES];
  snprintf(key_path, sizeof(key_path), "%s/key", s.a.d.path);
  cr_assert_eq(gk_token_key_write(key_path, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(gk_token_key_load(key_path, key, err, sizeof(err)), 0, "%s",
               err);
  snprintf(extra, sizeof(extra),
           "\"auth\":{\"mode\":\"token\",\"key_file\":\"%s\"},"
           "\"limits\":{\"handshake_ms\":1500,\"strikes\":4}",
           key_path);
  ws_server_start(&s, NULL, extra);

  /* an upgraded link with no room request is dropped at handshake_ms */
  cr_assert_eq(upgrade(&A, &s), 101);
  uint64_t t0 = uv_hrtime() / 1000000u;
  cr_assert(ws_wait_eof(&A, 6000), "a silent WebSocket link is dropped");
  uint64_t took = uv_hrtime() / 1000000u - t0;
  cr_assert(took >= 1200 && took <= 5000, "dropped after %" PRIu64 " ms", took);
  raw_close(&A);
  cr_assert(e2e_wait_events(&s.a.p, "limit", 1, 2000));
  cJSON *l = e2e_last_event(&s.a.p, "limit");
  cr_assert_not_null(l);
  cr_assert_str_eq(cJSON_GetObjectItem(l, "limit")->valuestring,
                   "handshake_ms");
  cJSON_Delete(l);

  /* limits.strikes malformed messages: the link is kicked */
  uint64_t kicked = ws_metric(&s, "gk_kicked_total");
  cr_assert_eq(upgrade(&A, &s), 101);
  const uint8_t bad[3] = {GK_WIRE_VERSION, 250, 0};
  for (int i = 0; i < 4; i++) raw_frame(&A, 1, 2, bad, sizeof bad, 0);
  cr_assert(ws_wait_eof(&A, 3000), "kicked after 4 strikes");
  raw_close(&A);
  cr_assert_eq(ws_metric(&s, "gk_kicked_total"), kicked + 1);

  /* token mode: no token is refused (and the connection closed), a
   * minted one admitted once */
  char code[GK_WIRE_CODE_LEN + 1];
  int ecode = 0;
  cr_assert_eq(upgrade(&A, &s), 101);
  cr_assert_eq(ws_create_room(&A, "push-puzzle", 2, NULL, code, &ecode),
               GK_MSG_ERROR);
  cr_assert_eq(ecode, GK_ENOTOKEN);
  cr_assert_eq(raw_close_code(&A, 3000), 1000, "a refused link is closed");
  raw_close(&A);
  cr_assert_eq(upgrade(&A, &s), 101);
  uint8_t tok[GK_TOKEN_BYTES];
  mint_create(key, 7, tok);
  cr_assert_eq(ws_create_room(&A, "push-puzzle", 2, tok, code, &ecode),
               GK_MSG_ROOM_CREATED, "error %d", ecode);
  cr_assert_eq(upgrade(&B, &s), 101);
  cr_assert_eq(ws_create_room(&B, "push-puzzle", 2, tok, code, &ecode),
               GK_MSG_ERROR, "a token is admitted once");
  raw_close(&A);
  raw_close(&B);
  e2e_stop_server(&s.a.p);
  cr_assert_eq(e2e_stat(&s.a.p, "stopped", "auth_admitted"), 1);
  cr_assert_eq(e2e_stat(&s.a.p, "stopped", "auth_reused"), 1);
  e2e_dir_remove(&s.a.d);
}

/* --- a silent connection, one over conns_per_ip ---------------------------
 */

static double event_num(const ws_server *s, const char *event,
                        const char *key) {
  cJSON *e = e2e_last_event(&s->a.p, event);
  cr_assert_not_null(e, "no %s", event);
  const cJSON *v = cJSON_GetObjectItem(e, key);
  cr_assert(cJSON_IsNumber(v), "%s has no %s", event, key);
  double d = v->valuedouble;
  cJSON_Delete(e);
  return d;
}

/* A dead tab: a player that sends nothing (no frame, no pong to the
 * listener's pings) is cut at timing.peer_timeout_ms, as an ENet peer is,
 * and its slot is held (reconnect.hold_ms) then removed by the room: the
 * match goes on meanwhile (while_away neutral) and ends when the hold
 * does (no person left), with nobody acting. */
Test(server_ws_limits, a_silent_websocket_player_is_cut_at_the_peer_timeout) {
  static ws_server s;
  memset(&s, 0, sizeof(s));
  ws_server_start(&s, NULL,
                  "\"timing\":{\"peer_timeout_ms\":1500},"
                  "\"reconnect\":{\"hold_ms\":1500,"
                  "\"while_away\":\"neutral\"}");
  ws_open(&A, &s, NULL, 0);
  gk_wire_msg m, got;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "push-puzzle");
  snprintf(m.u.create_room.config, sizeof m.u.create_room.config,
           "{\"room\":{\"bots\":1}}");
  ws_send_msg(&A, &m);
  cr_assert(ws_wait_msg(&A, GK_MSG_ROOM_CREATED, &got, 3000));
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  ws_send_msg(&A, &m); /* its last frame */
  uint64_t t0 = uv_hrtime() / 1000000u;
  cr_assert(ws_wait_msg(&A, GK_MSG_RECONNECT_SECRET, &got, 3000));
  uint64_t timeouts =
      ws_metric(&s, "gk_websocket_closes_total{reason=\"timeout\"}");
  /* silent from here: nothing read, nothing sent */
  cr_assert(e2e_wait_events(&s.a.p, "player_away", 1, 5000),
            "the silent player was not cut");
  uint64_t took = uv_hrtime() / 1000000u - t0;
  cr_assert(took >= 1400 && took <= 3000,
            "cut %" PRIu64 " ms after its last frame (timeout 1500)", took);
  cr_assert_eq(ws_metric(&s, "gk_websocket_closes_total{reason=\"timeout\"}"),
               timeouts + 1);
  double away_step = event_num(&s, "player_away", "step");
  cr_assert(e2e_wait_events(&s.a.p, "hold_expired", 1, 4000),
            "the held slot was never let go");
  cr_assert_gt(event_num(&s, "hold_expired", "step"), away_step,
               "the match stood still while its player was away");
  cr_assert(e2e_wait_events(&s.a.p, "match_end", 1, 4000),
            "the match waits on a player who is gone");
  cJSON *end = e2e_last_event(&s.a.p, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(end, "reason")->valuestring, "all_left");
  cJSON_Delete(end);
  cr_assert_eq(e2e_count_events(&s.a.p, "limit"), 0, "not a handshake cut");
  raw_close(&A);
  ws_server_stop(&s);
}

/* limits.conns_per_ip: one more upgrade from an address that holds that
 * many links (of any kind) is answered 429 before any 101, and counted. */
Test(server_ws_limits, one_upgrade_over_conns_per_ip_gets_429_not_101) {
  static ws_server s;
  memset(&s, 0, sizeof(s));
  ws_server_start(&s, NULL, "\"limits\":{\"conns_per_ip\":2}");
  ws_open(&A, &s, "127.0.0.7", 0);
  ws_open(&B, &s, "127.0.0.7", 0);
  for (int i = 0;
       i < 100 && ws_metric(&s, "gk_connections{transport=\"websocket\"}") < 2;
       i++)
    e2e_sleep_ms(20);
  uint64_t limited = ws_metric(&s, HS("limit"));
  raw_connect_to(&C, "127.0.0.7", s.ws, 0);
  int st = raw_handshake(&C, "/play", "websocket", "13", "gamekit.1",
                         "Origin: http://good.example\r\n");
  cr_assert_eq(st, 429, "one over conns_per_ip 2: %d", st);
  static const char why[] = "too many connections from this address";
  raw_fill(&C, sizeof why - 1, 1000);
  int said = 0;
  for (size_t i = 0; i + sizeof why - 1 <= C.len && !said; i++)
    said = memcmp(C.buf + i, why, sizeof why - 1) == 0;
  cr_assert(said, "the 429 says why");
  raw_close(&C);
  cr_assert_eq(ws_metric_wait(&s, HS("limit"), limited + 1, 2000), limited + 1);
  /* another address is not counted with it */
  ws_open(&C, &s, "127.0.0.8", 0);
  raw_close(&C);
  /* one leaves: the address has a place again */
  raw_close(&B);
  int again = 0;
  for (int i = 0; i < 100 && again != 101; i++) {
    e2e_sleep_ms(20);
    raw_connect_to(&B, "127.0.0.7", s.ws, 0);
    again = raw_handshake(&B, "/play", "websocket", "13", "gamekit.1",
                          "Origin: http://good.example\r\n");
    if (again != 101) raw_close(&B);
  }
  cr_assert_eq(again, 101, "a place freed is taken again");
  raw_close(&A);
  raw_close(&B);
  ws_server_stop(&s);
}

/* --- a trusted proxy --------------------------------------------------------
 */

/* An upgrade from `src` with an X-Forwarded-For header (NULL: none). */
static int upgrade_via(raw *r, const ws_server *s, const char *src,
                       const char *xff) {
  char extra[256];
  snprintf(extra, sizeof extra, "Origin: http://good.example\r\n%s%s%s",
           xff ? "X-Forwarded-For: " : "", xff ? xff : "", xff ? "\r\n" : "");
  raw_connect_to(r, src, s->ws, 0);
  return raw_handshake(r, "/play", "websocket", "13", "gamekit.1", extra);
}

/* websocket.trusted_proxies: from a trusted proxy (127.0.0.5, in
 * 127.0.0.4/30), the last address of X-Forwarded-For is the client's and
 * limits.conns_per_ip counts it, not the proxy (which may hold more TCP
 * connections than the limit); a bad last entry is 400. From anyone else
 * the header is ignored: the TCP peer is counted. */
Test(server_ws_limits, per_ip_limits_count_a_trusted_proxys_client_only) {
  static ws_server s;
  static raw P[6];
  memset(&s, 0, sizeof(s));
  ws_server_start(&s, "\"trusted_proxies\":[\"::1\",\"127.0.0.4/30\"]",
                  "\"limits\":{\"conns_per_ip\":2}");
  const char *proxy = "127.0.0.5", *other = "127.0.0.9";
  /* the client chose the first entries; the proxy added the last */
  cr_assert_eq(upgrade_via(&P[0], &s, proxy, "198.51.100.7"), 101);
  cr_assert_eq(upgrade_via(&P[1], &s, proxy, "10.1.1.1, 198.51.100.7"), 101);
  cr_assert_eq(upgrade_via(&P[2], &s, proxy, "10.2.2.2,198.51.100.7"), 429,
               "a third link of one forwarded client");
  raw_close(&P[2]);
  cr_assert_eq(upgrade_via(&P[2], &s, proxy, "198.51.100.7, 198.51.100.8"), 101,
               "another forwarded client");
  cr_assert_eq(upgrade_via(&P[3], &s, proxy, NULL), 101,
               "no header: the proxy itself, which holds no link");
  cr_assert_eq(upgrade_via(&P[4], &s, proxy, "2001:db8::1"), 101,
               "an IPv6 client: the proxy's fifth TCP connection");
  uint64_t bad = ws_metric(&s, HS("forwarded"));
  cr_assert_eq(upgrade_via(&P[5], &s, proxy, "198.51.100.9, not-an-address"),
               400);
  raw_close(&P[5]);
  cr_assert_eq(ws_metric(&s, HS("forwarded")), bad + 1);
  /* not trusted: the header is ignored, 127.0.0.9 is counted */
  cr_assert_eq(upgrade_via(&A, &s, other, "198.51.100.20"), 101);
  cr_assert_eq(upgrade_via(&B, &s, other, "198.51.100.21"), 101);
  cr_assert_eq(upgrade_via(&C, &s, other, "198.51.100.22"), 429,
               "an untrusted peer's X-Forwarded-For was believed");
  raw_close(&C);
  cr_assert_eq(upgrade_via(&C, &s, other, "not-an-address"), 429,
               "an untrusted peer's header is not even read");
  raw_close(&C);
  raw_close(&A);
  raw_close(&B);
  for (int i = 0; i < 5; i++) raw_close(&P[i]);
  ws_server_stop(&s);
}

/* --- static files: the cap ----------------------------------------------- */

/* GET `path` on the WebSocket port: the status; the answer's start in r. */
static int http_get(raw *r, const ws_server *s, const char *path) {
  char req[256];
  int n = snprintf(req, sizeof req,
                   "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Connection: close\r\n\r\n",
                   path);
  raw_connect_to(r, NULL, s->ws, 0);
  raw_write(r, req, (size_t)n);
  raw_fill(r, 64, 3000);
  int status = 0;
  if (r->len >= 12) sscanf((const char *)r->buf, "HTTP/1.1 %d", &status);
  return status;
}

/* Writes `bytes` bytes of 'x' to dir/name. */
static void write_file(const char *dir, const char *name, size_t bytes) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  static char block[4096];
  memset(block, 'x', sizeof block);
  for (size_t done = 0; done < bytes;) {
    size_t k = bytes - done < sizeof block ? bytes - done : sizeof block;
    cr_assert_eq(fwrite(block, 1, k, f), k);
    done += k;
  }
  cr_assert_eq(fclose(f), 0);
}

/* websocket.static_max_bytes: the loop thread sends static files, so one
 * request's cost is capped: a file of the cap is served, one byte more is
 * 403 "file too large", and the listener goes on. */
Test(server_ws_limits, a_static_file_over_static_max_bytes_is_403) {
  static ws_server s;
  memset(&s, 0, sizeof(s));
  e2e_dir_make(&s.a.d);
  char web[512], extra[700];
  snprintf(web, sizeof web, "%s/web", s.a.d.path);
  cr_assert_eq(mkdir(web, 0700), 0);
  write_file(web, "at.bin", 65536);
  write_file(web, "over.bin", 65537);
  snprintf(extra, sizeof extra,
           "\"static_dir\":\"%s\",\"static_max_bytes\":65536", web);
  ws_server_start(&s, extra, NULL);
  cr_assert_eq(http_get(&A, &s, "/over.bin"), 403);
  raw_fill(&A, sizeof A.buf, 1000);
  int said = 0;
  for (size_t i = 0; i + 14 <= A.len && !said; i++)
    said = memcmp(A.buf + i, "file too large", 14) == 0;
  cr_assert(said, "the 403 says why");
  raw_close(&A);
  cr_assert_eq(http_get(&A, &s, "/at.bin"), 200, "a file of the cap");
  raw_fill(&A, sizeof A.buf, 3000);
  cr_assert_geq(A.len, 65536, "the whole file came");
  raw_close(&A);
  ws_server_stop(&s);
}

/* Static files are read on libuv's thread pool: with every read of a
 * ".slow" file made 300 ms slow (tests/server/slow_read.c, LD_PRELOAD),
 * its answer takes the reads' time, whole, while the step timer keeps its
 * deadlines (read on the loop, each read would skip some 36 of them at
 * 120 steps/s); a client leaving mid-file and one waiting for a block at
 * shutdown leave a clean exit. */
Test(server_ws_limits, a_slow_disk_delays_its_file_not_the_step_timer) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  cr_skip_test("LD_PRELOAD of a plain library into a sanitized server");
#endif
  enum { SIZE = 200 << 10, BLOCKS = 4 }; /* 64 KiB blocks: 4 reads */
  static ws_server s;
  memset(&s, 0, sizeof(s));
  e2e_dir_make(&s.a.d);
  char web[512], extra[700];
  snprintf(web, sizeof web, "%s/web", s.a.d.path);
  cr_assert_eq(mkdir(web, 0700), 0);
  write_file(web, "big.slow", SIZE);
  snprintf(extra, sizeof extra, "\"static_dir\":\"%s\"", web);
  cr_assert_eq(setenv("LD_PRELOAD", SLOW_READ_SO, 1), 0);
  cr_assert_eq(setenv("GK_SLOW_READ_US", "300000", 1), 0);
  ws_server_start(&s, extra, NULL);
  unsetenv("LD_PRELOAD");
  unsetenv("GK_SLOW_READ_US");
  const char *skipped = "gk_tick_deadlines_skipped_total";
  uint64_t before = ws_metric(&s, skipped);
  uint64_t t0 = uv_hrtime() / 1000000u;
  cr_assert_eq(http_get(&A, &s, "/big.slow"), 200);
  raw_fill(&A, sizeof A.buf, 15000); /* to the end: Connection: close */
  uint64_t took = uv_hrtime() / 1000000u - t0;
  uint64_t after = ws_metric(&s, skipped);
  cr_assert_lt(after - before, 20,
               "%" PRIu64 " step deadlines skipped while the file was read",
               after - before);
  cr_assert(A.eof, "the answer did not end");
  size_t head = 0;
  for (size_t i = 0; i + 4 <= A.len && !head; i++)
    if (memcmp(A.buf + i, "\r\n\r\n", 4) == 0) head = i + 4;
  cr_assert_eq(A.len - head, (size_t)SIZE, "the whole file");
  raw_close(&A);
  cr_assert_geq(took, BLOCKS * 300 - 100,
                "the disk was not slow: %" PRIu64 " ms", took);
  /* a client that leaves mid-file (its read still on the pool), and one
   * waiting for a block when the server stops: a clean exit */
  cr_assert_eq(http_get(&A, &s, "/big.slow"), 200);
  raw_close(&A);
  static const char req[] = "GET /big.slow HTTP/1.1\r\nHost: x\r\n\r\n";
  raw_connect_to(&B, NULL, s.ws, 0);
  raw_write(&B, req, sizeof req - 1);
  e2e_sleep_ms(100);
  ws_server_stop(&s); /* exit 0 */
  raw_close(&B);
}
