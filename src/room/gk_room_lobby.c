/* gk_room_lobby.c: a room from CREATE_ROOM to the start of its match.
 *
 * The shell (src/server) hands room control here through gk_room.c:
 *   1. CREATE_ROOM: the genre, player cap, input delay and options are
 *      checked against the config, the server's and the client's options
 *      are merged into the room's genre config, the room gets a code and
 *      a seed from the CSPRNG, and the creator gets slot 0 (ROOM_CREATED).
 *      Until gk_room_create returns it, a room is this file's: a failure
 *      at any point frees it with gk_room__discard, and only then;
 *   2. JOIN_ROOM with the code gives the next slot (JOINED); on a running
 *      match, gk_room_join.c decides (late join);
 *   3. START_MATCH from the creator starts the match (gk_room_match.c
 *      opens the session and the replay) and sends every player
 *      MATCH_START with its slot;
 *   4. END_MATCH from the creator while the room is a lobby closes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_room_internal.h"

static uint32_t popcount32(uint32_t m) {
  uint32_t n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

void gk_room__discard(gk_room *r) {
  if (r->session_open) gk_net_session_close(&r->session);
  if (r->rec) gk_room__replay_drop(r->host, r);
  gk_room__delay_free(r->delay);
  gk_room__rejoin_free(r->rejoin);
  gk_room__bots_free(r->bots);
  if (r->cfg_ready && r->genre->sim->config_free)
    r->genre->sim->config_free(r->cfg);
  free(r->cfg);
  free(r);
}

/* --- creating ------------------------------------------------------------ */

/* Merges the server's options for the genre with the client's (the
 * client's keys win) into one JSON object text: what the room's config is
 * built from and what every peer gets in MATCH_START. The client's `room`
 * key holds options of the room, not of the genre (gk_room_bots.c): it
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

void gk_room__leave_drained(gk_room_host *h, gk_room_conn *c) {
  gk_room *r = c->room;
  if (!r || r->state != GK_ROOM_DRAINING) return;
  if (c->slot < r->nslots) r->conn[c->slot] = GK_ROOM_NO_CONN;
  c->room = NULL;
}

/* What a CREATE_ROOM asks for, checked against the server's state and
 * config: the genre, the player cap and the input delay. */
typedef struct create_args {
  const gk_server_genre *genre;
  uint32_t max_players;
  uint32_t input_delay;
  int delay_auto; /* chosen at start from round trips */
} create_args;

static int create_check(const gk_room_host *h, const gk_room_conn *c,
                        const gk_wire_create_room *cr, create_args *a,
                        char *err, size_t errlen) {
  if (h->shutting_down)
    return gk_errf(err, errlen, GK_ECLOSED, "server is shutting down");
  if (c->room != NULL)
    return gk_errf(err, errlen, GK_ESTATE, "already in a room");
  const gk_server_genre *g = gk_server_config_genre(h->cfg, cr->genre);
  if (!g || !g->enabled)
    return gk_errf(err, errlen, GK_ENOTFOUND, "genre not offered: %s",
                   cr->genre);
  a->genre = g;
  a->max_players = cr->max_players ? cr->max_players : g->max_players;
  a->input_delay = cr->input_delay ? cr->input_delay : h->cfg->input_delay;
  a->delay_auto = cr->input_delay == 0 && h->cfg->input_delay_auto;
  if (a->max_players < g->sim->players_min || a->max_players > g->max_players)
    return gk_errf(err, errlen, GK_ERANGE, "max_players must be in %u..%u",
                   g->sim->players_min, g->max_players);
  if (a->input_delay > h->cfg->input_delay_max)
    return gk_errf(err, errlen, GK_ERANGE, "input_delay must be at most %u",
                   h->cfg->input_delay_max);
  if (h->nrooms >= h->cfg->max_rooms)
    return gk_errf(err, errlen, GK_EFULL, "no room left (limit %u)",
                   h->cfg->max_rooms);
  return 0;
}

/* The room's genre config: merged options, then the genre's parser; *room
 * as merge_options gives it. */
static int room_configure(gk_room *r, const char *client, cJSON **room,
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

#define SHORT_TRIES 8 /* short codes drawn before a 16-character one */

/* A unique code: the shell's (a fleet's reserved one), or a short one of
 * the length the rooms alive call for, drawn again while taken; after
 * SHORT_TRIES clashes a 16-character one (80 bits). */
static int room_code(gk_room_host *h, char *code) {
  int rc = h->env.new_code ? h->env.new_code(h->env.user, code) : GK_ENOTFOUND;
  if (rc != GK_ENOTFOUND) return rc;
  for (int i = 0; i < SHORT_TRIES; i++) {
    rc = gk_server_room_code_short(code, h->nrooms);
    if (rc || !h->env.code_taken(h->env.user, code)) return rc;
  }
  rc = gk_server_room_code(code);
  if (!rc && h->env.code_taken(h->env.user, code))
    rc = GK_EEXIST; /* 2^-80: refuse */
  return rc;
}

/* The room's code (unique) and its match seed, from the CSPRNG. */
static int room_secrets(gk_room_host *h, gk_room *r, const char *code,
                        char *err, size_t errlen) {
  if (code && h->env.code_taken(h->env.user, code))
    return gk_errf(err, errlen, GK_EEXIST, "room code %s is taken", code);
  int rc = 0;
  if (code)
    memcpy(r->code, code, GK_WIRE_CODE_LEN + 1);
  else
    rc = room_code(h, r->code);
  if (!rc) rc = gk_server_random(&r->seed, sizeof(r->seed));
  if (rc) return gk_errf(err, errlen, rc, "no secure random source");
  return 0;
}

int gk_room__build(gk_room_host *h, const gk_room_conn *c,
                   const gk_wire_create_room *cr, const char *code,
                   uint32_t players_cap, gk_room **out, char *err,
                   size_t errlen) {
  create_args a = {NULL, 0, 0, 0};
  int rc = create_check(h, c, cr, &a, err, errlen);
  if (rc) return rc;
  gk_room *r = calloc(1, sizeof(*r));
  if (!r) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  r->genre = a.genre;
  r->max_players = a.max_players;
  r->input_delay = a.input_delay;
  r->delay = gk_room__delay_new(a.delay_auto);
  r->rejoin = gk_room__rejoin_new();
  r->host = h;
  if (!r->delay || !r->rejoin)
    rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  cJSON *room = NULL;
  if (!rc) rc = room_configure(r, cr->config, &room, err, errlen);
  if (!rc) rc = gk_room__predict_configure(h, r, room, err, errlen);
  if (!rc) rc = gk_room__listed_configure(r, room, err, errlen);
  if (!rc) rc = gk_room__rematch_check(room, err, errlen);
  if (!rc)
    rc = gk_room__bots_configure(r, players_cap, cr->max_players != 0, room,
                                 err, errlen);
  cJSON_Delete(room);
  if (!rc) rc = room_secrets(h, r, code, err, errlen);
  if (rc) {
    gk_room__discard(r);
    return rc;
  }
  *out = r;
  return 0;
}

void gk_room__build_refused(gk_room_host *h, uint32_t peer, const char *event,
                            const char *code, int rc, const char *err) {
  h->stats.refused++;
  if (gk_log_begin(h->log, GK_LOG_INFO, event, code)) {
    gk_log_u64(h->log, "peer", peer);
    gk_log_err(h->log, "code", rc);
    gk_log_str(h->log, "reason", err);
    gk_log_end(h->log);
  }
  gk_room__send_error(h, peer, rc, err);
}

int gk_room__listed_configure(gk_room *r, const cJSON *room, char *err,
                              size_t errlen) {
  const cJSON *v = cJSON_IsObject(room)
                       ? cJSON_GetObjectItemCaseSensitive(room, "listed")
                       : NULL;
  r->listed = 0;
  if (!v) return 0;
  if (!cJSON_IsBool(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room.listed: must be true or false, got %s",
                   gk_config_type_name(v));
  r->listed = cJSON_IsTrue(v);
  return 0;
}

void gk_room__open(gk_room_host *h, gk_room *r, gk_room_conn *c) {
  r->state = GK_ROOM_LOBBY;
  for (uint32_t i = 0; i < GK_PLAYERS_MAX; i++) r->conn[i] = GK_ROOM_NO_CONN;
  r->conn[0] = c->id;
  r->nslots = 1;
  r->created_ms = gk_room__now(h);
  h->stats.rooms_created++;
  gk_room__seat(c, r, 0, 0);
  gk_room__admit(h, c->id);
}

gk_room *gk_room__on_create(gk_room_host *h, uint32_t peer,
                            const gk_wire_msg *m, uint32_t players_cap) {
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  gk_room_conn *c = gk_room__conn_get(h, peer);
  gk_room__leave_drained(h, c);
  gk_room *r = NULL;
  int rc = gk_room__build(h, c, &m->u.create_room, NULL, players_cap, &r, err,
                          sizeof(err));
  if (rc) {
    gk_room__build_refused(h, peer, "create_refused", NULL, rc, err);
    return NULL;
  }
  gk_room__open(h, r, c);
  if (gk_log_begin(h->log, GK_LOG_INFO, "room_created", r->code)) {
    gk_log_str(h->log, "genre", r->genre->sim->name);
    gk_log_u64(h->log, "max_players", r->max_players);
    gk_log_u64(h->log, "input_delay", r->input_delay);
    gk_log_u64(h->log, "bots", gk_room__bots_seats(r->bots));
    gk_log_str(h->log, "options", r->options);
    gk_log_u64(h->log, "peer", peer);
    gk_log_end(h->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_ROOM_CREATED;
  memcpy(out.u.room.code, r->code, sizeof(r->code));
  out.u.room.slot = 0;
  gk_room__send(h, peer, &out);
  return r;
}

/* --- joining ------------------------------------------------------------- */

void gk_room__on_join(gk_room_host *h, gk_room *r, uint32_t peer,
                      const gk_wire_msg *m) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  int rc = 0;
  const char *why = NULL;
  gk_room__leave_drained(h, c);
  if (h->shutting_down) {
    rc = GK_ECLOSED, why = "server is shutting down";
  } else if (c->room != NULL) {
    rc = GK_ESTATE, why = "already in a room";
  } else if (m->u.room.role != GK_WIRE_ROLE_PLAYER) {
    rc = GK_EPERM, why = "spectators are not served yet";
  } else if (!gk_wire_code_valid(m->u.room.code) || r == NULL) {
    rc = GK_ENOTFOUND, why = "no room with that code";
  } else if (r->quick && r->state == GK_ROOM_LOBBY) {
    rc = GK_EPERM, why = "a quick-play lobby is joined through quick play";
  } else if (r->state != GK_ROOM_LOBBY) {
    rc = gk_room__join_late_check(h, r, &why); /* gk_room_join.c */
  } else if (gk_room__free_slot(r) >= r->max_players) {
    rc = GK_EFULL, why = "the room is full";
  }
  if (rc) {
    h->stats.refused++;
    if (rc == GK_ENOTFOUND)
      gk_room__strike(h, peer, "join with an unknown code", rc);
    if (!gk_room__conn_get(h, peer)) return; /* kicked */
    gk_room__send_error(h, peer, rc, why);
    return;
  }
  if (r->state == GK_ROOM_PLAYING) {
    gk_room__join_late(h, peer, r);
    return;
  }
  uint32_t slot = gk_room__free_slot(r); /* a seat a guest left, or the next */
  if (slot == r->nslots) r->nslots++;
  r->conn[slot] = peer;
  gk_room__seat(c, r, slot, 0);
  gk_room__admit(h, peer);
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_joined", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "peer", peer);
    gk_log_end(h->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_JOINED;
  out.u.joined.slot = (uint8_t)slot;
  out.u.joined.players = (uint8_t)popcount32(gk_room__connected(r));
  gk_room__send(h, peer, &out);
  gk_room__roster_to(h, r, peer);
}

void gk_room__lobby_left(gk_room_host *h, gk_room *r, uint32_t slot) {
  gk_room__name_clear(h, r, slot);
  while (r->nslots > 1 && r->conn[r->nslots - 1] == GK_ROOM_NO_CONN)
    r->nslots--; /* a match never starts with a seat nobody took */
  if (gk_log_begin(h->log, GK_LOG_INFO, "player_left", r->code)) {
    gk_log_u64(h->log, "slot", slot);
    gk_log_u64(h->log, "players", popcount32(gk_room__connected(r)));
    gk_log_end(h->log);
  }
}

/* --- starting ------------------------------------------------------------ */

static int start_check(const gk_room_host *h, const gk_room_conn *c,
                       const gk_room *r, char *err, size_t errlen) {
  if (!r || r->state != GK_ROOM_LOBBY)
    return gk_errf(err, errlen, GK_ESTATE, "not in a room's lobby");
  if (r->quick)
    return gk_errf(err, errlen, GK_EPERM,
                   "a quick-play room starts once its seats are taken");
  if (c->slot != 0)
    return gk_errf(err, errlen, GK_EPERM, "only the room's creator starts");
  if (h->shutting_down)
    return gk_errf(err, errlen, GK_ECLOSED, "server is shutting down");
  if (popcount32(gk_room__connected(r)) + gk_room__bots_seats(r->bots) <
      r->genre->sim->players_min)
    return gk_errf(err, errlen, GK_ERANGE, "%s needs %u players",
                   r->genre->sim->name, r->genre->sim->players_min);
  return 0;
}

/* MATCH_START to every player of a room whose match just began, each
 * with its own slot. */
void gk_room__match_start_msg(const gk_room_host *h, const gk_room *r,
                              uint32_t slot, gk_wire_msg *out) {
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
  ms->lead = (uint8_t)r->lead;
  ms->step_seconds.num = 1;
  ms->step_seconds.den = h->cfg->step_hz;
  snprintf(ms->genre, sizeof(ms->genre), "%s", r->genre->sim->name);
  snprintf(ms->config, sizeof(ms->config), "%s", r->options);
  ms->slot = (uint8_t)slot;
}

static void send_match_start(gk_room_host *h, const gk_room *r) {
  gk_wire_msg out;
  for (uint32_t i = 0; i < r->nslots; i++) {
    if (r->conn[i] == GK_ROOM_NO_CONN) continue;
    gk_room__match_start_msg(h, r, i, &out);
    gk_room__send(h, r->conn[i], &out);
  }
}

void gk_room__on_start(gk_room_host *h, gk_room *r, uint32_t peer) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  int rc = start_check(h, c, r, err, sizeof(err));
  if (rc) {
    h->stats.refused++;
    if (rc == GK_EPERM)
      gk_room__strike(h, peer, "start from a non-creator", rc);
    if (gk_room__conn_get(h, peer)) gk_room__send_error(h, peer, rc, err);
    return;
  }
  gk_room__start_now(h, r, peer);
}

void gk_room__start_now(gk_room_host *h, gk_room *r, uint32_t peer) {
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  int rc = gk_room__match_begin(h, r, err, sizeof(err));
  if (rc) {
    /* the room stays a lobby: nothing to undo */
    h->stats.refused++;
    if (gk_log_begin(h->log, GK_LOG_WARN, "start_failed", r->code)) {
      gk_log_err(h->log, "code", rc);
      gk_log_str(h->log, "reason", err);
      gk_log_end(h->log);
    }
    if (peer != GK_ROOM_NO_CONN)
      gk_room__send_error(h, peer, rc, err);
    else
      gk_room__send_room_error(h, r, rc, err);
    return;
  }
  send_match_start(h, r);
  gk_room__rejoin_secrets(h, r);
  if (gk_log_begin(h->log, GK_LOG_INFO, "match_start", r->code)) {
    gk_log_str(h->log, "genre", r->genre->sim->name);
    gk_log_u64(h->log, "players", r->nslots);
    gk_log_u64(h->log, "bot_mask", gk_room__bots_mask(r->bots));
    gk_log_u64(h->log, "active_mask", r->session.cfg.active_mask);
    gk_log_hex(h->log, "seed", r->seed);
    gk_log_u64(h->log, "input_delay", r->input_delay);
    gk_room__delay_log_start(h, r);
    gk_log_str(h->log, "replay", r->rec ? r->replay_path : NULL);
    gk_log_end(h->log);
  }
}

/* END_MATCH from the creator while the room is still a lobby: close it. */
void gk_room__on_lobby_end(gk_room_host *h, gk_room *r, uint32_t peer) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  if (!r || r->state != GK_ROOM_LOBBY || c->slot != 0 || r->quick) {
    h->stats.drop_unexpected++;
    gk_room__strike(h, peer, "END_MATCH outside a room it created", GK_EPERM);
    return;
  }
  gk_room__end_lobby(h, r);
}

void gk_room__end_lobby(gk_room_host *h, gk_room *r) {
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_MATCH_END;
  out.u.match_end.step = 0;
  out.u.match_end.reason = GK_WIRE_END_HOST;
  gk_room__send_room(h, r, &out);
  gk_room__finalise(h, r, GK_WIRE_END_HOST);
}
