/* gk_server_config_table.c: every key of gk-server's config, one row each
 * (gk_server_config_schema.h says what a row holds; configs/README.md
 * describes every key for users). One table per JSON object, in the order
 * of the document; a key is added here, with its member in
 * gk_server_config.h, and nowhere else in the reader.
 *
 * The defaults are the rows' own: gk_server_config_default writes them.
 * What depends on more than one key is checked once the whole document is
 * read (gk_server_config_check.c): input_delay_min <= input_delay_max,
 * the window, admin.listen and admin.token_file, reconnect.while_away,
 * the spectator steps, each genre's max_players.
 */
#include "gk_server_config_schema.h"

#include "gk_net_wire.h"

#define OFF(m) offsetof(gk_server_config, m)
#define SZ(m) sizeof(((gk_server_config *)0)->m)

#define UINT(k, m, lo, hi, d)                                                  \
  {                                                                            \
    .key = (k), .kind = SV_CFG_UINT, .off = OFF(m), .size = SZ(m),             \
    .min = (lo), .max = (hi), .def = (d)                                       \
  }
#define STR(k, m, lo, d)                                                       \
  {                                                                            \
    .key = (k), .kind = SV_CFG_STRING, .off = OFF(m), .size = SZ(m),           \
    .min = (lo), .sdef = (d)                                                   \
  }
#define BOOL(k, m, d)                                                          \
  { .key = (k), .kind = SV_CFG_BOOL, .off = OFF(m), .size = SZ(m), .def = (d) }
#define ENUM(k, m, n, d)                                                       \
  {                                                                            \
    .key = (k), .kind = SV_CFG_ENUM, .off = OFF(m), .size = SZ(m),             \
    .names = (n), .def = (d)                                                   \
  }
#define OBJECT(k, t)                                                           \
  { .key = (k), .kind = SV_CFG_OBJECT, .sub = &(t) }
#define END                                                                    \
  { .key = NULL }

/* --- listen, log_level, step_hz, limits, lockstep, stall ----------------- */

static const sv_cfg_row listen_rows[] = {
    STR("host", host, 1, "0.0.0.0"), UINT("port", port, 0, 65535, 7777),
    /* 0: ENet's 256 KiB, see configs/README.md */
    UINT("socket_buffer", socket_buffer, 0, 64u << 20, 0), END};
static const sv_cfg_table listen_table = {listen_rows, 0, NULL};

static const char *const level_names[] = {"debug", "info", "warn", "error",
                                          NULL};

static const sv_cfg_row limits_rows[] = {
    UINT("rooms", max_rooms, 1, GK_SERVER_ROOMS_MAX, 256),
    UINT("players_per_room", max_players, 1, GK_PLAYERS_MAX, 8),
    UINT("peers", max_peers, 1, GK_SERVER_PEERS_MAX, 1024),
    UINT("packet_bytes", max_packet, 64, GK_WIRE_MAX, GK_WIRE_MAX),
    UINT("strikes", strikes, 1, 1000000, 16),
    UINT("lobby_timeout_ms", lobby_timeout_ms, 0, 86400000, 600000),
    /* abuse limits */
    UINT("conns_per_ip", conns_per_ip, 0, GK_SERVER_PEERS_MAX, 128),
    UINT("connects_per_ip_per_s", connects_per_ip_per_s, 0, 100000, 100),
    UINT("creates_per_min", creates_per_min, 0, 100000, 60),
    UINT("handshake_ms", handshake_ms, 0, 600000, 10000),
    UINT("misses_per_ip_per_min", misses_per_ip_per_min, 0, 100000, 30),
    UINT("log_interval_ms", limit_log_ms, 100, 3600000, 10000), END};
static const sv_cfg_table limits_table = {limits_rows, 0, NULL};

static const char *const prediction_names[] = {"genre", "off", "on", NULL};

/* lockstep.prediction as an object (docs/PROTOCOL.md, "Prediction") */
static const sv_cfg_row prediction_rows[] = {
    ENUM("mode", prediction, prediction_names, GK_PREDICT_GENRE),
    UINT("window", prediction_window, 1, 60, 8),
    UINT("rtt_ms", prediction_rtt_ms, 0, 10000, 100), END};
static const sv_cfg_table prediction_table = {prediction_rows,
                                              SV_CFG_LIST | SV_CFG_BRIEF, NULL};

static const sv_cfg_row lockstep_rows[] = {
    /* "auto" (the default) or a fixed delay; 3 when a client asks for 0 */
    {.key = "input_delay",
     .kind = SV_CFG_DELAY,
     .off = OFF(input_delay),
     .size = SZ(input_delay),
     .min = 1,
     .max = 60,
     .aux = OFF(input_delay_auto),
     .def = 3,
     .sdef = "auto"},
    UINT("input_delay_min", input_delay_min, 1, 60, 2),
    UINT("delay_hold_ms", delay_hold_ms, 0, 600000, 2000),
    UINT("delay_every_ms", delay_every_ms, 0, 3600000, 5000),
    UINT("delay_jitter_x", delay_jitter_x, 0, 16, 2),
    UINT("input_delay_max", input_delay_max, 1, 60, 20),
    UINT("lead", lead, 0, 60, 4),
    UINT("window", window, 64, 65536, 256),
    UINT("late_slack_ms", late_slack_ms, 0, 60000, 50),
    UINT("stall_ms", stall_ms, 1, 60000, 100),
    {.key = "prediction",
     .kind = SV_CFG_ENUM,
     .off = OFF(prediction),
     .size = SZ(prediction),
     .names = prediction_names,
     .def = GK_PREDICT_GENRE,
     .sub = &prediction_table},
    END};
static const sv_cfg_table lockstep_table = {lockstep_rows, 0, NULL};

static const sv_cfg_row stall_rows[] = {
    UINT("notice_ms", stall_notice_ms, 1, 3600000, 1000),
    UINT("auto_remove_ms", stall_auto_remove_ms, 0, 3600000, 0), END};
static const sv_cfg_table stall_table = {stall_rows, 0, NULL};

/* --- desync: "report", "end", or an object of these ---------------------- */

static const char *const desync_names[] = {"report", "end", NULL};

static const sv_cfg_row desync_rows[] = {
    ENUM("policy", desync, desync_names, GK_DESYNC_REPORT),
    /* "": <replays.dir>/desyncs */
    {.key = "dir",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_EMPTY,
     .off = OFF(desync_dir),
     .size = SZ(desync_dir),
     .min = 1},
    UINT("timeout_ms", desync_timeout_ms, 1, 600000, 5000),
    UINT("max_state_bytes", desync_max_state_bytes, 1024, 64u << 20, 16u << 20),
    UINT("fields", desync_fields, 1, 64, 8),
    UINT("history_every", desync_history_every, 1, 4096, 64),
    END};
static const sv_cfg_table desync_table = {desync_rows,
                                          SV_CFG_LIST | SV_CFG_BRIEF, NULL};

/* --- replays, timing ----------------------------------------------------- */

static const sv_cfg_row replays_rows[] = {
    BOOL("enabled", replays_enabled, 1), STR("dir", replay_dir, 1, "replays"),
    UINT("flush_ms", replay_flush_ms, 0, 600000, 1000), END};
static const sv_cfg_table replays_table = {replays_rows, 0, NULL};

static const sv_cfg_row timing_rows[] = {
    UINT("service_ms", service_ms, 1, 1000, 5),
    UINT("peer_timeout_ms", peer_timeout_ms, 1000, 600000, 10000),
    UINT("catchup_ticks", catchup_ticks, 1, 1000, 5),
    UINT("ping_ms", ping_ms, 0, 10000, 100), END};
static const sv_cfg_table timing_table = {timing_rows, 0, NULL};

/* --- admin, agones: checked as a whole by sv_cfg_finish ------------------- */

static const sv_cfg_row admin_rows[] = {
    BOOL("enabled", admin.enabled, 0),
    STR("listen", admin.listen, 3, "127.0.0.1:7778"),
    STR("token_file", admin.token_file, 1, NULL),
    UINT("connections", admin.connections, 1, 1024, 32),
    UINT("request_ms", admin.request_ms, 100, 600000, 5000),
    UINT("request_bytes", admin.request_bytes, 4096, 1048576, 16384),
    UINT("headers", admin.headers, 4, 256, 32),
    UINT("late_ms", admin.late_ms, 1, 600000, 250),
    UINT("series_ms", admin.series_ms, 100, 60000, 1000),
    UINT("series_samples", admin.series_samples, 2, 86400, 600),
    END};
static const sv_cfg_table admin_table = {admin_rows, 0, NULL};

static const sv_cfg_row agones_rows[] = {
    BOOL("enabled", agones.enabled, 0), UINT("port", agones.port, 0, 65535, 0),
    UINT("health_ms", agones.health_ms, 100, 600000, 2000), END};
static const sv_cfg_table agones_table = {agones_rows, 0, NULL};

/* --- auth: connect tokens (the key file is read by gk_server_start) ------ */

static const char *const auth_names[] = {"open", "token", NULL};

static const sv_cfg_row auth_rows[] = {
    ENUM("mode", auth_mode, auth_names, GK_AUTH_OPEN),
    STR("key_file", auth_key_file, 1, NULL),
    UINT("replay_cache", auth_replay_cache, 16, 1000000, 8192), END};
static const sv_cfg_table auth_table = {
    auth_rows, SV_CFG_LIST | SV_CFG_EXPECTED, sv_cfg_check_auth};

/* --- websocket: the listener for browser players --------------------------
 * The host is a numeric address (the listener binds a literal), the path
 * begins with '/', an origin has no space or control character (it is
 * compared with the Origin header as bytes). static_dir may be "" (no
 * files); whether it is a directory is the listener's business at start
 * (gk_server_link_ws.c). */

static const sv_cfg_row ws_rows[] = {
    BOOL("enabled", ws.enabled, 0),
    {.key = "host",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(ws.host),
     .size = SZ(ws.host),
     .min = 1,
     .sdef = "0.0.0.0",
     .check = sv_cfg_check_ws_host},
    UINT("port", ws.port, 0, 65535, 7779),
    {.key = "path",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(ws.path),
     .size = SZ(ws.path),
     .min = 1,
     .sdef = "/play",
     .check = sv_cfg_check_ws_path},
    /* none: any Origin (and none) */
    {.key = "origins",
     .kind = SV_CFG_STRINGS,
     .flags = SV_CFG_TOKEN,
     .off = OFF(ws.origins),
     .size = SZ(ws.origins[0]),
     .min = 1,
     .max = GK_SERVER_WS_ORIGINS_MAX,
     .aux = OFF(ws.norigins)},
    /* none: X-Forwarded-For is never read */
    {.key = "trusted_proxies",
     .kind = SV_CFG_STRINGS,
     .flags = SV_CFG_TOKEN,
     .off = OFF(ws.trusted_proxies),
     .size = SZ(ws.trusted_proxies[0]),
     .min = 1,
     .max = GK_SERVER_WS_PROXIES_MAX,
     .aux = OFF(ws.ntrusted_proxies),
     .check = sv_cfg_check_ws_proxies},
    UINT("max_connections", ws.max_connections, 1, GK_SERVER_PEERS_MAX, 256),
    UINT("ping_ms", ws.ping_ms, 0, 60000, 100),
    /* the installed web/ directory; set, it must exist (static_dir_set) */
    {.key = "static_dir",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_NOCTRL | SV_CFG_SEEN,
     .off = OFF(ws.static_dir),
     .size = SZ(ws.static_dir),
     .min = 0,
     .aux = OFF(ws.static_dir_set),
     .sdef = GK_WEB_DIR},
    UINT("static_max_bytes", ws.static_max_bytes, 1024, 1ull << 30, 8u << 20),
    /* where players open the pages; "" = from host and port */
    {.key = "web_url",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(ws.web_url),
     .size = SZ(ws.web_url),
     .min = 0,
     .sdef = "",
     .check = sv_cfg_check_ws_web_url},
    END};
static const sv_cfg_table ws_table = {ws_rows, SV_CFG_LIST | SV_CFG_BRIEF,
                                      NULL};

/* --- reconnect, spectator: checked by sv_cfg_finish ----------------------- */

static const sv_cfg_row reconnect_rows[] = {
    UINT("hold_ms", reconnect_hold_ms, 0, 3600000, 0),
    /* "stall" or "neutral": read into reconnect_neutral at the end */
    STR("while_away", reconnect_while_away, 1, "stall"), END};
static const sv_cfg_table reconnect_table = {reconnect_rows, 0, NULL};

static const sv_cfg_row spectator_rows[] = {
    UINT("delay_steps", spectator_delay_steps, 0, 999, 30),
    UINT("behind_steps", spectator_behind_steps, 1, 1000, 600),
    UINT("per_room", spectator_per_room, 0, 64, 4),
    UINT("max", spectator_max, 0, 4096, 64), END};
static const sv_cfg_table spectator_table = {spectator_rows, 0, NULL};

/* --- fleet: checked as a whole by sv_cfg_check_fleet --------------------- */

static const sv_cfg_row fleet_rows[] = {
    BOOL("enabled", fleet.enabled, 0),
    {.key = "redis",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(fleet.redis),
     .size = SZ(fleet.redis),
     .min = 1,
     .sdef = "127.0.0.1:6379"},
    {.key = "password",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(fleet.password),
     .size = SZ(fleet.password),
     .min = 0},
    {.key = "node",
     .kind = SV_CFG_STRING,
     .off = OFF(fleet.node),
     .size = SZ(fleet.node),
     .min = 1,
     .check = sv_cfg_check_fleet_node},
    {.key = "enet",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(fleet.enet),
     .size = SZ(fleet.enet),
     .min = 3},
    {.key = "ws_url",
     .kind = SV_CFG_STRING,
     .flags = SV_CFG_TOKEN,
     .off = OFF(fleet.ws_url),
     .size = SZ(fleet.ws_url),
     .min = 0},
    UINT("heartbeat_ms", fleet.heartbeat_ms, 100, 60000, 1000),
    UINT("ttl_ms", fleet.ttl_ms, 300, 600000, 5000),
    UINT("max_rooms", fleet.max_rooms, 0, GK_SERVER_ROOMS_MAX, 0),
    END};
static const sv_cfg_table fleet_table = {
    fleet_rows, SV_CFG_LIST | SV_CFG_EXPECTED, sv_cfg_check_fleet};

/* --- the document ----------------------------------------------------------
 */

static const sv_cfg_row top_rows[] = {
    OBJECT("listen", listen_table),
    ENUM("log_level", log_level, level_names, GK_LOG_INFO),
    UINT("step_hz", step_hz, 1, 1000, 60),
    OBJECT("limits", limits_table),
    OBJECT("lockstep", lockstep_table),
    OBJECT("stall", stall_table),
    {.key = "desync",
     .kind = SV_CFG_ENUM,
     .off = OFF(desync),
     .size = SZ(desync),
     .names = desync_names,
     .def = GK_DESYNC_REPORT,
     .sub = &desync_table},
    OBJECT("replays", replays_table),
    UINT("shutdown_grace_ms", shutdown_grace_ms, 0, 600000, 5000),
    OBJECT("timing", timing_table),
    {.key = "genres", .kind = SV_CFG_GENRES},
    OBJECT("admin", admin_table),
    OBJECT("agones", agones_table),
    OBJECT("auth", auth_table),
    OBJECT("websocket", ws_table),
    OBJECT("reconnect", reconnect_table),
    OBJECT("spectator", spectator_table),
    OBJECT("fleet", fleet_table),
    END};

const sv_cfg_table sv_cfg_top = {top_rows, 0, NULL};
