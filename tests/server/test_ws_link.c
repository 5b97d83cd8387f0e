/* test_ws_link.c: the WebSocket backend of the server's links
 * (gk_server_link_ws.c), in process.
 *
 * One room, two transports: the creator is a raw ENet client (as in
 * test_link.c), the second player a raw-socket WebSocket client (the
 * tests/net/ws_raw.c helpers, run on the server's own loop). The
 * WebSocket player JOINs by code and gets JOINED; admin /rooms names the
 * transports "enet" and "websocket", /metrics counts
 * gk_connections{transport="websocket"}; an upgrade with an Origin not in
 * websocket.origins is refused 403 and the room's ENet player stays
 * connected; START_MATCH from the creator reaches both as MATCH_START;
 * CONFIRMED sent unreliable to the WebSocket link is replaceable (a flood
 * never fills its queue) while reliable sends do fill it; the listening
 * record names ws_port. This fails if the backend's kind is wrong (the
 * transport names) or its routing is (JOINED and MATCH_START reach the
 * WebSocket client only through sv_link_up / _data and the backend's
 * send; the flood fails unless unreliable INPUT/CONFIRMED go replaceable
 * with their type). Last, a websocket.port in use stops start-up.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_get.h"
#include "gk_err.h"
#include "gk_net_transport.h"
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"
#include "ws_raw.h"

static ws_srv srv; /* only its loop and w.port: what ws_raw.c runs on */

/* --- admin GETs from a thread while the loop runs ------------------------- */

/* --- the ENet creator ----------------------------------------------------- */

typedef struct enet_client {
  gk_net_transport t;
  uint32_t server;
  int up, down, got, match_start;
  gk_wire_msg last;
} enet_client;

static void client_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                           const uint8_t *bytes, size_t len) {
  (void)t;
  (void)peer;
  enet_client *c = ctx;
  if (gk_wire_decode(bytes, len, &c->last) != 0) return;
  c->got++;
  if (c->last.type == GK_MSG_MATCH_START) c->match_start = 1;
}

static void client_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  (void)peer;
  ((enet_client *)ctx)->up = 1;
}

static void client_disconnect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  (void)peer;
  ((enet_client *)ctx)->down = 1;
}

static void enet_send(enet_client *e, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof(buf), &len), 0);
  cr_assert_eq(gk_net_transport_send(&e->t, e->server, buf, len, 1), 0);
}

/* --- the WebSocket player ------------------------------------------------- */

static const cJSON *player(const cJSON *room, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItem(room, "players"), i);
}

static void on_tick(uv_timer_t *t) {
  (void)t; /* wakes the loop while a thread waits on the server */
}

static gk_server *start_server(gk_server_config *cfg, gk_server_log *log) {
  gk_server_config_default(cfg);
  snprintf(cfg->host, sizeof cfg->host, "127.0.0.1");
  cfg->port = 0;
  cfg->replays_enabled = 0;
  cfg->shutdown_grace_ms = 0;
  cfg->admin.enabled = 1;
  snprintf(cfg->admin.host, sizeof cfg->admin.host, "127.0.0.1");
  snprintf(cfg->admin.listen, sizeof cfg->admin.listen, "127.0.0.1:0");
  cfg->admin.port = 0; /* what the parser makes of "127.0.0.1:0" */
  cfg->admin.loopback = 1;
  cfg->ws.enabled = 1;
  snprintf(cfg->ws.host, sizeof cfg->ws.host, "127.0.0.1");
  cfg->ws.port = 0;
  snprintf(cfg->ws.origins[0], sizeof cfg->ws.origins[0],
           "http://good.example");
  cfg->ws.norigins = 1;
  cfg->ws.ping_ms = 50;
  S = &srv;
  memset(&srv, 0, sizeof(srv));
  cr_assert_eq(uv_loop_init(&S->loop), 0);
  gk_server *s = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  cr_assert_eq(gk_server_start(&S->loop, cfg, log, 0, &s, err, sizeof err), 0,
               "%s", err);
  S->w.port = sv_ws_port(s);
  cr_assert_neq(S->w.port, 0, "websocket.port 0: an ephemeral port is bound");
  return s;
}

/* The creator over ENet: CREATE_ROOM, ROOM_CREATED; the code into code. */
static void enet_create(gk_server *s, enet_client *e, char *code) {
  memset(e, 0, sizeof(*e));
  gk_net_transport_options to = {.max_peers = 1};
  gk_net_transport_callbacks tc = {e, client_receive, client_connect,
                                   client_disconnect};
  cr_assert_eq(gk_net_transport_init(&e->t, &S->loop, &to, &tc), 0);
  cr_assert_eq(gk_net_transport_connect(&e->t, "127.0.0.1", gk_server_port(s),
                                        &e->server),
               0);
  cr_assert(ws_run_until(&e->up, 1, 5000), "the ENet client connects");
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "push-puzzle");
  enet_send(e, &m);
  cr_assert(ws_run_until(&e->got, 1, 5000), "an answer to CREATE_ROOM");
  cr_assert_eq(e->last.type, GK_MSG_ROOM_CREATED, "%s",
               e->last.type == GK_MSG_ERROR ? e->last.u.error.text : "");
  memcpy(code, e->last.u.room.code, GK_WIRE_CODE_LEN);
  code[GK_WIRE_CODE_LEN] = '\0';
}

static void check_admin(gk_server *s, const char *code) {
  char path[64];
  snprintf(path, sizeof(path), "/rooms/%s", code);
  char *body = admin_get(&S->loop, s, path);
  cJSON *room = cJSON_Parse(body);
  cr_assert_not_null(room, "%s", body);
  const cJSON *t0 = cJSON_GetObjectItem(player(room, 0), "transport");
  const cJSON *t1 = cJSON_GetObjectItem(player(room, 1), "transport");
  cr_assert(cJSON_IsString(t0) && cJSON_IsString(t1), "%s", body);
  cr_assert_str_eq(t0->valuestring, "enet");
  cr_assert_str_eq(t1->valuestring, "websocket");
  cJSON_Delete(room);
  free(body);
  body = admin_get(&S->loop, s, "/metrics");
  cr_assert_not_null(
      strstr(body, "gk_connections{transport=\"websocket\"} 1\n"), "%s", body);
  cr_assert_not_null(strstr(body, "gk_connections{transport=\"enet\"} 1\n"));
  cr_assert_not_null(
      strstr(body, "gk_connections_opened_total{transport=\"websocket\"} 1\n"),
      "%s", body);
  /* both players' messages went through socket calls of their transport */
  static const char *const calls[] = {"enet\",op=\"send", "enet\",op=\"read",
                                      "websocket\",op=\"send",
                                      "websocket\",op=\"read"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    char key[96];
    snprintf(key, sizeof key, "gk_socket_calls_total{transport=\"%s\"} ",
             calls[i]);
    const char *at = strstr(body, key);
    cr_assert_not_null(at, "no %s in %s", key, body);
    cr_assert_gt(strtoull(at + strlen(key), NULL, 10), 0, "%s 0", key);
  }
  free(body);
}

/* The WebSocket player's link, not read by its client meanwhile: CONFIRMED
 * sent unreliable must go replaceable (a newer one takes a queued one's
 * place: no send fails however many), and the same sent reliable must
 * fill the bounded queue (the proof that the first flood met a backlog):
 * the link refuses, and closes with 1008. */
static void check_replace(gk_server *s, gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  uint32_t id = v.conn[1];
  cr_assert_str_eq(sv_conn_kind(s, id), "websocket");
  static uint8_t msg[1000];
  memset(msg, 0x5a, sizeof(msg));
  msg[0] = GK_WIRE_VERSION;
  msg[1] = GK_MSG_CONFIRMED;
  for (int i = 0; i < 20000; i++)
    cr_assert_eq(sv_send_bytes(s, id, msg, sizeof(msg), 0), 0,
                 "unreliable CONFIRMED %d: it must replace, not fill", i);
  int refused = 0;
  for (int i = 0; i < 20000 && !refused; i++)
    refused = sv_send_bytes(s, id, msg, sizeof(msg), 1) != 0;
  cr_assert(refused, "reliable sends fill the queue (or the test proves "
                     "nothing)");
}

/* The "listening" record names the bound WebSocket port (ws_port). */
static void check_listening(FILE *logf, uint16_t port) {
  static char text[1 << 16];
  fflush(logf);
  rewind(logf);
  size_t n = fread(text, 1, sizeof(text) - 1, logf);
  text[n] = '\0';
  fseek(logf, 0, SEEK_END);
  const char *line = strstr(text, "\"listening\"");
  cr_assert_not_null(line, "%s", text);
  char want[32];
  snprintf(want, sizeof(want), "\"ws_port\":%u", (unsigned)port);
  const char *end = strchr(line, '\n');
  const char *at = strstr(line, want);
  cr_assert(at != NULL && (end == NULL || at < end), "%s", text);
}

Test(server_ws_link, an_enet_creator_and_a_websocket_player_share_a_room,
     .timeout = 60) {
  static gk_server_config cfg;
  FILE *logf = tmpfile();
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_INFO);
  gk_server *s = start_server(&cfg, &log);
  check_listening(logf, S->w.port);
  uv_timer_t tick;
  uv_timer_init(&S->loop, &tick);
  uv_timer_start(&tick, on_tick, 5, 5);

  static enet_client e;
  char code[GK_WIRE_CODE_LEN + 1];
  enet_create(s, &e, code);

  /* the WebSocket player joins by code */
  static raw w;
  raw_connect(&w, 0);
  cr_assert_eq(raw_handshake(&w, "/play", "websocket", "13", "gamekit.1",
                             "Origin: http://good.example\r\n"),
               101);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN);
  m.u.room.role = GK_WIRE_ROLE_PLAYER;
  ws_send_msg(&w, &m);
  gk_wire_msg got;
  cr_assert(ws_wait_msg(&w, GK_MSG_JOINED, &got, 5000),
            "JOINED over WebSocket");
  cr_assert_eq(got.u.joined.slot, 1);

  /* another Origin is refused; the room and its ENet player stay */
  static raw bad;
  raw_connect(&bad, 0);
  cr_assert_eq(raw_handshake(&bad, "/play", "websocket", "13", "gamekit.1",
                             "Origin: http://evil.example\r\n"),
               403);
  raw_close(&bad);
  ws_run_ms(200);
  cr_assert_eq(e.down, 0, "the ENet player is still connected");
  cr_assert_not_null(sv_room_find(s, code));
  check_admin(s, code);

  /* the creator starts: MATCH_START reaches both transports */
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  enet_send(&e, &m);
  cr_assert(ws_wait_msg(&w, GK_MSG_MATCH_START, &got, 5000),
            "MATCH_START over WebSocket");
  cr_assert(ws_run_until(&e.match_start, 1, 5000), "MATCH_START over ENet");
  cr_assert_eq(e.down, 0);
  check_replace(s, sv_room_find(s, code));

  raw_close(&w);
  gk_net_transport_close(&e.t, NULL);
  uv_close((uv_handle_t *)&tick, NULL);
  gk_server_shutdown(s);
  gk_server_shutdown(s); /* at once */
  for (int i = 0; i < 100000 && uv_run(&S->loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  cr_assert_eq(uv_loop_close(&S->loop), 0);
  fclose(logf);
}

/* websocket.port in use: start-up fails with a message naming it, and
 * what was opened (the ENet host, the timers) closes on the loop. */
Test(server_ws_link, a_websocket_port_in_use_stops_start_up, .timeout = 60) {
  static gk_server_config cfg, cfg2;
  FILE *logf = fopen("/dev/null", "w");
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_ERROR);
  gk_server *s = start_server(&cfg, &log);
  cfg2 = cfg;
  cfg2.admin.enabled = 0;
  cfg2.ws.port = sv_ws_port(s);
  gk_server *s2 = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  cr_assert_neq(gk_server_start(&S->loop, &cfg2, &log, 0, &s2, err, sizeof err),
                0);
  cr_assert_null(s2);
  cr_assert_not_null(strstr(err, "websocket: cannot listen"), "%s", err);
  gk_server_shutdown(s);
  gk_server_shutdown(s);
  for (int i = 0; i < 100000 && uv_run(&S->loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  cr_assert_eq(uv_loop_close(&S->loop), 0);
  fclose(logf);
}
