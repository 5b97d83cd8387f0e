/* replay_reader.c: fuzz target for the .gkr reader (src/replay).
 *
 * Opens the input as a replay, reads every readable step through the
 * block index in order and out of order, and, for a small replay of a
 * genre in this build, verifies it (which parses the header's config
 * through gk_config_from_json and runs the genre on the recorded inputs).
 * Any crash, hang, leak or sanitizer report is a finding. */
#include <stddef.h>
#include <stdint.h>

#include "gk_replay.h"

#define VERIFY_STEPS_MAX 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
      if (gk_replay_step_at(&r, s - 1, &st, NULL) == 0)
        sum += st.active_mask;
    }
    (void)sum;
    if (r.steps <= VERIFY_STEPS_MAX) {
      gk_replay_verdict v;
      gk_replay_verify(&r, NULL, NULL, NULL, &v);
    }
  }
  gk_replay_close(&r);
  return 0;
}
