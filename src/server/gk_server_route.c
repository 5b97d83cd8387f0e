/* gk_server_route.c: connections, and where each message goes.
 *
 * A link's backend (gk_server_link.h: ENet's is gk_server_link_enet.c,
 * WebSocket's gk_server_link_ws.c) reports it up, its data and its end
 * here: sv_link_up, sv_link_data, sv_link_down. Every link the server
 * takes has an entry in the connection table under a connection id of its
 * own; its gk_room_conn says the room it is in and its slot, or none.
 * Each message is decoded once, here, then dispatched, and nothing else:
 *   - a match message (INPUT, HASH, REMOVE_PLAYER, END_MATCH) or a desync
 *     answer (STATE_BEGIN, STATE_CHUNK) from a connection in a room whose
 *     match runs or has ended goes to gk_room_handle (the room hands it to
 *     its session with the connection's slot: a client only ever speaks
 *     for its own slot in its own room);
 *   - a room request goes, after admission (gk_server_auth.c), to
 *     gk_room_create, or to gk_room_join / _rejoin / _spectate with the
 *     room its code names; START_MATCH and a lobby's END_MATCH to the
 *     connection's room.
 * Bad messages are counted and are strikes; a connection with
 * `limits.strikes` strikes is disconnected at once. A connection that
 * goes leaves its room (gk_room_conn_down).
 */
#include <string.h>
#include <time.h>

#include "gk_err.h"
#include "gk_server_internal.h"

/* --- sending ------------------------------------------------------------- */

int sv_send(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  size_t len = 0;
  int rc = gk_wire_encode(m, s->buf, sizeof(s->buf), &len);
  if (rc) return rc;
  return sv_send_bytes(s, peer, s->buf, len,
                       gk_wire_type_reliable((int)m->type));
}

void sv_send_error(gk_server *s, uint32_t peer, int code, const char *text) {
  gk_room_send_error(&s->host, peer, code, text);
}

/* --- strikes ------------------------------------------------------------- */

void sv_strike(gk_server *s, uint32_t peer, const char *why, int code) {
  sv_conn *c = sv_conn_get(s, peer);
  if (!c) return;
  gk_room *r = sv_conn_room(c);
  s->stats.strikes++;
  c->strikes++;
  if (r) gk_room_note_strike(r);
  const char *code_room = r ? gk_room_code(r) : NULL;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "bad_message", code_room)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_str(s->log, "why", why);
    gk_log_err(s->log, "code", code);
    gk_log_u64(s->log, "strikes", c->strikes);
    gk_log_end(s->log);
  }
  if (c->strikes == s->cfg->strikes) {
    s->stats.kicked++;
    if (gk_log_begin(s->log, GK_LOG_WARN, "peer_kicked", code_room)) {
      gk_log_u64(s->log, "peer", peer);
      gk_log_u64(s->log, "strikes", c->strikes);
      gk_log_str(s->log, "last", why);
      gk_log_end(s->log);
    }
    sv_link_close(c->link, 1);
  }
}

/* --- receiving ----------------------------------------------------------- */

static int is_match_type(int type) {
  return type == GK_MSG_INPUT || type == GK_MSG_HASH ||
         type == GK_MSG_REMOVE_PLAYER || type == GK_MSG_END_MATCH;
}

/* A room request was answered. A connection that never had one accepted
 * and was just refused goes now, gracefully (its ERROR first): it has
 * nothing to wait for, and the client tries again on a fresh connection.
 * Left open, it would sit until limits.handshake_ms dropped it as a
 * limit hit, or forever with that limit off. */
static void close_refused(gk_server *s, uint32_t peer) {
  sv_conn *c = sv_conn_get(s, peer);
  if (!c || sv_auth_admitted(s, peer)) return;
  s->stats.refused_closed++;
  sv_link_close(c->link, 0);
}

/* A room request whose code no room here has: 1 if it is taken care of
 * (refused: the address asked for too many unknown codes; or looked up in
 * the fleet's directory), 0 to go on to the room library, which answers
 * an unknown code (counted here as a miss). */
static int not_here(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  if (sv_auth_misses_over(s, peer)) {
    close_refused(s, peer);
    return 1;
  }
  if (sv_fleet_ask(s, peer, m)) return 1;
  sv_auth_miss(s, peer);
  return 0;
}

/* A decoded message that is not for a running match: room control. */
static void route_control(gk_server *s, gk_room *r, uint32_t peer,
                          const gk_wire_msg *m) {
  gk_room_host *h = &s->host;
  uint64_t now = sv_room_now(s);
  gk_room *to = NULL; /* the room a request's code names, if here */
  switch (m->type) {
  case GK_MSG_CREATE_ROOM:
    if (sv_fleet_full(s)) {
      sv_send_error(s, peer, GK_EFULL, "this node holds fleet.max_rooms rooms");
      break;
    }
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0) {
      gk_room *nr =
          gk_room_create(h, peer, m, sv_auth_create_players(s, peer), now);
      if (nr) sv_room_publish(s, nr);
    }
    close_refused(s, peer);
    break;
  case GK_MSG_JOIN_ROOM:
    if (!(to = sv_room_find(s, m->u.room.code)) && not_here(s, peer, m))
      break; /* refused, or another node's perhaps: gk_server_fleet.c */
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      gk_room_join(h, to, peer, m, now);
    close_refused(s, peer);
    break;
  case GK_MSG_QUICK_PLAY:
    if (!sv_quick_play(s, peer, m)) close_refused(s, peer);
    break; /* else the directory answers: gk_server_quick.c */
  case GK_MSG_START_MATCH:
    gk_room_start(h, r, peer, now);
    break;
  case GK_MSG_NAME:
    gk_room_name(h, r, peer, m, now);
    break;
  case GK_MSG_NEXT_ROOM:
    gk_room_next(h, peer, m, now);
    break;
  case GK_MSG_REJOIN_ROOM:
    if (!(to = sv_room_find(s, m->u.rejoin.code)) && not_here(s, peer, m))
      break;
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      gk_room_rejoin(h, to, peer, m, now);
    close_refused(s, peer);
    break;
  case GK_MSG_SPECTATE:
    if (!(to = sv_room_find(s, m->u.room.code)) && not_here(s, peer, m)) break;
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      gk_room_spectate(h, to, peer, m, now);
    close_refused(s, peer);
    break;
  case GK_MSG_END_MATCH:
  case GK_MSG_INPUT:
  case GK_MSG_HASH:
  case GK_MSG_REMOVE_PLAYER:
  case GK_MSG_STATE_BEGIN: /* a desync answer after the room went */
  case GK_MSG_STATE_CHUNK:
    if (m->type == GK_MSG_END_MATCH && r &&
        gk_room_state_of(r) == GK_ROOM_LOBBY) {
      gk_room_lobby_end(h, r, peer, now);
      break;
    }
    /* no playing room: normal for a few packets after a match ended */
    s->stats.drop_no_room++;
    break;
  default:
    /* server-to-client types: a client never sends these */
    h->stats.drop_unexpected++;
    if (r) gk_room_note_drop(r);
    sv_strike(s, peer, "message type a client does not send", GK_EPROTO);
    break;
  }
}

/* The connection of a link, or NULL if the server is closing or does
 * not hold the link. */
static sv_conn *known_conn(gk_server *s, const sv_link *l) {
  if (s->closing || l->conn == SV_NO_CONN) return NULL;
  return sv_conn_get(s, l->conn);
}

void sv_link_data(gk_server *s, sv_link *l, const uint8_t *bytes, size_t len) {
  sv_conn *c = known_conn(s, l);
  if (!c) return;
  uint32_t peer = c->rc.id;
  s->stats.packets_in++;
  s->stats.bytes_in += len;
  l->stats.packets_in++;
  l->stats.bytes_in += len;
  sv_auth_datagram(s, peer, len);
  int type = len >= GK_WIRE_HEADER ? bytes[1] : -1;
  gk_room *r = sv_conn_room(c);
  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m); /* the only decode */
  if (r && gk_room_state_of(r) != GK_ROOM_LOBBY &&
      (is_match_type(type) || type == GK_MSG_STATE_BEGIN ||
       type == GK_MSG_STATE_CHUNK)) {
    gk_room_handle(r, peer, type, rc, &m, len, sv_room_now(s));
    return;
  }
  if (rc) {
    s->stats.drop_malformed++;
    if (r) gk_room_note_drop(r);
    sv_strike(s, peer, "malformed", rc);
    return;
  }
  route_control(s, r, peer, &m);
}

/* --- connections --------------------------------------------------------- */

void sv_link_up(gk_server *s, sv_link *l) {
  l->conn = SV_NO_CONN;
  if (s->closing) return;
  uint32_t peer;
  if (sv_ids_take(&s->ids, &peer) != 0) { /* every connection is in use */
    sv_link_close(l, 1);
    return;
  }
  sv_conn *c = sv_conn_get(s, peer);
  memset(c, 0, sizeof(*c));
  c->used = 1;
  c->rc.id = peer;
  c->rc.room = NULL;
  c->rc.since_ms = sv_now_ms(s);
  c->link = l;
  l->conn = peer;
  l->host->links++;
  l->host->links_up++;
  s->stats.connects++;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "connect", NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_str(s->log, "transport", sv_link_kind(l));
    gk_log_end(s->log);
  }
  if (sv_auth_connect(s, peer) != 0) {
    sv_link_close(l, 1); /* over a per-IP limit */
    return;
  }
  if (s->host.shutting_down) {
    sv_send_error(s, peer, GK_ECLOSED, "server is shutting down");
    sv_link_close(l, 0);
  }
}

void sv_link_down(gk_server *s, sv_link *l) {
  sv_conn *c = known_conn(s, l);
  if (!c) return;
  uint32_t peer = c->rc.id;
  s->stats.disconnects++;
  sv_auth_disconnect(s, c);
  gk_room *r = sv_conn_room(c);
  uint32_t slot = c->rc.slot;
  int spectator = c->rc.spectator;
  memset(c, 0, sizeof(*c));
  sv_ids_give(&s->ids, peer);
  l->conn = SV_NO_CONN;
  if (l->host->links) l->host->links--;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "disconnect",
                   r ? gk_room_code(r) : NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  if (!r) return;
  char code[GK_WIRE_CODE_LEN + 1];
  memcpy(code, gk_room_code(r), sizeof(code));
  gk_room_conn_down(r, peer, slot, spectator, sv_room_now(s));
  if ((r = sv_room_find(s, code)) != NULL) sv_quick_sync(s, r, 0);
}
