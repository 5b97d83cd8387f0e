/* bench_fleet.c: what a fleet costs a client and Redis, on loopback.
 *
 *   join: JOIN_ROOM to JOINED, straight at the room's node (A), and
 *         through another node (B: JOIN_ROOM, REDIRECT, a new connection
 *         to A, JOIN_ROOM, JOINED), p50 and p90 of 50 each (a fresh
 *         connection and a fresh 2-seat room each time; connecting is
 *         counted: a redirected client connects twice);
 *   redis: commands and bytes Redis served while one node ran one match
 *         (gk-bot, 2 players, 1200 steps at 120 Hz), minus the same time
 *         of the node idle, from INFO commandstats and INFO stats.
 * A real redis-server and two real gk-server processes (tests/fleet's
 * helpers). Run: meson test -C build --benchmark --suite fleet. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "e2e.h"
#include "gk_net_wire.h"
#include "redis_rig.h"

#define RUNS 50

static redis_rig R;

typedef struct node {
  e2e_dir d;
  e2e_proc srv;
  uint16_t port;
} node;

static void node_start(node *n, const char *id, int heartbeat_ms) {
  e2e_dir_make(&n->d);
  char extra[512];
  snprintf(extra, sizeof extra,
           "\"limits\":{\"creates_per_min\":0,\"connects_per_ip_per_s\":0},"
           "\"fleet\":{\"enabled\":true,\"redis\":\"unix:%s\",\"node\":"
           "\"%s\",\"enet\":\"127.0.0.1:0\",\"heartbeat_ms\":%d,"
           "\"ttl_ms\":%d}",
           R.sock, id, heartbeat_ms, 5 * heartbeat_ms);
  e2e_start_server(&n->srv, &n->d, extra, &n->port);
  cr_assert(e2e_wait_events(&n->srv, "fleet_up", 1, 5000));
}

/* One ENet client, serviced in 1 ms waits so times are not rounded up. */
typedef struct cli {
  ENetHost *h;
  ENetPeer *p;
} cli;

static int wait_event(cli *c, int want_type, gk_wire_msg *m, int ms) {
  uint64_t end = uv_hrtime() + (uint64_t)ms * 1000000u;
  ENetEvent ev;
  while (uv_hrtime() < end) {
    if (enet_host_service(c->h, &ev, 1) <= 0) continue;
    if (ev.type == ENET_EVENT_TYPE_CONNECT && want_type == -1) return 1;
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      int ok = gk_wire_decode(ev.packet->data, ev.packet->dataLength, m) == 0;
      enet_packet_destroy(ev.packet);
      if (ok && (int)m->type == want_type) return 1;
      if (ok && want_type == GK_MSG_JOINED && m->type == GK_MSG_REDIRECT)
        return 1;
    }
  }
  return 0;
}

static void cli_open(cli *c, uint16_t port) {
  c->h = enet_host_create(NULL, 1, 2, 0, 0);
  cr_assert_not_null(c->h);
  ENetAddress a;
  enet_address_set_host(&a, "127.0.0.1");
  a.port = port;
  c->p = enet_host_connect(c->h, &a, 2, 0);
  gk_wire_msg m;
  cr_assert(wait_event(c, -1, &m, 2000), "no connection");
}

static void cli_close(cli *c) {
  enet_peer_disconnect_now(c->p, 0); /* the server frees it at once */
  enet_host_destroy(c->h);
}

static void cli_send(cli *c, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  enet_peer_send(c->p, 0, enet_packet_create(buf, len, 1));
  enet_host_flush(c->h);
}

/* A fresh 2-seat room on A; the creator stays connected (in *c). */
static void make_room(cli *c, uint16_t port, char *code) {
  cli_open(c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  cli_send(c, &m);
  cr_assert(wait_event(c, GK_MSG_ROOM_CREATED, &m, 2000));
  memcpy(code, m.u.room.code, GK_WIRE_CODE_LEN + 1);
}

/* Connect to port, JOIN_ROOM code; follows one REDIRECT. Microseconds. */
static double join_us(uint16_t port, const char *code) {
  uint64_t t0 = uv_hrtime();
  cli c;
  cli_open(&c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN + 1);
  gk_wire_msg join = m;
  cli_send(&c, &join);
  cr_assert(wait_event(&c, GK_MSG_JOINED, &m, 3000), "no answer");
  if (m.type == GK_MSG_REDIRECT) {
    const char *colon = strrchr(m.u.redirect.enet, ':');
    uint16_t to = (uint16_t)atoi(colon + 1);
    cli_close(&c);
    cli_open(&c, to);
    cli_send(&c, &join);
    cr_assert(wait_event(&c, GK_MSG_JOINED, &m, 3000), "no JOINED at A");
    cr_assert_eq(m.type, GK_MSG_JOINED);
  }
  double us = (double)(uv_hrtime() - t0) / 1000.0;
  cli_close(&c);
  return us;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void joins(node *a, node *b) {
  double direct[RUNS], redirected[RUNS];
  for (int i = 0; i < 2 * RUNS; i++) {
    cli creator;
    char code[GK_WIRE_CODE_LEN + 1];
    make_room(&creator, a->port, code);
    e2e_sleep_ms(5); /* the SET NX has left */
    if (i % 2)
      redirected[i / 2] = join_us(b->port, code);
    else
      direct[i / 2] = join_us(a->port, code);
    cli_close(&creator);
  }
  qsort(direct, RUNS, sizeof(double), cmp);
  qsort(redirected, RUNS, sizeof(double), cmp);
  printf("join, direct:     p50 %.0f us, p90 %.0f us\n", direct[RUNS / 2],
         direct[RUNS * 9 / 10]);
  printf("join, redirected: p50 %.0f us, p90 %.0f us (%.2fx at p50)\n",
         redirected[RUNS / 2], redirected[RUNS * 9 / 10],
         redirected[RUNS / 2] / direct[RUNS / 2]);
}

/* Redis's totals: commands served, bytes in and out. */
static void redis_totals(double *cmds, double *in, double *out) {
  char buf[8192];
  cr_assert_eq(redis_rig_cmd(&R, buf, sizeof buf, "INFO stats"), 0);
  const char *p = strstr(buf, "total_commands_processed:");
  *cmds = p ? atof(p + 25) : 0;
  p = strstr(buf, "total_net_input_bytes:");
  *in = p ? atof(p + 22) : 0;
  p = strstr(buf, "total_net_output_bytes:");
  *out = p ? atof(p + 23) : 0;
}

static void traffic(node *a) {
  double c0, i0, o0, c1, i1, o1, c2, i2, o2;
  redis_totals(&c0, &i0, &o0);
  e2e_sleep_ms(10000); /* idle: heartbeats only */
  redis_totals(&c1, &i1, &o1);
  e2e_proc bot;
  e2e_start_bot(&bot, &a->d, "bot", a->port, "1", "2", "1200");
  uint64_t t0 = uv_hrtime();
  cr_assert(e2e_wait(&bot, 60000));
  double secs = (double)(uv_hrtime() - t0) / 1e9;
  redis_totals(&c2, &i2, &o2);
  double idle = 10.0;
  double k = secs / idle; /* the idle cost of the match's duration */
  printf("redis, one node idle: %.1f commands/s, %.0f bytes/s in, %.0f "
         "out\n",
         (c1 - c0 - 1) / idle, (i1 - i0) / idle, (o1 - o0) / idle);
  printf("redis, one match of %.1f s (1 room): %.1f commands, %.0f bytes in, "
         "%.0f out beyond the idle node's (all: %.0f commands)\n",
         secs, (c2 - c1 - 1) - k * (c1 - c0 - 1), (i2 - i1) - k * (i1 - i0),
         (o2 - o1) - k * (o1 - o0), c2 - c1 - 1);
}

Test(bench_fleet, join_latency_and_directory_traffic, .timeout = 600) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0);
  cr_assert_eq(enet_initialize(), 0);
  node a, b;
  node_start(&a, "a", 1000);
  node_start(&b, "b", 1000);
  joins(&a, &b);
  e2e_stop_server(&b.srv);
  traffic(&a);
  e2e_stop_server(&a.srv);
  enet_deinitialize();
  redis_rig_stop(&R);
  e2e_dir_remove(&a.d);
  e2e_dir_remove(&b.d);
}
