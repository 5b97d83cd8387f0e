/* test_testkit_fleet.c: the test kit against real gk-server nodes of a
 * fleet sharing a real redis-server (tests/fleet/redis_rig.c): peer 0
 * creates a survivors room at node A, peer 1 joins it at node B, follows
 * B's REDIRECT to A once and plays, and a spectator does the same; all
 * agree at every step (the spectator from its snapshot on). Peer 1's
 * connection dropped mid-match, a fresh engine takes its seat back at B,
 * redirected to A once more, and agrees again from the snapshot on. A node that
 * advertises B's own ENet address sends a joiner round twice: the run
 * fails, saying "a second REDIRECT". */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <string.h>

#include "e2e.h"
#include "gk_err.h"
#include "gk_survivors.h"
#include "gk_testkit.h"
#include "redis_rig.h"

#define STEPS 600 /* 5 s at the test server's 120 steps/s */

typedef struct node {
  e2e_dir d;
  e2e_proc srv;
  uint16_t port;
  char addr[32]; /* "127.0.0.1:PORT" of its ENet listener */
} node;

static redis_rig R;
static gk_testkit tk;

/* A fleet node; it hands joiners sent to it `advertise` (NULL: its own
 * ENet address). */
static void node_start(node *n, const char *id, const char *advertise) {
  e2e_dir_make(&n->d);
  char extra[1024];
  snprintf(extra, sizeof extra,
           "\"fleet\":{\"enabled\":true,\"redis\":\"unix:%s\",\"node\":"
           "\"%s\",\"enet\":\"%s\",\"heartbeat_ms\":200,\"ttl_ms\":2000},"
           "\"reconnect\":{\"hold_ms\":10000}",
           R.sock, id, advertise ? advertise : "127.0.0.1:0");
  e2e_start_server(&n->srv, &n->d, extra, &n->port);
  snprintf(n->addr, sizeof n->addr, "127.0.0.1:%u", (unsigned)n->port);
  cr_assert(e2e_wait_events(&n->srv, "fleet_up", 1, 5000),
            "node %s never reached the directory", id);
}

static void fleet_up(void) {
  cr_assert_eq(redis_rig_start(&R, NULL), 0, "redis-server did not start");
  e2e_keep_note("dir", R.dir);
  cr_assert_eq(enet_initialize(), 0);
}

static void fleet_down(node *n, int count) {
  gk_testkit_close(&tk);
  for (int i = 0; i < count; i++) e2e_stop_server(&n[i].srv);
  enet_deinitialize();
  redis_rig_stop(&R);
  for (int i = 0; i < count; i++) e2e_dir_remove(&n[i].d);
}

static gk_testkit_options opts(const char *server, const char *join) {
  gk_testkit_options o;
  gk_testkit_options_init(&o, &gk_survivors_sim, "{\"player_health\": 1000000}",
                          2, STEPS);
  o.server = server;
  o.join_server = join;
  o.guard_ms = 30000;
  return o;
}

/* Nodes "a" and "b" of a fresh fleet. */
static void two_nodes(node n[2]) {
  fleet_up();
  node_start(&n[0], "a", NULL);
  node_start(&n[1], "b", NULL);
}

/* Runs `o` to the end; every engine agrees with peer 0. */
static void run_agreeing(const gk_testkit_options *o) {
  int rc = gk_testkit_run(&tk, o);
  cr_assert_eq(rc, 0, "the run: %s", tk.why);
  char why[256];
  cr_assert_eq(gk_testkit_agree(&tk, GK_TESTKIT_ALL, why, sizeof why), 0, "%s",
               why);
}

Test(testkit_fleet, a_joiner_and_a_spectator_at_another_node_follow_redirect,
     .timeout = 120) {
  node n[2];
  two_nodes(n);
  gk_testkit_options o = opts(n[0].addr, n[1].addr);
  o.spectators = 1;
  run_agreeing(&o);
  cr_assert_geq(tk.p[0].nsteps, STEPS, "peer 0 ran %llu steps",
                (unsigned long long)tk.p[0].nsteps);
  cr_assert_eq(tk.redirects, 2, "REDIRECTs followed: %u", tk.redirects);
  cr_assert(tk.p[1].redirected && tk.p[2].redirected && !tk.p[0].redirected);
  cr_assert_eq(e2e_count_events(&n[1].srv, "redirect"), 2);
  cr_assert_eq(e2e_count_events(&n[0].srv, "player_joined"), 1);
  cr_assert_eq(e2e_count_events(&n[0].srv, "spectator_joined"), 1);
  cr_assert_lt(tk.p[2].first_step + 100, tk.p[2].nsteps,
               "the spectator ran steps %llu..%llu",
               (unsigned long long)tk.p[2].first_step,
               (unsigned long long)tk.p[2].nsteps);
  fleet_down(n, 2);
}

Test(testkit_fleet, a_rejoin_at_another_node_follows_its_redirect,
     .timeout = 120) {
  node n[2];
  two_nodes(n);
  gk_testkit_options o = opts(n[0].addr, n[1].addr);
  o.rejoin_at_step = 200;
  o.rejoin_peer = 1;
  run_agreeing(&o);
  const gk_testkit_peer *p = &tk.p[1];
  cr_assert(p->rejoining && p->gap_from >= 200 && p->gap_to < STEPS,
            "peer 1 left after step %llu, resumed at %llu",
            (unsigned long long)p->gap_from, (unsigned long long)p->gap_to);
  cr_assert_eq(tk.redirects, 2, "REDIRECTs followed: %u (join and rejoin)",
               tk.redirects);
  cr_assert_eq(e2e_count_events(&n[1].srv, "redirect"), 2);
  cr_assert_eq(e2e_count_events(&n[0].srv, "player_rejoined"), 1);
  fleet_down(n, 2);
}

Test(testkit_fleet, a_second_redirect_fails_the_run_and_says_so,
     .timeout = 120) {
  node n[2];
  fleet_up();
  node_start(&n[0], "b", NULL);
  node_start(&n[1], "c", n[0].addr); /* C says it is at B's address */
  gk_testkit_options o = opts(n[1].addr, n[0].addr);
  o.guard_ms = 15000; /* a client that followed on would run into it */
  int rc = gk_testkit_run(&tk, &o);
  cr_assert_eq(rc, GK_ESTATE, "the run: %d, %s", rc, tk.why);
  char want[64];
  snprintf(want, sizeof want, "peer 1: a second REDIRECT: %s", n[0].addr);
  cr_assert_str_eq(tk.why, want);
  cr_assert_eq(tk.redirects, 1);
  cr_assert_eq(e2e_count_events(&n[0].srv, "redirect"), 2);
  fleet_down(n, 2);
}

Test(testkit_fleet, a_server_address_that_is_not_host_port_is_refused) {
  const char *bad[] = {"127.0.0.1", "127.0.0.1:0", ":7777", "h:70000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    gk_testkit_options o = opts(bad[i], NULL);
    cr_assert_eq(gk_testkit_run(&tk, &o), GK_EINVAL, "server \"%s\"", bad[i]);
    cr_assert(strstr(tk.why, "HOST:PORT"), "%s", tk.why);
    gk_testkit_close(&tk);
  }
  gk_testkit_options o = opts("127.0.0.1:1", NULL);
  o.faults = 1;
  cr_assert_eq(gk_testkit_run(&tk, &o), GK_EINVAL);
  cr_assert(strstr(tk.why, "need the host here"), "%s", tk.why);
  gk_testkit_close(&tk);
  o = opts(NULL, NULL); /* the host here takes no spectators, no rejoin */
  o.spectators = 1;
  cr_assert_eq(gk_testkit_run(&tk, &o), GK_EINVAL);
  cr_assert(strstr(tk.why, "need a server"), "%s", tk.why);
  gk_testkit_close(&tk);
  o = opts("127.0.0.1:1", NULL); /* peer 0 holds the room: it stays */
  o.rejoin_at_step = 10;
  cr_assert_eq(gk_testkit_run(&tk, &o), GK_EINVAL);
  cr_assert(strstr(tk.why, "rejoin_peer"), "%s", tk.why);
  gk_testkit_close(&tk);
}
