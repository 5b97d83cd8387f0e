/* test_forensics.c: field paths, the field diff, patching a field by path,
 * gk_loop_replace and the sync test, over both genres and a test genre
 * that keeps a hidden counter outside its canonical state. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_loop.h"
#include "gk_state_diff.h"
#include "gk_synctest.h"

/* --- a genre with a hidden counter ---------------------------------------
 * step: hidden++, x += hidden. write_state writes x and steps, not hidden;
 * read_state can only set hidden to 0. */
typedef struct hid_state {
  int64_t x;
  uint64_t steps;
  uint32_t hidden;
} hid_state;

static void hid_cfg_default(void *cfg) {
  memset(cfg, 0, 8);
}
static int hid_cfg_set(void *cfg, const char *key, const gk_value *v, char *err,
                       size_t errlen) {
  (void)cfg, (void)v;
  return gk_errf(err, errlen, GK_ENOTFOUND, "no key %s", key);
}
static void hid_cfg_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  (void)cfg, (void)cb, (void)ctx;
}
static void *hid_create(const void *cfg, uint64_t seed, uint32_t players,
                        char *err, size_t errlen) {
  (void)cfg, (void)seed, (void)players, (void)err, (void)errlen;
  return calloc(1, sizeof(hid_state));
}
static void hid_step(void *state, const gk_step_input *in) {
  hid_state *s = state;
  (void)in;
  s->hidden++;
  s->x += s->hidden;
  s->steps++;
}
static void hid_write(const void *state, gk_writer *w) {
  const hid_state *s = state;
  gk_write_i64(w, "x", s->x);
  gk_write_u64(w, "steps", s->steps);
}
static void *hid_read(const void *cfg, gk_reader *r, char *err, size_t errlen) {
  (void)cfg;
  hid_state *s = calloc(1, sizeof *s);
  s->x = gk_read_i64(r);
  s->steps = gk_read_u64(r);
  if (r->err != 0) {
    free(s);
    gk_errf(err, errlen, r->err, "hidden: truncated");
    return NULL;
  }
  return s;
}
static const gk_sim hidden_sim = {
    .abi = GK_SIM_ABI,
    .name = "hidden",
    .version = 1,
    .step_seconds = {1, 60},
    .input_size = 1,
    .players_min = 1,
    .players_max = 2,
    .config_size = 8,
    .config_default = hid_cfg_default,
    .config_set = hid_cfg_set,
    .config_each = hid_cfg_each,
    .create = hid_create,
    .destroy = free,
    .step = hid_step,
    .write_sample = hid_write,
    .write_state = hid_write,
    .read_state = hid_read,
};

/* --- helpers ------------------------------------------------------------- */

typedef struct path_list {
  gk_writer w; /* must be first */
  gk_path path;
  char (*paths)[GK_PATH_MAX];
  size_t n, cap;
} path_list;

static void list_cb(gk_writer *w, gk_field_kind kind, const char *name,
                    uint64_t value, const uint8_t *bytes, size_t len) {
  path_list *l = (path_list *)w;
  (void)bytes;
  if (!gk_path_feed(&l->path, kind, name, value, len) || l->path.offset > 0)
    return;
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->paths = realloc(l->paths, l->cap * sizeof *l->paths);
    cr_assert_not_null(l->paths);
  }
  memcpy(l->paths[l->n++], l->path.text, GK_PATH_MAX);
}

static int cmp_path(const void *a, const void *b) {
  return strcmp(a, b);
}

/* A run of `sim` with its default config and bots, after `steps` steps. */
static void run_bots(gk_loop *loop, const gk_sim *sim, void *cfg,
                     uint32_t players, uint64_t steps) {
  char err[GK_ERRMSG_MAX] = "";
  sim->config_default(cfg);
  cr_assert_eq(gk_loop_init(loop, NULL), 0);
  cr_assert_eq(gk_loop_start(loop, sim, cfg, 7, players, err, sizeof err), 0,
               "%s", err);
  gk_bot_input *bots = malloc(sizeof *bots);
  cr_assert_eq(gk_bot_input_init(bots, sim, cfg, 7, players), 0);
  cr_assert_eq(gk_loop_frame(loop, &bots->base, gk_budget_steps(steps), 0),
               (int)steps);
  free(bots);
}

/* Genre g's bots (at most 3 players) run 900 steps in loop; returns the
 * config (free with genre_done), or NULL past the last genre. */
static void *genre_run(size_t g, gk_loop *loop) {
  const gk_sim *sim = gk_genres[g];
  if (sim == NULL) return NULL;
  void *cfg = calloc(1, sim->config_size);
  run_bots(loop, sim, cfg, sim->players_max < 3 ? sim->players_max : 3, 900);
  return cfg;
}

static void genre_done(size_t g, gk_loop *loop, void *cfg) {
  gk_loop_close(loop);
  if (gk_genres[g]->config_free) gk_genres[g]->config_free(cfg);
  free(cfg);
}

static uint8_t *bytes_of(const gk_sim *sim, const void *state, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(state, &b.w);
  return gk_buf_writer_take(&b, len);
}

/* --- tests ---------------------------------------------------------------- */

Test(field_paths, name_groups_list_items_and_scalar_list_items) {
  path_list l = {.w.field = list_cb};
  gk_path_init(&l.path);
  gk_write_u8(&l.w, "count", 2);
  gk_write_begin(&l.w, "players", 0);
  gk_write_begin(&l.w, "weapons", 1);
  gk_write_u8(&l.w, "level", 3);
  gk_write_end(&l.w);
  gk_write_begin(&l.w, "options", 2);
  gk_write_u8(&l.w, NULL, 9);
  gk_write_end(&l.w);
  gk_write_begin(&l.w, "pos", UINT64_MAX);
  gk_write_i32(&l.w, "x", 1);
  gk_write_end(&l.w);
  gk_write_end(&l.w);
  gk_write_bytes(&l.w, "undo", "ab", 2);
  gk_write_bytes(&l.w, "undo", "c", 1);
  gk_write_u8(&l.w, "after", 1);
  const char *want[] = {"count",
                        "players[0].weapons[1].level",
                        "players[0].options[2]",
                        "players[0].pos.x",
                        "undo",
                        "after"};
  cr_assert_eq(l.n, 6, "the second undo piece continues the first");
  for (size_t i = 0; i < 6; i++) cr_assert_str_eq(l.paths[i], want[i]);
  cr_assert_eq(l.path.truncated, 0);
  free(l.paths);
}

Test(field_paths, every_field_of_every_genre_has_a_unique_path) {
  gk_loop loop;
  void *cfg;
  for (size_t g = 0; (cfg = genre_run(g, &loop)) != NULL; g++) {
    const gk_sim *sim = gk_genres[g];
    path_list l = {.w.field = list_cb};
    gk_path_init(&l.path);
    sim->write_state(gk_loop_state(&loop), &l.w);
    cr_assert_gt(l.n, 5, "%s", sim->name);
    qsort(l.paths, l.n, GK_PATH_MAX, cmp_path);
    for (size_t i = 1; i < l.n; i++)
      cr_assert_str_neq(l.paths[i - 1], l.paths[i], "%s: %s twice", sim->name,
                        l.paths[i]);
    if (strcmp(sim->name, "survivors") == 0) {
      cr_assert_not_null(bsearch("players[2].weapons[1].level", l.paths, l.n,
                                 GK_PATH_MAX, cmp_path));
      cr_assert_not_null(bsearch("players[0].options[2]", l.paths, l.n,
                                 GK_PATH_MAX, cmp_path));
    }
    free(l.paths);
    genre_done(g, &loop, cfg);
  }
}

Test(state_diff, a_patched_field_is_the_one_difference_named) {
  const gk_sim *sim = gk_genre_find("survivors");
  void *cfg = calloc(1, sim->config_size);
  gk_loop loop;
  run_bots(&loop, sim, cfg, 3, 600);
  char err[GK_ERRMSG_MAX] = "";
  void *patched = NULL;
  cr_assert_eq(gk_state_patch_add(sim, cfg, gk_loop_state(&loop),
                                  "players[1].health", -1, &patched, err,
                                  sizeof err),
               0, "%s", err);
  size_t la, lb;
  uint8_t *a = bytes_of(sim, gk_loop_state(&loop), &la);
  uint8_t *b = bytes_of(sim, patched, &lb);
  gk_diff_field f[4];
  gk_state_diff d;
  gk_state_diff_init(&d, f, 4);
  cr_assert_eq(gk_state_diff_run(&d, sim, cfg, a, la, b, lb, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(d.total, 1);
  cr_assert_str_eq(f[0].path, "players[1].health");
  cr_assert_eq((int64_t)f[0].a - 1, (int64_t)f[0].b);
  size_t off;
  cr_assert_eq(
      gk_state_field_at(sim, patched, "players[1].health", &off, NULL, NULL),
      0);
  cr_assert_eq(d.first_byte, off);
  char text[256];
  gk_state_diff_text(&d, text, sizeof text);
  cr_assert(strstr(text, "players[1].health: ") != NULL, "%s", text);
  cr_assert(strstr(text, "1 field differs") != NULL, "%s", text);
  void *none = NULL;
  cr_assert_eq(gk_state_patch_add(sim, cfg, patched, "players[9].health", 1,
                                  &none, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert_null(none);
  sim->destroy(patched);
  patched = NULL;
  /* a truncated side is reported as unreadable, naming it */
  cr_assert_eq(
      gk_state_diff_run(&d, sim, cfg, a, la, b, lb / 2, err, sizeof err),
      GK_EINVAL);
  cr_assert_eq(d.unreadable, 'b');
  cr_assert(strncmp(err, "b: unreadable state", 19) == 0, "%s", err);
  /* the loop takes the patched state in place, keeping its step and hash */
  uint64_t steps = loop.steps, h = loop.last_hash;
  cr_assert_eq(gk_state_patch_add(sim, cfg, gk_loop_state(&loop),
                                  "players[1].health", -1, &patched, err,
                                  sizeof err),
               0);
  cr_assert_eq(gk_loop_replace(&loop, patched), 0);
  cr_assert_eq(loop.steps, steps);
  cr_assert_eq(loop.last_hash, h);
  free(a);
  free(b);
  gk_loop_close(&loop);
  free(cfg);
}

Test(state_diff, lists_of_different_length_and_bytes_fields_are_compared) {
  const gk_sim *sim = gk_genre_find("survivors");
  void *cfg = calloc(1, sim->config_size);
  gk_loop l1, l2;
  run_bots(&l1, sim, cfg, 2, 300);
  run_bots(&l2, sim, cfg, 2, 700);
  size_t la, lb;
  uint8_t *a = bytes_of(sim, gk_loop_state(&l1), &la);
  uint8_t *b = bytes_of(sim, gk_loop_state(&l2), &lb);
  gk_state_diff d;
  gk_state_diff_init(&d, NULL, 0);
  cr_assert_eq(gk_state_diff_run(&d, sim, cfg, a, la, b, lb, NULL, 0), 0);
  cr_assert_gt(d.total, 10);
  cr_assert_eq(d.count, 0, "no storage: counted only");
  char *json = malloc(gk_state_diff_json(&d, NULL, 0) + 1);
  gk_state_diff_json(&d, json, gk_state_diff_json(&d, NULL, 0) + 1);
  cr_assert(strncmp(json, "{\"total\":", 9) == 0, "%s", json);
  free(json);
  free(a);
  free(b);
  gk_loop_close(&l1);
  gk_loop_close(&l2);
  if (sim->config_free) sim->config_free(cfg);
  free(cfg);
  /* push-puzzle: a byte of the board is named as cells[i] */
  const gk_sim *pp = gk_genre_find("push-puzzle");
  void *pcfg = calloc(1, pp->config_size);
  run_bots(&l1, pp, pcfg, 1, 10);
  a = bytes_of(pp, gk_loop_state(&l1), &la);
  size_t off;
  cr_assert_eq(
      gk_state_field_at(pp, gk_loop_state(&l1), "cells[5]", &off, NULL, NULL),
      0);
  b = malloc(la);
  memcpy(b, a, la);
  b[off] ^= 1;
  gk_diff_field f;
  gk_state_diff_init(&d, &f, 1);
  int rc = gk_state_diff_run(&d, pp, pcfg, a, la, b, la, NULL, 0);
  if (rc == 0) { /* the flipped cell may not be a valid board cell */
    cr_assert_str_eq(f.path, "cells[5]");
    cr_assert_eq(d.total, 1);
  } else {
    cr_assert_eq(d.unreadable, 'b');
  }
  cr_assert_eq(d.first_byte, off);
  free(a);
  free(b);
  gk_loop_close(&l1);
  if (pp->config_free) pp->config_free(pcfg);
  free(pcfg);
}

Test(synctest, both_genres_pass) {
  for (size_t g = 0; gk_genres[g] != NULL; g++) {
    const gk_sim *sim = gk_genres[g];
    void *cfg = calloc(1, sim->config_size);
    sim->config_default(cfg);
    gk_synctest_opts o = {sim->players_max < 3 ? sim->players_max : 3, 5, 1500,
                          45};
    gk_synctest_result res;
    char err[GK_ERRMSG_MAX] = "", line[512];
    cr_assert_eq(gk_synctest_run(sim, cfg, &o, &res, err, sizeof err), 0,
                 "%s: %s", sim->name, err);
    gk_synctest_describe(&res, line, sizeof line);
    cr_assert(res.ok, "%s: %s", sim->name, line);
    cr_assert_eq(res.steps_run, 1500);
    cr_assert_eq(res.checkpoints, 34);
    if (sim->config_free) sim->config_free(cfg);
    free(cfg);
  }
}

Test(synctest, a_hidden_counter_fails_naming_the_step_and_field) {
  uint64_t cfg = 0;
  gk_synctest_opts o = {1, 1, 100, 10};
  gk_synctest_result res;
  char err[GK_ERRMSG_MAX] = "", line[512];
  cr_assert_eq(gk_synctest_run(&hidden_sim, &cfg, &o, &res, err, sizeof err), 0,
               "%s", err);
  gk_synctest_describe(&res, line, sizeof line);
  cr_assert(!res.ok);
  cr_assert_eq(res.at_readback, 0);
  /* the read-back at step 0 copies hidden == 0 faithfully; the one after 10
   * steps loses hidden == 10, so B's x parts at step 10 */
  cr_assert_eq(res.fail_step, 10, "%s", line);
  cr_assert_eq(res.checkpoint, 10);
  cr_assert_str_eq(res.path, "x");
  cr_assert_eq(res.a - res.b, 10);
  cr_assert(strstr(line, "runs part at step 10") != NULL, "%s", line);
  o.every = 0;
  cr_assert_eq(gk_synctest_run(&hidden_sim, &cfg, &o, &res, err, sizeof err),
               GK_EINVAL);
}

/* A writer that rebuilds the canonical bytes from field callbacks, or
 * (with a stage) from flushes. */
typedef struct rebuild {
  gk_writer w; /* must be first */
  uint8_t bytes[1 << 16];
  size_t len;
  uint8_t stage[16];
} rebuild;

static void rebuild_put(rebuild *r, const uint8_t *p, size_t n) {
  cr_assert_leq(r->len + n, sizeof r->bytes);
  memcpy(r->bytes + r->len, p, n);
  r->len += n;
}

static void rebuild_field(gk_writer *w, gk_field_kind kind, const char *name,
                          uint64_t value, const uint8_t *bytes, size_t len) {
  (void)name;
  static const unsigned width[] = {1, 2, 4, 8, 1, 2, 4, 8, 1};
  rebuild *r = (rebuild *)w;
  if (kind == GK_FIELD_BYTES) {
    rebuild_put(r, bytes, len);
  } else if (kind <= GK_FIELD_BOOL) {
    uint8_t le[8];
    gk_store_le(le, value, width[kind]);
    rebuild_put(r, le, width[kind]);
  }
}

static void rebuild_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
  rebuild_put((rebuild *)w, bytes, len);
}

Test(state_writer, field_callbacks_and_a_tiny_stage_carry_the_hashed_bytes) {
  gk_loop loop;
  void *cfg;
  for (size_t g = 0; (cfg = genre_run(g, &loop)) != NULL; g++) {
    const gk_sim *sim = gk_genres[g];
    const void *st = gk_loop_state(&loop);
    size_t len;
    uint8_t *want = bytes_of(sim, st, &len);
    rebuild *f = calloc(1, sizeof *f), *t = calloc(1, sizeof *t);
    f->w.field = rebuild_field;
    sim->write_state(st, &f->w);
    t->w.buf = t->stage;
    t->w.cap = sizeof t->stage;
    t->w.flush = rebuild_flush;
    sim->write_state(st, &t->w);
    gk_writer_flush(&t->w);
    cr_assert_eq(f->len, len, "%s", sim->name);
    cr_assert_eq(memcmp(f->bytes, want, len), 0, "%s", sim->name);
    cr_assert_eq(t->len, len, "%s", sim->name);
    cr_assert_eq(memcmp(t->bytes, want, len), 0, "%s", sim->name);
    /* the hash covers what a hashing writer's stage is handed */
    memset(t, 0, sizeof *t);
    t->w.buf = t->stage;
    t->w.cap = sizeof t->stage;
    t->w.flush = rebuild_flush;
    t->w.hashing = 1;
    sim->write_state(st, &t->w);
    gk_writer_flush(&t->w);
    gk_hasher h;
    cr_assert_eq(gk_hasher_init(&h), 0);
    cr_assert_eq(gk_sim_hash(sim, st, &h), gk_hash_bytes(t->bytes, t->len),
                 "%s", sim->name);
    gk_hasher_close(&h);
    free(f);
    free(t);
    free(want);
    genre_done(g, &loop, cfg);
  }
}
