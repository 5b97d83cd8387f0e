/* gk_replay_recover.c: turning the .gkr.tmp a crash left behind into a
 * finished replay (see gk_replay.h). The one bounded reader finds every
 * complete, checksum-valid block; the bytes up to the last of them are
 * kept, a footer that says where and why the file was cut short is
 * appended, the result is verified step by step, and only a verified
 * result is published (written to OUT.part, fsynced, renamed to OUT).
 * gk_replay_recover_new publishes with link(2) instead, which never
 * replaces a file of that name, even one that appears while the steps
 * are verified. The file recovered from is never changed.
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

static int fail(gk_replay_recovery *rec, int status, int code, const char *fmt,
                ...) GK_PRINTF(4, 5);

static int fail(gk_replay_recovery *rec, int status, int code, const char *fmt,
                ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rec->message, sizeof rec->message, fmt, ap);
  va_end(ap);
  rec->status = status;
  rec->code = code;
  return status;
}

/* The recovered bytes: the valid prefix (without an old footer) and a
 * cut-short footer; or, for a file that was already complete, its bytes. */
static uint8_t *build(const gk_replay *r, const uint8_t *bytes,
                      gk_replay_recovery *rec, size_t *len) {
  if (r->complete) {
    uint8_t *copy = malloc((size_t)r->size ? (size_t)r->size : 1);
    if (copy != NULL) memcpy(copy, bytes, (size_t)r->size);
    *len = (size_t)r->size;
    return copy;
  }
  uint64_t keep = r->footer_at != 0 ? r->footer_at : r->valid_end;
  rec->cut.code = r->damage.code;
  rec->cut.offset = r->damage.offset;
  rec->cut.dropped = r->size - keep;
  snprintf(rec->cut.reason, sizeof rec->cut.reason, "%s", r->damage.what);
  uint8_t *out = malloc((size_t)keep + BLOCK_HEAD + FOOTER_MAX + 8);
  if (out == NULL) return NULL;
  memcpy(out, bytes, (size_t)keep);
  uint8_t *fb = out + keep;
  size_t n =
      gk__replay_footer(fb + BLOCK_HEAD, r->steps, r->last_hash, &rec->cut);
  gk__replay_seal(fb, GK_REPLAY_BLOCK_FOOTER, (uint32_t)(r->nblocks + 1), n);
  *len = (size_t)keep + BLOCK_HEAD + n + 8;
  return out;
}

/* Moves `part` to `out`; with `replace` 0, never over an existing `out`
 * (EEXIST): a hard link is atomic; where the file system has none, a
 * check and a rename. Returns 0 or an errno. */
static int place(const char *part, const char *out, int replace) {
  if (replace) return rename(part, out) == 0 ? 0 : errno;
  if (link(part, out) == 0) {
    (void)unlink(part); /* `out` is published: a stray .part is harmless */
    return 0;
  }
  int e = errno;
  if (e != EPERM && e != EOPNOTSUPP && e != ENOSYS) return e;
  struct stat st;
  if (stat(out, &st) == 0) return EEXIST;
  return rename(part, out) == 0 ? 0 : errno;
}

/* Writes `bytes` to OUT.part, fsyncs, moves it to OUT (place), fsyncs
 * the folder. Returns 0 or an errno. */
static int publish(const char *out, const uint8_t *bytes, size_t len,
                   int replace) {
  size_t n = strlen(out);
  char *part = malloc(n + 6);
  if (part == NULL) return ENOMEM;
  memcpy(part, out, n);
  memcpy(part + n, ".part", 6);
  int e = 0;
  int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) e = errno;
  if (e == 0) e = gk__replay_write_all(fd, bytes, len);
  if (e == 0 && fsync(fd) != 0) e = errno;
  if (fd >= 0 && close(fd) != 0 && e == 0) e = errno;
  if (e == 0) e = place(part, out, replace);
  if (e != 0)
    (void)unlink(part);
  else
    gk__replay_sync_dir(out);
  free(part);
  return e;
}

/* Checks the recovered bytes: a complete file whose every step verifies. */
static int check(const uint8_t *bytes, size_t len, const gk_sim *sim,
                 gk_replay_recovery *rec) {
  gk_replay r;
  int rc = gk_replay_open_bytes(&r, bytes, len);
  if (rc != 0) {
    fail(rec, GK_REPLAY_INVALID, rc,
         "the recovered file does not read back: offset %" PRIu64 ": %s",
         r.damage.offset, r.damage.what);
    gk_replay_close(&r);
    return rec->status;
  }
  gk_replay_verdict v;
  gk_replay_verify(&r, sim, NULL, NULL, &v);
  gk_replay_close(&r);
  if (v.status != GK_REPLAY_OK)
    return fail(rec, v.status,
                v.status == GK_REPLAY_MISMATCH ? GK_EMISMATCH : v.code,
                "the recovered steps do not verify: %s", v.message);
  rec->steps_verified = v.steps_checked;
  return GK_REPLAY_OK;
}

/* `out` is taken: nothing is done (gk_replay_recover_new). */
static int taken(gk_replay_recovery *rec, const char *out) {
  return fail(rec, GK_REPLAY_INVALID, GK_EEXIST,
              "'%s' exists already: it is not replaced", out);
}

static int recover(const char *in, const char *out, const gk_sim *sim,
                   gk_replay_recovery *rec, int replace) {
  memset(rec, 0, sizeof *rec);
  struct stat st;
  if (!replace && stat(out, &st) == 0) return taken(rec, out);
  gk_replay r;
  gk_replay_open_file(&r, in);
  rec->size = r.size;
  if (!r.header_ok) {
    fail(rec, GK_REPLAY_INVALID, r.damage.code != 0 ? r.damage.code : GK_EPROTO,
         "nothing to recover: no valid header: offset %" PRIu64 ": %s",
         r.damage.offset, r.damage.what);
    gk_replay_close(&r);
    return rec->status;
  }
  rec->complete = r.complete;
  rec->steps = r.steps;
  size_t len = 0;
  uint8_t *bytes = build(&r, r.bytes, rec, &len);
  gk_replay_close(&r);
  if (bytes == NULL)
    return fail(rec, GK_REPLAY_INVALID, GK_ENOMEM, "out of memory");
  rec->kept = rec->size - rec->cut.dropped;
  if (check(bytes, len, sim, rec) == GK_REPLAY_OK) {
    int e = publish(out, bytes, len, replace);
    if (e == EEXIST && !replace)
      taken(rec, out);
    else if (e != 0)
      fail(rec, GK_REPLAY_INVALID, GK_EIO, "cannot write '%s': %s", out,
           strerror(e));
  }
  free(bytes);
  return rec->status;
}

int gk_replay_recover(const char *in, const char *out, const gk_sim *sim,
                      gk_replay_recovery *rec) {
  return recover(in, out, sim, rec, 1);
}

int gk_replay_recover_new(const char *in, const char *out, const gk_sim *sim,
                          gk_replay_recovery *rec) {
  return recover(in, out, sim, rec, 0);
}
