/* gk_net_session.h: the host session, relay and referee of one match.
 *
 * No sockets, no rooms, no clock: the owner (a test host, a server room)
 * feeds it each received datagram with the sender's slot, calls tick(now)
 * regularly (about once per step period), and carries the bytes it emits
 * through the `send` callback. Slots are 0..players-1; the owner maps its
 * connections to slots and checks nothing else: the session decodes,
 * checks the message against the sender's slot, and counts every drop.
 *
 * What it does:
 *   - puts every INPUT record in its gk_inbuf and confirms steps as soon as
 *     every active player's input is in (on receive, so confirmation costs
 *     no tick wait); the first input_delay steps are neutral;
 *   - sends each player the confirmed merged inputs it has not acknowledged,
 *     unreliably and repeated until acknowledged (CONFIRMED), at once when
 *     a step is confirmed, and again from tick when two step periods went
 *     by with nothing sent to it (about one CONFIRMED per player per step;
 *     CONFIRMED.hash_ack acknowledges the player's hash reports);
 *   - runs its own gk_loop of the match over the confirmed steps, with
 *     `{ steps: ready }` budgets, in tick;
 *   - compares every hash a player reports (in INPUT, or in HASH) with
 *     its own hash of that step
 *     (gk_loop_hash_at); reports held for steps it has not run yet are
 *     kept, at most `pending_hashes` per player (further ones are counted
 *     and dropped). The first difference per player is reported through
 *     `desync` and a DESYNC notice to every player;
 *   - stalls: when the next step has waited `stall_notice_ms` on some
 *     players, it tells every player (STALL naming them) and calls `stall`;
 *     with auto_remove_ms non-zero it removes them after that long;
 *   - host actions: remove a player at a scheduled step (REMOVE_PLAYER
 *     notice to all), end the match (MATCH_END at the next step; it is
 *     confirmed with missing inputs neutral, so a stall cannot block it).
 *     REMOVE_PLAYER and END_MATCH messages from the creator slot are
 *     honoured; from any other slot they are dropped as GK_EPERM.
 *   - the match ends after the step flagged GK_STEP_MATCH_END, or when the
 *     genre's is_over becomes true (the session then schedules the end
 *     itself), or when every player is removed.
 *   - records once the end is scheduled at step E: E is confirmed at once,
 *     so a record for E that arrives later is stale, and one for a step
 *     after E is past the end. Both are refused (not held, not used) and
 *     counted in inputs_stale, and the INPUT still returns 0: a peer may
 *     have sampled past E before it heard of the end. Once the host ran E,
 *     every INPUT is refused with GK_ECLOSED.
 *
 * After the end ("draining"). A peer ends only once it has run the last
 * step, so the owner keeps the session open for a while after `ended`
 * (s->ended is 1) and goes on feeding it datagrams and calling tick. In
 * that state the session
 *   - takes the acknowledgement (INPUT.ack) of every INPUT; the records
 *     themselves are stale (counted in inputs_stale, GK_ECLOSED);
 *   - still compares HASH reports with its own hashes;
 *   - refuses removals (GK_ECLOSED) and a second end (GK_ESTATE);
 *   - from tick, repeats to each player the confirmed steps it has not
 *     acknowledged, and runs no more steps;
 *   - says through gk_net_session_drained when every player the owner
 *     still has a connection for holds every confirmed step: the owner
 *     can close it then (or after a time limit of its own).
 */
#ifndef GK_NET_SESSION_H
#define GK_NET_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "gk_history.h"
#include "gk_loop.h"
#include "gk_net_inbuf.h"
#include "gk_net_wire.h"
#include "gk_sim.h"

typedef struct gk_net_session gk_net_session;

typedef struct gk_net_desync {
  uint64_t step;
  uint32_t player;
  uint64_t host_hash;
  uint64_t peer_hash;
} gk_net_desync;

typedef struct gk_net_session_config {
  const gk_sim *sim;      /* must be non-NULL */
  const void *sim_config; /* the genre's config struct; copied by create */
  uint64_t seed;
  uint32_t players;         /* 1..GK_PLAYERS_MAX, within the genre's range */
  uint32_t active_mask;     /* 0 -> every slot below players */
  uint64_t first_step;      /* usually 0 */
  uint32_t input_delay;     /* steps; the first input_delay steps are neutral */
  uint32_t lead;            /* steps a peer may sample past confirmed +
                               input_delay (sent in MATCH_START) */
  uint32_t creator;         /* slot whose actions are honoured */
  uint32_t window;          /* input buffer window; 0 -> default */
  uint32_t hash_ring;       /* loop hash ring; 0 -> default (>= window) */
  uint32_t pending_hashes;  /* per player; 0 -> 256 */
  uint64_t stall_notice_ms; /* 0 -> 1000 */
  uint64_t auto_remove_ms;  /* 0 -> off (the creator decides) */
  gk_ratio step_seconds;    /* the match's step period (what MATCH_START
                               says); {0, 0} -> the genre's step_seconds */
  /* The schedule (what lateness and stalls are measured against): step s
   * is due at A + (s + 1 - a) * step period, starting with a = first_step
   * and A = the start. A step confirmed more than late_slack_ms after it
   * was due is late (stats.steps_late), unless it waited more than
   * stall_ms as the next step to confirm (nothing was confirmed for that
   * long): then it is a stall (stats.stalls; stats.stalled_ms += how late
   * it was) and the schedule moves to it (a = s + 1, A = now: s is due
   * when it came), so the steps after it are measured against the pace
   * the players have since. A match that only runs slow (no long wait)
   * is late, not stalled. stall_ms 0: no stalls; the schedule never
   * moves. */
  uint32_t late_slack_ms;
  uint32_t stall_ms;
  /* The referee's history (desync forensics: its state at a desync's
   * step, as the peers answer it): window 0 -> hash_ring + 64, the rest
   * 0 -> gk_history's defaults. */
  gk_history_options history;
} gk_net_session_config;

typedef struct gk_net_session_callbacks {
  void *ctx;
  /* Must be non-NULL. Sends `len` bytes to `slot`. The bytes are valid for
   * the call only. Returns 0 or a negative code (counted as a send drop). */
  int (*send)(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
              int reliable);
  /* May be NULL. Once per player, at the first step its hash differs. */
  void (*desync)(void *ctx, const gk_net_desync *d);
  /* May be NULL. Step `step` has waited `waited_ms` on `awaited`. */
  void (*stall)(void *ctx, uint64_t step, uint32_t awaited, uint64_t waited_ms);
  /* May be NULL. After the host's loop ran `in->step` (for replays). */
  void (*step)(void *ctx, const gk_step_input *in, uint64_t hash);
  /* May be NULL. A removal was scheduled: `slot` is neutral from `step`. */
  void (*removed)(void *ctx, uint32_t slot, uint64_t step);
  /* May be NULL. The host's loop ran the last step (`step`) of the match;
   * `reason` is a GK_WIRE_END_*. Called once. */
  void (*ended)(void *ctx, uint64_t step, int reason);
  /* May be NULL. `step` was confirmed `late_ms` after it was due on the
   * schedule (0: on time, and for a stall's step, whose wait is counted in
   * stats.stalled_ms); once per step, in step order. */
  void (*confirmed)(void *ctx, uint64_t step, uint64_t late_ms);
} gk_net_session_callbacks;

typedef struct gk_net_session_stats {
  uint64_t packets_in, bytes_in;
  uint64_t packets_out, bytes_out;
  uint64_t drop_malformed;  /* decode failed */
  uint64_t drop_slot;       /* message names another slot / bad shape */
  uint64_t drop_unexpected; /* a type the session does not take */
  uint64_t drop_perm;       /* action from a non-creator, removed player */
  uint64_t drop_ahead;      /* input or hash too far ahead */
  uint64_t drop_send;       /* send callback failed */
  uint64_t inputs_stale;    /* records for confirmed steps (redundancy) */
  uint64_t inputs_dup;      /* records already held (redundancy) */
  uint64_t hashes_compared;
  uint64_t hashes_dropped; /* pending overflow, or no longer kept */
  uint64_t desyncs;
  uint64_t steps_confirmed;
  uint64_t steps_late;    /* late on the schedule (config.late_slack_ms) */
  uint64_t confirm_ms;    /* the sum of every step's `confirmed` late_ms */
  uint64_t stalls;        /* stalls on the schedule (config.stall_ms) */
  uint64_t stalled_ms;    /* the schedule moved by this much in all */
  uint64_t steps_run;     /* by the host's own loop */
  uint64_t stall_notices; /* STALL notices sent */
  uint64_t delay_changes; /* input delay changes announced */
  uint64_t joins;         /* players joined after the start */
} gk_net_session_stats;

typedef struct gk__pending_hash {
  uint64_t step;
  uint64_t hash;
} gk__pending_hash;

typedef struct gk__session_player {
  uint64_t acked;            /* the player holds confirmed steps < acked */
  uint64_t input_ack;        /* we hold its inputs < input_ack */
  uint64_t input_ack_sent;   /* the input ack last sent to it */
  uint64_t sent_ms;          /* last CONFIRMED send time */
  uint64_t hashes_upto;      /* hash reports seen below this step */
  gk__pending_hash *pending; /* ring of pending_hashes entries */
  uint32_t npending;
  uint32_t pend_head;
  int desynced;
} gk__session_player;

struct gk_net_session {
  /* read-only for callers */
  gk_net_session_config cfg;
  gk_net_session_stats stats;
  gk_loop loop; /* the host's own run of the match */
  gk_inbuf inbuf;
  gk_history hist; /* the loop's recent past: gk_history_state_at */
  int ended;       /* 1 once the last step ran */
  int end_reason;
  uint64_t end_step;
  /* private */
  gk_net_session_callbacks cb;
  gk_inbuf_replica in; /* the referee's input */
  gk__session_player pl[GK_PLAYERS_MAX];
  uint64_t start_ms;
  uint64_t sched_step, sched_ms; /* the schedule: a and A (config) */
  uint64_t frontier_since_ms;    /* when step `confirmed` became the next */
  uint64_t stall_step; /* step last noticed as stalled, or UINT64_MAX */
  uint64_t now_ms;
  uint32_t joined; /* slots that joined after the start */
  int end_scheduled;
  uint8_t buf[GK_WIRE_MAX];
  uint8_t pack[GK_WIRE_MAX];
};

/* Starts the host's run (gk_loop_start) and the input buffer. `now_ms` is
 * the match start on the owner's clock (stall and late-step timing).
 * Returns 0, GK_EINVAL (bad config; message in err), GK_ENOMEM, or the
 * genre's create failure. On failure nothing needs closing. */
int gk_net_session_init(gk_net_session *s, const gk_net_session_config *cfg,
                        const gk_net_session_callbacks *cb, uint64_t now_ms,
                        char *err, size_t errlen);
void gk_net_session_close(gk_net_session *s);

/* One datagram from `slot`. Returns 0 or the reason it was dropped (also
 * counted in stats); a drop never changes the match. Decodes with
 * gk_wire_decode, then does what gk_net_session_receive_decoded does. */
int gk_net_session_receive(gk_net_session *s, uint32_t slot,
                           const uint8_t *bytes, size_t len, uint64_t now_ms);
/* One datagram of `len` bytes from `slot` that the owner has decoded
 * already (a server decodes every datagram once to route it, and hands
 * match messages over here). `decode_rc` is what gk_wire_decode returned
 * for it: when it is not 0 the datagram is counted as malformed, `m` is
 * not read (it may be NULL) and decode_rc is returned; otherwise `m` must
 * be the decoded message (borrowed for the call). Counts exactly what
 * gk_net_session_receive counts (packets_in, bytes_in, drop_slot,
 * drop_malformed, then the message's own drops). */
int gk_net_session_receive_decoded(gk_net_session *s, uint32_t slot,
                                   int decode_rc, const gk_wire_msg *m,
                                   size_t len, uint64_t now_ms);
/* A decoded message with no datagram behind it: counts no packet or
 * bytes, only the message's own drops. `m` must be non-NULL. */
int gk_net_session_on_msg(gk_net_session *s, uint32_t slot,
                          const gk_wire_msg *m, uint64_t now_ms);

/* Confirms, (re)sends unacknowledged confirmed steps, steps the host's
 * loop by the ready count, checks hashes and stalls. Returns the number of
 * steps the host's loop ran, or a negative code from the loop. */
int gk_net_session_tick(gk_net_session *s, uint64_t now_ms);

/* Removes `slot` from step `step` on (GK_WIRE_STEP_ASAP: the next
 * unconfirmed step); *at (may be NULL) gets the scheduled step. Tells
 * every player. GK_ERANGE, GK_ESTALE, GK_EPERM (already inactive),
 * GK_ECLOSED (the match has ended), ... */
int gk_net_session_remove(gk_net_session *s, uint32_t slot, uint64_t step,
                          uint64_t *at, uint64_t now_ms);
/* The slot's connection is gone: remove it as soon as possible. */
int gk_net_session_disconnect(gk_net_session *s, uint32_t slot,
                              uint64_t now_ms);
/* Ends the match at the next unconfirmed step (reason GK_WIRE_END_*). */
int gk_net_session_end(gk_net_session *s, int reason, uint64_t now_ms);

/* Changes the input delay to `delay` (1..255): the next unconfirmed step
 * announces it (GK_STEP_DELAY in its flags, so every peer and the replay
 * see it at the same step) and every peer switches at the step
 * announce + old delay + lead (see gk_inbuf_schedule_delay and
 * docs/PROTOCOL.md "Input delay"). *announce and *switch_at may be NULL.
 * GK_ECLOSED once the end is scheduled, GK_EBUSY while an earlier change
 * is in progress, GK_EEXIST if it is the current delay, GK_EINVAL. */
int gk_net_session_set_delay(gk_net_session *s, uint32_t delay,
                             uint64_t *announce, uint64_t *switch_at,
                             uint64_t now_ms);
/* The input delay of the last announcing step confirmed (the configured
 * one at first). */
uint32_t gk_net_session_delay(const gk_net_session *s);

/* Steps confirmed (the next step to confirm). */
uint64_t gk_net_session_confirmed(const gk_net_session *s);

/* 1 once the match has ended and every slot in `players` that was in the
 * match (cfg.active_mask, or joined later) has acknowledged every
 * confirmed step, so no peer waits for anything from this session any
 * more; 0 before the end
 * or while one of them has not. `players` is the owner's choice: the
 * slots it still has a connection for (a player that is gone cannot
 * acknowledge). */
int gk_net_session_drained(const gk_net_session *s, uint32_t players);

/* --- Away and back (gk_net_session_away.c) -------------------------------
 * The owner holds the slot of a player whose connection dropped instead
 * of removing it: it calls away_tick before every tick while the player
 * is away (the slot's acknowledgement follows the confirmed step, and
 * with `neutral` its records are all-zero from the next one it has not
 * sent up to confirmed + input_delay + lead, so nobody waits on it), and
 * rejoin when it is back on a new connection with the host's state after
 * `from` steps (the loop's steps, at most the confirmed step): the slot
 * is sent confirmed steps from `from` on, its hash reports count from
 * there, and *next_input (may be NULL) gets the first step whose record
 * the host still needs from it. GK_ERANGE (slot), GK_ECLOSED (the match
 * ended, or away_tick on a removed slot), GK_EPERM (rejoin of a removed
 * slot), GK_ESTALE (`from` not held). */
int gk_net_session_away_tick(gk_net_session *s, uint32_t slot, int neutral);
int gk_net_session_rejoin(gk_net_session *s, uint32_t slot, uint64_t from,
                          uint64_t *next_input);

/* --- Late join (gk_net_session_away.c) -----------------------------------
 * A slot that is not in the match (inactive and not joining; whether a
 * slot that left may come back is the owner's and the genre's business:
 * gk-server gives only fresh slots) joins at the next unconfirmed step J:
 * GK_INBUF_ADD_PLAYER at J, so its bit is set in the active mask of every
 * merged input from J (CONFIRMED carries it: that is how the other peers
 * learn of it). Its records for J .. J + D - 1 (D: the current input
 * delay) are neutral, as every player's first D steps are at the start;
 * it is sent the confirmed steps from J and its hash reports count from
 * J. `from` must be J and the host's loop must have run every confirmed
 * step (the owner ticks first and snapshots the state after `from` steps
 * for the joiner). *at (may be NULL) gets J, *next_input (may be NULL)
 * the first step it samples for, J + D. The owner picks the slot; the
 * genre must accept late join (gk_sim.late_join) for the join to mean
 * anything: the session does not check. GK_ERANGE (slot), GK_ECLOSED
 * (the match ended or its end is scheduled), GK_EEXIST (the slot is
 * active or joining), GK_ESTALE (`from` is not J, or the loop is
 * behind), GK_EBUSY (an input delay change is in progress: try again
 * once it is done), GK_EAHEAD / GK_EFULL (window, commands). */
int gk_net_session_join(gk_net_session *s, uint32_t slot, uint64_t from,
                        uint64_t *at, uint64_t *next_input, uint64_t now_ms);

#endif
