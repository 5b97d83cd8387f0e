/* gk_room_match.c: a room's match, from START_MATCH until the room goes.
 *
 * The story of one match, as this file sees it:
 *   1. gk_room__match_begin (from gk_room_lobby.c's START_MATCH) opens the
 *      room's gk_net_session and, with replays on, its recording;
 *   2. the shell hands the room (gk_room_handle) every match message of the
 *      room, decoded, with the sender's slot; the step timer
 *      (the shell's) calls gk_room_tick, which ticks the session; the
 *      session's `step` callback appends each step to the replay;
 *   3. the session's `ended` callback marks the room; after the tick,
 *      gk_room__match_end hands the recording over to be finished (footer,
 *      fsync, rename) on a worker thread (env.queue) (gk_room_replay.c, which
 *      also flushes it every replays.flush_ms) and the room drains: the
 *      session, in its after-the-end state, keeps repeating the last
 *      confirmed steps and taking the players' acknowledgements until
 *      gk_net_session_drained says every connected player holds them
 *      (peers end only after running the last step), at most
 *      GK_ROOM_DRAIN_MS; then the room is freed.
 * Nothing a room does reaches another room: each has its own session,
 * counters and replay, and a failure in one (a replay disk error, a genre
 * that fails) ends only that room.
 *
 * Callbacks from a session never change the room table directly: they set
 * flags (end_pending, desync_end) that the caller acts on once the session
 * call has returned (gk_room__match_after, gk_room__match_tick).
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

/* --- the end ------------------------------------------------------------- */

static void log_match_end(gk_room_host *h, const gk_room *r, int reason) {
  const gk_net_session_stats *st = &r->session.stats;
  if (!gk_log_begin(h->log, GK_LOG_INFO, "match_end", r->code)) return;
  gk_log_str(h->log, "reason", gk_wire_end_name(reason));
  gk_log_u64(h->log, "steps", r->session_open ? r->session.loop.steps : 0);
  gk_log_hex(h->log, "final_hash",
             r->session_open ? r->session.loop.last_hash : 0);
  gk_log_u64(h->log, "players", r->nslots);
  gk_log_u64(h->log, "bot_mask", gk_room__bots_mask(r->bots));
  gk_log_u64(h->log, "bot_records", gk_room__bots_records(r->bots));
  gk_log_u64(h->log, "packets_in", st->packets_in);
  gk_log_u64(h->log, "packets_out", st->packets_out);
  gk_log_u64(h->log, "drop_malformed", st->drop_malformed);
  gk_log_u64(h->log, "drop_slot", st->drop_slot);
  gk_log_u64(h->log, "drop_unexpected", st->drop_unexpected);
  gk_log_u64(h->log, "drop_perm", st->drop_perm);
  gk_log_u64(h->log, "drop_ahead", st->drop_ahead);
  gk_log_u64(h->log, "hashes_compared", st->hashes_compared);
  gk_log_u64(h->log, "desyncs", st->desyncs);
#define GK_ROOM_LOG_FIGURE(name, kind, help)                                   \
  gk_log_u64(h->log, #name, st->name);
  GK_ROOM_SCHEDULE(GK_ROOM_LOG_FIGURE)
#undef GK_ROOM_LOG_FIGURE
  gk_log_u64(h->log, "drops", r->drops);
  gk_log_u64(h->log, "strikes", r->strikes);
  gk_room__delay_log_end(h, r);
  gk_log_end(h->log);
}

void gk_room__match_end(gk_room_host *h, gk_room *r, int reason) {
  gk_room__replay_finish(h, r);
  if (r->state != GK_ROOM_PLAYING) return;
  h->stats.matches_ended++;
#define GK_ROOM_ADD_FIGURE(name, kind, help)                                   \
  h->stats.name += r->session.stats.name;
  GK_ROOM_SCHEDULE(GK_ROOM_ADD_FIGURE)
#undef GK_ROOM_ADD_FIGURE
  h->stats.desyncs += r->desyncs;
  log_match_end(h, r, reason);
  gk_room__spectators_end(h, r, r->session.loop.steps - 1, reason);
  r->state = GK_ROOM_DRAINING;
  r->drain_until_ms = gk_room__now(h) + GK_ROOM_DRAIN_MS;
}

/* A draining room can go once every connected player acknowledged every
 * confirmed step (or GK_ROOM_DRAIN_MS passed): the peers wait for the last
 * step before they end, so the session repeats it (from tick) until then. */
static int room_drained(gk_room_host *h, gk_room *r) {
  if (gk_room__now(h) >= r->drain_until_ms) return 1;
  return gk_net_session_drained(&r->session, gk_room__connected(r));
}

void gk_room__match_after(gk_room_host *h, gk_room *r) {
  if (r->desync_end && !r->end_pending) {
    r->desync_end = 0;
    gk_net_session_end(&r->session, GK_WIRE_END_DESYNC, gk_room__now(h));
  }
  /* what was confirmed lets the players sample further: the bots first */
  if (r->bots) gk_room__bots_feed(h, r);
}

void gk_room__match_tick(gk_room_host *h, gk_room *r, uint64_t now) {
  if (r->state != GK_ROOM_LOBBY) {
    gk_room__rejoin_tick(h, r, now);
    gk_room__spectators_tick(h, r, now);
  }
  if (r->dsy != NULL) gk_room__desync_tick(h, r, now);
  if (r->state == GK_ROOM_DRAINING) {
    gk_net_session_tick(&r->session, now); /* repeats unacknowledged */
    if (room_drained(h, r)) gk_room__free(h, r);
    return;
  }
  if (r->state != GK_ROOM_PLAYING) return;
  gk_room__replay_tick(h, r, now);
  if (!r->end_pending) {
    if (r->bots) gk_room__bots_feed(h, r);
    int rc = gk_net_session_tick(&r->session, now);
    if (rc < 0) {
      /* the genre or the loop failed: this room ends, no other */
      if (gk_log_begin(h->log, GK_LOG_ERROR, "room_failed", r->code)) {
        gk_log_err(h->log, "code", rc);
        gk_log_end(h->log);
      }
      gk_room__finalise(h, r, GK_WIRE_END_DESYNC);
      return;
    }
    gk_room__match_after(h, r);
    gk_room__delay_tick(h, r);
  }
  if (r->end_pending) gk_room__match_end(h, r, r->end_reason);
}

/* --- session callbacks (ctx = room) -------------------------------------- */

static int session_send(void *ctx, uint32_t slot, const uint8_t *bytes,
                        size_t len, int reliable) {
  gk_room *r = ctx;
  /* a bot is on this side: it needs nothing the session sends */
  if (gk_room__bots_mask(r->bots) >> slot & 1u) return 0;
  if (slot >= r->nslots || r->conn[slot] == GK_ROOM_NO_CONN)
    return GK_ENOTFOUND;
  return gk_room__send_bytes(r->host, r->conn[slot], bytes, len, reliable);
}

static void session_desync(void *ctx, const gk_net_desync *d) {
  gk_room *r = ctx;
  gk_room_host *h = r->host;
  r->desyncs++;
  if (gk_log_begin(h->log, GK_LOG_WARN, "desync", r->code)) {
    gk_log_u64(h->log, "step", d->step);
    gk_log_u64(h->log, "player", d->player);
    gk_log_hex(h->log, "host_hash", d->host_hash);
    gk_log_hex(h->log, "peer_hash", d->peer_hash);
    gk_log_str(h->log, "policy",
               h->cfg->desync == GK_DESYNC_END ? "end" : "report");
    gk_log_end(h->log);
  }
  gk_wire_msg m = {.type = GK_MSG_DESYNC};
  m.u.desync =
      (gk_wire_desync){d->step, (uint8_t)d->player, d->host_hash, d->peer_hash};
  gk_room__spectators_notice(h, r,
                             &m); /* the players got it from the session */
  /* the report (and with policy "end", the end) follows the peer's state */
  if (!gk_room__desync_begin(h, r, d) && h->cfg->desync == GK_DESYNC_END)
    r->desync_end = 1;
}

static void session_stall(void *ctx, uint64_t step, uint32_t awaited,
                          uint64_t waited_ms) {
  gk_room *r = ctx;
  if (gk_log_begin(r->host->log, GK_LOG_INFO, "stall", r->code)) {
    gk_log_u64(r->host->log, "step", step);
    gk_log_u64(r->host->log, "awaited_mask", awaited);
    gk_log_u64(r->host->log, "waited_ms", waited_ms);
    gk_log_end(r->host->log);
  }
  gk_wire_msg m = {.type = GK_MSG_STALL};
  m.u.stall = (gk_wire_stall){
      step, awaited, waited_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)waited_ms};
  gk_room__spectators_notice(r->host, r,
                             &m); /* the players got it from the session */
}

static void session_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  gk_room *r = ctx;
  r->host->stats.room_steps++;
  if (r->host->env.step != NULL)
    r->host->env.step(r->host->env.user, r, in->step);
  gk_room__replay_step(r->host, r, in, hash);
  gk_room__spectators_step(r, in);
}

static void session_confirmed(void *ctx, uint64_t step, uint64_t late_ms) {
  gk_room *r = ctx;
  if (r->host->env.confirmed != NULL)
    r->host->env.confirmed(r->host->env.user, r, step, late_ms);
}

static void session_removed(void *ctx, uint32_t slot, uint64_t step) {
  gk_room *r = ctx;
  if (gk_log_begin(r->host->log, GK_LOG_INFO, "player_removed", r->code)) {
    gk_log_u64(r->host->log, "slot", slot);
    gk_log_u64(r->host->log, "step", step);
    gk_log_end(r->host->log);
  }
}

static void session_ended(void *ctx, uint64_t step, int reason) {
  gk_room *r = ctx;
  (void)step;
  r->end_pending = 1;
  r->end_reason = reason;
}

/* --- the start ----------------------------------------------------------- */

static void session_config(const gk_room_host *h, const gk_room *r,
                           uint32_t bots, gk_net_session_config *sc) {
  memset(sc, 0, sizeof(*sc));
  sc->sim = r->genre->sim;
  sc->sim_config = r->cfg;
  sc->seed = r->seed;
  /* A genre that takes late joiners runs with the room's cap, the slots
   * beyond those present inactive until someone joins (late join); a full
   * room is the same match either way. */
  uint32_t nbots = gk_room__bots_seats(r->bots);
  sc->players =
      r->genre->sim->late_join ? r->max_players + nbots : r->nslots + nbots;
  sc->active_mask = gk_room__connected(r) | bots;
  sc->first_step = 0;
  sc->input_delay = r->input_delay;
  sc->lead = r->lead;
  sc->creator = 0;
  sc->window = h->cfg->window;
  sc->stall_notice_ms = h->cfg->stall_notice_ms;
  sc->auto_remove_ms = h->cfg->stall_auto_remove_ms;
  /* with prediction the delay leaves up to rtt_ms of the round trip to
   * the heads: a step is late only past that too (docs/PROTOCOL.md) */
  sc->late_slack_ms = h->cfg->late_slack_ms + gk_room__predict_free_ms(h, r);
  sc->stall_ms = h->cfg->stall_ms;
  sc->step_seconds.num = 1;
  sc->step_seconds.den = h->cfg->step_hz;
  sc->history.every = h->cfg->desync_history_every;
}

int gk_room__match_begin(gk_room_host *h, gk_room *r, char *err,
                         size_t errlen) {
  gk_room__delay_choose(h, r);
  uint32_t bots = gk_room__bots_plan(r);
  gk_net_session_config sc;
  session_config(h, r, bots, &sc);
  int rc = gk_room__bots_prepare(r, sc.players, err, errlen);
  if (rc) return rc;
  gk_net_session_callbacks cb = {r,
                                 session_send,
                                 session_desync,
                                 session_stall,
                                 session_step,
                                 session_removed,
                                 session_ended,
                                 session_confirmed};
  rc = gk_net_session_init(&r->session, &sc, &cb, gk_room__now(h), err, errlen);
  if (rc) return rc;
  r->session_open = 1;
  r->state = GK_ROOM_PLAYING;
  r->start_ns = gk_room__clock_ns(h);
  h->stats.matches_started++;
  if (h->cfg->replays_enabled) gk_room__replay_open(h, r);
  gk_room__bots_seat(h, r, bots); /* their first records, at once */
  return 0;
}
