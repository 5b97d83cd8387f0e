/* test_wire.c: the wire codec. Every message round-trips, every proper
 * prefix of every message is refused as truncated, every field check
 * rejects its bad values, and random mutations of valid datagrams either
 * fail to decode or decode to something that re-encodes to the very same
 * bytes (so nothing is accepted that the codec could not have produced). */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_rng.h"
#include "wire_samples.h"

Test(wire_codec, every_message_type_round_trips_to_the_same_bytes) {
  int seen[256] = {0};
  for (int i = 0;; i++) {
    gk_wire_msg m, d;
    if (!sample_msg(i, &m)) break;
    uint8_t a[GK_WIRE_MAX], b[GK_WIRE_MAX];
    size_t la = encode_ok(&m, a);
    cr_assert_eq(a[0], GK_WIRE_VERSION);
    cr_assert_eq(a[1], (uint8_t)m.type);
    cr_assert_eq(gk_wire_decode(a, la, &d), 0, "decode %s",
                 gk_wire_type_name((int)m.type));
    cr_assert_eq(d.type, m.type);
    size_t lb = encode_ok(&d, b);
    cr_assert_eq(la, lb);
    cr_assert_arr_eq(a, b, la);
    seen[m.type] = 1;
  }
#define GK__SEEN(name, id, rel) cr_assert(seen[id], "no sample for " #name);
  GK_WIRE_MSG_MAP(GK__SEEN)
#undef GK__SEEN
}

Test(wire_codec, decoded_fields_match_what_was_encoded) {
  gk_wire_msg m, d;
  uint8_t buf[GK_WIRE_MAX];
  sample_msg(1, &m);
  size_t len = encode_ok(&m, buf);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.confirmed.count, 8);
  cr_assert_eq(d.u.confirmed.first, 12);
  cr_assert_eq(d.u.confirmed.ack, 17);
  gk_step_input s;
  gk_wire_step_get(&d.u.confirmed, 7, &s);
  cr_assert_eq(s.step, 19);
  cr_assert_eq(s.active_mask, 5);
  cr_assert_eq(s.flags, GK_STEP_MATCH_END);
  cr_assert_eq(s.players, 3);
  cr_assert_arr_eq(s.inputs, records + 7, 12);

  sample_msg(13, &m);
  len = encode_ok(&m, buf);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.match_start.seed, 0xfeedfacecafebeefull);
  cr_assert_eq(d.u.match_start.slot, 3);
  cr_assert_eq(d.u.match_start.step_seconds.den, 60);
  cr_assert_str_eq(d.u.match_start.genre, "push-puzzle");
  cr_assert_str_eq(d.u.match_start.config, "{}");

  sample_msg(0, &m);
  len = encode_ok(&m, buf);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.input.slot, 3);
  cr_assert_arr_eq(d.u.input.records, records, 20);
}

Test(wire_codec, every_proper_prefix_of_every_message_is_truncated) {
  for (int i = 0;; i++) {
    gk_wire_msg m, d;
    if (!sample_msg(i, &m)) break;
    uint8_t buf[GK_WIRE_MAX];
    size_t len = encode_ok(&m, buf);
    for (size_t n = 0; n < len; n++)
      cr_assert_eq(gk_wire_decode(buf, n, &d), GK_ETRUNC, "%s cut at %zu",
                   gk_wire_type_name((int)m.type), n);
  }
}

Test(wire_codec, trailing_bytes_are_refused) {
  for (int i = 0;; i++) {
    gk_wire_msg m, d;
    if (!sample_msg(i, &m)) break;
    uint8_t buf[GK_WIRE_MAX + 1];
    size_t len = encode_ok(&m, buf);
    buf[len] = 0;
    cr_assert_eq(gk_wire_decode(buf, len + 1, &d), GK_EPROTO, "%s",
                 gk_wire_type_name((int)m.type));
  }
}

Test(wire_codec, oversized_wrong_version_and_unknown_types_are_refused) {
  static uint8_t big[GK_WIRE_MAX + 1];
  gk_wire_msg d;
  big[0] = GK_WIRE_VERSION;
  big[1] = GK_MSG_START_MATCH;
  cr_assert_eq(gk_wire_decode(big, sizeof big, &d), GK_ETOOBIG);
  uint8_t v[2] = {GK_WIRE_VERSION + 1, GK_MSG_START_MATCH};
  cr_assert_eq(gk_wire_decode(v, 2, &d), GK_EVERSION);
  uint8_t t[2] = {GK_WIRE_VERSION, 0};
  int unknown = 0;
  for (int type = 0; type < 256; type++) {
    t[1] = (uint8_t)type;
    if (strcmp(gk_wire_type_name(type), "UNKNOWN") == 0) {
      cr_assert_eq(gk_wire_decode(t, 2, &d), GK_EPROTO, "type %d", type);
      unknown++;
    }
  }
  cr_assert_gt(unknown, 200);
  cr_assert_eq(gk_wire_decode(NULL, 0, &d), GK_ETRUNC);
  cr_assert_eq(gk_wire_decode(NULL, 3, &d), GK_EINVAL);
}

/* Encodes sample i, patches bytes at `off`, and expects `want`. */
static void expect_patched(int i, size_t off, const uint8_t *patch, size_t n,
                           int want) {
  gk_wire_msg m, d;
  cr_assert(sample_msg(i, &m));
  uint8_t buf[GK_WIRE_MAX];
  size_t len = encode_ok(&m, buf);
  cr_assert_leq(off + n, len);
  memcpy(buf + off, patch, n);
  int rc = gk_wire_decode(buf, len, &d);
  cr_assert_eq(rc, want, "%s patched at %zu: got %s, want %s",
               gk_wire_type_name((int)m.type), off, gk_err_name(rc),
               gk_err_name(want));
}

static void expect_u8(int i, size_t off, uint8_t v, int want) {
  expect_patched(i, off, &v, 1, want);
}

static void expect_u64(int i, size_t off, uint64_t v, int want) {
  uint8_t b[8];
  for (int k = 0; k < 8; k++) b[k] = (uint8_t)(v >> (8 * k));
  expect_patched(i, off, b, 8, want);
}

static void expect_u32(int i, size_t off, uint32_t v, int want) {
  uint8_t b[4];
  for (int k = 0; k < 4; k++) b[k] = (uint8_t)(v >> (8 * k));
  expect_patched(i, off, b, 4, want);
}

Test(wire_codec, input_rejects_bad_slot_size_count_and_steps) {
  /* INPUT: 2 slot | 3 input_size | 4 ack | 12 first | 20 count | 21.. */
  expect_u8(0, 2, GK_PLAYERS_MAX, GK_ERANGE);
  expect_u8(0, 3, 0, GK_ERANGE);
  expect_u8(0, 3, GK_INPUT_SIZE_MAX + 1, GK_ERANGE);
  expect_u8(0, 3, 5, GK_ETRUNC); /* 5 records of 5 bytes do not fit */
  expect_u8(0, 20, 6, GK_ETRUNC);
  expect_u8(0, 20, GK_WIRE_STEPS_MAX + 1, GK_ETOOBIG);
  expect_u64(0, 4, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  expect_u64(0, 12, GK_WIRE_STEP_LIMIT - 2, GK_ERANGE);
  expect_u64(0, 12, UINT64_MAX, GK_ERANGE);
}

Test(wire_codec, input_hash_reports_reject_bad_counts_and_steps) {
  /* INPUT with hashes: 2 slot | 3 input_size | 4 ack | 12 first |
   * 20 count (2) | 21 records (8) | 29 hash_count | 30 hash_first | 38.. */
  expect_u8(16, 29, 0, GK_EPROTO); /* no hashes: 32 bytes left over */
  expect_u8(16, 29, GK_WIRE_STEPS_MAX + 1, GK_ETOOBIG);
  expect_u8(16, 29, 4, GK_ETRUNC);
  expect_u8(16, 29, 2, GK_EPROTO); /* 8 bytes left over */
  expect_u64(16, 30, GK_WIRE_STEP_LIMIT - 2, GK_ERANGE);
  expect_u64(16, 30, UINT64_MAX, GK_ERANGE);
  gk_wire_msg m, d;
  cr_assert(sample_msg(16, &m));
  uint8_t buf[GK_WIRE_MAX];
  size_t len = encode_ok(&m, buf);
  cr_assert_eq(len, 38 + 3 * 8);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.input.hash_count, 3);
  cr_assert_eq(d.u.input.hash_first, 47);
  for (uint32_t i = 0; i < 3; i++)
    cr_assert_eq(gk_wire_input_hash(&d.u.input, i),
                 gk_wire_input_hash(&m.u.input, i));
  /* without hashes only hash_count 0 follows the records */
  cr_assert(sample_msg(0, &m));
  len = encode_ok(&m, buf);
  cr_assert_eq(len, 21 + 5 * 4 + 1);
  cr_assert_eq(buf[len - 1], 0);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.input.hash_count, 0);
  cr_assert_null(d.u.input.hashes);
  /* encode refuses what decode would */
  m.u.input.hash_count = 1;
  m.u.input.hash_first = GK_WIRE_STEP_LIMIT;
  m.u.input.hashes = hashes;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
  m.u.input.hash_first = 0;
  m.u.input.hashes = NULL;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EINVAL);
  m.u.input.hash_count = GK_WIRE_STEPS_MAX + 1;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ETOOBIG);
}

Test(wire_codec, input_hash_fit_keeps_the_datagram_within_the_limit) {
  cr_assert_eq(gk_wire_input_hash_fit(4, 0), GK_WIRE_STEPS_MAX);
  cr_assert_eq(gk_wire_input_hash_fit(0, 0), 0);
  cr_assert_eq(gk_wire_input_hash_fit(4, GK_WIRE_STEPS_MAX + 1), 0);
  for (uint32_t isz = 1; isz <= GK_INPUT_SIZE_MAX; isz++) {
    uint32_t n = gk_wire_input_fit(isz);
    uint32_t h = gk_wire_input_hash_fit(isz, n);
    static uint8_t rec[GK_WIRE_MAX], hs[GK_WIRE_STEPS_MAX * 8];
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_INPUT;
    m.u.input = (gk_wire_input){.input_size = (uint8_t)isz,
                                .count = (uint8_t)n,
                                .records = rec,
                                .hash_count = (uint8_t)h,
                                .hashes = hs};
    uint8_t buf[GK_WIRE_MAX];
    size_t len;
    if (h > 0) cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
    m.u.input.hash_count = (uint8_t)(h + 1);
    if (h < GK_WIRE_STEPS_MAX)
      cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ETOOBIG,
                   "input_size %u", isz);
  }
}

Test(wire_codec, confirmed_rejects_bad_shape_masks_and_flags) {
  /* CONFIRMED: 2 players | 3 input_size | 4 ack | 12 hash_ack | 20 first |
   * 28 count | 29 mask of step 0 | 33 flags of step 0 */
  expect_u8(1, 2, 0, GK_ERANGE);
  expect_u8(1, 2, GK_PLAYERS_MAX + 1, GK_ERANGE);
  expect_u8(1, 3, 0, GK_ERANGE);
  expect_u8(1, 28, 9, GK_ETRUNC);
  expect_u8(1, 28, 200, GK_ETOOBIG);
  expect_u32(1, 29, 0x8, GK_EPROTO); /* player 3 of 3 */
  expect_u32(1, 33, 0x2, GK_EPROTO); /* unknown flag */
  expect_u64(1, 20, GK_WIRE_STEP_LIMIT - 1, GK_ERANGE);
  expect_u64(1, 12, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  expect_u64(1, 4, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  /* 16 players of 32 bytes: one step is 520 bytes, two fit. */
  cr_assert_eq(gk_wire_confirmed_fit(16, 32), 2);
  cr_assert_eq(gk_wire_confirmed_fit(0, 4), 0);
  cr_assert_eq(gk_wire_input_fit(33), 0);
}

Test(wire_codec, notices_reject_out_of_range_values) {
  /* HASH: 2 first | 10 count */
  expect_u8(2, 10, 0, GK_ERANGE);
  expect_u8(2, 10, GK_WIRE_STEPS_MAX + 1, GK_ERANGE);
  expect_u8(2, 10, 4, GK_ETRUNC);
  expect_u64(2, 2, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  /* STALL: 2 step | 10 awaited */
  expect_u32(3, 10, 0, GK_ERANGE);
  expect_u32(3, 10, 1u << GK_PLAYERS_MAX, GK_ERANGE);
  expect_u64(3, 2, UINT64_MAX, GK_ERANGE);
  /* DESYNC: 2 step | 10 player */
  expect_u8(4, 10, GK_PLAYERS_MAX, GK_ERANGE);
  /* MATCH_END: 2 step | 10 reason */
  expect_u8(5, 10, 0, GK_ERANGE);
  expect_u8(5, 10, GK_WIRE_END_REASON_MAX + 1, GK_ERANGE);
  /* REMOVE_PLAYER: 2 slot | 3 step */
  expect_u8(6, 2, GK_PLAYERS_MAX, GK_ERANGE);
  expect_u64(6, 3, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  expect_u64(6, 3, 12, 0);
  /* END_MATCH: 2 reason */
  expect_u8(7, 2, 0, GK_ERANGE);
  /* JOINED: 2 slot | 3 players */
  expect_u8(11, 2, GK_PLAYERS_MAX, GK_ERANGE);
  expect_u8(11, 3, 0, GK_ERANGE);
  /* ERROR: 2 code */
  expect_patched(15, 2, (const uint8_t[]){1, 0}, 2, GK_ERANGE);
}

Test(wire_codec, room_messages_reject_bad_strings_and_codes) {
  /* CREATE_ROOM: 2 max_players | 3 delay | 4 genre len | 5 genre */
  expect_u8(8, 2, 0, GK_ERANGE);
  expect_u8(8, 2, GK_PLAYERS_MAX + 1, GK_ERANGE);
  expect_u8(8, 4, 0, GK_EPROTO); /* empty genre */
  expect_u8(8, 4, GK_WIRE_GENRE_MAX + 1, GK_ETOOBIG);
  expect_u8(8, 5, 'S', GK_EPROTO); /* upper case */
  expect_u8(8, 5, 0, GK_EPROTO);   /* NUL inside */
  size_t cfg_len_at = 5 + strlen("survivors");
  expect_patched(8, cfg_len_at, (const uint8_t[]){0x01, 0x03}, 2,
                 GK_ETOOBIG);                    /* 769 bytes */
  expect_u8(8, cfg_len_at + 2, 0x01, GK_EPROTO); /* control byte */
  /* ROOM_CREATED / JOIN_ROOM: 2 code[16] (| 18 slot) */
  expect_u8(9, 2, 'a', GK_EPROTO);
  expect_u8(9, 17, '1', GK_EPROTO);
  expect_u8(9, 18, GK_PLAYERS_MAX, GK_ERANGE);
  expect_u8(10, 5, '0', GK_EPROTO);
  expect_u8(10, 5, 0, GK_EPROTO);
  /* ERROR text with a control byte: 2 code | 4 len | 5 text */
  expect_u8(15, 6, '\n', GK_EPROTO);
  expect_u8(15, 4, GK_WIRE_TEXT_MAX + 1, GK_ETOOBIG);
}

Test(wire_codec, match_start_rejects_inconsistent_parameters) {
  /* 2 seed | 10 players | 11 slot | 12 mask | 16 first | 24 delay |
   * 25 lead | 26 num | 30 den | 34 genre */
  expect_u8(13, 10, 0, GK_ERANGE);
  expect_u8(13, 10, GK_PLAYERS_MAX + 1, GK_ERANGE);
  expect_u8(13, 11, 4, GK_ERANGE);
  expect_u32(13, 12, 0, GK_EPROTO);
  expect_u32(13, 12, 0x1f, GK_EPROTO);
  expect_u64(13, 16, GK_WIRE_STEP_LIMIT, GK_ERANGE);
  expect_u32(13, 26, 0, GK_ERANGE);
  expect_u32(13, 30, 0, GK_ERANGE);
  expect_u8(13, 35, '!', GK_EPROTO);
}

Test(wire_codec, encode_refuses_what_decode_would_refuse) {
  gk_wire_msg m;
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 123;
  sample_msg(0, &m);
  m.u.input.slot = GK_PLAYERS_MAX;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
  cr_assert_eq(len, 0);
  sample_msg(8, &m);
  strcpy(m.u.create_room.genre, "Bad Name");
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);
  sample_msg(9, &m);
  strcpy(m.u.room.code, "short");
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);
  sample_msg(13, &m);
  m.u.match_start.slot = 9;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
  sample_msg(1, &m);
  cr_assert_eq(gk_wire_encode(&m, buf, 20, &len), GK_ETOOBIG);
  m.type = (gk_wire_type)99;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);
  sample_msg(2, &m);
  m.u.hash.count = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
  /* The largest CONFIRMED that fits is within GK_WIRE_MAX. */
  static uint8_t big[GK_WIRE_MAX];
  memset(big, 0, sizeof big);
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed = (gk_wire_confirmed){
      .players = 16, .input_size = 32, .count = 2, .steps = big};
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  cr_assert_leq(len, GK_WIRE_MAX);
  m.u.confirmed.count = 3;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ETOOBIG);
}

Test(wire_codec, room_codes_are_sixteen_base32_characters) {
  cr_assert(gk_wire_code_valid("ABCDEFGHIJKLMNOP"));
  cr_assert(gk_wire_code_valid("2345672345672345"));
  cr_assert_not(gk_wire_code_valid("ABCDEFGHIJKLMNO"));
  cr_assert_not(gk_wire_code_valid("ABCDEFGHIJKLMNOPQ"));
  cr_assert_not(gk_wire_code_valid("ABCDEFGHIJKLMNO1"));
  cr_assert_not(gk_wire_code_valid(NULL));
}

Test(wire_codec, random_mutations_decode_only_to_canonical_messages) {
  gk_rng rng;
  gk_rng_seed(&rng, 20261130, 6);
  uint64_t accepted = 0, refused = 0;
  for (int round = 0; round < 20000; round++) {
    gk_wire_msg m, d, d2;
    sample_msg((int)gk_rng_below(&rng, 16), &m);
    uint8_t buf[GK_WIRE_MAX], out[GK_WIRE_MAX];
    size_t len = encode_ok(&m, buf);
    uint32_t flips = 1 + gk_rng_below(&rng, 3);
    for (uint32_t f = 0; f < flips; f++)
      buf[gk_rng_below(&rng, (uint32_t)len)] = (uint8_t)gk_rng_next(&rng);
    size_t cut = len - gk_rng_below(&rng, 2);
    if (gk_wire_decode(buf, cut, &d) != 0) {
      refused++;
      continue;
    }
    accepted++;
    size_t olen;
    cr_assert_eq(gk_wire_encode(&d, out, sizeof out, &olen), 0);
    cr_assert_eq(olen, cut);
    cr_assert_arr_eq(out, buf, cut);
    cr_assert_eq(gk_wire_decode(out, olen, &d2), 0);
  }
  cr_assert_gt(accepted, 1000);
  cr_assert_gt(refused, 1000);
}

#include <dirent.h>
#include <stdio.h>

/* The fuzz seeds are hand-written byte layouts: each must be what the
 * codec decodes (bad-* seeds excepted), which checks the byte diagrams in
 * gk_net_wire.h against the code. */
Test(wire_codec, every_fuzz_seed_decodes_as_documented) {
  const char *dir = GK_SOURCE_ROOT "/fuzzing/corpus/net_wire";
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "%s", dir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    uint8_t buf[GK_WIRE_MAX + 1];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gk_wire_msg m;
    int rc = gk_wire_decode(buf, len, &m);
    if (strncmp(e->d_name, "bad-", 4) == 0)
      cr_assert_neq(rc, 0, "%s decoded", e->d_name);
    else
      cr_assert_eq(rc, 0, "%s: %s", e->d_name, gk_err_name(rc));
    n++;
  }
  closedir(d);
  cr_assert_geq(n, 16);
}

Test(wire_codec,
     step_ranges_ending_at_the_last_wire_step_pass_and_one_more_is_refused) {
  const uint64_t last = GK_WIRE_STEP_LIMIT - 1; /* the largest step number */
  for (uint32_t count = 1; count <= 3; count++) {
    gk_wire_msg m, d;
    /* HASH for steps last-count+1 .. last. */
    sample_msg(2, &m);
    m.u.hash.count = (uint8_t)count;
    m.u.hash.first = last - count + 1;
    cr_assert_eq(round_trip(&m, &d), 0, "HASH of %u ending at the limit",
                 count);
    cr_assert_eq(d.u.hash.first + d.u.hash.count - 1, last);
    /* INPUT for the same steps, acknowledging up to the last step. */
    sample_msg(0, &m);
    m.u.input.count = (uint8_t)count;
    m.u.input.first = last - count + 1;
    m.u.input.ack = last;
    cr_assert_eq(round_trip(&m, &d), 0, "INPUT of %u ending at the limit",
                 count);
    cr_assert_eq(d.u.input.first + d.u.input.count - 1, last);
    cr_assert_eq(d.u.input.ack, last);
    /* One step further: refused by encode, and by decode of those bytes. */
    sample_msg(2, &m);
    m.u.hash.count = (uint8_t)count;
    m.u.hash.first = last - count + 2;
    cr_assert_eq(round_trip(&m, &d), GK_ERANGE);
    sample_msg(0, &m);
    m.u.input.count = (uint8_t)count;
    m.u.input.first = last - count + 2;
    cr_assert_eq(round_trip(&m, &d), GK_ERANGE);
  }
  /* The same in bytes: HASH first at 2, count 3; INPUT first at 12,
   * count 5 (the samples). */
  expect_u64(2, 2, GK_WIRE_STEP_LIMIT - 3, 0);
  expect_u64(2, 2, GK_WIRE_STEP_LIMIT - 2, GK_ERANGE);
  expect_u64(0, 12, GK_WIRE_STEP_LIMIT - 5, 0);
  expect_u64(0, 12, GK_WIRE_STEP_LIMIT - 4, GK_ERANGE);
  expect_u64(0, 4, GK_WIRE_STEP_LIMIT - 1, 0); /* ack */
  expect_u64(0, 4, GK_WIRE_STEP_LIMIT, GK_ERANGE);
}

static int is_control(int c) {
  return c < 0x20 || c == 0x7f;
}

Test(wire_codec, control_bytes_in_any_text_are_refused_as_protocol_errors) {
  /* ERROR: 2 code | 4 len | 5 text ("no room with that code") */
  for (int c = 0; c < 256; c++) {
    gk_wire_msg m, d;
    int want = (is_control(c) || c >= 0x80) ? GK_EPROTO : 0;
    expect_u8(15, 6, (uint8_t)c, want);
    if (c == 0) continue; /* a NUL ends the C string: nothing to encode */
    sample_msg(15, &m);
    m.u.error.text[1] = (char)c;
    cr_assert_eq(round_trip(&m, &d), want, "ERROR text with 0x%02x", c);
  }
  /* CREATE_ROOM and MATCH_START config (JSON text): whitespace and UTF-8
   * bytes are text, every other control byte, 0x7f included, is not. */
  size_t cfg_at = 5 + strlen("survivors") + 2;
  size_t ms_cfg_at = 35 + strlen("push-puzzle") + 2;
  for (int c = 0; c < 256; c++) {
    int ws = c == '\t' || c == '\n' || c == '\r';
    int want = is_control(c) && !ws ? GK_EPROTO : 0;
    expect_u8(8, cfg_at + 1, (uint8_t)c, want);
    expect_u8(13, ms_cfg_at + 1, (uint8_t)c, want);
    if (c == 0) continue;
    gk_wire_msg m, d;
    sample_msg(8, &m);
    m.u.create_room.config[1] = (char)c;
    cr_assert_eq(round_trip(&m, &d), want, "CREATE_ROOM config 0x%02x", c);
    sample_msg(13, &m);
    m.u.match_start.config[1] = (char)c;
    cr_assert_eq(round_trip(&m, &d), want, "MATCH_START config 0x%02x", c);
  }
  /* Genre names take [a-z0-9_-] only. */
  expect_u8(8, 6, 0x7f, GK_EPROTO);
  expect_u8(8, 6, '\t', GK_EPROTO);
  expect_u8(13, 36, 0x7f, GK_EPROTO);
}

Test(wire_codec,
     create_and_join_carry_a_role_and_a_token_and_refuse_any_other_length) {
  gk_wire_msg m, d;
  uint8_t buf[GK_WIRE_MAX];
  sample_msg(8, &m);
  m.u.create_room.token_len = GK_WIRE_TOKEN_BYTES;
  for (int i = 0; i < GK_WIRE_TOKEN_BYTES; i++)
    m.u.create_room.token[i] = (uint8_t)(i * 7);
  cr_assert_eq(round_trip(&m, &d), 0);
  cr_assert_eq(d.u.create_room.token_len, GK_WIRE_TOKEN_BYTES);
  cr_assert_arr_eq(d.u.create_room.token, m.u.create_room.token,
                   GK_WIRE_TOKEN_BYTES);
  m.u.create_room.token_len = 20;
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);

  sample_msg(10, &m);
  m.u.room.role = GK_WIRE_ROLE_SPECTATOR;
  m.u.room.token_len = GK_WIRE_TOKEN_BYTES;
  memset(m.u.room.token, 0xa5, GK_WIRE_TOKEN_BYTES);
  len = encode_ok(&m, buf);
  cr_assert_eq(len,
               GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 2u + GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.room.role, GK_WIRE_ROLE_SPECTATOR);
  cr_assert_eq(d.u.room.token_len, GK_WIRE_TOKEN_BYTES);
  cr_assert_arr_eq(d.u.room.token, m.u.room.token, GK_WIRE_TOKEN_BYTES);
  /* a token cut short, a token length that is not 0 or 148, a role that
   * does not exist */
  cr_assert_eq(gk_wire_decode(buf, len - 1, &d), GK_ETRUNC);
  buf[GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 1] = 147;
  cr_assert_eq(gk_wire_decode(buf, len, &d), GK_EPROTO);
  cr_assert_eq(d.u.room.token_len, 0);
  buf[GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 1] = GK_WIRE_TOKEN_BYTES;
  buf[GK_WIRE_HEADER + GK_WIRE_CODE_LEN] = 2;
  cr_assert_eq(gk_wire_decode(buf, len, &d), GK_ERANGE);
  /* without a token: code, role, a zero length */
  sample_msg(10, &m);
  cr_assert_eq(encode_ok(&m, buf), GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 2u);
}

Test(wire_codec,
     rejoin_and_spectate_carry_an_optional_token_after_their_fields) {
  gk_wire_msg m, d;
  uint8_t buf[GK_WIRE_MAX];
  /* REJOIN_ROOM: code, slot, secret, then token_len and the token */
  sample_msg(19, &m);
  size_t len = encode_ok(&m, buf);
  size_t at = GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 1u + GK_WIRE_SECRET_LEN;
  cr_assert_eq(len, at + 1u + GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(buf[at], GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_eq(d.u.rejoin.token_len, GK_WIRE_TOKEN_BYTES);
  cr_assert_arr_eq(d.u.rejoin.token, m.u.rejoin.token, GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(gk_wire_decode(buf, len - 1, &d), GK_ETRUNC);
  buf[at] = 20; /* neither 0 nor 148 */
  cr_assert_eq(gk_wire_decode(buf, len, &d), GK_EPROTO);
  m.u.rejoin.token_len = 0; /* open mode: a zero length, nothing after */
  cr_assert_eq(encode_ok(&m, buf), at + 1u);
  m.u.rejoin.token_len = 3;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);
  /* SPECTATE: code, then token_len and the token */
  sample_msg(20, &m);
  cr_assert_eq(encode_ok(&m, buf), GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 1u);
  m.u.room.token_len = GK_WIRE_TOKEN_BYTES;
  memset(m.u.room.token, 0x77, GK_WIRE_TOKEN_BYTES);
  len = encode_ok(&m, buf);
  cr_assert_eq(len,
               GK_WIRE_HEADER + GK_WIRE_CODE_LEN + 1u + GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(gk_wire_decode(buf, len, &d), 0);
  cr_assert_arr_eq(d.u.room.token, m.u.room.token, GK_WIRE_TOKEN_BYTES);
  cr_assert_eq(gk_wire_decode(buf, len - 5, &d), GK_ETRUNC);
}

Test(wire_codec,
     quick_play_with_a_bad_code_or_joined_with_no_players_is_refused) {
  const uint8_t bad_code[] = {'1'}; /* not base32 */
  expect_patched(26, 2, bad_code, 1, GK_EPROTO);
  const uint8_t zero[] = {0}; /* players 0 */
  expect_patched(27, 2 + GK_WIRE_CODE_LEN + 1, zero, 1, GK_ERANGE);
  const uint8_t slot[] = {GK_PLAYERS_MAX}; /* a slot past the last */
  expect_patched(27, 2 + GK_WIRE_CODE_LEN, slot, 1, GK_ERANGE);
  const uint8_t genre[] = {'A'}; /* the genre's first byte: not [a-z0-9_-] */
  expect_patched(26, 2 + GK_WIRE_CODE_LEN + 3, genre, 1, GK_EPROTO);
}

Test(wire_codec,
     a_name_that_is_not_utf8_text_or_a_roster_out_of_order_is_refused) {
  cr_assert(gk_wire_name_valid("ada", 3));
  cr_assert(gk_wire_name_valid("\xf0\x9f\x8e\xae", 4), "U+1F3AE");
  cr_assert_not(gk_wire_name_valid("", 0));
  cr_assert_not(gk_wire_name_valid("a\tb", 3), "a control character");
  cr_assert_not(gk_wire_name_valid("a\x7f", 2));
  cr_assert_not(gk_wire_name_valid("\xc3", 1), "cut short");
  cr_assert_not(gk_wire_name_valid("\xc0\xaf", 2), "overlong");
  cr_assert_not(gk_wire_name_valid("\xed\xa0\x80", 3), "a surrogate");
  cr_assert_not(gk_wire_name_valid("\xf4\x90\x80\x80", 4), "past U+10FFFF");
  cr_assert_not(gk_wire_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaa", 25),
                "too long");
  const uint8_t ctl[] = {0x01};
  expect_patched(28, 3, ctl, 1, GK_EPROTO); /* the name's first byte */
  const uint8_t cut[] = {0xe2};
  expect_patched(28, 3 + 4, cut, 1, GK_EPROTO); /* a lone lead byte */
  const uint8_t slot[] = {0}; /* slot 3 after slot 0 becomes 0: twice */
  expect_patched(29, 3 + 1 + 1 + 3, slot, 1, GK_ERANGE);
  const uint8_t count[] = {GK_PLAYERS_MAX + 1};
  expect_patched(29, 2, count, 1, GK_ERANGE);
}

Test(wire_codec, next_room_is_its_code_after_the_header_and_nothing_else) {
  gk_wire_msg m;
  cr_assert(sample_msg(30, &m));
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  /* docs/PROTOCOL.md "Play again" */
  const uint8_t doc[] = {0x02, 0x3d, 'K', '7', 'Q', 'X', '2', '2', '2',
                         '2',  '2',  '2', '2', '2', '2', '2', '2', '2'};
  cr_assert_eq(len, sizeof doc);
  cr_assert_arr_eq(buf, doc, sizeof doc);
  const uint8_t bad[] = {'1'}; /* not base32 */
  expect_patched(30, 2, bad, 1, GK_EPROTO);
}
