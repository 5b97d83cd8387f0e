/* gk_sv_players.c: survivors players: start positions, movement, contact
 * damage and death, gems, level-ups and upgrade picks.
 */
#include <string.h>

#include "gk_sv_internal.h"

#define PLAYER_SPEED (GK_FX_ONE * 2)
#define PICKUP_RADIUS 56
#define REGEN_STEPS 60 /* one health back per this many play steps */
#define UPS_MAX 5

/* --- start and movement ------------------------------------------------- */

uint32_t gk__sv_xp_next(uint32_t level) {
  return 5 + 6 * (level - 1);
}

void gk__sv_player_init(gk__sv_state *s, uint32_t i) {
  gk__sv_player *p = &s->p[i];
  memset(p, 0, sizeof *p);
  /* Players start on a small circle around the centre. */
  uint16_t a = (uint16_t)(i * 65536u / s->players);
  gk_fx r = s->players > 1 ? gk_fx_from_int(40) : 0;
  p->x = gk_fx_from_int(s->cfg.arena_width / 2) + gk_fx_mul(gk_fx_cos(a), r);
  p->y = gk_fx_from_int(s->cfg.arena_height / 2) + gk_fx_mul(gk_fx_sin(a), r);
  p->health = p->max_health = s->cfg.player_health;
  p->speed = PLAYER_SPEED;
  p->pickup = PICKUP_RADIUS;
  p->level = 1;
  p->alive = 1;
  p->wlevel[GK_SV_WAND] = (uint8_t)s->cfg.start_weapon_level;
}

/* --- in and out (late join) -------------------------------------------- */

/* A late joiner's place: a point on the start circle (40 units around the
 * centre) at an angle drawn from the run's PRNG, so every engine that
 * runs the join step puts it at the same place, and two joiners of one
 * step (drawn in slot order) at different ones. */
void gk__sv_player_join(gk__sv_state *s, uint32_t i) {
  gk__sv_player_init(s, i);
  gk__sv_player *p = &s->p[i];
  uint16_t a = (uint16_t)gk_rng_below(&s->rng, 65536u);
  gk_fx r = gk_fx_from_int(40);
  p->x = gk_fx_from_int(s->cfg.arena_width / 2) + gk_fx_mul(gk_fx_cos(a), r);
  p->y = gk_fx_from_int(s->cfg.arena_height / 2) + gk_fx_mul(gk_fx_sin(a), r);
  s->hud_version++;
  gk_event *e = gk__sv_event(s, "player_joined", (int32_t)i);
  gk__sv_event_field(e, "x", gk_fx_to_int(p->x));
  gk__sv_event_field(e, "y", gk_fx_to_int(p->y));
}

void gk__sv_players_presence(gk__sv_state *s, uint32_t mask) {
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    int on = (mask >> i & 1u) != 0;
    if (p->gone == GK__SV_WAITING) {
      if (on) gk__sv_player_join(s, i);
    } else if (p->gone == GK__SV_IN && !on && s->step == 1) {
      p->gone = GK__SV_WAITING; /* not here at the start: not placed */
      p->alive = 0;
      s->hud_version++;
    } else if (p->gone == GK__SV_IN && !on) {
      p->gone = GK__SV_LEFT;
      if (p->alive) gk__sv_player_die(s, i, 1);
    }
  }
}

/* The stick's length in Q16.16 comes from an exact integer square root of
 * (mx^2 + my^2) << 32; lengths above 127 are clamped to 127, so the fastest
 * diagonal is exactly as fast as the fastest straight line. */
void gk__sv_move_vector(int32_t mx, int32_t my, gk_fx speed, gk_fx *vx,
                        gk_fx *vy) {
  *vx = *vy = 0;
  if (mx == 0 && my == 0) return;
  uint64_t m2 = (uint64_t)((int64_t)mx * mx + (int64_t)my * my);
  int64_t len = (int64_t)gk_isqrt64(m2 << 32);
  int64_t full = (int64_t)127 << 16;
  int64_t den = len > full ? len : full;
  *vx = (gk_fx)((int64_t)speed * mx * 65536 / den);
  *vy = (gk_fx)((int64_t)speed * my * 65536 / den);
}

void gk__sv_players_move(gk__sv_state *s, const gk_step_input *in) {
  gk_fx lo = gk_fx_from_int(GK__SV_PLAYER_RADIUS);
  gk_fx hx = gk_fx_from_int(s->cfg.arena_width - GK__SV_PLAYER_RADIUS);
  gk_fx hy = gk_fx_from_int(s->cfg.arena_height - GK__SV_PLAYER_RADIUS);
  for (uint32_t i = 0; i < s->players && i < in->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive) continue;
    const uint8_t *rec = in->inputs + (size_t)i * GK_SV_INPUT_SIZE;
    gk_fx vx, vy;
    gk__sv_move_vector((int8_t)rec[0], (int8_t)rec[1], p->speed, &vx, &vy);
    p->x = gk__sv_clampfx(p->x + vx, lo, hx);
    p->y = gk__sv_clampfx(p->y + vy, lo, hy);
  }
}

/* --- contact damage and death ------------------------------------------- */

typedef struct touch_ctx {
  gk_fx x, y;
  int32_t radius;
  int32_t damage;
} touch_ctx;

static int touch_visit(gk__sv_state *s, uint32_t j, void *ctxp) {
  touch_ctx *c = ctxp;
  const gk__sv_enemy *e = &s->enemies[j];
  const gk__sv_kind_info *k = &gk__sv_kinds[e->kind];
  if (e->health <= 0) return 0;
  int64_t rr = gk_fx_from_int(c->radius + k->radius);
  int64_t dx = (int64_t)c->x - e->x, dy = (int64_t)c->y - e->y;
  if (dx * dx + dy * dy <= rr * rr && k->damage > c->damage)
    c->damage = k->damage;
  return 0;
}

void gk__sv_player_die(gk__sv_state *s, uint32_t i, int reason) {
  gk__sv_player *p = &s->p[i];
  p->alive = 0;
  p->pick_pending = 0;
  p->pick_timer = 0;
  s->hud_version++;
  gk_event *e = gk__sv_event(s, "player_died", (int32_t)i);
  gk__sv_event_field(e, "reason", reason);
}

/* Touching enemies hurt a player by the largest contact damage among them,
 * then the player is immune for hit_cooldown_steps. */
void gk__sv_contact_phase(gk__sv_state *s) {
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive) continue;
    if (s->play_steps % REGEN_STEPS == 0 && p->health < p->max_health)
      p->health++;
    if (p->hurt_cd > 0) {
      p->hurt_cd--;
      continue;
    }
    touch_ctx c = {p->x, p->y, GK__SV_PLAYER_RADIUS, 0};
    gk__sv_grid_query(s, p->x, p->y,
                      GK__SV_PLAYER_RADIUS + GK__SV_ENEMY_RADIUS_MAX,
                      touch_visit, &c);
    if (c.damage == 0) continue;
    p->health = c.damage >= p->health ? 0 : p->health - c.damage;
    p->hurt_cd = (uint16_t)s->cfg.hit_cooldown_steps;
    s->hud_version++;
    gk_event *e = gk__sv_event(s, "player_hit", (int32_t)i);
    gk__sv_event_field(e, "damage", c.damage);
    gk__sv_event_field(e, "health", p->health);
    if (p->health == 0) gk__sv_player_die(s, i, 0);
  }
}

/* --- gems --------------------------------------------------------------- */

int32_t gk__sv_add_gem(gk__sv_state *s, gk_fx x, gk_fx y, uint32_t value) {
  if (s->n_gems >= (uint32_t)s->cfg.max_gems) return -1;
  gk__sv_gem *g = &s->gems[s->n_gems];
  g->x = x;
  g->y = y;
  g->value = value;
  return (int32_t)s->n_gems++;
}

void gk__sv_gems_phase(gk__sv_state *s) {
  uint32_t out = 0;
  for (uint32_t g = 0; g < s->n_gems; g++) {
    gk__sv_gem *gem = &s->gems[g];
    int taken = 0;
    for (uint32_t i = 0; i < s->players && !taken; i++) {
      gk__sv_player *p = &s->p[i];
      if (!p->alive) continue;
      int64_t r = gk_fx_from_int(p->pickup);
      if (gk__sv_sq64((int64_t)gem->x - p->x) +
              gk__sv_sq64((int64_t)gem->y - p->y) <=
          r * r) {
        p->xp =
            gem->value > UINT32_MAX - p->xp ? UINT32_MAX : p->xp + gem->value;
        taken = 1;
      }
    }
    if (!taken) s->gems[out++] = *gem;
  }
  s->n_gems = out;
}

/* --- upgrades ----------------------------------------------------------- */

static int upgrade_available(const gk__sv_player *p, uint32_t id) {
  switch (id) {
  case GK_SV_UP_WAND:
  case GK_SV_UP_AURA:
  case GK_SV_UP_ORBIT:
    return p->wlevel[id] < GK_SV_WEAPON_LEVEL_MAX;
  case GK_SV_UP_HEALTH:
    return p->ups_health < UPS_MAX;
  case GK_SV_UP_SPEED:
    return p->ups_speed < UPS_MAX;
  case GK_SV_UP_MAGNET:
    return p->ups_magnet < UPS_MAX;
  default:
    return 1; /* heal */
  }
}

static void apply_upgrade(gk__sv_player *p, uint32_t id) {
  switch (id) {
  case GK_SV_UP_WAND:
  case GK_SV_UP_AURA:
  case GK_SV_UP_ORBIT:
    if (p->wlevel[id] < GK_SV_WEAPON_LEVEL_MAX) p->wlevel[id]++;
    break;
  case GK_SV_UP_HEALTH:
    if (p->ups_health < UPS_MAX) {
      p->ups_health++;
      p->max_health += 20;
      p->health += 20;
    }
    break;
  case GK_SV_UP_SPEED:
    if (p->ups_speed < UPS_MAX) {
      p->ups_speed++;
      p->speed += PLAYER_SPEED / 10;
    }
    break;
  case GK_SV_UP_MAGNET:
    if (p->ups_magnet < UPS_MAX) {
      p->ups_magnet++;
      p->pickup += 16;
    }
    break;
  default:
    p->health = p->health > p->max_health - 30 ? p->max_health : p->health + 30;
    break;
  }
}

/* Opens a pick if the player has the experience for the next level. The
 * three options are distinct draws from the available upgrades (heal is
 * always available and pads the list if fewer than three are). */
void gk__sv_check_level_up(gk__sv_state *s, uint32_t i) {
  gk__sv_player *p = &s->p[i];
  if (!p->alive || p->pick_pending || p->level >= GK__SV_LEVEL_MAX ||
      p->xp < gk__sv_xp_next(p->level))
    return;
  p->xp -= gk__sv_xp_next(p->level);
  p->level++;
  uint8_t pool[GK_SV_UP_COUNT];
  uint32_t n = 0;
  for (uint32_t id = 0; id < GK_SV_UP_COUNT; id++)
    if (upgrade_available(p, id)) pool[n++] = (uint8_t)id;
  for (uint32_t k = 0; k < 3; k++) {
    if (k < n) {
      uint32_t j = k + gk_rng_below(&s->rng, n - k);
      uint8_t t = pool[k];
      pool[k] = pool[j];
      pool[j] = t;
      p->options[k] = pool[k];
    } else {
      p->options[k] = GK_SV_UP_HEAL;
    }
  }
  p->pick_pending = 1;
  p->pick_timer = (uint32_t)s->cfg.pick_timeout_steps;
  s->hud_version++;
  gk_event *e = gk__sv_event(s, "level_up", (int32_t)i);
  gk__sv_event_field(e, "level", p->level);
  gk__sv_event_field(e, "option1", p->options[0]);
  gk__sv_event_field(e, "option2", p->options[1]);
  gk__sv_event_field(e, "option3", p->options[2]);
}

void gk__sv_resolve_pick(gk__sv_state *s, uint32_t i, uint32_t choice,
                         int timed_out) {
  gk__sv_player *p = &s->p[i];
  uint32_t id = p->options[choice - 1];
  apply_upgrade(p, id);
  p->pick_pending = 0;
  p->pick_timer = 0;
  s->hud_version++;
  gk_event *e = gk__sv_event(s, "upgrade_picked", (int32_t)i);
  gk__sv_event_field(e, "choice", choice);
  gk__sv_event_field(e, "upgrade", id);
  gk__sv_event_field(e, "timed_out", timed_out);
  gk__sv_event_field(e, "level", p->level);
  gk__sv_check_level_up(s, i); /* enough experience for another level */
}
