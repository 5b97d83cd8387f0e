/* gk_room_rejoin.c: a player whose connection dropped comes back
 * (rejoin), from the referee's own snapshot.
 *
 * The story:
 *   1. At the start every player gets a reconnect secret (128 random
 *      bits from gk_server_random) in RECONNECT_SECRET.
 *   2. Its connection drops: with reconnect.hold_ms set the slot is held
 *      (gk_room__rejoin_hold) instead of removed. While it is away the match
 *      stalls on it (the STALL notice names it) or, with while_away
 *      "neutral", the session gets all-zero records for it
 *      (gk_net_session_away_tick), confirmed and recorded like any other.
 *   3. A new connection sends REJOIN_ROOM(code, slot, secret; in token
 *      mode also a fresh join token with the slot's client id, checked by
 *      the shell's admission before anything here). A wrong
 *      secret is refused (GK_EAUTH) and counted, and is a strike; a slot
 *      whose hold expired is refused (GK_EEXPIRED): it was removed, as
 *      without a hold. A slot whose old connection is still up (its drop
 *      has not reached the server: ENet notices a silent peer only at its
 *      timeout) is taken over: the secret proves the slot's owner, so the
 *      old connection gets ERROR(GK_EEXIST) and is closed (take_over).
 *      Otherwise the connection takes the slot: MATCH_START,
 *      RECONNECT_SECRET again, then the referee's state after its last
 *      step S (gk_room__snapshot_send) with the hash at S, and the session
 * sends it the confirmed steps from S on (gk_net_session_rejoin). The peer
 *      checks the hash before it steps (gk_net_peer_snap.c).
 *   4. A hold that expires removes the player (gk_net_session_disconnect)
 *      exactly as a drop without a hold does.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

/* --- secrets and holds ---------------------------------------------------- */

/* A room's part of this file (r->rejoin): no other file sees its fields. */
struct gk_room__rejoin {
  uint8_t secret[GK_PLAYERS_MAX][GK_WIRE_SECRET_LEN];
  uint64_t away_until_ms[GK_PLAYERS_MAX]; /* hold deadline of an away slot */
  uint32_t away;                          /* mask of slots held for a rejoin */
  uint32_t secret_set;                    /* slots whose secret was drawn */
  uint64_t rejoins;
};

gk_room__rejoin *gk_room__rejoin_new(void) {
  return calloc(1, sizeof(gk_room__rejoin));
}

void gk_room__rejoin_free(gk_room__rejoin *j) {
  free(j);
}

static void send_secret(gk_room_host *h, const gk_room *r, uint32_t slot) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_RECONNECT_SECRET;
  m.u.secret.slot = (uint8_t)slot;
  memcpy(m.u.secret.secret, r->rejoin->secret[slot], GK_WIRE_SECRET_LEN);
  gk_room__send(h, r->conn[slot], &m);
}

void gk_room__rejoin_secret(gk_room_host *h, gk_room *r, uint32_t slot) {
  gk_room__bind_slot(h, r, slot); /* token mode: a rejoin must be this client */
  if (gk_server_random(r->rejoin->secret[slot], GK_WIRE_SECRET_LEN) != 0) {
    gk_log_msg(h->log, GK_LOG_ERROR, "secret_failed", r->code, "reason",
               "no random bytes: this slot cannot rejoin");
    return;
  }
  r->rejoin->secret_set |= 1u << slot;
  send_secret(h, r, slot);
}

void gk_room__rejoin_secrets(gk_room_host *h, gk_room *r) {
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != GK_ROOM_NO_CONN) gk_room__rejoin_secret(h, r, i);
}

int gk_room__rejoin_hold(gk_room_host *h, gk_room *r, uint32_t slot) {
  uint32_t hold = h->cfg->reconnect_hold_ms;
  if (hold == 0 || r->state != GK_ROOM_PLAYING || r->end_pending ||
      slot >= r->nslots || (r->rejoin->secret_set >> slot & 1u) == 0)
    return 0;
  r->rejoin->away |= 1u << slot;
  r->rejoin->away_until_ms[slot] = gk_room__now(h) + hold;
  h->stats.players_held++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_away", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "step", gk_net_session_confirmed(&r->session));
    gk_log_u64(h->log, "hold_ms", hold);
    gk_log_str(h->log, "while_away",
               h->cfg->reconnect_neutral ? "neutral" : "stall");
    gk_log_end(h->log);
  }
  return 1;
}

static void expire(gk_room_host *h, gk_room *r, uint32_t slot, uint64_t now) {
  r->rejoin->away &= ~(1u << slot);
  h->stats.holds_expired++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "hold_expired", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "step", gk_net_session_confirmed(&r->session));
    gk_log_end(h->log);
  }
  gk_net_session_disconnect(&r->session, slot, now);
  if (gk_room__connected(r) == 0)
    gk_net_session_end(&r->session, GK_WIRE_END_ALL_LEFT, now);
  gk_room__match_after(h, r);
}

void gk_room__rejoin_tick(gk_room_host *h, gk_room *r, uint64_t now) {
  gk_room__rejoin *j = r->rejoin;
  for (uint32_t i = 0; j->away != 0 && i < r->nslots; i++) {
    if ((j->away >> i & 1u) == 0) continue;
    if (r->state != GK_ROOM_PLAYING || r->end_pending) {
      j->away &= ~(1u << i); /* the match is over: nothing to come back to */
    } else if (now >= j->away_until_ms[i]) {
      expire(h, r, i, now);
    } else if (gk_net_session_away_tick(&r->session, i,
                                        h->cfg->reconnect_neutral) != 0) {
      j->away &= ~(1u << i); /* removed meanwhile (by the creator) */
    }
  }
}

/* --- REJOIN_ROOM ---------------------------------------------------------- */

static int secret_equal(const uint8_t *a, const uint8_t *b) {
  uint8_t d = 0;
  for (size_t i = 0; i < GK_WIRE_SECRET_LEN; i++) d |= (uint8_t)(a[i] ^ b[i]);
  return d == 0;
}

/* Why REJOIN_ROOM cannot be granted (0: it can); *why gets the text. */
static int rejoin_check(gk_room_host *h, const gk_room_conn *c,
                        const gk_room *r, const gk_wire_rejoin *q,
                        const char **why) {
  uint32_t slot = q->slot;
  if (c->room != NULL) return *why = "already in a room", GK_ESTATE;
  if (r == NULL) return *why = "no room with that code", GK_ENOTFOUND;
  if (r->state != GK_ROOM_PLAYING || r->end_pending)
    return *why = "the room's match is not running", GK_ECLOSED;
  if (slot >= r->nslots) return *why = "no such slot in the room", GK_ERANGE;
  if ((r->rejoin->secret_set >> slot & 1u) == 0 ||
      !secret_equal(q->secret, r->rejoin->secret[slot])) {
    h->stats.rejoin_bad_secret++;
    return *why = "wrong reconnect secret for that slot", GK_EAUTH;
  }
  if (r->conn[slot] == GK_ROOM_NO_CONN && (r->rejoin->away >> slot & 1u) == 0)
    return *why = "that slot is no longer held (reconnect.hold_ms passed, "
                  "or it was removed)",
           GK_EEXPIRED;
  return 0;
}

static void refuse(gk_room_host *h, uint32_t peer, const gk_room *r,
                   const gk_wire_rejoin *q, int rc, const char *why) {
  h->stats.refused++;
  h->stats.rejoins_refused++;
  if (gk_log_begin(h->log, GK_LOG_WARN, "rejoin_refused", r ? r->code : NULL)) {
    gk_log_u64(h->log, "peer", peer);
    gk_log_u64(h->log, "slot", q->slot);
    gk_log_err(h->log, "code", rc);
    gk_log_str(h->log, "reason", why);
    gk_log_end(h->log);
  }
  if (rc == GK_EAUTH || rc == GK_ENOTFOUND)
    gk_room__strike(h, peer, "rejoin refused", rc);
  if (gk_room__conn_get(h, peer)) gk_room__send_error(h, peer, rc, why);
}

void gk_room__log_snapshot_player(gk_room_host *h, const gk_room *r,
                                  const char *event, uint32_t slot,
                                  uint64_t step, uint64_t next_input,
                                  uint64_t bytes, const char *key,
                                  uint64_t value) {
  if (!gk_log_begin(h->log, GK_LOG_INFO, event, r->code)) return;
  gk_log_u64(h->log, "slot", slot);
  gk_log_u64(h->log, "snapshot_step", step);
  gk_log_u64(h->log, "snapshot_bytes", bytes);
  gk_log_u64(h->log, "next_input", next_input);
  gk_log_u64(h->log, key, value);
  gk_log_end(h->log);
}

/* The slot's old connection is still up: the rejoin, which proved the
 * secret, takes the slot, and the old connection leaves without touching
 * the room (its disconnect finds no room). */
static void take_over(gk_room_host *h, gk_room *r, uint32_t slot) {
  uint32_t old = r->conn[slot];
  gk_room_conn *oc = gk_room__conn_get(h, old);
  if (oc) oc->room = NULL;
  r->conn[slot] = GK_ROOM_NO_CONN;
  h->stats.rejoin_takeovers++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "rejoin_takeover", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "old_peer", old);
    gk_log_end(h->log);
  }
  gk_room__send_error(h, old, GK_EEXIST,
                      "another connection took this slot back with its secret");
  gk_room__conn_close(h, old, 0);
}

void gk_room__on_rejoin(gk_room_host *h, gk_room *r, uint32_t peer,
                        const gk_wire_msg *m) {
  const gk_wire_rejoin *q = &m->u.rejoin;
  gk_room_conn *c = gk_room__conn_get(h, peer);
  const char *why = NULL;
  int rc = rejoin_check(h, c, r, q, &why);
  uint64_t step = 0, next_input = 0;
  if (rc == 0) {
    /* The referee runs every confirmed step first, so the snapshot is of
     * the confirmed head: the steps after it are all still held. */
    if (gk_net_session_tick(&r->session, gk_room__now(h)) < 0 ||
        r->session.loop.steps != gk_net_session_confirmed(&r->session))
      rc = GK_ESTATE;
    step = r->session.loop.steps;
  }
  if (rc == 0) {
    rc = gk_net_session_rejoin(&r->session, q->slot, step, &next_input);
  }
  if (rc != 0 && why == NULL) why = "the match cannot take the slot back now";
  if (rc != 0) {
    refuse(h, peer, r, q, rc, why);
    return;
  }
  uint32_t slot = q->slot;
  uint64_t now = gk_room__now(h);
  uint64_t hold = h->cfg->reconnect_hold_ms;
  uint64_t away_ms = 0; /* a takeover: when it dropped is not known */
  const gk_room__rejoin *j = r->rejoin;
  if ((j->away >> slot & 1u) != 0 && j->away_until_ms[slot] >= now)
    away_ms = hold - (j->away_until_ms[slot] - now);
  if (r->conn[slot] != GK_ROOM_NO_CONN) take_over(h, r, slot);
  r->conn[slot] = peer;
  r->rejoin->away &= ~(1u << slot);
  gk_room__seat(c, r, slot, 0);
  gk_room__admit(h, peer); /* in a room: the handshake deadline is met */
  gk_wire_msg out;
  gk_room__match_start_msg(h, r, slot, &out);
  gk_room__send(h, peer, &out);
  send_secret(h, r, slot);
  gk_room__roster_to(h, r, peer);
  uint64_t bytes = 0;
  rc = gk_room__snapshot_send(h, r, peer, GK_WIRE_SNAP_REJOIN, next_input,
                              &bytes);
  h->stats.rejoins++;
  r->rejoin->rejoins++;
  gk_room__log_snapshot_player(h, r, "player_rejoined", slot, step, next_input,
                               bytes, "away_ms", away_ms);
  if (rc != 0) /* the connection cannot take it: it drops and is held again */
    gk_room__conn_close(h, peer, 0);
}
