/* gk_server_match.c: a room's match, from START_MATCH until the room goes.
 *
 * The story of one match, as this file sees it:
 *   1. sv_match_begin (from gk_server_room.c's START_MATCH) opens the
 *      room's gk_net_session and, with replays on, a replay writer;
 *   2. gk_server_route.c hands the session every match datagram of the
 *      room, decoded, with the sender's slot; the step timer
 *      (gk_server.c) calls sv_match_tick, which ticks the session; the
 *      session's `step` callback appends each step to the replay;
 *   3. the session's `ended` callback marks the room; after the tick,
 *      sv_match_end finishes the replay (footer, fsync, rename) on libuv's
 *      thread pool and the room drains: the session, in its after-the-end
 *      state, keeps repeating the last confirmed steps and taking the
 *      players' acknowledgements until gk_net_session_drained says every
 *      connected player holds them (peers end only after running the last
 *      step), at most SV_DRAIN_MS; then the room is freed.
 * Nothing a room does reaches another room: each has its own session,
 * counters and replay, and a failure in one (a replay disk error, a genre
 * that fails) ends only that room.
 *
 * Callbacks from a session never change the room table directly: they set
 * flags (end_pending, desync_end) that the caller acts on once the session
 * call has returned (sv_match_after, sv_match_tick).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_err.h"
#include "gk_server_internal.h"

/* --- finishing replays off the loop ----------------------------------------
 * gk_replay_writer_finish fsyncs the file and its folder, which can take a
 * long time on a slow or busy disk. It runs on libuv's thread pool so no
 * room waits for another room's disk: the writer is moved into a job (the
 * room never touches it again), the worker finishes it, and the result is
 * logged back on the loop. */
typedef struct replay_job {
  uv_work_t req;
  gk_server *srv;
  gk_replay_writer w;
  char code[GK_WIRE_CODE_LEN + 1];
  char path[GK_SERVER_PATH_MAX + 64];
  int rc;
  char err[GK_REPLAY_MSG_MAX];
} replay_job;

static void job_report(gk_server *s, replay_job *j) {
  if (j->rc == 0) {
    s->stats.replays_written++;
    if (gk_log_begin(s->log, GK_LOG_INFO, "replay_written", j->code)) {
      gk_log_str(s->log, "path", j->path);
      gk_log_u64(s->log, "steps", j->w.steps);
      gk_log_hex(s->log, "final_hash", j->w.last_hash);
      gk_log_end(s->log);
    }
  } else {
    s->stats.replays_failed++;
    if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_failed", j->code)) {
      gk_log_str(s->log, "path", j->path);
      gk_log_err(s->log, "code", j->rc);
      gk_log_str(s->log, "reason", j->err);
      gk_log_end(s->log);
    }
  }
}

static void job_work(uv_work_t *req) {
  replay_job *j = req->data;
  j->err[0] = '\0';
  j->rc = gk_replay_writer_finish(&j->w, j->err, sizeof(j->err));
}

static void job_done(uv_work_t *req, int status) {
  replay_job *j = req->data;
  gk_server *s = j->srv;
  (void)status; /* jobs are never cancelled */
  job_report(s, j);
  free(j);
  s->jobs--;
  if (s->closing && s->jobs == 0) {
    sv_log_stopped(s);
    sv_maybe_free(s);
  }
}

/* Moves the room's writer into `j`. */
static void job_fill(replay_job *j, gk_server *s, sv_room *r) {
  j->srv = s;
  j->w = r->replay; /* moved: the room's copy is dead from here on */
  memcpy(j->code, r->code, sizeof(j->code));
  snprintf(j->path, sizeof(j->path), "%s", r->replay_path);
  j->req.data = j;
}

static void replay_finish_async(gk_server *s, sv_room *r) {
  replay_job *j = calloc(1, sizeof(*j));
  r->replay_open = 0;
  if (j) {
    job_fill(j, s, r);
    if (uv_queue_work(s->loop, &j->req, job_work, job_done) == 0) {
      s->jobs++;
      return;
    }
  }
  /* no job (out of memory, or the pool refused): finish it here */
  replay_job local;
  replay_job *k = j ? j : &local;
  if (!j) {
    memset(&local, 0, sizeof(local));
    job_fill(&local, s, r);
  }
  k->rc = gk_replay_writer_finish(&k->w, k->err, sizeof(k->err));
  job_report(s, k);
  free(j);
}

/* --- the end ------------------------------------------------------------- */

static void log_match_end(gk_server *s, const sv_room *r, int reason) {
  const gk_net_session_stats *st = &r->session.stats;
  if (!gk_log_begin(s->log, GK_LOG_INFO, "match_end", r->code)) return;
  gk_log_str(s->log, "reason", gk_wire_end_name(reason));
  gk_log_u64(s->log, "steps", r->session_open ? r->session.loop.steps : 0);
  gk_log_hex(s->log, "final_hash",
             r->session_open ? r->session.loop.last_hash : 0);
  gk_log_u64(s->log, "players", r->nslots);
  gk_log_u64(s->log, "packets_in", st->packets_in);
  gk_log_u64(s->log, "packets_out", st->packets_out);
  gk_log_u64(s->log, "drop_malformed", st->drop_malformed);
  gk_log_u64(s->log, "drop_slot", st->drop_slot);
  gk_log_u64(s->log, "drop_unexpected", st->drop_unexpected);
  gk_log_u64(s->log, "drop_perm", st->drop_perm);
  gk_log_u64(s->log, "drop_ahead", st->drop_ahead);
  gk_log_u64(s->log, "hashes_compared", st->hashes_compared);
  gk_log_u64(s->log, "desyncs", st->desyncs);
  gk_log_u64(s->log, "steps_confirmed", st->steps_confirmed);
  gk_log_u64(s->log, "steps_late", st->steps_late);
  gk_log_u64(s->log, "stalls", st->stalls);
  gk_log_u64(s->log, "drops", r->drops);
  gk_log_u64(s->log, "strikes", r->strikes);
  sv_delay_log_end(s, r);
  gk_log_end(s->log);
}

void sv_match_end(gk_server *s, sv_room *r, int reason) {
  if (r->replay_open) replay_finish_async(s, r);
  if (r->state != SV_ROOM_PLAYING) return;
  s->stats.matches_ended++;
  s->stats.steps_confirmed += r->session.stats.steps_confirmed;
  s->stats.steps_late += r->session.stats.steps_late;
  log_match_end(s, r, reason);
  r->state = SV_ROOM_DRAINING;
  r->drain_until_ms = sv_now_ms(s) + SV_DRAIN_MS;
}

/* A draining room can go once every connected player acknowledged every
 * confirmed step (or SV_DRAIN_MS passed): the peers wait for the last
 * step before they end, so the session repeats it (from tick) until then. */
static int room_drained(gk_server *s, sv_room *r) {
  if (sv_now_ms(s) >= r->drain_until_ms) return 1;
  return gk_net_session_drained(&r->session, sv_room_connected(r));
}

void sv_match_after(gk_server *s, sv_room *r) {
  if (r->desync_end && !r->end_pending) {
    r->desync_end = 0;
    gk_net_session_end(&r->session, GK_WIRE_END_DESYNC, sv_now_ms(s));
  }
}

void sv_match_tick(gk_server *s, sv_room *r, uint64_t now) {
  if (r->state == SV_ROOM_DRAINING) {
    gk_net_session_tick(&r->session, now); /* repeats unacknowledged */
    if (room_drained(s, r)) sv_room_free(s, r);
    return;
  }
  if (r->state != SV_ROOM_PLAYING) return;
  if (!r->end_pending) {
    int rc = gk_net_session_tick(&r->session, now);
    if (rc < 0) {
      /* the genre or the loop failed: this room ends, no other */
      if (gk_log_begin(s->log, GK_LOG_ERROR, "room_failed", r->code)) {
        gk_log_err(s->log, "code", rc);
        gk_log_end(s->log);
      }
      sv_room_finalise(s, r, GK_WIRE_END_DESYNC);
      return;
    }
    sv_match_after(s, r);
    sv_delay_tick(s, r);
  }
  if (r->end_pending) sv_match_end(s, r, r->end_reason);
}

/* --- session callbacks (ctx = room) -------------------------------------- */

static int session_send(void *ctx, uint32_t slot, const uint8_t *bytes,
                        size_t len, int reliable) {
  sv_room *r = ctx;
  if (slot >= r->nslots || r->conn[slot] == SV_NO_CONN) return GK_ENOTFOUND;
  return gk_net_transport_send(&r->srv->transport, r->conn[slot], bytes, len,
                               reliable);
}

static void session_desync(void *ctx, const gk_net_desync *d) {
  sv_room *r = ctx;
  gk_server *s = r->srv;
  r->desyncs++;
  if (gk_log_begin(s->log, GK_LOG_WARN, "desync", r->code)) {
    gk_log_u64(s->log, "step", d->step);
    gk_log_u64(s->log, "player", d->player);
    gk_log_hex(s->log, "host_hash", d->host_hash);
    gk_log_hex(s->log, "peer_hash", d->peer_hash);
    gk_log_str(s->log, "policy",
               s->cfg->desync == GK_DESYNC_END ? "end" : "report");
    gk_log_end(s->log);
  }
  if (s->cfg->desync == GK_DESYNC_END) r->desync_end = 1;
}

static void session_stall(void *ctx, uint64_t step, uint32_t awaited,
                          uint64_t waited_ms) {
  sv_room *r = ctx;
  if (gk_log_begin(r->srv->log, GK_LOG_INFO, "stall", r->code)) {
    gk_log_u64(r->srv->log, "step", step);
    gk_log_u64(r->srv->log, "awaited_mask", awaited);
    gk_log_u64(r->srv->log, "waited_ms", waited_ms);
    gk_log_end(r->srv->log);
  }
}

static void session_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  sv_room *r = ctx;
  r->srv->stats.room_steps++;
  if (!r->replay_open) return;
  int rc = gk_replay_writer_append(&r->replay, in, hash);
  if (rc) {
    /* the match goes on; only its recording is lost */
    r->srv->stats.replays_failed++;
    if (gk_log_begin(r->srv->log, GK_LOG_ERROR, "replay_failed", r->code)) {
      gk_log_str(r->srv->log, "path", r->replay_path);
      gk_log_u64(r->srv->log, "step", in->step);
      gk_log_err(r->srv->log, "code", rc);
      gk_log_end(r->srv->log);
    }
    gk_replay_writer_abort(&r->replay);
    r->replay_open = 0;
  }
}

static void session_removed(void *ctx, uint32_t slot, uint64_t step) {
  sv_room *r = ctx;
  if (gk_log_begin(r->srv->log, GK_LOG_INFO, "player_removed", r->code)) {
    gk_log_u64(r->srv->log, "slot", slot);
    gk_log_u64(r->srv->log, "step", step);
    gk_log_end(r->srv->log);
  }
}

static void session_ended(void *ctx, uint64_t step, int reason) {
  sv_room *r = ctx;
  (void)step;
  r->end_pending = 1;
  r->end_reason = reason;
}

/* --- the start ----------------------------------------------------------- */

static int replay_path(gk_server *s, sv_room *r) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  int n =
      snprintf(r->replay_path, sizeof(r->replay_path),
               "%s/%04d%02d%02dT%02d%02d%02dZ-%s-%s.gkr", s->cfg->replay_dir,
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
               tm.tm_min, tm.tm_sec, r->genre->sim->name, r->code);
  return n > 0 && (size_t)n < sizeof(r->replay_path) ? 0 : GK_ETOOBIG;
}

/* Opens the replay writer; a failure is logged and the match is played
 * without a recording. */
static void replay_open(gk_server *s, sv_room *r) {
  char err[GK_REPLAY_MSG_MAX];
  char origin[128];
  err[0] = '\0';
  snprintf(origin, sizeof(origin), "gk-server room %s", r->code);
  cJSON *lockstep = sv_delay_record(s, r);
  gk_replay_meta meta = {r->genre->sim, r->cfg, r->seed,
                         r->nslots,     origin, lockstep};
  int rc = replay_path(s, r);
  if (!rc)
    rc = gk_replay_writer_open(&r->replay, r->replay_path, &meta, err,
                               sizeof(err));
  cJSON_Delete(lockstep);
  if (!rc) {
    r->replay_open = 1;
    return;
  }
  /* the match is played without a recording; say so loudly */
  s->stats.replays_failed++;
  if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_failed", r->code)) {
    gk_log_str(s->log, "path", r->replay_path);
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "reason", err);
    gk_log_end(s->log);
  }
}

static void session_config(const gk_server *s, const sv_room *r,
                           gk_net_session_config *sc) {
  memset(sc, 0, sizeof(*sc));
  sc->sim = r->genre->sim;
  sc->sim_config = r->cfg;
  sc->seed = r->seed;
  sc->players = r->nslots;
  sc->active_mask = sv_room_connected(r);
  sc->first_step = 0;
  sc->input_delay = r->input_delay;
  sc->lead = s->cfg->lead;
  sc->creator = 0;
  sc->window = s->cfg->window;
  sc->stall_notice_ms = s->cfg->stall_notice_ms;
  sc->auto_remove_ms = s->cfg->stall_auto_remove_ms;
  sc->late_slack_ms = s->cfg->late_slack_ms;
  sc->step_seconds.num = 1;
  sc->step_seconds.den = s->cfg->step_hz;
}

int sv_match_begin(gk_server *s, sv_room *r, char *err, size_t errlen) {
  sv_delay_choose(s, r);
  gk_net_session_config sc;
  session_config(s, r, &sc);
  gk_net_session_callbacks cb = {r,
                                 session_send,
                                 session_desync,
                                 session_stall,
                                 session_step,
                                 session_removed,
                                 session_ended};
  int rc =
      gk_net_session_init(&r->session, &sc, &cb, sv_now_ms(s), err, errlen);
  if (rc) return rc;
  r->session_open = 1;
  r->state = SV_ROOM_PLAYING;
  r->start_ns = uv_hrtime();
  s->stats.matches_started++;
  if (s->cfg->replays_enabled) replay_open(s, r);
  return 0;
}
