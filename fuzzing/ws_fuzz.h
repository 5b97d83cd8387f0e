/* ws_fuzz.h: the harness of the WebSocket fuzz targets (ws_frames.c,
 * ws_handshake.c): the real listener (src/net/gk_net_ws.h: libmicrohttpd
 * for the upgrade, wslay for the frames) on a uv loop of its own, bound to
 * 127.0.0.1 on an ephemeral port once per process, echoing every message
 * back (so the send queue runs too), and one TCP client per input on the
 * same thread. Each input is written, the client's side shut (FIN), and
 * the loop run until the server has ended the connection (EOF at the
 * client) or 2 s pass; what the server sends is read and dropped. */
#ifndef GK_WS_FUZZ_H
#define GK_WS_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "gk_net_wire.h"
#include "gk_net_ws.h"

/* The request deadline: an input that is not a whole request (most of
 * them, for ws_handshake) waits for it, as libmicrohttpd keeps a
 * connection whose client ended its side mid-request. */
#ifndef WF_HANDSHAKE_MS
#define WF_HANDSHAKE_MS 1000
#endif

typedef struct ws_fuzz {
  uv_loop_t loop;
  uv_timer_t beat; /* bounds each UV_RUN_ONCE */
  gk_net_ws w;
  int ready;
} ws_fuzz;

static ws_fuzz WF;

static void wf_receive(void *ctx, gk_net_ws *w, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  (void)ctx;
  gk_net_ws_send(w, conn, bytes, len, len > 1 && (bytes[1] & 1),
                 len > 1 ? bytes[1] : 0);
}

static void wf_beat(uv_timer_t *t) {
  (void)t;
}

static void wf_setup(void) {
  if (WF.ready) return;
  if (uv_loop_init(&WF.loop) != 0) abort();
  uv_timer_init(&WF.loop, &WF.beat);
  uv_timer_start(&WF.beat, wf_beat, 1, 1);
  static const char *const origins[] = {"http://good.example"};
  gk_net_ws_options o = {.host = "127.0.0.1",
                         .origins = origins,
                         .n_origins = 1,
                         .max_conns = 4,
                         .handshakes = 4,
                         .handshake_ms = WF_HANDSHAKE_MS,
                         .close_ms = 50,
                         .ping_ms = 0,
                         .queue_len = 8,
                         .replace_types = {GK_MSG_INPUT, GK_MSG_CONFIRMED},
                         .n_replace = 2};
  gk_net_ws_callbacks cb = {.receive = wf_receive};
  if (gk_net_ws_init(&WF.w, &WF.loop, &o, &cb) != 0) abort();
  WF.ready = 1;
}

static uint64_t wf_ms(void) {
  return uv_hrtime() / 1000000u;
}

/* Reads what the server sent; 1 at EOF or a reset. */
static int wf_drain(int fd) {
  uint8_t buf[4096];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) continue;
    return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }
}

/* Writes everything (the loop runs while the socket is full). */
static void wf_write(int fd, const uint8_t *p, size_t n, uint64_t end) {
  while (n > 0 && wf_ms() < end) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return;
    uv_run(&WF.loop, UV_RUN_ONCE);
    if (wf_drain(fd)) return;
  }
}

/* One client: `head` then `data`, FIN, until the server ends it. */
static void wf_run(const uint8_t *head, size_t head_len, const uint8_t *data,
                   size_t len) {
  wf_setup();
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) abort();
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(WF.w.port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) abort();
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  uint64_t end = wf_ms() + 2000;
  wf_write(fd, head, head_len, end);
  wf_write(fd, data, len, end);
  shutdown(fd, SHUT_WR);
  while (wf_ms() < end) {
    uv_run(&WF.loop, UV_RUN_ONCE);
    if (wf_drain(fd)) break;
  }
  close(fd);
  for (int i = 0; i < 4; i++) uv_run(&WF.loop, UV_RUN_NOWAIT);
}

#endif
