/* gk_server_internal.h: what the files of gk-server, the I/O shell
 * around the rooms, share with each other, and nothing anyone else may use
 * (the public face is gk_server.h; tests use gk_server_test.h).
 *
 * The rooms themselves are a library, gk_room (src/room, sans-I/O); the
 * shell gives them I/O, time and a table:
 *   gk_server.c        lifecycle: start, the step and sweep timers
 *                      (gk_room_tick for every room in the table),
 *                      shutdown, drain, freeing the server (gk_server.h);
 *   gk_server_rooms.c  the room table and codes, and the rooms' host: the
 *                      environment (gk_room_env) every room calls back
 *                      through (send, close, strikes, round trips, the
 *                      thread pool for their jobs, the clock);
 *   gk_server_route.c  connections: a link's data (decode once, then
 *                      dispatch to the connection's room, or to
 *                      gk_room_create / _join / _rejoin / _spectate),
 *                      up and down, strikes, sending;
 *   gk_server_link.c, gk_server_link_enet.c, gk_server_link_ws.c
 *                      links (gk_server_link.h): connection ids,
 *                      connections by id, the backends' listeners; the
 *                      ENet backend, the only caller of gk_net_transport;
 *   gk_server_auth.c   admission: connect tokens before a room request
 *                      reaches a room, per-IP and per-creator limits, the
 *                      handshake deadline, the size cap of replies to
 *                      unadmitted connections (s->auth, each connection's
 *                      sv_admit);
 *   gk_server_metrics.c, gk_server_series.c, gk_server_admin.c,
 *   gk_server_agones.c operations: metrics, the status page's series, the
 *                      admin HTTP listener, the Agones client (declared
 *                      in gk_server_ops.h); they read rooms only through
 *                      gk_room_view_of.
 * The config, log and random files have headers of their own
 * (gk_server_config.h, gk_server_log.h, gk_server_random.h).
 *
 * Naming: every function, type and constant declared here is prefixed
 * sv_ / SV_ (internal, not API: the gk_server_ prefix is the public
 * one). Each is defined in the file named above its group.
 *
 * Threads: everything runs on the loop thread except the rooms' jobs
 * (a recording's flush and finish, a desync bundle), which the rooms'
 * host hands to uv_queue_work (gk_server_rooms.c). A job touches only
 * what it holds; its `done`, on the loop, takes the results back.
 * No cJSON call runs off the loop thread: cJSON's state is process-global
 * (every cJSON_Parse* writes its error pointer), so JSON a job needs is
 * made on the loop and handed over as text. scripts/tsan.sh checks this
 * under ThreadSanitizer.
 *
 * Ownership: the server owns its room table and connection table; a room
 * is in its slot of s->rooms from sv_room_publish until it leaves through
 * its environment's `gone` (and frees itself). Arguments are never NULL
 * unless a comment says so: the callers are the server's own files. A
 * connection's admission state (sv_admit) is a table of gk_server_auth.c
 * by the slot of the connection's id, not fields of sv_conn.
 */
#ifndef GK_SERVER_INTERNAL_H
#define GK_SERVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_net_session.h"
#include "gk_room.h"
#include "gk_server.h"
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"
#include "gk_token.h"

#define SV_SWEEP_MS 1000u /* lobby and idle-connection sweep period */
#define SV_LINGER_MS                                                           \
  150u /* after the last room closes on shutdown, let                          \
          the final MATCH_END/SHUTDOWN packets leave */

typedef struct sv_conn {
  gk_room_conn rc; /* first: what the rooms see of it (room, slot, ...) */
  int used;
  sv_link *link; /* whatever carries it (its backend's object) */
  uint32_t strikes;
  int asking; /* a room request looked up in the fleet's directory */
} sv_conn;

/* One source in a bounded table of gk_server_auth.c: an IP (per-IP
 * connections and connects per second) or a room creator (rooms per
 * minute: a client id in token mode, an IP in open mode). */
typedef struct sv_src {
  int used;
  uint64_t key;
  uint32_t conns;      /* IP table: connections open now */
  uint64_t win_ms;     /* start of the current rate window */
  uint32_t win_n;      /* events in it */
  uint64_t seen_ms;    /* last touched: when full, the oldest idle entry
                          is evicted */
  uint64_t logged_ms;  /* last "limit" record for this source */
  uint64_t miss_ms;    /* IP table: start of the unknown-code window */
  uint32_t misses;     /* ... unknown codes asked for in it */
  uint64_t suppressed; /* refusals not logged since */
  int logged;
} sv_src;

typedef struct sv_auth {
  uint8_t key[GK_TOKEN_KEY_BYTES]; /* token mode */
  gk_token_seen seen;              /* admitted token ids until expiry */
  gk_token_seen_entry *seen_store;
  sv_src *ips; /* per-IP table, 2 * max_peers entries */
  uint32_t nips;
  sv_src *creators; /* rooms-per-minute table */
  uint32_t ncreators;
  /* each connection's admission (handshake deadline, reply cap, token
   * binding), by the slot of its id: max_peers entries */
  struct sv_admit *conns;
} sv_auth;

/* What the server itself counts of the fleet (gk_server_fleet.c); the
 * directory's own counters are gk_fleet_stats. */
/* Quick play's outcomes here (gk_server_quick.c). */
typedef struct sv_quick_counts {
  uint64_t joined;     /* seated in a quick-play lobby here */
  uint64_t created;    /* seated in a new one made here */
  uint64_t redirected; /* sent to a lobby on another node */
  uint64_t refused;    /* answered ERROR, but for limited */
  uint64_t limited;    /* a new room over limits.creates_per_min: GK_ELIMIT */
  uint64_t moved;      /* came for a lobby that had filled: seated in another */
} sv_quick_counts;

typedef struct sv_fleet_counts {
  uint64_t redirects;        /* REDIRECTs sent */
  uint64_t redirects_failed; /* room requests the directory could not
                                answer (unreachable, bad entry) */
} sv_fleet_counts;

struct gk_server {
  uv_loop_t *loop;
  const gk_server_config *cfg;
  gk_server_log *log;
  gk_server_stats stats;
  struct sv_enet *enet;                   /* the ENet backend */
  struct sv_ws *ws;                       /* the WebSocket one, or NULL */
  sv_link_host *hosts[SV_LINK_HOSTS_MAX]; /* every backend's listener */
  uint32_t nhosts;
  uint32_t hosts_open; /* not yet closed (close is asynchronous) */
  gk_room **rooms;     /* max_rooms slots, NULL = free; host.nrooms used */
  /* The rooms in use, so that nothing per step walks max_rooms slots:
   * live[0..nrooms) are their indices (in no order; a freed room's place
   * is taken by the last one), free_idx[0..max_rooms - nrooms) the free
   * slots (a stack). */
  uint32_t *live;
  uint32_t *free_idx;
  sv_conn *conns; /* max_peers entries, by slot of a connection id */
  sv_ids ids;     /* connection ids (gk_server_link.c) */
  uv_timer_t step_timer;
  uv_timer_t sweep_timer;
  uv_timer_t grace_timer;
  uv_poll_t sig_poll; /* readable: a SIGTERM or SIGINT (gk_server.c) */
  int sig_fd;         /* its signalfd, -1 when signals are not handled */
  int handles;        /* open uv handles (close is asynchronous) */
  uint64_t t0;        /* uv_hrtime of deadline 0 */
  uint64_t k;         /* deadlines passed */
  uint64_t step_ns;
  uint32_t jobs;     /* the rooms' jobs queued on the thread pool */
  gk_room_host host; /* what every room shares (gk_server_rooms.c) */
  uint64_t packets_out, drop_oversize; /* backend totals, kept at close */
  int stopped_logged;
  int lingering;
  int forced;
  int closing;
  /* operations (gk_server_ops.h) */
  sv_metrics metrics;
  struct sv_admin *admin;   /* NULL = off */
  struct sv_agones *agones; /* NULL = off */
  uint8_t buf[GK_WIRE_MAX];
  sv_auth auth;           /* admission: gk_server_auth.c */
  struct gk_fleet *fleet; /* the room directory, NULL = no fleet */
  sv_fleet_counts fleet_stats;
  sv_quick_counts quick_stats;
};

/* The loop's time, in ms: one value for a whole callback, so two reads
 * in one callback never disagree (a fresh clock read after `now` made
 * `now - since_ms` wrap round and disconnected a connection that had just
 * left its room). Deadlines of steps use uv_hrtime, not this. */
static inline uint64_t sv_now_ms(const gk_server *s) {
  return uv_now(s->loop);
}

/* The i-th room in use (i < s->host.nrooms). Walk them from the last down:
 * freeing room i then moves only a room already walked. */
static inline gk_room *sv_live_room(const gk_server *s, uint32_t i) {
  return s->rooms[s->live[i]];
}

/* The room a connection is in, or NULL. */
static inline gk_room *sv_conn_room(const sv_conn *c) {
  return c->rc.room;
}

/* --- gk_server.c: lifecycle ---------------------------------------------- */

/* Frees the server once it is closing, its handles are closed and no
 * replay job runs; otherwise does nothing. */
void sv_maybe_free(gk_server *s);
/* Logs the "stopped" record with the server totals, once. */
void sv_log_stopped(gk_server *s);
/* Drain (POST /drain): what a shutdown does, except that running matches
 * play to their own end; lobbies close and no room is created or joined.
 * The process exits once the last room is gone and the last replay is
 * written. A signal during a drain is an ordinary shutdown. Returns 0, or
 * GK_ECLOSED if the server is already shutting down or draining. */
int sv_server_drain(gk_server *s);

/* --- gk_server_route.c: connections -------------------------------------- */

/* ERROR(code, text) to a connection, as gk_room_send_error sends it. */
void sv_send_error(gk_server *s, uint32_t peer, int code, const char *text);
/* One bad message from `peer`: counted and logged; at the configured
 * limit the connection is closed at once (sv_link_down may run before
 * this returns: check sv_conn_get(s, peer) after). */
void sv_strike(gk_server *s, uint32_t peer, const char *why, int code);

/* --- gk_server_link.c: connections by id ---------------------------------
 * `peer` in every sv_ function is a connection id (gk_server_link.h). */

/* The connection table and its ids (max_peers). 0 or GK_ENOMEM. */
int sv_conns_init(gk_server *s);
void sv_conns_free(gk_server *s);
/* The connection with that id, or NULL if it is gone (or never was). */
sv_conn *sv_conn_get(const gk_server *s, uint32_t peer);
/* Closes a connection's link (see sv_link_ops.close); nothing if gone. */
void sv_conn_close(gk_server *s, uint32_t peer, int at_once);
/* A connection's round trip and its variance, ms (0: unknown or gone). */
uint32_t sv_conn_rtt(const gk_server *s, uint32_t peer);
uint32_t sv_conn_rtt_var(const gk_server *s, uint32_t peer);
/* Shutdown: every backend drops its links at once and closes (the last
 * one's sv_link_host_closed may free the server). */
void sv_links_close(gk_server *s);
/* Frees every backend (from sv_maybe_free, once all are closed). */
void sv_links_free(gk_server *s);
/* The backends' totals, summed. */
void sv_links_totals(const gk_server *s, sv_link_host_stats *out);

/* --- gk_server_link_enet.c: the ENet backend ----------------------------- */

/* Binds the ENet host (cfg host, port, peers, timeouts) and registers it.
 * 0, or the transport's code with a message. */
int sv_enet_open(gk_server *s, char *err, size_t errlen);
/* The socket's receive buffer as the kernel set it (0 if unknown); the
 * port: sv_enet_port (gk_server_test.h). */
uint32_t sv_enet_socket_buffer(const gk_server *s);

/* --- gk_server_link_ws.c: the WebSocket backend -------------------------- */

/* If websocket.enabled: starts the listener (websocket host, port, path,
 * origins, max_connections, ping_ms, static_dir) and registers it. 0
 * (also when not enabled), or the listener's code with a message. */
int sv_ws_open(gk_server *s, char *err, size_t errlen);
/* The listener's counters (handshakes, closes), NULL without one. */
const struct gk_net_ws_stats *sv_ws_stats(const gk_server *s);
/* The static files' directory (its realpath), NULL if none is served. */
const char *sv_ws_static_root(const gk_server *s);
/* Logs "web": the URL of the served directory (websocket.web_url, else
 * for a browser here), the
 * directory, and whether it has an index.html; nothing if none. */
void sv_ws_log_page(gk_server *s);

/* --- gk_server_rooms.c: the room table ------------------------------------ */

/* The room table (max_rooms slots) and the rooms' host (gk_room.h: the
 * environment every room calls back through). 0 or GK_ENOMEM. */
int sv_rooms_init(gk_server *s);
void sv_rooms_free(gk_server *s);
/* The loop's time (ms) for a call into a room. */
uint64_t sv_room_now(const gk_server *s);

/* --- gk_server_fleet.c: one node of a fleet ------------------------------ */

/* With fleet.enabled: the directory client on the loop (counted in
 * s->handles until it has closed). 0, or a code with a message. */
int sv_fleet_start(gk_server *s, char *err, size_t errlen);
/* Shutdown: the directory closes (its entries expire with their TTL). */
void sv_fleet_close(gk_server *s);
/* A room was published / has gone: its code in the directory. */
void sv_fleet_room_added(gk_server *s, const char *code);
void sv_fleet_room_gone(gk_server *s, const char *code);
/* A new room's code (gk_room_env.new_code): with a fleet, one the
 * directory reserved ahead (unique fleet-wide), or a 16-character one
 * while none is reserved (Redis away); without a fleet GK_ENOTFOUND (the
 * room library's short code, unique here). */
int sv_fleet_new_code(void *user, char out[GK_WIRE_CODE_LEN + 1]);
/* POST /drain: the node says it is draining at its next heartbeat. */
void sv_fleet_draining(gk_server *s);
/* 1 if this node holds fleet.max_rooms rooms (CREATE_ROOM: GK_EFULL). */
int sv_fleet_full(const gk_server *s);
/* A JOIN_ROOM, REJOIN_ROOM or SPECTATE whose code is not here: 1 if the
 * fleet took it (a lookup, then REDIRECT, an ERROR, or the room
 * library's unknown-code answer), 0 if there is no fleet (or the request
 * is the room library's to refuse). */
int sv_fleet_ask(gk_server *s, uint32_t peer, const gk_wire_msg *m);
/* REDIRECT (code, the room's node) to a connection for its `request`
 * (a type), then closes it once it has left. */
struct gk_fleet_where;
void sv_fleet_redirect(gk_server *s, uint32_t peer, int request,
                       const char *code, const struct gk_fleet_where *w);
/* Is `code` this node's in the directory (gk_fleet_claim)? The answer
 * goes to sv_quick_claimed with `quick`. 0 or the directory's code. */
int sv_fleet_claim(gk_server *s, const char *code, void *quick);
/* The directory's counters, NULL without a fleet. */
const struct gk_fleet_stats *sv_fleet_directory_stats(const gk_server *s);
/* 0 if this node has a fleet and its directory is unreachable. */
int sv_fleet_reachable(const gk_server *s);
/* The public room list (admin GET /rooms/public): {"rooms": [...]}, each
 * a listed room (options.room.listed) in the lobby or playing, of `genre`
 * (NULL: any), with genre, code, seats_taken, seats_free, state and node:
 * this process's rooms as they are now, and with a fleet the other
 * nodes' as of the directory's last refresh (gk_fleet_public). NULL if
 * out of memory (caller deletes). */
struct cJSON *sv_fleet_public_rooms(const gk_server *s, const char *genre);

/* --- gk_server_quick.c: QUICK_PLAY --------------------------------------- */

/* QUICK_PLAY from a connection: 1 if it waits for the directory (the
 * answer, a seat, REDIRECT or ERROR, comes later), 0 if answered. */
int sv_quick_play(gk_server *s, uint32_t peer, const gk_wire_msg *m);
/* The directory's answers (gk_server_fleet.c's hooks). */
struct gk_fleet_seat;
void sv_quick_seat(gk_server *s, void *ctx, int status,
                   const struct gk_fleet_seat *st, const char *text);
void sv_quick_claimed(gk_server *s, void *ctx, int status,
                      const struct gk_fleet_where *w);
/* A quick-play room's seats changed (consume 1: a player the directory
 * promised a seat to took it): its entry in the directory follows. */
void sv_quick_sync(gk_server *s, gk_room *r, int consume);
/* A quick-play room leaves: its entry goes. */
void sv_quick_gone(gk_server *s, gk_room *r);

/* --- gk_server_auth.c: connect tokens and abuse limits ------------------- */

typedef struct sv_admit sv_admit;
/* Token mode: the client id a connection's token bound it to; 1 with
 * *out set, 0 if none. */
int sv_auth_client_id(const gk_server *s, uint32_t peer, uint64_t *out);
/* Reads the key file (token mode; refused unless mode 0600 or stricter)
 * and allocates the bounded tables. Returns 0 or a code with a message
 * naming auth.key_file; on failure nothing is left to free. */
int sv_auth_init(gk_server *s, char *err, size_t errlen);
/* Frees the tables and wipes the key. Safe after a failed init. */
void sv_auth_free(gk_server *s);
/* A new connection: starts its admission state (replies capped at the
 * size of the request that opened its link, sv_link.hello_len) and counts
 * it against its IP's limits. Returns 0, or GK_ELIMIT (counted, logged
 * once per IP per interval): the caller drops the connection at once,
 * with no reply. */
int sv_auth_connect(gk_server *s, uint32_t peer);
/* Whether a connection from `addr_key` (sv_link.addr_key) now would be
 * over limits.conns_per_ip: 1 or 0. Counts nothing (a question asked
 * before a link is up: the WebSocket upgrade). */
int sv_auth_ip_full(const gk_server *s, uint64_t addr_key);
/* A room request of `peer` was accepted (it has a place in a room: a
 * player, a late joiner, a rejoiner, a spectator): the handshake deadline
 * is met and its replies are no longer capped. */
void sv_auth_admit(gk_server *s, uint32_t peer);
/* 1 if a room request of `peer` was ever accepted (sv_auth_admit). */
int sv_auth_admitted(const gk_server *s, uint32_t peer);
/* A datagram of `len` bytes from `peer`: until it is admitted, no reply
 * to it is larger (sv_auth_reply_cap). */
void sv_auth_datagram(gk_server *s, uint32_t peer, size_t len);
/* A connection is gone: uncounts it from its IP. */
void sv_auth_disconnect(gk_server *s, const sv_conn *c);
/* The one check before a CREATE_ROOM, JOIN_ROOM, REJOIN_ROOM or SPECTATE
 * reaches the room code: in token mode the token (open, grant, role,
 * client binding, a rejoin's client id against the slot's, replay
 * cache), in both modes the room-creation rate. now_s is the wall clock
 * (time()). Returns 0 to go on; otherwise the request was refused: the
 * ERROR is sent, counted and logged, and the caller does nothing. */
int sv_auth_request(gk_server *s, uint32_t peer, const gk_wire_msg *m,
                    uint64_t now_s);
/* QUICK_PLAY's share of limits.creates_per_min (open mode: per IP, the
 * table CREATE_ROOM counts in). sv_auth_may_create: 1 if a room made for
 * `peer` now would pass (nothing counted: quick play asks before it knows
 * whether it will make a room). sv_auth_quick_create with count 1: a room
 * is about to be made for `peer`, counted like a CREATE_ROOM; with count
 * 0: no room can be had without making one, and sv_auth_may_create said
 * no. Over the limit (always with count 0) it returns GK_ELIMIT, counted
 * in limit_create_rate and logged, with its sentence in err: the caller
 * sends the ERROR. */
int sv_auth_may_create(const gk_server *s, uint32_t peer);
int sv_auth_quick_create(gk_server *s, uint32_t peer, int count, char *err,
                         size_t errlen);
/* Unknown room codes (guessing): sv_auth_misses_over says whether the
 * connection's IP asked for limits.misses_per_ip_per_min unknown codes
 * within the minute (then the request is refused with GK_ELIMIT, sent,
 * counted and logged: 1); sv_auth_miss counts one. */
int sv_auth_misses_over(gk_server *s, uint32_t peer);
void sv_auth_miss(gk_server *s, uint32_t peer);
/* How many bytes a reply to `peer` may have: unlimited once admitted or
 * when its link's transport verified its address (WebSocket), else the
 * size of the datagram that caused it. */
size_t sv_auth_reply_cap(const gk_server *s, uint32_t peer);
/* The players the CREATE_ROOM token just admitted for `peer` grants
 * (token mode), GK_PLAYERS_MAX in open mode: a room's seats, bots
 * included, stay within it. */
uint32_t sv_auth_create_players(const gk_server *s, uint32_t peer);
/* Sweep: drops connections that had no room request accepted within
 * limits.handshake_ms (counted, logged once per IP per interval). */
void sv_auth_sweep(gk_server *s, uint64_t now_ms);

#endif
