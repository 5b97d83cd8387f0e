/* gk_replay_read.c: the bounded .gkr reader (see gk_replay.h and
 * tools/replay/FORMAT.md). It walks the bytes once, checks every block
 * (type, sequence, length, checksum, payload), builds an index of steps
 * blocks (offset, first step, count) and stops at the first damage,
 * keeping what came before it and saying where and what was expected.
 */
#include "gk_replay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_replay_internal.h"

static int damage(gk_replay *r, int code, uint64_t offset, const char *fmt, ...)
    GK_PRINTF(4, 5);

static int damage(gk_replay *r, int code, uint64_t offset, const char *fmt,
                  ...) {
  if (r->damage.code != 0) return r->damage.code;
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

/* A seed is decimal with no sign, spaces or leading zeros. */
static int parse_seed(const char *s, uint64_t *out) {
  if (s == NULL || (s[0] == '0' && s[1] != '\0')) return -1;
  return gk_parse_u64(s, out);
}

/* The "lockstep" record: {"input_delay": 1..255, "lead": 0..255, ...};
 * other keys in it (auto, rtt_ms, ...) are for people and tools. */
static int apply_lockstep(gk_replay *r, const gk_replay_fields *f,
                          uint64_t offset) {
  if (!(f->have & GK_REPLAY_HAVE_LOCKSTEP)) return 0;
  if (!(f->have & GK_REPLAY_LOCKSTEP_OK) || f->input_delay < 1 ||
      f->input_delay > 255 || f->lead > 255)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'lockstep' to be an object with "
                  "'input_delay' in 1..255 and 'lead' in 0..255");
  r->has_lockstep = 1;
  r->input_delay = f->input_delay;
  r->lead = f->lead;
  return 0;
}

/* Judges the header keys' values (from cJSON or another parser). */
static int apply_fields(gk_replay *r, const gk_replay_fields *f,
                        uint64_t offset) {
  uint32_t have = f->have;
  if (!(have & GK_REPLAY_HAVE_FORMAT))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'format' (an integer)");
  if (f->format != GK_REPLAY_FORMAT)
    return damage(r, GK_EVERSION, offset,
                  "expected header format %d, found %" PRIu32, GK_REPLAY_FORMAT,
                  f->format);
  r->format = f->format;
  size_t glen = strnlen(f->genre, sizeof f->genre);
  if (!(have & GK_REPLAY_HAVE_GENRE) || glen == 0 || glen > GK_REPLAY_GENRE_MAX)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'genre' (a name of 1..%d bytes)",
                  GK_REPLAY_GENRE_MAX);
  memcpy(r->genre, f->genre, glen);
  r->genre[glen] = '\0';
  if (!(have & GK_REPLAY_HAVE_GENRE_VERSION))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'genre_version' (an integer)");
  r->genre_version = f->genre_version;
  char seed[sizeof f->seed];
  memcpy(seed, f->seed, sizeof seed);
  seed[sizeof seed - 1] = '\0';
  if (!(have & GK_REPLAY_HAVE_SEED) || parse_seed(seed, &r->seed) != 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'seed' (a decimal string)");
  if (!(have & GK_REPLAY_HAVE_PLAYERS) || f->players < 1 ||
      f->players > GK_PLAYERS_MAX)
    return damage(r, GK_EPROTO, offset, "expected header key 'players' (1..%d)",
                  GK_PLAYERS_MAX);
  r->players = f->players;
  if (!(have & GK_REPLAY_HAVE_INPUT_SIZE) || f->input_size < 1 ||
      f->input_size > GK_INPUT_SIZE_MAX)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'input_size' (1..%d)",
                  GK_INPUT_SIZE_MAX);
  r->input_size = f->input_size;
  if (!(have & GK_REPLAY_HAVE_STEP_SECONDS))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'step_seconds' ([num, den])");
  if (f->step_seconds[0] == 0 || f->step_seconds[1] == 0)
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'step_seconds' ([num, den], "
                  "positive integers)");
  r->step_seconds.num = f->step_seconds[0];
  r->step_seconds.den = f->step_seconds[1];
  if (!(have & GK_REPLAY_HAVE_CONFIG))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'config' (an object)");
  if ((have & GK_REPLAY_HAVE_ORIGIN) && !(have & GK_REPLAY_ORIGIN_TEXT))
    return damage(r, GK_EPROTO, offset,
                  "expected header key 'origin' to be a string");
  int lrc = apply_lockstep(r, f, offset);
  if (lrc != 0) return lrc;
  r->entry_size = ENTRY_HEAD + r->players * r->input_size;
  r->header_ok = 1;
  return 0;
}

/* The header block's text through the parser, then its keys judged. */
static int parse_header(gk_replay *r, const uint8_t *text, size_t len,
                        uint64_t offset) {
  const uint8_t *nul = memchr(text, 0, len);
  if (nul != NULL)
    return damage(r, GK_EPARSE, offset + (uint64_t)(nul - text),
                  "expected header JSON text, found a NUL byte");
  uint64_t at = 0;
  const char *what = NULL;
  int jrc = gk__replay_json_check(text, len, &at, &what);
  if (jrc != 0) return damage(r, jrc, offset + at, "%s", what);
  if (r->parser == NULL || r->parser->parse == NULL)
    return damage(r, GK_EINVAL, offset, "expected a header parser");
  gk_replay_fields f;
  memset(&f, 0, sizeof f);
  int rc = r->parser->parse(r->parser->ctx, r, (const char *)text, len, &f);
  if (rc != 0) {
    f.what[sizeof f.what - 1] = '\0';
    return damage(r, rc < 0 ? rc : GK_EPARSE, offset + (f.at <= len ? f.at : 0),
                  "%s", f.what);
  }
  return apply_fields(r, &f, offset);
}

/* The header of gk_replay_open_file_known: compared, never parsed. */
static int known_header(gk_replay *r, const uint8_t *text, size_t len,
                        uint64_t offset) {
  const gk_replay_known *k = r->known;
  if (k->players < 1 || k->players > GK_PLAYERS_MAX || k->input_size < 1 ||
      k->input_size > GK_INPUT_SIZE_MAX)
    return damage(r, GK_EINVAL, offset,
                  "expected a known header of 1..%d players and an input "
                  "size of 1..%d",
                  GK_PLAYERS_MAX, GK_INPUT_SIZE_MAX);
  size_t want = k->header_json != NULL ? strlen(k->header_json) : len;
  if (want != len ||
      (k->header_json != NULL && memcmp(text, k->header_json, len) != 0))
    return damage(r, GK_EMISMATCH, offset,
                  "expected the known header (%zu bytes), found other "
                  "header text (%zu bytes)",
                  want, len);
  r->format = GK_REPLAY_FORMAT;
  r->players = k->players;
  r->input_size = k->input_size;
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
  uint64_t first = gk_load_le(p, 8);
  uint32_t count = (uint32_t)gk_load_le(p + 8, 4);
  uint32_t esize = (uint32_t)gk_load_le(p + 12, 4);
  if (first != r->steps) /* name the block: its seq is checked already */
    return damage(r, GK_EPROTO, at,
                  "steps block %" PRIu32 ": expected first step %" PRIu64
                  ", found %" PRIu64,
                  (uint32_t)gk_load_le(r->bytes + offset + 4, 4), r->steps,
                  first);
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
  uint32_t allowed = gk_all_players(r->players);
  /* the common block: every entry has every player active and no flags
   * (mask and flags as one u64 equal to `allowed`), checked without a
   * branch per entry; any other goes through the checks one by one */
  uint64_t odd = 0;
  for (uint32_t i = 0; i < count; i++)
    odd |= gk_load_le64(p + STEPS_HEAD + (size_t)i * esize + 8) ^ allowed;
  for (uint32_t i = 0; odd != 0 && i < count; i++) {
    const uint8_t *e = p + STEPS_HEAD + (size_t)i * esize;
    uint32_t mask = gk_load_le32(e + 8);
    uint32_t flags = gk_load_le32(e + 12);
    if (mask == allowed && flags == 0) continue;
    uint64_t eoff = at + STEPS_HEAD + (uint64_t)i * esize;
    if ((mask & ~allowed) != 0)
      return damage(r, GK_EPROTO, eoff + 8,
                    "step %" PRIu64 ": expected an active mask within %" PRIu32
                    " players, found 0x%" PRIx32,
                    first + i, r->players, mask);
    if (!gk_step_flags_valid(flags))
      return damage(r, GK_EPROTO, eoff + 12,
                    "step %" PRIu64 ": expected flags within 0x%" PRIx32
                    " (a delay value exactly with bit 1), found 0x%" PRIx32,
                    first + i, KNOWN_FLAGS, flags);
    if (!gk__replay_inactive_zero(e + ENTRY_HEAD, r->players, r->input_size,
                                  mask))
      return damage(r, GK_EPROTO, eoff + ENTRY_HEAD,
                    "step %" PRIu64
                    ": expected all-zero records for inactive players",
                    first + i);
  }
  int rc =
      add_block(r, (size_t)(p - r->bytes) + STEPS_HEAD, first, count, offset);
  if (rc != 0) return rc;
  r->steps += count;
  r->last_hash = gk_load_le(p + STEPS_HEAD + (size_t)(count - 1) * esize, 8);
  return 0;
}

/* The cut-short part of a footer (after its first 16 bytes). */
static int read_cut(gk_replay *r, const uint8_t *p, size_t len, uint64_t at) {
  uint32_t flags = (uint32_t)gk_load_le(p, 4);
  int32_t code = (int32_t)(uint32_t)gk_load_le(p + 4, 4);
  uint32_t n = (uint32_t)gk_load_le(p + 24, 4);
  if (flags != GK_REPLAY_CUT_SHORT)
    return damage(r, GK_EPROTO, at,
                  "expected footer flags 0x%x (cut short), found 0x%" PRIx32,
                  GK_REPLAY_CUT_SHORT, flags);
  if (code >= 0)
    return damage(r, GK_EPROTO, at + 4,
                  "expected a negative error code in the footer, found "
                  "%" PRId32,
                  code);
  if ((uint64_t)n + 28 != len)
    return damage(r, GK_EPROTO, at + 24,
                  "expected a footer reason of %zu bytes, found length "
                  "%" PRIu32,
                  len - 28, n);
  if (memchr(p + 28, 0, n) != NULL)
    return damage(r, GK_EPROTO, at + 28,
                  "expected footer reason text, found a NUL byte");
  r->cut.code = code;
  r->cut.offset = gk_load_le(p + 8, 8);
  r->cut.dropped = gk_load_le(p + 16, 8);
  memcpy(r->cut.reason, p + 28, n);
  r->cut.reason[n] = '\0';
  r->cut_short = 1;
  return 0;
}

static int read_footer(gk_replay *r, const uint8_t *p, size_t len,
                       uint64_t offset) {
  uint64_t at = offset + BLOCK_HEAD;
  if (len != FOOTER_SIZE && (len < FOOTER_CUT_HEAD || len > FOOTER_MAX))
    return damage(r, GK_EPROTO, offset + 8,
                  "expected a footer of %d bytes (or %d..%d when cut short), "
                  "found %zu",
                  FOOTER_SIZE, FOOTER_CUT_HEAD, FOOTER_MAX, len);
  uint64_t count = gk_load_le(p, 8);
  uint64_t hash = gk_load_le(p + 8, 8);
  if (count != r->steps)
    return damage(r, GK_EPROTO, at,
                  "expected footer step count %" PRIu64 ", found %" PRIu64,
                  r->steps, count);
  if (hash != r->last_hash)
    return damage(r, GK_EPROTO, at + 8,
                  "expected footer final hash 0x%016" PRIx64
                  " (the last step's), found 0x%016" PRIx64,
                  r->last_hash, hash);
  if (len > FOOTER_SIZE) {
    int rc = read_cut(r, p + FOOTER_SIZE, len - FOOTER_SIZE, at + FOOTER_SIZE);
    if (rc != 0) return rc;
  }
  r->final_hash = hash;
  r->footer_at = offset;
  return 0;
}

/* Checks the 16-byte preamble: magic, format version, flags. */
static int read_preamble(gk_replay *r) {
  const uint8_t *b = r->bytes;
  size_t len = (size_t)r->size;
  if (len < GK_REPLAY_PREAMBLE_SIZE) {
    size_t n = len < 8 ? len : 8;
    if (memcmp(b, GK__REPLAY_MAGIC, n) != 0)
      return damage(r, GK_EPROTO, 0, "expected the .gkr magic bytes");
    return damage(r, GK_ETRUNC, len,
                  "expected a %d-byte preamble, the file ends",
                  GK_REPLAY_PREAMBLE_SIZE);
  }
  if (memcmp(b, GK__REPLAY_MAGIC, 8) != 0)
    return damage(r, GK_EPROTO, 0,
                  "expected the .gkr magic bytes 89 47 4b 52 0d 0a 1a 0a");
  uint32_t format = (uint32_t)gk_load_le(b + 8, 4);
  if (format != GK_REPLAY_FORMAT)
    return damage(r, GK_EVERSION, 8,
                  "expected format version %d, found %" PRIu32,
                  GK_REPLAY_FORMAT, format);
  if (gk_load_le(b + 12, 4) != 0)
    return damage(r, GK_EPROTO, 12, "expected preamble flags 0");
  return 0;
}

static int read_all(gk_replay *r) {
  const uint8_t *b = r->bytes;
  size_t len = (size_t)r->size;
  int prc = read_preamble(r);
  if (prc != 0) return prc;
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
    uint32_t bseq = (uint32_t)gk_load_le(h + 4, 4);
    uint32_t plen = (uint32_t)gk_load_le(h + 8, 4);
    int want_header = seq == 0;
    if (want_header ? type != GK_REPLAY_BLOCK_HEADER
                    : (type != GK_REPLAY_BLOCK_STEPS_T &&
                       type != GK_REPLAY_BLOCK_FOOTER))
      return damage(r, GK_EPROTO, pos,
                    "expected a %s block, found type byte 0x%02x",
                    want_header ? "header" : "steps or footer", type);
    if (h[1] != 0 || gk_load_le(h + 2, 2) != 0)
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
    uint64_t want = gk_load_le(h + BLOCK_HEAD + plen, 8);
    uint64_t got = gk_hash_bytes(h, BLOCK_HEAD + plen);
    if (want != got)
      return damage(r, GK_ECORRUPT, pos,
                    "%s block %" PRIu32 ": expected checksum 0x%016" PRIx64
                    ", computed 0x%016" PRIx64 " (corrupt)",
                    block_name(type), seq, want, got);
    const uint8_t *payload = h + BLOCK_HEAD;
    int rc;
    if (type == GK_REPLAY_BLOCK_HEADER && r->known != NULL)
      rc = known_header(r, payload, plen, pos + BLOCK_HEAD);
    else if (type == GK_REPLAY_BLOCK_HEADER)
      rc = parse_header(r, payload, plen, pos + BLOCK_HEAD);
    else if (type == GK_REPLAY_BLOCK_STEPS_T)
      rc = read_steps(r, payload, plen, pos);
    else
      rc = read_footer(r, payload, plen, pos);
    if (rc != 0) return rc;
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

static int read_bytes(gk_replay *r, const void *bytes, size_t len) {
  r->bytes = bytes;
  r->size = len;
  if (bytes == NULL && len != 0) return damage(r, GK_EINVAL, 0, "no bytes");
  if (len == 0)
    return damage(r, GK_ETRUNC, 0, "expected a replay, the file is empty");
  return read_all(r);
}

int gk_replay_open_bytes_with(gk_replay *r, const void *bytes, size_t len,
                              const gk_replay_parser *p) {
  memset(r, 0, sizeof *r);
  r->parser = p;
  int rc = read_bytes(r, bytes, len);
  r->parser = NULL;
  return rc;
}

/* Reads the file whole, then its bytes (r is zeroed but for r->known). */
static int read_file(gk_replay *r, const char *path) {
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
    return damage(
        r, GK_ETOOBIG, 0, "expected a file of at most %llu bytes, found %lld",
        (unsigned long long)GK_REPLAY_FILE_MAX, (long long)st.st_size);
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
    if (n < 0 && errno == EINTR) continue;
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
  int rc = read_bytes(r, buf, got);
  r->owned = buf;
  return rc;
}

int gk__replay_open_file_with(gk_replay *r, const char *path,
                              const gk_replay_parser *p) {
  memset(r, 0, sizeof *r);
  r->parser = p;
  int rc = read_file(r, path);
  r->parser = NULL;
  return rc;
}

int gk_replay_open_file_known(gk_replay *r, const char *path,
                              const gk_replay_known *k) {
  memset(r, 0, sizeof *r);
  r->known = k;
  int rc = read_file(r, path);
  r->known = NULL;
  return rc;
}

void gk_replay_close(gk_replay *r) {
  if (r->header != NULL && r->header_free != NULL) /* cJSON_Delete */
    r->header_free(r->header);
  free(r->blocks);
  free(r->owned);
  memset(r, 0, sizeof *r);
}

int gk_replay_step_at(const gk_replay *r, uint64_t step, gk_replay_step *out,
                      size_t *hint) {
  if (step >= r->steps || r->nblocks == 0) return GK_ERANGE;
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
  if (hint != NULL) *hint = i;
  const uint8_t *e =
      r->bytes + b->entries + (size_t)(step - b->first) * r->entry_size;
  out->step = step;
  out->hash = gk_load_le64(e);
  out->active_mask = gk_load_le32(e + 8);
  out->flags = gk_load_le32(e + 12);
  out->inputs = e + ENTRY_HEAD;
  return 0;
}
