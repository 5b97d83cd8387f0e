#include "logsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_rng.h"

void logsim_append(logsim_log *log, const char *s) {
  if (log == NULL) return;
  size_t n = strlen(s);
  if (log->len + n + 2 >= sizeof log->text) return;
  if (log->len > 0) log->text[log->len++] = ' ';
  memcpy(log->text + log->len, s, n);
  log->len += n;
  log->text[log->len] = '\0';
}

static void cfg_default(void *cfg) {
  memset(cfg, 0, sizeof(logsim_cfg));
}

static int cfg_set(void *cfg, const char *key, const gk_value *v, char *err,
                   size_t errlen) {
  logsim_cfg *c = cfg;
  if (strcmp(key, "start") != 0)
    return gk_errf(err, errlen, GK_ENOTFOUND, "unknown key \"%s\"", key);
  if (v->type != GK_VALUE_INT)
    return gk_errf(err, errlen, GK_EINVAL, "\"start\": expected an integer");
  c->start = v->i;
  return 0;
}

static void cfg_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  gk_value v = {GK_VALUE_INT, ((const logsim_cfg *)cfg)->start, NULL};
  cb(ctx, "start", &v);
}

static void *create(const void *cfg, uint64_t seed, uint32_t players, char *err,
                    size_t errlen) {
  const logsim_cfg *c = cfg;
  if (c->start < 0) {
    gk_errf(err, errlen, GK_ERANGE, "\"start\" must be >= 0");
    return NULL;
  }
  logsim_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->log = c->log;
  s->counter = c->start;
  s->players = players;
  gk_rng_seed(&s->rng, seed, 7);
  logsim_append(s->log, "create");
  return s;
}

static void destroy(void *state) {
  logsim_state *s = state;
  if (s != NULL) logsim_append(s->log, "destroy");
  free(s);
}

static void step(void *state, const gk_step_input *in) {
  logsim_state *s = state;
  char buf[32];
  snprintf(buf, sizeof buf, "step(%llu)", (unsigned long long)in->step);
  logsim_append(s->log, buf);
  for (uint32_t p = 0; p < in->players; p++) {
    const uint8_t *r = in->inputs + 2 * p;
    s->counter += r[0];
    if (r[1] & 1u) s->pending_events++;
    if (r[1] & 2u) s->version++;
  }
  s->counter += (int64_t)(gk_rng_next(&s->rng) & 1u);
  s->steps++;
}

static void drain(void *state, gk_event_cb cb, void *ctx) {
  logsim_state *s = state;
  logsim_append(s->log, "flush");
  while (s->pending_events > 0) {
    gk_event ev = {
        .name = "ping", .step = s->steps, .player = -1, .nfields = 1};
    ev.fields[0].key = "counter";
    ev.fields[0].value = s->counter;
    s->pending_events--;
    cb(ctx, &ev);
  }
}

static uint64_t version(const void *state) {
  return ((const logsim_state *)state)->version;
}

static void write_sample(const void *state, gk_writer *w) {
  const logsim_state *s = state;
  gk_write_i64(w, "counter", s->counter);
  gk_write_u64(w, "steps", s->steps);
}

static void write_state(const void *state, gk_writer *w) {
  const logsim_state *s = state;
  logsim_append(s->log, "hash");
  gk_write_i64(w, "counter", s->counter);
  gk_write_u64(w, "steps", s->steps);
  gk_write_u64(w, "version", s->version);
  gk_write_u32(w, "players", s->players);
  gk_write_u32(w, "pending_events", s->pending_events);
  gk_rng_write(&s->rng, w);
}

static void *read_state(const void *cfg, gk_reader *r, char *err,
                        size_t errlen) {
  logsim_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->log = cfg != NULL ? ((const logsim_cfg *)cfg)->log : NULL;
  s->counter = gk_read_i64(r);
  s->steps = gk_read_u64(r);
  s->version = gk_read_u64(r);
  s->players = gk_read_u32(r);
  s->pending_events = gk_read_u32(r);
  gk_rng_read(&s->rng, r);
  if (r->err == 0 && (s->players == 0 || s->players > GK_PLAYERS_MAX))
    gk_reader_fail(r, GK_ERANGE);
  if (r->err != 0 || gk_reader_left(r) != 0) {
    gk_errf(err, errlen, GK_EPARSE, "logsim state: %s at byte %zu",
            r->err ? gk_strerror(r->err) : "trailing bytes", r->pos);
    free(s);
    return NULL;
  }
  return s;
}

#define LOGSIM(ident, every, num, den)                                         \
  const gk_sim ident = {                                                       \
      .abi = GK_SIM_ABI,                                                       \
      .name = "logsim",                                                        \
      .version = 1,                                                            \
      .step_seconds = {num, den},                                              \
      .input_size = 2,                                                         \
      .players_min = 1,                                                        \
      .players_max = 4,                                                        \
      .config_size = sizeof(logsim_cfg),                                       \
      .config_default = cfg_default,                                           \
      .config_set = cfg_set,                                                   \
      .config_each = cfg_each,                                                 \
      .create = create,                                                        \
      .destroy = destroy,                                                      \
      .step = step,                                                            \
      .drain_events = drain,                                                   \
      .every_ms = every,                                                       \
      .sample_version = version,                                               \
      .write_sample = write_sample,                                            \
      .write_state = write_state,                                              \
      .read_state = read_state,                                                \
  }

LOGSIM(logsim_sim, 0, 1, 60);
LOGSIM(logsim_sim_250, 250, 1, 60);
LOGSIM(logsim_sim_tenth, 0, 1, 10);
