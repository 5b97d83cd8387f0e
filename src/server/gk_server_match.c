/* gk_server_match.c: a room's match, from START_MATCH until the room goes.
 *
 * The story of one match, as this file sees it:
 *   1. sv_match_begin (from gk_server_room.c's START_MATCH) opens the
 *      room's gk_net_session and, with replays on, its recording;
 *   2. gk_server_route.c hands the session every match datagram of the
 *      room, decoded, with the sender's slot; the step timer
 *      (gk_server.c) calls sv_match_tick, which ticks the session; the
 *      session's `step` callback appends each step to the replay;
 *   3. the session's `ended` callback marks the room; after the tick,
 *      sv_match_end hands the recording over to be finished (footer,
 *      fsync, rename) on libuv's thread pool (gk_server_replay.c, which
 *      also flushes it every replays.flush_ms) and the room drains: the
 *      session, in its after-the-end state, keeps repeating the last
 *      confirmed steps and taking the players' acknowledgements until
 *      gk_net_session_drained says every connected player holds them
 *      (peers end only after running the last step), at most
 *      SV_DRAIN_MS; then the room is freed.
 * Nothing a room does reaches another room: each has its own session,
 * counters and replay, and a failure in one (a replay disk error, a genre
 * that fails) ends only that room.
 *
 * Callbacks from a session never change the room table directly: they set
 * flags (end_pending, desync_end) that the caller acts on once the session
 * call has returned (sv_match_after, sv_match_tick).
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_internal.h"

/* --- the end ------------------------------------------------------------- */

static void log_match_end(gk_server *s, const sv_room *r, int reason) {
  const gk_net_session_stats *st = &r->session.stats;
  if (!gk_log_begin(s->log, GK_LOG_INFO, "match_end", r->code)) return;
  gk_log_str(s->log, "reason", gk_wire_end_name(reason));
  gk_log_u64(s->log, "steps", r->session_open ? r->session.loop.steps : 0);
  gk_log_hex(s->log, "final_hash",
             r->session_open ? r->session.loop.last_hash : 0);
  gk_log_u64(s->log, "players", r->nslots);
  gk_log_u64(s->log, "bot_mask", sv_bots_mask(r->bots));
  gk_log_u64(s->log, "bot_records", sv_bots_records(r->bots));
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
  sv_replay_finish(s, r);
  if (r->state != SV_ROOM_PLAYING) return;
  s->stats.matches_ended++;
  s->stats.steps_confirmed += r->session.stats.steps_confirmed;
  s->stats.steps_late += r->session.stats.steps_late;
  s->stats.stalls += r->session.stats.stalls;
  s->stats.desyncs += r->desyncs;
  log_match_end(s, r, reason);
  sv_spectators_end(s, r, r->session.loop.steps - 1, reason);
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
  /* what was confirmed lets the players sample further: the bots first */
  if (r->bots) sv_bots_feed(s, r);
}

void sv_match_tick(gk_server *s, sv_room *r, uint64_t now) {
  if (r->state != SV_ROOM_LOBBY) sv_rejoin_tick(s, r, now);
  if (r->dsy != NULL) sv_desync_tick(s, r, now);
  if (r->state == SV_ROOM_DRAINING) {
    gk_net_session_tick(&r->session, now); /* repeats unacknowledged */
    if (room_drained(s, r)) sv_room_free(s, r);
    return;
  }
  if (r->state != SV_ROOM_PLAYING) return;
  sv_replay_tick(s, r, now);
  if (!r->end_pending) {
    if (r->bots) sv_bots_feed(s, r);
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
  /* a bot is on this side: it needs nothing the session sends */
  if (sv_bots_mask(r->bots) >> slot & 1u) return 0;
  if (slot >= r->nslots || r->conn[slot] == SV_NO_CONN) return GK_ENOTFOUND;
  return sv_send_bytes(r->srv, r->conn[slot], bytes, len, reliable);
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
  gk_wire_msg m = {.type = GK_MSG_DESYNC};
  m.u.desync =
      (gk_wire_desync){d->step, (uint8_t)d->player, d->host_hash, d->peer_hash};
  sv_spectators_notice(s, r, &m); /* the players got it from the session */
  /* the report (and with policy "end", the end) follows the peer's state */
  if (!sv_desync_begin(s, r, d) && s->cfg->desync == GK_DESYNC_END)
    r->desync_end = 1;
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
  gk_wire_msg m = {.type = GK_MSG_STALL};
  m.u.stall = (gk_wire_stall){
      step, awaited, waited_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)waited_ms};
  sv_spectators_notice(r->srv, r, &m); /* the players got it from the session */
}

static void session_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  sv_room *r = ctx;
  r->srv->stats.room_steps++;
  sv_metrics_step(r->srv, r, in->step);
  sv_replay_step(r->srv, r, in, hash);
  sv_spectators_step(r, in);
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

static void session_config(const gk_server *s, const sv_room *r, uint32_t bots,
                           gk_net_session_config *sc) {
  memset(sc, 0, sizeof(*sc));
  sc->sim = r->genre->sim;
  sc->sim_config = r->cfg;
  sc->seed = r->seed;
  /* A genre that takes late joiners runs with the room's cap, the slots
   * beyond those present inactive until someone joins (late join); a full
   * room is the same match either way. */
  uint32_t nbots = sv_bots_seats(r->bots);
  sc->players =
      r->genre->sim->late_join ? r->max_players + nbots : r->nslots + nbots;
  sc->active_mask = sv_room_connected(r) | bots;
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
  sc->history.every = s->cfg->desync_history_every;
}

int sv_match_begin(gk_server *s, sv_room *r, char *err, size_t errlen) {
  sv_delay_choose(s, r);
  uint32_t bots = sv_bots_plan(r);
  gk_net_session_config sc;
  session_config(s, r, bots, &sc);
  int rc = sv_bots_prepare(r, sc.players, err, errlen);
  if (rc) return rc;
  gk_net_session_callbacks cb = {r,
                                 session_send,
                                 session_desync,
                                 session_stall,
                                 session_step,
                                 session_removed,
                                 session_ended};
  rc = gk_net_session_init(&r->session, &sc, &cb, sv_now_ms(s), err, errlen);
  if (rc) return rc;
  r->session_open = 1;
  r->state = SV_ROOM_PLAYING;
  r->start_ns = uv_hrtime();
  s->stats.matches_started++;
  if (s->cfg->replays_enabled) sv_replay_open(s, r);
  sv_bots_seat(s, r, bots); /* their first records, at once */
  return 0;
}
