/* gk_replay.c: the .gkr format (see gk_replay.h and tools/replay/FORMAT.md).
 *
 * Three parts. The writer serializes the header with cJSON, stages steps
 * in one block buffer and emits whole blocks (each closed by XXH3-64 over
 * its bytes) to a file descriptor or to memory. The reader walks the bytes
 * once with a gk_reader per block, checks everything, builds an index of
 * steps blocks (offset, first step, count) and stops at the first damage,
 * keeping what came before it. The verifier feeds the indexed steps to
 * gk_loop through gk_replay_input and compares hashes.
 */
#include "gk_replay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_config.h"
#include "gk_genres.h"

static const uint8_t magic[8] = {0x89, 'G', 'K', 'R', '\r', '\n', 0x1a, '\n'};

#define BLOCK_HEAD 12      /* type, 0, 0 (u16), seq (u32), length (u32) */
#define STEPS_HEAD 16      /* first step (u64), count (u32), entry size (u32) */
#define ENTRY_HEAD 16      /* hash (u64), active mask (u32), flags (u32) */
#define FOOTER_SIZE 16     /* step count (u64), final hash (u64) */
#define KNOWN_FLAGS ((uint32_t)GK_STEP_MATCH_END)

static void put_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

/* Fixed-width loads, written out so compilers emit one load each: they are
 * on the verify path twice per step. */
static inline uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t get_le(const uint8_t *p, unsigned n) {
  switch (n) {
  case 8:
    return le64(p);
  case 4:
    return le32(p);
  case 2:
    return (uint64_t)p[0] | (uint64_t)p[1] << 8;
  default:
    return p[0];
  }
}

static uint32_t all_players(uint32_t players) {
  return players >= 32 ? UINT32_MAX : ((uint32_t)1 << players) - 1;
}

/* True if every record of an inactive player is all zero. */
static int inactive_zero(const uint8_t *records, uint32_t players,
                         uint32_t input_size, uint32_t mask) {
  for (uint32_t p = 0; p < players; p++) {
    if (mask & ((uint32_t)1 << p))
      continue;
    const uint8_t *rec = records + (size_t)p * input_size;
    for (uint32_t i = 0; i < input_size; i++)
      if (rec[i] != 0)
        return 0;
  }
  return 1;
}

/* ===================================================================== */
/* writer                                                                  */

static int sink(gk_replay_writer *w, const uint8_t *bytes, size_t len) {
  if (w->err != 0)
    return w->err;
  if (w->memory) {
    if (w->mem_cap - w->mem_len < len) {
      size_t cap = w->mem_cap ? w->mem_cap : 4096;
      while (cap - w->mem_len < len)
        cap *= 2;
      uint8_t *p = realloc(w->mem, cap);
      if (p == NULL)
        return w->err = GK_ENOMEM;
      w->mem = p;
      w->mem_cap = cap;
    }
    memcpy(w->mem + w->mem_len, bytes, len);
    w->mem_len += len;
  } else {
    size_t done = 0;
    while (done < len) {
      ssize_t n = write(w->fd, bytes + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return w->err = GK_EIO;
      done += (size_t)n;
    }
  }
  w->offset += len;
  return 0;
}

/* Emits one block: `buf` holds BLOCK_HEAD bytes of room, then the payload,
 * then 8 bytes of room for the checksum. */
static int emit_block(gk_replay_writer *w, uint8_t type, uint8_t *buf,
                      size_t payload) {
  buf[0] = type;
  buf[1] = 0;
  put_le(buf + 2, 0, 2);
  put_le(buf + 4, w->seq, 4);
  put_le(buf + 8, payload, 4);
  put_le(buf + BLOCK_HEAD + payload,
         gk_hash_bytes(buf, BLOCK_HEAD + payload), 8);
  int rc = sink(w, buf, BLOCK_HEAD + payload + 8);
  if (rc == 0)
    w->seq++;
  return rc;
}

static char *build_header(const gk_replay_meta *m, char *err, size_t errlen) {
  cJSON *h = cJSON_CreateObject();
  cJSON *cfg = gk_config_to_json(m->sim, m->cfg);
  char seed[24];
  snprintf(seed, sizeof seed, "%" PRIu64, m->seed);
  cJSON *ratio = cJSON_CreateArray();
  int ok = h != NULL && cfg != NULL && ratio != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "format", GK_REPLAY_FORMAT) != NULL;
  ok = ok && cJSON_AddStringToObject(h, "genre", m->sim->name) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "genre_version",
                                     m->sim->version) != NULL;
  ok = ok && cJSON_AddStringToObject(h, "seed", seed) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "players", m->players) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "input_size",
                                     m->sim->input_size) != NULL;
  if (ok) {
    cJSON_AddItemToArray(ratio,
                         cJSON_CreateNumber(m->sim->step_seconds.num));
    cJSON_AddItemToArray(ratio,
                         cJSON_CreateNumber(m->sim->step_seconds.den));
    ok = cJSON_AddItemToObject(h, "step_seconds", ratio);
    if (ok)
      ratio = NULL;
  }
  if (ok) {
    ok = cJSON_AddItemToObject(h, "config", cfg);
    if (ok)
      cfg = NULL;
  }
  if (ok && m->origin != NULL)
    ok = cJSON_AddStringToObject(h, "origin", m->origin) != NULL;
  char *text = ok ? cJSON_PrintUnformatted(h) : NULL;
  cJSON_Delete(h);
  cJSON_Delete(cfg);
  cJSON_Delete(ratio);
  if (text == NULL)
    gk_errf(err, errlen, GK_ENOMEM,
            "replay header: cannot serialize the config (out of memory or "
            "an integer beyond 2^53)");
  return text;
}

static int writer_start(gk_replay_writer *w, const gk_replay_meta *m,
                        char *err, size_t errlen) {
  const gk_sim *sim = m->sim;
  if (m->players < sim->players_min || m->players > sim->players_max ||
      m->players > GK_PLAYERS_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "replay: %" PRIu32 " players, %s takes %" PRIu32
                   "..%" PRIu32,
                   m->players, sim->name, sim->players_min,
                   sim->players_max);
  if (sim->input_size < 1 || sim->input_size > GK_INPUT_SIZE_MAX)
    return gk_errf(err, errlen, GK_EINVAL, "replay: bad input size");
  w->players = m->players;
  w->input_size = sim->input_size;
  w->entry_size = ENTRY_HEAD + m->players * sim->input_size;
  w->block_steps = GK_REPLAY_BLOCK_STEPS;
  w->block_cap = BLOCK_HEAD + STEPS_HEAD +
                 (size_t)GK_REPLAY_BLOCK_STEPS_MAX * w->entry_size + 8;
  w->block = malloc(w->block_cap);
  char *text = build_header(m, err, errlen);
  if (w->block == NULL || text == NULL) {
    free(text);
    return text == NULL ? GK_ENOMEM
                        : gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  size_t tlen = strlen(text);
  if (tlen > GK_REPLAY_HEADER_MAX) {
    free(text);
    return gk_errf(err, errlen, GK_ETOOBIG,
                   "replay header: %zu bytes, the limit is %u", tlen,
                   GK_REPLAY_HEADER_MAX);
  }
  uint8_t pre[GK_REPLAY_PREAMBLE_SIZE];
  memcpy(pre, magic, 8);
  put_le(pre + 8, GK_REPLAY_FORMAT, 4);
  put_le(pre + 12, 0, 4);
  uint8_t *hb = malloc(BLOCK_HEAD + tlen + 8);
  int rc = hb == NULL ? GK_ENOMEM : sink(w, pre, sizeof pre);
  if (rc == 0) {
    memcpy(hb + BLOCK_HEAD, text, tlen);
    rc = emit_block(w, GK_REPLAY_BLOCK_HEADER, hb, tlen);
  }
  free(hb);
  free(text);
  if (rc != 0)
    return gk_errf(err, errlen, rc, "replay: writing the header: %s",
                   gk_strerror(rc));
  w->open = 1;
  return 0;
}

static int meta_ok(const gk_replay_meta *m, char *err, size_t errlen) {
  if (m == NULL || m->sim == NULL || m->cfg == NULL || m->sim->name == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "replay: no genre or config");
  return 0;
}

static void writer_zero(gk_replay_writer *w) {
  memset(w, 0, sizeof *w);
  w->fd = -1;
}

int gk_replay_writer_open_mem(gk_replay_writer *w, const gk_replay_meta *meta,
                              char *err, size_t errlen) {
  writer_zero(w);
  int rc = meta_ok(meta, err, errlen);
  if (rc != 0)
    return rc;
  w->memory = 1;
  rc = writer_start(w, meta, err, errlen);
  if (rc != 0)
    gk_replay_writer_abort(w);
  return rc;
}

int gk_replay_writer_open(gk_replay_writer *w, const char *path,
                          const gk_replay_meta *meta, char *err,
                          size_t errlen) {
  writer_zero(w);
  int rc = meta_ok(meta, err, errlen);
  if (rc != 0)
    return rc;
  size_t n = path != NULL ? strlen(path) : 0;
  size_t ext = strlen(GK_REPLAY_EXT);
  if (n <= ext || strcmp(path + n - ext, GK_REPLAY_EXT) != 0)
    return gk_errf(err, errlen, GK_EINVAL,
                   "replay: output name '%s' must end in %s",
                   path != NULL ? path : "", GK_REPLAY_EXT);
  w->path = malloc(n + 1);
  w->tmp_path = malloc(n + 5);
  if (w->path == NULL || w->tmp_path == NULL) {
    gk_replay_writer_abort(w);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  memcpy(w->path, path, n + 1);
  memcpy(w->tmp_path, path, n);
  memcpy(w->tmp_path + n, ".tmp", 5);
  w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd < 0) {
    rc = gk_errf(err, errlen, GK_EIO, "replay: cannot create '%s': %s",
                 w->tmp_path, strerror(errno));
    free(w->path);
    free(w->tmp_path);
    writer_zero(w);
    return rc;
  }
  rc = writer_start(w, meta, err, errlen);
  if (rc != 0)
    gk_replay_writer_abort(w);
  return rc;
}

int gk_replay_writer_flush(gk_replay_writer *w) {
  if (!w->open)
    return GK_ESTATE;
  if (w->err != 0)
    return w->err;
  if (w->block_count == 0)
    return 0;
  uint8_t *p = w->block + BLOCK_HEAD;
  put_le(p, w->steps - w->block_count, 8);
  put_le(p + 8, w->block_count, 4);
  put_le(p + 12, w->entry_size, 4);
  size_t payload = STEPS_HEAD + (size_t)w->block_count * w->entry_size;
  int rc = emit_block(w, GK_REPLAY_BLOCK_STEPS_T, w->block, payload);
  w->block_count = 0;
  return rc;
}

int gk_replay_writer_append(gk_replay_writer *w, const gk_step_input *in,
                            uint64_t hash) {
  if (!w->open)
    return GK_ESTATE;
  if (w->err != 0)
    return w->err;
  if (in == NULL || in->step != w->steps || in->players != w->players ||
      (in->active_mask & ~all_players(w->players)) != 0 ||
      (in->flags & ~KNOWN_FLAGS) != 0 || in->inputs == NULL ||
      !inactive_zero(in->inputs, w->players, w->input_size, in->active_mask))
    return GK_EINVAL;
  if (w->block_steps < 1 || w->block_steps > GK_REPLAY_BLOCK_STEPS_MAX)
    w->block_steps = GK_REPLAY_BLOCK_STEPS;
  uint8_t *e = w->block + BLOCK_HEAD + STEPS_HEAD +
               (size_t)w->block_count * w->entry_size;
  put_le(e, hash, 8);
  put_le(e + 8, in->active_mask, 4);
  put_le(e + 12, in->flags, 4);
  memcpy(e + ENTRY_HEAD, in->inputs, (size_t)w->players * w->input_size);
  w->block_count++;
  w->steps++;
  w->last_hash = hash;
  if (w->block_count >= w->block_steps)
    return gk_replay_writer_flush(w);
  return 0;
}

static void writer_release(gk_replay_writer *w) {
  if (w->fd >= 0)
    close(w->fd);
  w->fd = -1;
  free(w->path);
  free(w->tmp_path);
  free(w->block);
  w->path = w->tmp_path = NULL;
  w->block = NULL;
  w->open = 0;
}

/* fsync the directory holding `path`, so the rename survives a crash. */
static void sync_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (slash == NULL) {
    dir[0] = '.';
    dir[1] = '\0';
  } else {
    size_t n = (size_t)(slash - path);
    if (n == 0)
      n = 1;
    if (n >= sizeof dir)
      return;
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  int fd = open(dir, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

int gk_replay_writer_finish(gk_replay_writer *w, char *err, size_t errlen) {
  if (!w->open)
    return gk_errf(err, errlen, GK_ESTATE, "replay: writer is not open");
  int rc = gk_replay_writer_flush(w);
  if (rc == 0) {
    uint8_t fb[BLOCK_HEAD + FOOTER_SIZE + 8];
    put_le(fb + BLOCK_HEAD, w->steps, 8);
    put_le(fb + BLOCK_HEAD + 8, w->last_hash, 8);
    rc = emit_block(w, GK_REPLAY_BLOCK_FOOTER, fb, FOOTER_SIZE);
  }
  if (rc == 0 && !w->memory) {
    if (fsync(w->fd) != 0)
      rc = gk_errf(err, errlen, GK_EIO, "replay: fsync '%s': %s",
                   w->tmp_path, strerror(errno));
    else if (close(w->fd) != 0) {
      w->fd = -1;
      rc = gk_errf(err, errlen, GK_EIO, "replay: close '%s': %s",
                   w->tmp_path, strerror(errno));
    } else {
      w->fd = -1;
      if (rename(w->tmp_path, w->path) != 0)
        rc = gk_errf(err, errlen, GK_EIO, "replay: rename to '%s': %s",
                     w->path, strerror(errno));
      else
        sync_dir(w->path);
    }
  } else if (rc != 0) {
    gk_errf(err, errlen, rc, "replay: writing '%s': %s",
            w->memory ? "(memory)" : w->tmp_path, gk_strerror(rc));
  }
  if (rc != 0) {
    w->err = rc;
    gk_replay_writer_abort(w);
    return rc;
  }
  writer_release(w);
  return 0;
}

uint8_t *gk_replay_writer_take(gk_replay_writer *w, size_t *len) {
  uint8_t *p = w->memory ? w->mem : NULL;
  *len = p != NULL ? w->mem_len : 0;
  if (p != NULL) {
    w->mem = NULL;
    w->mem_len = w->mem_cap = 0;
  }
  return p;
}

void gk_replay_writer_abort(gk_replay_writer *w) {
  /* tmp_path lives from the .tmp file's creation until finish or abort */
  if (!w->memory && w->tmp_path != NULL) {
    if (w->fd >= 0)
      close(w->fd);
    w->fd = -1;
    (void)unlink(w->tmp_path);
  }
  writer_release(w);
  free(w->mem);
  w->mem = NULL;
  w->mem_len = w->mem_cap = 0;
}

/* ===================================================================== */
/* reader                                                                  */

static int damage(gk_replay *r, int code, uint64_t offset, const char *fmt,
                  ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#include <stdarg.h>

static int damage(gk_replay *r, int code, uint64_t offset, const char *fmt,
                  ...) {
  if (r->damage.code != 0)
    return r->damage.code;
  r->damage.code = code;
  r->damage.offset = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->damage.what, sizeof r->damage.what, fmt, ap);
  va_end(ap);
  return code;
}

static const char *block_name(uint8_t type) {
  switch (type) {
  case GK_REPLAY_BLOCK_HEADER:
    return "header";
  case GK_REPLAY_BLOCK_STEPS_T:
    return "steps";
  case GK_REPLAY_BLOCK_FOOTER:
    return "footer";
  default:
    return "unknown";
  }
}

/* Parses a decimal u64 with no sign, spaces or leading zeros. */
static int parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || s[0] == '\0' || (s[0] == '0' && s[1] != '\0'))
    return -1;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* Reads an integer member in [lo, hi]. */
static int json_uint(const cJSON *h, const char *key, double lo, double hi,
                     uint32_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(h, key);
  if (!cJSON_IsNumber(it))
    return -1;
  double d = it->valuedouble;
  if (!(d >= lo && d <= hi) || (double)(uint32_t)d != d)
    return -1;
  *out = (uint32_t)d;
  return 0;
}

static int parse_header(gk_replay *r, const uint8_t *text, size_t len,
                        uint64_t offset) {
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\0')
      return damage(r, GK_EPARSE, offset + i,
                    "expected header JSON text, found a NUL byte");
  const char *end = NULL;
  cJSON *h = cJSON_ParseWithLengthOpts((const char *)text, len, &end, 0);
  if (h == NULL) {
    const char *at = cJSON_GetErrorPtr();
    uint64_t off = offset;
    if (at != NULL && at >= (const char *)text &&
        at <= (const char *)text + len)
      off += (uint64_t)(at - (const char *)text);
    return damage(r, GK_EPARSE, off, "expected header JSON, parse error");
  }
  r->header = h;
  while (end != NULL && end < (const char *)text + len &&
         (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
    end++;
  if (end != (const char *)text + len)
    return damage(r, GK_EPARSE,
                  offset + (uint64_t)(end != NULL ? end - (const char *)text
                                                  : 0),
                  "expected the end of the header JSON");
  if (!cJSON_IsObject(h))
    return damage(r, GK_EPARSE, offset, "expected a header JSON object");
  uint32_t format = 0;
  if (json_uint(h, "format", 0, UINT32_MAX, &format) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'format' (an integer)");
  if (format != GK_REPLAY_FORMAT)
    return damage(r, GK_EVERSION, offset,
                  "expected header format %d, found %" PRIu32,
                  GK_REPLAY_FORMAT, format);
  r->format = format;
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(h, "genre");
  if (!cJSON_IsString(g) || g->valuestring == NULL ||
      g->valuestring[0] == '\0' ||
      strlen(g->valuestring) > GK_REPLAY_GENRE_MAX)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'genre' (a name of 1..%d bytes)",
                  GK_REPLAY_GENRE_MAX);
  memcpy(r->genre, g->valuestring, strlen(g->valuestring) + 1);
  if (json_uint(h, "genre_version", 0, UINT32_MAX, &r->genre_version) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'genre_version' (an integer)");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(h, "seed");
  if (!cJSON_IsString(s) || parse_u64(s->valuestring, &r->seed) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'seed' (a decimal string)");
  if (json_uint(h, "players", 1, GK_PLAYERS_MAX, &r->players) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'players' (1..%d)", GK_PLAYERS_MAX);
  if (json_uint(h, "input_size", 1, GK_INPUT_SIZE_MAX, &r->input_size) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'input_size' (1..%d)",
                  GK_INPUT_SIZE_MAX);
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(h, "step_seconds");
  if (!cJSON_IsArray(ss) || cJSON_GetArraySize(ss) != 2 ||
      json_uint(ss, NULL, 0, 0, NULL) == 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'step_seconds' ([num, den])");
  uint32_t parts[2];
  for (int i = 0; i < 2; i++) {
    const cJSON *it = cJSON_GetArrayItem(ss, i);
    double d = cJSON_IsNumber(it) ? it->valuedouble : 0;
    if (!(d >= 1 && d <= UINT32_MAX) || (double)(uint32_t)d != d)
      return damage(r, GK_EPROTO, offset,
                    "expected header key 'step_seconds' ([num, den], "
                    "positive integers)");
    parts[i] = (uint32_t)d;
  }
  r->step_seconds.num = parts[0];
  r->step_seconds.den = parts[1];
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(h, "config");
  if (!cJSON_IsObject(c))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'config' (an object)");
  r->config = c;
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(h, "origin");
  if (o != NULL) {
    if (!cJSON_IsString(o))
      return damage(r, GK_EPROTO, offset,
                    "expected header key 'origin' to be a string");
    r->origin = o->valuestring;
  }
  r->entry_size = ENTRY_HEAD + r->players * r->input_size;
  r->header_ok = 1;
  return 0;
}

static int add_block(gk_replay *r, size_t entries, uint64_t first,
                     uint32_t count, uint64_t offset) {
  if (r->nblocks == r->blocks_cap) {
    size_t cap = r->blocks_cap ? r->blocks_cap * 2 : 16;
    gk__replay_block *b = realloc(r->blocks, cap * sizeof *b);
    if (b == NULL)
      return damage(r, GK_ENOMEM, offset, "out of memory indexing blocks");
    r->blocks = b;
    r->blocks_cap = cap;
  }
  r->blocks[r->nblocks].entries = entries;
  r->blocks[r->nblocks].first = first;
  r->blocks[r->nblocks].count = count;
  r->nblocks++;
  return 0;
}

/* Checks one steps block's payload (already checksummed). */
static int read_steps(gk_replay *r, const uint8_t *p, size_t len,
                      uint64_t offset) {
  uint64_t at = offset + BLOCK_HEAD;
  if (len < STEPS_HEAD)
    return damage(r, GK_EPROTO, at,
                  "expected a steps block of at least %d bytes, found %zu",
                  STEPS_HEAD, len);
  uint64_t first = get_le(p, 8);
  uint32_t count = (uint32_t)get_le(p + 8, 4);
  uint32_t esize = (uint32_t)get_le(p + 12, 4);
  if (first != r->steps)
    return damage(r, GK_EPROTO, at,
                  "expected first step %" PRIu64 ", found %" PRIu64,
                  r->steps, first);
  if (count == 0)
    return damage(r, GK_EPROTO, at + 8,
                  "expected a step count of at least 1, found 0");
  if (esize != r->entry_size)
    return damage(r, GK_EPROTO, at + 12,
                  "expected entry size %" PRIu32 " (%" PRIu32
                  " players x %" PRIu32 " bytes + 16), found %" PRIu32,
                  r->entry_size, r->players, r->input_size, esize);
  if ((uint64_t)count * esize != len - STEPS_HEAD)
    return damage(r, GK_EPROTO, at + 8,
                  "expected %" PRIu32 " entries of %" PRIu32
                  " bytes to fill the %zu-byte payload",
                  count, esize, len - STEPS_HEAD);
  uint32_t allowed = all_players(r->players);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = p + STEPS_HEAD + (size_t)i * esize;
    uint64_t eoff = at + STEPS_HEAD + (uint64_t)i * esize;
    uint32_t mask = (uint32_t)get_le(e + 8, 4);
    uint32_t flags = (uint32_t)get_le(e + 12, 4);
    if ((mask & ~allowed) != 0)
      return damage(r, GK_EPROTO, eoff + 8,
                    "step %" PRIu64 ": expected an active mask within %" PRIu32
                    " players, found 0x%" PRIx32,
                    first + i, r->players, mask);
    if ((flags & ~KNOWN_FLAGS) != 0)
      return damage(r, GK_EPROTO, eoff + 12,
                    "step %" PRIu64 ": expected flags within 0x%" PRIx32
                    ", found 0x%" PRIx32,
                    first + i, KNOWN_FLAGS, flags);
    if (!inactive_zero(e + ENTRY_HEAD, r->players, r->input_size, mask))
      return damage(r, GK_EPROTO, eoff + ENTRY_HEAD,
                    "step %" PRIu64
                    ": expected all-zero records for inactive players",
                    first + i);
  }
  int rc = add_block(r, (size_t)(p - r->bytes) + STEPS_HEAD, first, count,
                     offset);
  if (rc != 0)
    return rc;
  r->steps += count;
  r->last_hash = get_le(p + STEPS_HEAD + (size_t)(count - 1) * esize, 8);
  return 0;
}

static int read_footer(gk_replay *r, const uint8_t *p, size_t len,
                       uint64_t offset) {
  uint64_t at = offset + BLOCK_HEAD;
  if (len != FOOTER_SIZE)
    return damage(r, GK_EPROTO, offset + 8,
                  "expected a footer of %d bytes, found %zu", FOOTER_SIZE,
                  len);
  uint64_t count = get_le(p, 8);
  uint64_t hash = get_le(p + 8, 8);
  if (count != r->steps)
    return damage(r, GK_EPROTO, at,
                  "expected footer step count %" PRIu64 ", found %" PRIu64,
                  r->steps, count);
  if (hash != r->last_hash)
    return damage(r, GK_EPROTO, at + 8,
                  "expected footer final hash 0x%016" PRIx64
                  " (the last step's), found 0x%016" PRIx64,
                  r->last_hash, hash);
  r->final_hash = hash;
  return 0;
}

static int read_all(gk_replay *r) {
  const uint8_t *b = r->bytes;
  size_t len = (size_t)r->size;
  if (len < GK_REPLAY_PREAMBLE_SIZE) {
    size_t n = len < 8 ? len : 8;
    if (memcmp(b, magic, n) != 0)
      return damage(r, GK_EPROTO, 0, "expected the .gkr magic bytes");
    return damage(r, GK_ETRUNC, len,
                  "expected a %d-byte preamble, the file ends",
                  GK_REPLAY_PREAMBLE_SIZE);
  }
  if (memcmp(b, magic, 8) != 0)
    return damage(r, GK_EPROTO, 0,
                  "expected the .gkr magic bytes 89 47 4b 52 0d 0a 1a 0a");
  uint32_t format = (uint32_t)get_le(b + 8, 4);
  if (format != GK_REPLAY_FORMAT)
    return damage(r, GK_EVERSION, 8,
                  "expected format version %d, found %" PRIu32,
                  GK_REPLAY_FORMAT, format);
  if (get_le(b + 12, 4) != 0)
    return damage(r, GK_EPROTO, 12, "expected preamble flags 0");
  size_t pos = GK_REPLAY_PREAMBLE_SIZE;
  r->valid_end = pos;
  for (uint32_t seq = 0;; seq++) {
    size_t left = len - pos;
    if (left == 0) {
      if (seq == 0)
        return damage(r, GK_ETRUNC, pos,
                      "expected the header block, the file ends");
      return damage(r, GK_ETRUNC, pos,
                    "expected a steps or footer block, the file ends after "
                    "%" PRIu64 " complete steps (no footer: cut short)",
                    r->steps);
    }
    if (left < BLOCK_HEAD + 8)
      return damage(r, GK_ETRUNC, pos,
                    "expected a block, the file ends at offset %zu (cut "
                    "short) after %" PRIu64 " complete steps",
                    len, r->steps);
    const uint8_t *h = b + pos;
    uint8_t type = h[0];
    uint32_t bseq = (uint32_t)get_le(h + 4, 4);
    uint32_t plen = (uint32_t)get_le(h + 8, 4);
    int want_header = seq == 0;
    if (want_header ? type != GK_REPLAY_BLOCK_HEADER
                    : (type != GK_REPLAY_BLOCK_STEPS_T &&
                       type != GK_REPLAY_BLOCK_FOOTER))
      return damage(r, GK_EPROTO, pos,
                    "expected a %s block, found type byte 0x%02x",
                    want_header ? "header" : "steps or footer", type);
    if (h[1] != 0 || get_le(h + 2, 2) != 0)
      return damage(r, GK_EPROTO, pos + 1,
                    "expected zero reserved bytes in the block header");
    if (bseq != seq)
      return damage(r, GK_EPROTO, pos + 4,
                    "expected block sequence number %" PRIu32
                    ", found %" PRIu32,
                    seq, bseq);
    uint32_t limit = type == GK_REPLAY_BLOCK_HEADER ? GK_REPLAY_HEADER_MAX
                                                    : GK_REPLAY_BLOCK_MAX;
    if (plen > limit)
      return damage(r, GK_ETOOBIG, pos + 8,
                    "expected a %s block of at most %" PRIu32
                    " bytes, found length %" PRIu32,
                    block_name(type), limit, plen);
    if ((uint64_t)plen + BLOCK_HEAD + 8 > left)
      return damage(r, GK_ETRUNC, pos,
                    "expected a %s block of %" PRIu64 " bytes, the file ends "
                    "at offset %zu (cut short, or the length is corrupt) "
                    "after %" PRIu64 " complete steps",
                    block_name(type), (uint64_t)plen + BLOCK_HEAD + 8, len,
                    r->steps);
    uint64_t want = get_le(h + BLOCK_HEAD + plen, 8);
    uint64_t got = gk_hash_bytes(h, BLOCK_HEAD + plen);
    if (want != got)
      return damage(r, GK_ECORRUPT, pos,
                    "%s block %" PRIu32 ": expected checksum 0x%016" PRIx64
                    ", computed 0x%016" PRIx64 " (corrupt)",
                    block_name(type), seq, want, got);
    const uint8_t *payload = h + BLOCK_HEAD;
    int rc;
    if (type == GK_REPLAY_BLOCK_HEADER)
      rc = parse_header(r, payload, plen, pos + BLOCK_HEAD);
    else if (type == GK_REPLAY_BLOCK_STEPS_T)
      rc = read_steps(r, payload, plen, pos);
    else
      rc = read_footer(r, payload, plen, pos);
    if (rc != 0)
      return rc;
    pos += BLOCK_HEAD + plen + 8;
    r->valid_end = pos;
    if (type == GK_REPLAY_BLOCK_FOOTER) {
      if (pos != len)
        return damage(r, GK_EPROTO, pos,
                      "expected the end of the file after the footer, found "
                      "%zu more bytes",
                      len - pos);
      r->complete = 1;
      return 0;
    }
  }
}

int gk_replay_open_bytes(gk_replay *r, const void *bytes, size_t len) {
  memset(r, 0, sizeof *r);
  r->bytes = bytes;
  r->size = len;
  if (bytes == NULL && len != 0)
    return damage(r, GK_EINVAL, 0, "no bytes");
  if (len == 0)
    return damage(r, GK_ETRUNC, 0, "expected a replay, the file is empty");
  return read_all(r);
}

int gk_replay_open_file(gk_replay *r, const char *path) {
  memset(r, 0, sizeof *r);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return damage(r, errno == ENOENT ? GK_ENOTFOUND : GK_EIO, 0,
                  "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return damage(r, GK_EIO, 0, "expected a regular file");
  }
  if ((uint64_t)st.st_size > GK_REPLAY_FILE_MAX) {
    close(fd);
    return damage(r, GK_ETOOBIG, 0,
                  "expected a file of at most %llu bytes, found %lld",
                  (unsigned long long)GK_REPLAY_FILE_MAX,
                  (long long)st.st_size);
  }
  size_t size = (size_t)st.st_size;
  uint8_t *buf = malloc(size ? size : 1);
  if (buf == NULL) {
    close(fd);
    return damage(r, GK_ENOMEM, 0, "out of memory reading the file");
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      close(fd);
      free(buf);
      return damage(r, GK_EIO, got, "read error: %s", strerror(errno));
    }
    if (n == 0)
      break; /* shrank while reading: treat what we have as the file */
    got += (size_t)n;
  }
  close(fd);
  int rc = gk_replay_open_bytes(r, buf, got);
  r->owned = buf;
  return rc;
}

void gk_replay_close(gk_replay *r) {
  cJSON_Delete(r->header);
  free(r->blocks);
  free(r->owned);
  memset(r, 0, sizeof *r);
}

int gk_replay_step_at(const gk_replay *r, uint64_t step, gk_replay_step *out,
                      size_t *hint) {
  if (step >= r->steps || r->nblocks == 0)
    return GK_ERANGE;
  size_t i = hint != NULL && *hint < r->nblocks ? *hint : 0;
  const gk__replay_block *b = &r->blocks[i];
  if (step < b->first || step - b->first >= b->count) {
    if (i + 1 < r->nblocks && step >= r->blocks[i + 1].first &&
        step - r->blocks[i + 1].first < r->blocks[i + 1].count) {
      i++;
    } else {
      size_t lo = 0, hi = r->nblocks; /* first block with first > step */
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->blocks[mid].first <= step)
          lo = mid + 1;
        else
          hi = mid;
      }
      i = lo - 1;
    }
    b = &r->blocks[i];
  }
  if (hint != NULL)
    *hint = i;
  const uint8_t *e =
      r->bytes + b->entries + (size_t)(step - b->first) * r->entry_size;
  out->step = step;
  out->hash = le64(e);
  out->active_mask = le32(e + 8);
  out->flags = le32(e + 12);
  out->inputs = e + ENTRY_HEAD;
  return 0;
}

static int replay_read(gk_input *base, uint64_t step, gk_step_input *out) {
  gk_replay_input *in = (gk_replay_input *)base;
  gk_replay_step s;
  int rc = gk_replay_step_at(in->r, step, &s, &in->hint);
  if (rc != 0)
    return rc;
  out->step = step;
  out->active_mask = s.active_mask;
  out->flags = s.flags;
  out->players = in->r->players;
  out->inputs = s.inputs;
  return 0;
}

void gk_replay_input_init(gk_replay_input *in, const gk_replay *r) {
  memset(in, 0, sizeof *in);
  in->base.read = replay_read;
  in->r = r;
}

int gk_replay_prepare(const gk_replay *r, const gk_sim *sim, void *cfg,
                      char *err, size_t errlen) {
  if (!r->header_ok)
    return gk_errf(err, errlen, GK_EINVAL, "replay has no valid header");
  if (sim == NULL)
    return gk_errf(err, errlen, GK_ENOTFOUND,
                   "genre '%s' is not in this build", r->genre);
  if (strcmp(sim->name, r->genre) != 0)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "the replay is for genre '%s', not '%s'", r->genre,
                   sim->name);
  if (sim->version != r->genre_version)
    return gk_errf(err, errlen, GK_EVERSION,
                   "recorded with %s version %" PRIu32
                   ", this build has version %" PRIu32,
                   r->genre, r->genre_version, sim->version);
  if (sim->input_size != r->input_size)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "recorded input size %" PRIu32 ", %s uses %" PRIu32,
                   r->input_size, sim->name, sim->input_size);
  if (r->players < sim->players_min || r->players > sim->players_max)
    return gk_errf(err, errlen, GK_ERANGE,
                   "recorded with %" PRIu32 " players, %s takes %" PRIu32
                   "..%" PRIu32,
                   r->players, sim->name, sim->players_min,
                   sim->players_max);
  return gk_config_from_json(sim, cfg, r->config, err, errlen);
}

/* ===================================================================== */
/* verify                                                                  */

static int invalid(gk_replay_verdict *v, int code, uint64_t offset,
                   const char *what, uint64_t checked) {
  v->status = GK_REPLAY_INVALID;
  v->code = code;
  v->offset = offset;
  if (checked > 0)
    snprintf(v->message, sizeof v->message,
             "offset %" PRIu64 ": %s (%s); the %" PRIu64
             " steps before it verified",
             offset, what, gk_err_name(code), checked);
  else
    snprintf(v->message, sizeof v->message, "offset %" PRIu64 ": %s (%s)",
             offset, what, gk_err_name(code));
  return v->status;
}

int gk_replay_run(const gk_replay *r, const gk_sim *sim, uint64_t steps,
                  gk_loop *loop, gk_replay_progress_cb progress, void *ctx,
                  gk_replay_verdict *v) {
  memset(v, 0, sizeof *v);
  if (!r->header_ok)
    return invalid(v, r->damage.code ? r->damage.code : GK_EINVAL,
                   r->damage.offset, r->damage.what, 0);
  if (sim == NULL)
    sim = gk_genre_find(r->genre);
  char msg[GK_ERRMSG_MAX];
  msg[0] = '\0';
  void *cfg = sim != NULL ? calloc(1, sim->config_size ? sim->config_size : 1)
                          : NULL;
  if (sim != NULL && cfg == NULL)
    return invalid(v, GK_ENOMEM, 0, "out of memory", 0);
  int rc = gk_replay_prepare(r, sim, cfg, msg, sizeof msg);
  if (rc == 0) {
    rc = gk_loop_start(loop, sim, cfg, r->seed, r->players, msg, sizeof msg);
    if (rc != 0 && msg[0] == '\0')
      snprintf(msg, sizeof msg, "cannot start the run: %s", gk_strerror(rc));
  }
  if (sim != NULL && sim->config_free != NULL)
    sim->config_free(cfg);
  free(cfg);
  if (rc != 0)
    return invalid(v, rc, 0, msg, 0);
  if (loop->ring_cap < GK_REPLAY_PROGRESS_STEPS)
    return invalid(v, GK_EINVAL, 0, "the loop's hash ring is too small", 0);

  if (steps > r->steps)
    steps = r->steps;
  gk_replay_input in;
  gk_replay_input_init(&in, r);
  size_t hint = 0;
  uint64_t done = 0;
  while (done < steps && v->status == GK_REPLAY_OK) {
    uint64_t want = steps - done;
    if (want > GK_REPLAY_PROGRESS_STEPS)
      want = GK_REPLAY_PROGRESS_STEPS;
    int ran = gk_loop_frame(loop, &in.base, gk_budget_steps(want), 0);
    if (ran < 0 || (uint64_t)ran != want) {
      int code = ran < 0 ? ran : loop->input_err;
      snprintf(msg, sizeof msg, "the loop stopped at step %" PRIu64 ": %s",
               done + (ran > 0 ? (uint64_t)ran : 0), gk_strerror(code));
      return invalid(v, code ? code : GK_EINPUT, 0, msg, done);
    }
    for (uint64_t s = done; s < done + want; s++) {
      gk_replay_step rs;
      uint64_t actual = 0;
      gk_replay_step_at(r, s, &rs, &hint);
      if (gk_loop_hash_at(loop, s, &actual) != 0 || actual != rs.hash) {
        v->status = GK_REPLAY_MISMATCH;
        v->step = s;
        v->expected = rs.hash;
        v->actual = actual;
        snprintf(v->message, sizeof v->message,
                 "step %" PRIu64 ": expected hash 0x%016" PRIx64
                 ", computed 0x%016" PRIx64,
                 s, rs.hash, actual);
        break;
      }
      v->steps_checked++;
    }
    done += want;
    if (progress != NULL && v->status == GK_REPLAY_OK)
      progress(ctx, done, r->steps);
  }
  return v->status;
}

int gk_replay_verify(const gk_replay *r, const gk_sim *sim,
                     gk_replay_progress_cb progress, void *ctx,
                     gk_replay_verdict *v) {
  memset(v, 0, sizeof *v);
  gk_loop loop;
  gk_loop_options opts = {GK_REPLAY_PROGRESS_STEPS};
  int rc = gk_loop_init(&loop, &opts);
  if (rc != 0)
    return invalid(v, rc, 0, "cannot create a loop", 0);
  gk_replay_run(r, sim, r->steps, &loop, progress, ctx, v);
  gk_loop_close(&loop);
  if (v->status == GK_REPLAY_OK && r->damage.code != 0)
    return invalid(v, r->damage.code, r->damage.offset, r->damage.what,
                   v->steps_checked);
  return v->status;
}
