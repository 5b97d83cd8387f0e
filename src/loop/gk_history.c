/* gk_history.c: a run's recent past (see gk_history.h).
 *
 * Two rings. The step ring holds, per step s (at s % in_cap), the merged
 * input and the hash after it: mask u32 | flags u32 | hash u64 | records.
 * The snapshot ring holds states, oldest first from snap_head; a snapshot
 * after n steps is usable while the inputs of steps n.. are still held
 * (n >= in_from), so a record that pushes in_from past it drops it.
 */
#include "gk_history.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_HEAD 16u

static gk__history_snap *snap_at(const gk_history *h, uint32_t i) {
  return &h->snaps[(h->snap_head + i) % h->snap_cap];
}

static uint8_t *entry(const gk_history *h, uint64_t step) {
  return h->ring + (size_t)(step % h->in_cap) * h->rec_size;
}

static void update_first(gk_history *h) {
  h->first = h->nsnaps > 0 ? snap_at(h, 0)->steps : h->last + 1;
}

static void recount(gk_history *h) {
  uint64_t b = (uint64_t)h->in_cap * h->rec_size;
  for (uint32_t i = 0; i < h->snap_cap; i++) b += h->snaps[i].cap;
  h->bytes = b;
  if (b > h->peak_bytes) h->peak_bytes = b;
}

static void drop_oldest(gk_history *h) {
  snap_at(h, 0)->len = 0;
  h->snap_head = (h->snap_head + 1) % h->snap_cap;
  h->nsnaps--;
}

static void snap_release(gk__history_snap *s) {
  free(s->bytes);
  s->bytes = NULL;
  s->cap = 0;
}

/* Above the bound: free the buffers of unused slots, then the oldest
 * snapshots (never the newest). */
static void trim(gk_history *h) {
  if (h->bytes <= h->o.max_bytes) return;
  for (uint32_t i = h->nsnaps; i < h->snap_cap; i++)
    snap_release(snap_at(h, i));
  recount(h);
  while (h->bytes > h->o.max_bytes && h->nsnaps > 1) {
    snap_release(snap_at(h, 0));
    drop_oldest(h);
    h->dropped++;
    recount(h);
  }
}

/* Writes `state` (after n steps) into the slot after the newest. */
static int snapshot(gk_history *h, const void *state, uint64_t n) {
  if (h->nsnaps > 0 && snap_at(h, h->nsnaps - 1)->steps == n) h->nsnaps--;
  if (h->nsnaps == h->snap_cap) drop_oldest(h);
  gk__history_snap *s = snap_at(h, h->nsnaps);
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  b.bytes = s->bytes; /* reuse the slot's buffer */
  b.cap = s->cap;
  h->sim->write_state(state, &b.w);
  gk_writer_flush(&b.w);
  s->bytes = b.bytes;
  s->cap = b.cap;
  int rc = 0;
  if (b.w.err != 0) {
    s->len = 0;
    h->err = rc = GK_ENOMEM;
  } else {
    s->len = b.len;
    s->steps = n;
    h->nsnaps++;
  }
  recount(h);
  trim(h);
  update_first(h);
  return rc;
}

/* Forgets every snapshot and starts again from the loop's state now. */
static int restart(gk_history *h, const gk_loop *loop) {
  while (h->nsnaps > 0) drop_oldest(h);
  h->in_from = h->last = loop->steps;
  h->version = loop->version;
  h->have = 1;
  return snapshot(h, loop->state, loop->steps);
}

int gk_history_init(gk_history *h, const gk_sim *sim, const void *cfg,
                    uint32_t players, const gk_history_options *o) {
  memset(h, 0, sizeof *h);
  if (sim == NULL || cfg == NULL || players == 0 || players > GK_PLAYERS_MAX)
    return GK_EINVAL;
  if (o != NULL) h->o = *o;
  if (h->o.every == 0) h->o.every = GK_HISTORY_EVERY_DEFAULT;
  if (h->o.window == 0) h->o.window = GK_HISTORY_WINDOW_DEFAULT;
  if (h->o.max_bytes == 0) h->o.max_bytes = GK_HISTORY_MAX_BYTES_DEFAULT;
  if (h->o.every > 65536u || h->o.window > (1u << 20)) return GK_EINVAL;
  h->sim = sim;
  h->cfg = cfg;
  h->players = players;
  h->rec_size = ENTRY_HEAD + (size_t)players * sim->input_size;
  h->in_cap = h->o.window + 2u * h->o.every;
  h->snap_cap = h->o.window / h->o.every + 3u;
  h->ring = malloc((size_t)h->in_cap * h->rec_size);
  h->snaps = calloc(h->snap_cap, sizeof *h->snaps);
  if (h->ring == NULL || h->snaps == NULL) {
    gk_history_close(h);
    return GK_ENOMEM;
  }
  h->first = 1; /* empty: first > last */
  recount(h);
  return 0;
}

void gk_history_close(gk_history *h) {
  for (uint32_t i = 0; h->snaps != NULL && i < h->snap_cap; i++)
    free(h->snaps[i].bytes);
  free(h->snaps);
  free(h->ring);
  memset(h, 0, sizeof *h);
}

void gk_history_record(gk_history *h, const gk_loop *loop,
                       const gk_step_input *in) {
  uint64_t n = loop->steps;
  if (h->ring == NULL || loop->state == NULL) return;
  if (!h->have || loop->version != h->version || n != h->last + 1 ||
      in->step + 1 != n || in->players != h->players) {
    if (h->have) h->restarts++;
    restart(h, loop);
    return;
  }
  uint8_t *e = entry(h, in->step);
  gk_store_le(e, in->active_mask, 4);
  gk_store_le(e + 4, in->flags, 4);
  gk_store_le(e + 8, loop->last_hash, 8);
  memcpy(e + ENTRY_HEAD, in->inputs, h->rec_size - ENTRY_HEAD);
  h->last = n;
  if (n - h->in_from > h->in_cap) h->in_from = n - h->in_cap;
  while (h->nsnaps > 0 && snap_at(h, 0)->steps < h->in_from) drop_oldest(h);
  if (n % h->o.every == 0)
    snapshot(h, loop->state, n);
  else
    update_first(h);
}

int gk_history_mark(gk_history *h, const gk_loop *loop) {
  if (loop->sim == NULL || loop->state == NULL) return GK_ENORUN;
  if (h->ring == NULL) return GK_EINVAL;
  if (!h->have || loop->steps != h->last) return restart(h, loop);
  if (loop->version == h->version) return 0; /* nothing changed */
  h->version = loop->version;
  return snapshot(h, loop->state, loop->steps);
}

int gk_history_hash_at(const gk_history *h, uint64_t steps, uint64_t *hash) {
  if (h->ring == NULL || steps == 0 || steps - 1 < h->in_from ||
      steps > h->last)
    return GK_ENOTKEPT;
  *hash = gk_load_le64(entry(h, steps - 1) + 8);
  return 0;
}

/* The kept inputs as a step input for the re-simulation. */
typedef struct hist_input {
  gk_input base; /* must be first */
  const gk_history *h;
} hist_input;

static int hist_read(gk_input *in, uint64_t step, gk_step_input *out) {
  const gk_history *h = ((hist_input *)in)->h;
  if (step < h->in_from || step >= h->last) return GK_ENOTKEPT;
  const uint8_t *e = entry(h, step);
  out->step = step;
  out->active_mask = gk_load_le32(e);
  out->flags = gk_load_le32(e + 4);
  out->players = h->players;
  out->inputs = e + ENTRY_HEAD;
  return 0;
}

/* Runs `lp` (adopted at a snapshot) on to `steps` over the kept inputs. */
static int resimulate(const gk_history *h, gk_loop *lp, uint64_t steps) {
  hist_input hi;
  memset(&hi, 0, sizeof hi);
  hi.base.read = hist_read;
  hi.h = h;
  while (lp->steps < steps) {
    uint64_t n = steps - lp->steps;
    if (n > INT_MAX) n = INT_MAX;
    int ran = gk_loop_frame(lp, &hi.base, gk_budget_steps(n), 0);
    if (ran < 0) return ran;
    if ((uint64_t)ran != n) return lp->input_err ? lp->input_err : GK_EINPUT;
  }
  return 0;
}

int gk_history_state_at(const gk_history *h, uint64_t steps, uint8_t **bytes,
                        size_t *len, uint64_t *hash, char *err, size_t errlen) {
  *bytes = NULL;
  *len = 0;
  if (h->ring == NULL || h->nsnaps == 0 || steps < h->first || steps > h->last)
    return gk_errf(err, errlen, GK_ENOTKEPT,
                   "history: the state after %" PRIu64
                   " steps is not kept (it keeps %" PRIu64 "..%" PRIu64 ")",
                   steps, h->first, h->last);
  const gk__history_snap *s = snap_at(h, 0);
  for (uint32_t i = h->nsnaps; i-- > 0;)
    if (snap_at(h, i)->steps <= steps) {
      s = snap_at(h, i);
      break;
    }
  gk_reader r;
  gk_reader_init(&r, s->bytes, s->len);
  char msg[GK_ERRMSG_MAX] = "";
  void *st = h->sim->read_state(h->cfg, &r, msg, sizeof msg);
  if (st == NULL)
    return gk_errf(err, errlen, GK_EINVAL,
                   "history: %s refused its own state after %" PRIu64
                   " steps: %s",
                   h->sim->name, s->steps, msg);
  gk_loop lp;
  gk_loop_options lo = {1};
  if (gk_loop_init(&lp, &lo) != 0) {
    h->sim->destroy(st);
    return gk_errf(err, errlen, GK_ENOMEM, "history: out of memory");
  }
  int rc = gk_loop_adopt(&lp, h->sim, st, h->players, s->steps);
  if (rc == 0) rc = resimulate(h, &lp, steps);
  if (rc == 0) {
    gk_buf_writer b;
    gk_buf_writer_init(&b);
    h->sim->write_state(lp.state, &b.w);
    *bytes = gk_buf_writer_take(&b, len);
    if (*bytes == NULL && b.w.err != 0) rc = GK_ENOMEM;
    if (rc == 0 && hash != NULL)
      *hash = gk_sim_hash(h->sim, lp.state, lp.hasher);
  }
  gk_loop_close(&lp);
  if (rc != 0)
    gk_errf(err, errlen, rc, "history: re-simulating to step %" PRIu64 ": %s",
            steps, gk_strerror(rc));
  return rc;
}
