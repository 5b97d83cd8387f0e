/* gk_server_spectate.c: spectators (declared with the rejoin functions in
 * gk_server_internal.h).
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
#include "gk_server_internal.h"

#define SV_NO_VIEWER UINT32_MAX

typedef struct sv_viewer {
  uint32_t peer;        /* SV_NO_CONN: a free entry */
  uint64_t acked;       /* it holds every step < acked */
  uint64_t sent_upto;   /* steps < sent_upto were sent at least once */
  uint64_t sent_ms;     /* last CONFIRMED */
  uint64_t hashes_upto; /* its hash reports below this were seen */
  int desynced;
} sv_viewer;

struct sv_spec {
  uint32_t n;   /* viewers in use */
  uint32_t cap; /* entries in v */
  sv_viewer *v;
  uint8_t *ring; /* ring_cap packed steps (wire layout) */
  uint32_t ring_cap;
  size_t step_bytes;
  uint64_t ring_from; /* lowest step held */
  uint64_t ring_to;   /* one past the last step held */
  uint8_t pack[GK_WIRE_MAX];
};

static uint32_t live_spectators(const gk_server *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nrooms; i++) {
    const sv_room *r = sv_live_room(s, i);
    if (r->spec != NULL) n += r->spec->n;
  }
  return n;
}

static sv_spec *spec_new(const gk_server *s, const sv_room *r) {
  sv_spec *sp = calloc(1, sizeof *sp);
  if (sp == NULL) return NULL;
  sp->cap = s->cfg->spectator_per_room;
  sp->ring_cap =
      s->cfg->spectator_delay_steps + s->cfg->spectator_behind_steps + 64u;
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
  for (uint32_t i = 0; i < sp->cap; i++) sp->v[i].peer = SV_NO_CONN;
  sp->ring_from = sp->ring_to = r->session.loop.steps;
  return sp;
}

void sv_spectators_step(sv_room *r, const gk_step_input *in) {
  sv_spec *sp = r->spec;
  if (sp == NULL || in->step != sp->ring_to) return;
  gk_wire_step_pack(sp->ring + (in->step % sp->ring_cap) * sp->step_bytes,
                    in->active_mask, in->flags, in->inputs,
                    r->session.cfg.players, r->genre->sim->input_size);
  sp->ring_to = in->step + 1u;
  if (sp->ring_to - sp->ring_from > sp->ring_cap)
    sp->ring_from = sp->ring_to - sp->ring_cap;
}

/* --- SPECTATE ------------------------------------------------------------- */

static int spectate_check(gk_server *s, const sv_conn *c, const sv_room *r,
                          const char **why) {
  if (c->room != SV_NO_ROOM) return *why = "already in a room", GK_ESTATE;
  if (r == NULL) return *why = "no room with that code", GK_ENOTFOUND;
  if (r->state != SV_ROOM_PLAYING || r->end_pending)
    return *why = "the room's match is not running", GK_ECLOSED;
  if (s->cfg->spectator_per_room == 0)
    return *why = "this server takes no spectators", GK_EPERM;
  if (r->spec != NULL && r->spec->n >= r->spec->cap)
    return *why = "the room has its spectator.per_room spectators", GK_EFULL;
  if (live_spectators(s) >= s->cfg->spectator_max)
    return *why = "the server has its spectator.max spectators", GK_EFULL;
  return 0;
}

static void spectate_refuse(gk_server *s, uint32_t peer, const sv_room *r,
                            int rc, const char *why) {
  s->stats.refused++;
  s->stats.spectators_refused++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "spectate_refused",
                   r ? r->code : NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "reason", why);
    gk_log_end(s->log);
  }
  if (rc == GK_ENOTFOUND) sv_strike(s, peer, "spectate an unknown code", rc);
  if (sv_conn_get(s, peer)) sv_send_error(s, peer, rc, why);
}

static uint32_t free_viewer(const sv_spec *sp) {
  for (uint32_t i = 0; i < sp->cap; i++)
    if (sp->v[i].peer == SV_NO_CONN) return i;
  return SV_NO_VIEWER;
}

/* A (new or refreshed) viewer starts at the referee's last step. */
static int viewer_snapshot(gk_server *s, sv_room *r, sv_viewer *v, int kind) {
  uint64_t head = r->session.loop.steps;
  v->acked = v->sent_upto = v->hashes_upto = head;
  v->sent_ms = sv_now_ms(s);
  if (head < r->spec->ring_from) r->spec->ring_from = head;
  return sv_snapshot_send(s, r, v->peer, kind, 0, NULL);
}

void sv_on_spectate(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  sv_conn *c = sv_conn_get(s, peer);
  sv_room *r = sv_room_find(s, m->u.room.code);
  const char *why = NULL;
  int rc = spectate_check(s, c, r, &why);
  if (rc == 0 && r->spec == NULL && (r->spec = spec_new(s, r)) == NULL)
    rc = GK_ENOMEM, why = "out of memory";
  uint32_t at = rc == 0 ? free_viewer(r->spec) : SV_NO_VIEWER;
  if (rc == 0 && at == SV_NO_VIEWER)
    rc = GK_EFULL, why = "the room has its spectator.per_room spectators";
  if (rc != 0) {
    spectate_refuse(s, peer, r, rc, why);
    return;
  }
  uint64_t t0 = uv_hrtime();
  sv_viewer *v = &r->spec->v[at];
  memset(v, 0, sizeof *v);
  v->peer = peer;
  r->spec->n++;
  c->room = r->index;
  c->slot = at;
  c->spectator = 1;
  sv_auth_admit(s, peer); /* in a room: the handshake deadline is met */
  gk_wire_msg out;
  sv_room_match_start(s, r, 0, &out);
  sv_send(s, peer, &out);
  rc = viewer_snapshot(s, r, v, GK_WIRE_SNAP_SPECTATE);
  s->stats.spectator_ns += uv_hrtime() - t0;
  s->stats.spectators_joined++;
  if (gk_log_begin(s->log, GK_LOG_INFO, "spectator_joined", r->code)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_u64(s->log, "snapshot_step", v->acked);
    gk_log_u64(s->log, "spectators", r->spec->n);
    gk_log_end(s->log);
  }
  if (rc != 0) sv_conn_close(s, peer, 0);
}

/* --- the stream ----------------------------------------------------------- */

/* CONFIRMED with ring steps from..to-1 (at most what one message holds). */
static uint64_t send_steps(gk_server *s, sv_room *r, sv_viewer *v,
                           uint64_t from, uint64_t to) {
  sv_spec *sp = r->spec;
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
  sv_send(s, v->peer, &m);
  return from + count;
}

static void viewer_tick(gk_server *s, sv_room *r, sv_viewer *v, uint64_t now) {
  sv_spec *sp = r->spec;
  uint64_t head = sp->ring_to, delay = s->cfg->spectator_delay_steps;
  uint64_t limit = r->state == SV_ROOM_DRAINING ? head
                   : head > delay               ? head - delay
                                                : 0;
  if (r->state == SV_ROOM_PLAYING &&
      (v->acked < sp->ring_from ||
       v->acked + s->cfg->spectator_behind_steps < limit)) {
    s->stats.spectator_refreshes++;
    gk_log_msg(s->log, GK_LOG_INFO, "spectator_refresh", r->code, "reason",
               "too far behind: a newer snapshot");
    if (viewer_snapshot(s, r, v, GK_WIRE_SNAP_REFRESH) != 0)
      sv_conn_close(s, v->peer, 0);
    return;
  }
  uint64_t period = 2000u / s->cfg->step_hz + 1u;
  uint64_t from = v->sent_upto;
  if (v->acked < v->sent_upto && now - v->sent_ms >= period) from = v->acked;
  if (from < sp->ring_from) from = sp->ring_from;
  if (from >= limit && !(v->hashes_upto > 0 && now - v->sent_ms >= period))
    return;
  for (int packet = 0; packet < 2 && from < limit; packet++)
    from = send_steps(s, r, v, from, limit);
  if (from >= limit && from == v->sent_upto && v->acked >= limit)
    send_steps(s, r, v, from, from); /* keep its hash acknowledgement fresh */
  if (from > v->sent_upto) {
    s->stats.spectator_steps += from - v->sent_upto;
    v->sent_upto = from;
  }
  v->sent_ms = now;
}

void sv_spectators_tick(gk_server *s, sv_room *r, uint64_t now) {
  if (r->spec == NULL || r->spec->n == 0) return;
  uint64_t t0 = uv_hrtime();
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != SV_NO_CONN)
      viewer_tick(s, r, &r->spec->v[i], now);
  s->stats.spectator_ns += uv_hrtime() - t0;
}

/* --- from a spectator, and its end ---------------------------------------- */

static sv_viewer *viewer_of(const gk_server *s, sv_room *r, uint32_t peer) {
  const sv_conn *c = sv_conn_get(s, peer);
  uint32_t at = c ? c->slot : UINT32_MAX;
  if (r->spec == NULL || at >= r->spec->cap || r->spec->v[at].peer != peer)
    return NULL;
  return &r->spec->v[at];
}

static void compare(gk_server *s, sv_room *r, sv_viewer *v, uint64_t step,
                    uint64_t hash) {
  uint64_t mine;
  if (step < v->hashes_upto) return;
  v->hashes_upto = step + 1u;
  if (gk_loop_hash_at(&r->session.loop, step, &mine) != 0) return;
  s->stats.spectator_hashes++;
  if (mine == hash || v->desynced) return;
  v->desynced = 1;
  s->stats.spectator_desyncs++;
  if (gk_log_begin(s->log, GK_LOG_WARN, "spectator_desync", r->code)) {
    gk_log_u64(s->log, "peer", v->peer);
    gk_log_u64(s->log, "step", step);
    gk_log_hex(s->log, "host_hash", mine);
    gk_log_hex(s->log, "spectator_hash", hash);
    gk_log_end(s->log);
  }
}

void sv_spectator_msg(gk_server *s, sv_room *r, uint32_t peer,
                      const gk_wire_msg *m) {
  sv_viewer *v = viewer_of(s, r, peer);
  if (v == NULL || m->type != GK_MSG_INPUT || m->u.input.count != 0) {
    s->stats.drop_unexpected++;
    sv_strike(s, peer, "a spectator sends only acknowledgements and hashes",
              GK_EPERM);
    return;
  }
  const gk_wire_input *in = &m->u.input;
  if (in->ack > v->acked && in->ack <= v->sent_upto) v->acked = in->ack;
  for (uint32_t i = 0; i < in->hash_count; i++)
    if (in->hash_first + i < r->session.loop.steps)
      compare(s, r, v, in->hash_first + i, gk_wire_input_hash(in, i));
}

void sv_spectator_leave(gk_server *s, sv_room *r, uint32_t peer) {
  sv_spec *sp = r->spec;
  for (uint32_t i = 0; sp != NULL && i < sp->cap; i++) {
    if (sp->v[i].peer != peer) continue;
    sp->v[i].peer = SV_NO_CONN;
    sp->n--;
    gk_log_msg(s->log, GK_LOG_INFO, "spectator_left", r->code, "reason",
               "disconnected");
  }
}

uint32_t sv_spectators_count(const sv_room *r) {
  return r->spec != NULL ? r->spec->n : 0;
}

void sv_spectators_notice(gk_server *s, sv_room *r, const gk_wire_msg *m) {
  if (r->spec == NULL) return;
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != SV_NO_CONN) sv_send(s, r->spec->v[i].peer, m);
}

void sv_spectators_end(gk_server *s, sv_room *r, uint64_t step, int reason) {
  if (r->spec == NULL) return;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_MATCH_END;
  m.u.match_end = (gk_wire_match_end){step, (uint8_t)reason};
  for (uint32_t i = 0; i < r->spec->cap; i++)
    if (r->spec->v[i].peer != SV_NO_CONN) sv_send(s, r->spec->v[i].peer, &m);
}

void sv_spectators_free(gk_server *s, sv_room *r) {
  sv_spec *sp = r->spec;
  if (sp == NULL) return;
  for (uint32_t i = 0; i < sp->cap; i++) {
    sv_conn *c = sv_conn_get(s, sp->v[i].peer);
    if (!c || c->room != r->index) continue;
    c->room = SV_NO_ROOM;
    c->spectator = 0;
    c->since_ms = sv_now_ms(s);
  }
  free(sp->v);
  free(sp->ring);
  free(sp);
  r->spec = NULL;
}
