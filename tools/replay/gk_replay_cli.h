/* gk_replay_cli.h: the gk-replay command line, as a function.
 *
 * main() is a one-line wrapper around gk_replay_cli so that tests run the
 * exact code the binary runs, in process, with their own output streams
 * (thousands of damaged files would be too slow as thousands of processes
 * under ASan).
 */
#ifndef GK_REPLAY_CLI_H
#define GK_REPLAY_CLI_H

#include <stdio.h>

/* Exit codes. */
enum {
  GK_CLI_OK = 0,       /* success; every replay verified */
  GK_CLI_MISMATCH = 1, /* a replay's hash differs at some step */
  GK_CLI_INVALID = 2   /* not a valid replay, bad input, or usage error */
};

/* Runs `gk-replay argv[1] ...`. Results go to `out`, errors and progress
 * to `err` (progress only when `err` is a terminal). Returns an exit code.
 * Keeps no state between calls. */
int gk_replay_cli(int argc, char **argv, FILE *out, FILE *err);

#endif
