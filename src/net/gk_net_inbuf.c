/* gk_net_inbuf.c: the lockstep input buffer.
 *
 * The window is a ring indexed by step % window: `meta` says which records
 * of a step are held (and, once confirmed, the merged mask and flags), and
 * `records` holds players * input_size bytes per step. A step's entry is
 * zeroed when it is released, so a fresh entry is all neutral and a
 * confirmed step only needs the records of inactive players cleared.
 *
 * Scheduled system commands are kept sorted by step (stable: two commands
 * at one step apply in the order they were scheduled), so the active mask
 * at any unconfirmed step is the current mask with the commands up to that
 * step applied in order. Confirming a step folds its commands into
 * `active_mask` and forgets them.
 */
#include "gk_net_inbuf.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

enum { MODE_NONE = 0, MODE_PLAYERS = 1, MODE_MERGED = 2 };

static size_t step_bytes(const gk_inbuf *b) {
  return (size_t)b->players * b->input_size;
}

static gk__inbuf_meta *meta_of(const gk_inbuf *b, uint64_t step) {
  return &b->meta[step % b->window];
}

static uint8_t *records_of(const gk_inbuf *b, uint64_t step) {
  return b->records + (size_t)(step % b->window) * step_bytes(b);
}

static int in_window(const gk_inbuf *b, uint64_t step) {
  return step >= b->low && step - b->low < b->window;
}

/* The step at which a match end is scheduled or confirmed, else
 * UINT64_MAX. */
static uint64_t end_at(const gk_inbuf *b) {
  if (b->end_step != UINT64_MAX) return b->end_step;
  for (uint32_t i = 0; i < b->ncmds; i++)
    if (b->cmds[i].kind == GK_INBUF_MATCH_END) return b->cmds[i].step;
  return UINT64_MAX;
}

uint32_t gk_inbuf_active_at(const gk_inbuf *b, uint64_t step) {
  if (step < b->confirmed)
    return in_window(b, step) ? meta_of(b, step)->active : 0;
  uint32_t mask = b->active_mask;
  for (uint32_t i = 0; i < b->ncmds && b->cmds[i].step <= step; i++) {
    const gk__inbuf_cmd *c = &b->cmds[i];
    if (c->kind == GK_INBUF_ADD_PLAYER)
      mask |= 1u << c->slot;
    else if (c->kind == GK_INBUF_REMOVE_PLAYER)
      mask &= ~(1u << c->slot);
  }
  return mask;
}

static uint32_t flags_at(const gk_inbuf *b, uint64_t step) {
  uint32_t flags = 0;
  for (uint32_t i = 0; i < b->ncmds && b->cmds[i].step <= step; i++) {
    if (b->cmds[i].step != step) continue;
    if (b->cmds[i].kind == GK_INBUF_MATCH_END) flags |= GK_STEP_MATCH_END;
    if (b->cmds[i].kind == GK_INBUF_SET_DELAY)
      flags |= GK_STEP_DELAY | b->cmds[i].slot << GK_STEP_DELAY_SHIFT;
  }
  return flags;
}

static void fill(const gk_inbuf *b, uint64_t step, gk_step_input *out) {
  const gk__inbuf_meta *m = meta_of(b, step);
  out->step = step;
  out->active_mask = m->active;
  out->flags = m->flags;
  out->players = b->players;
  out->inputs = records_of(b, step);
}

/* Moves `low` up to the lowest step anyone still needs: the last step the
 * loop read stays held (its input is in use until the next read), unread
 * steps stay, and so does every step an acking slot has not acknowledged. */
static void release(gk_inbuf *b) {
  uint64_t bound =
      b->next_read > b->first_step ? b->next_read - 1 : b->first_step;
  if (b->confirmed < bound) bound = b->confirmed;
  for (uint32_t p = 0; p < b->players; p++)
    if ((b->ack_mask >> p & 1u) && b->acked[p] < bound) bound = b->acked[p];
  while (b->low < bound) {
    memset(meta_of(b, b->low), 0, sizeof(gk__inbuf_meta));
    memset(records_of(b, b->low), 0, step_bytes(b));
    b->low++;
  }
}

static int read_cb(gk_input *in, uint64_t step, gk_step_input *out) {
  gk_inbuf *b = (gk_inbuf *)in;
  int rc = gk_inbuf_get(b, step, out);
  if (rc != 0) return rc;
  if (step + 1 > b->next_read) b->next_read = step + 1;
  release(b);
  return 0;
}

int gk_inbuf_init(gk_inbuf *b, const gk_inbuf_options *o) {
  if (b == NULL || o == NULL) return GK_EINVAL;
  memset(b, 0, sizeof *b);
  uint32_t window = o->window != 0 ? o->window : GK_INBUF_WINDOW_DEFAULT;
  if (o->players < 1 || o->players > GK_PLAYERS_MAX || o->input_size < 1 ||
      o->input_size > GK_INPUT_SIZE_MAX || window > GK_INBUF_WINDOW_MAX ||
      window < 2 || (o->active_mask & ~gk_all_players(o->players)) != 0 ||
      (o->ack_mask & ~gk_all_players(o->players)) != 0 ||
      o->neutral_steps >= window || o->first_step > UINT64_MAX / 2)
    return GK_EINVAL;
  b->players = o->players;
  b->input_size = o->input_size;
  b->window = window;
  b->meta = calloc(window, sizeof(gk__inbuf_meta));
  b->records = calloc(window, step_bytes(b));
  if (b->meta == NULL || b->records == NULL) {
    gk_inbuf_close(b);
    return GK_ENOMEM;
  }
  b->base.read = read_cb;
  b->first_step = o->first_step;
  b->low = b->confirmed = b->next_read = o->first_step;
  b->end_step = UINT64_MAX;
  b->active_mask = o->active_mask;
  b->ack_mask = o->ack_mask;
  b->delay = o->neutral_steps;
  b->lead = o->lead;
  for (uint32_t p = 0; p < GK_PLAYERS_MAX; p++) b->acked[p] = o->first_step;
  if (o->neutral_steps > 0) {
    b->mode = MODE_PLAYERS;
    for (uint32_t i = 0; i < o->neutral_steps; i++)
      meta_of(b, o->first_step + i)->present = gk_all_players(b->players);
  }
  return 0;
}

void gk_inbuf_close(gk_inbuf *b) {
  if (b == NULL) return;
  free(b->meta);
  free(b->records);
  b->meta = NULL;
  b->records = NULL;
}

int gk_inbuf_put(gk_inbuf *b, uint32_t slot, uint64_t step,
                 const uint8_t *record) {
  if (b->mode == MODE_MERGED) return GK_ESTATE;
  if (slot >= b->players) return GK_ERANGE;
  if (step < b->confirmed) return GK_ESTALE;
  if (step > end_at(b)) return GK_ECLOSED;
  if (!in_window(b, step)) return GK_EAHEAD;
  if ((gk_inbuf_active_at(b, step) >> slot & 1u) == 0) return GK_EPERM;
  gk__inbuf_meta *m = meta_of(b, step);
  if (m->present >> slot & 1u) return GK_EEXIST;
  b->mode = MODE_PLAYERS;
  memcpy(records_of(b, step) + (size_t)slot * b->input_size, record,
         b->input_size);
  m->present |= 1u << slot;
  return 0;
}

int gk_inbuf_put_merged(gk_inbuf *b, const gk_step_input *in) {
  if (b->mode == MODE_PLAYERS) return GK_ESTATE;
  if (in == NULL || in->players != b->players || in->inputs == NULL)
    return GK_EINVAL;
  if (in->step < b->confirmed) return GK_ESTALE;
  if (in->step > b->end_step) return GK_ECLOSED;
  if (!in_window(b, in->step)) return GK_EAHEAD;
  if ((in->active_mask & ~gk_all_players(b->players)) != 0 ||
      !gk_step_flags_valid(in->flags))
    return GK_EPROTO;
  gk__inbuf_meta *m = meta_of(b, in->step);
  if (m->present != 0) return GK_EEXIST;
  b->mode = MODE_MERGED;
  uint8_t *dst = records_of(b, in->step);
  memcpy(dst, in->inputs, step_bytes(b));
  for (uint32_t p = 0; p < b->players; p++)
    if ((in->active_mask >> p & 1u) == 0)
      memset(dst + (size_t)p * b->input_size, 0, b->input_size);
  m->present = 1;
  m->active = in->active_mask;
  m->flags = in->flags;
  return 0;
}

int gk_inbuf_schedule(gk_inbuf *b, uint64_t step, gk_inbuf_cmd cmd,
                      uint32_t slot) {
  if (step < b->confirmed) return GK_ESTALE;
  if (!in_window(b, step)) return GK_EAHEAD;
  if (cmd != GK_INBUF_MATCH_END && cmd != GK_INBUF_SET_DELAY &&
      slot >= b->players)
    return GK_ERANGE;
  if (b->ncmds >= GK_INBUF_CMDS_MAX) return GK_EFULL;
  uint32_t active = gk_inbuf_active_at(b, step);
  switch (cmd) {
  case GK_INBUF_MATCH_END:
    if (end_at(b) != UINT64_MAX) return GK_EEXIST;
    slot = 0;
    break;
  case GK_INBUF_ADD_PLAYER:
    if (active >> slot & 1u) return GK_EEXIST;
    /* its acknowledgements hold releases from now on: it is sent the
     * steps from `step`, before it is awaited */
    b->ack_mask |= 1u << slot;
    b->acked[slot] = step;
    break;
  case GK_INBUF_REMOVE_PLAYER:
    if ((active >> slot & 1u) == 0) return GK_EPERM;
    break;
  case GK_INBUF_SET_DELAY:
    break; /* checked by gk_inbuf_schedule_delay */
  default:
    return GK_EINVAL;
  }
  uint32_t at = b->ncmds;
  while (at > 0 && b->cmds[at - 1].step > step) {
    b->cmds[at] = b->cmds[at - 1];
    at--;
  }
  b->cmds[at].step = step;
  b->cmds[at].kind = (uint32_t)cmd;
  b->cmds[at].slot = slot;
  b->ncmds++;
  return 0;
}

int gk_inbuf_delay_busy(const gk_inbuf *b) {
  for (uint32_t i = 0; i < b->ncmds; i++)
    if (b->cmds[i].kind == GK_INBUF_SET_DELAY) return 1;
  return b->confirmed < b->delay_done;
}

int gk_inbuf_schedule_delay(gk_inbuf *b, uint64_t step, uint32_t delay,
                            uint64_t *switch_at) {
  if (b->mode == MODE_MERGED) return GK_ESTATE;
  if (delay < 1 || delay > 255) return GK_EINVAL;
  if (gk_inbuf_delay_busy(b)) return GK_EBUSY;
  if (delay == b->delay) return GK_EEXIST;
  uint64_t at = step + b->delay + b->lead;
  uint64_t fill = delay > b->delay ? delay - b->delay : 0;
  if (step < b->confirmed) return GK_ESTALE;
  if (!in_window(b, at + fill)) return GK_EAHEAD;
  int rc = gk_inbuf_schedule(b, step, GK_INBUF_SET_DELAY, delay);
  if (rc == 0 && switch_at != NULL) *switch_at = at;
  return rc;
}

/* The announcing step `step` of a change to `delay` is being confirmed:
 * raising, the steps nobody samples for are held neutral for everyone. */
static void apply_delay(gk_inbuf *b, uint64_t step, uint32_t delay) {
  uint64_t at = step + b->delay + b->lead;
  uint64_t fill = delay > b->delay ? delay - b->delay : 0;
  for (uint64_t s = at; s < at + fill; s++) {
    memset(records_of(b, s), 0, step_bytes(b));
    meta_of(b, s)->present = gk_all_players(b->players);
  }
  b->delay = delay;
  b->delay_done = at + fill + 1;
}

/* Folds the commands scheduled at `step` (the step just confirmed) into
 * active_mask and drops them. */
static void apply_cmds(gk_inbuf *b, uint64_t step) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < b->ncmds; i++) {
    const gk__inbuf_cmd *c = &b->cmds[i];
    if (c->step != step) {
      b->cmds[keep++] = *c;
      continue;
    }
    if (c->kind == GK_INBUF_ADD_PLAYER) {
      b->active_mask |= 1u << c->slot; /* in ack_mask since scheduled */
    } else if (c->kind == GK_INBUF_REMOVE_PLAYER) {
      b->active_mask &= ~(1u << c->slot);
      b->ack_mask &= ~(1u << c->slot);
    } else if (c->kind == GK_INBUF_SET_DELAY) {
      apply_delay(b, step, c->slot);
    }
  }
  b->ncmds = keep;
}

static int confirm_one_players(gk_inbuf *b) {
  uint64_t s = b->confirmed;
  uint32_t mask = gk_inbuf_active_at(b, s);
  uint32_t flags = flags_at(b, s);
  gk__inbuf_meta *m = meta_of(b, s);
  if ((flags & GK_STEP_MATCH_END) == 0 &&
      (mask == 0 || (m->present & mask) != mask))
    return 0;
  uint8_t *rec = records_of(b, s);
  for (uint32_t p = 0; p < b->players; p++)
    if ((mask >> p & 1u) == 0 || (m->present >> p & 1u) == 0)
      memset(rec + (size_t)p * b->input_size, 0, b->input_size);
  m->active = mask;
  m->flags = flags;
  apply_cmds(b, s);
  return 1;
}

uint64_t gk_inbuf_confirm(gk_inbuf *b) {
  uint64_t n = 0;
  while (b->end_step == UINT64_MAX && in_window(b, b->confirmed)) {
    uint64_t s = b->confirmed;
    if (b->mode == MODE_MERGED) {
      gk__inbuf_meta *m = meta_of(b, s);
      if (m->present == 0) break;
      b->active_mask = m->active;
    } else if (!confirm_one_players(b)) {
      break;
    }
    b->confirmed = s + 1;
    n++;
    if (meta_of(b, s)->flags & GK_STEP_MATCH_END) b->end_step = s;
  }
  return n;
}

uint64_t gk_inbuf_ready(const gk_inbuf *b) {
  return b->confirmed > b->next_read ? b->confirmed - b->next_read : 0;
}

uint32_t gk_inbuf_missing(const gk_inbuf *b, uint64_t step) {
  if (step < b->confirmed || !in_window(b, step) || b->mode == MODE_MERGED)
    return 0;
  return gk_inbuf_active_at(b, step) & ~meta_of(b, step)->present;
}

int gk_inbuf_get(const gk_inbuf *b, uint64_t step, gk_step_input *out) {
  if (step < b->low) return GK_ESTALE;
  if (step >= b->confirmed) return GK_EAHEAD;
  fill(b, step, out);
  return 0;
}

int gk_inbuf_ack(gk_inbuf *b, uint32_t slot, uint64_t upto) {
  if (slot >= b->players) return GK_ERANGE;
  if (upto > b->confirmed) upto = b->confirmed;
  if (upto > b->acked[slot]) b->acked[slot] = upto;
  release(b);
  return 0;
}

uint64_t gk_inbuf_contiguous(const gk_inbuf *b, uint32_t slot, uint64_t from) {
  uint64_t s = from > b->confirmed ? from : b->confirmed;
  if (slot >= b->players) return s;
  while (in_window(b, s) && s <= end_at(b)) {
    if ((gk_inbuf_active_at(b, s) >> slot & 1u) &&
        (meta_of(b, s)->present >> slot & 1u) == 0)
      break;
    s++;
  }
  return s;
}

static int replica_read(gk_input *in, uint64_t step, gk_step_input *out) {
  gk_inbuf_replica *r = (gk_inbuf_replica *)in;
  int rc = r->inbuf->base.read(&r->inbuf->base, step, out);
  if (rc == 0) r->last = *out;
  return rc;
}

static void replica_end_step(gk_input *in) {
  gk_inbuf_replica *r = (gk_inbuf_replica *)in;
  gk_history_record(r->hist, r->loop, &r->last);
  r->step(r->ctx, &r->last, r->loop->last_hash);
}

void gk_inbuf_replica_init(gk_inbuf_replica *r, gk_inbuf *inbuf, gk_loop *loop,
                           gk_history *hist,
                           void (*step)(void *ctx, const gk_step_input *in,
                                        uint64_t hash),
                           void *ctx) {
  r->base.read = replica_read;
  r->base.end_step = replica_end_step;
  r->inbuf = inbuf;
  r->loop = loop;
  r->hist = hist;
  r->step = step;
  r->ctx = ctx;
}
