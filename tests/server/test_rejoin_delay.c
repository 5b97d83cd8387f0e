/* test_rejoin_delay.c: a rejoin after the input delay changed mid-match, in
 * the world of rejoin_world.h.
 *
 * The players reach the server through one fault relay. At player 0's
 * step 100 its latency rises to 40 ms each way, so the server's
 * controller raises the input delay (docs/PROTOCOL.md "Input delay")
 * well before player 2 drops at step 1000; player 2 is back 2 s later
 * from a snapshot; at step 1300 the latency falls again, so the delay
 * comes down while the rejoined player plays. Its hashes must agree with
 * the referee's from its snapshot on, it must start from the delay in
 * force (not the one of MATCH_START at step 0), and it must switch at
 * the same steps to the same delays as the others afterwards.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rejoin_world.h"

/* The delay in force for steps from `step` on, in c's list. */
static uint32_t delay_at(const client *c, uint64_t step) {
  uint32_t d = c->delays[0].delay;
  for (uint32_t i = 0; i < c->ndelays; i++)
    if (c->delays[i].step <= step) d = c->delays[i].delay;
  return d;
}

Test(rejoin_delay,
     a_rejoin_after_a_mid_match_delay_change_agrees_and_switches_in_step,
     .timeout = 120) {
  scen o = rw_base();
  o.raise_step = 100;
  o.raise_ms = 40;
  o.lower_step = 1300;
  o.end_step = 2400;
  static world w;
  rw_run(&w, &o);
  rw_expect_ended_normally(&w);
  client *r = rw_expect_rejoined(&w, &o);

  const client *p0 = &w.c[0];
  cr_assert_geq(p0->ndelays, 3,
                "the delay did not both rise and fall (%u delays)",
                p0->ndelays);
  cr_assert_gt(p0->delays[1].delay, p0->delays[0].delay);
  cr_assert_lt(p0->delays[1].step, o.drop_step, "no change before the drop");
  /* the rejoined player started from the delay in force at its return */
  uint64_t back = r->info.next_input;
  cr_assert_eq(r->delays[0].delay, delay_at(p0, back),
               "rejoined with delay %u, %u was in force at step %llu",
               r->delays[0].delay, delay_at(p0, back),
               (unsigned long long)back);
  /* ... and switched with everyone at each change after it */
  uint32_t later = 0;
  for (uint32_t i = 0; i < p0->ndelays; i++) {
    if (p0->delays[i].step <= back) continue;
    later++;
    int found = 0;
    for (uint32_t j = 1; j < r->ndelays; j++)
      found |= r->delays[j].step == p0->delays[i].step &&
               r->delays[j].delay == p0->delays[i].delay;
    cr_assert(found,
              "player 0 switched to %u at step %llu, the rejoined "
              "player did not",
              p0->delays[i].delay, (unsigned long long)p0->delays[i].step);
  }
  cr_assert_geq(later, 1, "no delay change after the rejoin");
  cr_assert_eq(r->delay, p0->delay);
  rw_free(&w);
}
