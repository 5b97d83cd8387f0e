/* gk_pp_sim.c: the push-puzzle simulation behind gk_push_puzzle_sim.
 *
 * A run holds the parsed level set (from the config, immutable), the
 * current board, the move counters, each player's hold-to-repeat counter
 * and a bounded undo history. A step walks the players in slot order and
 * gives each at most one turn (see gk_push_puzzle.h for the rules); every
 * turn moves the HUD version.
 *
 * Undo history: one byte per turn, (player << 3) | (pushed << 2) | dir, in
 * a ring of `undo_limit` bytes that drops the oldest turn when full. A move
 * is its own record: undo walks the pusher back and, if it pushed, pulls
 * the box along. The history is written oldest first, so the ring's
 * position in memory never reaches the bytes.
 *
 * Undo digest: a running digest of the history as a stack, kept in the
 * state: a turn e makes d = (d ^ mix(e)) * K, an undo inverts that exactly
 * (d = (d * K^-1) ^ mix(e)), a restart or a new level sets 0; a turn the
 * full ring drops stays in it. The hash covers the digest instead of the
 * history bytes (gk_write_unhashed), so a step's hash costs the same with
 * an empty history as with a full one, while a snapshot still carries every
 * byte undo needs.
 *
 * Box digest: the cells differ from the level's only in box bits, so the
 * board keeps a digest of where the boxes are (XOR of one mix per box
 * cell; a push swaps two terms, gk_pp_rules.c). The hash covers it instead
 * of the cells, so a step's hash does not grow with the board (a 20x20
 * board went through XXH3's long path every step); read_state recomputes
 * it from the cells and refuses a snapshot whose digest disagrees.
 *
 * Canonical state, in this order (all little-endian):
 *   u8 players, u32 level, u16 width, u16 height, u64 box_digest,
 *   width*height cell bytes (GK_PP_* bits; not hashed), u8 pushers, per
 *   pusher u16 x, u16 y, u32 moves,
 *   u32 pushes, bool solved, per player u8 hold_dir (0 none, 1 + GK_PP_DIR)
 *   and u8 hold_steps, u32 undo_len, u64 undo_digest, then undo_len history
 *   bytes (not hashed).
 * The level set itself comes from the config, which read_state is given.
 * read_state checks every field against the set and replays the whole
 * undo history backwards on a scratch board, so restored bytes can never
 * break the board invariant the rules rely on.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gk_pp_internal.h"

#define PP_EVENTS_MAX 256
/* 2: the hash covers the undo digest, not the history; 3: the box digest,
 * not the cells */
#define PP_VERSION 3

typedef struct pp_hold {
  uint8_t dir;   /* 0 none, else 1 + GK_PP_DIR_* */
  uint8_t steps; /* steps held since the press or the last repeat base */
} pp_hold;

typedef struct pp_run {
  /* fixed for the run */
  gk_pp_set set; /* owned */
  uint32_t players;
  int advance;
  uint32_t undo_cap;
  /* canonical */
  uint32_t level;
  gk__pp_board b; /* b.cells points at `cells` */
  uint8_t *cells; /* owned; as big as the set's largest level */
  uint32_t moves, pushes;
  int solved;
  pp_hold hold[GK_PLAYERS_MAX];
  uint8_t *undo; /* owned, undo_cap bytes (NULL when 0) */
  uint32_t undo_head, undo_len;
  uint64_t undo_digest; /* running digest of the history (see above) */
  /* outputs, not canonical */
  uint64_t version;
  uint64_t step;
  gk_event ev[PP_EVENTS_MAX];
  uint32_t nev;
  uint32_t ev_dropped;
} pp_run;

/* --- config ---------------------------------------------------------------*/

static void config_default(void *cfgp) {
  gk_pp_config *c = cfgp;
  c->levels = NULL;
  c->parsed = NULL;
  c->level = 0;
  c->advance = 1;
  c->max_width = 64;
  c->max_height = 64;
  c->undo_limit = 1024;
}

/* Drops the parsed copy of the levels text (the text stays). */
static void drop_parsed(gk_pp_config *c) {
  if (c->parsed != NULL) gk_pp_set_close(c->parsed);
  free(c->parsed);
  c->parsed = NULL;
}

static void config_free(void *cfgp) {
  gk_pp_config *c = cfgp;
  drop_parsed(c);
  free(c->levels);
  c->levels = NULL;
}

int gk_pp_config_copy(gk_pp_config *dst, const gk_pp_config *src) {
  *dst = *src;
  dst->levels = NULL;
  dst->parsed = NULL;
  if (src->levels != NULL) {
    size_t n = strlen(src->levels);
    dst->levels = malloc(n + 1);
    if (dst->levels == NULL) {
      config_default(dst);
      return GK_ENOMEM;
    }
    memcpy(dst->levels, src->levels, n + 1);
  }
  if (src->parsed != NULL) {
    dst->parsed = malloc(sizeof *dst->parsed);
    if (dst->parsed == NULL || gk_pp_set_copy(dst->parsed, src->parsed) != 0) {
      free(dst->parsed);
      free(dst->levels);
      config_default(dst);
      return GK_ENOMEM;
    }
  }
  return 0;
}

static int int_key(const char *key, const gk_value *v, int64_t lo, int64_t hi,
                   int32_t *out, char *err, size_t errlen) {
  if (v->type != GK_VALUE_INT)
    return gk_errf(err, errlen, GK_EINVAL, "%s: expected an integer", key);
  if (v->i < lo || v->i > hi)
    return gk_errf(err, errlen, GK_ERANGE,
                   "%s: %lld is out of range (%lld..%lld)", key,
                   (long long)v->i, (long long)lo, (long long)hi);
  *out = (int32_t)v->i;
  return 0;
}

static int config_set(void *cfgp, const char *key, const gk_value *v, char *err,
                      size_t errlen) {
  gk_pp_config *c = cfgp;
  if (key == NULL || v == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "no key or value given");
  if (strcmp(key, "levels") == 0) {
    if (v->type != GK_VALUE_STRING || v->s == NULL)
      return gk_errf(err, errlen, GK_EINVAL, "levels: expected a string");
    size_t n = strlen(v->s);
    if (n == 0) {
      drop_parsed(c);
      free(c->levels);
      c->levels = NULL;
      return 0;
    }
    /* Validated by one parse, which the config keeps for create. */
    gk_pp_set *set = malloc(sizeof *set);
    if (set == NULL)
      return gk_errf(err, errlen, GK_ENOMEM, "levels: out of memory");
    int rc = gk_pp_set_parse(set, v->s, n, "levels", GK_PP_DIM_MAX,
                             GK_PP_DIM_MAX, err, errlen);
    char *copy = rc == 0 ? malloc(n + 1) : NULL;
    if (rc == 0 && copy == NULL) {
      gk_pp_set_close(set);
      rc = gk_errf(err, errlen, GK_ENOMEM, "levels: out of memory");
    }
    if (rc != 0) {
      free(set);
      return rc;
    }
    memcpy(copy, v->s, n + 1);
    drop_parsed(c);
    free(c->levels);
    c->levels = copy;
    c->parsed = set;
    return 0;
  }
  if (strcmp(key, "level") == 0)
    return int_key(key, v, 0, GK_PP_LEVELS_MAX - 1, &c->level, err, errlen);
  if (strcmp(key, "advance") == 0) {
    if (v->type != GK_VALUE_BOOL)
      return gk_errf(err, errlen, GK_EINVAL, "advance: expected a bool");
    c->advance = v->i != 0;
    return 0;
  }
  if (strcmp(key, "max_width") == 0)
    return int_key(key, v, 3, GK_PP_DIM_MAX, &c->max_width, err, errlen);
  if (strcmp(key, "max_height") == 0)
    return int_key(key, v, 3, GK_PP_DIM_MAX, &c->max_height, err, errlen);
  if (strcmp(key, "undo_limit") == 0)
    return int_key(key, v, 0, GK_PP_UNDO_MAX, &c->undo_limit, err, errlen);
  return gk_errf(err, errlen, GK_ENOTFOUND, "%s: unknown key for push-puzzle",
                 key);
}

static void config_each(const void *cfgp, gk_config_each_cb cb, void *ctx) {
  const gk_pp_config *c = cfgp;
  gk_value v;
  memset(&v, 0, sizeof v);
  v.type = GK_VALUE_STRING;
  v.s = c->levels != NULL ? c->levels : "";
  cb(ctx, "levels", &v);
  v.s = NULL;
  v.type = GK_VALUE_INT;
  v.i = c->level;
  cb(ctx, "level", &v);
  v.type = GK_VALUE_BOOL;
  v.i = c->advance != 0;
  cb(ctx, "advance", &v);
  v.type = GK_VALUE_INT;
  v.i = c->max_width;
  cb(ctx, "max_width", &v);
  v.i = c->max_height;
  cb(ctx, "max_height", &v);
  v.i = c->undo_limit;
  cb(ctx, "undo_limit", &v);
}

/* --- run ------------------------------------------------------------------*/

static void emit(pp_run *run, const char *name, int32_t player, uint32_t n,
                 const char *const *keys, const int64_t *values) {
  if (run->nev >= PP_EVENTS_MAX) {
    run->ev_dropped++;
    return;
  }
  gk_event *e = &run->ev[run->nev++];
  memset(e, 0, sizeof *e);
  e->name = name;
  e->step = run->step;
  e->player = player;
  e->nfields = n;
  for (uint32_t i = 0; i < n; i++) {
    e->fields[i].key = keys[i];
    e->fields[i].value = values[i];
  }
}

static void start_level(pp_run *run, uint32_t level) {
  run->level = level;
  gk__pp_board_load(&run->b, run->cells, &run->set.levels[level], run->players);
  run->moves = 0;
  run->pushes = 0;
  run->solved = 0;
  run->undo_head = 0;
  run->undo_len = 0;
  run->undo_digest = 0;
  memset(run->hold, 0, sizeof run->hold);
  run->version++;
  static const char *const keys[] = {"level"};
  int64_t values[] = {level};
  emit(run, "level_started", -1, 1, keys, values);
}

/* 1 if every level of the set fits max_width x max_height. */
static int set_fits(const gk_pp_set *set, const gk_pp_config *c) {
  for (uint32_t i = 0; i < set->count; i++)
    if (set->levels[i].width > c->max_width ||
        set->levels[i].height > c->max_height)
      return 0;
  return 1;
}

/* The run's levels: a copy of the set config_set parsed when every level
 * fits the size limits, else a parse of the text with those limits (the
 * shipped levels, a config built without config_set, or a level too big,
 * which the parse reports by line and column). */
static int load_set(gk_pp_set *set, const gk_pp_config *c, char *err,
                    size_t errlen) {
  if (c->levels != NULL && c->parsed != NULL && set_fits(c->parsed, c)) {
    if (gk_pp_set_copy(set, c->parsed) == 0) return 0;
    return gk_errf(err, errlen, GK_ENOMEM, "push-puzzle: out of memory");
  }
  const char *text = c->levels != NULL ? c->levels : gk_pp_shipped_levels;
  return gk_pp_set_parse(set, text, strlen(text), "levels",
                         (uint32_t)c->max_width, (uint32_t)c->max_height, err,
                         errlen);
}

/* Loads the config's level set and allocates a run around it (no level
 * loaded yet). */
static pp_run *run_new(const gk_pp_config *c, uint32_t players, char *err,
                       size_t errlen) {
  if (players < 1 || players > GK_PLAYERS_MAX) {
    gk_errf(err, errlen, GK_ERANGE,
            "push-puzzle: %u players is out of range (1..%u)",
            (unsigned)players, (unsigned)GK_PLAYERS_MAX);
    return NULL;
  }
  if (c->max_width < 3 || c->max_width > GK_PP_DIM_MAX || c->max_height < 3 ||
      c->max_height > GK_PP_DIM_MAX || c->undo_limit < 0 ||
      c->undo_limit > GK_PP_UNDO_MAX || c->level < 0) {
    gk_errf(err, errlen, GK_ERANGE, "push-puzzle: config out of range");
    return NULL;
  }
  /* Not calloc: the event array (most of the run) needs no zeroing. */
  pp_run *run = malloc(sizeof *run);
  if (run == NULL) {
    gk_errf(err, errlen, GK_ENOMEM, "push-puzzle: out of memory");
    return NULL;
  }
  memset(run, 0, offsetof(pp_run, ev));
  run->nev = 0;
  run->ev_dropped = 0;
  if (load_set(&run->set, c, err, errlen) != 0) {
    free(run);
    return NULL;
  }
  if ((uint32_t)c->level >= run->set.count) {
    gk_errf(err, errlen, GK_ERANGE,
            "level: %d is past the last level (the set has %u)", (int)c->level,
            (unsigned)run->set.count);
    gk_pp_set_close(&run->set);
    free(run);
    return NULL;
  }
  size_t most = 1;
  for (uint32_t i = 0; i < run->set.count; i++) {
    size_t n = (size_t)run->set.levels[i].width * run->set.levels[i].height;
    if (n > most) most = n;
  }
  run->players = players;
  run->advance = c->advance != 0;
  run->undo_cap = (uint32_t)c->undo_limit;
  run->cells = malloc(most);
  run->undo = run->undo_cap ? malloc(run->undo_cap) : NULL;
  if (run->cells == NULL || (run->undo_cap && run->undo == NULL)) {
    gk_errf(err, errlen, GK_ENOMEM, "push-puzzle: out of memory");
    free(run->cells);
    free(run->undo);
    gk_pp_set_close(&run->set);
    free(run);
    return NULL;
  }
  return run;
}

static void *create(const void *cfgp, uint64_t seed, uint32_t players,
                    char *err, size_t errlen) {
  (void)seed; /* the rules use no randomness */
  const gk_pp_config *c = cfgp;
  if (c == NULL) {
    gk_errf(err, errlen, GK_EINVAL, "push-puzzle: no config given");
    return NULL;
  }
  pp_run *run = run_new(c, players, err, errlen);
  if (run == NULL) return NULL;
  start_level(run, (uint32_t)c->level);
  return run;
}

static void destroy(void *state) {
  pp_run *run = state;
  if (run == NULL) return;
  gk_pp_set_close(&run->set);
  free(run->cells);
  free(run->undo);
  free(run);
}

#define DIGEST_K 0xd6e8feb86659fd93ull     /* odd, so invertible mod 2^64 */
#define DIGEST_K_INV 0xcfee444d8b59a89bull /* DIGEST_K * this == 1 mod 2^64 */

static uint64_t digest_mix(uint8_t e) {
  return ((uint64_t)e + 1) * 0x9e3779b97f4a7c15ull;
}

static void history_push(pp_run *run, uint8_t e) {
  if (run->undo_cap == 0) return;
  run->undo_digest = (run->undo_digest ^ digest_mix(e)) * DIGEST_K;
  if (run->undo_len < run->undo_cap) {
    run->undo[(run->undo_head + run->undo_len) % run->undo_cap] = e;
    run->undo_len++;
  } else {
    run->undo[run->undo_head] = e;
    run->undo_head = (run->undo_head + 1) % run->undo_cap;
  }
}

static void solved_now(pp_run *run, uint32_t player) {
  static const char *const keys[] = {"moves", "pushes", "level"};
  int64_t values[] = {run->moves, run->pushes, run->level};
  emit(run, "level_solved", (int32_t)player, 3, keys, values);
  if (run->advance && run->level + 1 < run->set.count)
    start_level(run, run->level + 1);
  else
    run->solved = 1;
}

/* One turn of player p in dir. Returns 1 if the level got solved. */
static int turn(pp_run *run, uint32_t p, unsigned dir) {
  int r = gk__pp_try_move(&run->b, p, dir);
  if (r == GK__PP_BLOCKED) return 0;
  run->moves++;
  if (r == GK__PP_PUSHED) run->pushes++;
  history_push(run, (uint8_t)((p << 3) | (r == GK__PP_PUSHED ? 4u : 0u) | dir));
  run->version++;
  if (r == GK__PP_PUSHED && run->b.on_goals == run->b.boxes) {
    solved_now(run, p);
    return 1;
  }
  return 0;
}

static void undo_one(pp_run *run) {
  if (run->undo_len == 0) return;
  uint32_t at = (run->undo_head + run->undo_len - 1) % run->undo_cap;
  uint8_t e = run->undo[at];
  int pushed = (e & 4u) != 0;
  if (gk__pp_unmove(&run->b, e >> 3, e & 3u, pushed) != 0)
    return; /* cannot happen for a history read_state accepted */
  run->undo_len--;
  run->undo_digest = (run->undo_digest * DIGEST_K_INV) ^ digest_mix(e);
  run->moves--;
  if (pushed) run->pushes--;
  run->version++;
}

static unsigned lowest_dir(unsigned bits) {
  for (unsigned d = 0; d < 4; d++)
    if (bits & (1u << d)) return d;
  return 0;
}

static void step(void *state, const gk_step_input *in) {
  pp_run *run = state;
  run->step = in->step;
  if (run->solved) return;
  uint32_t n = run->b.npushers;
  if (n > in->players) n = in->players;
  for (uint32_t p = 0; p < n; p++) {
    const uint8_t *rec = in->inputs + (size_t)p * GK_PP_INPUT_SIZE;
    unsigned held = rec[0] & 0x0fu, press = rec[1];
    pp_hold *h = &run->hold[p];
    if (press & GK_PP_RESTART) { /* ends every hold: the level starts anew */
      start_level(run, run->level);
      continue;
    }
    if (press & GK_PP_UNDO) {
      h->dir = 0;
      h->steps = 0;
      undo_one(run);
      continue;
    }
    if (press & 0x0fu) {
      unsigned d = lowest_dir(press);
      h->dir = (uint8_t)(d + 1);
      h->steps = 0;
      if (turn(run, p, d)) return;
      continue;
    }
    if (h->dir == 0) continue;
    if (!(held & (1u << (h->dir - 1)))) {
      h->dir = 0;
      h->steps = 0;
      continue;
    }
    if (++h->steps >= GK_PP_REPEAT_FIRST) {
      h->steps = GK_PP_REPEAT_FIRST - GK_PP_REPEAT_NEXT;
      if (turn(run, p, (unsigned)(h->dir - 1))) return;
    }
  }
}

static void drain_events(void *state, gk_event_cb cb, void *ctx) {
  pp_run *run = state;
  uint32_t n = run->nev;
  run->nev = 0;
  for (uint32_t i = 0; i < n; i++) cb(ctx, &run->ev[i]);
  /* A frame that queued more than the queue holds (a long { steps } frame
   * of restarts) says so instead of losing events silently. */
  uint32_t dropped = run->ev_dropped;
  run->ev_dropped = 0;
  gk_event_report_dropped(cb, ctx, run->step, dropped);
}

static int is_over(const void *state) {
  const pp_run *run = state;
  return run->solved;
}

static uint64_t sample_version(const void *state) {
  const pp_run *run = state;
  return run->version;
}

static void write_sample(const void *state, gk_writer *w) {
  const pp_run *run = state;
  gk_write_u32(w, "level", run->level);
  gk_write_u32(w, "moves", run->moves);
  gk_write_u32(w, "pushes", run->pushes);
  gk_write_u32(w, "boxes_on_goals", run->b.on_goals);
  gk_write_u32(w, "boxes", run->b.boxes);
  gk_write_bool(w, "solved", run->solved);
}

/* --- canonical state ------------------------------------------------------*/

/* The hashed bytes of a run as one record at fixed offsets: the bytes
 * write_state's fields give a hashing writer (which skips the cells and the
 * history), stored as a few 8-byte moves instead of a check per field.
 * Returns 0, or -1 if the stage lacks room (then nothing was written). */
static int write_hashed(const pp_run *run, gk_writer *w) {
  const gk__pp_board *b = &run->b;
  size_t tail = 18 + 4 * (size_t)b->npushers; /* moves, pushes, solved */
  size_t undo = tail + 9 + 2 * (size_t)run->players;
  gk_batch t = gk_batch_begin(w, undo + 12);
  uint8_t *q = gk_batch_claim(&t, undo + 12);
  if (q == NULL) {
    gk_batch_end(&t);
    return -1;
  }
  gk_batch_put(
      q, 0, run->players | (uint64_t)run->level << 8 | (uint64_t)b->width << 40,
      7);
  gk_batch_put(q, 7, b->height, 2);
  gk_batch_put(q, 9, b->box_digest, 8);
  gk_batch_put(q, 17, b->npushers, 1);
  for (uint32_t i = 0; i < b->npushers; i++) {
    uint32_t y = gk__pp_row(b, b->pusher[i]);
    uint32_t x = b->pusher[i] - y * b->width;
    gk_batch_put(q, 18 + 4 * (size_t)i, x | y << 16, 4);
  }
  gk_batch_put(q, tail, run->moves | (uint64_t)run->pushes << 32, 8);
  gk_batch_put(q, tail + 8, run->solved != 0, 1);
  for (uint32_t i = 0; i < run->players; i++)
    gk_batch_put(q, tail + 9 + 2 * (size_t)i,
                 run->hold[i].dir | (uint32_t)run->hold[i].steps << 8, 2);
  gk_batch_put(q, undo, run->undo_len, 4);
  gk_batch_put(q, undo + 4, run->undo_digest, 8);
  gk_batch_end(&t);
  return 0;
}

static void write_state(const void *state, gk_writer *w) {
  const pp_run *run = state;
  if (w->hashing && write_hashed(run, w) == 0) return;
  const gk__pp_board *b = &run->b;
  /* every hashed field in one batch (the cells between are not hashed) */
  size_t most = 17 + 1 + 4 * b->npushers + 9 + 2 * run->players + 12;
  gk_batch t = gk_batch_begin(w, most);
  gk_batch_u8(&t, "players", (uint8_t)run->players);
  gk_batch_u32(&t, "level", run->level);
  gk_batch_u16(&t, "width", b->width);
  gk_batch_u16(&t, "height", b->height);
  gk_batch_u64(&t, "box_digest", b->box_digest);
  gk_batch_unhashed(&t, "cells", b->cells, (size_t)b->width * b->height, most);
  gk_batch_u8(&t, "pushers", (uint8_t)b->npushers);
  for (uint32_t i = 0; i < b->npushers; i++) {
    uint32_t y = gk__pp_row(b, b->pusher[i]);
    gk_batch_group(&t, "pusher", i);
    gk_batch_u16(&t, "x", (uint16_t)(b->pusher[i] - y * b->width));
    gk_batch_u16(&t, "y", (uint16_t)y);
    gk_batch_group_end(&t);
  }
  gk_batch_u32(&t, "moves", run->moves);
  gk_batch_u32(&t, "pushes", run->pushes);
  gk_batch_bool(&t, "solved", run->solved);
  for (uint32_t i = 0; i < run->players; i++) {
    gk_batch_group(&t, "hold", i);
    gk_batch_u8(&t, "dir", run->hold[i].dir);
    gk_batch_u8(&t, "steps", run->hold[i].steps);
    gk_batch_group_end(&t);
  }
  gk_batch_u32(&t, "undo_len", run->undo_len);
  gk_batch_u64(&t, "undo_digest", run->undo_digest);
  gk_batch_end(&t);
  if (run->undo_len > 0) {
    uint32_t first = run->undo_cap - run->undo_head;
    if (first >= run->undo_len) {
      gk_write_unhashed(w, "undo", run->undo + run->undo_head, run->undo_len);
    } else {
      gk_write_unhashed(w, "undo", run->undo + run->undo_head, first);
      gk_write_unhashed(w, "undo", run->undo, run->undo_len - first);
    }
  }
}

static void *read_fail(pp_run *run, char *err, size_t errlen, int code,
                       const char *what) {
  gk_errf(err, errlen, code, "push-puzzle state: %s", what);
  destroy(run);
  return NULL;
}

/* The parts of read_state: each returns 0, or an error code and sets *what
 * to the reason. */
static int bad(const char **what, const char *reason, int code) {
  *what = reason;
  return code;
}

/* The box digest, the cells (only boxes may differ from the level; the
 * digest must be theirs) and pushers. */
static int read_board(pp_run *run, gk_reader *r, const gk_pp_level *lvl,
                      const char **what) {
  uint16_t w = lvl->width, h = lvl->height;
  size_t n = (size_t)w * h;
  uint64_t digest = gk_read_u64(r);
  if (gk_read_bytes(r, run->cells, n) != 0)
    return bad(what, "truncated cells", r->err);
  uint32_t boxes = 0, on_goals = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t v = run->cells[i];
    if ((v & (uint8_t)~GK_PP_BOX) != (lvl->cells[i] & (uint8_t)~GK_PP_BOX))
      return bad(what, "cells differ from the configured level", GK_ERANGE);
    if (v & GK_PP_BOX) {
      if (v & (GK_PP_WALL | GK_PP_OUTSIDE))
        return bad(what, "a box on a wall or outside", GK_ERANGE);
      boxes++;
      on_goals += (v & GK_PP_GOAL) ? 1u : 0u;
    }
  }
  if (boxes != lvl->boxes) return bad(what, "wrong number of boxes", GK_ERANGE);
  run->b.on_goals = on_goals;
  run->b.box_digest = gk__pp_box_digest(run->cells, n);
  if (digest != run->b.box_digest)
    return bad(what, "box digest disagrees with the cells", GK_ERANGE);
  uint8_t np = gk_read_u8(r);
  if (r->err != 0 || np != run->b.npushers)
    return bad(what, "wrong number of pushers", r->err ? r->err : GK_ERANGE);
  for (uint32_t i = 0; i < np; i++) {
    uint16_t x = gk_read_u16(r), y = gk_read_u16(r);
    if (r->err != 0) return bad(what, "truncated pushers", r->err);
    if (x >= w || y >= h) return bad(what, "pusher off the map", GK_ERANGE);
    uint32_t cell = (uint32_t)y * w + x;
    if (run->cells[cell] & (GK_PP_WALL | GK_PP_OUTSIDE | GK_PP_BOX))
      return bad(what, "pusher on a wall, a box or outside", GK_ERANGE);
    for (uint32_t j = 0; j < i; j++)
      if (run->b.pusher[j] == cell)
        return bad(what, "two pushers on one cell", GK_ERANGE);
    run->b.pusher[i] = cell;
  }
  return 0;
}

/* Counters, holds and the undo history; then the reader must be empty. */
static int read_progress(pp_run *run, gk_reader *r, const char **what) {
  run->moves = gk_read_u32(r);
  run->pushes = gk_read_u32(r);
  run->solved = gk_read_bool(r);
  if (r->err != 0) return bad(what, "truncated counters", r->err);
  if (run->solved != (run->b.on_goals == run->b.boxes))
    return bad(what, "solved flag disagrees with the boxes", GK_ERANGE);
  if (run->pushes > run->moves)
    return bad(what, "more pushes than moves", GK_ERANGE);
  for (uint32_t i = 0; i < run->players; i++) {
    run->hold[i].dir = gk_read_u8(r);
    run->hold[i].steps = gk_read_u8(r);
    if (r->err != 0) return bad(what, "truncated holds", r->err);
    if (run->hold[i].dir > 4 || run->hold[i].steps >= GK_PP_REPEAT_FIRST ||
        (run->hold[i].dir == 0 && run->hold[i].steps != 0))
      return bad(what, "bad hold counter", GK_ERANGE);
  }
  uint32_t len = gk_read_u32(r);
  run->undo_digest = gk_read_u64(r); /* any value: it commits to history */
  if (r->err != 0) return bad(what, "truncated undo length", r->err);
  if (len > run->undo_cap || len > run->moves)
    return bad(what, "undo history too long", GK_ERANGE);
  if (len > 0 && gk_read_bytes(r, run->undo, len) != 0)
    return bad(what, "truncated undo history", r->err);
  if (gk_reader_left(r) != 0) return bad(what, "trailing bytes", GK_EPROTO);
  run->undo_head = 0;
  run->undo_len = len;
  return 0;
}

/* Unwinds the whole history on a scratch board: every entry must undo. */
static int check_history(const pp_run *run, const char **what) {
  size_t n = (size_t)run->b.width * run->b.height;
  uint8_t *scratch = malloc(n);
  if (scratch == NULL) return bad(what, "out of memory", GK_ENOMEM);
  memcpy(scratch, run->cells, n);
  gk__pp_board sb = run->b;
  sb.cells = scratch;
  uint32_t pushed = 0;
  int fails = 0;
  for (uint32_t i = run->undo_len; i-- > 0;) {
    uint8_t e = run->undo[i];
    if ((e >> 3) >= sb.npushers ||
        gk__pp_unmove(&sb, e >> 3, e & 3u, (e & 4u) != 0)) {
      fails = 1;
      break;
    }
    pushed += (e & 4u) ? 1u : 0u;
  }
  free(scratch);
  if (fails || pushed > run->pushes)
    return bad(what, "undo history does not fit the board", GK_ERANGE);
  return 0;
}

static void *read_state(const void *cfgp, gk_reader *r, char *err,
                        size_t errlen) {
  const gk_pp_config *c = cfgp;
  if (c == NULL || r == NULL) {
    gk_errf(err, errlen, GK_EINVAL, "push-puzzle state: no config or reader");
    return NULL;
  }
  uint8_t players = gk_read_u8(r);
  if (r->err != 0 || players < 1 || players > GK_PLAYERS_MAX) {
    gk_errf(err, errlen, r->err ? r->err : GK_ERANGE,
            "push-puzzle state: bad player count");
    return NULL;
  }
  pp_run *run = run_new(c, players, err, errlen);
  if (run == NULL) return NULL;
  uint32_t level = gk_read_u32(r);
  uint16_t w = gk_read_u16(r), h = gk_read_u16(r);
  if (r->err != 0)
    return read_fail(run, err, errlen, r->err, "truncated header");
  if (level >= run->set.count)
    return read_fail(run, err, errlen, GK_ERANGE,
                     "level is not in the configured set");
  const gk_pp_level *lvl = &run->set.levels[level];
  if (w != lvl->width || h != lvl->height)
    return read_fail(run, err, errlen, GK_ERANGE,
                     "size differs from the configured level");
  gk__pp_board_load(&run->b, run->cells, lvl, players);
  run->level = level;
  const char *what = NULL;
  int code = read_board(run, r, lvl, &what);
  if (code == 0) code = read_progress(run, r, &what);
  if (code == 0) code = check_history(run, &what);
  if (code != 0) return read_fail(run, err, errlen, code, what);
  return run;
}

const gk_sim gk_push_puzzle_sim = {
    .abi = GK_SIM_ABI,
    .name = "push-puzzle",
    .version = PP_VERSION,
    .step_seconds = {1, 60},
    .input_size = GK_PP_INPUT_SIZE,
    .players_min = 1,
    .players_max = GK_PLAYERS_MAX,
    .config_size = sizeof(gk_pp_config),
    .config_default = config_default,
    .config_set = config_set,
    .config_each = config_each,
    .config_free = config_free,
    .create = create,
    .destroy = destroy,
    .step = step,
    .drain_events = drain_events,
    .is_over = is_over,
    .every_ms = 0,
    .sample_version = sample_version,
    .write_sample = write_sample,
    .write_state = write_state,
    .read_state = read_state,
    .bot_size = GK__PP_BOT_SIZE,
    .bot_init = gk__pp_bot_init,
    .bot_next = gk__pp_bot_next,
    .tool = &gk__pp_tool,
    .prediction = 0, /* turns need no prediction (lockstep.prediction) */
};
