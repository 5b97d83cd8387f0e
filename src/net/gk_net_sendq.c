/* gk_net_sendq.c: ENet's datagrams, sent in batches (see gk_net_sendq.h).
 *
 * Each slot keeps one datagram's bytes (ENet hands its datagram as a list
 * of buffers that point into packets it frees once the call returns: they
 * are copied) and its address; sendmmsg takes the slots in order. The
 * open queue is per thread, and only set inside a transport's own call.
 */
#define _GNU_SOURCE /* sendmmsg */
#include "gk_net_sendq.h"

#include <enet/enet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define SENDQ_SLOTS 64
#define SENDQ_BYTES 1500 /* ENet's MTU is 1400 unless a host asks more */

struct gk_net_sendq {
  int fd;
  uint32_t n;          /* slots queued */
  gk_net_sendq *outer; /* the queue open before this one, restored on close */
  gk_net_sendq_stats stats;
  struct mmsghdr msgs[SENDQ_SLOTS];
  struct iovec iov[SENDQ_SLOTS];
  struct sockaddr_in to[SENDQ_SLOTS];
  uint8_t bytes[SENDQ_SLOTS][SENDQ_BYTES];
};

static _Thread_local gk_net_sendq *open_q;

gk_net_sendq *gk_net_sendq_new(int fd) {
  gk_net_sendq *q = calloc(1, sizeof *q);
  if (q == NULL) return NULL;
  q->fd = fd;
  for (uint32_t i = 0; i < SENDQ_SLOTS; i++) {
    q->iov[i].iov_base = q->bytes[i];
    q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
    q->msgs[i].msg_hdr.msg_iovlen = 1;
  }
  return q;
}

void gk_net_sendq_free(gk_net_sendq *q) {
  free(q);
}

/* Sends slots [0, n): a slot the kernel refuses is dropped, the rest go. */
static void send_all(gk_net_sendq *q) {
  uint32_t at = 0;
  while (at < q->n) {
    q->stats.calls++;
    int k = sendmmsg(q->fd, &q->msgs[at], q->n - at, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) { /* the slot at `at` was refused */
      q->stats.dropped++;
      at++;
      continue;
    }
    at += (uint32_t)k;
  }
  q->n = 0;
}

void gk_net_sendq_open(gk_net_sendq *q) {
  if (q == NULL) return;
  q->outer = open_q;
  open_q = q;
}

void gk_net_sendq_close(gk_net_sendq *q) {
  if (q == NULL) return;
  if (q->n > 0) send_all(q);
  open_q = q->outer;
  q->outer = NULL;
}

const gk_net_sendq_stats *gk_net_sendq_stats_of(const gk_net_sendq *q) {
  return q != NULL ? &q->stats : NULL;
}

static void address_of(struct sockaddr_in *sin, const ENetAddress *a) {
  memset(sin, 0, sizeof *sin);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(a->port);
  sin->sin_addr.s_addr = a->host; /* ENet keeps it in network order */
}

/* One sendmsg, as libenet's own: the bytes sent, 0 if the socket would
 * block (ENet counts the datagram sent and lost), -1 on an error. */
static int send_now(ENetSocket fd, const ENetAddress *address,
                    const ENetBuffer *buffers, size_t count) {
  struct msghdr m;
  struct sockaddr_in sin;
  memset(&m, 0, sizeof m);
  if (address != NULL) {
    address_of(&sin, address);
    m.msg_name = &sin;
    m.msg_namelen = sizeof sin;
  }
  m.msg_iov = (struct iovec *)buffers; /* ENetBuffer is struct iovec */
  m.msg_iovlen = count;
  ssize_t sent = sendmsg(fd, &m, MSG_NOSIGNAL);
  if (sent < 0) return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -1;
  return (int)sent;
}

/* libenet calls this for every datagram it sends (see gk_net_sendq.h). */
int enet_socket_send(ENetSocket fd, const ENetAddress *address,
                     const ENetBuffer *buffers, size_t count) {
  gk_net_sendq *q = open_q;
  size_t len = 0;
  for (size_t i = 0; i < count; i++) len += buffers[i].dataLength;
  if (q == NULL || q->fd != fd || address == NULL || len > SENDQ_BYTES) {
    int rc = send_now(fd, address, buffers, count);
    if (q != NULL && q->fd == fd) {
      q->stats.datagrams++;
      if (rc <= 0) q->stats.dropped++; /* as a refused batched one */
    }
    return rc;
  }
  uint32_t i = q->n++;
  uint8_t *at = q->bytes[i];
  for (size_t b = 0; b < count; b++) {
    memcpy(at, buffers[b].data, buffers[b].dataLength);
    at += buffers[b].dataLength;
  }
  address_of(&q->to[i], address);
  q->iov[i].iov_len = len;
  q->msgs[i].msg_hdr.msg_name = &q->to[i];
  q->msgs[i].msg_hdr.msg_namelen = sizeof q->to[i];
  q->stats.datagrams++;
  if (q->n == SENDQ_SLOTS) send_all(q);
  return (int)len;
}
