/* test_bots.c: seats the server plays itself (room.bots), end to end.
 *
 * The real gk-server on 127.0.0.1 port 0 and gk-bot as the one human
 * player: a room of one player and server bots plays survivors (and
 * push-puzzle) to its end with no desync, its replay verifies with the
 * library and gk-replay, and every record of a bot seat in it is the one
 * the genre's bot of that slot makes from the match seed (gk_bot_input
 * seeded as gk-replay record seeds it): the bots' input is a function of
 * the seed, in every run. admin /rooms names a bot's transport "bot" and
 * /metrics counts bot seats apart from players. Bad room.bots values get
 * their documented ERROR over a raw ENet client; a token that grants
 * fewer seats refuses the room; the only human leaving ends the match.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_http.h"
#include "e2e.h"
#include "e2e_raw.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_loop.h"
#include "gk_replay.h"
#include "gk_survivors.h"
#include "gk_token.h"

/* --- helpers ---------------------------------------------------------------
 */

/* Checks every record of the slots in `bots` in the replay at `path`: the
 * first input_delay steps are neutral, and from there each step's record
 * is the next one the genre's bot of that slot makes, seeded from the
 * replay's seed as gk_bot_input_init seeds it (the match has one input
 * delay throughout: no step announces a change). A genre's bot_answer
 * changes the records made while the referee's run asks the bot something
 * (survivors: a level-up pick), from a run as far along as the server had
 * it then: the survivors matches checked here have no spawns (BOT_SV), so
 * nobody levels up and no record is answered. Returns the records
 * checked. */
static uint64_t check_bot_records(const char *path, uint32_t bots) {
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, path), 0, "%s does not open", path);
  const gk_sim *sim = gk_genre_find(r.genre);
  cr_assert_not_null(sim, "genre %s", r.genre);
  cr_assert(r.has_lockstep, "%s has no lockstep record", path);
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  char err[256];
  cr_assert_eq(gk_replay_prepare(&r, sim, cfg, err, sizeof(err)), 0, "%s", err);
  static gk_bot_input b;
  cr_assert_eq(gk_bot_input_init(&b, sim, cfg, r.seed, r.players), 0);
  uint8_t want[GK_INPUT_SIZE_MAX], zero[GK_INPUT_SIZE_MAX] = {0};
  size_t rs = r.input_size, hint = 0;
  uint64_t checked = 0;
  for (uint64_t st = 0; st < r.steps; st++) {
    gk_replay_step s;
    cr_assert_eq(gk_replay_step_at(&r, st, &s, &hint), 0);
    cr_assert_eq(s.flags & GK_STEP_DELAY, 0,
                 "step %llu changes the input delay: pick a fixed one",
                 (unsigned long long)st);
    for (uint32_t p = 0; p < r.players; p++) {
      if ((bots >> p & 1u) == 0) continue;
      cr_assert(s.active_mask >> p & 1u, "bot slot %u inactive at %llu", p,
                (unsigned long long)st);
      const uint8_t *got = s.inputs + p * rs;
      if (st < r.input_delay) {
        cr_assert_eq(memcmp(got, zero, rs), 0, "slot %u step %llu: not neutral",
                     p, (unsigned long long)st);
        continue;
      }
      sim->bot_next(b.bots[p], want);
      /* survivors' server bots never pause (its bot_answer drops the
       * press) */
      if (strcmp(r.genre, "survivors") == 0) {
        cr_assert_eq(got[2] & GK_SV_BUTTON_PAUSE, 0, "a server bot paused");
        want[2] = (uint8_t)(want[2] & ~GK_SV_BUTTON_PAUSE);
      }
      cr_assert_eq(memcmp(got, want, rs), 0,
                   "slot %u step %llu: the recorded record is not the bot's "
                   "from the seed",
                   p, (unsigned long long)st);
      checked++;
    }
  }
  if (sim->config_free) sim->config_free(cfg);
  free(cfg);
  gk_replay_close(&r);
  return checked;
}

/* The path of the one .gkr in dir (fails unless exactly n are there). */
static void replay_paths(const char *dir, char (*out)[600], int n) {
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "ls %s/*.gkr 2>/dev/null", dir);
  FILE *f = popen(cmd, "r");
  cr_assert_not_null(f);
  int got = 0;
  char line[600];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    if (got < n) snprintf(out[got], sizeof(out[got]), "%s", line);
    got++;
  }
  pclose(f);
  cr_assert_eq(got, n, "%d replays in %s, expected %d", got, dir, n);
}

/* gk-bot with one player per room and a fixed input delay; `options` its
 * rooms' options; `late` (may be NULL) the step of --late-join. */
static void start_human(e2e_proc *bot, const e2e_dir *d, uint16_t port,
                        const char *genre, const char *rooms, const char *steps,
                        const char *options, const char *late) {
  const char *args[] = {"--genre",
                        genre,
                        "--input-delay",
                        "3",
                        "--options",
                        options,
                        late ? "--late-join" : NULL,
                        late,
                        NULL};
  e2e_start_bot_x(bot, d, "human", port, rooms, "1", steps, args);
}

/* Survivors options for matches whose bot records are checked: no spawns
 * (check_bot_records). */
#define BOT_SV "\"spawning\":false,"

/* A match of one gk-bot player and three server bots of `genre`, with
 * `options`. */
static void one_player_three_bots(const char *genre, const char *steps,
                                  const char *options) {
  admin_srv s;
  memset(&s, 0, sizeof(s));
  admin_srv_start(&s, 120, NULL);
  e2e_proc bot;
  start_human(&bot, &s.d, s.udp, genre, "1", steps, options, NULL);
  cr_assert(e2e_wait_events(&s.p, "match_start", 1, 15000), "no match_start");
  /* while it plays: /rooms lists the bots, /metrics counts them apart */
  cJSON *j = admin_get_json(&s, "/rooms");
  char *rooms = cJSON_PrintUnformatted(j);
  cJSON *room = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rooms"), 0);
  cJSON *pl = cJSON_GetObjectItem(room, "players");
  cr_assert_eq(cJSON_GetArraySize(pl), 4, "/rooms: %s", rooms);
  for (int i = 0; i < 4; i++) {
    cJSON *p = cJSON_GetArrayItem(pl, i);
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(p, "transport"));
    cr_assert_str_eq(t ? t : "null", i == 0 ? "enet" : "bot", "slot %d: %s", i,
                     rooms);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "active")), "%s", rooms);
  }
  cJSON_Delete(j);
  cJSON_free(rooms);
  char *metrics = NULL;
  cr_assert_eq(admin_http(&s, "GET", "/metrics", NULL, &metrics), 200);
  cr_assert_not_null(strstr(metrics, "\ngk_players 1\n"), "%s", metrics);
  cr_assert_not_null(strstr(metrics, "\ngk_bot_players 3\n"), "%s", metrics);
  cr_assert_not_null(strstr(metrics, "\ngk_bot_seats_total 3\n"), "%s",
                     metrics);
  free(metrics);

  cr_assert(e2e_wait(&bot, 90000), "gk-bot did not finish");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  cJSON *start = e2e_last_event(&s.p, "match_start");
  cr_assert_eq(cJSON_GetObjectItem(start, "bot_mask")->valuedouble, 14);
  cr_assert_eq(cJSON_GetObjectItem(start, "active_mask")->valuedouble, 15);
  cJSON_Delete(start);
  cr_assert(e2e_wait_events(&s.p, "replay_written", 1, 10000));
  e2e_stop_server(&s.p);
  cr_assert_eq(e2e_count_events(&s.p, "desync"), 0);
  char got[1][17];
  uint64_t ghash[1];
  cr_assert_eq(e2e_verify_replays(s.d.replays, got, ghash, 1), 1);
  cr_assert_eq(ghash[0], hashes[0], "the replay ends where the player did");
  char path[1][600];
  replay_paths(s.d.replays, path, 1);
  uint64_t n = check_bot_records(path[0], 14u);
  cr_assert_gt(n, 3 * 100, "only %llu bot records", (unsigned long long)n);
  e2e_dir_remove(&s.d);
}

/* --- the matches ---------------------------------------------------------- */

Test(server_bots, one_player_and_three_server_bots_play_survivors_to_the_end,
     .timeout = 150) {
  one_player_three_bots("survivors", "900",
                        "{" BOT_SV "\"room\":{\"bots\":3}}");
}

Test(server_bots, one_player_and_three_server_bots_play_push_puzzle,
     .timeout = 150) {
  one_player_three_bots("push-puzzle", "600", "{\"room\":{\"bots\":3}}");
}

Test(server_bots, a_bot_seats_records_are_its_seeds_in_every_run,
     .timeout = 150) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  /* two runs, one after the other, two rooms each: every room's seed is
   * its own, and every bot record is what that seed makes */
  for (int run = 0; run < 2; run++) {
    start_human(&bot, &d, port, "survivors", "2", "400",
                "{" BOT_SV "\"room\":{\"bots\":2}}", NULL);
    cr_assert(e2e_wait(&bot, 90000), "gk-bot did not finish");
    char codes[2][17];
    uint64_t hashes[2];
    cr_assert_eq(e2e_check_bot(&bot, 2, codes, hashes), 2);
  }
  cr_assert(e2e_wait_events(&srv, "replay_written", 4, 10000));
  e2e_stop_server(&srv);
  char got[4][17];
  uint64_t ghash[4];
  cr_assert_eq(e2e_verify_replays(d.replays, got, ghash, 4), 4);
  char path[4][600];
  replay_paths(d.replays, path, 4);
  for (int i = 0; i < 4; i++)
    cr_assert_gt(check_bot_records(path[i], 6u), 2 * 300);
  e2e_dir_remove(&d);
}

Test(server_bots, a_player_joins_a_running_match_of_bots_late, .timeout = 150) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, NULL, &port);
  /* gk-bot --late-join makes the room for 2 people: the creator, two bots
   * in slots 1 and 2, and the late joiner in the next fresh slot, 3 */
  start_human(&bot, &d, port, "survivors", "1", "600",
              "{" BOT_SV "\"room\":{\"bots\":2}}", "150");
  cr_assert(e2e_wait(&bot, 90000), "gk-bot did not finish");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  cJSON *j = e2e_last_event(&srv, "player_joined_late");
  cr_assert_not_null(j, "nobody joined late");
  cr_assert_eq(cJSON_GetObjectItem(j, "slot")->valuedouble, 3);
  cJSON_Delete(j);
  cr_assert(e2e_wait_events(&srv, "replay_written", 1, 10000));
  e2e_stop_server(&srv);
  char got[1][17];
  uint64_t ghash[1];
  cr_assert_eq(e2e_verify_replays(d.replays, got, ghash, 1), 1);
  char path[1][600];
  replay_paths(d.replays, path, 1);
  cr_assert_gt(check_bot_records(path[0], 6u), 2 * 500);
  e2e_dir_remove(&d);
}

Test(server_bots, the_only_player_leaving_ends_a_match_of_bots,
     .timeout = 120) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, "\"timing\":{\"peer_timeout_ms\":2500}", &port);
  start_human(&bot, &d, port, "survivors", "1", "1000000",
              "{\"room\":{\"bots\":3}}", NULL);
  cr_assert(e2e_wait_events(&srv, "match_start", 1, 15000), "no match_start");
  e2e_sleep_ms(500);
  kill(bot.pid, SIGKILL);
  cr_assert(e2e_wait(&bot, 5000));
  cr_assert(e2e_wait_events(&srv, "match_end", 1, 15000),
            "the bots played on without their player");
  cJSON *end = e2e_last_event(&srv, "match_end");
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(end, "reason")),
                   "all_left");
  cJSON_Delete(end);
  cr_assert(e2e_wait_events(&srv, "replay_written", 1, 10000));
  e2e_stop_server(&srv);
  char got[1][17];
  uint64_t ghash[1];
  cr_assert_eq(e2e_verify_replays(d.replays, got, ghash, 1), 1);
  e2e_dir_remove(&d);
}

/* --- refusals --------------------------------------------------------------
 */

/* CREATE_ROOM for `genre` with max_players and options; returns the
 * ERROR's code (0 for ROOM_CREATED) and its text in text. */
static int create(raw *c, const char *genre, uint8_t max_players,
                  const char *options, char *text, size_t cap) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = max_players;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "%s", genre);
  snprintf(m.u.create_room.config, sizeof(m.u.create_room.config), "%s",
           options);
  c->seen[GK_MSG_ERROR] = c->seen[GK_MSG_ROOM_CREATED] = 0;
  raw_send_msg(c, &m);
  for (int waited = 0; waited < 3000; waited += 20) {
    if (c->seen[GK_MSG_ERROR]) {
      snprintf(text, cap, "%s", c->last[GK_MSG_ERROR].u.error.text);
      return c->last[GK_MSG_ERROR].u.error.code;
    }
    if (c->seen[GK_MSG_ROOM_CREATED]) {
      text[0] = '\0';
      return 0;
    }
    raw_pump(c, 20);
  }
  cr_assert_fail("no answer to CREATE_ROOM %s", options);
  return 1;
}

typedef struct bad_case {
  uint8_t max_players;
  const char *options;
  int code;
  const char *text; /* the ERROR's text */
} bad_case;

Test(server_bots, bad_room_bots_values_get_their_documented_error,
     .timeout = 60) {
  static const bad_case cases[] = {
      {1, "{\"room\":{\"bots\":1.5}}", GK_EINVAL,
       "options.room.bots: must be an integer, got a fraction"},
      {1, "{\"room\":{\"bots\":\"3\"}}", GK_EINVAL,
       "options.room.bots: must be an integer, got a string"},
      {1, "{\"room\":{\"bots\":-1}}", GK_ERANGE,
       "options.room.bots: must be in 0..15, got -1"},
      {1, "{\"room\":{\"bots\":16}}", GK_ERANGE,
       "options.room.bots: must be in 0..15, got 16"},
      {1, "{\"room\":{\"bots\":1e300}}", GK_ERANGE,
       "options.room.bots: must be in 0..15, got 1e+300"},
      {2, "{\"room\":{\"bots\":7}}", GK_ERANGE,
       "options.room.bots: 7 bots and 2 seats for players make 9 players, "
       "survivors rooms take at most 8"},
      {1, "{\"room\":{\"bot\":1}}", GK_ENOTFOUND,
       "options.room.bot: unknown key (expected bots, listed, prediction, "
       "prediction_window, rematch)"},
      {1, "{\"room\":{\"rematch\":\"ab\"}}", GK_EINVAL,
       "options.room.rematch: must be a room code (1 to 16 of A-Z, 0-9)"},
      {1, "{\"room\":{\"listed\":1}}", GK_EINVAL,
       "options.room.listed: must be true or false, got a number"},
      {1, "{\"room\":3}", GK_EINVAL,
       "options.room: must be an object, got a number"},
      {1, "{\"room\":{\"bots\":1},\"room\":{\"bots\":2}}", GK_EINVAL,
       "options.room: duplicate key"},
  };
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv;
  uint16_t port;
  e2e_start_server(&srv, &d, "\"limits\":{\"creates_per_min\":1000}", &port);
  cr_assert_eq(enet_initialize(), 0);
  raw c;
  memset(&c, 0, sizeof(c));
  raw_connect(&c, port);
  char text[GK_WIRE_TEXT_MAX + 1];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const bad_case *k = &cases[i];
    int code =
        create(&c, "survivors", k->max_players, k->options, text, sizeof(text));
    cr_assert_eq(code, k->code, "%s: %s (%s)", k->options, gk_err_name(code),
                 text);
    /* the ERROR's text is whole, or left out when it is larger than the
     * request (no reply to an unadmitted ENet connection is larger); the
     * log has all of it */
    cr_assert(text[0] == '\0' || strcmp(text, k->text) == 0,
              "%s: got \"%s\", want \"%s\"", k->options, text, k->text);
    /* the refused connection is closed: the next case on a fresh one */
    for (int w = 0; w < 50 && !c.disconnected; w++) raw_pump(&c, 20);
    cr_assert(c.disconnected, "%s: the refused connection is kept", k->options);
    raw_close(&c);
    raw_connect(&c, port);
    cr_assert(e2e_wait_events(&srv, "create_refused", (int)i + 1, 3000));
    cJSON *l = e2e_last_event(&srv, "create_refused");
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(l, "reason"));
    cr_assert_str_eq(why ? why : "", k->text, "%s", k->options);
    cJSON_Delete(l);
  }
  /* room.bots 0 is a room without bots; the last one has a bot seat */
  cr_assert_eq(
      create(&c, "survivors", 1, "{\"room\":{\"bots\":0}}", text, sizeof(text)),
      0, "%s", text);
  raw_close(&c);
  memset(&c, 0, sizeof(c));
  raw_connect(&c, port);
  cr_assert_eq(create(&c, "survivors", 1,
                      "{\"duration_steps\":300,\"room\":{\"bots\":1}}", text,
                      sizeof(text)),
               0, "%s", text);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&c, &m);
  raw_expect(&c, GK_MSG_MATCH_START, 3000);
  const gk_wire_match_start *ms = &c.last[GK_MSG_MATCH_START].u.match_start;
  cr_assert_eq(ms->players, 2, "one seat for the player, one for the bot");
  cr_assert_eq(ms->active_mask, 3u);
  cr_assert_eq(ms->slot, 0);
  cr_assert_null(strstr(ms->config, "room"), "the genre gets no room key: %s",
                 ms->config);
  raw_close(&c);
  enet_deinitialize();
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "create_refused"),
               (int)(sizeof(cases) / sizeof(cases[0])));
  e2e_dir_remove(&d);
}

Test(server_bots, a_token_for_fewer_seats_refuses_the_bots, .timeout = 60) {
  e2e_dir d, keys;
  e2e_dir_make(&d);
  e2e_dir_make(&keys);
  char key_path[300], err[256], extra[600];
  snprintf(key_path, sizeof key_path, "%s/server.key", keys.path);
  cr_assert_eq(gk_token_key_write(key_path, err, sizeof err), 0, "%s", err);
  snprintf(extra, sizeof extra,
           "\"auth\":{\"mode\":\"token\",\"key_file\":\"%s\"}", key_path);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, extra, &port);
  /* gk-bot --key mints a create token for its own players (1): the room's
   * three bot seats are more than it grants */
  const char *args[] = {"--input-delay",
                        "3",
                        "--options",
                        "{\"room\":{\"bots\":3}}",
                        "--key",
                        key_path,
                        "--timeout",
                        "20",
                        NULL};
  e2e_start_bot_x(&bot, &d, "human", port, "1", "1", "300", args);
  cr_assert(e2e_wait(&bot, 30000), "gk-bot did not finish");
  cr_assert_eq(bot.status, 3, "gk-bot exit %d: the room must fail", bot.status);
  cJSON *r = e2e_last_event(&srv, "create_refused");
  cr_assert_not_null(r, "no create_refused line");
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "code")),
                   "GK_EGRANT");
  const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason"));
  cr_assert_not_null(strstr(why, "the token allows 1 players"), "%s", why);
  cJSON_Delete(r);
  e2e_stop_server(&srv);
  e2e_dir_remove(&keys);
  e2e_dir_remove(&d);
}
