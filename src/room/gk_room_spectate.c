/* gk_room_spectate.c: spectators (declared with the rejoin functions in
 * gk_room_internal.h).
 *
 * A spectator sends SPECTATE(code) on a connection in no room. It gets
 * MATCH_START (slot 0: it speaks for nobody), the referee's state after
 * its last step S (SNAPSHOT_BEGIN/CHUNK, kind SPECTATE), and then the
 * confirmed steps from S on, held back spectator.delay_steps behind the
 * referee, in CONFIRMED messages like a player's. The steps come from a
 * ring the room keeps once it has a spectator (the referee's merged input
 * of each step it ran), not from the session: a spectator is no player,
 * so it never holds up confirmation nor the session's window. It
 * acknowledges steps and reports its hashes in INPUT (no records); the
 * hashes are compared with the referee's like a player's, and a
 * difference is logged and counted, never ends the match. A spectator
 * whose acknowledgement falls spectator.behind_steps behind what it may
 * see gets a newer snapshot (kind REFRESH) instead of the old steps.
 * The room's STALL and DESYNC notices reach its spectators too, when they
 * happen (the stream itself is delay_steps behind), so a watcher can show
 * the room's health.
 * Limits: spectator.per_room and spectator.max (per server).
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_room_internal.h"

#define GK_ROOM__NO_VIEWER UINT32_MAX

typedef struct gk_room__viewer {
  uint32_t peer;        /* GK_ROOM_NO_CONN: a free entry */
  uint64_t acked;       /* it holds every step < acked */
  uint64_t sent_upto;   /* steps < sent_upto were sent at least once */
  uint64_t sent_ms;     /* last CONFIRMED */
  uint64_t hashes_upto; /* its hash reports below this were seen */
  int desynced;
} gk_room__viewer;

struct gk_room__spec {
  uint32_t n;   /* viewers in use */
  uint32_t cap; /* entries in v */
  gk_room__viewer *v;
  uint8_t *ring; /* ring_cap packed steps (wire layout) */
  uint32_t ring_cap;
  size_t step_bytes;
  uint64_t ring_from; /* lowest step held */
  uint64_t ring_to;   /* one past the last step held */
  uint8_t pack[GK_WIRE_MAX];
};

static gk_room__spec *spec_new(const gk_room_host *h, const gk_room *r) {
  gk_room__spec *sp = calloc(1, sizeof *sp);
  if (sp == NULL) return NULL;
  sp->cap = h->cfg->spectator_per_room;
  sp->ring_cap =
      h->cfg->spectator_delay_steps + h->cfg->spectator_behind_steps + 64u;
  sp->step_bytes =
      GK_WIRE_STEP_BYTES(r->session.cfg.players, r->genre->sim->input_size);
  sp->v = calloc(sp->cap, sizeof *sp->v);
  sp->ring = calloc(sp->ring_cap, sp->step_bytes);
  if (sp->v == NULL || sp->ring == NULL) {
    free(sp->v);
    free(sp->ring);
    free(sp);
    return NULL;
  }
  for (uint32_t i = 0; i < sp->cap; i++) sp->v[i].peer = GK_ROOM_NO_CONN;
  sp->ring_from = sp->ring_to = r->session.loop.steps;
  return sp;
}

void gk_room__spectators_step(gk_room *r, const gk_step_input *in) {
  gk_room__spec *sp = r->spec;
  if (sp == NULL || in->step != sp->ring_to) return;
  gk_wire_step_pack(sp->ring + (in->step % sp->ring_cap) * sp->step_bytes,
                    in->active_mask, in->flags, in->inputs,
                    r->session.cfg.players, r->genre->sim->input_size);
  sp->ring_to = in->step + 1u;
  if (sp->ring_to - sp->ring_from > sp->ring_cap)
    sp->ring_from = sp->ring_to - sp->ring_cap;
}

/* --- SPECTATE ------------------------------------------------------------- */

static int spectate_check(gk_room_host *h, const gk_room_conn *c,
                          const gk_room *r, const char **why) {
  if (c->room != NULL) return *why = "already in a room", GK_ESTATE;
  if (r == NULL) return *why = "no room with that code", GK_ENOTFOUND;
  if (r->state != GK_ROOM_PLAYING || r->end_pending)
    return *why = "the room's match is not running", GK_ECLOSED;
  if (h->cfg->spectator_per_room == 0)
    return *why = "this server takes no spectators", GK_EPERM;
  if (r->spec != NULL && r->spec->n >= r->spec->cap)
    return *why = "the room has its spectator.per_room spectators", GK_EFULL;
  if (h->spectators >= h->cfg->spectator_max)
    return *why = "the server has its spectator.max spectators", GK_EFULL;
  return 0;
}

static void spectate_refuse(gk_room_host *h, uint32_t peer, const gk_room *r,
                            int rc, const char *why) {
  h->stats.refused++;
  h->stats.spectators_refused++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "spectate_refused",
                   r ? r->code : NULL)) {
    gk_log_u64(h->log, "peer", peer);
    gk_log_err(h->log, "code", rc);
    gk_log_str(h->log, "reason", why);
    gk_log_end(h->log);
  }
  if (rc == GK_ENOTFOUND)
    gk_room__strike(h, peer, "spectate an unknown code", rc);
  if (gk_room__conn_get(h, peer)) gk_room__send_error(h, peer, rc, why);
}

static uint32_t free_viewer(const gk_room__spec *sp) {
  for (uint32_t i = 0; i < sp->cap; i++)
    if (sp->v[i].peer == GK_ROOM_NO_CONN) return i;
  return GK_ROOM__NO_VIEWER;
}

/* A (new or refreshed) viewer starts at the referee's last step. */
static int viewer_snapshot(gk_room_host *h, gk_room *r, gk_room__viewer *v,
                           int kind) {
  uint64_t head = r->session.loop.steps;
  v->acked = v->sent_upto = v->hashes_upto = head;
  v->sent_ms = gk_room__now(h);
  if (head < r->spec->ring_from) r->spec->ring_from = head;
  return gk_room__snapshot_send(h, r, v->peer, kind, 0, NULL);
}

void gk_room__on_spectate(gk_room_host *h, gk_room *r, uint32_t peer,
                          const gk_wire_msg *m) {
  gk_room_conn *c = gk_room__conn_get(h, peer);
  const char *why = NULL;
  int rc = spectate_check(h, c, r, &why);
  if (rc == 0 && r->spec == NULL && (r->spec = spec_new(h, r)) == NULL)
    rc = GK_ENOMEM, why = "out of memory";
  uint32_t at = rc == 0 ? free_viewer(r->spec) : GK_ROOM__NO_VIEWER;
  if (rc == 0 && at == GK_ROOM__NO_VIEWER)
    rc = GK_EFULL, why = "the room has its spectator.per_room spectators";
  if (rc != 0) {
    spectate_refuse(h, peer, r, rc, why);
    return;
  }
  uint64_t t0 = gk_room__clock_ns(h);
  gk_room__viewer *v = &r->spec->v[at];
  memset(v, 0, sizeof *v);
  v->peer = peer;
  r->spec->n++;
  h->spectators++;
  gk_room__seat(c, r, at, 1);
  gk_room__admit(h, peer); /* in a room: the handshake deadline is met */
  gk_wire_msg out;
  gk_room__match_start_msg(h, r, 0, &out);
  gk_room__send(h, peer, &out);
  gk_room__roster_to(h, r, peer);
  rc = viewer_snapshot(h, r, v, GK_WIRE_SNAP_SPECTATE);
  h->stats.spectator_ns += gk_room__clock_ns(h) - t0;
  h->stats.spectators_joined++;
  if (gk_log_begin(h->log, GK_LOG_INFO, "spectator_joined", r->code)) {
    gk_log_u64(h->log, "peer", peer);
    gk_log_u64(h->log, "snapshot_step", v->acked);
    gk_log_u64(h->log, "spectators", r->spec->n);
    gk_log_end(h->log);
  }
  if (rc != 0) gk_room__conn_close(h, peer, 0);
}

/* --- the stream ----------------------------------------------------------- */

/* CONFIRMED with ring steps from..to-1 (at most what one message holds). */
static uint64_t send_steps(gk_room_host *h, gk_room *r, gk_room__viewer *v,
                           uint64_t from, uint64_t to) {
  gk_room__spec *sp = r->spec;
  uint32_t isz = r->genre->sim->input_size;
  uint32_t fit = gk_wire_confirmed_fit(r->session.cfg.players, isz);
  uint32_t count = to - from < fit ? (uint32_t)(to - from) : fit;
  for (uint32_t i = 0; i < count; i++)
    memcpy(sp->pack + i * sp->step_bytes,
           sp->ring + ((from + i) % sp->ring_cap) * sp->step_bytes,
           sp->step_bytes);
  gk_wire_msg m;
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed =
      (gk_wire_confirmed){.players = (uint8_t)r->session.cfg.players,
                          .input_size = (uint8_t)isz,
                          .count = (uint8_t)count,
                          .ack = 0,
                          .hash_ack = v->hashes_upto,
                          .first = from,
                          .steps = sp->pack};
  gk_room__send(h, v->peer, &m);
  return from + count;
}

static void viewer_tick(gk_room_host *h, gk_room *r, gk_room__viewer *v,
                        uint64_t now) {
  gk_room__spec *sp = r->spec;
  uint64_t head = sp->ring_to, delay = h->cfg->spectator_delay_steps;
  uint64_t limit = r->state == GK_ROOM_DRAINING ? head
                   : head > delay               ? head - delay
                                                : 0;
  if (r->state == GK_ROOM_PLAYING &&
      (v->acked < sp->ring_from ||
       v->acked + h->cfg->spectator_behind_steps < limit)) {
    h->stats.spectator_refreshes++;
    gk_log_msg(h->log, GK_LOG_INFO, "spectator_refresh", r->code, "reason",
               "too far behind: a newer snapshot");
    if (viewer_snapshot(h, r, v, GK_WIRE_SNAP_REFRESH) != 0)
      gk_room__conn_close(h, v->peer, 0);
    return;
  }
  uint64_t period = 2000u / h->cfg->step_hz + 1u;
  uint64_t from = v->sent_upto;
  if (v->acked < v->sent_upto && now - v->sent_ms >= period) from = v->acked;
  if (from < sp->ring_from) from = sp->ring_from;
  if (from >= limit && !(v->hashes_upto > 0 && now - v->sent_ms >= period))
    return;
  for (int packet = 0; packet < 2 && from < limit; packet++)
    from = send_steps(h, r, v, from, limit);
  if (from >= limit && from == v->sent_upto && v->acked >= limit)
    send_steps(h, r, v, from, from); /* keep its hash acknowledgement fresh */
  if (from > v->sent_upto) {
    h->stats.spectator_steps += from - v->sent_upto;
    v->sent_upto = from;
  }
  v->sent_ms = now;
}

void gk_room__spectators_tick(gk_room_host *h, gk_room *r, uint64_t now) {
  if (r->spec == NULL || r->spec->n == 0) return;
  uint64_t t0 = gk_room__clock_ns(h);
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != GK_ROOM_NO_CONN)
      viewer_tick(h, r, &r->spec->v[i], now);
  h->stats.spectator_ns += gk_room__clock_ns(h) - t0;
}

/* --- from a spectator, and its end ---------------------------------------- */

static gk_room__viewer *viewer_of(const gk_room_host *h, gk_room *r,
                                  uint32_t peer) {
  const gk_room_conn *c = gk_room__conn_get(h, peer);
  uint32_t at = c ? c->slot : UINT32_MAX;
  if (r->spec == NULL || at >= r->spec->cap || r->spec->v[at].peer != peer)
    return NULL;
  return &r->spec->v[at];
}

static void compare(gk_room_host *h, gk_room *r, gk_room__viewer *v,
                    uint64_t step, uint64_t hash) {
  uint64_t mine;
  if (step < v->hashes_upto) return;
  v->hashes_upto = step + 1u;
  if (gk_loop_hash_at(&r->session.loop, step, &mine) != 0) return;
  h->stats.spectator_hashes++;
  if (mine == hash || v->desynced) return;
  v->desynced = 1;
  h->stats.spectator_desyncs++;
  if (gk_log_begin(h->log, GK_LOG_WARN, "spectator_desync", r->code)) {
    gk_log_u64(h->log, "peer", v->peer);
    gk_log_u64(h->log, "step", step);
    gk_log_hex(h->log, "host_hash", mine);
    gk_log_hex(h->log, "spectator_hash", hash);
    gk_log_end(h->log);
  }
}

void gk_room__spectator_msg(gk_room_host *h, gk_room *r, uint32_t peer,
                            const gk_wire_msg *m) {
  gk_room__viewer *v = viewer_of(h, r, peer);
  if (v == NULL || m->type != GK_MSG_INPUT || m->u.input.count != 0) {
    h->stats.drop_unexpected++;
    gk_room__strike(h, peer,
                    "a spectator sends only acknowledgements and hashes",
                    GK_EPERM);
    return;
  }
  const gk_wire_input *in = &m->u.input;
  if (in->ack > v->acked && in->ack <= v->sent_upto) v->acked = in->ack;
  for (uint32_t i = 0; i < in->hash_count; i++)
    if (in->hash_first + i < r->session.loop.steps)
      compare(h, r, v, in->hash_first + i, gk_wire_input_hash(in, i));
}

void gk_room__spectator_leave(gk_room_host *h, gk_room *r, uint32_t peer) {
  gk_room__spec *sp = r->spec;
  for (uint32_t i = 0; sp != NULL && i < sp->cap; i++) {
    if (sp->v[i].peer != peer) continue;
    sp->v[i].peer = GK_ROOM_NO_CONN;
    sp->n--;
    h->spectators--;
    gk_log_msg(h->log, GK_LOG_INFO, "spectator_left", r->code, "reason",
               "disconnected");
  }
}

uint32_t gk_room__spectators_count(const gk_room *r) {
  return r->spec != NULL ? r->spec->n : 0;
}

uint32_t gk_room__spectators_notice(gk_room_host *h, gk_room *r,
                                    const gk_wire_msg *m) {
  uint32_t sent = 0;
  if (r->spec == NULL) return 0;
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != GK_ROOM_NO_CONN &&
        gk_room__send(h, r->spec->v[i].peer, m) == 0)
      sent++;
  return sent;
}

void gk_room__spectators_end(gk_room_host *h, gk_room *r, uint64_t step,
                             int reason) {
  if (r->spec == NULL) return;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_MATCH_END;
  m.u.match_end = (gk_wire_match_end){step, (uint8_t)reason};
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != GK_ROOM_NO_CONN)
      gk_room__send(h, r->spec->v[i].peer, &m);
}

void gk_room__spectators_free(gk_room_host *h, gk_room *r) {
  gk_room__spec *sp = r->spec;
  if (sp == NULL) return;
  h->spectators -= sp->n;
  for (uint32_t i = 0; i < sp->cap; i++)
    if (sp->v[i].peer != GK_ROOM_NO_CONN) {
      gk_room__remember(h, r, sp->v[i].peer, 0);
      gk_room__unseat(h, r, sp->v[i].peer);
    }
  free(sp->v);
  free(sp->ring);
  free(sp);
  r->spec = NULL;
}
