/* gk_replay_cli.c: gk-replay verify | info | dump | record | recover |
 * diff | synctest.
 *
 * Every command reads replays through the one bounded reader in
 * src/replay and runs them through gk_loop with { steps } budgets, the way
 * the server does. Output is plain text or, with --json, one JSON object
 * per file (cJSON). The state and HUD sample are rendered from the genre's
 * canonical writer: a gk_writer whose `field` callback sees every field's
 * name and value.
 *
 * This file holds the command table; each command has its own file (see
 * gk_replay_cli_internal.h).
 *
 * Exit codes: 0 all good, 1 a hash mismatch, 2 a file that is not a valid
 * replay, bad input or a usage error (see gk_replay_cli.h).
 */
#include "gk_replay_cli.h"

#include <string.h>

#include "gk_replay_cli_internal.h"

static const char main_help[] =
    "usage: gk-replay COMMAND [OPTIONS] ...\n"
    "\n"
    "Commands:\n"
    "  verify FILE...             run replays and compare every step hash\n"
    "  info FILE                  header, steps, final hash and HUD sample\n"
    "  dump FILE --step N         the state after step N\n"
    "  record --genre G ... --out OUT.gkr   record a replay\n"
    "  recover FILE.gkr.tmp [--out FILE.gkr]   finish a crashed recording\n"
    "  diff BUNDLE_DIR | --genre G A.state B.state   fields that differ\n"
    "  synctest --genre G [--steps N --every K]   write/read-back check\n"
    "\n"
    "`gk-replay COMMAND --help` describes each command. Exit status: 0 ok,\n"
    "1 a hash mismatch, 2 an invalid replay or a usage error.\n";

int gk_replay_cli(int argc, char **argv, FILE *out, FILE *err) {
  if (argc < 2) {
    fputs(main_help, err);
    return GK_CLI_INVALID;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    fputs(main_help, out);
    return GK_CLI_OK;
  }
  int rc;
  if (strcmp(cmd, "verify") == 0)
    rc = gkr_cmd_verify(argc, argv, out, err);
  else if (strcmp(cmd, "info") == 0)
    rc = gkr_cmd_info(argc, argv, out, err);
  else if (strcmp(cmd, "dump") == 0)
    rc = gkr_cmd_dump(argc, argv, out, err);
  else if (strcmp(cmd, "record") == 0)
    rc = gkr_cmd_record(argc, argv, out, err);
  else if (strcmp(cmd, "recover") == 0)
    rc = gkr_cmd_recover(argc, argv, out, err);
  else if (strcmp(cmd, "diff") == 0)
    rc = gkr_cmd_diff(argc, argv, out, err);
  else if (strcmp(cmd, "synctest") == 0)
    rc = gkr_cmd_synctest(argc, argv, out, err);
  else {
    fprintf(err, "gk-replay: unknown command '%s' (see gk-replay --help)\n",
            cmd);
    rc = GK_CLI_INVALID;
  }
  fflush(out);
  return rc;
}
