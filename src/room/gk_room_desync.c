/* gk_room_desync.c: desync forensics, from a hash mismatch to a report
 * that names the fields and a bundle that reproduces it.
 *
 * The story of one examination (an gk_room__dsy, on the heap, listed in its
 * room's `dsy` so it can outlive the room while its files are written):
 *   1. session_desync (gk_room_match.c) calls gk_room__desync_begin for a
 *      player's first mismatch at step K: the referee's state after K is
 *      regenerated at once from the session's history (gk_history: the
 *      nearest snapshot, re-simulated), and the peer is sent
 *      STATE_REQUEST(id, K). One request per player and match: the
 *      session reports each player once.
 *   2. The peer answers STATE_BEGIN and STATE_CHUNKs over the reliable
 *      channel (gk_net_peer_state.c), assembled by a gk_chunk_rx bounded
 *      by desync.max_state_bytes. A "cannot" status, a malformed message,
 *      a chunk whose checksum fails, a size above the limit, or no answer
 *      within desync.timeout_ms ends the wait with that reason; nothing
 *      else in the room or the server is touched.
 *   3. The two states are diffed by field path (gk_state_diff, the first
 *      desync.fields differences with both values, and the total).
 *   4. The bundle is written on a worker thread (env.queue) once the recording
 *      holds step K on disk (gk_room__replay_flush_now): the replay cut at K
 *      (read from the .gkr.tmp, rewritten with gk_replay_writer; with
 *      replays off, a replay with the match's header and no steps, so
 *      `gk-replay diff` still finds the genre and config), both states,
 *      diff.txt and diff.json. A disk error is reported in the log line,
 *      never fatal. Then one `desync_report` line; with policy "end" the
 *      match ends after it.
 *
 * Threads: the job (bundle_work, cut_replay) makes no cJSON call, since
 * cJSON's state is process-global and the loop parses JSON meanwhile.
 * Everything JSON is made on the loop in dsy_new and handed over as plain
 * text: the recording's header text (gk_room__replay_header), which the .tmp's
 * header block is compared with instead of parsed
 * (gk_replay_open_file_known), the cut replay's header text
 * (gk_replay_header_json, written as it is), and the header-only replay.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_room_internal.h"
#include "gk_state_diff.h"

#define FLUSH_WAIT_MS 3000u /* longest wait for the recording's flush */

enum { WAIT_PEER = 1, WAIT_FLUSH = 2, WRITING = 3 };

struct gk_room__dsy {
  gk_room_job work; /* first: the examination is its own job */
  gk_room_host *srv;
  gk_room *room; /* NULL once the room is gone */
  gk_room__dsy *next;
  int state;
  char code[GK_WIRE_CODE_LEN + 1];
  const gk_sim *sim;
  uint32_t slot, id;
  uint64_t step, host_hash, peer_hash;
  uint64_t t0_ns, deadline_ms;
  uint64_t bytes_in; /* STATE_* datagram bytes from the peer */
  gk_chunk_rx rx;
  int begun; /* STATE_BEGIN taken */
  uint8_t *ref, *peer;
  size_t ref_len, peer_len;
  char ref_err[GK_ERRMSG_MAX];
  int result; /* GK_ROOM_DSY_DIFFED, or why there is no diff; -1 until known */
  int code_rc;
  uint64_t peer_from, peer_to; /* the steps a "cannot" peer keeps */
  char reason[320];
  gk_state_diff diff;
  gk_diff_field *fields;
  char *text, *json; /* diff.txt, diff.json */
  /* the bundle */
  char top[GK_SERVER_PATH_MAX + 16]; /* desync.dir */
  char dir[GK_SERVER_PATH_MAX + 64];
  char replay_tmp[GK_SERVER_PATH_MAX + 72],
      replay_final[GK_SERVER_PATH_MAX + 64];
  int with_replay;
  uint8_t
      *hdr; /* a replay with the header only (replays off, or a fall-back) */
  size_t hdr_len;
  uint32_t players; /* the recording's */
  char *rec_header; /* the recording's header text (made on the loop) */
  char *cut_header; /* the cut replay's header text (made on the loop) */
  uint64_t replay_steps;
  char replay_note[320];
  char write_err[384];
};

const char *const gk_room_dsy_result_names[GK_ROOM_DSY_RESULTS] = {
#define GK_ROOM_DSY_NAME(name, label) label,
    GK_ROOM_DSY_RESULT_TABLE(GK_ROOM_DSY_NAME)
#undef GK_ROOM_DSY_NAME
};

/* --- the bundle, on the thread pool ----------------------------------------
 */

static void note_err(gk_room__dsy *d, const char *what, int e) {
  if (d->write_err[0] == '\0')
    snprintf(d->write_err, sizeof d->write_err, "%.250s: %.120s", what,
             strerror(e));
}

static void put_file(gk_room__dsy *d, const char *name, const void *bytes,
                     size_t len) {
  char path[sizeof d->dir + 32];
  snprintf(path, sizeof path, "%s/%s", d->dir, name);
  FILE *f = fopen(path, "wb");
  int ok = f != NULL && (len == 0 || fwrite(bytes, 1, len, f) == len);
  int e = errno;
  if (f != NULL && fclose(f) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (!ok) note_err(d, path, e);
}

/* The recording's first K + 1 steps as the bundle's replay.gkr. On the
 * thread pool: no cJSON call (the header texts were made on the loop). */
static int cut_replay(gk_room__dsy *d) {
  gk_replay_known k = {d->rec_header, d->players, d->sim->input_size};
  gk_replay r;
  gk_replay_open_file_known(&r, d->replay_tmp, &k);
  if (!r.header_ok) {
    gk_replay_close(&r);
    gk_replay_open_file_known(&r, d->replay_final, &k);
  }
  char msg[GK_REPLAY_MSG_MAX] = "";
  int rc = r.header_ok ? 0 : GK_ENOTFOUND;
  uint64_t n = d->step + 1 < r.steps ? d->step + 1 : r.steps;
  gk_replay_writer w;
  memset(&w, 0, sizeof w);
  char path[sizeof d->dir + 16];
  snprintf(path, sizeof path, "%s/replay.gkr", d->dir);
  if (rc == 0) {
    gk_replay_meta meta = {d->sim, NULL, 0, d->players, NULL, NULL};
    rc = gk_replay_writer_open_text(&w, path, &meta, d->cut_header, 0, msg,
                                    sizeof msg);
    size_t hint = 0;
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
      gk_replay_step st;
      memset(&st, 0, sizeof st);
      rc = gk_replay_step_at(&r, i, &st, &hint);
      gk_step_input in = {i, st.active_mask, st.flags, r.players, st.inputs};
      if (rc == 0) rc = gk_replay_writer_append(&w, &in, st.hash);
    }
    rc = rc == 0 ? gk_replay_writer_finish(&w, msg, sizeof msg) : rc;
    if (rc != 0) gk_replay_writer_abort(&w);
  }
  if (rc == 0) {
    d->replay_steps = n;
    if (n < d->step + 1)
      snprintf(d->replay_note, sizeof d->replay_note,
               "the recording held %" PRIu64 " steps, not %" PRIu64, n,
               d->step + 1);
  } else {
    snprintf(d->replay_note, sizeof d->replay_note,
             "the recording could not be cut (%.200s): replay.gkr holds the "
             "header only",
             msg[0] ? msg : (r.header_ok ? gk_strerror(rc) : r.damage.what));
  }
  gk_replay_close(&r);
  return rc;
}

/* mkdir -p: every folder of `path` (at most one bundle deep). */
static int make_dirs(const char *path) {
  char p[GK_SERVER_PATH_MAX + 64];
  snprintf(p, sizeof p, "%s", path);
  for (char *c = p + 1; *c; c++) {
    if (*c != '/') continue;
    *c = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    *c = '/';
  }
  return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* On the thread pool (or on the loop, once, if the pool refused). */
static void bundle_work(gk_room_job *work) {
  gk_room__dsy *d = (gk_room__dsy *)work;
  if (make_dirs(d->dir) != 0) {
    note_err(d, d->dir, errno);
    return;
  }
  if (d->ref != NULL) put_file(d, "referee.state", d->ref, d->ref_len);
  if (d->peer != NULL) put_file(d, "peer.state", d->peer, d->peer_len);
  put_file(d, "diff.txt", d->text, strlen(d->text));
  put_file(d, "diff.json", d->json, strlen(d->json));
  if ((!d->with_replay || cut_replay(d) != 0) && d->hdr != NULL)
    put_file(d, "replay.gkr", d->hdr, d->hdr_len);
}

/* --- the report -------------------------------------------------------------
 */

static void unlink_room(gk_room__dsy *d) {
  if (d->room == NULL) return;
  for (gk_room__dsy **p = &d->room->dsy; *p; p = &(*p)->next)
    if (*p == d) {
      *p = d->next;
      break;
    }
  d->room = NULL;
}

static void dsy_free(gk_room__dsy *d) {
  unlink_room(d);
  gk_chunk_rx_close(&d->rx);
  free(d->ref);
  free(d->peer);
  free(d->fields);
  free(d->text);
  free(d->json);
  free(d->hdr);
  free(d->rec_header);
  free(d->cut_header);
  free(d);
}

static void log_report(gk_room_host *h, gk_room__dsy *d, int bundle) {
  gk_server_log *lg = h->log;
  if (!gk_log_begin(lg, GK_LOG_WARN, "desync_report", d->code)) return;
  gk_log_u64(lg, "step", d->step);
  gk_log_u64(lg, "slot", d->slot);
  gk_log_hex(lg, "host_hash", d->host_hash);
  gk_log_hex(lg, "peer_hash", d->peer_hash);
  gk_log_str(lg, "result", gk_room_dsy_result_names[d->result]);
  gk_log_str(lg, "reason", d->reason[0] ? d->reason : NULL);
  int diffed = d->result == GK_ROOM_DSY_DIFFED;
  if (d->result == GK_ROOM_DSY_CANNOT) {
    gk_log_u64(lg, "peer_from", d->peer_from);
    gk_log_u64(lg, "peer_to", d->peer_to);
  }
  gk_log_u64(lg, "fields_differ", diffed ? d->diff.total : 0);
  gk_log_str(lg, "first_path",
             diffed && d->diff.count > 0 ? d->fields[0].path : NULL);
  gk_log_str(lg, "bundle", bundle && !d->write_err[0] ? d->dir : NULL);
  gk_log_str(lg, "bundle_error", d->write_err[0] ? d->write_err : NULL);
  gk_log_u64(lg, "replay_steps", d->replay_steps);
  gk_log_str(lg, "replay_note", d->replay_note[0] ? d->replay_note : NULL);
  gk_log_u64(lg, "peer_state_bytes", d->peer_len);
  gk_log_u64(lg, "referee_state_bytes", d->ref_len);
  gk_log_u64(lg, "bytes_in", d->bytes_in);
  gk_log_u64(lg, "us", (gk_room__clock_ns(h) - d->t0_ns) / 1000u);
  gk_log_str(lg, "policy", h->cfg->desync == GK_DESYNC_END ? "end" : "report");
  gk_log_json(lg, "diff", diffed ? d->json : NULL);
  gk_log_end(lg);
}

/* The report is out (and counted for /metrics): policy "end" ends the
 * match (gk_room__match_after). */
static void finished(gk_room_host *h, gk_room__dsy *d, int bundle) {
  log_report(h, d, bundle);
  h->stats.desync_reports[d->result]++;
  if (bundle && !d->write_err[0])
    h->stats.desync_bundles_written++;
  else
    h->stats.desync_bundles_failed++;
  if (d->room != NULL && h->cfg->desync == GK_DESYNC_END &&
      d->room->state == GK_ROOM_PLAYING)
    d->room->desync_end = 1;
  dsy_free(d);
}

static void bundle_done(gk_room_job *work) {
  gk_room__dsy *d = (gk_room__dsy *)work;
  finished(d->srv, d, 1);
}

static void start_bundle(gk_room_host *h, gk_room__dsy *d) {
  if (d->text == NULL) {
    finished(h, d, 0);
    return;
  }
  d->state = WRITING;
  d->work.work = bundle_work;
  d->work.done = bundle_done;
  if (h->env.queue(h->env.user, &d->work) != 0) {
    bundle_work(&d->work); /* the pool refused: here, once */
    bundle_done(&d->work);
  }
}

/* --- the diff ----------------------------------------------------------------
 */

/* diff.txt and diff.json from what is known. */
static int describe(gk_room__dsy *d) {
  int diffed = d->result == GK_ROOM_DSY_DIFFED;
  size_t nt = diffed ? gk_state_diff_text(&d->diff, NULL, 0) : 0;
  size_t nj = diffed ? gk_state_diff_json(&d->diff, NULL, 0) : 0;
  char head[800];
  int nh = snprintf(head, sizeof head,
                    "room %s step %" PRIu64 " slot %" PRIu32
                    "\nreferee hash %016" PRIx64 ", peer hash %016" PRIx64
                    "\n%s%s\n",
                    d->code, d->step, d->slot, d->host_hash, d->peer_hash,
                    diffed ? "" : "no diff: ", diffed ? "" : d->reason);
  if (nh < 0 || (size_t)nh >= sizeof head) nh = (int)sizeof head - 1;
  const char *result = gk_room_dsy_result_names[d->result];
  if (!diffed) nj = strlen(result) + 32;
  d->text = malloc((size_t)nh + nt + 2);
  d->json = malloc(nj + 1);
  if (d->text == NULL || d->json == NULL) return GK_ENOMEM;
  memcpy(d->text, head, (size_t)nh + 1);
  if (diffed) {
    gk_state_diff_text(&d->diff, d->text + nh, nt + 1);
    strcat(d->text, "\n");
    gk_state_diff_json(&d->diff, d->json, nj + 1);
  } else {
    snprintf(d->json, nj + 1, "{\"result\":\"%s\",\"fields\":[]}", result);
  }
  return 0;
}

/* Starts the bundle once the recording holds step K on disk (or it has
 * none, or FLUSH_WAIT_MS passed). */
static void try_bundle(gk_room_host *h, gk_room__dsy *d, uint64_t now) {
  uint64_t disk = 0;
  int live = d->room != NULL && d->with_replay &&
             gk_room__replay_flush_now(h, d->room, &disk);
  if (live && disk < d->step + 1 && now < d->deadline_ms) return;
  start_bundle(h, d);
}

/* The wait is over (the peer's state came: result -1; or give_up said
 * why not): diff, describe, then the bundle. */
static void conclude(gk_room_host *h, gk_room__dsy *d) {
  gk_chunk_rx_close(&d->rx);
  if (d->result < 0 && d->ref == NULL) {
    d->result = GK_ROOM_DSY_REFEREE_UNAVAILABLE;
    snprintf(d->reason, sizeof d->reason, "%s", d->ref_err);
  } else if (d->result < 0) {
    char err[GK_ERRMSG_MAX] = "";
    int rc =
        gk_state_diff_run(&d->diff, d->sim, d->room->cfg, d->ref, d->ref_len,
                          d->peer, d->peer_len, err, sizeof err);
    d->result = rc == 0                     ? GK_ROOM_DSY_DIFFED
                : d->diff.unreadable == 'b' ? GK_ROOM_DSY_UNREADABLE
                                            : GK_ROOM_DSY_DIFF_FAILED;
    d->code_rc = rc;
    if (rc != 0) snprintf(d->reason, sizeof d->reason, "%s", err);
  }
  if (describe(d) != 0) {
    snprintf(d->write_err, sizeof d->write_err, "out of memory");
    finished(h, d, 0);
    return;
  }
  d->state = WAIT_FLUSH;
  d->deadline_ms = gk_room__now(h) + FLUSH_WAIT_MS;
  try_bundle(h, d, gk_room__now(h));
}

static void give_up(gk_room_host *h, gk_room__dsy *d, int result, int code,
                    const char *fmt, ...) GK_PRINTF(5, 6);

static void give_up(gk_room_host *h, gk_room__dsy *d, int result, int code,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->reason, sizeof d->reason, fmt, ap);
  va_end(ap);
  d->result = result;
  d->code_rc = code;
  free(d->peer);
  d->peer = NULL;
  d->peer_len = 0;
  conclude(h, d);
}

/* --- the peer's answer --------------------------------------------------- */

static void on_begin(gk_room_host *h, gk_room__dsy *d,
                     const gk_wire_state_begin *b) {
  if (d->begun || b->id != d->id || b->step != d->step) {
    give_up(h, d, GK_ROOM_DSY_GARBAGE, GK_EMISMATCH,
            "STATE_BEGIN for transfer %" PRIu32 " step %" PRIu64
            " (asked: transfer %" PRIu32 " step %" PRIu64 "%s)",
            b->id, b->step, d->id, d->step, d->begun ? ", a second time" : "");
    return;
  }
  if (b->status < 0) {
    d->peer_from = b->from;
    d->peer_to = b->to;
    give_up(h, d, GK_ROOM_DSY_CANNOT, b->status,
            "the peer cannot give its state after step %" PRIu64
            ": %s (it keeps steps %" PRIu64 "..%" PRIu64 ")",
            d->step, gk_strerror(b->status), b->from, b->to);
    return;
  }
  uint32_t limit = h->cfg->desync_max_state_bytes;
  int rc = gk_chunk_rx_begin(&d->rx, b->id, b->total, b->chunk_size, b->chunks,
                             b->sum, limit);
  if (rc == GK_ETOOBIG)
    give_up(h, d, GK_ROOM_DSY_TOO_LARGE, rc,
            "the peer's state is %" PRIu32
            " bytes, above desync.max_state_bytes (%" PRIu32 ")",
            b->total, limit);
  else if (rc != 0)
    give_up(h, d, GK_ROOM_DSY_GARBAGE, rc, "STATE_BEGIN refused: %s",
            gk_strerror(rc));
  else
    d->begun = 1;
}

static void on_chunk(gk_room_host *h, gk_room__dsy *d,
                     const gk_wire_snap_chunk *k) {
  if (!d->begun) {
    give_up(h, d, GK_ROOM_DSY_GARBAGE, GK_EPROTO,
            "a STATE_CHUNK before STATE_BEGIN");
    return;
  }
  uint32_t n = d->rx.nchunks;
  int rc = gk_chunk_rx_put(&d->rx, k->id, k->index, k->bytes, k->len, k->crc);
  if (rc < 0) {
    give_up(h, d, GK_ROOM_DSY_GARBAGE, rc,
            "chunk %" PRIu32 " of %" PRIu32 " refused: %s", k->index, n,
            gk_strerror(rc));
  } else if (rc == 1) {
    d->peer = gk_chunk_rx_take(&d->rx, &d->peer_len);
    if (d->peer == NULL)
      give_up(h, d, GK_ROOM_DSY_GARBAGE, GK_ENOMEM, "out of memory");
    else
      conclude(h, d);
  }
}

void gk_room__desync_on_msg(gk_room_host *h, gk_room *r, uint32_t peer,
                            int decode_rc, const gk_wire_msg *m, size_t len) {
  const gk_room_conn *c = gk_room__conn_get(h, peer);
  gk_room__dsy *d = r->dsy;
  while (d != NULL &&
         (c->spectator || d->slot != c->slot || d->state != WAIT_PEER))
    d = d->next;
  if (d == NULL) {
    /* not asked for, or after the wait ended: counted, never held
     * against the sender (a late chunk after a timeout is normal) */
    r->drops++;
    h->stats.drop_unexpected++;
    return;
  }
  d->bytes_in += len;
  if (decode_rc != 0)
    give_up(h, d, GK_ROOM_DSY_GARBAGE, decode_rc, "a malformed answer: %s",
            gk_strerror(decode_rc));
  else if (m->type == GK_MSG_STATE_BEGIN)
    on_begin(h, d, &m->u.state_begin);
  else
    on_chunk(h, d, &m->u.snap_chunk);
}

/* --- start, tick, room gone -------------------------------------------------
 */

/* A replay of the match with its header and no steps (memory writer). */
static void header_only(gk_room_host *h, const gk_room *r, gk_room__dsy *d) {
  gk_replay_writer w;
  memset(&w, 0, sizeof w);
  char err[GK_REPLAY_MSG_MAX];
  cJSON *lockstep = gk_room__delay_record(h, r); /* may be NULL */
  gk_replay_meta meta = {
      r->genre->sim, r->cfg, r->seed, r->nslots, "gk-server desync bundle",
      lockstep};
  if (gk_replay_writer_open_mem(&w, &meta, err, sizeof err) == 0 &&
      gk_replay_writer_finish(&w, err, sizeof err) == 0)
    d->hdr = gk_replay_writer_take(&w, &d->hdr_len);
  gk_replay_writer_abort(&w);
  cJSON_Delete(lockstep);
}

/* The header texts cut_replay works from, made here on the loop: the
 * recording's (what the .tmp must hold) and the cut's (the recording's
 * with this origin). Without them the bundle gets the header-only replay. */
static void cut_headers(const gk_room *r, gk_room__dsy *d) {
  const char *rec_header = NULL;
  const cJSON *lockstep = NULL;
  char err[GK_REPLAY_MSG_MAX] = "out of memory";
  d->players = r->session.cfg.players;
  if (gk_room__replay_header(r, &rec_header, &lockstep) && rec_header != NULL) {
    gk_replay_meta meta = {
        r->genre->sim, r->cfg, r->seed, d->players, "gk-server desync bundle",
        lockstep};
    d->rec_header = strdup(rec_header);
    d->cut_header = gk_replay_header_json(&meta, err, sizeof err);
  }
  if (d->rec_header != NULL && d->cut_header != NULL) return;
  d->with_replay = 0;
  snprintf(d->replay_note, sizeof d->replay_note,
           "the cut replay's header could not be made (%.200s): replay.gkr "
           "holds the header only",
           err);
}

static gk_room__dsy *dsy_new(gk_room_host *h, gk_room *r,
                             const gk_net_desync *nd) {
  gk_room__dsy *d = calloc(1, sizeof *d);
  uint32_t cap = h->cfg->desync_fields;
  if (d != NULL) d->fields = calloc(cap, sizeof *d->fields);
  if (d == NULL || d->fields == NULL) {
    free(d);
    return NULL;
  }
  d->srv = h;
  d->room = r;
  d->sim = r->genre->sim;
  memcpy(d->code, r->code, sizeof d->code);
  d->slot = nd->player;
  d->step = nd->step;
  d->host_hash = nd->host_hash;
  d->peer_hash = nd->peer_hash;
  d->id = (uint32_t)++h->desync_ids;
  d->result = -1;
  d->t0_ns = gk_room__clock_ns(h);
  gk_state_diff_init(&d->diff, d->fields, cap);
  if (h->cfg->desync_dir[0] != '\0')
    snprintf(d->top, sizeof d->top, "%s", h->cfg->desync_dir);
  else
    snprintf(d->top, sizeof d->top, "%s/desyncs", h->cfg->replay_dir);
  snprintf(d->dir, sizeof d->dir, "%s/%s-%" PRIu64 "-%" PRIu32, d->top, r->code,
           nd->step, nd->player);
  snprintf(d->replay_final, sizeof d->replay_final, "%s", r->replay_path);
  snprintf(d->replay_tmp, sizeof d->replay_tmp, "%s.tmp", r->replay_path);
  d->with_replay = r->rec != NULL;
  if (!d->with_replay)
    snprintf(d->replay_note, sizeof d->replay_note,
             "replays are off or failed: replay.gkr holds the match's header "
             "(genre, config, seed) and no steps");
  else
    cut_headers(r, d);
  header_only(h, r, d);
  d->next = r->dsy;
  r->dsy = d;
  return d;
}

int gk_room__desync_begin(gk_room_host *h, gk_room *r,
                          const gk_net_desync *nd) {
  gk_room__dsy *d = dsy_new(h, r, nd);
  if (d == NULL) return 0;
  if (gk_history_state_at(&r->session.hist, nd->step + 1, &d->ref, &d->ref_len,
                          NULL, d->ref_err, sizeof d->ref_err) != 0) {
    free(d->ref);
    d->ref = NULL;
    d->ref_len = 0;
  }
  d->state = WAIT_PEER;
  d->deadline_ms = gk_room__now(h) + h->cfg->desync_timeout_ms;
  uint32_t peer =
      nd->player < r->nslots ? r->conn[nd->player] : GK_ROOM_NO_CONN;
  if (peer == GK_ROOM_NO_CONN) {
    give_up(h, d, GK_ROOM_DSY_NO_CONNECTION, GK_ENOTFOUND,
            "the player's connection is gone");
    return 1;
  }
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STATE_REQUEST;
  m.u.state_req.id = d->id;
  m.u.state_req.step = nd->step;
  int rc = gk_room__send(h, peer, &m);
  if (rc != 0)
    give_up(h, d, GK_ROOM_DSY_SEND_FAILED, rc,
            "STATE_REQUEST could not be sent: %s", gk_strerror(rc));
  return 1;
}

void gk_room__desync_tick(gk_room_host *h, gk_room *r, uint64_t now) {
  gk_room__dsy *next;
  for (gk_room__dsy *d = r->dsy; d != NULL; d = next) {
    next = d->next;
    if (d->state == WAIT_PEER && now >= d->deadline_ms)
      give_up(h, d, GK_ROOM_DSY_NO_ANSWER, GK_EEXPIRED,
              "no answer within desync.timeout_ms (%" PRIu32 " ms)",
              h->cfg->desync_timeout_ms);
    else if (d->state == WAIT_FLUSH)
      try_bundle(h, d, now);
  }
}

void gk_room__desync_room_free(gk_room_host *h, gk_room *r) {
  gk_room__dsy *next;
  for (gk_room__dsy *d = r->dsy; d != NULL; d = next) {
    next = d->next;
    if (d->state == WAIT_PEER)
      give_up(h, d, GK_ROOM_DSY_ROOM_CLOSED, GK_ECLOSED,
              "the room closed before the peer answered");
  }
  for (gk_room__dsy *d = r->dsy; d != NULL; d = next) {
    next = d->next;
    d->room = NULL; /* finishes without it */
    if (d->state == WAIT_FLUSH) start_bundle(h, d);
  }
  r->dsy = NULL;
}
