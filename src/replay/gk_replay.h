/* gk_replay.h: recorded matches (.gkr files): writer, reader, verifier.
 *
 * A replay is a stream of checksummed blocks after a 16-byte preamble:
 * one header block (JSON: format, genre and its version, seed, players,
 * input size, config, origin), then steps blocks (binary, little-endian,
 * fixed width: each step's merged input and the hash after the step),
 * then one footer block (step count, final hash). The byte layout is in
 * tools/replay/FORMAT.md.
 *
 * Writing is append-only, so the server records while a match runs: open
 * writes the preamble and header to `<final>.tmp`, append buffers steps and
 * emits a block every `block_steps` steps, finish writes the footer, fsyncs
 * and renames the file to its final `.gkr` name, so a reader never sees a
 * half-written final file. A crash leaves a `.tmp` whose complete blocks
 * are still readable.
 *
 * Reading never trusts the file: every block's XXH3-64 checksum, type,
 * sequence number, length, step numbering, player mask and record size is
 * checked before anything is used. The first problem is reported as
 * damage: a code, the byte offset, and what was expected there. Steps in
 * the complete blocks before the damage stay readable, so a file cut short
 * by a crash is verified as far as it goes, and the reader says where it
 * ends.
 *
 * A header may carry a "lockstep" record (the input delay at the first
 * step and the lead); then verifying also checks the input delay rule:
 * the steps no player sampled for (the first delay steps, and the steps
 * skipped by each raise announced with GK_STEP_DELAY) are neutral.
 * Verifying runs the steps through gk_loop with gk_budget_steps budgets
 * over an input source that reads the recorded merged inputs, and compares
 * the loop's hash after every step with the recorded one.
 *
 * Ownership: callers own every struct here; each open has a matching
 * close/finish/abort. The reader keeps a pointer to the bytes it was given
 * by gk_replay_open_bytes (the caller keeps them alive) or owns the bytes
 * gk_replay_open_file read.
 */
#ifndef GK_REPLAY_H
#define GK_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gk_loop.h"
#include "gk_sim.h"

#define GK_REPLAY_FORMAT 1
#define GK_REPLAY_EXT ".gkr"
#define GK_REPLAY_PREAMBLE_SIZE 16
#define GK_REPLAY_BLOCK_OVERHEAD 20     /* 12-byte block header + u64 sum */
#define GK_REPLAY_HEADER_MAX (4u << 20) /* header JSON bytes */
#define GK_REPLAY_BLOCK_MAX (1u << 20)  /* steps block payload bytes */
#define GK_REPLAY_FILE_MAX (1ull << 30) /* largest file open_file reads */
#define GK_REPLAY_BLOCK_STEPS 256       /* writer default, steps/block */
#define GK_REPLAY_BLOCK_STEPS_MAX 1024
#define GK_REPLAY_GENRE_MAX 63 /* bytes in a genre name */
#define GK_REPLAY_MSG_MAX 320

/* Block types (the first byte of a block). */
enum {
  GK_REPLAY_BLOCK_HEADER = 'H',
  GK_REPLAY_BLOCK_STEPS_T = 'S',
  GK_REPLAY_BLOCK_FOOTER = 'F'
};

/* --- writer -------------------------------------------------------------- */

/* What goes into the header. Everything is copied or serialized at open. */
typedef struct gk_replay_meta {
  const gk_sim *sim; /* must be non-NULL */
  const void *cfg;   /* must be non-NULL: the config the run was started
                        with (written through gk_config_to_json) */
  uint64_t seed;
  uint32_t players;      /* sim->players_min..sim->players_max */
  const char *origin;    /* may be NULL: where the replay came from (free text,
                            e.g. "gk-replay record ..." or "server room ABCD") */
  const cJSON *lockstep; /* may be NULL: the match's input delay record
                            (FORMAT.md "lockstep"), copied as is */
} gk_replay_meta;

typedef struct gk_replay_writer {
  /* read-only for callers */
  uint64_t steps;     /* steps appended so far */
  uint64_t last_hash; /* hash of the last appended step, else 0 */
  uint64_t offset;    /* bytes emitted to the sink so far */
  int err;            /* first error; the writer refuses work after one */
  /* may be set after open, before the first append: 1..BLOCK_STEPS_MAX */
  uint32_t block_steps;
  /* private */
  int fd; /* -1 for the memory sink or when closed */
  int open;
  int memory;
  char *path;     /* final name, owned */
  char *tmp_path; /* path + ".tmp", owned */
  uint8_t *mem;   /* memory sink, owned until gk_replay_writer_take */
  size_t mem_len, mem_cap;
  uint8_t *block; /* pending steps block (header room + entries), owned */
  size_t block_len, block_cap;
  uint32_t block_count;
  uint32_t seq; /* next block's sequence number */
  uint32_t players, input_size, entry_size;
} gk_replay_writer;

/* Opens `<path>.tmp` (truncating a stale one) and writes the preamble and
 * the header block. `path` must end in ".gkr". Returns 0 or GK_EINVAL /
 * GK_EIO / GK_ENOMEM with a message; on failure nothing is left behind and
 * the writer needs no abort (abort is harmless). */
int gk_replay_writer_open(gk_replay_writer *w, const char *path,
                          const gk_replay_meta *meta, char *err, size_t errlen);
/* The same, into a growing memory buffer (tests, tools, fuzz seeds). */
int gk_replay_writer_open_mem(gk_replay_writer *w, const gk_replay_meta *meta,
                              char *err, size_t errlen);
/* Appends one step: its merged input and the hash after it. `in->step`
 * must be the next step (w->steps), `in->players` the header's count,
 * `active_mask` within the players, inactive records all zero, and flags
 * only GK_STEP_* bits. Returns 0, GK_EINVAL (and changes nothing),
 * GK_ESTATE (not open), or the sticky sink error (GK_EIO/GK_ENOMEM). */
int gk_replay_writer_append(gk_replay_writer *w, const gk_step_input *in,
                            uint64_t hash);
/* Emits the pending steps (if any) as a block now (write(2), no fsync), so
 * a crash loses nothing appended so far. */
int gk_replay_writer_flush(gk_replay_writer *w);
/* Emits pending steps and the footer; for a file, fsyncs it, renames it to
 * its final name and fsyncs the directory. Releases everything except the
 * memory sink's bytes. On failure the .tmp file is removed. */
int gk_replay_writer_finish(gk_replay_writer *w, char *err, size_t errlen);
/* Memory sink: hands over the bytes emitted so far (caller frees with
 * free()); *len gets their length. NULL for a file writer or if empty. */
uint8_t *gk_replay_writer_take(gk_replay_writer *w, size_t *len);
/* Stops writing, removes the .tmp file (a file writer that did not
 * finish) and releases everything. Safe after finish and on a writer whose
 * open failed (if it was zero-initialized or opened). */
void gk_replay_writer_abort(gk_replay_writer *w);

/* --- reader -------------------------------------------------------------- */

/* The first thing wrong with a file. `code` is 0 when nothing is. */
typedef struct gk_replay_damage {
  int code;                     /* GK_ETRUNC, GK_ECORRUPT, GK_EPROTO, GK_EPARSE,
                                   GK_EVERSION, GK_ETOOBIG, GK_EIO, GK_ENOMEM */
  uint64_t offset;              /* byte offset where it was found */
  char what[GK_REPLAY_MSG_MAX]; /* "expected ..., found ..." */
} gk_replay_damage;

typedef struct gk__replay_block {
  size_t entries; /* offset of the block's first entry */
  uint64_t first; /* its first step */
  uint32_t count; /* its step count */
} gk__replay_block;

typedef struct gk_replay {
  /* header, valid when header_ok */
  int header_ok;
  uint32_t format;
  char genre[GK_REPLAY_GENRE_MAX + 1];
  uint32_t genre_version;
  uint64_t seed;
  uint32_t players;
  uint32_t input_size;
  gk_ratio step_seconds;
  cJSON *header;       /* the parsed header JSON, owned */
  const cJSON *config; /* the "config" object inside `header` */
  const char *origin;  /* inside `header`, or NULL */
  /* the optional "lockstep" record (older replays have none) */
  int has_lockstep;     /* 1 when the header has it */
  uint32_t input_delay; /* the delay at the first step, 1..255 */
  uint32_t lead;        /* steps a peer sampled past confirmed + delay */
  /* content */
  uint64_t steps;      /* steps readable (in complete, valid blocks) */
  uint64_t last_hash;  /* hash after the last readable step, else 0 */
  int complete;        /* the footer was read and everything checked */
  uint64_t final_hash; /* from the footer, when complete */
  uint64_t valid_end;  /* offset just past the last valid block */
  uint64_t size;       /* file size in bytes */
  gk_replay_damage damage;
  /* private */
  const uint8_t *bytes;
  uint8_t *owned;
  gk__replay_block *blocks;
  size_t nblocks, blocks_cap;
  uint32_t entry_size;
} gk_replay;

/* Reads a replay from bytes the caller keeps alive until close. Returns 0
 * for a complete, valid file, else r->damage.code (r->damage says where and
 * what). Even then, if r->header_ok, the r->steps steps before the damage
 * can be read. Always call gk_replay_close afterwards. */
int gk_replay_open_bytes(gk_replay *r, const void *bytes, size_t len);
/* The same for a file (read whole; GK_ENOTFOUND/GK_EIO/GK_ETOOBIG with
 * offset 0 if it cannot be read). */
int gk_replay_open_file(gk_replay *r, const char *path);
void gk_replay_close(gk_replay *r);

/* One recorded step; `inputs` points into the replay's bytes
 * (players * input_size bytes). */
typedef struct gk_replay_step {
  uint64_t step;
  uint64_t hash;
  uint32_t active_mask;
  uint32_t flags;
  const uint8_t *inputs;
} gk_replay_step;

/* Fills *out with step `step`. GK_ERANGE if step >= r->steps. `hint` may
 * be NULL; a caller reading in order passes the same size_t (start 0) to
 * make each lookup O(1). */
int gk_replay_step_at(const gk_replay *r, uint64_t step, gk_replay_step *out,
                      size_t *hint);

/* A step input (gk_loop) that reads the recorded merged inputs. Steps at or
 * past r->steps fail with GK_ERANGE. */
typedef struct gk_replay_input {
  gk_input base; /* must be first */
  const gk_replay *r;
  size_t hint;
} gk_replay_input;

void gk_replay_input_init(gk_replay_input *in, const gk_replay *r);

/* Checks that `sim` can run this replay (name, version, input size,
 * players) and builds its config from the header into cfg
 * (sim->config_size bytes; release with sim->config_free when 0 is
 * returned). Returns 0 or a code with a message. */
int gk_replay_prepare(const gk_replay *r, const gk_sim *sim, void *cfg,
                      char *err, size_t errlen);

/* --- verify -------------------------------------------------------------- */

enum {
  GK_REPLAY_OK = 0,
  GK_REPLAY_MISMATCH = 1, /* a step's hash differs */
  GK_REPLAY_INVALID = 2   /* not a valid replay (or cannot be run here) */
};

typedef struct gk_replay_verdict {
  int status;             /* GK_REPLAY_OK / _MISMATCH / _INVALID */
  int code;               /* for INVALID: the gk_err code */
  uint64_t steps_checked; /* steps whose hash matched */
  uint64_t step;          /* MISMATCH: the first differing step */
  uint64_t expected;      /* MISMATCH: the recorded hash */
  uint64_t actual;        /* MISMATCH: the hash gk_loop computed */
  uint64_t offset;        /* INVALID: where the damage is (0 otherwise) */
  char message[GK_REPLAY_MSG_MAX * 2];
} gk_replay_verdict;

/* Called every `GK_REPLAY_PROGRESS_STEPS` steps and at the end. */
#define GK_REPLAY_PROGRESS_STEPS 4096
typedef void (*gk_replay_progress_cb)(void *ctx, uint64_t done, uint64_t total);

/* Starts the replay's run on `loop` (initialized by the caller, with a
 * hash ring of at least GK_REPLAY_PROGRESS_STEPS) and runs its first
 * `steps` steps (at most r->steps) with gk_budget_steps budgets, comparing
 * every hash. The loop keeps the run afterwards (for dumps and samples): on
 * a mismatch it holds the state after the differing step. Damage after the
 * readable steps is not judged here. Returns v->status. */
int gk_replay_run(const gk_replay *r, const gk_sim *sim, uint64_t steps,
                  gk_loop *loop, gk_replay_progress_cb progress, void *ctx,
                  gk_replay_verdict *v);

/* Runs the replay's readable steps through a fresh gk_loop and compares
 * every hash. `sim` NULL looks the genre up with gk_genre_find. A
 * mismatch in the readable steps wins over damage after them (status 1);
 * damage with every readable step matching is status 2, and the message
 * says how many steps were verified before it. `progress` may be NULL.
 * Returns v->status. */
int gk_replay_verify(const gk_replay *r, const gk_sim *sim,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v);

#endif
