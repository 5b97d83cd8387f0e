/* gk_server_admin.c: the admin HTTP listener (see gk_server_ops.h).
 *
 * HTTP is libmicrohttpd's (Debian's libmicrohttpd12): a maintained parser
 * and connection state machine, so no request is parsed by hand here. It
 * runs without threads of its own (MHD_USE_EPOLL): its epoll descriptor
 * sits under a uv_poll on the server's loop, a uv_timer fires at
 * MHD_get_timeout, and MHD_run is called after each, so every handler
 * runs on the loop thread, between two step-timer ticks, like the ENet
 * callbacks do.
 *
 * Bounds: connections at once (admin.connections), memory per connection
 * (admin.request_bytes: a request whose headers do not fit is answered
 * 431 by MHD), request headers (admin.headers: more are answered 431),
 * a request body (none is read; more than 4 KiB announced is 413), and
 * time: a connection must send a whole request within admin.request_ms
 * of connecting or of its last answer, or it is cut (a client trickling
 * one byte a second keeps MHD's idle timer alive, so a sweep timer shuts
 * such sockets down; MHD then closes them).
 *
 * Endpoints (JSON unless said otherwise):
 *   GET  /                    the status page (HTML, from the binary)
 *   GET  /healthz             text: 200 "ok", or 503 and the reason
 *   GET  /metrics             Prometheus text (gk_server_metrics.c)
 *   GET  /rooms, /rooms/CODE  rooms and their figures
 *   GET  /rooms/public[?genre=NAME]  the listed (public) rooms: genre,
 *                             code, seats taken and free, state, node
 *                             (gk_server_public.c; the WebSocket port
 *                             answers it too, for browsers)
 *   GET  /series[?since=SEQ]  the last minutes of the main figures, for the
 *                             page's charts (gk_server_series.c)
 *   POST /rooms/CODE/end, /rooms/CODE/players/SLOT/remove, /drain
 * The POSTs need "Authorization: Bearer <admin.token_file's token>"
 * (401 without or with a wrong one; 403 when no token file is set).
 * The GETs need none. A query string is refused (400) except /series'
 * since and /rooms/public's genre.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "gk_err.h"
#include "gk_server_internal.h"
#include "gk_server_status_html.h"

#define TOKEN_MAX 256
#define TOKEN_MIN 16
#define BODY_MAX 4096 /* bytes a request may announce (none is read) */
#define SWEEP_MS 200u
#define METRICS_START 16384u

typedef struct conn_slot {
  struct MHD_Connection *c; /* NULL = free */
  uint64_t deadline_ms;     /* UINT64_MAX while a request is answered */
} conn_slot;

typedef struct sv_admin {
  gk_server *s;
  struct MHD_Daemon *d;
  uv_poll_t poll;
  uv_timer_t timer, sweep, sample;
  int open; /* uv handles not yet closed */
  int closing;
  uint16_t port;
  char token[TOKEN_MAX + 1];
  size_t token_len; /* 0 = no token file */
  conn_slot *slots;
  uint32_t nslots;
  char mhd_err[160]; /* libmicrohttpd's last error message, for the log */
  sv_series series;  /* over ring, admin.series_samples entries */
  sv_series_sample *ring;
} sv_admin;

/* --- answers ------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status,
                              const char *type, const char *body, size_t len,
                              enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, (void *)body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE) free((void *)body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type);
  MHD_add_response_header(r, "Cache-Control", "no-store");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, "Allow", body[0] == '{' ? "POST" : "GET, HEAD");
  if (status == MHD_HTTP_UNAUTHORIZED)
    MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

/* A JSON object (consumed). */
static enum MHD_Result answer_json(struct MHD_Connection *c, unsigned status,
                                   cJSON *j) {
  char *body = sv_json_text(j);
  if (!body)
    return answer(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
                  "out of memory\n", 14, MHD_RESPMEM_PERSISTENT);
  /* MHD_RESPMEM_MUST_FREE: the response (or answer, on failure) frees it */
  return answer(c, status, "application/json", body, strlen(body), // NOLINT
                MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result fail(struct MHD_Connection *c, unsigned status,
                            const char *why) {
  cJSON *j = cJSON_CreateObject();
  if (j) cJSON_AddStringToObject(j, "error", why);
  return answer_json(c, status, j);
}

/* --- reading ------------------------------------------------------------- */

static const char *const state_names[] = {"?", "lobby", "playing", "draining"};

static cJSON *room_json(const gk_server *s, const gk_room *r, int detail) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  gk_room_view v;
  gk_room_view_of(r, &v);
  cJSON_AddStringToObject(j, "code", v.code);
  char shown[GK_WIRE_CODE_LEN + 1];
  if (gk_wire_code_shown(v.code, shown) != 0)
    memcpy(shown, v.code, sizeof(shown));
  cJSON_AddStringToObject(j, "shown", shown); /* as people read it */
  cJSON_AddStringToObject(j, "genre", v.genre);
  cJSON_AddStringToObject(j, "state", state_names[v.state & 3]);
  cJSON_AddNumberToObject(j, "max_players", v.max_players);
  cJSON_AddNumberToObject(j, "input_delay", v.input_delay);
  cJSON_AddNumberToObject(j, "step", (double)v.steps);
#define SV_ROOM_FIGURE(name, kind, help)                                       \
  cJSON_AddNumberToObject(j, #name, (double)v.name);
  GK_ROOM_SCHEDULE(SV_ROOM_FIGURE)
#undef SV_ROOM_FIGURE
  cJSON_AddNumberToObject(j, "late_share",
                          v.steps_confirmed
                              ? (double)v.steps_late / (double)v.steps_confirmed
                              : 0.0);
  cJSON_AddNumberToObject(j, "desyncs", (double)v.desyncs);
  cJSON_AddNumberToObject(j, "spectators", v.spectators);
  cJSON *pl = cJSON_AddArrayToObject(j, "players");
  for (uint32_t i = 0; pl && i < v.nslots; i++) {
    cJSON *p = cJSON_CreateObject();
    if (!p) break;
    cJSON_AddNumberToObject(p, "slot", i);
    const char *name = gk_room_slot_name(r, i);
    if (name)
      cJSON_AddStringToObject(p, "name", name);
    else
      cJSON_AddNullToObject(p, "name");
    cJSON_AddBoolToObject(p, "connected", v.conn[i] != SV_NO_CONN);
    int bot = (v.bot_mask >> i & 1u) != 0; /* the server's */
    const char *kind = bot ? "bot" : sv_conn_kind(s, v.conn[i]); /* "enet" */
    if (kind)
      cJSON_AddStringToObject(p, "transport", kind);
    else
      cJSON_AddNullToObject(p, "transport");
    cJSON_AddBoolToObject(p, "active", (v.active_mask >> i & 1u) != 0);
    cJSON_AddItemToArray(pl, p);
  }
  if (detail) {
    cJSON_AddNumberToObject(j, "packets_in", (double)v.packets_in);
    cJSON_AddNumberToObject(j, "packets_out", (double)v.packets_out);
    cJSON_AddNumberToObject(j, "drops", (double)v.drops);
    cJSON_AddNumberToObject(j, "strikes", (double)v.strikes);
    cJSON *opts = cJSON_Parse(v.options);
    if (opts) cJSON_AddItemToObject(j, "options", opts);
    cJSON_AddStringToObject(j, "replay", v.replay ? v.replay : "");
  }
  return j;
}

static enum MHD_Result get_rooms(sv_admin *a, struct MHD_Connection *c) {
  gk_server *s = a->s;
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = j ? cJSON_AddArrayToObject(j, "rooms") : NULL;
  if (!arr) {
    cJSON_Delete(j);
    return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  }
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++)
    if (s->rooms[i]) cJSON_AddItemToArray(arr, room_json(s, s->rooms[i], 0));
  cJSON_AddNumberToObject(j, "count", s->host.nrooms);
  cJSON_AddNumberToObject(j, "limit", s->cfg->max_rooms);
  cJSON_AddBoolToObject(j, "draining", s->host.shutting_down);
  uint16_t ws = sv_ws_port(s);
  cJSON *w = ws ? cJSON_AddObjectToObject(j, "websocket")
                : cJSON_AddNullToObject(j, "websocket");
  if (ws && w) {
    cJSON_AddNumberToObject(w, "port", ws);
    cJSON_AddBoolToObject(w, "static", sv_ws_static_root(s) != NULL);
    /* the configured pages' address only: a made-up one names this
     * machine's loopback, no use to a browser elsewhere */
    if (s->cfg->ws.web_url[0])
      cJSON_AddStringToObject(w, "url", s->cfg->ws.web_url);
    else
      cJSON_AddNullToObject(w, "url");
  }
  return answer_json(c, MHD_HTTP_OK, j);
}

/* One query argument: counted, and since= or genre= read; anything else
 * is wrong (the route decides which of the two it takes). */
typedef struct query {
  int n, bad;
  int since_set, genre_set;
  uint64_t since;
  char genre[GK_WIRE_GENRE_MAX + 1];
  char name[48];
} query;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind,
                              const char *key, const char *value) {
  query *q = cls;
  (void)kind;
  q->n++;
  if (strcmp(key, "since") == 0 && !q->since_set && value && value[0] >= '0' &&
      value[0] <= '9') {
    char *end = NULL;
    errno = 0;
    q->since = strtoull(value, &end, 10);
    q->since_set = !*end && errno == 0;
    if (q->since_set) return MHD_YES;
  }
  if (!q->genre_set && sv_public_genre_arg(key, value, q->genre)) {
    q->genre_set = 1;
    return MHD_YES;
  }
  if (!q->bad) snprintf(q->name, sizeof(q->name), "%s", key);
  q->bad = 1;
  return MHD_YES;
}

static enum MHD_Result get_public(sv_admin *a, struct MHD_Connection *c,
                                  const query *q) {
  cJSON *j = sv_fleet_public_rooms(a->s, q->genre_set ? q->genre : NULL);
  if (!j) return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  return answer_json(c, MHD_HTTP_OK, j);
}

static enum MHD_Result get_series(sv_admin *a, struct MHD_Connection *c,
                                  const query *q) {
  uint64_t from = q->since_set ? q->since + 1 : 0;
  if (q->since_set && q->since == UINT64_MAX) from = UINT64_MAX;
  cJSON *j = sv_series_json(&a->series, from);
  if (!j) return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  return answer_json(c, MHD_HTTP_OK, j);
}

static enum MHD_Result get_metrics(sv_admin *a, struct MHD_Connection *c) {
  size_t cap = METRICS_START;
  for (int tries = 0; tries < 4; tries++) {
    char *buf = malloc(cap);
    if (!buf) break;
    size_t n = sv_metrics_write(a->s, buf, cap);
    if (n < cap)
      return answer(c, MHD_HTTP_OK, "text/plain; version=0.0.4", buf, n,
                    MHD_RESPMEM_MUST_FREE);
    free(buf);
    cap = n + 1;
  }
  return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
}

static enum MHD_Result get_healthz(sv_admin *a, struct MHD_Connection *c) {
  gk_server *s = a->s;
  char why[160];
  uint64_t late = sv_metrics_recent_late_ns(s, uv_hrtime());
  uint64_t limit = (uint64_t)s->cfg->admin.late_ms * 1000000u;
  int n;
  unsigned status = MHD_HTTP_SERVICE_UNAVAILABLE;
  if (s->host.shutting_down)
    n = snprintf(why, sizeof(why), "%s\n",
                 s->host.draining ? "draining" : "shutting down");
  else if (late > limit)
    n = snprintf(why, sizeof(why),
                 "step timer late: %llu ms in the last seconds (limit %u)\n",
                 (unsigned long long)(late / 1000000u), s->cfg->admin.late_ms);
  else if (!sv_fleet_reachable(s)) /* local play goes on: still 200 */
    n = snprintf(why, sizeof(why),
                 "ok; room directory unreachable: local rooms play on, "
                 "other nodes' rooms cannot be joined\n"),
    status = MHD_HTTP_OK;
  else
    n = snprintf(why, sizeof(why), "ok\n"), status = MHD_HTTP_OK;
  return answer(c, status, "text/plain; charset=utf-8", why,
                n > 0 ? (size_t)n : 0, MHD_RESPMEM_MUST_COPY);
}

/* --- acting -------------------------------------------------------------- */

static void log_action(gk_server *s, const char *action, const char *code,
                       int rc) {
  if (gk_log_begin(s->log, GK_LOG_INFO, "admin_action", code)) {
    gk_log_str(s->log, "action", action);
    gk_log_err(s->log, "code", rc);
    gk_log_end(s->log);
  }
}

static enum MHD_Result post_end(sv_admin *a, struct MHD_Connection *c,
                                gk_room *r) {
  gk_server *s = a->s;
  char code[GK_WIRE_CODE_LEN + 1];
  memcpy(code, gk_room_code(r), sizeof(code));
  cJSON *j = cJSON_CreateObject();
  if (j) cJSON_AddStringToObject(j, "code", code);
  if (gk_room_state_of(r) == GK_ROOM_LOBBY) {
    log_action(s, "end", code, 0);
    gk_room_end_lobby(r, sv_room_now(s)); /* frees r */
    if (j) cJSON_AddStringToObject(j, "result", "lobby closed");
    return answer_json(c, MHD_HTTP_OK, j);
  }
  int rc = gk_room_end_match(r, GK_WIRE_END_HOST, sv_room_now(s));
  log_action(s, "end", code, rc);
  cJSON_Delete(j);
  if (rc)
    return fail(c, MHD_HTTP_CONFLICT,
                rc == GK_ECLOSED ? "the match has ended already"
                                 : gk_strerror(rc));
  j = cJSON_CreateObject();
  if (j) {
    cJSON_AddStringToObject(j, "code", code);
    cJSON_AddStringToObject(j, "result", "the match ends at its next step");
  }
  return answer_json(c, MHD_HTTP_ACCEPTED, j);
}

static enum MHD_Result post_remove(sv_admin *a, struct MHD_Connection *c,
                                   gk_room *r, const char *slot_text) {
  gk_server *s = a->s;
  char *end = NULL;
  unsigned long slot = strtoul(slot_text, &end, 10);
  if (!slot_text[0] || *end || slot_text[0] == '-' || slot_text[0] == '+' ||
      slot >= GK_PLAYERS_MAX)
    return fail(c, MHD_HTTP_NOT_FOUND, "no such slot in this room");
  uint64_t at = 0;
  int rc = gk_room_remove(r, (uint32_t)slot, &at, sv_room_now(s));
  if (rc == GK_ERANGE)
    return fail(c, MHD_HTTP_NOT_FOUND, "no such slot in this room");
  if (rc == GK_ESTATE || rc == GK_ECLOSED)
    return fail(c, MHD_HTTP_CONFLICT,
                rc == GK_ESTATE ? "the match has not started"
                                : "the match has ended");
  log_action(s, "remove", gk_room_code(r), rc);
  if (rc)
    return fail(c, MHD_HTTP_CONFLICT,
                rc == GK_EPERM ? "that player is already out"
                               : gk_strerror(rc));
  cJSON *j = cJSON_CreateObject();
  if (j) {
    cJSON_AddStringToObject(j, "code", gk_room_code(r));
    cJSON_AddNumberToObject(j, "slot", (double)slot);
    cJSON_AddNumberToObject(j, "step", (double)at);
  }
  return answer_json(c, MHD_HTTP_ACCEPTED, j);
}

static enum MHD_Result post_drain(sv_admin *a, struct MHD_Connection *c) {
  gk_server *s = a->s;
  int rc = sv_server_drain(s);
  log_action(s, "drain", NULL, rc);
  if (rc) return fail(c, MHD_HTTP_CONFLICT, "already draining or stopping");
  cJSON *j = cJSON_CreateObject();
  if (j) {
    cJSON_AddBoolToObject(j, "draining", 1);
    cJSON_AddNumberToObject(j, "rooms", s->host.nrooms);
  }
  return answer_json(c, MHD_HTTP_ACCEPTED, j);
}

/* --- routing ------------------------------------------------------------- */

/* 1 if the request carries the bearer token (constant time in its
 * bytes). */
static int authorised(const sv_admin *a, struct MHD_Connection *c) {
  const char *h =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  if (!h || strncmp(h, "Bearer ", 7) != 0) return 0;
  const char *t = h + 7;
  size_t n = strlen(t);
  unsigned char diff = n != a->token_len;
  for (size_t i = 0; i < a->token_len; i++)
    diff |= (unsigned char)(a->token[i] ^ (i < n ? t[i] : 0));
  return diff == 0;
}

/* Splits "/rooms/CODE[/rest]" into the room and rest; NULL room = not a
 * room path. */
static int room_path(gk_server *s, const char *url, gk_room **r,
                     const char **rest) {
  if (strncmp(url, "/rooms/", 7) != 0) return 0;
  const char *code = url + 7;
  const char *slash = strchr(code, '/');
  size_t len = slash ? (size_t)(slash - code) : strlen(code);
  *rest = slash ? slash : "";
  char buf[GK_WIRE_CODE_LEN + 1];
  *r = NULL;
  if (len == GK_WIRE_CODE_LEN) {
    memcpy(buf, code, len);
    buf[len] = '\0';
    if (gk_wire_code_valid(buf)) *r = sv_room_find(s, buf);
  }
  return 1;
}

typedef enum route {
  R_NONE,
  R_PAGE,
  R_HEALTH,
  R_METRICS,
  R_ROOMS,
  R_PUBLIC,
  R_SERIES,
  R_ROOM,
  R_END,
  R_REMOVE,
  R_DRAIN
} route;

/* num (4 bytes) receives the slot of a remove path. */
static route classify(gk_server *s, const char *url, gk_room **r, char *num) {
  const char *rest = NULL;
  if (strcmp(url, "/") == 0) return R_PAGE;
  if (strcmp(url, "/healthz") == 0) return R_HEALTH;
  if (strcmp(url, "/metrics") == 0) return R_METRICS;
  if (strcmp(url, "/rooms") == 0) return R_ROOMS;
  if (strcmp(url, "/rooms/public") == 0) return R_PUBLIC;
  if (strcmp(url, "/series") == 0) return R_SERIES;
  if (strcmp(url, "/drain") == 0) return R_DRAIN;
  if (!room_path(s, url, r, &rest)) return R_NONE;
  if (!rest[0]) return R_ROOM;
  if (strcmp(rest, "/end") == 0) return R_END;
  if (strncmp(rest, "/players/", 9) == 0) {
    const char *sl = rest + 9, *e = strchr(sl, '/');
    if (e && strcmp(e, "/remove") == 0 && e - sl < 4) {
      memcpy(num, sl, (size_t)(e - sl));
      num[e - sl] = '\0';
      return R_REMOVE;
    }
  }
  return R_NONE;
}

static enum MHD_Result dispatch(sv_admin *a, struct MHD_Connection *c,
                                const char *url, const char *method) {
  gk_room *r = NULL;
  char slot[4] = "";
  route rt = classify(a->s, url, &r, slot);
  int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  int post = strcmp(method, "POST") == 0;
  if (rt == R_NONE) return fail(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
  int mutating = rt == R_END || rt == R_REMOVE || rt == R_DRAIN;
  if (mutating ? !post : !get)
    return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                  mutating ? "application/json" : "text/plain",
                  mutating ? "{\"error\":\"use POST\"}\n" : "use GET or HEAD\n",
                  mutating ? 21 : 16, MHD_RESPMEM_PERSISTENT);
  if (mutating && !a->token_len)
    return fail(c, MHD_HTTP_FORBIDDEN,
                "admin actions need admin.token_file in the config");
  if (mutating && !authorised(a, c))
    return fail(c, MHD_HTTP_UNAUTHORIZED, "missing or wrong bearer token");
  query q;
  memset(&q, 0, sizeof(q));
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &q);
  if (q.n && rt != R_SERIES && rt != R_PUBLIC)
    return fail(c, MHD_HTTP_BAD_REQUEST, "this endpoint takes no query");
  if (q.bad || (rt == R_SERIES && q.genre_set) ||
      (rt == R_PUBLIC && q.since_set)) {
    char why[128];
    snprintf(why, sizeof(why), "bad query argument \"%s\": %s",
             q.bad            ? q.name
             : rt == R_SERIES ? "genre"
                              : "since",
             rt == R_SERIES ? "/series takes since=SEQ only" : SV_PUBLIC_QUERY);
    return fail(c, MHD_HTTP_BAD_REQUEST, why);
  }
  if ((rt == R_ROOM || rt == R_END || rt == R_REMOVE) && !r)
    return fail(c, MHD_HTTP_NOT_FOUND, "no room with that code");
  switch (rt) {
  case R_PAGE:
    return answer(c, MHD_HTTP_OK, "text/html; charset=utf-8", sv_status_html,
                  sizeof(sv_status_html) - 1, MHD_RESPMEM_PERSISTENT);
  case R_HEALTH:
    return get_healthz(a, c);
  case R_METRICS:
    return get_metrics(a, c);
  case R_ROOMS:
    return get_rooms(a, c);
  case R_PUBLIC:
    return get_public(a, c, &q);
  case R_SERIES:
    return get_series(a, c, &q);
  case R_ROOM:
    return answer_json(c, MHD_HTTP_OK, room_json(a->s, r, 1));
  case R_END:
    return post_end(a, c, r);
  case R_REMOVE:
    return post_remove(a, c, r, slot);
  case R_DRAIN:
    return post_drain(a, c);
  case R_NONE:
    break;
  }
  return MHD_NO;
}

static conn_slot *slot_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req) {
  sv_admin *a = cls;
  (void)version;
  (void)upload;
  if (*req) { /* a body after the answer was queued: not read */
    *upload_size = 0;
    return MHD_YES;
  }
  *req = a;
  conn_slot *sl = slot_of(c);
  if (sl) sl->deadline_ms = UINT64_MAX; /* a whole request came in */
  a->s->metrics.http_requests++;
  int headers = MHD_get_connection_values(c, MHD_HEADER_KIND, NULL, NULL);
  if (headers < 0 || (uint32_t)headers > a->s->cfg->admin.headers)
    return fail(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
                "too many request headers");
  const char *cl =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
  const char *te =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
  if (te || (cl && strtoull(cl, NULL, 10) > BODY_MAX))
    return fail(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
  return dispatch(a, c, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
                         enum MHD_RequestTerminationCode toe) {
  sv_admin *a = cls;
  (void)req;
  (void)toe;
  conn_slot *sl = slot_of(c);
  if (sl) sl->deadline_ms = sv_now_ms(a->s) + a->s->cfg->admin.request_ms;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
                          enum MHD_ConnectionNotificationCode toe) {
  sv_admin *a = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    for (uint32_t i = 0; i < a->nslots; i++) {
      if (a->slots[i].c) continue;
      a->slots[i].c = c;
      a->slots[i].deadline_ms = sv_now_ms(a->s) + a->s->cfg->admin.request_ms;
      *ctx = &a->slots[i];
      return;
    }
    *ctx = NULL; /* cannot happen: MHD keeps to the same limit */
  } else if (*ctx) {
    ((conn_slot *)*ctx)->c = NULL;
    *ctx = NULL;
  }
}

/* --- the loop side ------------------------------------------------------- */

static void on_timer(uv_timer_t *t);

static void run(sv_admin *a) {
  if (a->closing) return;
  MHD_run(a->d);
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (MHD_get_timeout(a->d, &ms) == MHD_YES)
    uv_timer_start(&a->timer, on_timer, ms > 60000 ? 60000 : ms, 0);
  else
    uv_timer_stop(&a->timer);
}

static void on_timer(uv_timer_t *t) {
  run(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  run(p->data);
}

/* Cuts connections that have not sent a whole request in time. */
static void on_sweep(uv_timer_t *t) {
  sv_admin *a = t->data;
  uint64_t now = sv_now_ms(a->s);
  int cut = 0;
  for (uint32_t i = 0; i < a->nslots; i++) {
    conn_slot *sl = &a->slots[i];
    if (!sl->c || sl->deadline_ms > now) continue;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(sl->c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci) shutdown(ci->connect_fd, SHUT_RDWR);
    sl->deadline_ms = UINT64_MAX;
    a->s->metrics.http_cut++;
    cut = 1;
  }
  if (cut) run(a);
}

static void on_closed(uv_handle_t *h) {
  sv_admin *a = h->data;
  gk_server *s = a->s;
  s->handles--;
  if (--a->open == 0) {
    free(a->ring);
    free(a->slots);
    free(a);
    s->admin = NULL;
  }
  sv_maybe_free(s);
}

void sv_admin_close(gk_server *s) {
  sv_admin *a = s->admin;
  if (!a || a->closing) return;
  a->closing = 1;
  uv_poll_stop(&a->poll); /* before MHD closes the descriptor */
  if (a->d) MHD_stop_daemon(a->d);
  a->d = NULL;
  uv_close((uv_handle_t *)&a->poll, on_closed);
  uv_close((uv_handle_t *)&a->timer, on_closed);
  uv_close((uv_handle_t *)&a->sweep, on_closed);
  uv_close((uv_handle_t *)&a->sample, on_closed);
}

uint16_t sv_admin_port(const gk_server *s) {
  return s->admin ? s->admin->port : 0;
}

/* --- start --------------------------------------------------------------- */

static int read_token(sv_admin *a, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return gk_errf(err, errlen, GK_EIO, "admin.token_file: %s: %s", path,
                   strerror(errno));
  char buf[TOKEN_MAX + 2];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
    n--;
  if (n < TOKEN_MIN || n > TOKEN_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "admin.token_file: %s: the token must be %d to %d "
                   "characters",
                   path, TOKEN_MIN, TOKEN_MAX);
  for (size_t i = 0; i < n; i++)
    if (buf[i] <= ' ' || buf[i] > '~')
      return gk_errf(err, errlen, GK_EINVAL,
                     "admin.token_file: %s: the token must be printable "
                     "ASCII without spaces",
                     path);
  memcpy(a->token, buf, n);
  a->token[n] = '\0';
  a->token_len = n;
  return 0;
}

/* libmicrohttpd's error log: the last message is kept, so a listener
 * that cannot start says why (MHD_start_daemon only returns NULL). */
GK_PRINTF(2, 0)
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  sv_admin *a = cls;
  int n = vsnprintf(a->mhd_err, sizeof(a->mhd_err), fmt, ap);
  while (n > 0 && (size_t)n < sizeof(a->mhd_err) &&
         (a->mhd_err[n - 1] == '\n' || a->mhd_err[n - 1] == '\r'))
    a->mhd_err[--n] = '\0';
}

static struct MHD_Daemon *daemon_start(sv_admin *a) {
  const gk_server_admin_config *ac = &a->s->cfg->admin;
  struct sockaddr_in v4;
  struct sockaddr_in6 v6;
  struct sockaddr *sa = (struct sockaddr *)&v4;
  unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  memset(&v4, 0, sizeof(v4));
  memset(&v6, 0, sizeof(v6));
  if (inet_pton(AF_INET, ac->host, &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(ac->port);
  } else if (inet_pton(AF_INET6, ac->host, &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(ac->port);
    sa = (struct sockaddr *)&v6;
    flags |= MHD_USE_IPv6;
  } else {
    return NULL;
  }
  unsigned timeout_s = ac->request_ms / 1000u + 1u;
  return MHD_start_daemon(
      flags, ac->port, NULL, NULL, on_request, a, MHD_OPTION_SOCK_ADDR, sa,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)ac->connections,
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)ac->request_bytes,
      MHD_OPTION_NOTIFY_CONNECTION, on_connection, a,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, a, MHD_OPTION_EXTERNAL_LOGGER,
      mhd_log, a, MHD_OPTION_END);
}

static void on_sample(uv_timer_t *t) {
  sv_admin *a = t->data;
  sv_series_take(&a->series, a->s, sv_now_ms(a->s));
}

/* The uv side: the epoll descriptor under a poll, the timeout timer, the
 * slow-client sweep and the series' sampler (a first sample at once). */
static void loop_start(sv_admin *a, int epfd) {
  gk_server *s = a->s;
  uv_poll_init(s->loop, &a->poll, epfd);
  uv_timer_init(s->loop, &a->timer);
  uv_timer_init(s->loop, &a->sweep);
  uv_timer_init(s->loop, &a->sample);
  a->poll.data = a->timer.data = a->sweep.data = a->sample.data = a;
  a->open = 4;
  s->handles += 4;
  uv_poll_start(&a->poll, UV_READABLE, on_poll);
  uv_timer_start(&a->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  uint32_t ms = s->cfg->admin.series_ms;
  sv_series_init(&a->series, a->ring, s->cfg->admin.series_samples, ms,
                 sv_now_ms(s));
  sv_series_take(&a->series, s, sv_now_ms(s));
  uv_timer_start(&a->sample, on_sample, ms, ms);
  run(a);
}

int sv_admin_start(gk_server *s, char *err, size_t errlen) {
  const gk_server_admin_config *ac = &s->cfg->admin;
  if (!ac->enabled) return 0;
  sv_admin *a = calloc(1, sizeof(*a));
  if (a) a->slots = calloc(ac->connections, sizeof(*a->slots));
  if (a) a->ring = calloc(ac->series_samples, sizeof(*a->ring));
  if (!a || !a->slots || !a->ring) {
    if (a) free(a->slots);
    free(a);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  a->s = s;
  a->nslots = ac->connections;
  int rc = ac->token_file[0] ? read_token(a, ac->token_file, err, errlen) : 0;
  if (!rc && !(a->d = daemon_start(a))) {
    int e = errno;
    rc = gk_errf(err, errlen, GK_EIO, "admin.listen: cannot listen on %s: %s",
                 ac->listen,
                 a->mhd_err[0] ? a->mhd_err : (e ? strerror(e) : "unknown"));
  }
  const union MHD_DaemonInfo *ep = NULL, *pi = NULL;
  if (!rc) {
    ep = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_EPOLL_FD);
    pi = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
  }
  if (!rc && (!ep || !pi))
    rc = gk_errf(err, errlen, GK_EIO, "admin: libmicrohttpd has no epoll");
  if (rc || !ep || !pi) {
    if (a->d) MHD_stop_daemon(a->d);
    free(a->ring);
    free(a->slots);
    free(a);
    return rc ? rc : GK_EIO;
  }
  a->port = pi->port;
  s->admin = a;
  loop_start(a, ep->epoll_fd);
  if (gk_log_begin(s->log, GK_LOG_INFO, "admin_listening", NULL)) {
    gk_log_str(s->log, "host", ac->host);
    gk_log_u64(s->log, "port", a->port);
    gk_log_bool(s->log, "token", a->token_len != 0);
    gk_log_end(s->log);
  }
  return 0;
}
