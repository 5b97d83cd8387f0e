/* gk_sv_enemies.c: survivors enemies: the kinds, the collision grid,
 * spawning, the chase with separation, and deaths.
 *
 * Collision uses a uniform grid of 32-unit cells rebuilt by counting sort
 * (stable, so each cell lists enemies in index order). Enemy movement is
 * computed from the positions at the start of the phase and applied after,
 * so no enemy sees another's half-updated position and the result does not
 * depend on visiting order. All sums are integer, so they are exact in any
 * order. Deaths are applied by a stable compaction that keeps spawn order.
 */
#include <string.h>

#include "gk_sv_internal.h"

const gk__sv_kind_info gk__sv_kinds[GK_SV_KINDS] = {
    /* speed             health damage radius xp */
    {GK_FX_ONE * 3 / 2, 6, 2, 8, 1},   /* bat: fast, frail, small */
    {GK_FX_ONE, 16, 4, 12, 2},         /* zombie */
    {GK_FX_ONE * 7 / 10, 60, 8, 20, 5} /* brute: slow, tough, big */
};

#define SEP_PUSH_MAX (GK_FX_ONE * 3 / 2)

/* --- grid --------------------------------------------------------------- */

static uint32_t cell_coord(gk_fx v, uint32_t n) {
  if (v < 0) return 0;
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

void gk__sv_grid_query(gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                       gk__sv_grid_cb cb, void *ctx) {
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
        if (cb(s, s->cell_items[k], ctx)) return;
    }
}

/* --- entities ----------------------------------------------------------- */

int32_t gk__sv_spawn_enemy(gk__sv_state *s, uint32_t kind, gk_fx x, gk_fx y) {
  if (s->n_enemies >= (uint32_t)s->cfg.max_enemies || kind >= GK_SV_KINDS)
    return -1;
  const gk__sv_kind_info *k = &gk__sv_kinds[kind];
  int32_t rad = k->radius;
  gk__sv_enemy *e = &s->enemies[s->n_enemies];
  e->x = gk__sv_clampfx(x, gk_fx_from_int(rad),
                        gk_fx_from_int(s->cfg.arena_width - rad));
  e->y = gk__sv_clampfx(y, gk_fx_from_int(rad),
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

/* --- phases ------------------------------------------------------------- */

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

void gk__sv_spawn_phase(gk__sv_state *s) {
  uint32_t wave = s->play_steps / (uint32_t)s->cfg.wave_steps;
  if (wave != s->wave) {
    s->wave = wave;
    gk_event *e = gk__sv_event(s, "wave_started", -1);
    gk__sv_event_field(e, "wave", wave);
    gk__sv_event_field(e, "interval", spawn_interval(s));
    gk__sv_event_field(e, "batch", spawn_batch(s));
  }
  if (!s->cfg.spawning) return;
  if (s->spawn_timer > 1) {
    s->spawn_timer--;
    return;
  }
  s->spawn_timer = spawn_interval(s);
  uint32_t living[GK_SV_PLAYERS_MAX], nl = 0;
  for (uint32_t i = 0; i < s->players; i++)
    if (s->p[i].alive) living[nl++] = i;
  if (nl == 0) return;
  uint32_t batch = spawn_batch(s);
  for (uint32_t b = 0; b < batch; b++) {
    if (s->n_enemies >= (uint32_t)s->cfg.max_enemies) return;
    const gk__sv_player *p = &s->p[living[gk_rng_below(&s->rng, nl)]];
    uint16_t a = (uint16_t)gk_rng_below(&s->rng, 65536);
    int32_t d =
        s->cfg.spawn_distance +
        (int32_t)gk_rng_below(&s->rng, (uint32_t)s->cfg.spawn_distance / 4 + 1);
    gk_fx x = p->x + gk_fx_cos(a) * d; /* |cos| <= 1.0, d <= 10240 */
    gk_fx y = p->y + gk_fx_sin(a) * d;
    /* Brutes join from wave 2; bats are the most common. */
    uint32_t roll = gk_rng_below(&s->rng, s->wave >= 2 ? 100 : 85);
    uint32_t kind = roll < 50   ? GK_SV_BAT
                    : roll < 85 ? GK_SV_ZOMBIE
                                : GK_SV_BRUTE;
    gk__sv_spawn_enemy(s, kind, x, y);
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
      if (f <= 0) continue;
      if (dx == 0 && dy == 0) {
        px += (i < j ? -rr : rr) * 8192; /* rr / 8 in Q24 */
        continue;
      }
      int64_t g = f * 65536 / (rr * rr * 2); /* Q16 fraction, <= 1/2 */
      px += dx * g;                          /* Q24 */
      py += dy * g;
    }
  }
  px /= 256;
  py /= 256;
  *pxo = px < -SEP_PUSH_MAX  ? -SEP_PUSH_MAX
         : px > SEP_PUSH_MAX ? SEP_PUSH_MAX
                             : px;
  *pyo = py < -SEP_PUSH_MAX  ? -SEP_PUSH_MAX
         : py > SEP_PUSH_MAX ? SEP_PUSH_MAX
                             : py;
}

/* Chase the nearest living player and keep apart from the neighbours, all
 * from the positions the phase started with. */
void gk__sv_enemies_move(gk__sv_state *s) {
  grid_build(s);
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    const gk__sv_enemy *e = &s->enemies[i];
    const gk__sv_kind_info *k = &gk__sv_kinds[e->kind];
    int64_t best = INT64_MAX;
    int64_t bdx = 0, bdy = 0;
    for (uint32_t pi = 0; pi < s->players; pi++) {
      const gk__sv_player *p = &s->p[pi];
      if (!p->alive) continue;
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
    e->x = gk__sv_clampfx(e->x + s->move_x[i], gk_fx_from_int(rad),
                          gk_fx_from_int(s->cfg.arena_width - rad));
    e->y = gk__sv_clampfx(e->y + s->move_y[i], gk_fx_from_int(rad),
                          gk_fx_from_int(s->cfg.arena_height - rad));
  }
  grid_build(s);
}

/* The dead leave in index order: each drops a gem (merged into an existing
 * one when the floor is full) and reports its killer. */
void gk__sv_deaths_phase(gk__sv_state *s) {
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
    if (killer >= 0) s->p[killer].kills++;
    if (gk__sv_add_gem(s, e->x, e->y, xp) < 0) {
      gk__sv_gem *g = &s->gems[s->kills % s->n_gems];
      g->value = g->value > UINT32_MAX - xp ? UINT32_MAX : g->value + xp;
    }
    gk_event *ev = gk__sv_event(s, "enemy_killed", killer);
    gk__sv_event_field(ev, "kind", e->kind);
    gk__sv_event_field(ev, "x", gk_fx_to_int(e->x));
    gk__sv_event_field(ev, "y", gk_fx_to_int(e->y));
    gk__sv_event_field(ev, "total", s->kills);
  }
  s->n_enemies = out;
}
