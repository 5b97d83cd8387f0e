/* gk_lockstep_probe.c: scripted lockstep matches over the portable lockstep
 * library, for the determinism matrix (scripts/determinism.sh).
 *
 * It links gk_core and src/net's gk_wire only (codec, input buffer, host
 * session, delay policy, chunks: libc), so it builds with any C11 compiler
 * for any CPU and for WebAssembly, where no libuv, ENet or Criterion is.
 * Each run is a whole match in one process with no clock and no socket:
 * a host session (gk_net_session) and one scripted peer per player (a
 * gk_inbuf of merged steps, a gk_loop over it, the genre's bot as its
 * device), joined by a simulated network of datagram queues with a fixed
 * latency in ticks and loss and jitter drawn from a seeded PRNG. A tick is
 * one step period on a made-up millisecond clock. Every byte either side
 * sends goes through gk_wire_encode and gk_wire_decode.
 *
 * The scripts cover what a browser peer will meet: loss and jitter, a link
 * outage (STALL notices), input delay changes chosen by gk_delay_ctl from
 * scripted round trips (raise and lower), a wrong hash report (one
 * DESYNC), a removal and an end sent by the creator over the wire, the
 * drain after the end, and the referee's state sent in SNAPSHOT_CHUNKs
 * and put back together with gk_chunk_rx.
 *
 * Each run prints one line: its step count, the final step hash, and two
 * chain digests, folded as gk_chain.c folds them: `wire` over every
 * datagram sent (direction, slot, bytes), `states` over every step hash
 * of the host's loop and of every peer's loop. Built with gcc and clang,
 * -O0 and -O3, for x86-64, i386, aarch64 and wasm32 the output must be
 * byte-identical. The probe also checks itself and exits 1 with a
 * sentence on stderr if a peer ended on another state than the host's, a
 * desync other than the scripted one was reported, the snapshot did not
 * come back whole, or a match did not end and drain in time.
 *
 * usage: gk-lockstep-probe [--steps N]   (N: steps per match, default 1500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_loop.h"
#include "gk_net_chunk.h"
#include "gk_net_delay.h"
#include "gk_net_session.h"
#include "gk_net_wire.h"
#include "gk_push_puzzle.h"
#include "gk_rng.h"
#include "gk_state.h"
#include "gk_survivors.h"
#include "gk_testkit_probe.h"

#define PEERS_MAX 4
#define QUEUE_MAX 4096
#define RING 512   /* a peer's sampled records, by step % RING */
#define WINDOW 256 /* input buffer windows */
#define HOST 0xffu /* queue destination: the host */

/* One scripted match. */
typedef struct script {
  const char *label;
  const gk_sim *sim;
  uint32_t players;
  uint64_t seed;
  uint32_t delay, lead;
  uint32_t latency;     /* ticks */
  uint32_t jitter;      /* extra ticks, 0..jitter, per datagram */
  uint32_t loss;        /* per mille, unreliable datagrams only */
  uint32_t outage_from; /* ticks [from, to): slot 1's link is down */
  uint32_t outage_to;
  int delay_ctl;         /* round trips scripted, gk_delay_ctl decides */
  uint64_t corrupt_step; /* slot 1 reports a wrong hash for it (0: no) */
  uint32_t remove_at;    /* tick: the creator removes the last slot */
  int end_by_creator;    /* END_MATCH over the wire, else session_end */
} script;

typedef struct dgram {
  uint32_t to; /* a slot, or HOST */
  uint32_t from;
  uint64_t at; /* delivery tick */
  size_t len;
  uint8_t bytes[GK_WIRE_MAX];
} dgram;

typedef struct peer {
  uint32_t slot;
  gk_inbuf in;
  gk_loop loop;
  gk_bot_input bot;
  uint8_t recs[RING * GK_INPUT_SIZE_MAX];
  uint64_t first;     /* first step it samples for */
  uint64_t next;      /* next step it samples for */
  uint64_t acked;     /* the host holds its records < acked */
  uint64_t hash_from; /* the host holds its hashes < hash_from */
  uint32_t delay;     /* in force */
  uint32_t announced; /* last announced */
  int dl_pending;
  uint64_t dl_at;
  uint32_t dl_to;
  uint64_t end_step; /* MATCH_END heard: last step; else UINT64_MAX */
  int end_reason;
  int finished; /* ran its last step */
  int removed;  /* heard its own removal */
  uint32_t desyncs, stalls;
} peer;

typedef struct match {
  const script *sc;
  gk_net_session s;
  peer p[PEERS_MAX];
  dgram *q; /* QUEUE_MAX */
  uint32_t nq;
  uint64_t tick, rng;
  uint64_t wire; /* digest of every datagram sent */
  gk_testkit_chain states;
  uint64_t *host_hash; /* the host's hash of every step, by step */
  uint64_t nhash;
  uint32_t host_desyncs;
  int end_sent;
  int failed;
} match;

static int fail(match *m, const char *what) {
  if (!m->failed)
    fprintf(stderr, "gk-lockstep-probe: %s: %s (tick %llu)\n", m->sc->label,
            what, (unsigned long long)m->tick);
  m->failed = 1;
  return -1;
}

static uint64_t now_ms(uint64_t tick) {
  return 1000 + tick * 50 / 3; /* 60 ticks a second */
}

static void fold_wire(match *m, uint32_t dir, uint32_t slot,
                      const uint8_t *bytes, size_t len) {
  uint8_t buf[10 + GK_WIRE_MAX];
  gk_store_le(buf, m->wire, 8);
  buf[8] = (uint8_t)dir;
  buf[9] = (uint8_t)slot;
  memcpy(buf + 10, bytes, len);
  m->wire = gk_hash_bytes(buf, 10 + len);
}

static int link_down(const match *m, uint32_t slot) {
  return slot == 1 && m->tick >= m->sc->outage_from &&
         m->tick < m->sc->outage_to;
}

/* Queues one datagram (from `from` to `to`): unreliable ones may be lost
 * or cut off by an outage, reliable ones are late instead. */
static int post(match *m, uint32_t from, uint32_t to, const uint8_t *bytes,
                size_t len, int reliable) {
  const script *sc = m->sc;
  uint32_t peer_slot = to == HOST ? from : to;
  fold_wire(m, to == HOST ? 0 : 1, peer_slot, bytes, len);
  uint64_t r = gk_splitmix64(&m->rng);
  uint64_t at =
      m->tick + sc->latency + (sc->jitter ? (r >> 32) % (sc->jitter + 1u) : 0);
  if (!reliable && (link_down(m, peer_slot) || (r & 0xffffu) % 1000 < sc->loss))
    return 0;
  if (reliable && link_down(m, peer_slot)) at = sc->outage_to + sc->latency;
  if (m->nq == QUEUE_MAX) return fail(m, "network queue full");
  dgram *d = &m->q[m->nq++];
  d->from = from;
  d->to = to;
  d->at = at;
  d->len = len;
  memcpy(d->bytes, bytes, len);
  return 0;
}

static int encode_post(match *m, uint32_t from, uint32_t to,
                       const gk_wire_msg *msg) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  if (gk_wire_encode(msg, buf, sizeof buf, &len) != 0)
    return fail(m, "encode failed");
  return post(m, from, to, buf, len, gk_wire_type_reliable((int)msg->type));
}

/* --- the host session's callbacks ---------------------------------------- */

static int on_send(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
                   int reliable) {
  return post(ctx, HOST, slot, bytes, len, reliable);
}

static void on_desync(void *ctx, const gk_net_desync *d) {
  match *m = ctx;
  m->host_desyncs++;
  if (d->step != m->sc->corrupt_step || d->player != 1)
    fail(m, "unexpected desync");
}

static void on_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  match *m = ctx;
  gk_testkit_chain_add(&m->states, hash);
  if (in->step < m->nhash) m->host_hash[in->step] = hash;
}

/* --- a scripted peer ------------------------------------------------------ */

static int peer_open(match *m, peer *p, uint32_t slot, const void *cfg) {
  const script *sc = m->sc;
  memset(p, 0, sizeof *p);
  p->slot = slot;
  p->first = p->next = sc->delay;
  p->delay = p->announced = sc->delay;
  p->end_step = UINT64_MAX;
  gk_inbuf_options o = {.players = sc->players,
                        .input_size = sc->sim->input_size,
                        .active_mask = gk_all_players(sc->players),
                        .window = WINDOW};
  char err[GK_ERRMSG_MAX];
  uint64_t x = sc->seed + slot;
  if (gk_inbuf_init(&p->in, &o) != 0) return fail(m, "inbuf init");
  if (gk_loop_init(&p->loop, NULL) != 0 ||
      gk_loop_start(&p->loop, sc->sim, cfg, sc->seed, sc->players, err,
                    sizeof err) != 0 ||
      gk_bot_input_init_one(&p->bot, sc->sim, cfg, gk_splitmix64(&x), slot))
    return fail(m, "peer start");
  return 0;
}

static void peer_close(peer *p) {
  gk_loop_close(&p->loop);
  gk_inbuf_close(&p->in);
}

/* Notes the delay changes that newly confirmed steps announce. */
static void take_announcements(match *m, peer *p, uint64_t before) {
  for (uint64_t s = before; s < p->in.confirmed; s++) {
    gk_step_input in;
    if (gk_inbuf_get(&p->in, s, &in) != 0) continue;
    uint32_t d = GK_STEP_DELAY_OF(in.flags);
    if (d == 0) continue;
    if (p->dl_pending) fail(m, "a second delay change in progress");
    p->dl_pending = 1;
    p->dl_at = s + p->announced + m->sc->lead;
    p->dl_to = d;
    p->announced = d;
  }
}

static void peer_receive(match *m, peer *p, const uint8_t *bytes, size_t len) {
  gk_wire_msg msg;
  if (gk_wire_decode(bytes, len, &msg) != 0) {
    fail(m, "peer: undecodable datagram");
    return;
  }
  switch (msg.type) {
  case GK_MSG_CONFIRMED: {
    const gk_wire_confirmed *c = &msg.u.confirmed;
    uint64_t before = p->in.confirmed;
    for (uint32_t i = 0; i < c->count; i++) {
      gk_step_input in;
      gk_wire_step_get(c, i, &in);
      int rc = gk_inbuf_put_merged(&p->in, &in);
      if (rc != 0 && rc != GK_ESTALE && rc != GK_EEXIST) {
        fail(m, "peer: a confirmed step was refused");
        return;
      }
    }
    gk_inbuf_confirm(&p->in);
    take_announcements(m, p, before);
    if (c->ack > p->acked) p->acked = c->ack;
    if (c->hash_ack > p->hash_from && c->hash_ack <= p->loop.steps)
      p->hash_from = c->hash_ack;
    break;
  }
  case GK_MSG_MATCH_END:
    if (p->end_step == UINT64_MAX) {
      p->end_step = msg.u.match_end.step;
      p->end_reason = msg.u.match_end.reason;
    }
    break;
  case GK_MSG_DESYNC:
    p->desyncs++;
    break;
  case GK_MSG_STALL:
    p->stalls++;
    break;
  case GK_MSG_REMOVE_PLAYER:
    /* Out from that step: it runs the steps before it, and the owner
     * (a server) closes its connection. */
    if (msg.u.remove.slot == p->slot && !p->removed) {
      p->removed = 1;
      if (msg.u.remove.step - 1 < p->end_step)
        p->end_step = msg.u.remove.step - 1;
      p->end_reason = GK_WIRE_END_REMOVED;
    }
    break;
  default:
    fail(m, "peer: an unexpected message");
  }
}

/* Runs the confirmed steps one at a time, folding every hash. */
static void peer_run(match *m, peer *p) {
  while (!p->finished && gk_inbuf_ready(&p->in) > 0) {
    if (gk_loop_frame(&p->loop, &p->in.base, gk_budget_steps(1),
                      now_ms(m->tick)) != 1) {
      fail(m, "peer: a step failed");
      return;
    }
    gk_testkit_chain_add(&m->states, p->loop.last_hash);
    if (p->end_step != UINT64_MAX && p->loop.steps > p->end_step)
      p->finished = 1;
  }
  if (p->end_step != UINT64_MAX && p->loop.steps > p->end_step) p->finished = 1;
}

/* One sampling deadline: the bot's record for the next step, if the lead
 * allows it (a delay change switches at its step, as gk_net_peer does). */
static void peer_sample(match *m, peer *p) {
  uint32_t isz = m->sc->sim->input_size;
  if (p->end_step != UINT64_MAX || p->removed) return;
  if (p->dl_pending && p->next == p->dl_at) {
    if (p->dl_to > p->delay) { /* raising: the host holds these neutral */
      for (uint32_t i = 0; i < p->dl_to - p->delay; i++)
        memset(p->recs + ((p->next + i) % RING) * isz, 0, isz);
      p->next += p->dl_to - p->delay;
    }
    p->delay = p->dl_to;
    p->dl_pending = 0;
  }
  uint64_t s = p->next;
  if (s >= p->in.confirmed + p->delay + m->sc->lead ||
      s - p->in.confirmed >= WINDOW / 2 || s - p->acked >= RING / 2)
    return;
  gk_step_input in;
  uint8_t *dst = p->recs + (s % RING) * isz;
  if (p->bot.base.read(&p->bot.base, s, &in) == 0)
    memcpy(dst, in.inputs, isz);
  else
    memset(dst, 0, isz);
  p->next++;
}

/* Every record and hash the host has not acknowledged, as much as fits. */
static int peer_send(match *m, peer *p) {
  uint32_t isz = m->sc->sim->input_size;
  uint8_t recs[GK_WIRE_STEPS_MAX * GK_INPUT_SIZE_MAX];
  uint8_t hashes[GK_WIRE_STEPS_MAX * 8];
  uint64_t from = p->acked > p->first ? p->acked : p->first;
  uint64_t n = p->next > from ? p->next - from : 0;
  uint32_t fit = gk_wire_input_fit(isz);
  if (n > fit) n = fit;
  for (uint64_t i = 0; i < n; i++)
    memcpy(recs + i * isz, p->recs + ((from + i) % RING) * isz, isz);
  uint32_t hfit = gk_wire_input_hash_fit(isz, (uint32_t)n), got = 0;
  while (p->hash_from < p->loop.steps && got == 0) {
    uint64_t hn = p->loop.steps - p->hash_from;
    if (hn > hfit) hn = hfit;
    for (uint64_t h; got < hn; got++) {
      if (gk_loop_hash_at(&p->loop, p->hash_from + got, &h) != 0) break;
      if (p->slot == 1 && p->hash_from + got == m->sc->corrupt_step &&
          m->sc->corrupt_step != 0)
        h ^= 1; /* the scripted wrong report */
      gk_store_le(hashes + (size_t)got * 8u, h, 8);
    }
    if (got == 0) p->hash_from++; /* fell out of the ring */
  }
  gk_wire_msg msg;
  msg.type = GK_MSG_INPUT;
  msg.u.input = (gk_wire_input){.slot = (uint8_t)p->slot,
                                .input_size = (uint8_t)isz,
                                .count = (uint8_t)n,
                                .ack = p->in.confirmed,
                                .first = from,
                                .records = recs,
                                .hash_count = (uint8_t)got,
                                .hash_first = p->hash_from,
                                .hashes = hashes};
  return encode_post(m, p->slot, HOST, &msg);
}

/* --- the match ------------------------------------------------------------ */

/* Delivers every datagram due by now, in the order they were sent. */
static void deliver(match *m) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < m->nq; i++) {
    dgram *d = &m->q[i];
    if (d->at > m->tick) {
      if (keep != i) m->q[keep] = *d;
      keep++;
      continue;
    }
    if (d->to == HOST)
      gk_net_session_receive(&m->s, d->from, d->bytes, d->len, now_ms(m->tick));
    else
      peer_receive(m, &m->p[d->to], d->bytes, d->len);
  }
  m->nq = keep;
}

/* The referee's state now, sent as SNAPSHOT_CHUNKs through the codec and
 * put back together; returns its sum (0 on failure). */
static uint64_t snapshot(match *m, uint32_t *chunks) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  uint64_t hash = 0, sum = 0;
  char err[GK_ERRMSG_MAX];
  if (gk_history_state_at(&m->s.hist, m->s.loop.steps, &bytes, &len, &hash, err,
                          sizeof err) != 0) {
    fail(m, err);
    return 0;
  }
  if (hash != m->s.loop.last_hash) fail(m, "snapshot: another hash");
  const uint32_t size = 256;
  uint32_t n = gk_chunk_count(len, size);
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  if (gk_chunk_rx_begin(&rx, 7, len, size, n, gk_chunk_sum(bytes, len),
                        GK_CHUNK_TOTAL_MAX) != 0)
    fail(m, "snapshot: begin refused");
  for (uint32_t i = n; i-- > 0 && !m->failed;) { /* last chunk first */
    gk_wire_msg msg, back;
    uint8_t buf[GK_WIRE_MAX];
    size_t blen;
    gk_wire_chunk_msg(&msg, GK_MSG_SNAPSHOT_CHUNK, 7, bytes, len, size, i);
    if (gk_wire_encode(&msg, buf, sizeof buf, &blen) != 0 ||
        gk_wire_decode(buf, blen, &back) != 0) {
      fail(m, "snapshot: chunk codec");
      break;
    }
    fold_wire(m, 1, 0, buf, blen);
    const gk_wire_snap_chunk *c = &back.u.snap_chunk;
    if (gk_chunk_rx_put(&rx, c->id, c->index, c->bytes, c->len, c->crc) < 0)
      fail(m, "snapshot: chunk refused");
  }
  size_t got_len = 0;
  uint8_t *got = m->failed ? NULL : gk_chunk_rx_take(&rx, &got_len);
  if (got == NULL || got_len != len || memcmp(got, bytes, len) != 0)
    fail(m, "snapshot: did not come back whole");
  else
    sum = gk_chunk_sum(got, got_len);
  free(got);
  gk_chunk_rx_close(&rx);
  free(bytes);
  *chunks = n;
  return sum;
}

/* The scripted round trip of the delay-controlled run: calm, a slow
 * spell that raises the delay, then a fast one that lowers it. */
static uint32_t scripted_rtt(uint64_t tick) {
  return tick < 300 ? 40 : tick < 700 ? 160 : 15;
}

static void host_script(match *m, gk_delay_ctl *ctl, uint64_t steps) {
  const script *sc = m->sc;
  uint64_t now = now_ms(m->tick);
  if (sc->delay_ctl) {
    uint32_t want = gk_delay_wanted(&ctl->pol, scripted_rtt(m->tick), 4);
    uint32_t d = gk_delay_ctl_observe(ctl, now, want);
    if (d != 0 && gk_net_session_set_delay(&m->s, d, NULL, NULL, now) == 0) {
      gk_delay_ctl_changed(ctl, d, now);
    }
  }
  if (sc->remove_at != 0 && m->tick == sc->remove_at) {
    gk_wire_msg msg;
    msg.type = GK_MSG_REMOVE_PLAYER;
    msg.u.remove =
        (gk_wire_remove){(uint8_t)(sc->players - 1), GK_WIRE_STEP_ASAP};
    encode_post(m, 0, HOST, &msg);
  }
  if (!m->s.end_scheduled && gk_net_session_confirmed(&m->s) >= steps) {
    if (sc->end_by_creator) {
      if (!m->end_sent) {
        m->end_sent = 1;
        gk_wire_msg msg;
        msg.type = GK_MSG_END_MATCH;
        msg.u.end_reason = GK_WIRE_END_HOST;
        encode_post(m, 0, HOST, &msg);
      }
    } else {
      gk_net_session_end(&m->s, GK_WIRE_END_HOST, now);
    }
  }
}

static int run(const script *sc, uint64_t steps) {
  match *m = calloc(1, sizeof *m);
  void *cfg = calloc(1, sc->sim->config_size);
  uint64_t limit = steps * 4 + 2000;
  if (m == NULL || cfg == NULL ||
      (m->q = calloc(QUEUE_MAX, sizeof(dgram))) == NULL ||
      (m->host_hash = calloc(limit, sizeof(uint64_t))) == NULL) {
    fprintf(stderr, "gk-lockstep-probe: out of memory\n");
    exit(1);
  }
  m->sc = sc;
  m->nhash = limit;
  m->rng = sc->seed ^ UINT64_C(0x5eed);
  sc->sim->config_default(cfg);
  gk_net_session_config c = {.sim = sc->sim,
                             .sim_config = cfg,
                             .seed = sc->seed,
                             .players = sc->players,
                             .input_delay = sc->delay,
                             .lead = sc->lead,
                             .creator = 0,
                             .window = WINDOW,
                             .stall_notice_ms = 500};
  gk_net_session_callbacks cb = {
      .ctx = m, .send = on_send, .desync = on_desync, .step = on_step};
  char err[GK_ERRMSG_MAX];
  if (gk_net_session_init(&m->s, &c, &cb, now_ms(0), err, sizeof err) != 0) {
    fprintf(stderr, "gk-lockstep-probe: %s: %s\n", sc->label, err);
    exit(1);
  }
  for (uint32_t i = 0; i < sc->players; i++) peer_open(m, &m->p[i], i, cfg);
  gk_delay_policy pol = {.min = 1,
                         .max = 8,
                         .step_us = 16667,
                         .jitter_x = 2,
                         .hold_ms = 250,
                         .every_ms = 2000};
  gk_delay_ctl ctl;
  gk_delay_ctl_init(&ctl, &pol, sc->delay, now_ms(0));
  uint32_t all = gk_all_players(sc->players);
  int done = 0;
  for (m->tick = 1; m->tick < limit && !m->failed && !done; m->tick++) {
    deliver(m);
    for (uint32_t i = 0; i < sc->players; i++) {
      peer *p = &m->p[i];
      if (p->removed && p->finished) {
        all &= ~(1u << i); /* its connection is closed */
        continue;
      }
      peer_run(m, p);
      peer_sample(m, p);
      peer_send(m, p); /* once finished: acknowledgements until drained */
    }
    host_script(m, &ctl, steps);
    if (gk_net_session_tick(&m->s, now_ms(m->tick)) < 0)
      fail(m, "host tick failed");
    done = m->s.ended && gk_net_session_drained(&m->s, all);
    for (uint32_t i = 0; i < sc->players; i++)
      if (!m->p[i].finished) done = 0;
  }
  if (!done) fail(m, "the match did not end and drain");
  uint32_t chunks = 0;
  uint64_t snap = m->failed ? 0 : snapshot(m, &chunks);
  uint32_t expect = sc->corrupt_step ? 1 : 0;
  if (m->host_desyncs != expect) fail(m, "desyncs");
  for (uint32_t i = 0; i < sc->players && !m->failed; i++) {
    peer *p = &m->p[i];
    if (p->desyncs != expect) fail(m, "a peer heard another desync count");
    if (p->loop.steps == 0 || p->loop.steps > m->nhash ||
        m->host_hash[p->loop.steps - 1] != p->loop.last_hash)
      fail(m, "a peer ended on another state than the host");
    if (p->removed) continue;
    if (p->loop.steps != m->s.loop.steps || p->end_reason != m->s.end_reason)
      fail(m, "a peer ended at another step than the host");
    if (p->stalls != m->s.stats.stall_notices)
      fail(m, "a peer heard another count of stall notices");
  }
  const gk_net_session_stats *st = &m->s.stats;
  char ran[PEERS_MAX * 24] = "";
  for (uint32_t i = 0, at = 0; i < sc->players; i++)
    at += (uint32_t)snprintf(ran + at, sizeof ran - at, "%s%llu", i ? "," : "",
                             (unsigned long long)m->p[i].loop.steps);
  printf(
      "lockstep %s %s players=%u seed=%llu steps=%llu end=%llu/%s "
      "peers=%s final=%016llx wire=%016llx states=%016llx snap=%016llx/%u "
      "ticks=%llu in=%llu/%llu out=%llu/%llu stale=%llu dup=%llu "
      "hashes=%llu desyncs=%llu stalls=%llu delays=%llu late=%llu "
      "drops=%llu/%llu/%llu/%llu/%llu\n",
      sc->label, sc->sim->name, (unsigned)sc->players,
      (unsigned long long)sc->seed, (unsigned long long)m->s.loop.steps,
      (unsigned long long)m->s.end_step, gk_wire_end_name(m->s.end_reason), ran,
      (unsigned long long)m->s.loop.last_hash, (unsigned long long)m->wire,
      (unsigned long long)m->states.digest, (unsigned long long)snap,
      (unsigned)chunks, (unsigned long long)m->tick,
      (unsigned long long)st->packets_in, (unsigned long long)st->bytes_in,
      (unsigned long long)st->packets_out, (unsigned long long)st->bytes_out,
      (unsigned long long)st->inputs_stale, (unsigned long long)st->inputs_dup,
      (unsigned long long)st->hashes_compared, (unsigned long long)st->desyncs,
      (unsigned long long)st->stall_notices,
      (unsigned long long)st->delay_changes, (unsigned long long)st->steps_late,
      (unsigned long long)st->drop_malformed, (unsigned long long)st->drop_slot,
      (unsigned long long)st->drop_unexpected,
      (unsigned long long)st->drop_perm, (unsigned long long)st->drop_ahead);
  int rc = m->failed ? -1 : 0;
  for (uint32_t i = 0; i < sc->players; i++) peer_close(&m->p[i]);
  gk_net_session_close(&m->s);
  if (sc->sim->config_free != NULL) sc->sim->config_free(cfg);
  free(cfg);
  free(m->q);
  free(m->host_hash);
  free(m);
  return rc;
}

int main(int argc, char **argv) {
  uint64_t steps = 1500;
  if (argc == 3 && strcmp(argv[1], "--steps") == 0)
    steps = strtoull(argv[2], NULL, 10);
  else if (argc != 1) {
    fprintf(stderr, "usage: gk-lockstep-probe [--steps N]\n");
    return 2;
  }
  if (steps < 200) steps = 200;
  const script scripts[] = {
      {.label = "clean",
       .sim = &gk_survivors_sim,
       .players = 2,
       .seed = 11,
       .delay = 2,
       .lead = 2,
       .latency = 1},
      {.label = "lossy",
       .sim = &gk_survivors_sim,
       .players = 2,
       .seed = 12,
       .delay = 3,
       .lead = 2,
       .latency = 2,
       .jitter = 3,
       .loss = 150,
       .outage_from = 150,
       .outage_to = 200,
       .delay_ctl = 1,
       .corrupt_step = 100},
      {.label = "remove",
       .sim = &gk_survivors_sim,
       .players = 3,
       .seed = 13,
       .delay = 2,
       .lead = 3,
       .latency = 1,
       .jitter = 1,
       .loss = 50,
       .remove_at = 120,
       .end_by_creator = 1},
      {.label = "puzzle",
       .sim = &gk_push_puzzle_sim,
       .players = 2,
       .seed = 14,
       .delay = 2,
       .lead = 2,
       .latency = 3,
       .jitter = 2,
       .loss = 100},
  };
  int status = 0;
  for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++)
    if (run(&scripts[i], steps) != 0) status = 1;
  return status;
}
