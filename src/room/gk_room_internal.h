/* gk_room_internal.h: what the files of gk_room share with each other,
 * and nothing anyone else may use (the public face is gk_room.h).
 *
 * One file per feature of a room:
 *   gk_room.c          the environment's wrappers (send, strike, the
 *                      clock), create, free, the public calls' entry;
 *   gk_room_lobby.c    CREATE_ROOM, JOIN_ROOM, START_MATCH, a lobby's end;
 *   gk_room_match.c    the match: its session and the session's
 *                      callbacks, ticking, the end, draining;
 *   gk_room_delay.c    the input delay (gk_room__delay);
 *   gk_room_replay.c   the recording (gk_room__rec): deferred writes
 *                      flushed by jobs, disk faults, recovering leftovers;
 *   gk_room_rejoin.c   held slots, reconnect secrets, REJOIN_ROOM;
 *   gk_room_snapshot.c the referee's state to a rejoiner, a late joiner or
 *                      a spectator (the one snapshot sender);
 *   gk_room_spectate.c spectators (gk_room__spec);
 *   gk_room_join.c     late join;
 *   gk_room_desync.c   desync examination (gk_room__dsy);
 *   gk_room_bots.c     seats the server plays itself (gk_room__bots).
 *
 * Naming: gk_room_ is the public prefix (gk_room.h); every function, type
 * and constant declared here is gk_room__ / GK_ROOM__ (internal, as
 * libuv's uv__).
 *
 * Time: every public call sets h->now_ms first; the room's code reads it
 * through gk_room__now, one value for the whole call.
 *
 * Parts: what one feature keeps per room is a part owned by that
 * feature's file (gk_room__delay, gk_room__rejoin, gk_room__rec,
 * gk_room__spec, gk_room__dsy, gk_room__bots): its struct is defined in
 * its owner's .c file only, the room holds a pointer, and every other file
 * calls the owner's functions declared here. A part every room has
 * (delay, rejoin) is allocated with the room and freed with it; the others
 * come and go with what they hold (NULL when there is none).
 */
#ifndef GK_ROOM_INTERNAL_H
#define GK_ROOM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gk_net_session.h"
#include "gk_replay.h"
#include "gk_room.h"
#include "gk_server_random.h"

struct gk_room {
  gk_room_host *host;
  gk_room_tag tag; /* the shell's */
  gk_room_state state;
  char code[GK_WIRE_CODE_LEN + 1];
  const gk_server_genre *genre;
  void *cfg;     /* genre config, owned (free) */
  int cfg_ready; /* cfg was built: it needs sim->config_free */
  char options[GK_WIRE_CONFIG_MAX + 1]; /* effective options (JSON text) */
  uint64_t seed;
  uint32_t max_players;
  uint32_t input_delay;
  int predict;        /* lockstep.prediction in force (gk_room_delay.c) */
  uint32_t lead;      /* MATCH_START's lead: the prediction window W when
                         predicting (if larger than lockstep.lead) */
  int listed;         /* options.room.listed: in the public room list */
  int quick;          /* made by QUICK_PLAY: starts once its seats are taken */
  int next_told;      /* its host sent NEXT_ROOM (gk_room_next.c) */
  uint64_t quick_key; /* QUICK_PLAY: a hash of the room asked for */
  uint32_t conn[GK_PLAYERS_MAX]; /* connection per slot, or NO_CONN */
  uint32_t nslots;               /* slots handed out */
  char names[GK_PLAYERS_MAX][GK_WIRE_NAME_MAX + 1]; /* NAME; "" none */
  uint8_t name_changes[GK_PLAYERS_MAX];             /* NAMEs taken */
  uint64_t created_ms;
  /* token mode: each slot's client id at MATCH_START (a rejoin's token
   * must carry the same one: the shell's admission asks) */
  uint64_t client_id[GK_PLAYERS_MAX];
  uint32_t client_set; /* slots whose client id is known */
  /* playing */
  gk_net_session session;
  int session_open;
  uint64_t start_ns;        /* env.clock_ns at the start */
  struct gk_room__rec *rec; /* the recording (gk_room_replay.c), or NULL */
  char replay_path[GK_SERVER_PATH_MAX + 64];
  int end_pending; /* the session's loop ran the last step */
  int end_reason;
  int desync_end; /* policy "end" asked for the end */
  /* draining */
  uint64_t drain_until_ms;
  struct gk_room__delay *delay; /* the input delay (gk_room_delay.c) */
  /* counters */
  uint64_t drops;
  uint64_t strikes;
  uint64_t desyncs;
  struct gk_room__rejoin *rejoin; /* secrets, held slots */
  struct gk_room__spec *spec;     /* spectators and their step ring, or NULL */
  struct gk_room__dsy *dsy;       /* desyncs being examined, or NULL */
  struct gk_room__bots *bots;     /* seats the server plays, or NULL */
};

/* The time of the call being handled (ms). */
static inline uint64_t gk_room__now(const gk_room_host *h) {
  return h->now_ms;
}
/* The environment's monotonic clock (ns), for timings only. */
static inline uint64_t gk_room__clock_ns(const gk_room_host *h) {
  return h->env.clock_ns(h->env.user);
}
/* The connection with that id, or NULL if it is gone. */
static inline gk_room_conn *gk_room__conn_get(const gk_room_host *h,
                                              uint32_t id) {
  return h->env.conn(h->env.user, id);
}

/* --- gk_room.c: the environment, creating and freeing -------------------- */

/* Encodes and sends one message to a connection (reliable or not by its
 * type). 0, the encoder's or the link's code, GK_ENOTFOUND if gone. */
int gk_room__send(gk_room_host *h, uint32_t peer, const gk_wire_msg *m);
/* One encoded message to a connection. */
int gk_room__send_bytes(gk_room_host *h, uint32_t peer, const uint8_t *bytes,
                        size_t len, int reliable);
/* ERROR(code, text) to a connection; text is cut to printable ASCII and
 * GK_WIRE_TEXT_MAX characters (NULL: empty). Over the connection's reply
 * cap (admission: env.reply_cap) the text is left out whole (never cut:
 * the client words the code), or nothing is sent if even the code does
 * not fit. */
void gk_room__send_error(gk_room_host *h, uint32_t peer, int code,
                         const char *text);
/* The same message to every connection still in a room's slots. */
void gk_room__send_room(gk_room_host *h, const gk_room *r,
                        const gk_wire_msg *m);
/* The same ERROR (as gk_room__send_error) to every connection in a room. */
void gk_room__send_room_error(gk_room_host *h, const gk_room *r, int code,
                              const char *text);
/* env.strike: counted; at the limit the connection is closed at once
 * (gk_room_conn_down may run before this returns: check
 * gk_room__conn_get(h, peer) after). */
void gk_room__strike(gk_room_host *h, uint32_t peer, const char *why, int code);
/* env.close. */
void gk_room__conn_close(gk_room_host *h, uint32_t peer, int at_once);
/* env.rtt: a connection's round trip and its variance, ms (0: unknown). */
uint32_t gk_room__conn_rtt(const gk_room_host *h, uint32_t peer);
uint32_t gk_room__conn_rtt_var(const gk_room_host *h, uint32_t peer);
/* env.admit. */
void gk_room__admit(gk_room_host *h, uint32_t peer);
/* Seats a connection in a room's slot (or as spectator index `slot`). */
void gk_room__seat(gk_room_conn *c, gk_room *r, uint32_t slot, int spectator);
/* gk_room_next.c: `peer` leaves room r, which closes: with a match run
 * (and no NEXT_ROOM sent yet), it keeps r's code, as its host if `host`. */
void gk_room__remember(gk_room_host *h, const gk_room *r, uint32_t peer,
                       int host);
/* Lets a connection go from room r (if it is in it): in no room, since
 * now. */
void gk_room__unseat(gk_room_host *h, gk_room *r, uint32_t peer);

/* Mask of a room's slots that still have a connection. */
uint32_t gk_room__connected(const gk_room *r);
/* The lowest lobby slot without a connection (a seat a player left), else
 * nslots: where the next player sits. */
uint32_t gk_room__free_slot(const gk_room *r);
/* Takes a room out of the shell's table (env.gone) and frees it; its
 * connections stay, in no room. */
void gk_room__free(gk_room_host *h, gk_room *r);
/* Ends what is running (gk_room__match_end) and frees the room. */
void gk_room__finalise(gk_room_host *h, gk_room *r, int reason);
/* Closes a lobby: MATCH_END(host) to its players, then frees it. */
void gk_room__end_lobby(gk_room_host *h, gk_room *r);
/* A slot's player got its place in the match (MATCH_START, a late join):
 * in token mode its connection's client id becomes the slot's. */
void gk_room__bind_slot(gk_room_host *h, gk_room *r, uint32_t slot);

/* --- gk_room_lobby.c: the lobby ------------------------------------------ */

/* Builds the room a CREATE_ROOM asks for (gk_room_create). */
gk_room *gk_room__on_create(gk_room_host *h, uint32_t peer,
                            const gk_wire_msg *m, uint32_t players_cap);
void gk_room__on_join(gk_room_host *h, gk_room *r, uint32_t peer,
                      const gk_wire_msg *m);
void gk_room__on_start(gk_room_host *h, gk_room *r, uint32_t peer);
/* Starts a lobby's match now (checks done): MATCH_START to each player.
 * A failure is said to `peer` (GK_ROOM_NO_CONN: to the room). */
void gk_room__start_now(gk_room_host *h, gk_room *r, uint32_t peer);
/* Builds the room a CREATE_ROOM body asks for, not yet in the table,
 * with `code` (NULL: a new one, as CREATE_ROOM's): *out is the caller's
 * on success, and nothing is left over on failure. */
int gk_room__build(gk_room_host *h, const gk_room_conn *c,
                   const gk_wire_create_room *cr, const char *code,
                   uint32_t players_cap, gk_room **out, char *err,
                   size_t errlen);
/* A room that could not be built (gk_room__build's rc and err): counted,
 * logged as `event` (code: the room's code, or NULL), and said to peer. */
void gk_room__build_refused(gk_room_host *h, uint32_t peer, const char *event,
                            const char *code, int rc, const char *err);
/* Seats the creator of a built room in slot 0: a lobby. */
void gk_room__open(gk_room_host *h, gk_room *r, gk_room_conn *c);
/* A connection whose match is over (its room draining) may go on to
 * another room: it leaves the old one first. */
void gk_room__leave_drained(gk_room_host *h, gk_room_conn *c);
/* gk_room_names.c: the ROSTER (if any slot is named) to one connection,
 * a newcomer; a slot's name gone (a seat freed in a lobby). */
void gk_room__roster_to(gk_room_host *h, const gk_room *r, uint32_t peer);
void gk_room__name_clear(gk_room_host *h, gk_room *r, uint32_t slot);
/* gk_room_quick.c: options.room.rematch, the code of the room a quick
 * play's players come from (it only sets the request apart: players of
 * one ended room asking again share a new room). 0 or GK_EINVAL. */
int gk_room__rematch_check(const cJSON *room, char *err, size_t errlen);
/* gk_room_quick.c: a quick-play room's lobby lost a player (`slot`,
 * already cleared): 1 if the room handled it (it stays, or closed when
 * empty), 0 if it is no quick-play room. */
int gk_room__quick_left(gk_room_host *h, gk_room *r, uint32_t slot);
/* gk_room_lobby.c: a guest (not slot 0) left a lobby (`slot`, already
 * cleared): its name goes, the seat is the next joiner's, and trailing
 * empty seats are no longer counted. */
void gk_room__lobby_left(gk_room_host *h, gk_room *r, uint32_t slot);
void gk_room__on_lobby_end(gk_room_host *h, gk_room *r, uint32_t peer);
/* MATCH_START of a playing room for `slot`. */
void gk_room__match_start_msg(const gk_room_host *h, const gk_room *r,
                              uint32_t slot, gk_wire_msg *out);
/* Frees a room that is in no table: its parts, config and itself. */
void gk_room__discard(gk_room *r);

/* --- gk_room_bots.c: seats the server plays (room.bots) -----------------
 * A room whose CREATE_ROOM options hold {"room": {"bots": N}} gets N seats
 * beyond its max_players that the server fills with the genre's built-in
 * bot at the start; their records enter the session as INPUT from their
 * slots (docs/PROTOCOL.md, "Server bots"). */

typedef struct gk_room__bots gk_room__bots;

/* Checks the `room` object taken out of a CREATE_ROOM's options (NULL:
 * none) for the room being built (r->genre and r->max_players set;
 * grant: the players the creator's token grants, GK_PLAYERS_MAX in open
 * mode; seats_asked: the CREATE_ROOM named max_players, else the people
 * get what the bots leave of the genre's cap) and gives the room its part
 * (r->bots) when it asks for bots. Returns 0, or GK_EINVAL / GK_ENOTFOUND
 * / GK_ERANGE (the object, a genre without a bot, too many seats),
 * GK_EGRANT (more seats than the creator's token grants), GK_ENOMEM, with
 * a message naming options.room.*. */
int gk_room__bots_configure(gk_room *r, uint32_t grant, int seats_asked,
                            const cJSON *room, char *err, size_t errlen);
/* Frees a room's part (NULL: nothing). */
void gk_room__bots_free(gk_room__bots *b);
/* room.bots (0 for NULL). */
uint32_t gk_room__bots_seats(const gk_room__bots *b);
/* The bots' slots in the match (0 for NULL and before the start). */
uint32_t gk_room__bots_mask(const gk_room__bots *b);
/* Records the bots made so far (0 for NULL). */
uint64_t gk_room__bots_records(const gk_room__bots *b);
/* At START_MATCH, before the session opens: the slots the bots will take
 * (right after the r->nslots handed out), and the bots seeded for a match
 * of `players` (0, or the seeding's code with a message; nothing to undo).
 * gk_room__bots_seat then gives them the slots once the session is open. */
uint32_t gk_room__bots_plan(const gk_room *r);
int gk_room__bots_prepare(gk_room *r, uint32_t players, char *err,
                          size_t errlen);
void gk_room__bots_seat(gk_room_host *h, gk_room *r, uint32_t mask);
/* Before every tick of a playing room's session and after every call into
 * it: each bot's records for the steps a player may sample now go in (and
 * the match ends if nobody but bots is left). */
void gk_room__bots_feed(gk_room_host *h, gk_room *r);

/* --- gk_room_match.c: matches ------------------------------------------ */

/* Opens a lobby room's session (the match starts now) and, if replays are
 * on, its replay writer (a writer that cannot open is logged; the match
 * is then played unrecorded). Returns 0, or the session's code with a
 * message in err; on failure the room is unchanged. */
int gk_room__match_begin(gk_room_host *h, gk_room *r, char *err, size_t errlen);
/* After any call into a room's session: act on what its callbacks
 * flagged (they never change the room table themselves). */
void gk_room__match_after(gk_room_host *h, gk_room *r);
/* One step-timer tick of a playing or draining room: ticks its session;
 * ends the match, or frees the room once drained. May free `r`. */
void gk_room__match_tick(gk_room_host *h, gk_room *r, uint64_t now);
/* The match is over (or is being cut short): finishes the replay, logs
 * the room's counters, and starts draining. The room stays. */
void gk_room__match_end(gk_room_host *h, gk_room *r, int reason);

/* --- gk_room_replay.c: recordings ----------------------------------------
 */

typedef struct gk_room__rec gk_room__rec;

/* Starts the room's recording (r->rec); a failure is counted and logged
 * (once per disk fault) and the match is played unrecorded. */
void gk_room__replay_open(gk_room_host *h, gk_room *r);
/* Appends a step to the room's recording (in memory), if it has one. */
void gk_room__replay_step(gk_room_host *h, gk_room *r, const gk_step_input *in,
                          uint64_t hash);
/* Every step tick of a playing room: hands the blocks so far to a flush
 * job when replays.flush_ms has passed and no job holds the recording. */
void gk_room__replay_tick(gk_room_host *h, gk_room *r, uint64_t now);
/* The match ended: the recording leaves the room (r->rec = NULL) and is
 * finished (footer, fsync, rename) on the thread pool. */
void gk_room__replay_finish(gk_room_host *h, gk_room *r);
/* The room goes without an end: its recording is removed. */
void gk_room__replay_drop(gk_room_host *h, gk_room *r);
/* The steps of the room's recording already in its .tmp into *disk_steps,
 * and a flush job of the rest started now if no job holds it (a desync
 * bundle cuts its replay from the .tmp). Returns 1 while the room has a
 * recording that did not fail, 0 if not (*disk_steps is then 0). */
int gk_room__replay_flush_now(gk_room_host *h, gk_room *r,
                              uint64_t *disk_steps);
/* At start: recovers every .gkr.tmp in the replay folder, or moves it
 * aside as .gkr.damaged; never over an existing file (a taken name gets
 * .recovered.gkr or .damaged.N instead); one log line each. */
void gk_room__replay_recover_dir(gk_room_host *h);
/* The room's recording's header JSON text (its .tmp's header block, byte
 * for byte) and lockstep record, both owned by the recording, made on the
 * loop when it opened: a desync bundle's job reads the .tmp against the
 * text and writes a header built from the record, without cJSON. Returns
 * 1 (both set; the record may be NULL) while the room has a recording,
 * else 0 (both NULL). */
int gk_room__replay_header(const gk_room *r, const char **text,
                           const cJSON **lockstep);

/* --- gk_room_delay.c: the input delay --------------------------------- */

typedef struct gk_room__delay gk_room__delay;

/* A room's input delay part (r->delay), with the delay chosen from round
 * trips at the start if auto_on. NULL if out of memory. */
gk_room__delay *gk_room__delay_new(int auto_on);
/* Frees a room's part (NULL: nothing). */
void gk_room__delay_free(gk_room__delay *d);

/* At CREATE_ROOM: lockstep.prediction for the room, from the options'
 * `room` object (room.prediction: bool, room.prediction_window: 1..60;
 * NULL: none), else the server's config, else the genre's default
 * (gk_sim.prediction); sets r->predict and r->lead. 0 or a code with a
 * message naming the key. */
int gk_room__predict_configure(const gk_room_host *h, gk_room *r,
                               const cJSON *room, char *err, size_t errlen);
/* The round trip (ms) a room's predicted heads cover with the least
 * delay: lockstep.prediction.rtt_ms, at most the window's lead steps (a
 * head never runs further past confirmed + delay); 0 without prediction. */
uint32_t gk_room__predict_free_ms(const gk_room_host *h, const gk_room *r);
/* 1 if `key` of the `room` object is one gk_room__predict_configure
 * reads. */
int gk_room__predict_key(const char *key);
/* At CREATE_ROOM: options.room.listed (a bool; absent: false, a private
 * room) into r->listed. 0 or GK_EINVAL with a message naming the key. */
int gk_room__listed_configure(gk_room *r, const cJSON *room, char *err,
                              size_t errlen);

/* Before the session opens: with "auto", sets r->input_delay from the
 * connected players' round trips (kept in r->delay) and logs nothing
 * (match_start does). Starts the mid-match controller. */
void gk_room__delay_choose(gk_room_host *h, gk_room *r);
/* The replay header's "lockstep" record (caller deletes), or NULL. */
cJSON *gk_room__delay_record(const gk_room_host *h, const gk_room *r);
/* From the room tick: observes round trips, changes the delay (hysteresis
 * in gk_net_delay.h) and logs `delay_change`. */
void gk_room__delay_tick(gk_room_host *h, gk_room *r);
/* Inside an open log record: the delay fields (input_delay_auto, rtt_ms
 * at start; or input_delays and steps_per_s at the end). */
void gk_room__delay_log_start(gk_room_host *h, const gk_room *r);
void gk_room__delay_log_end(gk_room_host *h, const gk_room *r);

/* --- gk_room_rejoin.c: reconnect, rejoin, spectators ------------------
 * A player whose connection drops mid-match keeps its slot for
 * reconnect.hold_ms (the match stalls on it, or plays on with its input
 * neutral: reconnect.while_away); a new connection that presents the room
 * code, the slot and the secret the slot got in RECONNECT_SECRET takes it
 * back and starts from a snapshot of the referee's state. Spectators get
 * a snapshot and then the confirmed steps spectator.delay_steps behind. */

typedef struct gk_room__rejoin gk_room__rejoin;
typedef struct gk_room__spec gk_room__spec;

/* A room's rejoin part (r->rejoin: reconnect secrets, held slots). NULL
 * if out of memory. */
gk_room__rejoin *gk_room__rejoin_new(void);
/* Frees a room's part (NULL: nothing). */
void gk_room__rejoin_free(gk_room__rejoin *j);

/* After MATCH_START: a fresh secret per slot (gk_room_random), sent to
 * each player in RECONNECT_SECRET. */
void gk_room__rejoin_secrets(gk_room_host *h, gk_room *r);
/* The same for one slot (a late joiner's). */
void gk_room__rejoin_secret(gk_room_host *h, gk_room *r, uint32_t slot);
/* The log record of a player who got a snapshot (`event`:
 * player_rejoined, player_joined_late): slot, snapshot_step,
 * snapshot_bytes, next_input, and one more number `key`. */
void gk_room__log_snapshot_player(gk_room_host *h, const gk_room *r,
                                  const char *event, uint32_t slot,
                                  uint64_t step, uint64_t next_input,
                                  uint64_t bytes, const char *key,
                                  uint64_t value);
/* A player's connection dropped mid-match: 1 if its slot is held (the
 * caller does not remove it), 0 if not (reconnect off, or the end). */
int gk_room__rejoin_hold(gk_room_host *h, gk_room *r, uint32_t slot);
/* Every tick of a playing room, before its session's: held slots (expiry
 * -> removal; neutral input) and the spectators' stream. */
void gk_room__rejoin_tick(gk_room_host *h, gk_room *r, uint64_t now);
/* Every tick: each spectator's stream (gk_room_spectate.c). */
void gk_room__spectators_tick(gk_room_host *h, gk_room *r, uint64_t now);
/* REJOIN_ROOM and SPECTATE from a connection (route.c). */
void gk_room__on_rejoin(gk_room_host *h, gk_room *r, uint32_t peer,
                        const gk_wire_msg *m);
void gk_room__on_spectate(gk_room_host *h, gk_room *r, uint32_t peer,
                          const gk_wire_msg *m);
/* A match message (INPUT: acknowledgement and hashes) from a spectator. */
void gk_room__spectator_msg(gk_room_host *h, gk_room *r, uint32_t peer,
                            const gk_wire_msg *m);
/* A spectator's connection is gone. */
void gk_room__spectator_leave(gk_room_host *h, gk_room *r, uint32_t peer);
/* The match ended: MATCH_END to the spectators too (they are sent the
 * rest of the steps while the room drains). */
void gk_room__spectators_end(gk_room_host *h, gk_room *r, uint64_t step,
                             int reason);
/* A STALL or DESYNC notice the room's players got (or a NEXT_ROOM), to
 * its spectators too; returns how many it went to. */
uint32_t gk_room__spectators_notice(gk_room_host *h, gk_room *r,
                                    const gk_wire_msg *m);
/* Spectators watching the room now. */
uint32_t gk_room__spectators_count(const gk_room *r);
/* The room goes: its spectators are in no room, the ring is freed. */
void gk_room__spectators_free(gk_room_host *h, gk_room *r);
/* After the referee ran a step: kept for the spectators (session_step). */
void gk_room__spectators_step(gk_room *r, const gk_step_input *in);
/* Sends the referee's state after its last step to `peer` over the
 * reliable channel: SNAPSHOT_BEGIN, then bounded, checksummed chunks
 * (gk_net_chunk.h). *bytes (may be NULL) gets the state's size. Returns 0,
 * GK_ENOMEM, GK_ETOOBIG or the send's code. */
int gk_room__snapshot_send(gk_room_host *h, gk_room *r, uint32_t peer, int kind,
                           uint64_t next_input, uint64_t *bytes);
/* --- gk_room_desync.c: desync forensics ---------------------------------
 * A player's first desync at step K: the server asks that peer for its
 * canonical state after K (STATE_REQUEST), regenerates the referee's from
 * the session's history, diffs both by field path, logs one
 * `desync_report` line and writes the bundle <desync.dir>/<room>-<K>-<slot>/
 * (replay.gkr cut at K, referee.state, peer.state, diff.txt, diff.json)
 * on the thread pool. */

typedef struct gk_room__dsy gk_room__dsy;

/* From session_desync. Returns 1 if the examination started (with policy
 * "end" the match then ends once the report is written: r->desync_end),
 * 0 if it could not (out of memory: the caller applies the policy now). */
int gk_room__desync_begin(gk_room_host *h, gk_room *r, const gk_net_desync *d);
/* STATE_BEGIN or STATE_CHUNK (decode_rc: gk_wire_decode's result; m is
 * read only when it is 0) of `len` bytes from a connection in room r. */
void gk_room__desync_on_msg(gk_room_host *h, gk_room *r, uint32_t peer,
                            int decode_rc, const gk_wire_msg *m, size_t len);
/* Every tick of a playing or draining room: answers that timed out, and
 * bundles waiting for the recording to reach the disk. */
void gk_room__desync_tick(gk_room_host *h, gk_room *r, uint64_t now);
/* The room goes (gk_room__free, before its config is freed): what it was
 * examining finishes without it. */
void gk_room__desync_room_free(gk_room_host *h, gk_room *r);

/* --- gk_room_join.c: late join -----------------------------------------
 * JOIN_ROOM on a running match whose genre takes players after the start
 * (gk_sim.late_join): the next fresh slot joins at the next unconfirmed
 * step J (gk_net_session_join), and the joiner gets JOINED, MATCH_START,
 * RECONNECT_SECRET and a snapshot (kind JOIN) as a rejoiner does. */

/* Why a running room cannot take `c` as a late joiner now (0: it can);
 * *why gets the text. */
int gk_room__join_late_check(const gk_room_host *h, const gk_room *r,
                             const char **why);
/* Joins `peer` to the running room `r` (gk_room__join_late_check said 0), or
 * refuses it with an ERROR if the session cannot take it now. */
void gk_room__join_late(gk_room_host *h, uint32_t peer, gk_room *r);

#endif
