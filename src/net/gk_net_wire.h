/* gk_net_wire.h: the wire codec, every message the lockstep protocol sends.
 *
 * Pure C over byte buffers: no ENet, no libuv, no allocation. ENet is only
 * the datagram carrier; everything that crosses the network is one of the
 * messages below, encoded by gk_wire_encode and decoded by gk_wire_decode.
 *
 * Decoding trusts nothing: the datagram must be at most GK_WIRE_MAX bytes,
 * start with GK_WIRE_VERSION, name a type from GK_WIRE_MSG_MAP, and then
 * contain exactly the fields of that type (no trailing bytes). Every count,
 * size, slot, step range and string is checked against the limits below
 * before anything is read past it. A failed decode returns GK_ETOOBIG,
 * GK_EVERSION, GK_EPROTO, GK_ETRUNC or GK_ERANGE and leaves nothing
 * half-filled that the caller could act on. Checks that need context (is
 * this slot the sender's? does input_size match the genre?) belong to the
 * receiver: the session and the peer do them.
 *
 * Byte layout. Every integer is little-endian, fixed width. Every message:
 *
 *   0        1        2
 *   +--------+--------+----------- body (type specific) ---
 *   | version|  type  |
 *   +--------+--------+----------------------------------------
 *
 * str8  = len u8, then len bytes (no NUL on the wire)
 * str16 = len u16, then len bytes
 *
 * Match messages (unreliable ones are marked ~: they repeat every item the
 * other side has not acknowledged, so a lost datagram costs no resend wait):
 *
 * ~INPUT      peer -> host. Local inputs for steps first..first+count-1,
 *   and optionally the peer's state hashes after steps
 *   hash_first..hash_first+hash_count-1 (wire version 2).
 *   slot u8 | input_size u8 | ack u64 | first u64 | count u8 |
 *   records: count * input_size bytes | hash_count u8 (0..64) |
 *   only if hash_count > 0: hash_first u64 | hash_count * hash u64
 *   `ack`: the peer holds every confirmed step < ack (releases the host's
 *   copies). count may be 0 (a pure ack / keepalive); hash_count 0 means
 *   no hash report (and nothing follows it).
 * ~CONFIRMED  host -> peer. Confirmed merged inputs first..first+count-1.
 *   players u8 | input_size u8 | ack u64 | hash_ack u64 | first u64 |
 *   count u8 |
 *   count * ( active_mask u32 | flags u32 | players * input_size bytes )
 *   `ack`: the host holds every input of this peer for steps < ack.
 *   `hash_ack`: the host holds this peer's hash reports for steps <
 *   hash_ack (the peer stops repeating them in INPUT).
 *  HASH       peer -> host. State hashes after steps first..first+count-1
 *   (still taken; peers send their hashes inside INPUT since version 2).
 *   first u64 | count u8 | count * hash u64
 *  STALL      host -> peers. Step `step` waits on the players in `awaited`.
 *   step u64 | awaited u32 | waited_ms u32
 *  DESYNC     host -> peers. `player`'s hash after `step` differs.
 *   step u64 | player u8 | host_hash u64 | peer_hash u64
 *  MATCH_END  host -> peers. The match ended after step `step`.
 *   step u64 | reason u8 (GK_WIRE_END_*)
 *  REMOVE_PLAYER  creator -> host (an action: remove `slot` at step `step`,
 *   or as soon as possible with GK_WIRE_STEP_ASAP), and host -> peers (a
 *   notice: `slot` is neutral from `step` on).
 *   slot u8 | step u64
 *  END_MATCH  creator -> host (an action).  reason u8
 *
 * Room control (all reliable):
 *  CREATE_ROOM   max_players u8 | input_delay u8 | genre str8 | config str16
 *                | token_len u8 | token: token_len bytes
 *  ROOM_CREATED  code: GK_WIRE_CODE_LEN bytes of base32 text | slot u8
 *  JOIN_ROOM     code: GK_WIRE_CODE_LEN bytes | role u8 (GK_WIRE_ROLE_*)
 *                | token_len u8 | token: token_len bytes
 *  token_len is 0 (no token: a server in open mode) or GK_WIRE_TOKEN_BYTES
 *  (a connect token, src/token/gk_token.h; the codec checks only its
 *  length, the server opens it); any other length is GK_EPROTO.
 *  JOINED        slot u8 | players u8 (players in the room so far)
 *  START_MATCH   (no body; from the room's creator)
 *  MATCH_START   seed u64 | players u8 | slot u8 (the receiver's) |
 *                active_mask u32 | first_step u64 | input_delay u8 |
 *                lead u8 | step_num u32 | step_den u32 | genre str8 |
 *                config str16
 *  SHUTDOWN      grace_ms u32 (the server is shutting down)
 *  ERROR         code i16 (a GK_E* value) | text str8
 *
 * A fleet (reliable; docs/PROTOCOL.md, "A fleet of servers"):
 *  REDIRECT      host -> client, the answer to JOIN_ROOM, REJOIN_ROOM or
 *                SPECTATE for a code another node holds: ask there.
 *                code: GK_WIRE_CODE_LEN bytes | enet str8 (1..127 bytes,
 *                printable ASCII, no space) | ws_url str8 (0..127, same)
 *
 *  QUICK_PLAY    client -> host: put me in any fitting lobby (quick play).
 *                code: GK_WIRE_CODE_LEN bytes (GK_WIRE_CODE_ANY: any; else
 *                the code a REDIRECT named) | then a CREATE_ROOM body
 *                (max_players, input_delay, genre, config, token): the
 *                room wanted; a room fits if its genre, max_players and
 *                config are the same (gk_net_wire_quick.c)
 *  QUICK_JOINED  host -> client: seated in a quick-play room.
 *                code: GK_WIRE_CODE_LEN bytes | slot u8 | players u8
 *
 *  NAME          client -> host: the sender's name for its room.
 *                name str8 (1..GK_WIRE_NAME_MAX bytes of UTF-8 without
 *                control characters)
 *  ROSTER        host -> client: the names of a room's slots.
 *                count u8 | count x (slot u8 | name str8), slots ascending
 *  NEXT_ROOM     client -> host: the host of a room whose match ended
 *                made `code`, its next room: tell the room's others.
 *                host -> client: the host of the room you were in (slot
 *                0) made `code`, its next room (Play again).
 *                code: GK_WIRE_CODE_LEN bytes
 *
 * Rejoin, spectators and snapshots (all reliable; the codec is
 * gk_net_wire_snap.c):
 *  RECONNECT_SECRET host -> player, right after MATCH_START.
 *                slot u8 | secret: GK_WIRE_SECRET_LEN bytes
 *  REJOIN_ROOM   client -> host: take slot `slot` of room `code` back.
 *                code: GK_WIRE_CODE_LEN bytes | slot u8 | secret |
 *                token_len u8 | token: token_len bytes
 *  SPECTATE      client -> host: watch room `code`.
 *                code | token_len u8 | token: token_len bytes
 *  token_len as in JOIN_ROOM: 0 (open mode) or GK_WIRE_TOKEN_BYTES (token
 *  mode: a join token for that room, as a player for that slot and the
 *  slot's own client id, or as a spectator; docs/PROTOCOL.md).
 *  SNAPSHOT_BEGIN host -> client. The referee's state after `step` steps
 *                follows in `chunks` SNAPSHOT_CHUNKs of transfer `id`.
 *                id u32 | kind u8 (GK_WIRE_SNAP_*) | code | step u64 |
 *                hash u64 (the state's hash) | next_input u64 (the first
 *                step the receiver samples for; spectators: 0) |
 *                active_mask u32 | total u32 (bytes) | chunk_size u16
 *                (1..GK_CHUNK_BYTES_MAX) | chunks u32 | sum u64 (XXH3-64
 *                of the whole state)
 *  SNAPSHOT_CHUNK host -> client. Bytes index*chunk_size.. of transfer id.
 *                id u32 | index u32 | crc u32 (low half of XXH3-64 of the
 *                bytes) | len u16 | len bytes
 *
 * Desync forensics (all reliable; codec gk_net_wire_state.c):
 *  STATE_REQUEST host -> player. Send your canonical state after step
 *                `step` (the step a DESYNC named) as transfer `id`.
 *                id u32 | step u64
 *  STATE_BEGIN   player -> host. The answer: status i16 (0, or a negative
 *                GK_E* code: cannot, e.g. GK_ENOTKEPT for a step outside
 *                the peer's history) | id u32 | step u64 | from u64 |
 *                to u64 (the steps whose state the peer can give: after
 *                steps from..to) | hash u64 (the state's hash) | total u32
 *                | chunk_size u16 | chunks u32 | sum u64 (as
 *                SNAPSHOT_BEGIN). With a status below 0, total, chunk_size,
 *                chunks, sum and hash are 0 and no chunk follows.
 *  STATE_CHUNK   player -> host. Bytes index*chunk_size.. of transfer id;
 *                the layout of SNAPSHOT_CHUNK.
 */
#ifndef GK_NET_WIRE_H
#define GK_NET_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "gk_sim.h"

#define GK_WIRE_VERSION 2      /* 2: INPUT carries hashes, CONFIRMED hash_ack */
#define GK_WIRE_MAX 1200       /* hard limit of one encoded message, bytes */
#define GK_WIRE_HEADER 2       /* version + type */
#define GK_WIRE_STEPS_MAX 64   /* steps in one INPUT, CONFIRMED or HASH */
#define GK_WIRE_GENRE_MAX 32   /* genre name, bytes: [a-z0-9_-] */
#define GK_WIRE_CONFIG_MAX 768 /* genre config JSON text, bytes */
#define GK_WIRE_TEXT_MAX 120   /* error text, printable ASCII */
#define GK_WIRE_CODE_LEN 16    /* room code: base32 text [A-Z2-7] */
#define GK_WIRE_TOKEN_BYTES 148      /* a connect token (= GK_TOKEN_BYTES) */
#define GK_WIRE_STEP_ASAP UINT64_MAX /* REMOVE_PLAYER: the earliest step */
/* steps on the wire are below this */
#define GK_WIRE_STEP_LIMIT (UINT64_C(1) << 48)

/* Rejoin, spectators and snapshots (gk_net_wire_snap.c). */
#define GK_WIRE_SNAP_MSG_MAP(X)                                                \
  X(SNAPSHOT_BEGIN, 40, 1)                                                     \
  X(SNAPSHOT_CHUNK, 41, 1)                                                     \
  X(REJOIN_ROOM, 42, 1)                                                        \
  X(SPECTATE, 43, 1)                                                           \
  X(RECONNECT_SECRET, 44, 1)

/* Desync forensics (gk_net_wire_state.c). */
#define GK_WIRE_STATE_MSG_MAP(X)                                               \
  X(STATE_REQUEST, 45, 1)                                                      \
  X(STATE_BEGIN, 46, 1)                                                        \
  X(STATE_CHUNK, 47, 1)

/* A fleet of servers (src/fleet): a room request for a code another node
 * holds (gk_net_wire.c); quick play (gk_net_wire_quick.c); players'
 * names (gk_net_wire_name.c). */
#define GK_WIRE_FLEET_MSG_MAP(X)                                               \
  X(REDIRECT, 56, 1)                                                           \
  X(QUICK_PLAY, 57, 1)                                                         \
  X(QUICK_JOINED, 58, 1)                                                       \
  X(NAME, 59, 1)                                                               \
  X(ROSTER, 60, 1)                                                             \
  X(NEXT_ROOM, 61, 1)

/* The message types: X(NAME, id, reliable). `reliable` says how the
 * sender should send it: 1 on the reliable channel, 0 unreliably with
 * redundancy. Each type has its row in the codec table of
 * gk_net_wire_table.c (its codec and size limits; a test checks). */
#define GK_WIRE_MSG_MAP(X)                                                     \
  X(INPUT, 1, 0)                                                               \
  X(CONFIRMED, 2, 0)                                                           \
  X(HASH, 3, 1)                                                                \
  X(STALL, 4, 1)                                                               \
  X(DESYNC, 5, 1)                                                              \
  X(MATCH_END, 6, 1)                                                           \
  X(REMOVE_PLAYER, 7, 1)                                                       \
  X(END_MATCH, 8, 1)                                                           \
  X(CREATE_ROOM, 16, 1)                                                        \
  X(ROOM_CREATED, 17, 1)                                                       \
  X(JOIN_ROOM, 18, 1)                                                          \
  X(JOINED, 19, 1)                                                             \
  X(START_MATCH, 20, 1)                                                        \
  X(MATCH_START, 21, 1)                                                        \
  X(SHUTDOWN, 22, 1)                                                           \
  X(ERROR, 23, 1)                                                              \
  GK_WIRE_SNAP_MSG_MAP(X)                                                      \
  GK_WIRE_STATE_MSG_MAP(X)                                                     \
  GK_WIRE_FLEET_MSG_MAP(X)

typedef enum gk_wire_type {
#define GK__WIRE_ENUM(name, id, rel) GK_MSG_##name = (id),
  GK_WIRE_MSG_MAP(GK__WIRE_ENUM)
#undef GK__WIRE_ENUM
} gk_wire_type;

/* Why a match ended (MATCH_END.reason, END_MATCH.reason). */
enum {
  GK_WIRE_END_GAME_OVER = 1, /* the genre said so */
  GK_WIRE_END_HOST = 2,      /* the creator ended it */
  GK_WIRE_END_ALL_LEFT = 3,  /* every player left */
  GK_WIRE_END_SHUTDOWN = 4,  /* the server is shutting down */
  GK_WIRE_END_DESYNC = 5,    /* desync policy "end" */
  GK_WIRE_END_REMOVED = 6,   /* to a removed player: you are out */
  GK_WIRE_END_REASON_MAX = 6
};

/* JOIN_ROOM.role: what the joiner asks to be. */
enum { GK_WIRE_ROLE_PLAYER = 0, GK_WIRE_ROLE_SPECTATOR = 1 };

typedef struct gk_wire_input {
  uint8_t slot;
  uint8_t input_size; /* 1..GK_INPUT_SIZE_MAX */
  uint8_t count;      /* 0..GK_WIRE_STEPS_MAX */
  uint64_t ack;
  uint64_t first;         /* first + count <= GK_WIRE_STEP_LIMIT */
  const uint8_t *records; /* count * input_size bytes; points into the
                             decoded datagram (or the caller's buffer for
                             encode) */
  /* Optional hash report: 0..GK_WIRE_STEPS_MAX hashes (0: none), for
   * steps hash_first.. (hash_first + hash_count <= GK_WIRE_STEP_LIMIT). */
  uint8_t hash_count;
  uint64_t hash_first;
  const uint8_t *hashes; /* hash_count little-endian u64 (read them with
                            gk_wire_input_hash); points into the decoded
                            datagram, or the caller's buffer for encode
                            (may be NULL when hash_count is 0) */
} gk_wire_input;

/* One confirmed step on the wire: 8 + players * input_size bytes. */
#define GK_WIRE_STEP_BYTES(players, input_size)                                \
  (8u + (size_t)(players) * (size_t)(input_size))

typedef struct gk_wire_confirmed {
  uint8_t players;    /* 1..GK_PLAYERS_MAX */
  uint8_t input_size; /* 1..GK_INPUT_SIZE_MAX */
  uint8_t count;      /* 0..GK_WIRE_STEPS_MAX, and the total fits */
  uint64_t ack;
  uint64_t hash_ack; /* < GK_WIRE_STEP_LIMIT */
  uint64_t first;
  const uint8_t *steps; /* count packed steps in wire layout (see
                           gk_wire_step_pack / gk_wire_step_get) */
} gk_wire_confirmed;

typedef struct gk_wire_hash {
  uint64_t first;
  uint8_t count; /* 1..GK_WIRE_STEPS_MAX */
  uint64_t hashes[GK_WIRE_STEPS_MAX];
} gk_wire_hash;

typedef struct gk_wire_stall {
  uint64_t step;
  uint32_t awaited; /* mask of awaited players, non-zero */
  uint32_t waited_ms;
} gk_wire_stall;

typedef struct gk_wire_desync {
  uint64_t step;
  uint8_t player;
  uint64_t host_hash;
  uint64_t peer_hash;
} gk_wire_desync;

typedef struct gk_wire_match_end {
  uint64_t step;
  uint8_t reason; /* GK_WIRE_END_* */
} gk_wire_match_end;

typedef struct gk_wire_remove {
  uint8_t slot;
  uint64_t step; /* < GK_WIRE_STEP_LIMIT, or GK_WIRE_STEP_ASAP */
} gk_wire_remove;

typedef struct gk_wire_create_room {
  uint8_t max_players; /* 1..GK_PLAYERS_MAX */
  uint8_t input_delay;
  char genre[GK_WIRE_GENRE_MAX + 1];   /* NUL-terminated, non-empty */
  char config[GK_WIRE_CONFIG_MAX + 1]; /* NUL-terminated JSON text (may be
                                          empty: defaults) */
  uint8_t token_len;                   /* 0 or GK_WIRE_TOKEN_BYTES */
  uint8_t token[GK_WIRE_TOKEN_BYTES];  /* copied on decode */
} gk_wire_create_room;

typedef struct gk_wire_room_code {
  char code[GK_WIRE_CODE_LEN + 1];    /* NUL-terminated base32 text */
  uint8_t slot;                       /* ROOM_CREATED only */
  uint8_t role;                       /* JOIN_ROOM only: GK_WIRE_ROLE_* */
  uint8_t token_len;                  /* JOIN_ROOM, SPECTATE: 0 or
                                         GK_WIRE_TOKEN_BYTES */
  uint8_t token[GK_WIRE_TOKEN_BYTES]; /* JOIN_ROOM, SPECTATE; copied on
                                         decode */
} gk_wire_room_code;

typedef struct gk_wire_joined {
  uint8_t slot;
  uint8_t players;
} gk_wire_joined;

typedef struct gk_wire_match_start {
  uint64_t seed;
  uint8_t players;      /* 1..GK_PLAYERS_MAX */
  uint8_t slot;         /* < players */
  uint32_t active_mask; /* non-zero, only bits below players */
  uint64_t first_step;  /* < GK_WIRE_STEP_LIMIT */
  uint8_t input_delay;
  uint8_t lead;
  gk_ratio step_seconds; /* num, den non-zero */
  char genre[GK_WIRE_GENRE_MAX + 1];
  char config[GK_WIRE_CONFIG_MAX + 1];
} gk_wire_match_start;

#define GK_WIRE_SECRET_LEN 16 /* reconnect secret: 128 random bits */
/* the largest snapshot on the wire (SNAPSHOT_BEGIN.total) */
#define GK_WIRE_SNAP_TOTAL_MAX (UINT32_C(64) << 20)
#define GK_WIRE_SNAP_CHUNK_MAX 1024u /* = GK_CHUNK_BYTES_MAX */

/* SNAPSHOT_BEGIN.kind */
enum {
  GK_WIRE_SNAP_REJOIN = 1,   /* a player takes its slot back */
  GK_WIRE_SNAP_SPECTATE = 2, /* a spectator starts watching */
  GK_WIRE_SNAP_REFRESH = 3,  /* a spectator fell too far behind */
  GK_WIRE_SNAP_JOIN = 4      /* a player joins a running match */
};

typedef struct gk_wire_secret {
  uint8_t slot;
  uint8_t secret[GK_WIRE_SECRET_LEN];
} gk_wire_secret;

typedef struct gk_wire_rejoin {
  char code[GK_WIRE_CODE_LEN + 1]; /* NUL-terminated base32 text */
  uint8_t slot;                    /* < GK_PLAYERS_MAX */
  uint8_t secret[GK_WIRE_SECRET_LEN];
  uint8_t token_len;                  /* 0 or GK_WIRE_TOKEN_BYTES */
  uint8_t token[GK_WIRE_TOKEN_BYTES]; /* copied on decode */
} gk_wire_rejoin;

typedef struct gk_wire_snap_begin {
  uint32_t id;
  uint8_t kind; /* GK_WIRE_SNAP_* */
  char code[GK_WIRE_CODE_LEN + 1];
  uint64_t step; /* < GK_WIRE_STEP_LIMIT */
  uint64_t hash;
  uint64_t next_input; /* < GK_WIRE_STEP_LIMIT */
  uint32_t active_mask;
  uint32_t total;      /* <= GK_WIRE_SNAP_TOTAL_MAX */
  uint16_t chunk_size; /* 1..GK_WIRE_SNAP_CHUNK_MAX */
  uint32_t chunks;     /* exactly what total and chunk_size need */
  uint64_t sum;
} gk_wire_snap_begin;

typedef struct gk_wire_snap_chunk {
  uint32_t id;
  uint32_t index;
  uint32_t crc;
  uint16_t len;         /* <= GK_WIRE_SNAP_CHUNK_MAX */
  const uint8_t *bytes; /* points into the datagram (or the caller's
                           buffer for encode) */
} gk_wire_snap_chunk;

typedef struct gk_wire_state_request {
  uint32_t id;
  uint64_t step; /* < GK_WIRE_STEP_LIMIT */
} gk_wire_state_request;

typedef struct gk_wire_state_begin {
  int16_t status; /* 0, or a negative GK_E* code (cannot) */
  uint32_t id;
  uint64_t step;     /* < GK_WIRE_STEP_LIMIT */
  uint64_t from, to; /* from <= to < GK_WIRE_STEP_LIMIT, or both 0 */
  uint64_t hash;
  uint32_t total;      /* <= GK_WIRE_SNAP_TOTAL_MAX */
  uint16_t chunk_size; /* 1..GK_WIRE_SNAP_CHUNK_MAX (0 with a status) */
  uint32_t chunks;     /* exactly what total and chunk_size need */
  uint64_t sum;
} gk_wire_state_begin;

/* REDIRECT: the room is on another node of the fleet; ask it there. */
#define GK_WIRE_ADDR_MAX 127 /* enet, ws_url: printable ASCII, no space */
typedef struct gk_wire_redirect {
  char code[GK_WIRE_CODE_LEN + 1];   /* the code asked for */
  char enet[GK_WIRE_ADDR_MAX + 1];   /* "HOST:PORT", non-empty */
  char ws_url[GK_WIRE_ADDR_MAX + 1]; /* "ws://..." / "wss://...", or "" */
} gk_wire_redirect;

/* QUICK_PLAY: the room wanted, and the code a REDIRECT named. */
#define GK_WIRE_CODE_ANY "2222222222222222" /* QUICK_PLAY: any room */
typedef struct gk_wire_quick_play {
  char code[GK_WIRE_CODE_LEN + 1]; /* GK_WIRE_CODE_ANY, or a room's */
  gk_wire_create_room room;        /* what a new room would be */
} gk_wire_quick_play;

/* QUICK_JOINED: the room's code, the receiver's slot, players seated. */
typedef struct gk_wire_quick_joined {
  char code[GK_WIRE_CODE_LEN + 1];
  uint8_t slot;
  uint8_t players;
} gk_wire_quick_joined;

/* NAME and ROSTER: names for people, never for a simulation. */
#define GK_WIRE_NAME_MAX 24 /* bytes of UTF-8 */
typedef struct gk_wire_roster {
  uint8_t count;                                   /* 0..GK_PLAYERS_MAX */
  uint8_t slot[GK_PLAYERS_MAX];                    /* ascending */
  char name[GK_PLAYERS_MAX][GK_WIRE_NAME_MAX + 1]; /* NUL-terminated */
} gk_wire_roster;
/* 1 if name (n bytes) is a name: 1..GK_WIRE_NAME_MAX bytes of valid UTF-8
 * without control characters (below 0x20, 0x7f). */
int gk_wire_name_valid(const char *name, size_t n);

typedef struct gk_wire_error {
  int16_t code; /* a negative GK_E* code */
  char text[GK_WIRE_TEXT_MAX + 1];
} gk_wire_error;

/* A decoded (or to-be-encoded) message. Which member is valid depends on
 * `type`. START_MATCH has no body. */
typedef struct gk_wire_msg {
  gk_wire_type type;
  union {
    gk_wire_input input;
    gk_wire_confirmed confirmed;
    gk_wire_hash hash;
    gk_wire_stall stall;
    gk_wire_desync desync;
    gk_wire_match_end match_end;
    gk_wire_remove remove;
    uint8_t end_reason; /* END_MATCH */
    gk_wire_create_room create_room;
    gk_wire_room_code room; /* ROOM_CREATED, JOIN_ROOM */
    gk_wire_joined joined;
    gk_wire_match_start match_start;
    uint32_t shutdown_grace_ms; /* SHUTDOWN */
    gk_wire_error error;
    gk_wire_secret secret;             /* RECONNECT_SECRET */
    gk_wire_rejoin rejoin;             /* REJOIN_ROOM */
    gk_wire_snap_begin snap_begin;     /* SNAPSHOT_BEGIN */
    gk_wire_snap_chunk snap_chunk;     /* SNAPSHOT_CHUNK, STATE_CHUNK */
    gk_wire_state_request state_req;   /* STATE_REQUEST */
    gk_wire_state_begin state_begin;   /* STATE_BEGIN */
    gk_wire_redirect redirect;         /* REDIRECT */
    gk_wire_quick_play quick;          /* QUICK_PLAY */
    gk_wire_quick_joined quick_joined; /* QUICK_JOINED */
    char name[GK_WIRE_NAME_MAX + 1];   /* NAME */
    gk_wire_roster roster;             /* ROSTER */
    /* SPECTATE uses `room` (code and token), NEXT_ROOM its code */
  } u;
} gk_wire_msg;

/* Encodes `m` into out (cap bytes) and stores the length in *len. Checks
 * the same limits decode checks (so every encoded message decodes), and
 * GK_ETOOBIG if the result would exceed GK_WIRE_MAX or cap. */
int gk_wire_encode(const gk_wire_msg *m, uint8_t *out, size_t cap, size_t *len);

/* Decodes one datagram. Pointers in *m (input records, confirmed steps)
 * point into `bytes`, which must outlive their use; strings are copied. */
int gk_wire_decode(const uint8_t *bytes, size_t len, gk_wire_msg *m);

/* "INPUT", "CONFIRMED", ...; "UNKNOWN" for anything else. */
const char *gk_wire_type_name(int type);
/* "game_over", "host", "all_left", "shutdown", "desync", "removed" for a
 * GK_WIRE_END_* reason; "none" for anything else (0 included). */
const char *gk_wire_end_name(int reason);
/* 1 if the type is sent reliably (see GK_WIRE_MSG_MAP), 0 if not or unknown. */
int gk_wire_type_reliable(int type);

/* How many confirmed steps of this shape fit in one CONFIRMED message
 * (at most GK_WIRE_STEPS_MAX). 0 if players or input_size is out of range. */
uint32_t gk_wire_confirmed_fit(uint32_t players, uint32_t input_size);
/* How many records fit in one INPUT message (at most GK_WIRE_STEPS_MAX). */
uint32_t gk_wire_input_fit(uint32_t input_size);
/* How many hashes fit in one INPUT message next to `count` records of
 * `input_size` bytes (at most GK_WIRE_STEPS_MAX; 0 if none fits or the
 * arguments are out of range). */
uint32_t gk_wire_input_hash_fit(uint32_t input_size, uint32_t count);
/* Hash i (< m->hash_count) of an INPUT's hash report. */
uint64_t gk_wire_input_hash(const gk_wire_input *m, uint32_t i);

/* Packs one step (mask, flags, players * input_size record bytes) in wire
 * layout at dst, which must hold GK_WIRE_STEP_BYTES(players, input_size). */
void gk_wire_step_pack(uint8_t *dst, uint32_t active_mask, uint32_t flags,
                       const uint8_t *records, uint32_t players,
                       uint32_t input_size);
/* Views step i (< c->count) of a decoded CONFIRMED as a gk_step_input
 * (step = first + i; `inputs` points into the datagram). */
void gk_wire_step_get(const gk_wire_confirmed *c, uint32_t i,
                      gk_step_input *out);

/* An ENet address "HOST:PORT" (a REDIRECT's `enet`; the last ':' splits
 * it, so "[V6]:PORT" keeps its brackets): the host into host (cap bytes,
 * NUL-terminated) and the port (1..65535) into *port. Returns 0, or
 * GK_EINVAL (NULL, no ':', an empty host, a port that is not 1..65535 in
 * digits) or GK_ETOOBIG (the host does not fit cap). */
int gk_wire_addr_split(const char *addr, char *host, size_t cap,
                       uint16_t *port);

/* A room code is GK_WIRE_CODE_LEN characters of [A-Z2-7]. Returns 1 if
 * `code` is one (NUL-terminated, exact length). */
int gk_wire_code_valid(const char *code);

/* Short codes: what people read and type is GK_WIRE_SHORT_MIN..MAX
 * characters of GK_WIRE_SHORT_ALPHABET (no look-alikes: no I, L, O, S, Z,
 * 2, 5, 0, 1, 8); on the wire (the 16-byte code field) it is followed by
 * '2's, which the short alphabet lacks. A 16-character code of an older
 * server fills the field as before. shown(wire) strips the trailing '2's
 * when what is left is a short code (else it is the whole 16); pad(shown)
 * puts them back, so pad(shown(c)) == c for every valid code. */
#define GK_WIRE_SHORT_ALPHABET "ABCDEFGHJKMNPQRTUVWXY3467"
#define GK_WIRE_SHORT_MIN 4
#define GK_WIRE_SHORT_MAX 8
/* `in` (a short code, or 16 characters of [A-Z2-7]; either case)
 * into its wire form in out (non-NULL). 0, or GK_EINVAL. */
int gk_wire_code_pad(const char *in, char out[GK_WIRE_CODE_LEN + 1]);
/* The code as people see it: the wire code without its '2' padding, in
 * out (non-NULL). 0, or GK_EINVAL (not a valid wire code). */
int gk_wire_code_shown(const char *code, char out[GK_WIRE_CODE_LEN + 1]);

/* Chunk `index` of transfer `id`, a blob of `total` bytes cut in
 * chunk_size pieces (gk_net_chunk.h), as a message of `type`
 * (GK_MSG_SNAPSHOT_CHUNK or GK_MSG_STATE_CHUNK) with its checksum:
 * out->u.snap_chunk.bytes points into `bytes`, which the caller keeps
 * until the message is encoded. out and bytes must be non-NULL. */
void gk_wire_chunk_msg(gk_wire_msg *out, gk_wire_type type, uint32_t id,
                       const uint8_t *bytes, uint64_t total,
                       uint32_t chunk_size, uint32_t index);

#endif
