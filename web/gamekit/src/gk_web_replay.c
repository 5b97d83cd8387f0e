/* gk_web_replay.c: a replay played and verified in a page (see
 * gk_web_replay.h): the reader, a loop over the recorded inputs checked
 * by gk_replay_run_to, kept snapshots for seeking, state maps and the
 * desync bundle's diff. No JSON parser: the host parses the header. */
#include "gk_web_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_state_diff.h"
#include "gk_web.h"
#include "gk_web_internal.h"

typedef struct snap {
  uint8_t *bytes;
  size_t len;
} snap;

struct gk_web_replay {
  gk_replay r;
  uint8_t *bytes; /* the file, owned */
  const gk_sim *sim;
  void *cfg;    /* sim->config_size bytes, owned */
  gk_loop loop; /* the play loop: the position shown */
  gk_loop scan; /* the scan loop: runs ahead, keeping snapshots */
  int loop_ok, scan_ok, started;
  gk_hasher hasher;
  int hasher_ok;
  uint32_t every;
  snap *snaps; /* snaps[k]: the state at position k * every */
  uint32_t nsnaps, snaps_cap;
  uint64_t snap_bytes;
  uint64_t verified; /* furthest position whose steps all matched */
  gk_replay_verdict v;
  int done;     /* v is final */
  uint8_t *map; /* the last map */
  size_t map_len, map_cap;
  char *text; /* the last diff text */
  char err[GK_REPLAY_MSG_MAX * 2];
};

static int fail(gk_web_replay *w, int code, const char *what) {
  if (what != w->err) snprintf(w->err, sizeof w->err, "%s", what);
  return code;
}

void gk_web_replay_refuse(gk_web_replay *w, int code, const char *what) {
  const gk_replay *r = &w->r;
  uint64_t offset = r->header_ok ? 0 : r->damage.offset;
  if (what == NULL) what = r->header_ok ? w->err : r->damage.what;
  if (w->done) return;
  /* gk_replay_run's message for a run that cannot start */
  memset(&w->v, 0, sizeof w->v);
  w->v.status = GK_REPLAY_INVALID;
  w->v.code = code;
  w->v.offset = offset;
  snprintf(w->v.message, sizeof w->v.message, "offset %" PRIu64 ": %.*s (%s)",
           offset, GK_REPLAY_MSG_MAX, what, gk_err_name(code));
  w->done = 1;
}

gk_web_replay *gk_web_replay_new(void) {
  gk_web_replay *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  gk_loop_options o = {GK_REPLAY_PROGRESS_STEPS};
  w->loop_ok = gk_loop_init(&w->loop, &o) == 0;
  w->scan_ok = gk_loop_init(&w->scan, &o) == 0;
  w->hasher_ok = gk_hasher_init(&w->hasher) == 0;
  if (!w->loop_ok || !w->scan_ok || !w->hasher_ok) {
    gk_web_replay_free(w);
    return NULL;
  }
  return w;
}

static void free_cfg(gk_web_replay *w) {
  if (w->cfg != NULL && w->sim != NULL && w->sim->config_free != NULL)
    w->sim->config_free(w->cfg);
  free(w->cfg);
  w->cfg = NULL;
}

void gk_web_replay_free(gk_web_replay *w) {
  if (w == NULL) return;
  if (w->loop_ok) gk_loop_close(&w->loop);
  if (w->scan_ok) gk_loop_close(&w->scan);
  if (w->hasher_ok) gk_hasher_close(&w->hasher);
  free_cfg(w);
  for (uint32_t i = 0; i < w->nsnaps; i++) free(w->snaps[i].bytes);
  free(w->snaps);
  gk_replay_close(&w->r);
  free(w->bytes);
  free(w->map);
  free(w->text);
  free(w);
}

int gk_web_replay_open(gk_web_replay *w, const uint8_t *bytes, size_t len,
                       const gk_replay_parser *p) {
  if (w->bytes != NULL) return fail(w, GK_ESTATE, "a replay is open already");
  w->bytes = malloc(len ? len : 1);
  if (w->bytes == NULL) return fail(w, GK_ENOMEM, "out of memory");
  if (len > 0) memcpy(w->bytes, bytes, len);
  int rc = gk_replay_open_bytes_with(&w->r, w->bytes, len, p);
  if (rc != 0) fail(w, rc, w->r.damage.what);
  return rc;
}

const gk_replay *gk_web_replay_reader(const gk_web_replay *w) {
  return &w->r;
}

int gk_web_replay_prepare(gk_web_replay *w) {
  if (!w->r.header_ok) {
    int code = w->r.damage.code ? w->r.damage.code : GK_EINVAL;
    gk_web_replay_refuse(w, code, NULL);
    return fail(w, code, w->r.damage.what);
  }
  const gk_sim *sim = gk_web_genre(w->r.genre);
  int rc = gk_replay_check_sim(&w->r, sim, w->err, sizeof w->err);
  if (rc != 0) {
    gk_web_replay_refuse(w, rc, w->err);
    return rc;
  }
  free_cfg(w);
  w->sim = sim;
  w->cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (w->cfg == NULL) return fail(w, GK_ENOMEM, "out of memory");
  sim->config_default(w->cfg);
  return 0;
}

const gk_sim *gk_web_replay_sim(const gk_web_replay *w) {
  return w->sim;
}

void *gk_web_replay_cfg(gk_web_replay *w) {
  return w->cfg;
}

/* Keeps the state at lp's position if it is snapshot nsnaps's. */
static int keep_snapshot(gk_web_replay *w, const gk_loop *lp) {
  uint64_t at = lp->steps;
  if (at % w->every != 0 || at / w->every != w->nsnaps) return 0;
  if (w->nsnaps == w->snaps_cap) {
    uint32_t cap = w->snaps_cap ? w->snaps_cap * 2 : 64;
    snap *s = realloc(w->snaps, cap * sizeof *s);
    if (s == NULL) return fail(w, GK_ENOMEM, "out of memory for snapshots");
    w->snaps = s;
    w->snaps_cap = cap;
  }
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  w->sim->write_state(gk_loop_state(lp), &b.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&b, &len);
  if (bytes == NULL) return fail(w, GK_ENOMEM, "out of memory for snapshots");
  w->snaps[w->nsnaps].bytes = bytes;
  w->snaps[w->nsnaps].len = len;
  w->nsnaps++;
  w->snap_bytes += len;
  return 0;
}

int gk_web_replay_start(gk_web_replay *w, uint32_t every) {
  if (w->sim == NULL) return fail(w, GK_ESTATE, "not prepared");
  if (w->started) return fail(w, GK_ESTATE, "started already");
  w->every = every ? every : GK_WEB_REPLAY_EVERY;
  w->err[0] = '\0';
  int rc = gk_loop_start(&w->loop, w->sim, w->cfg, w->r.seed, w->r.players,
                         w->err, sizeof w->err);
  if (rc == 0)
    rc = gk_loop_start(&w->scan, w->sim, w->cfg, w->r.seed, w->r.players,
                       w->err, sizeof w->err);
  if (rc != 0) {
    if (w->err[0] == '\0')
      snprintf(w->err, sizeof w->err, "cannot start the run: %s",
               gk_strerror(rc));
    gk_web_replay_refuse(w, rc, w->err);
    return rc;
  }
  w->started = 1;
  memset(&w->v, 0, sizeof w->v);
  rc = keep_snapshot(w, &w->loop);
  if (rc == 0 && w->r.steps == 0) {
    gk_replay_judge(&w->r, &w->v);
    w->done = 1;
  }
  return rc;
}

/* Folds a run of lp (from a verified position: 0 or a snapshot, so every
 * position it reaches follows a matching run from 0) into the verdict. */
static void note_run(gk_web_replay *w, const gk_loop *lp,
                     const gk_replay_verdict *run) {
  if (w->done) return;
  if (run->status == GK_REPLAY_MISMATCH) {
    w->v = *run;
    w->v.steps_checked = run->step;
    w->done = 1;
    return;
  }
  if (run->status != GK_REPLAY_OK) {
    w->v = *run;
    w->done = 1;
    return;
  }
  if (lp->steps > w->verified) w->verified = lp->steps;
  if (w->verified == w->r.steps) {
    w->v.steps_checked = w->verified;
    gk_replay_judge(&w->r, &w->v);
    w->done = 1;
  }
}

/* Runs lp on to `until`, a snapshot interval at a time. */
static int run_loop(gk_web_replay *w, gk_loop *lp, uint64_t until) {
  if (!w->started) return fail(w, GK_ESTATE, "not started");
  if (until > w->r.steps) until = w->r.steps;
  while (lp->steps < until) {
    uint64_t next = (lp->steps / w->every + 1) * w->every;
    if (next > until) next = until;
    gk_replay_verdict run;
    memset(&run, 0, sizeof run);
    gk_replay_run_to(&w->r, lp, next, NULL, NULL, &run);
    note_run(w, lp, &run);
    if (run.status != GK_REPLAY_OK) return run.status;
    int rc = keep_snapshot(w, lp);
    if (rc != 0) return rc;
  }
  return GK_REPLAY_OK;
}

int gk_web_replay_run(gk_web_replay *w, uint64_t until) {
  return run_loop(w, &w->loop, until);
}

int gk_web_replay_scan(gk_web_replay *w, uint32_t steps) {
  if (!w->started) return fail(w, GK_ESTATE, "not started");
  return run_loop(w, &w->scan, w->scan.steps + steps);
}

uint64_t gk_web_replay_scanned(const gk_web_replay *w) {
  return w->scan.steps;
}

int gk_web_replay_seek(gk_web_replay *w, uint64_t to) {
  if (!w->started) return fail(w, GK_ESTATE, "not started");
  if (to > w->r.steps) to = w->r.steps;
  uint64_t k = to / w->every;
  if (k >= w->nsnaps) k = w->nsnaps - 1;
  uint64_t from = k * w->every;
  if (w->loop.steps < from || w->loop.steps > to) {
    gk_reader rd;
    gk_reader_init(&rd, w->snaps[k].bytes, w->snaps[k].len);
    void *st = w->sim->read_state(w->cfg, &rd, w->err, sizeof w->err);
    if (st == NULL) return GK_EINVAL;
    int rc = gk_loop_adopt(&w->loop, w->sim, st, w->r.players, from);
    if (rc != 0) return fail(w, rc, "the loop refused a snapshot");
  }
  int rc = gk_web_replay_run(w, to);
  return rc < 0 ? rc : 0;
}

uint64_t gk_web_replay_position(const gk_web_replay *w) {
  return w->loop.steps;
}

uint64_t gk_web_replay_verified(const gk_web_replay *w) {
  return w->verified;
}

uint32_t gk_web_replay_snapshots(const gk_web_replay *w, uint64_t *bytes) {
  if (bytes != NULL) *bytes = w->snap_bytes;
  return w->nsnaps;
}

const gk_replay_verdict *gk_web_replay_verdict(const gk_web_replay *w,
                                               int *done) {
  if (done != NULL) *done = w->done;
  return &w->v;
}

static gk__web_buf map_buf(gk_web_replay *w) {
  gk__web_buf b = {&w->map, &w->map_len, &w->map_cap};
  return b;
}

const uint8_t *gk_web_replay_state(gk_web_replay *w, int sample,
                                   uint32_t *len) {
  *len = 0;
  const void *st = w->started ? gk_loop_state(&w->loop) : NULL;
  if (st == NULL) return NULL;
  uint64_t hash = gk_sim_hash(w->sim, st, &w->hasher);
  return gk__web_map_of(map_buf(w), w->sim, st, sample ? &w->loop : NULL,
                        w->loop.steps, hash, len);
}

const uint8_t *gk_web_replay_state_of(gk_web_replay *w, const uint8_t *bytes,
                                      size_t len, uint32_t *out_len) {
  *out_len = 0;
  if (w->sim == NULL) return fail(w, GK_ESTATE, "not prepared"), NULL;
  gk_reader rd;
  gk_reader_init(&rd, bytes, len);
  void *st = w->sim->read_state(w->cfg, &rd, w->err, sizeof w->err);
  if (st == NULL) return NULL;
  uint64_t hash = gk_sim_hash(w->sim, st, &w->hasher);
  const uint8_t *m =
      gk__web_map_of(map_buf(w), w->sim, st, NULL, 0, hash, out_len);
  w->sim->destroy(st);
  if (m == NULL) fail(w, GK_ENOMEM, "out of memory");
  return m;
}

const char *gk_web_replay_diff(gk_web_replay *w, const uint8_t *a, size_t alen,
                               const uint8_t *b, size_t blen, uint32_t max) {
  if (w->sim == NULL) return fail(w, GK_ESTATE, "not prepared"), NULL;
  gk_diff_field *fields = calloc(max ? max : 1, sizeof *fields);
  if (fields == NULL) return fail(w, GK_ENOMEM, "out of memory"), NULL;
  gk_state_diff d;
  gk_state_diff_init(&d, fields, max);
  int rc = gk_state_diff_run(&d, w->sim, w->cfg, a, alen, b, blen, w->err,
                             sizeof w->err);
  char *text = NULL;
  if (rc == 0) {
    size_t n = gk_state_diff_json(&d, NULL, 0);
    text = malloc(n + 1);
    if (text != NULL) gk_state_diff_json(&d, text, n + 1);
    if (text == NULL) fail(w, GK_ENOMEM, "out of memory");
  }
  free(fields);
  free(w->text);
  w->text = text;
  return text;
}

const char *gk_web_replay_error(const gk_web_replay *w) {
  return w->err;
}
