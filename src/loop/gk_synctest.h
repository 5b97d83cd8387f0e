/* gk_synctest.h: the sync test, on canonical state (the GGPO/GGRS
 * "SyncTest" idea).
 *
 * Runs a genre's built-in bots (or neutral input for a genre without bots)
 * in one run A. Every `every` steps it writes A's state, reads it back
 * with the genre's read_state into a fresh run B and runs both on the same
 * inputs, comparing their hashes after every step. A genre whose writer
 * forgets state that its step uses (a hidden field, a cache that is not
 * rebuilt on read) makes B part from A: the result names the first step
 * where the hashes differ and the first field that differs there (by its
 * unique path, gk_path). A read_state that does not give back what
 * write_state wrote is caught at the checkpoint itself.
 *
 * Part of the core: libc only. It allocates two runs and their loops for
 * the duration of the call, and frees them before it returns.
 */
#ifndef GK_SYNCTEST_H
#define GK_SYNCTEST_H

#include <stdint.h>

#include "gk_sim.h"

typedef struct gk_synctest_opts {
  uint32_t players; /* players_min..players_max */
  uint64_t seed;    /* of the run and (through SplitMix64) its bots */
  uint64_t steps;   /* steps to run in all, >= 1 */
  uint64_t every;   /* copy A into a fresh B every `every` steps, >= 1 */
} gk_synctest_opts;

typedef struct gk_synctest_result {
  int ok;               /* 1: B matched A after every step */
  uint64_t steps_run;   /* steps A ran */
  uint64_t checkpoints; /* states written and read back */
  /* when !ok: */
  int at_readback;     /* the read-back state wrote different bytes at once */
  uint64_t fail_step;  /* first step whose hashes differ (for at_readback:
                          the step the state was taken after, or
                          UINT64_MAX for the state before step 0) */
  uint64_t checkpoint; /* B was read from A's state after step checkpoint-1
                          (0: the state before step 0) */
  uint64_t hash_a, hash_b;
  uint64_t fields_differ; /* fields that differ at fail_step */
  char path[GK_PATH_MAX]; /* the first of them ("" if the bytes differ but
                             no field does, or B's state did not write) */
  gk_field_kind kind;     /* its kind, and A's and B's values */
  uint64_t a, b;
} gk_synctest_result;

/* Runs the sync test. sim, cfg (a checked config for sim), opts and res
 * must be non-NULL. Returns 0 when the test ran (res->ok says whether it
 * passed), or GK_EINVAL (bad options), GK_ENOMEM, or the genre's code
 * (create or read_state failed) with a message in err. */
int gk_synctest_run(const gk_sim *sim, const void *cfg,
                    const gk_synctest_opts *opts, gk_synctest_result *res,
                    char *err, size_t errlen);

/* One line describing res: "synctest: ok: N steps, C checkpoints" or
 * "synctest: runs part at step S (B read back after step K): PATH A != B
 * (N fields differ)". snprintf-style. */
size_t gk_synctest_describe(const gk_synctest_result *res, char *buf, size_t n);

#endif
