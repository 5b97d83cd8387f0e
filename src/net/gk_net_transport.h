/* gk_net_transport.h: ENet datagrams on a libuv loop.
 *
 * An ENet host whose UDP socket the uv loop polls (uv_poll on the ENet
 * socket; each wake-up is one enet_host_service, then the events it
 * queued), a uv timer that services ENet when nothing arrived for
 * service_ms (pings, resends, timeouts), and a uv_prepare handle that
 * flushes queued packets at most once per loop iteration, just before the
 * loop blocks, so sends made anywhere in an iteration leave together and
 * without waiting for the service timer. ENet walks its whole peer table
 * on every service and flush; these are the only calls that do. The
 * datagrams a service or a flush sends leave in batches, one sendmmsg per
 * 64, and a service reads them in batches, one recvmmsg per 32
 * (gk_net_batch.h).
 *
 * The same transport serves a server (bind an address, many peers) and a
 * client (no bind, connect to one host). Peers are named by a small
 * integer id (their index in the ENet host) that is valid from the
 * `connect` callback (or gk_net_transport_connect) until the `disconnect`
 * callback. Channel 0 is reliable; unreliable packets go on channel 1,
 * unsequenced, so a late datagram is still delivered (the lockstep
 * messages carry their own redundancy and tolerate reordering).
 *
 * Incoming packets larger than max_packet are dropped and counted before
 * the receive callback ever sees them. ENet's packet throttle is opened
 * on every connection: an unreliable packet is never dropped at the
 * sender because round trips grew (it only meets the network's losses).
 */
#ifndef GK_NET_TRANSPORT_H
#define GK_NET_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

typedef struct gk_net_transport gk_net_transport;

typedef struct gk_net_transport_callbacks {
  void *ctx;
  /* Must be non-NULL. One datagram from `peer`; valid for the call only. */
  void (*receive)(void *ctx, gk_net_transport *t, uint32_t peer,
                  const uint8_t *bytes, size_t len);
  /* May be NULL. A connection is up (incoming, or one this side made). */
  void (*connect)(void *ctx, gk_net_transport *t, uint32_t peer);
  /* May be NULL. A connection is gone (closed, refused or timed out). The
   * id may be reused afterwards. */
  void (*disconnect)(void *ctx, gk_net_transport *t, uint32_t peer);
} gk_net_transport_callbacks;

typedef struct gk_net_transport_options {
  const char *bind_host;  /* "127.0.0.1" for a server; NULL for a client */
  uint16_t port;          /* with bind_host: 0 -> an ephemeral port */
  uint32_t max_peers;     /* 1..4095; 0 -> 1 */
  uint32_t service_ms;    /* service when idle this long; 0 -> 10 */
  uint32_t timeout_ms;    /* peer timeout (no ack for this long); 0 -> ENet's
                             default (5..30 s) */
  size_t max_packet;      /* incoming size limit; 0 -> GK_WIRE_MAX */
  uint32_t ping_ms;       /* ping every connection about this often, so
                             ENet's round-trip estimate stays fresh while
                             data flows (ENet pings only idle links): in
                             the next datagram sent to it once due, or on
                             its own when nothing was sent to it for a
                             quarter period; 0 -> off */
  uint32_t socket_buffer; /* the UDP socket's receive and send buffers,
                             bytes; 0 -> ENet's (256 KiB). The kernel caps
                             it (net.core.rmem_max / wmem_max): read back
                             with gk_net_transport_socket_buffer */
} gk_net_transport_options;

typedef struct gk_net_transport_stats {
  uint64_t packets_in, bytes_in;
  uint64_t packets_out, bytes_out;
  uint64_t drop_oversize; /* incoming packets over max_packet */
  uint64_t drop_send;     /* sends refused (no such peer, ENet failure) */
  uint64_t connects, disconnects;
  uint64_t services;    /* enet_host_service calls (one per drain) */
  uint64_t flushes;     /* enet_host_flush calls (at most one per loop turn) */
  uint64_t pings;       /* pings queued (ping_ms) */
  uint64_t pings_alone; /* of them, sent alone: due, and nothing sent to
                           the connection for ping_ms / 4 */
  uint64_t datagrams_batched; /* datagrams ENet sent from a service or a
                                 flush (all through the batch's queue but
                                 one larger than a slot, sent at once) */
  uint64_t send_calls;        /* sendmmsg calls that sent them */
  uint64_t send_dropped;      /* of them, refused by the kernel */
  uint64_t datagrams_read;    /* datagrams ENet read through the read queue */
  uint64_t read_calls;        /* recvmmsg calls that read them */
  uint64_t read_dropped;      /* datagrams larger than any peer sends (over
                                 1,500 bytes): dropped unread by ENet */
  uint64_t drain_ns;          /* time in drains (service and the callbacks) */
  uint64_t drain_ns_max;      /* the longest drain */
} gk_net_transport_stats;

struct gk_net_transport {
  /* read-only for callers */
  gk_net_transport_stats stats;
  uint16_t port; /* the bound port (server), 0 for a client */
  int sys_err;   /* after init's GK_EIO: why, as a libuv error code
                    (UV_EADDRINUSE: the port is taken; uv_strerror names
                    it), or 0 if not known */
  /* private */
  uv_loop_t *loop;
  void *host;                 /* ENetHost */
  struct gk_net_batch *batch; /* its socket calls, batched; may be NULL */
  uint32_t *sent_ms; /* per peer id: uv_now of its last packet; may be NULL */
  gk_net_transport_callbacks cb;
  gk_net_transport_options opts;
  uv_poll_t poll;
  uv_timer_t service;
  uv_prepare_t flush;
  uv_idle_t more;    /* runs while the read queue holds datagrams */
  int dirty;         /* packets queued since the last flush */
  uint64_t ping_due; /* uv_now of the next ping sweep */
  int handles;       /* handles still open (close is asynchronous) */
  void (*close_cb)(gk_net_transport *t);
};

/* Creates the ENet host and starts the handles. Returns 0, GK_EINVAL,
 * GK_EIO (bind failed, e.g. port in use: t->sys_err says which) or
 * GK_ENOMEM. */
int gk_net_transport_init(gk_net_transport *t, uv_loop_t *loop,
                          const gk_net_transport_options *opts,
                          const gk_net_transport_callbacks *cb);

/* Starts a connection to host:port; *peer gets its id. The `connect`
 * callback follows when it is up, `disconnect` if it fails. */
int gk_net_transport_connect(gk_net_transport *t, const char *host,
                             uint16_t port, uint32_t *peer);

/* Queues one datagram (copied). GK_ENOTFOUND for an id with no live
 * connection, GK_ETOOBIG over GK_WIRE_MAX, GK_EIO if ENet refuses. */
int gk_net_transport_send(gk_net_transport *t, uint32_t peer,
                          const uint8_t *bytes, size_t len, int reliable);

/* Closes one connection: gracefully (queued data first) or at once (no
 * notice to the other side). The `disconnect` callback follows. */
void gk_net_transport_disconnect(gk_net_transport *t, uint32_t peer,
                                 int at_once);

/* Round-trip time ENet measured to `peer`, in ms (0 if unknown). ENet
 * smooths it (1/8 of each new sample); its first sample, taken in the
 * handshake, is used as the estimate from the connection on (ENet 1.3.17
 * would fold it into a 500 ms default). */
uint32_t gk_net_transport_rtt(const gk_net_transport *t, uint32_t peer);
/* ENet's round-trip variance (mean deviation, ms) for `peer` (0 if
 * unknown): the jitter estimate. */
uint32_t gk_net_transport_rtt_var(const gk_net_transport *t, uint32_t peer);

/* The IPv4 address of `peer` in host byte order (127.0.0.1 is 0x7f000001),
 * or 0 for an id with no connection. ENet 1.3 speaks IPv4 only. */
uint32_t gk_net_transport_peer_ipv4(const gk_net_transport *t, uint32_t peer);

/* The socket's receive buffer as the kernel set it (Linux reports twice
 * the bytes asked for, its bookkeeping included), or 0 if unknown. */
uint32_t gk_net_transport_socket_buffer(const gk_net_transport *t);

/* Stops everything: every connection is dropped at once, the handles are
 * closed, and close_cb (may be NULL) runs once they are; then the ENet host
 * is destroyed and `t` may be freed. */
void gk_net_transport_close(gk_net_transport *t,
                            void (*close_cb)(gk_net_transport *t));

#endif
