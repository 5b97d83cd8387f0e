/* redis_rig.h: a real redis-server for a test, on a unix socket in a
 * temp directory (no TCP port to collide on), with no persistence. */
#ifndef REDIS_RIG_H
#define REDIS_RIG_H

#include <sys/types.h>

typedef struct redis_rig {
  char dir[256];
  char sock[300];
  char password[64]; /* "" = none */
  pid_t pid;
} redis_rig;

/* Starts redis-server (requirepass if password is non-empty) and waits
 * until it answers PING (5 s at most). 0 or -1. */
int redis_rig_start(redis_rig *r, const char *password);
/* Starts it again on the same socket after a kill (empty: no data). */
int redis_rig_restart(redis_rig *r);
/* Sends a signal to the server. */
void redis_rig_signal(redis_rig *r, int sig);
/* SIGKILLs it, waits for it, removes the directory. */
void redis_rig_stop(redis_rig *r);
/* Runs one command (printf-like, hiredis syntax) on a fresh blocking
 * connection; writes an integer or string reply into out (cap bytes) if
 * out is non-NULL. 0, or -1 (no connection, error reply). */
int redis_rig_cmd(redis_rig *r, char *out, size_t cap, const char *fmt, ...);

/* GET http://127.0.0.1:<port><path> from a node's admin listener (another
 * process: the call blocks, timeout_ms at most) into buf (cap bytes, NUL
 * ended, cut at cap - 1). The status, or 0 when no answer came. */
long rig_http_get(unsigned port, const char *path, char *buf, size_t cap,
                  long timeout_ms);

#endif
