/* gk_room_names.c: players' names (NAME, ROSTER; docs/PROTOCOL.md
 * "Names").
 *
 * A seated player names itself with NAME, in the lobby or during the
 * match; the room keeps one name per slot for its life (a rejoin keeps
 * it; a seat left in a quick-play lobby loses it) and sends every player
 * and spectator the whole ROSTER whenever it changes, and a newcomer the
 * ROSTER as it is. Names are for people: the session, the referee, the
 * state and its hash never see them. A slot may be named at most
 * GK_ROOM__NAMES_MAX times (a client that renames itself in a loop
 * would make every connection of the room carry a ROSTER each time).
 */
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

#define GK_ROOM__NAMES_MAX 16

static void roster_of(const gk_room *r, gk_wire_msg *m) {
  memset(m, 0, sizeof(*m));
  m->type = GK_MSG_ROSTER;
  gk_wire_roster *ro = &m->u.roster;
  for (uint32_t i = 0; i < GK_PLAYERS_MAX; i++) {
    if (!r->names[i][0]) continue;
    ro->slot[ro->count] = (uint8_t)i;
    memcpy(ro->name[ro->count], r->names[i], sizeof(r->names[i]));
    ro->count++;
  }
}

void gk_room__roster_to(gk_room_host *h, const gk_room *r, uint32_t peer) {
  gk_wire_msg m;
  roster_of(r, &m);
  if (m.u.roster.count) gk_room__send(h, peer, &m);
}

static void roster_all(gk_room_host *h, gk_room *r) {
  gk_wire_msg m;
  roster_of(r, &m);
  gk_room__send_room(h, r, &m);
  gk_room__spectators_notice(h, r, &m);
}

void gk_room__name_clear(gk_room_host *h, gk_room *r, uint32_t slot) {
  if (slot >= GK_PLAYERS_MAX || !r->names[slot][0]) return;
  r->names[slot][0] = '\0';
  r->name_changes[slot] = 0;
  roster_all(h, r);
}

void gk_room_name(gk_room_host *h, gk_room *r, uint32_t conn,
                  const gk_wire_msg *m, uint64_t now_ms) {
  h->now_ms = now_ms;
  const gk_room_conn *c = gk_room__conn_get(h, conn);
  int rc = 0;
  const char *why = NULL;
  if (!c || !r || c->room != r || c->spectator || c->slot >= GK_PLAYERS_MAX)
    rc = GK_ESTATE, why = "a name is a seated player's";
  else if (r->name_changes[c->slot] >= GK_ROOM__NAMES_MAX)
    rc = GK_ELIMIT, why = "too many name changes";
  if (rc) {
    h->stats.refused++;
    if (c) gk_room__send_error(h, conn, rc, why);
    return;
  }
  if (strcmp(r->names[c->slot], m->u.name) == 0) return;
  r->name_changes[c->slot]++;
  memcpy(r->names[c->slot], m->u.name, sizeof(r->names[0]));
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_named", r->code)) {
    gk_log_u64(h->log, "slot", c->slot);
    gk_log_str(h->log, "name", r->names[c->slot]);
    gk_log_end(h->log);
  }
  roster_all(h, r);
}

const char *gk_room_slot_name(const gk_room *r, uint32_t slot) {
  return slot < GK_PLAYERS_MAX && r->names[slot][0] ? r->names[slot] : NULL;
}
