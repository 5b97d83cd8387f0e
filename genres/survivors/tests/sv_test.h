/* sv_test.h: small helpers shared by the survivors test files: a run with
 * spawning off (so a test places exactly what it needs), one-step input
 * records, and an event recorder. */
#ifndef SV_TEST_H
#define SV_TEST_H

#include <criterion/criterion.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_sv_internal.h"

#define FX(v) gk_fx_from_int(v)

typedef struct sv_events {
  gk_event ev[256];
  unsigned n;
} sv_events;

static inline void sv_record(void *ctx, const gk_event *ev) {
  sv_events *r = ctx;
  if (r->n < 256) r->ev[r->n++] = *ev;
}

/* The first recorded event with this name, or NULL. */
static inline const gk_event *sv_find(const sv_events *r, const char *name) {
  for (unsigned i = 0; i < r->n; i++)
    if (strcmp(r->ev[i].name, name) == 0) return &r->ev[i];
  return NULL;
}

static inline unsigned sv_count(const sv_events *r, const char *name) {
  unsigned n = 0;
  for (unsigned i = 0; i < r->n; i++) n += strcmp(r->ev[i].name, name) == 0;
  return n;
}

static inline int64_t sv_field(const gk_event *e, const char *key) {
  cr_assert_not_null(e);
  for (uint32_t i = 0; i < e->nfields; i++)
    if (strcmp(e->fields[i].key, key) == 0) return e->fields[i].value;
  cr_assert_fail("event %s has no field %s", e->name, key);
  return 0;
}

static inline void sv_quiet_config(gk_sv_config *cfg) {
  gk_survivors_sim.config_default(cfg);
  cfg->spawning = 0;
}

static inline gk__sv_state *sv_new(const gk_sv_config *cfg, uint32_t players) {
  char err[GK_ERRMSG_MAX] = "";
  gk__sv_state *s = gk_survivors_sim.create(cfg, 1, players, err, sizeof err);
  cr_assert_not_null(s, "create failed: %s", err);
  return s;
}

/* A quiet run (sv_quiet_config into *cfg) with room for `max_enemies`. */
static inline gk__sv_state *sv_new_crowd(gk_sv_config *cfg, int32_t max_enemies,
                                         uint32_t players) {
  sv_quiet_config(cfg);
  cfg->max_enemies = max_enemies;
  return sv_new(cfg, players);
}

/* Steps once with `records` (players * 4 bytes, NULL = neutral) and every
 * player active; events go to `ev` if non-NULL (else they are dropped). */
static inline void sv_step_with(gk__sv_state *s, const uint8_t *records,
                                sv_events *ev) {
  uint8_t neutral[GK_SV_PLAYERS_MAX * GK_SV_INPUT_SIZE] = {0};
  gk_step_input in;
  in.step = s->step;
  in.active_mask = (1u << s->players) - 1;
  in.flags = 0;
  in.players = s->players;
  in.inputs = records ? records : neutral;
  gk_survivors_sim.step(s, &in);
  sv_events sink;
  sink.n = 0;
  gk_survivors_sim.drain_events(s, sv_record, ev ? ev : &sink);
}

static inline void sv_steps(gk__sv_state *s, unsigned n, sv_events *ev) {
  for (unsigned i = 0; i < n; i++) sv_step_with(s, NULL, ev);
}

/* Puts player i at (x, y) in whole units. */
static inline void place_player(gk__sv_state *s, uint32_t i, int x, int y) {
  s->p[i].x = FX(x);
  s->p[i].y = FX(y);
}

/* Takes every weapon from player i. */
static inline void disarm(gk__sv_state *s, uint32_t i) {
  memset(s->p[i].wlevel, 0, sizeof s->p[i].wlevel);
}

#endif
