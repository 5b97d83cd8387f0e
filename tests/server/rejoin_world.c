/* rejoin_world.c: the in-process world of the rejoin tests (see
 * rejoin_world.h).
 *
 * Player 2 drops its connection at the scenario's step; a new connection
 * presents the room code, the slot and the secret from RECONNECT_SECRET
 * and rejoins from a snapshot. Every hash the rejoined player computes
 * after its return must equal player 0's (and the server's own copy
 * compares them too: a DESYNC notice fails the test); the creator ends
 * the match at end_step and everybody must see the end.
 */
#include "rejoin_world.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_replay.h"
#include "gk_server_config.h"
#include "gk_server_log.h"

#define DRAIN_MS 30000u

static client *add_client(world *w, int kind);
static void on_drop(uv_timer_t *t);
static void on_back(uv_timer_t *t);
static void on_unthrottle(uv_timer_t *t);

/* --- the peers' callbacks ------------------------------------------------ */

static void send_msg(client *c, const gk_wire_msg *m) {
  if (gk_net_peer_uv_send_msg(&c->peer, m) != 0) c->error = GK_EIO;
}

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  client *c = ctx;
  return gk_net_transport_send(&c->t, c->server_id, bytes, len, reliable);
}

/* A player joins once it is connected and the room has a code. */
static void send_join(client *c) {
  if (!c->connected || !c->w->code[0] || c->join_sent) return;
  gk_wire_msg j;
  memset(&j, 0, sizeof j);
  j.type = GK_MSG_JOIN_ROOM;
  snprintf(j.u.room.code, sizeof j.u.room.code, "%s", c->w->code);
  send_msg(c, &j);
  c->join_sent = 1;
}

static void maybe_start(world *w) {
  if (w->start_sent) return;
  for (uint32_t i = 0; i < w->o.players; i++)
    if (!w->c[i].joined) return;
  /* player 1's END_MATCH in the lobby must reach the server first: the
   * server strikes it (a refusal sends no ERROR); start_timer polls */
  if (w->o.guest_lobby_end && gk_server_get_stats(w->srv)->strikes == 0) return;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  send_msg(&w->c[0], &m);
  w->start_sent = 1;
}

/* The shared relay's latency, each way (5% loss with o.faults). */
static void set_latency(world *w, uint32_t ms) {
  gk_net_fault_dir d = {.loss_ppm = w->o.faults ? 50000u : 0u,
                        .latency_ms = ms ? ms : (w->o.faults ? 30u : 0u)};
  gk_net_fault_set(&w->shared, &d, &d);
}

/* Steps a rejoined player runs from its snapshot before the host ends,
 * and the latest end when a rejoin must succeed (within HCAP). */
#define END_AFTER_SNAPSHOT 300u
#define END_LATEST_AFTER 2000u

/* Whether the host ends the match at its step `step`: at end_step, and,
 * when a rejoin must succeed, not before the rejoined player resumed and
 * the run is END_AFTER_SNAPSHOT steps past its snapshot. The drop is at a
 * step but the way back is wall-clock (away_ms, then ENet's handshake and
 * the snapshot, with resends through the lossy relay), and with "neutral"
 * the others play on meanwhile: a fixed end step left the rejoiner fewer
 * steps than rw_expect_agrees compares whenever the way back was slow.
 * A rejoin that never resumes ends at end_step + END_LATEST_AFTER and
 * fails on its own assertions. */
static int may_end(world *w, uint64_t step) {
  if (w->end_sent || step < w->o.end_step) return 0;
  if (!w->o.expect_back || step >= w->o.end_step + END_LATEST_AFTER) return 1;
  const client *r = rw_rejoined(w);
  return r != NULL && r->resumed && step >= r->info.step + END_AFTER_SNAPSHOT;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  client *c = ctx;
  world *w = c->w;
  if (c->nsteps == 0 && c->first_run == 0) c->first_run = in->step;
  if (c->nsteps == 0) c->start_mask = in->active_mask;
  c->last_mask = in->active_mask;
  if (c->join_seen == 0 && (in->active_mask & ~c->start_mask) != 0)
    c->join_seen = in->step;
  if (in->step < HCAP) c->hashes[in->step] = hash;
  c->nsteps = in->step + 1;
  if (c->kind != K_PLAYER) return;
  if (c == &w->c[0] && w->o.late_step && in->step == w->o.late_step &&
      !w->late_added) {
    w->late_added = 1;
    add_client(w, K_LATE);
  }
  if (c == &w->c[2] && w->o.drop_step && in->step == w->o.drop_step &&
      !w->dropped) {
    w->dropped = 1; /* on_drop runs outside this frame */
    uv_timer_start(&w->drop_timer, on_drop, 0, 0);
  }
  if (c == &w->c[1] && w->o.guest_remove_step &&
      in->step == w->o.guest_remove_step && !w->guest_removed) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_REMOVE_PLAYER;
    m.u.remove = (gk_wire_remove){2, GK_WIRE_STEP_ASAP};
    send_msg(c, &m);
    w->guest_removed = 1;
  }
  uint64_t spectate_at = w->o.spectate_step ? w->o.spectate_step : 300;
  if (c == &w->c[0] && in->step == spectate_at && w->o.spectators &&
      !w->spectating) {
    w->spectating = 1;
    for (uint32_t i = 0; i < w->o.spectators; i++) add_client(w, K_SPECTATOR);
  }
  if (c == &w->c[0] && in->step == 500 && w->o.throttle_spectator &&
      !w->throttled) {
    gk_net_fault_dir cut = {.loss_ppm = 1000000};
    client *sp = NULL;
    for (uint32_t i = 0; i < w->nc; i++)
      if (w->c[i].kind == K_SPECTATOR && w->c[i].relayed && sp == NULL)
        sp = &w->c[i];
    if (sp != NULL) {
      gk_net_fault_set(&sp->relay, &cut, &cut);
      w->throttled = 1;
      uv_timer_start(&w->throttle_timer, on_unthrottle, 1500, 0);
    }
  }
  if (c == &w->c[0] && w->shared_up &&
      (in->step == w->o.raise_step || in->step == w->o.lower_step) &&
      in->step != 0)
    set_latency(w, in->step == w->o.raise_step ? w->o.raise_ms : 0);
  if (c == &w->c[0] && may_end(w, in->step)) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    send_msg(c, &m);
    w->end_sent = 1;
  }
  (void)p;
}

static void on_desync(void *ctx, gk_net_peer *p, const gk_wire_desync *d) {
  client *c = ctx;
  (void)p;
  (void)d;
  c->desyncs++;
}

static void on_ended(void *ctx, gk_net_peer *p, uint64_t step, int reason) {
  client *c = ctx;
  (void)step;
  c->ended = 1;
  c->end_reason = reason;
  c->delay = p->delay;
  c->ndelays = p->ndelays;
  memcpy(c->delays, p->delays, sizeof c->delays);
}

static void on_removed(void *ctx, gk_net_peer *p, uint32_t slot,
                       uint64_t step) {
  client *c = ctx;
  (void)p;
  (void)slot;
  (void)step;
  c->removals++;
}

static void on_snapshot(void *ctx, gk_net_peer *p, int rc,
                        const gk_net_peer_snap_info *info) {
  client *c = ctx;
  (void)p;
  c->snap_rc = rc;
  c->info = *info;
  if (rc == 0) {
    c->snaps++;
    return;
  }
  snprintf(c->snap_err, sizeof c->snap_err, "%s", info->error);
  /* refused: this connection goes, and a fresh one tries again */
  gk_net_transport_disconnect(&c->t, c->server_id, 0);
  if (c->kind == K_REJOIN) add_client(c->w, K_REJOIN);
}

static void on_resumed(void *ctx, gk_net_peer *p) {
  client *c = ctx;
  c->resumed = 1;
  c->info = p->snap;
}

static void on_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  client *c = ctx;
  world *w = c->w;
  (void)p;
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    snprintf(w->code, sizeof w->code, "%s", m->u.room.code);
    c->joined = 1;
    for (uint32_t i = 1; i < w->o.players; i++) send_join(&w->c[i]);
    break;
  case GK_MSG_JOINED:
    c->joined = 1;
    if (c == &w->c[1] && w->o.guest_lobby_end) {
      gk_wire_msg e;
      memset(&e, 0, sizeof e);
      e.type = GK_MSG_END_MATCH;
      e.u.end_reason = GK_WIRE_END_HOST;
      send_msg(c, &e);
    }
    maybe_start(w);
    break;
  case GK_MSG_RECONNECT_SECRET:
    memcpy(c->secret, m->u.secret.secret, GK_WIRE_SECRET_LEN);
    c->slot = m->u.secret.slot;
    c->have_secret = 1;
    break;
  case GK_MSG_ERROR:
    c->error = m->u.error.code;
    snprintf(c->error_text, sizeof c->error_text, "%s", m->u.error.text);
    if (c->kind == K_REJOIN && c->attempt <= w->o.bad_secret)
      add_client(w, K_REJOIN); /* the next wrong secret, or the right one */
    break;
  default:
    break;
  }
}

/* --- tampering with a snapshot on its way in ----------------------------- */

static void deliver(client *c, const uint8_t *b, size_t len) {
  gk_net_peer_uv_receive(&c->peer, b, len);
}

static void flip_fixed(client *c, const uint8_t *bytes, size_t len) {
  if (c->nheld < 64) {
    c->held[c->nheld] = malloc(len);
    memcpy(c->held[c->nheld], bytes, len);
    c->held_len[c->nheld++] = len;
  }
  gk_wire_msg b;
  if (gk_wire_decode(c->held[0], c->held_len[0], &b) != 0 ||
      c->nheld < 1 + b.u.snap_begin.chunks)
    return;
  /* the whole transfer is in: change one state byte and make every
   * checksum agree with it, as a host with a bug would */
  size_t total = b.u.snap_begin.total, at = 0;
  uint8_t *state = malloc(total + 1);
  for (uint32_t i = 1; i < c->nheld; i++) {
    memcpy(state + at, c->held[i] + 16, c->held_len[i] - 16);
    at += c->held_len[i] - 16;
  }
  /* survivors' run-level "kills" counter (offset 28: magic 4, players 1,
   * step 8, play_steps 4, paused/over/over_reason 3, wave 4, spawn_timer
   * 4): a value read_state accepts, so only the hash can catch it. A byte
   * picked blindly (say, the middle) may land on a field read_state
   * checks, and then the genre refuses the state before the hash does. */
  state[total > 28 ? 28 : total / 2] ^= 0x01;
  b.u.snap_begin.sum = gk_chunk_sum(state, total);
  uint8_t out[GK_WIRE_MAX];
  size_t n;
  gk_wire_encode(&b, out, sizeof out, &n);
  deliver(c, out, n);
  at = 0;
  for (uint32_t i = 1; i < c->nheld; i++) {
    gk_wire_msg k;
    gk_wire_decode(c->held[i], c->held_len[i], &k);
    k.u.snap_chunk.bytes = state + at;
    k.u.snap_chunk.crc = gk_chunk_crc(state + at, k.u.snap_chunk.len);
    at += k.u.snap_chunk.len;
    gk_wire_encode(&k, out, sizeof out, &n);
    deliver(c, out, n);
  }
  free(state);
}

/* A CONFIRMED to a spectator while the match plays: every step in it must
 * be spectator.delay_steps behind the referee's last step (room_steps - 1:
 * the world has one room), or more. The referee only moves on, so a
 * CONFIRMED that left in time is still in time when it arrives here (one
 * loop, no relay). Once the match ended (matches_ended) the room drains
 * and sends the rest without the delay: not checked. */
static void check_spectator_delay(client *c, const uint8_t *bytes, size_t len) {
  const gk_room_stats *st = gk_server_get_room_stats(c->w->srv);
  gk_wire_msg m;
  if (st->matches_ended != 0 || gk_wire_decode(bytes, len, &m) != 0 ||
      m.u.confirmed.count == 0)
    return;
  uint64_t last = m.u.confirmed.first + m.u.confirmed.count - 1u;
  uint64_t delay = c->w->o.spectator_delay ? c->w->o.spectator_delay : 30u;
  c->spec_checked += m.u.confirmed.count;
  if (last + delay + 1u <= st->room_steps) return;
  if (c->spec_early++ == 0) {
    c->early_step = last;
    c->early_head = st->room_steps - 1u;
  }
}

static void client_receive(void *ctx, gk_net_transport *t, uint32_t id,
                           const uint8_t *bytes, size_t len) {
  client *c = ctx;
  (void)t;
  (void)id;
  int type = len >= 2 ? bytes[1] : 0;
  if (type == GK_MSG_MATCH_END && !c->peer.eng.started) c->lobby_end = 1;
  if (c->kind == K_SPECTATOR && type == GK_MSG_CONFIRMED)
    check_spectator_delay(c, bytes, len);
  if (c->tamper == T_FLIP && type == GK_MSG_SNAPSHOT_CHUNK && len > 40) {
    uint8_t copy[GK_WIRE_MAX];
    memcpy(copy, bytes, len);
    copy[len / 2] ^= 0x10; /* one byte in the payload, checksum as it was */
    deliver(c, copy, len);
    return;
  }
  if (c->tamper == T_ROOM && type == GK_MSG_SNAPSHOT_BEGIN) {
    uint8_t copy[GK_WIRE_MAX];
    memcpy(copy, bytes, len);
    memcpy(copy + 7,
           c->w->code[0] == 'A' ? "BBBBBBBBBBBBBBBB" : "AAAAAAAAAAAAAAAA",
           GK_WIRE_CODE_LEN);
    deliver(c, copy, len);
    return;
  }
  if (c->tamper == T_FLIP_FIXED &&
      (type == GK_MSG_SNAPSHOT_BEGIN || type == GK_MSG_SNAPSHOT_CHUNK)) {
    flip_fixed(c, bytes, len);
    return;
  }
  deliver(c, bytes, len);
}

static void client_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  client *c = ctx;
  world *w = c->w;
  (void)t;
  c->server_id = id;
  c->connected = 1;
  if ((c->kind == K_PLAYER && c != &w->c[0]) || c->kind == K_LATE) send_join(c);
  if (c->kind == K_REJOIN) {
    uint8_t secret[GK_WIRE_SECRET_LEN];
    memcpy(secret, w->secret, sizeof secret);
    if (c->attempt <= w->o.bad_secret && c->attempt <= 4)
      secret[w->o.bad_byte[c->attempt - 1] % GK_WIRE_SECRET_LEN] ^= 0x01;
    if (gk_net_peer_uv_rejoin(&c->peer, w->code, w->drop_slot, secret, NULL) !=
        0)
      c->error = GK_EIO;
  } else if (c->kind == K_SPECTATOR) {
    if (gk_net_peer_uv_spectate(&c->peer, w->code, NULL) != 0)
      c->error = GK_EIO;
  } else if (c == &w->c[0]) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_CREATE_ROOM;
    m.u.create_room.max_players = (uint8_t)w->o.max_players;
    snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "%s",
             w->o.genre);
    send_msg(c, &m);
  }
}

static client *add_client(world *w, int kind) {
  cr_assert_lt(w->nc, CLIENTS);
  client *c = &w->c[w->nc++];
  c->w = w;
  c->used = 1;
  c->kind = kind;
  c->hashes = calloc(HCAP, sizeof(uint64_t));
  int attempts = 0;
  for (uint32_t i = 0; i < w->nc; i++) attempts += w->c[i].kind == K_REJOIN;
  c->attempt = kind == K_REJOIN ? attempts : 0;
  if (kind == K_REJOIN && attempts == 1) c->tamper = w->o.tamper;
  uint16_t port = w->shared_up ? w->front : w->port;
  if ((kind == K_SPECTATOR && w->o.throttle_spectator &&
       w->nc == w->o.players + 1) ||
      (kind == K_PLAYER && w->o.silent_drop && w->nc == 3)) {
    gk_net_fault_options fo = {
        .target_host = "127.0.0.1", .target_port = port, .seed = 7};
    cr_assert_eq(gk_net_fault_init(&c->relay, &w->loop, &fo), 0);
    c->relayed = 1;
    port = c->relay.port;
  }
  gk_net_transport_options to = {.max_peers = 1, .service_ms = 2};
  gk_net_transport_callbacks tc = {
      .ctx = c, .receive = client_receive, .connect = client_connect};
  cr_assert_eq(gk_net_transport_init(&c->t, &w->loop, &to, &tc), 0);
  gk_net_peer_options po = {.bot_seed = 100u + w->nc};
  gk_net_peer_callbacks pc = {.ctx = c,
                              .send = peer_send,
                              .step = on_step,
                              .desync = on_desync,
                              .ended = on_ended,
                              .removed = on_removed,
                              .message = on_message,
                              .snapshot = on_snapshot,
                              .resumed = on_resumed};
  cr_assert_eq(gk_net_peer_uv_init(&c->peer, &w->loop, &po, &pc), 0);
  cr_assert_eq(
      gk_net_transport_connect(&c->t, "127.0.0.1", port, &c->server_id), 0);
  return c;
}

/* --- timers -------------------------------------------------------------- */

static void on_back(uv_timer_t *t) {
  add_client(t->data, K_REJOIN);
}

/* Player 2's connection drops (outside its loop's frame). */
static void on_drop(uv_timer_t *t) {
  world *w = t->data;
  client *c = &w->c[2];
  w->drop_slot = c->slot;
  memcpy(w->secret, c->secret, sizeof w->secret);
  gk_net_peer_uv_stop(&c->peer);
  if (w->o.silent_drop) { /* nothing more gets through, not even the
                             DISCONNECT: the server still sees it up */
    gk_net_fault_dir cut = {.loss_ppm = 1000000};
    gk_net_fault_set(&c->relay, &cut, &cut);
  }
  gk_net_transport_disconnect(&c->t, c->server_id, 1);
  uv_timer_start(&w->back_timer, on_back, w->o.away_ms, 0);
}

static void on_unthrottle(uv_timer_t *t) {
  world *w = t->data;
  gk_net_fault_dir ok = {0};
  for (uint32_t i = 0; i < w->nc; i++)
    if (w->c[i].relayed) gk_net_fault_set(&w->c[i].relay, &ok, &ok);
}

static void on_start_poll(uv_timer_t *t) {
  maybe_start(t->data);
}

static void on_guard(uv_timer_t *t) {
  world *w = t->data;
  w->timed_out = 1;
}

static int done(const world *w) {
  if (w->timed_out) return 1;
  if (w->o.guest_lobby_end &&
      (w->c[0].lobby_end || w->c[1].lobby_end || w->c[0].error))
    return 1; /* the lobby closed, or the start was refused */
  for (uint32_t i = 0; i < w->nc; i++) {
    const client *c = &w->c[i];
    if (c->kind == K_PLAYER && !(w->dropped && i == 2) && !c->ended) return 0;
    if (c->kind == K_SPECTATOR && !c->ended) return 0;
    if (c->kind == K_LATE && !c->ended && c->error == 0) return 0;
  }
  if (w->o.late_step && !w->late_added) return 0;
  if (w->o.spectators && !w->spectating) return 0;
  if (w->o.expect_back) {
    for (uint32_t i = 0; i < w->nc; i++)
      if (w->c[i].kind == K_REJOIN && w->c[i].ended) return 1;
    return 0;
  }
  return w->nc >= w->o.players && w->c[0].ended;
}

/* --- the run ------------------------------------------------------------- */

/* `gk-replay info --json` of the replay at `path` into w->info (the
 * real binary: what a user runs). */
static void replay_info(world *w, const char *path) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' info --json '%s'", GK_REPLAY_BIN, path);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(w->info, 1, sizeof w->info - 1, p);
  w->info[n] = '\0';
  cr_assert_eq(pclose(p), 0, "gk-replay info failed: %s", w->info);
}

/* Every replay the server wrote verifies step by step (gk-replay verify's
 * function): reconnects, neutral input and removals are recorded as the
 * step-scheduled inputs they are. The folder is removed. */
static void verify_replays(world *w) {
  DIR *d = opendir(w->dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", w->dir, e->d_name);
    gk_replay r;
    gk_replay_verdict v;
    memset(&v, 0, sizeof v);
    int rc = gk_replay_open_file(&r, path);
    if (rc == 0 && gk_replay_verify(&r, NULL, NULL, NULL, &v) == GK_REPLAY_OK)
      w->replays_ok++;
    else if (!w->replay_err[0])
      snprintf(w->replay_err, sizeof w->replay_err, "%s: %s (%s)", e->d_name,
               v.message, gk_err_name(rc));
    gk_replay_close(&r);
    if (w->o.late_step) replay_info(w, path);
    remove(path);
  }
  if (d != NULL) closedir(d);
  rmdir(w->dir);
}

void rw_run(world *w, const scen *o) {
  memset(w, 0, sizeof *w);
  w->o = *o;
  if (w->o.genre == NULL) w->o.genre = "survivors";
  if (w->o.players == 0) w->o.players = 3;
  if (w->o.max_players == 0) w->o.max_players = w->o.players;
  o = &w->o;
  static gk_server_config cfg;
  gk_server_config_default(&cfg);
  snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
  cfg.port = 0;
  snprintf(w->dir, sizeof w->dir, "/tmp/gk-rejoin-XXXXXX");
  cr_assert_not_null(mkdtemp(w->dir));
  cfg.replays_enabled = 1;
  snprintf(cfg.replay_dir, sizeof cfg.replay_dir, "%s", w->dir);
  cfg.shutdown_grace_ms = 0;
  cfg.step_hz = 200;
  cfg.reconnect_hold_ms = o->hold_ms;
  cfg.reconnect_neutral = o->neutral;
  cfg.spectator_delay_steps = o->spectator_delay ? o->spectator_delay : 30;
  cfg.spectator_behind_steps = 100;
  if (o->raise_step) { /* quick delay changes */
    cfg.delay_hold_ms = 1000;
    cfg.delay_every_ms = 1000;
    /* the round trip's delay: a predicting room's covers only what is
     * past prediction.rtt_ms (docs/PROTOCOL.md, "Prediction") */
    cfg.prediction = GK_PREDICT_OFF;
  }
  FILE *logf =
      fopen(getenv("GK_TEST_LOG") ? getenv("GK_TEST_LOG") : "/dev/null", "w");
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_INFO);
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  cr_assert_eq(uv_loop_init(&w->loop), 0);
  cr_assert_eq(
      gk_server_start(&w->loop, &cfg, &log, 0, &w->srv, err, sizeof err), 0,
      "%s", err);
  w->port = gk_server_port(w->srv);
  if (o->faults || o->raise_step) {
    gk_net_fault_dir d = {.loss_ppm = o->faults ? 50000u : 0u,
                          .latency_ms = o->faults ? 30u : 0u};
    gk_net_fault_options fo = {.target_host = "127.0.0.1",
                               .target_port = w->port,
                               .up = d,
                               .down = d,
                               .seed = 12};
    cr_assert_eq(gk_net_fault_init(&w->shared, &w->loop, &fo), 0);
    w->shared_up = 1;
    w->front = w->shared.port;
  }
  uv_timer_t *timers[] = {&w->guard, &w->drop_timer, &w->back_timer,
                          &w->throttle_timer, &w->start_timer};
  enum { NTIMERS = sizeof timers / sizeof timers[0] };
  for (int i = 0; i < NTIMERS; i++) {
    uv_timer_init(&w->loop, timers[i]);
    timers[i]->data = w;
  }
  uv_timer_start(&w->guard, on_guard, GUARD_MS, 0);
  if (o->guest_lobby_end) uv_timer_start(&w->start_timer, on_start_poll, 5, 5);
  for (uint32_t i = 0; i < o->players; i++) add_client(w, K_PLAYER);
  while (!done(w)) uv_run(&w->loop, UV_RUN_ONCE);
  w->stats = *gk_server_get_room_stats(w->srv);
  w->server_stats = *gk_server_get_stats(w->srv);
  for (int i = 0; i < NTIMERS; i++) uv_close((uv_handle_t *)timers[i], NULL);
  for (uint32_t i = 0; i < w->nc; i++) {
    gk_net_peer_uv_close(&w->c[i].peer, NULL);
    gk_net_transport_close(&w->c[i].t, NULL);
    if (w->c[i].relayed) gk_net_fault_close(&w->c[i].relay, NULL);
  }
  if (w->shared_up) gk_net_fault_close(&w->shared, NULL);
  gk_server_shutdown(w->srv);
  gk_server_shutdown(w->srv);
  /* until every handle closed and the replay's finish job (thread pool)
   * is done, at most DRAIN_MS: a count of busy iterations was too short
   * for the finish job on a loaded machine (a .gkr.tmp left behind) */
  uint64_t t0 = uv_hrtime();
  while (uv_run(&w->loop, UV_RUN_NOWAIT) != 0 &&
         uv_hrtime() - t0 < DRAIN_MS * 1000000ull)
    uv_sleep(1);
  uv_loop_close(&w->loop);
  fclose(logf);
  gk_server_config_free(&cfg);
  verify_replays(w);
}

void rw_free(world *w) {
  for (uint32_t i = 0; i < w->nc; i++) {
    free(w->c[i].hashes);
    for (uint32_t k = 0; k < w->c[i].nheld; k++) free(w->c[i].held[k]);
  }
}

client *rw_rejoined(world *w) {
  client *r = NULL;
  for (uint32_t i = 0; i < w->nc; i++)
    if (w->c[i].kind == K_REJOIN) r = &w->c[i];
  return r;
}

client *rw_first_rejoin(world *w) {
  for (uint32_t i = 0; i < w->nc; i++)
    if (w->c[i].kind == K_REJOIN) return &w->c[i];
  return NULL;
}

void rw_expect_agrees(const world *w, const client *c, const char *who) {
  const client *p0 = &w->c[0];
  cr_assert_gt(c->nsteps, c->info.step, "%s ran no step after its snapshot",
               who);
  uint64_t to = c->nsteps < p0->nsteps ? c->nsteps : p0->nsteps;
  cr_assert_gt(to, c->info.step + 100, "%s: too few steps compared", who);
  for (uint64_t s = c->info.step; s < to && s < HCAP; s++)
    cr_assert_eq(c->hashes[s], p0->hashes[s],
                 "%s: hash at step %llu differs from player 0's", who,
                 (unsigned long long)s);
}

void rw_expect_ended_normally(const world *w) {
  cr_assert(!w->timed_out, "the run timed out");
  for (uint32_t i = 0; i < w->o.players; i++) {
    if (i == 2 && w->dropped) continue;
    cr_assert(w->c[i].ended, "player %u did not end", i);
    cr_assert_eq(w->c[i].end_reason, GK_WIRE_END_HOST, "player %u", i);
    cr_assert_eq(w->c[i].desyncs, 0, "player %u heard of a desync", i);
  }
  cr_assert_eq(w->stats.desyncs, 0);
  cr_assert_eq(w->replays_ok, 1, "replays verified: %u; %s", w->replays_ok,
               w->replay_err);
}

client *rw_expect_rejoined(world *w, const scen *o) {
  client *r = rw_rejoined(w);
  cr_assert_not_null(r, "nobody tried to rejoin");
  cr_assert_eq(r->error, 0, "rejoin refused: %s %s", gk_err_name(r->error),
               r->error_text);
  cr_assert_eq(r->snaps, 1, "snapshot: %s", r->snap_err);
  cr_assert(r->resumed, "the rejoined player never resumed sampling");
  cr_assert(r->ended, "the rejoined player did not see the end");
  cr_assert_eq(r->desyncs, 0);
  cr_assert_geq(r->info.step, o->drop_step);
  rw_expect_agrees(w, r, "the rejoined player");
  return r;
}

void rw_rejoin_case(const scen *o) {
  static world w;
  rw_run(&w, o);
  rw_expect_ended_normally(&w);
  client *r = rw_expect_rejoined(&w, o);
  cr_assert_eq(w.stats.rejoins, 1 + (o->tamper != T_NONE));
  cr_log_info("rejoin (%s%s): snapshot step %llu, %llu bytes, resumed %.1f ms "
              "after the request",
              o->neutral ? "neutral" : "stall", o->faults ? ", faults" : "",
              (unsigned long long)r->info.step,
              (unsigned long long)r->info.bytes,
              (double)(r->info.resumed_ns - r->info.request_ns) / 1e6);
  rw_free(&w);
}

scen rw_base(void) {
  return (scen){.hold_ms = 10000,
                .drop_step = 1000,
                .away_ms = 2000,
                .expect_back = 1,
                .end_step = 1600};
}

client *rw_rejoin_attempt(world *w, int k) {
  for (uint32_t i = 0; i < w->nc; i++)
    if (w->c[i].kind == K_REJOIN && w->c[i].attempt == k) return &w->c[i];
  return NULL;
}

client *rw_late(world *w) {
  for (uint32_t i = 0; i < w->nc; i++)
    if (w->c[i].kind == K_LATE) return &w->c[i];
  return NULL;
}
