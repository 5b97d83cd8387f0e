/* gk_server_config.h: gk-server's configuration, read strictly from JSON.
 *
 * The file is one JSON object (configs/server.json; every key is described
 * in configs/README.md). Every key is optional and has a default, but what
 * is present must be exactly right: an unknown key, a duplicate key, a
 * wrong type or a value out of range stops start-up with a message that
 * names the file, the key as a JSON path ("limits.rooms",
 * "genres.survivors.options.max_enemies") and the reason:
 *
 *   configs/server.json: limits.rooms: must be an integer in 1..4096, got 0
 *
 * Genre options are checked the way a room (and every peer) will use
 * them: the options object is applied to the genre's default config by
 * src/config (gk_config_apply: nested objects flatten into dotted keys),
 * so an option the genre does not know or refuses is reported with its
 * path here, at start-up, not when the first room opens.
 *
 * Every key is one row of one table (src/server/config/
 * gk_server_config_table.c: name, kind, bounds, member, default).
 *
 * Parsing is pure (bytes in, struct out: no sockets, no clock), so the
 * same function backs the server, its tests and the config fuzzer. The
 * struct owns heap strings and cJSON option objects: release it with
 * gk_server_config_free.
 */
#ifndef GK_SERVER_CONFIG_H
#define GK_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gk_server_log.h"
#include "gk_sim.h"

#define GK_SERVER_CONFIG_FILE_MAX (1u << 20) /* bytes of config JSON */
#define GK_SERVER_GENRES_MAX 16
#define GK_SERVER_ROOMS_MAX 4096
#define GK_SERVER_PEERS_MAX 4095 /* ENet's own peer limit */
#define GK_SERVER_PATH_MAX 1024
#define GK_SERVER_CONFIG_ERR_MAX 512 /* suggested size of error buffers */

/* Who may ask for rooms ("auth" in the config). */
typedef enum gk_auth_mode {
  GK_AUTH_OPEN = 0, /* anyone who reaches the port (LAN, development) */
  GK_AUTH_TOKEN = 1 /* CREATE_ROOM / JOIN_ROOM need a connect token */
} gk_auth_mode;

typedef enum gk_desync_policy {
  GK_DESYNC_REPORT = 0, /* log and notify the players; the match goes on */
  GK_DESYNC_END = 1     /* end the match at the next step */
} gk_desync_policy;

/* The admin HTTP listener (gk_server_admin.c): health, metrics, rooms,
 * drain, the status page. Off unless admin.enabled. */
typedef struct gk_server_admin_config {
  int enabled;
  char listen[96]; /* "HOST:PORT" as given ("[::1]:7778" for IPv6) */
  char host[64];   /* parsed from listen */
  uint16_t port;   /* parsed from listen; 0 = ephemeral (logged) */
  int loopback;    /* host is 127.0.0.0/8, ::1 or localhost */
  char token_file[GK_SERVER_PATH_MAX]; /* "" = none: mutating endpoints
                                          answer 403 */
  uint32_t connections;                /* HTTP connections at once */
  uint32_t request_ms;                 /* a connection must send a whole request
                                          within this (slow clients are cut) */
  uint32_t request_bytes;  /* per-connection memory for one request */
  uint32_t headers;        /* request headers at most */
  uint32_t late_ms;        /* /healthz: 503 when a tick ran this late
                              within the last two seconds */
  uint32_t series_ms;      /* GET /series: one sample this often */
  uint32_t series_samples; /* ... the last this many kept */
} gk_server_admin_config;

/* The Agones SDK client (gk_server_agones.c). Off unless agones.enabled
 * or AGONES_SDK_HTTP_PORT is set in the environment (gk-server's main). */
typedef struct gk_server_agones_config {
  int enabled;
  uint16_t port;      /* SDK REST port on localhost; 0 = from
                         AGONES_SDK_HTTP_PORT, else 9358 */
  uint32_t health_ms; /* POST /health period */
} gk_server_agones_config;

/* The WebSocket listener for browser players (gk_server_link_ws.c over
 * src/net/gk_net_ws.h). Off unless websocket.enabled. */
#define GK_SERVER_WS_ORIGINS_MAX 8 /* = GK_NET_WS_ORIGINS_MAX */
#define GK_SERVER_WS_STR_MAX 128   /* = GK_NET_WS_STR_MAX, NUL included */
#define GK_SERVER_WS_PROXIES_MAX 16
/* An address block: `bits` leading bits of addr (family 4: the first 4
 * bytes; 6: all 16). */
typedef struct gk_server_net {
  uint8_t family; /* 4 or 6 */
  uint8_t bits;   /* 0..32 or 0..128 */
  uint8_t addr[16];
} gk_server_net;
typedef struct gk_server_ws_config {
  int enabled;
  char host[64];                   /* an IPv4 or IPv6 literal */
  uint16_t port;                   /* TCP; 0 = ephemeral (logged as ws_port) */
  char path[GK_SERVER_WS_STR_MAX]; /* the URL path, "/play" */
  char origins[GK_SERVER_WS_ORIGINS_MAX][GK_SERVER_WS_STR_MAX];
  uint32_t norigins;        /* 0 = any Origin (and none) */
  uint32_t max_connections; /* WebSocket connections at once */
  uint32_t ping_ms;         /* ping every connection this often; 0 = off */
  /* reverse proxies whose X-Forwarded-For is believed (gk_net_ws.h,
   * callbacks.trusted): addresses or CIDR blocks as text, and parsed */
  char trusted_proxies[GK_SERVER_WS_PROXIES_MAX][64];
  uint32_t ntrusted_proxies;
  gk_server_net proxy_nets[GK_SERVER_WS_PROXIES_MAX];
  /* static files on the same port (gk_net_ws.h, "Static files"); "" =
   * none. Default: GK_WEB_DIR, the installed web/ directory
   * (<prefix>/share/gamekit/web): served if it exists, else a warning.
   * Set in the config (static_dir_set), a missing directory stops the
   * start. Relative paths are from the working directory. */
  char static_dir[GK_SERVER_PATH_MAX];
  int static_dir_set;
  /* the largest static file served (larger: 403); the loop thread sends
   * a file from the page cache, so this bounds what one request costs */
  uint64_t static_max_bytes;
  /* The address players open the pages at, "http(s)://...//" ending in
   * '/' (behind a proxy or from a phone: the public one); "" = made from
   * host and port. The `web` log line and /rooms (the status page's watch
   * links) give it. */
  char web_url[GK_SERVER_WS_STR_MAX];
} gk_server_ws_config;

/* lockstep.prediction's modes. */
enum { GK_PREDICT_GENRE = 0, GK_PREDICT_OFF = 1, GK_PREDICT_ON = 2 };

/* The fleet (src/fleet/gk_fleet.h): this process is one node of many
 * sharing one room directory in Redis. Off unless fleet.enabled: no
 * Redis is needed, and nothing changes. */
#define GK_SERVER_FLEET_STR_MAX 128 /* node, enet, ws_url, password */
typedef struct gk_server_fleet_config {
  int enabled;
  char redis[GK_SERVER_PATH_MAX]; /* "HOST:PORT" (numeric host: hiredis 0.14
                                     resolves names blocking) or
                                     "unix:PATH" */
  char redis_host[64];            /* parsed from redis; "" for a socket */
  uint16_t redis_port;
  char redis_unix[GK_SERVER_PATH_MAX];    /* parsed from redis; "" for TCP */
  char password[GK_SERVER_FLEET_STR_MAX]; /* "" = no AUTH */
  char node[GK_SERVER_FLEET_STR_MAX];     /* this node's id: [A-Za-z0-9_.-] */
  char enet[GK_SERVER_FLEET_STR_MAX];     /* "HOST:PORT" clients reach */
  char ws_url[GK_SERVER_FLEET_STR_MAX];   /* "ws://..." / "wss://..."; "" */
  uint32_t heartbeat_ms;                  /* node key and rooms refreshed */
  uint32_t ttl_ms;                        /* ... and expire after this */
  uint32_t max_rooms; /* rooms this node takes; 0 = limits.rooms */
} gk_server_fleet_config;

/* One genre the server offers. */
typedef struct gk_server_genre {
  const gk_sim *sim;    /* from the registry; never NULL once parsed */
  int enabled;          /* rooms may be created for it */
  uint32_t max_players; /* <= the genre's players_max and limits */
  cJSON *options;       /* owned; server defaults applied before the
                           client's options; NULL = genre defaults */
} gk_server_genre;

typedef struct gk_server_config {
  /* listen */
  char host[64]; /* "0.0.0.0", "127.0.0.1", "::" ... */
  uint16_t port; /* 0 = ephemeral (logged as the real port) */
  gk_log_level log_level;
  uint32_t step_hz; /* match steps per second, 1..1000 */
  /* limits */
  uint32_t max_rooms;        /* rooms open at once (lobby + playing) */
  uint32_t max_players;      /* per room, 1..GK_PLAYERS_MAX */
  uint32_t max_peers;        /* ENet connections at once */
  uint32_t max_packet;       /* incoming datagram bytes, 64..GK_WIRE_MAX */
  uint32_t strikes;          /* bad messages before a disconnect */
  uint32_t lobby_timeout_ms; /* a room not started after this is closed;
                                0 = never */
  /* lockstep */
  uint32_t input_delay; /* used when a client asks for 0 */
  uint32_t input_delay_max;
  uint32_t lead;
  uint32_t window;        /* input buffer window (steps) */
  uint32_t late_slack_ms; /* late: this long after a step was due */
  uint32_t stall_ms;      /* a stall, which moves the schedule: this long */
  /* lockstep: the input delay chosen from round trips */
  int input_delay_auto;     /* "auto": chosen at start, changed mid-match */
  uint32_t input_delay_min; /* auto stays within [min, input_delay_max] */
  uint32_t delay_hold_ms;   /* a wanted delay must differ this long */
  uint32_t delay_every_ms;  /* at least this long between two changes */
  uint32_t delay_jitter_x;  /* jitter margin: this many round-trip
                               variances */
  uint32_t ping_ms;         /* timing: ping every connection this often */
  /* lockstep.prediction: "genre" (the genre's gk_sim.prediction), "off",
   * "on" (GK_PREDICT_*), or an object with mode, window, rtt_ms */
  int prediction;
  uint32_t prediction_window; /* W: a head at most this far past confirmed;
                                 MATCH_START's lead in a predicting room */
  uint32_t prediction_rtt_ms; /* round trip the heads cover without delay */
  /* stall */
  uint64_t stall_notice_ms;
  uint64_t stall_auto_remove_ms; /* 0 = off (the host decides) */
  gk_desync_policy desync;
  /* replays */
  int replays_enabled;
  char replay_dir[GK_SERVER_PATH_MAX];
  uint32_t replay_flush_ms; /* write + fdatasync a recording's blocks this
                               often (thread pool); 0 = only at the end */
  /* shutdown and timing */
  uint32_t shutdown_grace_ms;
  uint32_t service_ms;      /* ENet service timer */
  uint32_t socket_buffer;   /* UDP socket buffers, bytes (0: ENet's) */
  uint32_t peer_timeout_ms; /* ENet peer timeout */
  uint32_t catchup_ticks;   /* see gk_server.h: step timer */
  /* genres */
  gk_server_genre genres[GK_SERVER_GENRES_MAX];
  uint32_t ngenres;
  /* operations: admin listener, Agones */
  gk_server_admin_config admin;
  gk_server_agones_config agones;
  gk_server_ws_config ws; /* "websocket" */
  gk_server_fleet_config fleet;
  /* auth (tokens): the key file is read by gk_server_start, not here */
  gk_auth_mode auth_mode;
  char auth_key_file[GK_SERVER_PATH_MAX]; /* required in token mode */
  uint32_t auth_replay_cache; /* admitted token ids kept until expiry */
  /* abuse limits, in "limits"; 0 = off */
  uint32_t conns_per_ip;          /* connections at once from one IP */
  uint32_t connects_per_ip_per_s; /* new connections per IP per second */
  uint32_t creates_per_min;       /* rooms created per client id (token
                                     mode) or per IP (open mode) */
  uint32_t handshake_ms;          /* a connection with no accepted room
                                     request by then is dropped */
  uint32_t misses_per_ip_per_min; /* room requests for unknown codes per
                                     IP per minute; more are refused */
  uint32_t limit_log_ms;          /* a refusal is logged once per source
                                     and limit per this interval */
  /* reconnect and spectators (reconnect_finish checks them) */
  uint32_t reconnect_hold_ms;      /* a dropped player's slot is held this
                                      long; 0 = removed at once (as before) */
  char reconnect_while_away[16];   /* "stall" or "neutral" */
  int reconnect_neutral;           /* parsed from reconnect_while_away */
  uint32_t spectator_delay_steps;  /* behind the confirmed head */
  uint32_t spectator_behind_steps; /* further behind: a newer snapshot */
  uint32_t spectator_per_room;     /* 0 = no spectators */
  uint32_t spectator_max;          /* per server */
  /* desync forensics ("desync" as an object) */
  char desync_dir[GK_SERVER_PATH_MAX]; /* bundles <dir>/<room>-<step>-<slot>/;
                                          "" = <replay_dir>/desyncs */
  uint32_t desync_timeout_ms;          /* wait this long for the peer's state */
  uint32_t desync_max_state_bytes;     /* a larger peer state is refused */
  uint32_t desync_fields;              /* differing fields in the report */
  uint32_t desync_history_every;       /* referee: steps between snapshots */
} gk_server_config;

/* Fills c with the defaults: every registered genre enabled with its
 * default options. Owns nothing yet (free is still fine). */
void gk_server_config_default(gk_server_config *c);

/* Parses `len` bytes of JSON over the defaults. `file` names the source in
 * messages (may be NULL: "config"). Returns 0, or GK_EPARSE (not JSON, or
 * not an object), GK_ENOTFOUND (unknown key or genre), GK_EINVAL (wrong
 * type, duplicate key), GK_ERANGE (out of range) or GK_ETOOBIG, with the
 * message in err. On failure c is left at the defaults. */
int gk_server_config_parse(gk_server_config *c, const char *json, size_t len,
                           const char *file, char *err, size_t errlen);

/* Reads the file (at most GK_SERVER_CONFIG_FILE_MAX bytes) and parses it.
 * GK_ENOTFOUND / GK_EIO / GK_ETOOBIG if it cannot be read. */
int gk_server_config_load(gk_server_config *c, const char *path, char *err,
                          size_t errlen);

void gk_server_config_free(gk_server_config *c);

/* 1 if `sa` (sockaddr_in or sockaddr_in6; an IPv4-mapped IPv6 address
 * counts as its IPv4 one) lies in one of websocket.trusted_proxies. */
struct sockaddr;
int gk_server_config_proxy(const gk_server_config *c,
                           const struct sockaddr *sa);

/* The entry for a genre name, or NULL if the server does not know it. */
const gk_server_genre *gk_server_config_genre(const gk_server_config *c,
                                              const char *name);

/* Builds a room's genre config: defaults, then the server's options for
 * the genre, then the client's options (JSON object text of at most
 * `len` bytes; NULL or empty = none), both through src/config
 * (gk_config.h; messages name keys as "options.<key>"). cfg holds
 * sim->config_size bytes; on success the caller releases it with
 * sim->config_free (if non-NULL); on failure it needs no release. */
int gk_server_room_config(const gk_server_genre *g, void *cfg,
                          const char *client_json, size_t len, char *err,
                          size_t errlen);

#endif
