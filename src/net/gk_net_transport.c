/* gk_net_transport.c: an ENet host driven by a libuv loop.
 *
 * ENet normally wants enet_host_service called in a loop with a timeout.
 * Here the uv loop does the waiting: a uv_poll on ENet's (non-blocking)
 * UDP socket wakes us when datagrams arrive, and we then service ENet once
 * with a zero timeout and take every event that queued (see drain). A
 * one-shot service timer, pushed back by every drain, runs the same drain
 * so ENet's own timers (pings, reliable resends, timeouts) keep going when
 * nothing arrives, and a uv_prepare handle flushes whatever was queued
 * during the loop iteration right before the loop blocks again. A
 * uv_idle handle, started only while the read queue holds datagrams ENet
 * did not take, runs one more drain per loop iteration.
 *
 * Closing is asynchronous like every uv handle: the ENet host is destroyed
 * only once the four handles are closed, so no callback can see a freed
 * host.
 */
#include "gk_net_transport.h"

#include <enet/enet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gk_err.h"
#include "gk_net_batch.h"
#include "gk_net_wire.h"

static ENetHost *host_of(const gk_net_transport *t) {
  return (ENetHost *)t->host;
}

static ENetPeer *peer_of(const gk_net_transport *t, uint32_t id) {
  ENetHost *h = host_of(t);
  if (h == NULL || id >= h->peerCount) return NULL;
  return &h->peers[id];
}

static uint32_t id_of(const gk_net_transport *t, const ENetPeer *p) {
  return (uint32_t)(p - host_of(t)->peers);
}

static void set_timeout(gk_net_transport *t, ENetPeer *p) {
  if (t->opts.timeout_ms != 0)
    enet_peer_timeout(p, 0, t->opts.timeout_ms, t->opts.timeout_ms);
}

static void on_service(uv_timer_t *h);
static void on_more(uv_idle_t *h);

/* ENet's socket calls inside a service or a flush go in batches
 * (gk_net_batch.h); the batch's counts are copied to the stats after. */
static void batch_open(gk_net_transport *t) {
  gk_net_batch_open(t->batch);
}

/* The transport's own allocations beside the ENet host. */
static void free_parts(gk_net_transport *t) {
  gk_net_batch_free(t->batch);
  t->batch = NULL;
  free(t->sent_ms);
  t->sent_ms = NULL;
}

static void batch_close(gk_net_transport *t) {
  gk_net_batch_close(t->batch);
  const gk_net_batch_stats *bs = gk_net_batch_stats_of(t->batch);
  if (bs == NULL) return;
  t->stats.datagrams_batched = bs->sent;
  t->stats.send_calls = bs->send_calls;
  t->stats.send_dropped = bs->send_dropped;
  t->stats.datagrams_read = bs->read;
  t->stats.read_calls = bs->read_calls;
  t->stats.read_dropped = bs->read_dropped;
}

/* ENet's packet throttle drops unreliable packets at the sender, before
 * they reach the socket, once a round trip comes back longer than the
 * last ones: 2/32 more of them per such acknowledgement, down to all,
 * and it recovers by 2/32 per acknowledgement that is not longer. Under
 * load (a busy server, a busy client) it cut whole connections off for a
 * second and more (the stalls seen at 256 rooms per server). INPUT and
 * CONFIRMED carry their own redundancy, so a lost one costs a step
 * period; a throttled connection costs the match. The throttle never
 * closes: deceleration 0, the throttle at its limit. Set on the CONNECT
 * event (a client's CONNECT carries its throttle settings, which the
 * VERIFY_CONNECT must echo: not changed before that). */
static void no_throttle(ENetPeer *p) {
  p->packetThrottleDeceleration = 0;
  p->packetThrottle = ENET_PEER_PACKET_THROTTLE_SCALE;
}

/* ENet 1.3.17 folds the handshake's round trip into a 500 ms default with
 * weight 1/8 (rtt = 500 - (500 - sample) / 8): take the sample back out so
 * the estimate starts from a measurement. The variance starts at 1/8 of
 * it; pings settle both within a second. */
static void seed_rtt(ENetPeer *p) {
  enet_uint32 def = ENET_PEER_DEFAULT_ROUND_TRIP_TIME;
  if (p->roundTripTime >= def) return;
  enet_uint32 below = (def - p->roundTripTime) * 8u;
  enet_uint32 sample = below >= def ? 1u : def - below;
  p->roundTripTime = sample;
  p->roundTripTimeVariance = sample / 8u;
}

/* Pings keep ENet's round-trip estimate fresh while data flows (ENet
 * pings only idle links): each connection about every ping_ms. A ping
 * falls due ping_ms after the connection's last one. While packets flow
 * to the connection it rides in the next one (gk_net_transport_send
 * queues it first, so one datagram carries both); the sweep, run every
 * quarter period, sends it alone to a connection that is due and was
 * sent nothing for a quarter period (a lobby, a quiet link), so those are
 * pinged every 1 to 1.25 periods. A ping alone is a datagram of its own;
 * one that rides costs a few bytes. The time of a connection's last ping
 * is kept in its ENet peer's `data`, of its last packet in t->sent_ms
 * (ms, uv_now, wrapping). */
static uint32_t now_ms(const gk_net_transport *t) {
  return (uint32_t)uv_now(t->loop);
}

static uint32_t pinged_ms(const ENetPeer *p) {
  return (uint32_t)(uintptr_t)p->data;
}

static void ping(gk_net_transport *t, ENetPeer *p, uint32_t now) {
  enet_peer_ping(p);
  p->data = (void *)(uintptr_t)now;
  t->stats.pings++;
  t->dirty = 1;
}

static void ping_if_due(gk_net_transport *t, ENetPeer *p) {
  uint32_t now = now_ms(t);
  if (t->opts.ping_ms != 0 && now - pinged_ms(p) >= t->opts.ping_ms)
    ping(t, p, now);
}

static void ping_sweep(gk_net_transport *t) {
  uint32_t quarter = t->opts.ping_ms / 4u + 1u;
  if (t->opts.ping_ms == 0 || uv_now(t->loop) < t->ping_due) return;
  t->ping_due = uv_now(t->loop) + quarter;
  ENetHost *h = host_of(t);
  uint32_t now = now_ms(t);
  for (size_t i = 0; i < h->peerCount; i++) {
    ENetPeer *p = &h->peers[i];
    if (p->state == ENET_PEER_STATE_CONNECTED &&
        now - pinged_ms(p) >= t->opts.ping_ms &&
        (t->sent_ms == NULL || now - t->sent_ms[i] >= quarter)) {
      ping(t, p, now);
      t->stats.pings_alone++;
    }
  }
}

/* Hands one ENet event to the callbacks. */
static void dispatch(gk_net_transport *t, ENetEvent *ev) {
  uint32_t id = id_of(t, ev->peer);
  switch (ev->type) {
  case ENET_EVENT_TYPE_CONNECT:
    t->stats.connects++;
    set_timeout(t, ev->peer);
    seed_rtt(ev->peer);
    no_throttle(ev->peer);
    /* due at once: the first ping rides the first packet (a room's
     * answer) or goes alone at the next sweep, so a new connection's
     * estimate has samples before a match starts a moment later */
    ev->peer->data = (void *)(uintptr_t)(now_ms(t) - t->opts.ping_ms);
    if (t->cb.connect != NULL) t->cb.connect(t->cb.ctx, t, id);
    break;
  case ENET_EVENT_TYPE_DISCONNECT:
    t->stats.disconnects++;
    if (t->cb.disconnect != NULL) t->cb.disconnect(t->cb.ctx, t, id);
    break;
  case ENET_EVENT_TYPE_RECEIVE:
    if (ev->packet->dataLength > t->opts.max_packet) {
      t->stats.drop_oversize++;
    } else {
      t->stats.packets_in++;
      t->stats.bytes_in += ev->packet->dataLength;
      t->cb.receive(t->cb.ctx, t, id, ev->packet->data, ev->packet->dataLength);
    }
    enet_packet_destroy(ev->packet);
    break;
  default:
    break;
  }
}

/* One enet_host_service call (with the read and send queues open), then
 * the events it queued. */
static void service_pass(gk_net_transport *t) {
  ENetEvent ev;
  t->stats.services++;
  batch_open(t);
  int rc = enet_host_service(host_of(t), &ev, 0);
  batch_close(t);
  /* A pass that ends in a RECEIVE (or nothing) sent what it queued (its
   * acknowledgements) after reading: no flush is owed for it. A CONNECT or
   * DISCONNECT may end the pass before that send (or in the middle of the
   * walk of a timeout): flush then. */
  if (rc > 0 && ev.type != ENET_EVENT_TYPE_RECEIVE) t->dirty = 1;
  while (rc > 0 && t->close_cb == NULL && t->host != NULL) {
    dispatch(t, &ev);
    if (t->close_cb != NULL || t->host == NULL) break;
    rc = enet_host_check_events(host_of(t), &ev);
  }
}

/* One ENet service: one pass over the socket (ENet reads up to 256
 * datagrams, stopping early at a connect or disconnect), then every event
 * that pass queued, taken with enet_host_check_events, which neither
 * sends nor reads nor walks the peer table. enet_host_service itself does
 * that walk twice per call, so it is called once per drain, not once per
 * event: what is left in the socket wakes the poll again, and what is left
 * in the batch's read queue (gk_net_batch.h) the idle handle, one pass per loop
 * iteration: not in this drain, nor from a timer (libuv runs a timer
 * re-armed at 0 again in the same timer phase), so that a storm of
 * connects, each ending a pass, does not hold up the loop's timers (the
 * step timer among them). The service timer is pushed back, so it fires
 * only when nothing came for service_ms. Stops early once close has
 * begun. */
static void drain(gk_net_transport *t) {
  uint64_t t0 = uv_hrtime();
  service_pass(t);
  if (t->close_cb == NULL && t->host != NULL) ping_sweep(t);
  if (t->close_cb == NULL) {
    uv_timer_start(&t->service, on_service, t->opts.service_ms, 0);
    if (gk_net_batch_pending(t->batch)) uv_idle_start(&t->more, on_more);
  }
  uint64_t took = uv_hrtime() - t0;
  t->stats.drain_ns += took;
  if (took > t->stats.drain_ns_max) t->stats.drain_ns_max = took;
}

/* Datagrams wait in the read queue: one more pass (see drain). */
static void on_more(uv_idle_t *h) {
  gk_net_transport *t = h->data;
  uv_idle_stop(h);
  if (t->close_cb == NULL && t->host != NULL) drain(t);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  gk_net_transport *t = h->data;
  if (t->close_cb == NULL && t->host != NULL) drain(t);
}

/* Nothing arrived for service_ms: let ENet run its timers (pings,
 * resends, timeouts). */
static void on_service(uv_timer_t *h) {
  gk_net_transport *t = h->data;
  drain(t);
}

static void on_prepare(uv_prepare_t *h) {
  gk_net_transport *t = h->data;
  if (t->dirty && t->host != NULL && t->close_cb == NULL) {
    batch_open(t);
    enet_host_flush(host_of(t));
    batch_close(t);
    t->stats.flushes++;
    t->dirty = 0;
  }
}

int gk_net_transport_init(gk_net_transport *t, uv_loop_t *loop,
                          const gk_net_transport_options *opts,
                          const gk_net_transport_callbacks *cb) {
  if (t == NULL || loop == NULL || opts == NULL || cb == NULL ||
      cb->receive == NULL)
    return GK_EINVAL;
  memset(t, 0, sizeof *t);
  t->loop = loop;
  t->cb = *cb;
  t->opts = *opts;
  if (t->opts.max_peers == 0) t->opts.max_peers = 1;
  if (t->opts.service_ms == 0) t->opts.service_ms = 10;
  if (t->opts.max_packet == 0) t->opts.max_packet = GK_WIRE_MAX;
  if (t->opts.max_peers > ENET_PROTOCOL_MAXIMUM_PEER_ID) return GK_EINVAL;
  if (enet_initialize() != 0) return GK_EIO;
  ENetAddress addr;
  ENetHost *h;
  if (opts->bind_host != NULL) {
    if (enet_address_set_host_ip(&addr, opts->bind_host) != 0 &&
        enet_address_set_host(&addr, opts->bind_host) != 0)
      return GK_EINVAL;
    addr.port = opts->port;
    errno = 0; /* ENet frees what it made and keeps the bind's errno */
    h = enet_host_create(&addr, t->opts.max_peers, 2, 0, 0);
  } else {
    errno = 0;
    h = enet_host_create(NULL, t->opts.max_peers, 2, 0, 0);
  }
  if (h == NULL) {
    t->sys_err = errno != 0 ? uv_translate_sys_error(errno) : 0;
    return GK_EIO;
  }
  t->host = h;
  /* libenet seeds its connect ids from the host's address in memory and
   * time(NULL): a host made in the same second as one just freed (a
   * rejoin, a reload) would repeat its ids, and a server still holding
   * the old peer at the same port ignores the new CONNECT as a resend */
  uint64_t now = uv_hrtime();
  h->randomSeed += (enet_uint32)now ^ (enet_uint32)(now >> 32);
  t->batch = gk_net_batch_new(h->socket); /* NULL: one call per datagram */
  t->sent_ms = calloc(h->peerCount, sizeof *t->sent_ms); /* NULL: pings go
                                                    alone when due */
  t->port = opts->bind_host != NULL ? h->address.port : 0;
  if (t->opts.socket_buffer != 0) { /* a burst of every room's datagrams
                                       must fit, or the kernel drops them */
    enet_socket_set_option(h->socket, ENET_SOCKOPT_RCVBUF,
                           (int)t->opts.socket_buffer);
    enet_socket_set_option(h->socket, ENET_SOCKOPT_SNDBUF,
                           (int)t->opts.socket_buffer);
  }
  int rc = uv_poll_init_socket(loop, &t->poll, h->socket);
  if (rc != 0) {
    t->sys_err = rc;
    free_parts(t);
    enet_host_destroy(h);
    t->host = NULL;
    return GK_EIO;
  }
  uv_timer_init(loop, &t->service);
  uv_prepare_init(loop, &t->flush);
  uv_idle_init(loop, &t->more);
  t->poll.data = t->service.data = t->flush.data = t->more.data = t;
  t->handles = 4;
  uv_poll_start(&t->poll, UV_READABLE, on_poll);
  uv_timer_start(&t->service, on_service, t->opts.service_ms, 0);
  uv_prepare_start(&t->flush, on_prepare);
  return 0;
}

int gk_net_transport_connect(gk_net_transport *t, const char *host,
                             uint16_t port, uint32_t *peer) {
  if (t->host == NULL || t->close_cb != NULL || host == NULL) return GK_ESTATE;
  ENetAddress addr;
  if (enet_address_set_host_ip(&addr, host) != 0 &&
      enet_address_set_host(&addr, host) != 0)
    return GK_EINVAL;
  addr.port = port;
  ENetPeer *p = enet_host_connect(host_of(t), &addr, 2, 0);
  if (p == NULL) return GK_EFULL;
  set_timeout(t, p);
  if (peer != NULL) *peer = id_of(t, p);
  t->dirty = 1;
  return 0;
}

int gk_net_transport_send(gk_net_transport *t, uint32_t peer,
                          const uint8_t *bytes, size_t len, int reliable) {
  ENetPeer *p = peer_of(t, peer);
  if (p == NULL || p->state != ENET_PEER_STATE_CONNECTED ||
      t->close_cb != NULL) {
    t->stats.drop_send++;
    return GK_ENOTFOUND;
  }
  if (len > GK_WIRE_MAX) {
    t->stats.drop_send++;
    return GK_ETOOBIG;
  }
  ping_if_due(t, p);
  if (t->sent_ms != NULL) t->sent_ms[peer] = now_ms(t);
  ENetPacket *pkt = enet_packet_create(bytes, len,
                                       reliable ? ENET_PACKET_FLAG_RELIABLE
                                                : ENET_PACKET_FLAG_UNSEQUENCED);
  if (pkt == NULL || enet_peer_send(p, reliable ? 0 : 1, pkt) < 0) {
    if (pkt != NULL) enet_packet_destroy(pkt);
    t->stats.drop_send++;
    return GK_EIO;
  }
  t->stats.packets_out++;
  t->stats.bytes_out += len;
  t->dirty = 1;
  return 0;
}

void gk_net_transport_disconnect(gk_net_transport *t, uint32_t peer,
                                 int at_once) {
  ENetPeer *p = peer_of(t, peer);
  if (p == NULL || p->state == ENET_PEER_STATE_DISCONNECTED) return;
  if (!at_once) {
    /* enet_peer_disconnect would drop what is still queued for the peer
     * (it resets the queues): the last reliable notice, e.g. an ERROR
     * that says why, would never arrive. disconnect_later sends the
     * queue first, then the disconnect. */
    enet_peer_disconnect_later(p, 0);
    t->dirty = 1;
    return;
  }
  /* enet_peer_disconnect_now raises no local event: report it here. */
  enet_peer_disconnect_now(p, 0);
  t->stats.disconnects++;
  if (t->cb.disconnect != NULL) t->cb.disconnect(t->cb.ctx, t, peer);
}

uint32_t gk_net_transport_rtt(const gk_net_transport *t, uint32_t peer) {
  const ENetPeer *p = peer_of(t, peer);
  return p != NULL ? p->roundTripTime : 0;
}

uint32_t gk_net_transport_socket_buffer(const gk_net_transport *t) {
  /* enet_socket_get_option (1.3.17) reads only ERROR and TTL */
  int v = 0;
  socklen_t len = sizeof v;
  if (t->host == NULL ||
      getsockopt(host_of(t)->socket, SOL_SOCKET, SO_RCVBUF, &v, &len) != 0 ||
      v < 0)
    return 0;
  return (uint32_t)v;
}

uint32_t gk_net_transport_peer_ipv4(const gk_net_transport *t, uint32_t peer) {
  const ENetPeer *p = peer_of(t, peer);
  if (p == NULL || p->state == ENET_PEER_STATE_DISCONNECTED) return 0;
  return ENET_NET_TO_HOST_32(p->address.host);
}

uint32_t gk_net_transport_rtt_var(const gk_net_transport *t, uint32_t peer) {
  const ENetPeer *p = peer_of(t, peer);
  return p != NULL ? p->roundTripTimeVariance : 0;
}

static void on_closed(uv_handle_t *h) {
  gk_net_transport *t = h->data;
  if (--t->handles > 0) return;
  if (t->host != NULL) enet_host_destroy(host_of(t));
  t->host = NULL;
  free_parts(t);
  if (t->close_cb != NULL) t->close_cb(t);
}

static void no_close_cb(gk_net_transport *t) {
  (void)t;
}

void gk_net_transport_close(gk_net_transport *t,
                            void (*close_cb)(gk_net_transport *t)) {
  if (t->close_cb != NULL || t->handles == 0) return;
  ENetHost *h = host_of(t);
  for (size_t i = 0; i < h->peerCount; i++)
    if (h->peers[i].state != ENET_PEER_STATE_DISCONNECTED)
      enet_peer_disconnect_now(&h->peers[i], 0);
  t->close_cb = close_cb != NULL ? close_cb : no_close_cb;
  uv_close((uv_handle_t *)&t->poll, on_closed);
  uv_close((uv_handle_t *)&t->service, on_closed);
  uv_close((uv_handle_t *)&t->flush, on_closed);
  uv_close((uv_handle_t *)&t->more, on_closed);
}
