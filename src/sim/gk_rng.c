/* gk_rng.c: PCG32 (XSH-RR 64/32), the minimal generator of pcg-random.org,
 * written from the published algorithm. Every operation is on uint64_t and
 * uint32_t with defined wraparound, so the sequence is the same everywhere.
 */
#include "gk_rng.h"

#include "gk_err.h"

#define PCG_MULT 6364136223846793005ull

uint32_t gk_rng_next(gk_rng *rng) {
  uint64_t old = rng->state;
  rng->state = old * PCG_MULT + rng->inc;
  uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
  uint32_t rot = (uint32_t)(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((0u - rot) & 31u));
}

void gk_rng_seed(gk_rng *rng, uint64_t initstate, uint64_t initseq) {
  rng->state = 0;
  rng->inc = (initseq << 1u) | 1u;
  gk_rng_next(rng);
  rng->state += initstate;
  gk_rng_next(rng);
}

uint32_t gk_rng_below(gk_rng *rng, uint32_t bound) {
  if (bound == 0) return 0;
  /* Reject the low (2^32 mod bound) values so every residue is equally
   * likely; the loop ends with probability >= 1/2 per draw. */
  uint32_t threshold = (0u - bound) % bound;
  for (;;) {
    uint32_t r = gk_rng_next(rng);
    if (r >= threshold) return r % bound;
  }
}

int32_t gk_rng_range(gk_rng *rng, int32_t lo, int32_t hi) {
  if (lo >= hi) return lo;
  uint32_t span = (uint32_t)((int64_t)hi - (int64_t)lo);
  if (span == UINT32_MAX) return (int32_t)((int64_t)lo + gk_rng_next(rng));
  return (int32_t)((int64_t)lo + gk_rng_below(rng, span + 1u));
}

void gk_rng_write(const gk_rng *rng, gk_writer *w) {
  gk_write_u64(w, "rng_state", rng->state);
  gk_write_u64(w, "rng_inc", rng->inc);
}

void gk_rng_read(gk_rng *rng, gk_reader *r) {
  rng->state = gk_read_u64(r);
  rng->inc = gk_read_u64(r);
  if (r->err == 0 && (rng->inc & 1u) == 0) gk_reader_fail(r, GK_ERANGE);
}

uint64_t gk_splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
