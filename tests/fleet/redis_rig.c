/* redis_rig.c: see redis_rig.h. */
#include "redis_rig.h"

#include <curl/curl.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

static int spawn(redis_rig *r) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* a test that fails (Criterion ends its process) takes its Redis with
     * it: none is left running for the next test to trip over */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(127); /* the test is gone already */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    if (r->password[0])
      execlp("redis-server", "redis-server", "--port", "0", "--unixsocket",
             r->sock, "--save", "", "--appendonly", "no", "--dir", r->dir,
             "--requirepass", r->password, (char *)NULL);
    else
      execlp("redis-server", "redis-server", "--port", "0", "--unixsocket",
             r->sock, "--save", "", "--appendonly", "no", "--dir", r->dir,
             (char *)NULL);
    _exit(127);
  }
  r->pid = pid;
  for (int i = 0; i < 500; i++) {
    char pong[16];
    if (redis_rig_cmd(r, pong, sizeof(pong), "PING") == 0) return 0;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return -1;
}

int redis_rig_start(redis_rig *r, const char *password) {
  memset(r, 0, sizeof(*r));
  snprintf(r->dir, sizeof(r->dir), "/tmp/gk-redis-XXXXXX");
  if (!mkdtemp(r->dir)) return -1;
  snprintf(r->sock, sizeof(r->sock), "%s/redis.sock", r->dir);
  snprintf(r->password, sizeof(r->password), "%s", password ? password : "");
  return spawn(r);
}

int redis_rig_restart(redis_rig *r) {
  unlink(r->sock);
  return spawn(r);
}

void redis_rig_signal(redis_rig *r, int sig) {
  if (r->pid > 0) kill(r->pid, sig);
  if (sig == SIGKILL && r->pid > 0) {
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
  }
}

void redis_rig_stop(redis_rig *r) {
  redis_rig_signal(r, SIGKILL);
  unlink(r->sock);
  rmdir(r->dir);
}

int redis_rig_cmd(redis_rig *r, char *out, size_t cap, const char *fmt, ...) {
  struct timeval tv = {2, 0};
  redisContext *c = redisConnectUnixWithTimeout(r->sock, tv);
  if (!c || c->err) {
    if (c) redisFree(c);
    return -1;
  }
  redisSetTimeout(c, tv);
  int rc = 0;
  if (r->password[0]) {
    redisReply *a = redisCommand(c, "AUTH %s", r->password);
    if (!a || a->type == REDIS_REPLY_ERROR) rc = -1;
    if (a) freeReplyObject(a);
  }
  va_list ap;
  va_start(ap, fmt);
  redisReply *rep = rc ? NULL : redisvCommand(c, fmt, ap);
  va_end(ap);
  if (!rep || rep->type == REDIS_REPLY_ERROR) rc = -1;
  if (rep && out && cap) {
    if (rep->type == REDIS_REPLY_INTEGER)
      snprintf(out, cap, "%lld", rep->integer);
    else if (rep->str)
      snprintf(out, cap, "%.*s", (int)rep->len, rep->str);
    else
      out[0] = '\0';
  }
  if (rep) freeReplyObject(rep);
  redisFree(c);
  return rc;
}

typedef struct rig_body {
  char *buf;
  size_t cap, len;
} rig_body;

static size_t rig_on_body(char *p, size_t size, size_t n, void *user) {
  rig_body *b = user;
  size_t add = size * n, room = b->cap - 1 - b->len;
  size_t take = add < room ? add : room;
  memcpy(b->buf + b->len, p, take);
  b->len += take;
  b->buf[b->len] = '\0';
  return add;
}

long rig_http_get(unsigned port, const char *path, char *buf, size_t cap,
                  long timeout_ms) {
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
  rig_body b = {buf, cap, 0};
  buf[0] = '\0';
  CURL *c = curl_easy_init();
  if (c == NULL) return 0;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rig_on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK)
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  return status;
}
