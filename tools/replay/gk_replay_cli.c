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

#include <stdlib.h>
#include <string.h>

#include "gk_genre_load.h"

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
    "Every command also takes --genre-lib PATH (repeatable): load a genre\n"
    "from a shared object first (docs/GENRE_GUIDE.md); a replay of that\n"
    "genre then verifies like one of the built-in genres.\n"
    "\n"
    "`gk-replay COMMAND --help` describes each command. Exit status: 0 ok,\n"
    "1 a hash mismatch, 2 an invalid replay or a usage error.\n";

/* Loads every "--genre-lib PATH" / "--genre-lib=PATH" (before a "--") and
 * copies the other arguments into args (argc entries). Returns the count
 * left, or -1 after printing why a library did not load. */
static int load_genre_libs(int argc, char **argv, char **args, FILE *err) {
  static const char opt[] = "--genre-lib";
  int n = 0, only_pos = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *lib = NULL;
    if (strcmp(a, "--") == 0) only_pos = 1;
    if (!only_pos && strncmp(a, opt, sizeof opt - 1) == 0) {
      if (a[sizeof opt - 1] == '=')
        lib = a + sizeof opt;
      else if (a[sizeof opt - 1] == '\0' && i + 1 < argc)
        lib = argv[++i];
      else if (a[sizeof opt - 1] == '\0') {
        fprintf(err, "gk-replay: option %s needs a value\n", opt);
        return -1;
      }
    }
    if (lib == NULL) {
      args[n++] = argv[i];
      continue;
    }
    char msg[GK_ERRMSG_MAX * 2];
    if (gk_genre_load(lib, NULL, NULL, msg, sizeof msg) != 0) {
      fprintf(err, "gk-replay: %s\n", msg);
      return -1;
    }
  }
  return n;
}

static int run_command(int argc, char **argv, FILE *out, FILE *err);

int gk_replay_cli(int argc, char **argv, FILE *out, FILE *err) {
  char **args = calloc((size_t)argc + 1, sizeof *args);
  if (args == NULL) {
    fputs("gk-replay: out of memory\n", err);
    return GK_CLI_INVALID;
  }
  int n = load_genre_libs(argc, argv, args, err);
  int rc = n < 0 ? GK_CLI_INVALID : run_command(n, args, out, err);
  free(args);
  return rc;
}

static int run_command(int argc, char **argv, FILE *out, FILE *err) {
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
