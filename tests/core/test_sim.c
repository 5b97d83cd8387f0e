/* src/sim: canonical writing and reading, the hash, the PRNG and fixed
 * point, each against known values. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_fixed.h"
#include "gk_rng.h"
#include "gk_sim.h"
#include "logsim.h"

Test(state_writer, fields_are_written_little_endian_and_fixed_width) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  gk_write_u8(&b.w, "a", 0x01);
  gk_write_u16(&b.w, "b", 0x0203);
  gk_write_u32(&b.w, "c", 0x04050607);
  gk_write_u64(&b.w, "d", 0x08090a0b0c0d0e0full);
  gk_write_i16(&b.w, "e", -2);
  gk_write_bool(&b.w, "f", 7);
  gk_write_bytes(&b.w, "g", "xy", 2);
  size_t len;
  uint8_t *p = gk_buf_writer_take(&b, &len);
  const uint8_t expect[] = {0x01, 0x03, 0x02, 0x07, 0x06, 0x05, 0x04,
                            0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09,
                            0x08, 0xfe, 0xff, 0x01, 'x',  'y'};
  cr_assert_eq(len, sizeof expect);
  cr_assert_arr_eq(p, expect, sizeof expect);
  free(p);
  gk_buf_writer_close(&b);
}

Test(state_writer, large_writes_cross_the_stage_without_losing_bytes) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  uint8_t big[3000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7);
  for (uint32_t i = 0; i < 1000; i++) gk_write_u32(&b.w, "i", i);
  gk_write_bytes(&b.w, "big", big, sizeof big);
  gk_write_u8(&b.w, "tail", 0xab);
  size_t len;
  uint8_t *p = gk_buf_writer_take(&b, &len);
  cr_assert_eq(len, 4000 + sizeof big + 1);
  cr_assert_eq(p[4 * 999], (uint8_t)999);
  cr_assert_eq(p[4 * 999 + 1], 999 >> 8);
  cr_assert_arr_eq(p + 4000, big, sizeof big);
  cr_assert_eq(p[len - 1], 0xab);
  free(p);
  gk_buf_writer_close(&b);
}

Test(state_hash,
     the_hasher_equals_xxh3_over_the_written_bytes_in_any_chunking) {
  gk_hasher h;
  cr_assert_eq(gk_hasher_init(&h), 0);
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  for (uint32_t i = 0; i < 5000; i++) {
    gk_write_u32(&h.w, "i", i * 2654435761u);
    gk_write_u32(&b.w, "i", i * 2654435761u);
  }
  uint64_t streamed = gk_hasher_digest(&h);
  size_t len;
  uint8_t *p = gk_buf_writer_take(&b, &len);
  cr_assert_eq(streamed, gk_hash_bytes(p, len));
  gk_hasher_reset(&h);
  gk_write_u8(&h.w, "x", 1);
  cr_assert_eq(gk_hasher_digest(&h), gk_hash_bytes("\x01", 1));
  /* XXH3-64 of the empty input, seed 0: the published test vector. */
  cr_assert_eq(gk_hash_bytes("", 0), 0x2D06800538D394C2ull);
  free(p);
  gk_hasher_close(&h);
}

typedef struct seen {
  char text[512];
} seen;

static void record_field(gk_writer *w, gk_field_kind kind, const char *name,
                         uint64_t value, const uint8_t *bytes, size_t len) {
  seen *s = w->data;
  char buf[64];
  (void)bytes;
  switch (kind) {
  case GK_FIELD_BEGIN:
    snprintf(buf, sizeof buf, "%s[%lld]{", name, (long long)value);
    break;
  case GK_FIELD_END:
    snprintf(buf, sizeof buf, "}");
    break;
  case GK_FIELD_BYTES:
    snprintf(buf, sizeof buf, "%s:%zu bytes ", name, len);
    break;
  default:
    snprintf(buf, sizeof buf, "%s=%lld ", name, (long long)value);
  }
  strncat(s->text, buf, sizeof s->text - strlen(s->text) - 1);
}

Test(state_writer, a_field_writer_sees_names_and_sign_extended_values) {
  seen s = {{0}};
  gk_writer w = {.field = record_field, .data = &s};
  gk_write_begin(&w, "p", 1);
  gk_write_i8(&w, "a", -3);
  gk_write_i32(&w, "b", -70000);
  gk_write_u16(&w, "c", 65535);
  gk_write_bytes(&w, "d", "abc", 3);
  gk_write_end(&w);
  cr_assert_str_eq(s.text, "p[1]{a=-3 b=-70000 c=65535 d:3 bytes }");
  cr_assert_eq(w.total, 1 + 4 + 2 + 3);
}

/* A record with a gap, a BOOL, narrow and wide members, signed ones. */
typedef struct list_rec {
  int32_t a;
  uint16_t b;
  uint8_t c; /* BOOL in the spec */
  int8_t d;
  uint64_t e;
  int16_t f;
} list_rec;

static const gk_field_spec rec_spec[] = {
    {"a", GK_FIELD_I32, offsetof(list_rec, a)},
    {"b", GK_FIELD_U16, offsetof(list_rec, b)},
    {"c", GK_FIELD_BOOL, offsetof(list_rec, c)},
    {"d", GK_FIELD_I8, offsetof(list_rec, d)},
    {"e", GK_FIELD_U64, offsetof(list_rec, e)},
    {"f", GK_FIELD_I16, offsetof(list_rec, f)},
};

static void write_rec_by_hand(gk_writer *w, const list_rec *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    gk_write_begin(w, "r", i);
    gk_write_i32(w, "a", r[i].a);
    gk_write_u16(w, "b", r[i].b);
    gk_write_bool(w, "c", r[i].c);
    gk_write_i8(w, "d", r[i].d);
    gk_write_u64(w, "e", r[i].e);
    gk_write_i16(w, "f", r[i].f);
    gk_write_end(w);
  }
}

Test(state_writer,
     a_list_writes_the_bytes_and_fields_of_its_members_one_by_one) {
  static list_rec r[700]; /* 700 * 18 bytes: crosses every stage */
  for (size_t i = 0; i < 700; i++)
    r[i] = (list_rec){(int32_t)(i * 2654435761u), (uint16_t)(i * 31),
                      (uint8_t)(i % 3),           (int8_t)(-(int)i),
                      i * 0x9e3779b97f4a7c15ull,  (int16_t)(i * -7)};
  gk_buf_writer a, b;
  gk_buf_writer_init(&a);
  gk_buf_writer_init(&b);
  gk_write_u8(&a.w, "head", 1); /* start mid-stage */
  gk_write_u8(&b.w, "head", 1);
  write_rec_by_hand(&a.w, r, 700);
  gk_field_list l;
  cr_assert_eq(gk_field_list_init(&l, rec_spec, 6), 0);
  cr_assert_eq(l.width, 18);
  gk_write_list(&b.w, "r", &l, r, sizeof r[0], 700);
  size_t la, lb;
  uint8_t *pa = gk_buf_writer_take(&a, &la);
  uint8_t *pb = gk_buf_writer_take(&b, &lb);
  cr_assert_eq(la, 1 + 700 * 18);
  cr_assert_eq(lb, la);
  cr_assert_arr_eq(pa, pb, la);
  gk_hasher h;
  cr_assert_eq(gk_hasher_init(&h), 0);
  gk_write_u8(&h.w, "head", 1);
  gk_write_list(&h.w, "r", &l, r, sizeof r[0], 700);
  cr_assert_eq(gk_hasher_digest(&h), gk_hash_bytes(pa, la));
  gk_hasher_close(&h);
  free(pa);
  free(pb);
  gk_buf_writer_close(&a);
  gk_buf_writer_close(&b);

  seen sa = {{0}}, sb = {{0}};
  gk_writer wa = {.field = record_field, .data = &sa};
  gk_writer wb = {.field = record_field, .data = &sb};
  write_rec_by_hand(&wa, r + 5, 2);
  gk_write_list(&wb, "r", &l, r + 5, sizeof r[0], 2);
  cr_assert_str_eq(sa.text, sb.text);
  cr_assert_eq(wa.total, wb.total);
}

Test(state_writer, a_list_whose_records_have_no_gaps_is_written_as_one_block) {
  typedef struct pt {
    int32_t x, y;
  } pt;
  static const gk_field_spec spec[] = {{"x", GK_FIELD_I32, offsetof(pt, x)},
                                       {"y", GK_FIELD_I32, offsetof(pt, y)}};
  pt pts[1000];
  for (int i = 0; i < 1000; i++) pts[i] = (pt){i, -i};
  gk_field_list l;
  cr_assert_eq(gk_field_list_init(&l, spec, 2), 0);
  cr_assert_eq(l.nrun, 1, "x and y are one run");
  static const gk_field_spec bad[] = {{"x", GK_FIELD_BYTES, 0}};
  gk_field_list junk;
  cr_assert_eq(gk_field_list_init(&junk, bad, 1), GK_EINVAL);
  cr_assert_eq(gk_field_list_init(&junk, spec, 0), GK_EINVAL);
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  gk_write_list(&b.w, "p", &l, pts, sizeof pts[0], 1000);
  gk_write_list(&b.w, "p", &l, NULL, sizeof pts[0], 0);
  size_t len;
  uint8_t *p = gk_buf_writer_take(&b, &len);
  cr_assert_eq(len, 8000);
  cr_assert_eq(gk_load_le32(p + 8 * 999), 999);
  cr_assert_eq(gk_load_le32(p + 8 * 999 + 4), (uint32_t)-999);
  free(p);
  gk_buf_writer_close(&b);
}

Test(state_reader, reads_past_the_end_return_zero_and_report_truncation_once) {
  const uint8_t bytes[] = {1, 2, 3};
  gk_reader r;
  gk_reader_init(&r, bytes, sizeof bytes);
  cr_assert_eq(gk_read_u16(&r), 0x0201);
  cr_assert_eq(gk_read_u32(&r), 0);
  cr_assert_eq(r.err, GK_ETRUNC);
  cr_assert_eq(gk_read_u8(&r), 0, "no read succeeds after an error");
  cr_assert_eq(r.pos, 2);
  gk_reader_init(&r, "\x02", 1);
  cr_assert_eq(gk_read_bool(&r), 0);
  cr_assert_eq(r.err, GK_ERANGE);
  gk_reader_init(&r, "\xff\xff\xff\xff", 4);
  cr_assert_eq(gk_read_i32(&r), -1);
  uint8_t out[4] = {9, 9, 9, 9};
  cr_assert_eq(gk_read_bytes(&r, out, 4), GK_ETRUNC);
  cr_assert_eq(out[0], 0);
}

Test(state_round_trip,
     a_written_state_read_back_and_written_again_gives_the_same_bytes) {
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  logsim_cfg cfg = {.start = 5};
  cr_assert_eq(gk_loop_start(&loop, &logsim_sim, &cfg, 77, 3, NULL, 0), 0);
  gk_const_input c;
  uint8_t rec[6] = {1, 1, 2, 0, 3, 2};
  gk_const_input_init(&c, rec, 3, 2);
  gk_loop_frame(&loop, &c.base, gk_budget_steps(9), 0);
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  logsim_sim.write_state(gk_loop_state(&loop), &b.w);
  size_t len1, len2;
  uint8_t *one = gk_buf_writer_take(&b, &len1);
  gk_reader r;
  gk_reader_init(&r, one, len1);
  char err[GK_ERRMSG_MAX];
  void *copy = logsim_sim.read_state(&cfg, &r, err, sizeof err);
  cr_assert_not_null(copy, "%s", err);
  logsim_sim.write_state(copy, &b.w);
  uint8_t *two = gk_buf_writer_take(&b, &len2);
  cr_assert_eq(len1, len2);
  cr_assert_arr_eq(one, two, len1);
  /* A cut-short state is refused with a message, not half-read. */
  gk_reader_init(&r, one, len1 - 1);
  cr_assert_null(logsim_sim.read_state(&cfg, &r, err, sizeof err));
  cr_assert(strstr(err, "truncated") != NULL, "%s", err);
  logsim_sim.destroy(copy);
  free(one);
  free(two);
  gk_buf_writer_close(&b);
  gk_loop_close(&loop);
}

Test(sim_contract, gk_sim_check_rejects_incomplete_descriptors) {
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_sim_check(&logsim_sim, err, sizeof err), 0);
  gk_sim bad = logsim_sim;
  bad.step = NULL;
  cr_assert_eq(gk_sim_check(&bad, err, sizeof err), GK_EINVAL);
  bad = logsim_sim;
  bad.abi = 99;
  cr_assert_eq(gk_sim_check(&bad, err, sizeof err), GK_EVERSION);
  bad = logsim_sim;
  bad.input_size = GK_INPUT_SIZE_MAX + 1;
  cr_assert_eq(gk_sim_check(&bad, err, sizeof err), GK_EINVAL);
  cr_assert(strstr(err, "input_size") != NULL);
}

Test(errors, every_code_has_a_name_and_a_message) {
  cr_assert_str_eq(gk_strerror(0), "success");
  cr_assert_str_eq(gk_err_name(GK_EBUSY), "GK_EBUSY");
  cr_assert_str_eq(gk_strerror(-9999), "unknown error");
  for (int c = -1; c >= GK_EINPUT; c--)
    cr_assert_str_neq(gk_strerror(c), "unknown error", "code %d", c);
}

Test(rng, pcg32_matches_the_reference_sequence) {
  gk_rng r;
  gk_rng_seed(&r, 42u, 54u);
  const uint32_t expect[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                             0x83d2f293, 0xbfa4784b, 0xcbed606e};
  for (size_t i = 0; i < 6; i++)
    cr_assert_eq(gk_rng_next(&r), expect[i], "output %zu", i);
}

Test(rng, below_and_range_stay_in_bounds_and_cover_them) {
  gk_rng r;
  gk_rng_seed(&r, 1, 2);
  int hits[7] = {0};
  for (int i = 0; i < 7000; i++) {
    uint32_t v = gk_rng_below(&r, 7);
    cr_assert_lt(v, 7);
    hits[v]++;
    int32_t x = gk_rng_range(&r, -3, 3);
    cr_assert(x >= -3 && x <= 3);
  }
  for (int i = 0; i < 7; i++) cr_assert_gt(hits[i], 800);
  cr_assert_eq(gk_rng_below(&r, 0), 0);
  cr_assert_eq(gk_rng_range(&r, 5, 5), 5);
}

Test(rng, the_state_round_trips_and_an_even_increment_is_refused) {
  gk_rng a, b;
  gk_rng_seed(&a, 9, 10);
  gk_rng_next(&a);
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  gk_rng_write(&a, &w.w);
  size_t len;
  uint8_t *p = gk_buf_writer_take(&w, &len);
  cr_assert_eq(len, 16);
  gk_reader r;
  gk_reader_init(&r, p, len);
  gk_rng_read(&b, &r);
  cr_assert_eq(r.err, 0);
  cr_assert_eq(gk_rng_next(&a), gk_rng_next(&b));
  p[8] &= 0xfe;
  gk_reader_init(&r, p, len);
  gk_rng_read(&b, &r);
  cr_assert_eq(r.err, GK_ERANGE);
  uint64_t x = 0;
  cr_assert_eq(gk_splitmix64(&x), 0xe220a8397b1dcdafull);
  free(p);
}

Test(fixed, multiply_and_divide_round_as_documented_and_saturate) {
  cr_assert_eq(gk_fx_mul(GK_FX_ONE * 3, GK_FX_HALF), GK_FX_ONE * 3 / 2);
  cr_assert_eq(gk_fx_mul(-GK_FX_ONE * 3, GK_FX_HALF), -GK_FX_ONE * 3 / 2);
  cr_assert_eq(gk_fx_mul(1, GK_FX_HALF), 1); /* 0.5 LSB rounds away */
  cr_assert_eq(gk_fx_mul(-1, GK_FX_HALF), -1);
  cr_assert_eq(gk_fx_mul(GK_FX_ONE * 30000, GK_FX_ONE * 30000), GK_FX_MAX);
  cr_assert_eq(gk_fx_mul(-GK_FX_ONE * 30000, GK_FX_ONE * 30000), GK_FX_MIN);
  cr_assert_eq(gk_fx_div(GK_FX_ONE, GK_FX_ONE * 3), 21845);
  cr_assert_eq(gk_fx_div(-GK_FX_ONE, GK_FX_ONE * 3), -21845);
  cr_assert_eq(gk_fx_div(GK_FX_ONE * 7, 0), GK_FX_MAX);
  cr_assert_eq(gk_fx_div(-GK_FX_ONE * 7, 0), GK_FX_MIN);
  cr_assert_eq(gk_fx_div(GK_FX_ONE * 30000, 1), GK_FX_MAX);
  cr_assert_eq(gk_fx_to_int(-GK_FX_HALF), -1);
  cr_assert_eq(gk_fx_to_int(GK_FX_ONE * 5 + 7), 5);
  cr_assert_eq(gk_fx_from_int(-2), -2 * GK_FX_ONE);
}

Test(fixed, integer_square_roots_are_exact_floors) {
  cr_assert_eq(gk_isqrt32(0), 0);
  cr_assert_eq(gk_isqrt32(15), 3);
  cr_assert_eq(gk_isqrt32(16), 4);
  cr_assert_eq(gk_isqrt32(UINT32_MAX), 65535);
  cr_assert_eq(gk_isqrt64(UINT64_MAX), 4294967295u);
  cr_assert_eq(gk_isqrt64(1000000000000ull), 1000000);
  for (uint32_t x = 0; x < 100000; x += 7) {
    uint32_t s = gk_isqrt32(x);
    cr_assert(s * s <= x && (s + 1) * (s + 1) > x, "x=%u", x);
  }
  cr_assert_eq(gk_fx_sqrt(GK_FX_ONE * 4), GK_FX_ONE * 2);
  cr_assert_eq(gk_fx_sqrt(GK_FX_ONE * 2), 92681); /* 1.41421 */
  cr_assert_eq(gk_fx_sqrt(-5), 0);
  cr_assert_eq(gk_fx_hypot(GK_FX_ONE * 3, -GK_FX_ONE * 4), GK_FX_ONE * 5);
  cr_assert_eq(gk_fx_hypot(GK_FX_MIN, GK_FX_MIN), GK_FX_MAX);
}

/* The digit-by-digit square root gk_isqrt64 used before the seeded
 * Newton steps: the reference the fast one must match exactly. */
static uint32_t isqrt_digits(uint64_t x) {
  uint64_t res = 0, bit = 1ull << 62;
  while (bit > x) bit >>= 2;
  while (bit != 0) {
    if (x >= res + bit) {
      x -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  return (uint32_t)res;
}

Test(fixed, the_seeded_square_root_equals_the_digit_by_digit_one) {
  for (uint64_t x = 0; x < (1u << 20); x++)
    cr_assert_eq(gk_isqrt64(x), isqrt_digits(x), "x=%llu",
                 (unsigned long long)x);
  /* around every square k^2 for k spread over 1..2^32-1, and its ends */
  for (uint64_t k = 1; k <= 0xFFFFFFFFull; k += 1 + k / 4096) {
    uint64_t sq = k * k;
    uint64_t xs[] = {sq - 1, sq, sq + 1, sq + 2 * k, sq + 2 * k - 1};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
      if (xs[i] < sq - 1) continue; /* wrapped past 2^64 */
      cr_assert_eq(gk_isqrt64(xs[i]), isqrt_digits(xs[i]), "x=%llu",
                   (unsigned long long)xs[i]);
    }
  }
  for (unsigned b = 0; b < 64; b++) {
    uint64_t p = 1ull << b;
    cr_assert_eq(gk_isqrt64(p), isqrt_digits(p));
    cr_assert_eq(gk_isqrt64(p - 1), isqrt_digits(p - 1));
    cr_assert_eq(gk_isqrt64(p + 1), isqrt_digits(p + 1));
  }
  cr_assert_eq(gk_isqrt64(UINT64_MAX), 0xFFFFFFFFu);
  uint64_t seed = 7;
  for (int i = 0; i < 1000000; i++) {
    uint64_t x = gk_splitmix64(&seed) >> (i % 64);
    cr_assert_eq(gk_isqrt64(x), isqrt_digits(x), "x=%llu",
                 (unsigned long long)x);
  }
}

Test(fixed,
     sin_and_cos_hit_the_quarter_turns_exactly_and_stay_close_elsewhere) {
  cr_assert_eq(gk_fx_sin(0), 0);
  cr_assert_eq(gk_fx_sin(16384), GK_FX_ONE);
  cr_assert_eq(gk_fx_sin(32768), 0);
  cr_assert_eq(gk_fx_sin(49152), -GK_FX_ONE);
  cr_assert_eq(gk_fx_cos(0), GK_FX_ONE);
  cr_assert_eq(gk_fx_cos(32768), -GK_FX_ONE);
  /* sin(30 degrees) = 0.5: binary angle 65536/12, off-grid. */
  cr_assert(abs(gk_fx_sin(5461) - GK_FX_HALF) <= 3, "%d", gk_fx_sin(5461));
  cr_assert(abs(gk_fx_sin(8192) - 46341) <= 2, "%d", gk_fx_sin(8192));
  /* sin^2 + cos^2 stays within a few LSB of one all the way round. */
  for (uint32_t a = 0; a < 65536; a += 97) {
    int64_t s = gk_fx_sin((uint16_t)a), c = gk_fx_cos((uint16_t)a);
    int64_t one = (s * s + c * c) >> 16;
    cr_assert(one >= GK_FX_ONE - 8 && one <= GK_FX_ONE + 8, "a=%u", a);
  }
}

Test(fixed, atan2_returns_binary_angles_in_the_right_quadrant) {
  cr_assert_eq(gk_fx_atan2(0, 0), 0);
  cr_assert_eq(gk_fx_atan2(0, GK_FX_ONE), 0);
  cr_assert_eq(gk_fx_atan2(GK_FX_ONE, 0), 16384);
  cr_assert_eq(gk_fx_atan2(0, -GK_FX_ONE), 32768);
  cr_assert_eq(gk_fx_atan2(-GK_FX_ONE, 0), 49152);
  cr_assert_eq(gk_fx_atan2(GK_FX_ONE, GK_FX_ONE), 8192);
  cr_assert_eq(gk_fx_atan2(-GK_FX_ONE, -GK_FX_ONE), 40960);
  /* Round trip: the angle of (cos a, sin a) is a, within one unit. */
  for (uint32_t a = 0; a < 65536; a += 131) {
    uint16_t back = gk_fx_atan2(gk_fx_sin((uint16_t)a), gk_fx_cos((uint16_t)a));
    int d = (int16_t)(uint16_t)(back - a);
    cr_assert(d >= -2 && d <= 2, "a=%u back=%u", a, back);
  }
}
