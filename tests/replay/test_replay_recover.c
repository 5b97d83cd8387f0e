/* test_replay_recover.c: recovering the .gkr.tmp a crash leaves behind
 * (gk_replay_recover), the cut-short footer it writes (read back by the
 * reader, checked like every other byte), and the deferred writer whose
 * chunks the server writes on its thread pool. The tiny test genre runs
 * the verification. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "gk_replay.h"

static void paths(char *dir, char *tmp, char *out, size_t cap) {
  fixture_tmpdir(dir, cap);
  snprintf(tmp, cap, "%s/m.gkr.tmp", dir);
  snprintf(out, cap, "%s/m.gkr", dir);
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Steps in the complete blocks that fit in `cut` bytes of `b`. */
static uint64_t steps_within(const uint8_t *b, size_t len, size_t cut,
                             size_t *keep) {
  gk_replay r;
  gk_replay_open_bytes(&r, b, len);
  uint64_t steps = 0;
  size_t pos = fixture_block_at(b, len, 1);
  *keep = pos;
  for (uint32_t seq = 1;; seq++) {
    size_t at = fixture_block_at(b, len, seq);
    if (b[at] != 'S') break;
    uint32_t plen = (uint32_t)b[at + 8] | (uint32_t)b[at + 9] << 8 |
                    (uint32_t)b[at + 10] << 16 | (uint32_t)b[at + 11] << 24;
    if (at + 20 + plen > cut) break;
    steps += (uint32_t)b[at + 20] | (uint32_t)b[at + 21] << 8 |
             (uint32_t)b[at + 22] << 16 | (uint32_t)b[at + 23] << 24;
    *keep = at + 20 + plen;
  }
  gk_replay_close(&r);
  return steps;
}

Test(replay_recover,
     a_file_cut_anywhere_is_recovered_up_to_its_last_complete_block) {
  size_t len;
  uint8_t *b = fixture_tiny_replay(2, 700, 64, 3, UINT64_MAX, &len);
  char dir[256], tmp[300], out[300];
  paths(dir, tmp, out, sizeof tmp);
  size_t header_end = fixture_block_at(b, len, 1);
  /* every block boundary and its neighbours, and some offsets inside */
  for (size_t cut = header_end; cut < len; cut += 97) {
    size_t keep = 0;
    uint64_t want = steps_within(b, len, cut, &keep);
    cr_assert_eq(fixture_write_file(tmp, b, cut), 0);
    gk_replay_recovery rec;
    cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_OK,
                 "cut %zu: %s", cut, rec.message);
    cr_assert_eq(rec.steps, want, "cut %zu", cut);
    cr_assert_eq(rec.steps_verified, want);
    cr_assert_eq(rec.kept, keep, "cut %zu", cut);
    cr_assert_eq(rec.cut.dropped, cut - keep);
    cr_assert_eq(rec.cut.code, GK_ETRUNC);
    gk_replay r;
    cr_assert_eq(gk_replay_open_file(&r, out), 0, "%s", r.damage.what);
    cr_assert(r.complete && r.cut_short);
    cr_assert_eq(r.steps, want);
    cr_assert_eq(r.cut.code, GK_ETRUNC);
    cr_assert_eq(r.cut.dropped, cut - keep);
    cr_assert(strstr(r.cut.reason, "cut short") != NULL, "%s", r.cut.reason);
    gk_replay_close(&r);
    /* the crashed file is not changed */
    size_t tlen;
    uint8_t *t = fixture_read_file(tmp, &tlen);
    cr_assert_eq(tlen, cut);
    cr_assert_eq(memcmp(t, b, cut), 0);
    free(t);
  }
  free(b);
}

Test(replay_recover, a_corrupt_block_ends_the_recovery_and_the_footer_says_so) {
  size_t len;
  uint8_t *b = fixture_tiny_replay(2, 500, 100, 5, UINT64_MAX, &len);
  size_t third = fixture_block_at(b, len, 3);
  b[third + 40] ^= 0x10;
  char dir[256], tmp[300], out[300];
  paths(dir, tmp, out, sizeof tmp);
  cr_assert_eq(fixture_write_file(tmp, b, len), 0);
  gk_replay_recovery rec;
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_OK, "%s",
               rec.message);
  cr_assert_eq(rec.steps, 200);
  cr_assert_eq(rec.cut.code, GK_ECORRUPT);
  cr_assert_eq(rec.cut.offset, third);
  cr_assert_eq(rec.kept, third);
  cr_assert_eq(rec.cut.dropped, len - third);
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, out), 0);
  cr_assert(r.cut_short);
  cr_assert(strstr(r.cut.reason, "checksum") != NULL, "%s", r.cut.reason);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK);
  cr_assert_eq(v.steps_checked, 200);
  gk_replay_close(&r);
  free(b);
}

Test(replay_recover, nothing_is_written_without_a_header_or_when_a_step_lies) {
  char dir[256], tmp[300], out[300];
  paths(dir, tmp, out, sizeof tmp);
  gk_replay_recovery rec;
  /* no file, an empty file, the preamble alone, garbage */
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_INVALID);
  cr_assert_eq(rec.code, GK_ENOTFOUND);
  size_t len;
  uint8_t *b = fixture_tiny_replay(1, 300, 64, 9, 150, &len);
  size_t header_end = fixture_block_at(b, len, 1);
  size_t sizes[] = {0, 16, header_end - 1};
  for (size_t i = 0; i < 3; i++) {
    cr_assert_eq(fixture_write_file(tmp, b, sizes[i]), 0);
    cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec),
                 GK_REPLAY_INVALID);
    cr_assert(strstr(rec.message, "no valid header") != NULL, "%s",
              rec.message);
    cr_assert(!exists(out));
  }
  /* step 150's input was changed after its hash was taken: the kept steps
   * do not verify, so nothing is published */
  cr_assert_eq(fixture_write_file(tmp, b, len - 30), 0);
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec),
               GK_REPLAY_MISMATCH);
  cr_assert(strstr(rec.message, "step 150") != NULL, "%s", rec.message);
  cr_assert(!exists(out));
  char part[320];
  snprintf(part, sizeof part, "%s.part", out);
  cr_assert(!exists(part));
  free(b);
}

Test(replay_recover, a_complete_file_is_copied_and_an_old_footer_is_replaced) {
  size_t len;
  uint8_t *b = fixture_tiny_replay(2, 300, 64, 4, UINT64_MAX, &len);
  char dir[256], tmp[300], out[300];
  paths(dir, tmp, out, sizeof tmp);
  cr_assert_eq(fixture_write_file(tmp, b, len), 0);
  gk_replay_recovery rec;
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_OK);
  cr_assert(rec.complete);
  size_t olen;
  uint8_t *o = fixture_read_file(out, &olen);
  cr_assert_eq(olen, len);
  cr_assert_eq(memcmp(o, b, len), 0);
  free(o);
  /* bytes after the footer: the footer is dropped with them and a
   * cut-short footer takes its place */
  uint8_t *more = malloc(len + 7);
  memcpy(more, b, len);
  memset(more + len, 0xab, 7);
  cr_assert_eq(fixture_write_file(tmp, more, len + 7), 0);
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_OK, "%s",
               rec.message);
  cr_assert(!rec.complete);
  cr_assert_eq(rec.steps, 300);
  cr_assert_eq(rec.cut.code, GK_EPROTO);
  cr_assert_eq(rec.cut.dropped, 36 + 7); /* the 16-byte footer block + 7 */
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, out), 0, "%s", r.damage.what);
  cr_assert(r.cut_short);
  gk_replay_close(&r);
  free(more);
  free(b);
}

/* `path` holds exactly `len` bytes of `want`. */
static void same_bytes(const char *path, const void *want, size_t len,
                       const char *what) {
  size_t n;
  uint8_t *got = fixture_read_file(path, &n);
  cr_assert(n == len && memcmp(got, want, len) == 0, "%s: %s was changed", what,
            path);
  free(got);
}

Test(replay_recover, recovering_anew_never_replaces_a_replay_of_that_name) {
  size_t len;
  uint8_t *b = fixture_tiny_replay(2, 300, 64, 4, UINT64_MAX, &len);
  char dir[256], tmp[300], out[300], part[320], other[320];
  paths(dir, tmp, out, sizeof tmp);
  snprintf(part, sizeof part, "%s.part", out);
  snprintf(other, sizeof other, "%s/m.recovered.gkr", dir);
  static const char published[] = "the replay published under this name";
  cr_assert_eq(fixture_write_file(tmp, b, len - 100), 0);
  cr_assert_eq(fixture_write_file(out, published, sizeof published), 0);
  gk_replay_recovery rec;
  cr_assert_eq(gk_replay_recover_new(tmp, out, &tiny_sim, &rec),
               GK_REPLAY_INVALID, "recovered over %s", out);
  cr_assert_eq(rec.code, GK_EEXIST);
  cr_assert(strstr(rec.message, "exists already") != NULL, "%s", rec.message);
  same_bytes(out, published, sizeof published, "a recovery to a taken name");
  same_bytes(tmp, b, len - 100, "a recovery to a taken name");
  cr_assert(!exists(part));
  /* another name is free: recovered there as gk_replay_recover would */
  cr_assert_eq(gk_replay_recover_new(tmp, other, &tiny_sim, &rec), GK_REPLAY_OK,
               "%s", rec.message);
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, other), 0, "%s", r.damage.what);
  cr_assert(r.complete && r.cut_short);
  cr_assert_eq(r.steps, rec.steps);
  gk_replay_close(&r);
  same_bytes(out, published, sizeof published, "a recovery to another name");
  cr_assert(!exists(part));
  unlink(tmp);
  unlink(out);
  unlink(other);
  rmdir(dir);
  free(b);
}

/* tiny_sim, but its first step publishes a file at `race_path`: another
 * writer taking the name while the recovered steps are verified. */
static const char *race_path;
static const char race_bytes[] = "published while the steps were verified";
static void racing_step(void *state, const gk_step_input *in) {
  if (race_path != NULL) {
    cr_assert_eq(fixture_write_file(race_path, race_bytes, sizeof race_bytes),
                 0);
    race_path = NULL;
  }
  tiny_sim.step(state, in);
}

Test(replay_recover, a_replay_published_while_recovering_anew_is_kept_too) {
  size_t len;
  uint8_t *b = fixture_tiny_replay(2, 300, 64, 4, UINT64_MAX, &len);
  char dir[256], tmp[300], out[300], part[320];
  paths(dir, tmp, out, sizeof tmp);
  snprintf(part, sizeof part, "%s.part", out);
  cr_assert_eq(fixture_write_file(tmp, b, len - 100), 0);
  gk_sim racing = tiny_sim;
  racing.step = racing_step;
  race_path = out;
  gk_replay_recovery rec;
  cr_assert_eq(gk_replay_recover_new(tmp, out, &racing, &rec),
               GK_REPLAY_INVALID, "recovered over %s", out);
  cr_assert_null(race_path, "no step was verified");
  cr_assert_eq(rec.code, GK_EEXIST, "%s", rec.message);
  same_bytes(out, race_bytes, sizeof race_bytes, "a recovery that lost a race");
  cr_assert(!exists(part));
  unlink(tmp);
  unlink(out);
  rmdir(dir);
  free(b);
}

/* The cut-short footer of a recovered file, at `*foot` (its block). */
static uint8_t *recovered(size_t *len, size_t *foot) {
  size_t blen;
  uint8_t *b = fixture_tiny_replay(2, 200, 64, 6, UINT64_MAX, &blen);
  char dir[256], tmp[300], out[300];
  paths(dir, tmp, out, sizeof tmp);
  cr_assert_eq(fixture_write_file(tmp, b, blen - 50), 0);
  gk_replay_recovery rec;
  cr_assert_eq(gk_replay_recover(tmp, out, &tiny_sim, &rec), GK_REPLAY_OK);
  free(b);
  uint8_t *o = fixture_read_file(out, len);
  *foot = fixture_block_at(o, *len, 4);
  cr_assert_eq(o[*foot], 'F');
  return o;
}

Test(replay_recover, the_cut_short_footer_is_checked_like_every_other_byte) {
  size_t len, foot;
  uint8_t *o = recovered(&len, &foot);
  gk_replay r;
  cr_assert_eq(gk_replay_open_bytes(&r, o, len), 0);
  cr_assert(r.cut_short);
  gk_replay_close(&r);
  /* flags, code, reason length, a NUL in the reason: each re-signed so
   * only the footer checks can catch it */
  size_t at[] = {12 + 16, 12 + 20, 12 + 40, 12 + 44};
  uint8_t val[] = {3, 0, 9, 0};
  for (size_t i = 0; i < 4; i++) {
    uint8_t *c = malloc(len);
    memcpy(c, o, len);
    if (i == 1)
      memset(c + foot + at[i], 0, 4); /* code 0: not an error */
    else
      c[foot + at[i]] = val[i];
    fixture_resign_block(c, len, foot);
    cr_assert_eq(gk_replay_open_bytes(&r, c, len), GK_EPROTO, "case %zu", i);
    cr_assert(!r.complete);
    cr_assert_eq(r.steps, 192); /* the steps before it still read */
    gk_replay_close(&r);
    free(c);
  }
  free(o);
}

/* --- the deferred writer ------------------------------------------------- */

/* A tiny replay in memory (src) and a deferred file writer for the same
 * match at `out`, whose .tmp is `tmp`. */
typedef struct dcase {
  uint8_t *bytes;
  size_t len;
  char dir[256], tmp[300], out[300], err[GK_REPLAY_MSG_MAX];
  gk_replay src;
  tiny_cfg cfg;
  gk_replay_writer w;
} dcase;

static void dcase_open(dcase *c, uint32_t players, uint64_t steps) {
  c->bytes = fixture_tiny_replay(players, steps, 256, 8, UINT64_MAX, &c->len);
  paths(c->dir, c->tmp, c->out, sizeof c->tmp);
  cr_assert_eq(gk_replay_open_bytes(&c->src, c->bytes, c->len), 0);
  cr_assert_eq(
      gk_replay_prepare(&c->src, &tiny_sim, &c->cfg, c->err, sizeof c->err), 0,
      "%s", c->err);
  gk_replay_meta meta = {&tiny_sim, &c->cfg,        c->src.seed,
                         players,   "test fixture", NULL};
  cr_assert_eq(
      gk_replay_writer_open(&c->w, c->out, &meta, c->err, sizeof c->err), 0,
      "%s", c->err);
  cr_assert_eq(gk_replay_writer_defer(&c->w), 0);
}

static void dcase_close(dcase *c) {
  if (tiny_sim.config_free != NULL) tiny_sim.config_free(&c->cfg);
  gk_replay_close(&c->src);
  free(c->bytes);
}

/* Appends recorded step `s` of c->src to c->w. */
static int dcase_append(dcase *c, uint64_t s) {
  gk_replay_step st;
  cr_assert_eq(gk_replay_step_at(&c->src, s, &st, NULL), 0);
  gk_step_input in = {s, st.active_mask, st.flags, c->src.players, st.inputs};
  return gk_replay_writer_append(&c->w, &in, st.hash);
}

Test(replay_recover, a_deferred_writer_writes_the_same_replay_chunk_by_chunk) {
  dcase c;
  dcase_open(&c, 2, 600);
  for (uint64_t s = 0; s < c.src.steps; s++) {
    cr_assert_eq(dcase_append(&c, s), 0);
    if (s % 100 == 99) { /* a flush interval: cut and write what there is */
      gk_replay_chunk k;
      cr_assert_eq(gk_replay_writer_take_chunk(&c.w, &k), 0);
      cr_assert_eq(k.steps, s + 1);
      cr_assert_eq(gk_replay_chunk_write(&k, 1), 0);
      gk_replay_chunk_free(&k);
      /* a crash now loses nothing written: the .tmp recovers to here */
      gk_replay_recovery rec;
      cr_assert_eq(gk_replay_recover(c.tmp, c.out, &tiny_sim, &rec),
                   GK_REPLAY_OK, "%s", rec.message);
      cr_assert_eq(rec.steps, s + 1);
      cr_assert_eq(rec.cut.dropped, 0);
    }
  }
  cr_assert_eq(gk_replay_writer_finish(&c.w, c.err, sizeof c.err), 0, "%s",
               c.err);
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, c.out), 0, "%s", r.damage.what);
  cr_assert(!r.cut_short);
  cr_assert_eq(r.steps, 600);
  cr_assert_eq(r.final_hash, c.src.final_hash);
  gk_replay_verdict v;
  cr_assert_eq(gk_replay_verify(&r, &tiny_sim, NULL, NULL, &v), GK_REPLAY_OK);
  gk_replay_close(&r);
  dcase_close(&c);
}

Test(replay_recover, a_failed_chunk_write_makes_the_writer_refuse_and_abort) {
  dcase c;
  dcase_open(&c, 1, 10);
  cr_assert_eq(dcase_append(&c, 0), 0);
  gk_replay_chunk k;
  cr_assert_eq(gk_replay_writer_take_chunk(&c.w, &k), 0);
  k.fd = -1; /* the write fails (EBADF), as a full disk would */
  cr_assert_eq(gk_replay_chunk_write(&k, 1), GK_EIO);
  cr_assert_neq(k.sys_errno, 0);
  gk_replay_chunk_free(&k);
  gk_replay_writer_fail(&c.w, k.sys_errno);
  cr_assert_eq(dcase_append(&c, 1), GK_EIO);
  cr_assert_neq(gk_replay_writer_finish(&c.w, c.err, sizeof c.err), 0);
  cr_assert(!exists(c.tmp) && !exists(c.out));
  dcase_close(&c);
}
