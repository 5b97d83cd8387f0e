/* bench_fleet.c: what a fleet costs a client and Redis, on loopback.
 *
 *   join: JOIN_ROOM to JOINED, straight at the room's node (A), and
 *         through another node (B: JOIN_ROOM, REDIRECT, a new connection
 *         to A from the same ENet host, JOIN_ROOM, JOINED), p50 and p90
 *         of 200 each (a fresh client and a fresh 2-seat room each time;
 *         connecting is counted: a redirected client connects twice),
 *         and the p50 of each phase (connect, request to answer);
 *   redis: commands and bytes Redis served while one node ran one match
 *         (gk-bot, 2 players, 1200 steps at 120 Hz), minus the same time
 *         of the node idle, from INFO commandstats and INFO stats;
 *   idle: the CPU a node spends on the directory with 500 idle rooms
 *         (lobbies whose creators stay connected): its CPU time (utime +
 *         stime of /proc/PID/stat) over 20 s with a fleet, less the same
 *         without one, as a share of one core; heartbeat 1 s.
 * A real redis-server and two real gk-server processes (tests/fleet's
 * helpers). Run: meson test -C build --benchmark --suite fleet. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "e2e.h"
#include "gk_net_wire.h"
#include "redis_rig.h"

#define RUNS 200

static redis_rig R;

typedef struct node {
  e2e_dir d;
  e2e_proc srv;
  uint16_t port;
} node;

/* A node (heartbeat_ms 0: a server with no fleet). */
static void node_start(node *n, const char *id, int heartbeat_ms) {
  e2e_dir_make(&n->d);
  char extra[2048], fleet[1536] = "";
  if (heartbeat_ms)
    snprintf(fleet, sizeof fleet,
             ",\"fleet\":{\"enabled\":true,\"redis\":\"unix:%s\",\"node\":"
             "\"%s\",\"enet\":\"127.0.0.1:0\",\"heartbeat_ms\":%d,"
             "\"ttl_ms\":%d,\"max_rooms\":1024}",
             R.sock, id, heartbeat_ms, 5 * heartbeat_ms);
  snprintf(extra, sizeof extra,
           "\"limits\":{\"rooms\":1024,\"creates_per_min\":0,"
           "\"connects_per_ip_per_s\":0,\"conns_per_ip\":0}%s",
           fleet);
  e2e_start_server(&n->srv, &n->d, extra, &n->port);
  if (heartbeat_ms) cr_assert(e2e_wait_events(&n->srv, "fleet_up", 1, 5000));
}

/* One ENet client (two peer slots: a REDIRECT's connection is made
 * beside the first), serviced in 1 ms waits so times are not rounded up. */
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

/* Connects c's host to port (a second peer slot for a REDIRECT's). */
static void cli_connect(cli *c, uint16_t port) {
  ENetAddress a;
  enet_address_set_host(&a, "127.0.0.1");
  a.port = port;
  c->p = enet_host_connect(c->h, &a, 2, 0);
  cr_assert_not_null(c->p);
  gk_wire_msg m;
  cr_assert(wait_event(c, -1, &m, 2000), "no connection");
}

static void cli_open(cli *c, uint16_t port) {
  c->h = enet_host_create(NULL, 2, 2, 0, 0);
  cr_assert_not_null(c->h);
  cli_connect(c, port);
}

/* A REDIRECT followed as the test kit does: the same host connects to
 * the room's node in its other peer slot (a datagram B still sends to the
 * old connection cannot reach the new one while it connects), then drops
 * the old connection at once (B closes its side itself). */
static void cli_follow(cli *c, uint16_t port) {
  ENetPeer *old = c->p;
  cli_connect(c, port);
  enet_peer_disconnect_now(old, 0);
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

/* A join's phases, microseconds: connecting, JOIN_ROOM to its answer
 * (REDIRECT or JOINED), and after a REDIRECT the same two at A. */
enum { PH_CONNECT, PH_ASK, PH_CONNECT_A, PH_JOIN_A, PHASES };
static const char *const phase_names[PHASES] = {
    "connect", "JOIN_ROOM to its answer", "connect at A",
    "JOIN_ROOM at A to JOINED"};

static double since_us(uint64_t *t) {
  uint64_t now = uv_hrtime();
  double us = (double)(now - *t) / 1000.0;
  *t = now;
  return us;
}

/* Connect to port, JOIN_ROOM code; follows one REDIRECT. Microseconds,
 * and each phase's into ph (0 for the phases a direct join has not). */
static double join_us(uint16_t port, const char *code, double ph[PHASES]) {
  uint64_t t0 = uv_hrtime(), t = t0;
  memset(ph, 0, PHASES * sizeof(double));
  cli c;
  cli_open(&c, port);
  ph[PH_CONNECT] = since_us(&t);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN + 1);
  gk_wire_msg join = m;
  cli_send(&c, &join);
  cr_assert(wait_event(&c, GK_MSG_JOINED, &m, 3000), "no answer");
  ph[PH_ASK] = since_us(&t);
  if (m.type == GK_MSG_REDIRECT) {
    const char *colon = strrchr(m.u.redirect.enet, ':');
    uint16_t to = (uint16_t)atoi(colon + 1);
    cli_follow(&c, to);
    ph[PH_CONNECT_A] = since_us(&t);
    cli_send(&c, &join);
    cr_assert(wait_event(&c, GK_MSG_JOINED, &m, 3000), "no JOINED at A");
    cr_assert_eq(m.type, GK_MSG_JOINED);
    ph[PH_JOIN_A] = since_us(&t);
  }
  double us = (double)(uv_hrtime() - t0) / 1000.0;
  cli_close(&c);
  return us;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* p50 of each phase of the direct (d) and redirected (r) joins. */
static void phases(double d[PHASES][RUNS], double r[PHASES][RUNS]) {
  for (int k = 0; k < PHASES; k++) {
    qsort(d[k], RUNS, sizeof(double), cmp);
    qsort(r[k], RUNS, sizeof(double), cmp);
    printf("  %-26s p50 direct %4.0f us, redirected %4.0f us\n", phase_names[k],
           d[k][RUNS / 2], r[k][RUNS / 2]);
  }
}

static void joins(node *a, node *b) {
  double direct[RUNS], redirected[RUNS];
  static double dph[PHASES][RUNS], rph[PHASES][RUNS];
  for (int i = 0; i < 2 * RUNS; i++) {
    cli creator;
    char code[GK_WIRE_CODE_LEN + 1];
    make_room(&creator, a->port, code);
    e2e_sleep_ms(5); /* the SET NX has left */
    double ph[PHASES];
    if (i % 2)
      redirected[i / 2] = join_us(b->port, code, ph);
    else
      direct[i / 2] = join_us(a->port, code, ph);
    for (int k = 0; k < PHASES; k++) (i % 2 ? rph : dph)[k][i / 2] = ph[k];
    cli_close(&creator);
  }
  qsort(direct, RUNS, sizeof(double), cmp);
  qsort(redirected, RUNS, sizeof(double), cmp);
  printf("join, direct:     p50 %.0f us, p90 %.0f us\n", direct[RUNS / 2],
         direct[RUNS * 9 / 10]);
  printf("join, redirected: p50 %.0f us, p90 %.0f us (%.2fx at p50)\n",
         redirected[RUNS / 2], redirected[RUNS * 9 / 10],
         redirected[RUNS / 2] / direct[RUNS / 2]);
  phases(dph, rph);
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

/* The node's CPU time so far (utime + stime), seconds. */
static double cpu_s(const e2e_proc *p) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)p->pid);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *q = strrchr(buf, ')'); /* the name may hold spaces */
  cr_assert_not_null(q);
  unsigned long ut = 0, st = 0;
  /* fields 3.. after ") ": state ppid pgrp session tty tpgid flags minflt
   * cminflt majflt cmajflt utime stime */
  cr_assert_eq(sscanf(q + 2,
                      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                      "%lu %lu",
                      &ut, &st),
               2);
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

#define IDLE_ROOMS 500
#define IDLE_S 20

/* A node with IDLE_ROOMS lobbies, each creator connected (one ENet host
 * of IDLE_ROOMS peers, serviced all along): its CPU share over IDLE_S. */
static double idle_share(node *a) {
  ENetHost *h = enet_host_create(NULL, IDLE_ROOMS, 2, 0, 0);
  cr_assert_not_null(h);
  ENetAddress addr;
  enet_address_set_host(&addr, "127.0.0.1");
  addr.port = a->port;
  for (int i = 0; i < IDLE_ROOMS; i++)
    cr_assert_not_null(enet_host_connect(h, &addr, 2, 0));
  int up = 0, made = 0;
  ENetEvent ev;
  uint64_t end = uv_hrtime() + 30000000000u;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  while (made < IDLE_ROOMS && uv_hrtime() < end) {
    if (enet_host_service(h, &ev, 5) <= 0) continue;
    if (ev.type == ENET_EVENT_TYPE_CONNECT) {
      up++;
      enet_peer_send(ev.peer, 0, enet_packet_create(buf, len, 1));
    } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      gk_wire_msg r;
      if (gk_wire_decode(ev.packet->data, ev.packet->dataLength, &r) == 0 &&
          r.type == GK_MSG_ROOM_CREATED)
        made++;
      enet_packet_destroy(ev.packet);
    }
  }
  cr_assert_eq(made, IDLE_ROOMS, "%d rooms made (%d connected)", made, up);
  double c0 = cpu_s(&a->srv);
  uint64_t t0 = uv_hrtime();
  while (uv_hrtime() - t0 < (uint64_t)IDLE_S * 1000000000u)
    while (enet_host_service(h, &ev, 10) > 0)
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
  double share = (cpu_s(&a->srv) - c0) / ((double)(uv_hrtime() - t0) / 1e9);
  enet_host_destroy(h);
  return share;
}

Test(bench_fleet, a_nodes_directory_cpu_at_500_idle_rooms, .timeout = 300) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0);
  cr_assert_eq(enet_initialize(), 0);
  node a, b;
  node_start(&a, "a", 1000);
  double with = idle_share(&a);
  e2e_stop_server(&a.srv);
  node_start(&b, "b", 0);
  double without = idle_share(&b);
  e2e_stop_server(&b.srv);
  printf("idle, %d rooms: %.2f%% of a core with the fleet, %.2f%% without: "
         "%.2f%% on the directory\n",
         IDLE_ROOMS, 100 * with, 100 * without, 100 * (with - without));
  enet_deinitialize();
  redis_rig_stop(&R);
  e2e_dir_remove(&a.d);
  e2e_dir_remove(&b.d);
}

Test(bench_fleet, join_latency, .timeout = 300) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0);
  cr_assert_eq(enet_initialize(), 0);
  node a, b;
  node_start(&a, "a", 1000);
  node_start(&b, "b", 1000);
  joins(&a, &b);
  e2e_stop_server(&b.srv);
  e2e_stop_server(&a.srv);
  enet_deinitialize();
  redis_rig_stop(&R);
  e2e_dir_remove(&a.d);
  e2e_dir_remove(&b.d);
}

Test(bench_fleet, directory_traffic_of_a_match, .timeout = 300) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0);
  cr_assert_eq(enet_initialize(), 0);
  node a;
  node_start(&a, "a", 1000);
  traffic(&a);
  e2e_stop_server(&a.srv);
  enet_deinitialize();
  redis_rig_stop(&R);
  e2e_dir_remove(&a.d);
}
