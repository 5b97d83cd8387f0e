/* fixture.c: records tiny-genre replays the way the server will: a
 * gk_loop steps the run and each step's merged input and hash go to a
 * gk_replay_writer. */
#include "fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gk_loop.h"
#include "gk_replay.h"

/* Every player's bot, with player 1 inactive on every fifth step. */
typedef struct rec_input {
  gk_input base;
  gk_bot_input bots;
  uint32_t players;
  uint8_t records[4 * 2];
} rec_input;

static int rec_read(gk_input *base, uint64_t step, gk_step_input *out) {
  rec_input *in = (rec_input *)base;
  gk_step_input all;
  in->bots.base.read(&in->bots.base, step, &all);
  memcpy(in->records, all.inputs, 2 * (size_t)in->players);
  uint32_t mask = all.active_mask;
  if (in->players > 1 && step % 5 == 4) mask &= ~2u;
  for (uint32_t p = 0; p < in->players; p++) {
    if (!(mask & (1u << p))) memset(in->records + 2 * p, 0, 2);
  }
  out->step = step;
  out->active_mask = mask;
  out->flags = 0;
  out->players = in->players;
  out->inputs = in->records;
  return 0;
}

uint8_t *fixture_tiny_replay(uint32_t players, uint64_t steps,
                             uint32_t block_steps, uint64_t seed,
                             uint64_t tamper_step, size_t *len) {
  tiny_cfg cfg;
  tiny_sim.config_default(&cfg);
  cfg.start = 11;
  memcpy(cfg.label, "fixture", 8);
  char err[GK_ERRMSG_MAX];
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(
      gk_loop_start(&loop, &tiny_sim, &cfg, seed, players, err, sizeof err), 0,
      "%s", err);
  rec_input in;
  memset(&in, 0, sizeof in);
  in.base.read = rec_read;
  in.players = players;
  cr_assert_eq(gk_bot_input_init(&in.bots, &tiny_sim, &cfg, seed, players), 0);

  gk_replay_meta meta = {&tiny_sim, &cfg, seed, players, "test fixture", NULL};
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open_mem(&w, &meta, err, sizeof err), 0, "%s",
               err);
  w.block_steps = block_steps;
  for (uint64_t s = 0; s < steps; s++) {
    cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(1), 0), 1);
    gk_step_input si;
    /* the records the step just used are still in `in.records` */
    si.step = s;
    si.active_mask = (players > 1 && s % 5 == 4) ? ((1u << players) - 1) & ~2u
                                                 : (1u << players) - 1;
    si.flags = s + 1 == steps ? GK_STEP_MATCH_END : 0;
    si.players = players;
    uint8_t rec[8];
    memcpy(rec, in.records, sizeof rec);
    if (s == tamper_step) rec[0] ^= 0x40; /* player 0 is always active */
    si.inputs = rec;
    cr_assert_eq(gk_replay_writer_append(&w, &si, loop.last_hash), 0);
  }
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0, "%s", err);
  uint8_t *bytes = gk_replay_writer_take(&w, len);
  gk_replay_writer_abort(&w);
  gk_loop_close(&loop);
  cr_assert_not_null(bytes);
  return bytes;
}

int fixture_write_file(const char *path, const void *bytes, size_t len) {
  /* a new file each time: ext4 flushes a file truncated and rewritten in
   * place on close (auto_da_alloc), which makes the exhaustive loops wait */
  unlink(path);
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t n = fwrite(bytes, 1, len, f);
  return (fclose(f) == 0 && n == len) ? 0 : -1;
}

void fixture_tmpdir(char *out, size_t outlen) {
  snprintf(out, outlen, "/tmp/gk-replay-test-XXXXXX");
  cr_assert_not_null(mkdtemp(out));
}

uint8_t *fixture_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  cr_assert_eq(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  cr_assert_geq(n, 0);
  rewind(f);
  uint8_t *bytes = malloc(n > 0 ? (size_t)n : 1);
  cr_assert_not_null(bytes);
  cr_assert_eq(fread(bytes, 1, (size_t)n, f), (size_t)n, "%s", path);
  fclose(f);
  *len = (size_t)n;
  return bytes;
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

uint64_t fixture_get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

void fixture_put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

size_t fixture_block_at(const uint8_t *bytes, size_t len, uint32_t seq) {
  size_t pos = GK_REPLAY_PREAMBLE_SIZE;
  for (uint32_t i = 0;; i++) {
    cr_assert(pos <= len && len - pos >= GK_REPLAY_BLOCK_OVERHEAD,
              "no block %u", seq);
    if (i == seq) return pos;
    pos += GK_REPLAY_BLOCK_OVERHEAD + (size_t)get_u32(bytes + pos + 8);
  }
}

void fixture_resign_block(uint8_t *bytes, size_t len, size_t off) {
  cr_assert(off <= len && len - off >= GK_REPLAY_BLOCK_OVERHEAD);
  size_t plen = get_u32(bytes + off + 8);
  cr_assert_leq(plen, len - off - GK_REPLAY_BLOCK_OVERHEAD);
  fixture_put_u64(bytes + off + 12 + plen,
                  gk_hash_bytes(bytes + off, 12 + plen));
}
