/* gk_net_ws_client.c: WebSocket client connections (see the header):
 * slots, the URL, TCP, the upgrade request and the strict check of the
 * 101. Framing, sending, pings and closes are gk_net_ws_client_conn.c's.
 */
#include "gk_net_ws_client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws_client_internal.h"
#include "gk_net_ws_key.h"

#define TICK_MS 20u
#define HS_MAX 4096u /* response headers, and what came after them */

/* --- the URL ---------------------------------------------------------------
 */

static int url_err(char *err, size_t errlen, const char *url, const char *why) {
  if (err != NULL && errlen > 0)
    snprintf(err, errlen, "bad WebSocket URL '%.80s': %s", url, why);
  return GK_EINVAL;
}

/* The host part [begin, end) into u->host and u->addr (port set later). */
static int url_host(gk_net_ws_url *u, const char *h, size_t n) {
  int v6 = n >= 2 && h[0] == '[' && h[n - 1] == ']';
  if (v6) h++, n -= 2;
  if (n == 0 || n >= sizeof u->host) return 0;
  memcpy(u->host, h, n);
  u->host[n] = '\0';
  const char *lit =
      strcasecmp(u->host, "localhost") == 0 ? "127.0.0.1" : u->host;
  memset(&u->addr, 0, sizeof u->addr);
  if (v6) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&u->addr;
    a->sin6_family = AF_INET6;
    return inet_pton(AF_INET6, u->host, &a->sin6_addr) == 1;
  }
  struct sockaddr_in *a = (struct sockaddr_in *)&u->addr;
  a->sin_family = AF_INET;
  return inet_pton(AF_INET, lit, &a->sin_addr) == 1;
}

int gk_net_ws_url_parse(const char *url, gk_net_ws_url *u, char *err,
                        size_t errlen) {
  if (url == NULL || u == NULL) return url_err(err, errlen, "", "NULL");
  memset(u, 0, sizeof *u);
  if (strncasecmp(url, "wss://", 6) == 0)
    return url_err(err, errlen, url,
                   "wss:// is for browsers (TLS ends at a proxy in front of "
                   "the server); gk-bot speaks ws:// only");
  if (strncasecmp(url, "ws://", 5) != 0)
    return url_err(err, errlen, url, "not ws://HOST:PORT/PATH");
  const char *h = url + 5, *slash = strchr(h, '/');
  const char *end = slash != NULL ? slash : h + strlen(h);
  if (memchr(h, '@', (size_t)(end - h)) != NULL)
    return url_err(err, errlen, url, "user info is not taken");
  if (strchr(url, '#') != NULL)
    return url_err(err, errlen, url, "a fragment is not taken");
  const char *colon = NULL;
  for (const char *p = h; p < end; p++)
    if (*p == ':' && (h[0] != '[' || (p > h && p[-1] == ']'))) colon = p;
  const char *hend = colon != NULL ? colon : end;
  if (!url_host(u, h, (size_t)(hend - h)))
    return url_err(err, errlen, url,
                   "the host must be an IPv4 literal, [IPv6] or localhost");
  unsigned long port = 80;
  if (colon != NULL) {
    char *stop = NULL;
    port = colon + 1 < end ? strtoul(colon + 1, &stop, 10) : 0;
    if (stop != end || port == 0 || port > 65535)
      return url_err(err, errlen, url, "the port must be 1..65535");
  }
  u->port = (uint16_t)port;
  if (u->addr.ss_family == AF_INET6)
    ((struct sockaddr_in6 *)&u->addr)->sin6_port = htons(u->port);
  else
    ((struct sockaddr_in *)&u->addr)->sin_port = htons(u->port);
  const char *path = slash != NULL ? slash : "/";
  if (strlen(path) >= sizeof u->path)
    return url_err(err, errlen, url, "the path is too long");
  for (const char *p = path; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f)
      return url_err(err, errlen, url, "a space or control byte in the path");
  snprintf(u->path, sizeof u->path, "%s", path);
  return 0;
}

/* --- slots -----------------------------------------------------------------
 */

uint32_t gk__wsc_id(const gk_net_ws_client *c, const gk__wsc_conn *k) {
  return (k->gen & 0xffffu) << 16 | (uint32_t)(k - c->conns);
}

gk__wsc_conn *gk__wsc_lookup(const gk_net_ws_client *c, uint32_t id) {
  uint32_t slot = id & 0xffffu;
  if (c->conns == NULL || slot >= c->opts.max_conns) return NULL;
  gk__wsc_conn *k = &c->conns[slot];
  if ((k->gen & 0xffffu) != id >> 16 || k->state == GK__WSC_FREE ||
      k->state == GK__WSC_DEAD)
    return NULL;
  return k;
}

static void on_tcp_closed(uv_handle_t *h) {
  gk__wsc_conn *k = h->data;
  gk_net_ws_client *c = k->c;
  gk__wsc_conn_free(k);
  free(k->hs);
  k->hs = NULL;
  k->state = GK__WSC_FREE;
  k->gen++;
  gk__wsc_handle_closed(c);
}

void gk__wsc_handle_closed(gk_net_ws_client *c) {
  if (--c->handles > 0 || !c->closing) return;
  free(c->conns);
  c->conns = NULL;
  if (c->close_cb != NULL) c->close_cb(c);
}

void gk__wsc_drop(gk__wsc_conn *k, int err, int code, int status,
                  const char *why) {
  if (k->state == GK__WSC_FREE || k->state == GK__WSC_DEAD) return;
  gk_net_ws_client *c = k->c;
  int was_open = k->state == GK__WSC_OPEN;
  uint32_t id = gk__wsc_id(c, k);
  k->state = GK__WSC_DEAD;
  uv_read_stop((uv_stream_t *)&k->tcp);
  uv_close((uv_handle_t *)&k->tcp, on_tcp_closed);
  if (was_open)
    c->stats.disconnects++;
  else
    c->stats.failed++;
  gk_net_ws_client_end e = {.err = was_open ? 0 : err,
                            .code = was_open ? code : 0,
                            .http_status = status,
                            .why = why != NULL ? why : "closed"};
  if (c->cb.disconnect != NULL) c->cb.disconnect(c->cb.ctx, c, id, &e);
}

/* An attempt that never opened ends with `err` and a sentence. */
static void fail_attempt(gk__wsc_conn *k, int err, int status, const char *fmt,
                         ...) GK_PRINTF(4, 5);
static void fail_attempt(gk__wsc_conn *k, int err, int status, const char *fmt,
                         ...) {
  char why[GK__WSC_WHY_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  gk__wsc_drop(k, err, 0, status, why);
}

/* --- the 101 ---------------------------------------------------------------
 */

typedef struct hs_headers {
  const char *upgrade, *connection, *accept, *protocol, *extensions;
  int repeated; /* one of them came twice */
} hs_headers;

/* One header line (NUL-terminated, no CRLF) into h. 0, or -1 if it is not
 * "name: value". */
static int header_line(char *line, hs_headers *h) {
  char *colon = strchr(line, ':');
  if (colon == NULL || colon == line) return -1;
  for (char *p = line; p < colon; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f) return -1;
  *colon = '\0';
  char *v = colon + 1, *e = v + strlen(v);
  while (*v == ' ' || *v == '\t') v++;
  while (e > v && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
  static const char *const names[] = {
      "Upgrade", "Connection", "Sec-WebSocket-Accept", "Sec-WebSocket-Protocol",
      "Sec-WebSocket-Extensions"};
  const char **slots[] = {&h->upgrade, &h->connection, &h->accept, &h->protocol,
                          &h->extensions};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcasecmp(line, names[i]) != 0) continue;
    if (*slots[i] != NULL) h->repeated = 1;
    *slots[i] = v;
  }
  return 0;
}

/* The first line of a refusal's body, printable, into out. */
static void body_line(const char *body, size_t n, char *out, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; i < n && j + 1 < cap; i++) {
    if (body[i] == '\r' || body[i] == '\n') break;
    char ch = body[i];
    if (ch < ' ' || ch == 0x7f) ch = '?'; /* printable ASCII only */
    out[j++] = ch;
  }
  out[j] = '\0';
}

/* Checks the response headers (buf holds hlen bytes, the blank line
 * included, NUL-terminated copy). 0, or a GK_E code with `why`. */
static int check_status(gk__wsc_conn *k, char *line, const char *body,
                        size_t body_len, int *status, char *why, size_t wl) {
  if (strncmp(line, "HTTP/1.1 ", 9) != 0 || line[9] < '1' || line[9] > '5' ||
      line[10] < '0' || line[10] > '9' || line[11] < '0' || line[11] > '9' ||
      (line[12] != ' ' && line[12] != '\0')) {
    snprintf(why, wl, "not an HTTP/1.1 response: '%.40s'", line);
    return GK_EPROTO;
  }
  *status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (*status == 101) return 0;
  char b[64];
  body_line(body, body_len, b, sizeof b);
  snprintf(why, wl, "the server answered HTTP %.60s%s%s (not 101)", line + 9,
           b[0] ? ": " : "", b);
  (void)k;
  return GK_EREFUSED;
}

static int check_headers(gk__wsc_conn *k, const hs_headers *h, char *why,
                         size_t wl) {
  const char *proto = k->c->proto;
  if (h->repeated) {
    snprintf(why, wl, "a WebSocket header of the 101 came twice");
    return GK_EPROTO;
  }
  if (!gk_net_ws_has_token(h->upgrade, "websocket") ||
      !gk_net_ws_has_token(h->connection, "upgrade")) {
    snprintf(why, wl,
             "the 101 lacks 'Upgrade: websocket' or "
             "'Connection: Upgrade'");
    return GK_EPROTO;
  }
  if (h->accept == NULL || strcmp(h->accept, k->accept) != 0) {
    snprintf(why, wl, "Sec-WebSocket-Accept '%.40s' is not the key's ('%s')",
             h->accept != NULL ? h->accept : "(none)", k->accept);
    return GK_EMISMATCH;
  }
  if (h->extensions != NULL) {
    snprintf(why, wl,
             "the server chose an extension that was not offered: "
             "'%.40s'",
             h->extensions);
    return GK_EPROTO;
  }
  if (h->protocol == NULL || strcmp(h->protocol, proto) != 0) {
    snprintf(why, wl, "the server chose subprotocol '%.40s', not %s",
             h->protocol != NULL ? h->protocol : "(none)", proto);
    return GK_EVERSION;
  }
  return 0;
}

/* The response so far: 0 with *hlen set once it is whole and good, 1 to
 * read more, or a GK_E code with `why` (and *status). */
static int parse_101(gk__wsc_conn *k, size_t *hlen, int *status, char *why,
                     size_t wl) {
  char *end = NULL;
  for (size_t i = 0; i + 3 < k->hs_len && end == NULL; i++)
    if (memcmp(k->hs + i, "\r\n\r\n", 4) == 0) end = k->hs + i;
  if (end == NULL) {
    if (k->hs_len < HS_MAX) return 1;
    snprintf(why, wl, "the response headers are over %u bytes", HS_MAX);
    return GK_EPROTO;
  }
  *hlen = (size_t)(end - k->hs) + 4;
  char head[HS_MAX + 1];
  memcpy(head, k->hs, *hlen - 2);
  head[*hlen - 2] = '\0'; /* each line ends with CRLF */
  hs_headers h;
  memset(&h, 0, sizeof h);
  char *line = head, *nl = strstr(line, "\r\n");
  *nl = '\0';
  int rc =
      check_status(k, line, k->hs + *hlen, k->hs_len - *hlen, status, why, wl);
  if (rc != 0) return rc;
  for (line = nl + 2; *line != '\0'; line = nl + 2) {
    nl = strstr(line, "\r\n");
    *nl = '\0';
    if (line[0] == ' ' || line[0] == '\t' || header_line(line, &h) != 0) {
      snprintf(why, wl, "a malformed header line in the 101: '%.40s'", line);
      return GK_EPROTO;
    }
  }
  return check_headers(k, &h, why, wl);
}

/* Handshake bytes in; once the 101 is good, the connection opens and what
 * came after it goes to wslay. */
static void handshake_in(gk__wsc_conn *k, const uint8_t *p, size_t n) {
  size_t room = HS_MAX - k->hs_len;
  size_t take = n < room ? n : room;
  memcpy(k->hs + k->hs_len, p, take);
  k->hs_len += take;
  char why[GK__WSC_WHY_MAX];
  size_t hlen = 0;
  int status = 0;
  int rc = parse_101(k, &hlen, &status, why, sizeof why);
  if (rc == 1) return;
  if (rc != 0) {
    gk__wsc_drop(k, rc, 0, rc == GK_EREFUSED ? status : 0, why);
    return;
  }
  /* the rest of this read beyond what the buffer held, then the buffer's */
  uint8_t after[HS_MAX];
  size_t in_buf = k->hs_len - hlen;
  memcpy(after, k->hs + hlen, in_buf);
  free(k->hs);
  k->hs = NULL;
  if (gk__wsc_conn_open(k) != 0) {
    fail_attempt(k, GK_ENOMEM, 0, "out of memory for the framing");
    return;
  }
  uint32_t id = gk__wsc_id(k->c, k);
  k->c->stats.connects++;
  if (k->c->cb.connect != NULL) k->c->cb.connect(k->c->cb.ctx, k->c, id);
  if (k->state != GK__WSC_OPEN) return;
  if (in_buf > 0) gk__wsc_conn_in(k, after, in_buf);
  if (k->state == GK__WSC_OPEN && take < n)
    gk__wsc_conn_in(k, p + take, n - take);
}

/* --- TCP -------------------------------------------------------------------
 */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  gk__wsc_conn *k = h->data;
  (void)hint;
  *buf = uv_buf_init((char *)k->c->rbuf, sizeof k->c->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  gk__wsc_conn *k = s->data;
  if (n == 0 || k->state == GK__WSC_DEAD) return;
  if (n < 0) {
    if (k->state == GK__WSC_OPEN) {
      gk__wsc_conn_eof(k, n);
    } else {
      fail_attempt(k, GK_EIO, 0, "TCP %s before the 101",
                   n == UV_EOF ? "ended" : uv_strerror((int)n));
    }
    return;
  }
  k->c->stats.wire_in += (uint64_t)n;
  k->last_in_ms = uv_now(k->c->loop);
  if (k->state == GK__WSC_HANDSHAKE)
    handshake_in(k, (const uint8_t *)buf->base, (size_t)n);
  else if (k->state == GK__WSC_OPEN)
    gk__wsc_conn_in(k, (const uint8_t *)buf->base, (size_t)n);
}

static void send_request(gk__wsc_conn *k) {
  gk_net_ws_client *c = k->c;
  char req[1024], host[GK_NET_WS_URL_HOST_MAX + 8], origin[160] = "";
  if (k->url.addr.ss_family == AF_INET6)
    snprintf(host, sizeof host, "[%s]:%u", k->url.host, k->url.port);
  else
    snprintf(host, sizeof host, "%s:%u", k->url.host, k->url.port);
  if (c->origin[0] != '\0')
    snprintf(origin, sizeof origin, "Origin: %s\r\n", c->origin);
  int n = snprintf(req, sizeof req,
                   "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                   "Sec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Protocol: %s\r\n%s\r\n",
                   k->url.path, host, k->key, c->proto, origin);
  uv_buf_t b = uv_buf_init(req, (unsigned)n);
  if (gk__wsc_write(k, &b, 1) != 0)
    fail_attempt(k, GK_EIO, 0, "cannot send the upgrade request");
}

static void on_connected(uv_connect_t *req, int status) {
  gk__wsc_conn *k = req->data;
  if (k->state != GK__WSC_TCP) return; /* dropped meanwhile */
  if (status < 0) {
    fail_attempt(k, GK_EIO, 0, "cannot connect to %s:%u: %s", k->url.host,
                 k->url.port, uv_strerror(status));
    return;
  }
  uv_tcp_nodelay(&k->tcp, 1);
  k->state = GK__WSC_HANDSHAKE;
  k->hs = malloc(HS_MAX);
  if (k->hs == NULL) {
    fail_attempt(k, GK_ENOMEM, 0, "out of memory for the handshake");
    return;
  }
  k->hs_len = 0;
  int rc = uv_read_start((uv_stream_t *)&k->tcp, on_alloc, on_read);
  if (rc != 0) {
    fail_attempt(k, GK_EIO, 0, "cannot read: %s", uv_strerror(rc));
    return;
  }
  send_request(k);
}

static gk__wsc_conn *slot_take(gk_net_ws_client *c) {
  for (uint32_t i = 0; i < c->opts.max_conns; i++) {
    gk__wsc_conn *k = &c->conns[i];
    if (k->state != GK__WSC_FREE) continue;
    uint32_t gen = k->gen;
    memset(k, 0, sizeof *k);
    k->gen = gen;
    k->c = c;
    return k;
  }
  return NULL;
}

int gk_net_ws_client_connect_url(gk_net_ws_client *c, const gk_net_ws_url *u,
                                 uint32_t *conn) {
  if (c == NULL || u == NULL || conn == NULL) return GK_EINVAL;
  if (c->closing) return GK_ECLOSED;
  gk__wsc_conn *k = slot_take(c);
  if (k == NULL) return GK_EFULL;
  uint8_t raw[16];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) return GK_EIO;
  gk_net_ws_key_make(raw, k->key);
  gk_net_ws_key_accept(k->key, k->accept);
  k->url = *u;
  if (uv_tcp_init(c->loop, &k->tcp) != 0) return GK_EIO;
  k->tcp.data = k;
  k->creq.data = k;
  int rc = uv_tcp_connect(&k->creq, &k->tcp,
                          (const struct sockaddr *)&k->url.addr, on_connected);
  k->state = GK__WSC_TCP;
  c->handles++;
  if (rc != 0) { /* closed without a callback: the caller has the code */
    k->state = GK__WSC_DEAD;
    uv_close((uv_handle_t *)&k->tcp, on_tcp_closed);
    return GK_EIO;
  }
  k->due_ms = uv_now(c->loop) + c->opts.handshake_ms;
  *conn = gk__wsc_id(c, k);
  return 0;
}

int gk_net_ws_client_connect(gk_net_ws_client *c, const char *url,
                             uint32_t *conn) {
  gk_net_ws_url u;
  if (gk_net_ws_url_parse(url, &u, NULL, 0) != 0) return GK_EINVAL;
  return gk_net_ws_client_connect_url(c, &u, conn);
}

/* --- the client ------------------------------------------------------------
 */

static void on_tick(uv_timer_t *t) {
  gk_net_ws_client *c = t->data;
  uint64_t now = uv_now(c->loop);
  for (uint32_t i = 0; i < c->opts.max_conns; i++) {
    gk__wsc_conn *k = &c->conns[i];
    if (k->state == GK__WSC_TCP || k->state == GK__WSC_HANDSHAKE) {
      if (now >= k->due_ms)
        fail_attempt(k, GK_ETIMEDOUT, 0, "no complete 101 within %u ms",
                     c->opts.handshake_ms);
    } else if (k->state == GK__WSC_OPEN) {
      gk__wsc_conn_tick(k, now);
    }
  }
}

static int copy_token(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n == 0 || n >= cap) return GK_EINVAL;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)src[i] <= ' ' || src[i] == 0x7f) return GK_EINVAL;
  memcpy(dst, src, n + 1);
  return 0;
}

int gk_net_ws_client_init(gk_net_ws_client *c, uv_loop_t *loop,
                          const gk_net_ws_client_options *opts,
                          const gk_net_ws_client_callbacks *cb) {
  if (c == NULL || loop == NULL || cb == NULL || cb->receive == NULL)
    return GK_EINVAL;
  memset(c, 0, sizeof *c);
  gk_net_ws_client_options o =
      opts != NULL ? *opts : (gk_net_ws_client_options){0};
  if (o.max_conns > 65535) return GK_EINVAL;
  if (o.max_conns == 0) o.max_conns = 1;
  if (o.handshake_ms == 0) o.handshake_ms = 5000;
  if (o.close_ms == 0) o.close_ms = 1000;
  if (o.max_msg == 0) o.max_msg = GK_WIRE_MAX;
  if (o.backlog == 0) o.backlog = 65536;
  if (copy_token(c->proto, sizeof c->proto,
                 o.subprotocol != NULL ? o.subprotocol : "gamekit.1") != 0 ||
      (o.origin != NULL &&
       copy_token(c->origin, sizeof c->origin, o.origin) != 0))
    return GK_EINVAL;
  o.subprotocol = o.origin = NULL; /* the copies are used */
  if (getrandom(&c->mask_rng, sizeof c->mask_rng, 0) !=
      (ssize_t)sizeof c->mask_rng)
    return GK_EIO;
  c->conns = calloc(o.max_conns, sizeof *c->conns);
  if (c->conns == NULL) return GK_ENOMEM;
  c->loop = loop;
  c->cb = *cb;
  c->opts = o;
  uv_timer_init(loop, &c->tick);
  c->tick.data = c;
  uv_timer_start(&c->tick, on_tick, TICK_MS, TICK_MS);
  c->handles = 1;
  return 0;
}

static void on_tick_closed(uv_handle_t *h) {
  gk__wsc_handle_closed(h->data);
}

void gk_net_ws_client_close(gk_net_ws_client *c,
                            void (*close_cb)(gk_net_ws_client *c)) {
  if (c == NULL || c->closing) return;
  c->closing = 1;
  c->close_cb = close_cb;
  for (uint32_t i = 0; i < c->opts.max_conns; i++) {
    gk__wsc_conn *k = &c->conns[i];
    if (k->state == GK__WSC_OPEN)
      gk__wsc_drop(k, 0, 1006, 0, "the client closed");
    else if (k->state == GK__WSC_TCP || k->state == GK__WSC_HANDSHAKE)
      fail_attempt(k, GK_ECLOSED, 0, "the client closed");
  }
  uv_timer_stop(&c->tick);
  uv_close((uv_handle_t *)&c->tick, on_tick_closed);
}

void gk_net_ws_client_disconnect(gk_net_ws_client *c, uint32_t conn,
                                 int at_once) {
  gk__wsc_conn *k = gk__wsc_lookup(c, conn);
  if (k == NULL) return;
  if (k->state != GK__WSC_OPEN)
    fail_attempt(k, GK_ECLOSED, 0, "given up by this side");
  else if (at_once)
    gk__wsc_drop(k, 0, 1006, 0, "closed at once by this side");
  else
    gk__wsc_conn_fail(k, 1000, "closed by this side");
}
