/* test_e2e_rejoin.c: reconnect, rejoin and spectators through the real
 * binaries on 127.0.0.1: gk-server with replays on and slots held for
 * reconnect.hold_ms, gk-bot with --drop and --spectators, every replay
 * verified by the library and by gk-replay.
 *
 * One case is a table row (e2e_case): the server's extra config, gk-bot's
 * extra arguments, and what its summary must then say per room. Adding a
 * gk-bot option to the run is one more pair of arguments in a row and, if
 * it adds to the summary, one more check in check_room. With --late-join
 * (late_step), `gk-replay info` of every replay must list the join at the
 * step of the joiner's snapshot. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "gk_token.h"

#define ROOMS 2
#define EXTRA_MAX 16

typedef struct e2e_case {
  const char *server;          /* more top-level config members */
  const char *bot[EXTRA_MAX];  /* more gk-bot arguments, NULL-ended */
  const char *players, *steps; /* gk-bot's --players, --steps */
  uint32_t drop_slot;          /* the --drop row: slot and step */
  uint64_t drop_step;
  uint32_t spectators; /* --spectators */
  uint64_t late_step;  /* --late-join (0: none) */
  int admitted; /* token mode: tokens the server admitted (0: open mode) */
} e2e_case;

/* With --late-join: the room's one late joiner took the slot after the
 * players' from a snapshot at or after late_step, and resumed sampling.
 * Returns the snapshot's step (the step of the join), or 0 without. */
static double check_late(const cJSON *room, const e2e_case *c,
                         const char *all) {
  const cJSON *lj = cJSON_GetObjectItem(room, "late_joins");
  if (c->late_step == 0) {
    cr_assert_null(lj, "late_joins without --late-join: %s", all);
    return 0;
  }
  cr_assert_eq(cJSON_GetArraySize(lj), 1, "late_joins: %s", all);
  const cJSON *e = cJSON_GetArrayItem(lj, 0);
  cr_assert_eq(cJSON_GetObjectItem(e, "slot")->valuedouble, atoi(c->players),
               "%s", all);
  double at = cJSON_GetObjectItem(e, "snapshot_step")->valuedouble;
  cr_assert_geq(at, (double)c->late_step, "%s", all);
  cr_assert_gt(cJSON_GetObjectItem(e, "snapshot_bytes")->valuedouble, 0);
  const cJSON *ms = cJSON_GetObjectItem(e, "resume_ms");
  cr_assert(cJSON_IsNumber(ms) && ms->valuedouble > 0, "resume_ms: %s", all);
  /* every player's final hash, the joiner's included, and they agree */
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(room, "player_hashes")),
               atoi(c->players) + 1, "%s", all);
  return at;
}

/* What the summary says of one room: one rejoin of the dropped slot from
 * a snapshot at or after its drop step, resumed; every spectator there,
 * agreeing with the players; the late joiner, if any; the players agree;
 * no desync. */
static void check_room(const cJSON *room, const e2e_case *c, const char *all) {
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(room, "agree")), "%s", all);
  const cJSON *rj = cJSON_GetObjectItem(room, "rejoins");
  cr_assert_eq(cJSON_GetArraySize(rj), 1, "rejoins: %s", all);
  const cJSON *e = cJSON_GetArrayItem(rj, 0);
  cr_assert_eq(cJSON_GetObjectItem(e, "slot")->valuedouble, c->drop_slot);
  cr_assert_geq(cJSON_GetObjectItem(e, "snapshot_step")->valuedouble,
                (double)c->drop_step, "%s", all);
  cr_assert_gt(cJSON_GetObjectItem(e, "snapshot_bytes")->valuedouble, 0);
  const cJSON *ms = cJSON_GetObjectItem(e, "resume_ms");
  cr_assert(cJSON_IsNumber(ms) && ms->valuedouble > 0, "resume_ms: %s", all);
  const cJSON *sp = cJSON_GetObjectItem(room, "spectators");
  cr_assert_eq(cJSON_GetObjectItem(sp, "count")->valuedouble, c->spectators,
               "%s", all);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(sp, "agree")), "%s", all);
  cr_assert_eq(cJSON_GetObjectItem(room, "desyncs")->valuedouble, 0);
}

/* `gk-replay info --json` (the real binary) of every replay in dir: the
 * room's code from its origin, and its joins: exactly one, of the slot
 * after the players', at the step the summary (`sum`) gave that room's
 * late joiner. Returns the replays read. */
static int check_replay_joins(const char *dir, const cJSON *sum,
                              const e2e_case *c) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 4, ".gkr") != 0) continue;
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "'%s' info --json '%s/%s'", GK_REPLAY_BIN, dir,
             e->d_name);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    cr_assert_eq(pclose(p), 0, "gk-replay info %s: %s", e->d_name, out);
    cJSON *info = cJSON_Parse(out);
    cr_assert_not_null(info, "gk-replay info: not JSON: %s", out);
    const char *origin =
        cJSON_GetStringValue(cJSON_GetObjectItem(info, "origin"));
    const char *code = origin ? strstr(origin, "room ") : NULL;
    cr_assert_not_null(code, "%s", out);
    double at = -1;
    const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
    for (const cJSON *r = res->child; r != NULL; r = r->next)
      if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "code")),
                 code + 5) == 0)
        at = check_late(r, c, out);
    cr_assert_geq(at, (double)c->late_step, "no room for %s", out);
    const cJSON *joins = cJSON_GetObjectItem(info, "joins");
    cr_assert_eq(cJSON_GetArraySize(joins), 1, "joins: %s", out);
    const cJSON *j = cJSON_GetArrayItem(joins, 0);
    cr_assert_eq(cJSON_GetObjectItem(j, "slot")->valuedouble, atoi(c->players),
                 "%s", out);
    cr_assert_eq(cJSON_GetObjectItem(j, "step")->valuedouble, at, "%s", out);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(info, "removals")), 0,
                 "%s", out);
    cJSON_Delete(info);
    n++;
  }
  closedir(d);
  return n;
}

/* Runs a case: the server, one gk-bot of ROOMS rooms, its summary, the
 * server's log and the replays. */
static void run_case(const e2e_case *c) {
  e2e_dir d;
  e2e_dir_make(&d);
  char server[1024];
  snprintf(server, sizeof server, "\"reconnect\":{\"hold_ms\":10000}%s%s",
           c->server ? "," : "", c->server ? c->server : "");
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server(&srv, &d, server, &port);
  char rooms[8];
  snprintf(rooms, sizeof rooms, "%d", ROOMS);
  e2e_start_bot_x(&bot, &d, "bot", port, rooms, c->players, c->steps, c->bot);
  char codes[ROOMS][17];
  uint64_t hashes[ROOMS];
  cr_assert_eq(e2e_check_bot(&bot, ROOMS, codes, hashes), ROOMS);

  cJSON *sum = e2e_read_json(bot.out);
  char *all = cJSON_PrintUnformatted(sum);
  const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
  for (const cJSON *r = res->child; r != NULL; r = r->next) {
    check_room(r, c, all);
    check_late(r, c, all);
  }
  cJSON_free(all);

  e2e_stop_server(&srv);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  cr_assert_eq(e2e_count_events(&srv, "spectator_desync"), 0);
  cr_assert_eq(e2e_count_events(&srv, "player_rejoined"), ROOMS);
  cr_assert_eq(e2e_count_events(&srv, "spectator_joined"),
               ROOMS * (int)c->spectators);
  cr_assert_eq(e2e_count_events(&srv, "player_joined_late"),
               c->late_step ? ROOMS : 0);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_written"), ROOMS);
  if (c->admitted)
    cr_assert_eq(e2e_stat(&srv, "stopped", "auth_admitted"), c->admitted);
  /* every replay verifies (library and gk-replay), and ends on the hash
   * the bots ended on */
  char rcodes[ROOMS * 2][17];
  uint64_t rhashes[ROOMS * 2];
  int nr = e2e_verify_replays(d.replays, rcodes, rhashes, ROOMS * 2);
  cr_assert_eq(nr, ROOMS);
  for (int i = 0; i < ROOMS; i++) {
    int found = 0;
    for (int j = 0; j < nr; j++)
      if (strcmp(codes[i], rcodes[j]) == 0) {
        found = 1;
        cr_assert_eq(hashes[i], rhashes[j], "room %s", codes[i]);
      }
    cr_assert(found, "no replay for room %s", codes[i]);
  }
  if (c->late_step) cr_assert_eq(check_replay_joins(d.replays, sum, c), ROOMS);
  cJSON_Delete(sum);
  e2e_dir_remove(&d);
}

static e2e_case survivors_case(void) {
  return (e2e_case){.bot = {"--drop", "1:300:1500", "--spectators", "2"},
                    .players = "3",
                    .steps = "960",
                    .drop_slot = 1,
                    .drop_step = 300,
                    .spectators = 2};
}

Test(server_e2e_rejoin,
     a_player_dropped_at_300_rejoins_and_spectators_agree_in_every_room,
     .timeout = 120) {
  e2e_case c = survivors_case();
  run_case(&c);
}

/* The survivors case with one more player per room joining at step 600
 * (after the drop at 300 and the spectators at 240): --drop, --late-join
 * and --spectators together. */
static e2e_case late_case(void) {
  e2e_case c = survivors_case();
  c.bot[4] = "--late-join";
  c.bot[5] = "600";
  c.late_step = 600;
  return c;
}

Test(server_e2e_rejoin,
     a_drop_a_late_join_and_spectators_together_agree_and_replays_list_the_join,
     .timeout = 120) {
  e2e_case c = late_case();
  run_case(&c);
}

/* Runs c in token mode: a fresh key, the server's auth section, --key
 * appended to gk-bot's arguments; the server must have admitted
 * per_room tokens in each room. */
static void run_token_case(e2e_case c, int per_room) {
  e2e_dir keys;
  char key_path[300], err[256], server[600];
  e2e_dir_make(&keys);
  snprintf(key_path, sizeof key_path, "%s/server.key", keys.path);
  cr_assert_eq(gk_token_key_write(key_path, err, sizeof err), 0, "%s", err);
  snprintf(server, sizeof server,
           "\"auth\":{\"mode\":\"token\",\"key_file\":\"%s\"}", key_path);
  c.server = server;
  size_t n = 0;
  while (c.bot[n] != NULL) n++;
  cr_assert_lt(n + 2, EXTRA_MAX);
  c.bot[n] = "--key";
  c.bot[n + 1] = key_path;
  c.admitted = ROOMS * per_room;
  run_case(&c);
  e2e_dir_remove(&keys);
}

Test(server_e2e_rejoin,
     the_same_in_token_mode_with_a_fresh_token_for_each_rejoin_and_spectator,
     .timeout = 120) {
  /* per room: 3 players, 1 rejoin (a new token: the first was spent), 2
   * spectators */
  run_token_case(survivors_case(), 3 + 1 + 2);
}

Test(server_e2e_rejoin,
     drop_late_join_and_spectators_in_token_mode_with_a_token_for_the_joiner,
     .timeout = 120) {
  /* per room: 3 players, 1 rejoin, 2 spectators, 1 late joiner */
  run_token_case(late_case(), 3 + 1 + 2 + 1);
}

/* gk-bot's stderr after a run (at most cap - 1 bytes). */
static void read_err(const e2e_proc *p, char *out, size_t cap) {
  FILE *f = fopen(p->err, "r");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  out[n] = '\0';
}

Test(server_e2e_rejoin, bad_drop_and_spectator_values_are_usage_errors) {
  static const struct {
    const char *opt, *val, *says;
  } bad[] = {
      {"--drop", "1:300", "SLOT:STEP:MS"},
      {"--drop", "1:x:5", "SLOT:STEP:MS"},
      {"--drop", "5:300:100", "not a player of the room"},
      {"--drop", "1:960:100", "before the match's last step"},
      {"--drop", "1:300:600001", "600000"},
      {"--spectators", "65", "bad value"},
  };
  e2e_dir d;
  e2e_dir_make(&d);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *extra[] = {bad[i].opt, bad[i].val, NULL};
    e2e_proc bot;
    e2e_start_bot_x(&bot, &d, "usage", 9, "1", "3", "960", extra);
    cr_assert(e2e_wait(&bot, 10000), "gk-bot %s %s did not exit", bad[i].opt,
              bad[i].val);
    char err[2048];
    read_err(&bot, err, sizeof err);
    cr_assert_eq(bot.status, 2, "%s %s: exit %d", bad[i].opt, bad[i].val,
                 bot.status);
    cr_assert(strstr(err, bad[i].opt) && strstr(err, bad[i].says), "%s %s: %s",
              bad[i].opt, bad[i].val, err);
  }
  e2e_dir_remove(&d);
}
