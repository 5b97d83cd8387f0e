/* gk_net_sendq.h: ENet's datagrams, sent in batches (private to
 * gk_net_transport.c).
 *
 * ENet sends every datagram with a sendmsg of its own (enet_socket_send):
 * a service or a flush that sends to 60 peers makes 60 system calls. While
 * a queue is open on the calling thread, gk_net_sendq.c's enet_socket_send,
 * which takes the place of libenet's (libenet 1.3.17 calls its own through
 * its PLT, and a definition in the executable comes first), copies each
 * datagram for the queue's socket into the queue; closing the queue sends
 * them all with sendmmsg, 64 at a time. With no queue open, for another
 * socket, or for a datagram larger than a slot, it sends at once, as
 * libenet's does. A datagram the kernel refuses (a full socket buffer) is
 * dropped and counted: ENet's own send drops it the same way, and its
 * resends and the lockstep messages' redundancy cover a lost datagram.
 *
 * Ownership: the transport owns its queue (gk_net_sendq_new ..
 * gk_net_sendq_free). Open and close pair up on one thread, inside one
 * call of the transport (a service, a flush); an open queue is never
 * freed. Opens nest: close restores the queue open before.
 */
#ifndef GK_NET_SENDQ_H
#define GK_NET_SENDQ_H

#include <stdint.h>

typedef struct gk_net_sendq gk_net_sendq;

typedef struct gk_net_sendq_stats {
  uint64_t datagrams; /* sent through this queue, batched or not */
  uint64_t calls;     /* sendmmsg calls */
  uint64_t dropped;   /* refused by the kernel (EAGAIN, or an error) */
} gk_net_sendq_stats;

/* A queue for socket `fd`; NULL when out of memory (the transport then
 * sends as ENet does, one call per datagram). */
gk_net_sendq *gk_net_sendq_new(int fd);
void gk_net_sendq_free(gk_net_sendq *q); /* NULL is fine */

/* Both take NULL and do nothing then. */
void gk_net_sendq_open(gk_net_sendq *q);
void gk_net_sendq_close(gk_net_sendq *q); /* sends what is queued */

/* The queue's counts; NULL for a NULL queue. A transport whose queue
 * counts no datagram while ENet sent some is not batching: libenet's own
 * enet_socket_send is the one called (a build that linked differently). */
const gk_net_sendq_stats *gk_net_sendq_stats_of(const gk_net_sendq *q);

#endif
