/* test_replay_format.c: the .gkr writer, reader and verifier, over the tiny
 * test genre: round trips, publication by rename, damage reports at every
 * truncation offset and every single bit flip, and a changed input caught
 * at exactly its step. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "gk_replay.h"

#define NO_TAMPER UINT64_MAX

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

Test(replay_format, a_recorded_run_reads_back_with_its_header_and_steps) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(3, 100, 16, 99, NO_TAMPER, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0, "%s", r.damage.what);
  cr_assert(r.header_ok && r.complete);
  cr_assert_str_eq(r.genre, "tiny");
  cr_assert_eq(r.genre_version, 3);
  cr_assert_eq(r.seed, 99);
  cr_assert_eq(r.players, 3);
  cr_assert_eq(r.input_size, 2);
  cr_assert_eq(r.step_seconds.num, 1);
  cr_assert_eq(r.step_seconds.den, 60);
  cr_assert_str_eq(r.origin, "test fixture");
  cr_assert_eq(r.steps, 100);
  cr_assert_eq(r.valid_end, len);
  cr_assert_str_eq(
      cJSON_GetObjectItemCaseSensitive(r.config, "label")->valuestring,
      "fixture");
  gk_replay_step s4, s5, last;
  cr_assert_eq(gk_replay_step_at(&r, 4, &s4, NULL), 0);
  cr_assert_eq(s4.active_mask, 5u, "player 1 sits out every 5th step");
  cr_assert_eq(s4.inputs[2] | s4.inputs[3], 0);
  cr_assert_eq(gk_replay_step_at(&r, 5, &s5, NULL), 0);
  cr_assert_eq(s5.active_mask, 7u);
  cr_assert_eq(gk_replay_step_at(&r, 99, &last, NULL), 0);
  cr_assert_eq(last.flags, GK_STEP_MATCH_END);
  cr_assert_eq(last.hash, r.final_hash);
  cr_assert_eq(gk_replay_step_at(&r, 100, &last, NULL), GK_ERANGE);
  gk_replay_close(&r);
  free(bytes);
}

Test(replay_format, lookups_with_and_without_a_hint_agree_in_any_order) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 300, 7, 5, NO_TAMPER, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  size_t hint = 0;
  for (uint64_t i = 0; i < 600; i++) {
    uint64_t step = (i * 7919) % 300; /* jumps around */
    gk_replay_step a, b;
    cr_assert_eq(gk_replay_step_at(&r, step, &a, &hint), 0);
    cr_assert_eq(gk_replay_step_at(&r, step, &b, NULL), 0);
    cr_assert_eq(a.step, step);
    cr_assert_eq(a.hash, b.hash);
    cr_assert_eq(a.inputs, b.inputs);
  }
  gk_replay_close(&r);
  free(bytes);
}

/* Records an untouched tiny replay and expects every step to verify. */
static void expect_untouched_verifies(uint32_t players, uint64_t steps,
                                      uint32_t block_steps, uint64_t seed) {
  size_t len;
  uint8_t *bytes =
      fixture_tiny_replay(players, steps, block_steps, seed, NO_TAMPER, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK,
               "%s", v.message);
  cr_assert_eq(v.steps_checked, steps);
  gk_replay_close(&r);
  free(bytes);
}

Test(replay_format, verify_passes_on_an_untouched_replay) {
  expect_untouched_verifies(4, 5000, 256, 1);
}

Test(replay_format, a_replay_without_steps_is_valid_and_verifies) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(1, 0, 8, 1, NO_TAMPER, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0, "%s", r.damage.what);
  cr_assert_eq(r.steps, 0);
  cr_assert_eq(r.final_hash, 0);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK);
  gk_replay_close(&r);
  free(bytes);
}

/* Records a tiny replay whose input at step `at` lies and expects verify
 * to name exactly that step, with the recorded and computed hashes. */
static void expect_mismatch_at(uint32_t players, uint64_t steps,
                               uint32_t block_steps, uint64_t seed,
                               uint64_t at) {
  size_t len;
  uint8_t *bytes =
      fixture_tiny_replay(players, steps, block_steps, seed, at, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0,
               "a consistent file whose input lies still reads");
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v),
               GK_REPLAY_MISMATCH);
  cr_assert_eq(v.step, at, "%s", v.message);
  cr_assert_eq(v.steps_checked, at);
  gk_replay_step s;
  gk_replay_step_at(&r, at, &s, NULL);
  cr_assert_eq(v.expected, s.hash);
  cr_assert_neq(v.actual, v.expected);
  char want[64];
  snprintf(want, sizeof want, "step %llu:", (unsigned long long)at);
  cr_assert(strstr(v.message, want) != NULL, "%s", v.message);
  gk_replay_close(&r);
  free(bytes);
}

Test(replay_format, a_changed_step_input_fails_verify_at_exactly_that_step) {
  const uint64_t at[] = {0, 1, 37, 255, 256, 399};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
    expect_mismatch_at(2, 400, 64, 3, at[i]);
}

Test(replay_format, a_change_where_a_block_and_a_frame_part_is_found_there) {
  /* 1000-step blocks against the verifier's 4096-step frames: a frame
   * ends inside a block and the next one goes on from the same entry */
  const uint64_t at[] = {999, 1000, 4095, 4096, 4097, 6999};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
    expect_mismatch_at(3, 7000, 1000, 5, at[i]);
  expect_untouched_verifies(3, 7000, 1000, 5);
}

/* Changes entry `step` of a one-player replay (mask, flags, record) and
 * re-seals its block's checksum, so only the entry check can refuse it. */
static void reseal_entry(uint8_t *bytes, const gk_replay *r, uint64_t step,
                         uint32_t mask, uint32_t flags, uint8_t rec) {
  size_t b = 0;
  while (step - r->blocks[b].first >= r->blocks[b].count) b++;
  uint8_t *e = bytes + r->blocks[b].entries +
               (size_t)(step - r->blocks[b].first) * r->entry_size;
  gk_store_le(e + 8, mask, 4);
  gk_store_le(e + 12, flags, 4);
  e[16] = rec;
  uint8_t *head = bytes + r->blocks[b].entries - 16 - 12;
  size_t plen = (size_t)gk_load_le32(head + 8);
  gk_store_le(head + 12 + plen, gk_hash_bytes(head, 12 + plen), 8);
}

Test(replay_format,
     a_bad_mask_flags_or_silent_record_in_a_sealed_block_is_named) {
  /* one player: every entry of a good block is the common one, so the
   * block-wide check is what must notice the one that is not */
  const struct {
    uint32_t mask, flags;
    uint8_t rec;
    size_t at; /* offset of the named byte in the entry */
    const char *what;
  } bad[] = {
      {3, 0, 1, 8, "active mask"},
      {1, 0x80, 1, 12, "flags"},
      {0, 0, 0xff, 16, "all-zero records"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t len;
    uint8_t *bytes = fixture_tiny_replay(1, 300, 64, 8, NO_TAMPER, &len);
    gk_replay r;
    cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
    size_t entry = r.blocks[1].entries + 6 * (size_t)r.entry_size;
    reseal_entry(bytes, &r, 70, bad[i].mask, bad[i].flags, bad[i].rec);
    gk_replay_close(&r);
    cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), GK_EPROTO);
    cr_assert_eq(r.damage.offset, entry + bad[i].at, "%s", r.damage.what);
    cr_assert(strstr(r.damage.what, "step 70:") != NULL, "%s", r.damage.what);
    cr_assert(strstr(r.damage.what, bad[i].what) != NULL, "%s", r.damage.what);
    cr_assert_eq(r.steps, 64, "the block before it is kept");
    gk_replay_close(&r);
    free(bytes);
  }
}

/* Steps in the blocks that lie wholly before `cut`. */
static uint64_t steps_before(const gk_replay *full, size_t cut) {
  uint64_t n = 0;
  for (size_t b = 0; b < full->nblocks; b++) {
    size_t end = full->blocks[b].entries +
                 (size_t)full->blocks[b].count * full->entry_size + 8;
    if (end <= cut) n = full->blocks[b].first + full->blocks[b].count;
  }
  return n;
}

Test(replay_format, truncation_at_every_offset_keeps_each_complete_block) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 24, 8, 9, NO_TAMPER, &len);
  gk_replay full;
  cr_assert_eq(gk_replay_open_bytes(&full, bytes, len), 0);
  for (size_t cut = 0; cut < len; cut++) {
    uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
    memcpy(copy, bytes, cut);
    gk_replay r;
    int rc = gk_replay_open_bytes(&r, copy, cut);
    cr_assert_eq(rc, GK_ETRUNC, "cut at %zu: %s (%s)", cut, r.damage.what,
                 gk_err_name(rc));
    cr_assert(r.damage.offset <= cut, "cut at %zu: offset %llu", cut,
              (unsigned long long)r.damage.offset);
    cr_assert(!r.complete);
    cr_assert_eq(r.steps, steps_before(&full, cut), "cut at %zu", cut);
    cr_assert(r.damage.what[0] != '\0');
    gk_replay_verdict v;
    cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v),
                 GK_REPLAY_INVALID, "cut at %zu", cut);
    cr_assert_eq(v.steps_checked, r.steps);
    cr_assert(strstr(v.message, "offset ") != NULL);
    gk_replay_close(&r);
    free(copy);
  }
  gk_replay_close(&full);
  free(bytes);
}

Test(replay_format, every_single_bit_flip_is_reported_as_damage) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 24, 8, 9, NO_TAMPER, &len);
  uint8_t *copy = malloc(len);
  for (size_t i = 0; i < len; i++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, bytes, len);
      copy[i] ^= (uint8_t)(1u << bit);
      gk_replay r;
      int rc = gk_replay_open_bytes(&r, copy, len);
      cr_assert(rc < 0, "flip at byte %zu bit %d went unnoticed", i, bit);
      cr_assert(r.damage.offset <= i, "flip at %zu reported at %llu", i,
                (unsigned long long)r.damage.offset);
      gk_replay_verdict v;
      int st = gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v);
      cr_assert_eq(st, GK_REPLAY_INVALID, "flip at %zu.%d: %s", i, bit,
                   v.message);
      gk_replay_close(&r);
    }
  }
  free(copy);
  free(bytes);
}

Test(replay_format, a_corrupt_block_is_named_with_its_offset_and_checksums) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 24, 8, 9, NO_TAMPER, &len);
  gk_replay full;
  cr_assert_eq(gk_replay_open_bytes(&full, bytes, len), 0);
  /* a byte inside the second steps block's entries */
  size_t block2 = full.blocks[1].entries - 16 - 12;
  bytes[full.blocks[1].entries + 3] ^= 0xff;
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), GK_ECORRUPT);
  cr_assert_eq(r.damage.offset, block2);
  cr_assert(strstr(r.damage.what, "steps block 2: expected checksum") != NULL,
            "%s", r.damage.what);
  cr_assert_eq(r.steps, 8, "the first steps block is still readable");
  gk_replay_close(&r);
  gk_replay_close(&full);
  free(bytes);
}

Test(replay_format, bytes_after_the_footer_are_damage) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(1, 3, 8, 9, NO_TAMPER, &len);
  uint8_t *more = malloc(len + 1);
  memcpy(more, bytes, len);
  more[len] = 0;
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, more, len + 1), GK_EPROTO);
  cr_assert_eq(r.damage.offset, len);
  cr_assert(strstr(r.damage.what, "end of the file") != NULL);
  gk_replay_close(&r);
  free(more);
  free(bytes);
}

Test(replay_format, a_replay_of_another_genre_version_is_not_run) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(1, 3, 8, 9, NO_TAMPER, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  gk_sim newer = tiny_sim;
  newer.version = 4;
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &newer, NULL, NULL, &v), GK_REPLAY_INVALID);
  cr_assert_eq(v.code, GK_EVERSION);
  cr_assert(strstr(v.message, "version 3") != NULL, "%s", v.message);
  cr_assert_eq(gk_replay_verify(&r, NULL, NULL, NULL, &v), GK_REPLAY_INVALID,
               "tiny is not in the registry");
  cr_assert_eq(v.code, GK_ENOTFOUND);
  gk_replay_close(&r);
  free(bytes);
}

static void meta_for(gk_replay_meta *m, tiny_cfg *cfg, uint32_t players) {
  tiny_sim.config_default(cfg);
  m->sim = &tiny_sim;
  m->cfg = cfg;
  m->seed = 17;
  m->players = players;
  m->origin = NULL;
  m->lockstep = NULL;
}

Test(replay_format, the_writer_publishes_the_file_only_when_it_finishes) {
  char dir[64], path[128], tmp[136];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/match.gkr", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  tiny_cfg cfg;
  gk_replay_meta m;
  meta_for(&m, &cfg, 2);
  char err[GK_ERRMSG_MAX] = "";
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open(&w, path, &m, err, sizeof err), 0, "%s",
               err);
  cr_assert(exists(tmp));
  cr_assert(!exists(path));
  uint8_t rec[4] = {1, 2, 3, 4};
  gk_step_input in = {0, 3, 0, 2, rec};
  for (uint64_t s = 0; s < 10; s++) {
    in.step = s;
    cr_assert_eq(gk_replay_writer_append(&w, &in, 1000 + s), 0);
  }
  cr_assert_eq(gk_replay_writer_flush(&w), 0);
  cr_assert(!exists(path));
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0, "%s", err);
  gk_replay_writer_abort(&w); /* harmless after finish */
  cr_assert(exists(path));
  cr_assert(!exists(tmp));
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, path), 0, "%s", r.damage.what);
  cr_assert_eq(r.steps, 10);
  cr_assert_eq(r.final_hash, 1009);
  cr_assert_null(r.origin);
  gk_replay_close(&r);
  unlink(path);
  rmdir(dir);
}

Test(replay_format, a_crashed_recording_reads_up_to_its_last_complete_block) {
  char dir[64], path[128], tmp[136];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/crash.gkr", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  tiny_cfg cfg;
  gk_replay_meta m;
  meta_for(&m, &cfg, 1);
  char err[GK_ERRMSG_MAX] = "";
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open(&w, path, &m, err, sizeof err), 0);
  w.block_steps = 4;
  uint8_t rec[2] = {9, 9};
  gk_step_input in = {0, 1, 0, 1, rec};
  for (uint64_t s = 0; s < 10; s++) {
    in.step = s;
    cr_assert_eq(gk_replay_writer_append(&w, &in, s), 0);
  }
  /* the process "dies" here: 8 steps are in blocks, 2 are pending */
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, tmp), GK_ETRUNC);
  cr_assert_eq(r.steps, 8);
  cr_assert_eq(r.damage.offset, r.valid_end,
               "damage starts where the "
               "complete blocks end");
  cr_assert(strstr(r.damage.what, "after 8 complete steps") != NULL, "%s",
            r.damage.what);
  gk_replay_close(&r);
  gk_replay_writer_abort(&w);
  cr_assert(!exists(tmp), "abort removes the .tmp file");
  cr_assert(!exists(path));
  rmdir(dir);
}

Test(replay_format, the_writer_refuses_bad_steps_and_names) {
  tiny_cfg cfg;
  gk_replay_meta m;
  meta_for(&m, &cfg, 2);
  char err[GK_ERRMSG_MAX] = "";
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open(&w, "/tmp/x.replay", &m, err, sizeof err),
               GK_EINVAL);
  cr_assert(strstr(err, ".gkr") != NULL, "%s", err);
  gk_replay_writer_abort(&w);
  m.players = 5;
  cr_assert_eq(gk_replay_writer_open_mem(&w, &m, err, sizeof err), GK_EINVAL);
  gk_replay_writer_abort(&w);
  m.players = 2;
  cr_assert_eq(gk_replay_writer_open_mem(&w, &m, err, sizeof err), 0);
  uint8_t rec[4] = {1, 1, 0, 0};
  uint8_t loud[4] = {1, 1, 5, 0};
  gk_step_input ok = {0, 1, 0, 2, rec};
  gk_step_input bad;
  bad = ok;
  bad.step = 1;
  cr_assert_eq(gk_replay_writer_append(&w, &bad, 0), GK_EINVAL, "step gap");
  bad = ok;
  bad.active_mask = 4;
  cr_assert_eq(gk_replay_writer_append(&w, &bad, 0), GK_EINVAL, "mask");
  bad = ok;
  bad.players = 3;
  cr_assert_eq(gk_replay_writer_append(&w, &bad, 0), GK_EINVAL, "players");
  bad = ok;
  bad.flags = 0x80;
  cr_assert_eq(gk_replay_writer_append(&w, &bad, 0), GK_EINVAL, "flags");
  bad = ok;
  bad.inputs = loud;
  cr_assert_eq(gk_replay_writer_append(&w, &bad, 0), GK_EINVAL,
               "an inactive player's record must be neutral");
  cr_assert_eq(w.steps, 0);
  cr_assert_eq(gk_replay_writer_append(&w, &ok, 0), 0);
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0);
  cr_assert_eq(gk_replay_writer_append(&w, &ok, 0), GK_ESTATE);
  gk_replay_writer_abort(&w);
}

Test(replay_format, missing_and_non_regular_files_are_clear_errors) {
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, "/nonexistent/dir/x.gkr"), GK_ENOTFOUND);
  cr_assert(strstr(r.damage.what, "cannot open") != NULL);
  gk_replay_close(&r);
  cr_assert_eq(gk_replay_open_file(&r, "/tmp"), GK_EIO);
  gk_replay_close(&r);
}

static void each_huge(const void *cfg, gk_config_each_cb cb, void *ctx) {
  gk_value v = {GK_VALUE_INT, INT64_MAX, NULL};
  cb(ctx, "start", &v);
}

Test(replay_format, a_header_that_cannot_be_written_leaves_no_file) {
  char dir[64], path[128], tmp[136];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/huge.gkr", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  gk_sim odd = tiny_sim;
  odd.config_each = each_huge; /* 2^63-1 has no exact JSON number */
  tiny_cfg cfg;
  gk_replay_meta m = {&odd, &cfg, 1, 1, NULL, NULL};
  tiny_sim.config_default(&cfg);
  char err[GK_ERRMSG_MAX] = "";
  gk_replay_writer w;
  cr_assert_neq(gk_replay_writer_open(&w, path, &m, err, sizeof err), 0);
  cr_assert(strstr(err, "config") != NULL, "%s", err);
  gk_replay_writer_abort(&w);
  cr_assert(!exists(tmp), "the .tmp file is removed");
  cr_assert(!exists(path));
  rmdir(dir);
}

Test(replay_format, header_json_with_trailing_bytes_is_damage) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(1, 2, 8, 1, NO_TAMPER, &len);
  /* rebuild the file with "x" after the header JSON, checksums redone */
  uint32_t plen = (uint32_t)bytes[24] | (uint32_t)bytes[25] << 8 |
                  (uint32_t)bytes[26] << 16 | (uint32_t)bytes[27] << 24;
  size_t hend = 16 + 12 + plen; /* end of the header payload */
  uint8_t *b = malloc(len + 1);
  memcpy(b, bytes, hend);
  b[hend] = 'x';
  memcpy(b + hend + 1, bytes + hend, len - hend);
  plen++;
  for (int i = 0; i < 4; i++) b[24 + i] = (uint8_t)(plen >> (8 * i));
  fixture_resign_block(b, len + 1, 16);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, b, len + 1), GK_EPARSE, "%s",
               r.damage.what);
  cr_assert_eq(r.damage.offset, hend);
  cr_assert(strstr(r.damage.what, "end of the header JSON") != NULL);
  gk_replay_close(&r);
  free(b);
  free(bytes);
}

/* Steps block `seq` of a replay: its offset and its first-step field. */
static size_t first_step_field(const uint8_t *bytes, size_t len, uint32_t seq) {
  size_t off = fixture_block_at(bytes, len, seq);
  cr_assert_eq(bytes[off], GK_REPLAY_BLOCK_STEPS_T);
  return off + 12;
}

Test(replay_format, a_steps_block_out_of_order_is_refused_naming_the_block) {
  /* 24 steps, 8 per block: steps blocks 1, 2, 3 start at 0, 8, 16. Each
   * change keeps the block's checksum right, so only the step numbering
   * can give it away. */
  const struct {
    uint32_t seq;
    uint64_t was, now;
    uint64_t readable;
  } cases[] = {{1, 0, 5, 0}, {2, 8, 0, 8}, {3, 16, 24, 16}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    uint8_t *bytes = fixture_tiny_replay(2, 24, 8, 9, NO_TAMPER, &len);
    size_t at = first_step_field(bytes, len, cases[i].seq);
    cr_assert_eq(fixture_get_u64(bytes + at), cases[i].was);
    fixture_put_u64(bytes + at, cases[i].now);
    fixture_resign_block(bytes, len, at - 12);
    gk_replay r;
    cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), GK_EPROTO, "%s",
                 r.damage.what);
    cr_assert_eq(r.damage.offset, at);
    char want[96];
    snprintf(want, sizeof want,
             "steps block %u: expected first step %llu, found %llu",
             cases[i].seq, (unsigned long long)cases[i].was,
             (unsigned long long)cases[i].now);
    cr_assert(strstr(r.damage.what, want) != NULL, "%s", r.damage.what);
    cr_assert(!r.complete);
    cr_assert_eq(r.steps, cases[i].readable);
    gk_replay_verdict v;
    cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v),
                 GK_REPLAY_INVALID, "%s", v.message);
    cr_assert_eq(v.steps_checked, cases[i].readable);
    cr_assert(strstr(v.message, want) != NULL, "%s", v.message);
    gk_replay_close(&r);
    free(bytes);
  }
}

Test(replay_format,
     a_footer_whose_final_hash_lies_is_refused_naming_the_footer) {
  size_t len;
  uint8_t *bytes = fixture_tiny_replay(2, 24, 8, 9, NO_TAMPER, &len);
  gk_replay good;
  cr_assert_eq(gk_replay_open_bytes(&good, bytes, len), 0);
  uint64_t truth = good.final_hash;
  gk_replay_close(&good);
  size_t foot = fixture_block_at(bytes, len, 4);
  cr_assert_eq(bytes[foot], GK_REPLAY_BLOCK_FOOTER);
  cr_assert_eq(fixture_get_u64(bytes + foot + 20), truth);
  fixture_put_u64(bytes + foot + 20, truth ^ 0x5a5a);
  fixture_resign_block(bytes, len, foot);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), GK_EPROTO, "%s",
               r.damage.what);
  cr_assert_eq(r.damage.offset, foot + 20);
  cr_assert(strstr(r.damage.what, "footer final hash") != NULL, "%s",
            r.damage.what);
  cr_assert(!r.complete);
  cr_assert_eq(r.final_hash, 0, "a final hash the steps do not produce");
  cr_assert_eq(r.steps, 24);
  cr_assert_eq(r.last_hash, truth);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v),
               GK_REPLAY_INVALID);
  cr_assert_eq(v.steps_checked, 24);
  cr_assert(strstr(v.message, "footer") != NULL, "%s", v.message);
  gk_replay_close(&r);
  free(bytes);
}

/* --- the "lockstep" record and the input delay rule --------------------- */

typedef struct delay_input {
  gk_input base;
  uint64_t bad_step; /* gets a non-zero record although it must not */
  uint8_t rec[2];
} delay_input;

/* Delay 2, lead 1: steps 0..1 neutral; step 3 raises to 4, so steps
 * 3 + 2 + 1 = 6 and 7 are neutral too. */
static int delay_read(gk_input *base, uint64_t step, gk_step_input *out) {
  delay_input *in = (delay_input *)base;
  int neutral = step < 2 || step == 6 || step == 7;
  in->rec[0] = neutral && step != in->bad_step ? 0 : (uint8_t)(step + 1);
  in->rec[1] = 0;
  out->step = step;
  out->active_mask = 1;
  out->flags = step == 3 ? GK_STEP_DELAY | 4u << GK_STEP_DELAY_SHIFT : 0;
  out->players = 1;
  out->inputs = in->rec;
  return 0;
}

static uint8_t *delay_replay(uint64_t bad_step, int with_record, size_t *len) {
  tiny_cfg cfg;
  tiny_sim.config_default(&cfg);
  char err[GK_ERRMSG_MAX];
  cJSON *ls = cJSON_Parse("{\"input_delay\":2,\"lead\":1,\"auto\":true}");
  gk_replay_meta meta = {&tiny_sim, &cfg,         5,
                         1,         "delay test", with_record ? ls : NULL};
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open_mem(&w, &meta, err, sizeof err), 0, "%s",
               err);
  cJSON_Delete(ls);
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, &tiny_sim, &cfg, 5, 1, err, sizeof err), 0);
  delay_input in = {.base.read = delay_read, .bad_step = bad_step};
  for (uint64_t s = 0; s < 12; s++) {
    cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(1), 0), 1);
    gk_step_input si;
    delay_read(&in.base, s, &si);
    cr_assert_eq(gk_replay_writer_append(&w, &si, loop.last_hash), 0);
  }
  gk_loop_close(&loop);
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0, "%s", err);
  return gk_replay_writer_take(&w, len);
}

Test(replay_format, a_replay_with_delay_changes_verifies_and_keeps_its_record) {
  size_t len;
  uint8_t *bytes = delay_replay(UINT64_MAX, 1, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  cr_assert(r.has_lockstep);
  cr_assert_eq(r.input_delay, 2);
  cr_assert_eq(r.lead, 1);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK,
               "%s", v.message);
  gk_replay_close(&r);
  free(bytes);
}

Test(replay_format, a_sample_in_a_step_skipped_by_a_raise_fails_verify) {
  size_t len;
  uint8_t *bytes = delay_replay(7, 1, &len);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v),
               GK_REPLAY_INVALID);
  cr_assert_eq(v.code, GK_EPROTO);
  cr_assert(strstr(v.message, "step 7"), "%s", v.message);
  gk_replay_close(&r);
  free(bytes);
  /* without the record (an older replay) the rule is not known: it runs */
  bytes = delay_replay(7, 0, &len);
  cr_assert_eq(gk_replay_open_bytes(&r, bytes, len), 0);
  cr_assert(!r.has_lockstep);
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK,
               "%s", v.message);
  gk_replay_close(&r);
  free(bytes);
}
