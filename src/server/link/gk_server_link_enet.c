/* gk_server_link_enet.c: the ENet backend of the server's links (the
 * interface is gk_server_link.h).
 *
 * One ENet host (gk_net_transport: its socket polled by the uv loop)
 * bound to the config's host and port. Each ENet peer index has one link
 * object here, in use from the transport's `connect` callback to its
 * `disconnect`; ENet reuses peer indices, this file maps them to link
 * objects, and the server never sees them (its connection ids are its
 * own). This is the only server file that calls gk_net_transport_*: sends
 * keep their channel (0 reliable, 1 unreliable and unsequenced), closes
 * their two kinds (graceful: disconnect_later, what is queued leaves
 * first; at once: disconnect_now, whose `disconnect` callback the
 * transport raises at once), so the bytes on the wire and the figures are
 * ENet's as they were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_transport.h"
#include "gk_server_internal.h"

#define CONNECT_BYTES 48u /* ENet's CONNECT command, at least */

typedef struct enet_link {
  sv_link base; /* first: an sv_link * is an enet_link * */
  struct sv_enet *e;
  uint32_t peer; /* the ENet peer index */
  int up;        /* between the transport's connect and disconnect */
} enet_link;

struct sv_enet {
  sv_link_host base; /* first */
  gk_net_transport t;
  enet_link *links; /* by ENet peer index, max_peers of them */
  uint32_t nlinks;
};

static int link_send(sv_link *l, const uint8_t *bytes, size_t len,
                     int reliable) {
  enet_link *el = (enet_link *)l;
  return gk_net_transport_send(&el->e->t, el->peer, bytes, len, reliable);
}

static void link_close(sv_link *l, int at_once) {
  enet_link *el = (enet_link *)l;
  gk_net_transport_disconnect(&el->e->t, el->peer, at_once);
}

static uint32_t link_rtt(const sv_link *l) {
  const enet_link *el = (const enet_link *)l;
  return gk_net_transport_rtt(&el->e->t, el->peer);
}

static uint32_t link_rtt_var(const sv_link *l) {
  const enet_link *el = (const enet_link *)l;
  return gk_net_transport_rtt_var(&el->e->t, el->peer);
}

static const sv_link_ops enet_link_ops = {
    .kind = "enet",
    .send = link_send,
    .close = link_close,
    .rtt_ms = link_rtt,
    .rtt_var_ms = link_rtt_var,
};

/* --- the transport's callbacks (ctx = the sv_enet) ------------------------ */

static enet_link *link_of(struct sv_enet *e, uint32_t peer) {
  return peer < e->nlinks && e->links[peer].up ? &e->links[peer] : NULL;
}

static void on_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  struct sv_enet *e = ctx;
  if (peer >= e->nlinks) { /* the host has max_peers peers: never */
    gk_net_transport_disconnect(t, peer, 1);
    return;
  }
  enet_link *el = &e->links[peer];
  memset(el, 0, sizeof(*el));
  el->base.ops = &enet_link_ops;
  el->base.host = &e->base;
  el->base.conn = SV_NO_CONN;
  el->e = e;
  el->peer = peer;
  el->up = 1;
  uint32_t ip = gk_net_transport_peer_ipv4(t, peer);
  el->base.addr_key = ip;
  snprintf(el->base.addr, sizeof(el->base.addr), "%u.%u.%u.%u",
           (unsigned)(ip >> 24) & 255u, (unsigned)(ip >> 16) & 255u,
           (unsigned)(ip >> 8) & 255u, (unsigned)ip & 255u);
  /* the ENet CONNECT datagram (48 bytes and more) is the request here */
  el->base.hello_len = CONNECT_BYTES;
  sv_link_up(e->base.srv, &el->base);
}

static void on_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                       const uint8_t *bytes, size_t len) {
  (void)t;
  struct sv_enet *e = ctx;
  enet_link *el = link_of(e, peer);
  if (el) sv_link_data(e->base.srv, &el->base, bytes, len);
}

static void on_disconnect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  struct sv_enet *e = ctx;
  enet_link *el = link_of(e, peer);
  if (!el) return;
  el->up = 0;
  sv_link_down(e->base.srv, &el->base);
}

/* --- the host ------------------------------------------------------------- */

static void host_stats(const sv_link_host *h, sv_link_host_stats *out) {
  const gk_net_transport_stats *ts = &((const struct sv_enet *)h)->t.stats;
  memset(out, 0, sizeof(*out));
  out->packets_in = ts->packets_in;
  out->bytes_in = ts->bytes_in;
  out->packets_out = ts->packets_out;
  out->bytes_out = ts->bytes_out;
  out->drop_oversize = ts->drop_oversize;
  out->drains = ts->services;
  out->drain_ns = ts->drain_ns;
  out->drain_ns_max = ts->drain_ns_max;
  out->send_calls = ts->send_calls;
  out->read_calls = ts->read_calls;
}

static void on_transport_closed(gk_net_transport *t) {
  struct sv_enet *e =
      (struct sv_enet *)((char *)t - offsetof(struct sv_enet, t));
  sv_link_host_closed(&e->base); /* may free e */
}

static void host_close(sv_link_host *h) {
  struct sv_enet *e = (struct sv_enet *)h;
  for (uint32_t i = 0; i < e->nlinks; i++) e->links[i].up = 0;
  gk_net_transport_close(&e->t, on_transport_closed);
}

static void host_free(sv_link_host *h) {
  struct sv_enet *e = (struct sv_enet *)h;
  free(e->links);
  free(e);
}

static const sv_link_host_ops enet_host_ops = {
    .kind = "enet",
    .stats = host_stats,
    .close = host_close,
    .free = host_free,
};

int sv_enet_open(gk_server *s, char *err, size_t errlen) {
  const gk_server_config *cfg = s->cfg;
  struct sv_enet *e = calloc(1, sizeof(*e));
  if (e) e->links = calloc(cfg->max_peers, sizeof(*e->links));
  if (!e || !e->links) {
    free(e);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  e->nlinks = cfg->max_peers;
  e->base.ops = &enet_host_ops;
  gk_net_transport_options to;
  memset(&to, 0, sizeof(to));
  to.bind_host = cfg->host;
  to.port = cfg->port;
  to.max_peers = cfg->max_peers;
  to.service_ms = cfg->service_ms;
  to.socket_buffer = cfg->socket_buffer;
  to.timeout_ms = cfg->peer_timeout_ms;
  to.ping_ms = cfg->ping_ms;
  to.max_packet = cfg->max_packet;
  gk_net_transport_callbacks tc = {e, on_receive, on_connect, on_disconnect};
  int rc = gk_net_transport_init(&e->t, s->loop, &to, &tc);
  if (rc) {
    /* the system's reason ("address already in use") when there is one */
    const char *why =
        e->t.sys_err ? uv_strerror(e->t.sys_err) : gk_strerror(rc);
    host_free(&e->base);
    return gk_errf(err, errlen, rc, "cannot listen on %s:%u: %s", cfg->host,
                   (unsigned)cfg->port, why);
  }
  sv_link_host_add(s, &e->base); /* the first backend: there is room */
  s->enet = e;
  return 0;
}

uint16_t sv_enet_port(const gk_server *s) {
  return s->enet ? s->enet->t.port : 0;
}

uint32_t sv_enet_socket_buffer(const gk_server *s) {
  return s->enet ? gk_net_transport_socket_buffer(&s->enet->t) : 0;
}
