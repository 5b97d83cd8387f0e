/* gk_server_fleet.c: gk-server as one node of a fleet (src/fleet).
 *
 * With fleet.enabled the server starts a directory client (gk_fleet) on
 * its loop: every room it publishes is registered under its code, every
 * room that goes is unregistered, and a JOIN_ROOM, REJOIN_ROOM or
 * SPECTATE for a code that is not here is looked up: another node's room
 * is answered REDIRECT (that node's ENet address and WebSocket URL) and
 * the connection is closed once it is sent; a code nobody holds goes on
 * to the room library as an unknown code (GK_ENOTFOUND and a strike, as
 * without a fleet); a directory that cannot answer is GK_EUNAVAILABLE
 * with a sentence. The request is not admitted here: in token mode the
 * node that holds the room checks the token the client sends it again.
 * One lookup at a time per connection; each miss is a strike, so a
 * connection guesses at most limits.strikes codes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_fleet.h"
#include "gk_server_internal.h"

/* A lookup in flight: the request, to finish it when the answer comes. */
typedef struct sv_ask {
  gk_server *s;
  uint32_t peer;
  gk_wire_msg m;
  void *quick; /* a quick-play claim's request (gk_server_quick.c) */
} sv_ask;

static const char *request_code(const gk_wire_msg *m) {
  return m->type == GK_MSG_REJOIN_ROOM ? m->u.rejoin.code : m->u.room.code;
}

/* The room library's answer to a request for a code nobody holds. */
static void not_found(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  gk_room_host *h = &s->host;
  uint64_t now = sv_room_now(s);
  if (m->type == GK_MSG_JOIN_ROOM)
    gk_room_join(h, NULL, peer, m, now);
  else if (m->type == GK_MSG_REJOIN_ROOM)
    gk_room_rejoin(h, NULL, peer, m, now);
  else
    gk_room_spectate(h, NULL, peer, m, now);
}

void sv_fleet_redirect(gk_server *s, uint32_t peer, int request,
                       const char *code, const gk_fleet_where *w) {
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_REDIRECT;
  snprintf(out.u.redirect.code, sizeof(out.u.redirect.code), "%s", code);
  memcpy(out.u.redirect.enet, w->enet, sizeof(out.u.redirect.enet));
  memcpy(out.u.redirect.ws_url, w->ws_url, sizeof(out.u.redirect.ws_url));
  if (sv_send(s, peer, &out) != 0) {
    sv_send_error(s, peer, GK_EPROTO, "the room's node has a bad address");
    s->fleet_stats.redirects_failed++;
    return;
  }
  s->fleet_stats.redirects++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "redirect", code)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_str(s->log, "node", w->node);
    gk_log_str(s->log, "request", gk_wire_type_name(request));
    gk_log_end(s->log);
  }
  sv_conn_close(s, peer, 0); /* once the REDIRECT has left */
}

static void unavailable(gk_server *s, uint32_t peer, int code,
                        const char *text) {
  s->fleet_stats.redirects_failed++;
  sv_send_error(s, peer, code, text);
}

static const char unreachable_text[] =
    "room directory unreachable: rooms on other nodes cannot be joined now";

static void on_found(void *user, void *ctx, int status, const gk_fleet_where *w,
                     const char *text) {
  gk_server *s = user;
  sv_ask *q = ctx;
  if (q->quick) {
    sv_quick_claimed(s, q->quick, status, w);
    free(q);
    return;
  }
  sv_conn *c = s->closing ? NULL : sv_conn_get(s, q->peer);
  if (c) c->asking = 0;
  if (c && !sv_conn_room(c) && status != GK_ECLOSED) {
    if (status == 0)
      sv_fleet_redirect(s, q->peer, (int)q->m.type, request_code(&q->m), w);
    else if (status == GK_ENOTFOUND) {
      sv_auth_miss(s, q->peer);
      not_found(s, q->peer, &q->m);
    } else if (status == GK_EUNAVAILABLE)
      unavailable(s, q->peer, status, unreachable_text);
    else
      unavailable(s, q->peer, status, text);
  }
  free(q);
}

static void on_seat(void *user, void *ctx, int status, const gk_fleet_seat *st,
                    const char *text) {
  sv_quick_seat(user, ctx, status, st, text);
}

static void on_note(void *user, const char *event, int code, const char *text) {
  gk_server *s = user;
  if (strcmp(event, "fleet_up") == 0) /* a restarted Redis: lobbies again */
    for (uint32_t i = 0; s->fleet && i < s->host.nrooms; i++)
      sv_quick_sync(s, sv_live_room(s, i), 0);
  gk_log_level lv = strcmp(event, "fleet_up") == 0 ? GK_LOG_INFO : GK_LOG_WARN;
  if (gk_log_begin(s->log, lv, event, NULL)) {
    gk_log_err(s->log, "code", code);
    gk_log_str(s->log, "text", text);
    gk_log_end(s->log);
  }
}

static void on_closed(void *user) {
  gk_server *s = user;
  s->fleet = NULL;
  s->handles--;
  sv_maybe_free(s);
}

int sv_fleet_new_code(void *user, char out[GK_WIRE_CODE_LEN + 1]) {
  gk_server *s = user;
  if (!s->fleet) return GK_ENOTFOUND;
  /* a reserved code a quick-play claim already made a room with (a client
   * that guessed it) is not handed out twice */
  if (gk_fleet_take_code(s->fleet, out) == 0 && !sv_room_find(s, out)) return 0;
  int rc = gk_server_room_code(out); /* 80 bits: unique without asking */
  if (!rc && sv_room_find(s, out)) rc = GK_EEXIST;
  return rc;
}

/* The directory's pool asks for candidates: short codes of the length
 * this node's rooms call for. */
static int make_code(void *user, char out[GK_FLEET_CODE_MAX + 1]) {
  gk_server *s = user;
  return gk_server_room_code_short(out, s->host.nrooms);
}

/* --- the public room list ------------------------------------------------ */

/* A room's public entry (node left empty), 0 if it is not one now: a
 * listed room in the lobby or playing. Seats are the people's (bots'
 * seats are not offered); a room playing offers none. */
static int pub_of(gk_room *r, const char *genre, gk_fleet_pub *p) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  int shown = v.state == GK_ROOM_LOBBY || v.state == GK_ROOM_PLAYING;
  if (!v.listed || !shown || v.end_pending) return 0;
  if (genre && strcmp(genre, v.genre) != 0) return 0;
  memset(p, 0, sizeof(*p));
  uint32_t taken = 0;
  for (uint32_t m = v.connected & ~v.bot_mask; m; m &= m - 1) taken++;
  snprintf(p->code, sizeof(p->code), "%s", v.code);
  snprintf(p->genre, sizeof(p->genre), "%s", v.genre);
  p->taken = taken;
  p->playing = v.state == GK_ROOM_PLAYING;
  p->free_seats =
      !p->playing && v.max_players > taken ? v.max_players - taken : 0;
  return 1;
}

static uint32_t listed_rooms(void *user, gk_fleet_pub *out, uint32_t cap) {
  gk_server *s = user;
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->cfg->max_rooms && n < cap; i++)
    if (s->rooms[i] && pub_of(s->rooms[i], NULL, &out[n])) n++;
  return n;
}

static cJSON *public_json(const gk_fleet_pub *p, const char *node) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "genre", p->genre);
  cJSON_AddStringToObject(j, "code", p->code);
  cJSON_AddNumberToObject(j, "seats_taken", p->taken);
  cJSON_AddNumberToObject(j, "seats_free", p->free_seats);
  cJSON_AddStringToObject(j, "state", p->playing ? "playing" : "lobby");
  if (node)
    cJSON_AddStringToObject(j, "node", node);
  else
    cJSON_AddNullToObject(j, "node");
  return j;
}

static int add_public(cJSON *arr, const gk_fleet_pub *p, const char *node) {
  cJSON *e = public_json(p, node);
  return e && cJSON_AddItemToArray(arr, e) ? 0 : GK_ENOMEM;
}

cJSON *sv_fleet_public_rooms(const gk_server *s, const char *genre) {
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = j ? cJSON_AddArrayToObject(j, "rooms") : NULL;
  const char *self = s->fleet ? s->cfg->fleet.node : NULL;
  int rc = arr ? 0 : GK_ENOMEM;
  gk_fleet_pub p;
  for (uint32_t i = 0; !rc && i < s->cfg->max_rooms; i++) /* ours: now */
    if (s->rooms[i] && pub_of(s->rooms[i], genre, &p))
      rc = add_public(arr, &p, self);
  const gk_fleet_pub *all = NULL;
  uint32_t n = s->fleet ? gk_fleet_public(s->fleet, &all) : 0;
  for (uint32_t i = 0; !rc && i < n; i++) /* the others': the last refresh */
    if (strcmp(all[i].node, self) != 0 &&
        (!genre || strcmp(genre, all[i].genre) == 0))
      rc = add_public(arr, &all[i], all[i].node);
  if (rc) {
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

/* fleet.enet and fleet.ws_url with port 0 name this node's own listening
 * ports (a test's or scripts/fleet.sh's ephemeral ones). */
static void public_addresses(const gk_server *s, char *enet, char *ws,
                             size_t cap) {
  const gk_server_fleet_config *fc = &s->cfg->fleet;
  size_t n = strlen(fc->enet);
  if (n >= 2 && strcmp(fc->enet + n - 2, ":0") == 0)
    snprintf(enet, cap, "%.*s:%u", (int)(n - 2), fc->enet,
             (unsigned)sv_enet_port(s));
  else
    snprintf(enet, cap, "%s", fc->enet);
  const char *zero = strstr(fc->ws_url, ":0/");
  if (zero && s->ws)
    snprintf(ws, cap, "%.*s:%u%s", (int)(zero - fc->ws_url), fc->ws_url,
             (unsigned)sv_ws_port(s), zero + 2);
  else
    snprintf(ws, cap, "%s", fc->ws_url);
}

int sv_fleet_start(gk_server *s, char *err, size_t errlen) {
  const gk_server_fleet_config *fc = &s->cfg->fleet;
  if (!fc->enabled) return 0;
  char enet[GK_SERVER_FLEET_STR_MAX + 8], ws[GK_SERVER_FLEET_STR_MAX + 8];
  public_addresses(s, enet, ws, sizeof(enet));
  gk_fleet_config cfg = {.host = fc->redis_host,
                         .port = fc->redis_port,
                         .unix_path = fc->redis_unix,
                         .password = fc->password,
                         .node = fc->node,
                         .enet = enet,
                         .ws_url = ws,
                         .heartbeat_ms = fc->heartbeat_ms,
                         .ttl_ms = fc->ttl_ms,
                         .max_rooms = fc->max_rooms};
  gk_fleet_hooks hooks = {s,         on_found,     on_note, on_closed,
                          make_code, listed_rooms, on_seat};
  int rc = gk_fleet_start(s->loop, &cfg, &hooks, &s->fleet);
  if (rc)
    return gk_errf(err, errlen, rc, "fleet: cannot start: %s", gk_strerror(rc));
  s->handles++; /* until on_closed */
  if (gk_log_begin(s->log, GK_LOG_INFO, "fleet_node", NULL)) {
    gk_log_str(s->log, "node", fc->node);
    gk_log_str(s->log, "enet", enet);
    gk_log_str(s->log, "ws_url", ws);
    gk_log_str(s->log, "redis", fc->redis);
    gk_log_end(s->log);
  }
  return 0;
}

void sv_fleet_close(gk_server *s) {
  if (s->fleet) gk_fleet_close(s->fleet);
}

void sv_fleet_room_added(gk_server *s, const char *code) {
  if (!s->fleet) return;
  int rc = gk_fleet_room_add(s->fleet, code);
  if (rc && gk_log_begin(s->log, GK_LOG_WARN, "fleet_error", code)) {
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "text", "room not registered in the directory");
    gk_log_end(s->log);
  }
}

void sv_fleet_room_gone(gk_server *s, const char *code) {
  if (s->fleet) gk_fleet_room_remove(s->fleet, code);
}

void sv_fleet_draining(gk_server *s) {
  if (s->fleet) gk_fleet_set_draining(s->fleet, 1);
}

int sv_fleet_full(const gk_server *s) {
  return s->fleet && s->host.nrooms >= s->cfg->fleet.max_rooms;
}

int sv_fleet_ask(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  if (!s->fleet) return 0;
  sv_conn *c = sv_conn_get(s, peer);
  if (!c || sv_conn_room(c) || s->host.shutting_down)
    return 0; /* the room library says why */
  if (c->asking) {
    sv_strike(s, peer, "a second room request while one is looked up",
              GK_ESTATE);
    return 1;
  }
  sv_ask *q = calloc(1, sizeof(*q));
  if (!q) {
    unavailable(s, peer, GK_ENOMEM, "out of memory");
    return 1;
  }
  q->s = s;
  q->peer = peer;
  q->m = *m;
  int rc = gk_fleet_lookup(s->fleet, request_code(m), q);
  if (rc) {
    free(q);
    unavailable(s, peer, rc,
                rc == GK_EUNAVAILABLE ? unreachable_text : gk_strerror(rc));
    return 1;
  }
  c->asking = 1;
  return 1;
}

int sv_fleet_claim(gk_server *s, const char *code, void *quick) {
  sv_ask *q = calloc(1, sizeof(*q));
  if (!q) return GK_ENOMEM;
  q->s = s;
  q->quick = quick;
  int rc = gk_fleet_claim(s->fleet, code, q);
  if (rc) free(q);
  return rc;
}

const gk_fleet_stats *sv_fleet_directory_stats(const gk_server *s) {
  return s->fleet ? gk_fleet_stats_of(s->fleet) : NULL;
}

int sv_fleet_reachable(const gk_server *s) {
  return !s->fleet || gk_fleet_up(s->fleet);
}
