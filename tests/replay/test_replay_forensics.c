/* test_replay_forensics.c: gk-replay dump by field path, dump
 * --state-out, diff (two state files, and a bundle directory) and
 * synctest, on the golden survivors replay. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_run.h"

#define DATA GK_SOURCE_ROOT "/tests/data"
#define GOLDEN_SV DATA "/replays/survivors-2p-seed7-3000.gkr"

#define RUN(res, ...)                                                          \
  do {                                                                         \
    const char *const argv_[] = {__VA_ARGS__, NULL};                           \
    cli_run((res), argv_);                                                     \
  } while (0)

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/gk-forensics-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void rm_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

Test(replay_forensics, dump_prints_each_field_once_by_its_path) {
  cli_result r;
  RUN(&r, "dump", "--step", "100", GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\nplayers[1].weapons[0].level: 1\n") != NULL, "%s",
            r.out);
  cr_assert(strstr(r.out, "\nplayers[0].options[2]: ") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "\nenemies[0].x: ") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "weapon_level") == NULL, "%s", r.out);
  RUN(&r, "dump", "--json", "--step", "100", GOLDEN_SV);
  cJSON *o = cJSON_Parse(r.out);
  cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "state");
  cJSON *lvl =
      cJSON_GetObjectItemCaseSensitive(st, "players[1].weapons[0].level");
  cr_assert(cJSON_IsNumber(lvl), "%s", r.out);
  cr_assert_eq(lvl->valueint, 1);
  cJSON_Delete(o);
}

Test(replay_forensics, diff_of_two_dumped_steps_names_the_fields) {
  make_dir();
  char a[128], b[128];
  snprintf(a, sizeof a, "%s/a.state", dir);
  snprintf(b, sizeof b, "%s/b.state", dir);
  cli_result r;
  RUN(&r, "dump", "--step", "100", "--state-out", a, GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s", r.err);
  RUN(&r, "dump", "--step", "101", "--state-out", b, GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s", r.err);
  RUN(&r, "diff", "--genre", "survivors", a, a);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(strstr(r.out, "0 fields differ") != NULL, "%s", r.out);
  RUN(&r, "diff", "--genre", "survivors", "--max", "2", a, b);
  cr_assert_eq(r.code, 1, "%s", r.err);
  cr_assert(strncmp(r.out, "step: 101 != 102\n", 17) == 0, "%s", r.out);
  cr_assert(strstr(r.out, "more)\n") != NULL, "%s", r.out);
  RUN(&r, "diff", "--genre", "survivors", "--json", a, b);
  cJSON *o = cJSON_Parse(r.out);
  cr_assert_not_null(o, "%s", r.out);
  cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "fields"), 0);
  cr_assert_str_eq(cJSON_GetObjectItem(f, "path")->valuestring, "step");
  cJSON_Delete(o);
  /* a bundle: the replay header gives the genre and config */
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cp %s %s/replay.gkr && mv %s %s/referee.state && mv %s "
           "%s/peer.state",
           GOLDEN_SV, dir, a, dir, b, dir);
  cr_assert_eq(system(cmd), 0);
  RUN(&r, "diff", dir);
  cr_assert_eq(r.code, 1, "%s", r.err);
  cr_assert(strstr(r.out, "play_steps: 101 != 102\n") != NULL, "%s", r.out);
  /* a truncated peer state: a clear error naming the side */
  snprintf(cmd, sizeof cmd, "truncate -s 50 %s/peer.state", dir);
  cr_assert_eq(system(cmd), 0);
  RUN(&r, "diff", dir);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "b: unreadable state") != NULL, "%s", r.err);
  RUN(&r, "diff", "--genre", "nope", a, b);
  cr_assert_eq(r.code, 2);
  RUN(&r, "diff", "/nonexistent");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "not a valid replay") != NULL, "%s", r.err);
  rm_dir();
}

Test(replay_forensics, synctest_passes_for_both_genres_and_checks_usage) {
  cli_result r;
  RUN(&r, "synctest", "--genre", "survivors", "--players", "3", "--steps",
      "1200", "--every", "50");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "ok: 1200 steps, 24 checkpoints") != NULL, "%s",
            r.out);
  RUN(&r, "synctest", "--genre", "push-puzzle", "--steps", "600", "--json");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "\"ok\":true") != NULL, "%s", r.out);
  RUN(&r, "synctest", "--genre", "survivors", "--every", "0");
  cr_assert_eq(r.code, 2);
  RUN(&r, "synctest", "--steps", "10");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--genre G is required") != NULL, "%s", r.err);
}
