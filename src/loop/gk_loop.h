/* gk_loop.h: GameLoop, the one place a run is stepped.
 *
 * A gk_loop owns one run of one genre at a time and runs the step order
 * of ADR-0010 / ADR-0004:
 *
 *   for each step the budget owes:
 *     input->read(input, step_index, &in); sim->step(state, &in);
 *     hash the state (kept in a ring); input->end_step(input) if set
 *   input->end_frame(input) once, if any step ran
 *   flush: drain the genre's events to the event listeners
 *   sample: if every_ms has passed on now_ms, or else if the version moved
 *
 * Time and input are arguments; the loop reads no clock. Two budgets:
 *   gk_budget_seconds_ns(ns): the fixed clock. At most 0.25 s is counted per
 *     call, the sub-step remainder is carried to the next call, and after
 *     five steps in one call the whole-step backlog is dropped (the sub-step
 *     remainder is kept). May run 0 steps while time is carried.
 *   gk_budget_steps(n): exactly n steps. No clamp, no cap, no drop. Clears
 *     the carried remainder. Lockstep uses only this budget.
 * Clock arithmetic is integer (nanoseconds against step_seconds as a
 * ratio), so the same sequence of budgets runs the same steps everywhere.
 *
 * Rules for callers, enforced: anywhere inside a frame (a genre's step, an
 * input source's read, end_step or end_frame, an event or sample listener)
 * gk_loop_frame, gk_loop_start, gk_loop_adopt, gk_loop_stop and
 * gk_loop_modify fail with GK_EBUSY and change nothing; the outer frame
 * goes on as if they had not been called. So a step never runs inside
 * another step, and the state a step is working on is never replaced,
 * freed or modified under it. (gk_loop_modify is for callers between
 * frames; a genre changes its own state in step.) State is read through
 * gk_loop_state and changed only through gk_loop_modify, which moves the
 * loop's version (and so causes a sample on the next frame).
 * gk_loop_pause is local: lockstep never uses it for gameplay pause.
 *
 * Memory: init allocates the hash ring and the hasher; start allocates the
 * run (the genre's create). Nothing on the step path allocates unless the
 * genre does. The caller owns the gk_loop struct.
 */
#ifndef GK_LOOP_H
#define GK_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "gk_sim.h"

/* --- step inputs ---------------------------------------------------------
 * Embedded as the first member of a concrete source (libuv style). */
typedef struct gk_input gk_input;
struct gk_input {
  /* Must be non-NULL. Fills *out with the merged input for `step`. Returns
   * 0, or a negative code: the frame then stops before that step (steps
   * already run stay run) and gk_loop_frame returns the count so far, with
   * the code in loop->input_err. */
  int (*read)(gk_input *in, uint64_t step, gk_step_input *out);
  /* May be NULL. Called after each step (consume presses here). */
  void (*end_step)(gk_input *in);
  /* May be NULL. Called once per frame call that ran at least one step. */
  void (*end_frame)(gk_input *in);
  /* May be NULL. Releases the source (for sources that own resources). */
  void (*dispose)(gk_input *in);
};

/* A scripted source: step i reads records[i]; steps past the end read
 * neutral (all-zero) input. The caller owns `records`, an array of
 * `count` merged-input payloads of `players * input_size` bytes each,
 * packed. `active_mask` and `flags` apply to every step, except that
 * `end_flags` (if non-zero) is OR-ed into the last scripted step. */
typedef struct gk_script_input {
  gk_input base; /* must be first */
  const uint8_t *records;
  uint64_t count;
  uint32_t players;
  uint32_t input_size;
  uint32_t active_mask;
  uint32_t end_flags;
  uint8_t neutral[GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX];
} gk_script_input;

void gk_script_input_init(gk_script_input *s, const uint8_t *records,
                          uint64_t count, uint32_t players,
                          uint32_t input_size);

/* A constant source: every step reads the same records (copied in). */
typedef struct gk_const_input {
  gk_input base; /* must be first */
  uint32_t players;
  uint32_t active_mask;
  uint8_t records[GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX];
} gk_const_input;

/* `records` may be NULL for all-neutral input. Returns GK_EINVAL if
 * players * input_size exceeds the record area. */
int gk_const_input_init(gk_const_input *c, const uint8_t *records,
                        uint32_t players, uint32_t input_size);

/* A genre's built-in bots (sim->bot_init, sim->bot_next) as one source:
 * every read asks each bot, in player order, for its record for the next
 * step, and produces the records as one merged input with every player
 * active (flags 0). Reads must come in step order, once per step. Plain
 * data (about 4.5 KiB): the caller owns the struct; no dispose. */
#define GK_BOT_SIZE_MAX 256 /* largest sim->bot_size a gk_bot_input holds */
typedef struct gk_bot_input {
  gk_input base; /* must be first */
  const gk_sim *sim;
  uint32_t players; /* bots, and records per read */
  uint32_t active_mask;
  uint8_t records[GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX];
  max_align_t bots[GK_PLAYERS_MAX][GK_BOT_SIZE_MAX / sizeof(max_align_t)];
} gk_bot_input;

/* Every player's bot, for a run of `players` players: player p is seeded
 * with the p-th gk_splitmix64 output from `seed` (how gk-replay record,
 * the golden replays and the determinism probe seed them). `cfg` is the
 * run's config, read during the call only. Returns GK_EINVAL (and changes
 * nothing) if b or sim is NULL, the genre has no bot or a bot larger than
 * GK_BOT_SIZE_MAX, or players is not 1..GK_PLAYERS_MAX. */
int gk_bot_input_init(gk_bot_input *b, const gk_sim *sim, const void *cfg,
                      uint64_t seed, uint32_t players);

/* One player's bot as a one-player source (players 1, active mask 1), for
 * a peer that sends only its own input: the bot of slot `player`, seeded
 * with `seed` as given. Errors as gk_bot_input_init. */
int gk_bot_input_init_one(gk_bot_input *b, const gk_sim *sim, const void *cfg,
                          uint64_t seed, uint32_t player);

/* --- budgets ------------------------------------------------------------ */
typedef enum gk_budget_kind {
  GK_BUDGET_SECONDS,
  GK_BUDGET_STEPS
} gk_budget_kind;
typedef struct gk_budget {
  gk_budget_kind kind;
  uint64_t amount; /* nanoseconds for SECONDS, steps for STEPS */
} gk_budget;

static inline gk_budget gk_budget_steps(uint64_t steps) {
  gk_budget b = {GK_BUDGET_STEPS, steps};
  return b;
}
static inline gk_budget gk_budget_seconds_ns(uint64_t ns) {
  gk_budget b = {GK_BUDGET_SECONDS, ns};
  return b;
}

#define GK_LOOP_MAX_COUNTED_NS 250000000ull /* 0.25 s */
#define GK_LOOP_MAX_CATCHUP 5
#define GK_LOOP_LISTENERS_MAX 8

/* --- listeners ---------------------------------------------------------- */
typedef struct gk_loop gk_loop;
/* Called once per event during the flush. */
typedef void (*gk_loop_event_cb)(void *ctx, gk_loop *loop, const gk_event *ev);
/* Called when a sample is due; write it with gk_loop_write_sample. */
typedef void (*gk_loop_sample_cb)(void *ctx, gk_loop *loop, uint64_t now_ms);

typedef struct gk_loop_options {
  uint32_t hash_ring; /* how many recent step hashes to keep; 0 -> 256 */
} gk_loop_options;

struct gk_loop {
  /* read-only for callers */
  const gk_sim *sim;  /* NULL when no run */
  void *state;        /* the run's state, owned by the loop */
  uint64_t steps;     /* steps run in this run; the next step's index */
  uint64_t last_hash; /* hash after the last step (0 before any step) */
  uint64_t version;   /* moves on every modify and start */
  int input_err;      /* last error a source's read returned, else 0 */
  int paused;
  /* private */
  uint32_t players;
  uint64_t carry; /* fixed clock remainder, ns * step_seconds.den */
  int delivering; /* listeners are being called */
  int in_frame;   /* inside gk_loop_frame, from first read to sample */
  uint64_t *ring;
  uint32_t ring_cap;
  uint64_t ring_from; /* first step whose hash this run computed */
  uint32_t ring_at;   /* steps % ring_cap, kept so a step divides nothing */
  gk_hasher *hasher;
  int sampled;             /* a sample was taken in this run */
  uint64_t sample_ms;      /* now_ms of the last sample */
  uint64_t sample_version; /* loop version + sim version at the last sample */
  uint64_t sample_sim_version;
  struct {
    gk_loop_event_cb cb;
    void *ctx;
  } on_event[GK_LOOP_LISTENERS_MAX];
  struct {
    gk_loop_sample_cb cb;
    void *ctx;
  } on_sample[GK_LOOP_LISTENERS_MAX];
  uint32_t n_event, n_sample;
};

int gk_loop_init(gk_loop *loop, const gk_loop_options *opts /* may be NULL */);
/* Frees the run (if any), the ring and the hasher. */
void gk_loop_close(gk_loop *loop);

/* Starts a run, replacing (and freeing) the previous one. The genre copies
 * what it needs from cfg. On failure the previous run is kept, unchanged,
 * and a message is written. GK_EBUSY inside a frame. */
int gk_loop_start(gk_loop *loop, const gk_sim *sim, const void *cfg,
                  uint64_t seed, uint32_t players, char *err, size_t errlen);
/* Adopts a state built elsewhere (e.g. sim->read_state), with the step
 * index it was taken after, replacing the previous run. The loop owns
 * `state` from now on, also on failure. GK_EBUSY inside a frame. */
int gk_loop_adopt(gk_loop *loop, const gk_sim *sim, void *state,
                  uint32_t players, uint64_t steps);
/* Ends the run and frees it. No-op without a run. GK_EBUSY inside a
 * frame. */
int gk_loop_stop(gk_loop *loop);

/* Runs the step order. Returns the number of steps run (>= 0), or
 * GK_EBUSY (called from inside a frame: a step, a source, a listener),
 * GK_EINVAL (NULL input) or GK_ERANGE (a { steps } budget above INT_MAX,
 * which the int result could not report). Without a run, or while paused,
 * runs no step and returns 0 (flush and sample still happen while
 * paused). */
int gk_loop_frame(gk_loop *loop, gk_input *input, gk_budget budget,
                  uint64_t now_ms);

void gk_loop_pause(gk_loop *loop);
void gk_loop_resume(gk_loop *loop);

/* The only way to change run state from outside: calls fn(state, ctx) and
 * moves the version. Returns fn's result, GK_ENORUN or GK_EBUSY (inside a
 * frame: fn is not called and the version does not move). */
int gk_loop_modify(gk_loop *loop, int (*fn)(void *state, void *ctx), void *ctx);

/* Replaces the run's state object with `state`, a state of the same genre
 * and run built from the current one between frames (e.g. read_state of
 * patched canonical bytes, see gk_state_patch_add): the step count, the
 * hash ring and the last hash are kept, the version moves as for modify.
 * The loop owns `state` from now on, also on GK_EBUSY (inside a frame: it
 * is destroyed); on GK_ENORUN (no run) the caller keeps it; GK_EINVAL for
 * NULL. */
int gk_loop_replace(gk_loop *loop, void *state);

/* Read-only view of the run state (NULL without a run). */
const void *gk_loop_state(const gk_loop *loop);

/* Hash after step `step` (0-based: the hash after the first step is step
 * 0). GK_ENOTKEPT if it fell out of the ring or has not run yet. */
int gk_loop_hash_at(const gk_loop *loop, uint64_t step, uint64_t *hash);

/* Listeners: up to GK_LOOP_LISTENERS_MAX each; GK_EFULL beyond. */
int gk_loop_on_event(gk_loop *loop, gk_loop_event_cb cb, void *ctx);
int gk_loop_on_sample(gk_loop *loop, gk_loop_sample_cb cb, void *ctx);

/* Writes the current HUD sample (sim->write_sample) to w. */
void gk_loop_write_sample(const gk_loop *loop, gk_writer *w);

#endif
