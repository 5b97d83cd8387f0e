/* gk_room_next.c: Play again for a room its host made (NEXT_ROOM;
 * docs/PROTOCOL.md "Play again").
 *
 * The story:
 *   1. a room whose match ran closes (gk_room__free): each of its players'
 *      and spectators' connections still in it keeps its code, the host's
 *      (slot 0) as the host (gk_room__remember; gk_room_conn.last_code,
 *      last_host);
 *   2. the host makes a room (on any connection: the play page opens a
 *      new one) and sends NEXT_ROOM with its code on the old room's
 *      connection, while that room still drains or after it closed;
 *   3. every other connection of the old room, still open and in no room
 *      since, gets NEXT_ROOM with that code (gk_room_next): the page
 *      offers to join it, the watch page to watch it. Once per room: the
 *      host's right ends with it.
 * The server checks only that the sender was the room's host; the code
 * is the host's word (a room here or on another node of a fleet: a join
 * finds it as any join does).
 */
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

void gk_room__remember(gk_room_host *h, const gk_room *r, uint32_t peer,
                       int host) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  if (!c || c->room != r || r->state == GK_ROOM_LOBBY || r->next_told) return;
  memcpy(c->last_code, r->code, sizeof c->last_code);
  c->last_host = host;
}

/* What one NEXT_ROOM goes to: the old room's code, who sent it. */
typedef struct next_fan {
  gk_room_host *h;
  const char *old_code;
  uint32_t from;
  const gk_wire_msg *m;
  uint32_t told;
} next_fan;

static void tell_one(void *ctx, gk_room_conn *c) {
  next_fan *f = ctx;
  if (c->id == f->from || c->room != NULL ||
      strcmp(c->last_code, f->old_code) != 0)
    return;
  c->last_code[0] = '\0'; /* once */
  c->last_host = 0;
  if (gk_room__send(f->h, c->id, f->m) == 0) f->told++;
}

/* A draining room's host: its players and spectators, now. */
static uint32_t tell_room(gk_room_host *h, gk_room *r, uint32_t from,
                          const gk_wire_msg *m) {
  uint32_t told = 0;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != GK_ROOM_NO_CONN && r->conn[i] != from &&
        gk_room__send(h, r->conn[i], m) == 0)
      told++;
  return told + gk_room__spectators_notice(h, r, m);
}

void gk_room_next(gk_room_host *h, uint32_t conn, const gk_wire_msg *m,
                  uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room_conn *c = gk_room__conn_get(h, conn);
  if (!c) return;
  gk_room *r = c->room;
  int draining = r != NULL && r->state != GK_ROOM_LOBBY &&
                 (r->state == GK_ROOM_DRAINING || r->end_pending) &&
                 !c->spectator && c->slot == 0 && !r->next_told;
  const char *old = draining ? r->code : c->last_code;
  if (!draining && (r != NULL || !c->last_host || old[0] == 0)) {
    h->stats.drop_unexpected++;
    gk_room_send_error(h, conn, GK_EPERM,
                       "only the host of a room whose match ended names its "
                       "next room");
    h->env.strike(h->env.user, conn, "NEXT_ROOM from no ended room's host",
                  GK_EPERM);
    return;
  }
  next_fan f = {h, old, conn, m, 0};
  if (draining) {
    r->next_told = 1;
    f.told = tell_room(h, r, conn, m);
  } else {
    c->last_host = 0;
    h->env.each_conn(h->env.user, tell_one, &f);
    c->last_code[0] = '\0';
  }
  h->stats.next_rooms++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "next_room", old)) {
    gk_log_u64(h->log, "peer", conn);
    gk_log_str(h->log, "next", m->u.room.code);
    gk_log_u64(h->log, "told", f.told);
    gk_log_end(h->log);
  }
}
