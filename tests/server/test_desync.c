/* test_desync.c: a desync caused on purpose against the real gk-server.
 *
 * gk-bot --perturb 1:929:players[0].kills makes slot 1's engine change
 * one field of its state after step 929 (through gk_state_patch_add and
 * gk_loop_replace, between two frames); the server's hash comparison
 * names the first step the change shows in (930) and slot 1, while a
 * room of another gk-bot on the same server plays on undisturbed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "e2e.h"
#include "gk_replay.h"

/* Every desync_report line of the server's log, in order (at most cap). */
static int reports(const e2e_proc *srv, cJSON **out, int cap) {
  FILE *f = fopen(srv->out, "r");
  cr_assert_not_null(f);
  static char line[1 << 16];
  int n = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    cJSON *j = cJSON_Parse(line);
    const cJSON *e = cJSON_GetObjectItem(j, "event");
    if (cJSON_IsString(e) && strcmp(e->valuestring, "desync_report") == 0 &&
        n < cap)
      out[n++] = j;
    else
      cJSON_Delete(j);
  }
  fclose(f);
  return n;
}

static const char *str_of(const cJSON *j, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(j, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *j, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(j, key);
  cr_assert(cJSON_IsNumber(v), "%s missing", key);
  return v->valuedouble;
}

static int file_in(const char *dir, const char *name) {
  char path[700];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0 && st.st_size > 0;
}

/* A server (`extra` config members, may be NULL), a gk-bot whose slot 1
 * changes players[0].kills after step 929, and a clean gk-bot in another
 * room, both run to their end (3 players, 1000 steps). */
static void perturbed_pair(e2e_proc *srv, e2e_proc *bad, e2e_proc *good,
                           const e2e_dir *d, const char *extra,
                           char (*codes)[17]) {
  uint16_t port = 0;
  /* players[0].kills, not health: a kill count only grows, so +1 always
   * reads back and nothing in the game brings the two runs together
   * again (a changed health did: regeneration every 60th play step, a
   * health gem capped at the maximum, or a death in both runs, in some of
   * the server's random matches). A fixed input delay: the bots' inputs,
   * so the game at step 929, do not depend on the machine's load (an
   * "auto" delay moves with it) */
  char cfg[256];
  snprintf(cfg, sizeof cfg, "\"lockstep\":{\"input_delay\":2}%s%s",
           extra ? "," : "", extra ? extra : "");
  e2e_start_server(srv, d, cfg, &port);
  const char *perturb[] = {"--perturb", "1:929:players[0].kills", NULL};
  e2e_start_bot_x(bad, d, "bad", port, "1", "3", "1000", perturb);
  e2e_start_bot(good, d, "good", port, "1", "3", "1000");
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(good, 1, codes, hashes), 1);
  cr_assert(e2e_wait(bad, 60000), "the perturbed gk-bot did not finish");
}

Test(server_desync, a_perturbed_peer_is_reported_at_the_next_step_only) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bad, good;
  char codes[1][17];
  perturbed_pair(&srv, &bad, &good, &d, NULL, codes);
  cr_assert_eq(bad.status, 1, "a desync is exit 1 (exit %d; see %s)",
               bad.status, bad.err);
  cJSON *sum = e2e_read_json(bad.out);
  cr_assert_not_null(sum);
  cr_assert_eq(cJSON_GetObjectItem(sum, "perturbed_rooms")->valuedouble, 1);
  cr_assert_eq(cJSON_GetObjectItem(sum, "rooms_completed")->valuedouble, 1);
  cJSON_Delete(sum);
  cr_assert(e2e_wait_events(&srv, "desync", 1, 5000));
  cr_assert_eq(e2e_count_events(&srv, "desync"), 1, "one report per slot");
  cJSON *ev = e2e_last_event(&srv, "desync");
  cr_assert_eq(cJSON_GetObjectItem(ev, "step")->valuedouble, 930);
  cr_assert_eq(cJSON_GetObjectItem(ev, "player")->valuedouble, 1);
  cr_assert_str_neq(cJSON_GetObjectItem(ev, "room")->valuestring, codes[0],
                    "the clean room is not the one reported");
  cJSON_Delete(ev);
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}

Test(server_desync, a_perturb_option_out_of_range_is_a_usage_error) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc bot;
  const char *bad[] = {"--perturb", "3:10:players[0].kills", NULL};
  e2e_start_bot_x(&bot, &d, "bot", 9, "1", "3", "10", bad);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  const char *worse[] = {"--perturb", "1:x:players[0].kills", NULL};
  e2e_start_bot_x(&bot, &d, "bot2", 9, "1", "3", "10", worse);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  e2e_dir_remove(&d);
}

Test(server_desync, the_report_names_the_field_and_its_bundle_reproduces_it) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bad, good, diff;
  char codes[1][17];
  perturbed_pair(&srv, &bad, &good, &d, "\"desync\":{\"policy\":\"report\"}",
                 codes);
  cr_assert(e2e_wait_events(&srv, "desync_report", 1, 10000));
  cJSON *ev[4];
  cr_assert_eq(reports(&srv, ev, 4), 1, "one report for the one desync");
  cr_assert_str_eq(str_of(ev[0], "result"), "diffed", "%s",
                   str_of(ev[0], "reason"));
  cr_assert_eq(num_of(ev[0], "step"), 930);
  cr_assert_eq(num_of(ev[0], "slot"), 1);
  cr_assert_str_eq(str_of(ev[0], "first_path"), "players[0].kills");
  cr_assert_eq(num_of(ev[0], "fields_differ"), 1, "exactly that field");
  const cJSON *f0 = cJSON_GetArrayItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(ev[0], "diff"), "fields"), 0);
  cr_assert_str_eq(str_of(f0, "path"), "players[0].kills");
  double a = num_of(f0, "a"), b = num_of(f0, "b");
  cr_assert(a - b == 1 || b - a == 1, "both values: %g and %g", a, b);
  char bundle[600];
  snprintf(bundle, sizeof bundle, "%s", str_of(ev[0], "bundle"));
  cr_assert(strstr(bundle, "-930-1") != NULL, "bundle %s", bundle);
  cr_assert(file_in(bundle, "referee.state") && file_in(bundle, "peer.state") &&
            file_in(bundle, "diff.txt") && file_in(bundle, "diff.json") &&
            file_in(bundle, "replay.gkr"));
  /* gk-replay diff on the bundle names the same field */
  char *argv[] = {(char *)GK_REPLAY_BIN, (char *)"diff", bundle, NULL};
  e2e_spawn(&diff, &d, "diff", argv);
  cr_assert(e2e_wait(&diff, 30000));
  cr_assert_eq(diff.status, 1, "the states differ");
  FILE *out = fopen(diff.out, "r");
  char text[4096] = "";
  size_t n = fread(text, 1, sizeof text - 1, out);
  text[n] = '\0';
  fclose(out);
  cr_assert(strstr(text, "players[0].kills") != NULL, "%s", text);
  /* the replay in it verifies, up to and with step 930 */
  char path[700];
  snprintf(path, sizeof path, "%s/replay.gkr", bundle);
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, path), 0, "%s", r.damage.what);
  cr_assert_eq(r.steps, 931);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, NULL, NULL, NULL, &v), GK_REPLAY_OK, "%s",
               v.message);
  gk_replay_close(&r);
  cJSON_Delete(ev[0]);
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}

/* Four rooms desync at the same step: their bundles are written side by
 * side on the thread pool, each replay cut from its own recording (the jobs
 * make no cJSON call; scripts/tsan.sh runs this under ThreadSanitizer,
 * where a parse in a job is reported). */
Test(server_desync, bundles_of_rooms_that_desync_together_are_cut_at_once) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bad;
  uint16_t port = 0;
  e2e_start_server(&srv, &d,
                   "\"desync\":{\"policy\":\"report\"},"
                   "\"lockstep\":{\"input_delay\":2}",
                   &port);
  const char *x[] = {"--perturb", "1:929:players[0].kills", NULL};
  e2e_start_bot_x(&bad, &d, "bad", port, "4", "2", "1000", x);
  cr_assert(e2e_wait(&bad, 120000), "the perturbed gk-bot did not finish");
  cr_assert(e2e_wait_events(&srv, "desync_report", 4, 20000));
  cJSON *ev[8];
  int n = reports(&srv, ev, 8);
  cr_assert_eq(n, 4, "one report per room");
  for (int i = 0; i < n; i++) {
    cr_assert_str_eq(str_of(ev[i], "result"), "diffed", "%s",
                     str_of(ev[i], "reason"));
    cr_assert_eq(num_of(ev[i], "replay_steps"), 931, "%s",
                 str_of(ev[i], "replay_note"));
    char path[700];
    snprintf(path, sizeof path, "%s/replay.gkr", str_of(ev[i], "bundle"));
    gk_replay r;
    cr_assert_eq(gk_replay_open_file(&r, path), 0, "%s", r.damage.what);
    cr_assert_eq(r.steps, 931);
    cr_assert_str_eq(r.origin, "gk-server desync bundle");
    cr_assert(r.has_lockstep && r.input_delay == 2, "the match's delay");
    gk_replay_verdict v;
    cr_assert_eq(gk_replay_verify(&r, NULL, NULL, NULL, &v), GK_REPLAY_OK, "%s",
                 v.message);
    gk_replay_close(&r);
    cJSON_Delete(ev[i]);
  }
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}

/* Bots whose perturbed peer answers STATE_REQUEST badly: results by room. */
static void faulty_bot(e2e_proc *p, const e2e_dir *d, const char *tag,
                       uint16_t port, const char *fault) {
  const char *x[] = {"--perturb", "1:929:players[0].kills", "--state-fault",
                     fault, NULL};
  e2e_start_bot_x(p, d, tag, port, "1", "2", "1000", x);
}

static int has_result(cJSON **ev, int n, const char *result, const char *in) {
  for (int i = 0; i < n; i++)
    if (strcmp(str_of(ev[i], "result"), result) == 0 &&
        strstr(str_of(ev[i], "reason"), in) != NULL &&
        file_in(str_of(ev[i], "bundle"), "referee.state") &&
        file_in(str_of(ev[i], "bundle"), "diff.txt"))
      return 1;
  return 0;
}

/* The report of a peer that said it cannot: its window, around the step. */
static void check_cannot(cJSON **ev, int n) {
  for (int i = 0; i < n; i++) {
    if (strcmp(str_of(ev[i], "result"), "cannot") != 0) continue;
    double step = num_of(ev[i], "step");
    double from = num_of(ev[i], "peer_from"), to = num_of(ev[i], "peer_to");
    cr_assert(from <= step && step <= to, "step %g, the peer keeps %g..%g",
              step, from, to);
    cr_assert(strstr(str_of(ev[i], "reason"), "no longer kept") != NULL, "%s",
              str_of(ev[i], "reason"));
    return;
  }
  cr_assert_fail("no report with result cannot");
}

Test(server_desync,
     a_peer_that_answers_garbage_cannot_or_never_gets_a_clear_report) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, corrupt, garbage, silent, cannot, good;
  uint16_t port = 0;
  /* the silent peer's room ends about 800 ms after the request */
  e2e_start_server(&srv, &d,
                   "\"desync\":{\"timeout_ms\":300},"
                   "\"lockstep\":{\"input_delay\":2}",
                   &port);
  faulty_bot(&corrupt, &d, "corrupt", port, "corrupt");
  faulty_bot(&garbage, &d, "garbage", port, "garbage");
  faulty_bot(&silent, &d, "silent", port, "silent");
  faulty_bot(&cannot, &d, "cannot", port, "cannot");
  e2e_start_bot(&good, &d, "good", port, "1", "3", "1000");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&good, 1, codes, hashes), 1,
               "another room plays on undisturbed");
  cr_assert(e2e_wait(&corrupt, 60000) && e2e_wait(&garbage, 60000) &&
            e2e_wait(&silent, 60000) && e2e_wait(&cannot, 60000));
  cr_assert_eq(corrupt.status, 1, "the corrupt peer's gk-bot exited %d",
               corrupt.status);
  cr_assert(e2e_wait_events(&srv, "desync_report", 4, 10000));
  cJSON *ev[8];
  int n = reports(&srv, ev, 8);
  cr_assert_eq(n, 4);
  cr_assert(has_result(ev, n, "garbage", "checksum"), "a corrupt chunk");
  cr_assert(has_result(ev, n, "unreadable", ""), "half a state");
  cr_assert(has_result(ev, n, "no_answer", "timeout_ms"), "no answer");
  cr_assert(has_result(ev, n, "cannot", "cannot give its state"), "cannot");
  check_cannot(ev, n);
  for (int i = 0; i < n; i++) cJSON_Delete(ev[i]);
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}

Test(server_desync, a_state_above_the_limit_is_refused_and_policy_end_ends) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, big;
  uint16_t port = 0;
  e2e_start_server(&srv, &d,
                   "\"desync\":{\"policy\":\"end\",\"max_state_bytes\":1024}",
                   &port);
  /* many enemies: a state of several KiB */
  const char *x[] = {"--perturb", "1:929:players[0].kills", "--options",
                     "{\"spawn_batch\":64,\"spawn_interval_start\":1,"
                     "\"spawn_interval_min\":1,\"player_health\":1000000}",
                     NULL};
  e2e_start_bot_x(&big, &d, "big", port, "1", "2", "3000", x);
  cr_assert(e2e_wait_events(&srv, "desync_report", 1, 30000));
  cJSON *ev = e2e_last_event(&srv, "desync_report");
  cr_assert_str_eq(str_of(ev, "result"), "too_large");
  cr_assert(strstr(str_of(ev, "reason"), "max_state_bytes") != NULL);
  cJSON_Delete(ev);
  cr_assert(e2e_wait_events(&srv, "match_end", 1, 10000));
  ev = e2e_last_event(&srv, "match_end");
  cr_assert_str_eq(str_of(ev, "reason"), "desync");
  cr_assert_lt(num_of(ev, "steps"), 3000, "the match ended early");
  cJSON_Delete(ev);
  cr_assert(e2e_wait(&big, 60000));
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}
