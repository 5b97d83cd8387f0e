/* gk_state.h: canonical state writing and bounded reading.
 *
 * A genre describes its state by streaming fields, in a fixed order, into a
 * gk_writer. Every field is fixed width and little-endian; nothing about the
 * host (padding, pointers, endianness, hash-table order) leaks into the
 * bytes. Three features share this one description:
 *
 *   - the per-step hash: a writer whose sink feeds XXH3-64 (gk_hasher);
 *   - snapshots: a writer whose sink appends to memory (gk_buf_writer), read
 *     back by the genre through a gk_reader;
 *   - readable dumps and HUD samples: a writer with a `field` callback that
 *     sees each field's name and value (and begin/end markers for nesting).
 *
 * Writers stage bytes in a caller-owned buffer and hand them to `flush` in
 * chunks, so the hash path costs one bounds check and one store per field.
 * Names and begin/end markers are free unless `field` is set.
 *
 * Reading goes through gk_reader, one bounded cursor in the style of
 * cJSON's parse buffer: a read past the end returns 0 and sets `err` to
 * GK_ETRUNC once; callers check `r->err` when they are done (or sooner).
 */
#ifndef GK_STATE_H
#define GK_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum gk_field_kind {
  GK_FIELD_U8,
  GK_FIELD_U16,
  GK_FIELD_U32,
  GK_FIELD_U64,
  GK_FIELD_I8,
  GK_FIELD_I16,
  GK_FIELD_I32,
  GK_FIELD_I64,
  GK_FIELD_BOOL,  /* one byte, 0 or 1 */
  GK_FIELD_BYTES, /* raw bytes, written as is */
  GK_FIELD_BEGIN, /* a named group starts (index >= 0 for list items); no bytes
                   */
  GK_FIELD_END    /* the innermost group ends; no bytes */
} gk_field_kind;

typedef struct gk_writer gk_writer;

/* Receives staged bytes. Must be non-NULL unless `field` is set. */
typedef void (*gk_writer_flush_cb)(gk_writer *w, const uint8_t *bytes,
                                   size_t len);

/* Receives every field as it is written, instead of the staging buffer.
 * For integer kinds `value` holds the value (sign-extended for I kinds,
 * reinterpret as int64_t); for BYTES, `bytes`/`len` hold them; for BEGIN,
 * `value` is the list index or UINT64_MAX for a plain group. May be NULL. */
typedef void (*gk_writer_field_cb)(gk_writer *w, gk_field_kind kind,
                                   const char *name, uint64_t value,
                                   const uint8_t *bytes, size_t len);

struct gk_writer {
  uint8_t *buf;   /* staging buffer, owned by whoever set the writer up */
  size_t len;     /* bytes staged */
  size_t cap;     /* capacity of buf; >= 8 unless `field` is set */
  uint64_t total; /* bytes written so far (staged or flushed) */
  gk_writer_flush_cb flush;
  gk_writer_field_cb field;
  int err;     /* first error a sink reported (e.g. GK_ENOMEM), else 0 */
  void *data;  /* for the sink's use */
  int hashing; /* set by gk_hasher: gk_write_unhashed writes nothing */
};

/* Hands staged bytes to `flush` and empties the stage. Call once when done. */
void gk_writer_flush(gk_writer *w);

/* Out-of-line slow paths; use the inline writers below. */
void gk__writer_field(gk_writer *w, gk_field_kind kind, const char *name,
                      uint64_t value, const uint8_t *bytes, size_t len);
void gk__writer_bytes(gk_writer *w, const uint8_t *bytes, size_t len);

/* Stores the low n bytes of v little-endian at p. The writer guarantees 8
 * free bytes, so little-endian hosts store all 8 in one unaligned move and
 * the next field overwrites the excess. */
static inline void gk__put_le(uint8_t *p, uint64_t v, unsigned n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  (void)n;
  memcpy(p, &v, 8);
#else
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline void gk__writer_le(gk_writer *w, gk_field_kind kind,
                                 const char *name, uint64_t v, unsigned n) {
  if (w->field != NULL) {
    gk__writer_field(w, kind, name, v, NULL, 0);
    return;
  }
  size_t len = w->len;
  if (w->cap - len < 8) {
    gk_writer_flush(w);
    len = w->len;
  }
  gk__put_le(w->buf + len, v, n);
  w->len = len + n;
  w->total += n;
}

static inline void gk_write_u8(gk_writer *w, const char *name, uint8_t v) {
  gk__writer_le(w, GK_FIELD_U8, name, v, 1);
}
static inline void gk_write_u16(gk_writer *w, const char *name, uint16_t v) {
  gk__writer_le(w, GK_FIELD_U16, name, v, 2);
}
static inline void gk_write_u32(gk_writer *w, const char *name, uint32_t v) {
  gk__writer_le(w, GK_FIELD_U32, name, v, 4);
}
static inline void gk_write_u64(gk_writer *w, const char *name, uint64_t v) {
  gk__writer_le(w, GK_FIELD_U64, name, v, 8);
}
static inline void gk_write_i8(gk_writer *w, const char *name, int8_t v) {
  gk__writer_le(w, GK_FIELD_I8, name, (uint64_t)(int64_t)v, 1);
}
static inline void gk_write_i16(gk_writer *w, const char *name, int16_t v) {
  gk__writer_le(w, GK_FIELD_I16, name, (uint64_t)(int64_t)v, 2);
}
static inline void gk_write_i32(gk_writer *w, const char *name, int32_t v) {
  gk__writer_le(w, GK_FIELD_I32, name, (uint64_t)(int64_t)v, 4);
}
static inline void gk_write_i64(gk_writer *w, const char *name, int64_t v) {
  gk__writer_le(w, GK_FIELD_I64, name, (uint64_t)v, 8);
}
static inline void gk_write_bool(gk_writer *w, const char *name, int v) {
  gk__writer_le(w, GK_FIELD_BOOL, name, v ? 1u : 0u, 1);
}
/* Raw bytes (already canonical, e.g. a grid of u8 cells). */
static inline void gk_write_bytes(gk_writer *w, const char *name,
                                  const void *bytes, size_t len) {
  if (w->field != NULL)
    gk__writer_field(w, GK_FIELD_BYTES, name, len, (const uint8_t *)bytes, len);
  else
    gk__writer_bytes(w, (const uint8_t *)bytes, len);
}
/* Bytes that a snapshot must carry but the hash leaves out, because a
 * field written (and so hashed) before them already commits to them, e.g.
 * a running digest of a history. A hashing writer skips them; every other
 * writer treats them as gk_write_bytes. */
static inline void gk_write_unhashed(gk_writer *w, const char *name,
                                     const void *bytes, size_t len) {
  if (!w->hashing) gk_write_bytes(w, name, bytes, len);
}
/* Grouping for readable output; writes no bytes. `index` is a list index,
 * or UINT64_MAX for a named group. */
static inline void gk_write_begin(gk_writer *w, const char *name,
                                  uint64_t index) {
  if (w->field != NULL)
    gk__writer_field(w, GK_FIELD_BEGIN, name, index, NULL, 0);
}
static inline void gk_write_end(gk_writer *w) {
  if (w->field != NULL) gk__writer_field(w, GK_FIELD_END, NULL, 0, NULL, 0);
}

/* A batch: consecutive fixed-width fields with the stage position kept in
 * the caller's registers, for a genre's hot path (a run header, a small
 * state). The same bytes and the same field callbacks as the gk_write_*
 * calls it stands for; each field costs a compare, a store and a few adds
 * instead of reloading the writer around every byte store (the stage is
 * bytes, so the compiler must assume a store may change the writer). The
 * batch is a value (begin returns it, the slow path returns it) so that
 * its address never escapes and it can live in registers. Between
 * gk_batch_begin and gk_batch_end only gk_batch_* calls may use the
 * writer. `most` is the most bytes the batch expects to write: a batch
 * that writes more stays correct (it flushes and goes on). w must be
 * non-NULL. */
typedef struct gk_batch {
  gk_writer *w;
  uint8_t *at; /* next stage byte (fast mode), else NULL */
  size_t room; /* stage bytes left past `at`; 0 in field-callback mode */
} gk_batch;

/* Out-of-line begin: flushes first if `most` + 8 bytes do not fit, or
 * sets up field-callback mode. */
gk_batch gk__batch_begin(gk_writer *w, size_t most);

/* Claims the stage for a batch of about `most` bytes. */
static inline gk_batch gk_batch_begin(gk_writer *w, size_t most) {
  if (w->field == NULL && w->cap - w->len >= most + 8) {
    gk_batch b = {w, w->buf + w->len, w->cap - w->len};
    return b;
  }
  return gk__batch_begin(w, most);
}
/* Out-of-line slow path: syncs b, writes one field through the writer,
 * returns the batch claimed again. */
gk_batch gk__batch_field(gk_batch b, gk_field_kind kind, const char *name,
                         uint64_t v, unsigned n);

/* Hands the staged bytes to the writer; the batch is done. */
static inline void gk_batch_end(gk_batch *b) {
  if (b->at != NULL) {
    size_t n = (size_t)(b->at - (b->w->buf + b->w->len));
    b->w->len += n;
    b->w->total += n;
  }
  b->at = NULL;
  b->room = 0;
}

static inline void gk__batch_le(gk_batch *b, gk_field_kind kind,
                                const char *name, uint64_t v, unsigned n) {
  if (b->room < 8) {
    *b = gk__batch_field(*b, kind, name, v, n);
    return;
  }
  gk__put_le(b->at, v, n);
  b->at += n;
  b->room -= n;
}

static inline void gk_batch_u8(gk_batch *b, const char *name, uint8_t v) {
  gk__batch_le(b, GK_FIELD_U8, name, v, 1);
}
static inline void gk_batch_u16(gk_batch *b, const char *name, uint16_t v) {
  gk__batch_le(b, GK_FIELD_U16, name, v, 2);
}
static inline void gk_batch_u32(gk_batch *b, const char *name, uint32_t v) {
  gk__batch_le(b, GK_FIELD_U32, name, v, 4);
}
static inline void gk_batch_u64(gk_batch *b, const char *name, uint64_t v) {
  gk__batch_le(b, GK_FIELD_U64, name, v, 8);
}
static inline void gk_batch_i32(gk_batch *b, const char *name, int32_t v) {
  gk__batch_le(b, GK_FIELD_I32, name, (uint64_t)(int64_t)v, 4);
}
static inline void gk_batch_bool(gk_batch *b, const char *name, int v) {
  gk__batch_le(b, GK_FIELD_BOOL, name, v ? 1u : 0u, 1);
}
/* A record of n bytes at fixed offsets: returns where its bytes go (and
 * moves the batch past them), or NULL in field-callback mode or when the
 * stage lacks n + 8 bytes, and then the caller writes the record's fields
 * one by one with gk_batch_* (which flush as needed). Fill the record with
 * gk_batch_put in increasing offset order: each put stores 8 bytes and the
 * next overwrites the excess, so the last may spill up to 7 bytes past n,
 * into the room this call asked for. */
static inline uint8_t *gk_batch_claim(gk_batch *b, size_t n) {
  if (b->room < n + 8) return NULL; /* room is 0 in field-callback mode */
  uint8_t *p = b->at;
  b->at += n;
  b->room -= n;
  return p;
}
/* Stores the low n bytes of v little-endian at p + off (see claim). */
static inline void gk_batch_put(uint8_t *p, size_t off, uint64_t v,
                                unsigned n) {
  gk__put_le(p + off, v, n);
}
/* gk_write_unhashed inside a batch: a hashing writer skips the bytes and
 * the batch goes on; any other ends the batch, writes them and begins
 * again. */
static inline void gk_batch_unhashed(gk_batch *b, const char *name,
                                     const void *bytes, size_t len,
                                     size_t most) {
  if (b->w->hashing) return;
  gk_batch_end(b);
  gk_write_bytes(b->w, name, bytes, len);
  *b = gk_batch_begin(b->w, most);
}
/* gk_write_begin / gk_write_end inside a batch (no bytes). */
static inline void gk_batch_group(gk_batch *b, const char *name,
                                  uint64_t index) {
  if (b->w->field != NULL) gk_write_begin(b->w, name, index);
}
static inline void gk_batch_group_end(gk_batch *b) {
  if (b->w->field != NULL) gk_write_end(b->w);
}

/* One fixed-width member of a C struct, for gk_write_list: its field name,
 * its kind (GK_FIELD_U8 .. GK_FIELD_BOOL; the member's C type must have
 * that width) and its offsetof. */
typedef struct gk_field_spec {
  const char *name;
  uint16_t kind;
  uint16_t offset;
} gk_field_spec;

/* A record layout for gk_write_list, planned once from a spec: the spec
 * (not copied: it must outlive the list) and the runs of members that are
 * adjacent both in memory and in the spec. Caller-owned, no resources. */
#define GK_FIELD_LIST_MAX 32
typedef struct gk_field_list {
  const gk_field_spec *spec;
  uint32_t nspec, nrun;
  uint32_t width; /* canonical bytes per record */
  struct {
    uint16_t src; /* offset in the record */
    uint16_t len; /* bytes; 0 for a BOOL (written as 0 or 1) */
  } run[GK_FIELD_LIST_MAX];
} gk_field_list;

/* Plans l from spec (1..GK_FIELD_LIST_MAX entries, kinds U8..BOOL; must be
 * non-NULL). Returns 0 or GK_EINVAL. */
int gk_field_list_init(gk_field_list *l, const gk_field_spec *spec,
                       size_t nspec);

/* Writes `count` records, record i at base + i * stride: the same bytes and
 * the same field callbacks as gk_write_begin(w, name, i), one
 * gk_write_<kind> per spec entry, then gk_write_end(w), for every i. The
 * byte path copies each run in one move (little-endian hosts), and the whole
 * array in one call when a record is one run with no gaps, so a hashed
 * entity list costs about a memcpy. l must be non-NULL; base may be NULL
 * only if count is 0. */
void gk_write_list(gk_writer *w, const char *name, const gk_field_list *l,
                   const void *base, size_t stride, size_t count);

/* A writer that feeds XXH3-64. The hasher owns its stage and XXH3 state;
 * init allocates (so do it before a run starts), close frees. */
typedef struct gk_hasher {
  gk_writer w; /* must be first: pass &h->w to write_state */
  void *xxh;   /* XXH3_state_t, owned */
  int started; /* xxh was reset since gk_hasher_reset (first flush does it) */
  uint8_t stage[2048];
} gk_hasher;

int gk_hasher_init(gk_hasher *h);
void gk_hasher_close(gk_hasher *h);
/* Starts a new hash (seed 0). */
void gk_hasher_reset(gk_hasher *h);
/* Flushes and returns XXH3-64 over every byte written since reset. */
uint64_t gk_hasher_digest(gk_hasher *h);
/* XXH3-64 (seed 0) of a buffer; the same function the hasher computes. */
uint64_t gk_hash_bytes(const void *bytes, size_t len);

/* A writer that appends to a growing heap buffer. `bytes` is owned by the
 * buf writer until gk_buf_writer_close, or taken with gk_buf_writer_take. */
typedef struct gk_buf_writer {
  gk_writer w; /* must be first */
  uint8_t *bytes;
  size_t len;
  size_t cap;
  uint8_t stage[512];
} gk_buf_writer;

void gk_buf_writer_init(gk_buf_writer *b);
void gk_buf_writer_close(gk_buf_writer *b);
/* Flushes and returns the bytes (caller frees with free()); the writer is
 * left empty. Returns NULL with *len 0 if nothing was written or on ENOMEM
 * (then b->w.err is GK_ENOMEM). */
uint8_t *gk_buf_writer_take(gk_buf_writer *b, size_t *len);

/* --- little-endian bytes ------------------------------------------------
 * For every fixed-width format (state, wire, replay). The caller checks
 * that p holds the bytes; n is 1..8. Loads are written out so compilers
 * emit one load each. */
static inline uint32_t gk_load_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static inline uint64_t gk_load_le64(const uint8_t *p) {
  return (uint64_t)gk_load_le32(p) | (uint64_t)gk_load_le32(p + 4) << 32;
}

/* The n-byte little-endian value at p. */
static inline uint64_t gk_load_le(const uint8_t *p, unsigned n) {
  if (n == 8) return gk_load_le64(p);
  if (n == 4) return gk_load_le32(p);
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Stores exactly the low n bytes of v little-endian at p. */
static inline void gk_store_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* One bounded cursor over bytes the caller owns. */
typedef struct gk_reader {
  const uint8_t *p;
  size_t len;
  size_t pos;
  int err; /* 0, or GK_ETRUNC after the first read past the end, or a code a
              genre set with gk_reader_fail */
} gk_reader;

void gk_reader_init(gk_reader *r, const void *bytes, size_t len);
uint8_t gk_read_u8(gk_reader *r);
uint16_t gk_read_u16(gk_reader *r);
uint32_t gk_read_u32(gk_reader *r);
uint64_t gk_read_u64(gk_reader *r);
int8_t gk_read_i8(gk_reader *r);
int16_t gk_read_i16(gk_reader *r);
int32_t gk_read_i32(gk_reader *r);
int64_t gk_read_i64(gk_reader *r);
/* Reads 0 or 1; any other byte sets err to GK_ERANGE and returns 0. */
int gk_read_bool(gk_reader *r);
/* Copies len bytes to out (zero-fills out on failure). Returns 0 or err. */
int gk_read_bytes(gk_reader *r, void *out, size_t len);
/* Bytes left unread. */
size_t gk_reader_left(const gk_reader *r);
/* Records a semantic error (e.g. GK_ERANGE for a value no state can hold)
 * if none is recorded yet. Returns r->err. */
int gk_reader_fail(gk_reader *r, int err);

/* --- field paths ----------------------------------------------------------
 * The unique name of every field a writer emits: the names of the open
 * groups and the field's own name, joined with '.', a list item's index in
 * brackets: `players[0].weapons[1].level`, `enemies[13].x`, `step`. A value
 * written with a NULL or "" name inside a list item is that item
 * (`players[0].options[2]`). Consecutive BYTES writes under one path are
 * one field (a ring buffer written in two pieces): `offset` says where the
 * later piece starts. Names are never hashed: paths cost nothing on the
 * hash path. A field callback feeds every call to gk_path_feed. */
#define GK_PATH_MAX 128      /* longest path, with its NUL */
#define GK_PATH_DEPTH_MAX 16 /* deepest group nesting tracked */

typedef struct gk_path {
  char text[GK_PATH_MAX]; /* the last value field's path, NUL-terminated */
  size_t offset;          /* BYTES: where this piece starts in its field */
  int truncated;          /* a path did not fit (text is cut short) */
  /* private */
  size_t len;                     /* length of the open groups' prefix */
  size_t mark[GK_PATH_DEPTH_MAX]; /* prefix length before each group */
  uint32_t depth;                 /* open groups (may exceed DEPTH_MAX) */
  size_t bytes_end;               /* end of the last BYTES field, if any */
  int last_bytes;                 /* the previous value field was BYTES */
} gk_path;

/* Starts at the top level. p must be non-NULL. */
void gk_path_init(gk_path *p);
/* Feeds one field callback's arguments (name may be NULL). Returns 1 for a
 * value field (p->text holds its path, and for BYTES p->offset where these
 * `len` bytes start), 0 for BEGIN and END. */
int gk_path_feed(gk_path *p, gk_field_kind kind, const char *name,
                 uint64_t value, size_t len);

#endif
