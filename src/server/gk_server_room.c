/* gk_server_room.c: rooms, from CREATE_ROOM to the start of the match.
 *
 * gk_server_route.c hands room control here:
 *   1. CREATE_ROOM: the genre, player cap, input delay and options are
 *      checked against the config, the server's and the client's options
 *      are merged into the room's genre config, the room gets a code and
 *      a seed from the CSPRNG, and the creator gets slot 0 (ROOM_CREATED).
 *      Until it is published in the room table a room is the caller's: a
 *      failure at any point frees it with room_discard, and only then;
 *   2. JOIN_ROOM with the code gives the next slot (JOINED); on a running
 *      match, gk_server_join.c decides (late join);
 *   3. START_MATCH from the creator starts the match (gk_server_match.c
 *      opens the session and the replay) and sends every player
 *      MATCH_START with its slot;
 *   4. END_MATCH from the creator while the room is a lobby closes it.
 * A room is freed here too (sv_room_free), by whoever is done with it:
 * the match code once drained, shutdown, the lobby sweep, a creator who
 * left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_server_internal.h"

sv_room *sv_room_find(gk_server *s, const char *code) {
  for (uint32_t i = 0; i < s->nrooms; i++) {
    sv_room *r = sv_live_room(s, i);
    if (memcmp(r->code, code, GK_WIRE_CODE_LEN) == 0) return r;
  }
  return NULL;
}

uint32_t sv_room_connected(const sv_room *r) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != SV_NO_CONN) m |= 1u << i;
  return m;
}

static uint32_t popcount32(uint32_t m) {
  uint32_t n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

/* Frees a room that is in no table (never published, or unpublished by
 * sv_room_free): its session, its replay writer, its genre config (built
 * or not) and itself. Every error path of building a room ends here. */
static void room_discard(sv_room *r) {
  if (r->session_open) gk_net_session_close(&r->session);
  if (r->rec) sv_replay_drop(r->srv, r);
  sv_delay_free(r->delay);
  sv_rejoin_free(r->rejoin);
  sv_auth_room_free(r->auth);
  sv_bots_free(r->bots);
  if (r->cfg_ready && r->genre->sim->config_free)
    r->genre->sim->config_free(r->cfg);
  free(r->cfg);
  free(r);
}

void sv_room_free(gk_server *s, sv_room *r) {
  sv_desync_room_free(s, r);
  sv_spectators_free(s, r);
  for (uint32_t i = 0; i < r->nslots; i++) {
    sv_conn *c = sv_conn_get(s, r->conn[i]);
    if (c && c->room == r->index) {
      c->room = SV_NO_ROOM;
      c->since_ms = sv_now_ms(s);
    }
  }
  s->rooms[r->index] = NULL;
  s->nrooms--;
  uint32_t moved = s->live[s->nrooms]; /* the last takes its place */
  s->live[r->live_at] = moved;
  if (s->rooms[moved]) s->rooms[moved]->live_at = r->live_at;
  s->free_idx[s->cfg->max_rooms - s->nrooms - 1] = r->index;
  s->stats.rooms_closed++;
  room_discard(r);
}

void sv_room_finalise(gk_server *s, sv_room *r, int reason) {
  if (r->state == SV_ROOM_LOBBY)
    gk_log_msg(s->log, GK_LOG_INFO, "room_closed", r->code, "reason",
               gk_wire_end_name(reason));
  else
    sv_match_end(s, r, reason);
  sv_room_free(s, r);
}

/* --- creating ------------------------------------------------------------ */

/* Merges the server's options for the genre with the client's (the
 * client's keys win) into one JSON object text: what the room's config is
 * built from and what every peer gets in MATCH_START. The client's `room`
 * key holds options of the room, not of the genre (gk_server_bots.c): it
 * is left out, and *room gets a copy of it (the caller deletes; NULL if
 * there is none). */
static int merge_options(const gk_server_genre *g, const char *client,
                         char *out, size_t cap, cJSON **room, char *err,
                         size_t errlen) {
  cJSON *merged =
      g->options ? cJSON_Duplicate(g->options, 1) : cJSON_CreateObject();
  cJSON *mine = NULL;
  int rc = 0;
  if (!merged) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  rc = gk_config_parse_text(client, client ? strlen(client) : 0, "options",
                            &mine, err, errlen);
  if (rc) goto out;
  if (mine) {
    for (cJSON *c = mine->child; c; c = c->next) {
      for (cJSON *b = mine->child; b != c; b = b->next) {
        if (strcmp(b->string, c->string) == 0) {
          rc = gk_errf(err, errlen, GK_EINVAL, "options.%s: duplicate key",
                       c->string);
          goto out;
        }
      }
      cJSON *dup = cJSON_Duplicate(c, 1);
      if (!dup) {
        rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
        goto out;
      }
      if (strcmp(c->string, "room") == 0) {
        *room = dup;
        continue;
      }
      if (cJSON_HasObjectItem(merged, c->string))
        cJSON_ReplaceItemInObjectCaseSensitive(merged, c->string, dup);
      else
        cJSON_AddItemToObject(merged, c->string, dup);
    }
  }
  {
    char *text = cJSON_PrintUnformatted(merged);
    if (!text) {
      rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
      goto out;
    }
    size_t n = strlen(text);
    if (n >= cap || n > GK_WIRE_CONFIG_MAX)
      rc = gk_errf(err, errlen, GK_ETOOBIG,
                   "options: %zu bytes with the server's, limit %d", n,
                   GK_WIRE_CONFIG_MAX);
    else
      memcpy(out, text, n + 1);
    cJSON_free(text);
  }
out:
  cJSON_Delete(mine);
  cJSON_Delete(merged);
  return rc;
}

/* A connection whose match is over (its room draining) may go on to
 * another room: it leaves the old one first. */
static void leave_drained(gk_server *s, sv_conn *c) {
  sv_room *r = sv_conn_room(s, c);
  if (!r || r->state != SV_ROOM_DRAINING) return;
  if (c->slot < r->nslots) r->conn[c->slot] = SV_NO_CONN;
  c->room = SV_NO_ROOM;
}

/* What a CREATE_ROOM asks for, checked against the server's state and
 * config: the genre, the player cap and the input delay. */
typedef struct create_args {
  const gk_server_genre *genre;
  uint32_t max_players;
  uint32_t input_delay;
  int delay_auto; /* chosen at start from round trips */
} create_args;

static int create_check(const gk_server *s, const sv_conn *c,
                        const gk_wire_create_room *cr, create_args *a,
                        char *err, size_t errlen) {
  if (s->shutting_down)
    return gk_errf(err, errlen, GK_ECLOSED, "server is shutting down");
  if (c->room != SV_NO_ROOM)
    return gk_errf(err, errlen, GK_ESTATE, "already in a room");
  const gk_server_genre *g = gk_server_config_genre(s->cfg, cr->genre);
  if (!g || !g->enabled)
    return gk_errf(err, errlen, GK_ENOTFOUND, "genre not offered: %s",
                   cr->genre);
  a->genre = g;
  a->max_players = cr->max_players ? cr->max_players : g->max_players;
  a->input_delay = cr->input_delay ? cr->input_delay : s->cfg->input_delay;
  a->delay_auto = cr->input_delay == 0 && s->cfg->input_delay_auto;
  if (a->max_players < g->sim->players_min || a->max_players > g->max_players)
    return gk_errf(err, errlen, GK_ERANGE, "max_players must be in %u..%u",
                   g->sim->players_min, g->max_players);
  if (a->input_delay > s->cfg->input_delay_max)
    return gk_errf(err, errlen, GK_ERANGE, "input_delay must be at most %u",
                   s->cfg->input_delay_max);
  if (s->nrooms >= s->cfg->max_rooms)
    return gk_errf(err, errlen, GK_EFULL, "no room left (limit %u)",
                   s->cfg->max_rooms);
  return 0;
}

/* The room's genre config: merged options, then the genre's parser; *room
 * as merge_options gives it. */
static int room_configure(sv_room *r, const char *client, cJSON **room,
                          char *err, size_t errlen) {
  size_t size = r->genre->sim->config_size;
  r->cfg = calloc(1, size ? size : 1);
  if (!r->cfg) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  int rc = merge_options(r->genre, client, r->options, sizeof(r->options), room,
                         err, errlen);
  if (!rc)
    rc = gk_server_room_config(r->genre, r->cfg, r->options, strlen(r->options),
                               err, errlen);
  r->cfg_ready = rc == 0;
  return rc;
}

/* The room's code (unique) and its match seed, from the CSPRNG. */
static int room_secrets(gk_server *s, sv_room *r, char *err, size_t errlen) {
  int rc = gk_server_room_code(r->code);
  if (!rc && sv_room_find(s, r->code)) rc = GK_EEXIST; /* 2^-80: refuse */
  if (!rc) rc = gk_server_random(&r->seed, sizeof(r->seed));
  if (rc) return gk_errf(err, errlen, rc, "no secure random source");
  return 0;
}

/* Builds the room a CREATE_ROOM asks for, not yet in the table: *out is
 * the caller's on success, and nothing is left over on failure. */
static int room_build(gk_server *s, const sv_conn *c,
                      const gk_wire_create_room *cr, sv_room **out, char *err,
                      size_t errlen) {
  create_args a = {NULL, 0, 0, 0};
  int rc = create_check(s, c, cr, &a, err, errlen);
  if (rc) return rc;
  sv_room *r = calloc(1, sizeof(*r));
  if (!r) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  r->genre = a.genre;
  r->max_players = a.max_players;
  r->input_delay = a.input_delay;
  r->delay = sv_delay_new(a.delay_auto);
  r->rejoin = sv_rejoin_new();
  r->auth = sv_auth_room_new();
  if (!r->delay || !r->rejoin || !r->auth)
    rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  cJSON *room = NULL;
  if (!rc) rc = room_configure(r, cr->config, &room, err, errlen);
  if (!rc)
    rc =
        sv_bots_configure(s, c->id, r, cr->max_players != 0, room, err, errlen);
  cJSON_Delete(room);
  if (!rc) rc = room_secrets(s, r, err, errlen);
  if (rc) {
    room_discard(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* Puts a built room in the table with `peer` as its creator (slot 0). */
static void room_publish(gk_server *s, sv_room *r, uint32_t peer) {
  /* nrooms < max_rooms: a slot is free */
  uint32_t idx = s->free_idx[s->cfg->max_rooms - s->nrooms - 1];
  r->srv = s;
  r->index = idx;
  r->live_at = s->nrooms;
  s->live[s->nrooms] = idx;
  r->state = SV_ROOM_LOBBY;
  for (uint32_t i = 0; i < GK_PLAYERS_MAX; i++) r->conn[i] = SV_NO_CONN;
  r->conn[0] = peer;
  r->nslots = 1;
  r->created_ms = sv_now_ms(s);
  s->rooms[idx] = r;
  s->nrooms++;
  s->stats.rooms_created++;
  sv_conn *c = sv_conn_get(s, peer);
  c->room = idx;
  c->slot = 0;
  sv_auth_admit(s, peer);
}

void sv_on_create(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  sv_conn *c = sv_conn_get(s, peer);
  leave_drained(s, c);
  sv_room *r = NULL;
  int rc = room_build(s, c, &m->u.create_room, &r, err, sizeof(err));
  if (rc) {
    s->stats.refused++;
    if (gk_log_begin(s->log, GK_LOG_INFO, "create_refused", NULL)) {
      gk_log_u64(s->log, "peer", peer);
      gk_log_err(s->log, "code", rc);
      gk_log_str(s->log, "reason", err);
      gk_log_end(s->log);
    }
    sv_send_error(s, peer, rc, err);
    return;
  }
  room_publish(s, r, peer);
  if (gk_log_begin(s->log, GK_LOG_INFO, "room_created", r->code)) {
    gk_log_str(s->log, "genre", r->genre->sim->name);
    gk_log_u64(s->log, "max_players", r->max_players);
    gk_log_u64(s->log, "input_delay", r->input_delay);
    gk_log_u64(s->log, "bots", sv_bots_seats(r->bots));
    gk_log_str(s->log, "options", r->options);
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_ROOM_CREATED;
  memcpy(out.u.room.code, r->code, sizeof(r->code));
  out.u.room.slot = 0;
  sv_send(s, peer, &out);
}

/* --- joining ------------------------------------------------------------- */

void sv_on_join(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  sv_conn *c = sv_conn_get(s, peer);
  int rc = 0;
  const char *why = NULL;
  sv_room *r = NULL;
  leave_drained(s, c);
  if (s->shutting_down) {
    rc = GK_ECLOSED, why = "server is shutting down";
  } else if (c->room != SV_NO_ROOM) {
    rc = GK_ESTATE, why = "already in a room";
  } else if (m->u.room.role != GK_WIRE_ROLE_PLAYER) {
    rc = GK_EPERM, why = "spectators are not served yet";
  } else if (!gk_wire_code_valid(m->u.room.code) ||
             !(r = sv_room_find(s, m->u.room.code))) {
    rc = GK_ENOTFOUND, why = "no room with that code";
  } else if (r->state != SV_ROOM_LOBBY) {
    rc = sv_join_late_check(s, r, &why); /* gk_server_join.c */
  } else if (r->nslots >= r->max_players) {
    rc = GK_EFULL, why = "the room is full";
  }
  if (rc) {
    s->stats.refused++;
    if (rc == GK_ENOTFOUND) sv_strike(s, peer, "join with an unknown code", rc);
    if (!sv_conn_get(s, peer)) return; /* kicked */
    sv_send_error(s, peer, rc, why);
    return;
  }
  if (r->state == SV_ROOM_PLAYING) {
    sv_join_late(s, peer, r);
    return;
  }
  uint32_t slot = r->nslots++;
  r->conn[slot] = peer;
  c->room = r->index;
  c->slot = slot;
  sv_auth_admit(s, peer);
  if (gk_log_begin(s->log, GK_LOG_INFO, "player_joined", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_JOINED;
  out.u.joined.slot = (uint8_t)slot;
  out.u.joined.players = (uint8_t)popcount32(sv_room_connected(r));
  sv_send(s, peer, &out);
}

/* --- starting ------------------------------------------------------------ */

static int start_check(const gk_server *s, const sv_conn *c, const sv_room *r,
                       char *err, size_t errlen) {
  if (!r || r->state != SV_ROOM_LOBBY)
    return gk_errf(err, errlen, GK_ESTATE, "not in a room's lobby");
  if (c->slot != 0)
    return gk_errf(err, errlen, GK_EPERM, "only the room's creator starts");
  if (s->shutting_down)
    return gk_errf(err, errlen, GK_ECLOSED, "server is shutting down");
  if (popcount32(sv_room_connected(r)) + sv_bots_seats(r->bots) <
      r->genre->sim->players_min)
    return gk_errf(err, errlen, GK_ERANGE, "%s needs %u players",
                   r->genre->sim->name, r->genre->sim->players_min);
  return 0;
}

/* MATCH_START to every player of a room whose match just began, each
 * with its own slot. */
void sv_room_match_start(const gk_server *s, const sv_room *r, uint32_t slot,
                         gk_wire_msg *out) {
  memset(out, 0, sizeof(*out));
  out->type = GK_MSG_MATCH_START;
  gk_wire_match_start *ms = &out->u.match_start;
  ms->seed = r->seed;
  ms->players = (uint8_t)r->session.cfg.players; /* the cap: late join */
  ms->active_mask = r->session.cfg.active_mask;
  ms->first_step = 0;
  /* the delay announced by the last confirmed step: r->input_delay at the
   * start; after a mid-match change a rejoiner or a spectator must start
   * from the one in force, so it switches with everyone at the next */
  ms->input_delay =
      (uint8_t)(r->session_open ? gk_net_session_delay(&r->session)
                                : r->input_delay);
  ms->lead = (uint8_t)s->cfg->lead;
  ms->step_seconds.num = 1;
  ms->step_seconds.den = s->cfg->step_hz;
  snprintf(ms->genre, sizeof(ms->genre), "%s", r->genre->sim->name);
  snprintf(ms->config, sizeof(ms->config), "%s", r->options);
  ms->slot = (uint8_t)slot;
}

static void send_match_start(gk_server *s, const sv_room *r) {
  gk_wire_msg out;
  for (uint32_t i = 0; i < r->nslots; i++) {
    if (r->conn[i] == SV_NO_CONN) continue;
    sv_room_match_start(s, r, i, &out);
    sv_send(s, r->conn[i], &out);
  }
}

void sv_on_start(gk_server *s, uint32_t peer) {
  sv_conn *c = sv_conn_get(s, peer);
  sv_room *r = sv_conn_room(s, c);
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  int rc = start_check(s, c, r, err, sizeof(err));
  if (rc) {
    s->stats.refused++;
    if (rc == GK_EPERM) sv_strike(s, peer, "start from a non-creator", rc);
    if (sv_conn_get(s, peer)) sv_send_error(s, peer, rc, err);
    return;
  }
  rc = sv_match_begin(s, r, err, sizeof(err));
  if (rc) {
    /* the room stays a lobby: nothing to undo */
    s->stats.refused++;
    if (gk_log_begin(s->log, GK_LOG_WARN, "start_failed", r->code)) {
      gk_log_err(s->log, "code", rc);
      gk_log_str(s->log, "reason", err);
      gk_log_end(s->log);
    }
    sv_send_error(s, peer, rc, err);
    return;
  }
  send_match_start(s, r);
  sv_rejoin_secrets(s, r);
  if (gk_log_begin(s->log, GK_LOG_INFO, "match_start", r->code)) {
    gk_log_str(s->log, "genre", r->genre->sim->name);
    gk_log_u64(s->log, "players", r->nslots);
    gk_log_u64(s->log, "bot_mask", sv_bots_mask(r->bots));
    gk_log_u64(s->log, "active_mask", r->session.cfg.active_mask);
    gk_log_hex(s->log, "seed", r->seed);
    gk_log_u64(s->log, "input_delay", r->input_delay);
    sv_delay_log_start(s, r);
    gk_log_str(s->log, "replay", r->rec ? r->replay_path : NULL);
    gk_log_end(s->log);
  }
}

/* END_MATCH from the creator while the room is still a lobby: close it. */
void sv_on_lobby_end(gk_server *s, uint32_t peer) {
  sv_conn *c = sv_conn_get(s, peer);
  sv_room *r = sv_conn_room(s, c);
  if (!r || r->state != SV_ROOM_LOBBY || c->slot != 0) {
    s->stats.drop_unexpected++;
    sv_strike(s, peer, "END_MATCH outside a room it created", GK_EPERM);
    return;
  }
  sv_room_end_lobby(s, r);
}

void sv_room_end_lobby(gk_server *s, sv_room *r) {
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_MATCH_END;
  out.u.match_end.step = 0;
  out.u.match_end.reason = GK_WIRE_END_HOST;
  sv_send_room(s, r, &out);
  sv_room_finalise(s, r, GK_WIRE_END_HOST);
}
