/* gk_replay_run.c: running a read replay through gk_loop (see
 * gk_replay.h): the replay as a step input, the genre and config checks,
 * and the verifier, which feeds the indexed steps to the loop with
 * { steps } budgets and compares every step's hash with the recorded one.
 */
#include "gk_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_genres.h"
#include "gk_replay_internal.h"

int gk_replay_prepare(const gk_replay *r, const gk_sim *sim, void *cfg,
                      char *err, size_t errlen) {
  int rc = gk_replay_check_sim(r, sim, err, errlen);
  if (rc != 0) return rc;
  return gk_config_from_json(sim, cfg, r->config, err, errlen);
}

/* A verdict for a run that cannot start (as gk_replay_steps.c's). */
static int invalid(gk_replay_verdict *v, int code, uint64_t offset,
                   const char *what) {
  v->status = GK_REPLAY_INVALID;
  v->code = code;
  v->offset = offset;
  snprintf(v->message, sizeof v->message, "offset %" PRIu64 ": %s (%s)", offset,
           what, gk_err_name(code));
  return v->status;
}

int gk_replay_run(const gk_replay *r, const gk_sim *sim, uint64_t steps,
                  gk_loop *loop, gk_replay_progress_cb progress, void *ctx,
                  gk_replay_verdict *v) {
  memset(v, 0, sizeof *v);
  if (!r->header_ok)
    return invalid(v, r->damage.code ? r->damage.code : GK_EINVAL,
                   r->damage.offset, r->damage.what);
  if (sim == NULL) sim = gk_genre_find(r->genre);
  char msg[GK_ERRMSG_MAX];
  msg[0] = '\0';
  void *cfg =
      sim != NULL ? calloc(1, sim->config_size ? sim->config_size : 1) : NULL;
  if (sim != NULL && cfg == NULL)
    return invalid(v, GK_ENOMEM, 0, "out of memory");
  int rc = gk_replay_prepare(r, sim, cfg, msg, sizeof msg);
  if (rc == 0) {
    rc = gk_loop_start(loop, sim, cfg, r->seed, r->players, msg, sizeof msg);
    if (rc != 0 && msg[0] == '\0')
      snprintf(msg, sizeof msg, "cannot start the run: %s", gk_strerror(rc));
  }
  if (sim != NULL && sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
  if (rc != 0) return invalid(v, rc, 0, msg);
  if (loop->ring_cap < GK_REPLAY_PROGRESS_STEPS)
    return invalid(v, GK_EINVAL, 0, "the loop's hash ring is too small");

  return gk_replay_run_to(r, loop, steps, progress, ctx, v);
}

int gk_replay_verify(const gk_replay *r, const gk_sim *sim,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v) {
  memset(v, 0, sizeof *v);
  gk_loop loop;
  gk_loop_options opts = {GK_REPLAY_PROGRESS_STEPS};
  int rc = gk_loop_init(&loop, &opts);
  if (rc != 0) return invalid(v, rc, 0, "cannot create a loop");
  gk_replay_run(r, sim, r->steps, &loop, progress, ctx, v);
  gk_loop_close(&loop);
  return gk_replay_judge(r, v);
}
