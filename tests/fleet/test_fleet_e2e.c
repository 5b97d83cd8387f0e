/* test_fleet_e2e.c: three real gk-server processes (nodes A, B, C) sharing
 * one room directory in a real redis-server that the test starts on a
 * unix socket. Each node has ENet and WebSocket listeners on ephemeral
 * ports (fleet.enet and fleet.ws_url say port 0: the node's own).
 *
 *  - A room made on A is joined through B over ENet and through C over
 *    WebSocket by gk-bot --join: each is redirected once, they play 3000
 *    steps with no desync, and A's replay verifies.
 *  - A rejoin, a spectator and a join at the wrong node get REDIRECT to
 *    the room's node; an unknown code is GK_ENOTFOUND as without a fleet;
 *    a REDIRECT sent by a client is a strike.
 *  - Redis stopped (SIGSTOP) then killed mid-match: the match plays on
 *    and its replay verifies; a cross-node join gets GK_EUNAVAILABLE;
 *    after a restart the code is redirected again within a few
 *    heartbeats.
 *  - A node SIGKILLed: its room leaves the directory within the TTL.
 *  - Bytes in Redis that do not parse: a clear error, logged, and the
 *    node answers the next request.
 * Every wait is bounded. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "e2e.h"
#include "e2e_raw.h"
#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_token.h"
#include "redis_rig.h"

#define HEARTBEAT_MS 200
#define TTL_MS 1000

typedef struct node {
  e2e_dir d;
  e2e_proc srv;
  uint16_t port;
  uint16_t admin; /* its admin listener's port */
  char url[64];   /* its WebSocket URL */
} node;

static redis_rig R;

static const char *more_config = ""; /* more top-level members, ",..." */

static void node_start(node *n, const char *id) {
  e2e_dir_make(&n->d);
  char extra[2048];
  snprintf(extra, sizeof extra,
           "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
           "\"port\":0,\"static_dir\":\"\"},"
           "\"admin\":{\"enabled\":true,\"listen\":\"127.0.0.1:0\"},"
           "\"fleet\":{\"enabled\":true,\"redis\":\"unix:%s\",\"node\":"
           "\"%s\",\"enet\":\"127.0.0.1:0\",\"ws_url\":"
           "\"ws://127.0.0.1:0/play\",\"heartbeat_ms\":%d,\"ttl_ms\":%d}%s",
           R.sock, id, HEARTBEAT_MS, TTL_MS, more_config);
  e2e_start_server(&n->srv, &n->d, extra, &n->port);
  double ws = e2e_stat(&n->srv, "listening", "ws_port");
  snprintf(n->url, sizeof n->url, "ws://127.0.0.1:%u/play", (unsigned)ws);
  n->admin = (uint16_t)e2e_stat(&n->srv, "admin_listening", "port");
  cr_assert(e2e_wait_events(&n->srv, "fleet_up", 1, 5000),
            "node %s never reached the directory", id);
}

static void fleet_up(node *nodes, int n) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0, "redis-server did not start");
  e2e_keep_note("dir", R.dir);
  cr_assert_eq(enet_initialize(), 0);
  const char *ids[] = {"a", "b", "c"};
  for (int i = 0; i < n; i++) node_start(&nodes[i], ids[i]);
}

/* Stops the nodes still running (each must stop cleanly) and Redis. */
static void fleet_stop(node *nodes, int n) {
  for (int i = 0; i < n; i++) {
    if (nodes[i].srv.pid > 0 && nodes[i].srv.status < 0)
      e2e_stop_server(&nodes[i].srv);
  }
  enet_deinitialize();
  redis_rig_stop(&R);
}

/* Waits (5 s at most) until node `id`'s heartbeat has told Redis it
 * holds `rooms` rooms (gk:node:<id> is "gk1 enet ws_url rooms max
 * draining"): quick play places new rooms by those counts. */
static void wait_node_rooms(const char *id, unsigned rooms) {
  char v[256] = "";
  for (int i = 0; i < 100; i++) {
    if (redis_rig_cmd(&R, v, sizeof v, "GET gk:node:%s", id) == 0) {
      const char *p = v; /* past "gk1", enet and ws_url */
      for (int w = 0; w < 3 && p; w++)
        if ((p = strchr(p, ' ')) != NULL) p++;
      char *end = NULL;
      if (p && strtoul(p, &end, 10) == rooms && end != p && *end == ' ') return;
    }
    e2e_sleep_ms(50);
  }
  cr_assert_fail("node %s's heartbeat never said %u rooms: \"%s\"", id, rooms,
                 v);
}

static void fleet_remove(node *nodes, int n) {
  for (int i = 0; i < n; i++) e2e_dir_remove(&nodes[i].d);
}

/* GET http://127.0.0.1:<admin port><path> into buf (64 KiB); the status. */
static long http_get(const node *n, const char *path, char *buf) {
  return rig_http_get((unsigned)n->admin, path, buf, 65536, 5000);
}

static char http_buf[65536];

/* A raw client makes a survivors room of `seats` on a node, with
 * `config` as its options. */
static void create_with(raw *c, uint16_t port, int seats, const char *config,
                        char *code) {
  raw_connect(c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = (uint8_t)seats;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  snprintf(m.u.create_room.config, sizeof m.u.create_room.config, "%s", config);
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_ROOM_CREATED, 3000);
  memcpy(code, c->last[GK_MSG_ROOM_CREATED].u.room.code, GK_WIRE_CODE_LEN);
  code[GK_WIRE_CODE_LEN] = '\0';
}

static void create(raw *c, uint16_t port, int seats, char *code) {
  create_with(c, port, seats, "", code);
}

/* One request (JOIN_ROOM, REJOIN_ROOM or SPECTATE) for `code` from a
 * fresh raw client at `port`; waits for REDIRECT or ERROR into *out.
 * Returns the type that came (0: none within 3 s). */
static const uint8_t *ask_token; /* JOIN_ROOM's token, NULL: none */

static int ask(uint16_t port, int type, const char *code, gk_wire_msg *out) {
  raw c;
  raw_connect(&c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = (gk_wire_type)type;
  if (type == GK_MSG_REJOIN_ROOM)
    memcpy(m.u.rejoin.code, code, GK_WIRE_CODE_LEN + 1);
  else
    memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN + 1);
  if (type == GK_MSG_JOIN_ROOM && ask_token) {
    m.u.room.token_len = GK_WIRE_TOKEN_BYTES;
    memcpy(m.u.room.token, ask_token, GK_WIRE_TOKEN_BYTES);
  }
  raw_send_msg(&c, &m);
  int got = 0;
  for (int i = 0; i < 60 && !got && ask_token; i++) { /* JOINED counts */
    raw_pump(&c, 50);
    if (c.seen[GK_MSG_JOINED])
      got = GK_MSG_JOINED, *out = c.last[GK_MSG_JOINED];
    else if (c.seen[GK_MSG_REDIRECT] || c.seen[GK_MSG_ERROR])
      break;
  }
  for (int i = 0; i < 60 && !got; i++) {
    raw_pump(&c, 50);
    if (c.seen[GK_MSG_REDIRECT])
      got = GK_MSG_REDIRECT, *out = c.last[GK_MSG_REDIRECT];
    else if (c.seen[GK_MSG_ERROR])
      got = GK_MSG_ERROR, *out = c.last[GK_MSG_ERROR];
  }
  /* after a REDIRECT the node closes the connection */
  for (int i = 0; i < 40 && got == GK_MSG_REDIRECT && !c.disconnected; i++)
    raw_pump(&c, 50);
  if (got == GK_MSG_REDIRECT)
    cr_assert(c.disconnected, "the node kept the connection after REDIRECT");
  raw_close(&c);
  return got;
}

static void expect_redirect(uint16_t at, int type, const char *code,
                            const node *to) {
  gk_wire_msg m;
  int got = ask(at, type, code, &m);
  cr_assert_eq(got, GK_MSG_REDIRECT, "%s for %s: %s %s",
               gk_wire_type_name(type), code, gk_wire_type_name(got),
               got == GK_MSG_ERROR ? gk_err_name(m.u.error.code) : "");
  char enet[64];
  snprintf(enet, sizeof enet, "127.0.0.1:%u", (unsigned)to->port);
  cr_assert_str_eq(m.u.redirect.code, code);
  cr_assert_str_eq(m.u.redirect.enet, enet);
  cr_assert_str_eq(m.u.redirect.ws_url, to->url);
}

static void expect_error(uint16_t at, const char *code, int want) {
  gk_wire_msg m;
  int got = ask(at, GK_MSG_JOIN_ROOM, code, &m);
  cr_assert_eq(got, GK_MSG_ERROR, "join %s: %s", code, gk_wire_type_name(got));
  cr_assert_eq(m.u.error.code, want, "join %s: %s, want %s", code,
               gk_err_name(m.u.error.code), gk_err_name(want));
}

/* gk-bot --join code --players 1 through a node, ENet or WebSocket. */
static void join_bot(e2e_proc *bot, const e2e_dir *d, const char *tag,
                     const node *via, const char *code, int ws) {
  char server[32];
  snprintf(server, sizeof server, "127.0.0.1:%u", (unsigned)via->port);
  char *argv[] = {(char *)GK_BOT_BIN, "--server",  server,
                  "--genre",          "survivors", "--join",
                  (char *)code,       "--players", "1",
                  "--timeout",        "120",       ws ? "--ws" : NULL,
                  (char *)via->url,   NULL};
  e2e_spawn(bot, d, tag, argv);
}

static double room_number(const e2e_proc *bot, const char *key) {
  cJSON *sum = e2e_read_json(bot->out);
  cr_assert_not_null(sum, "no summary from %s", bot->out);
  const cJSON *r0 =
      cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "room_results"), 0);
  const cJSON *v = cJSON_GetObjectItem(r0, key);
  cr_assert(cJSON_IsNumber(v), "no %s in %s", key, bot->out);
  double x = v->valuedouble;
  cJSON_Delete(sum);
  return x;
}

Test(fleet_e2e, a_room_on_a_is_joined_through_b_and_c_and_plays_3000_steps,
     .timeout = 240) {
  node n[3];
  fleet_up(n, 3);
  raw c;
  char code[GK_WIRE_CODE_LEN + 1];
  create(&c, n[0].port, 3, code);
  /* a short code, reserved in the fleet: people type the 4 characters */
  char shown[GK_WIRE_CODE_LEN + 1];
  cr_assert_eq(gk_wire_code_shown(code, shown), 0);
  cr_assert_eq(strlen(shown), 4, "code %s", code);
  e2e_proc enet_bot, ws_bot;
  join_bot(&enet_bot, &n[1].d, "bot_b", &n[1], shown, 0);
  join_bot(&ws_bot, &n[2].d, "bot_c", &n[2], shown, 1);
  for (int i = 0; i < 200 && e2e_count_events(&n[0].srv, "player_joined") < 2;
       i++)
    raw_pump(&c, 50);
  cr_assert_eq(e2e_count_events(&n[0].srv, "player_joined"), 2,
               "the redirected players did not reach A");
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&c, &m);
  raw_expect(&c, GK_MSG_MATCH_START, 3000);
  memset(&m, 0, sizeof m); /* the creator holds the room, does not play */
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){0, GK_WIRE_STEP_ASAP};
  raw_send_msg(&c, &m);
  raw_pump(&c, 3000 * 1000 / 120 + 1500); /* 3000 steps at 120 Hz */
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  raw_send_msg(&c, &m);
  for (int i = 0; i < 200 && e2e_count_events(&n[0].srv, "match_end") < 1; i++)
    raw_pump(&c, 50);
  char codes[2][17];
  uint64_t fe[1], fw[1], replayed[2];
  cr_assert_eq(e2e_check_bot(&enet_bot, 1, codes, fe), 1);
  cr_assert_str_eq(codes[0], code);
  cr_assert_eq(e2e_check_bot(&ws_bot, 1, codes, fw), 1);
  cr_assert_eq(fe[0], fw[0], "the two players end on other hashes");
  double steps = room_number(&enet_bot, "steps");
  cr_assert_geq(steps, 3000, "only %.0f steps", steps);
  cr_assert_eq(room_number(&enet_bot, "redirects"), 1);
  cr_assert_eq(room_number(&ws_bot, "redirects"), 1);
  cr_assert_eq(e2e_count_events(&n[1].srv, "redirect"), 1);
  cr_assert_eq(e2e_count_events(&n[2].srv, "redirect"), 1);
  raw_close(&c);
  fleet_stop(n, 3);
  cr_assert_eq(e2e_count_events(&n[0].srv, "desync"), 0);
  cr_assert_eq(e2e_verify_replays(n[0].d.replays, codes, replayed, 2), 1);
  cr_assert_eq(replayed[0], fe[0], "the replay ends on another hash");
  cr_log_info("through B (ENet) and C (WebSocket): %.0f steps, 0 desyncs",
              steps);
  fleet_remove(n, 3);
}

Test(fleet_e2e, a_rejoin_a_spectator_and_a_join_at_the_wrong_node_redirect,
     .timeout = 120) {
  node n[2];
  fleet_up(n, 2);
  raw c;
  char code[GK_WIRE_CODE_LEN + 1];
  create(&c, n[0].port, 2, code);
  raw_pump(&c, 100);
  expect_redirect(n[1].port, GK_MSG_JOIN_ROOM, code, &n[0]);
  expect_redirect(n[1].port, GK_MSG_REJOIN_ROOM, code, &n[0]);
  expect_redirect(n[1].port, GK_MSG_SPECTATE, code, &n[0]);
  expect_error(n[1].port, "AAAAAAAAAAAAAAAA", GK_ENOTFOUND);
  /* a client that sends REDIRECT is struck, as for any server type */
  raw x;
  raw_connect(&x, n[1].port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_REDIRECT;
  memcpy(m.u.redirect.code, code, sizeof m.u.redirect.code);
  snprintf(m.u.redirect.enet, sizeof m.u.redirect.enet, "evil:1");
  raw_send_msg(&x, &m);
  raw_pump(&x, 300);
  raw_close(&x);
  raw_close(&c);
  fleet_stop(n, 2);
  /* the unknown code and the REDIRECT */
  cr_assert_geq(e2e_stat(&n[1].srv, "stopped", "strikes"), 2);
  cr_assert_eq(e2e_count_events(&n[1].srv, "redirect"), 3);
  fleet_remove(n, 2);
}

static void quick_send(raw *c, const char *code);
static void pump_all(raw *c, int n, int type, int ms);
static int quick_seat(raw *c, const node *n, int count, int at);

Test(fleet_e2e, redis_stopped_then_killed_mid_match_loses_nothing,
     .timeout = 180) {
  node n[2];
  fleet_up(n, 2);
  e2e_proc bot;
  e2e_start_bot(&bot, &n[0].d, "bot", n[0].port, "1", "2", "1500");
  cr_assert(e2e_wait_events(&n[0].srv, "match_start", 1, 10000));
  char codes[1][17];
  cr_assert_eq(e2e_event_rooms(&n[0].srv, "room_created", 0, codes, 1), 1);
  e2e_sleep_ms(300);
  expect_redirect(n[1].port, GK_MSG_JOIN_ROOM, codes[0], &n[0]);
  raw lobby, away;
  wait_node_rooms("a", 1); /* the match: a new lobby goes to b */
  int home = quick_seat(&lobby, n, 2, 0);
  cr_assert_eq(home, 1, "the lobby is not on the least loaded node");
  redis_rig_signal(&R, SIGSTOP);
  e2e_sleep_ms(3 * HEARTBEAT_MS);
  expect_error(n[1].port, codes[0], GK_EUNAVAILABLE);
  redis_rig_signal(&R, SIGKILL);
  e2e_sleep_ms(500);
  expect_error(n[1].port, codes[0], GK_EUNAVAILABLE);
  /* still healthy for local play, and says the directory is away */
  cr_assert_eq(http_get(&n[1], "/healthz", http_buf), 200);
  cr_assert(strstr(http_buf, "room directory unreachable"), "%s", http_buf);
  cr_assert_eq(http_get(&n[1], "/metrics", http_buf), 200);
  cr_assert(strstr(http_buf, "gk_fleet_up 0\n"), "no gk_fleet_up 0");
  cr_assert(strstr(http_buf, "gk_fleet_redirects_failed_total 2\n"),
            "cross-node joins while Redis was away not counted");
  raw_connect(&away, n[1].port); /* quick play goes on, node b's own */
  quick_send(&away, GK_WIRE_CODE_ANY);
  pump_all(&away, 1, GK_MSG_QUICK_JOINED, 3000);
  cr_assert(away.seen[GK_MSG_QUICK_JOINED] && !away.seen[GK_MSG_REDIRECT],
            "quick play without the directory is not the node's own");
  raw_close(&away);
  cr_assert_eq(redis_rig_restart(&R), 0);
  /* back within the reconnect backoff (8 heartbeats at most) plus one */
  int back = 0;
  for (int i = 0; i < 30 && !back; i++) {
    gk_wire_msg m;
    back = ask(n[1].port, GK_MSG_JOIN_ROOM, codes[0], &m) == GK_MSG_REDIRECT;
    if (!back) e2e_sleep_ms(100);
  }
  cr_assert(back, "the code did not come back after Redis restarted");
  /* the quick-play lobby is back in the directory: a quick play at the
   * other node is sent to it */
  raw_connect(&away, n[1 - home].port);
  quick_send(&away, GK_WIRE_CODE_ANY);
  pump_all(&away, 1, GK_MSG_QUICK_JOINED, 3000);
  cr_assert(away.seen[GK_MSG_REDIRECT], "the lobby was not found again");
  cr_assert_str_eq(away.last[GK_MSG_REDIRECT].u.redirect.code,
                   lobby.last[GK_MSG_QUICK_JOINED].u.quick_joined.code);
  raw_close(&away);
  raw_close(&lobby);
  uint64_t hashes[1];
  cr_assert(e2e_wait(&bot, 60000), "gk-bot did not finish");
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  fleet_stop(n, 2);
  uint64_t replayed[1];
  cr_assert_eq(e2e_verify_replays(n[0].d.replays, codes, replayed, 1), 1);
  cr_assert_eq(replayed[0], hashes[0]);
  cr_assert_geq(e2e_count_events(&n[0].srv, "fleet_up"), 2);
  fleet_remove(n, 2);
}

Test(fleet_e2e, a_killed_node_leaves_the_directory_within_the_ttl,
     .timeout = 120) {
  node n[2];
  fleet_up(n, 2);
  raw c;
  char code[GK_WIRE_CODE_LEN + 1];
  create(&c, n[0].port, 2, code);
  raw_pump(&c, 100);
  expect_redirect(n[1].port, GK_MSG_JOIN_ROOM, code, &n[0]);
  /* a quick-play lobby on the node to be killed: b holds more rooms, so
   * the directory puts a new one on a, the least loaded */
  raw busy[2], lobby, after;
  char more[GK_WIRE_CODE_LEN + 1];
  for (int i = 0; i < 2; i++) create(&busy[i], n[1].port, 2, more);
  wait_node_rooms("b", 2);
  wait_node_rooms("a", 1);
  cr_assert_eq(quick_seat(&lobby, n, 2, 1), 0, "the lobby is not on a");
  e2e_kill(&n[0].srv);
  raw_close(&c);
  raw_close(&lobby);
  e2e_sleep_ms(TTL_MS + 2 * HEARTBEAT_MS);
  expect_error(n[1].port, code, GK_ENOTFOUND);
  /* quick play no longer sends anyone to the killed node */
  cr_assert_eq(quick_seat(&after, n, 2, 1), 1, "sent to the killed node");
  raw_close(&after);
  for (int i = 0; i < 2; i++) raw_close(&busy[i]);
  fleet_stop(n, 2);
  fleet_remove(n, 2);
}

Test(fleet_e2e, bytes_in_redis_that_do_not_parse_are_a_clear_error,
     .timeout = 120) {
  node n[1];
  fleet_up(n, 1);
  cr_assert_eq(
      redis_rig_cmd(&R, NULL, 0, "SET gk:room:ZZZZZZZZZZZZZZZZ %s", "\x01junk"),
      0);
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "HSET gk:room:YYYYYYYYYYYYYYYY a b"),
               0);
  expect_error(n[0].port, "ZZZZZZZZZZZZZZZZ", GK_EPARSE);
  expect_error(n[0].port, "YYYYYYYYYYYYYYYY", GK_EPROTO);
  expect_error(n[0].port, "XXXXXXXXXXXXXXXX", GK_ENOTFOUND); /* still fine */
  cJSON *e = e2e_last_event(&n[0].srv, "fleet_error");
  cr_assert_not_null(e, "no fleet_error line");
  const char *text = cJSON_GetObjectItem(e, "text")->valuestring;
  cr_assert(strstr(text, "YYYYYYYYYYYYYYYY") && strstr(text, "not a string"),
            "%s", text);
  cJSON_Delete(e);
  cr_assert_eq(e2e_count_events(&n[0].srv, "fleet_error"), 2);
  cr_assert_eq(http_get(&n[0], "/metrics", http_buf), 200);
  cr_assert(strstr(http_buf, "gk_fleet_bad_replies_total 2\n"),
            "bad replies not counted");
  cr_assert(strstr(http_buf, "gk_fleet_lookups_missed_total 1\n"),
            "the missing code not counted");
  cr_assert(strstr(http_buf, "gk_fleet_up 1\n"), "no gk_fleet_up 1");
  cr_assert_eq(http_get(&n[0], "/healthz", http_buf), 200);
  cr_assert_str_eq(http_buf, "ok\n");
  fleet_stop(n, 1);
  fleet_remove(n, 1);
}

Test(fleet_e2e, in_token_mode_the_rooms_node_checks_the_token, .timeout = 120) {
  uint8_t key[GK_TOKEN_KEY_BYTES];
  for (int i = 0; i < GK_TOKEN_KEY_BYTES; i++) key[i] = (uint8_t)(i * 7 + 3);
  char key_path[300];
  snprintf(key_path, sizeof key_path, "/tmp/gk-fleet-key-%d", (int)getpid());
  FILE *kf = fopen(key_path, "wb");
  cr_assert_not_null(kf);
  fwrite(key, 1, sizeof key, kf);
  fclose(kf);
  chmod(key_path, 0600);
  char more[400];
  snprintf(more, sizeof more,
           ",\"auth\":{\"mode\":\"token\",\"key_file\":\"%s\"}", key_path);
  more_config = more;
  node n[2];
  fleet_up(n, 2);
  more_config = "";
  /* the creator at A, with a create token */
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_CREATE;
  g.max_players = 2;
  g.slot = GK_TOKEN_SLOT_ANY;
  snprintf(g.genre, sizeof g.genre, "survivors");
  uint8_t tok[GK_TOKEN_BYTES];
  cr_assert_eq(gk_token_mint(&g, 1, (uint64_t)time(NULL), 600, key, tok), 0);
  raw c;
  raw_connect(&c, n[0].port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  m.u.create_room.token_len = GK_WIRE_TOKEN_BYTES;
  memcpy(m.u.create_room.token, tok, GK_TOKEN_BYTES);
  raw_send_msg(&c, &m);
  raw_expect(&c, GK_MSG_ROOM_CREATED, 3000);
  char code[GK_WIRE_CODE_LEN + 1];
  memcpy(code, c.last[GK_MSG_ROOM_CREATED].u.room.code, sizeof code);
  raw_pump(&c, 100);
  /* a forged token: B redirects without opening it, A refuses it */
  uint8_t forged[GK_TOKEN_BYTES];
  memset(forged, 0x5a, sizeof forged);
  ask_token = forged;
  expect_redirect(n[1].port, GK_MSG_JOIN_ROOM, code, &n[0]);
  gk_wire_msg r;
  cr_assert_eq(ask(n[0].port, GK_MSG_JOIN_ROOM, code, &r), GK_MSG_ERROR);
  cr_assert_neq(r.u.error.code, GK_ENOTFOUND);
  /* a join token for the room: redirected by B, admitted by A */
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_JOIN;
  g.role = GK_TOKEN_PLAYER;
  g.slot = GK_TOKEN_SLOT_ANY;
  memcpy(g.code, code, sizeof g.code);
  cr_assert_eq(gk_token_mint(&g, 2, (uint64_t)time(NULL), 600, key, tok), 0);
  ask_token = tok;
  expect_redirect(n[1].port, GK_MSG_JOIN_ROOM, code, &n[0]);
  cr_assert_eq(ask(n[0].port, GK_MSG_JOIN_ROOM, code, &r), GK_MSG_JOINED,
               "the token was refused at the room's node");
  ask_token = NULL;
  raw_close(&c);
  raw q; /* quick play does not know its room: no token can name it */
  raw_connect(&q, n[1].port);
  quick_send(&q, GK_WIRE_CODE_ANY);
  pump_all(&q, 1, GK_MSG_QUICK_JOINED, 3000);
  cr_assert(q.seen[GK_MSG_ERROR] && !q.seen[GK_MSG_QUICK_JOINED]);
  cr_assert_eq(q.last[GK_MSG_ERROR].u.error.code, GK_EPERM);
  raw_close(&q);
  fleet_stop(n, 2);
  cr_assert_eq(e2e_stat(&n[1].srv, "stopped", "auth_admitted"), 0,
               "the redirecting node opened a token");
  cr_assert_geq(e2e_stat(&n[0].srv, "stopped", "auth_admitted"), 2);
  unlink(key_path);
  fleet_remove(n, 2);
}

Test(fleet_e2e, unknown_codes_are_limited_per_address_and_counted,
     .timeout = 120) {
  more_config = ",\"limits\":{\"misses_per_ip_per_min\":3}";
  node n[2];
  fleet_up(n, 2);
  more_config = "";
  raw c;
  char code[GK_WIRE_CODE_LEN + 1];
  create(&c, n[0].port, 2, code);
  raw_pump(&c, 100);
  const char *guesses[] = {"ABCD222222222222", "ABCE222222222222",
                           "ABCF222222222222"};
  for (int i = 0; i < 3; i++) expect_error(n[1].port, guesses[i], GK_ENOTFOUND);
  /* the address is done guessing for the minute, even for a real code */
  expect_error(n[1].port, "ABCG222222222222", GK_ELIMIT);
  expect_error(n[1].port, code, GK_ELIMIT);
  raw_close(&c);
  fleet_stop(n, 2);
  cr_assert_eq(e2e_stat(&n[1].srv, "stopped", "code_misses"), 3);
  cr_assert_eq(e2e_stat(&n[1].srv, "stopped", "limit_misses"), 2);
  fleet_remove(n, 2);
}

/* Node n's /rooms/public entry for `code` (a copy the caller deletes), or
 * NULL; the list read into http_buf. */
static cJSON *public_entry(const node *n, const char *code) {
  cr_assert_eq(http_get(n, "/rooms/public", http_buf), 200);
  cJSON *j = cJSON_Parse(http_buf);
  cr_assert_not_null(j, "/rooms/public is not JSON: %s", http_buf);
  const cJSON *e, *found = NULL;
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "rooms")) {
    const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(e, "code"));
    if (k && strcmp(k, code) == 0) found = e;
  }
  cJSON *out = found ? cJSON_Duplicate(found, 1) : NULL;
  cJSON_Delete(j);
  return out;
}

static const char *str_of(const cJSON *e, const char *key) {
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(e, key));
  return v ? v : "";
}

Test(fleet_e2e, the_public_list_has_listed_rooms_of_every_node_and_no_private,
     .timeout = 120) {
  node n[2];
  fleet_up(n, 2);
  raw pub, priv;
  char code[GK_WIRE_CODE_LEN + 1], pcode[GK_WIRE_CODE_LEN + 1];
  create_with(&pub, n[0].port, 4, "{\"room\":{\"listed\":true}}", code);
  create(&priv, n[0].port, 4, pcode);
  cJSON *e = NULL;
  for (int i = 0; i < 20 && !e; i++) {
    raw_pump(&pub, HEARTBEAT_MS / 2);
    e = public_entry(&n[1], code);
  }
  cr_assert_not_null(e, "node b never lists node a's public room");
  cr_assert_str_eq(str_of(e, "genre"), "survivors");
  cr_assert_str_eq(str_of(e, "state"), "lobby");
  cr_assert_str_eq(str_of(e, "node"), "a");
  cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "seats_taken")), 1);
  cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "seats_free")), 3);
  cJSON_Delete(e);
  for (int i = 0; i < 2; i++) {
    e = public_entry(&n[i], pcode);
    cr_assert_null(e, "a private room is in node %d's list", i);
  }
  /* bytes that do not parse: skipped, said once, counted (the keys
   * first: a node named before its key is there is taken out) */
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "HSET gk:pub:zz ABCD %s",
                             "gk1 survivors 01 3 lobby"),
               0);
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "SET gk:pub:yy junk"), 0);
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "SADD gk:pubnodes zz yy"), 0);
  cr_assert(e2e_wait_events(&n[1].srv, "fleet_error", 1, 3000),
            "bad public entries are not reported");
  cJSON *l = e2e_last_event(&n[1].srv, "fleet_error");
  const char *text = str_of(l, "text");
  cr_assert(strstr(text, "public list") && strstr(text, "2 entries"), "%s",
            text);
  cJSON_Delete(l);
  cr_assert_eq(http_get(&n[1], "/metrics", http_buf), 200);
  cr_assert(strstr(http_buf, "gk_fleet_public_bad_total "), "not counted");
  cr_assert_null(strstr(http_buf, "gk_fleet_public_bad_total 0\n"),
                 "bad public entries not counted");
  e = public_entry(&n[1], code);
  cr_assert_not_null(e, "bad entries hide the good ones");
  cJSON_Delete(e);
  /* node a killed: its rooms leave the list within the TTL */
  e2e_kill(&n[0].srv);
  raw_close(&pub);
  raw_close(&priv);
  e2e_sleep_ms(TTL_MS); /* then b's next refreshes: 5 s at most */
  for (int i = 0; i < 100 && (e = public_entry(&n[1], code)) != NULL; i++) {
    cJSON_Delete(e);
    e2e_sleep_ms(50);
  }
  cr_assert_null(e, "a killed node's room stays in the list");
  fleet_stop(n, 2);
  fleet_remove(n, 2);
}

/* --- quick play ----------------------------------------------------------- */

#define QP_PLAYERS 12
#define QP_SEATS 4

static void quick_send(raw *c, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_QUICK_PLAY;
  snprintf(m.u.quick.code, sizeof m.u.quick.code, "%s", code);
  m.u.quick.room.max_players = QP_SEATS;
  snprintf(m.u.quick.room.genre, sizeof m.u.quick.room.genre, "survivors");
  raw_send_msg(c, &m);
}

/* Pumps every client until each has seen `type` (or an ERROR, or a
 * REDIRECT when `type` is QUICK_JOINED), within ms. */
static void pump_all(raw *c, int n, int type, int ms) {
  for (int waited = 0; waited < ms; waited += 5 * n) {
    int done = 1;
    for (int i = 0; i < n; i++) {
      raw_pump(&c[i], 0);
      done &= c[i].seen[type] || c[i].seen[GK_MSG_ERROR] ||
              (type == GK_MSG_QUICK_JOINED && c[i].seen[GK_MSG_REDIRECT]);
    }
    if (done) return;
  }
}

/* The node whose ENet port a REDIRECT names. */
static const node *node_at(const node *n, int count, const char *enet) {
  for (int i = 0; i < count; i++) {
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%u", (unsigned)n[i].port);
    if (strcmp(want, enet) == 0) return &n[i];
  }
  cr_assert_fail("a REDIRECT to no node: %s", enet);
  return NULL;
}

/* A quick play from a raw client at node `at`, following one REDIRECT:
 * the index of the node it is seated at. */
static int quick_seat(raw *c, const node *n, int count, int at) {
  raw_connect(c, n[at].port);
  quick_send(c, GK_WIRE_CODE_ANY);
  pump_all(c, 1, GK_MSG_QUICK_JOINED, 3000);
  if (c->seen[GK_MSG_REDIRECT]) {
    gk_wire_redirect to = c->last[GK_MSG_REDIRECT].u.redirect;
    raw_close(c);
    const node *there = node_at(n, count, to.enet);
    at = (int)(there - n);
    raw_connect(c, there->port);
    quick_send(c, to.code);
    pump_all(c, 1, GK_MSG_QUICK_JOINED, 3000);
  }
  cr_assert(c->seen[GK_MSG_QUICK_JOINED], "quick play at %d: %s", at,
            c->seen[GK_MSG_ERROR]
                ? gk_err_name(c->last[GK_MSG_ERROR].u.error.code)
                : "no answer");
  return at;
}

/* One race: 12 quick plays at once, 4 at each node; the redirected ones
 * follow. Every player ends in a room that started with 4. Returns how
 * many were redirected. */
static int quick_race(const node *n, int rep) {
  raw c[QP_PLAYERS];
  for (int i = 0; i < QP_PLAYERS; i++) raw_connect(&c[i], n[i % 3].port);
  for (int i = 0; i < QP_PLAYERS; i++) quick_send(&c[i], GK_WIRE_CODE_ANY);
  pump_all(c, QP_PLAYERS, GK_MSG_QUICK_JOINED, 5000);
  int redirected = 0;
  for (int i = 0; i < QP_PLAYERS; i++) {
    cr_assert_eq(c[i].seen[GK_MSG_ERROR], 0, "race %d, player %d: ERROR %s",
                 rep, i, gk_err_name(c[i].last[GK_MSG_ERROR].u.error.code));
    if (!c[i].seen[GK_MSG_REDIRECT]) continue;
    gk_wire_redirect to = c[i].last[GK_MSG_REDIRECT].u.redirect;
    raw_close(&c[i]);
    raw_connect(&c[i], node_at(n, 3, to.enet)->port);
    quick_send(&c[i], to.code);
    redirected++;
  }
  pump_all(c, QP_PLAYERS, GK_MSG_MATCH_START, 5000);
  char codes[QP_PLAYERS][GK_WIRE_CODE_LEN + 1];
  int rooms = 0, per[QP_PLAYERS] = {0}, slots[QP_PLAYERS] = {0};
  for (int i = 0; i < QP_PLAYERS; i++) {
    cr_assert(c[i].seen[GK_MSG_QUICK_JOINED] && !c[i].seen[GK_MSG_ERROR],
              "race %d, player %d: not seated (%s)", rep, i,
              c[i].seen[GK_MSG_ERROR]
                  ? gk_err_name(c[i].last[GK_MSG_ERROR].u.error.code)
                  : "no answer");
    cr_assert(c[i].seen[GK_MSG_MATCH_START],
              "race %d, player %d: its room never started", rep, i);
    const gk_wire_quick_joined *j =
        &c[i].last[GK_MSG_QUICK_JOINED].u.quick_joined;
    int k = 0;
    while (k < rooms && strcmp(codes[k], j->code) != 0) k++;
    if (k == rooms) memcpy(codes[rooms++], j->code, GK_WIRE_CODE_LEN + 1);
    per[k]++;
    cr_assert_eq(slots[k] & (1 << j->slot), 0, "race %d: slot %u twice", rep,
                 j->slot);
    slots[k] |= 1 << j->slot;
  }
  cr_assert_eq(rooms, QP_PLAYERS / QP_SEATS, "race %d: %d rooms", rep, rooms);
  for (int k = 0; k < rooms; k++)
    cr_assert_eq(per[k], QP_SEATS, "race %d: room %s has %d", rep, codes[k],
                 per[k]);
  for (int i = 0; i < QP_PLAYERS; i++) raw_close(&c[i]);
  return redirected;
}

/* One player waits at node a; three more ask at b, c and b: each is sent
 * to a's lobby, which then starts. */
static void quick_follow(const node *n) {
  raw c[4];
  const int at[4] = {0, 1, 2, 1};
  for (int i = 0; i < 4; i++) {
    raw_connect(&c[i], n[at[i]].port);
    quick_send(&c[i], GK_WIRE_CODE_ANY);
    pump_all(&c[i], 1, GK_MSG_QUICK_JOINED, 3000);
    if (i == 0) {
      cr_assert(c[0].seen[GK_MSG_QUICK_JOINED], "the first is not seated");
      continue;
    }
    cr_assert(c[i].seen[GK_MSG_REDIRECT], "player %d at node %d: no REDIRECT",
              i, at[i]);
    gk_wire_redirect to = c[i].last[GK_MSG_REDIRECT].u.redirect;
    cr_assert_eq(node_at(n, 3, to.enet), &n[0], "not sent to a's lobby");
    cr_assert_str_eq(to.code,
                     c[0].last[GK_MSG_QUICK_JOINED].u.quick_joined.code);
    raw_close(&c[i]);
    raw_connect(&c[i], n[0].port);
    quick_send(&c[i], to.code);
  }
  pump_all(c, 4, GK_MSG_MATCH_START, 5000);
  for (int i = 0; i < 4; i++) {
    cr_assert(c[i].seen[GK_MSG_MATCH_START], "player %d: no start", i);
    cr_assert_str_eq(c[i].last[GK_MSG_QUICK_JOINED].u.quick_joined.code,
                     c[0].last[GK_MSG_QUICK_JOINED].u.quick_joined.code);
    raw_close(&c[i]);
  }
}

Test(fleet_e2e, twelve_quick_plays_at_three_nodes_fill_three_rooms_20_times,
     .timeout = 240) {
  node n[3];
  fleet_up(n, 3);
  quick_follow(n);
  int redirected = 0;
  for (int rep = 0; rep < 20; rep++) redirected += quick_race(n, rep);
  fprintf(stderr, "quick play races: %d of %d players redirected\n", redirected,
          20 * QP_PLAYERS);
  for (int i = 0; i < 3; i++) { /* the directory alone kept them apart */
    cr_assert_eq(http_get(&n[i], "/metrics", http_buf), 200);
    cr_assert(strstr(http_buf, "gk_fleet_quick_asks_total "), "not counted");
    cr_assert(strstr(http_buf, "gk_quick_play_total{outcome=\"moved\"} 0\n"),
              "node %d seated players whose lobby had filled", i);
  }
  fleet_stop(n, 3);
  fleet_remove(n, 3);
}
