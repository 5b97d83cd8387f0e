/* gk_replay_write.c: the .gkr writer (see gk_replay.h and
 * tools/replay/FORMAT.md). It serializes the header with cJSON (or takes
 * the text made beforehand: gk_replay_writer_open_text), stages
 * steps in one block buffer and emits whole blocks (each closed by XXH3-64
 * over its bytes) to a file descriptor or to memory. A file is written to
 * PATH.tmp and renamed when finished.
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
#include "gk_replay_internal.h"

int gk__replay_write_all(int fd, const uint8_t *bytes, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, bytes + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno != 0 ? errno : EIO;
    if (n == 0) return EIO;
    done += (size_t)n;
  }
  return 0;
}

/* Appends to a growing buffer. Returns 0 or GK_ENOMEM (unchanged). */
static int buf_append(uint8_t **buf, size_t *len, size_t *cap,
                      const uint8_t *bytes, size_t n) {
  if (*cap - *len < n) {
    size_t c = *cap ? *cap : 4096;
    while (c - *len < n) c *= 2;
    uint8_t *p = realloc(*buf, c);
    if (p == NULL) return GK_ENOMEM;
    *buf = p;
    *cap = c;
  }
  memcpy(*buf + *len, bytes, n);
  *len += n;
  return 0;
}

static int sink(gk_replay_writer *w, const uint8_t *bytes, size_t len) {
  if (w->err != 0) return w->err;
  if (w->memory) {
    if (buf_append(&w->mem, &w->mem_len, &w->mem_cap, bytes, len) != 0)
      return w->err = GK_ENOMEM;
  } else if (w->deferred) {
    if (buf_append(&w->out, &w->out_len, &w->out_cap, bytes, len) != 0)
      return w->err = GK_ENOMEM;
  } else {
    int e = gk__replay_write_all(w->fd, bytes, len);
    if (e != 0) {
      w->sys_errno = e;
      return w->err = GK_EIO;
    }
  }
  w->offset += len;
  return 0;
}

void gk__replay_seal(uint8_t *buf, uint8_t type, uint32_t seq, size_t payload) {
  buf[0] = type;
  buf[1] = 0;
  gk_store_le(buf + 2, 0, 2);
  gk_store_le(buf + 4, seq, 4);
  gk_store_le(buf + 8, payload, 4);
  gk_store_le(buf + BLOCK_HEAD + payload,
              gk_hash_bytes(buf, BLOCK_HEAD + payload), 8);
}

size_t gk__replay_footer(uint8_t *payload, uint64_t steps, uint64_t hash,
                         const gk_replay_cut *cut) {
  gk_store_le(payload, steps, 8);
  gk_store_le(payload + 8, hash, 8);
  if (cut == NULL) return FOOTER_SIZE;
  size_t n = strnlen(cut->reason, sizeof cut->reason - 1);
  gk_store_le(payload + FOOTER_SIZE, GK_REPLAY_CUT_SHORT, 4);
  gk_store_le(payload + FOOTER_SIZE + 4, (uint32_t)(int32_t)cut->code, 4);
  gk_store_le(payload + FOOTER_SIZE + 8, cut->offset, 8);
  gk_store_le(payload + FOOTER_SIZE + 16, cut->dropped, 8);
  gk_store_le(payload + FOOTER_SIZE + 24, n, 4);
  memcpy(payload + FOOTER_CUT_HEAD, cut->reason, n);
  return FOOTER_CUT_HEAD + n;
}

/* Emits one block: `buf` holds BLOCK_HEAD bytes of room, then the payload,
 * then 8 bytes of room for the checksum. */
static int emit_block(gk_replay_writer *w, uint8_t type, uint8_t *buf,
                      size_t payload) {
  gk__replay_seal(buf, type, w->seq, payload);
  int rc = sink(w, buf, BLOCK_HEAD + payload + 8);
  if (rc == 0) w->seq++;
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
  ok = ok &&
       cJSON_AddNumberToObject(h, "genre_version", m->sim->version) != NULL;
  ok = ok && cJSON_AddStringToObject(h, "seed", seed) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "players", m->players) != NULL;
  ok = ok &&
       cJSON_AddNumberToObject(h, "input_size", m->sim->input_size) != NULL;
  if (ok) {
    cJSON_AddItemToArray(ratio, cJSON_CreateNumber(m->sim->step_seconds.num));
    cJSON_AddItemToArray(ratio, cJSON_CreateNumber(m->sim->step_seconds.den));
    ok = cJSON_AddItemToObject(h, "step_seconds", ratio);
    if (ok) ratio = NULL;
  }
  if (ok) {
    ok = cJSON_AddItemToObject(h, "config", cfg);
    if (ok) cfg = NULL;
  }
  if (ok && m->origin != NULL)
    ok = cJSON_AddStringToObject(h, "origin", m->origin) != NULL;
  if (ok && m->lockstep != NULL)
    ok = cJSON_AddItemToObject(h, "lockstep",
                               cJSON_Duplicate(m->lockstep, 1)) != 0;
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

/* `json`: the header's text made beforehand, or NULL to serialize it. */
static int writer_start(gk_replay_writer *w, const gk_replay_meta *m,
                        const char *json, char *err, size_t errlen) {
  const gk_sim *sim = m->sim;
  if (m->players < sim->players_min || m->players > sim->players_max ||
      m->players > GK_PLAYERS_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "replay: %" PRIu32 " players, %s takes %" PRIu32
                   "..%" PRIu32,
                   m->players, sim->name, sim->players_min, sim->players_max);
  if (sim->input_size < 1 || sim->input_size > GK_INPUT_SIZE_MAX)
    return gk_errf(err, errlen, GK_EINVAL, "replay: bad input size");
  w->players = m->players;
  w->input_size = sim->input_size;
  w->entry_size = ENTRY_HEAD + m->players * sim->input_size;
  w->block_steps = GK_REPLAY_BLOCK_STEPS;
  w->block_cap = BLOCK_HEAD + STEPS_HEAD +
                 (size_t)GK_REPLAY_BLOCK_STEPS_MAX * w->entry_size + 8;
  w->block = malloc(w->block_cap);
  char *text = json != NULL ? strdup(json) : build_header(m, err, errlen);
  if (text == NULL && json != NULL)
    gk_errf(err, errlen, GK_ENOMEM, "out of memory");
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
  memcpy(pre, GK__REPLAY_MAGIC, 8);
  gk_store_le(pre + 8, GK_REPLAY_FORMAT, 4);
  gk_store_le(pre + 12, 0, 4);
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

/* `json`: the header's text is given, so no config is needed. */
static int meta_ok(const gk_replay_meta *m, const char *json, char *err,
                   size_t errlen) {
  if (m == NULL || m->sim == NULL || m->sim->name == NULL ||
      (m->cfg == NULL && json == NULL))
    return gk_errf(err, errlen, GK_EINVAL, "replay: no genre or config");
  return 0;
}

char *gk_replay_header_json(const gk_replay_meta *meta, char *err,
                            size_t errlen) {
  if (meta_ok(meta, NULL, err, errlen) != 0) return NULL;
  return build_header(meta, err, errlen);
}

static void writer_zero(gk_replay_writer *w) {
  memset(w, 0, sizeof *w);
  w->fd = -1;
}

int gk_replay_writer_open_mem(gk_replay_writer *w, const gk_replay_meta *meta,
                              char *err, size_t errlen) {
  writer_zero(w);
  int rc = meta_ok(meta, NULL, err, errlen);
  if (rc != 0) return rc;
  w->memory = 1;
  rc = writer_start(w, meta, NULL, err, errlen);
  if (rc != 0) gk_replay_writer_abort(w);
  return rc;
}

static int open_file(gk_replay_writer *w, const char *path,
                     const gk_replay_meta *meta, const char *json, int deferred,
                     char *err, size_t errlen) {
  writer_zero(w);
  int rc = meta_ok(meta, json, err, errlen);
  if (rc != 0) return rc;
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
    int e = errno;
    rc = gk_errf(err, errlen, GK_EIO, "replay: cannot create '%s': %s",
                 w->tmp_path, strerror(e));
    free(w->path);
    free(w->tmp_path);
    writer_zero(w);
    w->sys_errno = e;
    return rc;
  }
  w->deferred = deferred;
  rc = writer_start(w, meta, json, err, errlen);
  if (rc != 0) gk_replay_writer_abort(w);
  return rc;
}

int gk_replay_writer_open(gk_replay_writer *w, const char *path,
                          const gk_replay_meta *meta, char *err,
                          size_t errlen) {
  return open_file(w, path, meta, NULL, 0, err, errlen);
}

int gk_replay_writer_open_deferred(gk_replay_writer *w, const char *path,
                                   const gk_replay_meta *meta, char *err,
                                   size_t errlen) {
  return open_file(w, path, meta, NULL, 1, err, errlen);
}

int gk_replay_writer_open_text(gk_replay_writer *w, const char *path,
                               const gk_replay_meta *meta,
                               const char *header_json, int deferred, char *err,
                               size_t errlen) {
  if (header_json == NULL) {
    writer_zero(w);
    return gk_errf(err, errlen, GK_EINVAL, "replay: no header text");
  }
  return open_file(w, path, meta, header_json, deferred != 0, err, errlen);
}

int gk_replay_writer_flush(gk_replay_writer *w) {
  if (!w->open) return GK_ESTATE;
  if (w->err != 0) return w->err;
  if (w->block_count == 0) return 0;
  uint8_t *p = w->block + BLOCK_HEAD;
  gk_store_le(p, w->steps - w->block_count, 8);
  gk_store_le(p + 8, w->block_count, 4);
  gk_store_le(p + 12, w->entry_size, 4);
  size_t payload = STEPS_HEAD + (size_t)w->block_count * w->entry_size;
  int rc = emit_block(w, GK_REPLAY_BLOCK_STEPS_T, w->block, payload);
  w->block_count = 0;
  return rc;
}

int gk_replay_writer_append(gk_replay_writer *w, const gk_step_input *in,
                            uint64_t hash) {
  if (!w->open) return GK_ESTATE;
  if (w->err != 0) return w->err;
  if (in == NULL || in->step != w->steps || in->players != w->players ||
      (in->active_mask & ~gk_all_players(w->players)) != 0 ||
      !gk_step_flags_valid(in->flags) || in->inputs == NULL ||
      !gk__replay_inactive_zero(in->inputs, w->players, w->input_size,
                                in->active_mask))
    return GK_EINVAL;
  if (w->block_steps < 1 || w->block_steps > GK_REPLAY_BLOCK_STEPS_MAX)
    w->block_steps = GK_REPLAY_BLOCK_STEPS;
  uint8_t *e = w->block + BLOCK_HEAD + STEPS_HEAD +
               (size_t)w->block_count * w->entry_size;
  gk_store_le(e, hash, 8);
  gk_store_le(e + 8, in->active_mask, 4);
  gk_store_le(e + 12, in->flags, 4);
  memcpy(e + ENTRY_HEAD, in->inputs, (size_t)w->players * w->input_size);
  w->block_count++;
  w->steps++;
  w->last_hash = hash;
  if (w->block_count >= w->block_steps) return gk_replay_writer_flush(w);
  return 0;
}

static void writer_release(gk_replay_writer *w) {
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
  free(w->path);
  free(w->tmp_path);
  free(w->block);
  free(w->out);
  w->path = w->tmp_path = NULL;
  w->block = w->out = NULL;
  w->out_len = w->out_cap = 0;
  w->open = 0;
}

void gk__replay_sync_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (slash == NULL) {
    dir[0] = '.';
    dir[1] = '\0';
  } else {
    size_t n = (size_t)(slash - path);
    if (n == 0) n = 1;
    if (n >= sizeof dir) return;
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  int fd = open(dir, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

/* Writes what a deferred writer holds, then switches it to direct writes. */
static int undefer(gk_replay_writer *w) {
  if (!w->deferred) return 0;
  w->deferred = 0;
  if (w->err != 0 || w->out_len == 0) return w->err;
  int e = gk__replay_write_all(w->fd, w->out, w->out_len);
  w->out_len = 0;
  if (e != 0) {
    w->sys_errno = e;
    return w->err = GK_EIO;
  }
  return 0;
}

/* Closes the .tmp file durably and renames it to its final name. */
static int publish(gk_replay_writer *w, char *err, size_t errlen) {
  if (fsync(w->fd) != 0)
    return gk_errf(err, errlen, GK_EIO, "replay: fsync '%s': %s", w->tmp_path,
                   strerror(errno));
  int rc = close(w->fd);
  w->fd = -1;
  if (rc != 0)
    return gk_errf(err, errlen, GK_EIO, "replay: close '%s': %s", w->tmp_path,
                   strerror(errno));
  if (rename(w->tmp_path, w->path) != 0)
    return gk_errf(err, errlen, GK_EIO, "replay: rename to '%s': %s", w->path,
                   strerror(errno));
  gk__replay_sync_dir(w->path);
  return 0;
}

int gk_replay_writer_finish(gk_replay_writer *w, char *err, size_t errlen) {
  if (!w->open)
    return gk_errf(err, errlen, GK_ESTATE, "replay: writer is not open");
  int rc = gk_replay_writer_flush(w);
  if (rc == 0) {
    uint8_t fb[BLOCK_HEAD + FOOTER_SIZE + 8];
    size_t n = gk__replay_footer(fb + BLOCK_HEAD, w->steps, w->last_hash, NULL);
    rc = emit_block(w, GK_REPLAY_BLOCK_FOOTER, fb, n);
  }
  if (rc == 0) rc = undefer(w);
  if (rc == 0 && !w->memory) {
    rc = publish(w, err, errlen);
  } else if (rc != 0) {
    gk_errf(err, errlen, rc, "replay: writing '%s': %s",
            w->memory ? "(memory)" : w->tmp_path,
            w->sys_errno ? strerror(w->sys_errno) : gk_strerror(rc));
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
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    (void)unlink(w->tmp_path);
  }
  writer_release(w);
  free(w->mem);
  w->mem = NULL;
  w->mem_len = w->mem_cap = 0;
}

/* --- deferred writing ----------------------------------------------------- */

int gk_replay_writer_defer(gk_replay_writer *w) {
  if (!w->open || w->memory) return GK_ESTATE;
  w->deferred = 1;
  return 0;
}

int gk_replay_writer_take_chunk(gk_replay_writer *w, gk_replay_chunk *c) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  if (!w->open || !w->deferred) return GK_ESTATE;
  int rc = gk_replay_writer_flush(w);
  if (rc != 0) return rc;
  c->fd = w->fd;
  c->bytes = w->out;
  c->len = w->out_len;
  c->steps = w->steps;
  w->out = NULL;
  w->out_len = w->out_cap = 0;
  return 0;
}

int gk_replay_chunk_write(gk_replay_chunk *c, int sync) {
  c->sys_errno = 0;
  if (c->len > 0) c->sys_errno = gk__replay_write_all(c->fd, c->bytes, c->len);
  if (c->sys_errno == 0 && sync && fdatasync(c->fd) != 0)
    c->sys_errno = errno != 0 ? errno : EIO;
  return c->sys_errno != 0 ? GK_EIO : 0;
}

void gk_replay_chunk_free(gk_replay_chunk *c) {
  free(c->bytes);
  c->bytes = NULL;
  c->len = 0;
}

void gk_replay_writer_fail(gk_replay_writer *w, int sys_errno) {
  if (w->err != 0) return;
  w->err = GK_EIO;
  w->sys_errno = sys_errno;
}
