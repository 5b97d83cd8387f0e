/* gk_net_batch.h: ENet's socket calls in batches, both ways (private to
 * gk_net_transport.c).
 *
 * ENet sends every datagram with a sendmsg of its own (enet_socket_send)
 * and reads every one with a recvmsg of its own (enet_socket_receive),
 * ending each pass with one more read that only hears EAGAIN: a service
 * that reads 40 datagrams and sends 60 makes 101 system calls. While a
 * batch is open on the calling thread, gk_net_batch.c's definitions of
 * those two functions take the place of libenet's (libenet 1.3.17 calls
 * its own through its PLT, and a definition in the executable comes
 * first; `nm -D gk-server` lists both):
 *
 * Sends: each datagram for the batch's socket is copied into a 64-slot
 * queue; closing the batch sends them with sendmmsg, 64 at a time. For
 * another socket, or a datagram larger than a slot, it sends at once, as
 * libenet's does. A datagram the kernel refuses (a full socket buffer) is
 * dropped and counted: ENet's own send drops it the same way, and its
 * resends and the lockstep messages' redundancy cover a lost datagram.
 *
 * Reads: one recvmmsg fills up to 32 slots and ENet takes them one per
 * call. A batch that came back short found the socket empty: once it is
 * handed out, the next call answers "nothing more" without asking the
 * kernel (the transport's poll is level triggered: a datagram that
 * arrived meanwhile wakes it). A slot holds 1,500 bytes: ENet peers
 * agree on the smaller of their MTUs, at most the host's (1,400 here:
 * enet_host_create's default), so only a datagram no peer of this host
 * sends is larger: it is dropped and counted (libenet's own read fails
 * the whole service on it instead). ENet may stop taking datagrams
 * before the queue is empty (a service ends at a connect or a disconnect
 * event, or after 256 datagrams): gk_net_batch_pending says so, and the
 * transport services again on the next loop turn, since the socket may
 * be empty and its poll quiet.
 *
 * With no batch open both functions do what libenet's do.
 *
 * Ownership: the transport owns its batch (gk_net_batch_new ..
 * gk_net_batch_free). Open and close pair up on one thread, inside one
 * call of the transport (a service, a flush); an open batch is never
 * freed. Opens nest: close restores the batch open before. Datagrams
 * still queued for reading when it is freed are lost, as the socket's own
 * would be when it closes.
 */
#ifndef GK_NET_BATCH_H
#define GK_NET_BATCH_H

#include <stdint.h>

typedef struct gk_net_batch gk_net_batch;

typedef struct gk_net_batch_stats {
  uint64_t sent;         /* datagrams sent while open, batched or not */
  uint64_t send_calls;   /* sendmmsg calls */
  uint64_t send_dropped; /* refused by the kernel (EAGAIN, or an error) */
  uint64_t read;         /* datagrams handed to ENet from the read queue */
  uint64_t read_calls;   /* recvmmsg calls (one that heard EAGAIN included) */
  uint64_t read_dropped; /* larger than a slot: dropped unread by ENet */
} gk_net_batch_stats;

/* A batch for socket `fd`; NULL when out of memory (the transport then
 * calls as ENet does, one system call per datagram). */
gk_net_batch *gk_net_batch_new(int fd);
void gk_net_batch_free(gk_net_batch *b); /* NULL is fine */

/* Both take NULL and do nothing then. Close sends what is queued and
 * keeps what ENet did not take of the reads. */
void gk_net_batch_open(gk_net_batch *b);
void gk_net_batch_close(gk_net_batch *b);

/* 1 if datagrams read from the socket wait in the batch; 0 for NULL. */
int gk_net_batch_pending(const gk_net_batch *b);

/* The batch's counts; NULL for a NULL batch. A transport whose batch
 * counts no datagram while ENet sent or read some is not batching:
 * libenet's own functions are the ones called (a build that linked
 * differently). */
const gk_net_batch_stats *gk_net_batch_stats_of(const gk_net_batch *b);

#endif
