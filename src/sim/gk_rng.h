/* gk_rng.h: the run's PRNG (PCG32, XSH-RR variant, O'Neill 2014).
 *
 * The state is two plain integers that a genre keeps inside its run state
 * and writes canonically (gk_rng_write), so a restored run continues the
 * same sequence. Output is defined by integer arithmetic alone and is the
 * same on every compiler and CPU; gk_rng_seed(42, 54) reproduces the
 * reference pcg32-demo sequence 0xa15c02b7, 0x7b47f409, 0xba1d3330, ...
 */
#ifndef GK_RNG_H
#define GK_RNG_H

#include <stdint.h>

#include "gk_state.h"

typedef struct gk_rng {
  uint64_t state;
  uint64_t inc; /* always odd */
} gk_rng;

/* Seeds like pcg32_srandom_r(rng, initstate, initseq). */
void gk_rng_seed(gk_rng *rng, uint64_t initstate, uint64_t initseq);
/* Next 32 random bits. */
uint32_t gk_rng_next(gk_rng *rng);
/* Uniform in [0, bound) without modulo bias; bound 0 returns 0. */
uint32_t gk_rng_below(gk_rng *rng, uint32_t bound);
/* Uniform in [lo, hi] (inclusive); lo > hi returns lo. */
int32_t gk_rng_range(gk_rng *rng, int32_t lo, int32_t hi);
/* Writes / reads the two words (state, inc). A read inc that is even is
 * rejected with GK_ERANGE in r->err. */
void gk_rng_write(const gk_rng *rng, gk_writer *w);
void gk_rng_read(gk_rng *rng, gk_reader *r);
/* SplitMix64 step: derive independent seeds (players, bots) from one. */
uint64_t gk_splitmix64(uint64_t *x);

#endif
