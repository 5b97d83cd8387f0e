/* test_listen.c: starting and stopping a server in process. A listener
 * whose port is taken stops gk_server_start with the system's reason, "address
 * already in use", not a generic "input/output error": the ENet host (UDP), the
 * WebSocket listener (TCP) and the admin listener (TCP), each in turn, in
 * process. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "gk_server.h"

/* A socket of `type` bound (and for TCP listening) on 127.0.0.1, port
 * chosen by the kernel: *port gets it. The caller closes it. */
static int take_port(int type, uint16_t *port) {
  int fd = socket(AF_INET, type, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  if (type == SOCK_STREAM) cr_assert_eq(listen(fd, 4), 0);
  socklen_t n = sizeof a;
  cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
  *port = ntohs(a.sin_port);
  return fd;
}

static void config(gk_server_config *cfg) {
  gk_server_config_default(cfg);
  snprintf(cfg->host, sizeof cfg->host, "127.0.0.1");
  cfg->port = 0;
  cfg->replays_enabled = 0;
}

/* A loop and a log in a temporary file for one in-process server. */
typedef struct rig {
  uv_loop_t loop;
  FILE *logf;
  gk_server_log log;
  gk_server *s;
  char err[512];
} rig;

/* Starts a server on `b`: gk_server_start's code (the reason in b->err). */
static int rig_start(rig *b, const gk_server_config *cfg) {
  memset(b, 0, sizeof(*b));
  cr_assert_eq(uv_loop_init(&b->loop), 0);
  b->logf = tmpfile();
  cr_assert_not_null(b->logf);
  gk_log_init(&b->log, b->logf, GK_LOG_INFO);
  return gk_server_start(&b->loop, cfg, &b->log, 0, &b->s, b->err,
                         sizeof b->err);
}

static void rig_close(rig *b) {
  for (int i = 0; i < 1000 && uv_run(&b->loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  uv_loop_close(&b->loop);
  fclose(b->logf);
}

/* gk_server_start must fail, naming `what` and the errno's text. */
static void expect_in_use(const gk_server_config *cfg, const char *what) {
  static rig b;
  int rc = rig_start(&b, cfg);
  const char *err = b.err;
  cr_assert_neq(rc, 0, "%s started on a taken port", what);
  cr_assert_not_null(strstr(err, what), "%s", err);
  char lower[sizeof b.err];
  for (size_t i = 0; i < sizeof lower; i++)
    lower[i] = (char)(err[i] >= 'A' && err[i] <= 'Z' ? err[i] + 32 : err[i]);
  cr_assert_not_null(strstr(lower, "address already in use"), "%s", err);
  rig_close(&b);
}

Test(listen, a_taken_enet_port_says_address_already_in_use) {
  gk_server_config cfg;
  config(&cfg);
  int fd = take_port(SOCK_DGRAM, &cfg.port);
  expect_in_use(&cfg, "cannot listen on 127.0.0.1:");
  close(fd);
}

Test(listen, a_taken_websocket_port_says_address_already_in_use) {
  gk_server_config cfg;
  config(&cfg);
  cfg.ws.enabled = 1;
  snprintf(cfg.ws.host, sizeof cfg.ws.host, "127.0.0.1");
  int fd = take_port(SOCK_STREAM, &cfg.ws.port);
  expect_in_use(&cfg, "websocket: cannot listen on 127.0.0.1:");
  close(fd);
}

Test(listen, a_taken_admin_port_says_address_already_in_use) {
  gk_server_config cfg;
  config(&cfg);
  uint16_t port = 0;
  int fd = take_port(SOCK_STREAM, &port);
  cfg.admin.enabled = 1;
  snprintf(cfg.admin.host, sizeof cfg.admin.host, "127.0.0.1");
  snprintf(cfg.admin.listen, sizeof cfg.admin.listen, "127.0.0.1:%u",
           (unsigned)port);
  cfg.admin.port = port;
  cfg.admin.loopback = 1;
  expect_in_use(&cfg, "admin.listen: cannot listen on 127.0.0.1:");
  close(fd);
}

/* The "stopped" record holds the server totals configs/README.md names:
 * the step timer's work in us (tick_us, ...), the auth_*, limit_* and
 * replies_* counters, the rooms' counters (GK_ROOM_COUNTERS) and the
 * socket's drains, each once. */
Test(listen, the_stopped_record_has_every_documented_key_once) {
  gk_server_config cfg;
  config(&cfg);
  static rig b;
  cr_assert_eq(rig_start(&b, &cfg), 0, "%s", b.err);
  gk_server_shutdown(b.s);
  gk_server_shutdown(b.s); /* at once */
  for (int i = 0; i < 1000 && uv_run(&b.loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  static char text[1 << 16];
  rewind(b.logf);
  size_t n = fread(text, 1, sizeof(text) - 1, b.logf);
  text[n] = '\0';
  rig_close(&b);
  const char *line = strstr(text, "\"event\":\"stopped\"");
  cr_assert_not_null(line, "no stopped record in %s", text);
  static const char *const keys[] = {"tick_us",
                                     "tick_us_max",
                                     "tick_over",
                                     "tick_late_us_max",
                                     "drains",
                                     "drain_us",
                                     "drain_us_max",
                                     "send_calls",
                                     "read_calls",
                                     "auth_admitted",
                                     "limit_handshake",
                                     "replies_cut",
                                     "replies_suppressed",
                                     "room_steps",
                                     "steps_confirmed",
                                     "steps_late",
                                     "rooms_created",
                                     "matches_ended",
                                     "replays_written",
                                     "rejoins",
                                     "spectators_joined",
                                     "connects",
                                     "packets_in",
                                     "packets_out",
                                     "uptime_us"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", keys[i]);
    const char *at = strstr(line, key);
    cr_assert_not_null(at, "stopped lacks %s: %s", keys[i], line);
    cr_assert_null(strstr(at + 1, key), "stopped has %s twice", keys[i]);
  }
}
