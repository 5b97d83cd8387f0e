/* gk_sv_enemies.c: survivors enemies: the kinds,
 * spawning, the chase with separation, and deaths.
 *
 * Collision uses the grid of gk_sv_grid.c (cells list enemies in index
 * order). Enemy movement is
 * computed from the positions at the start of the phase and applied after,
 * so no enemy sees another's half-updated position and the result does not
 * depend on visiting order. All sums are integer, so they are exact in any
 * order. Deaths are applied by a stable compaction that keeps spawn order.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "gk_sv_internal.h"

const gk__sv_kind_info gk__sv_kinds[GK_SV_KINDS] = {
    /* speed             health damage radius xp */
    {GK_FX_ONE * 3 / 2, 6, 2, 8, 1},   /* bat: fast, frail, small */
    {GK_FX_ONE, 16, 4, 12, 2},         /* zombie */
    {GK_FX_ONE * 7 / 10, 60, 8, 20, 5} /* brute: slow, tough, big */
};

/* The most a step's separation moves an enemy along each axis. The
 * staggered spring (below) pushes in bursts, twice as hard every other
 * step, and a bound of 1.5 units cut them short: crowds pressed towards the
 * players packed ~25% tighter. At 2 units a pressed crowd of 2,000 holds
 * the same number of overlapping pairs as the every-step spring with 1.5
 * did, and a pile of 400 on one point spreads at the same rate. */
#define SEP_PUSH_MAX ((int64_t)GK_FX_ONE * 2)

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

/* The separation is staggered: each pair of enemies is resolved every
 * other play step, with twice the push, so a crowd spreads at the rate it
 * would if every pair pushed every step, for about half the work. Enemy
 * indices i and j are resolved at the play step t when i + j + t is even:
 * on even steps the pairs of two even or two odd indices, on odd steps the
 * pairs of an even and an odd one. The split grid build (even indices
 * first, then odd ones, gk__sv_grid_build_split) hands each kind of step
 * only the pairs it resolves.
 *
 * The separation spring between the enemies at sorted positions ki and k
 * (if they overlap) is added to ki's push and taken from k's: the push of
 * j on i is exactly the negation of i's on j (dx and dy are differences
 * from positions shifted alike, the same-point rule is antisymmetric), so
 * every pair is looked at once. A spring in squared distance, so no square
 * root: each overlapping pair pushes along (p_i - p_j) scaled by (rr^2 - d^2) /
 * rr^2 (twice the every-step spring's (rr^2 - d^2) / (2 rr^2)), where rr is the
 * sum of radii, computed in Q8 (positions shifted right by 8, then subtracted)
 * so every product fits in int64 (pushes add up in Q24). Two enemies on the
 * very same point part by index (the lower one steps left by rr/4). The sums
 * are integer, so the order of the pairs does not change them. Called for a
 * pair inside the square |dx|, |dy| < rr only (the candidates' filter below).
 */
typedef struct sep_one {
  int32_t x8, y8; /* the enemy at ki, in Q8 (>> 8: positions are >= 0) */
  int32_t r16;    /* its radius << GK_FX_SHIFT */
  uint32_t idx;   /* its enemy index */
  int64_t px, py;
} sep_one;

static inline void pair_push(const gk__sv_grid *g, sep_one *a, uint32_t k,
                             int64_t *qx, int64_t *qy) {
  int32_t r16 = a->r16 + g->r16[k];
  int64_t rr = r16 >> 8; /* Q8 (r16 > 0) */
  /* differences of positions in Q8: exactly antisymmetric */
  int64_t dx = a->x8 - (g->x[k] >> 8), dy = a->y8 - (g->y[k] >> 8);
  int64_t f = rr * rr - (dx * dx + dy * dy);
  if (f <= 0) return;
  int64_t vx, vy;
  if (dx == 0 && dy == 0) {
    vx = (a->idx < g->order[k] ? -rr : rr) * 16384; /* rr/4, Q24 */
    vy = 0;
  } else {
    /* f * 65536 / rr^2 is f / r^2 for the whole-unit radius sum r: a
     * multiply by its exact reciprocal (see the grid's). */
    int64_t gq = (int64_t)(((uint64_t)f * g->recip[r16 >> GK_FX_SHIFT]) >>
                           GK__SV_RECIP_SHIFT); /* Q16, <= 1 */
    vx = dx * gq;                               /* Q24 */
    vy = dy * gq;
  }
  a->px += vx;
  a->py += vy;
  qx[k] -= vx;
  qy[k] -= vy;
}

/* Rows a separation window spans: the rows below an enemy's own (the
 * pairs within one part of the split order, (32 + 2 * 20) / 32 + 1), or
 * the rows on both sides (the pairs across the parts, each looked at from
 * its even enemy: (32 + 4 * 20) / 32 + 1). */
#define SEP_ROWS_MAX 4
_Static_assert(((4 * GK__SV_ENEMY_RADIUS_MAX) >> GK__SV_CELL_UNITS_SHIFT) + 2 <=
                   SEP_ROWS_MAX,
               "a separation window spans at most SEP_ROWS_MAX rows");

/* The index of the lowest set bit of v (non-zero). */
static inline unsigned low_bit(uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctz(v);
#else
  unsigned n = 0;
  for (; !(v & 1); v >>= 1) n++;
  return n;
#endif
}

/* Bit j set if the candidate at sorted position k + j (j < 4) lies inside
 * the square |dx|, |dy| < rr of the enemy at (ex, ey) with radius ri16.
 * Positions lie in [0, 2^30] and radii below 2^22, so differences and
 * their negations fit in 32 bits. Reads four entries of each array (the
 * grid keeps GK__SV_GRID_SLACK spare ones past the last enemy); the caller
 * masks the bits past its run. With SSE2 the four are tested at once,
 * elsewhere one by one: integer compares, the same bits either way (the
 * determinism matrix runs both). */
#if defined(__SSE2__)
static inline uint32_t square_bits4(const gk__sv_grid *g, uint32_t k,
                                    int32_t ex, int32_t ey, int32_t ri16) {
  __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(g->x + k));
  __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(g->y + k));
  __m128i r = _mm_loadu_si128((const __m128i *)(const void *)(g->r16 + k));
  r = _mm_add_epi32(r, _mm_set1_epi32(ri16));
  __m128i dx = _mm_sub_epi32(_mm_set1_epi32(ex), x);
  __m128i dy = _mm_sub_epi32(_mm_set1_epi32(ey), y);
  __m128i zero = _mm_setzero_si128();
  __m128i in = _mm_and_si128(_mm_cmpgt_epi32(r, dx),
                             _mm_cmpgt_epi32(r, _mm_sub_epi32(zero, dx)));
  in = _mm_and_si128(in, _mm_cmpgt_epi32(r, dy));
  in = _mm_and_si128(in, _mm_cmpgt_epi32(r, _mm_sub_epi32(zero, dy)));
  return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(in));
}
#else
static inline uint32_t square_bits4(const gk__sv_grid *g, uint32_t k,
                                    int32_t ex, int32_t ey, int32_t ri16) {
  uint32_t bits = 0;
  for (uint32_t j = 0; j < 4; j++) {
    int32_t r = ri16 + g->r16[k + j];
    int32_t dx = ex - g->x[k + j], dy = ey - g->y[k + j];
    if (dx < r && -dx < r && dy < r && -dy < r) bits |= 1u << j;
  }
  return bits;
}
#endif

/* The row runs of the last cell window looked up: enemies of one cell with
 * the same reach look at the same cells, so their runs are found once.
 * Rows are those of the doubled cell table (h..2h-1: the odd part). */
typedef struct sep_rows {
  uint32_t cx0, cx1, cy0, cy1; /* the window (cy1 < cy0: none yet) */
  uint32_t lo[SEP_ROWS_MAX], hi[SEP_ROWS_MAX];
} sep_rows;

/* Which pairs of the enemy at ki separation_pairs looks at. */
typedef enum sep_side {
  SEP_SAME_EVEN, /* k after ki, both in the even part (cell rows 0..h-1) */
  SEP_SAME_ODD,  /* k after ki, both in the odd part (rows h..2h-1) */
  SEP_ACROSS     /* ki even, k any odd one around it (rows h..2h-1) */
} sep_side;

/* The pairs (ki, k) of `side` in the cells that can hold an overlap with
 * ki: each row's run is tested four candidates at a time, and only those
 * inside the square go to pair_push. */
static void separation_pairs(const gk__sv_grid *g, uint32_t ki, sep_side side,
                             sep_rows *w, int64_t *qx, int64_t *qy) {
  gk_fx ex = g->x[ki], ey = g->y[ki];
  int32_t ri16 = g->r16[ki];
  sep_one a = {ex >> 8, ey >> 8, ri16, g->order[ki], 0, 0};
  gk_fx reach = ri16 + g->r16_max; /* the largest sum of radii */
  uint32_t cx0 = gk__sv_cell_coord(ex - reach, g->w);
  uint32_t cx1 = gk__sv_cell_coord(ex + reach, g->w);
  /* Within a part, rows above ki's hold only keys, hence sorted positions,
   * below ki; across the parts every row around it counts. */
  uint32_t cy0 = gk__sv_cell_coord(side == SEP_ACROSS ? ey - reach : ey, g->h);
  uint32_t cy1 = gk__sv_cell_coord(ey + reach, g->h);
  if (side != SEP_SAME_EVEN) {
    cy0 += g->h;
    cy1 += g->h;
  }
  if (cx0 != w->cx0 || cx1 != w->cx1 || cy0 != w->cy0 || cy1 != w->cy1) {
    *w = (sep_rows){cx0, cx1, cy0, cy1, {0}, {0}};
    for (uint32_t cy = cy0; cy <= cy1; cy++)
      gk__sv_grid_row(g, cy, cx0, cx1, &w->lo[cy - cy0], &w->hi[cy - cy0]);
  }
  uint32_t after = side == SEP_ACROSS ? 0 : ki + 1;
  for (uint32_t r = 0; r <= cy1 - cy0; r++) {
    uint32_t lo = w->lo[r] < after ? after : w->lo[r], hi = w->hi[r];
    for (uint32_t k = lo; k < hi; k += 4) {
      uint32_t bits = square_bits4(g, k, ex, ey, ri16);
      if (hi - k < 4) bits &= (1u << (hi - k)) - 1;
      for (; bits != 0; bits &= bits - 1)
        pair_push(g, &a, k + low_bit(bits), qx, qy);
    }
  }
  qx[ki] += a.px;
  qy[ki] += a.py;
}

/* The pairs of play step t (see above) over the split grid: on even steps
 * each part's own pairs, on odd steps the pairs across the parts. */
static void separation(const gk__sv_grid *g, uint32_t t, int64_t *qx,
                       int64_t *qy) {
  uint32_t n_even = (g->n + 1) / 2;    /* even indices 0, 2, ... < n */
  sep_rows w = {0, 0, 1, 0, {0}, {0}}; /* cy1 < cy0: no window yet */
  uint32_t end = t & 1 ? n_even : g->n;
  for (uint32_t ki = 0; ki < end; ki++) { /* one call site: inlined */
    sep_side side = t & 1         ? SEP_ACROSS
                    : ki < n_even ? SEP_SAME_EVEN
                                  : SEP_SAME_ODD;
    separation_pairs(g, ki, side, &w, qx, qy);
  }
}

static int64_t clamp_push(int64_t q) {
  q /= 256; /* Q24 -> Q16 */
  return q < -SEP_PUSH_MAX  ? -SEP_PUSH_MAX
         : q > SEP_PUSH_MAX ? SEP_PUSH_MAX
                            : q;
}

/* floor(n / d) for n < 2^48 and 2^20 <= d < 2^32, given m = floor(2^48 /
 * d): (n / 2^16) m / 2^32 is at most n / d and at most 2 below it, so the
 * estimate only ever steps up to the exact quotient. Two quotients by one
 * divisor then cost one division (for m) instead of two. */
static inline int64_t quot48(uint64_t n, uint64_t d, uint64_t m) {
  uint64_t q = ((n >> 16) * m) >> 32;
  while ((q + 1) * d <= n) q++;
  return (int64_t)q;
}

/* sp * v / d truncated towards zero (C's division), through quot48. */
static inline int64_t scale(int64_t sp, int64_t v, uint64_t d, uint64_t m) {
  uint64_t mag = (uint64_t)(v < 0 ? -v : v);
  int64_t q = quot48((uint64_t)sp * mag, d, m);
  return v < 0 ? -q : q;
}

/* The living players' positions, in slot order, for the chase. */
typedef struct chase_targets {
  uint32_t n;
  int64_t x[GK_SV_PLAYERS_MAX], y[GK_SV_PLAYERS_MAX];
} chase_targets;

/* The chase velocity towards the nearest living player: squared distances
 * pick the player (the first of equals), one square root scales the step. */
static void chase(const chase_targets *t, gk_fx ex, gk_fx ey, uint32_t kind,
                  int64_t *vxo, int64_t *vyo) {
  int64_t best = INT64_MAX;
  int64_t bdx = 0, bdy = 0;
  for (uint32_t pi = 0; pi < t->n; pi++) {
    int64_t dx = t->x[pi] - ex, dy = t->y[pi] - ey;
    int64_t d2 = dx * dx + dy * dy;
    if (d2 < best) {
      best = d2;
      bdx = dx;
      bdy = dy;
    }
  }
  *vxo = *vyo = 0;
  if (best == INT64_MAX) return;
  const gk__sv_kind_info *k = &gk__sv_kinds[kind];
  int64_t stop = gk_fx_from_int(k->radius + GK__SV_PLAYER_RADIUS);
  /* d > stop  <=>  d2 >= (stop + 1)^2, since d = floor(sqrt(d2)). */
  if (best < (stop + 1) * (stop + 1)) return;
  int64_t d = (int64_t)gk_isqrt64((uint64_t)best);
  int64_t sp = d - stop < k->speed ? d - stop : k->speed;
  /* 0 < sp <= speed < 2^17 and |bdx|, |bdy| <= d, so sp |bdx| < 2^48;
   * d > stop >= 20 units = 2^20 * 1.25 and d < 2^32 (positions < 2^31) */
  uint64_t m = (1ull << 48) / (uint64_t)d;
  *vxo = scale(sp, bdx, (uint64_t)d, m);
  *vyo = scale(sp, bdy, (uint64_t)d, m);
}

/* Chase the nearest living player and keep apart from the neighbours, all
 * from the positions the phase started with (visited in the split grid's
 * order, which reads the sorted arrays in sequence; each result lands at
 * its index). The grid is built plain again after the move, for the
 * queries of the phases that follow. */
void gk__sv_enemies_move(gk__sv_state *s) {
  gk__sv_grid_build_split(s);
  const gk__sv_grid *g = &s->grid;
  int64_t *qx = g->push_x, *qy = g->push_y;
  memset(qx, 0, g->n * sizeof *qx);
  memset(qy, 0, g->n * sizeof *qy);
  separation(g, s->play_steps, qx, qy);
  chase_targets t = {0};
  for (uint32_t i = 0; i < s->players; i++)
    if (s->p[i].alive) {
      t.x[t.n] = s->p[i].x;
      t.y[t.n++] = s->p[i].y;
    }
  for (uint32_t ki = 0; ki < g->n; ki++) {
    uint32_t i = g->order[ki];
    int64_t vx, vy;
    chase(&t, g->x[ki], g->y[ki], s->enemies[i].kind, &vx, &vy);
    s->move_x[i] = (gk_fx)(vx + clamp_push(qx[ki]));
    s->move_y[i] = (gk_fx)(vy + clamp_push(qy[ki]));
  }
  for (uint32_t i = 0; i < s->n_enemies; i++) {
    gk__sv_enemy *e = &s->enemies[i];
    int32_t rad = gk__sv_kinds[e->kind].radius;
    e->x = gk__sv_clampfx(e->x + s->move_x[i], gk_fx_from_int(rad),
                          gk_fx_from_int(s->cfg.arena_width - rad));
    e->y = gk__sv_clampfx(e->y + s->move_y[i], gk_fx_from_int(rad),
                          gk_fx_from_int(s->cfg.arena_height - rad));
  }
  gk__sv_grid_build(s);
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
