/* gk_synctest.c: the sync test (see gk_synctest.h). One input source, fed
 * once per step from the bots, is read by both runs, so A and B see the
 * same records; a fresh B is read from A's bytes at every checkpoint. */
#include "gk_synctest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_loop.h"
#include "gk_state_diff.h"

/* The current step's records, for both runs. */
typedef struct same_input {
  gk_input base; /* must be first */
  gk_step_input cur;
  uint8_t records[GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX];
} same_input;

static int same_read(gk_input *in, uint64_t step, gk_step_input *out) {
  same_input *s = (same_input *)in;
  *out = s->cur;
  out->step = step;
  out->inputs = s->records;
  return 0;
}

typedef struct synctest {
  const gk_sim *sim;
  const void *cfg;
  gk_loop a, b;
  gk_bot_input bots;
  gk_const_input neutral;
  gk_input *src;
  same_input same;
  gk_synctest_result *res;
} synctest;

static uint8_t *state_bytes(const gk_sim *sim, const void *state, size_t *len) {
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  sim->write_state(state, &w.w);
  return gk_buf_writer_take(&w, len);
}

/* Fills the result's first differing field between A's and B's states. */
static int name_field(synctest *t) {
  size_t la = 0, lb = 0;
  uint8_t *a = state_bytes(t->sim, gk_loop_state(&t->a), &la);
  uint8_t *b = state_bytes(t->sim, gk_loop_state(&t->b), &lb);
  gk_diff_field f;
  gk_state_diff d;
  gk_state_diff_init(&d, &f, 1);
  int rc = (a == NULL || b == NULL)
               ? GK_ENOMEM
               : gk_state_diff_run(&d, t->sim, t->cfg, a, la, b, lb, NULL, 0);
  free(a);
  free(b);
  if (rc == GK_ENOMEM) return rc;
  t->res->fields_differ = d.total;
  if (d.count > 0) {
    memcpy(t->res->path, f.path, sizeof f.path);
    t->res->kind = f.kind;
    t->res->a = f.a;
    t->res->b = f.b;
  }
  return 0;
}

/* B := a fresh run read from A's bytes; checks B writes them back. */
static int checkpoint(synctest *t, char *err, size_t errlen) {
  size_t len = 0, len2 = 0;
  uint8_t *bytes = state_bytes(t->sim, gk_loop_state(&t->a), &len);
  if (bytes == NULL) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  char msg[GK_ERRMSG_MAX] = "";
  void *st = t->sim->read_state(t->cfg, &r, msg, sizeof msg);
  if (st == NULL) {
    free(bytes);
    return gk_errf(err, errlen, GK_EINVAL,
                   "synctest: read_state refused write_state's bytes after "
                   "%" PRIu64 " steps: %s",
                   t->a.steps, msg);
  }
  int rc = gk_loop_adopt(&t->b, t->sim, st, t->a.players, t->a.steps);
  uint8_t *again =
      rc == 0 ? state_bytes(t->sim, gk_loop_state(&t->b), &len2) : NULL;
  t->res->checkpoints++;
  t->res->checkpoint = t->a.steps;
  if (rc == 0 && again != NULL &&
      (len != len2 || memcmp(bytes, again, len) != 0)) {
    t->res->at_readback = 1;
    t->res->fail_step = t->a.steps ? t->a.steps - 1 : UINT64_MAX;
    t->res->hash_a = gk_hash_bytes(bytes, len);
    t->res->hash_b = gk_hash_bytes(again, len2);
    rc = name_field(t);
  } else if (rc == 0 && again == NULL) {
    rc = GK_ENOMEM;
  }
  free(bytes);
  free(again);
  if (rc != 0 && rc != GK_ENOMEM)
    return gk_errf(err, errlen, rc, "synctest: adopt failed");
  if (rc != 0) return gk_errf(err, errlen, rc, "out of memory");
  return 0;
}

/* Runs one step on both; 1 if they part, 0 if not, or a negative code. */
static int step_both(synctest *t, uint64_t s) {
  gk_step_input in;
  int rc = t->src->read(t->src, s, &in);
  if (rc != 0) return rc;
  size_t n = (size_t)in.players * t->sim->input_size;
  t->same.cur = in;
  memcpy(t->same.records, in.inputs, n);
  if (t->src->end_step != NULL) t->src->end_step(t->src);
  if (gk_loop_frame(&t->a, &t->same.base, gk_budget_steps(1), 0) != 1 ||
      gk_loop_frame(&t->b, &t->same.base, gk_budget_steps(1), 0) != 1)
    return GK_EINVAL;
  t->res->steps_run = s + 1;
  if (t->a.last_hash == t->b.last_hash) return 0;
  t->res->fail_step = s;
  t->res->hash_a = t->a.last_hash;
  t->res->hash_b = t->b.last_hash;
  rc = name_field(t);
  return rc != 0 ? rc : 1;
}

static int setup(synctest *t, const gk_synctest_opts *o, char *err,
                 size_t errlen) {
  gk_loop_options lo = {4};
  if (gk_loop_init(&t->a, &lo) != 0) return GK_ENOMEM;
  if (gk_loop_init(&t->b, &lo) != 0) {
    gk_loop_close(&t->a);
    return GK_ENOMEM;
  }
  int rc =
      gk_loop_start(&t->a, t->sim, t->cfg, o->seed, o->players, err, errlen);
  if (rc != 0) return rc;
  t->same.base.read = same_read;
  if (t->sim->bot_size > 0) {
    rc = gk_bot_input_init(&t->bots, t->sim, t->cfg, o->seed, o->players);
    t->src = &t->bots.base;
  } else {
    rc = gk_const_input_init(&t->neutral, NULL, o->players, t->sim->input_size);
    t->src = &t->neutral.base;
  }
  if (rc != 0) gk_errf(err, errlen, rc, "synctest: cannot set up the bots");
  return rc;
}

int gk_synctest_run(const gk_sim *sim, const void *cfg,
                    const gk_synctest_opts *o, gk_synctest_result *res,
                    char *err, size_t errlen) {
  memset(res, 0, sizeof *res);
  res->fail_step = UINT64_MAX;
  if (gk_sim_check(sim, err, errlen) != 0) return GK_EINVAL;
  if (o->steps == 0 || o->every == 0 || o->players < sim->players_min ||
      o->players > sim->players_max)
    return gk_errf(err, errlen, GK_EINVAL,
                   "synctest: steps and every must be >= 1 and players "
                   "%" PRIu32 "..%" PRIu32,
                   sim->players_min, sim->players_max);
  synctest *t = calloc(1, sizeof *t);
  if (t == NULL) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  t->sim = sim;
  t->cfg = cfg;
  t->res = res;
  int rc = setup(t, o, err, errlen);
  for (uint64_t s = 0; rc == 0 && s < o->steps; s++) {
    if (s % o->every == 0) {
      rc = checkpoint(t, err, errlen);
      if (rc != 0 || res->at_readback) break;
    }
    rc = step_both(t, s);
    if (rc < 0)
      gk_errf(err, errlen, rc, "synctest: step %" PRIu64 " failed", s);
  }
  if (rc >= 0) {
    res->ok = !res->at_readback && res->fail_step == UINT64_MAX;
    rc = 0;
  }
  gk_loop_close(&t->a);
  gk_loop_close(&t->b);
  free(t);
  return rc;
}

size_t gk_synctest_describe(const gk_synctest_result *res, char *buf,
                            size_t n) {
  char a[24], b[24];
  if (res->ok)
    return (size_t)snprintf(
        buf, n, "synctest: ok: %" PRIu64 " steps, %" PRIu64 " checkpoints",
        res->steps_run, res->checkpoints);
  gk_field_value_text(res->kind, res->a, a, sizeof a);
  gk_field_value_text(res->kind, res->b, b, sizeof b);
  if (res->at_readback)
    return (size_t)snprintf(
        buf, n,
        "synctest: read_state does not give back what write_state wrote "
        "(state after %" PRIu64 " steps): %s %s != %s (%" PRIu64
        " fields differ)",
        res->checkpoint, res->path[0] ? res->path : "(bytes)", a, b,
        res->fields_differ);
  return (size_t)snprintf(
      buf, n,
      "synctest: runs part at step %" PRIu64 " (B read back after %" PRIu64
      " steps; hash 0x%016" PRIx64 " != 0x%016" PRIx64 "): %s %s != %s "
      "(%" PRIu64 " fields differ)",
      res->fail_step, res->checkpoint, res->hash_a, res->hash_b,
      res->path[0] ? res->path : "(no field differs: hidden state)", a, b,
      res->fields_differ);
}
