/* test_e2e_join.c: gk-bot --join against the real gk-server: its players
 * join a room another client made (here a raw ENet client in this
 * process, standing in for a page) and play until that creator ends the
 * match.
 *
 * The creator makes a 3-seat survivors room, waits (in the server's log)
 * until the two gk-bot players are in, starts the match, and removes its
 * own slot at once (it sends no inputs: it only holds the room's controls),
 * so the two bots play on; after a while it ends the match. The bots, over
 * ENet or WebSocket, must end with the match, agree step by step, hear no
 * desync, and write player 0's whole hash chain (--hashes), which ends on
 * the replay's final hash; the replay verifies. An unknown code and a full
 * room end gk-bot with exit 3 and the server's reason on stderr; a
 * malformed code or --rooms 2 is a usage error. Every wait is bounded. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "e2e_raw.h"
#include "gk_net_wire.h"

#define PLAY_MS 6000 /* the bots play this long, about 700 steps at 120 Hz */

/* The server, with its WebSocket listener on: the ENet port and the
 * WebSocket URL. */
static void start(e2e_proc *srv, const e2e_dir *d, uint16_t *port, char *url,
                  size_t cap) {
  e2e_start_server(srv, d,
                   "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
                   "\"port\":0}",
                   port);
  double ws = e2e_stat(srv, "listening", "ws_port");
  cr_assert_gt(ws, 0);
  snprintf(url, cap, "ws://127.0.0.1:%u/play", (unsigned)ws);
}

/* The raw creator makes a survivors room of `seats`; its code into code. */
static void create(raw *c, uint16_t port, int seats, char *code) {
  raw_connect(c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = (uint8_t)seats;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_ROOM_CREATED, 3000);
  memcpy(code, c->last[GK_MSG_ROOM_CREATED].u.room.code, GK_WIRE_CODE_LEN);
  code[GK_WIRE_CODE_LEN] = '\0';
}

/* gk-bot --join code --players 2 [--ws url], its chain into hashes. */
static void join_bot(e2e_proc *bot, const e2e_dir *d, uint16_t port,
                     const char *code, const char *url, const char *hashes) {
  char server[32];
  snprintf(server, sizeof server, "127.0.0.1:%u", (unsigned)port);
  char *argv[] = {(char *)GK_BOT_BIN,
                  "--server",
                  server,
                  "--genre",
                  "survivors",
                  "--join",
                  (char *)code,
                  "--players",
                  "2",
                  "--timeout",
                  "60",
                  "--hashes",
                  (char *)hashes,
                  url ? "--ws" : NULL,
                  (char *)url,
                  NULL};
  e2e_spawn(bot, d, "bot", argv);
}

/* Services the creator until the server logged n `player_joined` lines
 * (10 s at most). */
static void wait_joined(raw *c, const e2e_proc *srv, int n) {
  for (int i = 0; i < 200 && e2e_count_events(srv, "player_joined") < n; i++)
    raw_pump(c, 50);
  cr_assert_geq(e2e_count_events(srv, "player_joined"), n,
                "the gk-bot players did not join");
}

/* Player 0's chain: every step 0..n-1 once, in order; the last hash. */
static uint64_t check_chain(const char *path, uint64_t steps) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "no --hashes file %s", path);
  unsigned long long step, hash = 0, want = 0;
  while (fscanf(f, "%llu %llx", &step, &hash) == 2) {
    cr_assert_eq(step, want, "--hashes: step %llu where %llu was due", step,
                 want);
    want++;
  }
  fclose(f);
  cr_assert_eq(want, steps, "--hashes has %llu steps of %llu", want,
               (unsigned long long)steps);
  return hash;
}

static void whole_match(const char *transport) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[64], code[GK_WIRE_CODE_LEN + 1], hashes[320];
  start(&srv, &d, &port, url, sizeof url);
  cr_assert_eq(enet_initialize(), 0);
  raw c;
  create(&c, port, 3, code);
  snprintf(hashes, sizeof hashes, "%s/bot.hashes", d.path);
  join_bot(&bot, &d, port, code, strcmp(transport, "ws") ? NULL : url, hashes);
  wait_joined(&c, &srv, 2);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&c, &m);
  raw_expect(&c, GK_MSG_MATCH_START, 3000);
  cr_assert_eq(c.last[GK_MSG_MATCH_START].u.match_start.players, 3);
  memset(&m, 0, sizeof m); /* the creator leaves the play, not the room */
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){0, GK_WIRE_STEP_ASAP};
  raw_send_msg(&c, &m);
  raw_pump(&c, PLAY_MS);
  cr_assert(!e2e_wait(&bot, 0), "gk-bot ended before the creator did");
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  raw_send_msg(&c, &m);
  /* a removed slot hears no MATCH_END: the server's log says it ended */
  for (int i = 0; i < 200 && e2e_count_events(&srv, "match_end") < 1; i++)
    raw_pump(&c, 50);
  char codes[2][17];
  uint64_t final[2], replayed[2];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, final), 1);
  cr_assert_str_eq(codes[0], code);
  cJSON *sum = e2e_read_json(bot.out);
  const cJSON *r0 =
      cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "room_results"), 0);
  uint64_t steps = (uint64_t)cJSON_GetObjectItem(r0, "steps")->valuedouble;
  cr_assert_str_eq(cJSON_GetObjectItem(r0, "end_reason")->valuestring, "host");
  cJSON_Delete(sum);
  cr_assert_gt(steps, 300, "only %llu steps", (unsigned long long)steps);
  cr_assert_eq(check_chain(hashes, steps), final[0]);
  cJSON *me = e2e_last_event(&srv, "match_end");
  cr_assert_not_null(me);
  cr_assert_eq(cJSON_GetObjectItem(me, "desyncs")->valuedouble, 0);
  cJSON_Delete(me);
  raw_close(&c);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  cr_assert_eq(e2e_verify_replays(d.replays, codes, replayed, 2), 1);
  cr_assert_eq(replayed[0], final[0], "the replay ends on another hash");
  cr_log_info("--join over %s: %llu steps, 0 desyncs", transport,
              (unsigned long long)steps);
  e2e_dir_remove(&d);
}

Test(server_e2e_join, two_joined_enet_bots_play_a_whole_match_and_agree,
     .timeout = 120) {
  whole_match("enet");
}

Test(server_e2e_join, two_joined_websocket_bots_play_a_whole_match_and_agree,
     .timeout = 120) {
  whole_match("ws");
}

/* gk-bot's stderr holds `text`. */
static void said(const e2e_proc *bot, const char *text) {
  FILE *f = fopen(bot->err, "r");
  cr_assert_not_null(f);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  cr_assert(strstr(buf, text) != NULL, "no '%s' in gk-bot's stderr: %s", text,
            buf);
}

Test(server_e2e_join, an_unknown_code_or_a_full_room_fails_with_the_reason,
     .timeout = 120) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[64], code[GK_WIRE_CODE_LEN + 1], hashes[320];
  start(&srv, &d, &port, url, sizeof url);
  snprintf(hashes, sizeof hashes, "%s/bot.hashes", d.path);
  join_bot(&bot, &d, port, "ABCDEFGHIJKLMNOP", NULL, hashes);
  cr_assert(e2e_wait(&bot, 20000), "gk-bot did not give up");
  cr_assert_eq(bot.status, 3);
  said(&bot, "--join ABCDEFGHIJKLMNOP: server error: GK_ENOTFOUND");
  /* a room of 2 with one seat free: one of the two gets in */
  cr_assert_eq(enet_initialize(), 0);
  raw c;
  create(&c, port, 2, code);
  join_bot(&bot, &d, port, code, url, hashes);
  for (int i = 0; i < 400 && !e2e_wait(&bot, 0); i++) raw_pump(&c, 50);
  cr_assert(e2e_wait(&bot, 0), "gk-bot did not give up");
  cr_assert_eq(bot.status, 3);
  said(&bot, "server error: GK_EFULL");
  raw_close(&c);
  enet_deinitialize();
  /* usage errors: a malformed code, more than one room */
  char *bad[] = {
      (char *)GK_BOT_BIN, "--server", "127.0.0.1:9", "--genre", "survivors",
      "--join",           "abc",      "--players",   "1",       NULL};
  e2e_spawn(&bot, &d, "bot", bad);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  said(&bot, "--join: bad value 'abc' (a room code");
  char *two[] = {(char *)GK_BOT_BIN,
                 "--server",
                 "127.0.0.1:9",
                 "--genre",
                 "survivors",
                 "--join",
                 code,
                 "--players",
                 "1",
                 "--rooms",
                 "2",
                 NULL};
  e2e_spawn(&bot, &d, "bot", two);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  said(&bot, "--join plays one room");
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}
