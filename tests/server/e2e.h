/* e2e.h: helpers for end-to-end tests of the real gk-server and gk-bot.
 *
 * Every test gets a fresh temporary folder (config, logs, replays). The
 * server is spawned on 127.0.0.1 port 0 with its JSON log on a file; the
 * test reads the real port from the "listening" line. Every wait is
 * bounded in time (and polls in small sleeps), and every child still
 * running when a test gives up is killed by its pid.
 */
#ifndef GK_TESTS_E2E_H
#define GK_TESTS_E2E_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

typedef struct e2e_dir {
  char path[256];    /* the temporary folder */
  char replays[300]; /* path/replays */
} e2e_dir;

typedef struct e2e_proc {
  pid_t pid;
  char out[320]; /* stdout file */
  char err[320]; /* stderr file */
  int status;    /* exit status once reaped, else -1 */
} e2e_proc;

void e2e_dir_make(e2e_dir *d);
/* Removes the folder and everything in it (at the end of a passing test;
 * a failing test leaves it for a look). */
void e2e_dir_remove(const e2e_dir *d);
/* Writes `json` as path/name and returns the full path in out. */
void e2e_write(const e2e_dir *d, const char *name, const char *json, char *out,
               size_t cap);

/* Spawns argv[0] with stdout/stderr into path/<tag>.out / .err. */
void e2e_spawn(e2e_proc *p, const e2e_dir *d, const char *tag,
               char *const argv[]);
/* Spawns gk-bot (GK_BOT_BIN) against 127.0.0.1:port: `rooms` rooms of
 * survivors with `players` bots each, `steps` steps, a 60 s timeout. */
void e2e_spawn_bots(e2e_proc *p, const e2e_dir *d, const char *tag,
                    uint16_t port, const char *rooms, const char *players,
                    const char *steps);
/* Waits up to ms for the child; returns 1 if it exited (p->status set). */
int e2e_wait(e2e_proc *p, int ms);
/* Kills (SIGKILL) and reaps the child if it still runs. */
void e2e_kill(e2e_proc *p);

/* Waits up to ms for the "listening" line; returns the port or 0. */
uint16_t e2e_server_port(const e2e_proc *server, int ms);
/* Counts log lines of `event` in the server's log. */
int e2e_count_events(const e2e_proc *server, const char *event);
/* The last log line of `event` as JSON (caller deletes), or NULL. */
cJSON *e2e_last_event(const e2e_proc *server, const char *event);
/* The child's stdout parsed as one JSON object (caller deletes). */
cJSON *e2e_read_json(const char *path);

/* Verifies every .gkr in the folder with the library verifier and the
 * gk-replay binary; returns how many verified (fails the test on any that
 * does not). Fills codes[i] (16 chars + NUL) and hashes[i] per file (up to
 * cap entries) from the replay's header and footer. */
int e2e_verify_replays(const char *dir, char (*codes)[17], uint64_t *hashes,
                       int cap);

void e2e_sleep_ms(int ms);

#endif
