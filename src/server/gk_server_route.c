/* gk_server_route.c: connections, and where each datagram goes.
 *
 * A link's backend (gk_server_link.h: ENet's is gk_server_link_enet.c)
 * reports it up, its data and its end here: sv_link_up, sv_link_data,
 * sv_link_down. Every link the server takes has an entry in the
 * connection table under a connection id of its own: the room it is in
 * and its slot, or none. Each datagram is decoded once, here:
 *   - a match message (INPUT, HASH, REMOVE_PLAYER, END_MATCH) from a
 *     connection in a playing or draining room goes, decoded, to that
 *     room's session with the connection's slot (a client only ever
 *     speaks for its own slot in its own room);
 *   - anything else is room control, handed to gk_server_room.c.
 * Bad messages are counted and are strikes; a connection with
 * `limits.strikes` strikes is disconnected at once. A connection that
 * goes leaves its room: a lobby whose creator left closes, a match
 * removes the player. Sending to connections is here too.
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

static void error_msg(gk_wire_msg *m, int code, const char *text) {
  memset(m, 0, sizeof(*m));
  m->type = GK_MSG_ERROR;
  m->u.error.code = (int16_t)code;
  /* the wire allows printable ASCII only */
  size_t j = 0;
  for (size_t i = 0; text && text[i] && j < GK_WIRE_TEXT_MAX; i++) {
    unsigned char c = (unsigned char)text[i];
    m->u.error.text[j++] = (char)((c >= 0x20 && c < 0x7f) ? c : '?');
  }
  m->u.error.text[j] = '\0';
}

/* Bytes of an ERROR around its text: header, code, text length. */
#define ERROR_FIXED (GK_WIRE_HEADER + 2u + 1u)

void sv_send_error(gk_server *s, uint32_t peer, int code, const char *text) {
  gk_wire_msg m;
  error_msg(&m, code, text);
  /* never a reply larger than the request to a connection not admitted
   * (an abuse limit): the text is cut to fit, or nothing is sent */
  size_t cap = sv_auth_reply_cap(s, peer);
  size_t n = strlen(m.u.error.text);
  if (cap < ERROR_FIXED) {
    s->stats.replies_suppressed++;
    return;
  }
  if (ERROR_FIXED + n > cap) {
    m.u.error.text[cap - ERROR_FIXED] = '\0';
    s->stats.replies_cut++;
  }
  sv_send(s, peer, &m);
}

void sv_send_room(gk_server *s, const sv_room *r, const gk_wire_msg *m) {
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != SV_NO_CONN) sv_send(s, r->conn[i], m);
}

void sv_send_room_error(gk_server *s, const sv_room *r, int code,
                        const char *text) {
  gk_wire_msg m;
  error_msg(&m, code, text);
  sv_send_room(s, r, &m);
}

/* --- strikes ------------------------------------------------------------- */

void sv_strike(gk_server *s, uint32_t peer, const char *why, int code) {
  sv_conn *c = sv_conn_get(s, peer);
  if (!c) return;
  sv_room *r = sv_conn_room(s, c);
  s->stats.strikes++;
  c->strikes++;
  if (r) r->strikes++;
  const char *code_room = r ? r->code : NULL;
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

/* Session drop codes that mean the sender misbehaved (as opposed to the
 * normal fallout of redundancy and reordering). */
static int is_offence(int rc) {
  switch (rc) {
  case GK_ESTALE:
  case GK_EEXIST:
  case GK_ECLOSED:
  case GK_ESTATE:
  case GK_ENOTFOUND:
  case GK_EFULL:
    return 0;
  default:
    return rc < 0;
  }
}

/* A match message (decoded or not: decode_rc) for a room whose match runs
 * or has just ended. The session counts what it drops. */
static void route_match(gk_server *s, sv_room *r, uint32_t peer, int decode_rc,
                        const gk_wire_msg *m, size_t len) {
  const sv_conn *c = sv_conn_get(s, peer);
  uint32_t slot = c->slot;
  if (c->spectator) {
    if (decode_rc == 0) sv_spectator_msg(s, r, peer, m);
    return;
  }
  if (r->state == SV_ROOM_DRAINING) {
    /* the match is over: the session still takes acknowledgements and
     * hashes, and nothing a peer sends now is held against it */
    gk_net_session_receive_decoded(&r->session, slot, decode_rc, m, len,
                                   sv_now_ms(s));
    return;
  }
  if (r->end_pending) return; /* the match is over; stragglers */
  uint32_t ridx = r->index;
  int rc = gk_net_session_receive_decoded(&r->session, slot, decode_rc, m, len,
                                          sv_now_ms(s));
  if (rc) {
    r->drops++;
    s->stats.drop_session++;
    /* may disconnect the peer; a playing room outlives that */
    if (is_offence(rc)) sv_strike(s, peer, "match message refused", rc);
  }
  if (!s->closing && s->rooms[ridx] == r) sv_match_after(s, r);
}

/* A decoded message that is not for a running match: room control. */
static void route_control(gk_server *s, sv_room *r, uint32_t peer,
                          const gk_wire_msg *m) {
  switch (m->type) {
  case GK_MSG_CREATE_ROOM:
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      sv_on_create(s, peer, m);
    break;
  case GK_MSG_JOIN_ROOM:
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      sv_on_join(s, peer, m);
    break;
  case GK_MSG_START_MATCH:
    sv_on_start(s, peer);
    break;
  case GK_MSG_REJOIN_ROOM:
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      sv_on_rejoin(s, peer, m);
    break;
  case GK_MSG_SPECTATE:
    if (sv_auth_request(s, peer, m, (uint64_t)time(NULL)) == 0)
      sv_on_spectate(s, peer, m);
    break;
  case GK_MSG_END_MATCH:
  case GK_MSG_INPUT:
  case GK_MSG_HASH:
  case GK_MSG_REMOVE_PLAYER:
  case GK_MSG_STATE_BEGIN: /* a desync answer after the room went */
  case GK_MSG_STATE_CHUNK:
    if (m->type == GK_MSG_END_MATCH && r && r->state == SV_ROOM_LOBBY) {
      sv_on_lobby_end(s, peer);
      break;
    }
    /* no playing room: normal for a few packets after a match ended */
    s->stats.drop_no_room++;
    break;
  default:
    /* server-to-client types: a client never sends these */
    s->stats.drop_unexpected++;
    if (r) r->drops++;
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
  uint32_t peer = c->id;
  s->stats.packets_in++;
  s->stats.bytes_in += len;
  l->stats.packets_in++;
  l->stats.bytes_in += len;
  sv_auth_datagram(s, peer, len);
  int type = len >= GK_WIRE_HEADER ? bytes[1] : -1;
  sv_room *r = sv_conn_room(s, c);
  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m); /* the only decode */
  if (r && r->state != SV_ROOM_LOBBY && is_match_type(type)) {
    route_match(s, r, peer, rc, &m, len);
    return;
  }
  if (r && r->state != SV_ROOM_LOBBY &&
      (type == GK_MSG_STATE_BEGIN || type == GK_MSG_STATE_CHUNK)) {
    sv_desync_on_msg(s, r, peer, rc, &m, len); /* desync forensics */
    return;
  }
  if (rc) {
    s->stats.drop_malformed++;
    if (r) r->drops++;
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
  c->id = peer;
  c->link = l;
  c->room = SV_NO_ROOM;
  c->since_ms = sv_now_ms(s);
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
  if (s->shutting_down) {
    sv_send_error(s, peer, GK_ECLOSED, "server is shutting down");
    sv_link_close(l, 0);
  }
}

/* A player of a running match is gone: held for a rejoin (even the last
 * one connected: a page reloaded in a room of server bots comes back),
 * else the session removes it. */
static void leave_match(gk_server *s, sv_room *r, uint32_t slot) {
  if (gk_log_begin(s->log, GK_LOG_INFO, "player_left", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_end(s->log);
  }
  if (r->end_pending) return;
  uint64_t now = sv_now_ms(s);
  if (sv_rejoin_hold(s, r, slot)) return;
  gk_net_session_disconnect(&r->session, slot, now);
  if (sv_room_connected(r) == 0)
    gk_net_session_end(&r->session, GK_WIRE_END_ALL_LEFT, now);
  sv_match_after(s, r);
}

void sv_link_down(gk_server *s, sv_link *l) {
  sv_conn *c = known_conn(s, l);
  if (!c) return;
  uint32_t peer = c->id;
  s->stats.disconnects++;
  sv_auth_disconnect(s, c);
  sv_room *r = sv_conn_room(s, c);
  uint32_t slot = c->slot;
  int spectator = c->spectator;
  memset(c, 0, sizeof(*c));
  c->room = SV_NO_ROOM;
  sv_ids_give(&s->ids, peer);
  l->conn = SV_NO_CONN;
  if (l->host->links) l->host->links--;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "disconnect", r ? r->code : NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  if (r && spectator) {
    sv_spectator_leave(s, r, peer);
    return;
  }
  if (!r || slot >= r->nslots || r->conn[slot] != peer) return;
  r->conn[slot] = SV_NO_CONN;
  if (r->state == SV_ROOM_DRAINING) return;
  if (r->state == SV_ROOM_PLAYING) {
    leave_match(s, r, slot);
  } else if (slot == 0) {
    /* the creator left before the start: the room goes with it */
    sv_send_room_error(s, r, GK_ECLOSED, "the room's creator left");
    sv_room_finalise(s, r, GK_WIRE_END_ALL_LEFT);
  }
}
