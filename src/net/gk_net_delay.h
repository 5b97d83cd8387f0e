/* gk_net_delay.h: choosing the input delay from measured round trips.
 *
 * Pure arithmetic over numbers the owner measures (no clock, no socket):
 * the server feeds it every player's round trip and jitter (ENet's
 * estimates) and acts on what it returns.
 *
 * The wanted delay covers the slowest player's round trip plus a jitter
 * margin, in whole steps:
 *
 *   wanted = ceil((rtt + jitter_x * rtt_var) / step), within [min, max]
 *
 * With prediction (free_ms > 0, docs/PROTOCOL.md "Prediction") the peers'
 * heads cover the round trip up to free_ms, so only what is left needs
 * delay (Photon Quantum's InputDelayPingStart):
 *
 *   wanted = ceil(max(0, rtt + jitter_x * rtt_var - free_ms) / step),
 *            within [min, max]
 *
 * A round trip, not a one-way trip: the schedule starts on the host when
 * it sends MATCH_START, a peer's sample for step s leaves it one one-way
 * trip later and reaches the host after another, so it is on time only if
 * delay * step covers the round trip; and a peer may sample only delay +
 * lead steps past what it holds confirmed, which comes back a round trip
 * after its sample. The due time of a step (start + (step + 1) * step
 * period) gives the "one step" of slack on top.
 *
 * The controller adds hysteresis to mid-match changes: a change is
 * proposed only when every wanted value observed for `hold_ms` in a row
 * differs from the current delay in the same direction, and never sooner
 * than `every_ms` after the previous change. It then proposes the value
 * closest to the current delay among those observed (the least change that
 * every observation asked for), so one spike or dip does not move it.
 */
#ifndef GK_NET_DELAY_H
#define GK_NET_DELAY_H

#include <stdint.h>

typedef struct gk_delay_policy {
  uint32_t min, max; /* 1 <= min <= max <= 255 */
  uint32_t step_us;  /* the step period in microseconds, > 0 */
  uint32_t jitter_x; /* multiple of the round-trip variance added */
  uint64_t hold_ms;  /* a difference must last this long */
  uint64_t every_ms; /* at least this long between two changes */
  uint32_t free_ms;  /* prediction: this much round trip needs no delay
                        (the head covers it); 0 without prediction */
} gk_delay_policy;

/* The wanted delay for a round trip and variance (ms). `p` must be
 * non-NULL and valid. */
uint32_t gk_delay_wanted(const gk_delay_policy *p, uint32_t rtt_ms,
                         uint32_t var_ms);

typedef struct gk_delay_ctl {
  /* read-only for callers */
  gk_delay_policy pol;
  uint32_t current;    /* the delay in force (as last told) */
  uint64_t changed_ms; /* when it last changed */
  /* private */
  int dir;           /* +1 / -1: the direction being held; 0: none */
  uint64_t since_ms; /* when that run of observations began */
  uint32_t bound;    /* raising: least wanted seen; lowering: most */
} gk_delay_ctl;

/* `pol` must be non-NULL (copied); `current` is the delay in force. */
void gk_delay_ctl_init(gk_delay_ctl *c, const gk_delay_policy *pol,
                       uint32_t current, uint64_t now_ms);
/* One observation of the wanted delay at now_ms. Returns the delay to
 * change to, or 0 for none yet. Call gk_delay_ctl_changed once the change
 * is made (a change that could not be made is proposed again later). */
uint32_t gk_delay_ctl_observe(gk_delay_ctl *c, uint64_t now_ms,
                              uint32_t wanted);
/* The delay is now `delay` (from now_ms). */
void gk_delay_ctl_changed(gk_delay_ctl *c, uint32_t delay, uint64_t now_ms);

#endif
