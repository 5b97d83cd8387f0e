/* gk_replay_steps.c: running a read replay's steps through gk_loop (see
 * gk_replay.h), with no cJSON (the browser build runs it too): the replay
 * as a step input, the genre checks, the hash-checking run from any step
 * and the judgement of the input delay rule and the reader's damage.
 * gk_replay_run.c adds the config (cJSON) and the fresh-loop verifier.
 */
#include "gk_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_replay_internal.h"

/* Step `step` of in's replay as the loop's input; *hash gets its recorded
 * hash. */
static int read_step(gk_replay_input *in, uint64_t step, gk_step_input *out,
                     uint64_t *hash) {
  gk_replay_step s;
  int rc = gk_replay_step_at(in->r, step, &s, &in->hint);
  if (rc != 0) return rc;
  out->step = step;
  out->active_mask = s.active_mask;
  out->flags = s.flags;
  out->players = in->r->players;
  out->inputs = s.inputs;
  *hash = s.hash;
  return 0;
}

static int replay_read(gk_input *base, uint64_t step, gk_step_input *out) {
  uint64_t hash;
  return read_step((gk_replay_input *)base, step, out, &hash);
}

void gk_replay_input_init(gk_replay_input *in, const gk_replay *r) {
  memset(in, 0, sizeof *in);
  in->base.read = replay_read;
  in->r = r;
}

int gk_replay_check_sim(const gk_replay *r, const gk_sim *sim, char *err,
                        size_t errlen) {
  if (!r->header_ok)
    return gk_errf(err, errlen, GK_EINVAL, "replay has no valid header");
  if (sim == NULL)
    return gk_errf(err, errlen, GK_ENOTFOUND, "genre '%s' is not in this build",
                   r->genre);
  if (strcmp(sim->name, r->genre) != 0)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "the replay is for genre '%s', not '%s'", r->genre,
                   sim->name);
  if (sim->version != r->genre_version)
    return gk_errf(err, errlen, GK_EVERSION,
                   "recorded with %s version %" PRIu32
                   ", this build has version %" PRIu32,
                   r->genre, r->genre_version, sim->version);
  if (sim->input_size != r->input_size)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "recorded input size %" PRIu32 ", %s uses %" PRIu32,
                   r->input_size, sim->name, sim->input_size);
  if (r->players < sim->players_min || r->players > sim->players_max)
    return gk_errf(err, errlen, GK_ERANGE,
                   "recorded with %" PRIu32 " players, %s takes %" PRIu32
                   "..%" PRIu32,
                   r->players, sim->name, sim->players_min, sim->players_max);
  return 0;
}

/* ===================================================================== */
/* verify                                                                  */

static int invalid(gk_replay_verdict *v, int code, uint64_t offset,
                   const char *what, uint64_t checked) {
  v->status = GK_REPLAY_INVALID;
  v->code = code;
  v->offset = offset;
  if (checked > 0)
    snprintf(v->message, sizeof v->message,
             "offset %" PRIu64 ": %s (%s); the %" PRIu64
             " steps before it verified",
             offset, what, gk_err_name(code), checked);
  else
    snprintf(v->message, sizeof v->message, "offset %" PRIu64 ": %s (%s)",
             offset, what, gk_err_name(code));
  return v->status;
}

/* The replay as input, checking each step's hash as the loop finishes it
 * (end_step runs after the step is hashed), so the recorded step is read
 * once per step, not again in a comparison pass. */
typedef struct verify_input {
  gk_replay_input in; /* must be first */
  const gk_loop *loop;
  uint64_t step, expected; /* the step being run and its recorded hash */
  uint64_t checked;        /* steps that matched before the first mismatch */
  int bad;                 /* a mismatch was seen at bad_step */
  uint64_t bad_step, bad_expected, bad_actual;
  /* a cursor over the indexed entries: the loop asks for steps in order,
   * so the next one is the entry after the last (no lookup per step) */
  uint64_t next;     /* the step `at` holds */
  const uint8_t *at; /* its entry */
  uint32_t left;     /* entries from `at` to the end of its block; 0: seek */
  size_t block;      /* the block `at` is in */
} verify_input;

static int verify_read(gk_input *base, uint64_t step, gk_step_input *out);

/* Points the cursor at step's entry by the index (the first step, a new
 * block, or a step out of order), then reads it. Kept out of line so the
 * per-step path saves no registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
verify_seek(verify_input *v, uint64_t step, gk_step_input *out) {
  gk_replay_step s;
  int rc = gk_replay_step_at(v->in.r, step, &s, &v->block);
  if (rc != 0) return rc;
  const gk__replay_block *b = &v->in.r->blocks[v->block];
  v->at = s.inputs - ENTRY_HEAD;
  v->left = (uint32_t)(b->count - (step - b->first));
  v->next = step;
  return verify_read(&v->in.base, step, out);
}

/* Step `step` from the entry at the cursor, which then moves on. */
static int verify_read(gk_input *base, uint64_t step, gk_step_input *out) {
  verify_input *v = (verify_input *)base;
  if (v->left == 0 || step != v->next) return verify_seek(v, step, out);
  const uint8_t *e = v->at;
  v->step = step;
  v->expected = gk_load_le64(e);
  out->step = step;
  out->active_mask = gk_load_le32(e + 8);
  out->flags = gk_load_le32(e + 12);
  out->players = v->in.r->players;
  out->inputs = e + ENTRY_HEAD;
  v->at = e + v->in.r->entry_size;
  v->left--;
  v->next = step + 1;
  return 0;
}

static void verify_end_step(gk_input *base) {
  verify_input *v = (verify_input *)base;
  if (v->bad) return;
  if (v->loop->last_hash == v->expected) {
    v->checked++;
    return;
  }
  v->bad = 1;
  v->bad_step = v->step;
  v->bad_expected = v->expected;
  v->bad_actual = v->loop->last_hash;
}

int gk_replay_run_to(const gk_replay *r, gk_loop *loop, uint64_t until,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v) {
  char msg[GK_ERRMSG_MAX];
  uint64_t steps = until < r->steps ? until : r->steps;
  verify_input vin;
  memset(&vin, 0, sizeof vin);
  gk_replay_input_init(&vin.in, r);
  vin.in.base.read = verify_read;
  vin.in.base.end_step = verify_end_step;
  vin.loop = loop;
  uint64_t done = loop->steps;
  while (done < steps && v->status == GK_REPLAY_OK) {
    uint64_t want = steps - done;
    if (want > GK_REPLAY_PROGRESS_STEPS) want = GK_REPLAY_PROGRESS_STEPS;
    int ran = gk_loop_frame(loop, &vin.in.base, gk_budget_steps(want), 0);
    if (ran < 0 || (uint64_t)ran != want) {
      int code = ran < 0 ? ran : loop->input_err;
      snprintf(msg, sizeof msg, "the loop stopped at step %" PRIu64 ": %s",
               done + (ran > 0 ? (uint64_t)ran : 0), gk_strerror(code));
      return invalid(v, code ? code : GK_EINPUT, 0, msg, done);
    }
    v->steps_checked += vin.checked;
    vin.checked = 0;
    if (vin.bad) {
      v->status = GK_REPLAY_MISMATCH;
      v->step = vin.bad_step;
      v->expected = vin.bad_expected;
      v->actual = vin.bad_actual;
      snprintf(v->message, sizeof v->message,
               "step %" PRIu64 ": expected hash 0x%016" PRIx64
               ", computed 0x%016" PRIx64,
               v->step, v->expected, v->actual);
      break;
    }
    done += want;
    if (progress != NULL && v->status == GK_REPLAY_OK)
      progress(ctx, done, r->steps);
  }
  return v->status;
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0) return 0;
  return 1;
}

/* With a "lockstep" record: the steps nobody sampled for are neutral, the
 * first input_delay steps and, after each raise from D to D' announced at
 * step A, steps A + D + lead .. A + D' + lead - 1 (docs/PROTOCOL.md
 * "Input delay"). Returns 0 or the first step that breaks the rule. */
static int check_delays(const gk_replay *r, gk_replay_verdict *v) {
  size_t hint = 0;
  size_t rec = (size_t)r->players * r->input_size;
  uint64_t from = 0, to = r->input_delay; /* neutral steps [from, to) */
  uint32_t d = r->input_delay;
  for (uint64_t s = 0; s < r->steps; s++) {
    gk_replay_step rs;
    if (gk_replay_step_at(r, s, &rs, &hint) != 0) break;
    if (s >= from && s < to && !all_zero(rs.inputs, rec)) {
      char msg[GK_REPLAY_MSG_MAX];
      snprintf(msg, sizeof msg,
               "step %" PRIu64 ": expected neutral input (no player samples "
               "for steps %" PRIu64 "..%" PRIu64 " under the input delay "
               "rule)",
               s, from, to - 1);
      return invalid(v, GK_EPROTO, 0, msg, v->steps_checked);
    }
    uint32_t nd = GK_STEP_DELAY_OF(rs.flags);
    if (nd == 0) continue;
    if (nd > d) {
      from = s + d + r->lead;
      to = from + (nd - d);
    }
    d = nd;
  }
  return v->status;
}

int gk_replay_judge(const gk_replay *r, gk_replay_verdict *v) {
  if (v->status == GK_REPLAY_OK && r->has_lockstep) check_delays(r, v);
  if (v->status == GK_REPLAY_OK && r->damage.code != 0)
    return invalid(v, r->damage.code, r->damage.offset, r->damage.what,
                   v->steps_checked);
  return v->status;
}
