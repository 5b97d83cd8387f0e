/* gk_fixed.h: Q16.16 fixed point and integer trigonometry.
 *
 * No floats and no libm: every function is integer arithmetic with one
 * defined rounding rule, so results are bit-identical on gcc and clang, at
 * any optimisation level, on x86-64, i386 and aarch64. Products and
 * quotients go through int64_t; results that do not fit saturate to
 * GK_FX_MAX / GK_FX_MIN rather than wrap (documented per function).
 *
 * Angles are binary angles: a uint16_t where 65536 is a full turn
 * (GK_ANGLE_QUARTER = 16384 is 90 degrees), so they wrap for free.
 */
#ifndef GK_FIXED_H
#define GK_FIXED_H

#include <stdint.h>

typedef int32_t gk_fx; /* Q16.16 */

#define GK_FX_SHIFT 16
#define GK_FX_ONE ((gk_fx)1 << GK_FX_SHIFT)
#define GK_FX_HALF ((gk_fx)1 << (GK_FX_SHIFT - 1))
#define GK_FX_MAX INT32_MAX
#define GK_FX_MIN INT32_MIN
#define GK_ANGLE_QUARTER 16384u

static inline gk_fx gk_fx_from_int(int32_t i) {
  return (gk_fx)((uint32_t)i << GK_FX_SHIFT);
}
/* Rounds toward negative infinity (floor). */
static inline int32_t gk_fx_to_int(gk_fx a) {
  return (int32_t)((a - (a & (GK_FX_ONE - 1))) / GK_FX_ONE);
}

/* a*b, rounded to nearest (ties away from zero), saturating. */
gk_fx gk_fx_mul(gk_fx a, gk_fx b);
/* a/b, truncated toward zero, saturating; b == 0 gives GK_FX_MAX for
 * a >= 0 and GK_FX_MIN for a < 0. */
gk_fx gk_fx_div(gk_fx a, gk_fx b);
/* floor(sqrt(x)) for integers. */
uint32_t gk_isqrt32(uint32_t x);
uint32_t gk_isqrt64(uint64_t x);
/* sqrt of a non-negative Q16.16 value, floor; negative input gives 0. */
gk_fx gk_fx_sqrt(gk_fx a);
/* Length of (x, y) in Q16.16 without overflow for any inputs (saturating). */
gk_fx gk_fx_hypot(gk_fx x, gk_fx y);

/* sin and cos of a binary angle, in Q16.16 (exactly GK_FX_ONE at the
 * quarter turns, max error documented in the implementation). */
gk_fx gk_fx_sin(uint16_t angle);
gk_fx gk_fx_cos(uint16_t angle);
/* Binary angle of the vector (x, y), like atan2(y, x); (0, 0) gives 0. */
uint16_t gk_fx_atan2(gk_fx y, gk_fx x);

#endif
