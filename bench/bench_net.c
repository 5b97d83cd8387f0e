/* bench_net.c: lockstep confirm latency over loopback.
 *
 * A host and two peers playing survivors with its bots at 60 steps per
 * second, in one process over ENet on 127.0.0.1 (src/testkit). For
 * every input a peer samples, the time from sampling it to receiving its
 * step confirmed by the host is recorded. The figure to compare it with is
 * the budget input_delay x step + RTT: an input confirmed within
 * input_delay x step of its sampling is in time for its step, so nobody
 * waits. Runs once clean and once with 5% of datagrams lost each way.
 *
 *   bench_net [steps]      (default 1200 = 20 s per run)
 *
 * Prints one line per run: p50, p99 and max latency in ms, the RTT ENet
 * measured, the budget, and the share of inputs confirmed past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_survivors.h"
#include "gk_testkit.h"

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int run(const char *name, uint64_t steps, uint32_t loss_ppm) {
  gk_testkit_options o;
  gk_testkit_options_init(&o, &gk_survivors_sim, "{\"player_health\": 1000000}",
                          2, steps);
  o.step = (gk_ratio){1, 60};
  o.lead = 4;
  o.seed = 7;
  o.faults = loss_ppm > 0;
  o.up.loss_ppm = o.down.loss_ppm = loss_ppm;
  o.stall_notice_ms = 5000;
  o.guard_ms = steps * 1000 / 60 * 3 + 10000;
  gk_testkit *h = calloc(1, sizeof *h);
  if (h == NULL) return 1;
  int rc = gk_testkit_run(h, &o);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", name, h->why);
    gk_testkit_close(h);
    free(h);
    return 1;
  }
  uint32_t n = 0, rtt = 0;
  for (uint32_t i = 0; i < 2; i++) {
    n += h->p[i].nlat;
    if (h->p[i].rtt_ms > rtt) rtt = h->p[i].rtt_ms;
  }
  uint32_t *all = malloc((n + 1) * sizeof *all);
  uint32_t k = 0;
  for (uint32_t i = 0; all != NULL && i < 2; i++)
    for (uint32_t j = 0; j < h->p[i].nlat; j++) all[k++] = h->p[i].lat_us[j];
  if (all == NULL || n == 0) {
    fprintf(stderr, "%s: no latency samples\n", name);
    gk_testkit_close(h);
    free(h);
    free(all);
    return 1;
  }
  qsort(all, n, sizeof *all, cmp_u32);
  double step_ms = 1000.0 / 60.0;
  double budget_ms = o.input_delay * step_ms + rtt;
  uint32_t over = 0;
  for (uint32_t i = 0; i < n; i++) over += all[i] / 1000.0 > budget_ms;
  uint32_t p50 = all[(n * 50 + 99) / 100 - 1];
  uint32_t p99 = all[(n * 99 + 99) / 100 - 1];
  printf("%-10s samples %6u  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  "
         "rtt %3u ms  budget (delay %u x %.2f ms + rtt) %6.2f ms  "
         "over budget %5.2f%%  host late steps %llu/%llu\n",
         name, n, p50 / 1000.0, p99 / 1000.0, all[n - 1] / 1000.0, rtt,
         o.input_delay, step_ms, budget_ms, 100.0 * over / n,
         (unsigned long long)h->session.stats.steps_late,
         (unsigned long long)h->session.stats.steps_confirmed);
  free(all);
  gk_testkit_close(h);
  free(h);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t steps = argc > 1 ? strtoull(argv[1], NULL, 10) : 1200;
  if (steps < 10 || steps > 1000000) {
    fprintf(stderr, "usage: bench_net [steps: 10..1000000]\n");
    return 2;
  }
  int rc = run("clean", steps, 0);
  rc |= run("loss 5%", steps, 50000);
  return rc;
}
