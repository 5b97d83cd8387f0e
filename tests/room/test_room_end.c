/* test_room_end.c: how a running match ends and its room goes, with time
 * set by hand: END_MATCH from the creator, every player leaving, a drop
 * without a hold, the operations' calls (gk_room_remove,
 * gk_room_end_match), and the recording, written only by the jobs the
 * room hands to env.queue (held by the world until the test runs them).
 * Players are the real peer engine (room_world.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_replay.h"
#include "gk_room_internal.h"
#include "room_world.h"

static rw_world *w;

static void setup(void) {
  w = rw_new();
}

static void teardown(void) {
  rw_free(w);
}

TestSuite(room_end, .init = setup, .fini = teardown, .timeout = 30);

static gk_room_view view(const gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  return v;
}

static void end_match_from(uint32_t id) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  rw_peer_send(w, id, &m);
  rw_pump(w);
}

Test(room_end, end_match_from_the_creator_ends_the_match_and_the_room_drains) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 300);
  end_match_from(id[1]); /* not the creator: refused */
  cr_assert_eq(rw_conn_of(w, id[1])->strikes, 1);
  cr_assert_eq(rw_count(w, id[0], GK_MSG_MATCH_END), 0);
  end_match_from(id[0]);
  rw_advance(w, 1);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_DRAINING);
  uint64_t last = 0;
  for (uint32_t i = 0; i < 2; i++) {
    gk_wire_msg m;
    cr_assert(rw_last(w, id[i], GK_MSG_MATCH_END, &m), "slot %u", i);
    cr_assert_eq(m.u.match_end.reason, GK_WIRE_END_HOST);
    last = m.u.match_end.step;
  }
  cr_assert_eq(last + 1, r->session.loop.steps, "the referee ran the last");
  cr_assert_eq(w->host.stats.matches_ended, 1);
  /* the players acknowledge the last step: the room goes long before
   * GK_ROOM_DRAIN_MS */
  rw_advance(w, 200);
  cr_assert_eq(w->ngone, 1);
  cr_assert_eq(w->gone[0], r);
  cr_assert_null(rw_conn_of(w, id[0])->rc.room);
  cr_assert_null(rw_conn_of(w, id[1])->rc.room);
  cr_assert_eq(w->host.stats.rooms_closed, 1);
  for (uint32_t i = 0; i < 2; i++)
    cr_assert(rw_conn_of(w, id[i])->peer.ended, "slot %u's engine ended", i);
}

Test(room_end, a_match_whose_players_all_leave_ends_and_its_room_goes) {
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  rw_advance(w, 300);
  rw_disconnect(w, id[1]);
  cr_assert_eq(w->host.stats.players_held, 0, "no hold configured");
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_REMOVE_PLAYER, &m));
  cr_assert_eq(m.u.remove.slot, 1, "removed at once");
  rw_advance(w, 100);
  cr_assert_eq(view(r).active_mask, 1);
  rw_disconnect(w, id[0]);
  rw_advance(w, 100);
  cr_assert_eq(w->ngone, 1, "nobody left: the room goes");
  char line[2048];
  cr_assert(rw_log_last(w, "match_end", line, sizeof(line)));
  cr_assert_not_null(strstr(line, "\"reason\":\"all_left\""), "%s", line);
}

Test(room_end, operations_remove_a_player_and_end_a_match) {
  uint32_t a = rw_connect(w);
  gk_room *r = rw_create(w, a, "survivors", 3, 0, NULL);
  uint64_t at = 0;
  cr_assert_eq(gk_room_remove(r, 0, &at, w->now_ms), GK_ESTATE, "a lobby");
  cr_assert_eq(gk_room_end_match(r, GK_WIRE_END_HOST, w->now_ms), GK_ECLOSED);
  rw_disconnect(w, a);
  uint32_t id[3];
  r = rw_match(w, "survivors", 3, 3, NULL, id);
  rw_advance(w, 300);
  cr_assert_eq(gk_room_remove(r, 5, &at, w->now_ms), GK_ERANGE);
  cr_assert_eq(gk_room_remove(r, 2, &at, w->now_ms), 0);
  cr_assert_eq(at, r->session.inbuf.confirmed);
  gk_wire_msg m;
  cr_assert(rw_last(w, id[0], GK_MSG_REMOVE_PLAYER, &m));
  cr_assert_eq(m.u.remove.slot, 2);
  cr_assert_eq(m.u.remove.step, at);
  rw_advance(w, 100);
  cr_assert_eq(view(r).active_mask, 3);
  cr_assert_eq(gk_room_remove(r, 2, &at, w->now_ms), GK_EPERM, "already out");
  cr_assert_eq(gk_room_end_match(r, GK_WIRE_END_SHUTDOWN, w->now_ms), 0);
  rw_advance(w, 20);
  cr_assert(rw_last(w, id[1], GK_MSG_MATCH_END, &m));
  cr_assert_eq(m.u.match_end.reason, GK_WIRE_END_SHUTDOWN);
  cr_assert_eq(gk_room_end_match(r, GK_WIRE_END_SHUTDOWN, w->now_ms),
               GK_ECLOSED, "it has ended");
  cr_assert_eq(gk_room_remove(r, 1, &at, w->now_ms), GK_ECLOSED);
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

Test(room_end, the_recording_is_written_by_the_jobs_and_only_by_them) {
  w->cfg.replays_enabled = 1;
  w->cfg.replay_flush_ms = 200;
  uint32_t id[2];
  gk_room *r = rw_match(w, "survivors", 2, 2, NULL, id);
  char path[GK_SERVER_PATH_MAX + 80], tmp[GK_SERVER_PATH_MAX + 96];
  cr_assert_not_null(view(r).replay);
  snprintf(path, sizeof(path), "%s", view(r).replay);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  cr_assert_eq(strncmp(path, w->cfg.replay_dir, strlen(w->cfg.replay_dir)), 0);
  cr_assert(file_exists(tmp), "the one disk call on the loop: the .tmp");
  rw_advance(w, 210);
  cr_assert_eq(w->njobs, 1, "a flush job");
  rw_advance(w, 400);
  cr_assert_eq(w->njobs, 1, "one job per recording at a time");
  cr_assert_eq(rw_run_jobs(w), 1);
  cr_assert_eq(w->host.stats.replay_flushes, 1);
  end_match_from(id[0]);
  rw_advance(w, 1);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_DRAINING);
  cr_assert_null(view(r).replay, "the recording left the room");
  uint64_t steps = r->session.loop.steps, ref = 0;
  cr_assert_eq(gk_loop_hash_at(&r->session.loop, steps - 1, &ref), 0);
  rw_advance(w, 300);
  cr_assert_eq(w->ngone, 1, "the room went; its recording's job did not run");
  cr_assert_not(file_exists(path), "not before its job ran");
  cr_assert_eq(w->njobs, 1, "a flush (due again), the finish after it");
  cr_assert_eq(rw_run_jobs(w), 2);
  cr_assert_eq(w->host.stats.replay_flushes, 2);
  cr_assert_eq(w->host.stats.replays_written, 1);
  cr_assert(file_exists(path));
  cr_assert_not(file_exists(tmp));
  char line[2048];
  cr_assert(rw_log_last(w, "replay_written", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "steps"), steps);
  gk_replay rp;
  cr_assert_eq(gk_replay_open_file(&rp, path), 0);
  cr_assert(rp.complete);
  cr_assert_eq(rp.steps, steps);
  cr_assert_eq(rp.players, 2);
  cr_assert_str_eq(rp.genre, "survivors");
  cr_assert_eq(rp.final_hash, ref);
  gk_replay_close(&rp);
}

/* A regular file where the replay folder should be: recordings cannot
 * open (ENOTDIR) until it goes. */
static void block_replay_dir(int on) {
  if (on) {
    FILE *f = fopen(w->cfg.replay_dir, "w");
    cr_assert_not_null(f);
    fclose(f);
  } else {
    cr_assert_eq(unlink(w->cfg.replay_dir), 0);
  }
}

/* After a disk fault ends (replay_resumed), the lost-recordings count
 * starts again: the next fault reports only its own losses. */
Test(room_end, each_disk_fault_reports_only_its_own_lost_recordings) {
  w->cfg.replays_enabled = 1;
  w->cfg.replay_flush_ms = 100;
  uint32_t id[2];
  char line[2048];
  block_replay_dir(1);
  rw_match(w, "survivors", 2, 2, NULL, id); /* lost: 1 */
  block_replay_dir(0);
  gk_room *b = rw_match(w, "survivors", 2, 2, NULL, id);
  cr_assert_not_null(view(b).replay, "the folder is back: recording");
  rw_advance(w, 150);
  rw_run_jobs(w); /* b's flush succeeds: the first fault is over */
  cr_assert(rw_log_last(w, "replay_resumed", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "recordings_lost"), 1, "%s", line);
  /* the second fault: the folder moves away, a file takes its place */
  char moved[GK_SERVER_PATH_MAX + 8];
  snprintf(moved, sizeof(moved), "%s.old", w->cfg.replay_dir);
  cr_assert_eq(rename(w->cfg.replay_dir, moved), 0);
  block_replay_dir(1);
  rw_match(w, "survivors", 2, 2, NULL, id);
  rw_match(w, "survivors", 2, 2, NULL, id); /* lost: 2 */
  rw_advance(w, 150);
  rw_run_jobs(w); /* b's next flush, into its open file: resumed */
  cr_assert(rw_log_last(w, "replay_resumed", line, sizeof(line)));
  cr_assert_eq(rw_log_u64(line, "recordings_lost"), 2,
               "the second fault lost 2, not both faults' 3: %s", line);
  cr_assert_eq(w->host.stats.replay_disk_errors, 3);
  block_replay_dir(0);
}
