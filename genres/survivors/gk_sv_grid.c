/* gk_sv_grid.c: the survivors collision grid.
 *
 * A uniform grid of 32-unit cells over the arena, built from the enemies'
 * positions twice a step (gk__sv_enemies_move): split for the separation
 * before the move, plain for the queries after it. A plain build sorts the
 * enemies by (cell key, index), where the key is row * w + column; a split
 * build puts the even enemy indices first and the odd ones after, each part
 * sorted the same way (the odd part's keys are offset by w * h, so its
 * cells are rows h..2h-1 of a cell table twice the arena's size). A two-pass
 * LSD
 * radix sort (stable, so equal keys keep index order) or, for a handful of
 * enemies, an insertion sort. Then one pass over the sorted keys stamps each
 * occupied cell with its [start, end) run. A cell whose stamp is not the
 * current one is empty, so nothing is ever cleared per build and the cost
 * follows the number of enemies, not the number of cells.
 *
 * Because rows are key ranges, cells cx0..cx1 of one row are one
 * contiguous run of the sorted order. A query visits rows top to bottom,
 * each row's cells left to right, each cell in index order: the same order
 * as the counting-sort grid this replaced, so results are unchanged.
 *
 * Positions and radii are copied into arrays in sorted order, so the
 * separation loop reads contiguous memory.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_sv_internal.h"

#define INSERTION_MAX 32  /* sort this many or fewer by insertion */
#define QUERY_SCAN_MAX 16 /* a query tests this many or fewer one by one */

int gk__sv_grid_init(gk__sv_grid *g, const gk_sv_config *cfg) {
  memset(g, 0, sizeof *g);
  g->w = ((uint32_t)cfg->arena_width >> GK__SV_CELL_UNITS_SHIFT) + 1;
  g->h = ((uint32_t)cfg->arena_height >> GK__SV_CELL_UNITS_SHIFT) + 1;
  /* keys of a split build go up to 2 w h (the odd part's) */
  uint32_t ncell = g->w * g->h, bits = 1;
  while (bits < 32 && (1u << bits) < 2 * ncell) bits++;
  g->digit_bits = (bits + 1) / 2;
  size_t ne = (size_t)cfg->max_enemies;
  g->cells = calloc(2 * (size_t)ncell, sizeof *g->cells);
  g->order = calloc(ne, sizeof(uint32_t));
  g->key = calloc(ne, sizeof(uint32_t));
  g->tmp_order = calloc(ne, sizeof(uint32_t));
  g->tmp_key = calloc(ne, sizeof(uint32_t));
  g->count = calloc((size_t)1 << g->digit_bits, sizeof(uint32_t));
  /* the separation reads four entries at a time past its run's end */
  g->x = calloc(ne + GK__SV_GRID_SLACK, sizeof(gk_fx));
  g->y = calloc(ne + GK__SV_GRID_SLACK, sizeof(gk_fx));
  g->r16 = calloc(ne + GK__SV_GRID_SLACK, sizeof(int32_t));
  g->push_x = calloc(ne, sizeof(int64_t));
  g->push_y = calloc(ne, sizeof(int64_t));
  /* Separation's spring divides 0 < f <= r^2 2^16 < 2^27 (the squared
   * radius sum in Q8) by d = r^2 <= 1600. With m = ceil(2^40 / d) and
   * e = m d - 2^40 < d: f m / 2^40 = f / d + f e / (d 2^40), and the excess
   * is below 2^27 / 2^40 = 2^-13 < 1 / d, the gap between f / d and the
   * next integer, so the shift gives floor(f / d) exactly. f m is about
   * 2^56 at most, so it fits in 64 bits. */
  for (uint32_t r = 1; r <= 2 * GK__SV_ENEMY_RADIUS_MAX; r++) {
    uint64_t d = (uint64_t)r * r;
    g->recip[r] = ((1ull << GK__SV_RECIP_SHIFT) + d - 1) / d;
  }
  if (!g->cells || !g->order || !g->key || !g->tmp_order || !g->tmp_key ||
      !g->count || !g->x || !g->y || !g->r16 || !g->push_x || !g->push_y)
    return -1;
  return 0;
}

void gk__sv_grid_close(gk__sv_grid *g) {
  free(g->cells);
  free(g->order);
  free(g->key);
  free(g->tmp_order);
  free(g->tmp_key);
  free(g->count);
  free(g->x);
  free(g->y);
  free(g->r16);
  free(g->push_x);
  free(g->push_y);
  memset(g, 0, sizeof *g);
}

/* One stable counting pass on the digit at `shift`: (ka, ia) -> (kb, ib). */
static void radix_pass(uint32_t *count, uint32_t nb, uint32_t shift,
                       const uint32_t *ka, const uint32_t *ia, uint32_t *kb,
                       uint32_t *ib, uint32_t n) {
  uint32_t mask = nb - 1;
  memset(count, 0, nb * sizeof *count);
  for (uint32_t i = 0; i < n; i++) count[(ka[i] >> shift) & mask]++;
  uint32_t sum = 0;
  for (uint32_t d = 0; d < nb; d++) {
    uint32_t c = count[d];
    count[d] = sum;
    sum += c;
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t at = count[(ka[i] >> shift) & mask]++;
    kb[at] = ka[i];
    ib[at] = ia[i];
  }
}

/* Sorts g->key / g->order (filled in index order) by key, stably. */
static void sort_keys(gk__sv_grid *g, uint32_t n) {
  uint32_t *k = g->key, *o = g->order;
  if (n <= INSERTION_MAX) {
    for (uint32_t i = 1; i < n; i++) {
      uint32_t kv = k[i], ov = o[i], j = i;
      for (; j > 0 && k[j - 1] > kv; j--) {
        k[j] = k[j - 1];
        o[j] = o[j - 1];
      }
      k[j] = kv;
      o[j] = ov;
    }
    return;
  }
  uint32_t nb = 1u << g->digit_bits;
  radix_pass(g->count, nb, 0, k, o, g->tmp_key, g->tmp_order, n);
  radix_pass(g->count, nb, g->digit_bits, g->tmp_key, g->tmp_order, k, o, n);
}

/* A build, plain or split (odd indices' keys offset by w * h). */
static void build(gk__sv_state *s, uint32_t split) {
  gk__sv_grid *g = &s->grid;
  uint32_t n = s->n_enemies, odd = split ? g->w * g->h : 0;
  for (uint32_t i = 0; i < n; i++) {
    const gk__sv_enemy *e = &s->enemies[i];
    g->key[i] = gk__sv_cell_coord(e->y, g->h) * g->w +
                gk__sv_cell_coord(e->x, g->w) + (i & 1 ? odd : 0);
    g->order[i] = i;
  }
  sort_keys(g, n);
  int32_t r16_max = 0;
  if (++g->stamp == 0) { /* once in 2^32 builds: forget every old stamp */
    memset(g->cells, 0, 2 * (size_t)g->w * g->h * sizeof *g->cells);
    g->stamp = 1;
  }
  for (uint32_t k = 0; k < n; k++) {
    gk__sv_cell *c = &g->cells[g->key[k]];
    if (c->stamp != g->stamp) {
      c->stamp = g->stamp;
      c->start = k;
    }
    c->end = k + 1;
    const gk__sv_enemy *e = &s->enemies[g->order[k]];
    g->x[k] = e->x;
    g->y[k] = e->y;
    g->r16[k] = gk__sv_kinds[e->kind].radius << GK_FX_SHIFT;
    if (g->r16[k] > r16_max) r16_max = g->r16[k];
  }
  g->n = n;
  g->r16_max = r16_max;
}

void gk__sv_grid_build(gk__sv_state *s) {
  build(s, 0);
}

void gk__sv_grid_build_split(gk__sv_state *s) {
  build(s, 1);
}

void gk__sv_grid_query(gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                       gk__sv_grid_cb cb, void *ctx) {
  const gk__sv_grid *g = &s->grid;
  gk_fx rr = gk_fx_from_int(r);
  gk_fx x0 = x > GK_FX_MIN + rr ? x - rr : GK_FX_MIN;
  gk_fx y0 = y > GK_FX_MIN + rr ? y - rr : GK_FX_MIN;
  gk_fx x1 = x < GK_FX_MAX - rr ? x + rr : GK_FX_MAX;
  gk_fx y1 = y < GK_FX_MAX - rr ? y + rr : GK_FX_MAX;
  if (g->n <= QUERY_SCAN_MAX) {
    /* A few enemies: the sorted order is the cells' order (rows, then
     * columns, then index), so testing each in turn visits the same
     * enemies in the same order as the row runs below. */
    for (uint32_t k = 0; k < g->n; k++)
      if (g->x[k] >= x0 && g->x[k] <= x1 && g->y[k] >= y0 && g->y[k] <= y1 &&
          cb(s, g->order[k], ctx))
        return;
    return;
  }
  uint32_t cx0 = gk__sv_cell_coord(x0, g->w), cx1 = gk__sv_cell_coord(x1, g->w);
  uint32_t cy0 = gk__sv_cell_coord(y0, g->h), cy1 = gk__sv_cell_coord(y1, g->h);
  for (uint32_t cy = cy0; cy <= cy1; cy++) {
    uint32_t lo, hi;
    gk__sv_grid_row(g, cy, cx0, cx1, &lo, &hi);
    for (uint32_t k = lo; k < hi; k++) {
      /* outside the square: no caller's circle reaches it (sorted
       * positions, read in sequence, spare the enemy record) */
      if (g->x[k] < x0 || g->x[k] > x1 || g->y[k] < y0 || g->y[k] > y1)
        continue;
      if (cb(s, g->order[k], ctx)) return;
    }
  }
}
