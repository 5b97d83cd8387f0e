/* gk_sim.c: descriptor checks and the state hash. */
#include "gk_sim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gk_errf(char *err, size_t errlen, int code, const char *fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

void gk_event_report_dropped(gk_event_cb cb, void *ctx, uint64_t step,
                             uint64_t count) {
  if (count == 0) return;
  gk_event e;
  memset(&e, 0, sizeof e);
  e.name = "events_dropped";
  e.step = step;
  e.player = -1;
  e.nfields = 1;
  e.fields[0].key = "count";
  e.fields[0].value = (int64_t)count;
  cb(ctx, &e);
}

int gk_sim_check(const gk_sim *sim, char *err, size_t errlen) {
  if (sim == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "genre descriptor is NULL");
  if (sim->abi != GK_SIM_ABI)
    return gk_errf(err, errlen, GK_EVERSION,
                   "genre descriptor abi %u, expected %u", (unsigned)sim->abi,
                   (unsigned)GK_SIM_ABI);
  const char *name = sim->name != NULL ? sim->name : "(unnamed)";
  if (sim->late_join > 1)
    return gk_errf(err, errlen, GK_EINVAL, "genre %s: late_join must be 0 or 1",
                   name);
  if (sim->prediction > 1)
    return gk_errf(err, errlen, GK_EINVAL,
                   "genre %s: prediction must be 0 or 1", name);
  if (sim->name == NULL || sim->config_default == NULL ||
      sim->config_set == NULL || sim->config_each == NULL ||
      sim->create == NULL || sim->destroy == NULL || sim->step == NULL ||
      sim->write_sample == NULL || sim->write_state == NULL ||
      sim->read_state == NULL)
    return gk_errf(err, errlen, GK_EINVAL,
                   "genre %s: a must-be-non-NULL member is NULL", name);
  if (sim->step_seconds.num == 0 || sim->step_seconds.den == 0)
    return gk_errf(err, errlen, GK_EINVAL, "genre %s: step_seconds is zero",
                   name);
  if (sim->input_size == 0 || sim->input_size > GK_INPUT_SIZE_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "genre %s: input_size %u not in 1..%u", name,
                   (unsigned)sim->input_size, (unsigned)GK_INPUT_SIZE_MAX);
  if (sim->players_min == 0 || sim->players_min > sim->players_max ||
      sim->players_max > GK_PLAYERS_MAX)
    return gk_errf(err, errlen, GK_EINVAL, "genre %s: bad player range", name);
  if ((sim->bot_size == 0) != (sim->bot_init == NULL) ||
      (sim->bot_init == NULL) != (sim->bot_next == NULL) || sim->bot_size > 256)
    return gk_errf(err, errlen, GK_EINVAL,
                   "genre %s: bot_size/bot_init/bot_next disagree", name);
  return 0;
}

uint64_t gk_sim_hash(const gk_sim *sim, const void *state, gk_hasher *h) {
  gk_hasher_reset(h);
  sim->write_state(state, &h->w);
  return gk_hasher_digest(h);
}

int gk_parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0') return -1;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}
