/* pp_util.h: helpers the push-puzzle tests share.
 *
 * A harness wraps one run driven by direct sim->step calls (the genre's own
 * interface) and records its events; pp_board renders the run's canonical
 * state back into XSB-like rows, so a test states the board it expects as
 * a picture. Pushers print as '@' (or '+' on a goal) when there is one,
 * else as 'a', 'b', ... ('A', 'B', ... on a goal) in slot order.
 */
#ifndef PP_UTIL_H
#define PP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gk_loop.h"
#include "gk_push_puzzle.h"

#define PP_EVENTS_KEPT 256

typedef struct pp_harness {
  gk_pp_config cfg;
  void *state;
  uint32_t players;
  uint64_t step;
  uint32_t nevents;
  gk_event events[PP_EVENTS_KEPT];
} pp_harness;

/* Reads a whole file (test data); aborts the test on failure. Caller frees. */
char *pp_read_file(const char *path, size_t *len);

/* Starts a run on `levels` (NULL: shipped levels) with `players`, advance
 * off unless `advance`. Asserts success. */
void pp_start(pp_harness *h, const char *levels, uint32_t players, int advance);
void pp_stop(pp_harness *h);
/* One step with records for every player (players * 2 bytes). */
void pp_step(pp_harness *h, const uint8_t *records);
/* One step in which player p presses `press` and holds `held`; the other
 * players give no input. */
void pp_press(pp_harness *h, uint32_t p, uint8_t held, uint8_t press);
/* Renders the current board (rows separated by '\n'). Caller frees. */
char *pp_board(const gk_sim *sim, const void *state);
/* HUD sample field by name (UINT64_MAX if absent). */
uint64_t pp_sample(const gk_sim *sim, const void *state, const char *name);
/* Canonical bytes of a state. Caller frees. */
uint8_t *pp_state_bytes(const gk_sim *sim, const void *state, size_t *len);
/* Moves of a LURD string as a gk_pp_moves (asserts it parses). */
void pp_lurd(gk_pp_moves *m, const char *lurd);

#endif
