/* gk_testkit.h: two (or more) engines in one process, for testing a genre
 * the way it is played: a host and 1..GK_TESTKIT_PEERS_MAX peers over
 * real ENet on 127.0.0.1, with optional fault relays, every engine's hash
 * recorded at every step.
 *
 * The host is a server transport on an ephemeral port plus one
 * gk_net_session (the server's lockstep host), with slots given in
 * connection order; once every peer is connected it sends each its
 * MATCH_START and starts the session, then ticks it on its own drift-free
 * schedule. Each peer is a client transport plus a gk_net_peer playing the
 * genre's built-in bot, optionally behind its own gk_net_fault relay
 * (loss, latency, jitter, duplication; `cut_at_step` stalls a peer by
 * cutting its link, `leave_at_step` drops one by disconnecting it).
 *
 *   gk_testkit tk;            (large: make it static or malloc it)
 *   gk_testkit_options o;
 *   gk_testkit_options_init(&o, &my_sim, "{\"size\": 16}", 2, 600);
 *   if (gk_testkit_run(&tk, &o) != 0) fail(tk.why);
 *   if (gk_testkit_agree(&tk, GK_TESTKIT_ALL, why, sizeof why) != 0)
 *     fail(why);         (names the peer and the first step that differs)
 *   gk_testkit_close(&tk);
 *
 * Nothing here is tied to a test framework: every check returns a code and
 * writes a sentence, which a Criterion test hands to cr_assert (the
 * project's own tests/net do), a plain program prints, and so on. The
 * struct's fields are readable after the run (the host session's
 * counters, each peer's hashes, fault relay counters).
 *
 * gk_testkit_run is bounded twice: a wall-clock guard timer and an
 * iteration count. Neither is asserted as a time; they only stop a broken
 * run. It runs its own uv loop; call it from one thread at a time.
 *
 * Or against a real server (o.server, a gk-server's ENet "HOST:PORT"): no
 * host runs here; peer 0 creates a room of the genre there
 * (gk_net_lobby), the other peers join it at o.join_server (NULL: the
 * same server) and peer 0 starts the match once all are in and ends it
 * after o.steps steps; the server's step rate, input delay and seed
 * apply. A join_server that is another node of a fleet answers REDIRECT:
 * each joiner follows it once to the room's node and sends the same
 * JOIN_ROOM again (counted in tk.redirects); a second REDIRECT fails the
 * run. o.spectators more engines SPECTATE there once the match starts,
 * following a REDIRECT the same way, and so does a peer that takes its
 * seat back (o.rejoin_at_step). gk_testkit_agree then compares
 * every peer with peer 0 (a spectator from its snapshot's step on). Fault
 * relays, cut_at_step and leave_at_step are for the host here only.
 *
 * The sync test and the determinism probe, which need no network, are in
 * gk_testkit_probe.h (core only).
 */
#ifndef GK_TESTKIT_H
#define GK_TESTKIT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gk_net_fault.h"
#include "gk_net_lobby.h"
#include "gk_net_peer_uv.h"
#include "gk_net_session.h"
#include "gk_net_transport.h"
#include "gk_testkit_probe.h"

#define GK_TESTKIT_PEERS_MAX 8
#define GK_TESTKIT_ALL UINT32_MAX /* gk_testkit_agree: skip no peer */

typedef struct gk_testkit gk_testkit;

typedef struct gk_testkit_peer {
  gk_testkit *h;
  uint32_t index;
  gk_net_transport t;
  uint32_t server_id;
  int connected;
  gk_net_fault fault;
  int faulty;
  gk_net_peer_uv peer;   /* the engine is peer.eng */
  uint64_t *hashes;      /* hash after each step, by step */
  uint64_t nsteps;       /* one past the last step run */
  uint64_t first_step;   /* the first step run (a spectator's snapshot) */
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
  uint32_t rtt_ms;     /* ENet's RTT estimate at the end */
  uint64_t head_ahead; /* a predicting peer: its head's most steps past
                          its confirmed run */
  /* copied at the end: input-to-display latency (confirm latency without
   * a head) and the head's counts (its pointers NULL) */
  uint32_t display_p50_us, display_p99_us;
  uint32_t ndisplay;
  gk_net_peer_head head;
  /* against a server: its JOIN_ROOM followed a REDIRECT to rhost:rport */
  int redirected;
  char rhost[GK_WIRE_ADDR_MAX + 1];
  uint16_t rport;
  uv_timer_t follow; /* reconnects outside the transport's callback */
  int have_secret, rejoining;
  uint8_t secret[GK_WIRE_SECRET_LEN]; /* from RECONNECT_SECRET */
  uint64_t gap_from, gap_to; /* a rejoiner ran no step in gap_from..to-1 */
} gk_testkit_peer;

typedef struct gk_testkit_options {
  const gk_sim *sim;
  const void *sim_cfg;     /* may be NULL: built from config_json */
  const char *config_json; /* may be NULL ("{}"): sent to every peer */
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
  uint32_t predict_mask;       /* bit i: peer i draws a predicted head */
  const char *server;          /* "HOST:PORT": play at a real server */
  const char *join_server;     /* where peers 1.. join (NULL: server) */
  uint64_t rejoin_at_step;     /* with server, if non-zero: once peer ... */
  uint32_t rejoin_peer;        /* ... this one (not 0) ran this step, its
                                  connection drops and a fresh engine takes
                                  its seat back at join_server (REJOIN_ROOM,
                                  its secret: the server holds slots) */
  uint32_t spectators;         /* with server: these watch the match at
                                  join_server from its start (engines
                                  peers.. peers + spectators - 1) */
} gk_testkit_options;

struct gk_testkit {
  gk_testkit_options o;
  max_align_t *own_cfg; /* the host config built from config_json */
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
  int host_up;        /* the host transport here (not with o.server) */
  gk_net_lobby lobby; /* with o.server: the room's setup */
  uint32_t redirects; /* with o.server: REDIRECTs the joiners followed */
  int rejoin_done, down;
  char shost[GK_WIRE_ADDR_MAX + 1], jhost[GK_WIRE_ADDR_MAX + 1];
  uint16_t sport, jport;
  gk_testkit_peer p[GK_TESTKIT_PEERS_MAX];
};

/* Fills o with workable defaults for `peers` peers of `sim` (must be
 * non-NULL) and a match of `steps` steps: 500 steps per second, input
 * delay 2, lead 2, seed 42, stall notice after 1 s, no faults, a 90 s
 * guard. config_json may be NULL. Change any field after. */
void gk_testkit_options_init(gk_testkit_options *o, const gk_sim *sim,
                             const char *config_json, uint32_t peers,
                             uint64_t steps);

/* Runs the whole match (tk and o must be non-NULL; o is copied). Returns
 * 0 when the host ended it and every peer that was not removed ran to its
 * end; otherwise GK_EINVAL (bad options), GK_ENOMEM or GK_EIO (setup) or
 * GK_ESTATE (the run failed or hit its guard), with the reason in tk->why.
 * Call gk_testkit_close afterwards in every case. */
int gk_testkit_run(gk_testkit *tk, const gk_testkit_options *o);

/* Every peer except skip_peer (GK_TESTKIT_ALL: none) and those removed
 * ran to its end, ran exactly the host's steps in order, and had the
 * host's hash after every step (with o.server: peer 0's steps and hashes).
 * Returns 0, or GK_EMISMATCH with the first disagreement (peer, step, both
 * hashes) in why (may be NULL). */
int gk_testkit_agree(const gk_testkit *tk, uint32_t skip_peer, char *why,
                     size_t whylen);

/* Frees what the run recorded (the hashes, the host session). */
void gk_testkit_close(gk_testkit *tk);

/* The slot a peer was given. */
uint32_t gk_testkit_slot(const gk_testkit *tk, uint32_t peer);

#endif
