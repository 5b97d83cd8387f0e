/* test_rts.c: the rts genre tested with the installed gamekit test kit,
 * as docs/GENRE_GUIDE.md ("How to test it") says: two and three engines in
 * one process over ENet on 127.0.0.1 (clean, and under loss, latency,
 * jitter and duplication), every hash compared at every step; the sync
 * test; and bad input changing nothing. Plain C with TAP output, no test
 * framework; exit 0 only if every test passed. */
#include <gamekit/gk_testkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rts.h"

static int failures, count;

static void report(int ok, const char *name, const char *why) {
  count++;
  failures += !ok;
  printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", count, name, ok ? "" : ": ",
         ok ? "" : why);
}

/* A match over the kit; 0 and every engine agreeing at every step. */
static void engines(const char *name, uint32_t peers, int faults) {
  static gk_testkit tk; /* large: not on the stack */
  char why[512] = "";
  gk_testkit_options o;
  gk_testkit_options_init(&o, &gk_rts_sim, "{\"hp\": 100000}", peers, 900);
  if (faults) {
    o.faults = 1;
    o.up = (gk_net_fault_dir){
        .loss_ppm = 50000, .dup_ppm = 10000, .latency_ms = 20, .jitter_ms = 8};
    o.down = o.up;
    o.input_delay = 3;
    o.lead = 40;
  }
  int rc = gk_testkit_run(&tk, &o);
  if (rc != 0)
    snprintf(why, sizeof why, "run: %s", tk.why);
  else if (gk_testkit_agree(&tk, GK_TESTKIT_ALL, why, sizeof why) == 0 &&
           tk.session.loop.steps < 900)
    snprintf(why, sizeof why, "only %llu steps ran",
             (unsigned long long)tk.session.loop.steps);
  else if (faults && tk.p[0].fault.stats.lost == 0)
    snprintf(why, sizeof why, "the relay lost nothing");
  else if (tk.session.stats.desyncs != 0)
    snprintf(why, sizeof why, "the host saw a desync");
  report(why[0] == '\0', name, why);
  gk_testkit_close(&tk);
}

static void sync_test(void) {
  char why[512] = "";
  gk_testkit_sync_result res;
  gk_testkit_sync(&gk_rts_sim, NULL, 11, 3, 150, 300, &res, why, sizeof why);
  if (why[0] == '\0' && res.steps_compared != 300)
    snprintf(why, sizeof why, "compared %llu steps",
             (unsigned long long)res.steps_compared);
  report(why[0] == '\0',
         "the state read back at step 150 runs like the original", why);
}

/* Garbage orders (unknown kind, unit out of range, a wall, itself) are
 * ignored: the hash is that of a step with no input at all. */
static void bad_input(void) {
  char err[256] = "";
  rts_config cfg;
  gk_rts_sim.config_default(&cfg);
  void *a = gk_rts_sim.create(&cfg, 5, 2, err, sizeof err);
  void *b = gk_rts_sim.create(&cfg, 5, 2, err, sizeof err);
  uint8_t junk[8] = {9, 0, 1, 1, RTS_ORDER_ATTACK, 200, 0, 0};
  uint8_t attack_self[8] = {RTS_ORDER_ATTACK, 0, 0, 0, 0, 0, 0, 0};
  uint8_t none[8] = {0};
  gk_step_input in = {0, 3, 0, 2, junk};
  gk_step_input quiet = {0, 3, 0, 2, none};
  gk_hasher h;
  int ok = a != NULL && b != NULL && gk_hasher_init(&h) == 0;
  for (uint64_t s = 0; ok && s < 50; s++) {
    in.step = quiet.step = s;
    in.inputs = s % 2 ? junk : attack_self;
    gk_rts_sim.step(a, &in);
    gk_rts_sim.step(b, &quiet);
    ok = gk_sim_hash(&gk_rts_sim, a, &h) == gk_sim_hash(&gk_rts_sim, b, &h);
  }
  if (a != NULL && b != NULL) gk_hasher_close(&h);
  gk_rts_sim.destroy(a);
  gk_rts_sim.destroy(b);
  report(ok, "orders the rules cannot carry out change nothing",
         err[0] ? err : "the hashes differ");
}

int main(void) {
  printf("TAP version 13\n1..5\n");
  engines("two engines in one process agree at every step", 2, 0);
  engines("three engines agree under loss, latency, jitter and duplicates", 3,
          1);
  engines("four engines agree at every step", 4, 0);
  sync_test();
  bad_input();
  return failures != 0;
}
