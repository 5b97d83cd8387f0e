/* gk_room.c: the public calls (gk_room.h), the environment's wrappers,
 * and a room's end: freeing, finalising.
 *
 * Every public call first sets h->now_ms, the one time the whole call
 * sees (gk_room__now), then hands over to the feature's file.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

void gk_room_host_init(gk_room_host *h, const gk_room_env *env,
                       const gk_server_config *cfg, gk_server_log *log) {
  memset(h, 0, sizeof(*h));
  h->env = *env;
  h->cfg = cfg;
  h->log = log;
}

gk_room_tag *gk_room_tag_of(gk_room *r) {
  return &r->tag;
}

/* --- the environment ----------------------------------------------------- */

int gk_room__send_bytes(gk_room_host *h, uint32_t peer, const uint8_t *bytes,
                        size_t len, int reliable) {
  return h->env.send(h->env.user, peer, bytes, len, reliable);
}

int gk_room__send(gk_room_host *h, uint32_t peer, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  int rc = gk_wire_encode(m, buf, sizeof(buf), &len);
  if (rc) return rc;
  return gk_room__send_bytes(h, peer, buf, len,
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

void gk_room__send_error(gk_room_host *h, uint32_t peer, int code,
                         const char *text) {
  gk_wire_msg m;
  error_msg(&m, code, text);
  /* never a reply larger than the request to a connection not admitted
   * (an abuse limit): a text that does not fit is left out whole, never
   * cut (the client words it from the code), or nothing is sent */
  size_t cap = h->env.reply_cap(h->env.user, peer);
  size_t n = strlen(m.u.error.text);
  if (cap < ERROR_FIXED) {
    h->stats.replies_suppressed++;
    return;
  }
  if (ERROR_FIXED + n > cap) {
    m.u.error.text[0] = '\0';
    h->stats.replies_cut++;
  }
  gk_room__send(h, peer, &m);
}

void gk_room_send_error(gk_room_host *h, uint32_t conn, int code,
                        const char *text) {
  gk_room__send_error(h, conn, code, text);
}

void gk_room__send_room(gk_room_host *h, const gk_room *r,
                        const gk_wire_msg *m) {
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != GK_ROOM_NO_CONN) gk_room__send(h, r->conn[i], m);
}

void gk_room__send_room_error(gk_room_host *h, const gk_room *r, int code,
                              const char *text) {
  gk_wire_msg m;
  error_msg(&m, code, text);
  gk_room__send_room(h, r, &m);
}

void gk_room__strike(gk_room_host *h, uint32_t peer, const char *why,
                     int code) {
  h->env.strike(h->env.user, peer, why, code);
}

void gk_room__conn_close(gk_room_host *h, uint32_t peer, int at_once) {
  h->env.close(h->env.user, peer, at_once);
}

uint32_t gk_room__conn_rtt(const gk_room_host *h, uint32_t peer) {
  uint32_t rtt = 0, var = 0;
  h->env.rtt(h->env.user, peer, &rtt, &var);
  return rtt;
}

uint32_t gk_room__conn_rtt_var(const gk_room_host *h, uint32_t peer) {
  uint32_t rtt = 0, var = 0;
  h->env.rtt(h->env.user, peer, &rtt, &var);
  return var;
}

void gk_room__admit(gk_room_host *h, uint32_t peer) {
  h->env.admit(h->env.user, peer);
}

void gk_room__seat(gk_room_conn *c, gk_room *r, uint32_t slot, int spectator) {
  c->room = r;
  c->slot = slot;
  c->spectator = spectator;
}

void gk_room__unseat(gk_room_host *h, gk_room *r, uint32_t peer) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  if (!c || c->room != r) return;
  c->room = NULL;
  c->spectator = 0;
  c->since_ms = gk_room__now(h);
}

void gk_room__bind_slot(gk_room_host *h, gk_room *r, uint32_t slot) {
  uint64_t id = 0;
  if (h->env.client_id(h->env.user, r->conn[slot], &id)) {
    r->client_id[slot] = id; /* token mode: a rejoin must be this client */
    r->client_set |= 1u << slot;
  }
}

/* --- the end of a room --------------------------------------------------- */

uint32_t gk_room__connected(const gk_room *r) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != GK_ROOM_NO_CONN) m |= 1u << i;
  return m;
}

uint32_t gk_room__free_slot(const gk_room *r) {
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] == GK_ROOM_NO_CONN) return i;
  return r->nslots;
}

void gk_room__free(gk_room_host *h, gk_room *r) {
  gk_room__desync_room_free(h, r);
  gk_room__spectators_free(h, r);
  for (uint32_t i = 0; i < r->nslots; i++) {
    gk_room__remember(h, r, r->conn[i], i == 0);
    gk_room__unseat(h, r, r->conn[i]);
  }
  h->env.gone(h->env.user, r);
  h->stats.rooms_closed++;
  gk_room__discard(r);
}

void gk_room__finalise(gk_room_host *h, gk_room *r, int reason) {
  if (r->state == GK_ROOM_LOBBY)
    gk_log_msg(h->log, GK_LOG_INFO, "room_closed", r->code, "reason",
               gk_wire_end_name(reason));
  else
    gk_room__match_end(h, r, reason);
  gk_room__free(h, r);
}

/* --- the public calls ---------------------------------------------------- */

gk_room *gk_room_create(gk_room_host *h, uint32_t conn, const gk_wire_msg *m,
                        uint32_t players_cap, uint64_t now_ms) {
  h->now_ms = now_ms;
  return gk_room__on_create(h, conn, m, players_cap);
}

void gk_room_join(gk_room_host *h, gk_room *r, uint32_t conn,
                  const gk_wire_msg *m, uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room__on_join(h, r, conn, m);
}

void gk_room_rejoin(gk_room_host *h, gk_room *r, uint32_t conn,
                    const gk_wire_msg *m, uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room__on_rejoin(h, r, conn, m);
}

void gk_room_spectate(gk_room_host *h, gk_room *r, uint32_t conn,
                      const gk_wire_msg *m, uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room__on_spectate(h, r, conn, m);
}

void gk_room_start(gk_room_host *h, gk_room *r, uint32_t conn,
                   uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room__on_start(h, r, conn);
}

void gk_room_lobby_end(gk_room_host *h, gk_room *r, uint32_t conn,
                       uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room__on_lobby_end(h, r, conn);
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

/* A match message for a room whose match runs or has just ended. The
 * session counts what it drops. */
static void handle_match(gk_room_host *h, gk_room *r, const gk_room_conn *c,
                         int decode_rc, const gk_wire_msg *m, size_t len) {
  uint32_t peer = c->id, slot = c->slot;
  if (c->spectator) {
    if (decode_rc == 0) gk_room__spectator_msg(h, r, peer, m);
    return;
  }
  if (r->state == GK_ROOM_DRAINING) {
    /* the match is over: the session still takes acknowledgements and
     * hashes, and nothing a peer sends now is held against it */
    gk_net_session_receive_decoded(&r->session, slot, decode_rc, m, len,
                                   h->now_ms);
    return;
  }
  if (r->end_pending) return; /* the match is over; stragglers */
  int rc = gk_net_session_receive_decoded(&r->session, slot, decode_rc, m, len,
                                          h->now_ms);
  if (rc) {
    r->drops++;
    h->stats.drop_session++;
    /* may disconnect the peer; a playing room outlives that (a
     * connection's end never frees a room whose match runs) */
    if (is_offence(rc)) gk_room__strike(h, peer, "match message refused", rc);
  }
  gk_room__match_after(h, r);
}

void gk_room_handle(gk_room *r, uint32_t conn, int type, int decode_rc,
                    const gk_wire_msg *m, size_t len, uint64_t now_ms) {
  gk_room_host *h = r->host;
  h->now_ms = now_ms;
  const gk_room_conn *c = gk_room__conn_get(h, conn);
  if (!c || c->room != r || r->state == GK_ROOM_LOBBY) return;
  if (type == GK_MSG_STATE_BEGIN || type == GK_MSG_STATE_CHUNK)
    gk_room__desync_on_msg(h, r, conn, decode_rc, m, len);
  else
    handle_match(h, r, c, decode_rc, m, len);
}

/* A player of a running match is gone: held for a rejoin (even the last
 * one connected: a page reloaded in a room of server bots comes back),
 * else the session removes it. */
static void leave_match(gk_room_host *h, gk_room *r, uint32_t slot) {
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_left", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_end(h->log);
  }
  if (r->end_pending) return;
  if (gk_room__rejoin_hold(h, r, slot)) return;
  gk_net_session_disconnect(&r->session, slot, h->now_ms);
  if (gk_room__connected(r) == 0)
    gk_net_session_end(&r->session, GK_WIRE_END_ALL_LEFT, h->now_ms);
  gk_room__match_after(h, r);
}

void gk_room_conn_down(gk_room *r, uint32_t conn, uint32_t slot, int spectator,
                       uint64_t now_ms) {
  gk_room_host *h = r->host;
  h->now_ms = now_ms;
  if (spectator) {
    gk_room__spectator_leave(h, r, conn);
    return;
  }
  if (slot >= r->nslots || r->conn[slot] != conn) return;
  r->conn[slot] = GK_ROOM_NO_CONN;
  if (r->state == GK_ROOM_DRAINING) return;
  if (r->state == GK_ROOM_PLAYING) {
    leave_match(h, r, slot);
  } else if (gk_room__quick_left(h, r, slot)) {
    /* a quick-play lobby: the seat is free again */
  } else if (slot == 0) {
    /* the creator left before the start: the room goes with it */
    gk_room__send_room_error(h, r, GK_ECLOSED, "the room's creator left");
    gk_room__finalise(h, r, GK_WIRE_END_ALL_LEFT);
  } else {
    gk_room__lobby_left(h, r, slot);
  }
}

void gk_room_tick(gk_room *r, uint64_t now_ms) {
  r->host->now_ms = now_ms;
  gk_room__match_tick(r->host, r, now_ms);
}

void gk_room_finalise(gk_room *r, int reason, uint64_t now_ms) {
  r->host->now_ms = now_ms;
  gk_room__finalise(r->host, r, reason);
}

void gk_room_end_lobby(gk_room *r, uint64_t now_ms) {
  r->host->now_ms = now_ms;
  gk_room__end_lobby(r->host, r);
}

int gk_room_end_match(gk_room *r, int reason, uint64_t now_ms) {
  r->host->now_ms = now_ms;
  if (r->state != GK_ROOM_PLAYING || r->end_pending) return GK_ECLOSED;
  return gk_net_session_end(&r->session, reason, now_ms);
}

int gk_room_remove(gk_room *r, uint32_t slot, uint64_t *at, uint64_t now_ms) {
  r->host->now_ms = now_ms;
  if (slot >= r->nslots) return GK_ERANGE;
  if (r->state == GK_ROOM_LOBBY) return GK_ESTATE;
  if (r->state != GK_ROOM_PLAYING || r->end_pending) return GK_ECLOSED;
  return gk_net_session_remove(&r->session, slot, GK_WIRE_STEP_ASAP, at,
                               now_ms);
}

void gk_room_close_lobby(gk_room *r, int code, const char *text, int reason,
                         uint64_t now_ms) {
  r->host->now_ms = now_ms;
  gk_room__send_room_error(r->host, r, code, text);
  gk_room__finalise(r->host, r, reason);
}

void gk_room_recover_replays(gk_room_host *h) {
  gk_room__replay_recover_dir(h);
}

void gk_room_send_shutdown(gk_room *r, uint32_t grace_ms) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_SHUTDOWN;
  m.u.shutdown_grace_ms = grace_ms;
  gk_room__send_room(r->host, r, &m);
}

void gk_room_note_strike(gk_room *r) {
  r->strikes++;
}

void gk_room_note_drop(gk_room *r) {
  r->drops++;
}

/* --- reading a room ------------------------------------------------------ */

const char *gk_room_code(const gk_room *r) {
  return r->code;
}

gk_room_state gk_room_state_of(const gk_room *r) {
  return r->state;
}

int gk_room_slot_client(const gk_room *r, uint32_t slot, uint64_t *out) {
  if (slot >= GK_PLAYERS_MAX || (r->client_set >> slot & 1u) == 0) return 0;
  *out = r->client_id[slot];
  return 1;
}

void gk_room_view_of(const gk_room *r, gk_room_view *v) {
  memset(v, 0, sizeof(*v));
  v->code = r->code;
  v->state = r->state;
  v->end_pending = r->end_pending;
  v->genre = r->genre->sim->name;
  v->options = r->options;
  v->replay = r->rec ? r->replay_path : NULL;
  v->max_players = r->max_players;
  v->input_delay = r->input_delay;
  v->nslots = r->nslots;
  v->next_slot = r->state == GK_ROOM_LOBBY ? gk_room__free_slot(r) : r->nslots;
  v->connected = gk_room__connected(r);
  for (uint32_t i = 0; i < GK_PLAYERS_MAX; i++)
    v->conn[i] = i < r->nslots ? r->conn[i] : GK_ROOM_NO_CONN;
  v->bot_seats = gk_room__bots_seats(r->bots);
  v->bot_mask = gk_room__bots_mask(r->bots);
  v->bot_records = gk_room__bots_records(r->bots);
  v->listed = r->listed;
  v->quick = r->quick;
  v->quick_key = r->quick_key;
  v->spectators = gk_room__spectators_count(r);
  v->created_ms = r->created_ms;
  if (r->session_open) {
    v->steps = r->session.loop.steps;
#define GK_ROOM_VIEW_FIGURE(name, kind, help) v->name = r->session.stats.name;
    GK_ROOM_SCHEDULE(GK_ROOM_VIEW_FIGURE)
#undef GK_ROOM_VIEW_FIGURE
    v->packets_in = r->session.stats.packets_in;
    v->packets_out = r->session.stats.packets_out;
    v->active_mask = r->session.inbuf.active_mask;
  } else {
    v->active_mask = v->connected;
  }
  v->desyncs = r->desyncs;
  v->drops = r->drops;
  v->strikes = r->strikes;
}
