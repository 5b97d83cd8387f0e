/* replay_reader.c: fuzz target for the .gkr reader (src/replay).
 *
 * Opens the input as a replay, reads every readable step through the
 * block index in order and out of order, and, for a small replay of a
 * genre in this build, verifies it (which parses the header's config
 * through gk_config_from_json and runs the genre on the recorded inputs).
 * Every input is tried twice: as it is, and with every block's checksum
 * recomputed (as a forger would), so that mutations reach the header JSON,
 * the config mapping, the step checks and the genres instead of stopping
 * at the first checksum. Any crash, hang, leak or sanitizer report is a
 * finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay.h"

#define VERIFY_STEPS_MAX 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Recomputes each block's XXH3-64 in place, as far as the lengths allow. */
static void resign(uint8_t *b, size_t len) {
  size_t pos = GK_REPLAY_PREAMBLE_SIZE;
  while (pos <= len && len - pos >= GK_REPLAY_BLOCK_OVERHEAD) {
    uint32_t plen = (uint32_t)b[pos + 8] | (uint32_t)b[pos + 9] << 8 |
                    (uint32_t)b[pos + 10] << 16 | (uint32_t)b[pos + 11] << 24;
    if ((uint64_t)plen > len - pos - GK_REPLAY_BLOCK_OVERHEAD) return;
    uint64_t h = gk_hash_bytes(b + pos, 12 + (size_t)plen);
    for (int i = 0; i < 8; i++)
      b[pos + 12 + plen + (size_t)i] = (uint8_t)(h >> (8 * i));
    pos += GK_REPLAY_BLOCK_OVERHEAD + (size_t)plen;
  }
}

static void exercise(const uint8_t *data, size_t size) {
  gk_replay r;
  gk_replay_open_bytes(&r, data, size);
  if (r.header_ok) {
    size_t hint = 0;
    uint64_t sum = 0;
    for (uint64_t s = 0; s < r.steps; s++) {
      gk_replay_step st;
      if (gk_replay_step_at(&r, s, &st, &hint) == 0)
        sum += st.hash + st.inputs[r.players * r.input_size - 1];
    }
    for (uint64_t s = r.steps; s > 0; s /= 2) {
      gk_replay_step st;
      if (gk_replay_step_at(&r, s - 1, &st, NULL) == 0) sum += st.active_mask;
    }
    (void)sum;
    if (r.steps <= VERIFY_STEPS_MAX) {
      gk_replay_verdict v;
      gk_replay_verify(&r, NULL, NULL, NULL, &v);
    }
  }
  gk_replay_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  exercise(data, size);
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  memcpy(copy, data, size);
  resign(copy, size);
  if (memcmp(copy, data, size) != 0) exercise(copy, size);
  free(copy);
  return 0;
}
