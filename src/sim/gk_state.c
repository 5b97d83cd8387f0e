/* gk_state.c: the writer's slow paths, the XXH3 and memory sinks, and the
 * bounded reader.
 *
 * The inline writers in gk_state.h stage little-endian bytes; this file
 * holds what runs when the stage is full (flush), when a field callback is
 * set (dumps, samples), and the sinks themselves. xxHash is compiled in
 * header-only form (XXH_INLINE_ALL) so gk_core links nothing but libc.
 */
#include "gk_state.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

void gk_writer_flush(gk_writer *w) {
  if (w->len == 0) return;
  if (w->flush != NULL) w->flush(w, w->buf, w->len);
  w->len = 0;
}

/* Bytes per field of the fixed-width kinds (U8 .. BOOL). */
static const uint8_t field_width[GK_FIELD_END + 1] = {
    [GK_FIELD_U8] = 1,  [GK_FIELD_U16] = 2, [GK_FIELD_U32] = 4,
    [GK_FIELD_U64] = 8, [GK_FIELD_I8] = 1,  [GK_FIELD_I16] = 2,
    [GK_FIELD_I32] = 4, [GK_FIELD_I64] = 8, [GK_FIELD_BOOL] = 1,
};

void gk__writer_field(gk_writer *w, gk_field_kind kind, const char *name,
                      uint64_t value, const uint8_t *bytes, size_t len) {
  if (kind <= GK_FIELD_BOOL) {
    unsigned n = field_width[kind];
    /* Sign-extend narrow signed values so the callback sees the number. */
    if (kind >= GK_FIELD_I8 && kind <= GK_FIELD_I64 && n < 8) {
      uint64_t sign = 1ull << (8 * n - 1);
      uint64_t mask = (1ull << (8 * n)) - 1;
      value &= mask;
      value = (value ^ sign) - sign;
    }
    w->total += n;
  } else if (kind == GK_FIELD_BYTES) {
    w->total += len;
  }
  w->field(w, kind, name, value, bytes, len);
}

void gk__writer_bytes(gk_writer *w, const uint8_t *bytes, size_t len) {
  w->total += len;
  if (w->cap - w->len >= len) {
    memcpy(w->buf + w->len, bytes, len);
    w->len += len;
    return;
  }
  gk_writer_flush(w);
  if (len >= w->cap) {
    if (w->flush != NULL) w->flush(w, bytes, len);
    return;
  }
  memcpy(w->buf, bytes, len);
  w->len = len;
}

/* --- batches ------------------------------------------------------------- */

/* The batch over w's free stage (fast mode) or, with a field callback or
 * a stage too small, room 0 so every field takes gk__batch_field. */
gk_batch gk__batch_begin(gk_writer *w, size_t most) {
  gk_batch b = {w, NULL, 0};
  if (w->field != NULL || w->cap < 16) return b;
  if (w->cap - w->len < most + 8 && w->len > 0) gk_writer_flush(w);
  b.at = w->buf + w->len;
  b.room = w->cap - w->len;
  return b;
}

gk_batch gk__batch_field(gk_batch b, gk_field_kind kind, const char *name,
                         uint64_t v, unsigned n) {
  gk_batch_end(&b); /* hand the staged bytes to w, then one field */
  gk__writer_le(b.w, kind, name, v, n);
  return gk__batch_begin(b.w, 64);
}

/* --- lists of records ----------------------------------------------------- */

/* The n-byte member at p (host order), zero-extended: the writer stores its
 * low n bytes, and gk__writer_field sign-extends the I kinds for readers. */
static uint64_t member_value(const uint8_t *p, unsigned n) {
  uint16_t v16;
  uint32_t v32;
  uint64_t v64;
  switch (n) {
  case 1:
    return *p;
  case 2:
    memcpy(&v16, p, 2);
    return v16;
  case 4:
    memcpy(&v32, p, 4);
    return v32;
  default:
    memcpy(&v64, p, 8);
    return v64;
  }
}

/* Field by field through the inline writers: readable writers, big-endian
 * hosts, and records wider than the stage. */
static void list_fields(gk_writer *w, const char *list, const gk_field_spec *f,
                        size_t nf, const uint8_t *base, size_t stride,
                        size_t count) {
  for (size_t i = 0; i < count; i++) {
    const uint8_t *rec = base + i * stride;
    gk_write_begin(w, list, i);
    for (size_t k = 0; k < nf; k++) {
      unsigned kind = f[k].kind, n = field_width[kind];
      uint64_t v = member_value(rec + f[k].offset, n);
      if (kind == GK_FIELD_BOOL) v = v != 0;
      gk__writer_le(w, (gk_field_kind)kind, f[k].name, v, n);
    }
    gk_write_end(w);
  }
}

int gk_field_list_init(gk_field_list *l, const gk_field_spec *spec,
                       size_t nspec) {
  memset(l, 0, sizeof *l);
  if (spec == NULL || nspec == 0 || nspec > GK_FIELD_LIST_MAX) return GK_EINVAL;
  l->spec = spec;
  l->nspec = (uint32_t)nspec;
  for (size_t k = 0; k < nspec; k++) {
    unsigned kind = spec[k].kind;
    if (kind > GK_FIELD_BOOL) return GK_EINVAL;
    unsigned n = field_width[kind];
    uint32_t last = l->nrun - 1;
    l->width += n;
    if (kind != GK_FIELD_BOOL && l->nrun > 0 && l->run[last].len != 0 &&
        l->run[last].src + l->run[last].len == spec[k].offset) {
      l->run[last].len = (uint16_t)(l->run[last].len + n);
      continue;
    }
    l->run[l->nrun].src = spec[k].offset;
    l->run[l->nrun].len = (uint16_t)(kind == GK_FIELD_BOOL ? 0 : n);
    l->nrun++;
  }
  return 0;
}

/* Copies len (1..65535) bytes without reading or writing past either end:
 * two overlapping 16-byte moves for 16..32 bytes (an 18-byte enemy
 * record), a loop of them above, then 8, 4, 2 and 1 for shorter runs. */
static inline void copy_run(uint8_t *d, const uint8_t *s, size_t len) {
  if (len >= 16) {
    for (size_t k = 16; k + 16 < len; k += 16) memcpy(d + k, s + k, 16);
    memcpy(d, s, 16);
    memcpy(d + len - 16, s + len - 16, 16);
  } else if (len >= 8) {
    memcpy(d, s, 8);
    memcpy(d + len - 8, s + len - 8, 8);
  } else if (len >= 4) {
    memcpy(d, s, 4);
    memcpy(d + len - 4, s + len - 4, 4);
  } else if (len >= 2) {
    memcpy(d, s, 2);
    d[len - 1] = s[len - 1];
  } else {
    d[0] = s[0];
  }
}

/* Bytes past a record's end that copy_records may read (the array goes
 * on past a `safe` record) and past the records it may write (the stage
 * keeps this much room). */
#define LIST_SLACK 32

/* Copies `count` records' runs to p (room for them and LIST_SLACK more)
 * and returns the end. The first `safe` records take fixed 16- and 32-byte
 * moves, whose excess the next run overwrites: a BOOL or a short run costs
 * one move, an enemy (18 canonical bytes at the front of a 20-byte struct,
 * a record of one run) two. The rest are copied exactly. */
static uint8_t *copy_records(uint8_t *p, const gk_field_list *l,
                             const uint8_t *rec, size_t stride, size_t count,
                             size_t safe) {
  size_t nrun = l->nrun, i = 0;
  if (nrun == 1 && l->run[0].len != 0) {
    const uint8_t *src = rec + l->run[0].src;
    size_t len = l->run[0].len;
    if (len <= LIST_SLACK) /* up to 32 bytes: two moves */
      for (; i < safe && i < count; i++, src += stride, p += len) {
        memcpy(p, src, 16);
        memcpy(p + 16, src + 16, 16);
      }
    for (; i < count; i++, src += stride, p += len) copy_run(p, src, len);
    return p;
  }
  for (; i < safe && i < count; i++, rec += stride) {
    for (size_t r = 0; r < nrun; r++) {
      size_t len = l->run[r].len;
      const uint8_t *s = rec + l->run[r].src;
      memcpy(p, s, 16);
      if (len == 0) { /* a BOOL: 0 or 1 */
        *p = *s != 0;
        len = 1;
      } else if (len > 16) {
        copy_run(p + 16, s + 16, len - 16);
      }
      p += len;
    }
  }
  for (; i < count; i++, rec += stride) {
    for (size_t r = 0; r < nrun; r++) {
      size_t len = l->run[r].len;
      const uint8_t *s = rec + l->run[r].src;
      if (len == 0) {
        *p++ = *s != 0;
      } else {
        copy_run(p, s, len);
        p += len;
      }
    }
  }
  return p;
}

void gk_write_list(gk_writer *w, const char *name, const gk_field_list *l,
                   const void *base, size_t stride, size_t count) {
  const uint8_t *b = (const uint8_t *)base;
  if (count == 0 || l->width == 0) return; /* nothing, or an unplanned list */
  int little = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  little = 1;
#endif
  size_t width = l->width;
  if (w->field != NULL || !little || width + LIST_SLACK > w->cap) {
    list_fields(w, name, l->spec, l->nspec, b, stride, count);
    return;
  }
  if (l->nrun == 1 && l->run[0].src == 0 &&
      l->run[0].len == stride) { /* the array is its bytes */
    gk__writer_bytes(w, b, stride * count);
    return;
  }
  w->total += width * count;
  /* the records with LIST_SLACK bytes of the array after their end */
  size_t tail = stride > 0 ? (LIST_SLACK + stride - 1) / stride : count;
  size_t safe = count > tail ? count - tail : 0;
  while (count > 0) {
    /* as many whole records as the stage has room for, then flush */
    size_t room = w->cap - w->len;
    size_t fit = room >= LIST_SLACK ? (room - LIST_SLACK) / width : 0;
    if (fit == 0) {
      gk_writer_flush(w);
      continue;
    }
    if (fit > count) fit = count;
    uint8_t *end = copy_records(w->buf + w->len, l, b, stride, fit, safe);
    w->len = (size_t)(end - w->buf);
    b += fit * stride;
    count -= fit;
    safe = safe > fit ? safe - fit : 0;
  }
}

/* --- XXH3 sink ----------------------------------------------------------- */

/* The XXH3 state is reset on the first flush after gk_hasher_reset, so a
 * state that fits the stage (hashed in one call by digest) never pays for
 * the streaming state. */
static void hasher_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
  gk_hasher *h = (gk_hasher *)w;
  if (!h->started) {
    XXH3_64bits_reset((XXH3_state_t *)w->data);
    h->started = 1;
  }
  XXH3_64bits_update((XXH3_state_t *)w->data, bytes, len);
}

int gk_hasher_init(gk_hasher *h) {
  memset(&h->w, 0, sizeof h->w);
  h->xxh = XXH3_createState();
  if (h->xxh == NULL) return GK_ENOMEM;
  h->w.buf = h->stage;
  h->w.cap = sizeof h->stage;
  h->w.flush = hasher_flush;
  h->w.data = h->xxh;
  h->w.hashing = 1;
  gk_hasher_reset(h);
  return 0;
}

void gk_hasher_close(gk_hasher *h) {
  XXH3_freeState((XXH3_state_t *)h->xxh);
  h->xxh = NULL;
}

void gk_hasher_reset(gk_hasher *h) {
  h->started = 0;
  h->w.len = 0;
  h->w.total = 0;
  h->w.err = 0;
}

uint64_t gk_hasher_digest(gk_hasher *h) {
  /* XXH3 gives the same digest for one-shot and streamed input, so a state
   * that fits the stage is hashed in one call (the common small case). */
  if (h->w.total == h->w.len) {
    uint64_t d = XXH3_64bits(h->w.buf, h->w.len);
    return d;
  }
  gk_writer_flush(&h->w);
  return XXH3_64bits_digest((XXH3_state_t *)h->xxh);
}

uint64_t gk_hash_bytes(const void *bytes, size_t len) {
  return XXH3_64bits(bytes, len);
}

/* --- memory sink --------------------------------------------------------- */

static void buf_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
  gk_buf_writer *b = (gk_buf_writer *)w;
  if (w->err != 0) return;
  if (b->cap - b->len < len) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap - b->len < len) {
      if (cap > SIZE_MAX / 2) {
        w->err = GK_ENOMEM;
        return;
      }
      cap *= 2;
    }
    uint8_t *p = realloc(b->bytes, cap);
    if (p == NULL) {
      w->err = GK_ENOMEM;
      return;
    }
    b->bytes = p;
    b->cap = cap;
  }
  memcpy(b->bytes + b->len, bytes, len);
  b->len += len;
}

void gk_buf_writer_init(gk_buf_writer *b) {
  memset(b, 0, sizeof *b);
  b->w.buf = b->stage;
  b->w.cap = sizeof b->stage;
  b->w.flush = buf_flush;
}

void gk_buf_writer_close(gk_buf_writer *b) {
  free(b->bytes);
  b->bytes = NULL;
  b->len = b->cap = 0;
}

uint8_t *gk_buf_writer_take(gk_buf_writer *b, size_t *len) {
  gk_writer_flush(&b->w);
  uint8_t *p = b->bytes;
  *len = b->len;
  if (b->w.err != 0) {
    free(p);
    p = NULL;
    *len = 0;
  }
  b->bytes = NULL;
  b->len = b->cap = 0;
  b->w.total = 0;
  return p;
}

/* --- reader -------------------------------------------------------------- */

void gk_reader_init(gk_reader *r, const void *bytes, size_t len) {
  r->p = (const uint8_t *)bytes;
  r->len = bytes != NULL ? len : 0;
  r->pos = 0;
  r->err = 0;
}

/* Claims n bytes; NULL (and ETRUNC, once) if fewer remain or err is set. */
static const uint8_t *take(gk_reader *r, size_t n) {
  if (r->err != 0) return NULL;
  if (r->len - r->pos < n) {
    r->err = GK_ETRUNC;
    return NULL;
  }
  const uint8_t *p = r->p + r->pos;
  r->pos += n;
  return p;
}

static uint64_t read_le(gk_reader *r, unsigned n) {
  const uint8_t *p = take(r, n);
  return p != NULL ? gk_load_le(p, n) : 0;
}

uint8_t gk_read_u8(gk_reader *r) {
  return (uint8_t)read_le(r, 1);
}
uint16_t gk_read_u16(gk_reader *r) {
  return (uint16_t)read_le(r, 2);
}
uint32_t gk_read_u32(gk_reader *r) {
  return (uint32_t)read_le(r, 4);
}
uint64_t gk_read_u64(gk_reader *r) {
  return read_le(r, 8);
}
/* Unsigned-to-signed conversion is implementation-defined in C11; every
 * compiler we target wraps (two's complement), which is what we want. */
int8_t gk_read_i8(gk_reader *r) {
  return (int8_t)read_le(r, 1);
}
int16_t gk_read_i16(gk_reader *r) {
  return (int16_t)read_le(r, 2);
}
int32_t gk_read_i32(gk_reader *r) {
  return (int32_t)read_le(r, 4);
}
int64_t gk_read_i64(gk_reader *r) {
  return (int64_t)read_le(r, 8);
}

int gk_read_bool(gk_reader *r) {
  uint8_t b = gk_read_u8(r);
  if (b > 1) {
    gk_reader_fail(r, GK_ERANGE);
    return 0;
  }
  return b;
}

int gk_read_bytes(gk_reader *r, void *out, size_t len) {
  const uint8_t *p = take(r, len);
  if (p == NULL) {
    if (len > 0) memset(out, 0, len);
    return r->err;
  }
  if (len > 0) memcpy(out, p, len);
  return 0;
}

size_t gk_reader_left(const gk_reader *r) {
  return r->len - r->pos;
}

int gk_reader_fail(gk_reader *r, int err) {
  if (r->err == 0) r->err = err;
  return r->err;
}
