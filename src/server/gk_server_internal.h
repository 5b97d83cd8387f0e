/* gk_server_internal.h: what the files of gk-server share with each other,
 * and nothing anyone else may use (the public face is gk_server.h).
 *
 * The server is split by responsibility, the way ioquake3 splits
 * code/server around server.h (docs/ARCHITECTURE.md, "Files and their
 * parts", says who calls each):
 *   gk_server.c        lifecycle: start, the step and sweep timers,
 *                      shutdown, drain, freeing the server (gk_server.h's
 *                      API);
 *   gk_server_route.c  connections: a link's data (decode once, route),
 *                      up and down, strikes, sending to connections;
 *   gk_server_link.c, gk_server_link_enet.c, gk_server_link_ws.c
 *                      links (gk_server_link.h): connection ids,
 *                      connections by id, the backends' listeners; the
 *                      ENet backend, the only caller of gk_net_transport;
 *   gk_server_room.c   rooms: create, join, start, lobby end, option merge,
 *                      discarding and freeing a room and its parts;
 *   gk_server_match.c  a room's match: its session and the session's
 *                      callbacks, ticking, the end, draining;
 *   gk_server_delay.c  a room's input delay (sv_delay);
 *   gk_server_replay.c a room's recording (sv_rec): deferred writes flushed
 *                      on the thread pool, disk faults, recovering
 *                      leftovers;
 *   gk_server_rejoin.c, gk_server_spectate.c, gk_server_join.c
 *                      held slots, reconnect secrets, REJOIN_ROOM and
 *                      snapshots (sv_rejoin); spectators (sv_spec); late
 *                      join;
 *   gk_server_desync.c desync forensics (sv_dsy);
 *   gk_server_bots.c   seats the server plays itself (sv_bots: the room
 *                      option room.bots, the bots' records as INPUT);
 *   gk_server_auth.c   admission: connect tokens before a room
 *                      request reaches gk_server_room.c, per-IP and
 *                      per-creator limits, the handshake deadline, the
 *                      size cap of replies to unadmitted connections
 *                      (s->auth, each connection's sv_admit, each room's
 *                      sv_auth_room);
 *   gk_server_metrics.c, gk_server_series.c, gk_server_admin.c,
 *   gk_server_agones.c operations: metrics, the status page's series, the
 *                      admin HTTP listener, the Agones client (declared
 *                      in gk_server_ops.h).
 * The config, log and random files have headers of their own
 * (gk_server_config.h, gk_server_log.h, gk_server_random.h).
 *
 * Naming: every function, type and constant declared here is prefixed
 * sv_ / SV_ (internal, not API: the gk_server_ prefix is the public
 * one). Each is defined in the file named above its group.
 *
 * Threads: everything runs on the loop thread except the jobs queued with
 * uv_queue_work: a recording's flush and finish jobs (gk_server_replay.c:
 * job_work) and a desync bundle (gk_server_desync.c: bundle_work). A job
 * touches only what it was handed when it was queued (s->jobs counts
 * them); its after-work callback, on the loop, takes the results back.
 * No cJSON call runs off the loop thread: cJSON's state is process-global
 * (every cJSON_Parse* writes its error pointer), so JSON a job needs is
 * made on the loop and handed over as text (the recording's header,
 * gk_replay_header_json; a bundle's cut reads its .tmp with
 * gk_replay_open_file_known, which compares the header block instead of
 * parsing it). scripts/tsan.sh checks this under ThreadSanitizer.
 *
 * Ownership: the server owns its room table and connection table; a room
 * is owned by its slot in s->rooms from the moment it is published until
 * sv_room_free. Rooms never reach into other rooms. Arguments are never
 * NULL unless a comment says so: the callers are the server's own files.
 *
 * Parts: what one feature keeps per room is a part of the room owned by
 * that feature's file: sv_delay (gk_server_delay.c), sv_rejoin
 * (gk_server_rejoin.c), sv_auth_room (gk_server_auth.c), sv_rec
 * (gk_server_replay.c), sv_spec (gk_server_spectate.c), sv_dsy
 * (gk_server_desync.c), sv_bots (gk_server_bots.c). A part's struct is defined
 * in its owner's .c file only; the room holds a pointer to it and every other
 * file calls the owner's functions declared here. Pointers, not members: a
 * member by value needs its layout wherever sv_room is defined, which is this
 * header that every server file includes, and then any file could touch
 * its fields; with the struct incomplete outside its owner, the compiler
 * refuses them. (A feature-private header included by the owner and
 * gk_server_room.c only cannot work for the same reason: sv_room is
 * defined here.) A part every room has (sv_delay, sv_rejoin,
 * sv_auth_room) is one allocation each, made with the room in room_build
 * and freed with it in room_discard (from sv_room_free); failing to
 * allocate one fails the room's creation with GK_ENOMEM through
 * room_discard, like any other error of building it, so a published room
 * always has them. The other parts come and go with what they hold (NULL
 * when there is none). A connection's admission state (sv_admit) is the
 * same idea for sv_conn: a table of gk_server_auth.c by the slot of the
 * connection's id, not fields of sv_conn.
 */
#ifndef GK_SERVER_INTERNAL_H
#define GK_SERVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_net_session.h"
#include "gk_replay.h"
#include "gk_server.h"
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_token.h"

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

typedef enum sv_room_state {
  SV_ROOM_LOBBY = 1,
  SV_ROOM_PLAYING = 2,
  SV_ROOM_DRAINING = 3 /* the match ended; the session still repeats the
                          last confirmed steps (gk_net_session_drained) */
} sv_room_state;

typedef struct sv_room {
  gk_server *srv;
  uint32_t index;
  uint32_t live_at; /* its position in s->live */
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
  struct sv_rec *rec; /* the recording (gk_server_replay.c), or NULL */
  char replay_path[GK_SERVER_PATH_MAX + 64];
  int end_pending; /* the session's loop ran the last step */
  int end_reason;
  int desync_end; /* policy "end" asked for the end */
  /* draining */
  uint64_t drain_until_ms;
  struct sv_delay *delay; /* the input delay (gk_server_delay.c) */
  /* counters */
  uint64_t drops;
  uint64_t strikes;
  uint64_t desyncs;
  struct sv_rejoin *rejoin;  /* secrets, held slots (gk_server_rejoin.c) */
  struct sv_spec *spec;      /* spectators and their step ring, or NULL */
  struct sv_auth_room *auth; /* slots' client ids (gk_server_auth.c) */
  struct sv_dsy *dsy;        /* desyncs being examined (gk_server_desync.c) */
  struct sv_bots *bots;      /* seats the server plays, or NULL
                                (gk_server_bots.c) */
} sv_room;

typedef struct sv_conn {
  int used;
  uint32_t id;   /* its connection id (gk_server_link.h) */
  sv_link *link; /* whatever carries it (its backend's object) */
  uint32_t room; /* index or SV_NO_ROOM */
  uint32_t slot;
  uint32_t strikes;
  uint64_t since_ms; /* connected, or left its last room */
  int spectator;     /* watching `room` (slot = its spectator index) */
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
  sv_room **rooms;     /* max_rooms slots, NULL = free */
  uint32_t nrooms;
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
  uv_signal_t sig_term, sig_int;
  int signals;
  int handles; /* open uv handles (close is asynchronous) */
  uint64_t t0; /* uv_hrtime of deadline 0 */
  uint64_t k;  /* deadlines passed */
  uint64_t step_ns;
  uint32_t jobs;              /* replay jobs queued on the thread pool */
  int replay_fault;           /* a replay write failed; none since */
  uint64_t replay_fault_lost; /* recordings lost in this fault */
  uint64_t packets_out, drop_oversize; /* backend totals, kept at close */
  int stopped_logged;
  int shutting_down;
  int lingering;
  int forced;
  int closing;
  /* operations (gk_server_ops.h) */
  int draining; /* POST /drain: no new rooms, matches play to their end */
  sv_metrics metrics;
  struct sv_admin *admin;   /* NULL = off */
  struct sv_agones *agones; /* NULL = off */
  uint8_t buf[GK_WIRE_MAX];
  sv_auth auth; /* admission: gk_server_auth.c */
};

/* The loop's time, in ms: one value for a whole callback, so two reads
 * in one callback never disagree (a fresh clock read after `now` made
 * `now - since_ms` wrap round and disconnected a connection that had just
 * left its room). Deadlines of steps use uv_hrtime, not this. */
static inline uint64_t sv_now_ms(const gk_server *s) {
  return uv_now(s->loop);
}

/* The i-th room in use (i < s->nrooms). Walk them from the last down:
 * freeing room i then moves only a room already walked. */
static inline sv_room *sv_live_room(const gk_server *s, uint32_t i) {
  return s->rooms[s->live[i]];
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
/* Drain (POST /drain): what a shutdown does, except that running matches
 * play to their own end; lobbies close and no room is created or joined.
 * The process exits once the last room is gone and the last replay is
 * written. A signal during a drain is an ordinary shutdown. Returns 0, or
 * GK_ECLOSED if the server is already shutting down or draining. */
int sv_server_drain(gk_server *s);

/* --- gk_server_route.c: connections -------------------------------------- */

/* Encodes and sends one message to a connection (reliable or not by its
 * type). Returns 0, the encoder's or the link's code, or GK_ENOTFOUND for
 * an id with no connection (gone, stale). */
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
/* One encoded message to a connection; GK_ENOTFOUND if it is gone. */
int sv_send_bytes(gk_server *s, uint32_t peer, const uint8_t *bytes, size_t len,
                  int reliable);
/* A connection's round trip and its variance, ms (0: unknown or gone). */
uint32_t sv_conn_rtt(const gk_server *s, uint32_t peer);
uint32_t sv_conn_rtt_var(const gk_server *s, uint32_t peer);
/* A connection's transport ("enet"), or NULL if it is gone. */
const char *sv_conn_kind(const gk_server *s, uint32_t peer);
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
/* The bound UDP port, and the socket's receive buffer as the kernel set
 * it (0 if unknown). */
uint16_t sv_enet_port(const gk_server *s);
uint32_t sv_enet_socket_buffer(const gk_server *s);

/* --- gk_server_link_ws.c: the WebSocket backend -------------------------- */

/* If websocket.enabled: starts the listener (websocket host, port, path,
 * origins, max_connections, ping_ms, static_dir) and registers it. 0
 * (also when not enabled), or the listener's code with a message. */
int sv_ws_open(gk_server *s, char *err, size_t errlen);
/* The bound TCP port, 0 when there is no WebSocket listener. */
uint16_t sv_ws_port(const gk_server *s);
/* The listener's counters (handshakes, closes), NULL without one. */
const struct gk_net_ws_stats *sv_ws_stats(const gk_server *s);
/* The static files' directory (its realpath), NULL if none is served. */
const char *sv_ws_static_root(const gk_server *s);
/* Logs "web": the URL of the served directory for a browser here, the
 * directory, and whether it has an index.html; nothing if none. */
void sv_ws_log_page(gk_server *s);

/* --- gk_server_room.c: rooms --------------------------------------------- */

/* Mask of a room's slots that still have a connection. */
uint32_t sv_room_connected(const sv_room *r);
/* Unpublishes and frees a room (session, replay writer, genre config);
 * its connections stay, in no room. */
void sv_room_free(gk_server *s, sv_room *r);
/* Ends what is running (sv_match_end) and frees the room at once
 * (shutdown, errors, a closed lobby). */
void sv_room_finalise(gk_server *s, sv_room *r, int reason);
/* The room with that code (GK_WIRE_CODE_LEN characters), or NULL. */
sv_room *sv_room_find(gk_server *s, const char *code);
/* Closes a lobby: MATCH_END(host) to its players, then frees it. */
void sv_room_end_lobby(gk_server *s, sv_room *r);
/* Room control from a connection (route.c calls these). */
void sv_on_create(gk_server *s, uint32_t peer, const gk_wire_msg *m);
void sv_on_join(gk_server *s, uint32_t peer, const gk_wire_msg *m);
void sv_on_start(gk_server *s, uint32_t peer);
void sv_on_lobby_end(gk_server *s, uint32_t peer);

/* --- gk_server_bots.c: seats the server plays (room.bots) -----------------
 * A room whose CREATE_ROOM options hold {"room": {"bots": N}} gets N seats
 * beyond its max_players that the server fills with the genre's built-in
 * bot at the start; their records enter the session as INPUT from their
 * slots (docs/PROTOCOL.md, "Server bots"). */

typedef struct sv_bots sv_bots;

/* Checks the `room` object taken out of a CREATE_ROOM's options (NULL:
 * none) for the room being built by `peer` (r->genre and r->max_players
 * set; seats_asked: the CREATE_ROOM named max_players, else the people
 * get what the bots leave of the genre's cap) and gives the room its part
 * (r->bots) when it asks for bots. Returns 0, or GK_EINVAL / GK_ENOTFOUND
 * / GK_ERANGE (the object, a genre without a bot, too many seats),
 * GK_EGRANT (more seats than the creator's token grants), GK_ENOMEM, with
 * a message naming options.room.*. */
int sv_bots_configure(gk_server *s, uint32_t peer, sv_room *r, int seats_asked,
                      const cJSON *room, char *err, size_t errlen);
/* Frees a room's part (NULL: nothing). */
void sv_bots_free(sv_bots *b);
/* room.bots (0 for NULL). */
uint32_t sv_bots_seats(const sv_bots *b);
/* The bots' slots in the match (0 for NULL and before the start). */
uint32_t sv_bots_mask(const sv_bots *b);
/* Records the bots made so far (0 for NULL). */
uint64_t sv_bots_records(const sv_bots *b);
/* At START_MATCH, before the session opens: the slots the bots will take
 * (right after the r->nslots handed out), and the bots seeded for a match
 * of `players` (0, or the seeding's code with a message; nothing to undo).
 * sv_bots_seat then gives them the slots once the session is open. */
uint32_t sv_bots_plan(const sv_room *r);
int sv_bots_prepare(sv_room *r, uint32_t players, char *err, size_t errlen);
void sv_bots_seat(gk_server *s, sv_room *r, uint32_t mask);
/* Before every tick of a playing room's session and after every call into
 * it: each bot's records for the steps a player may sample now go in (and
 * the match ends if nobody but bots is left). */
void sv_bots_feed(gk_server *s, sv_room *r);

/* --- gk_server_auth.c: connect tokens and abuse limits ------------------- */

typedef struct sv_admit sv_admit;
typedef struct sv_auth_room sv_auth_room;

/* A room's auth part (r->auth: each slot's client id in token mode). NULL
 * if out of memory. */
sv_auth_room *sv_auth_room_new(void);
/* Frees a room's part (NULL: nothing). */
void sv_auth_room_free(sv_auth_room *a);
/* A slot's player got its place in the match (MATCH_START, a late join):
 * in token mode its connection's client id becomes the slot's, the one a
 * rejoin's token must carry (sv_auth_request). */
void sv_auth_bind_slot(gk_server *s, sv_room *r, uint32_t slot);

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
/* The token checks of sv_auth_request alone, without a server: opens the
 * token of `m` (any of the four) with `key` at now_s, matches its
 * grant against the request and, if `client` is non-NULL, against the
 * client id the connection is bound to, then admits its id once in
 * `seen`. Returns 0 with *out filled, or the refusal's code with a reason
 * in err: GK_ENOTOKEN, gk_token_open's codes, GK_EGRANT, GK_EROLE,
 * GK_EEXIST (used before) or GK_EFULL (cache full). */
int sv_auth_check_token(const uint8_t key[GK_TOKEN_KEY_BYTES],
                        gk_token_seen *seen, const gk_wire_msg *m,
                        const uint64_t *client, uint64_t now_s, gk_token *out,
                        char *err, size_t errlen);
/* How many bytes a reply to `peer` may have: unlimited once admitted,
 * else the size of the datagram that caused it. */
size_t sv_auth_reply_cap(const gk_server *s, uint32_t peer);
/* The players the CREATE_ROOM token just admitted for `peer` grants
 * (token mode), GK_PLAYERS_MAX in open mode: a room's seats, bots
 * included, stay within it. */
uint32_t sv_auth_create_players(const gk_server *s, uint32_t peer);
/* Sweep: drops connections that had no room request accepted within
 * limits.handshake_ms (counted, logged once per IP per interval). */
void sv_auth_sweep(gk_server *s, uint64_t now_ms);
/* Adds the admission counters to the "stopped" record being built. */
void sv_auth_log_totals(gk_server *s);

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

/* --- gk_server_replay.c: recordings ----------------------------------------
 */

typedef struct sv_rec sv_rec;

/* Starts the room's recording (r->rec); a failure is counted and logged
 * (once per disk fault) and the match is played unrecorded. */
void sv_replay_open(gk_server *s, sv_room *r);
/* Appends a step to the room's recording (in memory), if it has one. */
void sv_replay_step(gk_server *s, sv_room *r, const gk_step_input *in,
                    uint64_t hash);
/* Every step tick of a playing room: hands the blocks so far to a flush
 * job when replays.flush_ms has passed and no job holds the recording. */
void sv_replay_tick(gk_server *s, sv_room *r, uint64_t now);
/* The match ended: the recording leaves the room (r->rec = NULL) and is
 * finished (footer, fsync, rename) on the thread pool. */
void sv_replay_finish(gk_server *s, sv_room *r);
/* The room goes without an end: its recording is removed. */
void sv_replay_drop(gk_server *s, sv_room *r);
/* The steps of the room's recording already in its .tmp into *disk_steps,
 * and a flush job of the rest started now if no job holds it (a desync
 * bundle cuts its replay from the .tmp). Returns 1 while the room has a
 * recording that did not fail, 0 if not (*disk_steps is then 0). */
int sv_replay_flush_now(gk_server *s, sv_room *r, uint64_t *disk_steps);
/* At start: recovers every .gkr.tmp in the replay folder, or moves it
 * aside as .gkr.damaged; never over an existing file (a taken name gets
 * .recovered.gkr or .damaged.N instead); one log line each. */
void sv_replay_recover_dir(gk_server *s);
/* The room's recording's header JSON text (its .tmp's header block, byte
 * for byte) and lockstep record, both owned by the recording, made on the
 * loop when it opened: a desync bundle's job reads the .tmp against the
 * text and writes a header built from the record, without cJSON. Returns
 * 1 (both set; the record may be NULL) while the room has a recording,
 * else 0 (both NULL). */
int sv_replay_header(const sv_room *r, const char **text,
                     const cJSON **lockstep);

/* --- gk_server_delay.c: the input delay --------------------------------- */

typedef struct sv_delay sv_delay;

/* A room's input delay part (r->delay), with the delay chosen from round
 * trips at the start if auto_on. NULL if out of memory. */
sv_delay *sv_delay_new(int auto_on);
/* Frees a room's part (NULL: nothing). */
void sv_delay_free(sv_delay *d);

/* Before the session opens: with "auto", sets r->input_delay from the
 * connected players' round trips (kept in r->delay) and logs nothing
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

/* --- gk_server_rejoin.c: reconnect, rejoin, spectators ------------------
 * A player whose connection drops mid-match keeps its slot for
 * reconnect.hold_ms (the match stalls on it, or plays on with its input
 * neutral: reconnect.while_away); a new connection that presents the room
 * code, the slot and the secret the slot got in RECONNECT_SECRET takes it
 * back and starts from a snapshot of the referee's state. Spectators get
 * a snapshot and then the confirmed steps spectator.delay_steps behind. */

typedef struct sv_rejoin sv_rejoin;
typedef struct sv_spec sv_spec;

/* A room's rejoin part (r->rejoin: reconnect secrets, held slots). NULL
 * if out of memory. */
sv_rejoin *sv_rejoin_new(void);
/* Frees a room's part (NULL: nothing). */
void sv_rejoin_free(sv_rejoin *j);

/* After MATCH_START: a fresh secret per slot (gk_server_random), sent to
 * each player in RECONNECT_SECRET. */
void sv_rejoin_secrets(gk_server *s, sv_room *r);
/* The same for one slot (a late joiner's). */
void sv_rejoin_secret(gk_server *s, sv_room *r, uint32_t slot);
/* The log record of a player who got a snapshot (`event`:
 * player_rejoined, player_joined_late): slot, snapshot_step,
 * snapshot_bytes, next_input, and one more number `key`. */
void sv_log_snapshot_player(gk_server *s, const sv_room *r, const char *event,
                            uint32_t slot, uint64_t step, uint64_t next_input,
                            uint64_t bytes, const char *key, uint64_t value);
/* A player's connection dropped mid-match: 1 if its slot is held (the
 * caller does not remove it), 0 if not (reconnect off, or the end). */
int sv_rejoin_hold(gk_server *s, sv_room *r, uint32_t slot);
/* Every tick of a playing room, before its session's: held slots (expiry
 * -> removal; neutral input) and the spectators' stream. */
void sv_rejoin_tick(gk_server *s, sv_room *r, uint64_t now);
/* Every tick: each spectator's stream (gk_server_spectate.c). */
void sv_spectators_tick(gk_server *s, sv_room *r, uint64_t now);
/* REJOIN_ROOM and SPECTATE from a connection (route.c). */
void sv_on_rejoin(gk_server *s, uint32_t peer, const gk_wire_msg *m);
void sv_on_spectate(gk_server *s, uint32_t peer, const gk_wire_msg *m);
/* A match message (INPUT: acknowledgement and hashes) from a spectator. */
void sv_spectator_msg(gk_server *s, sv_room *r, uint32_t peer,
                      const gk_wire_msg *m);
/* A spectator's connection is gone. */
void sv_spectator_leave(gk_server *s, sv_room *r, uint32_t peer);
/* The match ended: MATCH_END to the spectators too (they are sent the
 * rest of the steps while the room drains). */
void sv_spectators_end(gk_server *s, sv_room *r, uint64_t step, int reason);
/* A STALL or DESYNC notice the room's players got, to its spectators too. */
void sv_spectators_notice(gk_server *s, sv_room *r, const gk_wire_msg *m);
/* Spectators watching the room now. */
uint32_t sv_spectators_count(const sv_room *r);
/* The room goes: its spectators are in no room, the ring is freed. */
void sv_spectators_free(gk_server *s, sv_room *r);
/* After the referee ran a step: kept for the spectators (session_step). */
void sv_spectators_step(sv_room *r, const gk_step_input *in);
/* Sends the referee's state after its last step to `peer` over the
 * reliable channel: SNAPSHOT_BEGIN, then bounded, checksummed chunks
 * (gk_net_chunk.h). *bytes (may be NULL) gets the state's size. Returns 0,
 * GK_ENOMEM, GK_ETOOBIG or the send's code. */
int sv_snapshot_send(gk_server *s, sv_room *r, uint32_t peer, int kind,
                     uint64_t next_input, uint64_t *bytes);
/* --- gk_server_desync.c: desync forensics ---------------------------------
 * A player's first desync at step K: the server asks that peer for its
 * canonical state after K (STATE_REQUEST), regenerates the referee's from
 * the session's history, diffs both by field path, logs one
 * `desync_report` line and writes the bundle <desync.dir>/<room>-<K>-<slot>/
 * (replay.gkr cut at K, referee.state, peer.state, diff.txt, diff.json)
 * on the thread pool. */

typedef struct sv_dsy sv_dsy;

/* From session_desync. Returns 1 if the examination started (with policy
 * "end" the match then ends once the report is written: r->desync_end),
 * 0 if it could not (out of memory: the caller applies the policy now). */
int sv_desync_begin(gk_server *s, sv_room *r, const gk_net_desync *d);
/* STATE_BEGIN or STATE_CHUNK (decode_rc: gk_wire_decode's result; m is
 * read only when it is 0) of `len` bytes from a connection in room r. */
void sv_desync_on_msg(gk_server *s, sv_room *r, uint32_t peer, int decode_rc,
                      const gk_wire_msg *m, size_t len);
/* Every tick of a playing or draining room: answers that timed out, and
 * bundles waiting for the recording to reach the disk. */
void sv_desync_tick(gk_server *s, sv_room *r, uint64_t now);
/* The room goes (sv_room_free, before its config is freed): what it was
 * examining finishes without it. */
void sv_desync_room_free(gk_server *s, sv_room *r);

/* MATCH_START of a playing room for `slot` (room.c builds it). */
void sv_room_match_start(const gk_server *s, const sv_room *r, uint32_t slot,
                         gk_wire_msg *out);

/* --- gk_server_join.c: late join -----------------------------------------
 * JOIN_ROOM on a running match whose genre takes players after the start
 * (gk_sim.late_join): the next fresh slot joins at the next unconfirmed
 * step J (gk_net_session_join), and the joiner gets JOINED, MATCH_START,
 * RECONNECT_SECRET and a snapshot (kind JOIN) as a rejoiner does. */

/* Why a running room cannot take `c` as a late joiner now (0: it can);
 * *why gets the text. */
int sv_join_late_check(const gk_server *s, const sv_room *r, const char **why);
/* Joins `peer` to the running room `r` (sv_join_late_check said 0), or
 * refuses it with an ERROR if the session cannot take it now. */
void sv_join_late(gk_server *s, uint32_t peer, sv_room *r);

#endif
