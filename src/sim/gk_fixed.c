/* gk_fixed.c: Q16.16 arithmetic and binary-angle trigonometry, integers
 * only.
 *
 * sin uses a quarter-wave table of 257 points (every 64 angle units) with
 * linear interpolation: the error is below 2 LSB (2^-15) everywhere. atan2
 * folds the vector into the first octant, looks the ratio min/max up in a
 * 257-point arctangent table and interpolates: the error is below 1 angle
 * unit (1/65536 of a turn). The tables were computed once, offline, and are
 * data here: no libm and no floating point is involved at build or run
 * time.
 */
#include "gk_fixed.h"

static const int32_t sin_table[257] = {
    0,     402,   804,   1206,  1608,  2010,  2412,  2814,  3216,  3617,  4019,
    4420,  4821,  5222,  5623,  6023,  6424,  6824,  7224,  7623,  8022,  8421,
    8820,  9218,  9616,  10014, 10411, 10808, 11204, 11600, 11996, 12391, 12785,
    13180, 13573, 13966, 14359, 14751, 15143, 15534, 15924, 16314, 16703, 17091,
    17479, 17867, 18253, 18639, 19024, 19409, 19792, 20175, 20557, 20939, 21320,
    21699, 22078, 22457, 22834, 23210, 23586, 23961, 24335, 24708, 25080, 25451,
    25821, 26190, 26558, 26925, 27291, 27656, 28020, 28383, 28745, 29106, 29466,
    29824, 30182, 30538, 30893, 31248, 31600, 31952, 32303, 32652, 33000, 33347,
    33692, 34037, 34380, 34721, 35062, 35401, 35738, 36075, 36410, 36744, 37076,
    37407, 37736, 38064, 38391, 38716, 39040, 39362, 39683, 40002, 40320, 40636,
    40951, 41264, 41576, 41886, 42194, 42501, 42806, 43110, 43412, 43713, 44011,
    44308, 44604, 44898, 45190, 45480, 45769, 46056, 46341, 46624, 46906, 47186,
    47464, 47741, 48015, 48288, 48559, 48828, 49095, 49361, 49624, 49886, 50146,
    50404, 50660, 50914, 51166, 51417, 51665, 51911, 52156, 52398, 52639, 52878,
    53114, 53349, 53581, 53812, 54040, 54267, 54491, 54714, 54934, 55152, 55368,
    55582, 55794, 56004, 56212, 56418, 56621, 56823, 57022, 57219, 57414, 57607,
    57798, 57986, 58172, 58356, 58538, 58718, 58896, 59071, 59244, 59415, 59583,
    59750, 59914, 60075, 60235, 60392, 60547, 60700, 60851, 60999, 61145, 61288,
    61429, 61568, 61705, 61839, 61971, 62101, 62228, 62353, 62476, 62596, 62714,
    62830, 62943, 63054, 63162, 63268, 63372, 63473, 63572, 63668, 63763, 63854,
    63944, 64031, 64115, 64197, 64277, 64354, 64429, 64501, 64571, 64639, 64704,
    64766, 64827, 64884, 64940, 64993, 65043, 65091, 65137, 65180, 65220, 65259,
    65294, 65328, 65358, 65387, 65413, 65436, 65457, 65476, 65492, 65505, 65516,
    65525, 65531, 65535, 65536,
};

static const uint16_t atan_table[257] = {
    0,    41,   81,   122,  163,  204,  244,  285,  326,  367,  407,  448,
    489,  529,  570,  610,  651,  692,  732,  773,  813,  854,  894,  935,
    975,  1015, 1056, 1096, 1136, 1177, 1217, 1257, 1297, 1337, 1377, 1417,
    1457, 1497, 1537, 1577, 1617, 1656, 1696, 1736, 1775, 1815, 1854, 1894,
    1933, 1973, 2012, 2051, 2090, 2129, 2168, 2207, 2246, 2285, 2324, 2363,
    2401, 2440, 2478, 2517, 2555, 2594, 2632, 2670, 2708, 2746, 2784, 2822,
    2860, 2897, 2935, 2973, 3010, 3047, 3085, 3122, 3159, 3196, 3233, 3270,
    3307, 3344, 3380, 3417, 3453, 3490, 3526, 3562, 3599, 3635, 3670, 3706,
    3742, 3778, 3813, 3849, 3884, 3920, 3955, 3990, 4025, 4060, 4095, 4129,
    4164, 4199, 4233, 4267, 4302, 4336, 4370, 4404, 4438, 4471, 4505, 4539,
    4572, 4605, 4639, 4672, 4705, 4738, 4771, 4803, 4836, 4869, 4901, 4933,
    4966, 4998, 5030, 5062, 5094, 5125, 5157, 5188, 5220, 5251, 5282, 5313,
    5344, 5375, 5406, 5437, 5467, 5498, 5528, 5559, 5589, 5619, 5649, 5679,
    5708, 5738, 5768, 5797, 5826, 5856, 5885, 5914, 5943, 5972, 6000, 6029,
    6058, 6086, 6114, 6142, 6171, 6199, 6227, 6254, 6282, 6310, 6337, 6365,
    6392, 6419, 6446, 6473, 6500, 6527, 6554, 6580, 6607, 6633, 6660, 6686,
    6712, 6738, 6764, 6790, 6815, 6841, 6867, 6892, 6917, 6943, 6968, 6993,
    7018, 7043, 7068, 7092, 7117, 7141, 7166, 7190, 7214, 7238, 7262, 7286,
    7310, 7334, 7358, 7381, 7405, 7428, 7451, 7475, 7498, 7521, 7544, 7566,
    7589, 7612, 7635, 7657, 7679, 7702, 7724, 7746, 7768, 7790, 7812, 7834,
    7856, 7877, 7899, 7920, 7942, 7963, 7984, 8005, 8026, 8047, 8068, 8089,
    8110, 8131, 8151, 8172, 8192,
};

static gk_fx saturate(int64_t v) {
  if (v > GK_FX_MAX) return GK_FX_MAX;
  if (v < GK_FX_MIN) return GK_FX_MIN;
  return (gk_fx)v;
}

gk_fx gk_fx_mul(gk_fx a, gk_fx b) {
  int64_t p = (int64_t)a * (int64_t)b;
  /* Round half away from zero on the magnitude, so the rule does not
   * depend on how the compiler shifts negative numbers. */
  uint64_t m = p < 0 ? (uint64_t)0 - (uint64_t)p : (uint64_t)p;
  m = (m + (1u << (GK_FX_SHIFT - 1))) >> GK_FX_SHIFT;
  if (p < 0) return saturate(-(int64_t)m);
  return m > (uint64_t)GK_FX_MAX ? GK_FX_MAX : (gk_fx)m;
}

gk_fx gk_fx_div(gk_fx a, gk_fx b) {
  if (b == 0) return a >= 0 ? GK_FX_MAX : GK_FX_MIN;
  /* C99 division truncates toward zero on every compiler. */
  return saturate(((int64_t)a * GK_FX_ONE) / b);
}

/* Digit by digit, from the highest even bit at or below x's top bit. The
 * body is branch-free: its comparison is data-dependent and would mispredict
 * about half the time. */
uint32_t gk_isqrt64(uint64_t x) {
  if (x == 0) return 0;
  unsigned top = 63;
#if defined(__GNUC__)
  top = 63u - (unsigned)__builtin_clzll(x);
#else
  while (!(x >> top)) top--;
#endif
  uint64_t res = 0;
  uint64_t bit = 1ull << (top & ~1u);
  while (bit != 0) {
    uint64_t t = res + bit;
    uint64_t take = (uint64_t)0 - (uint64_t)(x >= t);
    x -= t & take;
    res = (res >> 1) + (bit & take);
    bit >>= 2;
  }
  return (uint32_t)res;
}

uint32_t gk_isqrt32(uint32_t x) {
  return gk_isqrt64(x);
}

gk_fx gk_fx_sqrt(gk_fx a) {
  if (a <= 0) return 0;
  /* sqrt(a / 2^16) * 2^16 == sqrt(a * 2^16) */
  return (gk_fx)gk_isqrt64((uint64_t)a << GK_FX_SHIFT);
}

gk_fx gk_fx_hypot(gk_fx x, gk_fx y) {
  uint64_t ax = x < 0 ? (uint64_t)0 - (uint64_t)(int64_t)x : (uint64_t)x;
  uint64_t ay = y < 0 ? (uint64_t)0 - (uint64_t)(int64_t)y : (uint64_t)y;
  /* Each square is <= 2^62, so the sum fits in 64 bits. */
  uint32_t r = gk_isqrt64(ax * ax + ay * ay);
  return r > (uint32_t)GK_FX_MAX ? GK_FX_MAX : (gk_fx)r;
}

/* sin over the first quarter: a in 0..16384 */
static gk_fx sin_quarter(uint32_t a) {
  uint32_t i = a >> 6, f = a & 63u;
  if (i >= 256) return sin_table[256];
  int32_t lo = sin_table[i], hi = sin_table[i + 1];
  return lo + (int32_t)(((hi - lo) * (int32_t)f + 32) >> 6);
}

gk_fx gk_fx_sin(uint16_t angle) {
  uint32_t a = angle;
  uint32_t quadrant = a >> 14, off = a & 16383u;
  switch (quadrant) {
  case 0:
    return sin_quarter(off);
  case 1:
    return sin_quarter(16384u - off);
  case 2:
    return -sin_quarter(off);
  default:
    return -sin_quarter(16384u - off);
  }
}

gk_fx gk_fx_cos(uint16_t angle) {
  return gk_fx_sin((uint16_t)(angle + GK_ANGLE_QUARTER));
}

/* atan(n/d) for 0 <= n <= d, d > 0, as binary angle 0..8192 */
static uint32_t atan_octant(uint64_t n, uint64_t d) {
  uint64_t ratio = (n << 16) / d; /* 0..65536 */
  uint32_t i = (uint32_t)(ratio >> 8), f = (uint32_t)(ratio & 255u);
  if (i >= 256) return atan_table[256];
  uint32_t lo = atan_table[i], hi = atan_table[i + 1];
  return lo + (((hi - lo) * f + 128u) >> 8);
}

uint16_t gk_fx_atan2(gk_fx y, gk_fx x) {
  if (x == 0 && y == 0) return 0;
  uint64_t ax = x < 0 ? (uint64_t)0 - (uint64_t)(int64_t)x : (uint64_t)x;
  uint64_t ay = y < 0 ? (uint64_t)0 - (uint64_t)(int64_t)y : (uint64_t)y;
  uint32_t t = ay <= ax ? atan_octant(ay, ax) : 16384u - atan_octant(ax, ay);
  /* t is the angle in the first quadrant; mirror into the right one. */
  uint32_t a;
  if (x >= 0)
    a = y >= 0 ? t : 65536u - t;
  else
    a = y >= 0 ? 32768u - t : 32768u + t;
  return (uint16_t)a;
}
