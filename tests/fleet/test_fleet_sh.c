/* test_fleet_sh.c: scripts/fleet.sh end to end, as a person runs it.
 *
 * `sh scripts/fleet.sh 2` (the built gk-server, its folders in this
 * test's temp folder, ports the system picks: GK_FLEET_BUILD,
 * GK_FLEET_RUN, GK_FLEET_PORT=0) starts a redis-server and two nodes and
 * prints their addresses. Both answer /healthz; a room made on node 1 is
 * joined through node 2 (the test kit: peer 0 creates it at node 1, peer
 * 1 asks node 2, follows its REDIRECT once and plays; every peer agrees
 * at every step). SIGTERM then stops the script with exit 0, and no
 * process of its process group (the script runs in a session of its own)
 * nor any process naming its folder is left. Every wait is bounded. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <enet/enet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e.h"
#include "gk_survivors.h"
#include "gk_testkit.h"
#include "redis_rig.h"

#define STEPS 60 /* 1 s at the nodes' default 60 steps/s */

static pid_t group; /* the script's process group, 0: none */

/* The whole group killed, whatever the test's outcome (.fini). */
static void kill_group(void) {
  if (group > 0) kill(-group, SIGKILL);
}

/* Waits up to ms for the script's "fleet.sh: 2 nodes up" line. */
static int wait_up(const e2e_proc *p, int ms) {
  char buf[4096];
  for (int waited = 0; waited <= ms; waited += 50) {
    FILE *f = fopen(p->out, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    if (strstr(buf, "fleet.sh: 2 nodes up")) return 1;
    e2e_sleep_ms(50);
  }
  return 0;
}

typedef struct node_addr {
  unsigned enet, page, admin;
} node_addr;

/* The addresses the script printed for node i (1, 2). */
static node_addr printed(const e2e_proc *p, int i) {
  FILE *f = fopen(p->out, "r");
  cr_assert_not_null(f);
  char line[512];
  node_addr a = {0, 0, 0};
  while (fgets(line, sizeof line, f)) {
    int id = 0;
    if (sscanf(line,
               "node-%d: ENet 127.0.0.1:%u, page http://127.0.0.1:%u/, "
               "admin http://127.0.0.1:%u/",
               &id, &a.enet, &a.page, &a.admin) == 4 &&
        id == i)
      break;
    a = (node_addr){0, 0, 0};
  }
  fclose(f);
  cr_assert(a.enet && a.page && a.admin, "no addresses printed for node-%d", i);
  return a;
}

/* GET /healthz at an admin port: its status and body. */
static long healthz(unsigned port, char body[256]) {
  return rig_http_get(port, "/healthz", body, 256, 3000);
}

/* Peer 0 makes a survivors room at node 1, peer 1 joins it at node 2. */
static void join_through(const node_addr *n1, const node_addr *n2) {
  char a[32], b[32];
  snprintf(a, sizeof a, "127.0.0.1:%u", n1->enet);
  snprintf(b, sizeof b, "127.0.0.1:%u", n2->enet);
  static gk_testkit tk;
  gk_testkit_options o;
  gk_testkit_options_init(&o, &gk_survivors_sim, "{\"player_health\": 1000000}",
                          2, STEPS);
  o.server = a;
  o.join_server = b;
  o.guard_ms = 15000;
  cr_assert_eq(enet_initialize(), 0);
  int rc = gk_testkit_run(&tk, &o);
  cr_assert_eq(rc, 0, "the match across the two nodes: %s", tk.why);
  char why[256];
  cr_assert_eq(gk_testkit_agree(&tk, GK_TESTKIT_ALL, why, sizeof why), 0, "%s",
               why);
  cr_assert_eq(tk.redirects, 1, "REDIRECTs followed: %u", tk.redirects);
  cr_assert(tk.p[1].redirected, "peer 1 was not sent to node 1");
  gk_testkit_close(&tk);
  enet_deinitialize();
}

/* Processes whose command line names `dir` (this test's folder). */
static int naming(const char *dir) {
  DIR *proc = opendir("/proc");
  cr_assert_not_null(proc);
  int found = 0;
  struct dirent *e;
  while ((e = readdir(proc))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300], cmd[1024];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(cmd, 1, sizeof cmd - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
      if (cmd[i] == '\0') cmd[i] = ' ';
    cmd[n] = '\0';
    if (strstr(cmd, dir)) {
      fprintf(stderr, "left running: pid %s: %s\n", e->d_name, cmd);
      found++;
    }
  }
  closedir(proc);
  return found;
}

Test(fleet_sh, two_nodes_answer_share_a_room_and_stop_leaving_nothing,
     .timeout = 60, .fini = kill_group) {
  e2e_dir d;
  e2e_dir_make(&d);
  char run[300];
  snprintf(run, sizeof run, "%s/run", d.path);
  setenv("GK_FLEET_BUILD", GK_BUILD_ROOT, 1);
  setenv("GK_FLEET_RUN", run, 1);
  setenv("GK_FLEET_PORT", "0", 1);
  e2e_proc sh;
  char *argv[] = {"/usr/bin/setsid", "/bin/sh",
                  GK_SOURCE_ROOT "/scripts/fleet.sh", "2", NULL};
  e2e_spawn(&sh, &d, "fleet", argv);
  group = sh.pid; /* setsid: the script leads its own group */
  cr_assert(wait_up(&sh, 15000), "fleet.sh did not say its 2 nodes are up");
  node_addr n[2] = {printed(&sh, 1), printed(&sh, 2)};
  for (int i = 0; i < 2; i++) {
    char body[256];
    long st = healthz(n[i].admin, body);
    cr_assert_eq(st, 200, "node-%d /healthz: %ld %s", i + 1, st, body);
    cr_assert(strncmp(body, "ok", 2) == 0, "node-%d /healthz: %s", i + 1, body);
  }
  join_through(&n[0], &n[1]);
  cr_assert(!e2e_wait(&sh, 0), "fleet.sh ended on its own");
  kill(sh.pid, SIGTERM);
  cr_assert(e2e_wait(&sh, 15000), "fleet.sh did not stop within 15 s");
  cr_assert_eq(sh.status, 0, "fleet.sh stopped with %d", sh.status);
  errno = 0;
  cr_assert(kill(-group, 0) != 0 && errno == ESRCH,
            "a process of fleet.sh's group is left running");
  cr_assert_eq(naming(run), 0, "processes naming %s are left running", run);
  group = 0;
  e2e_dir_remove(&d);
}
