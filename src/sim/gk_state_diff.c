/* gk_state_diff.c: field-by-field difference of two canonical states (see
 * gk_state_diff.h). Each side is read back, written again through a field
 * callback that records (path, kind, value or bytes) into one growing
 * arena, and the fields are matched by path through an open-addressing
 * table over B. */
#include "gk_state_diff.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

typedef struct rec {
  uint64_t h;         /* FNV-1a of the path */
  uint64_t value;     /* integer kinds */
  size_t path;        /* offset of the NUL-terminated path in the arena */
  size_t bytes;       /* BYTES: offset of the bytes in the arena */
  size_t len;         /* BYTES: length */
  gk_field_kind kind; /* never BEGIN or END */
  int matched;
} rec;

typedef struct side {
  gk_writer w; /* must be first */
  gk_path path;
  rec *recs;
  size_t n, cap;
  uint8_t *arena;
  size_t used, room;
  int oom;
} side;

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *q = realloc(*p, c * size);
  if (q == NULL) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static int arena_put(side *s, const void *bytes, size_t len, size_t *at) {
  if (grow((void **)&s->arena, &s->room, s->used + len, 1) != 0) return -1;
  if (len > 0) memcpy(s->arena + s->used, bytes, len);
  *at = s->used;
  s->used += len;
  return 0;
}

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static void record(gk_writer *w, gk_field_kind kind, const char *name,
                   uint64_t value, const uint8_t *bytes, size_t len) {
  side *s = (side *)w;
  if (!gk_path_feed(&s->path, kind, name, value, len) || s->oom) return;
  size_t at;
  if (kind == GK_FIELD_BYTES && s->path.offset > 0 && s->n > 0) {
    /* the later piece of the previous field: its bytes follow on */
    if (arena_put(s, bytes, len, &at) != 0) s->oom = 1;
    s->recs[s->n - 1].len += len;
    return;
  }
  if (grow((void **)&s->recs, &s->cap, s->n + 1, sizeof(rec)) != 0 ||
      arena_put(s, s->path.text, strlen(s->path.text) + 1, &at) != 0) {
    s->oom = 1;
    return;
  }
  rec *r = &s->recs[s->n++];
  memset(r, 0, sizeof *r);
  r->path = at;
  r->h = fnv(s->path.text);
  r->kind = kind;
  r->value = value;
  if (kind == GK_FIELD_BYTES) {
    r->len = len;
    if (arena_put(s, bytes, len, &r->bytes) != 0) s->oom = 1;
  }
}

static void side_free(side *s) {
  free(s->recs);
  free(s->arena);
}

/* Reads one side back and records its fields. */
static int side_load(side *s, int which, const gk_sim *sim, const void *cfg,
                     const void *bytes, size_t len, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  gk_path_init(&s->path);
  s->w.field = record;
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  char msg[GK_ERRMSG_MAX] = "";
  void *st = sim->read_state(cfg, &r, msg, sizeof msg);
  if (st == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "%c: unreadable state: %s", which,
                   msg[0] ? msg : "read_state failed");
  size_t left = gk_reader_left(&r);
  if (left > 0) {
    sim->destroy(st);
    return gk_errf(err, errlen, GK_EINVAL,
                   "%c: unreadable state: %zu bytes after the end", which,
                   left);
  }
  sim->write_state(st, &s->w);
  sim->destroy(st);
  if (s->oom) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  return 0;
}

static void add(gk_state_diff *d, const char *path, const char *suffix,
                gk_field_kind kind, gk_diff_side sd, uint64_t a, uint64_t b) {
  d->total++;
  if (d->count >= d->cap) return;
  gk_diff_field *f = &d->fields[d->count++];
  snprintf(f->path, sizeof f->path, "%s%s", path, suffix);
  f->kind = kind;
  f->side = sd;
  f->a = sd == GK_DIFF_ONLY_B ? 0 : a;
  f->b = sd == GK_DIFF_ONLY_A ? 0 : b;
}

/* A BYTES field byte by byte; x or y may be NULL (that side lacks it). */
static void diff_bytes(gk_state_diff *d, const char *path, const uint8_t *x,
                       size_t xl, const uint8_t *y, size_t yl) {
  size_t n = xl > yl ? xl : yl;
  for (size_t i = 0; i < n; i++) {
    int hx = x != NULL && i < xl, hy = y != NULL && i < yl;
    if (hx && hy && x[i] == y[i]) continue;
    char idx[24];
    snprintf(idx, sizeof idx, "[%zu]", i);
    gk_diff_side sd = hx && hy ? GK_DIFF_BOTH
                      : hx     ? GK_DIFF_ONLY_A
                               : GK_DIFF_ONLY_B;
    add(d, path, idx, GK_FIELD_U8, sd, hx ? x[i] : 0, hy ? y[i] : 0);
  }
}

static void one_sided(gk_state_diff *d, const side *s, const rec *r,
                      gk_diff_side sd) {
  const char *path = (const char *)s->arena + r->path;
  const uint8_t *bytes = s->arena + r->bytes;
  if (r->kind == GK_FIELD_BYTES) {
    if (sd == GK_DIFF_ONLY_A)
      diff_bytes(d, path, bytes, r->len, NULL, 0);
    else
      diff_bytes(d, path, NULL, 0, bytes, r->len);
    return;
  }
  add(d, path, "", r->kind, sd, r->value, r->value);
}

static int match(gk_state_diff *d, side *a, side *b) {
  size_t size = 16;
  while (size < b->n * 2) size *= 2;
  uint32_t *tab = malloc(size * sizeof *tab);
  if (tab == NULL) return GK_ENOMEM;
  memset(tab, 0xff, size * sizeof *tab);
  for (size_t i = 0; i < b->n; i++) {
    size_t k = b->recs[i].h & (size - 1);
    while (tab[k] != UINT32_MAX) k = (k + 1) & (size - 1);
    tab[k] = (uint32_t)i;
  }
  for (size_t i = 0; i < a->n; i++) {
    const rec *x = &a->recs[i];
    const char *path = (const char *)a->arena + x->path;
    rec *y = NULL;
    for (size_t k = x->h & (size - 1); tab[k] != UINT32_MAX;
         k = (k + 1) & (size - 1)) {
      rec *c = &b->recs[tab[k]];
      if (c->h == x->h && !c->matched &&
          strcmp((const char *)b->arena + c->path, path) == 0) {
        y = c;
        break;
      }
    }
    if (y == NULL) {
      one_sided(d, a, x, GK_DIFF_ONLY_A);
      continue;
    }
    y->matched = 1;
    if (x->kind == GK_FIELD_BYTES || y->kind == GK_FIELD_BYTES)
      diff_bytes(d, path, a->arena + x->bytes, x->len, b->arena + y->bytes,
                 y->len);
    else if (x->value != y->value)
      add(d, path, "", x->kind, GK_DIFF_BOTH, x->value, y->value);
  }
  for (size_t i = 0; i < b->n; i++)
    if (!b->recs[i].matched) one_sided(d, b, &b->recs[i], GK_DIFF_ONLY_B);
  free(tab);
  return 0;
}

void gk_state_diff_init(gk_state_diff *d, gk_diff_field *fields, uint32_t cap) {
  memset(d, 0, sizeof *d);
  d->fields = fields;
  d->cap = fields != NULL ? cap : 0;
  d->first_byte = UINT64_MAX;
}

int gk_state_diff_run(gk_state_diff *d, const gk_sim *sim, const void *cfg,
                      const void *a, size_t alen, const void *b, size_t blen,
                      char *err, size_t errlen) {
  d->count = 0;
  d->total = d->fields_a = d->fields_b = 0;
  d->unreadable = 0;
  d->first_byte = UINT64_MAX;
  const uint8_t *x = a, *y = b;
  size_t n = alen < blen ? alen : blen;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) {
      d->first_byte = i;
      break;
    }
  if (d->first_byte == UINT64_MAX && alen != blen) d->first_byte = n;
  side sa, sb;
  int rc = side_load(&sa, 'a', sim, cfg, a, alen, err, errlen);
  if (rc == GK_EINVAL) d->unreadable = 'a';
  if (rc == 0) {
    rc = side_load(&sb, 'b', sim, cfg, b, blen, err, errlen);
    if (rc == GK_EINVAL) d->unreadable = 'b';
    if (rc == 0) {
      d->fields_a = sa.n;
      d->fields_b = sb.n;
      rc = match(d, &sa, &sb);
      if (rc != 0) gk_errf(err, errlen, rc, "out of memory");
    }
    side_free(&sb);
  }
  side_free(&sa);
  return rc;
}

const char *gk_field_value_text(gk_field_kind kind, uint64_t value, char *buf,
                                size_t n) {
  if (kind == GK_FIELD_BOOL)
    snprintf(buf, n, "%s", value ? "true" : "false");
  else if (kind >= GK_FIELD_I8 && kind <= GK_FIELD_I64)
    snprintf(buf, n, "%" PRId64, (int64_t)value);
  else
    snprintf(buf, n, "%" PRIu64, value);
  return buf;
}

/* snprintf-style appender. */
typedef struct sbuf {
  char *buf;
  size_t n, len;
} sbuf;

static void put(sbuf *o, const char *fmt, ...) GK_PRINTF(2, 3);

static void put(sbuf *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = o->len < o->n ? o->n - o->len : 0;
  int k = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
  va_end(ap);
  if (k > 0) o->len += (size_t)k;
}

size_t gk_state_diff_text(const gk_state_diff *d, char *buf, size_t n) {
  sbuf o = {buf, n, 0};
  if (n > 0) buf[0] = '\0';
  for (uint32_t i = 0; i < d->count; i++) {
    const gk_diff_field *f = &d->fields[i];
    char a[24], b[24];
    put(&o, "%s: %s != %s\n", f->path,
        f->side == GK_DIFF_ONLY_B ? "(none)"
                                  : gk_field_value_text(f->kind, f->a, a, 24),
        f->side == GK_DIFF_ONLY_A ? "(none)"
                                  : gk_field_value_text(f->kind, f->b, b, 24));
  }
  if (d->total > d->count)
    put(&o, "(and %" PRIu64 " more)\n", d->total - d->count);
  put(&o, "%" PRIu64 " field%s differ%s\n", d->total, d->total == 1 ? "" : "s",
      d->total == 1 ? "s" : "");
  return o.len;
}

static void json_value(sbuf *o, const gk_diff_field *f, uint64_t v) {
  int neg = f->kind >= GK_FIELD_I8 && f->kind <= GK_FIELD_I64;
  char t[24];
  gk_field_value_text(f->kind, v, t, sizeof t);
  uint64_t mag = neg && (int64_t)v < 0 ? (uint64_t)0 - v : v;
  if (f->kind != GK_FIELD_BOOL && mag > (1ull << 53))
    put(o, "\"%s\"", t);
  else
    put(o, "%s", t);
}

size_t gk_state_diff_json(const gk_state_diff *d, char *buf, size_t n) {
  sbuf o = {buf, n, 0};
  if (n > 0) buf[0] = '\0';
  put(&o, "{\"total\":%" PRIu64 ",\"first_byte\":", d->total);
  if (d->first_byte == UINT64_MAX)
    put(&o, "null");
  else
    put(&o, "%" PRIu64, d->first_byte);
  put(&o, ",\"fields\":[");
  for (uint32_t i = 0; i < d->count; i++) {
    const gk_diff_field *f = &d->fields[i];
    /* paths are names, digits and []. from the genre's own string
     * literals; escape the two characters JSON requires anyway */
    put(&o, "%s{\"path\":\"", i ? "," : "");
    for (const char *c = f->path; *c; c++)
      if (*c == '"' || *c == '\\')
        put(&o, "\\%c", *c);
      else if ((unsigned char)*c < 0x20)
        put(&o, "\\u%04x", (unsigned)(unsigned char)*c);
      else
        put(&o, "%c", *c);
    put(&o, "\",\"a\":");
    if (f->side == GK_DIFF_ONLY_B)
      put(&o, "null");
    else
      json_value(&o, f, f->a);
    put(&o, ",\"b\":");
    if (f->side == GK_DIFF_ONLY_A)
      put(&o, "null");
    else
      json_value(&o, f, f->b);
    put(&o, "}");
  }
  put(&o, "]}");
  return o.len;
}

/* --- one field by path ---------------------------------------------------- */

typedef struct finder {
  gk_writer w; /* must be first */
  gk_path path;
  const char *want;
  size_t want_len;
  int found;
  size_t offset;
  gk_field_kind kind;
  unsigned width;
} finder;

static void find_cb(gk_writer *w, gk_field_kind kind, const char *name,
                    uint64_t value, const uint8_t *bytes, size_t len) {
  finder *f = (finder *)w;
  (void)bytes;
  if (!gk_path_feed(&f->path, kind, name, value, len) || f->found) return;
  static const uint8_t widths[] = {1, 2, 4, 8, 1, 2, 4, 8, 1};
  const char *p = f->path.text;
  size_t n = strlen(p);
  if (kind != GK_FIELD_BYTES) {
    if (strcmp(p, f->want) == 0) {
      f->found = 1;
      f->kind = kind;
      f->width = widths[kind];
      f->offset = (size_t)w->total - f->width;
    }
    return;
  }
  /* want is "path[i]" with i in this piece of the field */
  if (f->want_len <= n + 2 || strncmp(p, f->want, n) != 0 ||
      f->want[n] != '[' || f->want[f->want_len - 1] != ']')
    return;
  uint64_t i = 0;
  for (size_t k = n + 1; k + 1 < f->want_len; k++) {
    char c = f->want[k];
    if (c < '0' || c > '9' || i > UINT32_MAX) return;
    i = i * 10 + (uint64_t)(c - '0');
  }
  if (i >= f->path.offset && i < f->path.offset + len) {
    f->found = 1;
    f->kind = GK_FIELD_U8;
    f->width = 1;
    f->offset = (size_t)w->total - len + (size_t)(i - f->path.offset);
  }
}

int gk_state_field_at(const gk_sim *sim, const void *state, const char *path,
                      size_t *offset, gk_field_kind *kind, unsigned *width) {
  finder f;
  memset(&f, 0, sizeof f);
  f.w.field = find_cb;
  gk_path_init(&f.path);
  f.want = path;
  f.want_len = strlen(path);
  sim->write_state(state, &f.w);
  if (!f.found) return GK_ENOTFOUND;
  if (offset != NULL) *offset = f.offset;
  if (kind != NULL) *kind = f.kind;
  if (width != NULL) *width = f.width;
  return 0;
}

int gk_state_patch_add(const gk_sim *sim, const void *cfg, const void *state,
                       const char *path, int64_t delta, void **out, char *err,
                       size_t errlen) {
  *out = NULL;
  size_t off = 0;
  gk_field_kind kind;
  unsigned width = 0;
  if (gk_state_field_at(sim, state, path, &off, &kind, &width) != 0)
    return gk_errf(err, errlen, GK_ENOTFOUND, "%s: no field '%s'", sim->name,
                   path);
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(state, &b.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&b, &len);
  if (bytes == NULL || off + width > len) {
    free(bytes);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  uint64_t v = gk_load_le(bytes + off, width);
  v = kind == GK_FIELD_BOOL ? (v ^ ((uint64_t)delta & 1u))
                            : v + (uint64_t)delta;
  gk_store_le(bytes + off, v, width);
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  char msg[GK_ERRMSG_MAX] = "";
  *out = sim->read_state(cfg, &r, msg, sizeof msg);
  free(bytes);
  if (*out == NULL)
    return gk_errf(err, errlen, r.err ? r.err : GK_EINVAL,
                   "%s: the patched state does not read back: %s", sim->name,
                   msg);
  return 0;
}
