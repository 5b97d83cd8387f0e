/* gk_net_batch.c: ENet's socket calls in batches (see gk_net_batch.h).
 *
 * Sending, each slot keeps one datagram's bytes (ENet hands its datagram
 * as a list of buffers that point into packets it frees once the call
 * returns: they are copied) and its address; sendmmsg takes the slots in
 * order. Reading, one recvmmsg fills slots [0, n); ENet takes them in
 * order from `at`, one per enet_socket_receive, each copied into the
 * buffer it passes (its host's packetData, which it reads before it asks
 * for the next). The open batch is per thread, and only set inside a
 * transport's own call.
 */
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#include "gk_net_batch.h"

#include <enet/enet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define SEND_SLOTS 64
#define READ_SLOTS 32
#define SLOT_BYTES 1500 /* above ENet's MTU (1400): see the header */

typedef struct gk__net_sendq {
  uint32_t n; /* slots queued */
  struct mmsghdr msgs[SEND_SLOTS];
  struct iovec iov[SEND_SLOTS];
  struct sockaddr_in to[SEND_SLOTS];
  uint8_t bytes[SEND_SLOTS][SLOT_BYTES];
} gk__net_sendq;

typedef struct gk__net_readq {
  uint32_t n, at; /* slots filled by the last read; the next to hand out */
  int ran_dry;    /* this pass's last read came back short: the socket
                     was empty, so the next call answers 0 unread */
  struct mmsghdr msgs[READ_SLOTS];
  struct iovec iov[READ_SLOTS];
  struct sockaddr_in from[READ_SLOTS];
  uint8_t bytes[READ_SLOTS][SLOT_BYTES];
} gk__net_readq;

struct gk_net_batch {
  int fd;
  gk_net_batch *outer; /* the batch open before this one, restored on close */
  gk_net_batch_stats stats;
  gk__net_sendq s;
  gk__net_readq r;
};

static _Thread_local gk_net_batch *open_b;

gk_net_batch *gk_net_batch_new(int fd) {
  gk_net_batch *b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  b->fd = fd;
  for (uint32_t i = 0; i < SEND_SLOTS; i++) {
    b->s.iov[i].iov_base = b->s.bytes[i];
    b->s.msgs[i].msg_hdr.msg_iov = &b->s.iov[i];
    b->s.msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (uint32_t i = 0; i < READ_SLOTS; i++) {
    b->r.iov[i].iov_base = b->r.bytes[i];
    b->r.iov[i].iov_len = SLOT_BYTES;
  }
  return b;
}

void gk_net_batch_free(gk_net_batch *b) {
  free(b);
}

/* Sends slots [0, n): a slot the kernel refuses is dropped, the rest go. */
static void send_all(gk_net_batch *b) {
  gk__net_sendq *q = &b->s;
  uint32_t at = 0;
  while (at < q->n) {
    b->stats.send_calls++;
    int k = sendmmsg(b->fd, &q->msgs[at], q->n - at, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) { /* the slot at `at` was refused */
      b->stats.send_dropped++;
      at++;
      continue;
    }
    at += (uint32_t)k;
  }
  q->n = 0;
}

void gk_net_batch_open(gk_net_batch *b) {
  if (b == NULL) return;
  b->r.ran_dry = 0; /* a new pass asks the kernel first */
  b->outer = open_b;
  open_b = b;
}

void gk_net_batch_close(gk_net_batch *b) {
  if (b == NULL) return;
  if (b->s.n > 0) send_all(b);
  open_b = b->outer;
  b->outer = NULL;
}

int gk_net_batch_pending(const gk_net_batch *b) {
  return b != NULL && b->r.at < b->r.n;
}

const gk_net_batch_stats *gk_net_batch_stats_of(const gk_net_batch *b) {
  return b != NULL ? &b->stats : NULL;
}

/* --- sending ------------------------------------------------------------- */

static void address_of(struct sockaddr_in *sin, const ENetAddress *a) {
  memset(sin, 0, sizeof *sin);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(a->port);
  sin->sin_addr.s_addr = a->host; /* ENet keeps it in network order */
}

/* A message header over ENet's buffers (ENetBuffer is struct iovec),
 * naming `sin` if `named`. */
static void header_of(struct msghdr *m, struct sockaddr_in *sin, int named,
                      const ENetBuffer *buffers, size_t count) {
  memset(m, 0, sizeof *m);
  if (named) {
    m->msg_name = sin;
    m->msg_namelen = sizeof *sin;
  }
  m->msg_iov = (struct iovec *)buffers;
  m->msg_iovlen = count;
}

/* One sendmsg, as libenet's own: the bytes sent, 0 if the socket would
 * block (ENet counts the datagram sent and lost), -1 on an error. */
static int send_now(ENetSocket fd, const ENetAddress *address,
                    const ENetBuffer *buffers, size_t count) {
  struct msghdr m;
  struct sockaddr_in sin;
  if (address != NULL) address_of(&sin, address);
  header_of(&m, &sin, address != NULL, buffers, count);
  ssize_t sent = sendmsg(fd, &m, MSG_NOSIGNAL);
  if (sent < 0) return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -1;
  return (int)sent;
}

/* libenet calls this for every datagram it sends (see gk_net_batch.h). */
int enet_socket_send(ENetSocket fd, const ENetAddress *address,
                     const ENetBuffer *buffers, size_t count) {
  gk_net_batch *b = open_b;
  size_t len = 0;
  for (size_t i = 0; i < count; i++) len += buffers[i].dataLength;
  if (b == NULL || b->fd != fd || address == NULL || len > SLOT_BYTES) {
    int rc = send_now(fd, address, buffers, count);
    if (b != NULL && b->fd == fd) {
      b->stats.sent++;
      if (rc <= 0) b->stats.send_dropped++; /* as a refused batched one */
    }
    return rc;
  }
  gk__net_sendq *q = &b->s;
  uint32_t i = q->n++;
  uint8_t *at = q->bytes[i];
  for (size_t k = 0; k < count; k++) {
    memcpy(at, buffers[k].data, buffers[k].dataLength);
    at += buffers[k].dataLength;
  }
  address_of(&q->to[i], address);
  q->iov[i].iov_len = len;
  q->msgs[i].msg_hdr.msg_name = &q->to[i];
  q->msgs[i].msg_hdr.msg_namelen = sizeof q->to[i];
  b->stats.sent++;
  if (q->n == SEND_SLOTS) send_all(b);
  return (int)len;
}

/* --- reading ------------------------------------------------------------- */

/* One recvmmsg into every slot: the count read, 0 if none was waiting,
 * -1 on an error (as libenet's read reports one). */
static int read_batch(gk_net_batch *b) {
  gk__net_readq *q = &b->r;
  for (uint32_t i = 0; i < READ_SLOTS; i++) {
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
    b->stats.read_calls++;
    k = recvmmsg(b->fd, q->msgs, READ_SLOTS, MSG_DONTWAIT, NULL);
  } while (k < 0 && errno == EINTR);
  if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  q->n = (uint32_t)k;
  q->ran_dry = k < READ_SLOTS;
  return k;
}

/* One recvmsg, as libenet's own: the length, 0 if nothing is waiting, -1
 * on an error or a datagram larger than the buffers. */
static int read_now(ENetSocket fd, ENetAddress *address, ENetBuffer *buffers,
                    size_t count) {
  struct msghdr m;
  struct sockaddr_in sin;
  header_of(&m, &sin, address != NULL, buffers, count);
  ssize_t got = recvmsg(fd, &m, MSG_NOSIGNAL);
  if (got < 0) return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -1;
  if (m.msg_flags & MSG_TRUNC) return -1;
  if (address != NULL) {
    address->host = (enet_uint32)sin.sin_addr.s_addr; /* network order */
    address->port = ntohs(sin.sin_port);
  }
  return (int)got;
}

/* libenet calls this for every datagram it reads (see gk_net_batch.h):
 * the length, 0 for "nothing more now", -1 on a socket error. */
int enet_socket_receive(ENetSocket fd, ENetAddress *address,
                        ENetBuffer *buffers, size_t count) {
  gk_net_batch *b = open_b;
  if (b == NULL || b->fd != fd || count != 1)
    return read_now(fd, address, buffers, count);
  gk__net_readq *q = &b->r;
  for (;;) {
    while (q->at < q->n) {
      uint32_t i = q->at++;
      size_t len = q->msgs[i].msg_len;
      if ((q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ||
          len > buffers[0].dataLength) {
        b->stats.read_dropped++;
        continue;
      }
      memcpy(buffers[0].data, q->bytes[i], len);
      if (address != NULL) {
        address->host = (enet_uint32)q->from[i].sin_addr.s_addr;
        address->port = ntohs(q->from[i].sin_port);
      }
      b->stats.read++;
      return (int)len;
    }
    if (q->ran_dry) {
      q->ran_dry = 0;
      return 0;
    }
    int k = read_batch(b);
    if (k <= 0) return k;
  }
}
