/* gk_net_peer.c: the peer engine (see gk_net_peer.h).
 *
 * Two things drive a peer: its deadlines and the host's datagrams; the
 * owner's clock reaches it only as the `now` of each call (kept in
 * p->now for the call's duration).
 *
 * The deadlines own the local schedule. Deadline k is t0 + k * step_ns;
 * each timeout call samples every deadline that has passed (within the
 * bound on how far past the confirmed step it may go), sends one INPUT
 * with every record the host has not acknowledged, and sets the next
 * deadline (p->deadline, what poll_timeout answers). While the bound holds
 * it back, the deadline still comes once per step period so
 * acknowledgements and repeats keep flowing, and when sampling may resume
 * the schedule restarts from then.
 *
 * Host datagrams feed the merged input buffer; every newly confirmed step
 * is run at once over the buffer, its confirm latency noted if this peer
 * sampled it, and its hash reported.
 */
#include "gk_net_peer.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_internal.h"
#include "gk_rng.h"
#include "gk_state.h"

/* --- helpers ---------------------------------------------------------------
 */

static int send_msg(gk_net_peer *p, const gk_wire_msg *m) {
  size_t len;
  int rc = gk_wire_encode(m, p->buf, sizeof p->buf, &len);
  if (rc != 0) return rc;
  rc = p->cb.send(p->cb.ctx, p->buf, len, gk_wire_type_reliable((int)m->type));
  if (rc == 0) p->stats.packets_out++;
  return rc;
}

int gk_net_peer_send_msg(gk_net_peer *p, uint64_t now_ns,
                         const gk_wire_msg *m) {
  p->now = now_ns;
  int rc = send_msg(p, m);
  if (rc == 0 && m->type == GK_MSG_JOIN_ROOM && !p->started &&
      m->u.room.role == GK_WIRE_ROLE_PLAYER &&
      gk_wire_code_valid(m->u.room.code)) {
    memcpy(p->expect_code, m->u.room.code, GK_WIRE_CODE_LEN + 1);
    p->snap.request_ns = now_ns; /* a late join's resume time */
  }
  return rc;
}

static uint64_t first_sampled(const gk_net_peer *p) {
  return p->sched.first;
}

/* The step the next sample is for. */
static uint64_t next_sample(const gk_net_peer *p) {
  return gk_net_sched_next(&p->sched);
}

static void send_inputs(gk_net_peer *p);

void gk__peer_send_inputs(gk_net_peer *p) {
  send_inputs(p);
}

static void finish(gk_net_peer *p, uint64_t step, int reason) {
  if (p->ended) return;
  p->ended = 1;
  p->end_reason = reason;
  p->deadline = GK_NET_PEER_NEVER;
  send_inputs(p); /* the last acknowledgement and hashes */
  if (p->cb.ended != NULL) p->cb.ended(p->cb.ctx, p, step, reason);
}

/* Packs the hashes the host has not acknowledged (from hash_from, at
 * most `fit`) into out as little-endian u64; returns how many, and their
 * first step in *first. Hashes that fell out of the loop's ring are
 * skipped (the host can no longer be told them). */
static uint32_t pack_hashes(gk_net_peer *p, uint32_t fit, uint8_t *out,
                            uint64_t *first) {
  uint32_t got = 0;
  while (p->hash_from < p->loop.steps && got == 0) {
    uint64_t n = p->loop.steps - p->hash_from;
    if (n > fit) n = fit;
    for (uint64_t h; got < n; got++) {
      if (gk_loop_hash_at(&p->loop, p->hash_from + got, &h) != 0) break;
      gk_store_le(out + (size_t)got * 8u, h, 8);
    }
    if (got == 0) p->hash_from++; /* fell out of the ring: skip it */
  }
  *first = p->hash_from;
  return got;
}

/* Sends every record the host has not acknowledged (the oldest first, as
 * many as fit), with our acknowledgement of confirmed steps and the
 * hashes the host has not acknowledged (CONFIRMED.hash_ack). */
static void send_inputs(gk_net_peer *p) {
  uint32_t isz = p->sim->input_size;
  uint8_t records[GK_WIRE_MAX];
  uint8_t hashes[GK_WIRE_STEPS_MAX * 8];
  uint64_t from = 0;
  uint32_t n =
      gk_net_sched_records(&p->sched, p->acked, p->unacked, p->inbuf.window,
                           isz, gk_wire_input_fit(isz), records, &from);
  uint64_t hash_first = 0;
  uint32_t nh =
      pack_hashes(p, gk_wire_input_hash_fit(isz, n), hashes, &hash_first);
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = p->match.slot,
                              .input_size = (uint8_t)isz,
                              .count = (uint8_t)n,
                              .ack = p->inbuf.confirmed,
                              .first = from,
                              .records = records,
                              .hash_count = (uint8_t)nh,
                              .hash_first = hash_first,
                              .hashes = hashes};
  send_msg(p, &m);
}

/* May the peer take its next sample? Not past confirmed + input_delay +
 * lead, and never so far that its rings of unacknowledged records and
 * sample times (window entries) could wrap onto a step still in use. */
static int may_sample(const gk_net_peer *p) {
  return !p->spectator && gk_net_sched_may_sample(&p->sched, p->inbuf.confirmed,
                                                  p->acked, p->inbuf.window);
}

/* --- running confirmed steps -----------------------------------------------
 */

/* Steps this peer has run (no_sim: passed to `step`). */
static uint64_t steps_done(const gk_net_peer *p) {
  return p->opts.no_sim ? p->inbuf.next_read : p->loop.steps;
}

/* no_sim: every confirmed step, in order, to the `step` callback (hash 0);
 * reading it releases the buffer's older steps, as the loop's read does. */
static void pass_steps(gk_net_peer *p) {
  gk_step_input in;
  while (gk_inbuf_ready(&p->inbuf) > 0 && !p->ended) {
    if (p->inbuf.base.read(&p->inbuf.base, p->inbuf.next_read, &in) != 0) break;
    p->stats.steps_run++;
    if (p->cb.step != NULL) p->cb.step(p->cb.ctx, p, &in, 0);
  }
}

/* The run ran a step (gk_inbuf_replica recorded it in the history). */
static void peer_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  gk_net_peer *p = ctx;
  p->stats.steps_run++;
  if (p->cb.step != NULL) p->cb.step(p->cb.ctx, p, in, hash);
}

void gk_net_peer_after_step(gk_net_peer *p, uint64_t step,
                            void (*fn)(void *ctx, gk_net_peer *p), void *ctx) {
  p->after_step = step;
  p->after_fn = fn;
  p->after_ctx = ctx;
}

/* Of `ready` steps, how many to run before the pending after_step call. */
static uint64_t steps_before_call(const gk_net_peer *p, uint64_t ready) {
  if (p->after_fn == NULL || p->after_step < p->loop.steps) return ready;
  uint64_t n = p->after_step + 1 - p->loop.steps;
  return n < ready ? n : ready;
}

static void run_steps(gk_net_peer *p) {
  if (p->opts.no_sim) pass_steps(p);
  uint64_t ready = p->opts.no_sim ? 0 : gk_inbuf_ready(&p->inbuf);
  uint32_t batch = p->opts.catchup_batch != 0 ? p->opts.catchup_batch : 512u;
  if (ready > batch) ready = batch; /* the rest from a timeout, at once */
  uint64_t now_ms = p->now / 1000000u;
  while (ready > 0 && !p->ended) {
    uint64_t n = steps_before_call(p, ready);
    int ran = gk_loop_frame(&p->loop, &p->in.base, gk_budget_steps(n), now_ms);
    if (p->after_fn != NULL && p->loop.steps == p->after_step + 1) {
      void (*fn)(void *, gk_net_peer *) = p->after_fn;
      p->after_fn = NULL;
      fn(p->after_ctx, p);
      gk_history_mark(&p->hist, &p->loop); /* fn may have changed the run */
    }
    if (ran <= 0 || (uint64_t)ran >= ready) break;
    ready -= (uint64_t)ran;
  }
  if (p->inbuf.end_step != UINT64_MAX && steps_done(p) > p->inbuf.end_step &&
      p->end_notice)
    finish(p, p->inbuf.end_step, p->end_notice_reason);
}

static void note_delay(gk_net_peer *p, uint64_t step, uint32_t delay) {
  p->delay = delay;
  if (p->ndelays < GK_NET_PEER_DELAYS_MAX)
    p->delays[p->ndelays++] = (gk_net_peer_delay){step, delay};
}

/* At a deadline: the switch of an announced change (gk_net_sched.h).
 * Raising fills the skipped steps with neutral records (the host holds
 * them neutral too) and samples on; lowering consumes this deadline
 * without reading the source (returns 1) until D - D' have passed. */
static int delay_switch(gk_net_peer *p) {
  gk_net_sched_event ev;
  int used = gk_net_sched_deadline(&p->sched, &ev);
  uint32_t isz = p->sim->input_size;
  for (uint64_t s = ev.held_from; s < ev.held_from + ev.held; s++) {
    memset(p->unacked + (s % p->inbuf.window) * isz, 0, isz);
    p->sampled_ns[s % p->inbuf.window] = 0;
  }
  if (ev.passed) p->stats.deadlines_skipped++;
  if (ev.switched) {
    p->stats.delay_changes++;
    note_delay(p, ev.at, ev.delay);
  }
  return used;
}

/* Newly confirmed steps before..confirmed-1: note the delay changes they
 * announce (in step order, so every peer computes the same switch step). */
static void take_announcements(gk_net_peer *p, uint64_t before) {
  for (uint64_t s = before; s < p->inbuf.confirmed; s++) {
    gk_step_input in;
    if (gk_inbuf_get(&p->inbuf, s, &in) != 0) continue;
    if (gk_net_sched_announce(&p->sched, s, in.flags))
      p->stats.drop_unexpected++; /* host never does this */
  }
}

/* Sets the next deadline: the next sampling deadline, or one step period
 * from now while sampling waits (blocked, catching up, spectating), or
 * now if a batch of confirmed steps is left to run. */
static void arm(gk_net_peer *p, uint64_t now) {
  if (p->ended || p->stopped) {
    p->deadline = GK_NET_PEER_NEVER;
    return;
  }
  uint64_t next = p->blocked || p->catching_up || p->spectator
                      ? now + p->step_ns
                      : p->t0 + p->sched.k * p->step_ns;
  if (gk_inbuf_ready(&p->inbuf) > 0) next = now; /* a batch is left to run */
  p->deadline = next;
}

/* A spectator's acknowledgement and hashes, once every opts.ack_every
 * step periods. */
static void spectator_report(gk_net_peer *p, uint64_t now) {
  if (now < p->report_due) return;
  uint32_t every = p->opts.ack_every != 0 ? p->opts.ack_every : 1u;
  p->report_due = now + (uint64_t)every * p->step_ns - p->step_ns / 2u;
  send_inputs(p);
}

/* After a snapshot: confirmed steps run in batches (run_steps) until the
 * peer is within the input delay of the head and may sample its next
 * step; then sampling starts now (spectators never sample). */
static int catch_up(gk_net_peer *p, uint64_t now) {
  if (gk_inbuf_ready(&p->inbuf) > 0) run_steps(p);
  if (!p->catching_up) return 0;
  if (p->spectator ||
      p->loop.steps + p->match.input_delay < p->inbuf.confirmed ||
      !may_sample(p)) {
    if (p->spectator)
      spectator_report(p, now);
    else
      send_inputs(p); /* acknowledgements and hashes */
    arm(p, now);
    return 1;
  }
  p->catching_up = 0;
  p->blocked = 0;
  p->t0 = now - p->sched.k * p->step_ns;
  p->snap.resumed_ns = now;
  if (p->cb.resumed != NULL) p->cb.resumed(p->cb.ctx, p);
  return 0;
}

static void on_timeout(gk_net_peer *p) {
  if (p->ended || p->stopped) return;
  uint64_t now = p->now;
  int was_catching_up = p->catching_up;
  if (catch_up(p, now)) return;
  /* catch_up ran this call's batch: the steps left over (within the input
   * delay of the head) wait for the next call, which comes at once */
  if (!was_catching_up && gk_inbuf_ready(&p->inbuf) > 0) run_steps(p);
  int sampled = 0, skipped = 0, was_blocked = p->blocked;
  uint32_t isz = p->sim->input_size;
  while (now >= p->t0 + p->sched.k * p->step_ns) {
    if (delay_switch(p)) {
      skipped = 1;
      continue;
    }
    uint64_t s = next_sample(p);
    if (!may_sample(p)) {
      p->blocked = 1;
      p->stats.waits++;
      break;
    }
    if (p->blocked) {
      /* The wait is over: the schedule restarts now, without a burst
       * (fixed_schedule: the deadlines held back are caught up). */
      p->blocked = 0;
      if (!p->opts.fixed_schedule) p->t0 = now - p->sched.k * p->step_ns;
    }
    gk_step_input in;
    uint8_t *dst = p->unacked + (s % p->inbuf.window) * isz;
    if (p->source->read(p->source, s, &in) == 0 && in.inputs != NULL &&
        (in.players == 1 || in.players > p->match.slot))
      memcpy(dst, in.inputs + (in.players == 1 ? 0 : p->match.slot * isz), isz);
    else
      memset(dst, 0, isz);
    p->sampled_ns[s % p->inbuf.window] = now;
    p->sched.k++;
    p->stats.samples++;
    sampled = 1;
    if (p->source->end_step != NULL) p->source->end_step(p->source);
  }
  if (sampled && p->source->end_frame != NULL) p->source->end_frame(p->source);
  if (sampled) gk__peer_pace(p);
  if (p->spectator)
    spectator_report(p, now);
  else if (sampled || skipped || p->blocked || was_blocked)
    send_inputs(p);
  gk__peer_head_update(p);
  arm(p, now);
}

void gk__peer_kick(gk_net_peer *p) {
  if (!p->ended && !p->stopped) p->deadline = p->now;
}

uint64_t gk_net_peer_poll_timeout(const gk_net_peer *p) {
  if (!p->started || p->ended || p->stopped) return GK_NET_PEER_NEVER;
  return p->deadline;
}

uint64_t gk_net_peer_handle_timeout(gk_net_peer *p, uint64_t now_ns) {
  p->now = now_ns;
  if (p->started && p->deadline != GK_NET_PEER_NEVER) on_timeout(p);
  return gk_net_peer_poll_timeout(p);
}

/* --- receiving -------------------------------------------------------------
 */

/* The host now holds my input for `step`: its round trip, from when it
 * was sampled (and sent) to this acknowledgement, into the smoothed
 * estimate (1/8 of each new sample, as TCP's SRTT). The host acknowledges
 * with its next CONFIRMED, so it reads up to a step period high. */
static void round_trip(gk_net_peer *p, uint64_t step) {
  if (step < first_sampled(p) || step >= next_sample(p)) return;
  uint64_t at = p->sampled_ns[step % p->inbuf.window];
  if (at == 0 || p->now < at) return;
  uint64_t rtt = p->now - at;
  p->rtt_ns = p->rtt_samples++ ? p->rtt_ns - p->rtt_ns / 8 + rtt / 8 : rtt;
}

static int on_confirmed(gk_net_peer *p, const gk_wire_confirmed *c) {
  if (c->players != p->match.players || c->input_size != p->sim->input_size) {
    p->stats.drop_unexpected++;
    return GK_EPROTO;
  }
  if (c->ack > p->acked && c->ack <= next_sample(p)) {
    round_trip(p, c->ack - 1);
    p->acked = c->ack;
  }
  if (c->hash_ack > p->hash_from && c->hash_ack <= p->loop.steps)
    p->hash_from = c->hash_ack;
  uint64_t before = p->inbuf.confirmed;
  for (uint32_t i = 0; i < c->count; i++) {
    gk_step_input in;
    gk_wire_step_get(c, i, &in);
    int rc = gk_inbuf_put_merged(&p->inbuf, &in);
    if (rc == GK_EEXIST || rc == GK_ESTALE)
      p->stats.confirmed_dup++;
    else if (rc != 0)
      p->stats.drop_unexpected++;
  }
  gk_inbuf_confirm(&p->inbuf);
  take_announcements(p, before);
  gk__peer_head_confirmed(p, before); /* before the loop reads them */
  uint64_t now = p->now;
  for (uint64_t s = before; s < p->inbuf.confirmed; s++)
    if (s >= first_sampled(p) && s < next_sample(p) &&
        p->sampled_ns[s % p->inbuf.window] != 0 &&
        p->nlatency < p->opts.latency_cap) {
      uint64_t us = (now - p->sampled_ns[s % p->inbuf.window]) / 1000u;
      p->latency_us[p->nlatency++] =
          us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    }
  run_steps(p);
  if (p->inbuf.confirmed > before && (p->blocked || p->catching_up) &&
      may_sample(p))
    gk__peer_kick(p); /* resume at once */
  /* No deadlines: acknowledge from here, also a repeat (the host sends
   * it again when our last acknowledgement was lost). */
  if (p->ended || p->stopped) send_inputs(p);
  return 0;
}

int gk_net_peer_handle(gk_net_peer *p, uint64_t now_ns, const uint8_t *bytes,
                       size_t len) {
  gk_wire_msg m;
  p->now = now_ns;
  p->stats.packets_in++;
  int rc = gk_wire_decode(bytes, len, &m);
  if (rc != 0) {
    p->stats.drop_malformed++;
    return rc;
  }
  int sim_msg = m.type == GK_MSG_SNAPSHOT_BEGIN ||
                m.type == GK_MSG_SNAPSHOT_CHUNK ||
                m.type == GK_MSG_STATE_REQUEST;
  if (sim_msg && p->opts.no_sim) { /* no state to adopt or to give */
    p->stats.drop_unexpected++;
    return GK_ESTATE;
  }
  if (m.type == GK_MSG_SNAPSHOT_BEGIN || m.type == GK_MSG_SNAPSHOT_CHUNK)
    return gk__peer_on_snapshot(p, &m);
  if (m.type == GK_MSG_STATE_REQUEST)
    return gk__peer_on_state_request(p, &m.u.state_req);
  if (m.type == GK_MSG_MATCH_START) {
    char err[GK_ERRMSG_MAX];
    rc = gk_net_peer_start(p, now_ns, &m.u.match_start, err, sizeof err);
    if (rc != 0) p->stats.drop_unexpected++;
    return rc;
  }
  int match_msg = m.type == GK_MSG_CONFIRMED || m.type == GK_MSG_STALL ||
                  m.type == GK_MSG_DESYNC || m.type == GK_MSG_MATCH_END ||
                  m.type == GK_MSG_REMOVE_PLAYER;
  if (match_msg && (!p->started || p->await_snapshot)) {
    p->stats.drop_unexpected++;
    return GK_ESTATE;
  }
  switch (m.type) {
  case GK_MSG_CONFIRMED:
    return on_confirmed(p, &m.u.confirmed);
  case GK_MSG_STALL:
    if (p->cb.stall != NULL) p->cb.stall(p->cb.ctx, p, &m.u.stall);
    return 0;
  case GK_MSG_DESYNC:
    if (p->cb.desync != NULL) p->cb.desync(p->cb.ctx, p, &m.u.desync);
    return 0;
  case GK_MSG_REMOVE_PLAYER:
    if (m.u.remove.slot >= p->match.players) {
      p->stats.drop_unexpected++;
      return GK_ERANGE;
    }
    if (p->cb.removed != NULL)
      p->cb.removed(p->cb.ctx, p, m.u.remove.slot, m.u.remove.step);
    if (m.u.remove.slot == p->match.slot)
      finish(p, m.u.remove.step, GK_WIRE_END_REMOVED);
    return 0;
  case GK_MSG_MATCH_END:
    p->end_notice = 1;
    p->end_notice_reason = m.u.match_end.reason;
    if (m.u.match_end.reason == GK_WIRE_END_REMOVED ||
        m.u.match_end.reason == GK_WIRE_END_SHUTDOWN ||
        (p->inbuf.end_step != UINT64_MAX && steps_done(p) > p->inbuf.end_step))
      finish(p, m.u.match_end.step, m.u.match_end.reason);
    return 0;
  default:
    if (p->cb.message != NULL) p->cb.message(p->cb.ctx, p, &m);
    return 0;
  }
}

/* --- life cycle ------------------------------------------------------------
 */

int gk_net_peer_init(gk_net_peer *p, const gk_net_peer_options *opts,
                     const gk_net_peer_callbacks *cb) {
  if (p == NULL || opts == NULL || cb == NULL || cb->send == NULL ||
      (opts->no_sim && opts->source == NULL) ||
      (opts->phase_den != 0 && opts->phase_num >= opts->phase_den) ||
      (opts->no_sim && opts->predict))
    return GK_EINVAL;
  memset(p, 0, sizeof *p);
  p->opts = *opts;
  p->cb = *cb;
  if (p->opts.latency_cap == 0) p->opts.latency_cap = 65536;
  if (p->opts.hash_ring == 0) p->opts.hash_ring = 1024;
  p->latency_us = malloc((size_t)p->opts.latency_cap * sizeof(uint32_t));
  p->display_us = malloc((size_t)p->opts.latency_cap * sizeof(uint32_t));
  if (p->latency_us == NULL || p->display_us == NULL) {
    free(p->latency_us);
    free(p->display_us);
    return GK_ENOMEM;
  }
  p->deadline = GK_NET_PEER_NEVER;
  return 0;
}

/* Frees what a peer allocates for a match (its genre config is released
 * by the caller first) and forgets the pointers; the latency samples,
 * allocated at init, stay for another start. */
static void release_buffers(gk_net_peer *p) {
  free(p->sim_cfg);
  free(p->unacked);
  free(p->sampled_ns);
  free(p->bot);
  p->bot = NULL;
  p->sim_cfg = NULL;
  p->unacked = NULL;
  p->sampled_ns = NULL;
}

/* MATCH_START's genre from the caller's registry, or NULL. */
static const gk_sim *find_genre(const gk_net_peer_genres *g, const char *name) {
  if (g->find != NULL) return g->find(g->ctx, name);
  for (size_t i = 0; g->sims != NULL && i < g->count; i++)
    if (g->sims[i] != NULL && strcmp(g->sims[i]->name, name) == 0)
      return g->sims[i];
  return NULL;
}

/* A simulating peer's run of the match from `ms`: the loop, its history,
 * and the genre's bot as the source unless the caller gave one. Returns 0
 * or a code (message in err), with nothing of the run left open. */
static int open_run(gk_net_peer *p, const gk_wire_match_start *ms, char *err,
                    size_t errlen) {
  gk_loop_options lo = {.hash_ring = p->opts.hash_ring};
  int rc = gk_loop_init(&p->loop, &lo);
  if (rc != 0)
    return gk_errf(err, errlen, rc, "peer: loop: %s", gk_strerror(rc));
  if ((rc = gk_loop_start(&p->loop, p->sim, p->sim_cfg, ms->seed, ms->players,
                          err, errlen)) != 0)
    goto fail;
  if (gk__peer_history_open(p, ms->players) != 0) {
    rc = gk_errf(err, errlen, GK_ENOMEM, "peer: out of memory");
    goto fail;
  }
  if (p->source == NULL) {
    uint64_t x = p->opts.bot_seed ^ ms->seed;
    uint64_t seed = gk_splitmix64(&x) + ms->slot;
    p->bot = malloc(sizeof *p->bot);
    if (p->bot == NULL) {
      rc = gk_errf(err, errlen, GK_ENOMEM, "peer: out of memory");
      goto fail;
    }
    if ((rc = gk_bot_input_init_one(p->bot, p->sim, p->sim_cfg, seed,
                                    ms->slot)) != 0) {
      gk_errf(err, errlen, rc, "peer: genre \"%s\" has no bot", p->sim->name);
      goto fail;
    }
    p->source = &p->bot->base;
  }
  return 0;
fail:
  gk_history_close(&p->hist);
  gk_loop_close(&p->loop);
  return rc;
}

/* MATCH_START's options through the caller's hook; without one, only
 * blank text is taken. */
static int apply_options(gk_net_peer *p, const gk_sim *sim,
                         const gk_wire_match_start *ms, char *err,
                         size_t errlen) {
  size_t len = strnlen(ms->config, sizeof ms->config);
  if (p->opts.apply_options != NULL)
    return p->opts.apply_options(p->opts.options_ctx, sim, p->sim_cfg,
                                 ms->config, len, err, errlen);
  for (size_t i = 0; i < len; i++)
    if (strchr(" \t\r\n", ms->config[i]) == NULL)
      return gk_errf(err, errlen, GK_EINVAL,
                     "options: this peer has no options hook");
  return 0;
}

/* The match's clock, input source and delay bookkeeping, from `ms`. */
static void begin_match(gk_net_peer *p, const gk_wire_match_start *ms) {
  p->match = *ms;
  p->step_ns =
      (uint64_t)ms->step_seconds.num * 1000000000u / ms->step_seconds.den;
  if (p->step_ns == 0) p->step_ns = 1;
  gk_inbuf_replica_init(&p->in, &p->inbuf, &p->loop, &p->hist, peer_step, p);
  p->acked = ms->first_step;
  p->hash_from = ms->first_step;
  gk_net_sched_init(&p->sched, ms->first_step + ms->input_delay,
                    ms->input_delay, ms->lead);
  p->t0 = p->now;
  if (p->opts.phase_den != 0)
    p->t0 += p->step_ns * p->opts.phase_num / p->opts.phase_den;
  p->ndelays = 0;
  note_delay(p, ms->first_step, ms->input_delay);
}

int gk_net_peer_start(gk_net_peer *p, uint64_t now_ns,
                      const gk_wire_match_start *ms, char *err, size_t errlen) {
  p->now = now_ns;
  if (p->started)
    return gk_errf(err, errlen, GK_ESTATE, "peer: match already started");
  if (ms->players < 1 || ms->players > GK_PLAYERS_MAX ||
      ms->slot >= ms->players || ms->step_seconds.num == 0 ||
      ms->step_seconds.den == 0 || ms->first_step != 0)
    return gk_errf(err, errlen, GK_EINVAL,
                   "peer: match start out of range (or not at step 0)");
  if (p->opts.no_sim && (ms->active_mask >> ms->slot & 1u) == 0)
    return gk_errf(err, errlen, GK_ESTATE,
                   "peer: a late join needs a snapshot (no_sim has none)");
  const gk_sim *sim = find_genre(&p->opts.genres, ms->genre);
  if (sim == NULL)
    return gk_errf(err, errlen, GK_ENOTFOUND, "peer: unknown genre \"%s\"",
                   ms->genre);
  if (ms->players < sim->players_min || ms->players > sim->players_max)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "peer: %u players, genre \"%s\" takes %u..%u", ms->players,
                   sim->name, sim->players_min, sim->players_max);
  int rc;
  p->sim = sim;
  if (!p->opts.no_sim) { /* no_sim: no run, so no options to apply */
    p->sim_cfg = calloc(1, sim->config_size > 0 ? sim->config_size : 1);
    if (p->sim_cfg == NULL) {
      rc = gk_errf(err, errlen, GK_ENOMEM, "peer: out of memory");
      goto fail;
    }
    sim->config_default(p->sim_cfg);
    if ((rc = apply_options(p, sim, ms, err, errlen)) != 0) goto fail;
  }
  uint32_t window =
      p->opts.window != 0 ? p->opts.window : GK_INBUF_WINDOW_DEFAULT;
  gk_inbuf_options o = {.players = ms->players,
                        .input_size = sim->input_size,
                        .active_mask = ms->active_mask,
                        .first_step = ms->first_step,
                        .window = window};
  if ((rc = gk_inbuf_init(&p->inbuf, &o)) != 0) {
    gk_errf(err, errlen, rc, "peer: input buffer: %s", gk_strerror(rc));
    goto fail;
  }
  p->unacked = calloc(window, sim->input_size);
  p->sampled_ns = calloc(window, sizeof(uint64_t));
  if (p->unacked == NULL || p->sampled_ns == NULL) {
    rc = gk_errf(err, errlen, GK_ENOMEM, "peer: out of memory");
    goto fail_inbuf;
  }
  p->source = p->opts.source;
  if (!p->opts.no_sim && (rc = open_run(p, ms, err, errlen)) != 0)
    goto fail_inbuf;
  if (gk__peer_head_open(p, ms->players) != 0) {
    gk_history_close(&p->hist);
    gk_loop_close(&p->loop);
    rc = gk_errf(err, errlen, GK_ENOMEM, "peer: out of memory");
    goto fail_inbuf;
  }
  begin_match(p, ms);
  /* Not active at the start: a late join, which starts from a snapshot. */
  if (!p->spectator && (ms->active_mask >> ms->slot & 1u) == 0)
    p->await_snapshot = 1;
  p->started = 1;
  if (p->cb.started != NULL) p->cb.started(p->cb.ctx, p);
  if (!p->await_snapshot) gk__peer_kick(p);
  return 0;
fail_inbuf:
  gk_inbuf_close(&p->inbuf);
fail:
  if (p->sim_cfg != NULL && sim->config_free != NULL)
    sim->config_free(p->sim_cfg);
  release_buffers(p);
  p->sim = NULL;
  return rc;
}

void gk_net_peer_stop(gk_net_peer *p) {
  p->stopped = 1;
  p->deadline = GK_NET_PEER_NEVER;
}

void gk_net_peer_free(gk_net_peer *p) {
  p->stopped = 1;
  p->deadline = GK_NET_PEER_NEVER;
  gk_chunk_rx_close(&p->snap_rx);
  if (p->started) {
    gk__peer_head_close(p);
    if (!p->opts.no_sim) {
      gk_history_close(&p->hist);
      gk_loop_close(&p->loop);
    }
    gk_inbuf_close(&p->inbuf);
    if (p->sim_cfg != NULL && p->sim->config_free != NULL)
      p->sim->config_free(p->sim_cfg);
  }
  release_buffers(p);
  free(p->latency_us);
  free(p->display_us);
  p->latency_us = NULL;
  p->display_us = NULL;
  p->started = 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* p-th percentile of n samples, nearest rank over a sorted copy. */
static uint32_t pct_of(const uint32_t *arr, uint32_t n, uint32_t pct) {
  if (n == 0) return 0;
  uint32_t *c = malloc((size_t)n * sizeof *c);
  if (c == NULL) return 0;
  memcpy(c, arr, (size_t)n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_u32);
  if (pct > 100) pct = 100;
  /* nearest rank: ceil(pct/100 * n), at least 1 */
  uint64_t rank = ((uint64_t)pct * n + 99u) / 100u;
  if (rank < 1) rank = 1;
  uint32_t v = c[rank - 1];
  free(c);
  return v;
}

uint32_t gk_net_peer_latency_pct(const gk_net_peer *p, uint32_t pct) {
  return pct_of(p->latency_us, p->nlatency, pct);
}

uint32_t gk_net_peer_display_pct(const gk_net_peer *p, uint32_t pct) {
  if (!p->opts.predict) return gk_net_peer_latency_pct(p, pct);
  return pct_of(p->display_us, p->ndisplay, pct);
}
