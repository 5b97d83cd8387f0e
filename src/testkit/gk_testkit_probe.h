/* gk_testkit_probe.h: the test kit's checks that need no network: the
 * determinism probe and the sync test. Core only (libc + gamekit-core), so
 * a probe builds with any C11 compiler for any CPU.
 *
 * The determinism probe runs a genre's built-in bots from a fixed seed and
 * folds every step hash into a chain: chain = XXH3-64(LE64(chain) ||
 * LE64(hash)), starting at 0. Print it on two compilers, two CPUs or two
 * optimisation levels and compare the lines: equal chains mean every step
 * of the run hashed the same; with `every` set, the per-step lines say
 * where two runs parted. (tests/determinism/gk_chain.c, which the
 * project's compiler and CPU matrix runs, folds hashes the same way.)
 *
 * The sync test checks that a genre's write_state and read_state carry
 * everything that affects the future: it runs the bots to `at_step`,
 * writes the state, reads it back into a second run, then steps both with
 * the same inputs and compares the hashes step by step, reporting the
 * first step where they part. It also checks that the state read back
 * writes the very same bytes (and so hashes the same) before any step.
 *
 * Both return 0 or a GK_E* code with a sentence, so any test framework (or
 * none) can report the failure.
 */
#ifndef GK_TESTKIT_PROBE_H
#define GK_TESTKIT_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gk_sim.h"

/* A hash chain: the digest of every step hash folded in order. */
typedef struct gk_testkit_chain {
  uint64_t digest;
  uint64_t steps;
  uint64_t final_hash; /* the hash after the last step */
} gk_testkit_chain;

/* Folds one step hash into c (c must be non-NULL; start from {0}). */
void gk_testkit_chain_add(gk_testkit_chain *c, uint64_t hash);

/* Runs `players` bots of sim (must be non-NULL, with a bot) from `seed`
 * for `steps` steps, the bots seeded as gk_bot_input_init seeds them. cfg
 * may be NULL (the genre's defaults). Prints to out (may be NULL) one line
 *   probe <genre> v<version> players=P seed=S steps=N final=H chain=C
 * and, if every > 0, before it one line "step N hash H chain C" every
 * `every` steps. *chain (may be NULL) gets the result. Returns 0, or
 * GK_EINVAL (no bot, bad player count), GK_ENOMEM, or the code with which
 * the run failed, with a message in err (may be NULL). */
int gk_testkit_probe(const gk_sim *sim, const void *cfg, uint64_t seed,
                     uint32_t players, uint64_t steps, uint64_t every,
                     FILE *out, gk_testkit_chain *chain, char *err,
                     size_t errlen);

/* The outcome of a sync test. */
typedef struct gk_testkit_sync_result {
  uint64_t steps_compared;  /* steps run by both runs after at_step */
  int parted;               /* 1 if the runs parted */
  uint64_t parted_at;       /* the first step whose hashes differ */
  uint64_t hash, hash_read; /* the straight run's and the read-back run's */
  size_t state_bytes;       /* size of the state written at at_step */
} gk_testkit_sync_result;

/* The sync test (see above): bots of `players` players from `seed`, the
 * state written after `at_step` steps (0: before the first step), both
 * runs continued for `steps` more. cfg may be NULL (defaults); res (may
 * be NULL) gets the details. Returns 0 if read_state rebuilt a state that
 * writes the same bytes and the two runs agreed at every step; GK_EMISMATCH
 * with the first difference (bytes or step) in err; or another code if a
 * run could not be made (e.g. read_state refused its own bytes). */
int gk_testkit_sync(const gk_sim *sim, const void *cfg, uint64_t seed,
                    uint32_t players, uint64_t at_step, uint64_t steps,
                    gk_testkit_sync_result *res, char *err, size_t errlen);

#endif
