/* gk_server_quick.c: QUICK_PLAY in the shell (docs/PROTOCOL.md, "Quick
 * play").
 *
 * Without a fleet, or while its directory is unreachable, quick play is
 * this process's: the fullest quick-play lobby here that fits the request
 * (gk_room_quick_fits), or else a new one. With a fleet the directory
 * chooses across every node in one atomic script (gk_fleet_quick): a seat
 * in a lobby of this node, or of another (REDIRECT to it with that room's
 * code; the client sends its QUICK_PLAY again there, with the code), or a
 * new room with a code the directory reserved for the least-loaded node.
 * A QUICK_PLAY with a code is seated in that room here, or, if the room
 * is not made yet, made here once the directory confirms the code is this
 * node's (gk_fleet_claim). Each quick-play lobby tells the directory its
 * seats whenever they change, and that it is gone when its match starts
 * or it closes: never per step.
 *
 * A QUICK_PLAY that makes a room here counts against the address's
 * limits.creates_per_min as a CREATE_ROOM does (GK_ELIMIT over it);
 * joining a lobby does not. With a fleet, a player over the limit here is
 * offered only the lobbies the directory has.
 *
 * Open mode only: a connect token names its room, so a token-mode server
 * refuses QUICK_PLAY (GK_EPERM).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_fleet.h"
#include "gk_server_internal.h"
#include "gk_server_random.h"

#define CANDIDATE_TRIES 3 /* new room codes the directory may find taken */

/* A quick-play request waiting for the directory. */
typedef struct sv_quick_ask {
  uint32_t peer;
  gk_wire_msg m;
  int tries;
} sv_quick_ask;

static void kind_of(const gk_wire_msg *m, char out[GK_FLEET_KIND_MAX + 1]) {
  snprintf(out, GK_FLEET_KIND_MAX + 1, "%016" PRIx64,
           gk_room_quick_key(&m->u.quick.room));
}

static void refuse(gk_server *s, uint32_t peer, int code, const char *text) {
  if (code == GK_ELIMIT)
    s->quick_stats.limited++;
  else
    s->quick_stats.refused++;
  sv_send_error(s, peer, code, text);
}

/* The fullest quick-play lobby here that the request fits. */
static gk_room *best_here(gk_server *s, const gk_wire_msg *m) {
  gk_room *best = NULL;
  for (uint32_t i = 0; i < s->host.nrooms; i++)
    best = gk_room_quick_best(best, sv_live_room(s, i), m);
  return best;
}

void sv_quick_sync(gk_server *s, gk_room *r, int consume) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  if (!s->fleet || !v.quick) return;
  char kind[GK_FLEET_KIND_MAX + 1];
  snprintf(kind, sizeof(kind), "%016" PRIx64, v.quick_key);
  uint32_t seated = 0;
  for (uint32_t m = v.connected; m; m &= m - 1) seated++;
  if (v.state == GK_ROOM_LOBBY && !v.end_pending)
    gk_fleet_quick_set(s->fleet, kind, v.code, seated, v.max_players, consume);
  else
    gk_fleet_quick_gone(s->fleet, kind, v.code);
}

void sv_quick_gone(gk_server *s, gk_room *r) {
  gk_room_view v;
  gk_room_view_of(r, &v);
  if (!s->fleet || !v.quick) return;
  char kind[GK_FLEET_KIND_MAX + 1];
  snprintf(kind, sizeof(kind), "%016" PRIx64, v.quick_key);
  gk_fleet_quick_gone(s->fleet, kind, v.code);
}

/* Seats the player here: in room `code` (NULL: the fullest that fits), or
 * in a new room (with `code` when the directory reserved it). */
static void seat_here(gk_server *s, uint32_t peer, const gk_wire_msg *m,
                      const char *code, int consume) {
  gk_room *r = code ? sv_room_find(s, code) : NULL;
  if (r && !gk_room_quick_fits(r, m)) { /* filled: another lobby here */
    s->quick_stats.moved++;
    r = NULL, code = NULL;
  }
  if (!r && !code) r = best_here(s, m);
  if (!r && (sv_fleet_full(s) || s->host.nrooms >= s->cfg->max_rooms)) {
    refuse(s, peer, GK_EFULL, "no room left on this server");
    return;
  }
  char why[GK_SERVER_CONFIG_ERR_MAX];
  if (!r && sv_auth_quick_create(s, peer, 1, why, sizeof(why))) {
    refuse(s, peer, GK_ELIMIT, why); /* a new room counts as a CREATE_ROOM */
    return;
  }
  gk_room *got = gk_room_quick(&s->host, r, peer, m, r ? NULL : code,
                               GK_PLAYERS_MAX, sv_room_now(s));
  if (!got) {
    s->quick_stats.refused++;
    return;
  }
  if (!r) {
    sv_room_publish(s, got);
    s->quick_stats.created++;
  } else {
    s->quick_stats.joined++;
  }
  sv_quick_sync(s, got, consume);
}

/* Asks the directory for a seat, with a new candidate code; a player
 * over limits.creates_per_min here is offered lobbies only. */
static int ask_seat(gk_server *s, sv_quick_ask *q) {
  char candidate[GK_WIRE_CODE_LEN + 1], kind[GK_FLEET_KIND_MAX + 1];
  int rc = gk_server_room_code_short(candidate, s->host.nrooms);
  if (!rc && sv_room_find(s, candidate)) rc = gk_server_room_code(candidate);
  if (rc) return rc;
  kind_of(&q->m, kind);
  uint32_t seats = q->m.u.quick.room.max_players;
  if (!seats) {
    const gk_server_genre *g =
        gk_server_config_genre(s->cfg, q->m.u.quick.room.genre);
    seats = g ? g->max_players : 1;
  }
  const sv_conn *c = sv_conn_get(s, q->peer);
  unsigned flags = sv_auth_may_create(s, q->peer) ? GK_FLEET_QUICK_CREATE : 0;
  if (c && c->link && strcmp(sv_link_kind(c->link), "websocket") == 0)
    flags |= GK_FLEET_QUICK_WS; /* a browser cannot follow to ENet alone */
  return gk_fleet_quick(s->fleet, kind, seats, candidate, flags, q);
}

/* The connection still waits for this answer. */
static sv_conn *waiting(gk_server *s, const sv_quick_ask *q) {
  sv_conn *c = s->closing ? NULL : sv_conn_get(s, q->peer);
  if (c) c->asking = 0;
  return c && !sv_conn_room(c) ? c : NULL;
}

void sv_quick_seat(gk_server *s, void *ctx, int status, const gk_fleet_seat *st,
                   const char *text) {
  sv_quick_ask *q = ctx;
  sv_conn *c = waiting(s, q);
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "quick_seat", st ? st->code : NULL)) {
    gk_log_u64(s->log, "peer", q->peer);
    gk_log_err(s->log, "code", status);
    gk_log_str(s->log, "node", st ? st->where.node : NULL);
    gk_log_u64(s->log, "created", st ? (uint64_t)st->created : 0);
    gk_log_str(s->log, "text", text);
    gk_log_end(s->log);
  }
  if (c && status == GK_EEXIST && ++q->tries < CANDIDATE_TRIES &&
      ask_seat(s, q) == 0) {
    c->asking = 1;
    return; /* q goes on */
  }
  if (!c || status == GK_ECLOSED) {
    /* gone: its seat's reservation runs out */
  } else if (status == 0 && strcmp(st->where.node, s->cfg->fleet.node) == 0) {
    seat_here(s, q->peer, &q->m, st->code, 1);
  } else if (status == 0) {
    s->quick_stats.redirected++;
    sv_fleet_redirect(s, q->peer, GK_MSG_QUICK_PLAY, st->code, &st->where);
  } else if (status == GK_EUNAVAILABLE) {
    seat_here(s, q->peer, &q->m, NULL, 0); /* local play goes on */
  } else if (status == GK_ELIMIT) { /* no lobby, and no new room for it */
    char why[GK_SERVER_CONFIG_ERR_MAX];
    sv_auth_quick_create(s, q->peer, 0, why, sizeof(why));
    refuse(s, q->peer, GK_ELIMIT, why);
  } else {
    refuse(s, q->peer, status, text);
  }
  free(q);
}

void sv_quick_claimed(gk_server *s, void *ctx, int status,
                      const gk_fleet_where *w) {
  sv_quick_ask *q = ctx;
  if (waiting(s, q)) {
    const char *code = q->m.u.quick.code;
    if (sv_room_find(s, code) ||
        (status == 0 && strcmp(w->node, s->cfg->fleet.node) == 0))
      seat_here(s, q->peer, &q->m, code, 1);
    else if (status == GK_EUNAVAILABLE)
      seat_here(s, q->peer, &q->m, NULL, 0);
    else
      refuse(s, q->peer, GK_ENOTFOUND,
             "that quick-play room is gone: ask for quick play again");
  }
  free(q);
}

int sv_quick_play(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  sv_conn *c = sv_conn_get(s, peer);
  if (!c) return 0;
  if (s->cfg->auth_mode == GK_AUTH_TOKEN) {
    refuse(s, peer, GK_EPERM, "quick play is for open-mode servers");
    return 0;
  }
  if (c->asking) {
    sv_strike(s, peer, "a second room request while one is looked up",
              GK_ESTATE);
    return 1;
  }
  const char *code = m->u.quick.code;
  int any = strcmp(code, GK_WIRE_CODE_ANY) == 0;
  gk_room *in = sv_conn_room(c);
  int busy = in && gk_room_state_of(in) != GK_ROOM_DRAINING;
  gk_room *named = any ? NULL : sv_room_find(s, code);
  if (!s->fleet || !gk_fleet_up(s->fleet) || busy || named) {
    /* a code is taken only for a room here: a room is never made with a
     * code the client chose */
    seat_here(s, peer, m, named ? code : NULL, named != NULL);
    return 0;
  }
  sv_quick_ask *q = calloc(1, sizeof(*q));
  if (!q) {
    refuse(s, peer, GK_ENOMEM, "out of memory");
    return 0;
  }
  q->peer = peer;
  q->m = *m;
  int rc = any ? ask_seat(s, q) : sv_fleet_claim(s, code, q);
  if (rc && gk_log_begin(s->log, GK_LOG_WARN, "quick_local", NULL)) {
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "text", "the directory cannot be asked: a seat here");
    gk_log_end(s->log);
  }
  if (rc) {
    free(q);
    seat_here(s, peer, m, NULL, 0);
    return 0;
  }
  c->asking = 1;
  return 1;
}
