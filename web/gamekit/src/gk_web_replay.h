/* gk_web_replay.h: a .gkr replay played in a page (replay.js).
 *
 * One gk_web_replay is a replay read with src/replay's reader (its header
 * parsed by the host: gk_replay_open_bytes_with, JavaScript's JSON.parse),
 * the genre's config built by the host through the flattened key calls
 * of src/config/gk_config_kv.h (path "config"), and a gk_loop that runs
 * the recorded inputs, checking every step's hash against the file with
 * gk_replay_run_to, the code gk-replay verify runs, so a verdict and its
 * message are that tool's (gk_replay_judge adds the delay rule and the
 * reader's damage once every readable step matched).
 *
 * Positions: the loop's step count n (0..r.steps), the state after n
 * steps; `gk-replay dump --step S` prints position S + 1.
 *
 * Seeking: two loops run the recorded inputs, the play loop (the
 * position shown: run, seek, state) and the scan loop, which only runs
 * ahead (gk_web_replay_scan, a page calls it in idle time after opening).
 * Whichever first reaches position k * every keeps the canonical state
 * (write_state bytes) there as snapshot k. A seek reads the nearest kept
 * snapshot at or before the target back (read_state, gk_loop_adopt) and
 * runs forward from it, unless the play loop is already between that
 * snapshot and the target: once the scan reached the end, a seek runs at
 * most every - 1 steps. Every step either loop runs is hash-checked; the
 * verdict covers the steps from 0 up to the furthest position reached
 * (`verified`).
 *
 * Desync bundles (gk-server's referee.state and peer.state): the two
 * canonical states are diffed with gk_state_diff (the text gk-replay diff
 * prints, as JSON) and shown as state maps.
 *
 * Ownership: gk_web_replay_new allocates, gk_web_replay_free releases; the
 * replay's bytes are copied at open. Pointers returned (maps, texts) live
 * until the next call that returns one. 0 or negative GK_E* codes; the
 * last failure's message is gk_web_replay_error.
 */
#ifndef GK_WEB_REPLAY_H
#define GK_WEB_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "gk_replay.h"

#define GK_WEB_REPLAY_EVERY 256u /* default steps between snapshots */

typedef struct gk_web_replay gk_web_replay;

gk_web_replay *gk_web_replay_new(void);
void gk_web_replay_free(gk_web_replay *w);

/* Reads `len` bytes (copied) with the header parser `p`. Returns the
 * reader's result (0: complete and valid, else the damage code: the steps
 * before it are still played when the header was read). */
int gk_web_replay_open(gk_web_replay *w, const uint8_t *bytes, size_t len,
                       const gk_replay_parser *p);
/* The reader's state (header fields, steps, damage). */
const gk_replay *gk_web_replay_reader(const gk_web_replay *w);

/* Finds the genre (gk_web_genre), checks it can run the replay
 * (gk_replay_check_sim) and sets its default config. 0 or a code. */
int gk_web_replay_prepare(gk_web_replay *w);
const gk_sim *gk_web_replay_sim(const gk_web_replay *w);
void *gk_web_replay_cfg(gk_web_replay *w);

/* Makes the verdict "cannot run" (status GK_REPLAY_INVALID, code, and
 * gk_replay_run's message: "offset N: what (CODE)"), as gk-replay verify
 * says when the header is damaged, the genre is missing or the config is
 * refused. `what` NULL: the reader's damage, or the last error. prepare
 * and start call it on failure; the host calls it when a config key is
 * refused. No-op once the verdict is final. */
void gk_web_replay_refuse(gk_web_replay *w, int code, const char *what);

/* Starts the run (after the host applied the header's config keys),
 * keeping a snapshot every `every` steps (0: GK_WEB_REPLAY_EVERY). */
int gk_web_replay_start(gk_web_replay *w, uint32_t every);

/* Runs forward to position `until` (at most r.steps), keeping snapshots.
 * Stops after a chunk with the first mismatch. Returns the verdict's
 * status (GK_REPLAY_*) or a negative code. */
int gk_web_replay_run(gk_web_replay *w, uint64_t until);
/* Runs the scan loop `steps` further (not past r.steps), keeping
 * snapshots and extending the verdict; as gk_web_replay_run returns. */
int gk_web_replay_scan(gk_web_replay *w, uint32_t steps);
uint64_t gk_web_replay_scanned(const gk_web_replay *w);
/* Moves to position `to` (0..r.steps) through the kept snapshots. */
int gk_web_replay_seek(gk_web_replay *w, uint64_t to);
/* The loop's position, and the furthest one whose steps all matched. */
uint64_t gk_web_replay_position(const gk_web_replay *w);
uint64_t gk_web_replay_verified(const gk_web_replay *w);
/* Snapshots kept, and the bytes they hold. */
uint32_t gk_web_replay_snapshots(const gk_web_replay *w, uint64_t *bytes);
/* The verdict so far: status GK_REPLAY_OK until a mismatch or, once every
 * readable step ran, gk_replay_judge's. `done` is 1 once it is final. */
const gk_replay_verdict *gk_web_replay_verdict(const gk_web_replay *w,
                                               int *done);

/* The state or HUD sample map at the position (gk_web.h's layout; the
 * hash is the state's, computed: gk_sim_hash). */
const uint8_t *gk_web_replay_state(gk_web_replay *w, int sample, uint32_t *len);
/* The map of canonical state bytes of this replay's genre and config
 * (a desync bundle's .state file). NULL if they do not read back (the
 * reason in gk_web_replay_error). */
const uint8_t *gk_web_replay_state_of(gk_web_replay *w, const uint8_t *bytes,
                                      size_t len, uint32_t *out_len);
/* gk_state_diff of two canonical states as gk_state_diff_json's text
 * (at most `max` fields listed), or NULL (error in gk_web_replay_error). */
const char *gk_web_replay_diff(gk_web_replay *w, const uint8_t *a, size_t alen,
                               const uint8_t *b, size_t blen, uint32_t max);

const char *gk_web_replay_error(const gk_web_replay *w);

#endif
