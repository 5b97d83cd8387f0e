/* e2e_srv.c: the real gk-server and gk-bot for end-to-end tests (see
 * e2e_srv.h). */
#include "e2e_srv.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void start_bot_opt(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps, const char *opt, const char *val) {
  const char *extra[] = {opt, val, NULL};
  e2e_start_bot_x(bot, d, tag, port, rooms, players, steps, extra);
}

int run_server_cfg(const e2e_dir *d, const char *json, char *err, size_t cap) {
  char path[512];
  e2e_write(d, "bad.json", json, path, sizeof(path));
  e2e_proc p;
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(&p, d, "bad", argv);
  cr_assert(e2e_wait(&p, 10000));
  FILE *f = fopen(p.err, "r");
  size_t n = f ? fread(err, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  err[n] = '\0';
  return p.status;
}
