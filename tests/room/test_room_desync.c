/* test_room_desync.c: desync examination with time set by hand. One
 * player's engine is nudged between two frames (a field of its state + 1,
 * as gk-bot --perturb does), so its hashes differ from the referee's; the
 * room asks it for its state (STATE_REQUEST), diffs the answer against the
 * referee's, and the bundle job (held by the world until the test runs
 * it) ends with a `desync_report` line. Players are the real peer engine
 * (room_world.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gk_err.h"
#include "gk_replay.h"
#include "gk_room_internal.h"
#include "gk_state_diff.h"
#include "room_world.h"

#define PERTURB_STEP 30
#define FIELD "players[1].kills"

static rw_world *w;

static void setup(void) {
  w = rw_new();
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_desync, .init = setup, .fini = teardown, .timeout = 30);

static int perturbed;

/* players[1].kills + 1 in this peer's run, between two frames. */
static void perturb(void *ctx, gk_net_peer *np) {
  (void)ctx;
  char err[GK_ERRMSG_MAX] = "";
  void *st = NULL;
  int rc = gk_state_patch_add(np->sim, np->sim_cfg, gk_loop_state(&np->loop),
                              FIELD, 1, &st, err, sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert_eq(gk_loop_replace(&np->loop, st), 0);
  perturbed++;
}

/* A two-player match whose slot 1 drifts after step PERTURB_STEP, played
 * until the room saw the desync and `extra` ms more; the desync's step. */
static gk_room *drifting_match(uint32_t *id, uint64_t extra, uint64_t *k) {
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  gk_net_peer_after_step(&rw_conn_of(w, id[1])->peer, PERTURB_STEP, perturb,
                         NULL);
  for (int t = 0; t < 2000 && r->desyncs == 0; t++) rw_advance(w, 1);
  cr_assert_eq(perturbed, 1);
  cr_assert_eq(r->desyncs, 1, "the room saw the desync");
  char line[2048];
  cr_assert(rw_log_last(w, "desync", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "player"), 1);
  *k = rw_log_u64(line, "step");
  cr_assert_eq(*k, PERTURB_STEP + 1, "the first step run after the nudge");
  rw_advance(w, extra);
  return r;
}

static int exists(const char *dir, const char *name) {
  char path[GK_SERVER_PATH_MAX + 160];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return stat(path, &st) == 0 && st.st_size > 0;
}

Test(room_desync, a_differing_state_is_diffed_and_reported_once_the_job_ran) {
  uint32_t id[2];
  uint64_t k = 0;
  gk_room *r = drifting_match(id, 50, &k);
  /* everyone was told; the drifting player was asked for its state */
  gk_wire_msg m;
  for (uint32_t i = 0; i < 2; i++) {
    cr_assert(rw_last(w, id[i], GK_MSG_DESYNC, &m), "slot %u", i);
    cr_assert_eq(m.u.desync.player, 1);
    cr_assert_eq(m.u.desync.step, k);
  }
  cr_assert_eq(rw_count(w, id[0], GK_MSG_STATE_REQUEST), 0);
  cr_assert_eq(rw_count(w, id[1], GK_MSG_STATE_REQUEST), 1);
  cr_assert(rw_last(w, id[1], GK_MSG_STATE_REQUEST, &m));
  cr_assert_eq(m.u.state_req.step, k);
  cr_assert_gt(rw_conn_of(w, id[1])->peer.stats.state_bytes, 0,
               "its peer answered");
  /* the diff is made; the bundle waits for its job */
  cr_assert_eq(w->njobs, 1);
  cr_assert_eq(rw_log_count(w, "desync_report"), 0);
  cr_assert_eq(rw_run_jobs(w), 1);
  cr_assert_eq(rw_log_count(w, "desync_report"), 1);
  char line[4096];
  cr_assert(rw_log_last(w, "desync_report", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "step"), k);
  cr_assert_eq(rw_log_u64(line, "slot"), 1);
  cr_assert_not_null(strstr(line, "\"result\":\"diffed\""), "%s", line);
  cr_assert_geq(rw_log_u64(line, "fields_differ"), 1);
  cr_assert_not_null(strstr(line, "\"first_path\":\"" FIELD "\""), "%s", line);
  cr_assert_gt(rw_log_u64(line, "peer_state_bytes"), 0);
  cr_assert_eq(rw_log_u64(line, "peer_state_bytes"),
               rw_log_u64(line, "referee_state_bytes"));
  cr_assert_eq(w->host.stats.desync_reports[GK_ROOM_DSY_DIFFED], 1);
  cr_assert_eq(w->host.stats.desync_bundles_written, 1);
  char dir[GK_SERVER_PATH_MAX + 64];
  snprintf(dir, sizeof(dir), "%s/%s-%llu-1", w->cfg.desync_dir, gk_room_code(r),
           (unsigned long long)k);
  cr_assert_not_null(strstr(line, dir), "the bundle %s: %s", dir, line);
  cr_assert(exists(dir, "diff.txt"));
  cr_assert(exists(dir, "diff.json"));
  cr_assert(exists(dir, "referee.state"));
  cr_assert(exists(dir, "peer.state"));
  cr_assert(exists(dir, "replay.gkr"), "the header-only replay");
  /* policy "report": the match goes on */
  uint64_t before = r->session.loop.steps;
  rw_advance(w, 200);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING);
  cr_assert_gt(r->session.loop.steps, before + 5);
  cr_assert_eq(r->desyncs, 1, "each player is reported once");
}

Test(room_desync, a_peer_that_never_answers_is_reported_after_the_timeout) {
  w->cfg.desync_timeout_ms = 300;
  uint32_t id[2];
  uint64_t k = 0;
  rw_conn_of(w, 0 + RW_ID(1))->drop_up =
      1ull << GK_MSG_STATE_BEGIN | 1ull << GK_MSG_STATE_CHUNK;
  drifting_match(id, 250, &k);
  cr_assert_eq(id[1], RW_ID(1));
  cr_assert_eq(rw_count(w, id[1], GK_MSG_STATE_REQUEST), 1);
  cr_assert_eq(w->njobs, 0, "still waiting for the answer");
  rw_advance(w, 60);
  cr_assert_eq(w->njobs, 1);
  rw_run_jobs(w);
  char line[4096];
  cr_assert(rw_log_last(w, "desync_report", line, sizeof(line)));
  cr_assert_not_null(strstr(line, "\"result\":\"no_answer\""), "%s", line);
  cr_assert_not_null(
      strstr(line, "no answer within desync.timeout_ms (300 ms)"), "%s", line);
  cr_assert_eq(rw_log_u64(line, "fields_differ"), 0);
  cr_assert_eq(w->host.stats.desync_reports[GK_ROOM_DSY_NO_ANSWER], 1);
}

Test(room_desync, policy_end_ends_the_match_once_the_report_is_out) {
  w->cfg.desync = GK_DESYNC_END;
  uint32_t id[2];
  uint64_t k = 0;
  gk_room *r = drifting_match(id, 50, &k);
  cr_assert_eq(rw_count(w, id[0], GK_MSG_MATCH_END), 0, "not before");
  cr_assert_eq(rw_run_jobs(w), 1);
  rw_advance(w, 40);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_MATCH_END, &m));
  cr_assert_eq(m.u.match_end.reason, GK_WIRE_END_DESYNC);
  char line[4096];
  cr_assert(rw_log_last(w, "match_end", line, sizeof(line)));
  cr_assert_not_null(strstr(line, "\"reason\":\"desync\""), "%s", line);
  cr_assert_eq(w->host.stats.matches_ended, 1);
  (void)r;
}

Test(room_desync, the_bundle_waits_for_the_recording_and_cuts_it_at_the_step) {
  w->cfg.replays_enabled = 1;
  w->cfg.replay_flush_ms = 60000; /* no periodic flush: the examination asks */
  uint32_t id[2];
  uint64_t k = 0;
  gk_room *r = drifting_match(id, 50, &k);
  /* the diff is made; the recording must reach the disk first */
  cr_assert_eq(w->njobs, 1, "a flush job, asked for by the examination");
  rw_advance(w, 20);
  cr_assert_eq(w->njobs, 1, "no bundle before the flush");
  cr_assert_eq(rw_run_jobs(w), 1);
  cr_assert_eq(w->host.stats.replay_flushes, 1);
  cr_assert_eq(rw_log_count(w, "desync_report"), 0);
  rw_advance(w, 1); /* the room's tick sees the steps on disk */
  /* flush_now flushes the rest too, now that no job holds the recording */
  cr_assert_eq(w->njobs, 2, "a flush of the rest and the bundle: %u", w->njobs);
  cr_assert_eq(rw_run_jobs(w), 2);
  char line[4096];
  cr_assert(rw_log_last(w, "desync_report", line, sizeof(line)));
  cr_assert_not_null(strstr(line, "\"result\":\"diffed\""), "%s", line);
  cr_assert_eq(rw_log_u64(line, "replay_steps"), k + 1);
  cr_assert_not_null(strstr(line, "\"replay_note\":null"), "%s", line);
  char path[GK_SERVER_PATH_MAX + 160];
  snprintf(path, sizeof(path), "%s/%s-%llu-1/replay.gkr", w->cfg.desync_dir,
           gk_room_code(r), (unsigned long long)k);
  gk_replay rp;
  cr_assert_eq(gk_replay_open_file(&rp, path), 0, "%s", path);
  cr_assert(rp.complete);
  cr_assert_eq(rp.steps, k + 1, "cut at the desync's step");
  uint64_t ref = 0;
  cr_assert_eq(gk_loop_hash_at(&r->session.loop, k, &ref), 0);
  cr_assert_eq(rp.last_hash, ref, "the referee's hash at the step");
  gk_replay_close(&rp);
}
