/* cli_run.c: see cli_run.h. */
#include "cli_run.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gk_replay_cli.h"

static void slurp(FILE *f, char *buf, size_t cap) {
  rewind(f);
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static void take(char *mem, size_t n, char *buf, size_t cap) {
  if (n >= cap) n = cap - 1;
  memcpy(buf, mem != NULL ? mem : "", n);
  buf[n] = '\0';
  free(mem);
}

void cli_run(cli_result *res, const char *const *argv) {
  char *args[64];
  int argc = 0;
  args[argc++] = (char *)"gk-replay";
  for (int i = 0; argv[i] != NULL && argc < 63; i++)
    args[argc++] = (char *)argv[i];
  args[argc] = NULL;
  char *omem = NULL, *emem = NULL;
  size_t olen = 0, elen = 0;
  FILE *out = open_memstream(&omem, &olen);
  FILE *err = open_memstream(&emem, &elen);
  cr_assert(out != NULL && err != NULL);
  res->code = gk_replay_cli(argc, args, out, err);
  fclose(out);
  fclose(err);
  take(omem, olen, res->out, sizeof res->out);
  take(emem, elen, res->err, sizeof res->err);
}

void cli_exec(cli_result *res, const char *const *argv) {
  char *args[64];
  int argc = 0;
  args[argc++] = (char *)GK_REPLAY_BIN;
  for (int i = 0; argv[i] != NULL && argc < 63; i++)
    args[argc++] = (char *)argv[i];
  args[argc] = NULL;
  FILE *out = tmpfile();
  FILE *err = tmpfile();
  cr_assert(out != NULL && err != NULL);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    execv(GK_REPLAY_BIN, args);
    _exit(127);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "gk-replay died from a signal");
  res->code = WEXITSTATUS(status);
  slurp(out, res->out, sizeof res->out);
  slurp(err, res->err, sizeof res->err);
}
