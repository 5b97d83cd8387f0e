/* gk_sim.h: the simulation contract (the C form of GameSimulation).
 *
 * A genre exports one constant gk_sim descriptor. Everything the loop, the
 * replay tool, the lockstep host and the server know about a game goes
 * through it, so a genre can be run by a test, a tool or a server exactly
 * the same way. The descriptor is versioned (`abi`) like ioquake3's game
 * interface: a loader refuses a descriptor whose abi it does not know.
 * ABI 2 appended `late_join`, ABI 3 `prediction` and `bot_answer`, ABI 4
 * `copy_state`; a genre library built for ABI 1, 2 or 3 still loads
 * (src/genre_load copies its descriptor into an ABI 4 one with the new
 * members zero or NULL: it takes no players after the start, predicts
 * nothing, its bots answer nothing at once, and a state is copied
 * through its canonical bytes).
 *
 * Time: a genre counts steps. `step_seconds` is metadata for whoever drives
 * the loop by wall-clock time; no simulation code reads it.
 *
 * Input: each step the genre receives one gk_step_input: the step index,
 * which players are active, system flags, and `players` fixed-size input
 * records packed back to back (`input_size` bytes each). An inactive
 * player's record is all zero bytes ("neutral"), and every genre must treat
 * an all-zero record as "no input".
 *
 * Config: a genre's config is a plain struct of `config_size` bytes, filled
 * by `config_default` and then changed one key at a time through
 * `config_set` with a gk_value, so that JSON (server configs, replay
 * headers) can be mapped onto it outside the core, which links only libc.
 * `config_each` enumerates every key with its current value, so a config
 * can be written back out (replay headers) and read in again to the same
 * struct.
 *
 * Ownership: the descriptor is static. A state is created by `create` and
 * freed by `destroy`. Configs are owned by the caller; `create` copies what
 * it needs and keeps no pointer into the config.
 */
#ifndef GK_SIM_H
#define GK_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "gk_err.h"
#include "gk_state.h"

/* GK_SIM_ABI 2: `late_join`; 3: `prediction`, `bot_answer`; 4: `copy_state` */
#define GK_SIM_ABI 4
#define GK_SIM_ABI_MIN 1     /* the oldest abi a loader still accepts */
#define GK_PLAYERS_MAX 16    /* active_mask is a uint32_t; 16 keeps headroom */
#define GK_INPUT_SIZE_MAX 32 /* largest per-player input record, bytes */
#define GK_ERRMSG_MAX 256    /* suggested size of error message buffers */

/* A rational number of seconds, e.g. {1, 60}. */
typedef struct gk_ratio {
  uint32_t num;
  uint32_t den;
} gk_ratio;

/* System flags carried in a step's merged input. */
enum {
  GK_STEP_MATCH_END = 1u << 0, /* the match ends after this step */
  GK_STEP_DELAY = 1u << 1,     /* an input delay change is announced here;
                                  the new delay is in bits 8..15 (see
                                  docs/PROTOCOL.md, "Input delay") */
};
#define GK_STEP_DELAY_SHIFT 8
#define GK_STEP_DELAY_MASK (0xffu << GK_STEP_DELAY_SHIFT)
/* The new delay a GK_STEP_DELAY step announces (0 if it announces none). */
#define GK_STEP_DELAY_OF(flags)                                                \
  (((flags)&GK_STEP_DELAY)                                                     \
       ? ((flags)&GK_STEP_DELAY_MASK) >> GK_STEP_DELAY_SHIFT                   \
       : 0u)

/* 1 when `flags` holds only known GK_STEP_* bits, and a delay value exactly
 * when GK_STEP_DELAY is set (and then 1..255). */
static inline int gk_step_flags_valid(uint32_t flags) {
  uint32_t known = GK_STEP_MATCH_END | GK_STEP_DELAY | GK_STEP_DELAY_MASK;
  if ((flags & ~known) != 0) return 0;
  return ((flags & GK_STEP_DELAY) != 0) == ((flags & GK_STEP_DELAY_MASK) != 0);
}

/* One step's merged input. `inputs` holds `players` records of the genre's
 * `input_size` bytes; it is owned by the input source and valid until the
 * source's end_step (or the next read). */
typedef struct gk_step_input {
  uint64_t step;        /* the step this input is for (0 = first step) */
  uint32_t active_mask; /* bit i set: player i is in the match */
  uint32_t flags;       /* GK_STEP_* */
  uint32_t players;     /* number of records in `inputs` */
  const uint8_t *inputs;
} gk_step_input;

/* The active mask of a match of `players` players: bits 0..players-1 set
 * (UINT32_MAX from 32 players up). */
static inline uint32_t gk_all_players(uint32_t players) {
  return players >= 32 ? UINT32_MAX : ((uint32_t)1 << players) - 1u;
}

/* A config value. Strings are NUL-terminated and owned by the caller for
 * the duration of the call; `config_set` copies what it keeps. */
typedef enum gk_value_type {
  GK_VALUE_INT,
  GK_VALUE_BOOL,
  GK_VALUE_STRING
} gk_value_type;

typedef struct gk_value {
  gk_value_type type;
  int64_t i;     /* INT and BOOL (0/1) */
  const char *s; /* STRING */
} gk_value;

/* An event the genre reports (level_solved, enemy_killed, ...). `name` and
 * field keys are static strings. Events are outputs: they are not part of
 * the canonical state and never feed back into the simulation. */
#define GK_EVENT_FIELDS_MAX 6
typedef struct gk_event {
  const char *name;
  uint64_t step;  /* the step during which it happened */
  int32_t player; /* player slot, or -1 */
  uint32_t nfields;
  struct {
    const char *key;
    int64_t value;
  } fields[GK_EVENT_FIELDS_MAX];
} gk_event;

typedef void (*gk_event_cb)(void *ctx, const gk_event *ev);

/* A genre's event queue has a fixed capacity; a drain after it overflowed
 * ends with this: "events_dropped" {count} at `step`, player -1, delivered
 * to cb if count is non-zero. */
void gk_event_report_dropped(gk_event_cb cb, void *ctx, uint64_t step,
                             uint64_t count);
typedef void (*gk_config_each_cb)(void *ctx, const char *key,
                                  const gk_value *value);

/* --- tool extras -----------------------------------------------------------
 * What a tool (gk-replay) may offer for one genre beyond the common
 * contract, so that tools name no genre. Optional: gk_sim.tool may be
 * NULL, and so may each member below. */
#define GK_SIM_TOOL_OPTS_MAX 4

/* The tool's file reader, lent to the genre (the core does no I/O): reads
 * the whole text file `path`, at most `max` bytes (0: the tool's own
 * limit), into a NUL-terminated buffer that the caller frees with free().
 * Returns NULL with a message in msg. */
typedef char *(*gk_read_text_fn)(void *ctx, const char *path, size_t max,
                                 size_t *len, char *msg, size_t msglen);

/* A recording built by gk_sim_tool.record_script. */
typedef struct gk_sim_script {
  /* `count` merged inputs of players * input_size bytes each, packed, for
   * gk_script_input; allocated with malloc, freed by the caller. */
  uint8_t *records;
  uint64_t count;
  char origin[512]; /* how it was made, for the replay header's "origin" */
} gk_sim_script;

typedef struct gk_sim_tool {
  /* May be NULL. A sentence appended to the paragraph of `gk-replay info
   * --help` about the HUD sample: it starts with a space and its lines
   * (broken with \n, none at the end) fit in 72 columns. */
  const char *sample_help;

  /* --- recording from a genre-specific source (gk-replay record) ---
   * e.g. a level and its published solution, instead of the genre's bots.
   * All of record_opts, record_usage, record_help and record_script are
   * set, or none is. */
  /* Option names ("--level"), NULL-terminated, at most
   * GK_SIM_TOOL_OPTS_MAX. Each takes a value; all are required. */
  const char *record_opts[GK_SIM_TOOL_OPTS_MAX + 1];
  /* The synopsis after "gk-replay record " (from "--genre NAME"), lines
   * ending in \n, continuation lines indented to column 24. */
  const char *record_usage;
  /* A help paragraph, lines ending in \n, at most 72 columns. */
  const char *record_help;
  /* Applies the source to cfg (a config already filled: defaults or a
   * config file) and builds the step inputs of a run of `players` players
   * into *out. values[i] is the value given for record_opts[i] (non-NULL).
   * Files are read only through read_text(read_ctx, ...). Returns 0, or a
   * code with a message in err naming the option first ("--level: ...";
   * err may be left "" for out of memory); *out then holds nothing to
   * free. */
  int (*record_script)(void *cfg, const char *const *values, uint32_t players,
                       gk_read_text_fn read_text, void *read_ctx,
                       gk_sim_script *out, char *err, size_t errlen);
} gk_sim_tool;

typedef struct gk_sim {
  uint32_t abi;          /* GK_SIM_ABI */
  const char *name;      /* must be non-NULL: "push-puzzle", "survivors" */
  uint32_t version;      /* bump when hashes for the same inputs change */
  gk_ratio step_seconds; /* e.g. {1, 60}; num and den must be non-zero */
  uint32_t input_size;   /* bytes per player record, 1..GK_INPUT_SIZE_MAX */
  uint32_t players_min;  /* 1.. */
  uint32_t players_max;  /* ..GK_PLAYERS_MAX */

  /* --- config --- */
  size_t config_size;
  /* Must be non-NULL. Fills a config struct with the defaults, which must
   * make a playable run without any options. Allocates nothing. */
  void (*config_default)(void *cfg);
  /* Must be non-NULL. Sets one key. Unknown key, wrong type or a value out
   * of range: returns GK_ENOTFOUND / GK_EINVAL / GK_ERANGE and writes a
   * message naming the key and the reason into err (errlen bytes). */
  int (*config_set)(void *cfg, const char *key, const gk_value *v, char *err,
                    size_t errlen);
  /* Must be non-NULL. Calls cb once per key, in a fixed order. */
  void (*config_each)(const void *cfg, gk_config_each_cb cb, void *ctx);
  /* May be NULL. Releases anything config_set allocated (e.g. strings). */
  void (*config_free)(void *cfg);

  /* --- run --- */
  /* Must be non-NULL. Creates a run. Returns NULL and writes a message on a
   * bad config or player count (or ENOMEM). */
  void *(*create)(const void *cfg, uint64_t seed, uint32_t players, char *err,
                  size_t errlen);
  /* Must be non-NULL. Frees a state from create or read_state. NULL is ok. */
  void (*destroy)(void *state);
  /* Must be non-NULL. Advances one step. `in->players` equals the run's
   * player count and `in->inputs` holds that many records. */
  void (*step)(void *state, const gk_step_input *in);
  /* May be NULL (no events). Delivers and forgets every event queued since
   * the last drain, in the order they happened. */
  void (*drain_events)(void *state, gk_event_cb cb, void *ctx);
  /* True once the run has ended (game over). May be NULL (never ends). */
  int (*is_over)(const void *state);

  /* --- samples (the HUD) --- */
  uint32_t every_ms; /* sample at least this often on now_ms; 0 = only on
                        version movement */
  /* May be NULL. A counter that moves whenever the HUD should refresh.
   * (Named apart from `version`, the genre's version number.) */
  uint64_t (*sample_version)(const void *state);
  /* Must be non-NULL. Writes the HUD sample as named fields. */
  void (*write_sample)(const void *state, gk_writer *w);

  /* --- canonical state --- */
  /* Must be non-NULL. Writes everything that affects the future, in a fixed
   * order, fixed width, little-endian. */
  void (*write_state)(const void *state, gk_writer *w);
  /* Must be non-NULL. Rebuilds a state from write_state's bytes, given the
   * config the run was created with. Returns NULL and writes a message on
   * bad bytes; must not trust any count or index it reads. */
  void *(*read_state)(const void *cfg, gk_reader *r, char *err, size_t errlen);

  /* --- built-in bot --- */
  /* Size of a bot's state (plain data, <= 256). 0 if the genre has none.
   * Callers provide bot memory aligned for any type (malloc, or an array
   * of uint64_t / max_align_t). */
  size_t bot_size;
  /* May be NULL (iff bot_size is 0). Seeds one player's bot. */
  void (*bot_init)(void *bot, const void *cfg, uint64_t seed, uint32_t player);
  /* May be NULL (iff bot_size is 0). Produces the player's input record for
   * the next step (input_size bytes). Called exactly once per step, in step
   * order, so presses it makes reach exactly one step. */
  void (*bot_next)(void *bot, uint8_t *record);

  /* --- tools --- */
  /* May be NULL. Help text and recording sources for tools (see above). */
  const gk_sim_tool *tool;

  /* --- ABI 2 (members below are zero in a descriptor the loader took
   * from an ABI 1 library) --- */
  /* 1: the genre accepts players after the start (late join);
   * 0: it does not (the default). A genre that says 1 must treat a slot
   * whose active bit is clear at the first step as not yet in the match
   * (nothing of it placed or counted) and, when that bit turns on at a
   * later step J, put the player in at step J from the run's state and
   * PRNG alone, so every engine does the same. A server then runs such a
   * genre's matches with players = the room's cap and active_mask = the
   * slots present at the start (docs/PROTOCOL.md, "Late join"). */
  uint32_t late_join;

  /* --- ABI 3 (zero in a descriptor the loader took from an ABI 1 or 2
   * library) --- */
  /* The default of lockstep.prediction for this genre's rooms: 1 on (the
   * peers may draw a predicted head; the server picks a small input
   * delay, docs/PROTOCOL.md "Prediction"), 0 off (turns that need no
   * prediction). A server's config or a room's options may override it.
   * Nothing in a run depends on it. */
  uint32_t prediction;
  /* May be NULL. A bot that sees the run: a server calls it for its own
   * bots (room.bots) after bot_next, with its own run's state after the
   * last step it ran, so the bot answers at once what the run asks of
   * `player` now (survivors: a pending level-up pick) by changing the
   * record bot_next made. It only reads the state. gk_bot_input never
   * calls it: a bot run from a seed (gk-replay record, the golden
   * replays, the determinism probe) does not depend on it. */
  void (*bot_answer)(const void *state, uint32_t player, uint8_t *record);

  /* --- ABI 4 (NULL in a descriptor the loader took from an ABI 1, 2 or 3
   * library) --- */
  /* May be NULL. Makes `dst` a copy of `src`, two states of runs of the
   * same config and player count (from create or read_state): afterwards
   * write_state writes the same bytes for both, and the same steps give
   * both the same states, as if `dst` were read_state of `src`'s bytes
   * (its event queue is empty). Allocates nothing; a genre keeps what it
   * can of dst's buffers (a predicting peer restores its head with it
   * every misprediction, gk_net_peer_predict.c). Returns 0, or GK_EINVAL
   * (dst unchanged) when the two were made for another config or player
   * count. NULL: callers copy through write_state and read_state. */
  int (*copy_state)(void *dst, const void *src);
} gk_sim;

/* --- genres in shared objects ---------------------------------------------
 * A genre built as a shared object (loaded by gk-server from its config,
 * by gk-bot and gk-replay with --genre-lib; see src/genre_load) exports
 * exactly one symbol, GK_GENRE_SYMBOL: a function that returns its
 * descriptor. Write GK_GENRE_EXPORT(my_descriptor) once, at file scope, in
 * one source file of the genre. The loader reads the descriptor's `abi`
 * (the first member, so it can be read whatever the layout) and refuses
 * anything outside GK_SIM_ABI_MIN..GK_SIM_ABI with a message naming both
 * numbers; an older abi's descriptor is copied into a current one with
 * the members it lacks zero. */
#define GK_GENRE_SYMBOL "gk_genre_descriptor"
typedef const struct gk_sim *(*gk_genre_descriptor_fn)(void);
#if defined(__GNUC__)
#define GK__EXPORT __attribute__((visibility("default")))
#else
#define GK__EXPORT
#endif
#define GK_GENRE_EXPORT(desc)                                                  \
  GK__EXPORT const gk_sim *gk_genre_descriptor(void);                          \
  GK__EXPORT const gk_sim *gk_genre_descriptor(void) {                         \
    return &(desc);                                                            \
  }

/* Checks a descriptor: abi, non-NULL members, sizes. Returns 0 or
 * GK_EINVAL/GK_EVERSION and a message. */
int gk_sim_check(const gk_sim *sim, char *err, size_t errlen);

/* Hashes a state: XXH3-64 over exactly the bytes write_state produces,
 * less those it writes with gk_write_unhashed (which a hashed digest
 * stands for). */
uint64_t gk_sim_hash(const gk_sim *sim, const void *state, gk_hasher *h);

/* Parses a decimal u64 from s: digits only (no sign, no spaces; leading
 * zeros allowed), no overflow. Returns 0, or -1 for NULL, "" or anything
 * else, leaving *out unchanged. */
int gk_parse_u64(const char *s, uint64_t *out);

/* snprintf into err if err is non-NULL and errlen > 0. Always returns code. */
int gk_errf(char *err, size_t errlen, int code, const char *fmt, ...)
    GK_PRINTF(4, 5);

#endif
