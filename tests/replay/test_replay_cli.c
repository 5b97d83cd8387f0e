/* test_replay_cli.c: gk-replay's command line: usage errors, --help,
 * missing and damaged files, exit codes, run in process and as the real
 * binary. (Replays of the real genres are in test_replay_genres.c.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "fixture.h"
#include "gk_genres.h"
#include "tiny_sim.h"

#define RUN(res, ...)                                                          \
  do {                                                                         \
    const char *const argv_[] = {__VA_ARGS__, NULL};                           \
    cli_run((res), argv_);                                                     \
  } while (0)

Test(replay_cli, no_command_prints_usage_and_exits_2) {
  cli_result r;
  const char *const none[] = {NULL};
  cli_run(&r, none);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "usage: gk-replay") != NULL);
}

Test(replay_cli, every_command_has_help) {
  const char *cmds[] = {"verify",  "info", "dump",    "record",
                        "recover", "diff", "synctest"};
  for (size_t i = 0; i < 7; i++) {
    cli_result r;
    RUN(&r, cmds[i], "--help");
    cr_assert_eq(r.code, 0, "%s --help", cmds[i]);
    char want[64];
    snprintf(want, sizeof want, "usage: gk-replay %s", cmds[i]);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
  }
  cli_result r;
  RUN(&r, "--help");
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "verify FILE...") != NULL);
}

Test(replay_cli, unknown_commands_and_options_are_named) {
  cli_result r;
  RUN(&r, "replay");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "unknown command 'replay'") != NULL, "%s", r.err);
  RUN(&r, "verify", "--fast", "x.gkr");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "unknown option '--fast'") != NULL, "%s", r.err);
  RUN(&r, "dump", "x.gkr", "--step");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--step needs a value") != NULL, "%s", r.err);
  RUN(&r, "dump", "x.gkr", "--step", "-3");
  cr_assert_eq(r.code, 2);
  RUN(&r, "info", "a.gkr", "b.gkr");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "unexpected argument 'b.gkr'") != NULL, "%s", r.err);
  RUN(&r, "verify");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "no FILE") != NULL);
  RUN(&r, "record", "--genre", "chess", "--out", "x.gkr");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "unknown genre 'chess'") != NULL, "%s", r.err);
}

Test(replay_cli, a_missing_file_is_a_clear_error) {
  cli_result r;
  RUN(&r, "verify", "/nonexistent/match.gkr");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "/nonexistent/match.gkr: INVALID") != NULL, "%s",
            r.out);
  cr_assert(strstr(r.out, "No such file") != NULL, "%s", r.out);
  RUN(&r, "info", "/nonexistent/match.gkr");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "not a valid replay") != NULL, "%s", r.err);
  RUN(&r, "dump", "--step", "0", "/nonexistent/match.gkr");
  cr_assert_eq(r.code, 2);
}

Test(replay_cli, a_replay_of_a_genre_not_in_this_build_is_refused) {
  char dir[64], path[128];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/tiny.gkr", dir);
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 10, 4, 1, UINT64_MAX, &len);
  cr_assert_eq(fixture_write_file(path, bytes, len), 0);
  cli_result r;
  RUN(&r, "verify", "--json", path);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "\"status\":\"invalid\"") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "genre 'tiny' is not in this build") != NULL, "%s",
            r.out);
  unlink(path);
  rmdir(dir);
  free(bytes);
}

Test(replay_cli, the_binary_exits_2_on_bad_input_and_0_on_help) {
  cli_result r;
  const char *const help[] = {"verify", "--help", NULL};
  cli_exec(&r, help);
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "usage: gk-replay verify") != NULL);
  const char *const missing[] = {"verify", "/nonexistent/x.gkr", NULL};
  cli_exec(&r, missing);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "INVALID") != NULL);
  const char *const bad[] = {"frobnicate", NULL};
  cli_exec(&r, bad);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "unknown command") != NULL);
}

#if GK_HAVE_PUSH_PUZZLE
#include "gk_replay.h"

#define GOLDEN_PP                                                              \
  GK_SOURCE_ROOT "/tests/data/replays/push-puzzle-xsokoban0001.gkr"

/* The push-puzzle golden replay with `edit` applied (and the edited
 * block's checksum recomputed), written to a fresh file; the genre is in
 * this build, so only the damage can make gk-replay refuse it. */
typedef struct forged {
  char dir[64], path[128];
  uint8_t *bytes;
  size_t len;
  uint64_t final_hash; /* of the untouched replay */
} forged;

static void forge(forged *f, void (*edit)(uint8_t *bytes, size_t len)) {
  f->bytes = fixture_read_file(GOLDEN_PP, &f->len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, f->bytes, f->len), 0, "%s",
               r.damage.what);
  f->final_hash = r.final_hash;
  gk_replay_close(&r);
  edit(f->bytes, f->len);
  fixture_tmpdir(f->dir, sizeof f->dir);
  snprintf(f->path, sizeof f->path, "%s/forged.gkr", f->dir);
  cr_assert_eq(fixture_write_file(f->path, f->bytes, f->len), 0);
}

static void forged_done(forged *f) {
  unlink(f->path);
  rmdir(f->dir);
  free(f->bytes);
}

/* Its only steps block (block 1) claims to start at step 5. */
static void move_first_step(uint8_t *bytes, size_t len) {
  size_t off = fixture_block_at(bytes, len, 1);
  cr_assert_eq(bytes[off], GK_REPLAY_BLOCK_STEPS_T);
  cr_assert_eq(fixture_get_u64(bytes + off + 12), 0);
  fixture_put_u64(bytes + off + 12, 5);
  fixture_resign_block(bytes, len, off);
}

/* Its footer (block 2) claims another final hash. */
static void lie_in_footer(uint8_t *bytes, size_t len) {
  size_t off = fixture_block_at(bytes, len, 2);
  cr_assert_eq(bytes[off], GK_REPLAY_BLOCK_FOOTER);
  fixture_put_u64(bytes + off + 20, fixture_get_u64(bytes + off + 20) ^ 0x5a5a);
  fixture_resign_block(bytes, len, off);
}

Test(replay_cli,
     verify_exits_2_naming_the_block_when_a_steps_block_is_out_of_order) {
  forged f;
  forge(&f, move_first_step);
  cli_result r;
  RUN(&r, "verify", f.path);
  cr_assert_eq(r.code, 2, "%s", r.out);
  cr_assert(strstr(r.out, ": INVALID: ") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "steps block 1: expected first step 0, found 5") !=
                NULL,
            "%s", r.out);
  RUN(&r, "verify", "--json", f.path);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.out, "\"status\":\"invalid\"") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "\"code\":\"GK_EPROTO\"") != NULL, "%s", r.out);
  forged_done(&f);
}

Test(replay_cli,
     a_footer_whose_final_hash_lies_exits_2_and_info_never_prints_it) {
  forged f;
  forge(&f, lie_in_footer);
  char truth[24], lie[24];
  snprintf(truth, sizeof truth, "0x%016llx", (unsigned long long)f.final_hash);
  snprintf(lie, sizeof lie, "0x%016llx",
           (unsigned long long)(f.final_hash ^ 0x5a5a));
  cli_result r;
  RUN(&r, "verify", f.path);
  cr_assert_eq(r.code, 2, "%s", r.out);
  cr_assert(strstr(r.out, "footer final hash") != NULL, "%s", r.out);
  RUN(&r, "info", f.path);
  cr_assert_eq(r.code, 2, "%s", r.out);
  char want[64];
  snprintf(want, sizeof want, "final hash: %s\n", truth);
  cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "damage: ") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "footer") != NULL, "%s", r.out);
  RUN(&r, "info", "--json", f.path);
  cr_assert_eq(r.code, 2, "%s", r.out);
  snprintf(want, sizeof want, "\"final_hash\":\"%s\"", truth);
  cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
  snprintf(want, sizeof want, "\"final_hash\":\"%s\"", lie);
  cr_assert(strstr(r.out, want) == NULL, "%s", r.out);
  cr_assert(strstr(r.out, "\"complete\":false") != NULL, "%s", r.out);
  forged_done(&f);
}
#endif

/* The fixture takes player 1 out on every fifth step (4, 9, ...) and back
 * on the next: info lists each as a removal and a join, at its step. */
Test(replay_cli, info_lists_joins_and_removals_from_the_active_masks) {
  char err[256], dir[64], path[128];
  cr_assert_eq(gk_genre_add(&tiny_sim, err, sizeof err), 0, "%s", err);
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/roster.gkr", dir);
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 12, 4, 1, UINT64_MAX, &len);
  cr_assert_eq(fixture_write_file(path, bytes, len), 0);
  free(bytes);
  cli_result r;
  RUN(&r, "info", "--json", path);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "\"start_mask\":3") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "\"joins\":[{\"slot\":1,\"step\":5},{\"slot\":1,"
                          "\"step\":10}]") != NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "\"removals\":[{\"slot\":1,\"step\":4},{\"slot\":"
                          "1,\"step\":9}]") != NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "\"reconnects_recorded\":false") != NULL, "%s",
            r.out);
  RUN(&r, "info", path);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "start: slots 0 1 (active mask 0x3)\n") != NULL, "%s",
            r.out);
  cr_assert(strstr(r.out, "joins: slot 1 at step 5, slot 1 at step 10\n") !=
                NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "removals: slot 1 at step 4, slot 1 at step 9\n") !=
                NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "reconnects: not recorded") != NULL, "%s", r.out);
  unlink(path);
  rmdir(dir);
}
