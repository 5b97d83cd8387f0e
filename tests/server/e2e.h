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

/* Makes a fresh folder under /tmp. If the test fails, crashes or times
 * out, the folder is moved under the build's meson-logs/e2e-kept and its
 * files and the last lines of every log are printed (e2e_keep.c). */
void e2e_dir_make(e2e_dir *d);
/* Removes the folder and everything in it (at the end of a passing test;
 * a failing test's folder is kept, see above). */
void e2e_dir_remove(const e2e_dir *d);
/* Writes `json` as path/name and returns the full path in out. */
void e2e_write(const e2e_dir *d, const char *name, const char *json, char *out,
               size_t cap);

/* Spawns argv[0] with stdout/stderr into path/<tag>.out / .err. */
void e2e_spawn(e2e_proc *p, const e2e_dir *d, const char *tag,
               char *const argv[]);
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
/* The rooms of the `event` lines after the first `skip` ones, in log
 * order: codes[i] (16 chars + NUL) for up to cap of them. Returns how many
 * there are. */
int e2e_event_rooms(const e2e_proc *server, const char *event, int skip,
                    char (*codes)[17], int cap);
/* Counts the `event` lines of the n rooms in codes. */
int e2e_count_room_events(const e2e_proc *server, const char *event,
                          const char (*codes)[17], int n);
/* The child's stdout parsed as one JSON object (caller deletes). */
cJSON *e2e_read_json(const char *path);

/* Verifies every .gkr in the folder with the library verifier and the
 * gk-replay binary; returns how many verified (fails the test on any that
 * does not). Fills codes[i] (16 chars + NUL) and hashes[i] per file (up to
 * cap entries) from the replay's header and footer. */
int e2e_verify_replays(const char *dir, char (*codes)[17], uint64_t *hashes,
                       int cap);

void e2e_sleep_ms(int ms);

/* Notes a folder ("dir") or a spawned process ("pid") of the running test
 * for the runner's after-test hook (e2e_keep.c). */
void e2e_keep_note(const char *kind, const char *what);

/* --- a server and bots ------------------------------------------------------
 * The server's config: 127.0.0.1 port 0, step_hz E2E_STEP_HZ, replays in
 * d->replays, 5 s of shutdown grace, then `extra` (more top-level members,
 * may be NULL). */
#define E2E_STEP_HZ "120"
/* Writes the config as path/server.json, spawns gk-server, waits for its
 * port (fails the test if it does not come). */
void e2e_start_server(e2e_proc *srv, const e2e_dir *d, const char *extra,
                      uint16_t *port);
/* The same with more members of "replays" (`replays`, e.g.
 * "\"flush_ms\":50"; may be NULL). */
/* The test server's config text: 127.0.0.1 port 0, replays in d, then
 * `replays` (members of "replays", may be NULL) and `extra` (top-level
 * members, may be NULL). Returns buf. */
const char *e2e_config_json(char *buf, size_t cap, const e2e_dir *d,
                            const char *replays, const char *extra);
void e2e_start_server_x(e2e_proc *srv, const e2e_dir *d, const char *replays,
                        const char *extra, uint16_t *port);
/* Spawns gk-bot: survivors, `rooms` rooms of `players`, `steps` steps. */
void e2e_start_bot(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps);
/* The same with more gk-bot arguments (`extra`, NULL-terminated, may be
 * NULL). */
void e2e_start_bot_x(e2e_proc *bot, const e2e_dir *d, const char *tag,
                     uint16_t port, const char *rooms, const char *players,
                     const char *steps, const char *const *extra);
/* Checks a finished gk-bot: exit 0, every room completed, no desync; fills
 * codes[i] and hashes[i] per room. Returns the room count. */
int e2e_check_bot(e2e_proc *bot, int rooms, char (*codes)[17],
                  uint64_t *hashes);
/* SIGTERM, then checks: exit 0 within 15 s and one "stopped" line. */
void e2e_stop_server(e2e_proc *srv);
/* A number from the last `event` line (fails the test if missing). */
double e2e_stat(const e2e_proc *srv, const char *event, const char *key);
/* Waits up to ms until the server's log has at least n lines of `event`;
 * returns 1 if it has. */
int e2e_wait_events(const e2e_proc *srv, const char *event, int n, int ms);

#endif
