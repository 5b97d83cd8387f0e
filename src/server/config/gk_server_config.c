/* gk_server_config.c: the entry points of the strict JSON config reader
 * (gk_server_config.h): the defaults, parsing a document, the genre
 * lookups and a room's genre config.
 *
 * Every key is a row of the one config table (gk_server_config_table.c,
 * gk_server_config_schema.h says what a row holds), read by the typed
 * readers of gk_server_config_read.c; the keys that must agree are checked
 * once the whole document is read (gk_server_config_check.c); "genres" is
 * walked by gk_server_config_genres.c. Reading a file and the genre
 * libraries it names is gk_server_config_load.c.
 */
#include "gk_server_config.h"

#include <stdio.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_net_wire.h"
#include "gk_server_config_schema.h"

static void desync_default(gk_server_config *c) {
  c->desync = GK_DESYNC_REPORT;
  c->desync_dir[0] = '\0'; /* <replays.dir>/desyncs */
  c->desync_timeout_ms = 5000;
  c->desync_max_state_bytes = 16u << 20;
  c->desync_fields = 8;
  c->desync_history_every = 64;
}

static void ops_default(gk_server_config *c) {
  gk_server_admin_config *a = &c->admin;
  a->enabled = 0;
  snprintf(a->listen, sizeof(a->listen), "127.0.0.1:7778");
  snprintf(a->host, sizeof(a->host), "127.0.0.1");
  a->port = 7778;
  a->loopback = 1;
  a->connections = 32;
  a->request_ms = 5000;
  a->request_bytes = 16384;
  a->headers = 32;
  a->late_ms = 250;
  a->series_ms = 1000;
  a->series_samples = 600;
  c->agones.enabled = 0;
  c->agones.port = 0;
  c->agones.health_ms = 2000;
}

static void ws_default(gk_server_config *c) {
  gk_server_ws_config *w = &c->ws;
  memset(w, 0, sizeof(*w));
  w->enabled = 0;
  snprintf(w->host, sizeof(w->host), "0.0.0.0");
  w->port = 7779;
  snprintf(w->path, sizeof(w->path), "/play");
  w->norigins = 0;
  w->max_connections = 256;
  w->ping_ms = 100;
  snprintf(w->static_dir, sizeof(w->static_dir), "%s", GK_WEB_DIR);
  w->static_dir_set = 0;
}

void gk_server_config_default(gk_server_config *c) {
  memset(c, 0, sizeof(*c));
  snprintf(c->host, sizeof(c->host), "0.0.0.0");
  c->port = 7777;
  c->log_level = GK_LOG_INFO;
  c->step_hz = 60;
  c->max_rooms = 256;
  c->max_players = 8;
  c->max_peers = 1024;
  c->max_packet = GK_WIRE_MAX;
  c->strikes = 16;
  c->lobby_timeout_ms = 600000;
  c->input_delay = 3;
  c->input_delay_max = 20;
  c->lead = 4;
  c->window = 256;
  c->late_slack_ms = 50;
  c->input_delay_auto = 1;
  c->input_delay_min = 2;
  c->delay_hold_ms = 2000;
  c->delay_every_ms = 5000;
  c->delay_jitter_x = 2;
  c->ping_ms = 100;
  c->stall_notice_ms = 1000;
  c->stall_auto_remove_ms = 0;
  desync_default(c);
  c->replays_enabled = 1;
  snprintf(c->replay_dir, sizeof(c->replay_dir), "replays");
  c->replay_flush_ms = 1000;
  c->shutdown_grace_ms = 5000;
  c->service_ms = 5;
  c->socket_buffer = 0; /* ENet's 256 KiB: see configs/README.md */
  c->peer_timeout_ms = 10000;
  c->catchup_ticks = 5;
  c->auth_mode = GK_AUTH_OPEN;
  c->auth_replay_cache = 8192;
  c->conns_per_ip = 128;
  c->connects_per_ip_per_s = 100;
  c->creates_per_min = 60;
  c->handshake_ms = 10000;
  c->limit_log_ms = 10000;
  ops_default(c);
  ws_default(c);
  snprintf(c->reconnect_while_away, sizeof(c->reconnect_while_away), "stall");
  c->spectator_delay_steps = 30;
  c->spectator_behind_steps = 600;
  c->spectator_per_room = 4;
  c->spectator_max = 64;
  for (uint32_t i = 0; gk_genre_at(i) && c->ngenres < GK_SERVER_GENRES_MAX;
       i++) {
    gk_server_genre *g = &c->genres[c->ngenres++];
    g->sim = gk_genre_at(i);
    g->enabled = 1;
    g->max_players = g->sim->players_max < c->max_players ? g->sim->players_max
                                                          : c->max_players;
  }
}

void gk_server_config_free(gk_server_config *c) {
  for (uint32_t i = 0; i < c->ngenres; i++) {
    cJSON_Delete(c->genres[i].options);
    c->genres[i].options = NULL;
  }
}

/* 1-based line and column of byte offset `at`. */
static void line_col(const char *s, size_t at, unsigned *line, unsigned *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at; i++) {
    if (s[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

int gk_server_config_parse(gk_server_config *c, const char *json, size_t len,
                           const char *file, char *err, size_t errlen) {
  sv_cfg_ctx x;
  memset(&x, 0, sizeof(x));
  x.c = c;
  x.file = file ? file : "config";
  x.err = err;
  x.errlen = errlen;
  gk_server_config_default(c);
  if (err && errlen) err[0] = '\0';
  if (len > GK_SERVER_CONFIG_FILE_MAX)
    return sv_cfg_fail(&x, GK_ETOOBIG, NULL, "larger than %u bytes",
                       GK_SERVER_CONFIG_FILE_MAX);
  if (memchr(json, '\0', len))
    return sv_cfg_fail(&x, GK_EPARSE, NULL, "contains a NUL byte");

  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    size_t at =
        end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    unsigned line, col;
    line_col(json, at, &line, &col);
    return sv_cfg_fail(&x, GK_EPARSE, NULL,
                       "invalid JSON at line %u, column %u", line, col);
  }
  /* nothing but whitespace may follow the object */
  size_t at = end ? (size_t)(end - json) : len;
  while (at < len && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
                      json[at] == '\r'))
    at++;
  int rc;
  if (at < len) {
    unsigned line, col;
    line_col(json, at, &line, &col);
    rc = sv_cfg_fail(
        &x, GK_EPARSE, NULL,
        "unexpected text after the JSON value at line %u, column %u", line,
        col);
  } else if (!cJSON_IsObject(root)) {
    rc = sv_cfg_fail(&x, GK_EPARSE, NULL, "must be a JSON object, got %s",
                     gk_config_type_name(root));
  } else {
    rc = sv_cfg_walk(&x, root, &sv_cfg_top, "");
    if (rc == 0) rc = sv_cfg_finish(&x);
  }
  cJSON_Delete(root);
  if (rc) {
    gk_server_config_free(c);
    gk_server_config_default(c);
  }
  return rc;
}

const gk_server_genre *gk_server_config_genre(const gk_server_config *c,
                                              const char *name) {
  for (uint32_t i = 0; i < c->ngenres; i++)
    if (strcmp(c->genres[i].sim->name, name) == 0) return &c->genres[i];
  return NULL;
}

int gk_server_room_config(const gk_server_genre *g, void *cfg,
                          const char *client_json, size_t len, char *err,
                          size_t errlen) {
  const gk_sim *sim = g->sim;
  memset(cfg, 0, sim->config_size);
  sim->config_default(cfg);
  int rc = gk_config_apply(sim, cfg, g->options, "server options", err, errlen);
  if (rc == 0)
    rc = gk_config_apply_text(sim, cfg, client_json, len, "options", err,
                              errlen);
  if (rc && sim->config_free) sim->config_free(cfg);
  return rc;
}
