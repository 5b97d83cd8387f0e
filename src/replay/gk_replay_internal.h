/* gk_replay_internal.h: what the .gkr writer, reader and verifier share
 * (src/replay/gk_replay_write.c, gk_replay_read.c, gk_replay_run.c): the
 * byte layout of tools/replay/FORMAT.md. Not for use outside src/replay.
 */
#ifndef GK_REPLAY_INTERNAL_H
#define GK_REPLAY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gk_replay.h"

/* The 8 magic bytes that open a file (PNG-style). */
#define GK__REPLAY_MAGIC "\x89GKR\r\n\x1a\n"

#define BLOCK_HEAD 12  /* type, 0, 0 (u16), seq (u32), length (u32) */
#define STEPS_HEAD 16  /* first step (u64), count (u32), entry size (u32) */
#define ENTRY_HEAD 16  /* hash (u64), active mask (u32), flags (u32) */
#define FOOTER_SIZE 16 /* step count (u64), final hash (u64) */
#define KNOWN_FLAGS                                                            \
  ((uint32_t)(GK_STEP_MATCH_END | GK_STEP_DELAY | GK_STEP_DELAY_MASK))

/* True if every record of an inactive player is all zero. */
static inline int gk__replay_inactive_zero(const uint8_t *records,
                                           uint32_t players,
                                           uint32_t input_size, uint32_t mask) {
  for (uint32_t p = 0; p < players; p++) {
    if (mask & ((uint32_t)1 << p)) continue;
    const uint8_t *rec = records + (size_t)p * input_size;
    for (uint32_t i = 0; i < input_size; i++)
      if (rec[i] != 0) return 0;
  }
  return 1;
}

#endif
