/* gk_pp_rules.c: the one implementation of the Sokoban move rules.
 *
 * A pusher steps onto a free neighbour, or pushes the one box there onto
 * the free cell behind it. "Free" means no wall, no box, no pusher. The
 * board invariant (see gk_pp_internal.h) keeps every index in bounds.
 * Undo is the exact inverse of a move and re-checks the cells it touches,
 * so a history restored from outside bytes can never break the invariant.
 */
#include <string.h>

#include "gk_pp_internal.h"

int gk__pp_pusher_at(const gk__pp_board *b, uint32_t c, uint32_t except) {
  for (uint32_t i = 0; i < b->npushers; i++)
    if (i != except && b->pusher[i] == c) return 1;
  return 0;
}

int gk__pp_try_move(gk__pp_board *b, uint32_t p, unsigned dir) {
  int32_t d = gk__pp_delta(b, dir);
  uint32_t from = b->pusher[p];
  uint32_t to = (uint32_t)((int32_t)from + d);
  uint8_t c = b->cells[to];
  if (c & (GK_PP_WALL | GK_PP_OUTSIDE)) return GK__PP_BLOCKED;
  if (gk__pp_pusher_at(b, to, p)) return GK__PP_BLOCKED;
  if (!(c & GK_PP_BOX)) {
    b->pusher[p] = to;
    return GK__PP_MOVED;
  }
  uint32_t behind = (uint32_t)((int32_t)to + d);
  uint8_t cb = b->cells[behind];
  if (cb & (GK_PP_WALL | GK_PP_OUTSIDE | GK_PP_BOX)) return GK__PP_BLOCKED;
  if (gk__pp_pusher_at(b, behind, p)) return GK__PP_BLOCKED;
  b->cells[to] = (uint8_t)(c & ~GK_PP_BOX);
  b->cells[behind] = (uint8_t)(cb | GK_PP_BOX);
  b->on_goals -= (c & GK_PP_GOAL) ? 1u : 0u;
  b->on_goals += (cb & GK_PP_GOAL) ? 1u : 0u;
  b->box_digest ^= gk__pp_box_mix(to) ^ gk__pp_box_mix(behind);
  b->pusher[p] = to;
  return GK__PP_PUSHED;
}

int gk__pp_unmove(gk__pp_board *b, uint32_t p, unsigned dir, int pushed) {
  if (p >= b->npushers) return GK_ERANGE;
  int32_t d = gk__pp_delta(b, dir);
  uint32_t at = b->pusher[p];
  /* The pusher's cell is inside, so at - d and at + d are in bounds. */
  uint32_t back = (uint32_t)((int32_t)at - d);
  uint32_t ahead = (uint32_t)((int32_t)at + d);
  uint8_t cb = b->cells[back];
  if (cb & (GK_PP_WALL | GK_PP_OUTSIDE | GK_PP_BOX)) return GK_ERANGE;
  if (gk__pp_pusher_at(b, back, p)) return GK_ERANGE;
  if (pushed) {
    uint8_t ca = b->cells[ahead];
    if (!(ca & GK_PP_BOX) || (b->cells[at] & GK_PP_BOX)) return GK_ERANGE;
    b->cells[ahead] = (uint8_t)(ca & ~GK_PP_BOX);
    b->cells[at] = (uint8_t)(b->cells[at] | GK_PP_BOX);
    b->on_goals -= (ca & GK_PP_GOAL) ? 1u : 0u;
    b->on_goals += (b->cells[at] & GK_PP_GOAL) ? 1u : 0u;
    b->box_digest ^= gk__pp_box_mix(ahead) ^ gk__pp_box_mix(at);
  }
  b->pusher[p] = back;
  return 0;
}

uint64_t gk__pp_box_digest(const uint8_t *cells, size_t n) {
  uint64_t d = 0;
  for (size_t i = 0; i < n; i++)
    if (cells[i] & GK_PP_BOX) d ^= gk__pp_box_mix((uint32_t)i);
  return d;
}

void gk__pp_board_load(gk__pp_board *b, uint8_t *cells, const gk_pp_level *lvl,
                       uint32_t players) {
  size_t n = (size_t)lvl->width * lvl->height;
  memcpy(cells, lvl->cells, n);
  b->width = lvl->width;
  b->height = lvl->height;
  b->row_recip = ((1ull << 32) + lvl->width - 1) / lvl->width;
  b->cells = cells;
  b->npushers = lvl->npushers < players ? lvl->npushers : players;
  for (uint32_t i = 0; i < b->npushers; i++) b->pusher[i] = lvl->pushers[i];
  for (uint32_t i = b->npushers; i < GK_PP_PUSHERS_MAX; i++) b->pusher[i] = 0;
  b->boxes = 0;
  b->on_goals = 0;
  for (size_t i = 0; i < n; i++) {
    if (cells[i] & GK_PP_BOX) {
      b->boxes++;
      if (cells[i] & GK_PP_GOAL) b->on_goals++;
    }
  }
  b->box_digest = gk__pp_box_digest(cells, n);
}
