/* gk_room.h: one lockstep room, sans-I/O (the library gk_room).
 *
 * A room is a lobby (CREATE_ROOM, JOIN_ROOM, START_MATCH), then a match:
 * its gk_net_session (the relay and referee), the input delay, server
 * bots, held slots and rejoins, spectators, late joiners, desync
 * examination and the recording. This library is all of that and none of
 * the I/O: like gk_net_session and gk_net_peer, it is given time and
 * decoded messages as arguments and hands bytes back through its
 * environment (gk_room_env). It has no socket, no timer, no clock of its
 * own and no thread: tests/room drives it with time set by hand, and
 * tests/room/check_room_symbols.sh proves that it names no uv_, enet_,
 * MHD_, curl_ or wslay_ symbol.
 *
 * The shell (src/server) owns what is I/O: the links, the connection
 * table, the room table and its codes, admission, the step timer and the
 * thread pool. It calls in:
 *   gk_room_create      a CREATE_ROOM; the new room is the shell's to
 *                       publish in its table (gk_room_tag);
 *   gk_room_join, gk_room_rejoin, gk_room_spectate
 *                       JOIN_ROOM, REJOIN_ROOM, SPECTATE for the room the
 *                       shell found by the request's code (NULL: none);
 *   gk_room_start, gk_room_lobby_end
 *                       START_MATCH, and END_MATCH in a lobby;
 *   gk_room_handle      a match message or a desync answer from a
 *                       connection in a running room (decoded once by
 *                       the shell, or not: decode_rc);
 *   gk_room_conn_down   a connection in the room is gone;
 *   gk_room_tick        the step timer, for every room in the table;
 *   gk_room_finalise, gk_room_end_lobby, gk_room_close_lobby,
 *   gk_room_end_match, gk_room_remove
 *                       shutdown, the sweep and operations.
 * A room leaves the shell's table through env.gone, always from inside one
 * of these calls, and frees itself right after: after any call, the shell
 * asks its own table whether the room is still there.
 *
 * Threads: every function here runs on the shell's loop thread. The jobs
 * a room hands to env.queue (a recording's flush and finish, a desync
 * bundle) run their `work` on a worker thread, touching only what the job
 * holds, and their `done` back on the loop thread.
 *
 * Arguments are never NULL unless a comment says so.
 */
#ifndef GK_ROOM_H
#define GK_ROOM_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"
#include "gk_room_stats.h"
#include "gk_server_config.h"
#include "gk_server_log.h"

typedef struct gk_room gk_room;
typedef struct gk_room_host gk_room_host;
typedef struct gk_room_job gk_room_job;

#define GK_ROOM_NO_CONN UINT32_MAX
#define GK_ROOM_DRAIN_MS                                                       \
  1000u /* longest a room stays after its match ended, to repeat the last      \
           confirmed steps until every player has acknowledged them */

typedef enum gk_room_state {
  GK_ROOM_LOBBY = 1,
  GK_ROOM_PLAYING = 2,
  GK_ROOM_DRAINING = 3 /* the match ended; the session still repeats the
                          last confirmed steps (gk_net_session_drained) */
} gk_room_state;

/* A connection as the rooms see it. The shell keeps one per connection
 * (embedded first in its own record) and lends it through env.conn; a
 * room sets room, slot and spectator when it seats the connection and
 * clears room when it lets it go; the shell reads them to route. */
typedef struct gk_room_conn {
  uint32_t id;       /* the connection id (the shell's) */
  gk_room *room;     /* the room it is in, or NULL */
  uint32_t slot;     /* its slot, or its spectator index */
  int spectator;     /* watching `room` */
  uint64_t since_ms; /* connected, or left its last room */
  /* The last room it was in whose match ran, kept when that room closed
   * (gk_room_next): its code ("" for none) and 1 if it was its host (slot
   * 0) and has not sent NEXT_ROOM for it yet. The shell zeroes both when
   * the connection opens. */
  char last_code[GK_WIRE_CODE_LEN + 1];
  int last_host;
} gk_room_conn;

/* A job for a worker thread: `work` runs there and touches only the
 * job's own data; `done` runs on the loop thread afterwards. */
struct gk_room_job {
  void (*work)(gk_room_job *job);
  void (*done)(gk_room_job *job);
};

/* What a room asks of the outside. Every callback must be non-NULL. */
typedef struct gk_room_env {
  void *user; /* the first argument of every callback */
  /* The connection with that id, or NULL if it is gone. */
  gk_room_conn *(*conn)(void *user, uint32_t id);
  /* Queues one encoded message to a connection, reliable and ordered or
   * not. 0, GK_ENOTFOUND (gone) or the link's code. */
  int (*send)(void *user, uint32_t id, const uint8_t *bytes, size_t len,
              int reliable);
  /* Closes a connection (at once: no notice, and gk_room_conn_down may
   * run before this returns). */
  void (*close)(void *user, uint32_t id, int at_once);
  /* A connection's smoothed round trip and its variance, ms (0: unknown
   * or gone). */
  void (*rtt)(void *user, uint32_t id, uint32_t *rtt_ms, uint32_t *var_ms);
  /* The most bytes a reply to the connection may have now (admission:
   * unlimited, SIZE_MAX, once it has a place somewhere or when its
   * transport verified its address). An ERROR over it has no text. */
  size_t (*reply_cap)(void *user, uint32_t id);
  /* One bad message from the connection: the shell counts it and, at its
   * limit, closes the connection at once (check env.conn after). */
  void (*strike)(void *user, uint32_t id, const char *why, int code);
  /* The connection has a place in a room: admission is complete. */
  void (*admit)(void *user, uint32_t id);
  /* Token mode: the client id the connection's token bound it to; 1 with
   * *out set, or 0 (none: open mode). */
  int (*client_id)(void *user, uint32_t id, uint64_t *out);
  /* Whether a room code is in use (a new room's code must not be). */
  int (*code_taken)(void *user, const char *code);
  /* The room leaves the shell's table; it frees itself right after. */
  void (*gone)(void *user, gk_room *room);
  /* May be NULL. The room's session ran `step`. */
  void (*step)(void *user, const gk_room *room, uint64_t step);
  /* May be NULL. The room's session confirmed `step`, `late_ms` after its
   * place on the schedule (0: on time, and for a stall's step; see
   * gk_net_session_config): the confirm latency (metrics). */
  void (*confirmed)(void *user, const gk_room *room, uint64_t step,
                    uint64_t late_ms);
  /* Hands a job to a worker thread: 0, or non-zero if it cannot (the room
   * then runs the job itself, at once). */
  int (*queue)(void *user, gk_room_job *job);
  /* A monotonic clock in ns, for the rooms' own timings (how long their
   * work took, the steps per second they log); never for a decision. */
  uint64_t (*clock_ns)(void *user);
  /* The calendar time, seconds since 1970 (UTC): for names only (a
   * recording's file name). */
  uint64_t (*wall_s)(void *user);
  /* A new room's code, unique beyond this shell (a fleet: reserved in its
   * directory), in wire form into out: 0, or GK_ENOTFOUND to let the room
   * library make a short one, unique among this shell's rooms through
   * code_taken. May be NULL (the same as GK_ENOTFOUND). */
  int (*new_code)(void *user, char out[GK_WIRE_CODE_LEN + 1]);
  /* Calls fn(ctx, c) for every open connection, in any order; fn sends
   * at most (NEXT_ROOM's recipients: gk_room_next). */
  void (*each_conn)(void *user, void (*fn)(void *ctx, gk_room_conn *c),
                    void *ctx);
} gk_room_env;

/* What every room of one shell shares. The shell fills env, cfg and log
 * (gk_room_host_init) and keeps nrooms, shutting_down and draining
 * current; the rooms write the rest. */
struct gk_room_host {
  gk_room_env env;
  const gk_server_config *cfg; /* owned by the shell, outlives the host */
  gk_server_log *log;          /* likewise */
  gk_room_stats stats;         /* counters of every room, since start */
  uint32_t nrooms;             /* shell: rooms in its table */
  int shutting_down;           /* shell: no new room, no join */
  int draining;                /* shell: POST /drain, no late join */
  uint32_t spectators;         /* watching now, in every room */
  int replay_fault;            /* a replay write failed; none since */
  uint64_t replay_fault_lost;  /* recordings lost in this fault */
  uint64_t desync_ids;         /* desync examinations started */
  uint64_t now_ms;             /* the time of the call being handled */
};

/* Zeroes the host and sets env, cfg and log (every callback of env
 * non-NULL but those a comment lets be NULL). */
void gk_room_host_init(gk_room_host *h, const gk_room_env *env,
                       const gk_server_config *cfg, gk_server_log *log);

/* The two words the shell keeps in each room for its table. */
typedef struct gk_room_tag {
  uint32_t index;   /* its slot in the shell's table */
  uint32_t live_at; /* its place in the shell's list of rooms in use */
} gk_room_tag;
gk_room_tag *gk_room_tag_of(gk_room *r);

/* --- calls from the shell ------------------------------------------------ */

/* CREATE_ROOM from connection `conn` (its gk_room_conn: in no room but a
 * draining one): builds the room, seats the creator in slot 0 and sends
 * ROOM_CREATED. `players_cap` is what the creator's token grants
 * (GK_PLAYERS_MAX in open mode). Returns the new room, which the shell
 * must put in its table at once (gk_room_tag), or NULL after sending the
 * refusal (counted and logged). The shell checks nrooms < max_rooms
 * itself only through h->nrooms. */
gk_room *gk_room_create(gk_room_host *h, uint32_t conn, const gk_wire_msg *m,
                        uint32_t players_cap, uint64_t now_ms);
/* JOIN_ROOM, REJOIN_ROOM, SPECTATE from `conn` for `r`, the room with the
 * request's code (NULL: none; the request is refused). */
void gk_room_join(gk_room_host *h, gk_room *r, uint32_t conn,
                  const gk_wire_msg *m, uint64_t now_ms);
void gk_room_rejoin(gk_room_host *h, gk_room *r, uint32_t conn,
                    const gk_wire_msg *m, uint64_t now_ms);
void gk_room_spectate(gk_room_host *h, gk_room *r, uint32_t conn,
                      const gk_wire_msg *m, uint64_t now_ms);
/* QUICK_PLAY from `conn` (in no room but a draining one): seats it in
 * `r`, a quick-play lobby the request fits (gk_room_quick_fits), or, with
 * r NULL, in slot 0 of a new quick-play room made from the request's
 * CREATE_ROOM body, with `code` (NULL: a new one, as CREATE_ROOM's; a
 * fleet's directory may have reserved one). Sends QUICK_JOINED; once the
 * room's seats for people are all taken its match starts (MATCH_START).
 * Returns the room, which the shell must put in its table at once if it
 * is new, or NULL after sending the refusal (GK_EFULL: r does not fit).
 * A quick-play room is listed (public), nobody may START_MATCH it, and
 * a seat left in its lobby is free again (docs/PROTOCOL.md). */
gk_room *gk_room_quick(gk_room_host *h, gk_room *r, uint32_t conn,
                       const gk_wire_msg *m, const char *code,
                       uint32_t players_cap, uint64_t now_ms);
/* 1 if `r` is a quick-play lobby with a free seat that QUICK_PLAY `m`
 * fits: the same genre, max_players and options text. */
int gk_room_quick_fits(const gk_room *r, const gk_wire_msg *m);
/* The fuller of `best` (or NULL) and `r` that QUICK_PLAY `m` fits (the
 * policy: pack rooms), or best if r does not fit. A shell folds its
 * rooms through it to choose one. */
gk_room *gk_room_quick_best(gk_room *best, gk_room *r, const gk_wire_msg *m);
/* Free seats for people in a quick-play lobby (0 for any other room). */
uint32_t gk_room_quick_free(const gk_room *r);
/* What a QUICK_PLAY asks for, as one number (a hash of the genre,
 * max_players and the options text): rooms that fit it share it. */
uint64_t gk_room_quick_key(const gk_wire_create_room *cr);
/* NAME from `conn`, seated in `r` (NULL: in no room): the slot's name
 * (docs/PROTOCOL.md "Names"); every player and spectator of the room gets
 * the new ROSTER. Refused (ERROR) for a connection that is not a seated
 * player (GK_ESTATE) or has renamed itself too often (GK_ELIMIT). */
void gk_room_name(gk_room_host *h, gk_room *r, uint32_t conn,
                  const gk_wire_msg *m, uint64_t now_ms);
/* A slot's name, or NULL if it has none. */
const char *gk_room_slot_name(const gk_room *r, uint32_t slot);
/* START_MATCH and, in a lobby, END_MATCH from `conn`, seated in `r`
 * (NULL: in no room; the request is refused). */
void gk_room_start(gk_room_host *h, gk_room *r, uint32_t conn, uint64_t now_ms);
/* NEXT_ROOM from `conn` (Play again; docs/PROTOCOL.md): the host of a room
 * whose match ended, still on that room's connection (the room draining,
 * or closed since: gk_room_conn.last_code), names the room it made next.
 * Its players and spectators still connected, and in no other room since,
 * get NEXT_ROOM with that code; once per room. Anyone else: GK_EPERM and
 * a strike. */
void gk_room_next(gk_room_host *h, uint32_t conn, const gk_wire_msg *m,
                  uint64_t now_ms);
void gk_room_lobby_end(gk_room_host *h, gk_room *r, uint32_t conn,
                       uint64_t now_ms);
/* ERROR(code, text) to any connection, as a room sends it: text cut to
 * printable ASCII, GK_WIRE_TEXT_MAX and the connection's reply cap (or
 * not sent when even the code does not fit; counted). */
void gk_room_send_error(gk_room_host *h, uint32_t conn, int code,
                        const char *text);
/* A match message (INPUT, HASH, REMOVE_PLAYER, END_MATCH) or a desync
 * answer (STATE_BEGIN, STATE_CHUNK) of `len` bytes from `conn`, seated in
 * `r`, a room whose match runs or has ended. `type` is the type byte of
 * its header; decode_rc is gk_wire_decode's result (m is read only when
 * it is 0). */
void gk_room_handle(gk_room *r, uint32_t conn, int type, int decode_rc,
                    const gk_wire_msg *m, size_t len, uint64_t now_ms);
/* `conn`, seated in `r` at `slot` (or as a spectator), is gone; the
 * shell has already forgotten it. */
void gk_room_conn_down(gk_room *r, uint32_t conn, uint32_t slot, int spectator,
                       uint64_t now_ms);
/* One step-timer tick: the session, held slots, spectators, the
 * recording, the delay, the end, the drain. May free the room. */
void gk_room_tick(gk_room *r, uint64_t now_ms);
/* Ends what is running and frees the room (shutdown, a closed lobby). */
void gk_room_finalise(gk_room *r, int reason, uint64_t now_ms);
/* Closes a lobby: MATCH_END(host) to its players, then frees it. */
void gk_room_end_lobby(gk_room *r, uint64_t now_ms);
/* A playing room's match ends at its next step (shutdown:
 * GK_WIRE_END_SHUTDOWN; the host, through operations: GK_WIRE_END_HOST).
 * 0, GK_ECLOSED if it is not running or its last step ran, or the
 * session's code (GK_ESTATE: an end is already scheduled). */
int gk_room_end_match(gk_room *r, int reason, uint64_t now_ms);
/* Operations remove a player: the session removes `slot` as soon as it
 * can; *at gets the step. 0, GK_ERANGE (no such slot), GK_ESTATE (the
 * match has not started), GK_ECLOSED (it has ended) or the session's
 * code (GK_EPERM: already out). */
int gk_room_remove(gk_room *r, uint32_t slot, uint64_t *at, uint64_t now_ms);
/* SHUTDOWN (grace_ms) to every player of the room. */
void gk_room_send_shutdown(gk_room *r, uint32_t grace_ms);
/* Sends ERROR(code, text) to a lobby's players and closes it (a lobby
 * that timed out, a drain). */
void gk_room_close_lobby(gk_room *r, int code, const char *text, int reason,
                         uint64_t now_ms);
/* At start, before any room: recovers every .gkr.tmp in the replay
 * folder, or moves it aside as .gkr.damaged; never over an existing file;
 * one log line each. Synchronous disk work: the shell calls it before its
 * loop runs. */
void gk_room_recover_replays(gk_room_host *h);
/* A strike was counted against a connection in the room. */
void gk_room_note_strike(gk_room *r);
/* A message the shell dropped for the room (it did not decode, or a
 * type no client sends). */
void gk_room_note_drop(gk_room *r);

/* --- reading a room ------------------------------------------------------ */

/* What operations read of a room (admin, metrics, the status page, the
 * shell's sweep): a copy, valid until the next call into the room. */
typedef struct gk_room_view {
  const char *code;    /* GK_WIRE_CODE_LEN characters, NUL-terminated */
  gk_room_state state; /* GK_ROOM_* */
  int end_pending;     /* the last step ran; the end is being handled */
  const char *genre;   /* the genre's name */
  const char *options; /* effective options (JSON text) */
  const char *replay;  /* the recording's path, or NULL */
  uint32_t max_players, input_delay; /* input_delay: at the start */
  uint32_t nslots;                   /* slots handed out */
  uint32_t next_slot; /* a joiner's: in the lobby the lowest a guest left, or
                         nslots; nslots once playing (late joins) */
  uint32_t connected; /* mask of slots with a connection */
  uint32_t conn[GK_PLAYERS_MAX]; /* each slot's connection or NO_CONN */
  uint32_t bot_seats, bot_mask;
  uint64_t bot_records; /* records the bots made (one per bot per step) */
  int listed;           /* options.room.listed: in the public room list */
  int quick;            /* made by QUICK_PLAY (gk_room_quick) */
  uint64_t quick_key;   /* ... what it was asked for (gk_room_quick_key) */
  uint32_t spectators;
  uint64_t created_ms;
  uint64_t steps; /* steps the room's session ran */
#define GK_ROOM_VIEW_FIGURE(name, kind, help) uint64_t name;
  GK_ROOM_SCHEDULE(GK_ROOM_VIEW_FIGURE) /* its session's */
#undef GK_ROOM_VIEW_FIGURE
  uint64_t desyncs, drops, strikes;
  uint64_t packets_in, packets_out; /* its session's */
  uint32_t active_mask; /* slots in the match now (the lobby: connected) */
} gk_room_view;
void gk_room_view_of(const gk_room *r, gk_room_view *out);
/* The room's code (GK_WIRE_CODE_LEN characters, NUL-terminated). */
const char *gk_room_code(const gk_room *r);
gk_room_state gk_room_state_of(const gk_room *r);
/* A token-mode slot's client id (bound at MATCH_START or a late join):
 * 1 with *out set, 0 if unknown. */
int gk_room_slot_client(const gk_room *r, uint32_t slot, uint64_t *out);

#endif
