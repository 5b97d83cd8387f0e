/* gk_net_sched.h: a lockstep player's sampling schedule, the protocol
 * arithmetic of the peer engine (gk_net_peer.c), which every client runs
 * (gk-bot --light too, in the engine's no-simulation mode).
 *
 *   - which step the next sample is for: first + k + shift, k counting
 *     the sampling deadlines passed (t0 + k * step period on the caller's
 *     clock) and shift what delay switches moved it by (mod 2^64);
 *   - the lockstep bound: a step s is sampled only if
 *     s < confirmed + delay + lead, and within half the caller's record
 *     ring of the confirmed step and of the oldest unacknowledged record;
 *   - input delay changes (docs/PROTOCOL.md, "Input delay"): a confirmed
 *     step A whose flags carry GK_STEP_DELAY announces D'; the switch step
 *     is S = A + D + lead (D the delay announced before). At the deadline
 *     whose sample would be for S, raising holds S .. S + D' - D - 1
 *     neutral (the host does too) and samples on; lowering lets D - D'
 *     deadlines pass unread, so the presses wait for the sample of S;
 *   - the records one INPUT carries: every one the host has not
 *     acknowledged, the oldest first, as many as fit.
 *
 * Pure arithmetic (gk_lockstep: libc + core): no clock, no I/O.
 */
#ifndef GK_NET_SCHED_H
#define GK_NET_SCHED_H

#include <stdint.h>

typedef struct gk_net_sched {
  uint64_t first;     /* the first step sampled */
  uint64_t k;         /* deadlines passed (sampled or let pass) */
  uint64_t shift;     /* next sample = first + k + shift (mod 2^64) */
  uint32_t delay;     /* the input delay samples are tagged with now */
  uint32_t announced; /* the delay of the last change announced */
  uint32_t lead;      /* MATCH_START's lead */
  int dl_pending;     /* a change waits for its switch step */
  uint64_t dl_at;     /* its switch step */
  uint32_t dl_to;     /* its new delay */
  uint32_t dl_skip;   /* lowering: deadlines still to let pass */
} gk_net_sched;

/* What a deadline did besides (or instead of) asking for a sample. */
typedef struct gk_net_sched_event {
  int switched; /* the delay is now `delay` from step `at` */
  uint64_t at;
  uint32_t delay;
  uint64_t held_from; /* raising: `held` steps from here are neutral */
  uint32_t held;
  int passed; /* lowering: this deadline passed unread */
} gk_net_sched_event;

/* A schedule from MATCH_START: samples from `first` (first_step + delay,
 * or a snapshot's next input) with `delay` and `lead`. */
void gk_net_sched_init(gk_net_sched *s, uint64_t first, uint32_t delay,
                       uint32_t lead);

/* The step the next sample is for. */
static inline uint64_t gk_net_sched_next(const gk_net_sched *s) {
  return s->first + s->k + s->shift;
}

/* The oldest record the host may still need: max(acked, first). */
static inline uint64_t gk_net_sched_from(const gk_net_sched *s,
                                         uint64_t acked) {
  return acked > s->first ? acked : s->first;
}

/* A newly confirmed step's flags, in step order: notes the change it
 * announces, if any. Returns 1 if it announced one while another was
 * pending (a host never does; the newer one wins), else 0. */
int gk_net_sched_announce(gk_net_sched *s, uint64_t step, uint32_t flags);

/* At a sampling deadline, before sampling: the switch, if the next sample
 * is for the switch step. Returns 1 if the deadline is used up (lowering:
 * k moved on, nothing is read), 0 if the caller samples
 * gk_net_sched_next (after filling any `held` steps neutral). */
int gk_net_sched_deadline(gk_net_sched *s, gk_net_sched_event *ev);

/* May the next sample be taken, with steps below `confirmed` confirmed,
 * records below `acked` acknowledged and a ring of `ring` records? */
int gk_net_sched_may_sample(const gk_net_sched *s, uint64_t confirmed,
                            uint64_t acked, uint32_t ring);

/* The records of one INPUT: from gk_net_sched_from(acked) up to the next
 * sample, at most `fit`, copied from `ring` (ring_len records of isz
 * bytes, step s at s % ring_len) to `out`. Returns how many; *first gets
 * the step of the first. */
uint32_t gk_net_sched_records(const gk_net_sched *s, uint64_t acked,
                              const uint8_t *ring, uint32_t ring_len,
                              uint32_t isz, uint32_t fit, uint8_t *out,
                              uint64_t *first);

#endif
