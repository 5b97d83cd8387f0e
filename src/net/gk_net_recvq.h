/* gk_net_recvq.h: ENet's datagrams, read in batches (private to
 * gk_net_transport.c).
 *
 * ENet reads every datagram with a recvmsg of its own (enet_socket_receive)
 * and a pass ends with one more that hears EAGAIN: a service that reads 40
 * datagrams makes 41 system calls. While a queue is open on the calling
 * thread, gk_net_recvq.c's enet_socket_receive, which takes the place of
 * libenet's (as gk_net_sendq.c's enet_socket_send does: libenet 1.3.17
 * calls its own through its PLT), fills the queue with one recvmmsg of up
 * to 32 datagrams and hands them to ENet one per call. A batch that came
 * back short found the socket empty: once it is handed out, the next call
 * answers "nothing more" without asking the kernel, and the call after
 * that reads again (the transport's poll is level triggered: a datagram
 * that arrived meanwhile wakes it). With no queue open, or for another
 * socket, it reads at once, as libenet's does.
 *
 * A slot holds 1,500 bytes. ENet peers agree on the smaller of their MTUs,
 * at most the host's (1,400 here: enet_host_create's default), so only a
 * datagram no peer of this host sends is larger: it is dropped and counted
 * (libenet's own read fails the whole service on it instead).
 *
 * ENet may stop taking datagrams before the queue is empty (a service ends
 * at a connect or a disconnect event, or after 256 datagrams):
 * gk_net_recvq_pending says so, and the transport services again on the
 * next loop turn, since the socket may be empty and its poll quiet.
 *
 * Ownership: the transport owns its queue (gk_net_recvq_new ..
 * gk_net_recvq_free). Open and close pair up on one thread, inside one
 * service; an open queue is never freed. Opens nest: close restores the
 * queue open before. Datagrams still queued when it is freed are lost, as
 * the socket's own would be when it closes.
 */
#ifndef GK_NET_RECVQ_H
#define GK_NET_RECVQ_H

#include <stdint.h>

typedef struct gk_net_recvq gk_net_recvq;

typedef struct gk_net_recvq_stats {
  uint64_t datagrams; /* handed to ENet from the queue */
  uint64_t calls;     /* recvmmsg calls (one that heard EAGAIN included) */
  uint64_t dropped;   /* larger than a slot: dropped unread by ENet */
} gk_net_recvq_stats;

/* A queue for socket `fd`; NULL when out of memory (the transport then
 * reads as ENet does, one call per datagram). */
gk_net_recvq *gk_net_recvq_new(int fd);
void gk_net_recvq_free(gk_net_recvq *q); /* NULL is fine */

/* Both take NULL and do nothing then. */
void gk_net_recvq_open(gk_net_recvq *q);
void gk_net_recvq_close(gk_net_recvq *q); /* keeps what ENet did not take */

/* 1 if datagrams read from the socket wait in the queue; 0 for NULL. */
int gk_net_recvq_pending(const gk_net_recvq *q);

/* The queue's counts; NULL for a NULL queue. A transport whose queue
 * counts no datagram while ENet read some is not batching: libenet's own
 * enet_socket_receive is the one called (a build that linked differently). */
const gk_net_recvq_stats *gk_net_recvq_stats_of(const gk_net_recvq *q);

#endif
