/* gk_net_delay.c: the wanted input delay and the hysteresis controller
 * (see gk_net_delay.h). Integer arithmetic only. */
#include "gk_net_delay.h"

#include <string.h>

uint32_t gk_delay_wanted(const gk_delay_policy *p, uint32_t rtt_ms,
                         uint32_t var_ms) {
  uint64_t cover_ms = (uint64_t)rtt_ms + (uint64_t)p->jitter_x * var_ms;
  cover_ms = cover_ms > p->free_ms ? cover_ms - p->free_ms : 0;
  uint64_t cover_us = cover_ms * 1000u;
  uint64_t d = (cover_us + p->step_us - 1) / p->step_us;
  if (d < p->min) d = p->min;
  if (d > p->max) d = p->max;
  return (uint32_t)d;
}

void gk_delay_ctl_init(gk_delay_ctl *c, const gk_delay_policy *pol,
                       uint32_t current, uint64_t now_ms) {
  memset(c, 0, sizeof *c);
  c->pol = *pol;
  c->current = current;
  c->changed_ms = now_ms;
}

uint32_t gk_delay_ctl_observe(gk_delay_ctl *c, uint64_t now_ms,
                              uint32_t wanted) {
  int dir = wanted > c->current ? 1 : wanted < c->current ? -1 : 0;
  if (dir == 0 || dir != c->dir) {
    c->dir = dir;
    c->since_ms = now_ms;
    c->bound = wanted;
    return 0;
  }
  if (dir > 0 ? wanted < c->bound : wanted > c->bound) c->bound = wanted;
  if (now_ms - c->since_ms < c->pol.hold_ms ||
      now_ms - c->changed_ms < c->pol.every_ms)
    return 0;
  return c->bound;
}

void gk_delay_ctl_changed(gk_delay_ctl *c, uint32_t delay, uint64_t now_ms) {
  c->current = delay;
  c->changed_ms = now_ms;
  c->dir = 0;
}
