/* Survivors' bounded event queue: a step that emits more events than the
 * queue holds delivers the first ones in order, then one events_dropped
 * with the count; a queue filled exactly drops nothing. (Split from
 * test_sv_rules.c, which is about the rules.) */
#include "sv_test.h"

/* --- events ------------------------------------------------------------- */

typedef struct ev_log {
  uint32_t n;     /* events delivered */
  uint32_t waves; /* wave_started, all before any kill */
  uint32_t kills; /* enemy_killed, each with total == kills */
  uint32_t out_of_order;
  uint32_t drops;      /* events_dropped events */
  uint32_t drop_index; /* position of the last one */
  int64_t dropped;     /* their counts, summed */
} ev_log;

static void log_event(void *ctx, const gk_event *ev) {
  ev_log *l = ctx;
  if (strcmp(ev->name, "wave_started") == 0) {
    l->out_of_order += l->kills > 0 || l->drops > 0;
    l->waves++;
  } else if (strcmp(ev->name, "enemy_killed") == 0) {
    l->kills++;
    l->out_of_order += sv_field(ev, "total") != l->kills || l->drops > 0;
  } else if (strcmp(ev->name, "events_dropped") == 0) {
    l->drops++;
    l->drop_index = l->n;
    l->dropped += sv_field(ev, "count");
  }
  l->n++;
}

/* Places `count` enemies of `kind` with no health left, in rows far from
 * the player: the next step's deaths phase reports each one. */
static void add_dead_enemies(gk__sv_state *s, uint32_t kind, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    int32_t e = gk__sv_spawn_enemy(s, kind, FX(100 + (int)i % 400),
                                   FX(100 + (int)i / 400 * 40));
    cr_assert_geq(e, 0);
    s->enemies[e].health = 0;
  }
}

/* One unarmed player, room for more enemies than the event queue holds. */
static gk__sv_state *crowd_run(void) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.max_enemies = 2 * GK_SV_EVENTS_MAX;
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  place_player(s, 0, 1400, 1400);
  return s;
}

static void step_logged(gk__sv_state *s, ev_log *l) {
  uint8_t neutral[GK_SV_INPUT_SIZE] = {0};
  gk_step_input in = {
      .step = s->step, .active_mask = 1, .players = 1, .inputs = neutral};
  memset(l, 0, sizeof *l);
  gk_survivors_sim.step(s, &in);
  gk_survivors_sim.drain_events(s, log_event, l);
}

Test(survivors_events,
     a_step_with_more_events_than_the_queue_reports_how_many_were_dropped) {
  gk__sv_state *s = crowd_run();
  /* The step starts wave 0 again (one wave_started), then every enemy
   * dies in it: 1 + (GK_SV_EVENTS_MAX - 1 + extra) events. */
  s->wave = 1;
  const uint32_t extra = 37;
  add_dead_enemies(s, GK_SV_ZOMBIE, GK_SV_EVENTS_MAX - 1 + extra);
  ev_log l;
  step_logged(s, &l);
  cr_assert_eq(s->kills, GK_SV_EVENTS_MAX - 1 + extra, "the state saw all");
  cr_assert_eq(l.waves, 1);
  cr_assert_eq(l.kills, GK_SV_EVENTS_MAX - 1, "the queue was filled");
  cr_assert_eq(l.out_of_order, 0, "delivered in order, none skipped");
  cr_assert_eq(l.drops, 1);
  cr_assert_eq(l.dropped, extra);
  cr_assert_eq(l.drop_index, l.n - 1, "events_dropped comes last");
  cr_assert_eq(l.n, GK_SV_EVENTS_MAX + 1);
  cr_assert_eq(gk_sv_events_dropped(s), extra);
  /* The count was reported once; a quiet step reports nothing. */
  step_logged(s, &l);
  cr_assert_eq(l.n, 0);
  cr_assert_eq(gk_sv_events_dropped(s), extra, "the run's total stays");
  gk_survivors_sim.destroy(s);
}

Test(survivors_events, a_full_queue_is_not_a_drop) {
  gk__sv_state *s = crowd_run();
  add_dead_enemies(s, GK_SV_BAT, GK_SV_EVENTS_MAX);
  ev_log l;
  step_logged(s, &l);
  cr_assert_eq(l.kills, GK_SV_EVENTS_MAX);
  cr_assert_eq(l.out_of_order, 0);
  cr_assert_eq(l.drops, 0);
  cr_assert_eq(gk_sv_events_dropped(s), 0);
  gk_survivors_sim.destroy(s);
}
