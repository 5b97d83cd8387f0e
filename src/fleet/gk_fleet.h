/* gk_fleet.h: this process as one node of a fleet of gk-server processes
 * that share one room directory in Redis (src/fleet/README.md).
 *
 * The directory says, for each room code, which node holds the room and
 * how clients reach that node (its public ENet address and WebSocket URL),
 * so that any node can answer any code with a REDIRECT. Each node keeps
 * its own entries alive: one heartbeat (a single Lua script, EVALSHA-free
 * EVAL) refreshes the node's key and every room code it holds with a TTL,
 * and re-registers codes Redis lost (a restart). A node that dies stops
 * refreshing; its entries expire within the TTL.
 *
 * Everything is asynchronous on the caller's libuv loop (hiredis with
 * adapters/libuv.h): connecting, AUTH, every command, and reconnecting
 * with backoff. Nothing here blocks, and nothing is called per step or
 * per datagram: only when a room is made or ends, on a lookup (a join at
 * the wrong node), and on the heartbeat timer.
 *
 * Replies are never trusted: a reply of the wrong type or size, or a value
 * that does not parse (someone wrote garbage into a key), is an error
 * (GK_EPARSE for a value, GK_EPROTO for a reply) counted in bad_replies,
 * never a crash. A command unanswered for two heartbeats (a stopped Redis)
 * drops the connection; what was in flight fails with GK_EUNAVAILABLE.
 *
 * Keys: "gk:room:<code>" = "gk1 <node> <enet> <ws_url or ->",
 *       "gk:node:<node>" = "gk1 <enet> <ws_url or -> <rooms> <max_rooms>
 *                           <draining 0/1>",
 *       "gk:pub:<node>" (hash) code -> "gk1 <genre> <taken> <free>
 *                           <lobby|playing>", "gk:pubnodes" (set).
 */
#ifndef GK_FLEET_H
#define GK_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#define GK_FLEET_NODE_MAX 32   /* node id: [A-Za-z0-9_.-] */
#define GK_FLEET_ADDR_MAX 127  /* enet address, ws URL: no space */
#define GK_FLEET_CODE_MAX 16   /* a room code */
#define GK_FLEET_VALUE_MAX 512 /* a directory value, bytes */
#define GK_FLEET_TEXT_MAX 160  /* an error's text */
#define GK_FLEET_GENRE_MAX 32  /* a genre's name: [a-z0-9_-] */
#define GK_FLEET_PUB_MAX 512   /* public rooms the node-local list keeps */
#define GK_FLEET_KIND_MAX 16   /* a quick-play kind: lowercase hex */
/* quick play: a seat promised to a player on its way (a REDIRECT) is kept
 * this long for it */
#define GK_FLEET_RESERVE_MS 10000u

typedef struct gk_fleet gk_fleet;

typedef struct gk_fleet_config {
  const char *host;      /* Redis TCP host (numeric), or NULL/"" */
  uint16_t port;         /* ... its port */
  const char *unix_path; /* or a unix socket; NULL/"" = TCP */
  const char *password;  /* AUTH first; NULL/"" = none */
  const char *node;      /* this node's id */
  const char *enet;      /* "HOST:PORT" clients reach this node at */
  const char *ws_url;    /* "ws://..." or "" */
  uint32_t heartbeat_ms;
  uint32_t ttl_ms;
  uint32_t max_rooms; /* codes this node may hold at once */
} gk_fleet_config;

/* Counters, one X-macro list (name, help for /metrics). */
#define GK_FLEET_STATS(X)                                                      \
  X(connects, "connections to Redis established")                              \
  X(reconnects, "connection attempts after a loss")                            \
  X(disconnects, "connections to Redis lost")                                  \
  X(commands, "commands sent to Redis")                                        \
  X(errors, "directory errors: error replies, refused AUTH, timeouts, bad "    \
            "replies")                                                         \
  X(bad_replies, "replies of the wrong type or size, values that do not "      \
                 "parse")                                                      \
  X(timeouts, "connections dropped for a command unanswered too long")         \
  X(heartbeats, "heartbeats answered")                                         \
  X(lookups, "codes looked up")                                                \
  X(lookups_missed, "codes no node holds")                                     \
  X(lookups_failed, "lookups that failed (unreachable, bad entry)")            \
  X(code_clashes, "codes this node holds that another node took")              \
  X(restored, "codes re-registered after Redis lost them")                     \
  X(reserved, "codes reserved for the pool")                                   \
  X(pool_empty, "rooms made while the pool had no code")                       \
  X(public_refreshes, "public room list refreshes answered")                   \
  X(public_bad, "public room list entries that do not parse (skipped)")        \
  X(quick_asks, "quick-play seats asked of the directory")                     \
  X(quick_seated, "quick-play seats found in a fleet lobby")                   \
  X(quick_created, "quick-play rooms the directory placed on a node")          \
  X(quick_full, "quick-play requests no node had room for")                    \
  X(quick_clashes, "quick-play new room codes already taken")

typedef struct gk_fleet_stats {
#define GK__FLEET_STAT(name, help) uint64_t name;
  GK_FLEET_STATS(GK__FLEET_STAT)
#undef GK__FLEET_STAT
} gk_fleet_stats;

/* Where a code lives: a lookup's answer. */
typedef struct gk_fleet_where {
  char node[GK_FLEET_NODE_MAX + 1];
  char enet[GK_FLEET_ADDR_MAX + 1];
  char ws_url[GK_FLEET_ADDR_MAX + 1]; /* "" if the node takes no WS */
} gk_fleet_where;

/* A public room (options.room.listed) as the fleet's list has it. */
typedef struct gk_fleet_pub {
  char node[GK_FLEET_NODE_MAX + 1];
  char code[GK_FLEET_CODE_MAX + 1];
  char genre[GK_FLEET_GENRE_MAX + 1];
  uint32_t taken, free_seats; /* seats for people: 0..255 each */
  int playing;                /* 0: in the lobby */
} gk_fleet_pub;

/* Quick play's answer: where the seat is. */
typedef struct gk_fleet_seat {
  char code[GK_FLEET_CODE_MAX + 1];
  gk_fleet_where where; /* the room's node */
  int created;          /* 1: a new room; the directory reserved `code` for
                           where.node, which makes the room when the player comes */
} gk_fleet_seat;

/* What the directory tells its owner (on the loop). */
typedef struct gk_fleet_hooks {
  void *user;
  /* A lookup's answer: status 0 (w set), GK_ENOTFOUND (no node holds it;
   * this node's own stale entry counts as none), GK_EUNAVAILABLE (Redis
   * unreachable, or the connection went while it was in flight),
   * GK_EPARSE / GK_EPROTO (a bad entry or reply; text says which), or
   * GK_ECLOSED (the directory was closed). `ctx` is the caller's. */
  void (*found)(void *user, void *ctx, int status, const gk_fleet_where *w,
                const char *text);
  /* Something worth a log line: "fleet_up", "fleet_down", "fleet_error",
   * with a code and a sentence. May be NULL. */
  void (*note)(void *user, const char *event, int code, const char *text);
  /* The directory has closed (after gk_fleet_close). May be NULL. */
  void (*closed)(void *user);
  /* A candidate code for the pool (gk_fleet_take_code): 0 with out set
   * (GK_FLEET_CODE_MAX characters, NUL-terminated), or a code. May be
   * NULL: no pool. */
  int (*make_code)(void *user, char out[GK_FLEET_CODE_MAX + 1]);
  /* This node's public rooms now, at most cap into out (node left
   * empty): published with every heartbeat. May be NULL: none. */
  uint32_t (*listed)(void *user, gk_fleet_pub *out, uint32_t cap);
  /* gk_fleet_quick's answer: status 0 (s set), GK_EFULL (no node takes
   * another room), GK_EEXIST (the candidate code is taken: ask again with
   * another), GK_ELIMIT (create 0 and no lobby fits), GK_EUNAVAILABLE,
   * GK_EPARSE / GK_EPROTO (a bad entry or reply), GK_ECLOSED. May be
   * NULL if gk_fleet_quick is never called. */
  void (*seat)(void *user, void *ctx, int status, const gk_fleet_seat *s,
               const char *text);
} gk_fleet_hooks;

/* Starts connecting (asynchronously; the first heartbeat follows the
 * connection). Copies the config's strings. 0, GK_EINVAL (a missing or
 * oversized field), GK_ENOMEM. */
int gk_fleet_start(uv_loop_t *loop, const gk_fleet_config *cfg,
                   const gk_fleet_hooks *hooks, gk_fleet **out);

/* Stops: no more commands; the connection ends once what is in flight is
 * answered (at most two heartbeats), then hooks.closed. Lookups in flight
 * are answered GK_ECLOSED or their answer. The node's entries expire with
 * their TTL (those of rooms removed before are deleted). */
void gk_fleet_close(gk_fleet *f);

/* 1 if connected and authenticated, else 0. */
int gk_fleet_up(const gk_fleet *f);

/* A room code this node now holds: registered at once when up, else at
 * the next heartbeat after a connection. 0 (also for a code held
 * already: one from gk_fleet_take_code), GK_EINVAL (bad code), GK_EFULL
 * (max_rooms codes held). */
int gk_fleet_room_add(gk_fleet *f, const char *code);
/* The code is this node's no more: deleted if the entry is still ours.
 * 0 or GK_ENOTFOUND (not held). */
int gk_fleet_room_remove(gk_fleet *f, const char *code);
/* Codes held now (rooms, and the pool's reserved codes). */
uint32_t gk_fleet_rooms(const gk_fleet *f);

/* The pool: while up, the directory keeps GK_FLEET_POOL codes from
 * hooks.make_code reserved for this node (SET NX, then refreshed by the
 * heartbeat like a room's), so that a new room takes a code unique in
 * the fleet at once, without waiting for Redis. Takes one into out: 0,
 * or GK_ENOTFOUND (none reserved now: Redis away, or all taken). The
 * code is then a room's: gk_fleet_room_add for it is a no-op, and
 * gk_fleet_room_remove deletes it. */
#define GK_FLEET_POOL 4
int gk_fleet_take_code(gk_fleet *f, char out[GK_FLEET_CODE_MAX + 1]);

/* The node is draining: said in its key at the next heartbeat. */
void gk_fleet_set_draining(gk_fleet *f, int draining);

/* Looks a code up; the answer comes through hooks.found with ctx. 0 (it
 * will come, never before this returns), GK_EUNAVAILABLE (not connected:
 * no answer will come), GK_EINVAL (a code that is no code). */
int gk_fleet_lookup(gk_fleet *f, const char *code, void *ctx);

/* A claim: as gk_fleet_lookup, but this node's own entry is an answer
 * (status 0 with w->node this node's): is a code the directory reserved
 * for a quick-play room this node's? */
int gk_fleet_claim(gk_fleet *f, const char *code, void *ctx);

/* --- quick play (gk_fleet_quick.c) --------------------------------------- */

/* gk_fleet_quick's flags. */
#define GK_FLEET_QUICK_CREATE 1u /* a new room may be made */
#define GK_FLEET_QUICK_WS                                                      \
  2u /* the player is on WebSocket: only nodes                                 \
        that give a WebSocket URL */

/* Asks the directory for a seat in a quick-play lobby of `kind` (the
 * lowercase hex of what the request asks for: gk_room_quick_key) with
 * `seats` seats: the fullest one that has a seat not taken or promised,
 * on a live node that is not draining, or else a new room with code
 * `candidate` on the least-loaded node (one atomic script). The seat is
 * promised (reserved) for GK_FLEET_RESERVE_MS. Without
 * GK_FLEET_QUICK_CREATE no room is made: no lobby fits is GK_ELIMIT (the
 * player may not make a room now: limits.creates_per_min). With
 * GK_FLEET_QUICK_WS a node without a WebSocket URL is neither joined nor
 * given the room. The answer comes through hooks.seat with ctx.
 * 0, GK_EUNAVAILABLE (not connected: no answer will come), GK_EINVAL. */
int gk_fleet_quick(gk_fleet *f, const char *kind, uint32_t seats,
                   const char *candidate, unsigned flags, void *ctx);
/* A quick-play lobby of this node now has `seated` players of `seats`
 * (consume 1: one of them is a player a seat was promised to). 0,
 * GK_EUNAVAILABLE (not connected: nothing sent), GK_EINVAL. */
int gk_fleet_quick_set(gk_fleet *f, const char *kind, const char *code,
                       uint32_t seated, uint32_t seats, int consume);
/* The lobby is no more (its match started, or it closed). */
int gk_fleet_quick_gone(gk_fleet *f, const char *kind, const char *code);

const gk_fleet_stats *gk_fleet_stats_of(const gk_fleet *f);

/* The fleet's public rooms as of the last refresh (one EVAL per
 * heartbeat publishes hooks.listed's rooms under "gk:pub:<node>", a hash
 * code -> gk_fleet_pub_value with the TTL, and reads every node's back):
 * *out is valid until the next call into the directory. Entries that do
 * not parse are skipped and counted (public_bad). Kept while Redis is
 * away (the last refresh). */
uint32_t gk_fleet_public(const gk_fleet *f, const gk_fleet_pub **out);

/* --- directory values (gk_fleet_entry.c: pure, no I/O) ------------------- */

/* Writes a room's value for this node into out (cap bytes). 0 or
 * GK_ETOOBIG. */
int gk_fleet_room_value(const char *node, const char *enet, const char *ws_url,
                        char *out, size_t cap);
/* Parses a room value of len bytes (not NUL-terminated) into w, strictly:
 * "gk1", then exactly node, enet, ws ("-" = none), single spaces, each
 * field within its limits and character set. 0 or GK_EPARSE with a reason
 * in why (cap bytes). */
int gk_fleet_room_parse(const char *v, size_t len, gk_fleet_where *w, char *why,
                        size_t cap);
/* A public room's value: "gk1 <genre> <taken> <free> <lobby|playing>".
 * 0 or GK_ETOOBIG / GK_EINVAL (a field out of its limits). */
int gk_fleet_pub_value(const gk_fleet_pub *p, char *out, size_t cap);
/* Parses a public room's value of len bytes into p's genre, seats and
 * state, strictly (decimal 0..255 without leading zeros). 0 or GK_EPARSE
 * with a reason in why. */
int gk_fleet_pub_parse(const char *v, size_t len, gk_fleet_pub *p, char *why,
                       size_t cap);
/* One entry of the list as Redis returns it (node, code, value; each of
 * its length, not NUL-terminated) into p, strictly. 0 or GK_EPARSE. */
int gk_fleet_pub_entry(const char *node, size_t nlen, const char *code,
                       size_t clen, const char *v, size_t vlen, gk_fleet_pub *p,
                       char *why, size_t cap);
/* 1 if code is 1..GK_FLEET_CODE_MAX of [A-Z0-9]. */
int gk_fleet_code_ok(const char *code);

#endif
