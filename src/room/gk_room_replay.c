/* gk_room_replay.c: a room's recording, from the match's first step to
 * the published .gkr, and what a crash left behind.
 *
 * The loop never waits on the disk for a replay. A room's recording (an
 * gk_room__rec, on the heap, so it can outlive its room) holds a deferred
 * gk_replay_writer: steps are appended on the loop into memory; every
 * `replays.flush_ms` the finished blocks (and the pending steps, cut into
 * a block) are handed over as a chunk to a job on a worker thread (env.queue),
 * which writes and fdatasyncs them, so a crash loses at most the last
 * interval. One job per recording at a time: a flush job holds only its
 * chunk (the loop keeps appending to the writer meanwhile); the finish job
 * holds the whole writer, after the room let go of it. Creating the .tmp
 * file is the one disk call made on the loop. The jobs make no cJSON call
 * (cJSON's state is process-global, see gk_room_internal.h): the header
 * is serialized on the loop when the recording opens.
 *
 * Disk faults (the folder missing or unwritable, ENOSPC, EDQUOT, EFBIG):
 * the room's recording stops (its .tmp is removed, giving the space back),
 * the match goes on, the failure is counted (stats.replay_disk_errors and
 * replays_failed), and it is logged once per fault: the first failure
 * logs `replay_failed` at error level with the reason; later ones, until a
 * replay write succeeds again, only at debug level; the first success
 * logs `replay_resumed` with how many recordings were lost. Other rooms
 * are not touched, and every new room tries again (recreating a missing
 * folder), so recording resumes once there is space.
 *
 * At start, `.gkr.tmp` files in the folder (left by a crash) are
 * recovered with gk_replay_recover_new and logged (`replay_recovered`);
 * one that cannot be recovered is renamed to `.gkr.damaged`, never
 * deleted. Nothing is ever renamed over a file: a NAME.gkr.tmp whose
 * NAME.gkr exists is recovered to NAME.recovered.gkr (then
 * .recovered.2.gkr, ...; the log line names the taken name as
 * `name_taken`), and a second damaged NAME goes to .gkr.damaged.1, ...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_room_internal.h"

enum { JOB_FLUSH = 1, JOB_FINISH = 2 };

struct gk_room__rec {
  gk_room_job work; /* first: the recording is its own job */
  gk_room_host *srv;
  gk_replay_writer w;
  char code[GK_WIRE_CODE_LEN + 1];
  char path[GK_SERVER_PATH_MAX + 64];
  int job;               /* JOB_* while a job runs, else 0 */
  int released;          /* the room let go of it: finish after the job */
  int discard;           /* ... and remove it instead (the room failed) */
  int failed;            /* a write failed (reported); the writer refuses */
  gk_replay_chunk chunk; /* held by a flush job */
  uint64_t disk_steps;   /* steps in the .tmp (written by flush jobs) */
  uint64_t next_flush_ms;
  char *header;    /* the header's JSON text, made on the loop at open */
  cJSON *lockstep; /* its lockstep record (may be NULL) */
  int rc;
  int sys_errno;
  char err[GK_REPLAY_MSG_MAX];
};

/* --- disk faults -----------------------------------------------------------
 */

/* A recording failed on the disk (or could not start): counted; logged at
 * error level only when it starts a fault. */
static void disk_failed(gk_room_host *h, const char *code, const char *path,
                        int sys_errno, const char *reason) {
  h->stats.replays_failed++;
  h->stats.replay_disk_errors++;
  int first = !h->replay_fault;
  h->replay_fault = 1;
  h->replay_fault_lost++;
  if (!gk_log_begin(h->log, first ? GK_LOG_ERROR : GK_LOG_DEBUG,
                    "replay_failed", code))
    return;
  gk_log_str(h->log, "path", path);
  gk_log_str(h->log, "reason", reason);
  gk_log_str(h->log, "errno", sys_errno ? strerror(sys_errno) : NULL);
  if (first)
    gk_log_str(h->log, "note",
               "the match goes on unrecorded; further failures are counted "
               "(replay_disk_errors) and logged once recording resumes");
  gk_log_end(h->log);
}

/* A replay write succeeded: a fault, if there was one, is over. */
static void disk_ok(gk_room_host *h) {
  if (!h->replay_fault) return;
  h->replay_fault = 0;
  if (gk_log_begin(h->log, GK_LOG_INFO, "replay_resumed", NULL)) {
    gk_log_u64(h->log, "recordings_lost", h->replay_fault_lost);
    gk_log_end(h->log);
  }
  h->replay_fault_lost = 0;
}

/* --- jobs on the thread pool -----------------------------------------------
 */

/* On the loop (job_done or a failed open): the one cJSON call here. */
static void rec_free(gk_room__rec *rec) {
  gk_replay_chunk_free(&rec->chunk);
  gk_replay_writer_abort(&rec->w); /* no-op after finish */
  free(rec->header);
  cJSON_Delete(rec->lockstep);
  free(rec);
}

/* On the thread pool: disk writes only, never a cJSON call (the header
 * was serialized on the loop, in rec_open). */
static void job_work(gk_room_job *job) {
  gk_room__rec *rec = (gk_room__rec *)job;
  rec->err[0] = '\0';
  rec->sys_errno = 0;
  if (rec->job == JOB_FLUSH) {
    rec->rc = gk_replay_chunk_write(&rec->chunk, 1);
    rec->sys_errno = rec->chunk.sys_errno;
  } else if (rec->failed || rec->discard) {
    gk_replay_writer_abort(&rec->w); /* removes the .tmp */
    rec->rc = GK_ECLOSED;
  } else {
    rec->rc = gk_replay_writer_finish(&rec->w, rec->err, sizeof(rec->err));
    rec->sys_errno = rec->w.sys_errno;
  }
}

static void job_done(gk_room_job *job);

/* Queues rec's next job (or runs it here if the pool refuses). */
static void job_start(gk_room_host *h, gk_room__rec *rec, int job) {
  rec->job = job;
  rec->work.work = job_work;
  rec->work.done = job_done;
  if (h->env.queue(h->env.user, &rec->work) == 0) return;
  job_work(&rec->work); /* the pool refused: here, once */
  job_done(&rec->work);
}

static void report_finish(gk_room_host *h, gk_room__rec *rec) {
  if (rec->rc == 0) {
    h->stats.replays_written++;
    disk_ok(h);
    if (gk_log_begin(h->log, GK_LOG_INFO, "replay_written", rec->code)) {
      gk_log_str(h->log, "path", rec->path);
      gk_log_u64(h->log, "steps", rec->w.steps);
      gk_log_hex(h->log, "final_hash", rec->w.last_hash);
      gk_log_end(h->log);
    }
  } else if (!rec->failed && !rec->discard) {
    disk_failed(h, rec->code, rec->path, rec->sys_errno, rec->err);
  }
}

static void job_done(gk_room_job *work) {
  gk_room__rec *rec = (gk_room__rec *)work;
  gk_room_host *h = rec->srv;
  int job = rec->job;
  rec->job = 0;
  if (job == JOB_FLUSH) {
    if (rec->rc == 0) rec->disk_steps = rec->chunk.steps;
    gk_replay_chunk_free(&rec->chunk);
    h->stats.replay_flushes++;
    if (rec->rc == 0) {
      disk_ok(h);
    } else if (!rec->failed) {
      rec->failed = 1;
      gk_replay_writer_fail(&rec->w, rec->sys_errno);
      char why[sizeof(rec->path) + 64];
      snprintf(why, sizeof(why), "writing steps to %s.tmp at step %llu",
               rec->path, (unsigned long long)rec->w.steps);
      disk_failed(h, rec->code, rec->path, rec->sys_errno, why);
    }
    if (rec->released) job_start(h, rec, JOB_FINISH);
    return;
  }
  report_finish(h, rec);
  rec_free(rec);
}

/* --- a room's recording ------------------------------------------------------
 */

static int replay_path(gk_room_host *h, gk_room *r) {
  struct tm tm;
  time_t now = (time_t)h->env.wall_s(h->env.user);
  gmtime_r(&now, &tm);
  int n =
      snprintf(r->replay_path, sizeof(r->replay_path),
               "%s/%04d%02d%02dT%02d%02d%02dZ-%s-%s.gkr", h->cfg->replay_dir,
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
               tm.tm_min, tm.tm_sec, r->genre->sim->name, r->code);
  return n > 0 && (size_t)n < sizeof(r->replay_path) ? 0 : GK_ETOOBIG;
}

/* Opens rec's writer; a missing folder is created again first. The header
 * text and the lockstep record stay in rec: a desync bundle cuts its
 * replay from the .tmp on the thread pool, checking the header against
 * this text and building its own from the record (gk_room__replay_header). */
static int rec_open(gk_room_host *h, gk_room *r, gk_room__rec *rec, char *err,
                    size_t errlen) {
  char origin[128];
  snprintf(origin, sizeof(origin), "gk-server room %s", r->code);
  int rc = replay_path(h, r);
  if (rc) return gk_errf(err, errlen, rc, "replay path too long");
  rec->lockstep = gk_room__delay_record(h, r); /* may be NULL */
  gk_replay_meta meta = {r->genre->sim,          r->cfg, r->seed,
                         r->session.cfg.players, origin, rec->lockstep};
  rec->header = gk_replay_header_json(&meta, err, errlen);
  if (!rec->header) return GK_ENOMEM;
  rc = gk_replay_writer_open_text(&rec->w, r->replay_path, &meta, rec->header,
                                  1, err, errlen);
  if (rc && rec->w.sys_errno == ENOENT && mkdir(h->cfg->replay_dir, 0755) == 0)
    rc = gk_replay_writer_open_text(&rec->w, r->replay_path, &meta, rec->header,
                                    1, err, errlen);
  return rc;
}

void gk_room__replay_open(gk_room_host *h, gk_room *r) {
  char err[GK_REPLAY_MSG_MAX];
  err[0] = '\0';
  gk_room__rec *rec = calloc(1, sizeof(*rec));
  int rc = rec ? rec_open(h, r, rec, err, sizeof(err)) : GK_ENOMEM;
  if (!rc) {
    rec->srv = h;
    memcpy(rec->code, r->code, sizeof(rec->code));
    snprintf(rec->path, sizeof(rec->path), "%s", r->replay_path);
    rec->next_flush_ms = gk_room__now(h) + h->cfg->replay_flush_ms;
    r->rec = rec;
    return;
  }
  /* the match is played without a recording; say so (once per fault) */
  disk_failed(h, r->code, r->replay_path, rec ? rec->w.sys_errno : 0,
              rc == GK_ENOMEM && !err[0] ? "out of memory" : err);
  if (rec) { /* the writer needs no abort: it is not open */
    free(rec->header);
    cJSON_Delete(rec->lockstep);
  }
  free(rec);
}

int gk_room__replay_header(const gk_room *r, const char **text,
                           const cJSON **lockstep) {
  *text = r->rec ? r->rec->header : NULL;
  *lockstep = r->rec ? r->rec->lockstep : NULL;
  return r->rec != NULL;
}

void gk_room__replay_step(gk_room_host *h, gk_room *r, const gk_step_input *in,
                          uint64_t hash) {
  gk_room__rec *rec = r->rec;
  if (!rec || rec->failed) return;
  int rc = gk_replay_writer_append(&rec->w, in, hash);
  if (rc) {
    /* memory, not the disk (the writer is deferred): only this recording
     * is lost */
    rec->failed = 1;
    h->stats.replays_failed++;
    if (gk_log_begin(h->log, GK_LOG_ERROR, "replay_failed", r->code)) {
      gk_log_str(h->log, "path", rec->path);
      gk_log_u64(h->log, "step", in->step);
      gk_log_err(h->log, "code", rc);
      gk_log_end(h->log);
    }
  }
}

void gk_room__replay_tick(gk_room_host *h, gk_room *r, uint64_t now) {
  gk_room__rec *rec = r->rec;
  if (!rec || rec->job || rec->failed || !h->cfg->replay_flush_ms ||
      now < rec->next_flush_ms)
    return;
  rec->next_flush_ms = now + h->cfg->replay_flush_ms;
  if (gk_replay_writer_take_chunk(&rec->w, &rec->chunk) != 0) return;
  if (rec->chunk.len == 0) {
    gk_replay_chunk_free(&rec->chunk);
    return;
  }
  job_start(h, rec, JOB_FLUSH);
}

int gk_room__replay_flush_now(gk_room_host *h, gk_room *r,
                              uint64_t *disk_steps) {
  gk_room__rec *rec = r->rec;
  *disk_steps = 0;
  if (!rec || rec->failed) return 0;
  *disk_steps = rec->disk_steps;
  if (rec->job || rec->w.steps <= rec->disk_steps) return 1;
  if (gk_replay_writer_take_chunk(&rec->w, &rec->chunk) != 0) return 1;
  if (rec->chunk.len == 0) {
    gk_replay_chunk_free(&rec->chunk);
    return 1;
  }
  rec->next_flush_ms = gk_room__now(h) + h->cfg->replay_flush_ms;
  job_start(h, rec, JOB_FLUSH);
  return 1;
}

/* The room lets go of its recording: it is finished (or, with `discard`,
 * removed) once no job holds it. */
static void release(gk_room_host *h, gk_room *r, int discard) {
  gk_room__rec *rec = r->rec;
  r->rec = NULL;
  rec->released = 1;
  rec->discard = discard;
  if (!rec->job) job_start(h, rec, JOB_FINISH);
}

void gk_room__replay_finish(gk_room_host *h, gk_room *r) {
  if (r->rec) release(h, r, 0);
}

void gk_room__replay_drop(gk_room_host *h, gk_room *r) {
  if (r->rec) release(h, r, 1);
}

/* --- leftovers of a crash ----------------------------------------------------
 */

/* Puts `from` at `to` unless a file `to` exists (EEXIST): a hard link,
 * which never replaces a name; where the file system has none, a check
 * and a rename. Returns 0 or an errno. */
static int move_new(const char *from, const char *to) {
  if (link(from, to) == 0) return unlink(from) == 0 ? 0 : errno;
  int e = errno;
  if (e != EPERM && e != EOPNOTSUPP && e != ENOSYS) return e;
  struct stat st;
  if (stat(to, &st) == 0) return EEXIST;
  return rename(from, to) == 0 ? 0 : errno;
}

/* Moves `tmp` (NAME.gkr.tmp) to NAME.gkr.damaged, or .damaged.1 ... if
 * that exists: an earlier damaged file is never replaced. Returns 0 and
 * the new name in `to`, or an errno. */
static int move_aside(const char *tmp, char *to, size_t cap) {
  size_t n = strlen(tmp) - 4; /* without ".tmp" */
  for (int i = 0; i < 100; i++) {
    int w = i ? snprintf(to, cap, "%.*s.damaged.%d", (int)n, tmp, i)
              : snprintf(to, cap, "%.*s.damaged", (int)n, tmp);
    if (w < 0 || (size_t)w >= cap) return ENAMETOOLONG;
    int e = move_new(tmp, to);
    if (e != EEXIST) return e;
  }
  return EEXIST;
}

/* The i-th name a leftover NAME.gkr.tmp may be recovered to: NAME.gkr,
 * then NAME.recovered.gkr, NAME.recovered.2.gkr, ... Returns 1, or 0 if
 * it does not fit in `cap`. */
static int recovered_name(const char *tmp, int i, char *out, size_t cap) {
  int n = (int)(strlen(tmp) - strlen(GK_REPLAY_EXT ".tmp"));
  int w = i == 0   ? snprintf(out, cap, "%.*s" GK_REPLAY_EXT, n, tmp)
          : i == 1 ? snprintf(out, cap, "%.*s.recovered" GK_REPLAY_EXT, n, tmp)
                   : snprintf(out, cap, "%.*s.recovered.%d" GK_REPLAY_EXT, n,
                              tmp, i);
  return w > 0 && (size_t)w < cap;
}

/* Recovers `tmp` to the first of its names that no file has: a replay
 * published under NAME.gkr (or an earlier recovery) is never replaced.
 * Returns which name (0: NAME.gkr) with `out` set, or -1. */
static int recover_free(const char *tmp, char *out, size_t cap,
                        gk_replay_recovery *rec) {
  for (int i = 0; i < 100 && recovered_name(tmp, i, out, cap); i++) {
    gk_replay_recover_new(tmp, out, NULL, rec);
    if (rec->status == GK_REPLAY_OK || rec->code != GK_EEXIST) return i;
  }
  memset(rec, 0, sizeof(*rec));
  rec->status = GK_REPLAY_INVALID;
  rec->code = GK_EEXIST;
  snprintf(rec->message, sizeof(rec->message),
           "every name to recover it to is taken");
  return -1;
}

static void recover_one(gk_room_host *h, const char *tmp) {
  char out[GK_SERVER_PATH_MAX + 300], aside[GK_SERVER_PATH_MAX + 320];
  char first[sizeof(out)];
  gk_replay_recovery rec;
  int which = recover_free(tmp, out, sizeof(out), &rec);
  if (rec.status == GK_REPLAY_OK) {
    (void)remove(tmp); /* everything it held that was whole is in `out` */
    h->stats.replays_recovered++;
    if (which > 0) recovered_name(tmp, 0, first, sizeof(first));
    if (gk_log_begin(h->log, GK_LOG_WARN, "replay_recovered", NULL)) {
      gk_log_str(h->log, "path", out);
      /* NAME.gkr was there already: kept as it was, this one renamed */
      gk_log_str(h->log, "name_taken", which > 0 ? first : NULL);
      gk_log_u64(h->log, "steps", rec.steps);
      gk_log_u64(h->log, "bytes_dropped", rec.cut.dropped);
      gk_log_str(h->log, "cut",
                 rec.complete ? NULL : gk_err_name(rec.cut.code));
      gk_log_str(h->log, "reason", rec.complete ? NULL : rec.cut.reason);
      gk_log_end(h->log);
    }
    return;
  }
  h->stats.replays_damaged++;
  int e = move_aside(tmp, aside, sizeof(aside));
  if (gk_log_begin(h->log, GK_LOG_ERROR, "replay_unrecoverable", NULL)) {
    gk_log_str(h->log, "path", tmp);
    gk_log_str(h->log, "moved_to", e ? NULL : aside);
    gk_log_str(h->log, "move_error", e ? strerror(e) : NULL);
    gk_log_str(h->log, "reason", rec.message);
    gk_log_end(h->log);
  }
}

void gk_room__replay_recover_dir(gk_room_host *h) {
  static const char ext[] = GK_REPLAY_EXT ".tmp";
  DIR *d = opendir(h->cfg->replay_dir);
  if (!d) return;
  /* names first: recovering adds files to the folder being read */
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len <= sizeof(ext) - 1 ||
        strcmp(e->d_name + len - (sizeof(ext) - 1), ext) != 0)
      continue;
    if (n == cap) {
      size_t c = cap ? cap * 2 : 16;
      char **p = realloc(names, c * sizeof(*p));
      if (!p) break;
      names = p;
      cap = c;
    }
    names[n] = malloc(strlen(h->cfg->replay_dir) + len + 2);
    if (!names[n]) break;
    sprintf(names[n++], "%s/%s", h->cfg->replay_dir, e->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    recover_one(h, names[i]);
    free(names[i]);
  }
  free(names);
}
