/* gk_net_inbuf.h: the lockstep input buffer.
 *
 * A ring of per-step, per-player input records over a bounded window of
 * steps. It is the gk_input a lockstep GameLoop steps over: read(step)
 * returns that step's merged input, and only confirmed steps can be read,
 * so the owner runs gk_loop_frame(loop, &b->base, gk_budget_steps(
 * gk_inbuf_ready(b)), now).
 *
 * Two ways to fill it:
 *   - host side, per player: gk_inbuf_put(slot, step, record). Step N is
 *     confirmed (gk_inbuf_confirm) once every player active at N has its
 *     record for N. Confirmation is in step order and never skips a step.
 *   - peer side, merged: gk_inbuf_put_merged(step input) from the host's
 *     CONFIRMED messages; contiguous merged steps become confirmed.
 *
 * System commands are scheduled at a step that is not yet confirmed and
 * become part of that step's merged input:
 *   GK_INBUF_ADD_PLAYER     the slot is active from the step on; its
 *                           acknowledgements hold releases (ack_mask) from
 *                           the moment it is scheduled, with the step as
 *                           its first unacknowledged one;
 *   GK_INBUF_REMOVE_PLAYER  the slot is inactive from the step on: its
 *                           record is neutral (all zero), its inputs are no
 *                           longer awaited nor accepted;
 *   GK_INBUF_MATCH_END      the step carries GK_STEP_MATCH_END and is the
 *                           last one: it is confirmed as soon as every
 *                           earlier step is, with any missing record
 *                           neutral, so a host can always end a match;
 *   GK_INBUF_SET_DELAY      (host side; `slot` is the new delay D') the
 *                           step announces the change (GK_STEP_DELAY and
 *                           D' in its flags). Peers switch at the step
 *                           S = announce + D + lead (D the delay before,
 *                           lead from the options). Raising, steps
 *                           S .. S + D' - D - 1 get no sample from anyone:
 *                           when the announcing step is confirmed they
 *                           are filled neutral for every player (and
 *                           count as held). Lowering, nothing is filled:
 *                           peers skip D - D' sampling deadlines and their
 *                           next sample is for S (docs/PROTOCOL.md).
 *
 * Bounds: a record for a step at or past base + window is refused with
 * GK_EAHEAD; one for a confirmed step with GK_ESTALE; a repeat of a record
 * already held with GK_EEXIST (redundant sends make that normal). The
 * steps below `base` are released: base moves up to the lowest of the
 * next step to read and, for every slot in ack_mask, the step that slot
 * acknowledged (gk_inbuf_ack). Memory is allocated once, in init.
 */
#ifndef GK_NET_INBUF_H
#define GK_NET_INBUF_H

#include <stddef.h>
#include <stdint.h>

#include "gk_history.h"
#include "gk_loop.h"
#include "gk_sim.h"

#define GK_INBUF_WINDOW_DEFAULT 256
#define GK_INBUF_WINDOW_MAX 65536
#define GK_INBUF_CMDS_MAX 64 /* pending system commands */

typedef enum gk_inbuf_cmd {
  GK_INBUF_ADD_PLAYER = 1,
  GK_INBUF_REMOVE_PLAYER = 2,
  GK_INBUF_MATCH_END = 3,
  GK_INBUF_SET_DELAY = 4
} gk_inbuf_cmd;

typedef struct gk_inbuf_options {
  uint32_t players;       /* 1..GK_PLAYERS_MAX */
  uint32_t input_size;    /* 1..GK_INPUT_SIZE_MAX */
  uint32_t active_mask;   /* active at first_step; only bits below players */
  uint64_t first_step;    /* the first step of the match */
  uint32_t window;        /* steps held at most; 0 -> GK_INBUF_WINDOW_DEFAULT */
  uint32_t neutral_steps; /* steps first_step.. first_step+n-1 are given
                            all-neutral records for every player (the
                            input_delay steps nobody sampled for); host
                            side only */
  uint32_t ack_mask;      /* slots whose acks hold releases (host: the
                             remote players; peer: 0) */
  uint32_t lead;          /* host side, for delay changes: steps a peer may
                             sample past confirmed + delay */
} gk_inbuf_options;

typedef struct gk__inbuf_meta {
  uint32_t present; /* players whose record is held */
  uint32_t active;  /* merged: active mask (valid once confirmed) */
  uint32_t flags;   /* merged: GK_STEP_* (valid once confirmed) */
} gk__inbuf_meta;

typedef struct gk__inbuf_cmd {
  uint64_t step;
  uint32_t kind;
  uint32_t slot;
} gk__inbuf_cmd;

typedef struct gk_inbuf {
  gk_input base; /* must be first: pass &b->base to gk_loop_frame */
  /* read-only for callers */
  uint32_t players;
  uint32_t input_size;
  uint32_t window;
  uint64_t first_step;
  uint64_t low;         /* lowest step still held (steps below: released) */
  uint64_t confirmed;   /* steps < confirmed are confirmed */
  uint64_t next_read;   /* steps < next_read have been read by the loop */
  uint64_t end_step;    /* the MATCH_END step once confirmed, else
                           UINT64_MAX */
  uint32_t active_mask; /* active at step `confirmed` (commands applied) */
  uint32_t ack_mask;
  uint64_t acked[GK_PLAYERS_MAX]; /* slot holds every step < acked[slot] */
  uint32_t delay; /* host side: the input delay last announced (the
                     options' neutral_steps at first) */
  uint32_t lead;
  uint64_t delay_done; /* a delay change is in progress until the step
                          before this is confirmed (0: none yet) */
  /* private */
  gk__inbuf_meta *meta; /* window entries, ring indexed by step % window */
  uint8_t *records;     /* window * players * input_size bytes */
  gk__inbuf_cmd cmds[GK_INBUF_CMDS_MAX];
  uint32_t ncmds;
  int mode; /* 0 unset, 1 per-player puts, 2 merged puts */
} gk_inbuf;

/* Allocates the window. GK_EINVAL on out-of-range options, GK_ENOMEM. */
int gk_inbuf_init(gk_inbuf *b, const gk_inbuf_options *o);
void gk_inbuf_close(gk_inbuf *b);

/* Host side: `slot`'s record for `step` (input_size bytes, copied).
 * Returns 0, GK_ERANGE (slot >= players), GK_EPERM (slot not active at
 * step), GK_ESTALE (step confirmed or released), GK_EAHEAD (step >= low +
 * window), GK_EEXIST (already held; the first copy wins), GK_ECLOSED
 * (past the match end), GK_ESTATE (buffer is merged). Nothing changes on
 * an error. */
int gk_inbuf_put(gk_inbuf *b, uint32_t slot, uint64_t step,
                 const uint8_t *record);

/* Peer side: a confirmed merged step from the host (in->players must equal
 * players; in->inputs holds players * input_size bytes). Steps may arrive
 * out of order within the window; they become confirmed when contiguous.
 * Records of inactive players are stored as neutral. Returns 0, GK_EINVAL,
 * GK_ESTALE, GK_EAHEAD, GK_EEXIST, GK_ECLOSED (past the end step),
 * GK_EPROTO (active mask or flags not allowed), GK_ESTATE (buffer was put
 * to per player). */
int gk_inbuf_put_merged(gk_inbuf *b, const gk_step_input *in);

/* Schedules a system command at `step` (>= confirmed). GK_ESTALE if that
 * step is confirmed, GK_EAHEAD if beyond the window, GK_ERANGE on a bad
 * slot, GK_EFULL if GK_INBUF_CMDS_MAX are pending, GK_EEXIST if a match
 * end is already scheduled (at or before step), GK_EINVAL otherwise. */
int gk_inbuf_schedule(gk_inbuf *b, uint64_t step, gk_inbuf_cmd cmd,
                      uint32_t slot);

/* Host side: announces input delay `delay` (1..255) at `step` (the
 * GK_INBUF_SET_DELAY command). *switch_at (may be NULL) gets the step S
 * where peers switch. GK_EBUSY while an earlier change is in progress
 * (announced, or its switch step and filled steps not all confirmed),
 * GK_EEXIST if `delay` is the current one, GK_EAHEAD if S and the filled
 * steps would not fit in the window, GK_ESTATE on a merged buffer, and
 * what gk_inbuf_schedule returns. */
int gk_inbuf_schedule_delay(gk_inbuf *b, uint64_t step, uint32_t delay,
                            uint64_t *switch_at);

/* 1 while a delay change is in progress: announced and not yet confirmed,
 * or its switch step and filled steps not all confirmed (what
 * gk_inbuf_schedule_delay refuses with GK_EBUSY); else 0. */
int gk_inbuf_delay_busy(const gk_inbuf *b);

/* Confirms every step it can, in order. Returns how many became confirmed
 * by this call. */
uint64_t gk_inbuf_confirm(gk_inbuf *b);

/* Confirmed steps not yet read by the loop: the `{ steps }` budget. */
uint64_t gk_inbuf_ready(const gk_inbuf *b);

/* Players active at `step` whose record for it is not held (for stall
 * notices). 0 if the step is confirmed or out of the window. */
uint32_t gk_inbuf_missing(const gk_inbuf *b, uint64_t step);

/* Active mask at `step` (>= confirmed), with scheduled commands applied;
 * for confirmed steps still held, the merged mask. */
uint32_t gk_inbuf_active_at(const gk_inbuf *b, uint64_t step);

/* Views a confirmed step still held (the same view read gives the loop).
 * GK_ESTALE if released, GK_EAHEAD if not confirmed. */
int gk_inbuf_get(const gk_inbuf *b, uint64_t step, gk_step_input *out);

/* `slot` holds every confirmed step < upto; releases what no one needs.
 * Acks only move forward and never past `confirmed`. GK_ERANGE on a bad
 * slot. */
int gk_inbuf_ack(gk_inbuf *b, uint32_t slot, uint64_t upto);

/* For slot: the lowest step >= from whose record is not held (host side;
 * what the host can acknowledge back to that peer). */
uint64_t gk_inbuf_contiguous(const gk_inbuf *b, uint32_t slot, uint64_t from);

/* The input of an engine's own run of the match (the session's referee,
 * a peer's run): reads the confirmed steps from `inbuf`, and after each
 * step records it in `hist` and hands it, with the run's hash after it,
 * to `step` (counting and callbacks: the engine's). */
typedef struct gk_inbuf_replica {
  gk_input base; /* must be first: what gk_loop_frame is given */
  gk_inbuf *inbuf;
  gk_loop *loop;
  gk_history *hist;
  void (*step)(void *ctx, const gk_step_input *in, uint64_t hash);
  void *ctx;
  gk_step_input last; /* the step last read */
} gk_inbuf_replica;

/* Sets r up over the engine's buffer, run and history (all non-NULL and
 * outliving r) and its hook (non-NULL). */
void gk_inbuf_replica_init(
    gk_inbuf_replica *r, gk_inbuf *inbuf, gk_loop *loop, gk_history *hist,
    void (*step)(void *ctx, const gk_step_input *in, uint64_t hash), void *ctx);

#endif
