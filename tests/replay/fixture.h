/* fixture.h: helpers shared by the replay tests. */
#ifndef REPLAY_FIXTURE_H
#define REPLAY_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "tiny_sim.h"

/* Records `steps` steps of the tiny genre driven by its bots (player 1 of
 * 2+ is inactive on every 5th step) through a real gk_loop, into a memory
 * replay with `block_steps` steps per block. If `tamper_step` < steps, that
 * step's recorded input is changed after the hash was computed from the
 * real one. Returns malloc'd bytes (free()) and their length; aborts the
 * test on failure. */
uint8_t *fixture_tiny_replay(uint32_t players, uint64_t steps,
                             uint32_t block_steps, uint64_t seed,
                             uint64_t tamper_step, size_t *len);

/* Writes bytes to a file; returns 0 or -1. */
int fixture_write_file(const char *path, const void *bytes, size_t len);

/* Reads a whole file into malloc'd bytes (free()); aborts the test if it
 * cannot. */
uint8_t *fixture_read_file(const char *path, size_t *len);

/* The offset of block `seq` (0: the header block) of a replay, found by
 * walking the block lengths; aborts the test if there is no such block. */
size_t fixture_block_at(const uint8_t *bytes, size_t len, uint32_t seq);

/* Recomputes the XXH3-64 checksum of the block at `off` after its payload
 * was changed, so the block is internally consistent (as a forger would
 * make it) and only the reader's content checks can catch the change. */
void fixture_resign_block(uint8_t *bytes, size_t len, size_t off);

/* Little-endian u64 at p, and the reverse. */
uint64_t fixture_get_u64(const uint8_t *p);
void fixture_put_u64(uint8_t *p, uint64_t v);

/* A fresh directory under /tmp for this test; returned string is static
 * per call site (caller copies). */
void fixture_tmpdir(char *out, size_t outlen);

#endif
