/* gk_server_replay.c: a room's recording, from the match's first step to
 * the published .gkr, and what a crash left behind.
 *
 * The loop never waits on the disk for a replay. A room's recording (an
 * sv_rec, on the heap, so it can outlive its room) holds a deferred
 * gk_replay_writer: steps are appended on the loop into memory; every
 * `replays.flush_ms` the finished blocks (and the pending steps, cut into
 * a block) are handed over as a chunk to a job on libuv's thread pool,
 * which writes and fdatasyncs them, so a crash loses at most the last
 * interval. One job per recording at a time: a flush job holds only its
 * chunk (the loop keeps appending to the writer meanwhile); the finish job
 * holds the whole writer, after the room let go of it. Creating the .tmp
 * file is the one disk call made on the loop. The jobs make no cJSON call
 * (cJSON's state is process-global, see gk_server_internal.h): the header
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
#include "gk_server_internal.h"

enum { JOB_FLUSH = 1, JOB_FINISH = 2 };

struct sv_rec {
  uv_work_t req;
  gk_server *srv;
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
static void disk_failed(gk_server *s, const char *code, const char *path,
                        int sys_errno, const char *reason) {
  s->stats.replays_failed++;
  s->stats.replay_disk_errors++;
  int first = !s->replay_fault;
  s->replay_fault = 1;
  s->replay_fault_lost++;
  if (!gk_log_begin(s->log, first ? GK_LOG_ERROR : GK_LOG_DEBUG,
                    "replay_failed", code))
    return;
  gk_log_str(s->log, "path", path);
  gk_log_str(s->log, "reason", reason);
  gk_log_str(s->log, "errno", sys_errno ? strerror(sys_errno) : NULL);
  if (first)
    gk_log_str(s->log, "note",
               "the match goes on unrecorded; further failures are counted "
               "(replay_disk_errors) and logged once recording resumes");
  gk_log_end(s->log);
}

/* A replay write succeeded: a fault, if there was one, is over. */
static void disk_ok(gk_server *s) {
  if (!s->replay_fault) return;
  s->replay_fault = 0;
  if (gk_log_begin(s->log, GK_LOG_INFO, "replay_resumed", NULL)) {
    gk_log_u64(s->log, "recordings_lost", s->replay_fault_lost);
    gk_log_end(s->log);
  }
  s->replay_fault_lost = 0;
}

/* --- jobs on the thread pool -----------------------------------------------
 */

/* On the loop (job_done or a failed open): the one cJSON call here. */
static void rec_free(sv_rec *rec) {
  gk_replay_chunk_free(&rec->chunk);
  gk_replay_writer_abort(&rec->w); /* no-op after finish */
  free(rec->header);
  cJSON_Delete(rec->lockstep);
  free(rec);
}

/* On the thread pool: disk writes only, never a cJSON call (the header
 * was serialized on the loop, in rec_open). */
static void job_work(uv_work_t *req) {
  sv_rec *rec = req->data;
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

static void job_done(uv_work_t *req, int status);

/* Queues rec's next job (or runs it here if the pool refuses). */
static void job_start(gk_server *s, sv_rec *rec, int job) {
  rec->job = job;
  rec->req.data = rec;
  if (uv_queue_work(s->loop, &rec->req, job_work, job_done) == 0) {
    s->jobs++;
    return;
  }
  job_work(&rec->req);
  s->jobs++;
  job_done(&rec->req, 0);
}

static void report_finish(gk_server *s, sv_rec *rec) {
  if (rec->rc == 0) {
    s->stats.replays_written++;
    disk_ok(s);
    if (gk_log_begin(s->log, GK_LOG_INFO, "replay_written", rec->code)) {
      gk_log_str(s->log, "path", rec->path);
      gk_log_u64(s->log, "steps", rec->w.steps);
      gk_log_hex(s->log, "final_hash", rec->w.last_hash);
      gk_log_end(s->log);
    }
  } else if (!rec->failed && !rec->discard) {
    disk_failed(s, rec->code, rec->path, rec->sys_errno, rec->err);
  }
}

static void job_done(uv_work_t *req, int status) {
  sv_rec *rec = req->data;
  gk_server *s = rec->srv;
  int job = rec->job;
  (void)status; /* jobs are never cancelled */
  rec->job = 0;
  s->jobs--;
  if (job == JOB_FLUSH) {
    if (rec->rc == 0) rec->disk_steps = rec->chunk.steps;
    gk_replay_chunk_free(&rec->chunk);
    s->stats.replay_flushes++;
    if (rec->rc == 0) {
      disk_ok(s);
    } else if (!rec->failed) {
      rec->failed = 1;
      gk_replay_writer_fail(&rec->w, rec->sys_errno);
      char why[sizeof(rec->path) + 64];
      snprintf(why, sizeof(why), "writing steps to %s.tmp at step %llu",
               rec->path, (unsigned long long)rec->w.steps);
      disk_failed(s, rec->code, rec->path, rec->sys_errno, why);
    }
    if (rec->released) job_start(s, rec, JOB_FINISH);
    return;
  }
  report_finish(s, rec);
  rec_free(rec);
  if (s->closing && s->jobs == 0) {
    sv_log_stopped(s);
    sv_maybe_free(s);
  }
}

/* --- a room's recording ------------------------------------------------------
 */

static int replay_path(gk_server *s, sv_room *r) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  int n =
      snprintf(r->replay_path, sizeof(r->replay_path),
               "%s/%04d%02d%02dT%02d%02d%02dZ-%s-%s.gkr", s->cfg->replay_dir,
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
               tm.tm_min, tm.tm_sec, r->genre->sim->name, r->code);
  return n > 0 && (size_t)n < sizeof(r->replay_path) ? 0 : GK_ETOOBIG;
}

/* Opens rec's writer; a missing folder is created again first. The header
 * text and the lockstep record stay in rec: a desync bundle cuts its
 * replay from the .tmp on the thread pool, checking the header against
 * this text and building its own from the record (sv_replay_header). */
static int rec_open(gk_server *s, sv_room *r, sv_rec *rec, char *err,
                    size_t errlen) {
  char origin[128];
  snprintf(origin, sizeof(origin), "gk-server room %s", r->code);
  int rc = replay_path(s, r);
  if (rc) return gk_errf(err, errlen, rc, "replay path too long");
  rec->lockstep = sv_delay_record(s, r); /* may be NULL */
  gk_replay_meta meta = {r->genre->sim,          r->cfg, r->seed,
                         r->session.cfg.players, origin, rec->lockstep};
  rec->header = gk_replay_header_json(&meta, err, errlen);
  if (!rec->header) return GK_ENOMEM;
  rc = gk_replay_writer_open_text(&rec->w, r->replay_path, &meta, rec->header,
                                  1, err, errlen);
  if (rc && rec->w.sys_errno == ENOENT && mkdir(s->cfg->replay_dir, 0755) == 0)
    rc = gk_replay_writer_open_text(&rec->w, r->replay_path, &meta, rec->header,
                                    1, err, errlen);
  return rc;
}

void sv_replay_open(gk_server *s, sv_room *r) {
  char err[GK_REPLAY_MSG_MAX];
  err[0] = '\0';
  sv_rec *rec = calloc(1, sizeof(*rec));
  int rc = rec ? rec_open(s, r, rec, err, sizeof(err)) : GK_ENOMEM;
  if (!rc) {
    rec->srv = s;
    memcpy(rec->code, r->code, sizeof(rec->code));
    snprintf(rec->path, sizeof(rec->path), "%s", r->replay_path);
    rec->next_flush_ms = sv_now_ms(s) + s->cfg->replay_flush_ms;
    r->rec = rec;
    return;
  }
  /* the match is played without a recording; say so (once per fault) */
  disk_failed(s, r->code, r->replay_path, rec ? rec->w.sys_errno : 0,
              rc == GK_ENOMEM && !err[0] ? "out of memory" : err);
  if (rec) { /* the writer needs no abort: it is not open */
    free(rec->header);
    cJSON_Delete(rec->lockstep);
  }
  free(rec);
}

int sv_replay_header(const sv_room *r, const char **text,
                     const cJSON **lockstep) {
  *text = r->rec ? r->rec->header : NULL;
  *lockstep = r->rec ? r->rec->lockstep : NULL;
  return r->rec != NULL;
}

void sv_replay_step(gk_server *s, sv_room *r, const gk_step_input *in,
                    uint64_t hash) {
  sv_rec *rec = r->rec;
  if (!rec || rec->failed) return;
  int rc = gk_replay_writer_append(&rec->w, in, hash);
  if (rc) {
    /* memory, not the disk (the writer is deferred): only this recording
     * is lost */
    rec->failed = 1;
    s->stats.replays_failed++;
    if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_failed", r->code)) {
      gk_log_str(s->log, "path", rec->path);
      gk_log_u64(s->log, "step", in->step);
      gk_log_err(s->log, "code", rc);
      gk_log_end(s->log);
    }
  }
}

void sv_replay_tick(gk_server *s, sv_room *r, uint64_t now) {
  sv_rec *rec = r->rec;
  if (!rec || rec->job || rec->failed || !s->cfg->replay_flush_ms ||
      now < rec->next_flush_ms)
    return;
  rec->next_flush_ms = now + s->cfg->replay_flush_ms;
  if (gk_replay_writer_take_chunk(&rec->w, &rec->chunk) != 0) return;
  if (rec->chunk.len == 0) {
    gk_replay_chunk_free(&rec->chunk);
    return;
  }
  job_start(s, rec, JOB_FLUSH);
}

int sv_replay_flush_now(gk_server *s, sv_room *r, uint64_t *disk_steps) {
  sv_rec *rec = r->rec;
  *disk_steps = 0;
  if (!rec || rec->failed) return 0;
  *disk_steps = rec->disk_steps;
  if (rec->job || rec->w.steps <= rec->disk_steps) return 1;
  if (gk_replay_writer_take_chunk(&rec->w, &rec->chunk) != 0) return 1;
  if (rec->chunk.len == 0) {
    gk_replay_chunk_free(&rec->chunk);
    return 1;
  }
  rec->next_flush_ms = sv_now_ms(s) + s->cfg->replay_flush_ms;
  job_start(s, rec, JOB_FLUSH);
  return 1;
}

/* The room lets go of its recording: it is finished (or, with `discard`,
 * removed) once no job holds it. */
static void release(gk_server *s, sv_room *r, int discard) {
  sv_rec *rec = r->rec;
  r->rec = NULL;
  rec->released = 1;
  rec->discard = discard;
  if (!rec->job) job_start(s, rec, JOB_FINISH);
}

void sv_replay_finish(gk_server *s, sv_room *r) {
  if (r->rec) release(s, r, 0);
}

void sv_replay_drop(gk_server *s, sv_room *r) {
  if (r->rec) release(s, r, 1);
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

static void recover_one(gk_server *s, const char *tmp) {
  char out[GK_SERVER_PATH_MAX + 300], aside[GK_SERVER_PATH_MAX + 320];
  char first[sizeof(out)];
  gk_replay_recovery rec;
  int which = recover_free(tmp, out, sizeof(out), &rec);
  if (rec.status == GK_REPLAY_OK) {
    (void)remove(tmp); /* everything it held that was whole is in `out` */
    s->stats.replays_recovered++;
    if (which > 0) recovered_name(tmp, 0, first, sizeof(first));
    if (gk_log_begin(s->log, GK_LOG_WARN, "replay_recovered", NULL)) {
      gk_log_str(s->log, "path", out);
      /* NAME.gkr was there already: kept as it was, this one renamed */
      gk_log_str(s->log, "name_taken", which > 0 ? first : NULL);
      gk_log_u64(s->log, "steps", rec.steps);
      gk_log_u64(s->log, "bytes_dropped", rec.cut.dropped);
      gk_log_str(s->log, "cut",
                 rec.complete ? NULL : gk_err_name(rec.cut.code));
      gk_log_str(s->log, "reason", rec.complete ? NULL : rec.cut.reason);
      gk_log_end(s->log);
    }
    return;
  }
  s->stats.replays_damaged++;
  int e = move_aside(tmp, aside, sizeof(aside));
  if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_unrecoverable", NULL)) {
    gk_log_str(s->log, "path", tmp);
    gk_log_str(s->log, "moved_to", e ? NULL : aside);
    gk_log_str(s->log, "move_error", e ? strerror(e) : NULL);
    gk_log_str(s->log, "reason", rec.message);
    gk_log_end(s->log);
  }
}

void sv_replay_recover_dir(gk_server *s) {
  static const char ext[] = GK_REPLAY_EXT ".tmp";
  DIR *d = opendir(s->cfg->replay_dir);
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
    names[n] = malloc(strlen(s->cfg->replay_dir) + len + 2);
    if (!names[n]) break;
    sprintf(names[n++], "%s/%s", s->cfg->replay_dir, e->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    recover_one(s, names[i]);
    free(names[i]);
  }
  free(names);
}
