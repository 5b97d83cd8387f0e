/* gk_pp_internal.h: what the push-puzzle sources share and nobody else uses.
 *
 * The rules live in one place (gk_pp_rules.c) over a gk__pp_board: a grid
 * of GK_PP_* cell bits plus the pushers' cell indexes. The simulation and
 * the strict LURD checker both move pushers through gk__pp_try_move, so a
 * solution that checks also plays.
 *
 * Invariant every board keeps (established by the XSB parser, re-checked by
 * read_state): pushers and boxes sit on cells that are neither WALL nor
 * OUTSIDE, so all four neighbours of such a cell are inside the grid and
 * the rules index them without bounds checks.
 */
#ifndef GK_PP_INTERNAL_H
#define GK_PP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gk_push_puzzle.h"
#include "gk_rng.h"

typedef struct gk__pp_board {
  uint16_t width, height;
  uint8_t *cells; /* width*height, not owned */
  uint32_t npushers;
  uint32_t pusher[GK_PP_PUSHERS_MAX]; /* cell index of each pusher */
  uint32_t boxes;                     /* total boxes */
  uint32_t on_goals;                  /* boxes on goals */
  /* XOR of gk__pp_box_mix(c) over every cell c holding a box: with the
   * level (whose cells differ from these only in box bits) it commits to
   * every cell, and a push changes it by two mixes (see gk_pp_sim.c). */
  uint64_t box_digest;
  uint64_t row_recip; /* ceil(2^32 / width): gk__pp_row without a division */
} gk__pp_board;

/* The row of cell c: c / width, exactly, as a multiply (c < 2^16 and
 * width < 2^8, so the reciprocal's excess, below c / 2^32 < 2^-16, never
 * reaches the next multiple of 1 / width). */
static inline uint32_t gk__pp_row(const gk__pp_board *b, uint32_t c) {
  return (uint32_t)(((uint64_t)c * b->row_recip) >> 32);
}

/* Outcome of one attempted move. */
enum { GK__PP_BLOCKED = 0, GK__PP_MOVED = 1, GK__PP_PUSHED = 2 };

/* Cell index offset of a direction (GK_PP_DIR_*) on a board. */
static inline int32_t gk__pp_delta(const gk__pp_board *b, unsigned dir) {
  switch (dir & 3u) {
  case GK_PP_DIR_LEFT:
    return -1;
  case GK_PP_DIR_UP:
    return -(int32_t)b->width;
  case GK_PP_DIR_RIGHT:
    return 1;
  default:
    return (int32_t)b->width;
  }
}

/* The digest term of a box on cell c: SplitMix64's finalizer of c, so
 * boxes on different cells give unrelated 64-bit terms. */
static inline uint64_t gk__pp_box_mix(uint32_t c) {
  uint64_t z = (uint64_t)c + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The box digest of n cells, from scratch (a level load, read_state). */
uint64_t gk__pp_box_digest(const uint8_t *cells, size_t n);

/* Moves pusher p one cell in dir if the rules allow it. */
int gk__pp_try_move(gk__pp_board *b, uint32_t p, unsigned dir);
/* Reverts a move of pusher p in dir (pushed: a box came along). Returns 0,
 * or GK_ERANGE if the board does not allow it (then nothing changes). */
int gk__pp_unmove(gk__pp_board *b, uint32_t p, unsigned dir, int pushed);
/* 1 if some pusher other than `except` stands on cell c. */
int gk__pp_pusher_at(const gk__pp_board *b, uint32_t c, uint32_t except);
/* Copies a parsed level onto a board whose cells hold width*height bytes,
 * keeping only the first `players` pushers (the rest become floor). */
void gk__pp_board_load(gk__pp_board *b, uint8_t *cells, const gk_pp_level *lvl,
                       uint32_t players);

/* The built-in bot (gk_pp_bot.c): GK__PP_BOT_SIZE bytes of caller storage
 * (no alignment needed), the descriptor's bot_init and bot_next. */
#define GK__PP_BOT_SIZE (sizeof(gk_rng) + 2)
void gk__pp_bot_init(void *botp, const void *cfg, uint64_t seed,
                     uint32_t player);
void gk__pp_bot_next(void *botp, uint8_t *rec);

/* What gk-replay offers for push-puzzle (gk_pp_tool.c). */
extern const gk_sim_tool gk__pp_tool;

#endif
