/* sv_config.c: fuzz target for the survivors genre's outside inputs: config
 * keys and values, snapshot bytes (read_state), and per-step input records.
 *
 * Layout of one input (every part may be cut short):
 *   byte 0          number of config operations (low 4 bits)
 *   10 bytes each   key selector (past the last key: an unknown key), value
 *                   type, 8-byte little-endian value, applied with
 *                   config_set
 *   1 byte          player count selector; bit 7 picks the mode:
 *   mode 0 (run)    create a run, step it on the remaining bytes as input
 *                   records (at most MAX_STEPS steps) with a fuzzed
 *                   active_mask, then snapshot it: the snapshot must read
 *                   back and write out to the same bytes (aborts if not)
 *   mode 1 (read)   read_state over the remaining bytes; an accepted state
 *                   must step and snapshot safely
 * Any crash, hang, leak, sanitizer report or abort is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_survivors.h"

#define MAX_STEPS 120
#define MAX_KEYS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct keys {
  const char *name[MAX_KEYS];
  unsigned n;
} keys;

static void collect(void *ctx, const char *key, const gk_value *v) {
  keys *k = ctx;
  (void)v;
  if (k->n < MAX_KEYS) k->name[k->n++] = key;
}

static uint8_t *snapshot(const void *state, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  gk_survivors_sim.write_state(state, &b.w);
  uint8_t *bytes = gk_buf_writer_take(&b, len);
  gk_buf_writer_close(&b);
  return bytes;
}

static void drop(void *ctx, const gk_event *ev) {
  (void)ctx;
  (void)ev;
}

/* Steps `state` on records taken from data (neutral when it runs out). */
static void run_steps(void *state, uint32_t players, uint32_t mask,
                      const uint8_t *data, size_t size, unsigned steps) {
  uint8_t rec[GK_SV_PLAYERS_MAX * GK_SV_INPUT_SIZE];
  size_t per = (size_t)players * GK_SV_INPUT_SIZE, pos = 0;
  for (unsigned st = 0; st < steps; st++) {
    memset(rec, 0, sizeof rec);
    if (pos < size) {
      size_t n = size - pos < per ? size - pos : per;
      memcpy(rec, data + pos, n);
      pos += n;
    }
    gk_step_input in = {st, mask, 0, players, rec};
    gk_survivors_sim.step(state, &in);
    gk_survivors_sim.drain_events(state, drop, NULL);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gk_sv_config cfg;
  gk_survivors_sim.config_default(&cfg);
  keys k = {{0}, 0};
  gk_survivors_sim.config_each(&cfg, collect, &k);
  size_t pos = 0;
  unsigned ops = size > 0 ? data[pos++] & 15u : 0;
  char err[GK_ERRMSG_MAX];
  for (unsigned i = 0; i < ops && size - pos >= 10; i++, pos += 10) {
    unsigned sel = data[pos] % (k.n + 1);
    gk_value v;
    v.type = (gk_value_type)(data[pos + 1] % 3);
    uint64_t raw = 0;
    for (int b = 0; b < 8; b++)
      raw |= (uint64_t)data[pos + 2 + (size_t)b] << (8 * b);
    v.i = (int64_t)raw;
    v.s = "x";
    gk_survivors_sim.config_set(&cfg, sel < k.n ? k.name[sel] : "no_such_key",
                                &v, err, sizeof err);
  }
  if (pos >= size) return 0;
  uint8_t sel = data[pos++];
  uint32_t players = 1u + (sel & 7u);
  const uint8_t *rest = data + pos;
  size_t left = size - pos;

  if ((sel & 0x80) == 0) {
    void *s = gk_survivors_sim.create(&cfg, 7, players, err, sizeof err);
    if (s == NULL) return 0;
    uint32_t mask = left > 0 ? rest[0] | 1u : 0xFFu;
    unsigned steps = (unsigned)(left / (players * GK_SV_INPUT_SIZE)) + 10;
    run_steps(s, players, mask, rest, left,
              steps > MAX_STEPS ? MAX_STEPS : steps);
    size_t len = 0, len2 = 0;
    uint8_t *bytes = snapshot(s, &len);
    gk_reader r;
    gk_reader_init(&r, bytes, len);
    void *t = gk_survivors_sim.read_state(&cfg, &r, err, sizeof err);
    if (t == NULL || gk_reader_left(&r) != 0)
      abort(); /* a state the run reached must read back */
    uint8_t *bytes2 = snapshot(t, &len2);
    if (len2 != len || memcmp(bytes, bytes2, len) != 0) abort();
    free(bytes);
    free(bytes2);
    gk_survivors_sim.destroy(t);
    gk_survivors_sim.destroy(s);
  } else {
    gk_reader r;
    gk_reader_init(&r, rest, left);
    void *t = gk_survivors_sim.read_state(&cfg, &r, err, sizeof err);
    if (t == NULL) return 0;
    run_steps(t, GK_SV_PLAYERS_MAX, 0xFFu, NULL, 0, 30);
    size_t len = 0;
    free(snapshot(t, &len));
    gk_survivors_sim.destroy(t);
  }
  return 0;
}
