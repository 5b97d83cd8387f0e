/* gk_testkit.c: see gk_testkit.h. */
#include "gk_testkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"

static uint64_t now_ms(void) {
  return uv_hrtime() / 1000000u;
}

static void fail(gk_testkit *h, const char *why) {
  if (!h->failed) snprintf(h->why, sizeof h->why, "%s", why);
  h->failed = 1;
}

/* A failure of peer i, with what it was given (an address, a text). */
static void fail_peer(gk_testkit *h, uint32_t i, const char *what,
                      const char *detail) {
  char why[sizeof h->why];
  snprintf(why, sizeof why, "peer %u: %s: %.160s", i, what, detail);
  fail(h, why);
}

/* --- host side ------------------------------------------------------------ */

static int host_send(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
                     int reliable) {
  gk_testkit *h = ctx;
  return gk_net_transport_send(&h->host, h->id_of_slot[slot], bytes, len,
                               reliable);
}

static void host_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  gk_testkit *h = ctx;
  if (in->step < h->cap) h->host_hashes[in->step] = hash;
  size_t n = (size_t)in->players * h->o.sim->input_size;
  for (size_t i = 0; i < n; i++)
    if (in->inputs[i] != 0) {
      h->input_steps++;
      break;
    }
}

static void host_desync(void *ctx, const gk_net_desync *d) {
  gk_testkit *h = ctx;
  if (h->ndesyncs < GK_PLAYERS_MAX) h->desyncs[h->ndesyncs++] = *d;
}

static void host_stall(void *ctx, uint64_t step, uint32_t awaited,
                       uint64_t waited_ms) {
  (void)step;
  (void)waited_ms;
  gk_testkit *h = ctx;
  h->host_stalls++;
  h->host_stall_awaited = awaited;
}

static void host_removed(void *ctx, uint32_t slot, uint64_t step) {
  gk_testkit *h = ctx;
  h->removed_slot = slot;
  h->removed_step = step;
  for (uint32_t i = 0; i < h->o.peers; i++)
    if (h->p[i].peer.eng.started && h->p[i].slot == slot) h->p[i].removed = 1;
}

static void host_ended(void *ctx, uint64_t step, int reason) {
  (void)step;
  gk_testkit *h = ctx;
  h->host_ended = 1;
  h->host_end_reason = reason;
}

static void on_tick(uv_timer_t *t);

static void arm_tick(gk_testkit *h) {
  uint64_t now = uv_hrtime();
  uint64_t next = h->t0 + h->k * h->step_ns;
  uint64_t ms = next > now ? (next - now + 999999u) / 1000000u : 0;
  uv_timer_start(&h->tick, on_tick, ms, 0);
}

/* The peers and, with o.server, the spectators after them. */
static uint32_t engines(const gk_testkit *h) {
  return h->o.peers + h->o.spectators;
}

static int all_done(const gk_testkit *h) {
  if (h->o.server == NULL && !h->host_ended) return 0;
  for (uint32_t i = 0; i < engines(h); i++)
    if (!h->p[i].ended && !h->p[i].removed) return 0;
  return 1;
}

static void on_tick(uv_timer_t *t) {
  gk_testkit *h = t->data;
  uint64_t now = uv_hrtime();
  while (h->t0 + h->k * h->step_ns <= now) h->k++;
  if (gk_net_session_tick(&h->session, now_ms()) < 0)
    fail(h, "session tick failed");
  if (!h->end_requested && h->session.loop.steps >= h->o.steps) {
    h->end_requested = 1;
    gk_net_session_end(&h->session, GK_WIRE_END_HOST, now_ms());
  }
  if (h->o.cut_at_step != 0 && !h->cut_done &&
      h->session.loop.steps >= h->o.cut_at_step) {
    gk_net_fault_dir cut = {.loss_ppm = 1000000};
    gk_net_fault_set(&h->p[h->o.cut_peer].fault, &cut, &cut);
    h->cut_done = 1;
  }
  if (h->o.leave_at_step != 0 && !h->leave_done &&
      h->session.loop.steps >= h->o.leave_at_step) {
    gk_testkit_peer *p = &h->p[h->o.leave_peer];
    gk_net_peer_uv_stop(&p->peer);
    gk_net_transport_disconnect(&p->t, p->server_id, 0);
    p->removed = 1; /* it left: not expected to end */
    h->leave_done = 1;
  }
  if (all_done(h) || h->failed) {
    uv_stop(&h->loop);
    return;
  }
  arm_tick(h);
}

static void start_match(gk_testkit *h) {
  char err[GK_ERRMSG_MAX];
  for (uint32_t slot = 0; slot < h->o.peers; slot++) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_MATCH_START;
    gk_wire_match_start *ms = &m.u.match_start;
    ms->seed = h->o.seed;
    ms->players = (uint8_t)h->o.peers;
    ms->slot = (uint8_t)slot;
    ms->active_mask = (1u << h->o.peers) - 1u;
    ms->input_delay = (uint8_t)h->o.input_delay;
    ms->lead = (uint8_t)h->o.lead;
    ms->step_seconds = h->o.step;
    snprintf(ms->genre, sizeof ms->genre, "%s", h->o.sim->name);
    snprintf(ms->config, sizeof ms->config, "%s",
             h->o.config_json != NULL ? h->o.config_json : "");
    uint8_t buf[GK_WIRE_MAX];
    size_t len;
    if (gk_wire_encode(&m, buf, sizeof buf, &len) != 0 ||
        gk_net_transport_send(&h->host, h->id_of_slot[slot], buf, len, 1) !=
            0) {
      fail(h, "could not send MATCH_START");
      return;
    }
  }
  gk_net_session_config c = {.sim = h->o.sim,
                             .sim_config = h->o.sim_cfg,
                             .seed = h->o.seed,
                             .players = h->o.peers,
                             .input_delay = h->o.input_delay,
                             .lead = h->o.lead,
                             .creator = 0,
                             .stall_notice_ms = h->o.stall_notice_ms,
                             .step_seconds = h->o.step};
  gk_net_session_callbacks cb = {.ctx = h,
                                 .send = host_send,
                                 .desync = host_desync,
                                 .stall = host_stall,
                                 .step = host_step,
                                 .removed = host_removed,
                                 .ended = host_ended};
  if (gk_net_session_init(&h->session, &c, &cb, now_ms(), err, sizeof err) !=
      0) {
    fail(h, err);
    return;
  }
  h->session_up = 1;
  h->t0 = uv_hrtime();
  h->k = 0;
  arm_tick(h);
}

static void host_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  (void)t;
  gk_testkit *h = ctx;
  if (id >= 64 || h->nconnected >= h->o.peers || h->session_up) {
    gk_net_transport_disconnect(&h->host, id, 1);
    return;
  }
  h->slot_of_id[id] = h->nconnected;
  h->id_of_slot[h->nconnected] = id;
  if (++h->nconnected == h->o.peers) start_match(h);
}

static void host_disconnect(void *ctx, gk_net_transport *t, uint32_t id) {
  (void)t;
  gk_testkit *h = ctx;
  if (h->session_up && id < 64 && h->slot_of_id[id] < h->o.peers)
    gk_net_session_disconnect(&h->session, h->slot_of_id[id], now_ms());
}

static void host_receive(void *ctx, gk_net_transport *t, uint32_t id,
                         const uint8_t *bytes, size_t len) {
  (void)t;
  gk_testkit *h = ctx;
  if (!h->session_up || id >= 64 || h->slot_of_id[id] >= h->o.peers) return;
  gk_net_session_receive(&h->session, h->slot_of_id[id], bytes, len, now_ms());
}

/* --- peer side --------------------------------------------------------------
 */

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  gk_testkit_peer *p = ctx;
  return gk_net_transport_send(&p->t, p->server_id, bytes, len, reliable);
}

static void on_drop(uv_timer_t *t);

static void peer_step(void *ctx, gk_net_peer *peer, const gk_step_input *in,
                      uint64_t hash) {
  gk_testkit_peer *p = ctx;
  if (in->step < p->h->cap) p->hashes[in->step] = hash;
  if (p->step_calls == 0)
    p->first_step = in->step;
  else if (p->rejoining && !p->gap_to)
    p->gap_to = in->step; /* resumed from the server's snapshot */
  else if (in->step != p->nsteps)
    p->order_errors++;
  if (p->step_calls == 0 && in->step != 0 && p->index < p->h->o.peers)
    p->order_errors++; /* a player runs from step 0 */
  p->nsteps = in->step + 1;
  p->step_calls++;
  gk_testkit *h = p->h;
  if (h->o.rejoin_at_step != 0 && p->index == h->o.rejoin_peer &&
      !h->rejoin_done && p->nsteps >= h->o.rejoin_at_step) {
    h->rejoin_done = 1;
    uv_timer_start(&p->follow, on_drop, 0, 0); /* not inside the engine */
  }
  if (h->o.server != NULL && p->index == 0 && !h->end_requested &&
      p->nsteps >= h->o.steps) { /* the creator ends a server's match */
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    h->end_requested = 1;
    if (gk_net_peer_send_msg(peer, peer->now, &m) != 0)
      fail(h, "peer 0: could not send END_MATCH");
  }
}

static void server_connect(gk_testkit_peer *p, const char *host, uint16_t port);

static void peer_started(void *ctx, gk_net_peer *peer) {
  gk_testkit_peer *p = ctx;
  gk_testkit *h = p->h;
  p->slot = peer->match.slot;
  if (h->o.server != NULL && p->index == 0) /* the spectators come now */
    for (uint32_t i = h->o.peers; i < engines(h); i++)
      server_connect(&h->p[i], h->jhost, h->jport);
}

static void peer_stall(void *ctx, gk_net_peer *peer, const gk_wire_stall *st) {
  gk_testkit_peer *p = ctx;
  p->stall_notices++;
  p->stall_awaited = st->awaited;
  p->stall_step = st->step;
  p->steps_at_stall = peer->loop.steps;
  if (p->h->o.creator_removes_stalled && peer->match.slot == 0) {
    for (uint32_t s = 0; s < GK_PLAYERS_MAX; s++)
      if (st->awaited >> s & 1u) {
        gk_wire_msg m;
        m.type = GK_MSG_REMOVE_PLAYER;
        m.u.remove = (gk_wire_remove){(uint8_t)s, GK_WIRE_STEP_ASAP};
        gk_net_peer_send_msg(peer, peer->now, &m);
      }
  }
}

static void peer_desync(void *ctx, gk_net_peer *peer, const gk_wire_desync *d) {
  (void)peer;
  gk_testkit_peer *p = ctx;
  p->desync_notices++;
  p->desync = *d;
}

static void peer_head(void *ctx, gk_net_peer *peer, int restored) {
  gk_testkit_peer *p = ctx;
  (void)restored;
  if (peer->head.steps > peer->loop.steps &&
      peer->head.steps - peer->loop.steps > p->head_ahead)
    p->head_ahead = peer->head.steps - peer->loop.steps;
}

static void peer_ended(void *ctx, gk_net_peer *peer, uint64_t step,
                       int reason) {
  (void)peer;
  gk_testkit_peer *p = ctx;
  p->ended = 1;
  p->end_step = step;
  p->end_reason = reason;
  if (all_done(p->h)) uv_stop(&p->h->loop);
}

static const gk_sim *find_genre(void *ctx, const char *name) {
  gk_testkit_peer *p = ctx;
  const gk_testkit_options *o = &p->h->o;
  if (o->victim_sim != NULL && p->index == o->victim)
    return strcmp(name, o->victim_sim->name) == 0 ? o->victim_sim : NULL;
  return strcmp(name, o->sim->name) == 0 ? o->sim : NULL;
}

static void client_receive(void *ctx, gk_net_transport *t, uint32_t id,
                           const uint8_t *bytes, size_t len) {
  (void)t;
  gk_testkit_peer *p = ctx;
  /* a redirected peer hears only the room's node */
  if (p->h->o.server != NULL && id != p->server_id) return;
  gk_net_peer_uv_receive(&p->peer, bytes, len);
}

/* --- against a real server (o.server) -------------------------------------
 */

/* Peer p's room request, once its connection is up: CREATE_ROOM for peer
 * 0, JOIN_ROOM with the room's code for the other players, SPECTATE for
 * a spectator; `again` (after a REDIRECT): the same request once more,
 * the engine already waiting for its answer. */
static void send_request(gk_testkit_peer *p, int again) {
  gk_testkit *h = p->h;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  int rc;
  if (p->rejoining && !again) {
    rc = gk_net_peer_uv_rejoin(&p->peer, h->lobby.code, p->slot, p->secret,
                               NULL);
  } else if (p->rejoining) {
    m.type = GK_MSG_REJOIN_ROOM;
    memcpy(m.u.rejoin.code, h->lobby.code, sizeof m.u.rejoin.code);
    m.u.rejoin.slot = (uint8_t)p->slot;
    memcpy(m.u.rejoin.secret, p->secret, GK_WIRE_SECRET_LEN);
    rc = gk_net_peer_uv_send_msg(&p->peer, &m);
  } else if (p->index >= h->o.peers && !again) {
    rc = gk_net_peer_uv_spectate(&p->peer, h->lobby.code, NULL);
  } else if (p->index >= h->o.peers) {
    m.type = GK_MSG_SPECTATE;
    memcpy(m.u.room.code, h->lobby.code, sizeof m.u.room.code);
    rc = gk_net_peer_uv_send_msg(&p->peer, &m);
  } else {
    rc = gk_net_lobby_request(&h->lobby, p->index, &m);
    if (rc == 0) rc = gk_net_peer_uv_send_msg(&p->peer, &m);
  }
  if (rc != 0) fail_peer(h, p->index, "no room request", gk_strerror(rc));
}

static void server_connect(gk_testkit_peer *p, const char *host,
                           uint16_t port) {
  if (gk_net_transport_connect(&p->t, host, port, &p->server_id) != 0)
    fail_peer(p->h, p->index, "cannot connect", host);
}

/* The new connection first, then the old one dropped: the new one takes
 * the transport's other ENet peer slot. Reusing the slot just reset let a
 * datagram the first node still sent to the old connection (its
 * DISCONNECT, a resent reliable) reach the new one while it was
 * connecting, when ENet does not check the session yet, and end it: the
 * run hung until its guard, about one time in three under load. */
static void on_follow(uv_timer_t *t) {
  gk_testkit_peer *p = t->data;
  uint32_t old = p->server_id;
  if (p->h->failed) return;
  server_connect(p, p->rhost, p->rport);
  gk_net_transport_disconnect(&p->t, old, 1);
}

/* REDIRECT: the room is another node's. Followed once: a connection to
 * the room's node (on_follow), the same request sent there once connected
 * (client_connect). */
static void follow(gk_testkit_peer *p, const gk_wire_redirect *r) {
  gk_testkit *h = p->h;
  if (p->redirected) {
    fail_peer(h, p->index, "a second REDIRECT", r->enet);
    return;
  }
  if (gk_wire_addr_split(r->enet, p->rhost, sizeof p->rhost, &p->rport) != 0) {
    fail_peer(h, p->index, "REDIRECT to a bad ENet address", r->enet);
    return;
  }
  p->redirected = 1;
  h->redirects++;
  p->connected = 0;
  uv_timer_start(&p->follow, on_follow, 0, 0); /* not inside ENet's call */
}

static void peer_message(void *ctx, gk_net_peer *peer, const gk_wire_msg *m) {
  (void)peer;
  gk_testkit_peer *p = ctx;
  gk_testkit *h = p->h;
  if (h->o.server == NULL) return;
  if (m->type == GK_MSG_REDIRECT) {
    follow(p, &m->u.redirect);
    return;
  }
  if (m->type == GK_MSG_RECONNECT_SECRET) {
    memcpy(p->secret, m->u.secret.secret, GK_WIRE_SECRET_LEN);
    p->have_secret = 1;
    return;
  }
  gk_wire_msg start;
  switch (gk_net_lobby_on_msg(&h->lobby, p->index, m)) {
  case GK_NET_LOBBY_CREATED:
    for (uint32_t i = 1; i < h->o.peers; i++)
      server_connect(&h->p[i], h->jhost, h->jport);
    break;
  case GK_NET_LOBBY_JOINED:
    if (gk_net_lobby_start(&h->lobby, &start) &&
        gk_net_peer_uv_send_msg(&h->p[0].peer, &start) != 0)
      fail(h, "peer 0: could not send START_MATCH");
    break;
  case GK_NET_LOBBY_ERROR:
    fail_peer(h, p->index, "the server refused",
              gk_net_lobby_error_text(&m->u.error));
    break;
  case GK_NET_LOBBY_SHUTDOWN:
    fail_peer(h, p->index, "the server", "shut down");
    break;
  default:
    break;
  }
}

/* The servers' addresses and the room's setup. Returns 0 or a code. */
static int prepare_server(gk_testkit *h) {
  const gk_testkit_options *o = &h->o;
  const char *join = o->join_server != NULL ? o->join_server : o->server;
  if (o->faults || o->cut_at_step || o->leave_at_step)
    return fail(h, "bad options: faults, cut_at_step and leave_at_step "
                   "need the host here, not a server"),
           GK_EINVAL;
  if (o->rejoin_at_step != 0 &&
      (o->rejoin_peer == 0 || o->rejoin_peer >= o->peers))
    return fail(h, "bad options: rejoin_peer is a player other than 0"),
           GK_EINVAL;
  if (o->peers + o->spectators > GK_TESTKIT_PEERS_MAX)
    return fail(h, "bad options: peers and spectators are too many"), GK_EINVAL;
  if (gk_wire_addr_split(o->server, h->shost, sizeof h->shost, &h->sport) ||
      gk_wire_addr_split(join, h->jhost, sizeof h->jhost, &h->jport))
    return fail(h, "bad options: server and join_server are HOST:PORT"),
           GK_EINVAL;
  gk_net_lobby_room room = {
      .genre = o->sim->name, .players = o->peers, .config = o->config_json};
  if (gk_net_lobby_init(&h->lobby, &room) != 0)
    return fail(h, "bad options: the room"), GK_EINVAL;
  return 0;
}

/* --- peer connections ------------------------------------------------------
 */

static void client_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  (void)t;
  gk_testkit_peer *p = ctx;
  p->server_id = id;
  p->connected = 1;
  if (p->h->o.server != NULL) send_request(p, p->redirected);
}

static void on_guard(uv_timer_t *t) {
  gk_testkit *h = t->data;
  h->timed_out = 1;
  fail(h, "the run hit its wall-clock guard");
  uv_stop(&h->loop);
}

/* Peer p's engine, playing the genre's bot. */
static int open_engine(gk_testkit_peer *p) {
  gk_testkit *h = p->h;
  gk_net_peer_options po = {.bot_seed = 1000u + p->index,
                            .genres = {.find = find_genre, .ctx = p},
                            .predict =
                                (int)(h->o.predict_mask >> p->index & 1u)};
  gk_net_peer_callbacks pc = {.ctx = p,
                              .send = peer_send,
                              .started = peer_started,
                              .step = peer_step,
                              .stall = peer_stall,
                              .desync = peer_desync,
                              .ended = peer_ended,
                              .head = peer_head,
                              .message = peer_message};
  return gk_net_peer_uv_init(&p->peer, &h->loop, &po, &pc);
}

/* A rejoin (o.rejoin_at_step): the old engine is closed; a fresh one
 * takes the seat back at join_server (send_request). */
static void on_engine_closed(gk_net_peer_uv *u) {
  gk_testkit_peer *p =
      (gk_testkit_peer *)((char *)u - offsetof(gk_testkit_peer, peer));
  gk_testkit *h = p->h;
  if (h->down || h->failed) return;
  if (open_engine(p) != 0) {
    fail_peer(h, p->index, "rejoin", "cannot open an engine");
    return;
  }
  p->rejoining = 1;
  p->redirected = 0; /* a new request: it may be redirected once */
  server_connect(p, h->jhost, h->jport);
}

static void on_drop(uv_timer_t *t) {
  gk_testkit_peer *p = t->data;
  if (p->h->failed) return;
  if (!p->have_secret) {
    fail_peer(p->h, p->index, "rejoin",
              "no RECONNECT_SECRET came (does the server hold slots?)");
    return;
  }
  p->gap_from = p->nsteps;
  p->connected = 0;
  gk_net_peer_uv_stop(&p->peer);
  gk_net_transport_disconnect(&p->t, p->server_id, 1);
  gk_net_peer_uv_close(&p->peer, on_engine_closed);
}

static int setup_peer(gk_testkit *h, uint32_t i) {
  gk_testkit_peer *p = &h->p[i];
  p->h = h;
  p->index = i;
  uv_timer_init(&h->loop, &p->follow);
  p->follow.data = p;
  uint16_t port = h->host.port;
  if (h->o.faults && h->o.shared_fault) {
    if (!h->shared_up) {
      gk_net_fault_options fo = {.target_host = "127.0.0.1",
                                 .target_port = h->host.port,
                                 .up = h->o.up,
                                 .down = h->o.down,
                                 .seed = h->o.seed};
      if (gk_net_fault_init(&h->shared, &h->loop, &fo) != 0) return -1;
      h->shared_up = 1;
    }
    port = h->shared.port;
  } else if (h->o.faults) {
    gk_net_fault_options fo = {.target_host = "127.0.0.1",
                               .target_port = h->host.port,
                               .up = h->o.up,
                               .down = h->o.down,
                               .seed = h->o.seed * 31u + i};
    if (gk_net_fault_init(&p->fault, &h->loop, &fo) != 0) return -1;
    p->faulty = 1;
    port = p->fault.port;
  }
  gk_net_transport_options to = {.max_peers = 2, .service_ms = 5};
  gk_net_transport_callbacks tc = {
      .ctx = p, .receive = client_receive, .connect = client_connect};
  if (gk_net_transport_init(&p->t, &h->loop, &to, &tc) != 0) return -1;
  if (open_engine(p) != 0) return -1;
  p->hashes = calloc(h->cap, sizeof(uint64_t));
  if (p->hashes == NULL) return -1;
  if (h->o.server != NULL) { /* peer 0 now; the others once it is made */
    if (i == 0) server_connect(p, h->shost, h->sport);
    return 0;
  }
  return gk_net_transport_connect(&p->t, "127.0.0.1", port, &p->server_id);
}

/* Checks the options and builds the host's config if it was not given.
 * Returns 0 or a code with h->why. */
static int prepare(gk_testkit *h, const gk_testkit_options *o) {
  char err[GK_ERRMSG_MAX];
  if (o->sim == NULL || gk_sim_check(o->sim, err, sizeof err) != 0) {
    fail(h, o->sim == NULL ? "no genre" : err);
    return GK_EINVAL;
  }
  if (o->peers < 1 || o->peers > GK_TESTKIT_PEERS_MAX ||
      o->peers < o->sim->players_min || o->peers > o->sim->players_max ||
      o->step.num == 0 || o->step.den == 0 || o->steps == 0 ||
      o->guard_ms == 0 || o->steps > (UINT64_C(1) << 32)) {
    snprintf(h->why, sizeof h->why,
             "bad options: peers must be 1..%d and fit the genre, step, "
             "steps and guard_ms non-zero",
             GK_TESTKIT_PEERS_MAX);
    h->failed = 1;
    return GK_EINVAL;
  }
  if ((o->spectators != 0 || o->rejoin_at_step != 0) && o->server == NULL)
    return fail(h, "bad options: spectators and rejoin_at_step need a "
                   "server"),
           GK_EINVAL;
  if (o->sim_cfg != NULL) return 0;
  size_t n = o->sim->config_size / sizeof(max_align_t) + 1;
  h->own_cfg = calloc(n, sizeof(max_align_t));
  if (h->own_cfg == NULL) return fail(h, "out of memory"), GK_ENOMEM;
  o->sim->config_default(h->own_cfg);
  const char *json = o->config_json != NULL ? o->config_json : "";
  int rc = gk_config_apply_text(o->sim, h->own_cfg, json, strlen(json),
                                "config_json", err, sizeof err);
  if (rc != 0) return fail(h, err), rc;
  h->o.sim_cfg = h->own_cfg;
  return 0;
}

void gk_testkit_options_init(gk_testkit_options *o, const gk_sim *sim,
                             const char *config_json, uint32_t peers,
                             uint64_t steps) {
  memset(o, 0, sizeof *o);
  o->sim = sim;
  o->config_json = config_json;
  o->peers = peers;
  o->steps = steps;
  o->step = (gk_ratio){1, 500};
  o->input_delay = 2;
  o->lead = 2;
  o->seed = 42;
  o->stall_notice_ms = 1000;
  o->guard_ms = 90000;
}

int gk_testkit_run(gk_testkit *h, const gk_testkit_options *o) {
  memset(h, 0, sizeof *h);
  h->o = *o;
  int rc = prepare(h, o);
  if (rc != 0) return rc;
  for (uint32_t i = 0; i < 64; i++) h->slot_of_id[i] = UINT32_MAX;
  h->cap = o->steps + 4096;
  h->step_ns = (uint64_t)o->step.num * 1000000000u / o->step.den;
  h->host_hashes = calloc(h->cap, sizeof(uint64_t));
  if (h->host_hashes == NULL) return fail(h, "out of memory"), GK_ENOMEM;
  if (o->server != NULL && (rc = prepare_server(h)) != 0) return rc;
  if (uv_loop_init(&h->loop) != 0) return fail(h, "uv_loop_init"), GK_EIO;
  gk_net_transport_options ho = {.bind_host = "127.0.0.1",
                                 .max_peers = o->peers + 2,
                                 .service_ms = 5,
                                 .timeout_ms = 3000};
  gk_net_transport_callbacks hc = {.ctx = h,
                                   .receive = host_receive,
                                   .connect = host_connect,
                                   .disconnect = host_disconnect};
  if (o->server == NULL) {
    if (gk_net_transport_init(&h->host, &h->loop, &ho, &hc) != 0)
      fail(h, "host transport");
    else
      h->host_up = 1;
  }
  uv_timer_init(&h->loop, &h->tick);
  uv_timer_init(&h->loop, &h->guard);
  h->tick.data = h->guard.data = h;
  uv_timer_start(&h->guard, on_guard, o->guard_ms, 0);
  for (uint32_t i = 0; i < engines(h) && !h->failed; i++)
    if (setup_peer(h, i) != 0) fail(h, "peer setup");
  for (uint64_t iter = 0; iter < 100000000u && !h->failed && !all_done(h);
       iter++)
    uv_run(&h->loop, UV_RUN_ONCE);
  for (uint32_t i = 0; i < engines(h); i++) {
    gk_testkit_peer *p = &h->p[i];
    if (p->h == NULL) continue;
    const gk_net_peer *e = &p->peer.eng;
    p->display_p50_us = gk_net_peer_display_pct(e, 50);
    p->display_p99_us = gk_net_peer_display_pct(e, 99);
    p->ndisplay = e->opts.predict ? e->ndisplay : e->nlatency;
    p->head = e->head;
    p->head.state = NULL;
    p->head.assumed = p->head.last = p->head.work = p->head.buf = NULL;
    p->head.assumed_mask = NULL;
    if (p->peer.eng.nlatency == 0) continue;
    p->lat_us = malloc(p->peer.eng.nlatency * sizeof(uint32_t));
    if (p->lat_us != NULL) {
      memcpy(p->lat_us, p->peer.eng.latency_us,
             p->peer.eng.nlatency * sizeof(uint32_t));
      p->nlat = p->peer.eng.nlatency;
    }
    p->rtt_ms = gk_net_transport_rtt(&p->t, p->server_id);
  }
  /* Tear down: every handle is closed and the loop drained. */
  h->down = 1;
  uv_timer_stop(&h->guard);
  uv_close((uv_handle_t *)&h->tick, NULL);
  uv_close((uv_handle_t *)&h->guard, NULL);
  for (uint32_t i = 0; i < engines(h); i++) {
    gk_testkit_peer *p = &h->p[i];
    if (p->h == NULL) continue;
    gk_net_peer_uv_close(&p->peer, NULL);
    gk_net_transport_close(&p->t, NULL);
    uv_close((uv_handle_t *)&p->follow, NULL);
    if (p->faulty) gk_net_fault_close(&p->fault, NULL);
  }
  if (h->shared_up) gk_net_fault_close(&h->shared, NULL);
  if (h->host_up) gk_net_transport_close(&h->host, NULL);
  for (int i = 0; i < 1000 && uv_run(&h->loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  uv_loop_close(&h->loop);
  if (!h->failed && !all_done(h)) fail(h, "the run stopped before its end");
  return h->failed ? GK_ESTATE : 0;
}

void gk_testkit_close(gk_testkit *h) {
  if (h->session_up) gk_net_session_close(&h->session);
  h->session_up = 0;
  if (h->own_cfg != NULL && h->o.sim->config_free != NULL)
    h->o.sim->config_free(h->own_cfg);
  free(h->own_cfg);
  h->own_cfg = NULL;
  free(h->host_hashes);
  h->host_hashes = NULL;
  for (uint32_t i = 0; i < GK_TESTKIT_PEERS_MAX; i++) {
    free(h->p[i].hashes);
    free(h->p[i].lat_us);
    h->p[i].hashes = NULL;
    h->p[i].lat_us = NULL;
  }
}

/* One peer against the host (with o.server: peer 0): ended, every step
 * in order, same hashes. Returns 0 or GK_EMISMATCH with why. */
static int agree_peer(const gk_testkit *h, uint32_t i, uint64_t steps,
                      const uint64_t *ref, char *why, size_t whylen) {
  const gk_testkit_peer *p = &h->p[i];
  uint64_t from = i >= h->o.peers ? p->first_step : 0; /* a spectator */
  if (!p->ended)
    return gk_errf(why, whylen, GK_EMISMATCH, "peer %u did not end", i);
  /* a rejoiner ran no step in gap_from..gap_to-1 (mod 2^64: a snapshot
   * behind where it left ran some twice) */
  uint64_t gap = p->gap_to - p->gap_from;
  const char *of = ref == h->host_hashes ? "the host" : "peer 0";
  if (p->nsteps != steps || p->step_calls != steps - from - gap ||
      p->order_errors != 0)
    return gk_errf(
        why, whylen, GK_EMISMATCH,
        "peer %u ran %llu steps (%llu calls, %llu out of order), %s %llu", i,
        (unsigned long long)p->nsteps, (unsigned long long)p->step_calls,
        (unsigned long long)p->order_errors, of, (unsigned long long)steps);
  for (uint64_t s = from; s < steps && s < h->cap; s++)
    if ((s < p->gap_from || s >= p->gap_to) && p->hashes[s] != ref[s])
      return gk_errf(why, whylen, GK_EMISMATCH,
                     "peer %u differs from %s first at step %llu: "
                     "%016llx, %s %016llx",
                     i, of, (unsigned long long)s,
                     (unsigned long long)p->hashes[s], of,
                     (unsigned long long)ref[s]);
  return 0;
}

/* With o.server: every peer against peer 0, which ran the match to its
 * end. */
static int agree_server(const gk_testkit *h, uint32_t skip_peer, char *why,
                        size_t whylen) {
  const gk_testkit_peer *p0 = &h->p[0];
  if (p0->hashes == NULL || !p0->ended || p0->nsteps == 0)
    return gk_errf(why, whylen, GK_EMISMATCH,
                   "peer 0 did not run the match to its end: %s", h->why);
  for (uint32_t i = 1; i < engines(h); i++) {
    if (i == skip_peer || h->p[i].removed) continue;
    int rc = agree_peer(h, i, p0->nsteps, p0->hashes, why, whylen);
    if (rc != 0) return rc;
  }
  return 0;
}

int gk_testkit_agree(const gk_testkit *h, uint32_t skip_peer, char *why,
                     size_t whylen) {
  if (why != NULL && whylen > 0) why[0] = '\0';
  if (h->o.server != NULL) return agree_server(h, skip_peer, why, whylen);
  if (!h->session_up || h->host_hashes == NULL)
    return gk_errf(why, whylen, GK_EMISMATCH, "the match never started: %s",
                   h->why);
  uint64_t steps = h->session.loop.steps;
  if (steps == 0)
    return gk_errf(why, whylen, GK_EMISMATCH, "the host ran no step");
  if (h->session.end_step + 1 != steps)
    return gk_errf(why, whylen, GK_EMISMATCH,
                   "the host ran past its end step %llu",
                   (unsigned long long)h->session.end_step);
  for (uint32_t i = 0; i < h->o.peers; i++) {
    if (i == skip_peer || h->p[i].removed) continue;
    int rc = agree_peer(h, i, steps, h->host_hashes, why, whylen);
    if (rc != 0) return rc;
  }
  return 0;
}

uint32_t gk_testkit_slot(const gk_testkit *h, uint32_t peer) {
  return h->p[peer].slot;
}
