/* gk_net_peer.h: the peer engine, the client side of a lockstep match.
 *
 * Sans-I/O, after quinn-proto's Connection: no socket, no timer, no clock,
 * no JSON parser. The owner hands it every datagram from the host
 * (gk_net_peer_handle), calls gk_net_peer_handle_timeout once the
 * deadline that gk_net_peer_poll_timeout returns has passed, and carries
 * the bytes it emits through the `send` callback (reliable or not). Time
 * comes in as an argument of every call (uint64 nanoseconds on any
 * monotonic clock, the same one for every call). Genres come from the
 * caller's registry (options.genres) and MATCH_START's genre options are
 * applied by the caller's hook (options.apply_options). So the engine
 * needs only libc and the core (library gk_lockstep, checked by
 * tests/net/check_lockstep_symbols.sh). src/net/gk_net_peer_uv.h drives it
 * on a uv loop with ENet for gk-bot, the test kit and the tests.
 *
 * A peer takes its match parameters from a MATCH_START (received, or given
 * to gk_net_peer_start), runs its own gk_loop of the match over the
 * confirmed merged inputs the host sends (CONFIRMED), and samples its local
 * input source on its own schedule:
 *
 *   deadline(k) = t0 + k * step_ns   (poll_timeout gives the next one, so
 *                                     the schedule cannot drift)
 *
 * At each deadline it reads one record from the source, tags it for step
 * first_step + k + input_delay, sends it (INPUT, unreliably, repeating
 * every record the host has not acknowledged), calls the source's
 * end_step, and after its last sample of that timeout call, end_frame
 * (ADR-0004 as amended by ADR-0012). It never samples step s unless
 * s < confirmed + input_delay + lead, so a stalled player stalls everyone;
 * after such a wait the schedule restarts from the moment sampling may
 * resume (a stall is not caught up in a burst). Deadlines missed for other
 * reasons (a slow machine) are caught up, within the same bound.
 *
 * Confirmed steps are run at once, with `{ steps: ready }` budgets, and
 * each step's hash is reported to the host inside the next INPUT (its
 * optional hash part), repeated until CONFIRMED.hash_ack says the host
 * holds it, so hashes cost no datagram of their own. The time from sampling a
 * step's input to receiving that step confirmed is kept (confirm latency) for
 * benchmarks and gk-bot.
 *
 * Input delay changes: a confirmed step whose flags carry GK_STEP_DELAY
 * announces a new delay D'; at the switch step S = that step + the delay
 * announced before + lead, the peer either skips the steps S .. S + D' - D
 * - 1 (raising: the host holds them neutral) or lets D - D' sampling
 * deadlines pass without reading its source (lowering: presses wait in the
 * source for the sample of step S). So a press still reaches exactly one
 * step, and no step lacks a record (docs/PROTOCOL.md, "Input delay").
 *
 * Room control: gk_net_peer_send_msg encodes and sends any message (create
 * or join a room, start the match, remove a player, end the match; the
 * setup itself is gk_net_lobby.h's); messages the peer does not handle
 * itself reach the `message` callback.
 *
 * Prediction (options.predict, gk_net_peer_predict.c): besides the
 * confirmed run above, which alone is hashed, reported and recorded, the
 * peer keeps a predicted head: a second state of the run, copied from the
 * confirmed one with the genre's copy_state hook (gk_sim ABI 4) or, without
 * one, its canonical writer and reader, and stepped
 * up to next_sample - delay (the step whose time it is), never more than
 * MATCH_START's lead past the confirmed run. Its input for a step: the
 * local record this peer sampled (read from the record ring, never from
 * the source again, so a press reaches one sample and is never lost or
 * repeated by a rollback), and for every other player the last record
 * confirmed for it. When a confirmed step differs from what the head
 * assumed, the next timeout restores the head from the confirmed run and
 * re-simulates it, at most predict_cap steps per timeout call (the head
 * then lags and catches up over the next calls: no death spiral). The
 * head's pace: a peer whose samples come within 2 steps of its bound
 * stretches its next period by a tenth per step over (it slows gently
 * instead of waiting at the bound). docs/PROTOCOL.md, "Prediction".
 *
 * Without simulation (options.no_sim, gk-bot --light: hundreds of players
 * in one process): everything above but the run. Confirmed steps go to
 * the `step` callback in order (hash 0) and are not kept; no hash is
 * reported; no snapshot, rejoin, late join or STATE_REQUEST. The
 * schedule may then be fixed (options.fixed_schedule: a stall is caught
 * up within the bound instead of restarting the schedule) and start at a
 * phase of the period (options.phase_num / phase_den).
 *
 * Late join: a JOIN_ROOM sent through gk_net_peer_send_msg is remembered
 * (its room code). A MATCH_START whose active mask lacks the receiver's own
 * slot is a join of a running match: the peer sets up without sampling and
 * waits for a snapshot (kind GK_WIRE_SNAP_JOIN) of that room, exactly as a
 * rejoin does; it samples from the snapshot's next_input on.
 */
#ifndef GK_NET_PEER_H
#define GK_NET_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "gk_history.h"
#include "gk_loop.h"
#include "gk_net_chunk.h"
#include "gk_net_inbuf.h"
#include "gk_net_sched.h"
#include "gk_net_wire.h"
#include "gk_sim.h"

typedef struct gk_net_peer gk_net_peer;

/* What a snapshot was (gk_net_peer_snap.c). */
typedef struct gk_net_peer_snap_info {
  int kind;            /* GK_WIRE_SNAP_* */
  uint64_t step;       /* the state after this many steps */
  uint64_t bytes;      /* state bytes */
  uint64_t next_input; /* the first step this peer samples for */
  uint64_t request_ns; /* the caller's time of the request (rejoin,
                          spectate, JOIN_ROOM) */
  uint64_t adopted_ns; /* ... of the adoption */
  uint64_t resumed_ns; /* ... of resumed sampling (0: not yet) */
  char error[GK_ERRMSG_MAX];
} gk_net_peer_snap_info;

typedef struct gk_net_peer_callbacks {
  void *ctx;
  /* Must be non-NULL. Sends bytes to the host (valid for the call). */
  int (*send)(void *ctx, const uint8_t *bytes, size_t len, int reliable);
  /* May be NULL. The match started (the loop is running its first step
   * soon). */
  void (*started)(void *ctx, gk_net_peer *p);
  /* May be NULL. After each step the peer's loop ran. */
  void (*step)(void *ctx, gk_net_peer *p, const gk_step_input *in,
               uint64_t hash);
  /* May be NULL. Host notices. */
  void (*stall)(void *ctx, gk_net_peer *p, const gk_wire_stall *st);
  void (*desync)(void *ctx, gk_net_peer *p, const gk_wire_desync *d);
  void (*removed)(void *ctx, gk_net_peer *p, uint32_t slot, uint64_t step);
  /* May be NULL. The match is over for this peer: its loop ran the last
   * step (`step`), or the host said so (MATCH_END; then `step` is the
   * host's last step). Called once. */
  void (*ended)(void *ctx, gk_net_peer *p, uint64_t step, int reason);
  /* May be NULL. Any other message (ROOM_CREATED, JOINED, ERROR, ...). */
  void (*message)(void *ctx, gk_net_peer *p, const gk_wire_msg *m);
  /* May be NULL. A snapshot (gk_net_peer_rejoin, _spectate) was adopted
   * (rc 0; `info` says what) or refused (rc < 0, with a message in
   * info->error; the peer goes on as it was). */
  void (*snapshot)(void *ctx, gk_net_peer *p, int rc,
                   const gk_net_peer_snap_info *info);
  /* May be NULL. Sampling resumed after a rejoin: the peer caught up. */
  void (*resumed)(void *ctx, gk_net_peer *p);
  /* May be NULL. Prediction: the head moved in this timeout call;
   * `restored` is 1 if it was first restored from the confirmed run (a
   * rollback). p->head says where it is. */
  void (*head)(void *ctx, gk_net_peer *p, int restored);
} gk_net_peer_callbacks;

/* Where the peer finds MATCH_START's genre: `find` if non-NULL (NULL
 * from it: unknown), else the `count` descriptors of `sims` by name. An
 * empty registry knows no genre. */
typedef struct gk_net_peer_genres {
  const gk_sim *(*find)(void *ctx, const char *name);
  void *ctx;
  const gk_sim *const *sims;
  size_t count;
} gk_net_peer_genres;

/* Applies MATCH_START's genre options (`len` bytes of JSON text, not
 * NUL-terminated) to cfg, which holds the genre's defaults. Returns 0 or
 * a negative code with a message in err (natively gk_config_match_options,
 * src/config; a browser can flatten JSON.parse's object into
 * gk_config_apply_kv calls). */
typedef int (*gk_net_peer_options_fn)(void *ctx, const gk_sim *sim, void *cfg,
                                      const char *text, size_t len, char *err,
                                      size_t errlen);

/* gk_net_peer_options.ack_every of a spectator on a reliable stream
 * (WebSocket: the browser client, gk-bot --ws): one report per 4 steps. */
#define GK_NET_PEER_ACK_EVERY_STREAM 4u

typedef struct gk_net_peer_options {
  /* The local input source, or NULL for the genre's bot seeded with
   * bot_seed and the slot. Owned by the caller; must outlive the match. */
  gk_input *source;
  uint64_t bot_seed;
  gk_net_peer_genres genres; /* MATCH_START's genre */
  /* MATCH_START's options; NULL: only blank options are taken (others
   * are GK_EINVAL). */
  gk_net_peer_options_fn apply_options;
  void *options_ctx;
  uint32_t window;      /* input buffer window; 0 -> default */
  uint32_t latency_cap; /* latency samples kept; 0 -> 65536 */
  uint32_t hash_ring;   /* 0 -> default */
  /* Catching up after a snapshot: at most this many steps per timeout
   * call (0 -> 512), so the peer keeps sending and receiving. */
  uint32_t catchup_batch;
  /* Desync forensics: the history the peer answers STATE_REQUEST from
   * (gk_net_peer_state.c). window 0 -> hash_ring + 64 (the steps a desync
   * can still be reported for); every and max_bytes 0 -> gk_history's
   * defaults. */
  gk_history_options history;
  /* Tests only: a fault in answering STATE_REQUEST (GK_NET_PEER_STATE_*). */
  int state_fault;
  /* 1: no simulation (gk-bot --light, many players in one process). The
   * peer keeps the whole client protocol (MATCH_START, sampling `source`
   * within the bound, INPUT with every unacknowledged record, CONFIRMED
   * and its acks, delay changes, MATCH_END, REMOVE_PLAYER) but runs no
   * loop: `step` gets each confirmed merged step (hash 0) in order, no
   * hashes are reported, the genre's options are not applied (any text
   * is taken), and rejoin, spectating, snapshots and STATE_REQUEST are
   * refused (GK_ESTATE). `source` must then be non-NULL. */
  int no_sim;
  /* 1: a wait on the bound does not move the schedule: the deadlines it
   * held back are sampled at once when the bound allows (one hiccup
   * never shifts the rest of the match). 0: the schedule restarts from
   * the moment sampling may resume (no burst after a stall). */
  int fixed_schedule;
  /* The first sampling deadline comes phase_num / phase_den of a step
   * period after MATCH_START (phase_den 0: at once), so the peers of one
   * process can spread their sampling over the period. */
  uint32_t phase_num, phase_den;
  /* A spectator sends its acknowledgement and hashes once every this many
   * step periods (0 -> 1: every one). On a reliable stream (WebSocket)
   * nothing is lost, so a driver may ask for fewer messages: the server
   * resends only steps left unacknowledged while it sent nothing newer
   * for two periods, and checks the hashes whenever they come. */
  uint32_t ack_every;
  /* 1: keep a predicted head (see above; not with no_sim). */
  int predict;
  /* Head steps run in one timeout call at most (re-simulation included);
   * 0 -> lead + 2. */
  uint32_t predict_cap;
  /* Tests only: predict every other player's record wrong (the last one
   * confirmed, each byte inverted), so every confirmed step rolls back. */
  int predict_wrong;
} gk_net_peer_options;

/* gk_net_peer_options.state_fault: how a test peer answers STATE_REQUEST. */
enum {
  GK_NET_PEER_STATE_OK = 0,      /* its state, as it should */
  GK_NET_PEER_STATE_SILENT = 1,  /* never answers */
  GK_NET_PEER_STATE_CORRUPT = 2, /* a chunk's bytes change after its
                                    checksum was taken */
  GK_NET_PEER_STATE_GARBAGE = 3, /* a well-formed transfer of half the
                                    state (the genre cannot read it) */
  GK_NET_PEER_STATE_CANNOT = 4   /* STATE_BEGIN with status GK_ENOTKEPT and
                                    the steps it really keeps, no chunks */
};

typedef struct gk_net_peer_stats {
  uint64_t packets_in, packets_out;
  uint64_t drop_malformed;  /* decode failed */
  uint64_t drop_unexpected; /* wrong shape or not valid now */
  uint64_t confirmed_dup;   /* redundant confirmed steps */
  uint64_t samples;         /* inputs sampled */
  uint64_t waits;           /* timeouts that could not sample (bound) */
  uint64_t steps_run;
  uint64_t delay_changes;     /* switches to an announced delay */
  uint64_t deadlines_skipped; /* deadlines passed unread on a lowering */
  uint64_t state_requests;    /* STATE_REQUESTs taken */
  uint64_t state_refused;     /* ... answered with a status (cannot) */
  uint64_t state_bytes;       /* state bytes sent in answers */
} gk_net_peer_stats;

#define GK_NET_PEER_DELAYS_MAX 32
#define GK_NET_PEER_RESIM_MAX 64 /* head_frames buckets: 0..63, 64 = more */

/* The predicted head (gk_net_peer_predict.c); read-only for callers. */
typedef struct gk_net_peer_head {
  void *state;           /* the predicted state (NULL: none yet) */
  uint64_t steps;        /* steps it has run: it shows step steps - 1 */
  uint64_t rollbacks;    /* restores after a misprediction */
  uint64_t restores;     /* every restore (rollbacks, a head left behind) */
  uint64_t copies;       /* ... of them by the genre's copy_state hook */
  uint64_t steps_run;    /* head steps, re-simulations included */
  uint64_t resim_steps;  /* steps run again after a restore */
  uint64_t checked;      /* confirmed steps the head had predicted */
  uint64_t mispredicted; /* ... whose input differed */
  uint64_t capped;       /* timeout calls the cap stopped short */
  uint64_t state_bytes;  /* the last byte restore's state size */
  /* re-simulated steps per timeout call that moved the head: calls with
   * n steps in resim_hist[n] (the last bucket: that many or more) */
  uint64_t resim_hist[GK_NET_PEER_RESIM_MAX + 1];
  /* private */
  uint8_t *assumed;       /* ring (inbuf window): the merged records used */
  uint64_t *assumed_mask; /* active mask | flags << 32 */
  uint8_t *last;          /* each player's last confirmed record */
  uint8_t *work;          /* the merged records of the step being built */
  uint8_t *buf;           /* canonical state bytes of a restore */
  size_t buf_len, buf_cap;
  int buf_err;
  uint64_t version; /* the confirmed loop's version at the restore */
  int dirty;        /* a misprediction was seen: restore */
  uint64_t shown;   /* the most steps the head ever reached */
} gk_net_peer_head;

/* One input delay in force from `step` on (the first is MATCH_START's). */
typedef struct gk_net_peer_delay {
  uint64_t step;
  uint32_t delay;
} gk_net_peer_delay;

struct gk_net_peer {
  /* read-only for callers */
  gk_net_peer_stats stats;
  gk_wire_match_start match; /* the match parameters (valid once started) */
  const gk_sim *sim;
  gk_loop loop;   /* this peer's run of the match */
  gk_inbuf inbuf; /* confirmed merged inputs */
  int started;
  int ended;
  int end_reason;
  uint32_t *latency_us; /* confirm latency samples, in order */
  uint32_t nlatency;
  uint32_t delay; /* the input delay this peer samples with now */
  gk_net_peer_delay delays[GK_NET_PEER_DELAYS_MAX]; /* in order; further
                                                        ones not kept */
  uint32_t ndelays;
  /* private */
  gk_net_peer_options opts;
  gk_net_peer_callbacks cb;
  gk_bot_input *bot; /* the genre's bot when no source is given (owned) */
  gk_input *source;
  void *sim_cfg;
  uint64_t step_ns;
  uint64_t now;         /* the time of the call in progress (or last) */
  uint64_t deadline;    /* poll_timeout's answer while running */
  uint64_t t0;          /* the time of deadline 0 */
  gk_net_sched sched;   /* deadline k = t0 + k * step_ns, the next sample's
                           step, delay changes (first: the first step
                           sampled, first_step + delay or a snapshot's
                           next_input) */
  uint64_t acked;       /* host holds my inputs < acked */
  uint64_t rtt_ns;      /* smoothed round trip of my inputs to their
                           acknowledgement: "ping" */
  uint64_t rtt_samples; /* round trips measured (0: rtt_ns unknown) */
  uint8_t *unacked;     /* ring of my records (window entries) */
  uint64_t *sampled_ns; /* ring: when each step's input was sampled */
  uint64_t hash_from;   /* the host holds my hashes below this step */
  int blocked;          /* sampling waits on the confirmed bound */
  int stopped;
  int end_notice; /* MATCH_END received */
  int end_notice_reason;
  gk_inbuf_replica in; /* the run's input */
  uint8_t buf[GK_WIRE_MAX];
  /* gk_net_peer_after_step: a pending call between two frames */
  uint64_t after_step;
  void (*after_fn)(void *ctx, gk_net_peer *p);
  void *after_ctx;
  /* rejoin and spectating (gk_net_peer_snap.c) */
  int await_snapshot;  /* MATCH_START sets up; a snapshot starts */
  int spectator;       /* never samples; reports hashes */
  uint64_t report_due; /* a spectator's next acknowledgement (ack_every) */
  int catching_up;     /* running confirmed steps in batches */
  char expect_code[GK_WIRE_CODE_LEN + 1];
  gk_chunk_rx snap_rx;
  gk_wire_snap_begin snap_begin;
  gk_net_peer_snap_info snap; /* the last snapshot */
  uint64_t snapshots;         /* adopted */
  uint64_t snapshots_refused;
  /* desync forensics (gk_net_peer_state.c) */
  gk_history hist; /* read-only for callers: its memory is hist.bytes */
  /* prediction (gk_net_peer_predict.c) */
  gk_net_peer_head head;
  uint32_t *display_us; /* input-to-display latency samples, in order */
  uint32_t ndisplay;
};

#define GK_NET_PEER_NEVER UINT64_MAX /* poll_timeout: no deadline */

/* Prepares a peer (no match yet). Returns 0 or GK_EINVAL/GK_ENOMEM. */
int gk_net_peer_init(gk_net_peer *p, const gk_net_peer_options *opts,
                     const gk_net_peer_callbacks *cb);

/* One datagram from the host, received at `now_ns`. MATCH_START starts the
 * match; CONFIRMED feeds the loop; notices go to the callbacks. Returns 0
 * or why it was dropped (counted). The deadline may have moved: ask
 * poll_timeout again. */
int gk_net_peer_handle(gk_net_peer *p, uint64_t now_ns, const uint8_t *bytes,
                       size_t len);

/* When the peer next wants gk_net_peer_handle_timeout: an absolute time on
 * the caller's clock (at or before now: at once), or GK_NET_PEER_NEVER
 * (not started, waiting for a snapshot, ended or stopped). It changes only
 * in the peer's own calls. */
uint64_t gk_net_peer_poll_timeout(const gk_net_peer *p);

/* The deadline has passed: catches up after a snapshot, samples every
 * sampling deadline up to `now_ns` that the bound allows, runs confirmed
 * steps left over, sends one INPUT (records, ack, hashes) if anything
 * changed or sampling waits. Calling it early is harmless (it samples
 * only the deadlines that passed). Returns the next deadline, as
 * poll_timeout. */
uint64_t gk_net_peer_handle_timeout(gk_net_peer *p, uint64_t now_ns);

/* Takes slot `slot` of room `code` back after a dropped connection:
 * sends REJOIN_ROOM with the secret from RECONNECT_SECRET over a fresh,
 * connected transport; the host answers with MATCH_START and a snapshot,
 * which the peer adopts (hash checked before any step), catches up from,
 * and then samples again (callbacks `snapshot`, `resumed`). `p` must be
 * initialised and not started. `token` may be NULL (a server in open
 * mode); otherwise GK_WIRE_TOKEN_BYTES of a fresh connect token (a join
 * of that room as a player, for that slot and the slot's client id; a
 * token is single-use, so not the one the player first joined with).
 * Returns 0, GK_EINVAL, GK_ESTATE or the send's code. */
int gk_net_peer_rejoin(gk_net_peer *p, uint64_t now_ns, const char *code,
                       uint32_t slot, const uint8_t secret[GK_WIRE_SECRET_LEN],
                       const uint8_t *token);
/* Watches room `code` as a spectator (SPECTATE): a snapshot, then the
 * confirmed steps; never samples, reports its hashes. `token` may be NULL
 * (open mode), else GK_WIRE_TOKEN_BYTES of a spectator's join token. */
int gk_net_peer_spectate(gk_net_peer *p, uint64_t now_ns, const char *code,
                         const uint8_t *token);

/* Starts the match described by `ms` at `now_ns` (what MATCH_START does):
 * the genre from options.genres, its options in ms->config through
 * options.apply_options over the defaults (natively src/config's
 * gk_config_apply_text, path "options", exactly as the server read them).
 * Returns 0, GK_ESTATE (already started), GK_ENOTFOUND (unknown genre),
 * GK_EINVAL, GK_EMISMATCH (players outside the genre's range), or a config
 * error (GK_EPARSE, or the genre's code); message in err. The first
 * sampling deadline is now_ns. */
int gk_net_peer_start(gk_net_peer *p, uint64_t now_ns,
                      const gk_wire_match_start *ms, char *err, size_t errlen);

/* Encodes and sends a message (reliability from the type table). A
 * JOIN_ROOM's room code is kept for a late join's snapshot (its request
 * time is now_ns; from inside a callback, pass p->now). */
int gk_net_peer_send_msg(gk_net_peer *p, uint64_t now_ns, const gk_wire_msg *m);

/* Calls fn(ctx, p) once, between two frames, as soon as the loop has run
 * step `step` (loop.steps == step + 1) and before it runs the next, so fn
 * may change the run (gk_loop_modify, gk_loop_replace): gk-bot --perturb.
 * One pending call; a later one replaces it; fn NULL cancels it. */
void gk_net_peer_after_step(gk_net_peer *p, uint64_t step,
                            void (*fn)(void *ctx, gk_net_peer *p), void *ctx);

/* Stops sampling (the match is left as it is; no more deadlines). */
void gk_net_peer_stop(gk_net_peer *p);

/* Frees everything the peer holds; `p` may be freed or initialised again
 * after. Not from inside one of its callbacks. */
void gk_net_peer_free(gk_net_peer *p);

/* p-th percentile (0..100) of the latency samples in microseconds, by
 * nearest rank over a sorted copy; 0 if there are none. Allocates. */
uint32_t gk_net_peer_latency_pct(const gk_net_peer *p, uint32_t pct);

/* The same over the input-to-display samples: from sampling a step's
 * input to the first time the peer shows that step (the head runs it
 * with prediction, the confirmed run without). */
uint32_t gk_net_peer_display_pct(const gk_net_peer *p, uint32_t pct);

/* 1 if the state to draw is the predicted head: prediction is on, the
 * head exists and is not behind the confirmed run (steps confirmed since
 * the last timeout call can pass it until the next one restores it). */
int gk_net_peer_view_predicted(const gk_net_peer *p);
/* The state to draw: the head's when gk_net_peer_view_predicted, else the
 * confirmed run's (NULL before the match). Never hashed or sent. */
const void *gk_net_peer_view_state(const gk_net_peer *p);
/* Its step count (the steps the drawn state has run). */
uint64_t gk_net_peer_view_steps(const gk_net_peer *p);

/* Of the head's re-simulated steps per call (head.resim_hist), the
 * pct-th percentile (nearest rank); 0 without any. */
uint32_t gk_net_peer_resim_pct(const gk_net_peer *p, uint32_t pct);

#endif
