/* test_gk_web_replay.c: replay.js's C (gk_web_replay.c) built natively, so
 * the sanitizers see it, against gk_replay_verify on the same bytes: a
 * golden replay verified by the scan loop, seeks that show the recorded
 * hash, a flipped byte and a forged input record (checksum made right)
 * judged with gk-replay verify's verdict, and a desync diff. The header
 * goes through the cJSON parser here (the page's is JSON.parse). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_state_diff.h"
#include "gk_web_replay.h"

#define GOLDEN GK_SOURCE_ROOT "/tests/data/replays/survivors-2p-seed7-3000.gkr"

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n);
  cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Opened, prepared, config from the header, started. */
static gk_web_replay *open_ready(const uint8_t *b, size_t len) {
  gk_web_replay *w = gk_web_replay_new();
  cr_assert_not_null(w);
  gk_web_replay_open(w, b, len, gk_replay_cjson_parser());
  cr_assert_eq(gk_web_replay_prepare(w), 0, "%s", gk_web_replay_error(w));
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_config_from_json(gk_web_replay_sim(w), gk_web_replay_cfg(w),
                                   gk_web_replay_reader(w)->config, err,
                                   sizeof err),
               0, "%s", err);
  cr_assert_eq(gk_web_replay_start(w, 64), 0, "%s", gk_web_replay_error(w));
  return w;
}

static void scan_all(gk_web_replay *w) {
  for (int i = 0; i < 1000; i++) {
    int done = 0;
    gk_web_replay_verdict(w, &done);
    if (done) return;
    gk_web_replay_scan(w, 500);
  }
  cr_assert_fail("the scan did not end");
}

/* The verdict gk-replay verify gives the same bytes. */
static void native_verdict(const uint8_t *b, size_t len, gk_replay_verdict *v) {
  gk_replay r;
  gk_replay_open_bytes(&r, b, len);
  gk_replay_verify(&r, NULL, NULL, NULL, v);
  gk_replay_close(&r);
}

static uint64_t map_hash(gk_web_replay *w) {
  uint32_t n = 0;
  const uint8_t *m = gk_web_replay_state(w, 0, &n);
  cr_assert_not_null(m);
  cr_assert(n >= 24 && memcmp(m, "GKS1", 4) == 0);
  return gk_load_le64(m + 12);
}

Test(gk_web_replay, a_golden_replay_verifies_and_seeks_show_its_hashes) {
  size_t len;
  uint8_t *b = slurp(GOLDEN, &len);
  gk_web_replay *w = open_ready(b, len);
  scan_all(w);
  int done = 0;
  const gk_replay_verdict *v = gk_web_replay_verdict(w, &done);
  cr_assert_eq(v->status, GK_REPLAY_OK, "%s", v->message);
  cr_assert_eq(v->steps_checked, 3000);
  cr_assert_eq(gk_web_replay_verified(w), 3000);
  uint64_t sb = 0;
  cr_assert_eq(gk_web_replay_snapshots(w, &sb), 3000 / 64 + 1);
  const uint64_t to[] = {1, 64, 65, 2999, 3000, 100, 1500, 63, 0};
  for (size_t i = 0; i < sizeof to / sizeof to[0]; i++) {
    cr_assert_eq(gk_web_replay_seek(w, to[i]), 0);
    cr_assert_eq(gk_web_replay_position(w), to[i]);
    if (to[i] == 0) continue;
    gk_replay_step s;
    cr_assert_eq(
        gk_replay_step_at(gk_web_replay_reader(w), to[i] - 1, &s, NULL), 0);
    cr_assert_eq(map_hash(w), s.hash, "position %llu",
                 (unsigned long long)to[i]);
  }
  gk_web_replay_free(w);
  free(b);
}

/* The file's hash after position `at`'s last step (at >= 1). */
static uint64_t recorded_hash(gk_web_replay *w, uint64_t at) {
  gk_replay_step s;
  cr_assert_eq(gk_replay_step_at(gk_web_replay_reader(w), at - 1, &s, NULL), 0);
  return s.hash;
}

Test(gk_web_replay,
     kept_states_are_at_multiples_of_the_interval_whichever_loop_passes) {
  size_t len;
  uint8_t *b = slurp(GOLDEN, &len);
  gk_web_replay *w = open_ready(b, len); /* every 64 */
  /* the loops take turns passing the multiples: play to 300, scan to 1000
   * (over the play loop's), play to 1200 (over the scan's), scan on */
  cr_assert_eq(gk_web_replay_run(w, 300), GK_REPLAY_OK);
  cr_assert_eq(gk_web_replay_snapshots(w, NULL), 300 / 64 + 1,
               "kept up to 256 by the play loop");
  cr_assert_eq(gk_web_replay_scan(w, 100), GK_REPLAY_OK);
  cr_assert_eq(gk_web_replay_scan(w, 900), GK_REPLAY_OK);
  cr_assert_eq(gk_web_replay_snapshots(w, NULL), 1000 / 64 + 1,
               "the scan loop kept only the multiples past 256: %u kept",
               gk_web_replay_snapshots(w, NULL));
  cr_assert_eq(gk_web_replay_run(w, 1200), GK_REPLAY_OK);
  cr_assert_eq(gk_web_replay_snapshots(w, NULL), 1200 / 64 + 1,
               "the play loop kept only the multiples past 960: %u kept",
               gk_web_replay_snapshots(w, NULL));
  scan_all(w);
  uint32_t n = gk_web_replay_snapshots(w, NULL);
  cr_assert_eq(n, 3000 / 64 + 1, "one kept state per multiple: %u", n);
  /* from the end down, each seek to a multiple adopts its kept state and
   * runs no step: the state shown is the kept one, and its hash is the
   * file's at that position */
  cr_assert_eq(gk_web_replay_seek(w, 3000), 0);
  for (uint32_t k = n - 1; k >= 1; k--) {
    cr_assert_eq(gk_web_replay_seek(w, (uint64_t)k * 64), 0);
    cr_assert_eq(gk_web_replay_position(w), (uint64_t)k * 64);
    cr_assert_eq(map_hash(w), recorded_hash(w, (uint64_t)k * 64),
                 "the state kept for position %u is not the state there",
                 k * 64);
  }
  gk_web_replay_free(w);
  free(b);
}

Test(gk_web_replay, a_flipped_byte_gets_gk_replay_verifys_verdict) {
  size_t len;
  uint8_t *b = slurp(GOLDEN, &len);
  b[len * 3 / 5] ^= 0x20;
  gk_replay_verdict want;
  native_verdict(b, len, &want);
  cr_assert_eq(want.status, GK_REPLAY_INVALID);
  gk_web_replay *w = open_ready(b, len);
  scan_all(w);
  const gk_replay_verdict *v = gk_web_replay_verdict(w, NULL);
  cr_assert_eq(v->status, want.status);
  cr_assert_eq(v->steps_checked, want.steps_checked);
  cr_assert_str_eq(v->message, want.message);
  cr_assert(strstr(v->message, "steps block") != NULL, "%s", v->message);
  gk_web_replay_free(w);
  free(b);
}

/* Changes one input byte of the entry of step `step` and seals its block
 * again (tools/replay/FORMAT.md: 12-byte block head, payload, XXH3-64 of
 * both), so only the step's hash can tell. */
static void forge(uint8_t *b, size_t len, uint64_t step) {
  size_t pos = 16;
  while (pos + 20 <= len) {
    uint32_t plen = gk_load_le32(b + pos + 8);
    if (b[pos] == 'S') {
      const uint8_t *p = b + pos + 12;
      uint64_t first = gk_load_le64(p);
      uint32_t count = gk_load_le32(p + 8), esize = gk_load_le32(p + 12);
      if (step >= first && step < first + count) {
        uint8_t *e = b + pos + 12 + 16 + (size_t)(step - first) * esize;
        e[16] ^= 0x7f; /* player 0's record, first byte: its move x */
        gk_store_le(b + pos + 12 + plen, gk_hash_bytes(b + pos, 12 + plen), 8);
        return;
      }
    }
    pos += 12 + (size_t)plen + 8;
  }
  cr_assert_fail("no block holds step %llu", (unsigned long long)step);
}

Test(gk_web_replay, a_forged_input_is_a_mismatch_where_gk_replay_says) {
  size_t len;
  uint8_t *b = slurp(GOLDEN, &len);
  forge(b, len, 1234);
  gk_replay_verdict want;
  native_verdict(b, len, &want);
  cr_assert_eq(want.status, GK_REPLAY_MISMATCH, "%s", want.message);
  gk_web_replay *w = open_ready(b, len);
  scan_all(w);
  const gk_replay_verdict *v = gk_web_replay_verdict(w, NULL);
  cr_assert_eq(v->status, GK_REPLAY_MISMATCH);
  cr_assert_eq(v->step, want.step);
  cr_assert_eq(v->steps_checked, want.steps_checked);
  cr_assert_str_eq(v->message, want.message);
  /* the play loop stops at the chunk with the mismatch, too */
  cr_assert_eq(gk_web_replay_seek(w, 3000), 0);
  cr_assert(gk_web_replay_position(w) < 3000);
  gk_web_replay_free(w);
  free(b);
}

Test(gk_web_replay, bad_bytes_get_the_readers_message_and_diffs_work) {
  static const uint8_t junk[] = "PK\x03\x04 not a replay";
  gk_replay_verdict want;
  native_verdict(junk, sizeof junk, &want);
  gk_web_replay *w = gk_web_replay_new();
  cr_assert_neq(
      gk_web_replay_open(w, junk, sizeof junk, gk_replay_cjson_parser()), 0);
  cr_assert_neq(gk_web_replay_prepare(w), 0);
  int done = 0;
  const gk_replay_verdict *v = gk_web_replay_verdict(w, &done);
  cr_assert(done);
  cr_assert_str_eq(v->message, want.message);
  cr_assert_eq(gk_web_replay_seek(w, 5), GK_ESTATE);
  gk_web_replay_free(w);

  size_t len;
  uint8_t *b = slurp(GOLDEN, &len);
  w = open_ready(b, len);
  /* the state after 700 steps, natively, and a copy with one more kill */
  gk_replay r;
  gk_replay_open_bytes(&r, b, len);
  gk_loop lp;
  gk_loop_options o = {GK_REPLAY_PROGRESS_STEPS};
  cr_assert_eq(gk_loop_init(&lp, &o), 0);
  gk_replay_verdict rv;
  cr_assert_eq(gk_replay_run(&r, NULL, 700, &lp, NULL, NULL, &rv), 0);
  const gk_sim *sim = gk_web_replay_sim(w);
  gk_buf_writer bw;
  gk_buf_writer_init(&bw);
  sim->write_state(gk_loop_state(&lp), &bw.w);
  size_t alen = 0;
  uint8_t *a = gk_buf_writer_take(&bw, &alen);
  void *st = NULL;
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_state_patch_add(sim, gk_web_replay_cfg(w), gk_loop_state(&lp),
                                  "players[0].kills", 1, &st, err, sizeof err),
               0, "%s", err);
  sim->write_state(st, &bw.w);
  size_t blen = 0;
  uint8_t *pb = gk_buf_writer_take(&bw, &blen);
  sim->destroy(st);
  uint32_t n = 0;
  const uint8_t *m = gk_web_replay_state_of(w, a, alen, &n);
  cr_assert_not_null(m, "%s", gk_web_replay_error(w));
  cr_assert_eq(gk_load_le64(m + 12), lp.last_hash);
  const char *d = gk_web_replay_diff(w, a, alen, pb, blen, 10);
  cr_assert_not_null(d, "%s", gk_web_replay_error(w));
  cr_assert(strstr(d, "\"total\":1") != NULL, "%s", d);
  cr_assert(strstr(d, "\"path\":\"players[0].kills\"") != NULL, "%s", d);
  cr_assert_null(gk_web_replay_state_of(w, a, alen / 2, &n));
  cr_assert_null(gk_web_replay_diff(w, a, alen / 2, pb, blen, 10));
  free(a);
  free(pb);
  gk_loop_close(&lp);
  gk_replay_close(&r);
  gk_web_replay_free(w);
  free(b);
}
