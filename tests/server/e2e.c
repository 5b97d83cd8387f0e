/* e2e.c: spawning, waiting, log reading and replay checks for the
 * end-to-end server tests (see e2e.h). */
#define _GNU_SOURCE /* pipe2, O_CLOEXEC */
#include "e2e.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "gk_replay.h"

extern char **environ;

void e2e_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void e2e_dir_make(e2e_dir *d) {
  snprintf(d->path, sizeof(d->path), "/tmp/gk-e2e-XXXXXX");
  cr_assert_not_null(mkdtemp(d->path), "mkdtemp: %s", strerror(errno));
  snprintf(d->replays, sizeof(d->replays), "%s/replays", d->path);
  e2e_keep_note("dir", d->path);
}

static int rm_fn(const char *path, const struct stat *st, int flag,
                 struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void e2e_dir_remove(const e2e_dir *d) {
  nftw(d->path, rm_fn, 16, FTW_DEPTH | FTW_PHYS);
}

void e2e_write(const e2e_dir *d, const char *name, const char *json, char *out,
               size_t cap) {
  snprintf(out, cap, "%s/%s", d->path, name);
  FILE *f = fopen(out, "w");
  cr_assert_not_null(f, "%s: %s", out, strerror(errno));
  fputs(json, f);
  fclose(f);
}

/* argv run with stdout and stderr to the files `out` and `err`, tied to
 * this process: PR_SET_PDEATHSIG kills it when the test process dies,
 * so a test killed by meson's timeout (or by hand) leaves no gk-server
 * or gk-bot running. Like posix_spawn, it returns once the child has
 * exec'd (the files are truncated by then: a log read next is the new
 * process's): the child reports a failed exec's errno through a
 * close-on-exec pipe, and end of file means exec. Between fork and exec
 * only async-signal-safe calls. The child's pid, or -1 with errno. */
static pid_t spawn_tied(const char *out, const char *err, char *const argv[]) {
  int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int fds[2] = {-1, -1};
  pid_t parent = getpid(), pid = -1;
  if (o >= 0 && e >= 0 && pipe2(fds, O_CLOEXEC) == 0) pid = fork();
  if (pid == 0) {
    int why = 0;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
      _exit(127); /* the test is gone already */
    if (dup2(o, 1) >= 0 && dup2(e, 2) >= 0) execve(argv[0], argv, environ);
    why = errno;
    ssize_t w = write(fds[1], &why, sizeof why);
    (void)w;
    _exit(127);
  }
  int saved = errno, why = 0;
  if (fds[1] >= 0) close(fds[1]);
  if (pid > 0 && read(fds[0], &why, sizeof why) == (ssize_t)sizeof why) {
    waitpid(pid, NULL, 0); /* exec failed: the child has exited */
    pid = -1;
    saved = why;
  }
  if (fds[0] >= 0) close(fds[0]);
  if (o >= 0) close(o);
  if (e >= 0) close(e);
  errno = saved;
  return pid;
}

void e2e_spawn(e2e_proc *p, const e2e_dir *d, const char *tag,
               char *const argv[]) {
  memset(p, 0, sizeof(*p));
  p->status = -1;
  snprintf(p->out, sizeof(p->out), "%s/%s.out", d->path, tag);
  snprintf(p->err, sizeof(p->err), "%s/%s.err", d->path, tag);
  p->pid = spawn_tied(p->out, p->err, argv);
  cr_assert_gt(p->pid, 0, "spawn %s: %s", argv[0], strerror(errno));
  char pid[24];
  snprintf(pid, sizeof(pid), "%d", (int)p->pid);
  e2e_keep_note("pid", pid);
}

int e2e_wait(e2e_proc *p, int ms) {
  if (p->pid <= 0) return 1;
  for (int waited = 0;; waited += 10) {
    int st = 0;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid) {
      p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      p->pid = 0;
      return 1;
    }
    if (waited >= ms) return 0;
    e2e_sleep_ms(10);
  }
}

void e2e_kill(e2e_proc *p) {
  if (p->pid <= 0) return;
  kill(p->pid, SIGKILL);
  e2e_wait(p, 5000);
}

/* Calls fn on every line of the file that parses as a JSON object. */
static void each_line(const char *path, void (*fn)(void *, cJSON *),
                      void *ctx) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[8192];
  while (fgets(line, sizeof(line), f)) {
    cJSON *j = cJSON_Parse(line);
    if (j && cJSON_IsObject(j)) fn(ctx, j);
    cJSON_Delete(j);
  }
  fclose(f);
}

typedef struct find_ctx {
  const char *event;
  int count;
  cJSON *last;
} find_ctx;

static void find_fn(void *ctx, cJSON *j) {
  find_ctx *c = ctx;
  const cJSON *ev = cJSON_GetObjectItem(j, "event");
  if (cJSON_IsString(ev) && strcmp(ev->valuestring, c->event) == 0) {
    c->count++;
    cJSON_Delete(c->last);
    c->last = cJSON_Duplicate(j, 1);
  }
}

int e2e_count_events(const e2e_proc *server, const char *event) {
  find_ctx c = {event, 0, NULL};
  each_line(server->out, find_fn, &c);
  cJSON_Delete(c.last);
  return c.count;
}

cJSON *e2e_last_event(const e2e_proc *server, const char *event) {
  find_ctx c = {event, 0, NULL};
  each_line(server->out, find_fn, &c);
  return c.last;
}

typedef struct rooms_ctx {
  const char *event;
  int skip, n, cap;
  char (*codes)[17];
  const char (*match)[17]; /* count mode: the rooms to count */
  int nmatch;
} rooms_ctx;

static void rooms_fn(void *ctx, cJSON *j) {
  rooms_ctx *c = ctx;
  const cJSON *ev = cJSON_GetObjectItem(j, "event");
  const cJSON *room = cJSON_GetObjectItem(j, "room");
  if (!cJSON_IsString(ev) || strcmp(ev->valuestring, c->event) != 0 ||
      !cJSON_IsString(room))
    return;
  if (c->match) {
    for (int i = 0; i < c->nmatch; i++)
      if (strcmp(c->match[i], room->valuestring) == 0) c->n++;
    return;
  }
  if (c->skip > 0) {
    c->skip--;
    return;
  }
  if (c->n < c->cap) snprintf(c->codes[c->n], 17, "%s", room->valuestring);
  c->n++;
}

int e2e_event_rooms(const e2e_proc *server, const char *event, int skip,
                    char (*codes)[17], int cap) {
  rooms_ctx c = {event, skip, 0, cap, codes, NULL, 0};
  each_line(server->out, rooms_fn, &c);
  return c.n;
}

int e2e_count_room_events(const e2e_proc *server, const char *event,
                          const char (*codes)[17], int n) {
  rooms_ctx c = {event, 0, 0, 0, NULL, codes, n};
  each_line(server->out, rooms_fn, &c);
  return c.n;
}

uint16_t e2e_server_port(const e2e_proc *server, int ms) {
  for (int waited = 0; waited <= ms; waited += 10) {
    cJSON *j = e2e_last_event(server, "listening");
    if (j) {
      const cJSON *port = cJSON_GetObjectItem(j, "port");
      uint16_t p = cJSON_IsNumber(port) ? (uint16_t)port->valuedouble : 0;
      cJSON_Delete(j);
      return p;
    }
    e2e_sleep_ms(10);
  }
  return 0;
}

cJSON *e2e_read_json(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return cJSON_Parse(buf);
}

static int run_cli_verify(const char *file) {
  char *argv[] = {(char *)GK_REPLAY_BIN, (char *)"verify", (char *)file, NULL};
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(rc, 0, "spawn gk-replay: %s", strerror(rc));
  int st = 0;
  for (int waited = 0; waited < 60000; waited += 10) {
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    e2e_sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

int e2e_verify_replays(const char *dir, char (*codes)[17], uint64_t *hashes,
                       int cap) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 8 && strcmp(e->d_name + len - 8, ".gkr.tmp") == 0)
      cr_assert_fail("unfinished replay left behind: %s", e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 4, ".gkr") != 0) continue;
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    gk_replay r;
    int rc = gk_replay_open_file(&r, path);
    cr_assert_eq(rc, 0, "%s: %s at %llu: %s", path, gk_err_name(rc),
                 (unsigned long long)r.damage.offset, r.damage.what);
    cr_assert(r.complete, "%s: not complete", path);
    gk_replay_verdict v;
    cr_assert_eq(gk_replay_verify(&r, NULL, NULL, NULL, &v), GK_REPLAY_OK,
                 "%s: %s", path, v.message);
    cr_assert_eq(v.steps_checked, r.steps);
    cr_assert_eq(run_cli_verify(path), 0, "gk-replay verify %s", path);
    if (n < cap) {
      const char *o = r.origin ? strstr(r.origin, "room ") : NULL;
      snprintf(codes[n], 17, "%s", o ? o + 5 : "");
      hashes[n] = r.final_hash;
    }
    gk_replay_close(&r);
    n++;
  }
  closedir(d);
  return n;
}

/* --- a server and bots, as most e2e tests use them ------------------------ */

const char *e2e_config_json(char *buf, size_t cap, const e2e_dir *d,
                            const char *replays, const char *extra) {
  snprintf(buf, cap,
           "{\"listen\":{\"host\":\"127.0.0.1\",\"port\":0},"
           "\"log_level\":\"info\",\"step_hz\":" E2E_STEP_HZ ","
           "\"replays\":{\"dir\":\"%s\"%s%s},\"shutdown_grace_ms\":5000%s%s}",
           d->replays, replays ? "," : "", replays ? replays : "",
           extra ? "," : "", extra ? extra : "");
  return buf;
}

void e2e_start_server_x(e2e_proc *srv, const e2e_dir *d, const char *replays,
                        const char *extra, uint16_t *port) {
  char json[2048], path[512];
  e2e_write(d, "server.json",
            e2e_config_json(json, sizeof(json), d, replays, extra), path,
            sizeof(path));
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(srv, d, "server", argv);
  *port = e2e_server_port(srv, 10000);
  cr_assert_neq(*port, 0, "the server did not log its port");
}

void e2e_start_server(e2e_proc *srv, const e2e_dir *d, const char *extra,
                      uint16_t *port) {
  e2e_start_server_x(srv, d, NULL, extra, port);
}

void e2e_start_bot_x(e2e_proc *bot, const e2e_dir *d, const char *tag,
                     uint16_t port, const char *rooms, const char *players,
                     const char *steps, const char *const *extra) {
  char server[64];
  snprintf(server, sizeof(server), "127.0.0.1:%u", (unsigned)port);
  const char *base[] = {GK_BOT_BIN,  "--server", server, "--genre",
                        "survivors", "--rooms",  rooms,  "--players",
                        players,     "--steps",  steps,  "--timeout",
                        "60"};
  char *argv[32];
  size_t n = 0;
  for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
    argv[n++] = (char *)base[i];
  for (size_t i = 0; extra && extra[i] && n < 31; i++)
    argv[n++] = (char *)extra[i];
  argv[n] = NULL;
  e2e_spawn(bot, d, tag, argv);
}

void e2e_start_bot(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps) {
  e2e_start_bot_x(bot, d, tag, port, rooms, players, steps, NULL);
}

int e2e_check_bot(e2e_proc *bot, int rooms, char (*codes)[17],
                  uint64_t *hashes) {
  cr_assert(e2e_wait(bot, 60000), "gk-bot did not finish");
  cJSON *sum = e2e_read_json(bot->out);
  cr_assert_not_null(sum, "gk-bot printed no JSON summary (%s)", bot->out);
  char *text = cJSON_PrintUnformatted(sum);
  cr_assert_eq(bot->status, 0, "gk-bot exit %d: %s", bot->status, text);
  cr_assert_eq(cJSON_GetObjectItem(sum, "rooms_completed")->valuedouble, rooms,
               "%s", text);
  cr_assert_eq(cJSON_GetObjectItem(sum, "desyncs")->valuedouble, 0, "%s", text);
  const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
  int n = 0;
  for (const cJSON *r = res ? res->child : NULL; r; r = r->next, n++) {
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "agree")), "%s", text);
    snprintf(codes[n], 17, "%s", cJSON_GetObjectItem(r, "code")->valuestring);
    hashes[n] =
        strtoull(cJSON_GetObjectItem(r, "final_hash")->valuestring, NULL, 16);
  }
  cr_assert_eq(n, rooms);
  cJSON_free(text);
  cJSON_Delete(sum);
  return n;
}

void e2e_stop_server(e2e_proc *srv) {
  cr_assert_gt(srv->pid, 0);
  kill(srv->pid, SIGTERM);
  int done = e2e_wait(srv, 15000);
  if (!done) e2e_kill(srv);
  cr_assert(done, "gk-server did not exit after SIGTERM");
  cr_assert_eq(srv->status, 0, "gk-server exit status %d", srv->status);
  cr_assert_eq(e2e_count_events(srv, "stopped"), 1);
}

double e2e_stat(const e2e_proc *srv, const char *event, const char *key) {
  cJSON *j = e2e_last_event(srv, event);
  cr_assert_not_null(j, "no %s event", event);
  const cJSON *v = cJSON_GetObjectItem(j, key);
  cr_assert(cJSON_IsNumber(v), "%s.%s missing", event, key);
  double d = v->valuedouble;
  cJSON_Delete(j);
  return d;
}

int e2e_wait_events(const e2e_proc *srv, const char *event, int n, int ms) {
  for (int waited = 0; waited <= ms; waited += 20) {
    if (e2e_count_events(srv, event) >= n) return 1;
    e2e_sleep_ms(20);
  }
  return 0;
}
