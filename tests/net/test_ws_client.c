/* test_ws_client.c: the WebSocket client (src/net/gk_net_ws_client.h) on
 * the test's uv loop, on 127.0.0.1: against the real gk_net_ws listener
 * (ws_raw.c's echo harness: binary messages there and back, pings both
 * ways, closes both ways, 404 and 403 refusals), and against a raw TCP
 * server written here on the same loop that answers each handshake with
 * a canned, bad response (a wrong accept value, a wrong or missing
 * subprotocol, 404, 403, not HTTP, no Upgrade, headers too long, silence,
 * a message over the limit, header lists whose items only begin with the
 * tokens, a server that stops reading): each ends with the documented
 * code and a sentence, never a crash. Every wait is bounded
 * (ws_run_until). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws.h"
#include "gk_net_ws_client.h"
#include "gk_net_ws_key.h"
#include "ws_raw.h"

TestSuite(ws_client, .timeout = 60);

typedef struct cl {
  gk_net_ws_client c;
  int connects, disconnects, received, closed;
  uint32_t conn;
  int err, code, status;
  char why[256];
  size_t bytes;  /* payload received */
  int bad;       /* an echo unlike what was sent */
  uint32_t next; /* the next echo's sequence number */
} cl;

static cl C;

static void cl_receive(void *ctx, gk_net_ws_client *c, uint32_t conn,
                       const uint8_t *p, size_t len) {
  cl *x = ctx;
  (void)c;
  (void)conn;
  /* message i: i % 1199 + 2 bytes, byte j = (i + j) & 0xff */
  uint32_t i = x->next++;
  if (len != i % 1199 + 2) x->bad++;
  for (size_t j = 0; j < len; j++)
    if (p[j] != (uint8_t)(i + j)) x->bad++;
  x->received++;
  x->bytes += len;
}

static void cl_connect(void *ctx, gk_net_ws_client *c, uint32_t conn) {
  cl *x = ctx;
  (void)c;
  x->connects++;
  x->conn = conn;
}

static void cl_disconnect(void *ctx, gk_net_ws_client *c, uint32_t conn,
                          const gk_net_ws_client_end *e) {
  cl *x = ctx;
  (void)c;
  (void)conn;
  x->disconnects++;
  x->err = e->err;
  x->code = e->code;
  x->status = e->http_status;
  snprintf(x->why, sizeof x->why, "%s", e->why);
}

static void cl_closed(gk_net_ws_client *c) {
  (void)c;
  C.closed = 1;
}

static void cl_start_with(const gk_net_ws_client_options *o) {
  memset(&C, 0, sizeof C);
  gk_net_ws_client_callbacks cb = {&C, cl_receive, cl_connect, cl_disconnect};
  cr_assert_eq(gk_net_ws_client_init(&C.c, &S->loop, o, &cb), 0);
}

static void cl_start(const char *origin) {
  gk_net_ws_client_options o = {.max_conns = 4,
                                .origin = origin,
                                .handshake_ms = 500,
                                .ping_ms = 10,
                                .close_ms = 300};
  cl_start_with(&o);
}

static void cl_stop(void) {
  gk_net_ws_client_close(&C.c, cl_closed);
  cr_assert(ws_run_until(&C.closed, 1, 2000));
}

static void cl_connect_to(const char *path, uint16_t port) {
  char url[128];
  snprintf(url, sizeof url, "ws://127.0.0.1:%u%s", port, path);
  uint32_t id;
  cr_assert_eq(gk_net_ws_client_connect(&C.c, url, &id), 0);
}

static void send_msg(uint32_t i) {
  uint8_t m[GK_WIRE_MAX];
  size_t len = i % 1199 + 2;
  for (size_t j = 0; j < len; j++) m[j] = (uint8_t)(i + j);
  cr_assert_eq(gk_net_ws_client_send(&C.c, C.conn, m, len, 1), 0);
}

Test(ws_client, connects_to_the_listener_and_round_trips_binary_messages) {
  gk_net_ws_options o = ws_test_options();
  o.ping_ms = 10;
  ws_srv_start(&o);
  cl_start(NULL);
  cl_connect_to("/play", S->w.port);
  cr_assert(ws_run_until(&C.connects, 1, 2000), "%s", C.why);
  cr_assert(ws_run_until(&S->connects, 1, 2000));
  const uint32_t n = 600;
  size_t sent = 0;
  for (uint32_t i = 0; i < n; i++) {
    send_msg(i);
    sent += i % 1199 + 2;
    if (i % 50 == 49) ws_run_ms(5); /* let the echo come back meanwhile */
  }
  cr_assert(ws_run_until(&C.received, (int)n, 5000), "%d of %u echoes",
            C.received, n);
  cr_assert_eq(C.bad, 0, "%d bytes unlike what was sent", C.bad);
  cr_assert_eq(C.bytes, sent);
  cr_assert_eq(S->w.stats.msgs_in, n);
  cr_assert_eq(C.c.stats.msgs_in, n);
  ws_run_ms(60); /* pings both ways */
  cr_assert_gt(C.c.stats.pongs, 0, "our pings got no pong");
  cr_assert_gt(S->w.stats.pongs, 0, "the listener's pings got no pong");
  uint64_t rtt = gk_net_ws_client_rtt_us(&C.c, C.conn);
  cr_assert(rtt > 0 && rtt < 100000, "round trip %llu us",
            (unsigned long long)rtt);
  cr_assert_eq(gk_net_ws_client_send(&C.c, C.conn, (const uint8_t *)"x",
                                     GK_WIRE_MAX + 1, 1),
               GK_ETOOBIG);
  gk_net_ws_client_disconnect(&C.c, C.conn, 0);
  cr_assert(ws_run_until(&C.disconnects, 1, 2000));
  cr_assert_eq(C.err, 0);
  cr_assert_eq(C.code, 1000, "%d: %s", C.code, C.why);
  cr_assert(ws_run_until(&S->disconnects, 1, 2000));
  cr_assert_eq(S->last_reason, 1000);
  cr_assert_eq(S->w.stats.close_peer, 1);
  cr_assert_eq(gk_net_ws_client_send(&C.c, C.conn, (const uint8_t *)"ab", 2, 1),
               GK_ENOTFOUND, "a dead id must be refused");
  cl_stop();
  ws_srv_stop();
}

Test(ws_client, a_close_from_the_listener_ends_with_its_code) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  cl_start(NULL);
  cl_connect_to("/play", S->w.port);
  cr_assert(ws_run_until(&S->connects, 1, 2000));
  cr_assert(ws_run_until(&C.connects, 1, 2000));
  gk_net_ws_disconnect(&S->w, S->last_conn, 0);
  cr_assert(ws_run_until(&C.disconnects, 1, 2000));
  cr_assert_eq(C.err, 0);
  cr_assert_eq(C.code, 1000);
  cr_assert(strstr(C.why, "server closed") != NULL, "%s", C.why);
  cl_stop();
  ws_srv_stop();
}

Test(ws_client, the_listener_refuses_another_path_404_and_an_origin_403) {
  gk_net_ws_options o = ws_test_options();
  const char *origins[] = {"https://play.example"};
  o.origins = origins;
  o.n_origins = 1;
  ws_srv_start(&o);
  cl_start("https://evil.example");
  cl_connect_to("/other", S->w.port);
  cr_assert(ws_run_until(&C.disconnects, 1, 2000));
  cr_assert_eq(C.err, GK_EREFUSED, "%s: %s", gk_err_name(C.err), C.why);
  cr_assert_eq(C.status, 404);
  cr_assert(strstr(C.why, "404") != NULL, "%s", C.why);
  cl_connect_to("/play", S->w.port);
  cr_assert(ws_run_until(&C.disconnects, 2, 2000));
  cr_assert_eq(C.err, GK_EREFUSED, "%s: %s", gk_err_name(C.err), C.why);
  cr_assert_eq(C.status, 403);
  cr_assert(strstr(C.why, "origin not allowed") != NULL, "%s", C.why);
  cr_assert_eq(C.connects, 0);
  cr_assert_eq(S->w.stats.hs_path, 1);
  cr_assert_eq(S->w.stats.hs_origin, 1);
  cl_stop();
  /* the right origin gets in */
  cl_start("https://play.example");
  cl_connect_to("/play", S->w.port);
  cr_assert(ws_run_until(&C.connects, 1, 2000), "%s", C.why);
  cl_stop();
  ws_srv_stop();
}

/* --- a raw server that answers badly -------------------------------------- */

typedef struct bad {
  uv_tcp_t srv, conn;
  uint16_t port;
  const char *answer; /* "@A@" stands for the accept value */
  int wrong_accept;   /* answer the accept of another key */
  int silent;         /* never answer */
  int big_frame;      /* after the 101, a binary frame over the limit */
  int hangup;         /* close without an answer */
  int deaf;           /* after the answer, read nothing more */
  char req[4096];
  size_t len;
  int accepted, conn_open;
} bad;

static bad B;

static void bad_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  (void)h;
  (void)hint;
  *buf = uv_buf_init(B.req + B.len, (unsigned)(sizeof B.req - 1 - B.len));
}

static void bad_write(const char *p, size_t n) {
  uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
  cr_assert_eq(uv_try_write((uv_stream_t *)&B.conn, &b, 1), (int)n);
}

static void bad_answer(void) {
  const char *k = strstr(B.req, "Sec-WebSocket-Key: ");
  cr_assert_not_null(k, "no key in the request");
  char key[GK_NET_WS_KEY_LEN + 1], acc[GK_NET_WS_ACCEPT_LEN + 1];
  memcpy(key, k + 19, GK_NET_WS_KEY_LEN);
  key[GK_NET_WS_KEY_LEN] = '\0';
  cr_assert(gk_net_ws_key_check(key), "a bad key sent: %s", key);
  if (B.wrong_accept) key[0] = key[0] == 'A' ? 'B' : 'A';
  gk_net_ws_key_accept(key, acc);
  static char out[8192];
  const char *at = strstr(B.answer, "@A@");
  if (at == NULL)
    snprintf(out, sizeof out, "%s", B.answer);
  else
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - B.answer), B.answer, acc,
             at + 3);
  bad_write(out, strlen(out));
  if (B.big_frame) { /* 126: a 16-bit length of 2000, unmasked */
    static uint8_t f[4 + 2000] = {0x82, 126, 2000 >> 8, 2000 & 0xff};
    bad_write((const char *)f, sizeof f);
  }
}

static void bad_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  (void)s;
  (void)buf;
  if (n <= 0) return;
  B.len += (size_t)n;
  B.req[B.len] = '\0';
  if (strstr(B.req, "\r\n\r\n") == NULL || B.silent) return;
  if (B.hangup) {
    uv_read_stop((uv_stream_t *)&B.conn);
    uv_close((uv_handle_t *)&B.conn, NULL);
    B.conn_open = 0;
    return;
  }
  bad_answer();
  B.silent = 1; /* once */
  if (B.deaf) uv_read_stop((uv_stream_t *)&B.conn);
}

static void bad_accept(uv_stream_t *srv, int status) {
  cr_assert_eq(status, 0);
  cr_assert_eq(B.accepted, 0, "one connection per case");
  uv_tcp_init(&S->loop, &B.conn);
  cr_assert_eq(uv_accept(srv, (uv_stream_t *)&B.conn), 0);
  B.accepted = B.conn_open = 1;
  uv_read_start((uv_stream_t *)&B.conn, bad_alloc, bad_read);
}

static void bad_start(void) {
  uv_tcp_init(&S->loop, &B.srv);
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", 0, &a);
  cr_assert_eq(uv_tcp_bind(&B.srv, (const struct sockaddr *)&a, 0), 0);
  cr_assert_eq(uv_listen((uv_stream_t *)&B.srv, 4, bad_accept), 0);
  struct sockaddr_in got;
  int len = sizeof got;
  uv_tcp_getsockname(&B.srv, (struct sockaddr *)&got, &len);
  B.port = ntohs(got.sin_port);
}

static void bad_stop(void) {
  if (B.conn_open) uv_close((uv_handle_t *)&B.conn, NULL);
  uv_close((uv_handle_t *)&B.srv, NULL);
}

#define UPGRADE "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
#define GOOD_101                                                               \
  UPGRADE "Connection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n"               \
          "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n"

typedef struct bad_case {
  const char *name, *answer;
  int wrong_accept, silent, hangup, big_frame;
  int err, status;   /* the attempt's end (err 0: it opened, see code) */
  int code;          /* the close code once open */
  const char *words; /* in the sentence */
} bad_case;

static void run_case(const bad_case *t) {
  ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
  memset(&B, 0, sizeof B);
  B.answer = t->answer;
  B.wrong_accept = t->wrong_accept;
  B.silent = t->silent;
  B.hangup = t->hangup;
  B.big_frame = t->big_frame;
  bad_start();
  cl_start(NULL);
  cl_connect_to("/play", B.port);
  cr_assert(ws_run_until(&C.disconnects, 1, 3000), "%s: no end", t->name);
  cr_assert_eq(C.err, t->err, "%s: %s (%s)", t->name, gk_err_name(C.err),
               C.why);
  cr_assert_eq(C.status, t->status, "%s: status %d", t->name, C.status);
  if (t->err == 0)
    cr_assert_eq(C.code, t->code, "%s: code %d", t->name, C.code);
  cr_assert(strstr(C.why, t->words) != NULL, "%s: '%s' lacks '%s'", t->name,
            C.why, t->words);
  cr_assert_eq(C.connects, t->err == 0, "%s", t->name);
  cr_assert(strstr(B.req, "Sec-WebSocket-Protocol: gamekit.1\r\n") != NULL);
  cr_assert(strstr(B.req, "Sec-WebSocket-Version: 13\r\n") != NULL);
  cl_stop();
  bad_stop();
  ws_srv_stop();
}

Test(ws_client, every_bad_handshake_answer_ends_with_its_code_and_a_reason) {
  static char huge[6000];
  memset(huge, 0, sizeof huge);
  strcpy(huge, UPGRADE "X-Pad: ");
  memset(huge + strlen(huge), 'a', 4500);
  const bad_case cases[] = {
      {"good", GOOD_101, .err = 0, .code = 1000, .words = "closed"},
      {"wrong accept", GOOD_101, .wrong_accept = 1, .err = GK_EMISMATCH,
       .words = "Sec-WebSocket-Accept"},
      {"wrong subprotocol",
       UPGRADE "Connection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n"
               "Sec-WebSocket-Protocol: gamekit.2\r\n\r\n",
       .err = GK_EVERSION, .words = "gamekit.2"},
      {"no subprotocol",
       UPGRADE "Connection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n\r\n",
       .err = GK_EVERSION, .words = "(none)"},
      {"404",
       "HTTP/1.1 404 Not Found\r\nConnection: close\r\n"
       "Content-Length: 13\r\n\r\nno such path\n",
       .err = GK_EREFUSED, .status = 404, .words = "no such path"},
      {"403",
       "HTTP/1.1 403 Forbidden\r\nContent-Length: 19\r\n\r\n"
       "origin not allowed\n",
       .err = GK_EREFUSED, .status = 403, .words = "403 Forbidden"},
      {"not http", "SSH-2.0-OpenSSH\r\n\r\n", .err = GK_EPROTO,
       .words = "not an HTTP/1.1"},
      {"no upgrade",
       "HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n"
       "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n",
       .err = GK_EPROTO, .words = "Upgrade: websocket"},
      {"extension",
       UPGRADE "Connection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n"
               "Sec-WebSocket-Protocol: gamekit.1\r\n"
               "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
       .err = GK_EPROTO, .words = "extension"},
      {"accept twice",
       UPGRADE "Connection: Upgrade\r\nSec-WebSocket-Accept: @A@\r\n"
               "Sec-WebSocket-Accept: x\r\n"
               "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n",
       .err = GK_EPROTO, .words = "twice"},
      {"headers too long", huge, .err = GK_EPROTO, .words = "over 4096"},
      {"silent", "", .silent = 1, .err = GK_ETIMEDOUT, .words = "500 ms"},
      {"hang up", "", .hangup = 1, .err = GK_EIO, .words = "before the 101"},
      {"message over the limit", GOOD_101, .big_frame = 1, .err = 0,
       .code = 1009, .words = "1009"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bad_case *t = &cases[i];
    if (t->err == 0 && !t->big_frame) { /* good: the client closes it */
      ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
      memset(&B, 0, sizeof B);
      B.answer = t->answer;
      bad_start();
      cl_start(NULL);
      cl_connect_to("/play", B.port);
      cr_assert(ws_run_until(&C.connects, 1, 2000), "good: %s", C.why);
      cr_assert(strstr(B.req, "Upgrade: websocket\r\n") != NULL);
      cr_assert(strstr(B.req, "Host: 127.0.0.1:") != NULL);
      cl_stop();
      bad_stop();
      ws_srv_stop();
      continue;
    }
    run_case(t);
  }
}

Test(ws_client, a_closed_port_fails_with_eio) {
  ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
  memset(&B, 0, sizeof B);
  bad_start();
  uint16_t port = B.port;
  bad_stop();
  ws_run_ms(10);
  cl_start(NULL);
  cl_connect_to("/play", port);
  cr_assert(ws_run_until(&C.disconnects, 1, 2000));
  cr_assert_eq(C.err, GK_EIO, "%s", gk_err_name(C.err));
  cr_assert(strstr(C.why, "cannot connect") != NULL, "%s", C.why);
  cl_stop();
  ws_srv_stop();
}

Test(ws_client, urls_are_parsed_and_wss_is_named_as_the_browsers) {
  gk_net_ws_url u;
  char err[256];
  cr_assert_eq(
      gk_net_ws_url_parse("ws://127.0.0.1:7779/play", &u, err, sizeof err), 0,
      "%s", err);
  cr_assert_str_eq(u.host, "127.0.0.1");
  cr_assert_eq(u.port, 7779);
  cr_assert_str_eq(u.path, "/play");
  cr_assert_eq(gk_net_ws_url_parse("ws://[::1]:80", &u, err, sizeof err), 0);
  cr_assert_str_eq(u.host, "::1");
  cr_assert_str_eq(u.path, "/");
  cr_assert_eq(gk_net_ws_url_parse("ws://localhost/p?x=1", &u, err, sizeof err),
               0);
  cr_assert_eq(u.port, 80);
  cr_assert_str_eq(u.path, "/p?x=1");
  cr_assert_eq(gk_net_ws_url_parse("wss://127.0.0.1/play", &u, err, sizeof err),
               GK_EINVAL);
  cr_assert(strstr(err, "browsers") != NULL, "%s", err);
  const char *bad_urls[] = {"http://127.0.0.1/",  "ws://example.com/play",
                            "ws://127.0.0.1:0/",  "ws://127.0.0.1:70000/",
                            "ws://127.0.0.1:x/",  "ws://u@127.0.0.1/",
                            "ws://127.0.0.1/a b", "ws:///play",
                            "ws://127.0.0.1/#f",  "ws://[::1/"};
  for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
    err[0] = '\0';
    cr_assert_eq(gk_net_ws_url_parse(bad_urls[i], &u, err, sizeof err),
                 GK_EINVAL, "%s", bad_urls[i]);
    cr_assert(strstr(err, "bad WebSocket URL") != NULL, "%s", bad_urls[i]);
  }
}

/* --- the 101's header lists, and a server that does not read ------------- */

/* One answer (`name` says what is wrong in it) that must not open: the
 * attempt's end within 2 s. */
static void refused_101(const char *name, const char *answer, int err,
                        const char *words) {
  ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
  memset(&B, 0, sizeof B);
  B.answer = answer;
  bad_start();
  cl_start(NULL);
  cl_connect_to("/play", B.port);
  uint64_t end = uv_hrtime() / 1000000u + 2000;
  while (C.connects + C.disconnects == 0 && uv_hrtime() / 1000000u < end)
    uv_run(&S->loop, UV_RUN_ONCE);
  cr_assert_eq(C.connects, 0, "a 101 with %s opened", name);
  cr_assert_eq(C.disconnects, 1, "a 101 with %s: no end", name);
  cr_assert_eq(C.err, err, "a 101 with %s: %s (%s)", name, gk_err_name(C.err),
               C.why);
  cr_assert(strstr(C.why, words) != NULL, "'%s' lacks '%s'", C.why, words);
  cl_stop();
  bad_stop();
  ws_srv_stop();
}

#define ACCEPT_PROTO                                                           \
  "Sec-WebSocket-Accept: @A@\r\nSec-WebSocket-Protocol: gamekit.1\r\n\r\n"
#define STATUS_101 "HTTP/1.1 101 Switching Protocols\r\n"

Test(ws_client, a_101_without_connection_upgrade_is_refused_as_eproto) {
  refused_101("no Connection header",
              STATUS_101 "Upgrade: websocket\r\n" ACCEPT_PROTO, GK_EPROTO,
              "Connection: Upgrade");
}

Test(ws_client,
     a_101_whose_header_lists_only_begin_with_the_tokens_is_refused) {
  refused_101("Upgrade: websocketx",
              STATUS_101
              "Upgrade: websocketx\r\nConnection: Upgrade\r\n" ACCEPT_PROTO,
              GK_EPROTO, "Upgrade: websocket");
  refused_101("Connection: upgraded",
              STATUS_101
              "Upgrade: websocket\r\nConnection: upgraded\r\n" ACCEPT_PROTO,
              GK_EPROTO, "Connection: Upgrade");
  refused_101("Sec-WebSocket-Protocol: gamekit.10",
              STATUS_101 "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Accept: @A@\r\n"
                         "Sec-WebSocket-Protocol: gamekit.10\r\n\r\n",
              GK_EVERSION, "gamekit.10");
  /* whole tokens among others open */
  ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
  memset(&B, 0, sizeof B);
  B.answer = STATUS_101 "Upgrade: h2c, WebSocket\r\n"
                        "Connection: keep-alive, upgrade\r\n" ACCEPT_PROTO;
  bad_start();
  cl_start(NULL);
  cl_connect_to("/play", B.port);
  cr_assert(ws_run_until(&C.connects, 1, 2000), "%s", C.why);
  cl_stop();
  bad_stop();
  ws_srv_stop();
}

Test(ws_client, a_server_that_does_not_read_gets_1008_and_a_bounded_backlog) {
  ws_srv_start(&(gk_net_ws_options){.host = "127.0.0.1"});
  memset(&B, 0, sizeof B);
  B.answer = GOOD_101;
  B.deaf = 1;
  bad_start();
  gk_net_ws_client_options o = {
      .handshake_ms = 500, .close_ms = 300, .backlog = 16384};
  cl_start_with(&o);
  cl_connect_to("/play", B.port);
  cr_assert(ws_run_until(&C.connects, 1, 2000), "%s", C.why);
  ws_run_ms(20); /* the 101 is read; the server reads nothing more */
  static uint8_t m[1024];
  m[0] = 2;
  m[1] = GK_MSG_ERROR;
  int rc = 0;
  uint32_t i = 0;
  size_t most = 0;
  for (; i < 20000 && rc == 0; i++) {
    rc = gk_net_ws_client_send(&C.c, C.conn, m, sizeof m, 1);
    size_t q = gk_net_ws_client_backlog(&C.c, C.conn);
    if (q > most) most = q;
  }
  cr_assert_eq(rc, GK_EFULL, "%u reliable messages queued, %zu bytes waiting",
               i, most);
  cr_assert_leq(most, 4 * 16384 + sizeof m + 16, "%zu bytes waited", most);
  cr_assert_eq(C.c.stats.drop_full, 1);
  cr_assert_eq(gk_net_ws_client_send(&C.c, C.conn, m, sizeof m, 1),
               GK_ENOTFOUND, "closing: nothing more is taken");
  cr_assert(ws_run_until(&C.disconnects, 1, 2000), "no end");
  cr_assert_eq(C.err, 0);
  cr_assert_eq(C.code, 1008, "%d: %s", C.code, C.why);
  cr_assert(strstr(C.why, "does not read") != NULL, "%s", C.why);
  cl_stop();
  bad_stop();
  ws_srv_stop();
}
