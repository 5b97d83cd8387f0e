/* gk_testkit_probe.c: the determinism probe and the sync test (see
 * gk_testkit_probe.h). Core only: gk_loop, the genre, libc. */
#include "gk_testkit_probe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_loop.h"

#define STEPS_MAX (UINT64_C(1) << 30) /* one frame's budget fits an int */

void gk_testkit_chain_add(gk_testkit_chain *c, uint64_t hash) {
  uint8_t b[16];
  gk_store_le(b, c->digest, 8);
  gk_store_le(b + 8, hash, 8);
  c->digest = gk_hash_bytes(b, sizeof b);
  c->final_hash = hash;
  c->steps++;
}

/* A run of the bots: a loop, its bots and, if the caller gave none, the
 * default config. */
typedef struct run {
  const gk_sim *sim;
  const void *cfg;
  max_align_t *own_cfg;
  gk_loop loop;
  int loop_up;
  gk_bot_input bots;
} run;

static void run_close(run *r) {
  if (r->loop_up) gk_loop_close(&r->loop);
  if (r->own_cfg != NULL && r->sim->config_free != NULL)
    r->sim->config_free(r->own_cfg);
  free(r->own_cfg);
}

static int run_init(run *r, const gk_sim *sim, const void *cfg, uint64_t seed,
                    uint32_t players, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  r->sim = sim;
  if (sim == NULL || sim->bot_size == 0)
    return gk_errf(err, errlen, GK_EINVAL, "the genre has no built-in bot");
  if (players < sim->players_min || players > sim->players_max)
    return gk_errf(err, errlen, GK_EINVAL, "%s takes %u..%u players, not %u",
                   sim->name, (unsigned)sim->players_min,
                   (unsigned)sim->players_max, (unsigned)players);
  if (cfg == NULL) {
    r->own_cfg =
        calloc(sim->config_size / sizeof(max_align_t) + 1, sizeof(max_align_t));
    if (r->own_cfg == NULL)
      return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
    sim->config_default(r->own_cfg);
    cfg = r->own_cfg;
  }
  r->cfg = cfg;
  int rc = gk_loop_init(&r->loop, NULL);
  if (rc != 0) return gk_errf(err, errlen, rc, "gk_loop_init failed");
  r->loop_up = 1;
  rc = gk_loop_start(&r->loop, sim, cfg, seed, players, err, errlen);
  if (rc != 0) return rc;
  rc = gk_bot_input_init(&r->bots, sim, cfg, seed, players);
  if (rc != 0) return gk_errf(err, errlen, rc, "the bots refused to start");
  return 0;
}

/* Runs n steps of r over src. Returns 0 or a code with a message. */
static int run_steps(run *r, gk_input *src, uint64_t n, char *err,
                     size_t errlen) {
  int ran = gk_loop_frame(&r->loop, src, gk_budget_steps(n), 0);
  if (ran < 0 || (uint64_t)ran != n) {
    int code = ran < 0             ? ran
               : r->loop.input_err ? r->loop.input_err
                                   : GK_EINPUT;
    return gk_errf(err, errlen, code, "the run stopped at step %" PRIu64 ": %s",
                   r->loop.steps, gk_strerror(code));
  }
  return 0;
}

int gk_testkit_probe(const gk_sim *sim, const void *cfg, uint64_t seed,
                     uint32_t players, uint64_t steps, uint64_t every,
                     FILE *out, gk_testkit_chain *chain, char *err,
                     size_t errlen) {
  gk_testkit_chain c = {0, 0, 0};
  if (steps > STEPS_MAX)
    return gk_errf(err, errlen, GK_ERANGE, "at most %" PRIu64 " steps",
                   STEPS_MAX);
  run r;
  int rc = run_init(&r, sim, cfg, seed, players, err, errlen);
  for (uint64_t s = 0; rc == 0 && s < steps; s++) {
    rc = run_steps(&r, &r.bots.base, 1, err, errlen);
    if (rc != 0) break;
    gk_testkit_chain_add(&c, r.loop.last_hash);
    if (out != NULL && every > 0 && (s + 1) % every == 0)
      fprintf(out,
              "step %" PRIu64 " hash %016" PRIx64 " chain %016" PRIx64 "\n", s,
              c.final_hash, c.digest);
  }
  if (rc == 0 && out != NULL)
    fprintf(out,
            "probe %s v%u players=%u seed=%" PRIu64 " steps=%" PRIu64
            " final=%016" PRIx64 " chain=%016" PRIx64 "\n",
            sim->name, (unsigned)sim->version, (unsigned)players, seed, c.steps,
            c.final_hash, c.digest);
  if (chain != NULL) *chain = c;
  run_close(&r);
  return rc;
}

/* Writes a state into a heap buffer (*bytes freed by the caller). */
static int write_state(const gk_sim *sim, const void *state, uint8_t **bytes,
                       size_t *len, char *err, size_t errlen) {
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  sim->write_state(state, &w.w);
  *bytes = gk_buf_writer_take(&w, len);
  int failed = w.w.err != 0;
  gk_buf_writer_close(&w);
  if (failed || *bytes == NULL)
    return gk_errf(err, errlen, GK_ENOMEM, "cannot write the state");
  return 0;
}

/* Reads the state of `a` back into b's loop; checks it writes the same
 * bytes. */
static int read_back(run *a, run *b, uint32_t players,
                     gk_testkit_sync_result *res, char *err, size_t errlen) {
  const gk_sim *sim = a->sim;
  uint8_t *bytes = NULL, *again = NULL;
  size_t len = 0, len2 = 0;
  int rc = write_state(sim, a->loop.state, &bytes, &len, err, errlen);
  if (rc != 0) return rc;
  res->state_bytes = len;
  gk_reader rd;
  gk_reader_init(&rd, bytes, len);
  char msg[GK_ERRMSG_MAX] = "";
  void *state = sim->read_state(a->cfg, &rd, msg, sizeof msg);
  if (state == NULL)
    rc = gk_errf(err, errlen, GK_EINVAL,
                 "read_state refused the %zu bytes write_state wrote after "
                 "step %" PRIu64 ": %s",
                 len, a->loop.steps, msg);
  if (rc == 0) rc = gk_loop_adopt(&b->loop, sim, state, players, a->loop.steps);
  if (rc == 0) rc = write_state(sim, b->loop.state, &again, &len2, err, errlen);
  if (rc == 0 && (len2 != len || memcmp(again, bytes, len) != 0)) {
    size_t at = 0;
    while (at < len && at < len2 && again[at] == bytes[at]) at++;
    rc = gk_errf(err, errlen, GK_EMISMATCH,
                 "the state read back writes other bytes: %zu bytes, not "
                 "%zu, first difference at byte %zu (read_state misses or "
                 "misreads a field)",
                 len2, len, at);
  }
  free(bytes);
  free(again);
  return rc;
}

int gk_testkit_sync(const gk_sim *sim, const void *cfg, uint64_t seed,
                    uint32_t players, uint64_t at_step, uint64_t steps,
                    gk_testkit_sync_result *res, char *err, size_t errlen) {
  gk_testkit_sync_result dummy;
  if (res == NULL) res = &dummy;
  memset(res, 0, sizeof *res);
  if (at_step > STEPS_MAX || steps > STEPS_MAX)
    return gk_errf(err, errlen, GK_ERANGE, "at most %" PRIu64 " steps",
                   STEPS_MAX);
  run a, b;
  int rc = run_init(&a, sim, cfg, seed, players, err, errlen);
  int rcb = run_init(&b, sim, cfg, seed, players, err, errlen);
  if (rc == 0) rc = rcb;
  if (rc == 0 && at_step > 0)
    rc = run_steps(&a, &a.bots.base, at_step, err, errlen);
  if (rc == 0) rc = read_back(&a, &b, players, res, err, errlen);
  for (uint64_t s = at_step; rc == 0 && s < at_step + steps; s++) {
    /* One read of the bots feeds both runs the same merged input. */
    gk_step_input in;
    gk_const_input same;
    rc = a.bots.base.read(&a.bots.base, s, &in);
    if (rc == 0)
      rc = gk_const_input_init(&same, in.inputs, players, sim->input_size);
    if (rc == 0) rc = run_steps(&a, &same.base, 1, err, errlen);
    if (rc == 0) rc = run_steps(&b, &same.base, 1, err, errlen);
    if (rc != 0) break;
    res->steps_compared++;
    if (a.loop.last_hash != b.loop.last_hash) {
      res->parted = 1;
      res->parted_at = s;
      res->hash = a.loop.last_hash;
      res->hash_read = b.loop.last_hash;
      rc = gk_errf(err, errlen, GK_EMISMATCH,
                   "the run read back at step %" PRIu64 " parted from the "
                   "straight run at step %" PRIu64 ": %016" PRIx64
                   ", straight %016" PRIx64
                   " (write_state leaves out something that affects the "
                   "future)",
                   at_step, s, b.loop.last_hash, a.loop.last_hash);
    }
  }
  run_close(&a);
  run_close(&b);
  return rc;
}
