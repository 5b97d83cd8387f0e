/* gk_net_session.c: the host session of one match (see gk_net_session.h).
 *
 * The story of one step N:
 *   1. INPUT messages put records for N into the input buffer (each peer
 *      repeats its unacknowledged records in every packet, so a lost
 *      datagram is covered by the next one, with no resend timer);
 *   2. the moment every active player's record is in, N is confirmed and
 *      every player is sent the confirmed steps it has not acknowledged
 *      (CONFIRMED, unreliable, repeated from tick until acknowledged);
 *   3. tick runs the host's own loop over N and keeps N's hash in the
 *      loop's ring;
 *   4. HASH reports for N are compared with that hash; a report that
 *      arrives before the host ran N waits in a small per-player ring.
 * If N waits too long, tick names the players it waits on (STALL). The
 * creator may remove them; a removal or a match end is a command in the
 * input buffer at a step not yet confirmed, so every engine applies it at
 * that same step.
 */
#include "gk_net_session.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

/* --- sending ------------------------------------------------------------- */

static int send_msg(gk_net_session *s, uint32_t slot, const gk_wire_msg *m) {
  size_t len;
  int rc = gk_wire_encode(m, s->buf, sizeof s->buf, &len);
  if (rc == 0)
    rc = s->cb.send(s->cb.ctx, slot, s->buf, len,
                    gk_wire_type_reliable((int)m->type));
  if (rc != 0) {
    s->stats.drop_send++;
    return rc;
  }
  s->stats.packets_out++;
  s->stats.bytes_out += len;
  return 0;
}

/* Players who still receive the match: active, or leaving at a step not
 * yet confirmed. */
static uint32_t audience(const gk_net_session *s) {
  return s->inbuf.ack_mask;
}

static void broadcast(gk_net_session *s, const gk_wire_msg *m) {
  uint32_t to = audience(s);
  for (uint32_t p = 0; p < s->cfg.players; p++)
    if (to >> p & 1u) send_msg(s, p, m);
}

/* Sends `p` the confirmed steps it has not acknowledged (a few packets at
 * most), with the acknowledgement of its own inputs. With nothing to send
 * and the input ack unchanged, sends nothing unless `force`. */
static void send_confirmed(gk_net_session *s, uint32_t p, int force) {
  gk__session_player *pl = &s->pl[p];
  const gk_inbuf *b = &s->inbuf;
  uint64_t from = pl->acked > b->low ? pl->acked : b->low;
  uint64_t input_ack = gk_inbuf_contiguous(b, p, pl->input_ack);
  pl->input_ack = input_ack;
  if (from >= b->confirmed && input_ack == pl->input_ack_sent && !force) return;
  uint32_t fit = gk_wire_confirmed_fit(s->cfg.players, s->cfg.sim->input_size);
  size_t sb = GK_WIRE_STEP_BYTES(s->cfg.players, s->cfg.sim->input_size);
  for (int packet = 0; packet < 4; packet++) {
    uint64_t left = b->confirmed > from ? b->confirmed - from : 0;
    uint32_t count = left < fit ? (uint32_t)left : fit;
    for (uint32_t i = 0; i < count; i++) {
      gk_step_input in;
      if (gk_inbuf_get(b, from + i, &in) != 0) {
        count = i;
        break;
      }
      gk_wire_step_pack(s->pack + i * sb, in.active_mask, in.flags, in.inputs,
                        s->cfg.players, s->cfg.sim->input_size);
    }
    gk_wire_msg m;
    m.type = GK_MSG_CONFIRMED;
    m.u.confirmed =
        (gk_wire_confirmed){.players = (uint8_t)s->cfg.players,
                            .input_size = (uint8_t)s->cfg.sim->input_size,
                            .count = (uint8_t)count,
                            .ack = input_ack,
                            .hash_ack = pl->hashes_upto,
                            .first = from,
                            .steps = s->pack};
    send_msg(s, p, &m);
    from += count;
    if (from >= b->confirmed) break;
  }
  pl->input_ack_sent = input_ack;
  pl->sent_ms = s->now_ms;
}

/* --- confirming ---------------------------------------------------------- */

/* Step `step`, confirmed now after `waited` ms as the next step to
 * confirm, on the schedule (gk_net_session_config): a stall moves the
 * schedule; the lateness the step is left with. */
static uint64_t on_schedule(gk_net_session *s, uint64_t step, uint64_t waited) {
  const gk_ratio r = s->cfg.step_seconds;
  uint64_t n = step + 1 - s->sched_step;
  uint64_t due = s->sched_ms + n * r.num * 1000u / r.den;
  uint64_t late = s->now_ms > due ? s->now_ms - due : 0;
  if (late <= s->cfg.late_slack_ms) {
    s->stats.confirm_ms += late;
    return late;
  }
  if (s->cfg.stall_ms == 0 || waited <= s->cfg.stall_ms) {
    s->stats.steps_late++;
    s->stats.confirm_ms += late;
    return late;
  }
  s->stats.stalls++;
  s->stats.stalled_ms += late;
  s->sched_step = step + 1;
  s->sched_ms = s->now_ms;
  return 0;
}

static void confirm_and_send(gk_net_session *s) {
  uint64_t before = s->inbuf.confirmed;
  uint64_t n = gk_inbuf_confirm(&s->inbuf);
  if (n == 0) return;
  s->stats.steps_confirmed += n;
  for (uint64_t st = before; st < s->inbuf.confirmed; st++) {
    /* the first waited since the step before it; the others not at all */
    uint64_t waited = st == before ? s->now_ms - s->frontier_since_ms : 0;
    uint64_t late = on_schedule(s, st, waited);
    if (s->cb.confirmed != NULL) s->cb.confirmed(s->cb.ctx, st, late);
  }
  s->frontier_since_ms = s->now_ms;
  for (uint32_t p = 0; p < s->cfg.players; p++)
    if (s->inbuf.ack_mask >> p & 1u) send_confirmed(s, p, 0);
}

/* --- hashes -------------------------------------------------------------- */

static void compare(gk_net_session *s, uint32_t p, uint64_t step,
                    uint64_t hash) {
  uint64_t mine;
  if (gk_loop_hash_at(&s->loop, step, &mine) != 0) {
    s->stats.hashes_dropped++;
    return;
  }
  s->stats.hashes_compared++;
  if (mine == hash || s->pl[p].desynced) return;
  s->pl[p].desynced = 1;
  s->stats.desyncs++;
  gk_net_desync d = {step, p, mine, hash};
  if (s->cb.desync != NULL) s->cb.desync(s->cb.ctx, &d);
  gk_wire_msg m;
  m.type = GK_MSG_DESYNC;
  m.u.desync = (gk_wire_desync){step, (uint8_t)p, mine, hash};
  broadcast(s, &m);
}

static void drain_pending(gk_net_session *s, uint32_t p) {
  gk__session_player *pl = &s->pl[p];
  while (pl->npending > 0) {
    gk__pending_hash *h = &pl->pending[pl->pend_head];
    if (h->step >= s->loop.steps) break;
    compare(s, p, h->step, h->hash);
    pl->pend_head = (pl->pend_head + 1) % s->cfg.pending_hashes;
    pl->npending--;
  }
}

/* One reported hash for `step` (< confirmed): compared now if the host
 * ran that step, else kept until it has (at most pending_hashes). */
static void take_hash(gk_net_session *s, uint32_t p, uint64_t step,
                      uint64_t hash) {
  gk__session_player *pl = &s->pl[p];
  if (step < pl->hashes_upto) return; /* already seen */
  pl->hashes_upto = step + 1;
  if (step < s->loop.steps && pl->npending == 0) {
    compare(s, p, step, hash);
  } else if (pl->npending < s->cfg.pending_hashes) {
    uint32_t at = (pl->pend_head + pl->npending) % s->cfg.pending_hashes;
    pl->pending[at] = (gk__pending_hash){step, hash};
    pl->npending++;
  } else {
    s->stats.hashes_dropped++;
  }
}

/* A hash report may name only confirmed steps: nobody has run the rest. */
static int hashes_in_range(gk_net_session *s, uint64_t first, uint32_t count) {
  if (first + count <= s->inbuf.confirmed) return 1;
  s->stats.drop_ahead++;
  return 0;
}

static int on_hash(gk_net_session *s, uint32_t p, const gk_wire_hash *m) {
  if (!hashes_in_range(s, m->first, m->count)) return GK_EAHEAD;
  for (uint32_t i = 0; i < m->count; i++)
    take_hash(s, p, m->first + i, m->hashes[i]);
  drain_pending(s, p);
  return 0;
}

/* The hash report an INPUT carries (wire version 2), if any. */
static int on_input_hashes(gk_net_session *s, uint32_t p,
                           const gk_wire_input *m) {
  if (m->hash_count == 0) return 0;
  if (!hashes_in_range(s, m->hash_first, m->hash_count)) return GK_EAHEAD;
  for (uint32_t i = 0; i < m->hash_count; i++)
    take_hash(s, p, m->hash_first + i, gk_wire_input_hash(m, i));
  drain_pending(s, p);
  return 0;
}

/* --- inputs -------------------------------------------------------------- */

/* `p` holds every confirmed step below `ack` (clamped to what is
 * confirmed): stop repeating them to it. */
static void take_ack(gk_net_session *s, uint32_t p, uint64_t ack) {
  gk__session_player *pl = &s->pl[p];
  if (ack > s->inbuf.confirmed) ack = s->inbuf.confirmed;
  if (ack > pl->acked) pl->acked = ack;
  gk_inbuf_ack(&s->inbuf, p, ack);
}

/* INPUT after the match ended: its records are stale, but its ack still
 * tells whether the player holds the last confirmed steps (see
 * gk_net_session_drained). */
static int on_late_input(gk_net_session *s, uint32_t p,
                         const gk_wire_input *m) {
  if (m->slot == p && m->input_size == s->cfg.sim->input_size) {
    take_ack(s, p, m->ack);
    on_input_hashes(s, p, m);
  }
  s->stats.inputs_stale++;
  return GK_ECLOSED;
}

static int on_input(gk_net_session *s, uint32_t p, const gk_wire_input *m) {
  if (m->slot != p || m->input_size != s->cfg.sim->input_size) {
    s->stats.drop_slot++;
    return GK_EPERM;
  }
  if ((s->inbuf.ack_mask >> p & 1u) == 0) {
    s->stats.drop_perm++; /* removed */
    return GK_EPERM;
  }
  take_ack(s, p, m->ack);
  int ahead = 0;
  for (uint32_t i = 0; i < m->count; i++) {
    int rc = gk_inbuf_put(&s->inbuf, p, m->first + i,
                          m->records + (size_t)i * m->input_size);
    if (rc == GK_EEXIST)
      s->stats.inputs_dup++;
    else if (rc == GK_ESTALE || rc == GK_ECLOSED || rc == GK_EPERM)
      s->stats.inputs_stale++;
    else if (rc == GK_EAHEAD)
      ahead = 1;
  }
  if (ahead) s->stats.drop_ahead++;
  confirm_and_send(s);
  if (on_input_hashes(s, p, m) != 0) ahead = 1;
  return ahead ? GK_EAHEAD : 0;
}

/* --- the public face ----------------------------------------------------- */

/* The referee ran a step (gk_inbuf_replica recorded it in the history). */
static void session_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  gk_net_session *s = ctx;
  s->stats.steps_run++;
  if (s->cb.step != NULL) s->cb.step(s->cb.ctx, in, hash);
}

/* The referee's history, covering its hash ring (for desync forensics). */
static int open_history(gk_net_session *s, char *err, size_t errlen) {
  gk_history_options o = s->cfg.history;
  if (o.window == 0) o.window = s->cfg.hash_ring + 64u;
  int rc = gk_history_init(&s->hist, s->cfg.sim, s->cfg.sim_config,
                           s->cfg.players, &o);
  if (rc == 0) rc = gk_history_mark(&s->hist, &s->loop);
  if (rc != 0)
    gk_errf(err, errlen, rc, "session: history: %s", gk_strerror(rc));
  return rc;
}

int gk_net_session_init(gk_net_session *s, const gk_net_session_config *cfg,
                        const gk_net_session_callbacks *cb, uint64_t now_ms,
                        char *err, size_t errlen) {
  if (s == NULL || cfg == NULL || cb == NULL || cb->send == NULL ||
      cfg->sim == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "session: missing argument");
  memset(s, 0, sizeof *s);
  int rc = gk_sim_check(cfg->sim, err, errlen);
  if (rc != 0) return rc;
  s->cfg = *cfg;
  gk_net_session_config *c = &s->cfg;
  const gk_sim *sim = c->sim;
  if (c->players < sim->players_min || c->players > sim->players_max ||
      c->players > GK_PLAYERS_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "session: %u players, genre \"%s\" takes %u..%u", c->players,
                   sim->name, sim->players_min, sim->players_max);
  if (c->active_mask == 0) c->active_mask = gk_all_players(c->players);
  if (c->window == 0) c->window = GK_INBUF_WINDOW_DEFAULT;
  if (c->hash_ring == 0) c->hash_ring = c->window > 1024 ? c->window : 1024;
  if (c->pending_hashes == 0) c->pending_hashes = 256;
  if (c->step_seconds.num == 0 || c->step_seconds.den == 0)
    c->step_seconds = sim->step_seconds;
  if (c->stall_notice_ms == 0) c->stall_notice_ms = 1000;
  if ((c->active_mask & ~gk_all_players(c->players)) != 0 ||
      c->creator >= c->players || c->input_delay >= c->window / 2 ||
      c->lead > 255 || c->input_delay > 255 ||
      c->first_step >= GK_WIRE_STEP_LIMIT || c->pending_hashes > 65536 ||
      c->window > GK_INBUF_WINDOW_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "session: active mask, creator, input delay, lead, window "
                   "or first step out of range");
  gk_inbuf_options o = {.players = c->players,
                        .input_size = sim->input_size,
                        .active_mask = c->active_mask,
                        .first_step = c->first_step,
                        .window = c->window,
                        .neutral_steps = c->input_delay,
                        .ack_mask = c->active_mask,
                        .lead = c->lead};
  if ((rc = gk_inbuf_init(&s->inbuf, &o)) != 0)
    return gk_errf(err, errlen, rc, "session: input buffer: %s",
                   gk_strerror(rc));
  gk_loop_options lo = {.hash_ring = c->hash_ring};
  if ((rc = gk_loop_init(&s->loop, &lo)) != 0) {
    gk_inbuf_close(&s->inbuf);
    return gk_errf(err, errlen, rc, "session: loop: %s", gk_strerror(rc));
  }
  if (c->first_step == 0)
    rc = gk_loop_start(&s->loop, sim, c->sim_config, c->seed, c->players, err,
                       errlen);
  else
    rc = gk_errf(err, errlen, GK_EINVAL,
                 "session: a match starting past step 0 needs a snapshot");
  if (rc == 0) rc = open_history(s, err, errlen);
  for (uint32_t p = 0; rc == 0 && p < c->players; p++) {
    s->pl[p].pending = calloc(c->pending_hashes, sizeof(gk__pending_hash));
    s->pl[p].acked = s->pl[p].input_ack = c->first_step;
    s->pl[p].hashes_upto = c->first_step;
    if (s->pl[p].pending == NULL)
      rc = gk_errf(err, errlen, GK_ENOMEM, "session: out of memory");
  }
  if (rc != 0) {
    gk_net_session_close(s);
    return rc;
  }
  s->cb = *cb;
  gk_inbuf_replica_init(&s->in, &s->inbuf, &s->loop, &s->hist, session_step, s);
  s->start_ms = s->frontier_since_ms = s->now_ms = now_ms;
  s->sched_step = c->first_step;
  s->sched_ms = now_ms;
  s->stall_step = UINT64_MAX;
  s->end_step = UINT64_MAX;
  confirm_and_send(s); /* the neutral steps */
  return 0;
}

void gk_net_session_close(gk_net_session *s) {
  if (s == NULL) return;
  gk_history_close(&s->hist);
  gk_loop_close(&s->loop);
  gk_inbuf_close(&s->inbuf);
  for (uint32_t p = 0; p < GK_PLAYERS_MAX; p++) {
    free(s->pl[p].pending);
    s->pl[p].pending = NULL;
  }
}

int gk_net_session_receive(gk_net_session *s, uint32_t slot,
                           const uint8_t *bytes, size_t len, uint64_t now_ms) {
  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m);
  return gk_net_session_receive_decoded(s, slot, rc, &m, len, now_ms);
}

int gk_net_session_receive_decoded(gk_net_session *s, uint32_t slot,
                                   int decode_rc, const gk_wire_msg *m,
                                   size_t len, uint64_t now_ms) {
  s->stats.packets_in++;
  s->stats.bytes_in += len;
  if (slot >= s->cfg.players) {
    s->stats.drop_slot++;
    return GK_ERANGE;
  }
  if (decode_rc != 0) {
    s->stats.drop_malformed++;
    return decode_rc;
  }
  return gk_net_session_on_msg(s, slot, m, now_ms);
}

int gk_net_session_on_msg(gk_net_session *s, uint32_t slot,
                          const gk_wire_msg *m, uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  if (slot >= s->cfg.players) {
    s->stats.drop_slot++;
    return GK_ERANGE;
  }
  switch (m->type) {
  case GK_MSG_INPUT:
    if (s->ended) return on_late_input(s, slot, &m->u.input);
    return on_input(s, slot, &m->u.input);
  case GK_MSG_HASH:
    return on_hash(s, slot, &m->u.hash);
  case GK_MSG_REMOVE_PLAYER:
    if (slot != s->cfg.creator) {
      s->stats.drop_perm++;
      return GK_EPERM;
    }
    return gk_net_session_remove(s, m->u.remove.slot, m->u.remove.step, NULL,
                                 now_ms);
  case GK_MSG_END_MATCH:
    if (slot != s->cfg.creator) {
      s->stats.drop_perm++;
      return GK_EPERM;
    }
    return gk_net_session_end(s, GK_WIRE_END_HOST, now_ms);
  default:
    s->stats.drop_unexpected++;
    return GK_EPROTO;
  }
}

static void check_stall(gk_net_session *s) {
  uint64_t step = s->inbuf.confirmed;
  uint32_t missing = gk_inbuf_missing(&s->inbuf, step);
  if (missing == 0 || s->ended) return;
  uint64_t waited = s->now_ms - s->frontier_since_ms;
  if (waited >= s->cfg.stall_notice_ms && s->stall_step != step) {
    s->stall_step = step;
    s->stats.stall_notices++;
    if (s->cb.stall != NULL) s->cb.stall(s->cb.ctx, step, missing, waited);
    gk_wire_msg m;
    m.type = GK_MSG_STALL;
    m.u.stall = (gk_wire_stall){
        step, missing, waited > UINT32_MAX ? UINT32_MAX : (uint32_t)waited};
    broadcast(s, &m);
  }
  if (s->cfg.auto_remove_ms != 0 && waited >= s->cfg.auto_remove_ms)
    for (uint32_t p = 0; p < s->cfg.players; p++)
      if (missing >> p & 1u)
        gk_net_session_remove(s, p, GK_WIRE_STEP_ASAP, NULL, s->now_ms);
}

int gk_net_session_tick(gk_net_session *s, uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  confirm_and_send(s);
  /* Repeat what is unacknowledged once two step periods passed with no
   * CONFIRMED to that player: while steps are confirmed, each new one
   * carries the repeats (and the peer's acknowledgement of the last one
   * takes about a period to come back), so a peer gets at most about one
   * CONFIRMED per step. */
  const gk_ratio r = s->cfg.step_seconds;
  uint64_t period = 2u * (uint64_t)r.num * 1000u / r.den;
  if (period == 0) period = 1;
  for (uint32_t p = 0; p < s->cfg.players; p++) {
    const gk__session_player *pl = &s->pl[p];
    if ((s->inbuf.ack_mask >> p & 1u) == 0 || s->now_ms - pl->sent_ms < period)
      continue;
    if (pl->acked < s->inbuf.confirmed ||
        gk_inbuf_contiguous(&s->inbuf, p, pl->input_ack) != pl->input_ack_sent)
      send_confirmed(s, p, 1);
  }
  int ran = 0;
  uint64_t ready = gk_inbuf_ready(&s->inbuf);
  if (ready > 0 && !s->ended) {
    ran =
        gk_loop_frame(&s->loop, &s->in.base, gk_budget_steps(ready), s->now_ms);
    if (ran < 0) return ran;
  }
  for (uint32_t p = 0; p < s->cfg.players; p++) drain_pending(s, p);
  const gk_sim *sim = s->cfg.sim;
  if (!s->end_scheduled && sim->is_over != NULL && s->loop.state != NULL &&
      sim->is_over(s->loop.state))
    gk_net_session_end(s, GK_WIRE_END_GAME_OVER, s->now_ms);
  if (!s->end_scheduled && gk_inbuf_active_at(&s->inbuf, UINT64_MAX - 1) == 0)
    gk_net_session_end(s, GK_WIRE_END_ALL_LEFT, s->now_ms);
  if (!s->ended && s->inbuf.end_step != UINT64_MAX &&
      s->loop.steps > s->inbuf.end_step) {
    s->ended = 1;
    s->end_step = s->inbuf.end_step;
    gk_wire_msg m;
    m.type = GK_MSG_MATCH_END;
    m.u.match_end = (gk_wire_match_end){s->end_step, (uint8_t)s->end_reason};
    broadcast(s, &m);
    if (s->cb.ended != NULL) s->cb.ended(s->cb.ctx, s->end_step, s->end_reason);
  }
  check_stall(s);
  return ran;
}

int gk_net_session_remove(gk_net_session *s, uint32_t slot, uint64_t step,
                          uint64_t *at, uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  if (slot >= s->cfg.players) return GK_ERANGE;
  if (s->ended) return GK_ECLOSED;
  if (step == GK_WIRE_STEP_ASAP) step = s->inbuf.confirmed;
  int rc = gk_inbuf_schedule(&s->inbuf, step, GK_INBUF_REMOVE_PLAYER, slot);
  if (rc != 0) return rc;
  if (at != NULL) *at = step;
  if (s->cb.removed != NULL) s->cb.removed(s->cb.ctx, slot, step);
  gk_wire_msg m;
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){(uint8_t)slot, step};
  broadcast(s, &m);
  confirm_and_send(s);
  return 0;
}

int gk_net_session_disconnect(gk_net_session *s, uint32_t slot,
                              uint64_t now_ms) {
  if (slot < s->cfg.players &&
      (gk_inbuf_active_at(&s->inbuf, UINT64_MAX - 1) >> slot & 1u) == 0)
    return 0; /* already leaving */
  return gk_net_session_remove(s, slot, GK_WIRE_STEP_ASAP, NULL, now_ms);
}

int gk_net_session_end(gk_net_session *s, int reason, uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  if (reason < 1 || reason > GK_WIRE_END_REASON_MAX) return GK_EINVAL;
  if (s->end_scheduled || s->ended) return GK_ESTATE;
  int rc =
      gk_inbuf_schedule(&s->inbuf, s->inbuf.confirmed, GK_INBUF_MATCH_END, 0);
  if (rc != 0) return rc;
  s->end_scheduled = 1;
  s->end_reason = reason;
  confirm_and_send(s);
  return 0;
}

uint64_t gk_net_session_confirmed(const gk_net_session *s) {
  return s->inbuf.confirmed;
}

int gk_net_session_drained(const gk_net_session *s, uint32_t players) {
  if (!s->ended) return 0;
  uint32_t wait = players & (s->cfg.active_mask | s->joined);
  for (uint32_t p = 0; p < s->cfg.players; p++)
    if ((wait >> p & 1u) && s->pl[p].acked < s->inbuf.confirmed) return 0;
  return 1;
}

int gk_net_session_set_delay(gk_net_session *s, uint32_t delay,
                             uint64_t *announce, uint64_t *switch_at,
                             uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  if (s->ended || s->end_scheduled) return GK_ECLOSED;
  if (delay < 1 || delay > 255 || delay >= s->cfg.window / 2) return GK_EINVAL;
  uint64_t step = s->inbuf.confirmed;
  int rc = gk_inbuf_schedule_delay(&s->inbuf, step, delay, switch_at);
  if (rc != 0) return rc;
  if (announce != NULL) *announce = step;
  s->stats.delay_changes++;
  confirm_and_send(s);
  return 0;
}

uint32_t gk_net_session_delay(const gk_net_session *s) {
  return s->inbuf.delay;
}
