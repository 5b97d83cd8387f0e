/* ws_raw.h: the harness of tests/net/test_ws.c: a gk_net_ws listener on
 * a uv loop that echoes, a raw-socket WebSocket client (handshakes and
 * frames written by hand, so bad ones can be), and a python3-websockets
 * client spawned on the same loop. Every wait is bounded in time. The
 * raw client also serves tests against the real gk-server
 * (tests/server/test_ws_hostile.c), with S NULL. */
#ifndef WS_RAW_H
#define WS_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"
#include "gk_net_ws.h"

typedef struct ws_srv {
  uv_loop_t loop;
  gk_net_ws w;
  uv_timer_t beat; /* keeps UV_RUN_ONCE from blocking for long */
  int echo;        /* echo every message back (reliable, its type) */
  int connects, disconnects, received, closed;
  uint32_t last_conn;
  int last_reason;
  size_t last_len;
  uint8_t last[2048];
} ws_srv;

extern ws_srv *S;

/* Options the tests start from: 127.0.0.1, an ephemeral port, "/play",
 * "gamekit.1", 8 connections, INPUT and CONFIRMED replaceable. */
gk_net_ws_options ws_test_options(void);
void ws_srv_start(const gk_net_ws_options *o);
/* ... with a json_get callback (gk_net_ws_callbacks; ctx is S). */
typedef int ws_json_fn(void *ctx, gk_net_ws *w, const char *path,
                       const gk_net_ws_arg *args, size_t n_args, char **body);
void ws_srv_start_json(const gk_net_ws_options *o, ws_json_fn *json_get);
void ws_srv_stop(void);
/* Runs the loop until *flag >= want or ms pass; returns *flag >= want. */
int ws_run_until(const int *flag, int want, int ms);
void ws_run_ms(int ms);

typedef struct raw {
  int fd;
  int eof;
  size_t len;
  uint8_t buf[1 << 18];
} raw;

/* Connects to S's listener (rcvbuf > 0 sets SO_RCVBUF first). */
void raw_connect(raw *r, int rcvbuf);
/* Connects to 127.0.0.1:port from `src` (an address of 127.0.0.0/8 the
 * socket is bound to first; NULL: the kernel's choice). With S NULL (a
 * server in another process) the waits below sleep instead of running
 * S's loop. */
void raw_connect_to(raw *r, const char *src, uint16_t port, int rcvbuf);
void raw_close(raw *r);
void raw_write(raw *r, const void *p, size_t n);
/* Reads what is there (the loop runs meanwhile) for up to ms, until
 * `want` bytes are buffered or EOF. */
void raw_fill(raw *r, size_t want, int ms);
/* Sends a handshake; extra header lines (each "Name: value\r\n") replace
 * the defaults: upgrade, version, protocol may be NULL to leave a header
 * out. Returns the HTTP status (0 on no answer); the answer's head is
 * taken out of the buffer. */
int raw_handshake(raw *r, const char *path, const char *upgrade,
                  const char *version, const char *protocol, const char *extra);
/* A good handshake, then waits for the listener's `connect`. */
void raw_open(raw *r);
/* One client frame, masked unless `unmasked`. */
void raw_frame(raw *r, int fin, int opcode, const uint8_t *p, size_t n,
               int unmasked);
/* Takes the next whole server frame out of the buffer (waits up to ms):
 * returns its opcode (-1 if none came), payload into p (cap bytes). */
int raw_next(raw *r, uint8_t *p, size_t cap, size_t *n, int ms);
/* Waits for a close frame; returns its code (-1 if none, 1005 empty). */
int raw_close_code(raw *r, int ms);
/* A good connection still echoes: one message there and back. */
void raw_echo_ok(raw *r, uint8_t tag);

/* Runs /usr/bin/python3 tests/net/ws_client.py ARGS... on the loop and
 * returns its stdout (static buffer) once it exits (bounded). Skips the
 * test when python3-websockets is not installed. */
const char *py_client(const char *mode, int port, int arg);

/* One wire message in one masked binary frame. */
void ws_send_msg(raw *r, const gk_wire_msg *m);
/* The next wire message of type `want` (others, pings, skipped) within
 * ms: 1, or 0 if the connection closed or none came. */
int ws_wait_msg(raw *r, gk_wire_type want, gk_wire_msg *out, int ms);

#endif
