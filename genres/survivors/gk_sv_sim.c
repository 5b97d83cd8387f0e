/* gk_sv_sim.c: the survivors step, the run's life and events, and the
 * descriptor.
 *
 * One step, in this order:
 *   1. players missing from active_mask leave (once, for good); a slot
 *      missing at the first step waits instead, and joins (fresh, at a
 *      place from the run's PRNG) at the step its bit turns on;
 *   2. a pause press from any active player toggles the pause;
 *   3. pending picks resolve (a pick byte, or option 1 on timeout);
 *   4. if paused or a pick is pending: stop here (the step still counts);
 *   5. play: wave and spawns, players move, enemies chase and separate
 *      (through the grid), contact damage, weapons fire and tick,
 *      projectiles fly and hit, the dead drop gems, gems are collected,
 *      level-ups open picks, and the end of the run is checked.
 *
 * The phases live with the things they move: gk_sv_enemies.c (the grid,
 * spawning, the chase, deaths), gk_sv_players.c (movement, contact damage,
 * gems, level-ups and picks) and gk_sv_weapons.c (weapons, projectiles).
 */
#include <stdlib.h>

#include "gk_sv_internal.h"

/* --- events ------------------------------------------------------------- */

/* The queue has GK_SV_EVENTS_MAX slots from create on; an event that finds
 * it full is counted, and the next drain reports the count. */
gk_event *gk__sv_event(gk__sv_state *s, const char *name, int32_t player) {
  if (s->n_events >= GK_SV_EVENTS_MAX) {
    s->events_dropped++;
    s->events_unreported++;
    return NULL;
  }
  gk_event *e = &s->events[s->n_events++];
  e->name = name;
  e->step = s->step;
  e->player = player;
  e->nfields = 0;
  return e;
}

void gk__sv_event_field(gk_event *e, const char *key, int64_t value) {
  if (e == NULL || e->nfields >= GK_EVENT_FIELDS_MAX) return;
  e->fields[e->nfields].key = key;
  e->fields[e->nfields].value = value;
  e->nfields++;
}

/* --- allocation --------------------------------------------------------- */

void gk__sv_free(gk__sv_state *s) {
  if (s == NULL) return;
  free(s->enemies);
  free(s->proj);
  free(s->gems);
  gk__sv_grid_close(&s->grid);
  free(s->move_x);
  free(s->move_y);
  free(s->events);
  free(s);
}

gk__sv_state *gk__sv_alloc(const gk_sv_config *cfg, uint32_t players) {
  gk__sv_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->cfg = *cfg;
  s->players = players;
  size_t ne = (size_t)cfg->max_enemies;
  s->enemies = calloc(ne, sizeof *s->enemies);
  s->proj = calloc((size_t)cfg->max_projectiles, sizeof *s->proj);
  s->gems = calloc((size_t)cfg->max_gems, sizeof *s->gems);
  s->move_x = calloc(ne, sizeof(gk_fx));
  s->move_y = calloc(ne, sizeof(gk_fx));
  s->events = calloc(GK_SV_EVENTS_MAX, sizeof *s->events);
  gk__sv_lists_init(&s->lists);
  int grid_rc = gk__sv_grid_init(&s->grid, cfg);
  if (!s->enemies || !s->proj || !s->gems || grid_rc != 0 || !s->move_x ||
      !s->move_y || !s->events) {
    gk__sv_free(s);
    return NULL;
  }
  return s;
}

static void *create(const void *cfgp, uint64_t seed, uint32_t players,
                    char *err, size_t errlen) {
  const gk_sv_config *cfg = cfgp;
  if (gk__sv_config_check(cfg, err, errlen) != 0) return NULL;
  if (players < 1 || players > GK_SV_PLAYERS_MAX) {
    gk_errf(err, errlen, GK_ERANGE, "survivors: %lu players, must be 1..%d",
            (unsigned long)players, GK_SV_PLAYERS_MAX);
    return NULL;
  }
  gk__sv_state *s = gk__sv_alloc(cfg, players);
  if (s == NULL) {
    gk_errf(err, errlen, GK_ENOMEM, "survivors: out of memory");
    return NULL;
  }
  gk_rng_seed(&s->rng, seed, 0x5eed5u);
  s->spawn_timer = (uint32_t)cfg->spawn_interval_start;
  s->next_enemy_id = 1;
  for (uint32_t i = 0; i < players; i++) gk__sv_player_init(s, i);
  return s;
}

/* --- input -------------------------------------------------------------- */

void gk_sv_input_pack(uint8_t *out, int8_t move_x, int8_t move_y,
                      uint8_t buttons, uint8_t pick) {
  out[0] = (uint8_t)move_x;
  out[1] = (uint8_t)move_y;
  out[2] = buttons;
  out[3] = pick;
}

/* --- the step ----------------------------------------------------------- */

static void end_run(gk__sv_state *s, int reason) {
  s->over = 1;
  s->over_reason = (uint8_t)reason;
  s->hud_version++;
  gk_event *e = gk__sv_event(s, "game_over", -1);
  gk__sv_event_field(e, "reason", reason);
  gk__sv_event_field(e, "kills", s->kills);
  gk__sv_event_field(e, "elapsed_steps", s->play_steps);
}

static uint32_t alive_count(const gk__sv_state *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->players; i++) n += s->p[i].alive;
  return n;
}

static void step(void *state, const gk_step_input *in) {
  gk__sv_state *s = state;
  s->step++;
  if (s->over) return;
  uint32_t np = in->players < s->players ? in->players : s->players;
  uint32_t mask = in->active_mask;
  if (in->inputs == NULL) np = 0;

  gk__sv_players_presence(s, mask);

  int toggle = 0;
  for (uint32_t i = 0; i < np; i++)
    if (!s->p[i].gone &&
        (in->inputs[(size_t)i * GK_SV_INPUT_SIZE + 2] & GK_SV_BUTTON_PAUSE))
      toggle = 1;
  if (toggle) {
    s->paused = (uint8_t)!s->paused;
    s->hud_version++;
  }

  int frozen = s->paused;
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->pick_pending) continue;
    uint8_t pick = i < np ? in->inputs[(size_t)i * GK_SV_INPUT_SIZE + 3] : 0;
    if (pick >= 1 && pick <= 3)
      gk__sv_resolve_pick(s, i, pick, 0);
    else if (--p->pick_timer == 0)
      gk__sv_resolve_pick(s, i, 1, 1);
    frozen |= p->pick_pending;
  }

  if (alive_count(s) == 0) { /* e.g. the last player left */
    end_run(s, 0);
    return;
  }
  if (frozen) {
    if (in->flags & GK_STEP_MATCH_END) end_run(s, 2);
    return;
  }

  s->play_steps++;
  gk_step_input view = *in;
  view.players = np;
  gk__sv_spawn_phase(s);
  gk__sv_players_move(s, &view);
  gk__sv_enemies_move(s);
  gk__sv_contact_phase(s);
  gk__sv_weapons_phase(s);
  gk__sv_projectiles_phase(s);
  gk__sv_deaths_phase(s);
  gk__sv_gems_phase(s);
  for (uint32_t i = 0; i < s->players; i++) gk__sv_check_level_up(s, i);

  if (alive_count(s) == 0)
    end_run(s, 0);
  else if (s->play_steps >= (uint32_t)s->cfg.duration_steps)
    end_run(s, 1);
  else if (in->flags & GK_STEP_MATCH_END)
    end_run(s, 2);
}

static void destroy(void *state) {
  gk__sv_free(state);
}

static void drain_events(void *state, gk_event_cb cb, void *ctx) {
  gk__sv_state *s = state;
  /* Copy out first so a callback that drains again sees an empty queue. */
  uint32_t n = s->n_events;
  s->n_events = 0;
  for (uint32_t i = 0; i < n; i++) cb(ctx, &s->events[i]);
  /* Events that found the queue full are not lost silently: the drain
   * ends with their count (as push-puzzle's does). */
  uint32_t dropped = s->events_unreported;
  s->events_unreported = 0;
  gk_event_report_dropped(cb, ctx, s->step, dropped);
}

static int is_over(const void *state) {
  return ((const gk__sv_state *)state)->over;
}

static uint64_t sample_version(const void *state) {
  return ((const gk__sv_state *)state)->hud_version;
}

uint64_t gk_sv_events_dropped(const void *state) {
  return state ? ((const gk__sv_state *)state)->events_dropped : 0;
}

const gk_sim gk_survivors_sim = {
    .abi = GK_SIM_ABI,
    .name = "survivors",
    .version = 3,
    .step_seconds = {1, 60},
    .input_size = GK_SV_INPUT_SIZE,
    .players_min = 1,
    .players_max = GK_SV_PLAYERS_MAX,
    .config_size = sizeof(gk_sv_config),
    .config_default = gk__sv_config_default,
    .config_set = gk__sv_config_set,
    .config_each = gk__sv_config_each,
    .config_free = NULL,
    .create = create,
    .destroy = destroy,
    .step = step,
    .drain_events = drain_events,
    .is_over = is_over,
    .every_ms = 250,
    .sample_version = sample_version,
    .write_sample = gk__sv_write_sample,
    .write_state = gk__sv_write_state,
    .read_state = gk__sv_read_state,
    .bot_size = sizeof(gk__sv_bot),
    .bot_init = gk__sv_bot_init,
    .bot_next = gk__sv_bot_next,
    .bot_answer = gk__sv_bot_answer,
    .late_join = 1,
    .prediction = 1, /* an action genre: draw a predicted head */
    .copy_state = gk__sv_copy_state,
};
