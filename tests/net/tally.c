/* tally.c: the network tests' tiny genre (see tally.h). */
#include "tally.h"

#include <stdlib.h>
#include <string.h>

#include "gk_rng.h"

typedef struct tally_state {
  uint32_t players;
  uint64_t steps;
  uint64_t mix;
  gk_rng rng;
  int64_t sum[GK_PLAYERS_MAX];
  uint64_t active_steps[GK_PLAYERS_MAX];
  int over;
} tally_state;

typedef struct tally_bot {
  gk_rng rng;
} tally_bot;

static void cfg_default(void *cfg) {
  memset(cfg, 0, sizeof(tally_cfg));
}

static int cfg_set(void *cfg, const char *key, const gk_value *v, char *err,
                   size_t errlen) {
  if (strcmp(key, "start") != 0)
    return gk_errf(err, errlen, GK_ENOTFOUND, "unknown key \"%s\"", key);
  if (v->type != GK_VALUE_INT)
    return gk_errf(err, errlen, GK_EINVAL, "\"start\": expected an integer");
  ((tally_cfg *)cfg)->start = v->i;
  return 0;
}

static void cfg_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  gk_value v = {GK_VALUE_INT, ((const tally_cfg *)cfg)->start, NULL};
  cb(ctx, "start", &v);
}

static void *create(const void *cfg, uint64_t seed, uint32_t players, char *err,
                    size_t errlen) {
  tally_state *s = calloc(1, sizeof *s);
  if (s == NULL) {
    gk_errf(err, errlen, GK_ENOMEM, "out of memory");
    return NULL;
  }
  s->players = players;
  s->mix = (uint64_t)((const tally_cfg *)cfg)->start;
  gk_rng_seed(&s->rng, seed, 11);
  return s;
}

static void destroy(void *state) {
  free(state);
}

static void step(void *state, const gk_step_input *in) {
  tally_state *s = state;
  for (uint32_t p = 0; p < in->players; p++) {
    const uint8_t *r = in->inputs + 4 * p;
    uint32_t v = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
                 (uint32_t)r[3] << 24;
    s->sum[p] += v;
    s->mix = (s->mix ^ v) * 0x100000001b3ull + gk_rng_next(&s->rng);
    if (in->active_mask >> p & 1u) s->active_steps[p]++;
  }
  if (in->flags & GK_STEP_MATCH_END) s->over = 1;
  s->steps++;
}

static int is_over(const void *state) {
  return ((const tally_state *)state)->over;
}

static void write_state(const void *state, gk_writer *w) {
  const tally_state *s = state;
  gk_write_u32(w, "players", s->players);
  gk_write_u64(w, "steps", s->steps);
  gk_write_u64(w, "mix", s->mix);
  gk_rng_write(&s->rng, w);
  for (uint32_t p = 0; p < s->players; p++) {
    gk_write_begin(w, "player", p);
    gk_write_i64(w, "sum", s->sum[p]);
    gk_write_u64(w, "active_steps", s->active_steps[p]);
    gk_write_end(w);
  }
  gk_write_bool(w, "over", s->over);
}

static void write_sample(const void *state, gk_writer *w) {
  gk_write_u64(w, "steps", ((const tally_state *)state)->steps);
}

static void *read_state(const void *cfg, gk_reader *r, char *err,
                        size_t errlen) {
  (void)cfg;
  tally_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->players = gk_read_u32(r);
  if (s->players < 1 || s->players > GK_PLAYERS_MAX)
    gk_reader_fail(r, GK_ERANGE);
  s->steps = gk_read_u64(r);
  s->mix = gk_read_u64(r);
  gk_rng_read(&s->rng, r);
  for (uint32_t p = 0; r->err == 0 && p < s->players; p++) {
    s->sum[p] = gk_read_i64(r);
    s->active_steps[p] = gk_read_u64(r);
  }
  s->over = gk_read_bool(r);
  if (r->err != 0) {
    gk_errf(err, errlen, r->err, "bad tally state");
    free(s);
    return NULL;
  }
  return s;
}

static void bot_init(void *bot, const void *cfg, uint64_t seed,
                     uint32_t player) {
  (void)cfg;
  gk_rng_seed(&((tally_bot *)bot)->rng, seed, 2u * player + 1u);
}

static void bot_next(void *bot, uint8_t *record) {
  uint32_t v = gk_rng_next(&((tally_bot *)bot)->rng);
  if ((v & 3u) == 0) v = 0;
  for (int i = 0; i < 4; i++) record[i] = (uint8_t)(v >> (8 * i));
}

const gk_sim tally_sim = {
    .abi = GK_SIM_ABI,
    .name = "tally",
    .version = 1,
    .step_seconds = {1, 60},
    .input_size = 4,
    .players_min = 1,
    .players_max = GK_PLAYERS_MAX,
    .config_size = sizeof(tally_cfg),
    .config_default = cfg_default,
    .config_set = cfg_set,
    .config_each = cfg_each,
    .create = create,
    .destroy = destroy,
    .step = step,
    .is_over = is_over,
    .write_sample = write_sample,
    .write_state = write_state,
    .read_state = read_state,
    .bot_size = sizeof(tally_bot),
    .bot_init = bot_init,
    .bot_next = bot_next,
};
