/* test_e2e.c: the real gk-server and gk-bot on 127.0.0.1.
 *
 * Each test writes a temporary config (port 0, a temporary replay folder,
 * a raised step rate to keep runs short), spawns gk-server, reads its port
 * from the "listening" log line, and drives it with gk-bot processes and,
 * for bad input, raw ENet clients in this process. Every wait is bounded.
 * Replays are checked with the library verifier and the gk-replay binary.
 */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "e2e_raw.h"
#include "e2e_srv.h"
#include "gk_err.h"
#include "gk_net_wire.h"

Test(server_e2e,
     twenty_rooms_of_two_to_four_bots_agree_and_every_replay_verifies) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bots[3];
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  e2e_start_bot(&bots[0], &d, "bot2", port, "7", "2", "360");
  e2e_start_bot(&bots[1], &d, "bot3", port, "7", "3", "360");
  e2e_start_bot(&bots[2], &d, "bot4", port, "6", "4", "360");

  char codes[20][17];
  uint64_t hashes[20];
  int n = 0;
  n += e2e_check_bot(&bots[0], 7, codes + n, hashes + n);
  n += e2e_check_bot(&bots[1], 7, codes + n, hashes + n);
  n += e2e_check_bot(&bots[2], 6, codes + n, hashes + n);
  cr_assert_eq(n, 20);
  /* all twenty were open at once: every room started before any ended */
  cr_assert_eq(e2e_count_events(&srv, "match_start"), 20);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_written"), 20);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);

  char rcodes[32][17];
  uint64_t rhashes[32];
  int nr = e2e_verify_replays(d.replays, rcodes, rhashes, 32);
  cr_assert_eq(nr, 20);
  /* each replay's final hash is the one its bots ended with */
  for (int i = 0; i < 20; i++) {
    int found = 0;
    for (int j = 0; j < nr; j++) {
      if (strcmp(codes[i], rcodes[j]) == 0) {
        found = 1;
        cr_assert_eq(hashes[i], rhashes[j], "room %s", codes[i]);
      }
    }
    cr_assert(found, "no replay for room %s", codes[i]);
  }
  e2e_dir_remove(&d);
}

Test(server_e2e, sigterm_during_play_leaves_complete_verifiable_replays) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  e2e_start_bot(&bot, &d, "bot", port, "4", "2", "1000000");
  for (int waited = 0; e2e_count_events(&srv, "match_start") < 4;
       waited += 20) {
    cr_assert_lt(waited, 20000, "the matches did not start");
    e2e_sleep_ms(20);
  }
  e2e_sleep_ms(600); /* let them play */
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_written"), 4);
  cr_assert_eq(e2e_count_events(&srv, "match_end"), 4);
  cJSON *end = e2e_last_event(&srv, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(end, "reason")->valuestring, "shutdown");
  cr_assert_gt(cJSON_GetObjectItem(end, "steps")->valuedouble, 10);
  cJSON_Delete(end);
  char codes[8][17];
  uint64_t hashes[8];
  cr_assert_eq(e2e_verify_replays(d.replays, codes, hashes, 8), 4);
  /* the bots were told: their matches ended, they exit (not with 0, their
   * 1000000 steps were not played) */
  cr_assert(e2e_wait(&bot, 20000), "gk-bot did not notice the shutdown");
  cr_assert_neq(bot.status, 0);
  e2e_dir_remove(&d);
}

/* --- config errors through the binary --------------------------------------
 */

Test(server_e2e, a_bad_config_stops_start_up_naming_file_key_and_reason) {
  e2e_dir d;
  e2e_dir_make(&d);
  char err[1024];
  cr_assert_eq(
      run_server_cfg(&d, "{\"limits\":{\"rooms\":0}}", err, sizeof(err)), 2);
  cr_assert(strstr(err, "bad.json") && strstr(err, "limits.rooms") &&
                strstr(err, "1..4096"),
            "%s", err);
  cr_assert_eq(
      run_server_cfg(&d, "{\"stall\":{\"notice\":5}}", err, sizeof(err)), 2);
  cr_assert(strstr(err, "stall.notice") && strstr(err, "unknown key"), "%s",
            err);
  cr_assert_eq(run_server_cfg(&d,
                              "{\"genres\":{\"survivors\":{\"options\":"
                              "{\"arena_width\":true}}}}",
                              err, sizeof(err)),
               2);
  cr_assert(strstr(err, "genres.survivors.options.arena_width"), "%s", err);
  e2e_dir_remove(&d);
}

Test(server_e2e, the_shipped_config_passes_check_config) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc p;
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--check-config",
                  (char *)"--config",
                  (char *)GK_SOURCE_ROOT "/configs/server.json", NULL};
  e2e_spawn(&p, &d, "check", argv);
  cr_assert(e2e_wait(&p, 10000));
  cr_assert_eq(p.status, 0);
  e2e_dir_remove(&d);
}

/* --- bad input while rooms play ---------------------------------------- */

static void send_input(raw *c, uint8_t slot, uint64_t first, uint8_t count) {
  static const uint8_t records[GK_WIRE_STEPS_MAX * 4];
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_INPUT;
  m.u.input.slot = slot;
  m.u.input.input_size = 4; /* survivors */
  m.u.input.first = first;
  m.u.input.count = count;
  m.u.input.records = records;
  raw_send_msg(c, &m);
}

Test(server_e2e, bad_input_is_dropped_and_counted_while_other_rooms_agree) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d,
                   "\"limits\":{\"strikes\":4,\"peers\":48,"
                   "\"packet_bytes\":1200}",
                   &port);
  e2e_start_bot(&bot, &d, "bot", port, "5", "2", "900");
  for (int waited = 0; e2e_count_events(&srv, "match_start") < 5;
       waited += 20) {
    cr_assert_lt(waited, 20000, "the bot matches did not start");
    e2e_sleep_ms(20);
  }
  cr_assert_eq(enet_initialize(), 0);

  /* garbage, truncated, a wrong version, a type only servers send: the
   * fourth strike disconnects the sender */
  raw g;
  raw_connect(&g, port);
  static const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x13};
  static const uint8_t truncated[] = {GK_WIRE_VERSION, GK_MSG_INPUT, 0, 4};
  static const uint8_t version[] = {99, GK_MSG_START_MATCH};
  gk_wire_msg bogus;
  memset(&bogus, 0, sizeof(bogus));
  bogus.type = GK_MSG_STALL;
  bogus.u.stall.step = 1;
  bogus.u.stall.awaited = 1;
  raw_send(&g, junk, sizeof(junk), 0);
  raw_send(&g, truncated, sizeof(truncated), 0);
  raw_send(&g, version, sizeof(version), 1);
  raw_send_msg(&g, &bogus);
  for (int i = 0; i < 150 && !g.disconnected; i++) raw_pump(&g, 20);
  cr_assert(g.disconnected, "the offender was not disconnected");
  raw_close(&g);

  /* oversized: dropped by the transport before anything decodes it */
  raw o;
  raw_connect(&o, port);
  static uint8_t big[3000];
  big[0] = GK_WIRE_VERSION;
  big[1] = GK_MSG_CREATE_ROOM;
  raw_send(&o, big, sizeof(big), 1);
  raw_pump(&o, 200);

  /* joining a bot's room (another room) by its code: refused, the room
   * is full (survivors takes late joiners, but the bots fill their
   * rooms); a guessed code: refused and a strike */
  cJSON *ms = e2e_last_event(&srv, "match_start");
  gk_wire_msg join;
  memset(&join, 0, sizeof(join));
  join.type = GK_MSG_JOIN_ROOM;
  snprintf(join.u.room.code, sizeof(join.u.room.code), "%s",
           cJSON_GetObjectItem(ms, "room")->valuestring);
  cJSON_Delete(ms);
  raw_send_msg(&o, &join);
  raw_expect(&o, GK_MSG_ERROR, 3000);
  cr_assert_eq(o.last[GK_MSG_ERROR].u.error.code, GK_EFULL);
  /* the refused connection is closed: the guess on a fresh one */
  for (int i = 0; i < 50 && !o.disconnected; i++) raw_pump(&o, 20);
  cr_assert(o.disconnected, "the refused connection is kept");
  raw_close(&o);
  raw_connect(&o, port);
  memcpy(join.u.room.code, "AAAAAAAAAAAAAAAA", GK_WIRE_CODE_LEN);
  raw_send_msg(&o, &join);
  raw_expect(&o, GK_MSG_ERROR, 3000);
  cr_assert_eq(o.last[GK_MSG_ERROR].u.error.code, GK_ENOTFOUND);

  /* a room of two raw clients: the joiner speaks for the creator's slot,
   * for steps far ahead, and tries the creator's actions */
  raw a, b;
  raw_connect(&a, port);
  raw_connect(&b, port);
  gk_wire_msg cr;
  memset(&cr, 0, sizeof(cr));
  cr.type = GK_MSG_CREATE_ROOM;
  cr.u.create_room.max_players = 2;
  snprintf(cr.u.create_room.genre, sizeof(cr.u.create_room.genre), "survivors");
  raw_send_msg(&a, &cr);
  raw_expect(&a, GK_MSG_ROOM_CREATED, 3000);
  memset(&join, 0, sizeof(join));
  join.type = GK_MSG_JOIN_ROOM;
  memcpy(join.u.room.code, a.last[GK_MSG_ROOM_CREATED].u.room.code,
         sizeof(join.u.room.code));
  raw_send_msg(&b, &join);
  raw_expect(&b, GK_MSG_JOINED, 3000);
  cr_assert_eq(b.last[GK_MSG_JOINED].u.joined.slot, 1);
  gk_wire_msg start;
  memset(&start, 0, sizeof(start));
  start.type = GK_MSG_START_MATCH;
  raw_send_msg(&b, &start); /* not the creator: refused */
  raw_expect(&b, GK_MSG_ERROR, 3000);
  cr_assert_eq(b.last[GK_MSG_ERROR].u.error.code, GK_EPERM);
  raw_send_msg(&a, &start);
  raw_expect(&a, GK_MSG_MATCH_START, 3000);
  raw_expect(&b, GK_MSG_MATCH_START, 3000);
  send_input(&b, 0, 3, 1);                 /* the creator's slot */
  send_input(&b, 1, UINT64_C(1) << 40, 1); /* far in the future */
  gk_wire_msg rm;
  memset(&rm, 0, sizeof(rm));
  rm.type = GK_MSG_REMOVE_PLAYER;
  rm.u.remove.slot = 0;
  rm.u.remove.step = GK_WIRE_STEP_ASAP;
  raw_send_msg(&b, &rm); /* not the creator */
  raw_pump(&b, 300);
  raw_pump(&a, 50);

  /* a connect flood: more connections than limits.peers leaves room for */
  ENetHost *flood = enet_host_create(NULL, 64, 2, 0, 0);
  cr_assert_not_null(flood);
  ENetAddress addr;
  enet_address_set_host(&addr, "127.0.0.1");
  addr.port = port;
  for (int i = 0; i < 64; i++) enet_host_connect(flood, &addr, 2, 0);
  int up = 0;
  ENetEvent ev;
  for (int t = 0; t < 300; t++) /* bounded: 300 * 5 ms */
    while (enet_host_service(flood, &ev, 5) > 0)
      if (ev.type == ENET_EVENT_TYPE_CONNECT) up++;
  cr_assert_lt(up, 64, "every flood connection was accepted");
  enet_host_destroy(flood);

  /* the bot rooms were not touched */
  char codes[5][17];
  uint64_t hashes[5];
  e2e_check_bot(&bot, 5, codes, hashes);
  raw_close(&a);
  raw_close(&b);
  raw_close(&o);
  enet_deinitialize();
  e2e_stop_server(&srv);

  cr_assert_geq(e2e_stat(&srv, "stopped", "drop_malformed"), 3);
  cr_assert_geq(e2e_stat(&srv, "stopped", "drop_unexpected"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "drop_oversize"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "kicked"), 1);
  cr_assert_geq(e2e_stat(&srv, "stopped", "drop_session"), 3);
  cr_assert_geq(e2e_stat(&srv, "stopped", "refused"), 3);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  /* the raw room ended last (at shutdown) and its session counted each
   * offence in its own counters */
  cr_assert_eq(e2e_count_events(&srv, "match_end"), 6);
  cJSON *me = e2e_last_event(&srv, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(me, "room")->valuestring,
                   a.last[GK_MSG_ROOM_CREATED].u.room.code);
  cr_assert_geq(cJSON_GetObjectItem(me, "drop_slot")->valuedouble, 1);
  cr_assert_geq(cJSON_GetObjectItem(me, "drop_ahead")->valuedouble, 1);
  cr_assert_geq(cJSON_GetObjectItem(me, "drop_perm")->valuedouble, 1);
  cJSON_Delete(me);
  char rcodes[8][17];
  uint64_t rhashes[8];
  cr_assert_eq(e2e_verify_replays(d.replays, rcodes, rhashes, 8), 6);
  e2e_dir_remove(&d);
}

/* A one-player room of a raw client that never sends inputs and then
 * reports a wrong hash: the stall notice names it, the desync is reported
 * at that step, and with policy "end" the match ends and its replay is
 * complete. */
Test(server_e2e, a_stall_is_noticed_and_a_desync_ends_the_match_by_policy) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv;
  uint16_t port;
  /* policy end: the match ends once the desync report is out; this raw
   * client never answers the server's STATE_REQUEST, so after 300 ms */
  e2e_start_server(&srv, &d,
                   "\"desync\":{\"policy\":\"end\",\"timeout_ms\":300},"
                   "\"stall\":{\"notice_ms\":200}",
                   &port);
  cr_assert_eq(enet_initialize(), 0);
  raw a;
  raw_connect(&a, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 1;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "survivors");
  raw_send_msg(&a, &m);
  raw_expect(&a, GK_MSG_ROOM_CREATED, 3000);
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&a, &m);
  raw_expect(&a, GK_MSG_MATCH_START, 3000);
  /* no inputs: the step after the neutral input-delay steps waits on us */
  raw_expect(&a, GK_MSG_STALL, 5000);
  cr_assert_eq(a.last[GK_MSG_STALL].u.stall.awaited, 1u);
  uint64_t stalled = a.last[GK_MSG_STALL].u.stall.step;
  cr_assert_gt(stalled, 0);
  /* a wrong hash for step 0, which the server has run */
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_HASH;
  m.u.hash.first = 0;
  m.u.hash.count = 1;
  m.u.hash.hashes[0] = 0x1234;
  raw_send_msg(&a, &m);
  raw_expect(&a, GK_MSG_DESYNC, 3000);
  cr_assert_eq(a.last[GK_MSG_DESYNC].u.desync.step, 0);
  cr_assert_eq(a.last[GK_MSG_DESYNC].u.desync.player, 0);
  cr_assert_eq(a.last[GK_MSG_DESYNC].u.desync.peer_hash, 0x1234);
  raw_expect(&a, GK_MSG_MATCH_END, 3000);
  cr_assert_eq(a.last[GK_MSG_MATCH_END].u.match_end.reason, GK_WIRE_END_DESYNC);
  raw_close(&a);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_geq(e2e_count_events(&srv, "stall"), 1);
  cJSON *ds = e2e_last_event(&srv, "desync");
  cr_assert_not_null(ds);
  cr_assert_eq(cJSON_GetObjectItem(ds, "step")->valuedouble, 0);
  cr_assert_str_eq(cJSON_GetObjectItem(ds, "peer_hash")->valuestring,
                   "0000000000001234");
  cJSON_Delete(ds);
  cJSON *me = e2e_last_event(&srv, "match_end");
  cr_assert_str_eq(cJSON_GetObjectItem(me, "reason")->valuestring, "desync");
  cJSON_Delete(me);
  char codes[2][17];
  uint64_t hashes[2];
  cr_assert_eq(e2e_verify_replays(d.replays, codes, hashes, 2), 1);
  e2e_dir_remove(&d);
}

/* CREATE_ROOM, then the ERROR (or ROOM_CREATED) it gets. */
static gk_wire_msg create_room(raw *c, const char *genre, int max_players,
                               int delay, const char *options) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = (uint8_t)max_players;
  m.u.create_room.input_delay = (uint8_t)delay;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "%s", genre);
  snprintf(m.u.create_room.config, sizeof(m.u.create_room.config), "%s",
           options);
  c->seen[GK_MSG_ERROR] = c->seen[GK_MSG_ROOM_CREATED] = 0;
  raw_send_msg(c, &m);
  for (int waited = 0;
       waited < 3000 && !c->seen[GK_MSG_ERROR] && !c->seen[GK_MSG_ROOM_CREATED];
       waited += 20)
    raw_pump(c, 20);
  cr_assert(c->seen[GK_MSG_ERROR] || c->seen[GK_MSG_ROOM_CREATED],
            "no answer to CREATE_ROOM");
  return c->seen[GK_MSG_ERROR] ? c->last[GK_MSG_ERROR]
                               : c->last[GK_MSG_ROOM_CREATED];
}

/* A CREATE_ROOM on a fresh connection, refused with `code`: its ERROR has
 * the whole text or none (an ENet reply before admission is no larger
 * than its request), the create_refused record has the whole text with
 * `why` in it, and the connection is closed after the ERROR. */
static void refused_create(const e2e_proc *srv, uint16_t port,
                           const char *genre, int players, int delay,
                           const char *options, int code, const char *why) {
  raw c;
  raw_connect(&c, port);
  int before = e2e_count_events(srv, "create_refused");
  gk_wire_msg r = create_room(&c, genre, players, delay, options);
  cr_assert_eq(r.type, GK_MSG_ERROR, "%s %s: created", genre, options);
  cr_assert_eq(r.u.error.code, code, "%s %s: %s", genre, options,
               gk_err_name(r.u.error.code));
  cr_assert(e2e_wait_events(srv, "create_refused", before + 1, 3000));
  cJSON *l = e2e_last_event(srv, "create_refused");
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(l, "reason"));
  cr_assert(text && strstr(text, why), "%s: %s", why, text ? text : "-");
  cr_assert(r.u.error.text[0] == '\0' || strcmp(r.u.error.text, text) == 0,
            "a cut text: %s", r.u.error.text);
  cJSON_Delete(l);
  for (int i = 0; i < 50 && !c.disconnected; i++) raw_pump(&c, 20);
  cr_assert(c.disconnected, "%s: the refused connection is kept", why);
  raw_close(&c);
}

Test(server_e2e, room_requests_outside_the_limits_are_refused_with_a_reason) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv;
  uint16_t port;
  e2e_start_server(&srv, &d,
                   "\"limits\":{\"rooms\":1,\"players_per_room\":2,"
                   "\"lobby_timeout_ms\":1000},"
                   "\"lockstep\":{\"input_delay\":2,\"input_delay_max\":5}",
                   &port);
  cr_assert_eq(enet_initialize(), 0);
  refused_create(&srv, port, "chess", 2, 0, "", GK_ENOTFOUND, "chess");
  refused_create(&srv, port, "survivors", 3, 0, "", GK_ERANGE, "max_players");
  refused_create(&srv, port, "survivors", 2, 9, "", GK_ERANGE, "input_delay");
  refused_create(&srv, port, "survivors", 2, 0, "{\"max_enemies\":0}",
                 GK_ERANGE, "options.max_enemies");
  refused_create(&srv, port, "survivors", 2, 0, "{\"max_enemies\":", GK_EPARSE,
                 "");
  raw a, b;
  raw_connect(&a, port);
  raw_connect(&b, port);
  gk_wire_msg r = create_room(&a, "survivors", 2, 0, "{\"max_enemies\":50}");
  cr_assert_eq(r.type, GK_MSG_ROOM_CREATED);
  r = create_room(&b, "survivors", 2, 0, "");
  cr_assert_eq(r.u.error.code, GK_EFULL, "%s", r.u.error.text);
  /* nobody starts it: the lobby times out and says so */
  a.seen[GK_MSG_ERROR] = 0;
  raw_expect(&a, GK_MSG_ERROR, 10000);
  cr_assert_eq(a.last[GK_MSG_ERROR].u.error.code, GK_ECLOSED);
  cr_assert(strstr(a.last[GK_MSG_ERROR].u.error.text, "timed out"));
  /* the slot is free again */
  r = create_room(&a, "survivors", 2, 0, "");
  cr_assert_eq(r.type, GK_MSG_ROOM_CREATED);
  /* b, refused, was closed */
  for (int i = 0; i < 150 && !b.disconnected; i++) raw_pump(&b, 20);
  cr_assert(b.disconnected, "a refused connection was kept");
  raw_close(&a);
  raw_close(&b);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_geq(e2e_stat(&srv, "stopped", "refused"), 6);
  cr_assert_eq(e2e_count_events(&srv, "room_created"), 2);
  e2e_dir_remove(&d);
}

Test(server_e2e, bots_over_a_lossy_slow_link_still_agree) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  char server[64];
  snprintf(server, sizeof(server), "127.0.0.1:%u", (unsigned)port);
  char *argv[] = {(char *)GK_BOT_BIN,  (char *)"--server",  server,
                  (char *)"--genre",   (char *)"survivors", (char *)"--rooms",
                  (char *)"2",         (char *)"--players", (char *)"3",
                  (char *)"--steps",   (char *)"360",       (char *)"--loss",
                  (char *)"0.05",      (char *)"--latency", (char *)"30",
                  (char *)"--timeout", (char *)"60",        NULL};
  e2e_spawn(&bot, &d, "bot", argv);
  char codes[2][17];
  uint64_t hashes[2];
  e2e_check_bot(&bot, 2, codes, hashes);
  cJSON *sum = e2e_read_json(bot.out);
  const cJSON *f = cJSON_GetObjectItem(sum, "faults");
  cr_assert(cJSON_IsObject(f), "no fault relay in the summary");
  /* The relay really dropped about 5% of what it saw (seeded; thousands of
   * datagrams), and carried the rest: counts, not times, so the test
   * cannot depend on the machine's speed. */
  double seen = cJSON_GetObjectItem(f, "datagrams")->valuedouble;
  double lost = cJSON_GetObjectItem(f, "lost")->valuedouble;
  double fwd = cJSON_GetObjectItem(f, "forwarded")->valuedouble;
  cr_assert_gt(seen, 1000);
  cr_assert(lost > seen * 0.02 && lost < seen * 0.10, "lost %.0f of %.0f", lost,
            seen);
  cr_assert_gt(fwd, seen * 0.8);
  cJSON_Delete(sum);
  e2e_stop_server(&srv);
  char rcodes[4][17];
  uint64_t rhashes[4];
  cr_assert_eq(e2e_verify_replays(d.replays, rcodes, rhashes, 4), 2);
  e2e_dir_remove(&d);
}

/* Prediction (docs/PROTOCOL.md): survivors predicts by default; at a
 * 100 ms round trip gk-bot --predict sees its input in the head within
 * the delay and 2 step periods, nobody desyncs and the replay verifies. */
Test(server_e2e, predicting_bots_at_100_ms_rtt_see_their_input_at_once) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  char server[64];
  snprintf(server, sizeof(server), "127.0.0.1:%u", (unsigned)port);
  char *argv[] = {(char *)GK_BOT_BIN,
                  (char *)"--server",
                  server,
                  (char *)"--genre",
                  (char *)"survivors",
                  (char *)"--rooms",
                  (char *)"1",
                  (char *)"--players",
                  (char *)"2",
                  (char *)"--steps",
                  (char *)"600",
                  (char *)"--latency",
                  (char *)"50",
                  (char *)"--predict",
                  (char *)"--input-delay",
                  (char *)"6",
                  (char *)"--timeout",
                  (char *)"60",
                  NULL};
  e2e_spawn(&bot, &d, "bot", argv);
  char codes[1][17];
  uint64_t hashes[1];
  e2e_check_bot(&bot, 1, codes, hashes);
  cJSON *start = e2e_last_event(&srv, "match_start");
  cr_assert_not_null(start);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(start, "prediction")));
  double delay = cJSON_GetObjectItem(start, "input_delay")->valuedouble;
  cJSON_Delete(start);
  /* The delay is the creator's, 6 steps (50 ms), not "auto": an auto delay
   * covers the round trip's jitter as measured at the start, and a loaded
   * machine (a sanitizer, tests beside) can measure enough of it that the
   * delay alone reaches the round trip, which leaves prediction nothing to
   * show. The room tests check the auto delay with prediction. */
  cr_assert_eq(delay, 6);
  double step_us = 1e6 / strtod(E2E_STEP_HZ, NULL);
  cJSON *sum = e2e_read_json(bot.out);
  const cJSON *lat = cJSON_GetObjectItem(sum, "display_latency_us");
  const cJSON *conf = cJSON_GetObjectItem(sum, "confirm_latency_us");
  const cJSON *pr = cJSON_GetObjectItem(sum, "prediction");
  cr_assert(cJSON_IsObject(lat) && cJSON_IsObject(conf) && cJSON_IsObject(pr));
  double p50 = cJSON_GetObjectItem(lat, "p50")->valuedouble;
  double c50 = cJSON_GetObjectItem(conf, "p50")->valuedouble;
  cr_log_info("display p50 %.0f us, confirm p50 %.0f us", p50, c50);
  cr_assert_leq(p50, (delay + 2) * step_us, "p50 %.0f us at delay %.0f", p50,
                delay);
  cr_assert_lt(p50, 100000, "p50 %.0f us: not before the round trip", p50);
  cr_assert_lt(p50 + 3 * step_us, c50,
               "p50 %.0f us, confirmed at %.0f us: before the confirmation",
               p50, c50);
  cr_assert_gt(cJSON_GetObjectItem(pr, "rollbacks")->valuedouble, 0);
  cr_assert_leq(cJSON_GetObjectItem(pr, "resim_per_frame_p99")->valuedouble, 8);
  cJSON_Delete(sum);
  e2e_stop_server(&srv);
  char rcodes[2][17];
  uint64_t rhashes[2];
  cr_assert_eq(e2e_verify_replays(d.replays, rcodes, rhashes, 2), 1);
  e2e_dir_remove(&d);
}

Test(server_e2e, a_second_signal_finalises_at_once_and_still_exits_0) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  e2e_start_bot(&bot, &d, "bot", port, "2", "2", "1000000");
  for (int waited = 0; e2e_count_events(&srv, "match_start") < 2;
       waited += 20) {
    cr_assert_lt(waited, 20000, "the matches did not start");
    e2e_sleep_ms(20);
  }
  e2e_sleep_ms(300);
  kill(srv.pid, SIGSTOP); /* both signals arrive together */
  kill(srv.pid, SIGTERM);
  kill(srv.pid, SIGINT);
  kill(srv.pid, SIGCONT);
  cr_assert(e2e_wait(&srv, 10000), "gk-server did not exit");
  cr_assert_eq(srv.status, 0);
  cr_assert_eq(e2e_count_events(&srv, "shutdown_forced"), 1);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_written"), 2);
  char codes[4][17];
  uint64_t hashes[4];
  cr_assert_eq(e2e_verify_replays(d.replays, codes, hashes, 4), 2);
  cr_assert(e2e_wait(&bot, 20000) || (e2e_kill(&bot), 0),
            "gk-bot did not stop");
  e2e_dir_remove(&d);
}

/* --- late join ---------------------------------------------------------------
 */

Test(server_e2e, bots_with_a_late_joiner_agree_and_every_replay_verifies) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  const char *extra[] = {"--late-join", "200", NULL};
  e2e_start_bot_x(&bot, &d, "bot", port, "3", "2", "600", extra);
  char codes[3][17];
  uint64_t hashes[3];
  cr_assert_eq(e2e_check_bot(&bot, 3, codes, hashes), 3);
  cJSON *sum = e2e_read_json(bot.out);
  const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
  for (const cJSON *r = res ? res->child : NULL; r; r = r->next) {
    const cJSON *lj = cJSON_GetObjectItem(r, "late_joins");
    cr_assert_eq(cJSON_GetArraySize(lj), 1, "a room without its late joiner");
    const cJSON *e = cJSON_GetArrayItem(lj, 0);
    cr_assert_eq(cJSON_GetObjectItem(e, "slot")->valuedouble, 2);
    cr_assert_geq(cJSON_GetObjectItem(e, "snapshot_step")->valuedouble, 200);
    cr_assert_gt(cJSON_GetObjectItem(e, "snapshot_bytes")->valuedouble, 0);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "resume_ms")),
              "the late joiner never resumed sampling");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "player_hashes")), 3,
                 "the joiner's hash is compared too");
  }
  cJSON_Delete(sum);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "player_joined_late"), 3);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  char rcodes[8][17];
  uint64_t rhashes[8];
  cr_assert_eq(e2e_verify_replays(d.replays, rcodes, rhashes, 8), 3);
  e2e_dir_remove(&d);
}
