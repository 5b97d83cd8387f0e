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

void gk__writer_field(gk_writer *w, gk_field_kind kind, const char *name,
                      uint64_t value, const uint8_t *bytes, size_t len) {
  static const uint8_t widths[] = {
      [GK_FIELD_U8] = 1,  [GK_FIELD_U16] = 2, [GK_FIELD_U32] = 4,
      [GK_FIELD_U64] = 8, [GK_FIELD_I8] = 1,  [GK_FIELD_I16] = 2,
      [GK_FIELD_I32] = 4, [GK_FIELD_I64] = 8, [GK_FIELD_BOOL] = 1,
  };
  if (kind <= GK_FIELD_BOOL) {
    unsigned n = widths[kind];
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

/* --- XXH3 sink ----------------------------------------------------------- */

static void hasher_flush(gk_writer *w, const uint8_t *bytes, size_t len) {
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
  gk_hasher_reset(h);
  return 0;
}

void gk_hasher_close(gk_hasher *h) {
  XXH3_freeState((XXH3_state_t *)h->xxh);
  h->xxh = NULL;
}

void gk_hasher_reset(gk_hasher *h) {
  XXH3_64bits_reset((XXH3_state_t *)h->xxh);
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
