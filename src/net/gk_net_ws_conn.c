/* gk_net_ws_conn.c: one upgraded WebSocket connection: wslay framing on
 * a uv_poll of the socket, the bounded send queue with its replace rule,
 * pings and round trips, and the close handshake.
 *
 * Writing: the send queue holds what the kernel has not taken; wslay
 * gets one data message at a time, and only when it has nothing left of
 * the previous one (wslay_event_want_write is 0), so everything still
 * replaceable stays in our queue and wslay's own queue holds at most one
 * data message plus control frames (pongs, our ping, the close frame).
 * Calls from the caller (send, a graceful close) only write and set
 * flags: a connection is dropped, and `disconnect` runs, from the poll
 * callback or the tick, never inside a caller's call (the at-once
 * disconnect excepted, as documented).
 *
 * Reading: wslay_event_recv reads until the socket would block or the
 * wake-up's byte budget is spent (a fast sender cannot starve the other
 * connections of a loop turn). A read that comes back shorter than asked
 * ends the wake-up's reading without another recv that would only say
 * EAGAIN (one system call per message, not two): the poll is level
 * triggered, so bytes that came since wake it again. After wslay stopped
 * reading (a protocol error, or a close frame received) the rest is read and
 * thrown away until the peer's FIN or close_ms, so our close frame is not
 * destroyed by a reset for unread data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/uio.h>
#include <microhttpd.h>
#include <wslay/wslay.h>

#include "gk_err.h"
#include "gk_net_ws_internal.h"

#define READ_BUDGET 65536u /* bytes read per wake-up and connection */
#define CTRL_MAX 16u       /* control frames queued (pongs) before 1008 */
#define QUEUE_FIRST 64u    /* the send ring's first size, in messages */

static wslay_event_context_ptr ctx_of(const gk_net_ws_conn *c) {
  return (wslay_event_context_ptr)c->ws;
}

static uint64_t now_ms(const gk_net_ws_conn *c) {
  return uv_now(c->w->loop);
}

/* --- wslay's I/O callbacks ------------------------------------------------ */

static ssize_t on_wslay_recv(wslay_event_context_ptr ctx, uint8_t *buf,
                             size_t len, int flags, void *user) {
  gk_net_ws_conn *c = user;
  (void)flags;
  if (c->state != GK__WS_OPEN) {
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  if (c->extra_off < c->extra_len) { /* what MHD read past the request */
    size_t n = c->extra_len - c->extra_off;
    if (n > len) n = len;
    memcpy(buf, c->extra + c->extra_off, n);
    c->extra_off += n;
    return (ssize_t)n;
  }
  if (c->read_budget == 0 || c->drained) {
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
  }
  size_t want = len < c->read_budget ? len : c->read_budget;
  c->w->stats.reads++;
  ssize_t n = recv(c->fd, buf, want, 0);
  if (n > 0) {
    c->read_budget -= (size_t)n;
    c->drained = (size_t)n < want; /* no second recv only to hear EAGAIN */
    c->w->stats.wire_in += (uint64_t)n;
    c->last_in_ms = now_ms(c);
    return n;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
  } else {
    if (n == 0) c->eof = 1;
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
  }
  return -1;
}

/* Bytes wslay handed over, held for the next sendmsg. */
static ssize_t hold_bytes(gk_net_ws_conn *c, const uint8_t *data, size_t len) {
  memcpy(c->pend + c->pend_len, data, len);
  c->pend_len = (uint8_t)(c->pend_len + len);
  return (ssize_t)len;
}

/* wslay writes a frame's header, then its payload, in two calls: the
 * header is held here and goes out in one sendmsg with the payload, one
 * segment (two send()s cost a second segment, and with MSG_MORE a tail
 * of milliseconds now and then). A riding ping (hand_head) is held the
 * same way, whole, ahead of the data frame queued behind it. wslay is told
 * held bytes went; if the socket then takes less than what is held, the
 * rest stays held and the payload waits (wslay retries it), so the bytes
 * keep their order; what is held when wslay has nothing more to write
 * goes alone (flush_held). */
static ssize_t on_wslay_send(wslay_event_context_ptr ctx, const uint8_t *data,
                             size_t len, int flags, void *user) {
  gk_net_ws_conn *c = user;
  if (c->state != GK__WS_OPEN) {
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  int room = c->pend_len + len <= sizeof c->pend;
  if (room && c->hold > 0 && len <= c->hold) {
    c->hold = (uint8_t)(c->hold - len);
    return hold_bytes(c, data, len);
  }
  if (room && (flags & WSLAY_MSG_MORE)) return hold_bytes(c, data, len);
  struct iovec iov[2] = {{.iov_base = c->pend, .iov_len = c->pend_len},
                         {.iov_base = (void *)data, .iov_len = len}};
  struct msghdr mh = {.msg_iov = c->pend_len > 0 ? iov : iov + 1,
                      .msg_iovlen = c->pend_len > 0 ? 2 : 1};
  ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
  c->w->stats.writes++;
  if (n < 0) {
    wslay_event_set_error(ctx, errno == EAGAIN || errno == EWOULDBLOCK ||
                                       errno == EINTR
                                   ? WSLAY_ERR_WOULDBLOCK
                                   : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  c->w->stats.wire_out += (uint64_t)n;
  if ((size_t)n < c->pend_len) { /* part of the held header went */
    memmove(c->pend, c->pend + n, c->pend_len - (size_t)n);
    c->pend_len = (uint8_t)(c->pend_len - (size_t)n);
    n = 0;
  } else {
    n -= c->pend_len;
    c->pend_len = 0;
  }
  if (n == 0 && len > 0) {
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
  }
  return n;
}

/* What is held with nothing of wslay's behind it: alone, as much as the
 * socket takes. A guard: hand_head queues a riding ping only with the
 * data frame behind it (wslay refuses both once a close is queued), and a
 * held header's payload is always wslay's next write. */
static void flush_held(gk_net_ws_conn *c) {
  ssize_t n = send(c->fd, c->pend, c->pend_len, MSG_NOSIGNAL);
  c->w->stats.writes++;
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      c->broken = 1;
    return;
  }
  c->w->stats.wire_out += (uint64_t)n;
  memmove(c->pend, c->pend + n, c->pend_len - (size_t)n);
  c->pend_len = (uint8_t)(c->pend_len - (size_t)n);
}

static void rtt_sample(gk_net_ws_conn *c, uint64_t us) {
  if (us == 0) us = 1;
  if (c->srtt_us == 0) { /* RFC 6298 2.2 */
    c->srtt_us = us;
    c->rttvar_us = us / 2;
    return;
  }
  uint64_t diff = c->srtt_us > us ? c->srtt_us - us : us - c->srtt_us;
  c->rttvar_us = (3 * c->rttvar_us + diff) / 4;
  c->srtt_us = (7 * c->srtt_us + us) / 8;
}

static void on_pong(gk_net_ws_conn *c, const uint8_t *p, size_t len) {
  if (len != 8 || c->ping_ns == 0) return;
  uint64_t ts = 0;
  for (int i = 0; i < 8; i++) ts = ts << 8 | p[i];
  if (ts != c->ping_ns) return; /* unsolicited, or an older ping's */
  c->ping_ns = 0;
  c->w->stats.pongs++;
  rtt_sample(c, (uv_hrtime() - ts) / 1000u);
}

static void on_wslay_msg(wslay_event_context_ptr ctx,
                         const struct wslay_event_on_msg_recv_arg *a,
                         void *user) {
  gk_net_ws_conn *c = user;
  gk_net_ws *w = c->w;
  (void)ctx;
  if (c->state != GK__WS_OPEN) return;
  switch (a->opcode) {
  case WSLAY_BINARY_FRAME:
    if (c->due_ms != 0) { /* closing: nothing more is delivered */
      w->stats.drop_in++;
      return;
    }
    w->stats.msgs_in++;
    w->stats.bytes_in += a->msg_length;
    w->cb.receive(w->cb.ctx, w, gk__ws_id(w, c), a->msg, a->msg_length);
    break;
  case WSLAY_TEXT_FRAME:
    gk__ws_conn_fail(c, WSLAY_CODE_UNSUPPORTED_DATA, GK__WK_TEXT);
    break;
  case WSLAY_PONG:
    on_pong(c, a->msg, a->msg_length);
    break;
  default: /* ping: wslay queued the pong; close: wslay queued the echo */
    break;
  }
}

/* --- open and start ------------------------------------------------------- */

static void on_conn_poll(uv_poll_t *h, int status, int events);

static void sock_setup(gk_net_ws_conn *c, int fd) {
  int one = 1, zero = 0;
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof zero);
  if (c->w->opts.unsent_max > 0) /* the backlog stays where it is replaced */
    setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &c->w->opts.unsent_max,
               sizeof c->w->opts.unsent_max);
  if (c->w->opts.sndbuf > 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &c->w->opts.sndbuf,
               sizeof c->w->opts.sndbuf);
  c->addr_len = sizeof c->addr;
  if (c->fwd_len != 0) { /* a trusted proxy's client */
    c->addr = c->fwd;
    c->addr_len = c->fwd_len;
  } else if (getpeername(fd, (struct sockaddr *)&c->addr, &c->addr_len) != 0) {
    memset(&c->addr, 0, sizeof c->addr);
    c->addr_len = 0;
  }
}

int gk__ws_conn_open(gk_net_ws_conn *c, int fd, void *urh, const char *extra,
                     size_t extra_len) {
  static const struct wslay_event_callbacks cbs = {
      .recv_callback = on_wslay_recv,
      .send_callback = on_wslay_send,
      .on_msg_recv_callback = on_wslay_msg};
  gk_net_ws *w = c->w;
  wslay_event_context_ptr ctx = NULL;
  c->qcap = w->opts.queue_len < QUEUE_FIRST ? w->opts.queue_len : QUEUE_FIRST;
  c->qbytes = 0;
  c->q = calloc(c->qcap, sizeof *c->q);
  if (extra_len > 0) c->extra = malloc(extra_len);
  if (c->q == NULL || (extra_len > 0 && c->extra == NULL) ||
      wslay_event_context_server_init(&ctx, &cbs, c) != 0 ||
      uv_poll_init(w->loop, &c->poll, fd) != 0) {
    if (ctx != NULL) wslay_event_context_free(ctx);
    free(c->q);
    free(c->extra);
    c->q = NULL;
    c->extra = NULL;
    return GK_ENOMEM;
  }
  wslay_event_config_set_max_recv_msg_length(ctx, w->opts.max_msg);
  if (extra_len > 0) memcpy(c->extra, extra, extra_len);
  c->extra_len = extra_len;
  c->ws = ctx;
  c->fd = fd;
  c->urh = urh;
  c->due_ms = 0;
  c->last_in_ms = now_ms(c);
  c->ping_due_ms = now_ms(c);
  sock_setup(c, fd);
  c->poll.data = c;
  w->handles++;
  return 0;
}

static void read_some(gk_net_ws_conn *c);
static void settle(gk_net_ws_conn *c);

void gk__ws_conn_start(gk_net_ws_conn *c) {
  gk_net_ws *w = c->w;
  c->announced = 1;
  w->stats.connects++;
  if (w->cb.connect != NULL)
    w->cb.connect(w->cb.ctx, w, gk__ws_id(w, c), (struct sockaddr *)&c->addr);
  if (c->state != GK__WS_OPEN) return;
  c->events = UV_READABLE;
  uv_poll_start(&c->poll, c->events, on_conn_poll);
  gk__ws_conn_tick(c, now_ms(c)); /* the first ping at once */
  if (c->state == GK__WS_OPEN && c->extra_len > 0) {
    read_some(c);
    settle(c);
  }
}

/* --- writing -------------------------------------------------------------- */

static void poll_update(gk_net_ws_conn *c) {
  if (c->state != GK__WS_OPEN || !c->announced) return;
  int ev = UV_READABLE;
  wslay_event_context_ptr ctx = ctx_of(c);
  /* writable when blocked; also to come back at once and drop (never
   * while only waiting for the peer: that would spin) */
  if (wslay_event_want_write(ctx) || c->pend_len > 0 || c->broken || c->eof ||
      (wslay_event_get_close_sent(ctx) && wslay_event_get_close_received(ctx)))
    ev |= UV_WRITABLE;
  if (ev != c->events) {
    c->events = ev;
    uv_poll_start(&c->poll, ev, on_conn_poll);
  }
}

static void msg_free(gk__ws_msg *m) {
  free(m->data);
  m->data = NULL;
  m->len = 0;
}

static void queue_clear(gk_net_ws_conn *c) {
  c->w->stats.drop_lost += c->qlen;
  for (uint32_t i = 0; i < c->qlen; i++)
    msg_free(&c->q[(c->qhead + i) % c->qcap]);
  c->qhead = c->qlen = 0;
  c->qbytes = 0;
}

static int queue_ping(gk_net_ws_conn *c);

/* The queue's head into wslay (which copies it), a waiting ping ahead of
 * it: the two leave in one sendmsg (on_wslay_send holds the ping). */
static void hand_head(gk_net_ws_conn *c) {
  gk_net_ws *w = c->w;
  gk__ws_msg *m = &c->q[c->qhead];
  if (c->ping_ride) {
    c->ping_ride = 0;
    if (queue_ping(c) == 0) {
      c->hold = 10; /* the ping frame: a 2-byte header and 8 bytes */
      w->stats.pings_rode++;
    }
  }
  c->data_ms = now_ms(c);
  struct wslay_event_msg msg = {
      .opcode = WSLAY_BINARY_FRAME, .msg = m->data, .msg_length = m->len};
  if (wslay_event_queue_msg(ctx_of(c), &msg) == 0) {
    w->stats.msgs_out++;
    w->stats.bytes_out += m->len;
  } else {
    w->stats.drop_lost++; /* a close is queued: too late for data */
  }
  c->qbytes -= m->len;
  msg_free(m);
  c->qhead = (c->qhead + 1) % c->qcap;
  c->qlen--;
}

void gk__ws_conn_pump(gk_net_ws_conn *c) {
  if (c->state != GK__WS_OPEN || c->broken) return;
  wslay_event_context_ptr ctx = ctx_of(c);
  int data_ok = c->code == 0 || c->graceful;
  for (uint32_t i = 0; i <= c->qcap + 1; i++) {
    if (!wslay_event_want_write(ctx) && wslay_event_get_write_enabled(ctx)) {
      if (data_ok && c->qlen > 0) {
        hand_head(c);
      } else if (c->graceful && c->qlen == 0 &&
                 !wslay_event_get_close_sent(ctx)) {
        wslay_event_queue_close(ctx, c->code, NULL, 0);
        c->graceful = 0;
      }
    }
    if (!wslay_event_want_write(ctx)) break;
    if (wslay_event_send(ctx) != 0) {
      c->broken = 1;
      break;
    }
    if (wslay_event_want_write(ctx)) break; /* the socket is full */
  }
  c->hold = 0;
  if (!c->broken && c->pend_len > 0 && !wslay_event_want_write(ctx))
    flush_held(c);
  poll_update(c);
}

/* A queued replaceable message of `type` takes the new bytes in place:
 * 1, or 0 if none (or its buffer could not grow). */
static int queue_replace(gk_net_ws_conn *c, const uint8_t *bytes, size_t len,
                         uint8_t type) {
  for (uint32_t i = 0; i < c->qlen; i++) {
    gk__ws_msg *m = &c->q[(c->qhead + i) % c->qcap];
    if (!m->replace || m->type != type) continue;
    if (len > m->len) {
      uint8_t *p = realloc(m->data, len);
      if (p == NULL) return 0; /* then queue it as a new one */
      m->data = p;
    }
    if (len > 0) memcpy(m->data, bytes, len);
    c->qbytes = c->qbytes - m->len + len;
    m->len = (uint32_t)len;
    c->w->stats.replaced++;
    return 1;
  }
  return 0;
}

/* The ring doubled (at most opts.queue_len), in order from index 0. */
static int queue_grow(gk_net_ws_conn *c) {
  uint32_t cap = c->qcap * 2u;
  if (cap > c->w->opts.queue_len) cap = c->w->opts.queue_len;
  if (cap <= c->qcap) return GK_EFULL; /* at opts.queue_len already */
  gk__ws_msg *q = calloc(cap, sizeof *q);
  if (q == NULL) return GK_ENOMEM;
  for (uint32_t i = 0; i < c->qlen; i++) q[i] = c->q[(c->qhead + i) % c->qcap];
  free(c->q);
  c->q = q;
  c->qcap = cap;
  c->qhead = 0;
  return 0;
}

int gk__ws_conn_queue(gk_net_ws_conn *c, const uint8_t *bytes, size_t len,
                      int replace, uint8_t type) {
  gk_net_ws *w = c->w;
  if (replace && queue_replace(c, bytes, len, type)) return 0;
  if (c->qlen == w->opts.queue_len || c->qbytes + len > w->opts.queue_bytes) {
    w->stats.drop_send++;
    w->stats.drop_full++;
    gk__ws_conn_fail(c, WSLAY_CODE_POLICY_VIOLATION, GK__WK_SLOW);
    return GK_EFULL;
  }
  gk__ws_msg *m = NULL;
  uint8_t *data = malloc(len > 0 ? len : 1);
  if (data == NULL || (c->qlen == c->qcap && queue_grow(c) != 0)) {
    free(data);
    w->stats.drop_lost++;
    return GK_ENOMEM;
  }
  m = &c->q[(c->qhead + c->qlen) % c->qcap];
  m->data = data;
  if (len > 0) memcpy(m->data, bytes, len);
  m->len = (uint32_t)len;
  m->type = type;
  m->replace = (uint8_t)(replace != 0);
  c->qlen++;
  c->qbytes += len;
  if (c->qlen > w->stats.queue_max) w->stats.queue_max = c->qlen;
  gk__ws_conn_pump(c);
  return 0;
}

/* --- closing -------------------------------------------------------------- */

void gk__ws_conn_fail(gk_net_ws_conn *c, uint16_t code, enum gk__ws_kind kind) {
  if (c->state != GK__WS_OPEN || c->code != 0 || c->wslay_closed) return;
  wslay_event_context_ptr ctx = ctx_of(c);
  if (wslay_event_get_close_received(ctx)) return; /* the peer's close is on */
  c->code = code;
  c->kind = (uint8_t)kind;
  c->graceful = 0;
  c->due_ms = now_ms(c) + c->w->opts.close_ms;
  queue_clear(c);
  wslay_event_queue_close(ctx, code, NULL, 0);
  gk__ws_conn_pump(c);
}

/* wslay's own close (it stopped reading): which error, by its code. */
static enum gk__ws_kind wslay_kind(uint16_t sent) {
  switch (sent) {
  case WSLAY_CODE_MESSAGE_TOO_BIG:
    return GK__WK_TOO_BIG;
  case WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA:
    return GK__WK_UTF8;
  default:
    return GK__WK_PROTOCOL;
  }
}

/* The close code and kind if the connection ended now. */
static int end_reason(const gk_net_ws_conn *c, enum gk__ws_kind *kind) {
  wslay_event_context_ptr ctx = ctx_of(c);
  if (c->code != 0) {
    *kind = (enum gk__ws_kind)c->kind;
    return c->code;
  }
  if (c->wslay_closed) {
    uint16_t sent = wslay_event_get_close_sent(ctx)
                        ? wslay_event_get_status_code_sent(ctx)
                        : WSLAY_CODE_PROTOCOL_ERROR;
    *kind = wslay_kind(sent);
    return sent;
  }
  if (wslay_event_get_close_received(ctx)) {
    *kind = GK__WK_PEER;
    return wslay_event_get_status_code_received(ctx);
  }
  *kind = GK__WK_ABNORMAL;
  return WSLAY_CODE_ABNORMAL_CLOSURE;
}

static void count_kind(gk_net_ws_stats *st, enum gk__ws_kind kind) {
  uint64_t *const by_kind[] = {[GK__WK_NONE] = &st->close_abnormal,
                               [GK__WK_LOCAL] = &st->close_local,
                               [GK__WK_PEER] = &st->close_peer,
                               [GK__WK_PROTOCOL] = &st->close_protocol,
                               [GK__WK_TEXT] = &st->close_text,
                               [GK__WK_UTF8] = &st->close_utf8,
                               [GK__WK_SLOW] = &st->close_slow,
                               [GK__WK_TOO_BIG] = &st->close_too_big,
                               [GK__WK_TIMEOUT] = &st->close_timeout,
                               [GK__WK_ABNORMAL] = &st->close_abnormal};
  (*by_kind[kind])++;
}

static void on_conn_closed(uv_handle_t *h) {
  gk_net_ws_conn *c = h->data;
  gk_net_ws *w = c->w;
  if (c->ws != NULL) wslay_event_context_free(ctx_of(c));
  c->ws = NULL;
  queue_clear(c);
  free(c->q);
  free(c->extra);
  c->q = NULL;
  c->extra = NULL;
  gk__ws_slot_free(c);
  gk__ws_handle_closed(w);
}

void gk__ws_conn_drop(gk_net_ws_conn *c, int reason, enum gk__ws_kind kind) {
  if (c->state != GK__WS_OPEN) return;
  gk_net_ws *w = c->w;
  uint32_t id = gk__ws_id(w, c);
  c->state = GK__WS_DEAD;
  wslay_event_shutdown_read(ctx_of(c));
  wslay_event_shutdown_write(ctx_of(c));
  uv_poll_stop(&c->poll); /* before MHD closes the descriptor */
  c->fd = -1;
  count_kind(&w->stats, kind);
  gk__ws_upgrade_close(w, c->urh); /* MHD closes and frees it */
  uv_close((uv_handle_t *)&c->poll, on_conn_closed);
  if (c->announced) {
    w->stats.disconnects++;
    if (w->cb.disconnect != NULL) w->cb.disconnect(w->cb.ctx, w, id, reason);
  } else if (w->pending > 0) {
    w->pending--;
  }
}

void gk__ws_conn_going_away(gk_net_ws_conn *c) {
  if (c->state != GK__WS_OPEN) return;
  wslay_event_context_ptr ctx = ctx_of(c);
  if (c->announced && !wslay_event_get_close_sent(ctx)) {
    /* one try, best effort: a full socket just loses it */
    wslay_event_queue_close(ctx, WSLAY_CODE_GOING_AWAY, NULL, 0);
    if (!c->broken) wslay_event_send(ctx);
  }
  gk__ws_conn_drop(c, WSLAY_CODE_GOING_AWAY, GK__WK_LOCAL);
}

/* In a safe place (poll callback, tick): drop what is finished. */
static void settle(gk_net_ws_conn *c) {
  if (c->state != GK__WS_OPEN) return;
  wslay_event_context_ptr ctx = ctx_of(c);
  enum gk__ws_kind kind = GK__WK_NONE;
  int sent = wslay_event_get_close_sent(ctx);
  int done =
      c->broken || c->eof || (sent && wslay_event_get_close_received(ctx));
  if (done) {
    int reason = end_reason(c, &kind);
    gk__ws_conn_drop(c, reason, kind);
    return;
  }
  if (sent && !c->wr_shut) { /* our close frame is out: FIN after it */
    shutdown(c->fd, SHUT_WR);
    c->wr_shut = 1;
  }
}

/* --- reading -------------------------------------------------------------- */

/* wslay stopped reading: throw bytes away until the FIN. */
static void discard(gk_net_ws_conn *c) {
  uint8_t junk[4096];
  while (c->read_budget > 0) {
    ssize_t n = recv(c->fd, junk, sizeof junk, 0);
    if (n > 0) {
      c->read_budget -= (size_t)n < c->read_budget ? (size_t)n : c->read_budget;
      c->w->stats.wire_in += (uint64_t)n;
      continue;
    }
    if (n == 0)
      c->eof = 1;
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      c->broken = 1;
    return;
  }
}

static void read_some(gk_net_ws_conn *c) {
  wslay_event_context_ptr ctx = ctx_of(c);
  c->read_budget = READ_BUDGET;
  c->drained = 0;
  if (!wslay_event_get_read_enabled(ctx)) {
    discard(c);
    return;
  }
  if (wslay_event_recv(ctx) != 0 && !c->eof) c->broken = 1;
  if (c->state != GK__WS_OPEN) return; /* a callback dropped it */
  if (c->eof || c->broken) return;     /* settle drops it */
  if (!wslay_event_get_read_enabled(ctx) && c->due_ms == 0) {
    /* wslay stopped: a close frame came, or it queued one (an error) */
    c->due_ms = now_ms(c) + c->w->opts.close_ms;
    if (!wslay_event_get_close_received(ctx) && c->code == 0)
      c->wslay_closed = 1;
    queue_clear(c);
  }
  if (c->due_ms == 0 && wslay_event_get_queued_msg_count(ctx) > CTRL_MAX)
    gk__ws_conn_fail(c, WSLAY_CODE_POLICY_VIOLATION,
                     GK__WK_SLOW); /* pongs pile up */
  gk__ws_conn_pump(c);
}

static void on_conn_poll(uv_poll_t *h, int status, int events) {
  gk_net_ws_conn *c = h->data;
  if (c->state != GK__WS_OPEN) return;
  if (status < 0) {
    c->broken = 1;
  } else {
    if (events & UV_READABLE) read_some(c);
    if (c->state == GK__WS_OPEN && (events & UV_WRITABLE)) gk__ws_conn_pump(c);
  }
  settle(c);
}

/* --- the tick ------------------------------------------------------------- */

/* A ping into wslay's queue, its payload the time now: 0, or -1. */
static int queue_ping(gk_net_ws_conn *c) {
  uint64_t ts = uv_hrtime();
  uint8_t p[8];
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(ts >> (56 - 8 * i));
  struct wslay_event_msg msg = {
      .opcode = WSLAY_PING, .msg = p, .msg_length = sizeof p};
  if (wslay_event_queue_msg(ctx_of(c), &msg) != 0) return -1;
  c->ping_ns = ts;
  c->w->stats.pings++;
  return 0;
}

/* A ping is due. While data messages flow (one went within ping_ms) it
 * waits for the next and rides in its sendmsg (hand_head); it goes alone
 * on a quiet link, or (`alone`) once it has waited ping_ms. */
static void ping(gk_net_ws_conn *c, uint64_t now, int alone) {
  uint32_t every = c->w->opts.ping_ms;
  c->ping_due_ms = now + every;
  if (!alone && c->data_ms != 0 && now - c->data_ms < every) {
    if (!c->ping_ride) c->ride_due_ms = now + every;
    c->ping_ride = 1;
    return;
  }
  c->ping_ride = 0;
  if (wslay_event_want_write(ctx_of(c))) return; /* blocked: not one more */
  if (queue_ping(c) == 0) gk__ws_conn_pump(c);
}

void gk__ws_conn_tick(gk_net_ws_conn *c, uint64_t now) {
  const gk_net_ws_options *o = &c->w->opts;
  if (c->state == GK__WS_HANDSHAKE) { /* the 101 never went out */
    if (now >= c->due_ms) gk__ws_slot_free(c);
    return;
  }
  if (c->state != GK__WS_OPEN || !c->announced) return;
  enum gk__ws_kind kind = GK__WK_NONE;
  if (c->due_ms != 0 && now >= c->due_ms) { /* the close took too long */
    int reason = end_reason(c, &kind);
    gk__ws_conn_drop(c, reason, kind);
    return;
  }
  if (o->timeout_ms != 0 && now - c->last_in_ms >= o->timeout_ms) {
    gk__ws_conn_drop(c, WSLAY_CODE_ABNORMAL_CLOSURE, GK__WK_TIMEOUT);
    return;
  }
  int waited = c->ping_ride && now >= c->ride_due_ms;
  if (o->ping_ms != 0 && c->due_ms == 0 && (now >= c->ping_due_ms || waited))
    ping(c, now, waited);
  settle(c);
}
