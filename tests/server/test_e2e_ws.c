/* test_e2e_ws.c: the real gk-server with its WebSocket listener on, and
 * gk-bot players over both transports in the same rooms (--ws,
 * --ws-players, --ws-swap): a mixed room of two ENet players and one
 * WebSocket player for 3,000 steps, light bots with WebSocket players,
 * and rejoins that cross transports (a player that left on ENet comes
 * back over WebSocket, one that left on WebSocket comes back on ENet),
 * and a room all on WebSocket with a rejoin and a spectator.
 * The server logs at debug level, so every `connect` line names its
 * transport and the test counts them; every replay verifies (library and
 * gk-replay). Every wait is bounded (e2e.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"

/* The server with `extra` members, at debug level, WebSocket on an
 * ephemeral port: its ENet port and WebSocket URL. */
static void start_ws_server(e2e_proc *srv, const e2e_dir *d, const char *extra,
                            uint16_t *port, char *url, size_t cap) {
  char more[1024], base[4096], json[4200], path[512];
  snprintf(more, sizeof more,
           "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
           "\"port\":0}%s%s",
           extra ? "," : "", extra ? extra : "");
  e2e_config_json(base, sizeof base, d, NULL, more);
  const char *info = "\"log_level\":\"info\"";
  char *lv = strstr(base, info);
  cr_assert_not_null(lv);
  snprintf(json, sizeof json, "%.*s\"log_level\":\"debug\"%s", (int)(lv - base),
           base, lv + strlen(info));
  e2e_write(d, "server.json", json, path, sizeof path);
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(srv, d, "server", argv);
  *port = e2e_server_port(srv, 10000);
  cr_assert_neq(*port, 0, "the server did not log its port");
  double ws = e2e_stat(srv, "listening", "ws_port");
  cr_assert_gt(ws, 0);
  snprintf(url, cap, "ws://127.0.0.1:%u/play", (unsigned)ws);
}

/* `connect` lines of the server's log over `transport`. */
static int connects_over(const e2e_proc *srv, const char *transport) {
  FILE *f = fopen(srv->out, "r");
  cr_assert_not_null(f, "%s", srv->out);
  char want[64], line[4096];
  snprintf(want, sizeof want, "\"transport\":\"%s\"", transport);
  int n = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, "\"event\":\"connect\"") && strstr(line, want)) n++;
  fclose(f);
  return n;
}

/* Stops the server; every replay verifies and ends on the bots' hashes. */
static void stop_and_verify(e2e_proc *srv, const e2e_dir *d, int rooms,
                            char (*codes)[17], const uint64_t *hashes) {
  e2e_stop_server(srv);
  cr_assert_eq(e2e_count_events(srv, "desync"), 0);
  cr_assert_eq(e2e_stat(srv, "stopped", "replays_written"), rooms);
  char rcodes[16][17];
  uint64_t rhashes[16];
  int nr = e2e_verify_replays(d->replays, rcodes, rhashes, 16);
  cr_assert_eq(nr, rooms);
  for (int i = 0; hashes != NULL && i < rooms; i++) {
    int found = 0;
    for (int j = 0; j < nr; j++)
      if (strcmp(codes[i], rcodes[j]) == 0) {
        found = 1;
        cr_assert_eq(hashes[i], rhashes[j], "room %s", codes[i]);
      }
    cr_assert(found, "no replay for room %s", codes[i]);
  }
}

Test(server_e2e_ws,
     two_enet_and_one_websocket_bot_play_3000_steps_and_the_replay_verifies) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[128];
  start_ws_server(&srv, &d, NULL, &port, url, sizeof url);
  const char *extra[] = {"--ws", url, "--ws-players", "1", NULL};
  e2e_start_bot_x(&bot, &d, "bot", port, "1", "3", "3000", extra);
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  cr_assert_eq(connects_over(&srv, "websocket"), 1);
  cr_assert_eq(connects_over(&srv, "enet"), 2);
  cJSON *end = e2e_last_event(&srv, "match_end");
  cr_assert_not_null(end);
  cr_assert_geq(cJSON_GetObjectItem(end, "steps")->valuedouble, 3000);
  cJSON_Delete(end);
  stop_and_verify(&srv, &d, 1, codes, hashes);
  e2e_dir_remove(&d);
}

Test(server_e2e_ws, light_bots_with_two_websocket_players_a_room_finish) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[128];
  start_ws_server(&srv, &d, NULL, &port, url, sizeof url);
  const char *extra[] = {"--light", "--ws", url, "--ws-players", "2", NULL};
  e2e_start_bot_x(&bot, &d, "light", port, "6", "4", "900", extra);
  cr_assert(e2e_wait(&bot, 60000), "gk-bot --light did not finish");
  cJSON *sum = e2e_read_json(bot.out);
  cr_assert_not_null(sum);
  char *all = cJSON_PrintUnformatted(sum);
  cr_assert_eq(bot.status, 0, "%s", all);
  cr_assert_eq(cJSON_GetObjectItem(sum, "rooms_completed")->valuedouble, 6,
               "%s", all);
  cr_assert_eq(cJSON_GetObjectItem(sum, "desyncs")->valuedouble, 0);
  cJSON_free(all);
  cJSON_Delete(sum);
  int ws = connects_over(&srv, "websocket"), en = connects_over(&srv, "enet");
  cr_assert_eq(ws, 12, "%d WebSocket connects", ws);
  cr_assert_geq(en, 12, "%d ENet connects", en); /* retries may add some */
  stop_and_verify(&srv, &d, 6, NULL, NULL);
  e2e_dir_remove(&d);
}

Test(server_e2e_ws, rejoins_cross_transports_and_the_match_agrees_to_the_end) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[128];
  start_ws_server(&srv, &d, "\"reconnect\":{\"hold_ms\":10000}", &port, url,
                  sizeof url);
  /* three players: slots 0 and 1 on ENet, slot 2 on WebSocket; slot 1
   * leaves at 300 and comes back over WebSocket, slot 2 leaves at 600
   * and comes back on ENet */
  const char *extra[] = {"--ws",      url,      "--ws-players", "1",
                         "--ws-swap", "--drop", "1:300:800",    "--drop",
                         "2:600:800", NULL};
  e2e_start_bot_x(&bot, &d, "bot", port, "2", "3", "1200", extra);
  char codes[2][17];
  uint64_t hashes[2];
  cr_assert_eq(e2e_check_bot(&bot, 2, codes, hashes), 2);
  cJSON *sum = e2e_read_json(bot.out);
  char *all = cJSON_PrintUnformatted(sum);
  const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
  for (const cJSON *r = res->child; r != NULL; r = r->next) {
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "agree")), "%s", all);
    const cJSON *rj = cJSON_GetObjectItem(r, "rejoins");
    cr_assert_eq(cJSON_GetArraySize(rj), 2, "rejoins: %s", all);
    for (int i = 0; i < 2; i++) {
      const cJSON *ms =
          cJSON_GetObjectItem(cJSON_GetArrayItem(rj, i), "resume_ms");
      cr_assert(cJSON_IsNumber(ms) && ms->valuedouble > 0, "%s", all);
    }
  }
  cJSON_free(all);
  cJSON_Delete(sum);
  /* per room: slot 2 and slot 1's rejoin over WebSocket; slots 0, 1 and
   * slot 2's rejoin on ENet (a rejoin refused as "still connected" tries
   * again on the same transport, so at least) */
  int ws = connects_over(&srv, "websocket"), en = connects_over(&srv, "enet");
  fprintf(stderr, "rejoin connects: websocket %d, enet %d\n", ws, en);
  cr_assert_geq(ws, 4, "%d WebSocket connects", ws);
  cr_assert_geq(en, 6, "%d ENet connects", en);
  cr_assert_eq(e2e_count_events(&srv, "player_rejoined"), 4);
  stop_and_verify(&srv, &d, 2, codes, hashes);
  e2e_dir_remove(&d);
}

Test(server_e2e_ws,
     an_all_websocket_room_rejoins_and_spectates_over_websocket) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  char url[128];
  start_ws_server(&srv, &d, "\"reconnect\":{\"hold_ms\":10000}", &port, url,
                  sizeof url);
  const char *extra[] = {"--ws",         url, "--drop", "1:300:800",
                         "--spectators", "1", NULL};
  e2e_start_bot_x(&bot, &d, "bot", port, "1", "2", "1200", extra);
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  cJSON *sum = e2e_read_json(bot.out);
  char *all = cJSON_PrintUnformatted(sum);
  const cJSON *r =
      cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "room_results"), 0);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "rejoins")), 1, "%s",
               all);
  const cJSON *sp = cJSON_GetObjectItem(r, "spectators");
  cr_assert_eq(cJSON_GetObjectItem(sp, "count")->valuedouble, 1, "%s", all);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(sp, "agree")), "%s", all);
  cJSON_free(all);
  cJSON_Delete(sum);
  /* two players, the rejoin and the spectator: all over WebSocket */
  cr_assert_geq(connects_over(&srv, "websocket"), 4);
  cr_assert_eq(connects_over(&srv, "enet"), 0);
  cr_assert_eq(e2e_count_events(&srv, "spectator_joined"), 1);
  stop_and_verify(&srv, &d, 1, codes, hashes);
  e2e_dir_remove(&d);
}
