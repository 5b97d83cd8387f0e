/* gk_net_ws.c: the WebSocket listener: libmicrohttpd on the uv loop, the
 * upgrade handshake, the connection table and the public calls that look
 * a connection up. Framing, the send queue, pings and the close
 * handshake are gk_net_ws_conn.c's.
 *
 * libmicrohttpd runs without threads (MHD_USE_EPOLL): its epoll
 * descriptor sits under a uv_poll, a uv_timer fires at MHD_get_timeout
 * (or at once when a connection was closed, so MHD cleans it up), and
 * MHD_run is called after each. The access handler checks the request
 * and either refuses it with an HTTP status or reserves a slot and
 * queues a 101 made by MHD_create_response_for_upgrade; the upgrade
 * handler then hands the socket to the slot. The `connect` callback and
 * the bytes MHD read past the request are processed after MHD_run
 * returns, so no caller code runs inside libmicrohttpd.
 */
#include "gk_net_ws.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws_internal.h"
#include "gk_net_ws_key.h"

#define TICK_MS 25u

static struct MHD_Daemon *daemon_of(const gk_net_ws *w) {
  return (struct MHD_Daemon *)w->daemon;
}

/* --- connection ids ------------------------------------------------------ */

uint32_t gk__ws_id(const gk_net_ws *w, const gk_net_ws_conn *c) {
  return (c->gen & 0xffffu) << 16 | (uint32_t)(c - w->conns);
}

gk_net_ws_conn *gk__ws_lookup(const gk_net_ws *w, uint32_t id) {
  uint32_t slot = id & 0xffffu;
  if (w->conns == NULL || slot >= w->opts.max_conns) return NULL;
  gk_net_ws_conn *c = &w->conns[slot];
  if ((c->gen & 0xffffu) != id >> 16 || c->state != GK__WS_OPEN) return NULL;
  return c;
}

void gk__ws_slot_free(gk_net_ws_conn *c) {
  if (c->state == GK__WS_FREE) return;
  c->state = GK__WS_FREE;
  c->gen++;
  c->hs_conn = NULL;
  c->w->used--;
}

static gk_net_ws_conn *slot_take(gk_net_ws *w, struct MHD_Connection *mc) {
  for (uint32_t i = 0; i < w->opts.max_conns; i++) {
    gk_net_ws_conn *c = &w->conns[i];
    if (c->state != GK__WS_FREE) continue;
    uint32_t gen = c->gen;
    memset(c, 0, sizeof *c);
    c->gen = gen;
    c->w = w;
    c->fd = -1;
    c->state = GK__WS_HANDSHAKE;
    c->hs_conn = mc;
    c->due_ms = uv_now(w->loop) + w->opts.handshake_ms;
    w->used++;
    return c;
  }
  return NULL;
}

/* --- TCP connections: the per-address limit and the request deadline -- */

static uint32_t tcp_cap(const gk_net_ws *w) {
  return w->opts.max_conns + w->opts.handshakes;
}

/* The address of `sa` as (family, 16 bytes); an IPv4-mapped IPv6 address
 * is its IPv4 one. 0 for another family. */
static int tcp_key(const struct sockaddr *sa, uint8_t *fam, uint8_t ip[16]) {
  memset(ip, 0, 16);
  if (sa != NULL && sa->sa_family == AF_INET) {
    memcpy(ip, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    *fam = AF_INET;
    return 1;
  }
  if (sa == NULL || sa->sa_family != AF_INET6) return 0;
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(a)) {
    memcpy(ip, a->s6_addr + 12, 4);
    *fam = AF_INET;
  } else {
    memcpy(ip, a->s6_addr, 16);
    *fam = AF_INET6;
  }
  return 1;
}

/* libmicrohttpd's accept policy, before it reads a byte: at most
 * opts.per_ip connections from one address. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t len) {
  gk_net_ws *w = cls;
  uint8_t fam = 0, ip[16];
  (void)len;
  if (w->opts.per_ip == 0 || w->tcp == NULL || !tcp_key(addr, &fam, ip))
    return MHD_YES;
  if (w->cb.trusted != NULL && w->cb.trusted(w->cb.ctx, w, addr))
    return MHD_YES; /* a proxy: its clients are counted after the request */
  uint32_t n = 0;
  for (uint32_t i = 0; i < tcp_cap(w); i++)
    if (w->tcp[i].used && w->tcp[i].fam == fam &&
        memcmp(w->tcp[i].ip, ip, 16) == 0)
      n++;
  if (n < w->opts.per_ip) return MHD_YES;
  w->stats.hs_per_ip++;
  return MHD_NO;
}

static void tcp_started(gk_net_ws *w, struct MHD_Connection *mc,
                        void **sock_ctx) {
  const union MHD_ConnectionInfo *ai =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const union MHD_ConnectionInfo *fi =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  for (uint32_t i = 0; w->tcp != NULL && i < tcp_cap(w); i++) {
    gk__ws_tcp *t = &w->tcp[i];
    if (t->used) continue;
    memset(t, 0, sizeof *t);
    t->used = 1;
    t->fd = fi != NULL ? fi->connect_fd : -1;
    t->since_ms = uv_now(w->loop);
    if (ai != NULL) tcp_key(ai->client_addr, &t->fam, t->ip);
    *sock_ctx = t;
    return;
  } /* never: MHD holds at most tcp_cap connections */
  *sock_ctx = NULL;
}

static void on_tcp(void *cls, struct MHD_Connection *mc, void **sock_ctx,
                   enum MHD_ConnectionNotificationCode toe) {
  gk_net_ws *w = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    tcp_started(w, mc, sock_ctx);
    return;
  }
  gk__ws_tcp *t = *sock_ctx;
  if (t != NULL && t->upgraded && w->unclosed > 0) w->unclosed--;
  if (t != NULL) memset(t, 0, sizeof *t);
  *sock_ctx = NULL;
}

/* The connection was handed to a slot: its request deadline is over. */
static void tcp_upgraded(struct MHD_Connection *mc) {
  const union MHD_ConnectionInfo *si =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (si != NULL && si->socket_context != NULL)
    ((gk__ws_tcp *)si->socket_context)->upgraded = 1;
}

/* A request not whole (and answered) within handshake_ms of the accept
 * (a client sending a byte a second, which MHD's idle timeout lets live):
 * its socket is shut down, so MHD reads its end and closes it. */
static void tcp_tick(gk_net_ws *w, uint64_t now) {
  int cut = 0;
  for (uint32_t i = 0; w->tcp != NULL && i < tcp_cap(w); i++) {
    gk__ws_tcp *t = &w->tcp[i];
    if (!t->used || t->upgraded || t->cut || t->fd < 0 ||
        now - t->since_ms < w->opts.handshake_ms)
      continue;
    shutdown(t->fd, SHUT_RDWR);
    t->cut = 1;
    w->stats.hs_timeout++;
    cut = 1;
  }
  if (cut) gk__ws_kick_mhd(w);
}

/* --- the handshake ------------------------------------------------------- */

static const char *header(struct MHD_Connection *mc, const char *name) {
  return MHD_lookup_connection_value(mc, MHD_HEADER_KIND, name);
}

static enum MHD_Result refuse(struct MHD_Connection *mc, unsigned status,
                              const char *why, uint64_t *counter) {
  (*counter)++;
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(why), (void *)why, MHD_RESPMEM_PERSISTENT);
  if (r == NULL) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", "text/plain");
  MHD_add_response_header(r, "Connection", "close");
  if (status == MHD_HTTP_UPGRADE_REQUIRED) {
    MHD_add_response_header(r, "Sec-WebSocket-Version", "13");
    MHD_add_response_header(r, "Upgrade", "websocket");
  }
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, "Allow", "GET");
  if (status == MHD_HTTP_SERVICE_UNAVAILABLE ||
      status == MHD_HTTP_TOO_MANY_REQUESTS)
    MHD_add_response_header(r, "Retry-After", "1");
  enum MHD_Result rc = MHD_queue_response(mc, status, r);
  MHD_destroy_response(r);
  return rc;
}

static int origin_ok(const gk_net_ws *w, const char *origin) {
  if (w->opts.n_origins == 0 || origin == NULL) return 1;
  for (size_t i = 0; i < w->opts.n_origins; i++)
    if (strcmp(origin, w->origins[i]) == 0) return 1;
  return 0;
}

static void on_upgrade(void *cls, struct MHD_Connection *mc, void *con_cls,
                       const char *extra_in, size_t extra_in_size,
                       MHD_socket sock, struct MHD_UpgradeResponseHandle *urh);

/* The client's address into *out (*len bytes): the TCP peer's, or, from
 * a trusted proxy, the last address of X-Forwarded-For (the one the proxy
 * added; *len 0 for none of the two). 0, or -1 for a trusted proxy's
 * header whose last entry is not an address. */
static int client_addr(gk_net_ws *w, struct MHD_Connection *mc,
                       struct sockaddr_storage *out, socklen_t *fwd_len) {
  const union MHD_ConnectionInfo *ai =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const struct sockaddr *peer = ai != NULL ? ai->client_addr : NULL;
  memset(out, 0, sizeof *out);
  *fwd_len = 0;
  if (peer != NULL)
    memcpy(out, peer,
           peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                       : sizeof(struct sockaddr_in));
  const char *xff = header(mc, "X-Forwarded-For");
  if (peer == NULL || xff == NULL || w->cb.trusted == NULL ||
      !w->cb.trusted(w->cb.ctx, w, peer))
    return 0;
  const char *last = strrchr(xff, ',');
  last = last != NULL ? last + 1 : xff;
  char text[INET6_ADDRSTRLEN + 1];
  while (*last == ' ' || *last == '\t') last++;
  size_t n = strcspn(last, " \t");
  if (n == 0 || n >= sizeof text || last[n + strspn(last + n, " \t")] != '\0')
    return -1;
  memcpy(text, last, n);
  text[n] = '\0';
  struct sockaddr_in *v4 = (struct sockaddr_in *)out;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
  memset(out, 0, sizeof *out);
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    *fwd_len = sizeof *v4;
  } else if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    *fwd_len = sizeof *v6;
  } else {
    return -1;
  }
  return 0;
}

/* The request is a good handshake: reserve a slot, answer 101. fwd: the
 * client's address a trusted proxy forwarded (fwd_len 0: none). */
static enum MHD_Result accept_ws(gk_net_ws *w, struct MHD_Connection *mc,
                                 const char *key, void **req,
                                 const struct sockaddr_storage *fwd,
                                 socklen_t fwd_len) {
  gk_net_ws_conn *c = slot_take(w, mc);
  if (c == NULL)
    return refuse(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "server full\n",
                  &w->stats.hs_full);
  c->fwd = *fwd;
  c->fwd_len = fwd_len;
  char acc[GK_NET_WS_ACCEPT_LEN + 1];
  gk_net_ws_key_accept(key, acc);
  struct MHD_Response *r = MHD_create_response_for_upgrade(on_upgrade, w);
  if (r == NULL) {
    gk__ws_slot_free(c);
    return MHD_NO;
  }
  /* libmicrohttpd adds "Connection: Upgrade" to an upgrade response
   * itself: a second one reads "Upgrade, Upgrade", which node's
   * WebSocket (undici) refuses. */
  MHD_add_response_header(r, "Upgrade", "websocket");
  MHD_add_response_header(r, "Sec-WebSocket-Accept", acc);
  MHD_add_response_header(r, "Sec-WebSocket-Protocol", w->proto);
  enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_SWITCHING_PROTOCOLS, r);
  MHD_destroy_response(r);
  if (rc != MHD_YES) {
    gk__ws_slot_free(c);
    return rc;
  }
  w->stats.hs_ok++;
  *req = c;
  return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req) {
  gk_net_ws *w = cls;
  gk_net_ws_stats *st = &w->stats;
  (void)upload;
  if (*req != NULL) { /* a body after the answer: not read */
    *upload_size = 0;
    return MHD_YES;
  }
  *req = w;
  int json = strcmp(url, w->path) != 0 && w->cb.json_get != NULL
                 ? gk__ws_json(w, mc, url, method)
                 : -1;
  if (json >= 0) return (enum MHD_Result)json;
  if (strcmp(url, w->path) != 0 && w->static_root != NULL)
    return (enum MHD_Result)gk__ws_static(w, mc, url, method);
  if (strcmp(url, w->path) != 0)
    return refuse(mc, MHD_HTTP_NOT_FOUND, "no such path\n", &st->hs_path);
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
    return refuse(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n",
                  &st->hs_method);
  const char *up = header(mc, "Upgrade"), *co = header(mc, "Connection");
  const char *key = header(mc, "Sec-WebSocket-Key");
  if (strcmp(version, MHD_HTTP_VERSION_1_1) != 0 || up == NULL || co == NULL ||
      !gk_net_ws_has_token(up, "websocket") ||
      !gk_net_ws_has_token(co, "upgrade") || !gk_net_ws_key_check(key) ||
      header(mc, "Content-Length") != NULL ||
      header(mc, "Transfer-Encoding") != NULL)
    return refuse(mc, MHD_HTTP_BAD_REQUEST, "not a WebSocket handshake\n",
                  &st->hs_upgrade);
  const char *ver = header(mc, "Sec-WebSocket-Version");
  if (ver == NULL || strcmp(ver, "13") != 0)
    return refuse(mc, MHD_HTTP_UPGRADE_REQUIRED, "WebSocket version 13\n",
                  &st->hs_version);
  if (!origin_ok(w, header(mc, "Origin")))
    return refuse(mc, MHD_HTTP_FORBIDDEN, "origin not allowed\n",
                  &st->hs_origin);
  const char *proto = header(mc, "Sec-WebSocket-Protocol");
  if (proto == NULL || !gk_net_ws_has_token(proto, w->proto))
    return refuse(mc, MHD_HTTP_BAD_REQUEST, "subprotocol required\n",
                  &st->hs_protocol);
  struct sockaddr_storage from;
  socklen_t fwd_len = 0;
  if (client_addr(w, mc, &from, &fwd_len) != 0)
    return refuse(mc, MHD_HTTP_BAD_REQUEST, "bad X-Forwarded-For\n",
                  &st->hs_forwarded);
  if (w->cb.admit != NULL) {
    int rc = w->cb.admit(w->cb.ctx, w,
                         from.ss_family != 0 ? (struct sockaddr *)&from : NULL);
    if (rc == GK_ELIMIT)
      return refuse(mc, MHD_HTTP_TOO_MANY_REQUESTS,
                    "too many connections from this address\n", &st->hs_limit);
    if (rc != 0)
      return refuse(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "server full\n",
                    &st->hs_full);
  }
  return accept_ws(w, mc, key, req, &from, fwd_len);
}

/* MHD gave the socket: hand it to the slot reserved for it. */
static void on_upgrade(void *cls, struct MHD_Connection *mc, void *con_cls,
                       const char *extra_in, size_t extra_in_size,
                       MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
  gk_net_ws *w = cls;
  gk_net_ws_conn *c = con_cls;
  int ok = !w->closing && c != NULL && (void *)c != (void *)w &&
           c->state == GK__WS_HANDSHAKE && c->hs_conn == mc;
  if (ok && gk__ws_conn_open(c, sock, urh, extra_in, extra_in_size) == 0) {
    tcp_upgraded(mc);
    c->state = GK__WS_OPEN;
    c->hs_conn = NULL;
    w->pending++;
    return;
  }
  if (ok) gk__ws_slot_free(c);
  tcp_upgraded(mc);
  gk__ws_upgrade_close(w, urh);
}

/* A request ended: a reserved slot whose 101 never went out is freed. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req,
                         enum MHD_RequestTerminationCode toe) {
  gk_net_ws *w = cls;
  gk_net_ws_conn *c = *req;
  if (c == NULL || (void *)c == (void *)w) return;
  if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK &&
      c->state == GK__WS_HANDSHAKE && c->hs_conn == mc)
    gk__ws_slot_free(c);
}

/* --- the loop side ------------------------------------------------------- */

static void on_mhd_timer(uv_timer_t *t);

/* Connections upgraded during MHD_run: `connect`, then their bytes. */
static void start_pending(gk_net_ws *w) {
  for (uint32_t i = 0; i < w->opts.max_conns && w->pending > 0; i++) {
    gk_net_ws_conn *c = &w->conns[i];
    if (c->state != GK__WS_OPEN || c->announced) continue;
    w->pending--;
    gk__ws_conn_start(c);
    if (w->closing) return;
  }
  w->pending = 0;
}

static void run_mhd(gk_net_ws *w) {
  if (w->closing || w->in_mhd || w->daemon == NULL) return;
  w->in_mhd = 1;
  MHD_run(daemon_of(w));
  w->in_mhd = 0;
  w->stats.mhd_runs++;
  if (w->pending > 0) start_pending(w);
  if (w->closing) return;
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (w->unclosed > 0) /* MHD closes a socket handed back to it only in */
    uv_timer_start(&w->mhd_timer, on_mhd_timer, 1, 0); /* a later run */
  else if (MHD_get_timeout(daemon_of(w), &ms) == MHD_YES)
    uv_timer_start(&w->mhd_timer, on_mhd_timer, ms > 60000 ? 60000 : ms, 0);
  else
    uv_timer_stop(&w->mhd_timer);
}

void gk__ws_upgrade_close(gk_net_ws *w, void *urh) {
  MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
  w->unclosed++;
  gk__ws_kick_mhd(w);
}

void gk__ws_kick_mhd(gk_net_ws *w) {
  if (!w->closing) uv_timer_start(&w->mhd_timer, on_mhd_timer, 0, 0);
}

static void on_mhd_timer(uv_timer_t *t) {
  run_mhd(t->data);
}

static void on_mhd_poll(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  run_mhd(p->data);
}

static void on_tick(uv_timer_t *t) {
  gk_net_ws *w = t->data;
  uint64_t now = uv_now(w->loop);
  tcp_tick(w, now);
  for (uint32_t i = 0; i < w->opts.max_conns && !w->closing; i++)
    if (w->conns[i].state != GK__WS_FREE) gk__ws_conn_tick(&w->conns[i], now);
}

/* --- init and close ------------------------------------------------------ */

static int copy_str(char *dst, const char *src, const char *def) {
  const char *s = src != NULL ? src : def;
  size_t n = strlen(s);
  if (n == 0 || n >= GK_NET_WS_STR_MAX) return GK_EINVAL;
  memcpy(dst, s, n + 1);
  return 0;
}

static int take_options(gk_net_ws *w, const gk_net_ws_options *o) {
  w->opts = *o;
  gk_net_ws_options *p = &w->opts;
  if (p->max_conns == 0) p->max_conns = 64;
  if (p->handshakes == 0) p->handshakes = 16;
  if (p->handshake_ms == 0) p->handshake_ms = 5000;
  if (p->close_ms == 0) p->close_ms = 1000;
  if (p->max_msg == 0) p->max_msg = GK_WIRE_MAX;
  if (p->queue_len == 0) p->queue_len = 4096;
  if (p->queue_bytes == 0) p->queue_bytes = 1u << 20;
  if (p->unsent_max == 0) p->unsent_max = 16384;
  if (p->static_max == 0) p->static_max = 64u << 20;
  if (p->max_conns > 0xffffu || p->n_origins > GK_NET_WS_ORIGINS_MAX ||
      p->n_replace > GK_NET_WS_REPLACE_MAX || p->queue_len > 0x10000u ||
      (p->n_origins > 0 && p->origins == NULL))
    return GK_EINVAL;
  if (copy_str(w->path, o->path, "/play") != 0 || w->path[0] != '/' ||
      copy_str(w->proto, o->subprotocol, "gamekit.1") != 0)
    return GK_EINVAL;
  for (size_t i = 0; i < p->n_origins; i++)
    if (p->origins[i] == NULL ||
        copy_str(w->origins[i], p->origins[i], "") != 0)
      return GK_EINVAL;
  p->origins = NULL; /* copied: the caller's array may go */
  p->host = NULL;
  p->path = p->subprotocol = NULL;
  p->static_dir = NULL; /* resolved into w->static_root */
  return 0;
}

static struct MHD_Daemon *daemon_start(gk_net_ws *w, const char *host,
                                       uint16_t port) {
  struct sockaddr_in v4;
  struct sockaddr_in6 v6;
  struct sockaddr *sa = (struct sockaddr *)&v4;
  /* suspend/resume: a static file's connection waits for its next block
   * from the thread pool (gk_net_ws_static.c) */
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_UPGRADE | MHD_ALLOW_SUSPEND_RESUME;
  memset(&v4, 0, sizeof v4);
  memset(&v6, 0, sizeof v6);
  if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
  } else if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    sa = (struct sockaddr *)&v6;
    flags |= MHD_USE_IPv6;
  } else {
    return NULL;
  }
  unsigned timeout_s = w->opts.handshake_ms / 1000u + 1u;
  return MHD_start_daemon(flags, port, on_accept, w, on_request, w,
                          MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT,
                          (unsigned)(w->opts.max_conns + w->opts.handshakes),
                          MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, w,
                          MHD_OPTION_NOTIFY_CONNECTION, on_tcp, w,
                          MHD_OPTION_UNESCAPE_CALLBACK, gk__ws_unescape, w,
                          MHD_OPTION_END);
}

int gk_net_ws_init(gk_net_ws *w, uv_loop_t *loop, const gk_net_ws_options *opts,
                   const gk_net_ws_callbacks *cb) {
  if (w == NULL || loop == NULL || opts == NULL || cb == NULL ||
      cb->receive == NULL)
    return GK_EINVAL;
  memset(w, 0, sizeof *w);
  w->loop = loop;
  w->cb = *cb;
  const char *host = opts->host != NULL ? opts->host : "127.0.0.1";
  int rc = take_options(w, opts);
  if (rc == 0) rc = gk__ws_static_init(w, opts->static_dir);
  if (rc != 0) return rc;
  w->conns = calloc(w->opts.max_conns, sizeof *w->conns);
  w->tcp = calloc(tcp_cap(w), sizeof *w->tcp);
  if (w->conns == NULL || w->tcp == NULL) {
    free(w->conns);
    free(w->tcp);
    w->conns = NULL;
    w->tcp = NULL;
    free(w->static_root);
    w->static_root = NULL;
    return GK_ENOMEM;
  }
  errno = 0; /* libmicrohttpd frees what it made and keeps bind's errno */
  struct MHD_Daemon *d = daemon_start(w, host, opts->port);
  int sys = errno;
  const union MHD_DaemonInfo *ep = NULL, *pi = NULL;
  if (d != NULL) {
    ep = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    pi = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  }
  if (d == NULL || ep == NULL || pi == NULL ||
      uv_poll_init(loop, &w->poll, ep->epoll_fd) != 0) {
    if (d != NULL) MHD_stop_daemon(d);
    free(w->conns);
    free(w->tcp);
    w->conns = NULL;
    w->tcp = NULL;
    free(w->static_root);
    w->static_root = NULL;
    w->sys_err = d == NULL && sys != 0 ? uv_translate_sys_error(sys) : 0;
    return GK_EIO;
  }
  w->daemon = d;
  w->port = pi->port;
  uv_timer_init(loop, &w->mhd_timer);
  uv_timer_init(loop, &w->tick);
  w->poll.data = w->mhd_timer.data = w->tick.data = w;
  w->handles = 3;
  uv_poll_start(&w->poll, UV_READABLE, on_mhd_poll);
  uv_timer_start(&w->tick, on_tick, TICK_MS, TICK_MS);
  run_mhd(w);
  return 0;
}

/* A handle of the listener or of a connection is closed. */
void gk__ws_handle_closed(gk_net_ws *w) {
  if (--w->handles > 0 || !w->closing) return;
  free(w->conns);
  free(w->tcp);
  w->conns = NULL;
  w->tcp = NULL;
  if (w->close_cb != NULL) w->close_cb(w);
}

static void on_closed(uv_handle_t *h) {
  gk__ws_handle_closed(h->data);
}

void gk_net_ws_close(gk_net_ws *w, void (*close_cb)(gk_net_ws *w)) {
  if (w->closing || w->handles == 0) return;
  w->closing = 1;
  w->close_cb = close_cb;
  for (uint32_t i = 0; i < w->opts.max_conns; i++) {
    gk_net_ws_conn *c = &w->conns[i];
    if (c->state == GK__WS_OPEN) gk__ws_conn_going_away(c);
    if (c->state == GK__WS_HANDSHAKE) gk__ws_slot_free(c);
  }
  uv_poll_stop(&w->poll); /* before MHD closes the descriptor */
  if (w->daemon != NULL) {
    gk__ws_static_close(w);
    MHD_run(daemon_of(w)); /* cleans up the upgraded sockets closed above */
    MHD_stop_daemon(daemon_of(w));
  }
  w->daemon = NULL;
  free(w->static_root); /* no request comes after the daemon stopped */
  w->static_root = NULL;
  uv_close((uv_handle_t *)&w->poll, on_closed);
  uv_close((uv_handle_t *)&w->mhd_timer, on_closed);
  uv_close((uv_handle_t *)&w->tick, on_closed);
}

/* --- calls on one connection --------------------------------------------- */

int gk_net_ws_send(gk_net_ws *w, uint32_t conn, const uint8_t *bytes,
                   size_t len, int reliable, uint8_t type) {
  gk_net_ws_conn *c = w->closing ? NULL : gk__ws_lookup(w, conn);
  if (c == NULL || c->due_ms != 0) {
    w->stats.drop_send++;
    w->stats.drop_gone++;
    return GK_ENOTFOUND;
  }
  if (len > w->opts.max_msg || (len > 0 && bytes == NULL)) {
    w->stats.drop_send++;
    w->stats.drop_big++;
    return len > w->opts.max_msg ? GK_ETOOBIG : GK_EINVAL;
  }
  int replace = 0;
  for (size_t i = 0; !reliable && i < w->opts.n_replace; i++)
    if (w->opts.replace_types[i] == type) replace = 1;
  return gk__ws_conn_queue(c, bytes, len, replace, type);
}

void gk_net_ws_disconnect(gk_net_ws *w, uint32_t conn, int at_once) {
  gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  if (c == NULL) return;
  if (at_once) {
    gk__ws_conn_drop(c, 1000, GK__WK_LOCAL);
    return;
  }
  if (c->due_ms != 0) return; /* already closing */
  c->graceful = 1;
  c->code = 1000;
  c->kind = GK__WK_LOCAL;
  c->due_ms = uv_now(w->loop) + w->opts.close_ms;
  gk__ws_conn_pump(c);
}

uint64_t gk_net_ws_rtt_us(const gk_net_ws *w, uint32_t conn) {
  const gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  return c != NULL ? c->srtt_us : 0;
}

uint64_t gk_net_ws_rtt_var_us(const gk_net_ws *w, uint32_t conn) {
  const gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  return c != NULL ? c->rttvar_us : 0;
}

static uint32_t us_to_ms(uint64_t us) {
  return us == 0 ? 0 : (uint32_t)((us + 999u) / 1000u);
}

uint32_t gk_net_ws_rtt(const gk_net_ws *w, uint32_t conn) {
  return us_to_ms(gk_net_ws_rtt_us(w, conn));
}

uint32_t gk_net_ws_rtt_var(const gk_net_ws *w, uint32_t conn) {
  return us_to_ms(gk_net_ws_rtt_var_us(w, conn));
}

int gk_net_ws_peer_addr(const gk_net_ws *w, uint32_t conn,
                        struct sockaddr_storage *out, socklen_t *len) {
  const gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  if (c == NULL) return GK_ENOTFOUND;
  if (out != NULL) *out = c->addr;
  if (len != NULL) *len = c->addr_len;
  return 0;
}

uint32_t gk_net_ws_peer_ipv4(const gk_net_ws *w, uint32_t conn) {
  const gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  if (c == NULL || c->addr.ss_family != AF_INET) return 0;
  const struct sockaddr_in *in = (const struct sockaddr_in *)&c->addr;
  return ntohl(in->sin_addr.s_addr);
}

uint32_t gk_net_ws_queued(const gk_net_ws *w, uint32_t conn) {
  const gk_net_ws_conn *c = gk__ws_lookup(w, conn);
  return c != NULL ? c->qlen : 0;
}
