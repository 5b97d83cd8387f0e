/* harness.h: a host and 1..4 peers in one process, over ENet on 127.0.0.1.
 *
 * The host is a server transport on an ephemeral port plus one
 * gk_net_session, with slots given in connection order; once every peer is
 * connected it sends each its MATCH_START and starts the session, then
 * ticks it on its own drift-free schedule. Each peer is a client transport
 * plus a gk_net_peer, optionally behind its own fault relay. Every step's
 * hash is recorded on the host and on every peer for the test to compare.
 *
 * harness_run is bounded twice: a wall-clock guard timer and an iteration
 * count. Neither is asserted as a time; they only stop a broken run.
 */
#ifndef GK_TEST_HARNESS_H
#define GK_TEST_HARNESS_H

#include <stdint.h>
#include <uv.h>

#include "gk_net_fault.h"
#include "gk_net_peer.h"
#include "gk_net_session.h"
#include "gk_net_transport.h"

#define HARNESS_PEERS_MAX 4

typedef struct harness harness;

typedef struct hpeer {
  harness *h;
  uint32_t index;
  gk_net_transport t;
  uint32_t server_id;
  int connected;
  gk_net_fault fault;
  int faulty;
  gk_net_peer peer;
  uint64_t *hashes;      /* hash after each step, by step */
  uint64_t nsteps;       /* one past the last step run */
  uint64_t step_calls;   /* step callbacks (== nsteps if none skipped) */
  uint64_t order_errors; /* steps that did not follow the previous one */
  uint32_t slot;         /* from MATCH_START */
  int ended;
  int end_reason;
  uint64_t end_step;
  int stall_notices;
  uint32_t stall_awaited;
  uint64_t stall_step;
  int desync_notices;
  gk_wire_desync desync;
  uint64_t steps_at_stall; /* this peer's steps when the notice came */
  int removed;             /* this peer was removed (not expected to end) */
  uint32_t *lat_us;        /* confirm latency samples, copied at the end */
  uint32_t nlat;
  uint32_t rtt_ms; /* ENet's RTT estimate at the end */
} hpeer;

typedef struct harness_opts {
  const gk_sim *sim;
  const void *sim_cfg; /* for the host; the peers get config_json */
  const char *config_json;
  uint32_t peers;
  uint64_t steps; /* the host ends the match once it ran these */
  gk_ratio step;  /* the step period of the match */
  uint32_t input_delay;
  uint32_t lead;
  uint64_t seed;
  int faults;       /* put a relay in front of every peer */
  int shared_fault; /* with faults: one relay in front of the host
                       that every peer goes through */
  gk_net_fault_dir up, down;
  uint64_t stall_notice_ms;
  const gk_sim *victim_sim;    /* genre the victim peer runs, or NULL */
  uint32_t victim;             /* peer index that runs victim_sim */
  int creator_removes_stalled; /* peer 0 removes whoever a STALL names */
  uint64_t cut_at_step;        /* if non-zero: at this host step, cut peer */
  uint32_t cut_peer;           /* ... this one's link (100% loss) */
  uint64_t leave_at_step;      /* if non-zero: at this host step, peer ... */
  uint32_t leave_peer;         /* ... this one disconnects (gracefully) */
  uint64_t guard_ms;           /* wall-clock bound of the whole run */
} harness_opts;

struct harness {
  harness_opts o;
  uv_loop_t loop;
  gk_net_transport host;
  uint32_t slot_of_id[64];
  uint32_t id_of_slot[GK_PLAYERS_MAX];
  uint32_t nconnected;
  gk_net_session session;
  int session_up;
  uv_timer_t tick;
  uint64_t t0, k, step_ns;
  uint64_t *host_hashes;
  uint64_t input_steps; /* host steps with some non-neutral record */
  uint64_t cap;         /* entries in every hashes array */
  int end_requested;
  int host_ended;
  int host_end_reason;
  gk_net_desync desyncs[GK_PLAYERS_MAX];
  uint32_t ndesyncs;
  uint32_t host_stalls;
  uint32_t host_stall_awaited;
  uint64_t removed_step; /* where a removal was scheduled, else 0 */
  uint32_t removed_slot;
  int cut_done;
  int leave_done;
  gk_net_fault shared; /* the host-wide relay (shared_fault) */
  int shared_up;
  uv_timer_t guard;
  int timed_out;
  int failed; /* set on a setup failure */
  char why[256];
  hpeer p[HARNESS_PEERS_MAX];
};

/* Runs the whole match. Returns 0 when the host ended it and every peer
 * that was not removed ran to its end; otherwise non-zero with h->why. */
int harness_run(harness *h, const harness_opts *o);
/* Frees the recorded hashes. */
void harness_free(harness *h);
/* The slot a peer was given. */
uint32_t harness_slot(const harness *h, uint32_t peer);

#endif
