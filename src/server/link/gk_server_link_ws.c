/* gk_server_link_ws.c: the WebSocket backend of the server's links (the
 * interface is gk_server_link.h), for browser players.
 *
 * One gk_net_ws listener (src/net/gk_net_ws.h: libmicrohttpd for the
 * upgrade, wslay for the frames) on the server's loop, bound to the
 * config's websocket.host and websocket.port; the bytes of each binary
 * frame are one wire message, as one ENet datagram is. A connection id of
 * the listener is (generation << 16) | slot, its slot below max_conns:
 * each slot has one link object here, in use from the listener's
 * `connect` callback to its `disconnect`, and the full id is kept so a
 * late callback for an older connection of the slot finds nothing.
 *
 * Sends: reliable messages go as they are; an unreliable one (the
 * server sends INPUT and CONFIRMED so) goes unreliable with its wire type
 * (bytes[1]), so a newer INPUT or CONFIRMED replaces an older one still
 * queued (the protocol repeats every unacknowledged record: nothing is
 * lost, a slow reader gets the newest). TCP delivers everything anyway;
 * "unreliable" here means only "may be replaced".
 *
 * Limits: the listener has min(websocket.max_connections, limits.peers)
 * slots (every link takes a place of the connection table), closes a TCP
 * connection at accept past limits.conns_per_ip + 1 from its address, and
 * wants the request whole within limits.handshake_ms; before a 101 it
 * asks on_admit, which refuses 503 while the connection table is full and
 * 429 while the address holds limits.conns_per_ip links of any kind.
 * Behind a proxy in websocket.trusted_proxies (on_trusted), "the address"
 * is the client's from the proxy's X-Forwarded-For (gk_net_ws.h).
 *
 * Other paths of the port: GET /rooms/public through the listener's
 * json_get (on_json_get, answered by ops/gk_server_public.c from memory),
 * then the static files (websocket.static_dir).
 *
 * Closes: graceful is a 1000 close frame after what is queued; at once
 * closes the socket and raises `disconnect` before returning, as the
 * interface wants.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws.h"
#include "gk_server_internal.h"

#define SLOT_MASK 0xffffu

typedef struct ws_link {
  sv_link base; /* first: an sv_link * is a ws_link * */
  struct sv_ws *w;
  uint32_t conn; /* the listener's connection id */
  int up;        /* between the listener's connect and disconnect */
} ws_link;

struct sv_ws {
  sv_link_host base; /* first */
  gk_net_ws ws;
  ws_link *links; /* by slot, nlinks of them */
  uint32_t nlinks;
};

static int link_send(sv_link *l, const uint8_t *bytes, size_t len,
                     int reliable) {
  ws_link *wl = (ws_link *)l;
  if (!wl->up) return GK_ENOTFOUND;
  if (len > GK_WIRE_MAX) return GK_ETOOBIG;
  uint8_t type = len >= 2 ? bytes[1] : 0;
  int rel = reliable || !(type == GK_MSG_INPUT || type == GK_MSG_CONFIRMED);
  int rc = gk_net_ws_send(&wl->w->ws, wl->conn, bytes, len, rel, type);
  if (rc == GK_EFULL) return GK_EIO; /* a slow reader: 1008, down follows */
  return rc;
}

static void link_close(sv_link *l, int at_once) {
  ws_link *wl = (ws_link *)l;
  if (!wl->up) return;
  gk_net_ws_disconnect(&wl->w->ws, wl->conn, at_once);
}

static uint32_t link_rtt(const sv_link *l) {
  const ws_link *wl = (const ws_link *)l;
  return gk_net_ws_rtt(&wl->w->ws, wl->conn);
}

static uint32_t link_rtt_var(const sv_link *l) {
  const ws_link *wl = (const ws_link *)l;
  return gk_net_ws_rtt_var(&wl->w->ws, wl->conn);
}

static const sv_link_ops ws_link_ops = {
    .kind = "websocket",
    .addr_verified = 1, /* TCP: replies are not capped to requests */
    .send = link_send,
    .close = link_close,
    .rtt_ms = link_rtt,
    .rtt_var_ms = link_rtt_var,
};

/* --- the listener's callbacks (ctx = the sv_ws) --------------------------- */

static ws_link *link_of(struct sv_ws *w, uint32_t conn) {
  uint32_t slot = conn & SLOT_MASK;
  if (slot >= w->nlinks) return NULL;
  ws_link *wl = &w->links[slot];
  return wl->up && wl->conn == conn ? wl : NULL;
}

/* The key of an address (gk_server_link.h): an IPv4 address (or an
 * IPv4-mapped IPv6 one) is its value in host order; another IPv6 address
 * folds into 2^32..2^63-1 (FNV-1a of its 16 bytes). 0 for none. */
static uint64_t addr_key(const struct sockaddr *sa) {
  if (sa && sa->sa_family == AF_INET)
    return ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
  if (!sa || sa->sa_family != AF_INET6) return 0;
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  const uint8_t *b = a->s6_addr;
  if (IN6_IS_ADDR_V4MAPPED(a))
    return (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
           (uint32_t)b[14] << 8 | b[15];
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 16; i++) h = (h ^ b[i]) * 1099511628211ull;
  return (1ull << 32) + h % ((1ull << 63) - (1ull << 32));
}

/* The address as text, and its key. */
static void set_addr(sv_link *l, const struct sockaddr *sa) {
  l->addr_key = addr_key(sa);
  snprintf(l->addr, sizeof(l->addr), "?");
  if (sa && sa->sa_family == AF_INET) {
    uint32_t ip = (uint32_t)l->addr_key;
    snprintf(l->addr, sizeof(l->addr), "%u.%u.%u.%u",
             (unsigned)(ip >> 24) & 255u, (unsigned)(ip >> 16) & 255u,
             (unsigned)(ip >> 8) & 255u, (unsigned)ip & 255u);
  } else if (sa && sa->sa_family == AF_INET6) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    const uint8_t *b = a->s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a))
      snprintf(l->addr, sizeof(l->addr), "%u.%u.%u.%u", b[12], b[13], b[14],
               b[15]);
    else
      inet_ntop(AF_INET6, a, l->addr, sizeof(l->addr));
  }
}

/* A good upgrade request, before its 101: refused 503 when the server's
 * connection table (limits.peers, every link's) has no free place, 429
 * when its address already holds limits.conns_per_ip connections over
 * every link, so neither is answered 101 and then dropped. The checks
 * of sv_link_up stay (several upgrades can finish in one pass). */
static int on_admit(void *ctx, gk_net_ws *ws, const struct sockaddr *addr) {
  (void)ws;
  const struct sv_ws *w = ctx;
  const gk_server *s = w->base.srv;
  if (!s || s->closing || s->ids.nfree == 0) return GK_EFULL;
  if (sv_auth_ip_full(s, addr_key(addr))) return GK_ELIMIT;
  return 0;
}

/* websocket.trusted_proxies: is the TCP peer one? */
static int on_trusted(void *ctx, gk_net_ws *ws, const struct sockaddr *addr) {
  (void)ws;
  const struct sv_ws *w = ctx;
  return gk_server_config_proxy(w->base.srv->cfg, addr);
}

/* The listener's JSON paths: GET /rooms/public (gk_server_public.c). */
static int on_json_get(void *ctx, gk_net_ws *ws, const char *path,
                       const gk_net_ws_arg *args, size_t n_args, char **body) {
  (void)ws;
  const struct sv_ws *w = ctx;
  return sv_public_get(w->base.srv, path, args, n_args, body);
}

static void on_connect(void *ctx, gk_net_ws *ws, uint32_t conn,
                       const struct sockaddr *addr) {
  struct sv_ws *w = ctx;
  uint32_t slot = conn & SLOT_MASK;
  if (slot >= w->nlinks) { /* the listener has nlinks slots: never */
    gk_net_ws_disconnect(ws, conn, 1);
    return;
  }
  ws_link *wl = &w->links[slot];
  memset(wl, 0, sizeof(*wl));
  wl->base.ops = &ws_link_ops;
  wl->base.host = &w->base;
  wl->base.conn = SV_NO_CONN;
  wl->w = w;
  wl->conn = conn;
  wl->up = 1;
  set_addr(&wl->base, addr); /* hello_len 0: addr_verified, no reply cap */
  sv_link_up(w->base.srv, &wl->base);
}

static void on_receive(void *ctx, gk_net_ws *ws, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  (void)ws;
  struct sv_ws *w = ctx;
  ws_link *wl = link_of(w, conn);
  if (wl) sv_link_data(w->base.srv, &wl->base, bytes, len);
}

static void on_disconnect(void *ctx, gk_net_ws *ws, uint32_t conn, int reason) {
  (void)ws;
  (void)reason;
  struct sv_ws *w = ctx;
  ws_link *wl = link_of(w, conn);
  if (!wl) return;
  wl->up = 0;
  sv_link_down(w->base.srv, &wl->base);
}

/* --- the host ------------------------------------------------------------- */

static void host_stats(const sv_link_host *h, sv_link_host_stats *out) {
  const gk_net_ws_stats *ws = &((const struct sv_ws *)h)->ws.stats;
  memset(out, 0, sizeof(*out));
  out->packets_in = ws->msgs_in;
  out->bytes_in = ws->bytes_in;
  out->packets_out = ws->msgs_out;
  out->bytes_out = ws->bytes_out;
  out->drop_oversize = ws->close_too_big;
  out->send_calls = ws->writes;
  out->read_calls = ws->reads;
}

static void on_ws_closed(gk_net_ws *ws) {
  struct sv_ws *w = (struct sv_ws *)((char *)ws - offsetof(struct sv_ws, ws));
  sv_link_host_closed(&w->base); /* may free w */
}

static void host_close(sv_link_host *h) {
  struct sv_ws *w = (struct sv_ws *)h;
  for (uint32_t i = 0; i < w->nlinks; i++) w->links[i].up = 0;
  gk_net_ws_close(&w->ws, on_ws_closed);
}

static void host_free(sv_link_host *h) {
  struct sv_ws *w = (struct sv_ws *)h;
  free(w->links);
  free(w);
}

static const sv_link_host_ops ws_host_ops = {
    .kind = "websocket",
    .stats = host_stats,
    .close = host_close,
    .free = host_free,
};

/* websocket.static_dir for the listener: NULL for none, and for the
 * default directory when it is not there (a warning: the install may
 * have no pages); a directory set in the config is the listener's to
 * check, so a wrong one stops the start. */
static const char *static_dir(gk_server *s) {
  const gk_server_ws_config *wc = &s->cfg->ws;
  struct stat st;
  if (wc->static_dir[0] == '\0') return NULL;
  if (wc->static_dir_set ||
      (stat(wc->static_dir, &st) == 0 && S_ISDIR(st.st_mode)))
    return wc->static_dir;
  if (gk_log_begin(s->log, GK_LOG_WARN, "ws_static_missing", NULL)) {
    gk_log_str(s->log, "dir", wc->static_dir);
    gk_log_end(s->log);
  }
  return NULL;
}

int sv_ws_open(gk_server *s, char *err, size_t errlen) {
  const gk_server_ws_config *wc = &s->cfg->ws;
  if (!wc->enabled) return 0;
  struct sv_ws *w = calloc(1, sizeof(*w));
  /* every link takes a place of limits.peers: more WebSocket slots than
   * that could never all be held */
  uint32_t slots = wc->max_connections < s->cfg->max_peers ? wc->max_connections
                                                           : s->cfg->max_peers;
  if (w) w->links = calloc(slots, sizeof(*w->links));
  if (!w || !w->links) {
    free(w);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  w->nlinks = slots;
  w->base.ops = &ws_host_ops;
  w->base.srv = s; /* for on_admit; sv_link_host_add sets it too */
  const char *origins[GK_SERVER_WS_ORIGINS_MAX];
  for (uint32_t i = 0; i < wc->norigins; i++) origins[i] = wc->origins[i];
  gk_net_ws_options o;
  memset(&o, 0, sizeof(o));
  o.host = wc->host;
  o.port = wc->port;
  o.path = wc->path;
  o.origins = origins;
  o.n_origins = wc->norigins;
  o.max_conns = slots;
  /* at accept (PROTOCOL.md): one TCP connection more than the links an
   * address may hold, so the upgrade over conns_per_ip is read and
   * answered 429 by on_admit rather than closed unanswered */
  o.per_ip = s->cfg->conns_per_ip ? s->cfg->conns_per_ip + 1u : 0u;
  o.handshake_ms = s->cfg->handshake_ms ? s->cfg->handshake_ms : 10000u;
  o.ping_ms = wc->ping_ms;
  o.timeout_ms = s->cfg->peer_timeout_ms;
  o.max_msg = s->cfg->max_packet;
  o.static_dir = static_dir(s);
  o.static_max = wc->static_max_bytes;
  o.replace_types[0] = GK_MSG_INPUT;
  o.replace_types[1] = GK_MSG_CONFIRMED;
  o.n_replace = 2;
  gk_net_ws_callbacks cb = {w,        on_receive, on_connect, on_disconnect,
                            on_admit, on_trusted, on_json_get};
  int rc = gk_net_ws_init(&w->ws, s->loop, &o, &cb);
  if (rc == GK_ENOTFOUND) {
    host_free(&w->base);
    return gk_errf(err, errlen, rc, "websocket.static_dir: %s: not a directory",
                   wc->static_dir);
  }
  if (rc) {
    /* the system's reason ("address already in use") when there is one */
    const char *why =
        w->ws.sys_err ? uv_strerror(w->ws.sys_err) : gk_strerror(rc);
    host_free(&w->base);
    return gk_errf(err, errlen, rc, "websocket: cannot listen on %s:%u: %s",
                   wc->host, (unsigned)wc->port, why);
  }
  rc = sv_link_host_add(s, &w->base);
  if (rc) { /* never: the second backend */
    gk_net_ws_close(&w->ws, NULL);
    return gk_errf(err, errlen, rc, "websocket: too many link backends");
  }
  s->ws = w;
  return 0;
}

uint16_t sv_ws_port(const gk_server *s) {
  return s->ws ? s->ws->ws.port : 0;
}

const gk_net_ws_stats *sv_ws_stats(const gk_server *s) {
  return s->ws ? &s->ws->ws.stats : NULL;
}

const char *sv_ws_static_root(const gk_server *s) {
  if (!s->ws || !s->ws->ws.static_root) return NULL;
  return s->ws->ws.static_len ? s->ws->ws.static_root : "/";
}

/* The URL players open: websocket.web_url, or else the one a browser on
 * this machine opens: the listener's host (a wildcard becomes loopback),
 * its port, "/". */
static void page_url(const gk_server *s, char *url, size_t len) {
  if (s->cfg->ws.web_url[0]) {
    snprintf(url, len, "%s", s->cfg->ws.web_url);
    return;
  }
  const char *h = s->cfg->ws.host;
  int v6 = strchr(h, ':') != NULL;
  if (strcmp(h, "0.0.0.0") == 0) h = "127.0.0.1";
  if (strcmp(h, "::") == 0) h = "::1";
  snprintf(url, len, "http://%s%s%s:%u/", v6 ? "[" : "", h, v6 ? "]" : "",
           (unsigned)sv_ws_port(s));
}

void sv_ws_log_page(gk_server *s) {
  const char *root = sv_ws_static_root(s);
  if (!root) return;
  char url[GK_SERVER_WS_STR_MAX + 64], index[GK_SERVER_PATH_MAX + 16];
  page_url(s, url, sizeof(url));
  snprintf(index, sizeof(index), "%s/index.html", s->ws->ws.static_root);
  if (gk_log_begin(s->log, GK_LOG_INFO, "web", NULL)) {
    gk_log_str(s->log, "url", url);
    gk_log_str(s->log, "dir", root);
    gk_log_bool(s->log, "index", access(index, R_OK) == 0);
    gk_log_end(s->log);
  }
}
