/* cli_run.h: runs gk-replay commands in process (gk_replay_cli) and as the
 * real binary, capturing their output. */
#ifndef REPLAY_CLI_RUN_H
#define REPLAY_CLI_RUN_H

#include <stddef.h>

typedef struct cli_result {
  int code;
  char out[16384];
  char err[4096];
} cli_result;

/* In process. argv is NULL-terminated and starts with the command name
 * (e.g. {"verify", "x.gkr", NULL}); "gk-replay" is prepended. */
void cli_run(cli_result *res, const char *const *argv);
/* The built binary (GK_REPLAY_BIN), via fork and exec. */
void cli_exec(cli_result *res, const char *const *argv);

#endif
