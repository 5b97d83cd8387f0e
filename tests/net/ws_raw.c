/* ws_raw.c: see ws_raw.h. */
#include "ws_raw.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "gk_net_wire.h"

ws_srv *S;

static void on_receive(void *ctx, gk_net_ws *w, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  ws_srv *s = ctx;
  s->received++;
  s->last_conn = conn;
  s->last_len = len;
  memcpy(s->last, bytes, len < sizeof s->last ? len : sizeof s->last);
  if (s->echo) gk_net_ws_send(w, conn, bytes, len, 1, len > 1 ? bytes[1] : 0);
}

static void on_connect(void *ctx, gk_net_ws *w, uint32_t conn,
                       const struct sockaddr *addr) {
  ws_srv *s = ctx;
  (void)w;
  cr_assert_not_null(addr);
  s->connects++;
  s->last_conn = conn;
}

static void on_disconnect(void *ctx, gk_net_ws *w, uint32_t conn, int reason) {
  ws_srv *s = ctx;
  (void)w;
  (void)conn;
  s->disconnects++;
  s->last_reason = reason;
}

static void on_closed(gk_net_ws *w) {
  (void)w;
  S->closed = 1;
}

static void on_beat(uv_timer_t *t) {
  (void)t;
}

gk_net_ws_options ws_test_options(void) {
  gk_net_ws_options o = {.host = "127.0.0.1",
                         .max_conns = 8,
                         .close_ms = 300,
                         .replace_types = {GK_MSG_INPUT, GK_MSG_CONFIRMED},
                         .n_replace = 2};
  return o;
}

void ws_srv_start(const gk_net_ws_options *o) {
  ws_srv_start_json(o, NULL);
}

void ws_srv_start_json(const gk_net_ws_options *o, ws_json_fn *json_get) {
  S = calloc(1, sizeof *S);
  cr_assert_not_null(S);
  S->echo = 1;
  cr_assert_eq(uv_loop_init(&S->loop), 0);
  uv_timer_init(&S->loop, &S->beat);
  uv_timer_start(&S->beat, on_beat, 1, 1);
  gk_net_ws_callbacks cb = {.ctx = S,
                            .receive = on_receive,
                            .connect = on_connect,
                            .disconnect = on_disconnect,
                            .json_get = json_get};
  cr_assert_eq(gk_net_ws_init(&S->w, &S->loop, o, &cb), 0);
  cr_assert_neq(S->w.port, 0);
}

void ws_srv_stop(void) {
  if (S->w.closing) /* closed by the test: uv_loop_close checks the rest */
    S->closed = 1;
  gk_net_ws_close(&S->w, on_closed);
  uv_close((uv_handle_t *)&S->beat, NULL);
  for (int i = 0; i < 1000 && uv_run(&S->loop, UV_RUN_NOWAIT) != 0; i++)
    uv_sleep(1);
  cr_assert(S->closed);
  cr_assert_eq(uv_loop_close(&S->loop), 0);
  free(S);
  S = NULL;
}

static uint64_t ms_now(void) {
  return uv_hrtime() / 1000000u;
}

int ws_run_until(const int *flag, int want, int ms) {
  uint64_t end = ms_now() + (uint64_t)ms;
  for (int i = 0; i < 1000000 && *flag < want && ms_now() < end; i++)
    uv_run(&S->loop, UV_RUN_ONCE);
  return *flag >= want;
}

void ws_run_ms(int ms) {
  int never = 0;
  ws_run_until(&never, 1, ms);
}

/* --- the raw client ----------------------------------------------------- */

/* While a raw client waits: the listener's loop runs, or, against a
 * server in another process, the thread sleeps a millisecond. */
static void pump(void) {
  if (S != NULL)
    uv_run(&S->loop, UV_RUN_ONCE);
  else
    uv_sleep(1);
}

void raw_connect(raw *r, int rcvbuf) {
  raw_connect_to(r, NULL, S->w.port, rcvbuf);
}

void raw_connect_to(raw *r, const char *src, uint16_t port, int rcvbuf) {
  memset(r, 0, offsetof(raw, buf));
  r->fd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(r->fd, 0);
  if (rcvbuf > 0)
    setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (src != NULL) {
    struct sockaddr_in b = {.sin_family = AF_INET};
    cr_assert_eq(inet_pton(AF_INET, src, &b.sin_addr), 1);
    cr_assert_eq(bind(r->fd, (struct sockaddr *)&b, sizeof b), 0, "bind %s",
                 src);
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert_eq(connect(r->fd, (struct sockaddr *)&a, sizeof a), 0);
  int one = 1;
  setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) | O_NONBLOCK);
}

void raw_close(raw *r) {
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
}

void raw_write(raw *r, const void *p, size_t n) {
  const uint8_t *b = p;
  uint64_t end = ms_now() + 2000;
  while (n > 0 && ms_now() < end) {
    ssize_t k = send(r->fd, b, n, MSG_NOSIGNAL);
    if (k > 0) {
      b += k;
      n -= (size_t)k;
    } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return; /* the server closed: the test looks at what came back */
    } else {
      pump();
    }
  }
}

static void raw_read(raw *r) {
  while (r->len < sizeof r->buf) {
    ssize_t k = recv(r->fd, r->buf + r->len, sizeof r->buf - r->len, 0);
    if (k > 0) {
      r->len += (size_t)k;
      continue;
    }
    if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) r->eof = 1;
    return;
  }
}

void raw_fill(raw *r, size_t want, int ms) {
  uint64_t end = ms_now() + (uint64_t)ms;
  for (int i = 0; i < 1000000; i++) {
    raw_read(r);
    if (r->len >= want || r->eof || ms_now() >= end) return;
    pump();
  }
}

static void take(raw *r, size_t n) {
  memmove(r->buf, r->buf + n, r->len - n);
  r->len -= n;
}

int raw_handshake(raw *r, const char *path, const char *upgrade,
                  const char *version, const char *protocol,
                  const char *extra) {
  char req[2048];
  size_t n = 0;
#define ADD(...) n += (size_t)snprintf(req + n, sizeof req - n, __VA_ARGS__)
  ADD("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", path);
  if (upgrade) ADD("Upgrade: %s\r\nConnection: Upgrade\r\n", upgrade);
  if (version) ADD("Sec-WebSocket-Version: %s\r\n", version);
  if (protocol) ADD("Sec-WebSocket-Protocol: %s\r\n", protocol);
  ADD("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n%s\r\n",
      extra ? extra : "");
#undef ADD
  cr_assert_lt(n, sizeof req);
  raw_write(r, req, n);
  uint64_t end = ms_now() + 3000;
  const char *eoh = NULL;
  while (ms_now() < end) {
    raw_fill(r, r->len + 1, 20);
    r->buf[r->len < sizeof r->buf ? r->len : sizeof r->buf - 1] = 0;
    eoh = strstr((const char *)r->buf, "\r\n\r\n");
    if (eoh != NULL || r->eof) break;
  }
  if (eoh == NULL) return 0;
  int status = 0;
  sscanf((const char *)r->buf, "HTTP/1.1 %d", &status);
  if (status == 101) /* the accept key of RFC 6455's own example */
    cr_assert_not_null(
        strstr((const char *)r->buf,
               "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
  take(r, (size_t)(eoh + 4 - (const char *)r->buf));
  return status;
}

void raw_open(raw *r) {
  int before = S->connects;
  raw_connect(r, 0);
  cr_assert_eq(raw_handshake(r, "/play", "websocket", "13", "gamekit.1", NULL),
               101);
  cr_assert(ws_run_until(&S->connects, before + 1, 2000));
}

void raw_frame(raw *r, int fin, int opcode, const uint8_t *p, size_t n,
               int unmasked) {
  uint8_t f[16 + 70000];
  size_t k = 0;
  cr_assert_leq(n, 70000);
  f[k++] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0f));
  uint8_t m = unmasked ? 0 : 0x80;
  if (n < 126) {
    f[k++] = (uint8_t)(m | n);
  } else {
    f[k++] = m | 126;
    f[k++] = (uint8_t)(n >> 8);
    f[k++] = (uint8_t)n;
  }
  const uint8_t key[4] = {0x11, 0x22, 0x33, 0x44};
  if (!unmasked) {
    memcpy(f + k, key, 4);
    k += 4;
  }
  for (size_t i = 0; i < n; i++)
    f[k + i] = unmasked ? p[i] : (uint8_t)(p[i] ^ key[i % 4]);
  raw_write(r, f, k + n);
}

int raw_next(raw *r, uint8_t *p, size_t cap, size_t *n, int ms) {
  uint64_t end = ms_now() + (uint64_t)ms;
  for (int i = 0; i < 1000000; i++) {
    if (r->len >= 2) {
      size_t len = r->buf[1] & 0x7f, hdr = 2;
      if (len == 126 && r->len >= 4) {
        len = (size_t)r->buf[2] << 8 | r->buf[3];
        hdr = 4;
      }
      if (len < 126 || hdr == 4) {
        if (r->len >= hdr + len) {
          int op = r->buf[0] & 0x0f;
          memcpy(p, r->buf + hdr, len < cap ? len : cap);
          *n = len;
          take(r, hdr + len);
          return op;
        }
      }
    }
    if (r->eof || ms_now() >= end) return -1;
    raw_fill(r, r->len + 1, 5);
  }
  return -1;
}

int raw_close_code(raw *r, int ms) {
  uint64_t end = ms_now() + (uint64_t)ms;
  uint8_t p[256];
  size_t n = 0;
  while (ms_now() < end) {
    int op = raw_next(r, p, sizeof p, &n, (int)(end - ms_now()) + 1);
    if (op < 0) return -1;
    if (op == 8) return n >= 2 ? p[0] << 8 | p[1] : 1005;
  }
  return -1;
}

void raw_echo_ok(raw *r, uint8_t tag) {
  const uint8_t msg[4] = {2, 23, tag, 0x5a};
  raw_frame(r, 1, 2, msg, sizeof msg, 0);
  uint8_t p[64];
  size_t n = 0;
  int op;
  do op = raw_next(r, p, sizeof p, &n, 2000);
  while (op == 9 || op == 10); /* pings of the listener: not echoes */
  cr_assert_eq(op, 2, "the good connection stopped echoing (op %d)", op);
  cr_assert_eq(n, sizeof msg);
  cr_assert_arr_eq(p, msg, sizeof msg);
}

/* --- the python client -------------------------------------------------- */

typedef struct py_run {
  uv_process_t proc;
  uv_pipe_t out;
  char buf[4096];
  size_t len;
  int exited, eof;
} py_run;

static void py_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  py_run *p = h->data;
  (void)hint;
  *b = uv_buf_init(p->buf + p->len, (unsigned)(sizeof p->buf - 1 - p->len));
}

static void py_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  py_run *p = s->data;
  (void)b;
  if (n > 0) p->len += (size_t)n;
  if (n < 0) {
    p->eof = 1;
    uv_close((uv_handle_t *)s, NULL);
  }
}

static void py_exit(uv_process_t *h, int64_t status, int sig) {
  py_run *p = h->data;
  (void)status;
  (void)sig;
  p->exited = 1;
  uv_close((uv_handle_t *)h, NULL);
}

const char *py_client(const char *mode, int port, int arg) {
  static int have = -1;
  if (have < 0) /* scripts/lib.sh's GK_TEST_PACKAGES installs it */
    have = system("/usr/bin/python3 -c 'import websockets' 2>/dev/null") == 0;
  if (!have) cr_skip_test("python3-websockets is not installed");
  static py_run p;
  memset(&p, 0, sizeof p);
  char sport[16], sarg[16];
  snprintf(sport, sizeof sport, "%d", port);
  snprintf(sarg, sizeof sarg, "%d", arg);
  char *args[] = {"/usr/bin/python3",
                  GK_SOURCE_ROOT "/tests/net/ws_client.py",
                  (char *)mode,
                  sport,
                  sarg,
                  NULL};
  uv_pipe_init(&S->loop, &p.out, 0);
  p.out.data = p.proc.data = &p;
  uv_stdio_container_t io[3] = {{.flags = UV_IGNORE},
                                {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
                                 .data.stream = (uv_stream_t *)&p.out},
                                {.flags = UV_INHERIT_FD, .data.fd = 2}};
  uv_process_options_t po = {.file = args[0],
                             .args = args,
                             .exit_cb = py_exit,
                             .stdio = io,
                             .stdio_count = 3};
  cr_assert_eq(uv_spawn(&S->loop, &p.proc, &po), 0);
  uv_read_start((uv_stream_t *)&p.out, py_alloc, py_read);
  int done = 0;
  uint64_t end = ms_now() + 20000;
  while (!(p.exited && p.eof) && ms_now() < end) uv_run(&S->loop, UV_RUN_ONCE);
  done = p.exited && p.eof;
  if (!done) {
    uv_process_kill(&p.proc, SIGKILL);
    ws_run_ms(200);
  }
  p.buf[p.len] = 0;
  cr_assert(done, "the python client did not finish: %s", p.buf);
  return p.buf;
}

void ws_send_msg(raw *r, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof(buf), &len), 0);
  raw_frame(r, 1, 2, buf, len, 0);
}

int ws_wait_msg(raw *r, gk_wire_type want, gk_wire_msg *out, int ms) {
  uint64_t end = uv_hrtime() / 1000000u + (uint64_t)ms;
  static uint8_t p[GK_WIRE_MAX + 16];
  while (uv_hrtime() / 1000000u < end) {
    size_t n = 0;
    int op = raw_next(r, p, sizeof p, &n, 100);
    if (op == 8 || (op < 0 && r->eof)) return 0; /* closed */
    if (op != 2) continue;
    cr_assert_leq(n, GK_WIRE_MAX);
    if (gk_wire_decode(p, n, out) == 0 && out->type == want) return 1;
    if (out->type == GK_MSG_ERROR && want != GK_MSG_ERROR) return 0;
  }
  return 0;
}
