/* gk_net_fault.c: the fault-injecting UDP relay (see gk_net_fault.h).
 *
 * Each datagram that reaches the relay is decided at once (lost, or due at
 * now + latency + jitter, maybe twice) and, unless it is due right away,
 * put in a min-heap ordered by (due time, arrival number). One one-shot
 * uv timer is armed for the earliest item. Datagrams are sent with
 * uv_udp_try_send: on loopback a full socket buffer is the only failure,
 * and that is just one more lost datagram.
 */
#include "gk_net_fault.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

#define DGRAM_MAX 1500 /* ENet's default MTU is 1400 */
#define RBUF_SIZE 65536

enum { DIR_UP = 0, DIR_DOWN = 1 };

struct gk__fault_client {
  gk_net_fault *f;
  struct sockaddr_in addr; /* the client, as the front sees it */
  uv_udp_t back;           /* talks to the target for this client */
  int open;
};

struct gk__fault_item {
  uint64_t due; /* uv_hrtime ns */
  uint64_t seq;
  uint32_t client;
  uint32_t dir;
  uint32_t len;
  uint8_t data[DGRAM_MAX];
};

static int item_before(const gk__fault_item *a, const gk__fault_item *b) {
  return a->due != b->due ? a->due < b->due : a->seq < b->seq;
}

static void swap_items(gk__fault_item *a, gk__fault_item *b) {
  gk__fault_item t = *a;
  *a = *b;
  *b = t;
}

static void heap_push(gk_net_fault *f, const gk__fault_item *it) {
  uint32_t i = f->nqueued++;
  f->queue[i] = *it;
  while (i > 0 && item_before(&f->queue[i], &f->queue[(i - 1) / 2])) {
    swap_items(&f->queue[i], &f->queue[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
}

static void heap_pop(gk_net_fault *f) {
  f->queue[0] = f->queue[--f->nqueued];
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < f->nqueued && item_before(&f->queue[l], &f->queue[m])) m = l;
    if (r < f->nqueued && item_before(&f->queue[r], &f->queue[m])) m = r;
    if (m == i) break;
    swap_items(&f->queue[i], &f->queue[m]);
    i = m;
  }
}

static void deliver(gk_net_fault *f, uint32_t client, uint32_t dir,
                    const uint8_t *data, size_t len) {
  gk__fault_client *c = &f->clients[client];
  if (!c->open) return;
  uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
  int rc = dir == DIR_UP ? uv_udp_try_send(&c->back, &buf, 1,
                                           (const struct sockaddr *)&f->target)
                         : uv_udp_try_send(&f->front, &buf, 1,
                                           (const struct sockaddr *)&c->addr);
  if (rc < 0)
    f->stats.lost++;
  else
    f->stats.forwarded++;
}

static void on_timer(uv_timer_t *h);

static void arm(gk_net_fault *f) {
  if (f->nqueued == 0 || f->closing) return;
  uint64_t now = uv_hrtime();
  uint64_t due = f->queue[0].due;
  uint64_t ms = due > now ? (due - now + 999999u) / 1000000u : 0;
  uv_timer_start(&f->timer, on_timer, ms, 0);
}

static void on_timer(uv_timer_t *h) {
  gk_net_fault *f = h->data;
  uint64_t now = uv_hrtime();
  while (f->nqueued > 0 && f->queue[0].due <= now) {
    gk__fault_item it = f->queue[0];
    heap_pop(f);
    deliver(f, it.client, it.dir, it.data, it.len);
  }
  arm(f);
}

static void hold(gk_net_fault *f, uint32_t client, uint32_t dir,
                 const uint8_t *data, size_t len, const gk_net_fault_dir *fd) {
  uint64_t delay_ms = fd->latency_ms;
  if (fd->jitter_ms > 0) delay_ms += gk_rng_below(&f->rng, fd->jitter_ms + 1u);
  if (delay_ms == 0 && f->nqueued == 0) {
    deliver(f, client, dir, data, len);
    return;
  }
  if (f->nqueued >= f->opts.max_queued || len > DGRAM_MAX) {
    f->stats.overflow++;
    return;
  }
  gk__fault_item it;
  it.due = uv_hrtime() + delay_ms * 1000000u;
  it.seq = f->seq++;
  it.client = client;
  it.dir = dir;
  it.len = (uint32_t)len;
  memcpy(it.data, data, len);
  heap_push(f, &it);
  arm(f);
}

static void relay(gk_net_fault *f, uint32_t client, uint32_t dir,
                  const uint8_t *data, size_t len) {
  const gk_net_fault_dir *fd = dir == DIR_UP ? &f->opts.up : &f->opts.down;
  f->stats.in++;
  if (fd->loss_ppm > 0 && gk_rng_below(&f->rng, 1000000u) < fd->loss_ppm) {
    f->stats.lost++;
    return;
  }
  int dup = fd->dup_ppm > 0 && gk_rng_below(&f->rng, 1000000u) < fd->dup_ppm;
  hold(f, client, dir, data, len, fd);
  if (dup) {
    f->stats.duplicated++;
    hold(f, client, dir, data, len, fd);
  }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  gk_net_fault *f = h->data;
  *buf = uv_buf_init(f->rbuf, RBUF_SIZE);
}

static void on_back_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *buf,
                         const struct sockaddr *from, unsigned flags) {
  (void)from;
  (void)flags;
  gk__fault_client *c =
      (gk__fault_client *)((char *)h - offsetof(gk__fault_client, back));
  gk_net_fault *f = c->f;
  if (n <= 0 || f->closing) return;
  relay(f, (uint32_t)(c - f->clients), DIR_DOWN, (const uint8_t *)buf->base,
        (size_t)n);
}

static void on_closed(uv_handle_t *h);

static int client_of(gk_net_fault *f, const struct sockaddr_in *a,
                     uint32_t *out) {
  for (uint32_t i = 0; i < f->nclients; i++)
    if (f->clients[i].addr.sin_port == a->sin_port &&
        f->clients[i].addr.sin_addr.s_addr == a->sin_addr.s_addr) {
      *out = i;
      return 0;
    }
  if (f->nclients >= f->opts.max_clients) return GK_EFULL;
  gk__fault_client *c = &f->clients[f->nclients];
  memset(c, 0, sizeof *c);
  c->f = f;
  c->addr = *a;
  struct sockaddr_in any;
  uv_ip4_addr("127.0.0.1", 0, &any);
  if (uv_udp_init(f->loop, &c->back) != 0) return GK_EIO;
  c->back.data = f;
  f->handles++;
  c->open = 1;
  *out = f->nclients++;
  if (uv_udp_bind(&c->back, (const struct sockaddr *)&any, 0) != 0 ||
      uv_udp_recv_start(&c->back, on_alloc, on_back_recv) != 0) {
    c->open = 0;
    return GK_EIO;
  }
  return 0;
}

static void on_front_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *buf,
                          const struct sockaddr *from, unsigned flags) {
  (void)flags;
  gk_net_fault *f = h->data;
  if (n <= 0 || from == NULL || from->sa_family != AF_INET || f->closing)
    return;
  uint32_t client;
  if (client_of(f, (const struct sockaddr_in *)from, &client) != 0) {
    f->stats.overflow++;
    return;
  }
  relay(f, client, DIR_UP, (const uint8_t *)buf->base, (size_t)n);
}

static int check_dir(const gk_net_fault_dir *d) {
  return d->loss_ppm <= 1000000u && d->dup_ppm <= 1000000u ? 0 : GK_EINVAL;
}

int gk_net_fault_init(gk_net_fault *f, uv_loop_t *loop,
                      const gk_net_fault_options *opts) {
  if (f == NULL || loop == NULL || opts == NULL || opts->target_host == NULL ||
      check_dir(&opts->up) != 0 || check_dir(&opts->down) != 0)
    return GK_EINVAL;
  memset(f, 0, sizeof *f);
  f->loop = loop;
  f->opts = *opts;
  if (f->opts.max_clients == 0) f->opts.max_clients = 16;
  if (f->opts.max_queued == 0) f->opts.max_queued = 1024;
  struct sockaddr_in *t = (struct sockaddr_in *)&f->target;
  if (uv_ip4_addr(opts->target_host, opts->target_port, t) != 0)
    return GK_EINVAL;
  gk_rng_seed(&f->rng, opts->seed, 0x5eed);
  f->clients = calloc(f->opts.max_clients, sizeof *f->clients);
  f->queue = calloc(f->opts.max_queued, sizeof *f->queue);
  f->rbuf = malloc(RBUF_SIZE);
  if (f->clients == NULL || f->queue == NULL || f->rbuf == NULL) {
    free(f->clients);
    free(f->queue);
    free(f->rbuf);
    return GK_ENOMEM;
  }
  uv_udp_init(loop, &f->front);
  uv_timer_init(loop, &f->timer);
  f->front.data = f->timer.data = f;
  f->handles = 2;
  struct sockaddr_in any;
  uv_ip4_addr("127.0.0.1", 0, &any);
  struct sockaddr_in bound;
  int blen = sizeof bound;
  if (uv_udp_bind(&f->front, (const struct sockaddr *)&any, 0) != 0 ||
      uv_udp_getsockname(&f->front, (struct sockaddr *)&bound, &blen) != 0 ||
      uv_udp_recv_start(&f->front, on_alloc, on_front_recv) != 0) {
    gk_net_fault_close(f, NULL);
    return GK_EIO;
  }
  f->port = ntohs(bound.sin_port);
  return 0;
}

int gk_net_fault_set(gk_net_fault *f, const gk_net_fault_dir *up,
                     const gk_net_fault_dir *down) {
  if ((up != NULL && check_dir(up) != 0) ||
      (down != NULL && check_dir(down) != 0))
    return GK_EINVAL;
  if (up != NULL) f->opts.up = *up;
  if (down != NULL) f->opts.down = *down;
  return 0;
}

static void on_closed(uv_handle_t *h) {
  gk_net_fault *f = h->data;
  if (--f->handles > 0) return;
  free(f->clients);
  free(f->queue);
  free(f->rbuf);
  f->clients = NULL;
  f->queue = NULL;
  f->rbuf = NULL;
  if (f->close_cb != NULL) f->close_cb(f);
}

void gk_net_fault_close(gk_net_fault *f, void (*close_cb)(gk_net_fault *f)) {
  if (f->closing) return;
  f->closing = 1;
  f->close_cb = close_cb;
  f->nqueued = 0;
  for (uint32_t i = 0; i < f->nclients; i++)
    if (f->clients[i].back.data != NULL) {
      f->clients[i].open = 0;
      uv_close((uv_handle_t *)&f->clients[i].back, on_closed);
    }
  uv_close((uv_handle_t *)&f->front, on_closed);
  uv_close((uv_handle_t *)&f->timer, on_closed);
}
