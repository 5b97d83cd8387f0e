/* pp_xsb.c: fuzz target for the push-puzzle XSB parser and the run built
 * on what it accepts.
 *
 * The input is level text. If gk_pp_set_parse accepts it, the text becomes
 * the `levels` config of a two-player run, which is stepped with inputs
 * taken from the same bytes (so presses, holds, undo and restart all
 * happen), then written, read back and written again: the two snapshots
 * must match. Any crash, hang, leak, sanitizer report or mismatch is a
 * finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_push_puzzle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STEPS 256

static void snapshot_round_trip(const gk_sim *sim, const gk_pp_config *cfg,
                                const void *state) {
  gk_buf_writer a, b;
  gk_buf_writer_init(&a);
  sim->write_state(state, &a.w);
  size_t na = 0, nb = 0;
  uint8_t *ba = gk_buf_writer_take(&a, &na);
  gk_reader r;
  gk_reader_init(&r, ba, na);
  char err[GK_ERRMSG_MAX];
  void *copy = sim->read_state(cfg, &r, err, sizeof err);
  if (copy == NULL) abort(); /* a state the genre wrote must read back */
  gk_buf_writer_init(&b);
  sim->write_state(copy, &b.w);
  uint8_t *bb = gk_buf_writer_take(&b, &nb);
  if (na != nb || memcmp(ba, bb, na) != 0) abort();
  sim->destroy(copy);
  free(ba);
  free(bb);
  gk_buf_writer_close(&a);
  gk_buf_writer_close(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[GK_ERRMSG_MAX];
  gk_pp_set set;
  if (gk_pp_set_parse(&set, (const char *)data, size, "fuzz", 64, 64, err,
                      sizeof err) != 0)
    return 0;
  (void)gk_pp_set_find(&set, "x");
  gk_pp_set_close(&set);

  /* config strings are NUL-terminated: cut at the first NUL */
  char *text = malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const gk_sim *sim = &gk_push_puzzle_sim;
  gk_pp_config cfg;
  sim->config_default(&cfg);
  gk_value lv = {GK_VALUE_STRING, 0, text};
  gk_value lim = {GK_VALUE_INT, 5, NULL};
  if (sim->config_set(&cfg, "levels", &lv, err, sizeof err) == 0 &&
      sim->config_set(&cfg, "undo_limit", &lim, err, sizeof err) == 0) {
    void *run = sim->create(&cfg, 1, 2, err, sizeof err);
    if (run != NULL) {
      uint8_t rec[2 * GK_PP_INPUT_SIZE];
      for (uint64_t s = 0; s < STEPS && size > 0; s++) {
        for (size_t k = 0; k < sizeof rec; k++)
          rec[k] = data[(s * sizeof rec + k) % size];
        gk_step_input in = {s, 3, 0, 2, rec};
        sim->step(run, &in);
        if (s % 64 == 63) snapshot_round_trip(sim, &cfg, run);
      }
      snapshot_round_trip(sim, &cfg, run);
      sim->destroy(run);
    }
  }
  sim->config_free(&cfg);
  free(text);
  return 0;
}
