/* e2e_srv.h: two more helpers for end-to-end tests of the real gk-server,
 * on top of e2e.h (whose e2e_start_server, e2e_start_bot, e2e_check_bot,
 * e2e_stop_server and e2e_stat the tests use for the rest). */
#ifndef GK_TEST_E2E_SRV_H
#define GK_TEST_E2E_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "e2e.h"

/* gk-bot as e2e_start_bot, plus one "opt val" pair (opt may be NULL). */
void start_bot_opt(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps, const char *opt, const char *val);
/* Runs gk-server on `json` (as bad.json) until it exits; its stderr goes
 * into err (cap bytes, NUL-terminated). Returns the exit status. */
int run_server_cfg(const e2e_dir *d, const char *json, char *err, size_t cap);

#endif
