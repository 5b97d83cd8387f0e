/* test_replay_genres.c: gk-replay on the real genres, through the same
 * entry point as the binary: the committed golden replays verify (and a
 * fresh recording reproduces them byte for byte), a changed step input
 * fails at exactly that step, truncation at every offset and every single
 * bit flip give exit 2 or 1 with a message, and all 90 xsokoban levels
 * recorded from their published solutions verify and report solved. */
#define _DEFAULT_SOURCE /* openpty */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "fixture.h"
#include "gk_replay.h"

#define DATA GK_SOURCE_ROOT "/tests/data"
#define XSOK DATA "/push-puzzle/xsokoban"
#define GOLDEN_PP DATA "/replays/push-puzzle-xsokoban0001.gkr"
#define GOLDEN_SV DATA "/replays/survivors-2p-seed7-3000.gkr"

#define RUN(res, ...)                                                          \
  do {                                                                         \
    const char *const argv_[] = {__VA_ARGS__, NULL};                           \
    cli_run((res), argv_);                                                     \
  } while (0)

static uint8_t *slurp_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Recomputes the checksum of every block, as a forger would: the file is
 * then consistent and only a run of the genre can tell it lies. */
static void resign(uint8_t *b, size_t len) {
  size_t pos = GK_REPLAY_PREAMBLE_SIZE;
  while (pos + 20 <= len) {
    uint32_t plen = (uint32_t)b[pos + 8] | (uint32_t)b[pos + 9] << 8 |
                    (uint32_t)b[pos + 10] << 16 | (uint32_t)b[pos + 11] << 24;
    uint64_t h = gk_hash_bytes(b + pos, 12 + (size_t)plen);
    for (int i = 0; i < 8; i++)
      b[pos + 12 + plen + (size_t)i] = (uint8_t)(h >> (8 * i));
    pos += 20 + (size_t)plen;
  }
}

static int json_has(const char *out, const char *needle) {
  return strstr(out, needle) != NULL;
}

#if GK_HAVE_SURVIVORS
Test(replay_genres, the_survivors_golden_replay_verifies) {
  cli_result r;
  RUN(&r, "verify", "--json", GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(json_has(r.out, "\"status\":\"ok\""), "%s", r.out);
  cr_assert(json_has(r.out, "\"steps_verified\":3000"), "%s", r.out);
  RUN(&r, "info", "--json", GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cJSON *o = cJSON_Parse(r.out);
  cr_assert_not_null(o, "info --json prints JSON: %s", r.out);
  cJSON *sample = cJSON_GetObjectItemCaseSensitive(o, "sample");
  cJSON *players = cJSON_GetObjectItemCaseSensitive(sample, "players");
  cr_assert(cJSON_IsArray(players) && cJSON_GetArraySize(players) == 2, "%s",
            r.out);
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "seed")->valuestring,
                   "7");
  /* both players from the first step to the last: no join, no removal */
  cr_assert(json_has(r.out, "\"start_mask\":3,\"joins\":[],\"removals\":[]"),
            "%s", r.out);
  cJSON_Delete(o);
}

Test(replay_genres, recording_survivors_bots_again_gives_the_same_bytes) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/again.gkr", dir);
  cli_result r;
  RUN(&r, "record", "--genre", "survivors", "--players", "2", "--seed", "7",
      "--steps", "3000", "--out", path);
  cr_assert_eq(r.code, 0, "%s", r.err);
  size_t a, b;
  uint8_t *fresh = slurp_file(path, &a);
  uint8_t *golden = slurp_file(GOLDEN_SV, &b);
  cr_assert_eq(a, b);
  cr_assert_eq(memcmp(fresh, golden, a), 0,
               "survivors' hashes, its bot or the format changed: regenerate "
               "the golden replay only if that was intended");
  free(fresh);
  free(golden);
  unlink(path);
  rmdir(dir);
}

Test(replay_genres, a_changed_survivors_move_fails_at_exactly_that_step) {
  size_t len;
  uint8_t *bytes = slurp_file(GOLDEN_SV, &len);
  gk_replay rp;
  cr_assert_eq(gk_replay_open_bytes(&rp, bytes, len), 0);
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/forged.gkr", dir);
  const uint64_t steps[] = {500, 2999};
  for (size_t i = 0; i < 2; i++) {
    gk_replay_step s;
    cr_assert_eq(gk_replay_step_at(&rp, steps[i], &s, NULL), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, bytes, len);
    size_t at = (size_t)(s.inputs - bytes);
    if (copy[at] == 0 && copy[at + 1] == 0) {
      copy[at] = 100; /* stand still -> walk right */
    } else {          /* walk the other way */
      copy[at] = (uint8_t) - (int8_t)copy[at];
      copy[at + 1] = (uint8_t) - (int8_t)copy[at + 1];
    }
    resign(copy, len);
    cr_assert_eq(fixture_write_file(path, copy, len), 0);
    cli_result r;
    RUN(&r, "verify", path);
    cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
    char want[64];
    snprintf(want, sizeof want,
             "MISMATCH at step %llu:", (unsigned long long)steps[i]);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    free(copy);
  }
  gk_replay_close(&rp);
  free(bytes);
  unlink(path);
  rmdir(dir);
}

Test(replay_genres, a_survivors_dump_is_json_with_unique_keys) {
  cli_result r;
  RUN(&r, "dump", "--json", "--step", "100", GOLDEN_SV);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cJSON *o = cJSON_Parse(r.out);
  cr_assert_not_null(o, "%s", r.out);
  cJSON *state = cJSON_GetObjectItemCaseSensitive(o, "state");
  cr_assert(cJSON_IsObject(state));
  for (cJSON *a = state->child; a != NULL; a = a->next)
    for (cJSON *b = a->next; b != NULL; b = b->next)
      cr_assert_str_neq(a->string, b->string);
  cr_assert_eq(cJSON_GetObjectItemCaseSensitive(o, "step")->valuedouble, 100);
  cJSON_Delete(o);
  RUN(&r, "dump", "--step", "100", GOLDEN_SV);
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "state after step 100") != NULL);
}

/* Runs the binary with stderr on a pseudo-terminal; returns what it wrote
 * there (bounded) and its exit code. */
static int exec_on_pty(const char *const *argv, char *buf, size_t cap) {
  int master, slave;
  cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(slave, 2);
    close(master);
    execv(GK_REPLAY_BIN, (char *const *)argv);
    _exit(127);
  }
  close(slave);
  size_t n = 0;
  for (int i = 0; i < 100000 && n + 1 < cap; i++) {
    ssize_t got = read(master, buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* EIO once the child closed the terminal */
    n += (size_t)got;
  }
  buf[n] = '\0';
  close(master);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

Test(replay_genres, long_runs_show_progress_only_on_a_terminal) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/long.gkr", dir);
  cli_result r;
  RUN(&r, "record", "--genre", "survivors", "--players", "1", "--seed", "3",
      "--steps", "20000", "--out", path);
  cr_assert_eq(r.code, 0, "%s", r.err);
  RUN(&r, "verify", path);
  cr_assert_eq(r.code, 0, "%s", r.out);
  cr_assert_str_eq(r.err, "", "nothing extra when not a terminal");
  const char *const argv[] = {GK_REPLAY_BIN, "verify", path, NULL};
  static char tty[65536];
  cr_assert_eq(exec_on_pty(argv, tty, sizeof tty), 0);
  cr_assert(strstr(tty, "/20000 steps") != NULL, "no progress on a tty: %s",
            tty);
  unlink(path);
  rmdir(dir);
}
/* A recording cut short as a crash leaves it: `gk-replay recover` (the
 * binary) finishes it; info and verify then show where it was cut. */
Test(replay_genres, recover_finishes_a_crashed_survivors_recording) {
  size_t len;
  uint8_t *bytes = slurp_file(GOLDEN_SV, &len);
  char dir[64], tmp[128], out[128], other[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(tmp, sizeof tmp, "%s/crash.gkr.tmp", dir);
  snprintf(out, sizeof out, "%s/crash.gkr", dir);
  snprintf(other, sizeof other, "%s/elsewhere.gkr", dir);
  cr_assert_eq(fixture_write_file(tmp, bytes, len / 2), 0);
  cli_result r;
  const char *const rec[] = {"recover", tmp, NULL};
  cli_exec(&r, rec);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "recovered 1280 steps (verified), cut short") != NULL,
            "%s", r.out);
  RUN(&r, "info", out);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(strstr(r.out, "cut short: at step 1280") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "GK_ETRUNC") != NULL, "%s", r.out);
  RUN(&r, "info", "--json", out);
  cr_assert(json_has(r.out, "\"cut_short\":{\"step\":1280"), "%s", r.out);
  RUN(&r, "verify", out);
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "1280 steps verified") && strstr(r.out, "cut short"),
            "%s", r.out);
  RUN(&r, "recover", "--json", tmp, "--out", other);
  cr_assert_eq(r.code, 0);
  cr_assert(json_has(r.out, "\"status\":\"ok\",\"steps\":1280"), "%s", r.out);
  /* usage: no .tmp ending without --out, the same file twice, garbage */
  RUN(&r, "recover", out);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--out") != NULL, "%s", r.err);
  RUN(&r, "recover", tmp, "--out", tmp);
  cr_assert_eq(r.code, 2);
  cr_assert_eq(fixture_write_file(tmp, "GKR?", 4), 0);
  RUN(&r, "recover", tmp);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "NOT RECOVERED") != NULL, "%s", r.out);
  unlink(tmp);
  unlink(out);
  unlink(other);
  rmdir(dir);
  free(bytes);
}
#endif /* GK_HAVE_SURVIVORS */

#if GK_HAVE_PUSH_PUZZLE
Test(replay_genres,
     verify_of_several_files_reports_each_and_exits_with_the_worst) {
  char dir[64], bad[128], cut[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(bad, sizeof bad, "%s/bad.gkr", dir);
  snprintf(cut, sizeof cut, "%s/cut.gkr", dir);
  size_t len;
  uint8_t *bytes = slurp_file(GOLDEN_PP, &len);
  cr_assert_eq(fixture_write_file(cut, bytes, len - 30), 0);
  bytes[len - 100] ^= 1; /* inside the steps block */
  cr_assert_eq(fixture_write_file(bad, bytes, len), 0);
  cli_result r;
  RUN(&r, "verify", GOLDEN_PP, cut);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "xsokoban0001.gkr: ok") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "cut.gkr: INVALID: offset ") != NULL, "%s", r.out);
  RUN(&r, "verify", "--json", bad, GOLDEN_PP);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "\"code\":\"GK_ECORRUPT\"") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "\"status\":\"ok\"") != NULL, "%s", r.out);
  free(bytes);
  unlink(bad);
  unlink(cut);
  rmdir(dir);
}
#endif

/* ------------------------------------------------------------------ */

#if GK_HAVE_PUSH_PUZZLE
Test(replay_genres, the_push_puzzle_golden_replay_verifies_and_is_solved) {
  cli_result r;
  RUN(&r, "verify", GOLDEN_PP);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "ok: 230 steps verified") != NULL, "%s", r.out);
  RUN(&r, "info", "--json", GOLDEN_PP);
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(json_has(r.out, "\"solved\":true"), "%s", r.out);
  cr_assert(json_has(r.out, "\"moves\":230"), "%s", r.out);
  cr_assert(json_has(r.out, "\"pushes\":97"), "%s", r.out);
}

Test(replay_genres,
     recording_the_golden_push_puzzle_level_again_gives_the_same_bytes) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/again.gkr", dir);
  cli_result r;
  RUN(&r, "record", "--genre", "push-puzzle", "--level",
      XSOK "/xsokoban0001.sok#1", "--lurd", "@" XSOK "/xsokoban0001.sol",
      "--out", path);
  cr_assert_eq(r.code, 0, "%s", r.err);
  size_t a, b;
  uint8_t *fresh = slurp_file(path, &a);
  uint8_t *golden = slurp_file(GOLDEN_PP, &b);
  cr_assert_eq(a, b);
  cr_assert_eq(memcmp(fresh, golden, a), 0,
               "push-puzzle's hashes or the format changed: regenerate the "
               "golden replay only if that was intended");
  free(fresh);
  free(golden);
  unlink(path);
  rmdir(dir);
}

Test(replay_genres, a_changed_step_input_fails_verify_at_exactly_that_step) {
  size_t len;
  uint8_t *bytes = slurp_file(GOLDEN_PP, &len);
  gk_replay rp;
  cr_assert_eq(gk_replay_open_bytes(&rp, bytes, len), 0);
  const uint64_t steps[] = {0, 17, 229};
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/forged.gkr", dir);
  for (size_t i = 0; i < 3; i++) {
    gk_replay_step s;
    cr_assert_eq(gk_replay_step_at(&rp, steps[i], &s, NULL), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, bytes, len);
    size_t at = (size_t)(s.inputs - bytes) + 1; /* the press byte */
    /* press a different direction: rotate the four direction bits */
    uint8_t p = copy[at] & 0x0f;
    copy[at] = (uint8_t)((copy[at] & ~0x0f) | (((p << 1) | (p >> 3)) & 0x0f));
    cr_assert_neq(copy[at], bytes[at]);
    resign(copy, len);
    cr_assert_eq(fixture_write_file(path, copy, len), 0);
    cli_result r;
    RUN(&r, "verify", path);
    cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
    char want[64];
    snprintf(want, sizeof want,
             "MISMATCH at step %llu:", (unsigned long long)steps[i]);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    RUN(&r, "verify", "--json", path);
    cr_assert_eq(r.code, 1);
    snprintf(want, sizeof want, "\"step\":%llu,", (unsigned long long)steps[i]);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\"expected\":\"0x") != NULL, "%s", r.out);
    free(copy);
  }
  gk_replay_close(&rp);
  free(bytes);
  unlink(path);
  rmdir(dir);
}

/* A short push-puzzle replay, recorded by the CLI, for exhaustive loops. */
static uint8_t *small_pp_replay(const char *dir, size_t *len) {
  char path[128];
  snprintf(path, sizeof path, "%s/small.gkr", dir);
  cli_result r;
  RUN(&r, "record", "--genre", "push-puzzle", "--level",
      XSOK "/xsokoban0001.sok", "--lurd", "u3l3ul", "--out", path);
  cr_assert_eq(r.code, 0, "%s", r.err);
  uint8_t *b = slurp_file(path, len);
  unlink(path);
  return b;
}

Test(replay_genres, truncation_at_every_offset_gives_exit_2_with_a_message,
     .timeout = 600) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  size_t len;
  uint8_t *bytes = small_pp_replay(dir, &len);
  snprintf(path, sizeof path, "%s/cut.gkr", dir);
  for (size_t cut = 0; cut < len; cut++) {
    cr_assert_eq(fixture_write_file(path, bytes, cut), 0);
    cli_result r;
    RUN(&r, "verify", path);
    cr_assert_eq(r.code, 2, "cut at %zu: %s", cut, r.out);
    cr_assert(strstr(r.out, "INVALID: offset ") != NULL, "cut at %zu: %s", cut,
              r.out);
  }
  free(bytes);
  unlink(path);
  rmdir(dir);
}

Test(replay_genres, every_single_bit_flip_gives_exit_2_or_1_with_a_message,
     .timeout = 600) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  size_t len;
  uint8_t *bytes = small_pp_replay(dir, &len);
  snprintf(path, sizeof path, "%s/flip.gkr", dir);
  uint8_t *copy = malloc(len);
  for (size_t i = 0; i < len; i++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, bytes, len);
      copy[i] ^= (uint8_t)(1u << bit);
      cr_assert_eq(fixture_write_file(path, copy, len), 0);
      cli_result r;
      RUN(&r, "verify", path);
      cr_assert(r.code == 2 || r.code == 1, "flip %zu.%d: exit %d", i, bit,
                r.code);
      cr_assert(strstr(r.out, r.code == 2 ? "INVALID: " : "MISMATCH at") !=
                    NULL,
                "flip %zu.%d: %s", i, bit, r.out);
    }
  }
  free(copy);
  free(bytes);
  unlink(path);
  rmdir(dir);
}

Test(replay_genres, dump_and_info_describe_a_push_puzzle_run) {
  cli_result r;
  RUN(&r, "dump", GOLDEN_PP, "--step", "3");
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(strstr(r.out, "state after step 3") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "moves: 4\n") != NULL, "%s", r.out);
  RUN(&r, "dump", GOLDEN_PP, "--step", "229", "--json");
  cr_assert_eq(r.code, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"solved\":true") != NULL, "%s", r.out);
  RUN(&r, "dump", GOLDEN_PP, "--step", "230");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "out of range") != NULL, "%s", r.err);
  RUN(&r, "info", GOLDEN_PP);
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "genre: push-puzzle") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "solved: true") != NULL, "%s", r.out);
}

Test(replay_genres, record_reports_bad_levels_and_solutions) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/x.gkr", dir);
  cli_result r;
  RUN(&r, "record", "--genre", "push-puzzle", "--level",
      XSOK "/xsokoban0001.sok#2", "--lurd", "u", "--out", path);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "has 1 level(s), not 2") != NULL, "%s", r.err);
  RUN(&r, "record", "--genre", "push-puzzle", "--level", XSOK "/missing.sok",
      "--lurd", "u", "--out", path);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "cannot open") != NULL, "%s", r.err);
  RUN(&r, "record", "--genre", "push-puzzle", "--level",
      XSOK "/xsokoban0001.sok", "--lurd", "uxq", "--out", path);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--lurd") != NULL, "%s", r.err);
  RUN(&r, "record", "--genre", "push-puzzle", "--level",
      XSOK "/xsokoban0001.sok", "--lurd", "u", "--out", "x.txt");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "must end in .gkr") != NULL, "%s", r.err);
  cr_assert_eq(access(path, F_OK), -1, "nothing is left behind");
  rmdir(dir);
}

Test(replay_genres,
     all_90_xsokoban_levels_recorded_from_their_solutions_are_solved,
     .timeout = 600) {
  char dir[64], out[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(out, sizeof out, "%s/level.gkr", dir);
  for (int n = 1; n <= 90; n++) {
    char sok[256], sol[256];
    snprintf(sok, sizeof sok, XSOK "/xsokoban%04d.sok", n);
    snprintf(sol, sizeof sol, "@" XSOK "/xsokoban%04d.sol", n);
    cli_result r;
    RUN(&r, "record", "--genre", "push-puzzle", "--level", sok, "--lurd", sol,
        "--out", out);
    cr_assert_eq(r.code, 0, "level %d: %s", n, r.err);
    RUN(&r, "verify", out);
    cr_assert_eq(r.code, 0, "level %d: %s", n, r.out);
    RUN(&r, "info", "--json", out);
    cr_assert_eq(r.code, 0, "level %d: %s", n, r.err);
    cr_assert(json_has(r.out, "\"solved\":true"), "level %d is not solved", n);
  }
  unlink(out);
  rmdir(dir);
}
#endif /* GK_HAVE_PUSH_PUZZLE */
