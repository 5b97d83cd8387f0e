/* gk_room_join.c: a player joins a running match (late join).
 *
 * The story:
 *   1. A genre says whether it takes players after the start
 *      (gk_sim.late_join). Its matches run with players = the room's cap
 *      and active_mask = the slots present at the start
 *      (gk_room_match.c), so a running match has room for joiners
 *      while the room is not full; a full room's match is the match it
 *      always was.
 *   2. JOIN_ROOM with the code of a running room comes here from
 *      gk_room_lobby.c (after the connect token, in token mode: a join
 *      token, as for the lobby). Refused with ERROR: a genre that takes
 *      nobody after the start (GK_ESTATE, as before late join existed), a
 *      match that is ending (GK_ECLOSED), a full room (GK_EFULL), an input
 *      delay change in progress (GK_EBUSY: ask again in a moment).
 *   3. The referee runs every confirmed step first; the next fresh slot
 *      joins at the next unconfirmed step J (gk_net_session_join: an
 *      ADD_PLAYER command at J, so the joiner's bit is set in the active
 *      mask of every merged input from J, for every peer, the referee and
 *      the replay alike). Its records for J .. J + D - 1 are neutral.
 *   4. The joiner gets JOINED, MATCH_START (its slot is not in the start
 *      mask: that tells its peer to wait for a snapshot; the input delay
 *      in force now), RECONNECT_SECRET, and the referee's state after J
 *      steps (SNAPSHOT_BEGIN kind JOIN, next_input J + D). From there it
 *      is any rejoined player: CONFIRMED from J, hashes compared from J.
 */
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

int gk_room__join_late_check(const gk_room_host *h, const gk_room *r,
                             const char **why) {
  if (!r->genre->sim->late_join)
    return *why = "the match has started, and its genre takes no players "
                  "after the start",
           GK_ESTATE;
  if (r->state != GK_ROOM_PLAYING || r->end_pending || r->session.ended)
    return *why = "the match is ending", GK_ECLOSED;
  if (h->draining) return *why = "the server is draining", GK_ECLOSED;
  if (r->nslots >= r->session.cfg.players)
    return *why = "the room is full", GK_EFULL;
  return 0;
}

static void refuse(gk_room_host *h, uint32_t peer, const gk_room *r, int rc,
                   const char *why) {
  h->stats.refused++;
  if (gk_log_begin(h->log, GK_LOG_WARN, "late_join_refused", r->code)) {
    gk_log_u64(h->log, "peer", peer);
    gk_log_err(h->log, "code", rc);
    gk_log_str(h->log, "reason", why);
    gk_log_end(h->log);
  }
  gk_room__send_error(h, peer, rc, why);
}

static const char *join_error(int rc) {
  switch (rc) {
  case GK_EBUSY:
    return "an input delay change is in progress: join again in a moment";
  case GK_ECLOSED:
    return "the match is ending";
  default:
    return "the match cannot take a player now";
  }
}

/* JOINED, MATCH_START and RECONNECT_SECRET to the joiner of `slot`. */
static void send_welcome(gk_room_host *h, gk_room *r, uint32_t slot) {
  uint32_t peer = r->conn[slot];
  gk_wire_msg out;
  memset(&out, 0, sizeof out);
  out.type = GK_MSG_JOINED;
  out.u.joined.slot = (uint8_t)slot;
  uint32_t n = 0;
  for (uint32_t m = gk_room__connected(r); m != 0; m &= m - 1) n++;
  out.u.joined.players = (uint8_t)n;
  gk_room__send(h, peer, &out);
  gk_room__match_start_msg(h, r, slot, &out);
  out.u.match_start.input_delay = (uint8_t)gk_net_session_delay(&r->session);
  gk_room__send(h, peer, &out);
  gk_room__rejoin_secret(h, r, slot);
}

void gk_room__join_late(gk_room_host *h, uint32_t peer, gk_room *r) {
  uint64_t now = gk_room__now(h);
  uint32_t slot = r->nslots;
  uint64_t at = 0, next_input = 0;
  /* The referee runs every confirmed step first: J is the confirmed head,
   * and the snapshot is the state after J steps. */
  int rc = 0;
  if (gk_net_session_tick(&r->session, now) < 0 ||
      r->session.loop.steps != gk_net_session_confirmed(&r->session))
    rc = GK_ESTATE;
  if (rc == 0)
    rc = gk_net_session_join(&r->session, slot, r->session.loop.steps, &at,
                             &next_input, now);
  if (rc != 0) {
    refuse(h, peer, r, rc, join_error(rc));
    return;
  }
  gk_room_conn *c = gk_room__conn_get(h, peer);
  r->nslots++;
  r->conn[slot] = peer;
  gk_room__seat(c, r, slot, 0);
  gk_room__admit(h, peer);
  send_welcome(h, r, slot);
  gk_room__roster_to(h, r, peer);
  uint64_t bytes = 0;
  rc =
      gk_room__snapshot_send(h, r, peer, GK_WIRE_SNAP_JOIN, next_input, &bytes);
  gk_room__log_snapshot_player(h, r, "player_joined_late", slot, at, next_input,
                               bytes, "peer", peer);
  /* A connection that cannot take the snapshot drops; its slot is then
   * held (or removed) like any player's. */
  if (rc != 0) gk_room__conn_close(h, peer, 0);
}
