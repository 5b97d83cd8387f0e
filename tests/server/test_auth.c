/* test_auth.c: connect tokens and abuse limits through the real gk-server
 * and gk-bot on 127.0.0.1.
 *
 * Tokens are minted here with src/token and the server's key file; raw
 * ENet clients (e2e_raw.h) send each bad token and read the ERROR code,
 * while gk-bot --key plays other rooms on the same server, which must end
 * with no desync. Every wait is bounded; each test takes a few seconds.
 */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "e2e.h"
#include "e2e_raw.h"
#include "e2e_srv.h"
#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_token.h"

/* A key file (mode 0600) in the test folder; its bytes in key. */
static void make_key(const e2e_dir *d, const char *name, char *path, size_t cap,
                     uint8_t key[GK_TOKEN_KEY_BYTES]) {
  snprintf(path, cap, "%s/%s", d->path, name);
  char err[512];
  cr_assert_eq(gk_token_key_write(path, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(gk_token_key_load(path, key, err, sizeof(err)), 0, "%s", err);
}

static uint64_t now_s(void) {
  return (uint64_t)time(NULL);
}

/* A token minted at `at` (unix s) for ttl seconds. */
static void mint_at(const uint8_t key[GK_TOKEN_KEY_BYTES],
                    const gk_token_grant *g, uint64_t client, uint64_t at,
                    uint32_t ttl, uint8_t out[GK_TOKEN_BYTES]) {
  cr_assert_eq(gk_token_mint(g, client, at, ttl, key, out), 0);
}

/* A grant to create a room of `genre` for `players` (players > 0), or to
 * join room `code` as `role` (players 0). */
static gk_token_grant grant(const char *name, uint8_t players, uint8_t role) {
  gk_token_grant g;
  memset(&g, 0, sizeof(g));
  g.kind = players ? GK_TOKEN_CREATE : GK_TOKEN_JOIN;
  g.max_players = players;
  g.role = role;
  g.slot = GK_TOKEN_SLOT_ANY;
  if (players)
    snprintf(g.genre, sizeof(g.genre), "%s", name);
  else
    snprintf(g.code, sizeof(g.code), "%s", name);
  return g;
}

static gk_token_grant create_grant(const char *genre, uint8_t players) {
  return grant(genre, players, GK_TOKEN_PLAYER);
}

static gk_token_grant join_grant(const char *code, uint8_t role) {
  return grant(code, 0, role);
}

/* Sends a request and waits for its answer: the answer's type, and the
 * ERROR code in *code (0 if none). `tok` may be NULL (no token). */
static int request(raw *c, gk_wire_msg *m, const uint8_t *tok, int *code) {
  uint8_t *len = &m->u.room.token_len, *dst = m->u.room.token;
  if (m->type == GK_MSG_CREATE_ROOM) {
    len = &m->u.create_room.token_len;
    dst = m->u.create_room.token;
  } else if (m->type == GK_MSG_REJOIN_ROOM) {
    len = &m->u.rejoin.token_len;
    dst = m->u.rejoin.token;
  }
  *len = tok ? GK_TOKEN_BYTES : 0;
  if (tok) memcpy(dst, tok, GK_TOKEN_BYTES);
  static const int answers[] = {GK_MSG_ERROR, GK_MSG_ROOM_CREATED,
                                GK_MSG_JOINED};
  for (int i = 0; i < 3; i++) c->seen[answers[i]] = 0;
  raw_send_msg(c, m);
  for (int waited = 0; waited < 3000; waited += 20) {
    for (int i = 0; i < 3; i++) {
      if (c->seen[answers[i]]) {
        *code =
            answers[i] == GK_MSG_ERROR ? c->last[GK_MSG_ERROR].u.error.code : 0;
        return answers[i];
      }
    }
    raw_pump(c, 20);
  }
  cr_assert_fail("no answer to %s", gk_wire_type_name((int)m->type));
  return 0;
}

static gk_wire_msg create_msg(void) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "survivors");
  return m;
}

static gk_wire_msg join_msg(const char *code, uint8_t role) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  m.u.room.role = role;
  snprintf(m.u.room.code, sizeof(m.u.room.code), "%s", code);
  return m;
}

/* Expects the request with token `tok` to be refused with `want`; the
 * server then closes the connection (it never had a request accepted),
 * and `c` connects afresh. */
static void expect_refused(raw *c, gk_wire_msg m, const uint8_t *tok, int want,
                           const char *what) {
  int code = 0;
  int type = request(c, &m, tok, &code);
  cr_assert_eq(type, GK_MSG_ERROR, "%s: accepted", what);
  cr_assert_eq(code, want, "%s: %s (%s), want %s", what, gk_err_name(code),
               c->last[GK_MSG_ERROR].u.error.text, gk_err_name(want));
  for (int i = 0; i < 50 && !c->disconnected; i++) raw_pump(c, 20);
  cr_assert(c->disconnected, "%s: the refused connection is kept", what);
  uint16_t port = c->p->address.port;
  raw_close(c);
  raw_connect(c, port);
}

static void wait_matches(const e2e_proc *srv, int n) {
  for (int waited = 0; e2e_count_events(srv, "match_start") < n; waited += 20) {
    cr_assert_lt(waited, 15000, "the matches did not start");
    e2e_sleep_ms(20);
  }
}

/* REJOIN_ROOM and SPECTATE with tokens: the role, the slot and, for a
 * rejoin, the slot's own client id are checked before the room is; a valid
 * spectator's token gets as far as the room (a lobby: not playing). Each
 * refusal closes `c`, which connects afresh (bound to no client). */
static void rejoin_and_spectate_tokens(raw *c, const e2e_proc *srv,
                                       const uint8_t key[GK_TOKEN_KEY_BYTES],
                                       const char *room, gk_wire_msg watch,
                                       gk_wire_msg back) {
  uint8_t tok[GK_TOKEN_BYTES];
  gk_token_grant player = join_grant(room, GK_TOKEN_PLAYER);
  gk_token_grant spectator = join_grant(room, GK_TOKEN_SPECTATOR);
  mint_at(key, &player, 9, now_s(), 60, tok);
  expect_refused(c, watch, tok, GK_EROLE, "a player's token to spectate");
  mint_at(key, &spectator, 9, now_s(), 60, tok);
  expect_refused(c, back, tok, GK_EROLE, "a spectator's token to rejoin");
  player.slot = 0; /* back asks for slot 1 */
  mint_at(key, &player, 9, now_s(), 60, tok);
  expect_refused(c, back, tok, GK_EGRANT, "a token for another slot");
  /* a bot's room in play: its slot 1 is the bot's client, not 9 */
  cJSON *ms = e2e_last_event(srv, "match_start");
  const char *bot_room = cJSON_GetObjectItem(ms, "room")->valuestring;
  gk_token_grant other = join_grant(bot_room, GK_TOKEN_PLAYER);
  mint_at(key, &other, 9, now_s(), 60, tok);
  gk_wire_msg steal = back;
  memcpy(steal.u.rejoin.code, bot_room, GK_WIRE_CODE_LEN);
  cJSON_Delete(ms);
  expect_refused(c, steal, tok, GK_EGRANT, "another client's slot");
  mint_at(key, &spectator, 9, now_s(), 60, tok);
  expect_refused(c, watch, tok, GK_ECLOSED, "spectating a lobby");
}

static char *token_config(char *buf, size_t cap, const char *key_path,
                          const char *limits) {
  snprintf(buf, cap, "\"auth\":{\"mode\":\"token\",\"key_file\":\"%s\"}%s%s",
           key_path, limits ? "," : "", limits ? limits : "");
  return buf;
}

/* A fresh folder, a key in it (path and bytes out) and a server in token
 * mode with that key, at *port. */
static void token_server(e2e_dir *d, char *key_path, size_t cap,
                         uint8_t key[GK_TOKEN_KEY_BYTES], e2e_proc *srv,
                         uint16_t *port) {
  char extra[600];
  e2e_dir_make(d);
  make_key(d, "server.key", key_path, cap, key);
  e2e_start_server(srv, d, token_config(extra, sizeof(extra), key_path, NULL),
                   port);
}

Test(server_auth,
     valid_tokens_create_and_join_and_each_bad_one_gets_its_own_code) {
  e2e_dir d;
  e2e_dir_make(&d);
  char key_path[300], other_path[300], extra[600];
  uint8_t key[GK_TOKEN_KEY_BYTES], other[GK_TOKEN_KEY_BYTES];
  make_key(&d, "server.key", key_path, sizeof(key_path), key);
  make_key(&d, "other.key", other_path, sizeof(other_path), other);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d,
                   token_config(extra, sizeof(extra), key_path,
                                "\"limits\":{\"creates_per_min\":2}"),
                   &port);
  start_bot_opt(&bot, &d, "bot", port, "3", "2", "1200", "--key",
                key_path); /* still playing for the rejoin checks */
  wait_matches(&srv, 3);
  cr_assert_eq(enet_initialize(), 0);

  /* a valid create, then a valid join of that room */
  raw a, b, c;
  raw_connect(&a, port);
  raw_connect(&b, port);
  raw_connect(&c, port);
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES], used[GK_TOKEN_BYTES];
  mint_at(key, &g, 7, now_s(), 60, tok);
  int code = 0;
  gk_wire_msg m = create_msg();
  cr_assert_eq(request(&a, &m, tok, &code), GK_MSG_ROOM_CREATED, "%s",
               gk_err_name(code));
  char room[GK_WIRE_CODE_LEN + 1];
  memcpy(room, a.last[GK_MSG_ROOM_CREATED].u.room.code, sizeof(room));
  g = join_grant(room, GK_TOKEN_PLAYER);
  mint_at(key, &g, 8, now_s(), 60, used);
  m = join_msg(room, GK_WIRE_ROLE_PLAYER);
  cr_assert_eq(request(&b, &m, used, &code), GK_MSG_JOINED, "%s",
               gk_err_name(code));
  cr_assert_eq(b.last[GK_MSG_JOINED].u.joined.slot, 1);

  /* each bad token gets its own code (and its connection closed) */
  gk_wire_msg join = join_msg(room, GK_WIRE_ROLE_PLAYER);
  expect_refused(&c, join, NULL, GK_ENOTOKEN, "no token");
  mint_at(key, &g, 9, now_s() - 600, 60, tok);
  expect_refused(&c, join, tok, GK_EEXPIRED, "expired");
  mint_at(other, &g, 9, now_s(), 60, tok);
  expect_refused(&c, join, tok, GK_EAUTH, "wrong key");
  mint_at(key, &g, 9, now_s(), 60, tok);
  tok[100] ^= 0x01; /* one byte of the sealed part */
  expect_refused(&c, join, tok, GK_EAUTH, "tampered sealed part");
  tok[100] ^= 0x01;
  tok[30] ^= 0x80; /* one byte of the token id (associated data) */
  expect_refused(&c, join, tok, GK_EAUTH, "tampered public part");
  gk_token_grant other_room = join_grant("AAAAAAAAAAAAAAAA", GK_TOKEN_PLAYER);
  mint_at(key, &other_room, 9, now_s(), 60, tok);
  expect_refused(&c, join, tok, GK_EGRANT, "wrong room");
  gk_token_grant spectator = join_grant(room, GK_TOKEN_SPECTATOR);
  mint_at(key, &spectator, 9, now_s(), 60, tok);
  expect_refused(&c, join, tok, GK_EROLE, "spectator token as a player");
  expect_refused(&c, join, used, GK_EEXIST, "reused");
  gk_token_grant three = create_grant("survivors", 1);
  mint_at(key, &three, 9, now_s(), 60, tok);
  expect_refused(&c, create_msg(), tok, GK_EGRANT, "more players than granted");

  /* rooms per minute per client id (limit 2): the third is refused */
  g = create_grant("survivors", 2);
  for (int i = 0; i < 3; i++) {
    raw e;
    raw_connect(&e, port);
    mint_at(key, &g, 42, now_s(), 60, tok);
    m = create_msg();
    int type = request(&e, &m, tok, &code);
    if (i < 2)
      cr_assert_eq(type, GK_MSG_ROOM_CREATED, "create %d: %s", i,
                   gk_err_name(code));
    else
      cr_assert_eq(code, GK_ELIMIT, "create %d: %s", i, gk_err_name(code));
    raw_close(&e);
  }

  /* spectating and rejoining without a token: refused in token mode */
  gk_wire_msg watch;
  memset(&watch, 0, sizeof watch);
  watch.type = GK_MSG_SPECTATE;
  memcpy(watch.u.room.code, room, sizeof(room));
  expect_refused(&c, watch, NULL, GK_ENOTOKEN, "spectate without a token");
  gk_wire_msg back;
  memset(&back, 0, sizeof back);
  back.type = GK_MSG_REJOIN_ROOM;
  memcpy(back.u.rejoin.code, room, sizeof(room));
  back.u.rejoin.slot = 1;
  expect_refused(&c, back, NULL, GK_ENOTOKEN, "rejoin without a token");
  rejoin_and_spectate_tokens(&c, &srv, key, room, watch, back);

  /* the bots' rooms were not touched */
  char codes[3][17];
  uint64_t hashes[3];
  e2e_check_bot(&bot, 3, codes, hashes);
  raw_close(&a);
  raw_close(&b);
  raw_close(&c);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_missing"), 3);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_expired"), 1);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_bad"), 3);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_grant"), 2 + 2);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_role"), 1 + 2);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_reused"), 1);
  cr_assert_eq(e2e_stat(&srv, "stopped", "limit_create_rate"), 1);
  /* 3 bot rooms of 2, 1 create + 1 join, 2 creates of client 42, 1
   * spectator's token */
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_admitted"), 6 + 2 + 2 + 1);
  e2e_dir_remove(&d);
}

Test(server_auth, a_key_file_others_may_read_stops_start_up_with_the_reason) {
  e2e_dir d;
  e2e_dir_make(&d);
  char key_path[300], json[2048], extra[600], err[2048];
  uint8_t key[GK_TOKEN_KEY_BYTES];
  make_key(&d, "server.key", key_path, sizeof(key_path), key);
  cr_assert_eq(chmod(key_path, 0644), 0);
  e2e_config_json(json, sizeof(json), &d, NULL,
                  token_config(extra, sizeof(extra), key_path, NULL));
  cr_assert_eq(run_server_cfg(&d, json, err, sizeof(err)), 1, "%s", err);
  cr_assert(strstr(err, "auth.key_file") && strstr(err, key_path) &&
                strstr(err, "0644") && strstr(err, "chmod 600"),
            "%s", err);
  /* token mode with no key file is a config error */
  cr_assert_eq(
      run_server_cfg(&d, "{\"auth\":{\"mode\":\"token\"}}", err, sizeof(err)),
      2);
  cr_assert(strstr(err, "auth") && strstr(err, "key_file"), "%s", err);
  e2e_dir_remove(&d);
}

Test(server_auth, gk_bot_with_a_given_tampered_token_is_refused_and_says_so) {
  e2e_dir d;
  char key_path[300];
  uint8_t key[GK_TOKEN_KEY_BYTES];
  e2e_proc srv, bot;
  uint16_t port;
  token_server(&d, key_path, sizeof(key_path), key, &srv, &port);
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint_at(key, &g, 5, now_s(), 60, tok);
  tok[GK_TOKEN_BYTES - 1] ^= 0x10; /* the tag */
  char text[GK_TOKEN_B64_LEN + 1];
  cr_assert_eq(gk_token_to_base64(tok, text), 0);
  start_bot_opt(&bot, &d, "bot", port, "1", "2", "60", "--token", text);
  cr_assert(e2e_wait(&bot, 15000), "gk-bot did not finish");
  cr_assert_eq(bot.status, 3);
  cJSON *sum = e2e_read_json(bot.out);
  cr_assert_not_null(sum);
  const cJSON *r =
      cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "room_results"), 0);
  const cJSON *e = cJSON_GetObjectItem(r, "error");
  cr_assert(cJSON_IsString(e) && strstr(e->valuestring, "GK_EAUTH"),
            "no GK_EAUTH in the bot's summary");
  cJSON_Delete(sum);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_bad"), 1);
  cr_assert_eq(e2e_stat(&srv, "stopped", "rooms_created"), 0);
  e2e_dir_remove(&d);
}

/* Connects n ENet hosts (one connection each) at once and services them
 * for about ms: how many got connected, and how many of those were then
 * dropped. The hosts are left in hosts[] for the caller to destroy. */
static void flood(ENetHost **hosts, int n, uint16_t port, int ms, int *up,
                  int *dropped) {
  ENetAddress addr;
  enet_address_set_host(&addr, "127.0.0.1");
  addr.port = port;
  for (int i = 0; i < n; i++) {
    hosts[i] = enet_host_create(NULL, 1, 2, 0, 0);
    cr_assert_not_null(hosts[i]);
    cr_assert_not_null(enet_host_connect(hosts[i], &addr, 2, 0));
  }
  *up = *dropped = 0;
  for (int t = 0; t < ms; t += 10) {
    for (int i = 0; i < n; i++) {
      ENetEvent ev;
      while (enet_host_service(hosts[i], &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) ++*up;
        if (ev.type == ENET_EVENT_TYPE_DISCONNECT) ++*dropped;
        if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
      }
    }
    e2e_sleep_ms(10);
  }
}

Test(server_auth,
     a_connection_flood_from_one_address_hits_the_per_ip_limits_only) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d,
                   "\"limits\":{\"conns_per_ip\":8,\"connects_per_ip_per_s\":6,"
                   "\"handshake_ms\":2500,\"log_interval_ms\":60000}",
                   &port);
  e2e_start_bot(&bot, &d, "bot", port, "1", "2", "900");
  wait_matches(&srv, 1);
  cr_assert_eq(enet_initialize(), 0);

  /* before any request is accepted, no reply is larger than the request:
   * a 2-byte START_MATCH gets nothing, a 20-byte JOIN_ROOM an ERROR with
   * its code and no text (never a cut text: the client words the code);
   * then the refused connection is closed at once, not left to
   * handshake_ms */
  raw x;
  raw_connect(&x, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&x, &m);
  raw_pump(&x, 300);
  cr_assert_eq(x.seen[GK_MSG_ERROR], 0, "a reply larger than the request");
  m = join_msg("AAAAAAAAAAAAAAAA", GK_WIRE_ROLE_PLAYER);
  raw_send_msg(&x, &m);
  raw_expect(&x, GK_MSG_ERROR, 3000);
  cr_assert_eq(x.last[GK_MSG_ERROR].u.error.code, GK_ENOTFOUND);
  cr_assert_str_eq(x.last[GK_MSG_ERROR].u.error.text, "",
                   "a text that does not fit is left out, not cut");
  cr_assert_eq(x.last_len[GK_MSG_ERROR], 5);
  for (int i = 0; i < 50 && !x.disconnected; i++) raw_pump(&x, 20);
  cr_assert(x.disconnected, "the refused connection is closed within 1 s");
  raw_close(&x);
  raw_connect(&x, port); /* holds a place until handshake_ms */

  /* 24 connects in one second: at most 6 are let in (fewer if the bot's
   * and x's connects fell in the same second); bot and x hold 3 of 8 */
  enum { N = 24 };
  ENetHost *h1[N], *h2[N];
  int up1, dropped1, up2, dropped2;
  flood(h1, N, port, 1100, &up1, &dropped1);
  /* the next second: 6 more may connect, but at most 2 fit under 8 */
  flood(h2, N, port, 1100, &up2, &dropped2);
  /* then the handshake deadline drops every flood connection */
  e2e_sleep_ms(2500);
  raw_pump(&x, 100);
  cr_assert(x.disconnected, "a connection with no request was kept");
  for (int i = 0; i < N; i++) {
    enet_host_destroy(h1[i]);
    enet_host_destroy(h2[i]);
  }
  raw_close(&x);
  cr_assert_leq(up1 - dropped1, 6, "%d connected, %d dropped", up1, dropped1);
  cr_assert_leq(up1 - dropped1 + up2 - dropped2, 8 - 3, "%d+%d up, %d+%d gone",
                up1, up2, dropped1, dropped2);

  char codes[1][17];
  uint64_t hashes[1];
  e2e_check_bot(&bot, 1, codes, hashes);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  cr_assert_geq(e2e_stat(&srv, "stopped", "limit_connect_rate"), N - 6);
  cr_assert_geq(e2e_stat(&srv, "stopped", "limit_conns_per_ip"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "limit_handshake"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "replies_suppressed"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "replies_cut"), 1);
  /* one source, one interval: one "limit" record, not one per refusal */
  cr_assert_eq(e2e_count_events(&srv, "limit"), 1);
  e2e_dir_remove(&d);
}

/* Late join in token mode: the joiner of a running match brings a join
 * token, as in the lobby. */
Test(server_auth, gk_bot_late_joiners_with_join_tokens_get_in) {
  e2e_dir d;
  char key_path[300];
  uint8_t key[GK_TOKEN_KEY_BYTES];
  e2e_proc srv, bot;
  uint16_t port;
  token_server(&d, key_path, sizeof(key_path), key, &srv, &port);
  const char *opts[] = {"--key", key_path, "--late-join", "200", NULL};
  e2e_start_bot_x(&bot, &d, "bot", port, "2", "2", "500", opts);
  char codes[2][17];
  uint64_t hashes[2];
  cr_assert_eq(e2e_check_bot(&bot, 2, codes, hashes), 2);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "player_joined_late"), 2);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  /* 2 rooms: a create, a lobby join and a late join each */
  cr_assert_eq(e2e_stat(&srv, "stopped", "auth_admitted"), 6);
  e2e_dir_remove(&d);
}
