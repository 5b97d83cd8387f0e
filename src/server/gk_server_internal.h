/* gk_server_internal.h: what the files of gk-server share with each other,
 * and nothing anyone else may use (the public face is gk_server.h).
 *
 * The server is split by responsibility, the way ioquake3 splits
 * code/server around server.h:
 *   gk_server.c        lifecycle: start, the step and sweep timers,
 *                      shutdown, freeing the server (gk_server.h's API);
 *   gk_server_route.c  connections: receive (decode once, route), connect,
 *                      disconnect, strikes, sending to connections;
 *   gk_server_room.c   rooms: create, join, start, lobby end, option merge,
 *                      discarding and freeing a room;
 *   gk_server_match.c  a room's match: its session and the session's
 *                      callbacks, ticking, the end, draining, finishing
 *                      the replay on the thread pool.
 *
 * Naming: every function, type and constant declared here is prefixed
 * sv_ / SV_ (internal, not API: the gk_server_ prefix is the public
 * one). Each is defined in the file named above its group.
 *
 * Ownership: the server owns its room table and connection table; a room
 * is owned by its slot in s->rooms from the moment it is published until
 * sv_room_free. Rooms never reach into other rooms. Arguments are never
 * NULL unless a comment says so: the callers are these four files.
 */
#ifndef GK_SERVER_INTERNAL_H
#define GK_SERVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_net_delay.h"
#include "gk_net_session.h"
#include "gk_net_transport.h"
#include "gk_replay.h"
#include "gk_server.h"

#define SV_NO_ROOM UINT32_MAX
#define SV_NO_CONN UINT32_MAX
#define SV_SWEEP_MS 1000u /* lobby and idle-connection sweep period */
#define SV_LINGER_MS                                                           \
  150u /* after the last room closes on shutdown, let                          \
          the final MATCH_END/SHUTDOWN packets leave */
#define SV_DRAIN_MS                                                            \
  1000u /* longest a room stays after its match ended,                         \
           to repeat the last confirmed steps until                            \
           every player has acknowledged them */

#define SV_DELAYS_MAX 32 /* input delay changes kept per match for logs */

typedef enum sv_room_state {
  SV_ROOM_LOBBY = 1,
  SV_ROOM_PLAYING = 2,
  SV_ROOM_DRAINING = 3 /* the match ended; the session still repeats the
                          last confirmed steps (gk_net_session_drained) */
} sv_room_state;

typedef struct sv_room {
  gk_server *srv;
  uint32_t index;
  sv_room_state state;
  char code[GK_WIRE_CODE_LEN + 1];
  const gk_server_genre *genre;
  void *cfg;     /* genre config, owned (free) */
  int cfg_ready; /* cfg was built: it needs sim->config_free */
  char options[GK_WIRE_CONFIG_MAX + 1]; /* effective options (JSON text) */
  uint64_t seed;
  uint32_t max_players;
  uint32_t input_delay;
  uint32_t conn[GK_PLAYERS_MAX]; /* connection per slot, or SV_NO_CONN */
  uint32_t nslots;               /* slots handed out */
  uint64_t created_ms;
  /* playing */
  gk_net_session session;
  int session_open;
  uint64_t start_ns;
  gk_replay_writer replay;
  int replay_open;
  char replay_path[GK_SERVER_PATH_MAX + 64];
  int end_pending; /* the session's loop ran the last step */
  int end_reason;
  int desync_end; /* policy "end" asked for the end */
  /* draining */
  uint64_t drain_until_ms;
  /* input delay (gk_server_delay.c) */
  int delay_auto;                  /* chosen from round trips */
  uint32_t rtt_ms[GK_PLAYERS_MAX]; /* at MATCH_START, per slot */
  uint32_t rtt_var_ms[GK_PLAYERS_MAX];
  gk_delay_ctl delay_ctl;
  uint64_t delay_next_ms;              /* next observation */
  uint64_t delay_steps[SV_DELAYS_MAX]; /* delays in force: from step ... */
  uint32_t delay_vals[SV_DELAYS_MAX];  /* ... this delay (switch steps) */
  uint32_t ndelays;
  /* counters */
  uint64_t drops;
  uint64_t strikes;
  uint64_t desyncs;
} sv_room;

typedef struct sv_conn {
  int used;
  uint32_t room; /* index or SV_NO_ROOM */
  uint32_t slot;
  uint32_t strikes;
  uint64_t since_ms; /* connected, or left its last room */
} sv_conn;

struct gk_server {
  uv_loop_t *loop;
  const gk_server_config *cfg;
  gk_server_log *log;
  gk_server_stats stats;
  gk_net_transport transport;
  int transport_open;
  sv_room **rooms; /* max_rooms slots, NULL = free */
  uint32_t nrooms;
  sv_conn *conns; /* max_peers entries, by transport peer id */
  uv_timer_t step_timer;
  uv_timer_t sweep_timer;
  uv_timer_t grace_timer;
  uv_signal_t sig_term, sig_int;
  int signals;
  int handles; /* open uv handles (close is asynchronous) */
  uint64_t t0; /* uv_hrtime of deadline 0 */
  uint64_t k;  /* deadlines passed */
  uint64_t step_ns;
  uint32_t jobs; /* replay finishes running on the thread pool */
  uint64_t packets_out, drop_oversize; /* transport totals, kept at close */
  int stopped_logged;
  int shutting_down;
  int lingering;
  int forced;
  int closing;
  uint8_t buf[GK_WIRE_MAX];
};

/* The loop's time, in ms: one value for a whole callback, so two reads
 * in one callback never disagree (a fresh clock read after `now` made
 * `now - since_ms` wrap round and disconnected a connection that had just
 * left its room). Deadlines of steps use uv_hrtime, not this. */
static inline uint64_t sv_now_ms(const gk_server *s) {
  return uv_now(s->loop);
}

/* The room a connection is in, or NULL. */
static inline sv_room *sv_conn_room(const gk_server *s, const sv_conn *c) {
  return c->room != SV_NO_ROOM ? s->rooms[c->room] : NULL;
}

/* --- gk_server.c: lifecycle ---------------------------------------------- */

/* Frees the server once it is closing, its handles are closed and no
 * replay job runs; otherwise does nothing. */
void sv_maybe_free(gk_server *s);
/* Logs the "stopped" record with the server totals, once. */
void sv_log_stopped(gk_server *s);

/* --- gk_server_route.c: connections -------------------------------------- */

/* The transport callbacks (receive, connect, disconnect) with ctx = s. */
gk_net_transport_callbacks sv_route_callbacks(gk_server *s);
/* Encodes and sends one message to a connection (reliable or not by its
 * type). Returns 0 or the encoder's / transport's code. */
int sv_send(gk_server *s, uint32_t peer, const gk_wire_msg *m);
/* ERROR(code, text) to a connection; text is cut to printable ASCII and
 * GK_WIRE_TEXT_MAX characters (NULL: empty). */
void sv_send_error(gk_server *s, uint32_t peer, int code, const char *text);
/* The same message to every connection still in a room's slots. */
void sv_send_room(gk_server *s, const sv_room *r, const gk_wire_msg *m);
/* The same ERROR (as sv_send_error) to every connection in a room. */
void sv_send_room_error(gk_server *s, const sv_room *r, int code,
                        const char *text);
/* One bad message from `peer`: counted and logged; at the configured
 * limit the connection is disconnected at once (its disconnect callback
 * may run before this returns: check s->conns[peer].used after). */
void sv_strike(gk_server *s, uint32_t peer, const char *why, int code);

/* --- gk_server_room.c: rooms --------------------------------------------- */

/* Mask of a room's slots that still have a connection. */
uint32_t sv_room_connected(const sv_room *r);
/* Unpublishes and frees a room (session, replay writer, genre config);
 * its connections stay, in no room. */
void sv_room_free(gk_server *s, sv_room *r);
/* Ends what is running (sv_match_end) and frees the room at once
 * (shutdown, errors, a closed lobby). */
void sv_room_finalise(gk_server *s, sv_room *r, int reason);
/* Room control from a connection (route.c calls these). */
void sv_on_create(gk_server *s, uint32_t peer, const gk_wire_msg *m);
void sv_on_join(gk_server *s, uint32_t peer, const gk_wire_msg *m);
void sv_on_start(gk_server *s, uint32_t peer);
void sv_on_lobby_end(gk_server *s, uint32_t peer);

/* --- gk_server_match.c: matches ------------------------------------------ */

/* Opens a lobby room's session (the match starts now) and, if replays are
 * on, its replay writer (a writer that cannot open is logged; the match
 * is then played unrecorded). Returns 0, or the session's code with a
 * message in err; on failure the room is unchanged. */
int sv_match_begin(gk_server *s, sv_room *r, char *err, size_t errlen);
/* After any call into a room's session: act on what its callbacks
 * flagged (they never change the room table themselves). */
void sv_match_after(gk_server *s, sv_room *r);
/* One step-timer tick of a playing or draining room: ticks its session;
 * ends the match, or frees the room once drained. May free `r`. */
void sv_match_tick(gk_server *s, sv_room *r, uint64_t now);
/* The match is over (or is being cut short): finishes the replay, logs
 * the room's counters, and starts draining. The room stays. */
void sv_match_end(gk_server *s, sv_room *r, int reason);

/* --- gk_server_delay.c: the input delay --------------------------------- */

/* Before the session opens: with "auto", sets r->input_delay from the
 * connected players' round trips (kept in r->rtt_ms) and logs nothing
 * (match_start does). Starts the mid-match controller. */
void sv_delay_choose(gk_server *s, sv_room *r);
/* The replay header's "lockstep" record (caller deletes), or NULL. */
cJSON *sv_delay_record(const gk_server *s, const sv_room *r);
/* From the room tick: observes round trips, changes the delay (hysteresis
 * in gk_net_delay.h) and logs `delay_change`. */
void sv_delay_tick(gk_server *s, sv_room *r);
/* Inside an open log record: the delay fields (input_delay_auto, rtt_ms
 * at start; or input_delays and steps_per_s at the end). */
void sv_delay_log_start(gk_server *s, const sv_room *r);
void sv_delay_log_end(gk_server *s, const sv_room *r);

#endif
