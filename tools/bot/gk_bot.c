/* gk_bot.c: gk-bot, many headless lockstep peers in one process.
 *
 *   gk-bot --server HOST:PORT --genre G --rooms R --players P --steps N
 *          [--seed S] [--loss P] [--latency MS] [--options JSON]
 *          [--input-delay D] [--timeout SEC] [--key FILE | --token TOKEN]
 *          [--jitter MS] [--latency-schedule STEP:MS,...] [--light]
 *          [--drop SLOT:STEP:MS]... [--spectators N]
 *          [--late-join STEP] [--ws URL [--ws-players K] [--ws-swap]]
 *          [--hashes FILE]
 *   gk-bot --server HOST:PORT --genre G --join CODE --players P [...]
 *
 * What a load test or a smoke test needs: R rooms of P bot players each,
 * on one uv loop. Every player is a gk_net_peer (driven by its uv adapter,
 * gk_net_peer_uv) with its own ENet client (gk_net_transport, so the
 * server sees one address per player) or, with --ws, its own WebSocket
 * connection (gk_net_ws_client; --ws-players K: only the last K players
 * of each room; both behind gk_bot_link.h) and the genre's built-in bot
 * as its input source. Per room: player 0 connects and creates the room;
 * once the code is back the others connect and join it; when all have
 * joined, player 0 starts the match; when player 0's loop has run N steps
 * it ends the match (END_MATCH), so the server finalises
 * the replay. With --loss/--latency every datagram goes through one
 * gk_net_fault relay in front of the server (both directions; with
 * --ws-players K, the ENet players' only: TCP has no relay). Against a
 * server in token mode, --key FILE mints a connect token for every request
 * (player 0: a room of the genre for P players; the others: a join of that
 * room's code as a player; each player its own client id), and --token
 * sends one given token with every request (negative tests). --jitter
 * adds a uniform 0..MS to each datagram's delay, and --latency-schedule
 * sets the relay's latency (each way) to MS once room 0's player 0 has run
 * step STEP (rising and falling latency for the input delay tests). The
 * summary has each room's input delays (step, delay) and its steps per
 * wall second (player 0, from step 60 to its last). --drop and
 * --spectators (gk_bot_rejoin.c): a player leaves at a step and takes its
 * slot back from the server's snapshot; spectators watch every room; the
 * summary lists each rejoin and whether the spectators agree. --join
 * CODE: one room, another client's (a page's): all P players connect at
 * once and join it (gk_net_lobby_init_join), in any free slots, wait for
 * the creator's START_MATCH, and play until the creator (or the genre)
 * ends the match; nobody here starts or ends it.
 *
 * Hashes are compared twice: the server compares every peer's reported
 * hash with its own and sends DESYNC notices (counted), and the players of
 * a room, all in this process, are compared with each other step by step.
 * Output: one JSON summary on stdout. Exit status: 0 if every room
 * finished with no desync, 1 if any desync or disagreement, 2 for a usage
 * error, 3 if a room failed (refused, disconnected, timed out).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_bot.h"
#include "gk_bot_light.h"
#include "gk_state_diff.h"
#include "gk_err.h"

/* --- helpers ----------------------------------------------------------------
 */

void bot_room_fail(bot_room *r, const char *what, const char *detail) {
  if (!r->failed) {
    snprintf(r->error, sizeof(r->error), "%s%s%s", what, detail ? ": " : "",
             detail ? detail : "");
    r->failed = 1;
  }
}

static void finish(bot *b);

void bot_room_check_done(bot_room *r) {
  if (r->done) return;
  int all = bot_spectators_done(r);
  for (uint32_t i = 0; i < bot_room_peers(r->b); i++)
    if (!r->peers[i].ended && bot_peer_in_play(r->b, &r->peers[i])) all = 0;
  if (all || r->failed) {
    r->done = 1;
    r->b->rooms_done++;
    if (r->b->rooms_done == r->b->rooms) finish(r->b);
  }
}

/* --- peer callbacks ---------------------------------------------------------
 */

/* --chaos dup: the room's last player sends every INPUT twice, then the
 * INPUT before it again (an older one after a newer one). */
static void chaos_dup(bot_peer *p, const uint8_t *bytes, size_t len,
                      int reliable) {
  if (gk_bot_link_send(&p->link, p->conn, bytes, len, reliable) == 0)
    p->b->chaos_extra++;
  if (p->held_len &&
      gk_bot_link_send(&p->link, p->conn, p->held, p->held_len, reliable) == 0)
    p->b->chaos_extra++;
  memcpy(p->held, bytes, len);
  p->held_len = len;
}

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  bot_peer *p = ctx;
  if (!p->connected) return GK_ENOTFOUND;
  int rc = gk_bot_link_send(&p->link, p->conn, bytes, len, reliable);
  if (rc == 0 && p->b->chaos_dup && p->index + 1 == p->b->players && len >= 2 &&
      len <= GK_WIRE_MAX && bytes[1] == GK_MSG_INPUT)
    chaos_dup(p, bytes, len, reliable);
  return rc;
}

static void peer_step(void *ctx, gk_net_peer *np, const gk_step_input *in,
                      uint64_t hash) {
  bot_peer *p = ctx;
  bot_room *r = p->room;
  (void)np;
  p->steps = in->step + 1;
  p->last_hash = hash;
  p->last_ns = uv_hrtime();
  if (in->step == 60) p->t60_ns = p->last_ns;
  if (p->spectator) { /* watches: checked, never the room's reference */
    bot_spec_step(r, in->step, hash);
    return;
  }
  bot_late_step(p, in->step); /* --late-join */
  bot *b = p->b;
  if (b->hashes != NULL && r->index == 0 && p->index == 0)
    fprintf(b->hashes, "%" PRIu64 " %016" PRIx64 "\n", in->step, hash);
  while (r->index == 0 && p->index == 0 && b->fault_open &&
         b->next_change < b->nschedule &&
         in->step >= b->schedule[b->next_change].step) {
    gk_net_fault_dir d = {0, 0, b->schedule[b->next_change++].ms, b->jitter_ms};
    d.loss_ppm = (uint32_t)(b->loss * 1e6 + 0.5);
    gk_net_fault_set(&b->fault, &d, &d);
  }
  ring_entry *e = &r->ring[in->step % RING];
  if (e->set && e->step == in->step) {
    if (e->hash != hash) {
      if (!r->mismatches) r->first_mismatch = in->step;
      r->mismatches++;
    }
  } else if (!e->set || e->step < in->step) {
    e->step = in->step;
    e->hash = hash;
    e->set = 1;
  }
  if (p->index == 0 && !b->join_code && !r->end_sent &&
      in->step + 1 >= b->steps) {
    gk_wire_msg m;
    memset(&m, 0, sizeof(m));
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    if (gk_net_peer_send_msg(np, np->now, &m) == 0) r->end_sent = 1;
  }
  bot_rejoin_step(p, in->step);
}

static void peer_desync(void *ctx, gk_net_peer *np, const gk_wire_desync *d) {
  bot_peer *p = ctx;
  (void)np;
  if (p->spectator) return; /* the room's notice: its players count it */
  bot_room *r = p->room;
  if (r->b->join_code != NULL) { /* slots are the server's choice */
    for (uint32_t i = 0; i < r->b->players; i++)
      if (r->peers[i].peer.eng.started &&
          r->peers[i].peer.eng.match.slot == d->player)
        p = &r->peers[i];
    p->desyncs++; /* about one of ours, or the room's others */
  } else if (d->player < bot_room_peers(p->b))
    r->peers[d->player].desyncs++;
  else
    p->desyncs++;
}

static void peer_ended(void *ctx, gk_net_peer *np, uint64_t step, int reason) {
  bot_peer *p = ctx;
  (void)step;
  p->ended = 1;
  p->end_reason = reason;
  p->steps = np->loop.steps;
  p->last_hash = np->loop.last_hash;
  gk_net_peer_stop(np); /* the adapter stops its timer on return */
  bot_room_check_done(p->room);
}

static void peer_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m) {
  bot_peer *p = ctx;
  bot_room *r = p->room;
  (void)np;
  if (bot_rejoin_message(p, m)) return;
  switch (gk_net_lobby_on_msg(&r->lobby, p->index, m)) {
  case GK_NET_LOBBY_CREATED:
    p->joined = 1;
    for (uint32_t i = 1; i < p->b->players; i++) bot_connect_peer(&r->peers[i]);
    break;
  case GK_NET_LOBBY_JOINED:
    p->joined = 1;
    break;
  case GK_NET_LOBBY_ERROR: {
    char detail[GK_WIRE_TEXT_MAX + 40];
    snprintf(detail, sizeof(detail), "%s: %s", gk_err_name(m->u.error.code),
             gk_net_lobby_error_text(&m->u.error));
    bot_room_fail(r, "server error", detail);
    bot_room_check_done(r);
    return;
  }
  case GK_NET_LOBBY_SHUTDOWN:
    bot_room_fail(r, "the server is shutting down", NULL);
    return;
  default:
    return;
  }
  /* everyone is in: the host starts the match */
  gk_wire_msg s;
  if (gk_net_lobby_start(&r->lobby, &s) &&
      gk_net_peer_uv_send_msg(&r->peers[0].peer, &s) != 0)
    r->lobby.start_sent = 0; /* again at the next message */
}

/* --- transport callbacks ----------------------------------------------------
 */

static void tr_receive(void *ctx, gk_bot_link *t, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  bot_peer *p = ctx;
  (void)t;
  (void)conn;
  if (p->peer_open) gk_net_peer_uv_receive(&p->peer, bytes, len);
}

/* The connect token of a request (create or join), into len/tok: none,
 * the one from --token, or a fresh one minted with --key. 0 or a code. */
static int put_token(bot_peer *p, int create, uint8_t *len, uint8_t *tok) {
  bot *b = p->b;
  gk_token_grant g;
  memset(&g, 0, sizeof(g));
  g.slot = GK_TOKEN_SLOT_ANY;
  if (create) {
    g.kind = GK_TOKEN_CREATE;
    g.max_players = (uint8_t)bot_room_peers(b);
    snprintf(g.genre, sizeof(g.genre), "%s", b->sim->name);
  } else {
    g.kind = GK_TOKEN_JOIN;
    g.role = GK_TOKEN_PLAYER;
    memcpy(g.code, p->room->lobby.code, sizeof(g.code));
  }
  return bot_token(b, &g, bot_client_id(p), len, tok);
}

static void tr_connect(void *ctx, gk_bot_link *t, uint32_t conn) {
  bot_peer *p = ctx;
  (void)t;
  p->conn = conn;
  p->connected = 1;
  if (p->rejoining || p->spectator) {
    bot_rejoin_connected(p);
    return;
  }
  gk_wire_msg m; /* CREATE_ROOM or JOIN_ROOM (gk_net_lobby) */
  int rc = gk_net_lobby_request(&p->room->lobby, p->index, &m);
  if (rc == 0)
    rc =
        m.type == GK_MSG_CREATE_ROOM
            ? put_token(p, 1, &m.u.create_room.token_len, m.u.create_room.token)
            : put_token(p, 0, &m.u.room.token_len, m.u.room.token);
  if (rc) {
    bot_room_fail(p->room, "cannot mint a token", gk_strerror(rc));
    bot_room_check_done(p->room);
    return;
  }
  gk_net_peer_uv_send_msg(&p->peer, &m);
}

static void tr_disconnect(void *ctx, gk_bot_link *t, uint32_t conn,
                          const char *why) {
  bot_peer *p = ctx;
  (void)t;
  (void)conn;
  p->connected = 0;
  if (!p->ended && !p->b->finished && !p->away) {
    bot_room_fail(p->room, "a player was disconnected", why);
    bot_room_check_done(p->room);
  }
}

int bot_peer_ws(const bot_peer *p) {
  const bot *b = p->b;
  if (b->ws_url == NULL) return 0;
  int ws = b->ws_players == 0 || (!p->spectator && p->index < b->players &&
                                  p->index >= b->players - b->ws_players);
  return ws ^ p->ws_flip;
}

void bot_connect_peer(bot_peer *p) {
  bot *b = p->b;
  gk_bot_link_options lo = {.ws_url = bot_peer_ws(p) ? b->ws_url : NULL,
                            .host = b->host,
                            .port = b->port,
                            .max_conns = 1,
                            .timeout_ms = 10000};
  if (p->redirected) { /* the room's node (gk_bot_rejoin.c) */
    lo.host = p->rhost;
    lo.port = p->rport;
    if (lo.ws_url) lo.ws_url = p->rws;
  }
  gk_bot_link_callbacks lc = {p, tr_receive, tr_connect, tr_disconnect};
  char err[256] = "";
  int rc = gk_bot_link_init(&p->link, b->loop, &lo, &lc, err, sizeof err);
  if (rc == 0) {
    p->tr_open = 1;
    rc = gk_bot_link_connect(&p->link, &p->conn);
  }
  if (rc) {
    bot_room_fail(p->room, "cannot connect", err[0] ? err : gk_strerror(rc));
    bot_room_check_done(p->room);
  }
}

/* --- end ---------------------------------------------------------------- */

static void on_closed_handle(uv_handle_t *h) {
  (void)h;
}
static void on_peer_closed(gk_net_peer_uv *p) {
  (void)p;
}
static void on_tr_closed(gk_bot_link *t) {
  (void)t;
}
static void on_fault_closed(gk_net_fault *f) {
  (void)f;
}

static void finish(bot *b) {
  if (b->finished) return;
  b->finished = 1;
  b->exit_status = bot_print_summary(b);
  if (b->join_code != NULL && b->room[0].failed) /* said, not only in JSON */
    fprintf(stderr, "gk-bot: --join %s: %s\n", b->join_code, b->room[0].error);
  uv_timer_stop(&b->timeout);
  uv_close((uv_handle_t *)&b->timeout, on_closed_handle);
  uv_close((uv_handle_t *)&b->sigint, on_closed_handle);
  for (uint32_t i = 0; i < b->rooms; i++) {
    for (uint32_t j = 0; j < bot_room_peers(b); j++) {
      bot_peer *p = &b->room[i].peers[j];
      if (p->peer_open) gk_net_peer_uv_close(&p->peer, on_peer_closed);
      if (p->tr_open) gk_bot_link_close(&p->link, on_tr_closed);
    }
  }
  bot_rejoin_close(b);
  if (b->fault_open) gk_net_fault_close(&b->fault, on_fault_closed);
}

static void on_timeout(uv_timer_t *t) {
  bot *b = t->data;
  b->timed_out = 1;
  for (uint32_t i = 0; i < b->rooms; i++)
    if (!b->room[i].done) bot_room_fail(&b->room[i], "timed out", NULL);
  finish(b);
}

static void on_sigint(uv_signal_t *h, int sig) {
  (void)sig;
  on_timeout((uv_timer_t *)&((bot *)h->data)->timeout);
}

/* With loss or latency, every bot talks to the server through a fault
 * relay on loopback. Returns 0 or a GK_E code. */
static int open_fault_relay(bot *b) {
  if (!(b->loss > 0.0 || b->latency_ms > 0 || b->jitter_ms > 0 ||
        b->nschedule > 0))
    return 0;
  gk_net_fault_options fo;
  memset(&fo, 0, sizeof(fo));
  fo.target_host = b->host;
  fo.target_port = b->port;
  fo.up.loss_ppm = fo.down.loss_ppm = (uint32_t)(b->loss * 1e6 + 0.5);
  fo.up.latency_ms = fo.down.latency_ms = b->latency_ms;
  fo.up.jitter_ms = fo.down.jitter_ms = b->jitter_ms;
  fo.seed = b->seed;
  /* a rejoin and a spectator are clients of their own */
  fo.max_clients = b->rooms * (bot_room_peers(b) + b->ndrops + b->spectators);
  fo.max_queued = 65536;
  int rc = gk_net_fault_init(&b->fault, b->loop, &fo);
  if (rc) return rc;
  b->fault_open = 1;
  b->host = "127.0.0.1";
  b->port = b->fault.port;
  return 0;
}

/* --perturb: adds 1 to the field at the path in this peer's run, between
 * two frames, by patching its canonical bytes and reading them back. */
static void perturb_now(void *ctx, gk_net_peer *np) {
  bot_peer *p = ctx;
  char err[GK_ERRMSG_MAX] = "";
  void *st = NULL;
  if (np->match.slot != p->b->perturb_slot) return;
  int rc = gk_state_patch_add(np->sim, np->sim_cfg, gk_loop_state(&np->loop),
                              p->b->perturb_path, 1, &st, err, sizeof err);
  if (rc != 0 && rc != GK_ENOTFOUND && rc != GK_ENOMEM) {
    /* +1 does not read back (a value at the top of its range, such as
     * full health): -1 changes the same field */
    rc = gk_state_patch_add(np->sim, np->sim_cfg, gk_loop_state(&np->loop),
                            p->b->perturb_path, -1, &st, err, sizeof err);
    if (rc == 0) p->b->perturb_minus++;
  }
  if (rc == 0) rc = gk_loop_replace(&np->loop, st);
  if (rc != 0)
    fprintf(stderr, "gk-bot: --perturb: room %u: %s\n", p->room->index,
            err[0] ? err : gk_strerror(rc));
  else
    p->b->perturbed++;
}

int bot_peer_open(bot_peer *p) {
  gk_net_peer_options po;
  memset(&po, 0, sizeof(po));
  po.bot_seed = p->b->seed + p->room->index;
  po.state_fault = p->b->state_fault;
  po.predict = p->b->predict && !p->spectator;
  if (p->spectator && bot_peer_ws(p))
    po.ack_every = GK_NET_PEER_ACK_EVERY_STREAM;
  gk_net_peer_callbacks pc;
  memset(&pc, 0, sizeof(pc));
  pc.ctx = p;
  pc.send = peer_send;
  pc.step = peer_step;
  pc.desync = peer_desync;
  pc.ended = peer_ended;
  pc.message = p->spectator ? bot_spec_message : peer_message;
  pc.snapshot = bot_rejoin_snapshot;
  pc.resumed = bot_rejoin_resumed;
  int rc = gk_net_peer_uv_init(&p->peer, p->b->loop, &po, &pc);
  if (rc == 0) p->peer_open = 1;
  return rc;
}

/* Allocates the rooms and opens one peer engine per bot player (and the
 * spectators' slots). Returns 0, or GK_ENOMEM / a peer's error code. */
static int open_rooms(bot *b) {
  b->room = calloc(b->rooms, sizeof(*b->room));
  if (!b->room) return GK_ENOMEM;
  for (uint32_t i = 0; i < b->rooms; i++) {
    bot_room *r = &b->room[i];
    r->b = b;
    r->index = i;
    gk_net_lobby_room lr = {b->sim->name, bot_room_peers(b), b->input_delay,
                            b->options, b->players};
    int rc = b->join_code
                 ? gk_net_lobby_init_join(&r->lobby, b->join_code, b->players)
                 : gk_net_lobby_init(&r->lobby, &lr);
    if (rc) return rc;
    r->peers = calloc(bot_room_peers(b), sizeof(*r->peers));
    r->ring = calloc(RING, sizeof(*r->ring));
    if (!r->peers || !r->ring) return GK_ENOMEM;
    for (uint32_t j = 0; j < bot_room_peers(b); j++) {
      bot_peer *p = &r->peers[j];
      p->b = b;
      p->room = r;
      p->index = j;
      rc = bot_peer_open(p);
      if (rc) return rc;
      if (b->perturb_path != NULL) /* perturb_now checks the slot */
        gk_net_peer_after_step(&p->peer.eng, b->perturb_step, perturb_now, p);
    }
  }
  return bot_spectators_alloc(b);
}

int main(int argc, char **argv) {
  bot b;
  memset(&b, 0, sizeof(b));
  bot_args a;
  memset(&a, 0, sizeof(a));
  a.seed = 1;
  static char host[256];
  int st = bot_parse_args(argc, argv, &a, &b);
  if (st < 0) st = bot_check_args(&a, &b, host);
  if (st >= 0) return st;
  uv_loop_t loop;
  uv_loop_init(&loop);
  b.loop = &loop;
  if (a.light) {
    if (b.loss > 0.0 || b.latency_ms > 0 || b.token_mode || b.ndrops ||
        b.spectators || b.late_join || b.ws_swap) {
      fprintf(stderr, "gk-bot: --light takes no --loss, --latency, --key, "
                      "--token, --drop, --spectators, --late-join or "
                      "--ws-swap\n");
      return 2;
    }
    gk_bot_light_options lo = {&loop,         b.sim,     b.host,      b.port,
                               b.rooms,       b.players, b.steps,     b.seed,
                               b.input_delay, b.options, b.timeout_s, b.ws_url,
                               b.ws_players};
    st = gk_bot_light_run(&lo);
    uv_loop_close(&loop);
    return st;
  }
  int rc = open_fault_relay(&b);
  if (rc) {
    fprintf(stderr, "gk-bot: fault relay: %s\n", gk_strerror(rc));
    return 3;
  }
  rc = open_rooms(&b);
  if (rc) {
    fprintf(stderr, "gk-bot: peer: %s\n", gk_strerror(rc));
    return 3;
  }
  uv_timer_init(&loop, &b.timeout);
  b.timeout.data = &b;
  uv_timer_start(&b.timeout, on_timeout, (uint64_t)b.timeout_s * 1000u, 0);
  uv_signal_init(&loop, &b.sigint);
  b.sigint.data = &b;
  uv_signal_start(&b.sigint, on_sigint, SIGINT);
  for (uint32_t i = 0; i < b.rooms; i++) /* the others once it is made */
    bot_connect_peer(&b.room[i].peers[0]);
  for (uint32_t j = 1; b.join_code && j < b.players; j++)
    bot_connect_peer(&b.room[0].peers[j]); /* a known room: all at once */

  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  bot_rejoin_free(&b);
  for (uint32_t i = 0; i < b.rooms; i++) {
    free(b.room[i].peers);
    free(b.room[i].ring);
  }
  free(b.room);
  if (b.hashes != NULL && fclose(b.hashes) != 0 && b.exit_status == 0) {
    fprintf(stderr, "gk-bot: --hashes: cannot write the file\n");
    return 3;
  }
  return b.exit_status;
}
