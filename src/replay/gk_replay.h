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
 * are still readable; gk_replay_recover turns it into a finished replay
 * whose footer says it was cut short (and why). A deferred writer keeps
 * its blocks in memory and hands them over as chunks, so that another
 * thread does the disk writes (the server's thread pool).
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

/* The reader and the runner (gk_replay_read.c, gk_replay_steps.c) call no
 * cJSON: built with GK_REPLAY_NO_CJSON (the browser build has no cJSON),
 * they see cJSON as an incomplete type. */
#ifdef GK_REPLAY_NO_CJSON
typedef struct cJSON cJSON;
#else
#include <cjson/cJSON.h>
#endif

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

/* Footer flags (the cut-short footer form, see FORMAT.md). */
#define GK_REPLAY_CUT_SHORT 1u

/* Why a recovered replay ends early: what stopped the reader in the file
 * it was recovered from. Written into the footer by gk_replay_recover. */
typedef struct gk_replay_cut {
  int code;                       /* GK_ETRUNC, GK_ECORRUPT, GK_EPROTO, ... */
  uint64_t offset;                /* where, in the file recovered from */
  uint64_t dropped;               /* bytes of that file not kept */
  char reason[GK_REPLAY_MSG_MAX]; /* the reader's "expected ..." text */
} gk_replay_cut;

/* Block types (the first byte of a block). */
enum {
  GK_REPLAY_BLOCK_HEADER = 'H',
  GK_REPLAY_BLOCK_STEPS_T = 'S',
  GK_REPLAY_BLOCK_FOOTER = 'F'
};

/* --- writer -------------------------------------------------------------- */

/* What goes into the header. Everything is copied or serialized at open.
 *
 * Threads: cJSON keeps process-global state (every cJSON_Parse* writes its
 * error pointer), so a program calls cJSON on one thread only. Opening a
 * writer serializes the header with cJSON, unless it is opened with the
 * header's text made beforehand (gk_replay_header_json on the cJSON thread,
 * then gk_replay_writer_open_text): that writer can be opened, appended to
 * and finished on any thread without a cJSON call (the server's pool). */
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

/* The header block's JSON text for `meta`, exactly as opening a writer
 * writes it: malloc'd (free with free()), or NULL with a message. Calls
 * cJSON. */
char *gk_replay_header_json(const gk_replay_meta *meta, char *err,
                            size_t errlen);

typedef struct gk_replay_writer {
  /* read-only for callers */
  uint64_t steps;     /* steps appended so far */
  uint64_t last_hash; /* hash of the last appended step, else 0 */
  uint64_t offset;    /* bytes emitted to the sink so far */
  int err;            /* first error; the writer refuses work after one */
  int sys_errno;      /* the errno behind a GK_EIO err (ENOSPC, ...), or 0 */
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
  int deferred; /* blocks go to `out` until taken (gk_replay_writer_defer) */
  uint8_t *out; /* deferred blocks not yet taken, owned */
  size_t out_len, out_cap;
} gk_replay_writer;

/* Opens `<path>.tmp` (truncating a stale one) and writes the preamble and
 * the header block. `path` must end in ".gkr". Returns 0 or GK_EINVAL /
 * GK_EIO / GK_ENOMEM with a message; on failure nothing is left behind and
 * the writer needs no abort (abort is harmless). */
int gk_replay_writer_open(gk_replay_writer *w, const char *path,
                          const gk_replay_meta *meta, char *err, size_t errlen);
/* gk_replay_writer_open (or, with `deferred`, _open_deferred) with the
 * header's text made beforehand by gk_replay_header_json for a meta with
 * the same sim and players: only sim and players are read from `meta`
 * (cfg may be NULL), the text is written as it is, and no cJSON is
 * called, so it may run on a thread that must not call cJSON. */
int gk_replay_writer_open_text(gk_replay_writer *w, const char *path,
                               const gk_replay_meta *meta,
                               const char *header_json, int deferred, char *err,
                               size_t errlen);
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

/* --- deferred writing ------------------------------------------------------
 * For a writer whose disk writes must not run on the caller's thread (the
 * server's loop): after gk_replay_writer_defer, finished blocks are kept in
 * memory; gk_replay_writer_take_chunk cuts the pending steps into a block
 * and hands every kept block over as a chunk, which another thread writes
 * with gk_replay_chunk_write while the owner keeps appending (the chunk
 * shares nothing with the writer but the file descriptor, which only
 * chunks write to while the writer is deferred). Chunks must be written in
 * the order they were taken, one at a time, and the last one must be
 * written before finish (which writes what is left) or abort. */
typedef struct gk_replay_chunk {
  int fd;         /* the writer's .tmp file (borrowed) */
  uint8_t *bytes; /* owned: free with gk_replay_chunk_free */
  size_t len;
  uint64_t steps; /* steps in the file once this chunk is written */
  int sys_errno;  /* set by gk_replay_chunk_write on failure */
} gk_replay_chunk;

/* gk_replay_writer_open, deferred from the start: the file is created, and
 * the preamble and header go into the first chunk. On failure w->sys_errno
 * holds the errno of the create (ENOENT for a missing folder, ...). */
int gk_replay_writer_open_deferred(gk_replay_writer *w, const char *path,
                                   const gk_replay_meta *meta, char *err,
                                   size_t errlen);
/* Switches a file writer to deferred writing. Returns 0 or GK_ESTATE (not
 * open, or a memory writer). */
int gk_replay_writer_defer(gk_replay_writer *w);
/* Cuts the pending steps into a block and moves every kept block into *c
 * (c->len may be 0). Returns 0, GK_ESTATE (not deferred) or the sticky
 * error. */
int gk_replay_writer_take_chunk(gk_replay_writer *w, gk_replay_chunk *c);
/* Writes the chunk at the end of its file and, if `sync`, fdatasyncs it.
 * Touches nothing but *c: safe on another thread. Returns 0 or GK_EIO
 * (c->sys_errno says why: ENOSPC, EDQUOT, EFBIG, EIO, ...). */
int gk_replay_chunk_write(gk_replay_chunk *c, int sync);
void gk_replay_chunk_free(gk_replay_chunk *c);
/* Records a failed chunk write in the writer: it refuses work from now on
 * (finish then fails and removes the .tmp; abort removes it). */
void gk_replay_writer_fail(gk_replay_writer *w, int sys_errno);

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
  int cut_short;       /* the footer says the match was cut short (a
                          recovered replay): `cut` says where and why */
  gk_replay_cut cut;
  uint64_t footer_at; /* offset of the footer block, 0 if none was read */
  uint64_t size;      /* file size in bytes */
  gk_replay_damage damage;
  /* private */
  const struct gk_replay_known *known;   /* open_file_known, while reading */
  const struct gk_replay_parser *parser; /* while reading the header */
  void (*header_free)(cJSON *header);    /* releases `header` (cJSON_Delete) */
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

/* What a reader that must not parse JSON (a thread that may not call
 * cJSON, see gk_replay_meta) is told about a replay's header instead. */
typedef struct gk_replay_known {
  const char *header_json; /* may be NULL: the header block's exact text
                              (gk_replay_header_json); a header block with
                              other bytes is damage (GK_EMISMATCH) */
  uint32_t players;        /* 1..GK_PLAYERS_MAX */
  uint32_t input_size;     /* 1..GK_INPUT_SIZE_MAX */
} gk_replay_known;

/* gk_replay_open_file without a cJSON call: the header block is checked
 * like any block (type, sequence, length, checksum) and compared with
 * k->header_json, but not parsed. r->players and r->input_size come from
 * `k`, r->format is GK_REPLAY_FORMAT; r->header, r->config, r->origin,
 * r->genre and the other header fields stay empty (so gk_replay_prepare
 * and gk_replay_verify cannot run on it); steps, footer and damage are
 * read as by gk_replay_open_file. Closing it calls no cJSON either. */
int gk_replay_open_file_known(gk_replay *r, const char *path,
                              const gk_replay_known *k);
void gk_replay_close(gk_replay *r);

/* --- a header parsed elsewhere -------------------------------------------
 * gk_replay_open_bytes parses the header block with cJSON. A program with
 * its own JSON parser (the browser build: JavaScript's JSON.parse) opens
 * the same bytes with gk_replay_open_bytes_with: the reader checks every
 * block as always and hands the header block's text to `parse`, which
 * fills a gk_replay_fields with the header keys' values; the reader then
 * judges them exactly as it judges cJSON's (the same checks, order and
 * messages: gk_replay_open_bytes goes the same way). The header's
 * "config" and "origin" stay with the parser (r->header, r->config and
 * r->origin are NULL), so gk_replay_prepare and gk_replay_verify cannot
 * run on it: the caller builds the config (gk_config_kv.h) and runs the
 * steps with gk_replay_run_to. */

/* gk_replay_fields.have: the keys present with the JSON type the format
 * wants (integers: integral, 0..UINT32_MAX). */
enum {
  GK_REPLAY_HAVE_FORMAT = 1u << 0,
  GK_REPLAY_HAVE_GENRE = 1u << 1,         /* a string */
  GK_REPLAY_HAVE_GENRE_VERSION = 1u << 2, /* an integer */
  GK_REPLAY_HAVE_SEED = 1u << 3,          /* a string */
  GK_REPLAY_HAVE_PLAYERS = 1u << 4,
  GK_REPLAY_HAVE_INPUT_SIZE = 1u << 5,
  GK_REPLAY_HAVE_STEP_SECONDS = 1u << 6, /* an array of 2 */
  GK_REPLAY_HAVE_CONFIG = 1u << 7,       /* an object */
  GK_REPLAY_HAVE_ORIGIN = 1u << 8,       /* present (a string or not) */
  GK_REPLAY_ORIGIN_TEXT = 1u << 9,       /* ... and a string */
  GK_REPLAY_HAVE_LOCKSTEP = 1u << 10,    /* present (valid or not) */
  GK_REPLAY_LOCKSTEP_OK = 1u << 11       /* an object, both values integers */
};

typedef struct gk_replay_fields {
  uint32_t have; /* GK_REPLAY_HAVE_* */
  uint32_t format, genre_version, players, input_size;
  uint32_t step_seconds[2]; /* each 0 unless an integer 1..UINT32_MAX */
  uint32_t input_delay, lead;
  char genre[GK_REPLAY_GENRE_MAX + 2]; /* a longer name: cut to 64 bytes */
  char seed[24];                       /* a longer text: cut to 23 bytes */
  /* when parse fails: where in the text (byte offset) and what */
  uint64_t at;
  char what[GK_REPLAY_MSG_MAX];
} gk_replay_fields;

/* Parses the header block's text (`len` bytes, no NUL among them) into
 * *f (zeroed by the reader). Returns 0, or GK_EPARSE (not JSON, or not one
 * object) with f->at and f->what set. */
typedef int (*gk_replay_parse_fn)(void *ctx, gk_replay *r, const char *text,
                                  size_t len, gk_replay_fields *f);

typedef struct gk_replay_parser {
  gk_replay_parse_fn parse; /* must be non-NULL */
  void *ctx;
} gk_replay_parser;

/* The parser gk_replay_open_bytes uses: cJSON, keeping the parsed header
 * in r->header (r->config, r->origin point into it). In library
 * gk_replay (gk_replay_header.c), not in gk_replay_read. */
const gk_replay_parser *gk_replay_cjson_parser(void);

/* gk_replay_open_bytes with the header parsed by p->parse (p is used
 * during the call only). Returns and fills *r as gk_replay_open_bytes.
 * Always call gk_replay_close afterwards (it calls no cJSON here). */
int gk_replay_open_bytes_with(gk_replay *r, const void *bytes, size_t len,
                              const gk_replay_parser *p);

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
/* gk_replay_prepare's checks without the config (no cJSON): 0 or a code
 * with the same messages. */
int gk_replay_check_sim(const gk_replay *r, const gk_sim *sim, char *err,
                        size_t errlen);

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

/* Runs the steps from loop->steps up to `until` (at most r->steps) on a
 * loop that holds this replay's run (started by gk_replay_run, or adopted
 * from a state the run had after loop->steps steps), comparing every hash
 * as gk_replay_run does: matching steps are added to v->steps_checked; the
 * first mismatch fills v (status, step, hashes, message) and stops the
 * run after that step. The caller zeroes *v before the first call. No
 * cJSON. Returns v->status. */
int gk_replay_run_to(const gk_replay *r, gk_loop *loop, uint64_t until,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v);
/* What gk_replay_verify adds once every readable step matched (v->status
 * GK_REPLAY_OK): the input delay rule of a "lockstep" record, then the
 * reader's damage after the readable steps (status 2, the message naming
 * the offset, what was expected and how many steps verified before it).
 * No cJSON. Returns v->status. */
int gk_replay_judge(const gk_replay *r, gk_replay_verdict *v);

/* Runs the replay's readable steps through a fresh gk_loop and compares
 * every hash. `sim` NULL looks the genre up with gk_genre_find. A
 * mismatch in the readable steps wins over damage after them (status 1);
 * damage with every readable step matching is status 2, and the message
 * says how many steps were verified before it. `progress` may be NULL.
 * Returns v->status. */
int gk_replay_verify(const gk_replay *r, const gk_sim *sim,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v);

/* --- recover -------------------------------------------------------------- */

/* What gk_replay_recover did. */
typedef struct gk_replay_recovery {
  int status;              /* GK_REPLAY_OK / _MISMATCH / _INVALID */
  int code;                /* the gk_err code when status is not OK */
  int complete;            /* the file already had its footer: copied */
  uint64_t steps;          /* steps kept */
  uint64_t steps_verified; /* steps whose hash matched (== steps when OK) */
  uint64_t size;           /* bytes of the file recovered from */
  uint64_t kept;           /* of those, bytes kept */
  gk_replay_cut cut;       /* where and why it was cut (not complete) */
  char message[GK_REPLAY_MSG_MAX * 2];
} gk_replay_recovery;

/* Recovers the replay a crash left in `in` (a .gkr.tmp): keeps every
 * complete, checksum-valid block before the first damage, appends a footer
 * that marks the replay as cut short at step rec->steps and why (the
 * reader's damage: code, offset, text; see FORMAT.md), verifies every
 * kept step, and only then publishes the result as `out` (through
 * `out`.part, fsynced and renamed; an existing `out` is replaced). A file
 * that already has its footer is copied as it is, if it verifies. `in` is
 * never changed. Both paths must be non-NULL; `sim` may be NULL (the
 * genre is looked up with gk_genre_find). Returns rec->status:
 * GK_REPLAY_OK (written), GK_REPLAY_MISMATCH (a kept step's hash differs:
 * nothing written) or GK_REPLAY_INVALID (no valid header, a genre this
 * build lacks, out of memory, or `out` cannot be written: nothing
 * written); rec->message says why. */
int gk_replay_recover(const char *in, const char *out, const gk_sim *sim,
                      gk_replay_recovery *rec);

/* gk_replay_recover, except that a file named `out` is never replaced:
 * if one exists, nothing is read or written and the result is
 * GK_REPLAY_INVALID with rec->code GK_EEXIST; one that appears while the
 * steps are verified is kept as well (the result is published with a
 * hard link, which fails on an existing name; on a file system without
 * them, by a check and a rename). `out`.part is removed either way. The
 * server recovers its leftovers at start with it. */
int gk_replay_recover_new(const char *in, const char *out, const gk_sim *sim,
                          gk_replay_recovery *rec);

#endif
