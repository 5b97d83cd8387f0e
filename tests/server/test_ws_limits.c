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
