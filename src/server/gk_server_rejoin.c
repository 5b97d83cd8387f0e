/* gk_server_rejoin.c: a player whose connection dropped comes back
 * (rejoin), from the referee's own snapshot.
 *
 * The story:
 *   1. At the start every player gets a reconnect secret (128 random
 *      bits from gk_server_random) in RECONNECT_SECRET.
 *   2. Its connection drops: with reconnect.hold_ms set the slot is held
 *      (sv_rejoin_hold) instead of removed. While it is away the match
 *      stalls on it (the STALL notice names it) or, with while_away
 *      "neutral", the session gets all-zero records for it
 *      (gk_net_session_away_tick), confirmed and recorded like any other.
 *   3. A new connection sends REJOIN_ROOM(code, slot, secret; in token
 *      mode also a fresh join token with the slot's client id, checked by
 *      gk_server_auth.c before anything here). A wrong
 *      secret is refused (GK_EAUTH) and counted, and is a strike; a slot
 *      whose hold expired is refused (GK_EEXPIRED): it was removed, as
 *      without a hold. A slot whose old connection is still up (its drop
 *      has not reached the server: ENet notices a silent peer only at its
 *      timeout) is taken over: the secret proves the slot's owner, so the
 *      old connection gets ERROR(GK_EEXIST) and is closed (take_over).
 *      Otherwise the connection takes the slot: MATCH_START,
 *      RECONNECT_SECRET again, then the referee's state after its last
 *      step S (sv_snapshot_send) with the hash at S, and the session sends
 *      it the confirmed steps from S on (gk_net_session_rejoin). The peer
 *      checks the hash before it steps (gk_net_peer_snap.c).
 *   4. A hold that expires removes the player (gk_net_session_disconnect)
 *      exactly as a drop without a hold does.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_server_internal.h"
#include "gk_state.h"

/* --- snapshots ------------------------------------------------------------ */

static int send_chunks(gk_server *s, uint32_t peer, const gk_wire_msg *begin,
                       const uint8_t *bytes) {
  const gk_wire_snap_begin *b = &begin->u.snap_begin;
  int rc = sv_send(s, peer, begin);
  for (uint32_t i = 0; rc == 0 && i < b->chunks; i++) {
    gk_wire_msg m;
    gk_wire_chunk_msg(&m, GK_MSG_SNAPSHOT_CHUNK, b->id, bytes, b->total,
                      b->chunk_size, i);
    rc = sv_send(s, peer, &m);
  }
  return rc;
}

int sv_snapshot_send(gk_server *s, sv_room *r, uint32_t peer, int kind,
                     uint64_t next_input, uint64_t *bytes_out) {
  const gk_sim *sim = r->genre->sim;
  const gk_loop *lp = &r->session.loop;
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  sim->write_state(gk_loop_state(lp), &w.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&w, &len);
  int werr = w.w.err;
  gk_buf_writer_close(&w);
  static const uint8_t none[1];
  if (bytes == NULL && werr != 0) return GK_ENOMEM;
  if (len > GK_WIRE_SNAP_TOTAL_MAX) {
    free(bytes);
    return GK_ETOOBIG;
  }
  const uint8_t *data = bytes != NULL ? bytes : none;
  uint64_t hash = 0, steps = lp->steps;
  if (steps == 0 || gk_loop_hash_at(lp, steps - 1, &hash) != 0)
    hash = gk_chunk_sum(data, len);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SNAPSHOT_BEGIN;
  gk_wire_snap_begin *b = &m.u.snap_begin;
  b->id = (uint32_t)(s->stats.snapshots_sent + 1u);
  b->kind = (uint8_t)kind;
  memcpy(b->code, r->code, sizeof b->code);
  b->step = steps;
  b->hash = hash;
  b->next_input = next_input;
  b->active_mask = gk_inbuf_active_at(&r->session.inbuf, steps);
  if (b->active_mask == 0) b->active_mask = r->session.cfg.active_mask;
  b->total = (uint32_t)len;
  b->chunk_size = GK_WIRE_SNAP_CHUNK_MAX;
  b->chunks = gk_chunk_count(len, GK_WIRE_SNAP_CHUNK_MAX);
  b->sum = gk_chunk_sum(data, len);
  int rc = send_chunks(s, peer, &m, data);
  free(bytes);
  s->stats.snapshots_sent++;
  s->stats.snapshot_bytes += len;
  if (bytes_out != NULL) *bytes_out = len;
  return rc;
}

/* --- secrets and holds ---------------------------------------------------- */

/* A room's part of this file (r->rejoin): no other file sees its fields. */
struct sv_rejoin {
  uint8_t secret[GK_PLAYERS_MAX][GK_WIRE_SECRET_LEN];
  uint64_t away_until_ms[GK_PLAYERS_MAX]; /* hold deadline of an away slot */
  uint32_t away;                          /* mask of slots held for a rejoin */
  uint32_t secret_set;                    /* slots whose secret was drawn */
  uint64_t rejoins;
};

sv_rejoin *sv_rejoin_new(void) {
  return calloc(1, sizeof(sv_rejoin));
}

void sv_rejoin_free(sv_rejoin *j) {
  free(j);
}

static void send_secret(gk_server *s, const sv_room *r, uint32_t slot) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_RECONNECT_SECRET;
  m.u.secret.slot = (uint8_t)slot;
  memcpy(m.u.secret.secret, r->rejoin->secret[slot], GK_WIRE_SECRET_LEN);
  sv_send(s, r->conn[slot], &m);
}

void sv_rejoin_secret(gk_server *s, sv_room *r, uint32_t slot) {
  sv_auth_bind_slot(s, r, slot); /* token mode: a rejoin must be this client */
  if (gk_server_random(r->rejoin->secret[slot], GK_WIRE_SECRET_LEN) != 0) {
    gk_log_msg(s->log, GK_LOG_ERROR, "secret_failed", r->code, "reason",
               "no random bytes: this slot cannot rejoin");
    return;
  }
  r->rejoin->secret_set |= 1u << slot;
  send_secret(s, r, slot);
}

void sv_rejoin_secrets(gk_server *s, sv_room *r) {
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != SV_NO_CONN) sv_rejoin_secret(s, r, i);
}

int sv_rejoin_hold(gk_server *s, sv_room *r, uint32_t slot) {
  uint32_t hold = s->cfg->reconnect_hold_ms;
  if (hold == 0 || r->state != SV_ROOM_PLAYING || r->end_pending ||
      slot >= r->nslots || (r->rejoin->secret_set >> slot & 1u) == 0)
    return 0;
  r->rejoin->away |= 1u << slot;
  r->rejoin->away_until_ms[slot] = sv_now_ms(s) + hold;
  s->stats.players_held++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "player_away", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_u64(s->log, "step", gk_net_session_confirmed(&r->session));
    gk_log_u64(s->log, "hold_ms", hold);
    gk_log_str(s->log, "while_away",
               s->cfg->reconnect_neutral ? "neutral" : "stall");
    gk_log_end(s->log);
  }
  return 1;
}

static void expire(gk_server *s, sv_room *r, uint32_t slot, uint64_t now) {
  r->rejoin->away &= ~(1u << slot);
  s->stats.holds_expired++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "hold_expired", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_u64(s->log, "step", gk_net_session_confirmed(&r->session));
    gk_log_end(s->log);
  }
  gk_net_session_disconnect(&r->session, slot, now);
  if (sv_room_connected(r) == 0)
    gk_net_session_end(&r->session, GK_WIRE_END_ALL_LEFT, now);
  sv_match_after(s, r);
}

void sv_rejoin_tick(gk_server *s, sv_room *r, uint64_t now) {
  sv_rejoin *j = r->rejoin;
  for (uint32_t i = 0; j->away != 0 && i < r->nslots; i++) {
    if ((j->away >> i & 1u) == 0) continue;
    if (r->state != SV_ROOM_PLAYING || r->end_pending) {
      j->away &= ~(1u << i); /* the match is over: nothing to come back to */
    } else if (now >= j->away_until_ms[i]) {
      expire(s, r, i, now);
    } else if (gk_net_session_away_tick(&r->session, i,
                                        s->cfg->reconnect_neutral) != 0) {
      j->away &= ~(1u << i); /* removed meanwhile (by the creator) */
    }
  }
  sv_spectators_tick(s, r, now);
}

/* --- REJOIN_ROOM ---------------------------------------------------------- */

static int secret_equal(const uint8_t *a, const uint8_t *b) {
  uint8_t d = 0;
  for (size_t i = 0; i < GK_WIRE_SECRET_LEN; i++) d |= (uint8_t)(a[i] ^ b[i]);
  return d == 0;
}

/* Why REJOIN_ROOM cannot be granted (0: it can); *why gets the text. */
static int rejoin_check(gk_server *s, const sv_conn *c, const sv_room *r,
                        const gk_wire_rejoin *q, const char **why) {
  uint32_t slot = q->slot;
  if (c->room != SV_NO_ROOM) return *why = "already in a room", GK_ESTATE;
  if (r == NULL) return *why = "no room with that code", GK_ENOTFOUND;
  if (r->state != SV_ROOM_PLAYING || r->end_pending)
    return *why = "the room's match is not running", GK_ECLOSED;
  if (slot >= r->nslots) return *why = "no such slot in the room", GK_ERANGE;
  if ((r->rejoin->secret_set >> slot & 1u) == 0 ||
      !secret_equal(q->secret, r->rejoin->secret[slot])) {
    s->stats.rejoin_bad_secret++;
    return *why = "wrong reconnect secret for that slot", GK_EAUTH;
  }
  if (r->conn[slot] == SV_NO_CONN && (r->rejoin->away >> slot & 1u) == 0)
    return *why = "that slot is no longer held (reconnect.hold_ms passed, "
                  "or it was removed)",
           GK_EEXPIRED;
  return 0;
}

static void refuse(gk_server *s, uint32_t peer, const sv_room *r,
                   const gk_wire_rejoin *q, int rc, const char *why) {
  s->stats.refused++;
  s->stats.rejoins_refused++;
  if (gk_log_begin(s->log, GK_LOG_WARN, "rejoin_refused", r ? r->code : NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_u64(s->log, "slot", q->slot);
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "reason", why);
    gk_log_end(s->log);
  }
  if (rc == GK_EAUTH || rc == GK_ENOTFOUND)
    sv_strike(s, peer, "rejoin refused", rc);
  if (sv_conn_get(s, peer)) sv_send_error(s, peer, rc, why);
}

void sv_log_snapshot_player(gk_server *s, const sv_room *r, const char *event,
                            uint32_t slot, uint64_t step, uint64_t next_input,
                            uint64_t bytes, const char *key, uint64_t value) {
  if (!gk_log_begin(s->log, GK_LOG_INFO, event, r->code)) return;
  gk_log_u64(s->log, "slot", slot);
  gk_log_u64(s->log, "snapshot_step", step);
  gk_log_u64(s->log, "snapshot_bytes", bytes);
  gk_log_u64(s->log, "next_input", next_input);
  gk_log_u64(s->log, key, value);
  gk_log_end(s->log);
}

/* The slot's old connection is still up: the rejoin, which proved the
 * secret, takes the slot, and the old connection leaves without touching
 * the room (its disconnect finds no room). */
static void take_over(gk_server *s, sv_room *r, uint32_t slot) {
  uint32_t old = r->conn[slot];
  sv_conn *oc = sv_conn_get(s, old);
  if (oc) oc->room = SV_NO_ROOM;
  r->conn[slot] = SV_NO_CONN;
  s->stats.rejoin_takeovers++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "rejoin_takeover", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_u64(s->log, "old_peer", old);
    gk_log_end(s->log);
  }
  sv_send_error(s, old, GK_EEXIST,
                "another connection took this slot back with its secret");
  sv_conn_close(s, old, 0);
}

void sv_on_rejoin(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  const gk_wire_rejoin *q = &m->u.rejoin;
  sv_conn *c = sv_conn_get(s, peer);
  sv_room *r = sv_room_find(s, q->code);
  const char *why = NULL;
  int rc = rejoin_check(s, c, r, q, &why);
  uint64_t step = 0, next_input = 0;
  if (rc == 0) {
    /* The referee runs every confirmed step first, so the snapshot is of
     * the confirmed head: the steps after it are all still held. */
    if (gk_net_session_tick(&r->session, sv_now_ms(s)) < 0 ||
        r->session.loop.steps != gk_net_session_confirmed(&r->session))
      rc = GK_ESTATE;
    step = r->session.loop.steps;
  }
  if (rc == 0) {
    rc = gk_net_session_rejoin(&r->session, q->slot, step, &next_input);
  }
  if (rc != 0 && why == NULL) why = "the match cannot take the slot back now";
  if (rc != 0) {
    refuse(s, peer, r, q, rc, why);
    return;
  }
  uint32_t slot = q->slot;
  uint64_t now = sv_now_ms(s);
  uint64_t hold = s->cfg->reconnect_hold_ms;
  uint64_t away_ms = 0; /* a takeover: when it dropped is not known */
  const sv_rejoin *j = r->rejoin;
  if ((j->away >> slot & 1u) != 0 && j->away_until_ms[slot] >= now)
    away_ms = hold - (j->away_until_ms[slot] - now);
  if (r->conn[slot] != SV_NO_CONN) take_over(s, r, slot);
  r->conn[slot] = peer;
  r->rejoin->away &= ~(1u << slot);
  c->room = r->index;
  c->slot = slot;
  sv_auth_admit(s, peer); /* in a room: the handshake deadline is met */
  gk_wire_msg out;
  sv_room_match_start(s, r, slot, &out);
  sv_send(s, peer, &out);
  send_secret(s, r, slot);
  uint64_t bytes = 0;
  rc = sv_snapshot_send(s, r, peer, GK_WIRE_SNAP_REJOIN, next_input, &bytes);
  s->stats.rejoins++;
  r->rejoin->rejoins++;
  sv_log_snapshot_player(s, r, "player_rejoined", slot, step, next_input, bytes,
                         "away_ms", away_ms);
  if (rc != 0) /* the connection cannot take it: it drops and is held again */
    sv_conn_close(s, peer, 0);
}
