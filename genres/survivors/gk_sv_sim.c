/* gk_sv_sim.c: the survivors step, and the descriptor.
 *
 * One step, in this order:
 *   1. players missing from active_mask leave (once, for good);
 *   2. a pause press from any active player toggles the pause;
 *   3. pending picks resolve (a pick byte, or option 1 on timeout);
 *   4. if paused or a pick is pending: stop here (the step still counts);
 *   5. play: wave and spawns, players move, enemies chase and separate
 *      (through the grid), contact damage, weapons fire and tick,
 *      projectiles fly and hit, the dead drop gems, gems are collected,
 *      level-ups open picks, and the end of the run is checked.
 *
 * Collision uses a uniform grid of 32-unit cells rebuilt by counting sort
 * (stable, so each cell lists enemies in index order). Enemy movement is
 * computed from the positions at the start of the phase and applied after,
 * so no enemy sees another's half-updated position and the result does not
 * depend on visiting order. All sums are integer, so they are exact in any
 * order. Deaths are applied by a stable compaction that keeps spawn order.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_sv_internal.h"

const gk__sv_kind_info gk__sv_kinds[GK_SV_KINDS] = {
    /* speed             health damage radius xp */
    {GK_FX_ONE * 3 / 2, 6, 2, 8, 1},    /* bat: fast, frail, small */
    {GK_FX_ONE, 16, 4, 12, 2},          /* zombie */
    {GK_FX_ONE * 7 / 10, 60, 8, 20, 5}  /* brute: slow, tough, big */
};

#define PLAYER_SPEED (GK_FX_ONE * 2)
#define PICKUP_RADIUS 56
#define REGEN_STEPS 60 /* one health back per this many play steps */
#define WAND_RANGE 420
#define WAND_PROJ_SPEED (GK_FX_ONE * 6)
#define WAND_PROJ_LIFE 75
#define AURA_TICK 20
#define ORBIT_TICK 10
#define ORBIT_RADIUS 72
#define ORB_RADIUS 12
#define ORBIT_TURN 1100 /* binary angle per step: about a turn per second */
#define SEP_PUSH_MAX (GK_FX_ONE * 3 / 2)
#define UPS_MAX 5

static gk_fx clampfx(gk_fx v, gk_fx lo, gk_fx hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
static int64_t sq64(int64_t v) { return v * v; }

/* --- events ------------------------------------------------------------- */

/* The queue has GK_SV_EVENTS_MAX slots from create on; an event that finds
 * it full is counted, and the next drain reports the count. */
static gk_event *ev_new(gk__sv_state *s, const char *name, int32_t player) {
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

static void ev_field(gk_event *e, const char *key, int64_t value) {
  if (e == NULL || e->nfields >= GK_EVENT_FIELDS_MAX)
    return;
  e->fields[e->nfields].key = key;
  e->fields[e->nfields].value = value;
  e->nfields++;
}

/* --- allocation --------------------------------------------------------- */

void gk__sv_free(gk__sv_state *s) {
  if (s == NULL)
    return;
  free(s->enemies);
  free(s->proj);
  free(s->gems);
  free(s->cell_start);
  free(s->cell_items);
  free(s->move_x);
  free(s->move_y);
  free(s->events);
  free(s);
}

gk__sv_state *gk__sv_alloc(const gk_sv_config *cfg, uint32_t players) {
  gk__sv_state *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->cfg = *cfg;
  s->players = players;
  size_t ne = (size_t)cfg->max_enemies;
  s->grid_w = ((uint32_t)cfg->arena_width >> GK__SV_CELL_UNITS_SHIFT) + 1;
  s->grid_h = ((uint32_t)cfg->arena_height >> GK__SV_CELL_UNITS_SHIFT) + 1;
  s->enemies = calloc(ne, sizeof *s->enemies);
  s->proj = calloc((size_t)cfg->max_projectiles, sizeof *s->proj);
  s->gems = calloc((size_t)cfg->max_gems, sizeof *s->gems);
  s->cell_start = calloc((size_t)s->grid_w * s->grid_h + 1, sizeof(uint32_t));
  s->cell_items = calloc(ne, sizeof(uint32_t));
  s->move_x = calloc(ne, sizeof(gk_fx));
  s->move_y = calloc(ne, sizeof(gk_fx));
  s->events = calloc(GK_SV_EVENTS_MAX, sizeof *s->events);
  if (!s->enemies || !s->proj || !s->gems || !s->cell_start ||
      !s->cell_items || !s->move_x || !s->move_y || !s->events) {
    gk__sv_free(s);
    return NULL;
  }
  return s;
}

uint32_t gk__sv_xp_next(uint32_t level) { return 5 + 6 * (level - 1); }

static void player_init(gk__sv_state *s, uint32_t i) {
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

static void *create(const void *cfgp, uint64_t seed, uint32_t players,
                    char *err, size_t errlen) {
  const gk_sv_config *cfg = cfgp;
  if (gk__sv_config_check(cfg, err, errlen) != 0)
    return NULL;
  if (players < 1 || players > GK_SV_PLAYERS_MAX) {
    gk_errf(err, errlen, GK_ERANGE,
            "survivors: %lu players, must be 1..%d", (unsigned long)players,
            GK_SV_PLAYERS_MAX);
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
  for (uint32_t i = 0; i < players; i++)
    player_init(s, i);
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

/* The stick's length in Q16.16 comes from an exact integer square root of
 * (mx^2 + my^2) << 32; lengths above 127 are clamped to 127, so the fastest
 * diagonal is exactly as fast as the fastest straight line. */
void gk__sv_move_vector(int32_t mx, int32_t my, gk_fx speed, gk_fx *vx,
                        gk_fx *vy) {
  *vx = *vy = 0;
  if (mx == 0 && my == 0)
    return;
  uint64_t m2 = (uint64_t)(mx * mx + my * my);
  int64_t len = (int64_t)gk_isqrt64(m2 << 32);
  int64_t full = (int64_t)127 << 16;
  int64_t den = len > full ? len : full;
  *vx = (gk_fx)((int64_t)speed * mx * 65536 / den);
  *vy = (gk_fx)((int64_t)speed * my * 65536 / den);
}

/* --- grid --------------------------------------------------------------- */

static uint32_t cell_coord(gk_fx v, uint32_t n) {
  if (v < 0)
    return 0;
  uint32_t c = (uint32_t)v >> GK__SV_CELL_SHIFT;
  return c < n ? c : n - 1;
}

/* Counting sort of enemies into cells. Filling from the last enemy down
 * leaves each cell's list in ascending index order. */
static void grid_build(gk__sv_state *s) {
  uint32_t ncell = s->grid_w * s->grid_h;
  memset(s->cell_start, 0, ((size_t)ncell + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    uint32_t c = cell_coord(s->enemies[i].y, s->grid_h) * s->grid_w +
                 cell_coord(s->enemies[i].x, s->grid_w);
    s->cell_start[c]++;
  }
  uint32_t sum = 0;
  for (uint32_t c = 0; c < ncell; c++) {
    sum += s->cell_start[c];
    s->cell_start[c] = sum; /* end of cell c for now */
  }
  s->cell_start[ncell] = sum;
  for (uint32_t i = s->n_enemies; i-- > 0;) {
    uint32_t c = cell_coord(s->enemies[i].y, s->grid_h) * s->grid_w +
                 cell_coord(s->enemies[i].x, s->grid_w);
    s->cell_items[--s->cell_start[c]] = i;
  }
}

/* Visits every enemy whose cell touches the square of half-size `r` (whole
 * units) around (x, y), cells row by row, each cell in index order. The
 * callback returns non-zero to stop. */
typedef int (*grid_cb)(gk__sv_state *s, uint32_t enemy, void *ctx);

static void grid_query(gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                       grid_cb cb, void *ctx) {
  gk_fx rr = gk_fx_from_int(r);
  gk_fx x0 = x > GK_FX_MIN + rr ? x - rr : GK_FX_MIN;
  gk_fx y0 = y > GK_FX_MIN + rr ? y - rr : GK_FX_MIN;
  gk_fx x1 = x < GK_FX_MAX - rr ? x + rr : GK_FX_MAX;
  gk_fx y1 = y < GK_FX_MAX - rr ? y + rr : GK_FX_MAX;
  uint32_t cx0 = cell_coord(x0, s->grid_w), cx1 = cell_coord(x1, s->grid_w);
  uint32_t cy0 = cell_coord(y0, s->grid_h), cy1 = cell_coord(y1, s->grid_h);
  for (uint32_t cy = cy0; cy <= cy1; cy++)
    for (uint32_t cx = cx0; cx <= cx1; cx++) {
      uint32_t c = cy * s->grid_w + cx;
      for (uint32_t k = s->cell_start[c]; k < s->cell_start[c + 1]; k++)
        if (cb(s, s->cell_items[k], ctx))
          return;
    }
}

/* --- entities ----------------------------------------------------------- */

int32_t gk__sv_spawn_enemy(gk__sv_state *s, uint32_t kind, gk_fx x, gk_fx y) {
  if (s->n_enemies >= (uint32_t)s->cfg.max_enemies || kind >= GK_SV_KINDS)
    return -1;
  const gk__sv_kind_info *k = &gk__sv_kinds[kind];
  int32_t rad = k->radius;
  gk__sv_enemy *e = &s->enemies[s->n_enemies];
  e->x = clampfx(x, gk_fx_from_int(rad),
                 gk_fx_from_int(s->cfg.arena_width - rad));
  e->y = clampfx(y, gk_fx_from_int(rad),
                 gk_fx_from_int(s->cfg.arena_height - rad));
  int64_t hp = (int64_t)k->health * (100 + 15 * (int64_t)s->wave) / 100 *
               s->cfg.enemy_health_pct / 100;
  e->health = hp < 1 ? 1 : hp > INT32_MAX ? INT32_MAX : (int32_t)hp;
  e->id = s->next_enemy_id++;
  if (s->next_enemy_id == 0)
    s->next_enemy_id = 1; /* 0 means "none" in a projectile's last_hit */
  e->kind = (uint8_t)kind;
  e->killer = 0xFF;
  return (int32_t)s->n_enemies++;
}

int32_t gk__sv_add_gem(gk__sv_state *s, gk_fx x, gk_fx y, uint32_t value) {
  if (s->n_gems >= (uint32_t)s->cfg.max_gems)
    return -1;
  gk__sv_gem *g = &s->gems[s->n_gems];
  g->x = x;
  g->y = y;
  g->value = value;
  return (int32_t)s->n_gems++;
}

static int add_proj(gk__sv_state *s, uint32_t owner, gk_fx x, gk_fx y,
                    uint16_t angle, int32_t damage, uint8_t pierce) {
  if (s->n_proj >= (uint32_t)s->cfg.max_projectiles)
    return -1;
  gk__sv_proj *q = &s->proj[s->n_proj++];
  q->x = x;
  q->y = y;
  q->vx = gk_fx_mul(gk_fx_cos(angle), WAND_PROJ_SPEED);
  q->vy = gk_fx_mul(gk_fx_sin(angle), WAND_PROJ_SPEED);
  q->damage = damage;
  q->last_hit = 0;
  q->life = WAND_PROJ_LIFE;
  q->pierce = pierce;
  q->owner = (uint8_t)owner;
  return 0;
}

static void hurt_enemy(gk__sv_enemy *e, int32_t damage, uint32_t player) {
  if (e->health <= 0)
    return;
  e->health = damage >= e->health ? 0 : e->health - damage;
  e->killer = (uint8_t)player;
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
    if (p->wlevel[id] < GK_SV_WEAPON_LEVEL_MAX)
      p->wlevel[id]++;
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
    p->health = p->health > p->max_health - 30 ? p->max_health
                                               : p->health + 30;
    break;
  }
}

/* Opens a pick if the player has the experience for the next level. The
 * three options are distinct draws from the available upgrades (heal is
 * always available and pads the list if fewer than three are). */
static void check_level_up(gk__sv_state *s, uint32_t i) {
  gk__sv_player *p = &s->p[i];
  if (!p->alive || p->pick_pending || p->level >= GK__SV_LEVEL_MAX ||
      p->xp < gk__sv_xp_next(p->level))
    return;
  p->xp -= gk__sv_xp_next(p->level);
  p->level++;
  uint8_t pool[GK_SV_UP_COUNT];
  uint32_t n = 0;
  for (uint32_t id = 0; id < GK_SV_UP_COUNT; id++)
    if (upgrade_available(p, id))
      pool[n++] = (uint8_t)id;
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
  gk_event *e = ev_new(s, "level_up", (int32_t)i);
  ev_field(e, "level", p->level);
  ev_field(e, "option1", p->options[0]);
  ev_field(e, "option2", p->options[1]);
  ev_field(e, "option3", p->options[2]);
}

static void resolve_pick(gk__sv_state *s, uint32_t i, uint32_t choice,
                         int timed_out) {
  gk__sv_player *p = &s->p[i];
  uint32_t id = p->options[choice - 1];
  apply_upgrade(p, id);
  p->pick_pending = 0;
  p->pick_timer = 0;
  s->hud_version++;
  gk_event *e = ev_new(s, "upgrade_picked", (int32_t)i);
  ev_field(e, "choice", choice);
  ev_field(e, "upgrade", id);
  ev_field(e, "timed_out", timed_out);
  ev_field(e, "level", p->level);
  check_level_up(s, i); /* enough experience for another level */
}

/* --- play phases -------------------------------------------------------- */

static uint32_t spawn_interval(const gk__sv_state *s) {
  int64_t iv = (int64_t)s->cfg.spawn_interval_start -
               (int64_t)s->wave * s->cfg.spawn_interval_step;
  return iv < s->cfg.spawn_interval_min ? (uint32_t)s->cfg.spawn_interval_min
                                        : (uint32_t)iv;
}

static uint32_t spawn_batch(const gk__sv_state *s) {
  uint32_t b = (uint32_t)s->cfg.spawn_batch;
  if (s->cfg.spawn_batch_every_waves > 0)
    b += s->wave / (uint32_t)s->cfg.spawn_batch_every_waves;
  return b > 256 ? 256 : b;
}

static void spawn_phase(gk__sv_state *s) {
  uint32_t wave = s->play_steps / (uint32_t)s->cfg.wave_steps;
  if (wave != s->wave) {
    s->wave = wave;
    gk_event *e = ev_new(s, "wave_started", -1);
    ev_field(e, "wave", wave);
    ev_field(e, "interval", spawn_interval(s));
    ev_field(e, "batch", spawn_batch(s));
  }
  if (!s->cfg.spawning)
    return;
  if (s->spawn_timer > 1) {
    s->spawn_timer--;
    return;
  }
  s->spawn_timer = spawn_interval(s);
  uint32_t living[GK_SV_PLAYERS_MAX], nl = 0;
  for (uint32_t i = 0; i < s->players; i++)
    if (s->p[i].alive)
      living[nl++] = i;
  if (nl == 0)
    return;
  uint32_t batch = spawn_batch(s);
  for (uint32_t b = 0; b < batch; b++) {
    if (s->n_enemies >= (uint32_t)s->cfg.max_enemies)
      return;
    const gk__sv_player *p = &s->p[living[gk_rng_below(&s->rng, nl)]];
    uint16_t a = (uint16_t)gk_rng_below(&s->rng, 65536);
    int32_t d = s->cfg.spawn_distance +
                (int32_t)gk_rng_below(&s->rng,
                                      (uint32_t)s->cfg.spawn_distance / 4 + 1);
    gk_fx x = p->x + gk_fx_cos(a) * d; /* |cos| <= 1.0, d <= 10240 */
    gk_fx y = p->y + gk_fx_sin(a) * d;
    /* Brutes join from wave 2; bats are the most common. */
    uint32_t roll = gk_rng_below(&s->rng, s->wave >= 2 ? 100 : 85);
    uint32_t kind = roll < 50 ? GK_SV_BAT : roll < 85 ? GK_SV_ZOMBIE
                                                     : GK_SV_BRUTE;
    gk__sv_spawn_enemy(s, kind, x, y);
  }
}

static void players_move(gk__sv_state *s, const gk_step_input *in) {
  gk_fx lo = gk_fx_from_int(GK__SV_PLAYER_RADIUS);
  gk_fx hx = gk_fx_from_int(s->cfg.arena_width - GK__SV_PLAYER_RADIUS);
  gk_fx hy = gk_fx_from_int(s->cfg.arena_height - GK__SV_PLAYER_RADIUS);
  for (uint32_t i = 0; i < s->players && i < in->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive)
      continue;
    const uint8_t *rec = in->inputs + (size_t)i * GK_SV_INPUT_SIZE;
    gk_fx vx, vy;
    gk__sv_move_vector((int8_t)rec[0], (int8_t)rec[1], p->speed, &vx, &vy);
    p->x = clampfx(p->x + vx, lo, hx);
    p->y = clampfx(p->y + vy, lo, hy);
  }
}

/* The separation push on enemy i from every enemy it overlaps. A spring in
 * squared distance, so no square root: each overlapping neighbour j pushes
 * along (p_i - p_j) scaled by (rr^2 - d^2) / (2 rr^2), where rr is the sum
 * of radii, computed in Q8 so every product fits in int64. Two enemies on
 * the very same point part by index (the lower one steps left). This is
 * the hot loop at scale, so it walks the grid cells itself. */
static void separation(const gk__sv_state *s, uint32_t i, int64_t *pxo,
                       int64_t *pyo) {
  const gk__sv_enemy *e = &s->enemies[i];
  int32_t ri = gk__sv_kinds[e->kind].radius;
  gk_fx reach = gk_fx_from_int(ri + GK__SV_ENEMY_RADIUS_MAX);
  uint32_t cx0 = cell_coord(e->x - reach, s->grid_w);
  uint32_t cx1 = cell_coord(e->x + reach, s->grid_w);
  uint32_t cy0 = cell_coord(e->y - reach, s->grid_h);
  uint32_t cy1 = cell_coord(e->y + reach, s->grid_h);
  int64_t px = 0, py = 0;
  gk_fx ex = e->x, ey = e->y;
  for (uint32_t cy = cy0; cy <= cy1; cy++) {
    const uint32_t *row = s->cell_start + (size_t)cy * s->grid_w;
    for (uint32_t k = row[cx0]; k < row[cx1 + 1]; k++) {
      uint32_t j = s->cell_items[k];
      const gk__sv_enemy *o = &s->enemies[j];
      /* Positions lie in [0, 2^30], so differences fit in int32; the
       * unsigned compare is |d| < rr in one branch. */
      int32_t r16 = (ri + gk__sv_kinds[o->kind].radius) << GK_FX_SHIFT;
      int32_t dx16 = ex - o->x, dy16 = ey - o->y;
      if ((uint32_t)(dx16 + r16 - 1) >= (uint32_t)(2 * r16 - 1) ||
          (uint32_t)(dy16 + r16 - 1) >= (uint32_t)(2 * r16 - 1) || j == i)
        continue;
      int64_t rr = r16 / 256; /* Q8 */
      int64_t dx = dx16 / 256, dy = dy16 / 256;
      int64_t f = rr * rr - (dx * dx + dy * dy);
      if (f <= 0)
        continue;
      if (dx == 0 && dy == 0) {
        px += (i < j ? -rr : rr) * 8192; /* rr / 8 in Q24 */
        continue;
      }
      int64_t g = f * 65536 / (rr * rr * 2); /* Q16 fraction, <= 1/2 */
      px += dx * g; /* Q24 */
      py += dy * g;
    }
  }
  px /= 256;
  py /= 256;
  *pxo = px < -SEP_PUSH_MAX ? -SEP_PUSH_MAX : px > SEP_PUSH_MAX ? SEP_PUSH_MAX : px;
  *pyo = py < -SEP_PUSH_MAX ? -SEP_PUSH_MAX : py > SEP_PUSH_MAX ? SEP_PUSH_MAX : py;
}

/* Chase the nearest living player and keep apart from the neighbours, all
 * from the positions the phase started with. */
static void enemies_move(gk__sv_state *s) {
  grid_build(s);
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    const gk__sv_enemy *e = &s->enemies[i];
    const gk__sv_kind_info *k = &gk__sv_kinds[e->kind];
    int64_t best = INT64_MAX;
    int64_t bdx = 0, bdy = 0;
    for (uint32_t pi = 0; pi < s->players; pi++) {
      const gk__sv_player *p = &s->p[pi];
      if (!p->alive)
        continue;
      int64_t dx = (int64_t)p->x - e->x, dy = (int64_t)p->y - e->y;
      int64_t d2 = dx * dx + dy * dy;
      if (d2 < best) {
        best = d2;
        bdx = dx;
        bdy = dy;
      }
    }
    int64_t vx = 0, vy = 0;
    if (best != INT64_MAX) {
      int64_t d = (int64_t)gk_isqrt64((uint64_t)best);
      int64_t stop = gk_fx_from_int(k->radius + GK__SV_PLAYER_RADIUS);
      if (d > stop) {
        int64_t sp = d - stop < k->speed ? d - stop : k->speed;
        vx = sp * bdx / d;
        vy = sp * bdy / d;
      }
    }
    int64_t px, py;
    separation(s, i, &px, &py);
    s->move_x[i] = (gk_fx)(vx + px);
    s->move_y[i] = (gk_fx)(vy + py);
  }
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    gk__sv_enemy *e = &s->enemies[i];
    int32_t rad = gk__sv_kinds[e->kind].radius;
    e->x = clampfx(e->x + s->move_x[i], gk_fx_from_int(rad),
                   gk_fx_from_int(s->cfg.arena_width - rad));
    e->y = clampfx(e->y + s->move_y[i], gk_fx_from_int(rad),
                   gk_fx_from_int(s->cfg.arena_height - rad));
  }
  grid_build(s);
}

typedef struct touch_ctx {
  gk_fx x, y;
  int32_t radius;
  int32_t damage;
} touch_ctx;

static int touch_visit(gk__sv_state *s, uint32_t j, void *ctxp) {
  touch_ctx *c = ctxp;
  const gk__sv_enemy *e = &s->enemies[j];
  const gk__sv_kind_info *k = &gk__sv_kinds[e->kind];
  if (e->health <= 0)
    return 0;
  int64_t rr = gk_fx_from_int(c->radius + k->radius);
  int64_t dx = (int64_t)c->x - e->x, dy = (int64_t)c->y - e->y;
  if (dx * dx + dy * dy <= rr * rr && k->damage > c->damage)
    c->damage = k->damage;
  return 0;
}

static void player_die(gk__sv_state *s, uint32_t i, int reason) {
  gk__sv_player *p = &s->p[i];
  p->alive = 0;
  p->pick_pending = 0;
  p->pick_timer = 0;
  s->hud_version++;
  gk_event *e = ev_new(s, "player_died", (int32_t)i);
  ev_field(e, "reason", reason);
}

/* Touching enemies hurt a player by the largest contact damage among them,
 * then the player is immune for hit_cooldown_steps. */
static void contact_phase(gk__sv_state *s) {
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive)
      continue;
    if (s->play_steps % REGEN_STEPS == 0 && p->health < p->max_health)
      p->health++;
    if (p->hurt_cd > 0) {
      p->hurt_cd--;
      continue;
    }
    touch_ctx c = {p->x, p->y, GK__SV_PLAYER_RADIUS, 0};
    grid_query(s, p->x, p->y, GK__SV_PLAYER_RADIUS + GK__SV_ENEMY_RADIUS_MAX,
               touch_visit, &c);
    if (c.damage == 0)
      continue;
    p->health = c.damage >= p->health ? 0 : p->health - c.damage;
    p->hurt_cd = (uint16_t)s->cfg.hit_cooldown_steps;
    s->hud_version++;
    gk_event *e = ev_new(s, "player_hit", (int32_t)i);
    ev_field(e, "damage", c.damage);
    ev_field(e, "health", p->health);
    if (p->health == 0)
      player_die(s, i, 0);
  }
}

typedef struct area_ctx {
  gk_fx x, y;
  int32_t radius;
  int32_t damage;
  uint32_t player;
} area_ctx;

static int area_visit(gk__sv_state *s, uint32_t j, void *ctxp) {
  area_ctx *c = ctxp;
  gk__sv_enemy *e = &s->enemies[j];
  if (e->health <= 0)
    return 0;
  int64_t rr = gk_fx_from_int(c->radius + gk__sv_kinds[e->kind].radius);
  int64_t dx = (int64_t)c->x - e->x, dy = (int64_t)c->y - e->y;
  if (dx * dx + dy * dy <= rr * rr)
    hurt_enemy(e, c->damage, c->player);
  return 0;
}

static void area_hit(gk__sv_state *s, uint32_t player, gk_fx x, gk_fx y,
                     int32_t radius, int32_t damage) {
  area_ctx c = {x, y, radius, damage, player};
  grid_query(s, x, y, radius + GK__SV_ENEMY_RADIUS_MAX, area_visit, &c);
}

static void fire_wand(gk__sv_state *s, uint32_t i) {
  gk__sv_player *p = &s->p[i];
  uint32_t lv = p->wlevel[GK_SV_WAND];
  int64_t best = sq64(gk_fx_from_int(WAND_RANGE)) + 1;
  int32_t target = -1;
  for (uint32_t j = 0; j < s->n_enemies; j++) {
    const gk__sv_enemy *e = &s->enemies[j];
    if (e->health <= 0)
      continue;
    int64_t d2 = sq64((int64_t)e->x - p->x) + sq64((int64_t)e->y - p->y);
    if (d2 < best) {
      best = d2;
      target = (int32_t)j;
    }
  }
  if (target < 0)
    return; /* stays ready; fires as soon as something is in range */
  const gk__sv_enemy *t = &s->enemies[target];
  uint16_t base = gk_fx_atan2(t->y - p->y, t->x - p->x);
  uint32_t count = 1 + (lv - 1) / 2;
  for (uint32_t k = 0; k < count; k++) {
    int32_t off = (int32_t)(2 * k) - (int32_t)(count - 1);
    add_proj(s, i, p->x, p->y, (uint16_t)(base + off * 900),
             8 + 4 * (int32_t)(lv - 1), (uint8_t)((lv - 1) / 2));
  }
  int32_t cd = s->cfg.wand_cooldown_steps - 4 * (int32_t)(lv - 1);
  p->wtimer[GK_SV_WAND] = (uint16_t)(cd < 1 ? 1 : cd);
}

static void weapons_phase(gk__sv_state *s) {
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive)
      continue;
    if (p->wlevel[GK_SV_WAND]) {
      if (p->wtimer[GK_SV_WAND] > 0)
        p->wtimer[GK_SV_WAND]--;
      if (p->wtimer[GK_SV_WAND] == 0)
        fire_wand(s, i);
    }
    if (p->wlevel[GK_SV_AURA]) {
      int32_t lv = p->wlevel[GK_SV_AURA];
      if (p->wtimer[GK_SV_AURA] > 0)
        p->wtimer[GK_SV_AURA]--;
      if (p->wtimer[GK_SV_AURA] == 0) {
        area_hit(s, i, p->x, p->y, 44 + 8 * (lv - 1), 3 + 2 * (lv - 1));
        p->wtimer[GK_SV_AURA] = AURA_TICK;
      }
    }
    if (p->wlevel[GK_SV_ORBIT]) {
      int32_t lv = p->wlevel[GK_SV_ORBIT];
      p->orbit_angle = (uint16_t)(p->orbit_angle + ORBIT_TURN);
      if (p->wtimer[GK_SV_ORBIT] > 0)
        p->wtimer[GK_SV_ORBIT]--;
      if (p->wtimer[GK_SV_ORBIT] == 0) {
        uint32_t orbs = 1 + (uint32_t)lv / 2;
        for (uint32_t k = 0; k < orbs; k++) {
          uint16_t a = (uint16_t)(p->orbit_angle + k * 65536u / orbs);
          gk_fx ox = p->x + gk_fx_cos(a) * ORBIT_RADIUS;
          gk_fx oy = p->y + gk_fx_sin(a) * ORBIT_RADIUS;
          area_hit(s, i, ox, oy, ORB_RADIUS, 10 + 4 * (lv - 1));
        }
        p->wtimer[GK_SV_ORBIT] = ORBIT_TICK;
      }
    }
  }
}

typedef struct proj_ctx {
  gk__sv_proj *q;
  int dead;
} proj_ctx;

static int proj_visit(gk__sv_state *s, uint32_t j, void *ctxp) {
  proj_ctx *c = ctxp;
  gk__sv_proj *q = c->q;
  gk__sv_enemy *e = &s->enemies[j];
  if (e->health <= 0 || e->id == q->last_hit)
    return 0;
  int64_t rr =
      gk_fx_from_int(GK__SV_PROJ_RADIUS + gk__sv_kinds[e->kind].radius);
  int64_t dx = (int64_t)q->x - e->x, dy = (int64_t)q->y - e->y;
  if (dx * dx + dy * dy > rr * rr)
    return 0;
  hurt_enemy(e, q->damage, q->owner);
  q->last_hit = e->id;
  if (q->pierce == 0) {
    c->dead = 1;
    return 1;
  }
  q->pierce--;
  return 0;
}

/* Projectiles fly, expire, leave the arena or hit; the spent ones are
 * removed by a stable compaction. */
static void projectiles_phase(gk__sv_state *s) {
  gk_fx wx = gk_fx_from_int(s->cfg.arena_width);
  gk_fx wy = gk_fx_from_int(s->cfg.arena_height);
  uint32_t out = 0;
  for (uint32_t i = 0; i < s->n_proj; i++) {
    gk__sv_proj *q = &s->proj[i];
    q->x += q->vx;
    q->y += q->vy;
    int dead = q->life <= 1 || q->x < 0 || q->y < 0 || q->x > wx ||
               q->y > wy;
    if (!dead) {
      q->life--;
      proj_ctx c = {q, 0};
      grid_query(s, q->x, q->y, GK__SV_PROJ_RADIUS + GK__SV_ENEMY_RADIUS_MAX,
                 proj_visit, &c);
      dead = c.dead;
    }
    if (!dead)
      s->proj[out++] = *q;
  }
  s->n_proj = out;
}

/* The dead leave in index order: each drops a gem (merged into an existing
 * one when the floor is full) and reports its killer. */
static void deaths_phase(gk__sv_state *s) {
  uint32_t out = 0;
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    gk__sv_enemy *e = &s->enemies[i];
    if (e->health > 0) {
      s->enemies[out++] = *e;
      continue;
    }
    uint32_t xp = gk__sv_kinds[e->kind].xp;
    s->kills++;
    int32_t killer = e->killer < s->players ? (int32_t)e->killer : -1;
    if (killer >= 0)
      s->p[killer].kills++;
    if (gk__sv_add_gem(s, e->x, e->y, xp) < 0) {
      gk__sv_gem *g = &s->gems[s->kills % s->n_gems];
      g->value = g->value > UINT32_MAX - xp ? UINT32_MAX : g->value + xp;
    }
    gk_event *ev = ev_new(s, "enemy_killed", killer);
    ev_field(ev, "kind", e->kind);
    ev_field(ev, "x", gk_fx_to_int(e->x));
    ev_field(ev, "y", gk_fx_to_int(e->y));
    ev_field(ev, "total", s->kills);
  }
  s->n_enemies = out;
}

static void gems_phase(gk__sv_state *s) {
  uint32_t out = 0;
  for (uint32_t g = 0; g < s->n_gems; g++) {
    gk__sv_gem *gem = &s->gems[g];
    int taken = 0;
    for (uint32_t i = 0; i < s->players && !taken; i++) {
      gk__sv_player *p = &s->p[i];
      if (!p->alive)
        continue;
      int64_t r = gk_fx_from_int(p->pickup);
      if (sq64((int64_t)gem->x - p->x) + sq64((int64_t)gem->y - p->y) <=
          r * r) {
        p->xp = gem->value > UINT32_MAX - p->xp ? UINT32_MAX
                                                : p->xp + gem->value;
        taken = 1;
      }
    }
    if (!taken)
      s->gems[out++] = *gem;
  }
  s->n_gems = out;
}

static void end_run(gk__sv_state *s, int reason) {
  s->over = 1;
  s->over_reason = (uint8_t)reason;
  s->hud_version++;
  gk_event *e = ev_new(s, "game_over", -1);
  ev_field(e, "reason", reason);
  ev_field(e, "kills", s->kills);
  ev_field(e, "elapsed_steps", s->play_steps);
}

static uint32_t alive_count(const gk__sv_state *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->players; i++)
    n += s->p[i].alive;
  return n;
}

/* --- the step ----------------------------------------------------------- */

static void step(void *state, const gk_step_input *in) {
  gk__sv_state *s = state;
  s->step++;
  if (s->over)
    return;
  uint32_t np = in->players < s->players ? in->players : s->players;
  uint32_t mask = in->active_mask;
  if (in->inputs == NULL)
    np = 0;

  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->gone && !(mask & (1u << i))) {
      p->gone = 1;
      if (p->alive)
        player_die(s, i, 1);
    }
  }

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
    if (!p->pick_pending)
      continue;
    uint8_t pick = i < np ? in->inputs[(size_t)i * GK_SV_INPUT_SIZE + 3] : 0;
    if (pick >= 1 && pick <= 3)
      resolve_pick(s, i, pick, 0);
    else if (--p->pick_timer == 0)
      resolve_pick(s, i, 1, 1);
    frozen |= p->pick_pending;
  }

  if (alive_count(s) == 0) { /* e.g. the last player left */
    end_run(s, 0);
    return;
  }
  if (frozen) {
    if (in->flags & GK_STEP_MATCH_END)
      end_run(s, 2);
    return;
  }

  s->play_steps++;
  gk_step_input view = *in;
  view.players = np;
  spawn_phase(s);
  players_move(s, &view);
  enemies_move(s);
  contact_phase(s);
  weapons_phase(s);
  projectiles_phase(s);
  deaths_phase(s);
  gems_phase(s);
  for (uint32_t i = 0; i < s->players; i++)
    check_level_up(s, i);

  if (alive_count(s) == 0)
    end_run(s, 0);
  else if (s->play_steps >= (uint32_t)s->cfg.duration_steps)
    end_run(s, 1);
  else if (in->flags & GK_STEP_MATCH_END)
    end_run(s, 2);
}

static void destroy(void *state) { gk__sv_free(state); }

static void drain_events(void *state, gk_event_cb cb, void *ctx) {
  gk__sv_state *s = state;
  /* Copy out first so a callback that drains again sees an empty queue. */
  uint32_t n = s->n_events;
  s->n_events = 0;
  for (uint32_t i = 0; i < n; i++)
    cb(ctx, &s->events[i]);
  /* Events that found the queue full are not lost silently: the drain
   * ends with their count (as push-puzzle's does). */
  if (s->events_unreported > 0) {
    gk_event e;
    memset(&e, 0, sizeof e);
    e.name = "events_dropped";
    e.step = s->step;
    e.player = -1;
    e.nfields = 1;
    e.fields[0].key = "count";
    e.fields[0].value = s->events_unreported;
    s->events_unreported = 0;
    cb(ctx, &e);
  }
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
    .version = 2,
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
};
