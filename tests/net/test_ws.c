/* test_ws.c: the WebSocket listener (src/net/gk_net_ws.h) on a uv loop
 * in the test, on 127.0.0.1: a real client (python3-websockets), raw
 * sockets sending each bad handshake and frame (answered as documented
 * and counted while a good connection on the same listener keeps
 * echoing), the replace-in-queue rule against a reader that does not
 * read, the slow-reader close, pings and round trips, closes both ways.
 * Every loop is bounded in time and count (ws_raw.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws.h"
#include "ws_raw.h"

TestSuite(ws, .timeout = 60);

static raw R1, R2, R3;

Test(ws, python_client_echoes_binary_frames_with_the_subprotocol) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  const int n = 400;
  const char *out = py_client("echo", S->w.port, n);
  int count = 0;
  long p50 = -1, p90 = -1, lo = -1;
  char proto[32] = "";
  cr_assert_eq(
      sscanf(out, "echo %d %ld %ld %ld %31s", &count, &p50, &p90, &lo, proto),
      5, "client said: %s", out);
  cr_assert_eq(count, n);
  cr_assert_str_eq(proto, "gamekit.1");
  fprintf(stderr,
          "ws echo round trip over %d: median %ld us, p90 %ld us, "
          "min %ld us\n",
          n, p50, p90, lo);
  cr_assert_lt(p50, 20000, "a round trip of %ld us: Nagle is back?", p50);
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  const gk_net_ws_stats *st = &S->w.stats;
  cr_assert_eq(st->msgs_in, (uint64_t)n);
  cr_assert_eq(st->msgs_out, (uint64_t)n);
  cr_assert_eq(st->bytes_in, (uint64_t)n * 16);
  cr_assert_eq(st->connects, 1);
  cr_assert_eq(S->last_reason, 1000); /* the client's close */
  cr_assert_eq(st->close_peer, 1);
  /* libmicrohttpd is not woken by the upgraded socket's traffic */
  cr_assert_lt(st->mhd_runs, 50, "%llu MHD runs",
               (unsigned long long)st->mhd_runs);
  ws_srv_stop();
}

Test(ws, python_client_without_the_subprotocol_gets_400) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  const char *out = py_client("bare", S->w.port, 0);
  cr_assert_str_eq(out, "status 400\n");
  cr_assert_eq(S->w.stats.hs_protocol, 1);
  cr_assert_eq(S->connects, 0);
  ws_srv_stop();
}

static void refused(int status, const char *path, const char *up,
                    const char *ver, const char *proto, const char *extra,
                    const uint64_t *counter) {
  uint64_t before = *counter;
  raw_connect(&R2, 0);
  cr_assert_eq(raw_handshake(&R2, path, up, ver, proto, extra), status);
  raw_close(&R2);
  cr_assert_eq(*counter, before + 1);
  raw_echo_ok(&R1, (uint8_t)status);
}

Test(ws, bad_handshakes_are_refused_and_counted_while_a_good_one_plays) {
  gk_net_ws_options o = ws_test_options();
  const char *origins[] = {"https://play.example", "http://127.0.0.1:8080"};
  o.origins = origins;
  o.n_origins = 2;
  ws_srv_start(&o);
  raw_connect(&R1, 0);
  cr_assert_eq(raw_handshake(&R1, "/play", "websocket", "13", "x, gamekit.1",
                             "Origin: https://play.example\r\n"),
               101);
  cr_assert(ws_run_until(&S->connects, 1, 2000));
  raw_echo_ok(&R1, 1);
  const gk_net_ws_stats *st = &S->w.stats;
  refused(404, "/other", "websocket", "13", "gamekit.1", NULL, &st->hs_path);
  refused(400, "/play", NULL, "13", "gamekit.1", NULL, &st->hs_upgrade);
  refused(400, "/play", "h2c", "13", "gamekit.1", NULL, &st->hs_upgrade);
  refused(426, "/play", "websocket", "12", "gamekit.1", NULL, &st->hs_version);
  refused(426, "/play", "websocket", NULL, "gamekit.1", NULL, &st->hs_version);
  refused(400, "/play", "websocket", "13", NULL, NULL, &st->hs_protocol);
  refused(400, "/play", "websocket", "13", "gamekit.2, chat", NULL,
          &st->hs_protocol);
  refused(403, "/play", "websocket", "13", "gamekit.1",
          "Origin: https://evil.example\r\n", &st->hs_origin);
  refused(400, "/play", "websocket", "13", "gamekit.1", "Content-Length: 5\r\n",
          &st->hs_upgrade);
  raw_connect(&R2, 0);
  const char *post = "POST /play HTTP/1.1\r\nHost: x\r\n"
                     "Content-Length: 0\r\n\r\n";
  raw_write(&R2, post, strlen(post));
  raw_fill(&R2, 12, 2000);
  R2.buf[R2.len < 64 ? R2.len : 63] = 0;
  cr_assert_eq(strncmp((const char *)R2.buf, "HTTP/1.1 405", 12), 0);
  raw_close(&R2);
  cr_assert_eq(st->hs_method, 1);
  raw_echo_ok(&R1, 5);
  cr_assert_eq(st->hs_ok, 1);
  cr_assert_eq(S->connects, 1);
  cr_assert_eq(S->disconnects, 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, over_the_connection_limit_gets_503_then_a_freed_slot_is_reused) {
  gk_net_ws_options o = ws_test_options();
  o.max_conns = 2;
  ws_srv_start(&o);
  raw_open(&R1);
  uint32_t first = S->last_conn;
  raw_open(&R2);
  raw_connect(&R3, 0);
  cr_assert_eq(
      raw_handshake(&R3, "/play", "websocket", "13", "gamekit.1", NULL), 503);
  raw_close(&R3);
  cr_assert_eq(S->w.stats.hs_full, 1);
  raw_echo_ok(&R2, 2);
  raw_close(&R1); /* TCP gone without a close frame: 1006 */
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  cr_assert_eq(S->last_reason, 1006);
  cr_assert_eq(S->w.stats.close_abnormal, 1);
  const uint8_t b[2] = {2, 23};
  cr_assert_eq(gk_net_ws_send(&S->w, first, b, 2, 1, 23), GK_ENOTFOUND);
  cr_assert_eq(S->w.stats.drop_gone, 1);
  static uint8_t big[GK_WIRE_MAX + 1];
  cr_assert_eq(gk_net_ws_send(&S->w, S->last_conn, big, sizeof big, 1, 23),
               GK_ETOOBIG);
  cr_assert_eq(S->w.stats.drop_big, 1);
  cr_assert_eq(S->w.stats.drop_send, 2);
  ws_run_ms(50); /* the slot's handle closes */
  raw_open(&R3);
  cr_assert_neq(S->last_conn, first, "a stale id must not name a new one");
  cr_assert_eq(S->last_conn & 0xffffu, first & 0xffffu);
  raw_echo_ok(&R3, 3);
  raw_close(&R2);
  raw_close(&R3);
  ws_srv_stop();
}

/* One bad frame on a fresh connection: the close code it gets. */
static int bad_frame(int fin, int op, const uint8_t *p, size_t n,
                     int unmasked) {
  int before = S->disconnects;
  raw_open(&R2);
  raw_frame(&R2, fin, op, p, n, unmasked);
  int code = raw_close_code(&R2, 2000);
  cr_assert(ws_run_until(&S->disconnects, before + 1, 2000));
  cr_assert_eq(S->last_reason, code);
  raw_close(&R2);
  raw_echo_ok(&R1, (uint8_t)op);
  return code;
}

Test(ws, bad_frames_close_with_the_documented_codes_and_are_counted) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  static uint8_t big[GK_WIRE_MAX + 1];
  const uint8_t bad_reason[4] = {0x03, 0xe8, 0xff, 0xfe};
  const uint8_t bad_code[2] = {0x03, 0xe7}; /* 999 */
  const gk_net_ws_stats *st = &S->w.stats;
  cr_assert_eq(bad_frame(1, 1, (const uint8_t *)"hi", 2, 0), 1003);
  cr_assert_eq(st->close_text, 1);
  cr_assert_eq(bad_frame(1, 2, big, sizeof big, 0), 1009);
  cr_assert_eq(st->close_too_big, 1);
  cr_assert_eq(bad_frame(1, 2, big, 8, 1), 1002); /* unmasked */
  cr_assert_eq(st->close_protocol, 1);
  cr_assert_eq(bad_frame(1, 8, bad_reason, 4, 0), 1007);
  cr_assert_eq(st->close_utf8, 1);
  cr_assert_eq(bad_frame(1, 8, bad_code, 2, 0), 1002);
  cr_assert_eq(bad_frame(1, 3, big, 4, 0), 1002); /* reserved opcode */
  cr_assert_eq(bad_frame(1, 0, big, 4, 0), 1002); /* stray continuation */
  cr_assert_eq(st->close_protocol, 4);
  cr_assert_eq(S->received, 7, "only the 7 echo checks were delivered");
  /* a message of exactly the limit, and one in two fragments, pass */
  int got = S->received;
  raw_frame(&R1, 1, 2, big, GK_WIRE_MAX, 0);
  cr_assert(ws_run_until(&S->received, got + 1, 2000));
  cr_assert_eq(S->last_len, GK_WIRE_MAX);
  raw_frame(&R1, 0, 2, (const uint8_t *)"ab", 2, 0);
  raw_frame(&R1, 1, 0, (const uint8_t *)"cd", 2, 0);
  cr_assert(ws_run_until(&S->received, got + 2, 2000));
  cr_assert_eq(S->last_len, 4);
  cr_assert_arr_eq(S->last, "abcd", 4);
  raw_close(&R1);
  ws_srv_stop();
}

/* Sends a 300-byte message of `type` carrying seq; the send's result. */
static int send_seq(uint32_t conn, uint8_t type, uint32_t seq, int reliable) {
  uint8_t m[300] = {2, type};
  memcpy(m + 2, &seq, 4);
  return gk_net_ws_send(&S->w, conn, m, sizeof m, reliable, type);
}

/* A connection whose reader does not read, behind small buffers
 * (rcvbuf < 0: the kernel's, and only TCP_NOTSENT_LOWAT bounds it). */
static uint32_t open_slow(raw *r, gk_net_ws_options *o, int rcvbuf) {
  if (rcvbuf > 0) o->sndbuf = 4096;
  ws_srv_start(o);
  S->echo = 0;
  raw_connect(r, rcvbuf > 0 ? rcvbuf : 0);
  cr_assert_eq(raw_handshake(r, "/play", "websocket", "13", "gamekit.1", NULL),
               101);
  cr_assert(ws_run_until(&S->connects, 1, 2000));
  return S->last_conn;
}

/* Sends n INPUT and CONFIRMED alternately to a reader that does not
 * read, then reads: the queue stayed bounded, the newest of each type
 * arrives last, and whatever did not arrive was replaced. */
static void replace_case(int rcvbuf, uint32_t n) {
  gk_net_ws_options o = ws_test_options();
  o.queue_len = 8;
  uint32_t c = open_slow(&R1, &o, rcvbuf);
  uint32_t most = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint8_t type = (i & 1) ? GK_MSG_CONFIRMED : GK_MSG_INPUT;
    cr_assert_eq(send_seq(c, type, i, 0), 0, "send %u refused", i);
    uint32_t q = gk_net_ws_queued(&S->w, c);
    if (q > most) most = q;
    if (i % 64 == 0) uv_run(&S->loop, UV_RUN_NOWAIT);
  }
  const gk_net_ws_stats *st = &S->w.stats;
  cr_assert_leq(most, 2, "the queue grew to %u", most);
  cr_assert_leq(st->queue_max, 2);
  cr_assert_gt(st->replaced, n / 2, "only %llu replaced: buffers too big?",
               (unsigned long long)st->replaced);
  cr_assert_eq(S->disconnects, 0);
  /* the reader resumes: everything that was not replaced arrives, and
   * the last of each type is the newest */
  uint32_t last_in = 0, last_conf = 0, frames = 0;
  uint8_t p[400];
  size_t len = 0;
  for (uint32_t k = 0; k < n; k++) {
    int op = raw_next(&R1, p, sizeof p, &len, 300);
    if (op < 0) break;
    cr_assert_eq(op, 2);
    cr_assert_eq(len, 300);
    uint32_t seq;
    memcpy(&seq, p + 2, 4);
    if (p[1] == GK_MSG_INPUT)
      last_in = seq;
    else
      last_conf = seq;
    frames++;
  }
  cr_assert_eq(last_in, n - 2);
  cr_assert_eq(last_conf, n - 1);
  cr_assert_eq(frames + st->replaced, n);
  cr_assert_eq(st->msgs_out, frames);
  cr_assert_eq(gk_net_ws_queued(&S->w, c), 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_reader_that_does_not_read_gets_the_newest_input_and_confirmed) {
  replace_case(4096, 4000); /* small SO_SNDBUF and SO_RCVBUF */
}

Test(ws, the_kernel_holds_little_unsent_even_with_its_own_buffer_sizes) {
  replace_case(-1, 30000); /* only TCP_NOTSENT_LOWAT (16 KiB) */
}

Test(ws, a_slow_reader_of_messages_that_cannot_be_replaced_is_closed) {
  gk_net_ws_options o = ws_test_options();
  o.queue_len = 8;
  uint32_t c = open_slow(&R1, &o, 4096);
  int rc = 0;
  uint32_t i, most = 0;
  for (i = 0; i < 10000 && rc == 0; i++) {
    rc = send_seq(c, GK_MSG_ERROR, i, 1);
    uint32_t q = gk_net_ws_queued(&S->w, c);
    if (q > most) most = q;
  }
  cr_assert_eq(rc, GK_EFULL);
  cr_assert_leq(most, 8);
  cr_assert_eq(S->w.stats.drop_full, 1);
  cr_assert_eq(S->w.stats.drop_lost, 8, "the queue is cut by the close");
  cr_assert_eq(send_seq(c, GK_MSG_ERROR, i, 1), GK_ENOTFOUND);
  cr_assert(ws_run_until(&S->disconnects, 1, 3000));
  cr_assert_eq(S->last_reason, 1008);
  cr_assert_eq(S->w.stats.close_slow, 1);
  raw_close(&R1);
  ws_srv_stop();
}

/* Sends n reliable messages of `size` bytes at once to a reader behind
 * small buffers, as the server sends a snapshot's chunks; the first
 * refused one's index, or n. */
static uint32_t burst(uint32_t c, uint32_t n, size_t size) {
  static uint8_t m[1100];
  m[0] = 2;
  m[1] = GK_MSG_SNAPSHOT_CHUNK;
  for (uint32_t i = 0; i < n; i++) {
    memcpy(m + 2, &i, 4);
    if (gk_net_ws_send(&S->w, c, m, size, 1, GK_MSG_SNAPSHOT_CHUNK) != 0)
      return i;
  }
  return n;
}

Test(ws, a_burst_of_reliable_messages_to_a_slow_reader_arrives_whole) {
  gk_net_ws_options o = ws_test_options(); /* the default queue */
  uint32_t c = open_slow(&R1, &o, 4096);
  enum { N = 400 }; /* a 400 KB snapshot: far over 64 messages */
  cr_assert_eq(burst(c, N, 1024), N, "the burst was cut");
  cr_assert_gt(gk_net_ws_queued(&S->w, c), 64, "the buffers took it all?");
  uint8_t p[1100];
  size_t len = 0;
  uint32_t k = 0;
  for (; k < N; k++) {
    int op = raw_next(&R1, p, sizeof p, &len, 2000);
    if (op < 0) break;
    uint32_t seq;
    memcpy(&seq, p + 2, 4);
    cr_assert_eq(seq, k, "message %u arrived as %u", k, seq);
  }
  cr_assert_eq(k, N, "%u of %u arrived", k, (unsigned)N);
  cr_assert_eq(S->disconnects, 0);
  cr_assert_eq(S->w.stats.drop_full, 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_slow_reader_over_the_byte_budget_is_closed) {
  gk_net_ws_options o = ws_test_options();
  o.queue_bytes = 64u << 10;
  uint32_t c = open_slow(&R1, &o, 4096);
  uint32_t sent = burst(c, 1000, 1024);
  cr_assert_lt(sent, 1000);
  cr_assert_gt(sent, 64, "only %u sent", sent);
  cr_assert_eq(S->w.stats.drop_full, 1);
  cr_assert(ws_run_until(&S->disconnects, 1, 3000));
  cr_assert_eq(S->last_reason, 1008);
  raw_close(&R1);
  ws_srv_stop();
}

/* Answers the listener's pings for ms; returns how many came. */
static int answer_pings(raw *r, int ms) {
  uint64_t end = uv_hrtime() / 1000000u + (uint64_t)ms;
  int pings = 0;
  uint8_t p[128];
  size_t n = 0;
  while (uv_hrtime() / 1000000u < end) {
    int op = raw_next(r, p, sizeof p, &n, 20);
    if (op == 9) {
      raw_frame(r, 1, 10, p, n, 0);
      pings++;
    }
  }
  return pings;
}

Test(ws, pings_measure_round_trips) {
  gk_net_ws_options o = ws_test_options();
  o.ping_ms = 20;
  ws_srv_start(&o);
  raw_open(&R1);
  uint32_t c = S->last_conn;
  cr_assert_eq(gk_net_ws_rtt(&S->w, c), 0);
  int pings = answer_pings(&R1, 500);
  cr_assert_geq(pings, 10);
  uint64_t rtt = gk_net_ws_rtt_us(&S->w, c);
  fprintf(stderr, "ws ping round trip: %llu us (var %llu us) after %d pings\n",
          (unsigned long long)rtt,
          (unsigned long long)gk_net_ws_rtt_var_us(&S->w, c), pings);
  cr_assert_gt(rtt, 0);
  cr_assert_lt(rtt, 50000);
  cr_assert_geq(gk_net_ws_rtt(&S->w, c), 1);
  cr_assert_geq(S->w.stats.pongs, 10);
  cr_assert_eq(gk_net_ws_peer_ipv4(&S->w, c), 0x7f000001u);
  /* the real client answers our pings too */
  uint64_t pongs = S->w.stats.pongs;
  const char *out = py_client("hold", S->w.port, 400);
  cr_assert_str_eq(out, "hold 0\n");
  cr_assert_geq(S->w.stats.pongs - pongs, 8);
  raw_close(&R1);
  ws_srv_stop();
}

/* Echoes one message after another for ms, answering pings on the way;
 * returns how many pings came. */
static int echo_answering_pings(raw *r, int ms) {
  uint64_t end = uv_hrtime() / 1000000u + (uint64_t)ms;
  int pings = 0;
  for (uint8_t tag = 0; uv_hrtime() / 1000000u < end; tag++) {
    const uint8_t msg[4] = {2, 23, tag, 0x5a};
    raw_frame(r, 1, 2, msg, sizeof msg, 0);
    uint8_t p[64];
    size_t n = 0;
    int op;
    while ((op = raw_next(r, p, sizeof p, &n, 2000)) == 9) {
      raw_frame(r, 1, 10, p, n, 0);
      pings++;
    }
    cr_assert_eq(op, 2, "op %d instead of the echo", op);
    cr_assert_arr_eq(p, msg, sizeof msg);
  }
  return pings;
}

Test(ws, pings_ride_with_the_messages_of_a_busy_link) {
  gk_net_ws_options o = ws_test_options();
  o.ping_ms = 20;
  ws_srv_start(&o);
  uint64_t pings0 = S->w.stats.pings, rode0 = S->w.stats.pings_rode;
  raw_open(&R1); /* its first ping goes at once, alone */
  uint32_t c = S->last_conn;
  uint64_t writes0 = S->w.stats.writes, out0 = S->w.stats.msgs_out;
  int pings = echo_answering_pings(&R1, 600);
  uint64_t writes = S->w.stats.writes - writes0;
  uint64_t out = S->w.stats.msgs_out - out0;
  uint64_t rode = S->w.stats.pings_rode - rode0;
  fprintf(stderr,
          "ws busy link: %llu messages, %d pings (%llu rode), "
          "%llu writes\n",
          (unsigned long long)out, pings, (unsigned long long)rode,
          (unsigned long long)writes);
  uint64_t sent = S->w.stats.pings - pings0; /* the last may be unread */
  cr_assert_geq(pings, 10);
  cr_assert_geq(sent, (uint64_t)pings);
  /* one sendmsg per message, a riding ping in it; a ping that went alone
   * (the first, due at the connect; one that fell due, or waited
   * ping_ms, while a stalled machine left a gap) costs its own */
  cr_assert_eq(writes, out + (sent - rode - 1),
               "%llu writes, %llu messages, "
               "%llu of %llu pings rode",
               (unsigned long long)writes, (unsigned long long)out,
               (unsigned long long)rode, (unsigned long long)sent);
  cr_assert_geq(2 * rode, sent, "%llu of %llu pings rode",
                (unsigned long long)rode, (unsigned long long)sent);
  cr_assert_geq(S->w.stats.pongs, 10, "round trips still measured");
  cr_assert_gt(gk_net_ws_rtt_us(&S->w, c), 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_client_ping_gets_its_pong) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  raw_frame(&R1, 1, 9, (const uint8_t *)"abc", 3, 0);
  uint8_t p[16];
  size_t n = 0;
  cr_assert_eq(raw_next(&R1, p, sizeof p, &n, 2000), 10);
  cr_assert_eq(n, 3);
  cr_assert_arr_eq(p, "abc", 3);
  /* an unsolicited pong is no round trip */
  raw_frame(&R1, 1, 10, (const uint8_t *)"12345678", 8, 0);
  raw_echo_ok(&R1, 7);
  cr_assert_eq(S->w.stats.pongs, 0);
  cr_assert_eq(gk_net_ws_rtt_us(&S->w, S->last_conn), 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_silent_connection_is_cut_after_the_timeout) {
  gk_net_ws_options o = ws_test_options();
  o.ping_ms = 50;
  o.timeout_ms = 200;
  ws_srv_start(&o);
  raw_open(&R1); /* never answers a ping */
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  cr_assert_eq(S->last_reason, 1006);
  cr_assert_eq(S->w.stats.close_timeout, 1);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, an_upgraded_connection_outlives_the_handshake_timeout) {
  gk_net_ws_options o = ws_test_options();
  o.handshake_ms = 500; /* libmicrohttpd's timeout: 1 s */
  ws_srv_start(&o);
  raw_open(&R1);
  ws_run_ms(1800);
  raw_echo_ok(&R1, 9);
  cr_assert_eq(S->disconnects, 0);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_graceful_close_sends_what_is_queued_then_1000) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  uint32_t c = S->last_conn;
  cr_assert_eq(send_seq(c, GK_MSG_ERROR, 77, 1), 0);
  gk_net_ws_disconnect(&S->w, c, 0);
  cr_assert_eq(send_seq(c, GK_MSG_ERROR, 78, 1), GK_ENOTFOUND);
  uint8_t p[400];
  size_t n = 0;
  cr_assert_eq(raw_next(&R1, p, sizeof p, &n, 2000), 2);
  cr_assert_eq(p[2], 77);
  cr_assert_eq(raw_close_code(&R1, 2000), 1000);
  const uint8_t back[2] = {0x03, 0xe8};
  raw_frame(&R1, 1, 8, back, 2, 0);
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  cr_assert_eq(S->last_reason, 1000);
  cr_assert_eq(S->w.stats.close_local, 1);
  raw_fill(&R1, sizeof R1.buf, 1000);
  cr_assert(R1.eof, "the server closes TCP after the close handshake");
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, an_at_once_close_reports_before_it_returns) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  gk_net_ws_disconnect(&S->w, S->last_conn, 1);
  cr_assert_eq(S->disconnects, 1);
  raw_fill(&R1, sizeof R1.buf, 1000);
  cr_assert(R1.eof);
  cr_assert_eq(R1.len, 0, "no close frame when closing at once");
  raw_close(&R1);
  raw_open(&R2);
  raw_echo_ok(&R2, 4);
  raw_close(&R2);
  ws_srv_stop();
}

Test(ws, a_peer_close_is_echoed_and_reported_with_its_code) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  const uint8_t bye[2] = {0x0f, 0xa1}; /* 4001: an application code */
  raw_frame(&R1, 1, 8, bye, 2, 0);
  cr_assert_eq(raw_close_code(&R1, 2000), 4001);
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  cr_assert_eq(S->last_reason, 4001);
  cr_assert_eq(S->w.stats.close_peer, 1);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, bytes_sent_with_the_request_are_the_first_frame) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_connect(&R1, 0);
  const char *req = "GET /play HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    "Connection: keep-alive, Upgrade\r\n"
                    "Sec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Protocol: gamekit.1\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
  /* a masked binary frame [2, 1, 9] right behind the request */
  const uint8_t frame[9] = {0x82, 0x83,      1,         2,        3,
                            4,    0x2 ^ 0x1, 0x1 ^ 0x2, 0x9 ^ 0x3};
  uint8_t both[512];
  size_t n = strlen(req);
  memcpy(both, req, n);
  memcpy(both + n, frame, sizeof frame);
  raw_write(&R1, both, n + sizeof frame);
  cr_assert(ws_run_until(&S->received, 1, 2000));
  cr_assert_eq(S->last_len, 3);
  cr_assert_eq(S->last[2], 9);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, bad_options_are_refused) {
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  gk_net_ws w;
  gk_net_ws_callbacks cb = {0};
  gk_net_ws_options o = ws_test_options();
  cr_assert_eq(gk_net_ws_init(&w, &loop, &o, &cb), GK_EINVAL); /* receive */
  gk_net_ws_options bad = o;
  bad.host = "localhost"; /* a literal only */
  cb.receive =
      (void (*)(void *, gk_net_ws *, uint32_t, const uint8_t *, size_t))1;
  cr_assert_eq(gk_net_ws_init(&w, &loop, &bad, &cb), GK_EIO);
  bad = o;
  bad.path = "play";
  cr_assert_eq(gk_net_ws_init(&w, &loop, &bad, &cb), GK_EINVAL);
  bad = o;
  bad.max_conns = 70000;
  cr_assert_eq(gk_net_ws_init(&w, &loop, &bad, &cb), GK_EINVAL);
  cr_assert_eq(uv_loop_close(&loop), 0);
}

Test(ws, closing_the_listener_drops_every_connection_with_1001) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  raw_open(&R2);
  gk_net_ws_close(&S->w, NULL);
  cr_assert_eq(S->disconnects, 2, "each connection is reported at once");
  cr_assert_eq(S->last_reason, 1001);
  cr_assert_eq(S->w.stats.close_local, 2);
  uint8_t b[2] = {2, 23};
  cr_assert_eq(gk_net_ws_send(&S->w, S->last_conn, b, 2, 1, 23), GK_ENOTFOUND);
  cr_assert_eq(raw_close_code(&R1, 1000), 1001, "going away");
  cr_assert_eq(raw_close_code(&R2, 1000), 1001);
  raw_fill(&R1, sizeof R1.buf, 1000);
  raw_fill(&R2, sizeof R2.buf, 1000);
  cr_assert(R1.eof && R2.eof);
  raw_close(&R1);
  raw_close(&R2);
  ws_srv_stop(); /* a second close is a no-op; the handles finish */
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

Test(ws, a_raw_echo_round_trip_is_well_under_a_millisecond) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  enum { N = 1000 };
  static uint64_t us[N];
  for (int i = 0; i < N; i++) {
    uint64_t t0 = uv_hrtime();
    raw_echo_ok(&R1, (uint8_t)i);
    us[i] = (uv_hrtime() - t0) / 1000u;
  }
  qsort(us, N, sizeof us[0], cmp_u64);
  fprintf(stderr,
          "ws raw echo round trip over %d (test and server on one loop): "
          "median %llu us, p90 %llu us\n",
          N, (unsigned long long)us[N / 2], (unsigned long long)us[N * 9 / 10]);
  cr_assert_lt(us[N / 2], 5000, "Nagle and delayed ACKs are back?");
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, a_message_costs_one_read_not_a_second_to_hear_eagain) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  raw_open(&R1);
  uint64_t reads0 = S->w.stats.reads, in0 = S->w.stats.msgs_in;
  enum { N = 200 };
  for (int i = 0; i < N; i++) raw_echo_ok(&R1, (uint8_t)i); /* one by one */
  uint64_t reads = S->w.stats.reads - reads0, in = S->w.stats.msgs_in - in0;
  cr_expect_eq(in, N);
  cr_expect_leq(reads, in + N / 20, "%llu reads for %llu messages",
                (unsigned long long)reads, (unsigned long long)in);
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws, clients_that_vanish_mid_handshake_leave_no_slot_taken) {
  gk_net_ws_options o = ws_test_options();
  o.max_conns = 1;
  ws_srv_start(&o);
  const char *req = "GET /play HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Protocol: gamekit.1\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
  for (int i = 0; i < 5; i++) {
    raw_connect(&R2, 0);
    raw_write(&R2, req, strlen(req) / (size_t)(i + 1)); /* whole or part */
    ws_run_ms(i * 5);
    raw_close(&R2);
    ws_run_ms(50);
  }
  cr_assert_eq(S->w.used, 0, "%u slots still taken", S->w.used);
  raw_open(&R1);
  raw_echo_ok(&R1, 1);
  cr_assert_eq(S->w.stats.hs_full, 0);
  raw_close(&R1);
  ws_srv_stop();
}
