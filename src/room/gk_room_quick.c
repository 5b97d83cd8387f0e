/* gk_room_quick.c: quick play (QUICK_PLAY; docs/PROTOCOL.md "Quick
 * play").
 *
 * A quick-play room is a lobby like any other but for three rules:
 *   - it is joined only through QUICK_PLAY: a request fits it when it asks
 *     for the same genre, seats and options (gk_room_quick_fits; the
 *     shell, or the fleet's directory, picks the fullest room that fits);
 *   - nobody starts it: its match starts once every seat for people is
 *     taken (a START_MATCH is GK_EPERM);
 *   - nobody owns it: a player who leaves the lobby frees a seat, which
 *     the next player takes (the lowest free slot); it closes when the
 *     last one leaves.
 */
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

int gk_room__rematch_check(const cJSON *room, char *err, size_t errlen) {
  const cJSON *v = cJSON_IsObject(room)
                       ? cJSON_GetObjectItemCaseSensitive(room, "rematch")
                       : NULL;
  if (!v) return 0;
  const char *code = cJSON_GetStringValue(v);
  size_t n = code ? strlen(code) : 0;
  int ok = n >= 1 && n <= GK_WIRE_CODE_LEN;
  for (size_t i = 0; ok && i < n; i++)
    ok = (code[i] >= 'A' && code[i] <= 'Z') ||
         (code[i] >= '0' && code[i] <= '9');
  if (!ok)
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room.rematch: must be a room code (1 to %d of "
                   "A-Z, 0-9)",
                   GK_WIRE_CODE_LEN);
  return 0;
}

uint64_t gk_room_quick_key(const gk_wire_create_room *cr) {
  uint8_t buf[GK_WIRE_GENRE_MAX + 1 + 1 + GK_WIRE_CONFIG_MAX];
  size_t g = strnlen(cr->genre, GK_WIRE_GENRE_MAX);
  size_t c = strnlen(cr->config, GK_WIRE_CONFIG_MAX);
  memcpy(buf, cr->genre, g);
  buf[g] = 0;
  buf[g + 1] = cr->max_players;
  memcpy(buf + g + 2, cr->config, c);
  return gk_hash_bytes(buf, g + 2 + c);
}

/* Seats for people: max_players less the seats the server's bots take. */
static uint32_t people_seats(const gk_room *r) {
  uint32_t bots = gk_room__bots_seats(r->bots);
  return r->max_players > bots ? r->max_players - bots : 0;
}

static uint32_t seated(const gk_room *r) {
  uint32_t n = 0;
  for (uint32_t m = gk_room__connected(r); m; m &= m - 1) n++;
  return n;
}

uint32_t gk_room_quick_free(const gk_room *r) {
  if (!r->quick || r->state != GK_ROOM_LOBBY) return 0;
  uint32_t n = seated(r), cap = people_seats(r);
  return cap > n ? cap - n : 0;
}

int gk_room_quick_fits(const gk_room *r, const gk_wire_msg *m) {
  const gk_wire_create_room *cr = &m->u.quick.room;
  return gk_room_quick_free(r) > 0 && r->quick_key == gk_room_quick_key(cr) &&
         strcmp(r->genre->sim->name, cr->genre) == 0;
}

static void send_joined(gk_room_host *h, const gk_room *r, uint32_t peer,
                        uint32_t slot) {
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_QUICK_JOINED;
  memcpy(out.u.quick_joined.code, r->code, sizeof(r->code));
  out.u.quick_joined.slot = (uint8_t)slot;
  out.u.quick_joined.players = (uint8_t)seated(r);
  gk_room__send(h, peer, &out);
}

static void log_quick(gk_room_host *h, const gk_room *r, uint32_t peer,
                      uint32_t slot, const char *how) {
  if (gk_log_begin(h->log, GK_LOG_INFO, "quick_joined", r->code)) {
    gk_log_str(h->log, "how", how);
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "seated", seated(r));
    gk_log_u64(h->log, "seats", people_seats(r));
    gk_log_u64(h->log, "peer", peer);
    gk_log_end(h->log);
  }
}

/* A new quick-play room, its first player in slot 0. */
static gk_room *quick_create(gk_room_host *h, gk_room_conn *c, uint32_t peer,
                             const gk_wire_msg *m, const char *code,
                             uint32_t players_cap) {
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  gk_room *r = NULL;
  int rc = gk_room__build(h, c, &m->u.quick.room, code, players_cap, &r, err,
                          sizeof(err));
  if (!rc && gk_room__bots_seats(r->bots) != 0) {
    rc = gk_errf(err, sizeof(err), GK_EINVAL,
                 "options.room.bots: quick play seats people only");
    gk_room__discard(r);
  }
  if (rc) {
    gk_room__build_refused(h, peer, "quick_refused", code, rc, err);
    return NULL;
  }
  r->quick = 1;
  r->listed = 1; /* anyone may find it */
  r->quick_key = gk_room_quick_key(&m->u.quick.room);
  gk_room__open(h, r, c);
  if (gk_log_begin(h->log, GK_LOG_INFO, "room_created", r->code)) {
    gk_log_str(h->log, "genre", r->genre->sim->name);
    gk_log_u64(h->log, "max_players", r->max_players);
    gk_log_str(h->log, "options", r->options);
    gk_log_str(h->log, "by", "quick_play");
    gk_log_u64(h->log, "peer", peer);
    gk_log_end(h->log);
  }
  return r;
}

gk_room *gk_room_quick(gk_room_host *h, gk_room *r, uint32_t conn,
                       const gk_wire_msg *m, const char *code,
                       uint32_t players_cap, uint64_t now_ms) {
  h->now_ms = now_ms;
  gk_room_conn *c = gk_room__conn_get(h, conn);
  if (!c) return NULL;
  gk_room__leave_drained(h, c);
  const char *why = NULL;
  int rc = 0;
  if (h->shutting_down)
    rc = GK_ECLOSED, why = "server is shutting down";
  else if (c->room != NULL)
    rc = GK_ESTATE, why = "already in a room";
  else if (r && !gk_room_quick_fits(r, m))
    rc = GK_EFULL, why = "the quick-play room is full or does not fit";
  if (rc) {
    h->stats.refused++;
    gk_room__send_error(h, conn, rc, why);
    return NULL;
  }
  uint32_t slot = 0;
  const char *how = r ? "joined" : "created";
  if (r) {
    slot = gk_room__free_slot(r);
    if (slot == r->nslots) r->nslots++;
    r->conn[slot] = conn;
    gk_room__seat(c, r, slot, 0);
    gk_room__admit(h, conn);
  } else if ((r = quick_create(h, c, conn, m, code, players_cap)) == NULL) {
    return NULL;
  }
  log_quick(h, r, conn, slot, how);
  send_joined(h, r, conn, slot);
  gk_room__roster_to(h, r, conn);
  if (gk_room_quick_free(r) == 0) gk_room__start_now(h, r, GK_ROOM_NO_CONN);
  return r;
}

int gk_room__quick_left(gk_room_host *h, gk_room *r, uint32_t slot) {
  if (!r->quick) return 0;
  gk_room__name_clear(h, r, slot); /* the next player takes the seat */
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_left", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "seated", seated(r));
    gk_log_end(h->log);
  }
  if (gk_room__connected(r) == 0) gk_room__finalise(h, r, GK_WIRE_END_ALL_LEFT);
  return 1;
}

gk_room *gk_room_quick_best(gk_room *best, gk_room *r, const gk_wire_msg *m) {
  if (!r || !gk_room_quick_fits(r, m)) return best;
  return !best || gk_room_quick_free(r) < gk_room_quick_free(best) ? r : best;
}
