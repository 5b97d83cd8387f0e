/* gk_sv_weapons.c: survivors weapons (wand, aura, orbit) and projectiles.
 */
#include "gk_sv_internal.h"

#define WAND_RANGE 420
#define WAND_PROJ_SPEED (GK_FX_ONE * 6)
#define WAND_PROJ_LIFE 75
#define AURA_TICK 20
#define ORBIT_TICK 10
#define ORBIT_RADIUS 72
#define ORB_RADIUS 12
#define ORBIT_TURN 1100 /* binary angle per step: about a turn per second */
#define WAND_SCAN_MAX                                                          \
  64 /* up to this many enemies: look at each for a target */

/* --- weapons ------------------------------------------------------------ */

static int add_proj(gk__sv_state *s, uint32_t owner, gk_fx x, gk_fx y,
                    uint16_t angle, int32_t damage, uint8_t pierce) {
  if (s->n_proj >= (uint32_t)s->cfg.max_projectiles) return -1;
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
  if (e->health <= 0) return;
  e->health = damage >= e->health ? 0 : e->health - damage;
  e->killer = (uint8_t)player;
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
  if (e->health <= 0) return 0;
  int64_t rr = gk_fx_from_int(c->radius + gk__sv_kinds[e->kind].radius);
  int64_t dx = (int64_t)c->x - e->x, dy = (int64_t)c->y - e->y;
  if (dx * dx + dy * dy <= rr * rr) hurt_enemy(e, c->damage, c->player);
  return 0;
}

static void area_hit(gk__sv_state *s, uint32_t player, gk_fx x, gk_fx y,
                     int32_t radius, int32_t damage) {
  area_ctx c = {x, y, radius, damage, player};
  gk__sv_grid_query(s, x, y, radius + GK__SV_ENEMY_RADIUS_MAX, area_visit, &c);
}

/* Is enemy j, at squared distance d2, alive and a better wand target than
 * the best so far: within `best` when there is none yet (the range), else
 * nearer, or as near at a lower index? */
static inline int better_target(const gk__sv_state *s, uint32_t j, int64_t d2,
                                int64_t best, int32_t target) {
  if (d2 > best || (d2 == best && target >= 0 && j >= (uint32_t)target))
    return 0;
  return s->enemies[j].health > 0;
}

/* The cells of ring `ring` around (cx, cy) (its Chebyshev distance), row by
 * row, clamped to the grid; each enemy in them updates *best / *target. */
static void ring_targets(const gk__sv_state *s, gk_fx px, gk_fx py, uint32_t cx,
                         uint32_t cy, uint32_t ring, int64_t *best,
                         int32_t *target) {
  const gk__sv_grid *g = &s->grid;
  int64_t x0 = (int64_t)cx - ring, x1 = (int64_t)cx + ring;
  int64_t y0 = (int64_t)cy - ring, y1 = (int64_t)cy + ring;
  for (int64_t y = y0 < 0 ? 0 : y0; y <= y1 && y < (int64_t)g->h; y++) {
    int edge = y == y0 || y == y1; /* a whole row, else its two ends */
    for (int64_t x = x0 < 0 ? 0 : x0; x <= x1 && x < (int64_t)g->w;
         x += edge || x == x1 ? 1 : x1 - x) {
      const gk__sv_cell *c = &g->cells[(size_t)y * g->w + (size_t)x];
      if (c->stamp != g->stamp) continue;
      for (uint32_t k = c->start; k < c->end; k++) {
        int64_t d2 = gk__sv_sq64((int64_t)g->x[k] - px) +
                     gk__sv_sq64((int64_t)g->y[k] - py);
        uint32_t j = g->order[k];
        if (better_target(s, j, d2, *best, *target)) {
          *best = d2;
          *target = (int32_t)j;
        }
      }
    }
  }
}

/* The wand's target for player i: the living enemy nearest to it within
 * WAND_RANGE, the lowest index of equals; -1 if none. A crowd is searched
 * through the grid in rings of cells around the player, nearest first,
 * until no unseen cell can hold anything nearer; a few enemies are simply
 * all looked at (the same answer). */
int32_t gk__sv_wand_target(const gk__sv_state *s, uint32_t i) {
  const gk__sv_player *p = &s->p[i];
  int64_t best = gk__sv_sq64(gk_fx_from_int(WAND_RANGE));
  int32_t target = -1;
  if (s->n_enemies <= WAND_SCAN_MAX) {
    for (uint32_t j = 0; j < s->n_enemies; j++) {
      const gk__sv_enemy *e = &s->enemies[j];
      int64_t d2 =
          gk__sv_sq64((int64_t)e->x - p->x) + gk__sv_sq64((int64_t)e->y - p->y);
      if (better_target(s, j, d2, best, target)) {
        best = d2;
        target = (int32_t)j;
      }
    }
    return target;
  }
  const gk__sv_grid *g = &s->grid;
  uint32_t cx = gk__sv_cell_coord(p->x, g->w),
           cy = gk__sv_cell_coord(p->y, g->h);
  gk_fx cell = gk_fx_from_int(1 << GK__SV_CELL_UNITS_SHIFT);
  uint32_t rings = g->w > g->h ? g->w : g->h;
  for (uint32_t ring = 0; ring < rings; ring++) {
    if (ring > 0) {
      /* Unseen cells lie outside the square of rings < ring, whose edges
       * are this far from the player at least. */
      int64_t inner = (int64_t)(ring - 1) * cell;
      int64_t ox = (int64_t)p->x - ((int64_t)cx * cell - inner);
      int64_t ex = ((int64_t)cx + 1) * cell + inner - p->x;
      int64_t oy = (int64_t)p->y - ((int64_t)cy * cell - inner);
      int64_t ey = ((int64_t)cy + 1) * cell + inner - p->y;
      int64_t d = ox < ex ? ox : ex;
      d = d < oy ? d : oy;
      d = d < ey ? d : ey;
      if (d * d > best) break;
    }
    ring_targets(s, p->x, p->y, cx, cy, ring, &best, &target);
  }
  return target;
}

static void fire_wand(gk__sv_state *s, uint32_t i) {
  gk__sv_player *p = &s->p[i];
  uint32_t lv = p->wlevel[GK_SV_WAND];
  int32_t target = gk__sv_wand_target(s, i);
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

void gk__sv_weapons_phase(gk__sv_state *s) {
  for (uint32_t i = 0; i < s->players; i++) {
    gk__sv_player *p = &s->p[i];
    if (!p->alive) continue;
    if (p->wlevel[GK_SV_WAND]) {
      if (p->wtimer[GK_SV_WAND] > 0) p->wtimer[GK_SV_WAND]--;
      if (p->wtimer[GK_SV_WAND] == 0) fire_wand(s, i);
    }
    if (p->wlevel[GK_SV_AURA]) {
      int32_t lv = p->wlevel[GK_SV_AURA];
      if (p->wtimer[GK_SV_AURA] > 0) p->wtimer[GK_SV_AURA]--;
      if (p->wtimer[GK_SV_AURA] == 0) {
        area_hit(s, i, p->x, p->y, 44 + 8 * (lv - 1), 3 + 2 * (lv - 1));
        p->wtimer[GK_SV_AURA] = AURA_TICK;
      }
    }
    if (p->wlevel[GK_SV_ORBIT]) {
      int32_t lv = p->wlevel[GK_SV_ORBIT];
      p->orbit_angle = (uint16_t)(p->orbit_angle + ORBIT_TURN);
      if (p->wtimer[GK_SV_ORBIT] > 0) p->wtimer[GK_SV_ORBIT]--;
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

/* --- projectiles -------------------------------------------------------- */

typedef struct proj_ctx {
  gk__sv_proj *q;
  int dead;
} proj_ctx;

static int proj_visit(gk__sv_state *s, uint32_t j, void *ctxp) {
  proj_ctx *c = ctxp;
  gk__sv_proj *q = c->q;
  gk__sv_enemy *e = &s->enemies[j];
  if (e->health <= 0 || e->id == q->last_hit) return 0;
  int64_t rr =
      gk_fx_from_int(GK__SV_PROJ_RADIUS + gk__sv_kinds[e->kind].radius);
  int64_t dx = (int64_t)q->x - e->x, dy = (int64_t)q->y - e->y;
  if (dx * dx + dy * dy > rr * rr) return 0;
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
void gk__sv_projectiles_phase(gk__sv_state *s) {
  gk_fx wx = gk_fx_from_int(s->cfg.arena_width);
  gk_fx wy = gk_fx_from_int(s->cfg.arena_height);
  uint32_t out = 0;
  for (uint32_t i = 0; i < s->n_proj; i++) {
    gk__sv_proj *q = &s->proj[i];
    q->x += q->vx;
    q->y += q->vy;
    int dead = q->life <= 1 || q->x < 0 || q->y < 0 || q->x > wx || q->y > wy;
    if (!dead) {
      q->life--;
      proj_ctx c = {q, 0};
      gk__sv_grid_query(s, q->x, q->y,
                        GK__SV_PROJ_RADIUS + GK__SV_ENEMY_RADIUS_MAX,
                        proj_visit, &c);
      dead = c.dead;
    }
    if (!dead) s->proj[out++] = *q;
  }
  s->n_proj = out;
}
