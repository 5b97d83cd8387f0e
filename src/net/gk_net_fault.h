/* gk_net_fault.h: fault injection, an in-process UDP relay.
 *
 * ENet's intercept hook sees only incoming datagrams, so faults are made
 * by a relay instead: a uv_udp socket on 127.0.0.1 (the "front") that
 * clients connect to in place of the real host. For every client address
 * it sees, the relay opens a uv_udp "back" socket that talks to the real
 * host (the target), so the target sees one distinct address per client.
 * Every datagram crossing the relay, in either direction, goes through
 * that direction's faults:
 *
 *   loss       dropped with probability loss_ppm / 1e6
 *   latency    held for latency_ms
 *   jitter     plus a uniform extra delay in [0, jitter_ms] (so datagrams
 *              can be reordered)
 *   duplicate  sent twice with probability dup_ppm / 1e6 (the copy gets
 *              its own delay)
 *
 * Decisions come from a PCG32 (gk_rng) seeded with `seed`: the fault
 * pattern is reproducible for a given order of datagrams. Put one relay in
 * front of a host for host-wide faults, or one relay per client for
 * per-peer faults. Faults can be changed while running (e.g. 100% loss to
 * cut one link). Held datagrams are bounded by max_queued (excess is
 * counted as dropped), clients by max_clients.
 */
#ifndef GK_NET_FAULT_H
#define GK_NET_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_rng.h"

typedef struct gk_net_fault_dir {
  uint32_t loss_ppm; /* 0..1000000 */
  uint32_t dup_ppm;  /* 0..1000000 */
  uint32_t latency_ms;
  uint32_t jitter_ms;
} gk_net_fault_dir;

typedef struct gk_net_fault_options {
  const char *target_host; /* the real host, e.g. "127.0.0.1" */
  uint16_t target_port;
  gk_net_fault_dir up;   /* client -> target */
  gk_net_fault_dir down; /* target -> client */
  uint64_t seed;
  uint32_t max_clients; /* 0 -> 16 */
  uint32_t max_queued;  /* held datagrams; 0 -> 4096 */
} gk_net_fault_options;

typedef struct gk_net_fault_stats {
  uint64_t in, forwarded, lost, duplicated, overflow;
} gk_net_fault_stats;

typedef struct gk__fault_client gk__fault_client;
typedef struct gk__fault_item gk__fault_item;

typedef struct gk_net_fault {
  /* read-only for callers */
  gk_net_fault_stats stats;
  uint16_t port; /* the front port clients connect to */
  /* private */
  uv_loop_t *loop;
  gk_net_fault_options opts;
  struct sockaddr_storage target;
  gk_rng rng;
  uv_udp_t front;
  uv_timer_t timer;
  gk__fault_client *clients;
  uint32_t nclients;
  gk__fault_item *queue; /* min-heap on due time */
  uint32_t nqueued;
  uint64_t seq; /* ties in due time keep arrival order */
  char *rbuf;   /* receive buffer shared by every socket */
  int handles;
  int closing;
  void (*close_cb)(struct gk_net_fault *f);
} gk_net_fault;

/* Binds the front on 127.0.0.1 (ephemeral port, in f->port). Returns 0,
 * GK_EINVAL, GK_EIO or GK_ENOMEM. */
int gk_net_fault_init(gk_net_fault *f, uv_loop_t *loop,
                      const gk_net_fault_options *opts);
/* Changes the faults of both directions (NULL keeps one). Held datagrams
 * keep their due times. GK_EINVAL on a ppm over 1000000. */
int gk_net_fault_set(gk_net_fault *f, const gk_net_fault_dir *up,
                     const gk_net_fault_dir *down);
/* Closes every socket; held datagrams are discarded; close_cb (may be
 * NULL) runs when all handles are closed. */
void gk_net_fault_close(gk_net_fault *f, void (*close_cb)(gk_net_fault *f));

#endif
