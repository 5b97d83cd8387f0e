/* gk_net_lobby.h: a room's setup as its players see it, the lobby part of
 * the client protocol (docs/PROTOCOL.md, "Rooms"), one implementation for
 * every client that sets a room up itself (gk-bot and gk-bot --light):
 *
 *   - player 0, the host, sends CREATE_ROOM (genre, players, input delay,
 *     genre options); ROOM_CREATED brings the room's code, and the host
 *     is in;
 *   - every other player sends JOIN_ROOM with that code, as a player;
 *     JOINED says it is in;
 *   - once every player is in (every starter: a room may keep places for
 *     late joiners), the host sends START_MATCH (MATCH_START,
 *     which the peer engine handles, follows for everyone);
 *   - ERROR (a refused request) and SHUTDOWN end the setup.
 *
 * Or, for a room another client created (gk_net_lobby_init_join; a page,
 * say): every player of the lobby sends JOIN_ROOM with the known code
 * and takes any free slot the server gives (JOINED says which); nobody
 * here starts the match: its creator does, and MATCH_START follows. An
 * unknown code (GK_ENOTFOUND) or a full room (GK_EFULL) is an ERROR.
 *
 * Pure state over decoded messages (gk_lockstep: libc + core): it builds
 * the requests and says what a reply means; the caller connects, adds a
 * connect token if it has one, and sends (natively through its peer
 * engine, gk_net_peer_send_msg). Caller-owned storage, no allocation.
 */
#ifndef GK_NET_LOBBY_H
#define GK_NET_LOBBY_H

#include <stdint.h>

#include "gk_net_wire.h"

/* What the host asks CREATE_ROOM for. */
typedef struct gk_net_lobby_room {
  const char *genre;    /* must be non-NULL, 1..GK_WIRE_GENRE_MAX chars */
  uint32_t players;     /* 1..GK_PLAYERS_MAX: the room's size */
  uint32_t input_delay; /* 0..255 (0: the server's default) */
  const char *config;   /* genre options JSON text, may be NULL (defaults),
                           at most GK_WIRE_CONFIG_MAX chars */
  uint32_t starters;    /* players 0..starters-1 must be in before the
                           host starts; the rest may join the running
                           match (late join); 0: all of them */
} gk_net_lobby_room;

typedef struct gk_net_lobby {
  /* read-only for callers */
  gk_net_lobby_room room;
  uint32_t in;    /* bit i: player i is in the room */
  int created;    /* `code` is the room's: ROOM_CREATED came, or the
                     lobby joins a known room */
  int start_sent; /* gk_net_lobby_start gave START_MATCH out */
  int joining;    /* gk_net_lobby_init_join: the room is another's */
  char code[GK_WIRE_CODE_LEN + 1];
} gk_net_lobby;

/* What a message meant to the lobby (gk_net_lobby_on_msg). */
typedef enum gk_net_lobby_event {
  GK_NET_LOBBY_NONE = 0, /* not a lobby message, or nothing new */
  GK_NET_LOBBY_CREATED,  /* the room exists: connect the other players
                            (their requests carry `code`) */
  GK_NET_LOBBY_JOINED,   /* the receiver is in the room */
  GK_NET_LOBBY_ERROR,    /* the server refused a request (m->u.error) */
  GK_NET_LOBBY_SHUTDOWN  /* the server is shutting down */
} gk_net_lobby_event;

/* A room to set up; `room`'s strings must outlive the lobby. Returns 0 or
 * GK_EINVAL (NULL, no genre, players or starters out of range, a genre
 * or options text too long for CREATE_ROOM, a delay over 255). */
int gk_net_lobby_init(gk_net_lobby *l, const gk_net_lobby_room *room);

/* `players` players (1..GK_PLAYERS_MAX) joining the room `code` (a
 * valid room code, gk_wire_code_valid) that someone else created and
 * starts; room.genre stays NULL (MATCH_START names it). Returns 0 or
 * GK_EINVAL (NULL, a bad code, players out of range). */
int gk_net_lobby_init_join(gk_net_lobby *l, const char *code, uint32_t players);

/* Player `index`'s request once its connection is up, into *m (no token:
 * the caller may add one): CREATE_ROOM for player 0, JOIN_ROOM as a
 * player with the room's code for any other (a late joiner's index may be
 * past the room's size); JOIN_ROOM for every player of a joining lobby.
 * Returns 0, or GK_ESTATE for a joiner before
 * ROOM_CREATED. */
int gk_net_lobby_request(const gk_net_lobby *l, uint32_t index, gk_wire_msg *m);

/* A message that reached player `index`: notes ROOM_CREATED (player 0
 * only, the first one) and JOINED, and says what happened. */
gk_net_lobby_event gk_net_lobby_on_msg(gk_net_lobby *l, uint32_t index,
                                       const gk_wire_msg *m);

/* 1 if player `index` is in the room (0 past the room's size). */
int gk_net_lobby_is_in(const gk_net_lobby *l, uint32_t index);

/* Once every starter is in and START_MATCH has not been given out (never
 * for a joining lobby: the room's creator starts it): fills
 * *m with it (the host sends it), sets start_sent and returns 1; else 0.
 * A caller whose send failed may clear start_sent to be given it again. */
int gk_net_lobby_start(gk_net_lobby *l, gk_wire_msg *m);

/* An ERROR's text, or its code's words (gk_strerror) when it came without
 * one: over ENet a reply to a connection not admitted is capped to its
 * request, and a text that does not fit is left out (docs/PROTOCOL.md). */
const char *gk_net_lobby_error_text(const gk_wire_error *e);

#endif
