/* test_ws_hostile.c: hostile WebSocket clients against the real gk-server.
 *
 * One gk-server with its WebSocket listener on an ephemeral port, and a
 * survivors match of gk-bot players over ENet in another room. While that
 * match plays, raw clients (tests/net/ws_raw.c: handshakes and frames
 * written by hand) try each bad input of docs/PROTOCOL.md's "WebSocket
 * framing": each is answered as documented (its HTTP status or close
 * code) and moves its counter in /metrics by exactly one (or by the
 * number of refused connections); the match ends with no desync, and the
 * server's resident memory stays within a bound. The hostile clients
 * connect from 127.0.0.2 and 127.0.0.3 (the bots from 127.0.0.1), so the
 * per-address limits are each case's own. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "ws_e2e.h"

#define SRC "127.0.0.2"
#define FLOOD_SRC "127.0.0.3"
#define PER_IP 128
#define HS(x) "gk_websocket_handshakes_total{result=\"" x "\"}"
#define CL(x) "gk_websocket_closes_total{reason=\"" x "\"}"
#define RSS "gk_process_resident_memory_bytes"
/* The bound on the server's growth over the cases: ASan keeps freed
 * memory in its quarantine (256 MiB by default) and pads allocations */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_GROWTH (320u << 20)
#elif defined(__SANITIZE_THREAD__)
/* ThreadSanitizer maps shadow memory for what the server touches (several
 * times its size) and keeps freed blocks in its allocator's caches: one
 * CI run grew 27.6 MB (25.7 -> 53.3) where the plain build stays under
 * 16 MiB. The bound there is 4x the plain one. */
#define RSS_GROWTH (64u << 20)
#else
#define RSS_GROWTH (16u << 20)
#endif

TestSuite(server_ws_hostile, .timeout = 240);

static ws_server srv;
static raw R;

static void moved(const char *series, uint64_t before, uint64_t by) {
  uint64_t v = ws_metric_wait(&srv, series, before + by, 3000);
  e2e_sleep_ms(50); /* nothing more comes later */
  v = ws_metric(&srv, series);
  cr_assert_eq(v, before + by, "%s: %" PRIu64 " -> %" PRIu64 ", want +%" PRIu64,
               series, before, v, by);
}

/* --- refused handshakes ----------------------------------------------------
 */

static void refused(int want, const char *series, const char *up,
                    const char *ver, const char *proto, const char *extra) {
  uint64_t before = ws_metric(&srv, series);
  raw_connect_to(&R, SRC, srv.ws, 0);
  int st = raw_handshake(&R, "/play", up, ver, proto, extra);
  cr_assert_eq(st, want, "%s: HTTP %d, want %d", series, st, want);
  raw_close(&R);
  moved(series, before, 1);
}

static void bad_handshakes(void) {
  refused(400, HS("upgrade"), NULL, "13", "gamekit.1", NULL);
  refused(426, HS("version"), "websocket", "12", "gamekit.1", NULL);
  refused(403, HS("origin"), "websocket", "13", "gamekit.1",
          "Origin: http://evil.example\r\n");
  refused(400, HS("protocol"), "websocket", "13", "chat", NULL);
  refused(400, HS("protocol"), "websocket", "13", NULL, NULL);
}

/* --- bad frames: a close code each -----------------------------------------
 */

static void text_frame(raw *r) {
  raw_frame(r, 1, 1, (const uint8_t *)"hi", 2, 0);
}

static void unmasked_frame(raw *r) {
  const uint8_t m[4] = {GK_WIRE_VERSION, GK_MSG_CREATE_ROOM, 0, 0};
  raw_frame(r, 1, 2, m, sizeof m, 1);
}

/* A binary frame's header announcing 16 MiB (then a few bytes of it):
 * refused at the header, nothing of it is buffered. */
static void huge_header(raw *r) {
  uint8_t h[14 + 64] = {0x82, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4};
  memset(h + 14, 0x5a, 64);
  raw_write(r, h, sizeof h);
}

static void fragments(raw *r, const uint8_t *msg, size_t len, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t a = i * len / n, b = (i + 1) * len / n;
    raw_frame(r, i + 1 == n, i == 0 ? 2 : 0, msg + a, b - a, 0);
  }
}

/* 1,000 fragments of 2 bytes: 2,000 bytes, over the 1,200 of a message. */
static void too_many_bytes(raw *r) {
  static uint8_t big[2000];
  memset(big, 0x33, sizeof big);
  big[0] = GK_WIRE_VERSION;
  fragments(r, big, sizeof big, 1000);
}

static void closed_with(int code, const char *series, void (*bad)(raw *)) {
  uint64_t before = ws_metric(&srv, series);
  ws_open(&R, &srv, SRC, 0);
  bad(&R);
  int got = raw_close_code(&R, 5000);
  cr_assert_eq(got, code, "%s: close %d, want %d", series, got, code);
  raw_close(&R);
  moved(series, before, 1);
}

/* A message in 1,000 fragments (most of them empty) is one message: the
 * server answers the CREATE_ROOM they carry. */
static void fragmented_request(void) {
  uint64_t rooms = ws_metric(&srv, "gk_rooms_created_total");
  ws_open(&R, &srv, SRC, 0);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "push-puzzle");
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  fragments(&R, buf, len, 1000);
  gk_wire_msg got;
  cr_assert(ws_wait_msg(&R, GK_MSG_ROOM_CREATED, &got, 5000),
            "ROOM_CREATED for a request in 1,000 fragments");
  raw_close(&R);
  moved("gk_rooms_created_total", rooms, 1);
}

/* 5,000 pings at once: their pongs pile up past the bound, 1008. */
static void ping_flood(raw *r) {
  enum { N = 5000, F = 14 };
  static uint8_t f[N * F];
  for (size_t i = 0; i < N; i++) {
    uint8_t *p = f + i * F;
    p[0] = 0x89; /* FIN, ping */
    p[1] = 0x80 | 8;
    memset(p + 2, 0, 4 + 8); /* mask 0: the payload as is */
  }
  raw_write(r, f, sizeof f);
}

/* TCP ended without a close frame: 1006, and the server's side of the
 * socket is closed at once (it was held until libmicrohttpd's next
 * wake-up, with the address's count). */
static void fin_without_close(void) {
  uint64_t before = ws_metric(&srv, CL("abnormal"));
  ws_open(&R, &srv, SRC, 0);
  shutdown(R.fd, SHUT_WR);
  uint64_t t0 = uv_hrtime() / 1000000u;
  cr_assert(ws_wait_eof(&R, 3000), "the server closes its side");
  uint64_t took = uv_hrtime() / 1000000u - t0;
  cr_assert_lt(took, 500, "the server's side closed after %" PRIu64 " ms",
               took);
  raw_close(&R);
  moved(CL("abnormal"), before, 1);
}

static void bad_frames(void) {
  fin_without_close();
  closed_with(1003, CL("text"), text_frame);
  closed_with(1002, CL("protocol"), unmasked_frame);
  closed_with(1009, CL("too_big"), huge_header);
  closed_with(1009, CL("too_big"), too_many_bytes);
  fragmented_request();
  closed_with(1008, CL("slow"), ping_flood);
}

/* --- a handshake at one byte a second ----------------------------------------
 */

static void slow_handshake(void) {
  uint64_t before = ws_metric(&srv, HS("timeout"));
  raw_connect_to(&R, SRC, srv.ws, 0);
  const char *req = "GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  uint64_t t0 = uv_hrtime() / 1000000u, cut = 0;
  for (size_t i = 0; req[i] != '\0' && cut == 0; i++) {
    if (send(R.fd, req + i, 1, MSG_NOSIGNAL) != 1) R.eof = 1;
    for (int k = 0; k < 50 && !R.eof; k++) raw_fill(&R, sizeof R.buf, 20);
    if (R.eof) cut = uv_hrtime() / 1000000u - t0;
  }
  cr_assert_neq(cut, 0, "a request at a byte a second was never cut");
  /* limits.handshake_ms is 3000 here; the listener's tick is 25 ms */
  cr_assert(cut >= 2500 && cut <= 6000, "cut after %" PRIu64 " ms", cut);
  cr_assert_eq(R.len, 0, "no answer to a request that never ended");
  raw_close(&R);
  moved(HS("timeout"), before, 1);
}

/* --- 300 connections from one address ----------------------------------------
 */

static int tcp_to(const char *src, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in b = {.sin_family = AF_INET};
  inet_pton(AF_INET, src, &b.sin_addr);
  cr_assert_eq(bind(fd, (struct sockaddr *)&b, sizeof b), 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  return fd;
}

/* 1 if the server ended the connection (EOF or reset), 0 if it is open. */
static int tcp_ended(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, ms) <= 0) return 0;
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* A handshake on a plain socket: the HTTP status (0: none). */
static int tcp_upgrade(int fd) {
  static const char req[] = "GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Version: 13\r\n"
                            "Sec-WebSocket-Protocol: gamekit.1\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            "\r\n";
  if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)sizeof req - 1)
    return 0;
  char buf[512];
  size_t len = 0;
  uint64_t end = uv_hrtime() / 1000000u + 3000;
  while (len < sizeof buf - 1 && uv_hrtime() / 1000000u < end) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, MSG_DONTWAIT);
    if (n <= 0) break;
    len += (size_t)n;
    buf[len] = '\0';
    if (strstr(buf, "\r\n\r\n")) break;
  }
  buf[len] = '\0';
  int status = 0;
  sscanf(buf, "HTTP/1.1 %d", &status);
  return status;
}

static void per_address_flood(void) {
  enum { N = 300, IN = PER_IP + 1 }; /* the one more is answered 429 */
  static int fds[N];
  uint64_t per_ip = ws_metric(&srv, HS("per_ip"));
  uint64_t ok = ws_metric(&srv, HS("ok"));
  uint64_t limit = ws_metric(&srv, HS("limit"));
  for (int i = 0; i < N; i++) fds[i] = tcp_to(FLOOD_SRC, srv.ws);
  e2e_sleep_ms(500);
  int ended = 0;
  for (int i = 0; i < N; i++) {
    if (tcp_ended(fds[i], 0)) {
      close(fds[i]);
      fds[i] = -1;
      ended++;
    }
  }
  cr_assert_eq(ended, N - IN, "%d of %d closed at accept", ended, N);
  moved(HS("per_ip"), per_ip, N - IN);
  /* the ones let in are served: conns_per_ip get their 101, and the
   * upgrade past them a 429, not a 101 then a drop */
  int upgraded = 0, limited = 0;
  for (int i = 0; i < N; i++) {
    if (fds[i] < 0) continue;
    int st = tcp_upgrade(fds[i]);
    cr_assert(st == 101 || (st == 429 && upgraded == PER_IP),
              "connection %d: %d after %d upgrades", i, st, upgraded);
    upgraded += st == 101;
    limited += st == 429;
  }
  cr_assert_eq(upgraded, PER_IP);
  cr_assert_eq(limited, 1);
  moved(HS("ok"), ok, PER_IP);
  moved(HS("limit"), limit, 1);
  /* one more is closed at accept (or, once the 429's connection is
   * gone, answered 429); once they close, the address is free */
  int extra = tcp_to(FLOOD_SRC, srv.ws);
  int st = tcp_ended(extra, 1000) ? 0 : tcp_upgrade(extra);
  cr_assert(st == 0 || st == 429, "connection %d: %d", IN + 1, st);
  close(extra);
  moved(HS("per_ip"), per_ip, N - IN + (st == 0));
  for (int i = 0; i < N; i++)
    if (fds[i] >= 0) close(fds[i]);
  uint64_t end = uv_hrtime() / 1000000u + 5000;
  st = 0;
  while (st != 101 && uv_hrtime() / 1000000u < end) {
    e2e_sleep_ms(100);
    int fd = tcp_to(FLOOD_SRC, srv.ws);
    st = tcp_upgrade(fd);
    close(fd);
  }
  cr_assert_eq(st, 101, "the address is let in again once its links closed");
}

/* --- a peer that never reads -------------------------------------------------
 */

/* A player in a lobby that sends requests (each answered by a reliable
 * ERROR: it is already in a room; not a strike) and never reads: the
 * kernel's buffers fill, then the send queue, and the server closes it
 * 1008; its memory stays bounded. */
static void never_reads(void) {
  uint64_t slow = ws_metric(&srv, CL("slow"));
  ws_open(&R, &srv, SRC, 2048);
  char code[GK_WIRE_CODE_LEN + 1];
  int err = 0;
  cr_assert_eq(ws_create_room(&R, "push-puzzle", 2, NULL, code, &err),
               GK_MSG_ROOM_CREATED, "error %d", err);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN);
  uint8_t one[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, one, sizeof one, &len), 0);
  enum { N = 20000 };
  static uint8_t f[N * (GK_WIRE_MAX + 8)];
  size_t k = 0;
  for (int i = 0; i < N; i++) { /* masked with 0: the payload as is */
    f[k++] = 0x82;
    f[k++] = (uint8_t)(0x80 | len);
    memset(f + k, 0, 4);
    k += 4;
    memcpy(f + k, one, len);
    k += len;
  }
  raw_write(&R, f, k); /* until the server stops reading (2 s at most) */
  moved(CL("slow"), slow, 1);
  cr_assert(ws_wait_eof(&R, 5000), "the slow reader's connection ends");
  raw_close(&R);
}

Test(server_ws_hostile,
     bad_input_is_refused_as_documented_while_a_match_plays) {
  ws_server_start(&srv, NULL,
                  "\"limits\":{\"handshake_ms\":3000,"
                  "\"conns_per_ip\":128,\"connects_per_ip_per_s\":1000}");
  e2e_proc bot;
  e2e_start_bot(&bot, &srv.a.d, "bot", srv.a.udp, "1", "2", "4800");
  cr_assert(e2e_wait_events(&srv.a.p, "match_start", 1, 20000),
            "the bots' match starts");
  uint64_t rss0 = ws_metric(&srv, RSS);

  bad_handshakes();
  bad_frames();
  slow_handshake();
  per_address_flood();
  never_reads();

  uint64_t rss1 = ws_metric(&srv, RSS);
  cr_assert_lt(rss1, rss0 + RSS_GROWTH,
               "resident memory %" PRIu64 " -> %" PRIu64 " bytes", rss0, rss1);
  cr_assert(!e2e_wait(&bot, 0), "the bots' match outlasted the cases");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert(e2e_wait(&bot, 60000), "gk-bot finishes");
  cr_assert_eq(e2e_check_bot(&bot, 1, codes, hashes), 1);
  cr_assert_eq(ws_metric(&srv, "gk_desyncs_total"), 0);
  ws_server_stop(&srv);
}
