/* e2e_srv.h: gk-server and gk-bot processes for end-to-end tests, on top
 * of e2e.h. The server gets a temporary config (127.0.0.1 port 0, the
 * test's replay folder, STEP_HZ steps a second) plus the test's own keys;
 * its port is read from the "listening" line. Every wait is bounded. */
#ifndef GK_TESTS_E2E_SRV_H
#define GK_TESTS_E2E_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "e2e.h"

#define STEP_HZ "120"

/* The config text: the defaults above, then `extra` (JSON members, may be
 * NULL). Returns buf. */
const char *config_json(char *buf, size_t cap, const e2e_dir *d,
                        const char *extra);
/* Spawns gk-server with that config; fails the test if it logs no port. */
void start_server(e2e_proc *srv, const e2e_dir *d, const char *extra,
                  uint16_t *port);
/* Spawns gk-bot: `rooms` rooms of survivors of `players` players for
 * `steps` steps; start_bot_opt adds one "opt val" pair (opt may be NULL). */
void start_bot(e2e_proc *bot, const e2e_dir *d, const char *tag, uint16_t port,
               const char *rooms, const char *players, const char *steps);
void start_bot_opt(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps, const char *opt, const char *val);
/* Checks a finished gk-bot: exit 0, every room completed, no desync, and
 * records its room codes and final hashes. Returns the rooms. */
int check_bot(e2e_proc *bot, int rooms, char (*codes)[17], uint64_t *hashes);
/* SIGTERM, then: exit 0 within 15 s and one "stopped" line. */
void stop_server(e2e_proc *srv);
/* A number from the last `event` line of the server's log. */
double stat_of(const e2e_proc *srv, const char *event, const char *key);
/* Runs gk-server on `json` (as bad.json) until it exits; its stderr goes
 * to err. Returns the exit status. */
int run_server_cfg(const e2e_dir *d, const char *json, char *err, size_t cap);

#endif
