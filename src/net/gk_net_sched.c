/* gk_net_sched.c: a lockstep player's sampling schedule (see
 * gk_net_sched.h). */
#include "gk_net_sched.h"

#include <string.h>

#include "gk_sim.h"

void gk_net_sched_init(gk_net_sched *s, uint64_t first, uint32_t delay,
                       uint32_t lead) {
  memset(s, 0, sizeof *s);
  s->first = first;
  s->delay = delay;
  s->announced = delay;
  s->lead = lead;
}

int gk_net_sched_announce(gk_net_sched *s, uint64_t step, uint32_t flags) {
  uint32_t d = GK_STEP_DELAY_OF(flags);
  if (d == 0) return 0;
  int twice = s->dl_pending;
  s->dl_pending = 1;
  s->dl_at = step + s->announced + s->lead;
  s->dl_to = d;
  s->dl_skip = 0;
  s->announced = d;
  return twice;
}

int gk_net_sched_deadline(gk_net_sched *s, gk_net_sched_event *ev) {
  memset(ev, 0, sizeof *ev);
  if (!s->dl_pending || gk_net_sched_next(s) != s->dl_at) return 0;
  int lowering = s->dl_to < s->delay;
  if (!lowering) {
    ev->held_from = s->dl_at;
    ev->held = s->dl_to - s->delay;
    s->shift += ev->held;
  } else {
    if (s->dl_skip == 0) s->dl_skip = s->delay - s->dl_to;
    s->k++;
    s->shift--; /* the next sample stays for the switch step */
    ev->passed = 1;
    if (--s->dl_skip > 0) return 1;
  }
  s->dl_pending = 0;
  s->delay = s->dl_to;
  ev->switched = 1;
  ev->at = s->dl_at;
  ev->delay = s->dl_to;
  return lowering;
}

int gk_net_sched_may_sample(const gk_net_sched *s, uint64_t confirmed,
                            uint64_t acked, uint32_t ring) {
  uint64_t next = gk_net_sched_next(s);
  if (next >= confirmed + s->delay + s->lead || next - confirmed >= ring / 2)
    return 0;
  return next - gk_net_sched_from(s, acked) < ring / 2;
}

uint32_t gk_net_sched_records(const gk_net_sched *s, uint64_t acked,
                              const uint8_t *ring, uint32_t ring_len,
                              uint32_t isz, uint32_t fit, uint8_t *out,
                              uint64_t *first) {
  uint64_t from = gk_net_sched_from(s, acked);
  uint64_t to = gk_net_sched_next(s);
  uint64_t n = to > from ? to - from : 0;
  if (n > fit) n = fit;
  for (uint64_t i = 0; i < n; i++)
    memcpy(out + i * isz, ring + ((from + i) % ring_len) * isz, isz);
  *first = from;
  return (uint32_t)n;
}
