/* tiny_sim.c: the "tiny" test genre (see tiny_sim.h). Its state is an
 * accumulator folded from every active player's record and the run's PRNG,
 * so any change to any input byte changes every later hash. */
#include "tiny_sim.h"

#include <stdlib.h>
#include <string.h>

#include "gk_rng.h"

typedef struct tiny_state {
  uint32_t acc;
  uint32_t players;
  uint64_t steps;
  int twice;
  int64_t limit;
  gk_rng rng;
} tiny_state;

static void tiny_default(void *cfg) {
  tiny_cfg *c = cfg;
  memset(c, 0, sizeof *c);
  c->start = 7;
  c->limit_max = 1000;
  memcpy(c->label, "plain", 6);
}

static int tiny_set(void *cfg, const char *key, const gk_value *v, char *err,
                    size_t errlen) {
  tiny_cfg *c = cfg;
  if (strcmp(key, "start") == 0 || strcmp(key, "limits.max") == 0) {
    if (v->type != GK_VALUE_INT)
      return gk_errf(err, errlen, GK_EINVAL, "%s: expected an integer", key);
    int64_t lo = key[0] == 's' ? 0 : 1;
    if (v->i < lo || v->i > 1000000)
      return gk_errf(err, errlen, GK_ERANGE, "%s: out of range", key);
    if (key[0] == 's')
      c->start = v->i;
    else
      c->limit_max = v->i;
    return 0;
  }
  if (strcmp(key, "twice") == 0) {
    if (v->type != GK_VALUE_BOOL)
      return gk_errf(err, errlen, GK_EINVAL, "twice: expected a boolean");
    c->twice = (int)v->i;
    return 0;
  }
  if (strcmp(key, "label") == 0) {
    if (v->type != GK_VALUE_STRING)
      return gk_errf(err, errlen, GK_EINVAL, "label: expected a string");
    size_t n = strlen(v->s);
    if (n >= sizeof c->label)
      return gk_errf(err, errlen, GK_ERANGE, "label: longer than 31 bytes");
    memset(c->label, 0, sizeof c->label);
    memcpy(c->label, v->s, n);
    return 0;
  }
  return gk_errf(err, errlen, GK_ENOTFOUND, "unknown key");
}

static void tiny_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  const tiny_cfg *c = cfg;
  gk_value v = {GK_VALUE_INT, c->start, NULL};
  cb(ctx, "start", &v);
  v.type = GK_VALUE_BOOL;
  v.i = c->twice;
  cb(ctx, "twice", &v);
  v.type = GK_VALUE_STRING;
  v.s = c->label;
  cb(ctx, "label", &v);
  v.type = GK_VALUE_INT;
  v.i = c->limit_max;
  v.s = NULL;
  cb(ctx, "limits.max", &v);
}

static void *tiny_create(const void *cfg, uint64_t seed, uint32_t players,
                         char *err, size_t errlen) {
  const tiny_cfg *c = cfg;
  if (players < 1 || players > 4) {
    gk_errf(err, errlen, GK_EINVAL, "tiny takes 1..4 players");
    return NULL;
  }
  tiny_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->acc = (uint32_t)c->start;
  s->players = players;
  s->twice = c->twice;
  s->limit = c->limit_max;
  gk_rng_seed(&s->rng, seed, 54);
  return s;
}

static void tiny_destroy(void *state) {
  free(state);
}

static void tiny_step(void *state, const gk_step_input *in) {
  tiny_state *s = state;
  for (uint32_t p = 0; p < in->players; p++) {
    if (!(in->active_mask & (1u << p))) continue;
    const uint8_t *r = in->inputs + 2 * p;
    s->acc = s->acc * 31u + r[0] + ((uint32_t)r[1] << 8);
  }
  s->acc ^= gk_rng_next(&s->rng) & 0xffu;
  if (s->twice) s->acc *= 2u;
  s->steps++;
}

static int tiny_over(const void *state) {
  const tiny_state *s = state;
  return s->steps >= (uint64_t)s->limit;
}

static void tiny_sample(const void *state, gk_writer *w) {
  const tiny_state *s = state;
  gk_write_u32(w, "acc", s->acc);
  gk_write_u64(w, "steps", s->steps);
  gk_write_bool(w, "even", (s->acc & 1u) == 0);
}

static void tiny_write(const void *state, gk_writer *w) {
  const tiny_state *s = state;
  gk_write_u32(w, "acc", s->acc);
  gk_write_u64(w, "steps", s->steps);
  gk_write_begin(w, "rng", UINT64_MAX);
  gk_rng_write(&s->rng, w);
  gk_write_end(w);
}

static void *tiny_read(const void *cfg, gk_reader *r, char *err,
                       size_t errlen) {
  gk_errf(err, errlen, GK_EINVAL, "tiny: snapshots are not supported");
  return NULL;
}

typedef struct tiny_bot {
  uint64_t x;
  uint32_t player;
} tiny_bot;

static void tiny_bot_init(void *bot, const void *cfg, uint64_t seed,
                          uint32_t player) {
  tiny_bot *b = bot;
  b->x = seed;
  b->player = player;
}

static void tiny_bot_next(void *bot, uint8_t *record) {
  tiny_bot *b = bot;
  uint64_t v = gk_splitmix64(&b->x);
  record[0] = (uint8_t)v;
  record[1] = (uint8_t)(v >> 8);
}

const gk_sim tiny_sim = {
    .abi = GK_SIM_ABI,
    .name = "tiny",
    .version = 3,
    .step_seconds = {1, 60},
    .input_size = 2,
    .players_min = 1,
    .players_max = 4,
    .config_size = sizeof(tiny_cfg),
    .config_default = tiny_default,
    .config_set = tiny_set,
    .config_each = tiny_each,
    .config_free = NULL,
    .create = tiny_create,
    .destroy = tiny_destroy,
    .step = tiny_step,
    .drain_events = NULL,
    .is_over = tiny_over,
    .every_ms = 0,
    .sample_version = NULL,
    .write_sample = tiny_sample,
    .write_state = tiny_write,
    .read_state = tiny_read,
    .bot_size = sizeof(tiny_bot),
    .bot_init = tiny_bot_init,
    .bot_next = tiny_bot_next,
};
