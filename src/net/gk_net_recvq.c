/* gk_net_recvq.c: ENet's datagrams, read in batches (see gk_net_recvq.h).
 *
 * One recvmmsg fills slots [0, n); ENet takes them in order from `at`, one
 * per enet_socket_receive, each copied into the buffer it passes (its
 * host's packetData, which it reads before it asks for the next). The open
 * queue is per thread, and only set inside a transport's service.
 */
#define _GNU_SOURCE /* recvmmsg */
#include "gk_net_recvq.h"

#include <enet/enet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define RECVQ_SLOTS 32
#define RECVQ_BYTES 1500 /* above ENet's MTU (1400): see the header */

struct gk_net_recvq {
  int fd;
  uint32_t n, at;      /* slots filled by the last read; the next to hand out */
  int ran_dry;         /* this pass's last read came back short: the socket
                          was empty, so the next call answers 0 unread */
  gk_net_recvq *outer; /* the queue open before this one, restored on close */
  gk_net_recvq_stats stats;
  struct mmsghdr msgs[RECVQ_SLOTS];
  struct iovec iov[RECVQ_SLOTS];
  struct sockaddr_in from[RECVQ_SLOTS];
  uint8_t bytes[RECVQ_SLOTS][RECVQ_BYTES];
};

static _Thread_local gk_net_recvq *open_rq;

gk_net_recvq *gk_net_recvq_new(int fd) {
  gk_net_recvq *q = calloc(1, sizeof *q);
  if (q == NULL) return NULL;
  q->fd = fd;
  for (uint32_t i = 0; i < RECVQ_SLOTS; i++) {
    q->iov[i].iov_base = q->bytes[i];
    q->iov[i].iov_len = RECVQ_BYTES;
  }
  return q;
}

void gk_net_recvq_free(gk_net_recvq *q) {
  free(q);
}

void gk_net_recvq_open(gk_net_recvq *q) {
  if (q == NULL) return;
  q->ran_dry = 0; /* a new pass asks the kernel first */
  q->outer = open_rq;
  open_rq = q;
}

void gk_net_recvq_close(gk_net_recvq *q) {
  if (q == NULL) return;
  open_rq = q->outer;
  q->outer = NULL;
}

int gk_net_recvq_pending(const gk_net_recvq *q) {
  return q != NULL && q->at < q->n;
}

const gk_net_recvq_stats *gk_net_recvq_stats_of(const gk_net_recvq *q) {
  return q != NULL ? &q->stats : NULL;
}

/* One recvmmsg into every slot: the count read, 0 if none was waiting,
 * -1 on an error (as libenet's read reports one). */
static int read_batch(gk_net_recvq *q) {
  for (uint32_t i = 0; i < RECVQ_SLOTS; i++) {
    struct msghdr *m = &q->msgs[i].msg_hdr;
    memset(m, 0, sizeof *m);
    m->msg_name = &q->from[i];
    m->msg_namelen = sizeof q->from[i];
    m->msg_iov = &q->iov[i];
    m->msg_iovlen = 1;
  }
  q->n = q->at = 0;
  int k;
  do {
    q->stats.calls++;
    k = recvmmsg(q->fd, q->msgs, RECVQ_SLOTS, MSG_DONTWAIT, NULL);
  } while (k < 0 && errno == EINTR);
  if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  q->n = (uint32_t)k;
  q->ran_dry = k < RECVQ_SLOTS;
  return k;
}

/* One recvmsg, as libenet's own: the length, 0 if nothing is waiting, -1
 * on an error or a datagram larger than the buffers. */
static int read_now(ENetSocket fd, ENetAddress *address, ENetBuffer *buffers,
                    size_t count) {
  struct msghdr m;
  struct sockaddr_in sin;
  memset(&m, 0, sizeof m);
  if (address != NULL) {
    m.msg_name = &sin;
    m.msg_namelen = sizeof sin;
  }
  m.msg_iov = (struct iovec *)buffers; /* ENetBuffer is struct iovec */
  m.msg_iovlen = count;
  ssize_t got = recvmsg(fd, &m, MSG_NOSIGNAL);
  if (got < 0) return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -1;
  if (m.msg_flags & MSG_TRUNC) return -1;
  if (address != NULL) {
    address->host = (enet_uint32)sin.sin_addr.s_addr; /* network order */
    address->port = ntohs(sin.sin_port);
  }
  return (int)got;
}

/* libenet calls this for every datagram it reads (see gk_net_recvq.h):
 * the length, 0 for "nothing more now", -1 on a socket error. */
int enet_socket_receive(ENetSocket fd, ENetAddress *address,
                        ENetBuffer *buffers, size_t count) {
  gk_net_recvq *q = open_rq;
  if (q == NULL || q->fd != fd || count != 1)
    return read_now(fd, address, buffers, count);
  for (;;) {
    while (q->at < q->n) {
      uint32_t i = q->at++;
      size_t len = q->msgs[i].msg_len;
      if ((q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ||
          len > buffers[0].dataLength) {
        q->stats.dropped++;
        continue;
      }
      memcpy(buffers[0].data, q->bytes[i], len);
      if (address != NULL) {
        address->host = (enet_uint32)q->from[i].sin_addr.s_addr;
        address->port = ntohs(q->from[i].sin_port);
      }
      q->stats.datagrams++;
      return (int)len;
    }
    if (q->ran_dry) {
      q->ran_dry = 0;
      return 0;
    }
    int k = read_batch(q);
    if (k <= 0) return k;
  }
}
