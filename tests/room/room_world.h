/* room_world.h: a world for gk_room with time set by hand.
 *
 * The environment a shell gives its rooms (gk_room_env), kept in memory:
 *   - connections are records (gk_room_conn first) with an outbox of every
 *     message a room sent them, bytes kept, decoded on demand;
 *   - the clock is the test's (w->now_ms; env.clock_ns is the same time);
 *   - env.queue holds jobs until the test runs them (rw_run_jobs), or runs
 *     them at once (w->queue_now);
 *   - env.gone, strikes, admits and closes are recorded, env.confirmed's
 *     confirm latencies summed;
 *   - a room table by code, as the shell keeps (rw_route finds rooms).
 * A connection may have a player: the real peer engine (gk_net_peer,
 * sans-I/O) fed with the bytes the room sent it; what it sends back waits
 * in the connection's upbox until rw_pump delivers it, routed as the
 * shell routes a datagram (gk_server_route.c). rw_advance moves the clock
 * one ms at a time: peers' deadlines, the rooms' tick, delivery.
 */
#ifndef ROOM_WORLD_H
#define ROOM_WORLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gk_net_peer.h"
#include "gk_room.h"

#define RW_CONNS 16
#define RW_ROOMS 8
#define RW_JOBS 64
#define RW_ID(i) (100u + (uint32_t)(i)) /* connection ids: not slots */

typedef struct rw_msg {
  uint8_t *bytes;
  size_t len;
  int reliable;
  uint64_t steps_at; /* env.step calls when it was sent (the room's head) */
} rw_msg;

typedef struct rw_box {
  rw_msg *m;
  uint32_t n, cap;
} rw_box;

typedef struct rw_world rw_world;

typedef struct rw_conn {
  gk_room_conn rc; /* first: what env.conn lends */
  rw_world *w;
  int used;                /* connected (env.conn finds it) */
  uint32_t rtt_ms, var_ms; /* what env.rtt says */
  rw_box out;              /* every message the room sent it */
  uint32_t fed;            /* out.m[0..fed) went to its player */
  uint32_t strikes, admits, closes;
  int closed_at_once;
  /* its player */
  gk_net_peer peer;
  int has_peer;
  int mute;           /* what its player sends is lost */
  uint64_t drop_up;   /* ... or only the types with their bit (1 << type) */
  rw_box up;          /* what its player sent, not yet delivered */
  uint64_t snapshots; /* snapshots its player adopted */
  int snapshot_rc;    /* the last snapshot callback's rc */
} rw_conn;

struct rw_world {
  gk_server_config cfg; /* the test may change it before a room starts */
  gk_server_log log;
  FILE *log_file; /* every log line (tmpfile) */
  gk_room_host host;
  rw_conn conns[RW_CONNS];
  gk_room *rooms[RW_ROOMS]; /* the table */
  uint32_t nrooms;
  uint64_t now_ms;
  int queue_now;  /* env.queue runs a job at once */
  int token_mode; /* env.client_id: connection id + 1000 */
  gk_room_job *jobs[RW_JOBS];
  uint32_t njobs, jobs_run;
  gk_room *gone[RW_ROOMS]; /* rooms that left the table, in order */
  uint32_t ngone;
  uint64_t steps; /* env.step calls */
  /* env.confirmed: calls, the late_ms summed, the largest */
  uint64_t confirms, confirm_ms, confirm_ms_max;
  uint64_t lost; /* env.send to a connection that is not there */
  char dir[64];  /* a temporary folder (replays, desyncs) */
};

/* A world at now_ms 1000: survivors and the other registered genres,
 * step_hz 50, input delay 2 (not auto), lead 4, replays off (dir in a
 * temp folder), desync bundles in <dir>/desyncs, no hold, log at debug. */
rw_world *rw_new(void);
/* Ends the rooms left (gk_room_finalise), runs the jobs left, frees all
 * and removes the temp folder. */
void rw_free(rw_world *w);

/* A new connection (no room); its id (RW_ID). */
uint32_t rw_connect(rw_world *w);
/* The connection goes: gk_room_conn_down as the shell calls it. */
void rw_disconnect(rw_world *w, uint32_t id);
rw_conn *rw_conn_of(rw_world *w, uint32_t id);

/* A datagram from a connection, routed as the shell routes it. */
void rw_route(rw_world *w, uint32_t id, const uint8_t *bytes, size_t len);
/* A message from a connection (encoded, then routed). */
void rw_send(rw_world *w, uint32_t id, const gk_wire_msg *m);

/* CREATE_ROOM (config: NULL or JSON text) from id: the room published in
 * the table, or NULL (refused). */
gk_room *rw_create(rw_world *w, uint32_t id, const char *genre,
                   uint32_t max_players, uint32_t input_delay,
                   const char *config);
/* JOIN_ROOM (as a player), START_MATCH, END_MATCH from id. */
void rw_join(rw_world *w, uint32_t id, const char *code);
/* QUICK_PLAY (any room) for a `genre` room of max_players with `config`
 * (NULL: ""): the room the connection is in after it, or NULL. */
gk_room *rw_quick(rw_world *w, uint32_t id, const char *genre,
                  uint32_t max_players, const char *config);
void rw_start(rw_world *w, uint32_t id);
void rw_end_match(rw_world *w, uint32_t id, int reason);
/* The room with that code in the table, or NULL. */
gk_room *rw_room(rw_world *w, const char *code);

/* The k-th message (any type) a connection got, or NULL. */
const rw_msg *rw_msg_at(rw_world *w, uint32_t id, uint32_t k);
/* Messages a connection got: how many of `type` (0: any type), and the
 * n-th (0-based) or the last of `type`, decoded (pointers into the kept
 * bytes); 1 if found. */
uint32_t rw_count(rw_world *w, uint32_t id, int type);
int rw_nth(rw_world *w, uint32_t id, int type, uint32_t n, gk_wire_msg *m);
int rw_last(rw_world *w, uint32_t id, int type, gk_wire_msg *m);

/* Gives the connection a player (its genre's bot, seeded by its id); it
 * is fed what the room sent so far at the next pump. */
void rw_player(rw_world *w, uint32_t id);
/* The same, the player predicting (gk_net_peer_options.predict) or not. */
void rw_player_with(rw_world *w, uint32_t id, int predict);
/* Sends a message through the connection's player (JOIN_ROOM there is
 * remembered for a late join). */
void rw_peer_send(rw_world *w, uint32_t id, const gk_wire_msg *m);
/* Feeds every player what it got, runs its due deadlines, and delivers
 * what the players sent, until nothing moves. */
void rw_pump(rw_world *w);
/* ms milliseconds, one at a time: the clock, rw_pump, every room's tick,
 * rw_pump. */
void rw_advance(rw_world *w, uint64_t ms);
/* A match: n connections with players, the first creating a room of
 * `genre` for `max` players with `config`, the others joining, the first
 * starting it; ids[] gets the connections (slot order). */
gk_room *rw_match(rw_world *w, const char *genre, uint32_t n, uint32_t max,
                  const char *config, uint32_t *ids);
/* Runs the queued jobs (work, then done), in order; how many ran. */
uint32_t rw_run_jobs(rw_world *w);

/* The log so far, as one string (static buffer, valid until the next
 * call); the number of lines with "event":"<event>". */
const char *rw_log_text(rw_world *w);
uint32_t rw_log_count(rw_world *w, const char *event);
/* The last line of that event (copied into out), 1 if there is one. */
int rw_log_last(rw_world *w, const char *event, char *out, size_t cap);
/* The number "<key>":N in a log line (fails the test if it is not there). */
uint64_t rw_log_u64(const char *line, const char *key);

#endif
