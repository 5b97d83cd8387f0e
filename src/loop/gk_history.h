/* gk_history.h: a run's recent past, kept so that "the canonical state
 * after n steps" can be answered for any n still in a window.
 *
 * A history is fed by the owner of a gk_loop after every step (from the
 * input source's end_step: gk_history_record) and keeps
 *   - the canonical state (write_state bytes) every `every` steps (and
 *     whenever the owner marks a change made between frames:
 *     gk_history_mark), in a ring of snapshots;
 *   - every step's merged input (active mask, flags, records) and the
 *     hash after it since the oldest snapshot, in a ring of steps.
 * gk_history_state_at(n) reads the nearest snapshot at or before n into a
 * fresh run (read_state + gk_loop_adopt), re-simulates the kept inputs up
 * to n and writes that state: the same bytes the run had after n steps,
 * because a step depends on nothing but the state and the input
 * (gk_synctest checks a genre keeps to that).
 *
 * Window: it answers every n in [first, last] (h->first, h->last), where
 * last is the steps recorded so far, and covers at least `window` steps
 * back from last once that many ran, unless the memory bound said
 * otherwise. An owner sizes `window` to cover its hash window (the
 * steps a desync can still be reported for).
 *
 * Memory bound: the input ring holds window + 2 * every steps of
 * (16 + players * input_size) bytes, allocated at init; snapshots are
 * held in at most window / every + 3 buffers, each as large as the
 * largest state it held (rounded up to a power of two). After every
 * snapshot, while the total (h->bytes) is above max_bytes, the buffers
 * of unused slots and then the oldest snapshots are freed (h->dropped
 * counts those), so the window shrinks but the newest snapshot stays:
 * between records h->bytes <= max_bytes as long as one snapshot and the
 * input ring fit in it; while a snapshot is being written one more
 * buffer may be held (h->peak_bytes counts it).
 *
 * A change to the run that did not come from a step (gk_loop_modify,
 * gk_loop_replace, gk_loop_adopt: the loop's version moves) must be
 * followed by gk_history_mark, or the next record notices it (the
 * version, or a step count that does not follow) and starts over from
 * that step: a history never re-simulates across a change it did not
 * see.
 *
 * Core: libc only. Records allocate only when a state grows past the
 * buffer it is written into; the caller owns the struct.
 */
#ifndef GK_HISTORY_H
#define GK_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "gk_loop.h"

#define GK_HISTORY_EVERY_DEFAULT 64u
#define GK_HISTORY_WINDOW_DEFAULT 1200u
#define GK_HISTORY_MAX_BYTES_DEFAULT (UINT64_C(64) << 20)

typedef struct gk_history_options {
  uint32_t every;     /* steps between snapshots, 1..65536; 0 -> default */
  uint32_t window;    /* steps to cover back from the last, 1..1 << 20;
                         0 -> default */
  uint64_t max_bytes; /* the memory bound; 0 -> default */
} gk_history_options;

typedef struct gk__history_snap {
  uint64_t steps; /* the state after this many steps */
  uint8_t *bytes;
  size_t len, cap;
} gk__history_snap;

typedef struct gk_history {
  /* read-only for callers */
  const gk_sim *sim;
  const void *cfg;
  uint32_t players;
  uint64_t first;      /* oldest n it answers (with last: empty if none) */
  uint64_t last;       /* steps recorded: the newest n it answers */
  uint64_t bytes;      /* memory held now: input ring + snapshot buffers */
  uint64_t peak_bytes; /* the most it held */
  uint64_t dropped;    /* snapshots freed for the memory bound */
  uint64_t restarts;   /* unmarked changes seen by gk_history_record */
  int err;             /* GK_ENOMEM once a snapshot could not be kept */
  /* private */
  gk_history_options o;
  uint8_t *ring; /* in_cap entries of rec_size bytes */
  uint32_t in_cap;
  size_t rec_size;
  uint64_t in_from; /* inputs held for steps in_from..last-1 */
  gk__history_snap *snaps;
  uint32_t snap_cap, snap_head, nsnaps;
  uint64_t version; /* the loop's version at the last record or mark */
  int have;         /* something was recorded or marked */
} gk_history;

/* Sets up an empty history of a run of `sim` (non-NULL) with config `cfg`
 * (non-NULL; borrowed: it must outlive the history and be the one the
 * run was created with) and `players` players. `o` may be NULL
 * (defaults). Returns 0, GK_EINVAL (out of range) or GK_ENOMEM. */
int gk_history_init(gk_history *h, const gk_sim *sim, const void *cfg,
                    uint32_t players, const gk_history_options *o);
/* Frees everything it holds. A zeroed struct is fine. */
void gk_history_close(gk_history *h);

/* The loop ran step in->step (loop->steps == in->step + 1): keeps its
 * input and hash, and a snapshot if the step count is a multiple of
 * `every`. Call it from the input source's end_step (the state is read,
 * never changed). Both must be non-NULL. */
void gk_history_record(gk_history *h, const gk_loop *loop,
                       const gk_step_input *in);
/* Takes a snapshot of the loop's state now (after gk_loop_start, or a
 * modify, replace or adopt between frames); nothing if the loop's version
 * and steps did not move since the last record or mark. Steps before it
 * stay answerable if they were. Returns 0, GK_ENORUN or GK_ENOMEM. */
int gk_history_mark(gk_history *h, const gk_loop *loop);

/* The canonical state after `steps` steps into *bytes (malloc'd, the
 * caller frees it) and *len; *hash (may be NULL) gets its hash. Returns
 * 0; GK_ENOTKEPT (outside [first, last], with the window in err);
 * GK_EINVAL (the genre refused its own snapshot); GK_ENOMEM. */
int gk_history_state_at(const gk_history *h, uint64_t steps, uint8_t **bytes,
                        size_t *len, uint64_t *hash, char *err, size_t errlen);

/* The recorded hash after `steps` steps (steps >= 1). 0 or GK_ENOTKEPT. */
int gk_history_hash_at(const gk_history *h, uint64_t steps, uint64_t *hash);

#endif
