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
/* A cut-short footer adds: flags (u32), code (i32), offset (u64),
 * dropped (u64), reason length (u32), then the reason's bytes. */
#define FOOTER_CUT_HEAD (FOOTER_SIZE + 28)
#define FOOTER_MAX (FOOTER_CUT_HEAD + GK_REPLAY_MSG_MAX - 1)
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

/* The header text's strict JSON check (gk_replay_json.c), run before any
 * parser reads it so cJSON and JSON.parse read one same document: 0, or a
 * GK_E* code with the offset and what was expected there (a static
 * text). Nesting deeper than DEPTH_MAX (containers) and numbers longer
 * than NUMBER_MAX characters are refused. */
#define GK__REPLAY_JSON_DEPTH_MAX 8
#define GK__REPLAY_JSON_NUMBER_MAX 32
#define GK__REPLAY_STR_(x) #x
#define GK__REPLAY_STR(x) GK__REPLAY_STR_(x)
int gk__replay_json_check(const uint8_t *text, size_t len, uint64_t *at,
                          const char **what);

/* gk_replay_open_file with the header parsed by `p` (gk_replay_read.c). */
int gk__replay_open_file_with(gk_replay *r, const char *path,
                              const gk_replay_parser *p);

/* Fills a block's header and checksum around the `payload` bytes at
 * buf + 12 (buf has room for 12 + payload + 8 bytes). */
void gk__replay_seal(uint8_t *buf, uint8_t type, uint32_t seq, size_t payload);
/* Writes a footer payload (16 bytes, or the cut-short form when `cut` is
 * non-NULL) at `payload` (room for FOOTER_MAX bytes); returns its length. */
size_t gk__replay_footer(uint8_t *payload, uint64_t steps, uint64_t hash,
                         const gk_replay_cut *cut);
/* write(2) until done; returns 0 or the errno that stopped it. */
int gk__replay_write_all(int fd, const uint8_t *bytes, size_t len);
/* fsyncs the folder holding `path` (a rename in it survives a crash). */
void gk__replay_sync_dir(const char *path);

#endif
