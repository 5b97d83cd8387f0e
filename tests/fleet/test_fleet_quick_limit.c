/* test_fleet_quick_limit.c: a QUICK_PLAY that makes a room counts against
 * the address's limits.creates_per_min like a CREATE_ROOM; one that joins
 * a lobby does not (docs/PROTOCOL.md, "Quick play").
 *
 *  - One server, no fleet, 2 rooms a minute: two quick plays make two
 *    lobbies, two more join them (the address is over its limit by then:
 *    a join is not counted), a fifth that would make a room gets
 *    GK_ELIMIT, and so does a CREATE_ROOM (one limit for both). /metrics
 *    counts it as gk_quick_play_total{outcome="limited"}.
 *  - Two fleet nodes on a real redis-server, 1 room a minute: a player
 *    over its limit is offered only lobbies: no lobby of its kind is
 *    GK_ELIMIT and the directory holds no new lobby for it; a lobby on
 *    the other node is still joined through its REDIRECT.
 * All clients are raw ENet clients on 127.0.0.1 (one address). Every
 * wait is bounded. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "e2e_raw.h"
#include "gk_err.h"
#include "gk_net_wire.h"
#include "redis_rig.h"

typedef struct node {
  e2e_dir d;
  e2e_proc srv;
  uint16_t port, admin;
} node;

static redis_rig R;

/* A node with creates_per_min `limit`; in a fleet with id `id` (NULL:
 * no fleet). */
static void node_start(node *n, int limit, const char *id) {
  e2e_dir_make(&n->d);
  char extra[1024], fleet[512] = "";
  if (id)
    snprintf(fleet, sizeof fleet,
             ",\"fleet\":{\"enabled\":true,\"redis\":\"unix:%s\",\"node\":"
             "\"%s\",\"enet\":\"127.0.0.1:0\",\"heartbeat_ms\":200,"
             "\"ttl_ms\":2000}",
             R.sock, id);
  snprintf(extra, sizeof extra,
           "\"limits\":{\"creates_per_min\":%d},"
           "\"admin\":{\"enabled\":true,\"listen\":\"127.0.0.1:0\"}%s",
           limit, fleet);
  e2e_start_server(&n->srv, &n->d, extra, &n->port);
  n->admin = (uint16_t)e2e_stat(&n->srv, "admin_listening", "port");
  if (id)
    cr_assert(e2e_wait_events(&n->srv, "fleet_up", 1, 5000),
              "node %s never reached the directory", id);
}

/* QUICK_PLAY for a survivors room of `seats` (code: "*" or a REDIRECT's). */
static void quick_send(raw *c, int seats, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_QUICK_PLAY;
  snprintf(m.u.quick.code, sizeof m.u.quick.code, "%s", code);
  m.u.quick.room.max_players = (uint8_t)seats;
  snprintf(m.u.quick.room.genre, sizeof m.u.quick.room.genre, "survivors");
  raw_send_msg(c, &m);
}

/* A fresh client's quick play at `port`: the answer's type (QUICK_JOINED,
 * ERROR or REDIRECT; 0: none within 3 s). */
static int quick(raw *c, uint16_t port, int seats, const char *code) {
  raw_connect(c, port);
  quick_send(c, seats, code);
  for (int i = 0; i < 150; i++) {
    raw_pump(c, 20);
    if (c->seen[GK_MSG_QUICK_JOINED]) return GK_MSG_QUICK_JOINED;
    if (c->seen[GK_MSG_ERROR]) return GK_MSG_ERROR;
    if (c->seen[GK_MSG_REDIRECT]) return GK_MSG_REDIRECT;
  }
  return 0;
}

static void expect_joined(raw *c, uint16_t port, int seats, const char *what) {
  int got = quick(c, port, seats, GK_WIRE_CODE_ANY);
  cr_assert_eq(got, GK_MSG_QUICK_JOINED, "%s: %s %s", what,
               got ? gk_wire_type_name(got) : "no answer",
               got == GK_MSG_ERROR ? c->last[GK_MSG_ERROR].u.error.text : "");
}

/* The ERROR of a refusal by the create limit: GK_ELIMIT, and the
 * sentence if limit > 0 (an ENet request smaller than the ERROR, a
 * CREATE_ROOM's, gets its code alone: no amplification). */
static void expect_limit(const raw *c, int limit, const char *what) {
  cr_assert(c->seen[GK_MSG_ERROR], "%s: no ERROR", what);
  const gk_wire_error *e = &c->last[GK_MSG_ERROR].u.error;
  cr_assert_eq(e->code, GK_ELIMIT, "%s: %s (%s)", what, gk_err_name(e->code),
               e->text);
  char want[64];
  snprintf(want, sizeof want, "more than %d rooms a minute", limit);
  if (limit > 0) cr_assert_str_eq(e->text, want, "%s", what);
}

static char metrics_buf[65536];

/* The node's /metrics has `line` (a whole line). */
static void expect_metric(const node *n, const char *line) {
  cr_assert_eq(rig_http_get((unsigned)n->admin, "/metrics", metrics_buf,
                            sizeof metrics_buf, 3000),
               200, "GET /metrics");
  char want[128];
  snprintf(want, sizeof want, "\n%s\n", line);
  cr_assert(strstr(metrics_buf, want), "/metrics has no line \"%s\"", line);
}

Test(fleet_quick_limit, quick_play_that_makes_a_room_counts_as_a_create,
     .timeout = 60) {
  cr_assert_eq(enet_initialize(), 0);
  node n;
  node_start(&n, 2, NULL);
  raw c[6];
  expect_joined(&c[0], n.port, 3, "the first 3-seat quick play");
  expect_joined(&c[1], n.port, 2, "the first 2-seat quick play");
  /* 2 rooms made: the address is at its limit; joining is not counted */
  expect_joined(&c[2], n.port, 3, "a join of the 3-seat lobby");
  expect_joined(&c[3], n.port, 2, "a join of the 2-seat lobby");
  cr_assert_eq(quick(&c[4], n.port, 4, GK_WIRE_CODE_ANY), GK_MSG_ERROR,
               "a third room was made");
  expect_limit(&c[4], 2, "a quick play that would make a third room");
  raw_connect(&c[5], n.port); /* the same limit as CREATE_ROOM's */
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  raw_send_msg(&c[5], &m);
  raw_expect(&c[5], GK_MSG_ERROR, 3000);
  expect_limit(&c[5], 0, "a CREATE_ROOM after two quick-play rooms");
  expect_metric(&n, "gk_quick_play_total{outcome=\"created\"} 2");
  expect_metric(&n, "gk_quick_play_total{outcome=\"joined\"} 2");
  expect_metric(&n, "gk_quick_play_total{outcome=\"limited\"} 1");
  expect_metric(&n, "gk_quick_play_total{outcome=\"refused\"} 0");
  for (int i = 0; i < 6; i++) raw_close(&c[i]);
  e2e_stop_server(&n.srv);
  cr_assert_eq(e2e_stat(&n.srv, "stopped", "limit_create_rate"), 2);
  e2e_dir_remove(&n.d);
  enet_deinitialize();
}

/* The quick-play lobbies the directory holds, of every kind. */
static long lobbies(void) {
  char out[32];
  cr_assert_eq(redis_rig_cmd(&R, out, sizeof out, "EVAL %s 0",
                             "local n=0 for _,k in "
                             "ipairs(redis.call('KEYS','gk:qp:*'))"
                             " do n=n+redis.call('HLEN',k) end "
                             "return n"),
               0);
  return atol(out);
}

Test(fleet_quick_limit, a_player_over_its_limit_is_offered_lobbies_only,
     .timeout = 60) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0, "redis-server did not start");
  e2e_keep_note("dir", R.dir);
  cr_assert_eq(enet_initialize(), 0);
  node a, b;
  node_start(&a, 1, "a");
  node_start(&b, 1, "b");
  raw c[3];
  expect_joined(&c[0], a.port, 2, "the first quick play at a");
  cr_assert_eq(lobbies(), 1);
  /* over its limit at a: no 3-seat lobby anywhere, and none is made */
  cr_assert_eq(quick(&c[1], a.port, 3, GK_WIRE_CODE_ANY), GK_MSG_ERROR,
               "a room was found or made over the limit");
  expect_limit(&c[1], 1, "a quick play over the limit");
  cr_assert_eq(lobbies(), 1, "the directory holds a lobby made over the limit");
  /* the 2-seat lobby at a is joined through b (a join: not counted) */
  cr_assert_eq(quick(&c[2], b.port, 2, GK_WIRE_CODE_ANY), GK_MSG_REDIRECT);
  gk_wire_redirect to = c[2].last[GK_MSG_REDIRECT].u.redirect;
  raw_close(&c[2]);
  memset(&c[2], 0, sizeof c[2]);
  int got = quick(&c[2], a.port, 2, to.code);
  cr_assert_eq(got, GK_MSG_QUICK_JOINED, "the join at a: %s",
               got == GK_MSG_ERROR ? c[2].last[GK_MSG_ERROR].u.error.text
                                   : "no answer");
  expect_metric(&a, "gk_quick_play_total{outcome=\"limited\"} 1");
  expect_metric(&a, "gk_quick_play_total{outcome=\"joined\"} 1");
  for (int i = 0; i < 3; i++) raw_close(&c[i]);
  e2e_stop_server(&a.srv);
  e2e_stop_server(&b.srv);
  enet_deinitialize();
  redis_rig_stop(&R);
  e2e_dir_remove(&a.d);
  e2e_dir_remove(&b.d);
}
