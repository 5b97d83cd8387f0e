/* gk_net_ws_client_conn.c: an open client connection: wslay's client
 * context fed from uv_tcp reads, writes through uv_try_write (the rest
 * queued in libuv, in order), pings and round trips, the close handshake.
 *
 * wslay's send callback never blocks: what the socket does not take at
 * once waits in libuv's write queue, whose size is the backlog the send
 * rule reads (see the header). wslay's queue is therefore empty after
 * every wslay_event_send, and a message goes to the kernel in the call
 * that sent it. Reads: each uv read is handed to wslay_event_recv, whose
 * recv callback takes from it until it is used up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wslay/wslay.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws_client_internal.h"

typedef struct wreq {
  uv_write_t req;
  size_t len;
  uint8_t data[];
} wreq;

static wslay_event_context_ptr ctx_of(const gk__wsc_conn *k) {
  return (wslay_event_context_ptr)k->ws;
}

/* --- writing -------------------------------------------------------------- */

static void on_written(uv_write_t *req, int status) {
  (void)status; /* an error shows as a read error or EOF */
  free(req->data);
}

int gk__wsc_write(gk__wsc_conn *k, const uv_buf_t *bufs, unsigned n) {
  uv_stream_t *s = (uv_stream_t *)&k->tcp;
  size_t total = 0, done = 0;
  for (unsigned i = 0; i < n; i++) total += bufs[i].len;
  int r = uv_try_write(s, bufs, n); /* UV_EAGAIN while libuv holds a queue */
  if (r >= 0)
    done = (size_t)r;
  else if (r != UV_EAGAIN)
    return -1;
  k->c->stats.wire_out += done;
  if (done == total) return 0;
  wreq *w = malloc(sizeof *w + (total - done));
  if (w == NULL) return -1;
  size_t at = 0, skip = done;
  for (unsigned i = 0; i < n; i++) {
    size_t len = bufs[i].len, off = skip < len ? skip : len;
    skip -= off;
    memcpy(w->data + at, bufs[i].base + off, len - off);
    at += len - off;
  }
  w->len = at;
  w->req.data = w;
  uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)at);
  if (uv_write(&w->req, s, &b, 1, on_written) != 0) {
    free(w);
    return -1;
  }
  k->c->stats.wire_out += at;
  return 0;
}

/* --- wslay's callbacks ---------------------------------------------------- */

static ssize_t on_wslay_recv(wslay_event_context_ptr ctx, uint8_t *buf,
                             size_t len, int flags, void *user) {
  gk__wsc_conn *k = user;
  (void)flags;
  if (k->in_len == 0) {
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
  }
  size_t n = k->in_len < len ? k->in_len : len;
  memcpy(buf, k->in, n);
  k->in += n;
  k->in_len -= n;
  return (ssize_t)n;
}

/* A frame's header is held for its payload: one write, one segment. */
static ssize_t on_wslay_send(wslay_event_context_ptr ctx, const uint8_t *data,
                             size_t len, int flags, void *user) {
  gk__wsc_conn *k = user;
  if (k->state != GK__WSC_OPEN) {
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  if ((flags & WSLAY_MSG_MORE) && k->pend_len == 0 && len <= sizeof k->pend) {
    memcpy(k->pend, data, len);
    k->pend_len = (uint8_t)len;
    return (ssize_t)len;
  }
  uv_buf_t b[2] = {uv_buf_init((char *)k->pend, k->pend_len),
                   uv_buf_init((char *)data, (unsigned)len)};
  int rc =
      k->pend_len > 0 ? gk__wsc_write(k, b, 2) : gk__wsc_write(k, b + 1, 1);
  k->pend_len = 0;
  if (rc != 0) {
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  return (ssize_t)len;
}

static int on_wslay_genmask(wslay_event_context_ptr ctx, uint8_t *buf,
                            size_t len, void *user) {
  gk__wsc_conn *k = user;
  (void)ctx;
  for (size_t i = 0; i < len; i += 8) { /* splitmix64 */
    uint64_t z = (k->c->mask_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (size_t j = 0; j < 8 && i + j < len; j++)
      buf[i + j] = (uint8_t)(z >> (8 * j));
  }
  return 0;
}

static void rtt_sample(gk__wsc_conn *k, uint64_t us) {
  if (us == 0) us = 1;
  if (k->srtt_us == 0) { /* RFC 6298 2.2 */
    k->srtt_us = us;
    k->rttvar_us = us / 2;
    return;
  }
  uint64_t diff = k->srtt_us > us ? k->srtt_us - us : us - k->srtt_us;
  k->rttvar_us = (3 * k->rttvar_us + diff) / 4;
  k->srtt_us = (7 * k->srtt_us + us) / 8;
}

static void on_pong(gk__wsc_conn *k, const uint8_t *p, size_t len) {
  if (len != 8 || k->ping_ns == 0) return;
  uint64_t ts = 0;
  for (int i = 0; i < 8; i++) ts = ts << 8 | p[i];
  if (ts != k->ping_ns) return; /* unsolicited, or an older ping's */
  k->ping_ns = 0;
  k->c->stats.pongs++;
  rtt_sample(k, (uv_hrtime() - ts) / 1000u);
}

static void on_wslay_msg(wslay_event_context_ptr ctx,
                         const struct wslay_event_on_msg_recv_arg *a,
                         void *user) {
  gk__wsc_conn *k = user;
  gk_net_ws_client *c = k->c;
  (void)ctx;
  if (k->state != GK__WSC_OPEN) return;
  switch (a->opcode) {
  case WSLAY_BINARY_FRAME:
    if (k->code != 0) return; /* closing: nothing more is delivered */
    c->stats.msgs_in++;
    c->stats.bytes_in += a->msg_length;
    c->cb.receive(c->cb.ctx, c, gk__wsc_id(c, k), a->msg, a->msg_length);
    break;
  case WSLAY_TEXT_FRAME:
    gk__wsc_conn_fail(k, WSLAY_CODE_UNSUPPORTED_DATA,
                      "the server sent a text frame");
    break;
  case WSLAY_PONG:
    on_pong(k, a->msg, a->msg_length);
    break;
  default: /* ping: wslay queued the pong; close: wslay queued the echo */
    break;
  }
}

/* --- open, in, out -------------------------------------------------------- */

int gk__wsc_conn_open(gk__wsc_conn *k) {
  static const struct wslay_event_callbacks cbs = {
      .recv_callback = on_wslay_recv,
      .send_callback = on_wslay_send,
      .genmask_callback = on_wslay_genmask,
      .on_msg_recv_callback = on_wslay_msg};
  wslay_event_context_ptr ctx = NULL;
  if (wslay_event_context_client_init(&ctx, &cbs, k) != 0) return GK_ENOMEM;
  wslay_event_config_set_max_recv_msg_length(ctx, k->c->opts.max_msg);
  k->ws = ctx;
  k->state = GK__WSC_OPEN;
  k->due_ms = 0;
  k->last_in_ms = uv_now(k->c->loop);
  k->ping_due_ms = k->last_in_ms; /* the first ping at the next tick */
  return 0;
}

void gk__wsc_conn_free(gk__wsc_conn *k) {
  if (k->ws != NULL) wslay_event_context_free(ctx_of(k));
  k->ws = NULL;
}

/* Ends an open connection whose close is done (or whose TCP is gone). */
static void end_open(gk__wsc_conn *k) {
  wslay_event_context_ptr ctx = ctx_of(k);
  char why[GK__WSC_WHY_MAX + 32];
  if (k->code != 0) {
    gk__wsc_drop(k, 0, k->code, 0, k->why);
  } else if (wslay_event_get_close_received(ctx)) {
    int code = wslay_event_get_status_code_received(ctx);
    snprintf(why, sizeof why, "the server closed it (%d)", code);
    gk__wsc_drop(k, 0, code, 0, why);
  } else if (wslay_event_get_close_sent(ctx)) { /* wslay's own: an error */
    int code = wslay_event_get_status_code_sent(ctx);
    snprintf(why, sizeof why, "a framing error from the server (%d sent)",
             code);
    gk__wsc_drop(k, 0, code, 0, why);
  } else {
    gk__wsc_drop(k, 0, WSLAY_CODE_ABNORMAL_CLOSURE, 0,
                 "TCP ended without a close frame");
  }
}

/* Writes what wslay holds; ends the connection once both closes went. */
static void pump(gk__wsc_conn *k) {
  if (k->state != GK__WSC_OPEN) return;
  wslay_event_context_ptr ctx = ctx_of(k);
  if (wslay_event_want_write(ctx) && wslay_event_send(ctx) != 0) {
    gk__wsc_drop(k, 0, WSLAY_CODE_ABNORMAL_CLOSURE, 0, "cannot write to TCP");
    return;
  }
  if (k->state == GK__WSC_OPEN && wslay_event_get_close_sent(ctx) &&
      wslay_event_get_close_received(ctx))
    end_open(k);
}

void gk__wsc_conn_in(gk__wsc_conn *k, const uint8_t *p, size_t n) {
  wslay_event_context_ptr ctx = ctx_of(k);
  if (!wslay_event_get_read_enabled(ctx)) return; /* after a close */
  k->in = p;
  k->in_len = n;
  int rc = wslay_event_recv(ctx);
  k->in = NULL;
  k->in_len = 0;
  if (k->state != GK__WSC_OPEN) return; /* a callback ended it */
  if (rc != 0) {
    gk__wsc_drop(k, 0, WSLAY_CODE_ABNORMAL_CLOSURE, 0,
                 "the framing failed (out of memory)");
    return;
  }
  if (!wslay_event_get_read_enabled(ctx) && k->due_ms == 0)
    k->due_ms = uv_now(k->c->loop) + k->c->opts.close_ms;
  pump(k);
}

void gk__wsc_conn_eof(gk__wsc_conn *k, ssize_t n) {
  (void)n;
  end_open(k);
}

void gk__wsc_conn_fail(gk__wsc_conn *k, uint16_t code, const char *why) {
  if (k->state != GK__WSC_OPEN || k->code != 0) return;
  wslay_event_context_ptr ctx = ctx_of(k);
  if (wslay_event_get_close_sent(ctx) || wslay_event_get_close_received(ctx))
    return; /* a close is on already */
  k->code = code;
  snprintf(k->why, sizeof k->why, "%s", why);
  k->due_ms = uv_now(k->c->loop) + k->c->opts.close_ms;
  wslay_event_queue_close(ctx, code, NULL, 0);
  pump(k);
}

static void ping(gk__wsc_conn *k, uint64_t now) {
  k->ping_due_ms = now + k->c->opts.ping_ms;
  uint64_t ts = uv_hrtime();
  uint8_t p[8];
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(ts >> (56 - 8 * i));
  struct wslay_event_msg msg = {
      .opcode = WSLAY_PING, .msg = p, .msg_length = sizeof p};
  if (wslay_event_queue_msg(ctx_of(k), &msg) != 0) return;
  k->ping_ns = ts;
  k->c->stats.pings++;
  pump(k);
}

void gk__wsc_conn_tick(gk__wsc_conn *k, uint64_t now) {
  const gk_net_ws_client_options *o = &k->c->opts;
  if (k->due_ms != 0 && now >= k->due_ms) { /* the close took too long */
    end_open(k); /* with the code of the close that was not answered */
    return;
  }
  if (o->timeout_ms != 0 && now - k->last_in_ms >= o->timeout_ms) {
    gk__wsc_drop(k, 0, WSLAY_CODE_ABNORMAL_CLOSURE, 0,
                 "the server was silent too long");
    return;
  }
  if (o->ping_ms != 0 && k->due_ms == 0 && now >= k->ping_due_ms) ping(k, now);
}

/* --- the calls ------------------------------------------------------------ */

int gk_net_ws_client_send(gk_net_ws_client *c, uint32_t conn,
                          const uint8_t *bytes, size_t len, int reliable) {
  gk__wsc_conn *k = gk__wsc_lookup(c, conn);
  if (k == NULL || k->state != GK__WSC_OPEN || k->code != 0 || k->due_ms != 0) {
    if (c != NULL) c->stats.drop_send++;
    return GK_ENOTFOUND;
  }
  if (bytes == NULL || len > GK_WIRE_MAX) {
    c->stats.drop_send++;
    return GK_ETOOBIG;
  }
  size_t backlog = uv_stream_get_write_queue_size((uv_stream_t *)&k->tcp);
  if (backlog > c->opts.backlog &&
      (!reliable || backlog > 4 * c->opts.backlog)) {
    c->stats.drop_send++;
    c->stats.drop_full++;
    if (reliable)
      gk__wsc_conn_fail(k, WSLAY_CODE_POLICY_VIOLATION,
                        "the server does not read (backlog)");
    return GK_EFULL;
  }
  struct wslay_event_msg msg = {
      .opcode = WSLAY_BINARY_FRAME, .msg = bytes, .msg_length = len};
  if (wslay_event_queue_msg(ctx_of(k), &msg) != 0) {
    c->stats.drop_send++;
    return GK_ENOMEM;
  }
  c->stats.msgs_out++;
  c->stats.bytes_out += len;
  pump(k);
  return 0;
}

uint64_t gk_net_ws_client_rtt_us(const gk_net_ws_client *c, uint32_t conn) {
  const gk__wsc_conn *k = gk__wsc_lookup(c, conn);
  return k != NULL ? k->srtt_us : 0;
}

uint32_t gk_net_ws_client_rtt(const gk_net_ws_client *c, uint32_t conn) {
  return (uint32_t)((gk_net_ws_client_rtt_us(c, conn) + 500) / 1000);
}

uint32_t gk_net_ws_client_rtt_var(const gk_net_ws_client *c, uint32_t conn) {
  const gk__wsc_conn *k = gk__wsc_lookup(c, conn);
  return k != NULL ? (uint32_t)((k->rttvar_us + 500) / 1000) : 0;
}

size_t gk_net_ws_client_backlog(const gk_net_ws_client *c, uint32_t conn) {
  gk__wsc_conn *k = gk__wsc_lookup(c, conn);
  return k != NULL && k->state != GK__WSC_TCP
             ? uv_stream_get_write_queue_size((uv_stream_t *)&k->tcp)
             : 0;
}
