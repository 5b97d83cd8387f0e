/* test_ws_guard.c: the WebSocket listener's (src/net/gk_net_ws.h) checks
 * that a near miss must not pass, on 127.0.0.1 with ws_raw.c's harness:
 * a static file symlinked into a sibling folder whose name begins with
 * static_dir's, an Origin that only begins with an allowed one, a pong
 * that answers no ping of ours, header lists whose items only begin with
 * the token asked for, and a port already taken (the reason named).
 * Each case also shows the exact value passing, so the check is live.
 * Every wait is bounded (ws_raw.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "gk_err.h"
#include "gk_net_ws.h"
#include "ws_raw.h"

TestSuite(ws_guard, .timeout = 60);

static raw R1, R2;

/* --- static files --------------------------------------------------------- */

static void put_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* GET `path` on a fresh connection; the status, the whole answer in R2. */
static int http_get(const char *path) {
  char req[256];
  snprintf(req, sizeof req,
           "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
           path);
  raw_connect(&R2, 0);
  raw_write(&R2, req, strlen(req));
  raw_fill(&R2, sizeof R2.buf - 1, 2000);
  R2.buf[R2.len] = 0;
  int status = 0;
  sscanf((const char *)R2.buf, "HTTP/1.1 %d", &status);
  raw_close(&R2);
  return status;
}

Test(ws_guard, a_symlink_into_a_sibling_folder_with_the_same_prefix_is_404) {
  char top[] = "/tmp/gk-ws-guard-XXXXXX";
  cr_assert_not_null(mkdtemp(top));
  char web[64], priv[64], link[128], dlink[128], target[128];
  snprintf(web, sizeof web, "%s/web", top);
  snprintf(priv, sizeof priv, "%s/web-private", top);
  cr_assert_eq(mkdir(web, 0700), 0);
  cr_assert_eq(mkdir(priv, 0700), 0);
  put_file(web, "index.html", "<p>hello</p>\n");
  put_file(priv, "secret.txt", "the secret\n");
  snprintf(target, sizeof target, "%s/secret.txt", priv);
  snprintf(link, sizeof link, "%s/secret.txt", web);
  snprintf(dlink, sizeof dlink, "%s/private", web);
  cr_assert_eq(symlink(target, link), 0);
  cr_assert_eq(symlink(priv, dlink), 0);
  gk_net_ws_options o = ws_test_options();
  o.static_dir = web;
  ws_srv_start(&o);
  int file = http_get("/secret.txt");
  int through_dir = http_get("/private/secret.txt");
  int index = http_get("/index.html");
  const char *body = (const char *)R2.buf;
  cr_assert_eq(index, 200, "the page itself: %d", index);
  cr_assert_not_null(strstr(body, "hello"));
  uint64_t missing = S->w.stats.http_missing;
  ws_srv_stop();
  unlink(link);
  unlink(dlink);
  unlink(target);
  snprintf(link, sizeof link, "%s/index.html", web);
  unlink(link);
  rmdir(priv);
  rmdir(web);
  rmdir(top);
  cr_assert_eq(file, 404, "%s/web-private/secret.txt served (%d)", top, file);
  cr_assert_eq(through_dir, 404, "served through a folder link (%d)",
               through_dir);
  cr_assert_eq(missing, 2);
}

/* --- handshakes ----------------------------------------------------------- */

/* Sends a whole handshake request as written; the HTTP status. */
static int handshake_text(const char *req) {
  raw_connect(&R2, 0);
  raw_write(&R2, req, strlen(req));
  raw_fill(&R2, sizeof R2.buf - 1, 2000);
  R2.buf[R2.len] = 0;
  int status = 0;
  sscanf((const char *)R2.buf, "HTTP/1.1 %d", &status);
  raw_close(&R2);
  return status;
}

#define REQ_HEAD "GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\n"
#define REQ_KEY                                                                \
  "Sec-WebSocket-Version: 13\r\n"                                              \
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

Test(ws_guard, an_origin_that_only_begins_with_an_allowed_one_is_403) {
  gk_net_ws_options o = ws_test_options();
  const char *origins[] = {"https://play.example"};
  o.origins = origins;
  o.n_origins = 1;
  ws_srv_start(&o);
  const char *near[] = {"Origin: https://play.example.evil.com\r\n",
                        "Origin: https://play.example:8443\r\n",
                        "Origin: https://play.exampl\r\n"};
  for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
    raw_connect(&R2, 0);
    int st =
        raw_handshake(&R2, "/play", "websocket", "13", "gamekit.1", near[i]);
    raw_close(&R2);
    cr_assert_eq(st, 403, "%.*s let in (%d)", (int)strlen(near[i]) - 2, near[i],
                 st);
  }
  cr_assert_eq(S->w.stats.hs_origin, 3);
  cr_assert_eq(S->connects, 0);
  raw_connect(&R1, 0);
  cr_assert_eq(raw_handshake(&R1, "/play", "websocket", "13", "gamekit.1",
                             "Origin: https://play.example\r\n"),
               101, "the allowed origin itself");
  raw_close(&R1);
  ws_srv_stop();
}

Test(ws_guard, header_lists_match_whole_tokens_not_beginnings) {
  gk_net_ws_options o = ws_test_options();
  ws_srv_start(&o);
  const char *near[] = {
      /* the subprotocol offered only as a longer name */
      REQ_HEAD "Upgrade: websocket\r\nConnection: Upgrade\r\n" REQ_KEY
               "Sec-WebSocket-Protocol: gamekit.10\r\n\r\n",
      REQ_HEAD "Upgrade: websocket\r\nConnection: Upgrade\r\n" REQ_KEY
               "Sec-WebSocket-Protocol: gamekit.\r\n\r\n",
      REQ_HEAD "Upgrade: websocketx\r\nConnection: Upgrade\r\n" REQ_KEY
               "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n",
      REQ_HEAD "Upgrade: websocket\r\nConnection: upgraded\r\n" REQ_KEY
               "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n",
      REQ_HEAD
      "Upgrade: websocket\r\nConnection: keep-alive, upgrad\r\n" REQ_KEY
      "Sec-WebSocket-Protocol: gamekit.1\r\n\r\n",
  };
  static const char *const names[] = {
      "Sec-WebSocket-Protocol: gamekit.10", "Sec-WebSocket-Protocol: gamekit.",
      "Upgrade: websocketx", "Connection: upgraded",
      "Connection: keep-alive, upgrad"};
  for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
    cr_assert_eq(handshake_text(near[i]), 400, "a handshake with %s taken",
                 names[i]);
  cr_assert_eq(S->w.stats.hs_protocol, 2);
  cr_assert_eq(S->w.stats.hs_upgrade, 3);
  cr_assert_eq(S->connects, 0);
  /* whole tokens among others pass */
  raw_connect(&R1, 0);
  const char *good = REQ_HEAD
      "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" REQ_KEY
      "Sec-WebSocket-Protocol: gamekit.10, gamekit.1\r\n\r\n";
  raw_write(&R1, good, strlen(good));
  cr_assert(ws_run_until(&S->connects, 1, 2000), "the good one was refused");
  raw_close(&R1);
  ws_run_ms(20);
  ws_srv_stop();
}

/* --- pongs ---------------------------------------------------------------- */

Test(ws_guard, a_pong_the_listener_did_not_ask_for_is_no_round_trip) {
  gk_net_ws_options o = ws_test_options();
  o.ping_ms = 20;
  ws_srv_start(&o);
  raw_open(&R1);
  uint32_t c = S->last_conn;
  /* While each ping of ours is outstanding, pongs that are not its echo:
   * a timestamp one second older, zeros, a short one. */
  uint64_t end = uv_hrtime() / 1000000u + 300;
  int pings = 0;
  uint8_t p[128];
  size_t n = 0;
  while (uv_hrtime() / 1000000u < end) {
    if (raw_next(&R1, p, sizeof p, &n, 20) != 9) continue;
    cr_assert_eq(n, 8, "our ping's payload is a timestamp");
    pings++;
    uint64_t ts = 0;
    for (int i = 0; i < 8; i++) ts = ts << 8 | p[i];
    ts -= UINT64_C(1000000000);
    uint8_t older[8], zeros[8] = {0};
    for (int i = 0; i < 8; i++) older[i] = (uint8_t)(ts >> (56 - 8 * i));
    raw_frame(&R1, 1, 10, older, 8, 0);
    raw_frame(&R1, 1, 10, zeros, 8, 0);
    raw_frame(&R1, 1, 10, older, 3, 0);
  }
  cr_assert_geq(pings, 5, "only %d pings came", pings);
  cr_assert_eq(S->w.stats.pongs, 0, "%llu forged pongs taken",
               (unsigned long long)S->w.stats.pongs);
  cr_assert_eq(gk_net_ws_rtt_us(&S->w, c), 0, "a round trip of %llu us",
               (unsigned long long)gk_net_ws_rtt_us(&S->w, c));
  /* the true echo is taken */
  end = uv_hrtime() / 1000000u + 200;
  while (uv_hrtime() / 1000000u < end)
    if (raw_next(&R1, p, sizeof p, &n, 20) == 9) raw_frame(&R1, 1, 10, p, n, 0);
  cr_assert_gt(S->w.stats.pongs, 0);
  uint64_t rtt = gk_net_ws_rtt_us(&S->w, c);
  cr_assert(rtt > 0 && rtt < 500000, "round trip %llu us",
            (unsigned long long)rtt);
  raw_close(&R1);
  ws_srv_stop();
}

/* --- the port ------------------------------------------------------------- */

Test(ws_guard, a_taken_port_fails_with_address_already_in_use) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(fd, 1), 0);
  cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  gk_net_ws w;
  gk_net_ws_options o = ws_test_options();
  o.port = ntohs(a.sin_port);
  gk_net_ws_callbacks cb = {.receive = (void (*)(void *, gk_net_ws *, uint32_t,
                                                 const uint8_t *, size_t))1};
  int rc = gk_net_ws_init(&w, &loop, &o, &cb);
  close(fd);
  cr_assert_eq(rc, GK_EIO, "%s", gk_err_name(rc));
  cr_assert_eq(w.sys_err, UV_EADDRINUSE, "%d: %s", w.sys_err,
               w.sys_err != 0 ? uv_strerror(w.sys_err) : "none");
  cr_assert_str_eq(uv_strerror(w.sys_err), "address already in use");
  cr_assert_eq(uv_loop_close(&loop), 0);
}
