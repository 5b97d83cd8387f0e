/* gk_server_agones.c: the Agones SDK REST client (see gk_server_ops.h).
 *
 * Agones runs an SDK server next to each game server (a sidecar in the
 * pod) with a REST gateway on http://localhost:$AGONES_SDK_HTTP_PORT.
 * This client speaks the documented paths:
 *   POST  /ready                     once listening (retried each period
 *                                    until the SDK server answers 2xx:
 *                                    the sidecar may start after us)
 *   POST  /health                    every agones.health_ms
 *   PATCH /v1beta1/counters/rooms    {"count":"N","capacity":"MAX"}
 *   PATCH /v1beta1/counters/players  the same, when a figure changed
 *   POST  /shutdown                  when the server is done (after a
 *                                    drain or a SIGTERM)
 * Counters (the CountsAndLists API) are what Fleet allocation by counter
 * reads; Agones wants int64 values as JSON strings.
 *
 * HTTP is libcurl's, through its multi-socket API on the server's loop:
 * CURLMOPT_SOCKETFUNCTION puts each of curl's sockets under a uv_poll,
 * CURLMOPT_TIMERFUNCTION drives one uv_timer, and curl_multi_socket_action
 * runs from their callbacks, so nothing blocks and nothing runs on
 * another thread. One request is in flight at a time, from a short queue
 * (in order: ready before health, counts after ready, shutdown last); a
 * full queue drops a health ping rather than grow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "gk_err.h"
#include "gk_server_internal.h"

#define QUEUE_MAX 8
#define REQ_TIMEOUT_MS 2000L

typedef enum kind { K_READY, K_HEALTH, K_ROOMS, K_PLAYERS, K_SHUTDOWN } kind;

typedef struct req {
  kind k;
  uint64_t count, capacity;
} req;

typedef struct sv_agones {
  gk_server *s;
  CURLM *multi;
  CURL *easy; /* the request in flight, or NULL */
  struct curl_slist *headers;
  uv_timer_t curl_timer, health_timer;
  int open; /* uv handles not yet closed (sockets' polls included) */
  int ready, closing, shut;
  req queue[QUEUE_MAX];
  uint32_t head, n;
  req cur;
  char url[128], body[128];
  uint64_t sent_rooms, sent_players; /* last counts the SDK accepted */
  int counts_known;
  uint16_t port;
} sv_agones;

/* A socket of curl's under a uv_poll. */
typedef struct sock {
  uv_poll_t poll;
  sv_agones *g;
  curl_socket_t fd;
} sock;

static void on_closed(uv_handle_t *h);
static void pump(sv_agones *g);

/* --- curl on the uv loop ------------------------------------------------- */

static void check_done(sv_agones *g);

static void on_sock(uv_poll_t *p, int status, int events) {
  sock *k = p->data;
  sv_agones *g = k->g;
  int flags = 0, running = 0;
  if (status < 0) flags = CURL_CSELECT_ERR;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  curl_multi_socket_action(g->multi, k->fd, flags, &running);
  check_done(g);
}

static int socket_cb(CURL *e, curl_socket_t fd, int what, void *userp,
                     void *sockp) {
  sv_agones *g = userp;
  sock *k = sockp;
  (void)e;
  if (what == CURL_POLL_REMOVE) {
    if (k) {
      uv_poll_stop(&k->poll);
      curl_multi_assign(g->multi, fd, NULL);
      uv_close((uv_handle_t *)&k->poll, on_closed);
    }
    return 0;
  }
  if (!k) {
    k = calloc(1, sizeof(*k));
    if (!k) return -1;
    k->g = g;
    k->fd = fd;
    uv_poll_init_socket(g->s->loop, &k->poll, fd);
    k->poll.data = k;
    g->open++;
    g->s->handles++;
    curl_multi_assign(g->multi, fd, k);
  }
  int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) |
           (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
  uv_poll_start(&k->poll, ev, on_sock);
  return 0;
}

static void on_curl_timer(uv_timer_t *t) {
  sv_agones *g = t->data;
  int running = 0;
  curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  check_done(g);
}

static int timer_cb(CURLM *m, long ms, void *userp) {
  sv_agones *g = userp;
  (void)m;
  if (ms < 0)
    uv_timer_stop(&g->curl_timer);
  else
    uv_timer_start(&g->curl_timer, on_curl_timer, (uint64_t)ms, 0);
  return 0;
}

/* --- requests ------------------------------------------------------------ */

static const char *const kind_names[] = {"ready", "health", "rooms", "players",
                                         "shutdown"};

static void log_failure(sv_agones *g, const req *r, CURLcode cc, long code) {
  /* health pings fail quietly (debug): the sidecar may not be up yet */
  gk_log_level lv = r->k == K_HEALTH ? GK_LOG_DEBUG : GK_LOG_WARN;
  if (gk_log_begin(g->s->log, lv, "agones_failed", NULL)) {
    gk_log_str(g->s->log, "call", kind_names[r->k]);
    gk_log_u64(g->s->log, "http_status", (uint64_t)code);
    gk_log_str(g->s->log, "reason", cc ? curl_easy_strerror(cc) : "status");
    gk_log_end(g->s->log);
  }
}

static void finished(sv_agones *g, CURLcode cc) {
  long code = 0;
  curl_easy_getinfo(g->easy, CURLINFO_RESPONSE_CODE, &code);
  curl_multi_remove_handle(g->multi, g->easy);
  curl_easy_cleanup(g->easy);
  g->easy = NULL;
  int ok = cc == CURLE_OK && code >= 200 && code < 300;
  const req *r = &g->cur;
  if (!ok) log_failure(g, r, cc, code);
  if (ok && r->k == K_READY) {
    g->ready = 1;
    gk_log_msg(g->s->log, GK_LOG_INFO, "agones_ready", NULL, NULL, NULL);
  }
  if (ok && r->k == K_ROOMS) g->sent_rooms = r->count;
  if (ok && r->k == K_PLAYERS) g->sent_players = r->count;
  if (r->k == K_SHUTDOWN) {
    g->shut = 1;
    if (gk_log_begin(g->s->log, GK_LOG_INFO, "agones_shutdown", NULL)) {
      gk_log_bool(g->s->log, "ok", ok);
      gk_log_end(g->s->log);
    }
  }
}

static void close_handles(sv_agones *g);

/* The SDK server's answers are not needed (the status says it all): they
 * are read and dropped, never written to stdout, curl's default. */
static size_t discard(char *p, size_t size, size_t n, void *ud) {
  (void)p;
  (void)ud;
  return size * n;
}

static void check_done(sv_agones *g) {
  CURLMsg *m;
  int left = 0;
  while ((m = curl_multi_info_read(g->multi, &left)) != NULL)
    if (m->msg == CURLMSG_DONE && m->easy_handle == g->easy)
      finished(g, m->data.result);
  if (g->shut && !g->easy) {
    close_handles(g);
    return;
  }
  pump(g);
}

static void push(sv_agones *g, kind k, uint64_t count, uint64_t capacity) {
  if (g->n == QUEUE_MAX) return; /* a health ping or count waits its turn */
  req *r = &g->queue[(g->head + g->n++) % QUEUE_MAX];
  r->k = k;
  r->count = count;
  r->capacity = capacity;
}

/* Starts the next queued request if none is in flight. */
static void pump(sv_agones *g) {
  if (g->easy || !g->n) return;
  g->cur = g->queue[g->head];
  g->head = (g->head + 1) % QUEUE_MAX;
  g->n--;
  const req *r = &g->cur;
  const char *method = "POST", *path = "";
  g->body[0] = '\0';
  switch (r->k) {
  case K_READY:
  case K_HEALTH:
  case K_SHUTDOWN:
    path = kind_names[r->k];
    snprintf(g->body, sizeof(g->body), "{}");
    break;
  case K_ROOMS:
  case K_PLAYERS:
    method = "PATCH";
    path =
        r->k == K_ROOMS ? "v1beta1/counters/rooms" : "v1beta1/counters/players";
    snprintf(g->body, sizeof(g->body),
             "{\"count\":\"%llu\",\"capacity\":\"%llu\"}",
             (unsigned long long)r->count, (unsigned long long)r->capacity);
    break;
  }
  snprintf(g->url, sizeof(g->url), "http://127.0.0.1:%u/%s", (unsigned)g->port,
           path);
  CURL *e = curl_easy_init();
  if (!e) return;
  curl_easy_setopt(e, CURLOPT_URL, g->url);
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, g->body);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, g->headers);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, REQ_TIMEOUT_MS);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L); /* no socket outlives it */
  curl_easy_setopt(e, CURLOPT_PROXY, "");        /* never through a proxy */
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
  g->easy = e;
  if (curl_multi_add_handle(g->multi, e) != CURLM_OK) {
    curl_easy_cleanup(e);
    g->easy = NULL;
  }
}

/* Rooms open and players connected in a room's slot. */
static void counts(const gk_server *s, uint64_t *rooms, uint64_t *players) {
  *rooms = s->host.nrooms;
  *players = 0;
  for (uint32_t i = 0; s->rooms && i < s->cfg->max_rooms; i++) {
    if (!s->rooms[i]) continue;
    gk_room_view v;
    gk_room_view_of(s->rooms[i], &v);
    for (uint32_t m = v.connected; m; m &= m - 1) (*players)++;
  }
}

static void on_health(uv_timer_t *t) {
  sv_agones *g = t->data;
  if (g->closing) return;
  if (!g->ready) {
    int queued = g->easy && g->cur.k == K_READY;
    for (uint32_t i = 0; i < g->n; i++)
      queued |= g->queue[(g->head + i) % QUEUE_MAX].k == K_READY;
    if (!queued) push(g, K_READY, 0, 0);
  } else {
    push(g, K_HEALTH, 0, 0);
    uint64_t rooms, players;
    counts(g->s, &rooms, &players);
    if (!g->counts_known || rooms != g->sent_rooms)
      push(g, K_ROOMS, rooms, g->s->cfg->max_rooms);
    if (!g->counts_known || players != g->sent_players)
      push(g, K_PLAYERS, players, g->s->cfg->max_peers);
    g->counts_known = 1;
  }
  pump(g);
}

/* --- life ---------------------------------------------------------------- */

static void on_closed(uv_handle_t *h) {
  sv_agones *g;
  if (h->type == UV_POLL) {
    sock *k = h->data;
    g = k->g;
    free(k);
  } else {
    g = h->data;
  }
  gk_server *s = g->s;
  s->handles--;
  if (--g->open == 0) {
    curl_multi_cleanup(g->multi);
    curl_slist_free_all(g->headers);
    free(g);
    s->agones = NULL;
  }
  sv_maybe_free(s);
}

static void close_handles(sv_agones *g) {
  if (g->closing == 2) return;
  g->closing = 2;
  uv_close((uv_handle_t *)&g->curl_timer, on_closed);
  uv_close((uv_handle_t *)&g->health_timer, on_closed);
}

void sv_agones_close(gk_server *s) {
  sv_agones *g = s->agones;
  if (!g || g->closing) return;
  g->closing = 1;
  uv_timer_stop(&g->health_timer);
  g->n = 0; /* nothing but the shutdown is sent from here */
  push(g, K_SHUTDOWN, 0, 0);
  pump(g);
  if (!g->easy) { /* could not even start it */
    g->shut = 1;
    close_handles(g);
  }
}

int sv_agones_start(gk_server *s, char *err, size_t errlen) {
  const gk_server_agones_config *ac = &s->cfg->agones;
  if (!ac->enabled) return 0;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return gk_errf(err, errlen, GK_EIO, "agones: libcurl did not initialise");
  sv_agones *g = calloc(1, sizeof(*g));
  if (g) g->multi = curl_multi_init();
  if (g) g->headers = curl_slist_append(NULL, "Content-Type: application/json");
  if (!g || !g->multi || !g->headers) {
    if (g && g->multi) curl_multi_cleanup(g->multi);
    if (g) curl_slist_free_all(g->headers);
    free(g);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  g->s = s;
  g->port = ac->port ? ac->port : 9358;
  curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
  curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
  curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
  curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
  uv_timer_init(s->loop, &g->curl_timer);
  uv_timer_init(s->loop, &g->health_timer);
  g->curl_timer.data = g->health_timer.data = g;
  g->open = 2;
  s->handles += 2;
  s->agones = g;
  if (gk_log_begin(s->log, GK_LOG_INFO, "agones", NULL)) {
    gk_log_u64(s->log, "sdk_port", g->port);
    gk_log_u64(s->log, "health_ms", ac->health_ms);
    gk_log_end(s->log);
  }
  push(g, K_READY, 0, 0);
  pump(g);
  uv_timer_start(&g->health_timer, on_health, ac->health_ms, ac->health_ms);
  return 0;
}
