/* test_replay_text.c: replays written and read without a cJSON call:
 * gk_replay_header_json, gk_replay_writer_open_text and
 * gk_replay_open_file_known, what the server's thread-pool jobs use. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "gk_replay.h"

static void tiny_meta(gk_replay_meta *m, tiny_cfg *cfg, const char *origin) {
  tiny_sim.config_default(cfg);
  cfg->start = 7;
  memcpy(cfg->label, "text", 5);
  memset(m, 0, sizeof *m);
  m->sim = &tiny_sim;
  m->cfg = cfg;
  m->seed = 99;
  m->players = 2;
  m->origin = origin;
}

/* Steps with every player active, zero inputs but the first byte. */
static void append_steps(gk_replay_writer *w, uint64_t n) {
  uint8_t in[4];
  for (uint64_t s = 0; s < n; s++) {
    memset(in, 0, sizeof in);
    in[0] = (uint8_t)s;
    gk_step_input si = {s, 3u, 0, 2, in};
    cr_assert_eq(gk_replay_writer_append(w, &si, 1000 + s), 0);
  }
}

Test(replay_text, the_header_text_is_what_a_writer_writes) {
  gk_replay_meta m;
  tiny_cfg cfg;
  tiny_meta(&m, &cfg, "a test");
  char err[GK_REPLAY_MSG_MAX];
  char *text = gk_replay_header_json(&m, err, sizeof err);
  cr_assert_not_null(text, "%s", err);
  gk_replay_writer w;
  cr_assert_eq(gk_replay_writer_open_mem(&w, &m, err, sizeof err), 0);
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0);
  size_t len = 0;
  uint8_t *bytes = gk_replay_writer_take(&w, &len);
  size_t at = fixture_block_at(bytes, len, 0);
  size_t plen = (size_t)(fixture_get_u64(bytes + at + 8) & 0xffffffffu);
  cr_assert_eq(plen, strlen(text));
  cr_assert(memcmp(bytes + at + 12, text, plen) == 0);
  free(bytes);
  free(text);
  m.cfg = NULL;
  cr_assert_null(gk_replay_header_json(&m, err, sizeof err), "no config");
}

Test(replay_text, a_text_writer_and_a_known_reader_agree_with_the_others) {
  char dir[256], path[320];
  fixture_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/t.gkr", dir);
  gk_replay_meta m;
  tiny_cfg cfg;
  tiny_meta(&m, &cfg, "text writer");
  char err[GK_REPLAY_MSG_MAX];
  char *text = gk_replay_header_json(&m, err, sizeof err);
  cr_assert_not_null(text, "%s", err);
  gk_replay_meta bare = {&tiny_sim, NULL, 0, 2, NULL, NULL}; /* no config */
  gk_replay_writer w;
  cr_assert_eq(
      gk_replay_writer_open_text(&w, path, &bare, text, 0, err, sizeof err), 0,
      "%s", err);
  w.block_steps = 16;
  append_steps(&w, 40);
  cr_assert_eq(gk_replay_writer_finish(&w, err, sizeof err), 0, "%s", err);
  cr_assert_neq(
      gk_replay_writer_open_text(&w, path, &bare, NULL, 0, err, sizeof err), 0,
      "a text writer needs the text");

  /* the ordinary reader finds the meta's header in it */
  gk_replay r;
  cr_assert_eq(gk_replay_open_file(&r, path), 0, "%s", r.damage.what);
  cr_assert_eq(r.steps, 40);
  cr_assert_eq(r.seed, 99);
  cr_assert_str_eq(r.origin, "text writer");
  tiny_cfg back;
  cr_assert_eq(gk_replay_prepare(&r, &tiny_sim, &back, err, sizeof err), 0);
  cr_assert_eq(back.start, 7);
  if (tiny_sim.config_free != NULL) tiny_sim.config_free(&back);
  gk_replay_close(&r);

  /* the known reader: the same steps, no parsed header */
  gk_replay_known k = {text, 2, tiny_sim.input_size};
  cr_assert_eq(gk_replay_open_file_known(&r, path, &k), 0, "%s", r.damage.what);
  cr_assert(r.header_ok && r.complete);
  cr_assert_null(r.header);
  cr_assert_eq(r.players, 2);
  cr_assert_eq(r.steps, 40);
  gk_replay_step st;
  cr_assert_eq(gk_replay_step_at(&r, 39, &st, NULL), 0);
  cr_assert_eq(st.hash, 1039);
  cr_assert_eq(st.inputs[0], 39);
  gk_replay_close(&r);
  k.header_json = NULL; /* not compared */
  cr_assert_eq(gk_replay_open_file_known(&r, path, &k), 0, "%s", r.damage.what);
  gk_replay_close(&r);

  /* another header's text is damage, at the header */
  char *other = gk_replay_header_json(&m, err, sizeof err);
  other[strlen(other) - 2] ^= 1;
  k.header_json = other;
  cr_assert_eq(gk_replay_open_file_known(&r, path, &k), GK_EMISMATCH);
  cr_assert(!r.header_ok);
  cr_assert_eq(r.damage.offset, GK_REPLAY_PREAMBLE_SIZE + 12);
  gk_replay_close(&r);
  free(other);
  free(text);
  remove(path);
  remove(dir);
}
