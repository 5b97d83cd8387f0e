/* bench_rejoin.c: a rejoin into a big survivors match, and what
 * spectators cost the server.
 *
 * In one process, over ENet on 127.0.0.1: a gk_server and two survivors
 * peers (bots) in a room whose options keep about 2,000 enemies alive
 * (max_enemies 2000, tough enemies, a fast spawn, players that do not
 * die). Player 1 drops its connection at step DROP (default 36,000) and
 * a new connection rejoins 500 ms later (while_away "neutral", so the
 * match plays on). Printed: the enemies in the snapshot's state, the
 * snapshot bytes, the transfer time (REJOIN_ROOM sent -> state adopted,
 * which includes read_state and the hash check), the catch-up rate
 * (confirmed steps run from adoption to resumed sampling, per second)
 * and the time from the request to resumed sampling (goal: < 1 s).
 * Then SPECT spectators (default 4) watch for 600 steps; printed: the
 * server's time on them per spectator per step (gk_server_stats
 * spectator_ns / spectator_steps), which is the server's cost only.
 *
 * Usage: bench_rejoin [DROP [STEP_HZ [SPECT]]]  (defaults 36000 600 4)
 * The match runs at STEP_HZ (600: 36,000 steps in a minute), so the
 * figures are for a match that confirms STEP_HZ steps per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gk_err.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "gk_state.h"
#include "gk_sv_internal.h"
#include "bench_room.h"

#define CLIENTS 16

typedef struct bench bench;
typedef struct client {
  bench *b;
  int kind; /* 0 player, 1 rejoin, 2 spectator */
  gk_net_transport t;
  uint32_t id;
  gk_net_peer_uv peer;
  uint8_t secret[GK_WIRE_SECRET_LEN];
  int snapped, resumed, ended;
  gk_net_peer_snap_info info;
  uint32_t enemies;
  uint64_t steps_at_resume;
} client;

struct bench {
  bench_server s;
  uint64_t drop, spect_at;
  uint32_t nspect;
  int dropped, spectating, end_sent, failed;
  uv_timer_t drop_timer, back_timer, guard;
  client c[CLIENTS];
  uint32_t nc;
};

static client *add(bench *b, int kind);

/* The merged inputs player 0 ran after the snapshot's step, replayed. */
#define REC_STEPS 1200
typedef struct rec_input {
  gk_input base;
  uint64_t from;
  uint32_t n, players;
  size_t bytes;
  uint8_t *rec;   /* REC_STEPS * bytes */
  uint32_t *mask; /* REC_STEPS */
} rec_input;

static rec_input recd;
static uint8_t *snap_bytes;
static size_t snap_len;

static int rec_read(gk_input *in, uint64_t step, gk_step_input *out) {
  rec_input *z = (rec_input *)in;
  uint64_t i = step - z->from;
  if (step < z->from || i >= z->n) return GK_EINPUT;
  *out = (gk_step_input){.step = step,
                         .active_mask = z->mask[i],
                         .players = z->players,
                         .inputs = z->rec + i * z->bytes};
  return 0;
}

static void record(const gk_step_input *in, size_t isz) {
  if (snap_bytes == NULL || in->step < recd.from ||
      in->step != recd.from + recd.n || recd.n >= REC_STEPS)
    return;
  recd.players = in->players;
  recd.bytes = (size_t)in->players * isz;
  memcpy(recd.rec + recd.n * recd.bytes, in->inputs, recd.bytes);
  recd.mask[recd.n++] = in->active_mask;
}

/* How fast a peer's loop runs the steps after the snapshot: the adopted
 * state (its bytes, read again) in a fresh loop over the merged inputs
 * player 0 ran, in batches of 512 as the peer's catch-up runs them. */
static double catchup_rate(const gk_net_peer *p, uint64_t *steps) {
  const gk_sim *sim = p->sim;
  gk_reader r;
  gk_reader_init(&r, snap_bytes, snap_len);
  char err[GK_ERRMSG_MAX];
  void *st = sim->read_state(p->sim_cfg, &r, err, sizeof err);
  gk_loop loop;
  gk_loop_init(&loop, NULL);
  *steps = 0;
  if (st == NULL ||
      gk_loop_adopt(&loop, sim, st, p->match.players, recd.from) != 0)
    return 0;
  recd.base.read = rec_read;
  uint64_t t0 = uv_hrtime();
  while (*steps < recd.n) {
    uint64_t n = recd.n - *steps < 512 ? recd.n - *steps : 512;
    if (gk_loop_frame(&loop, &recd.base, gk_budget_steps(n), 0) != (int)n)
      break;
    *steps += n;
  }
  double s = (double)(uv_hrtime() - t0) / 1e9;
  gk_loop_close(&loop);
  return *steps > 0 ? (double)*steps / s : 0;
}

static void bsend(client *c, gk_wire_msg *m) {
  if (gk_net_peer_uv_send_msg(&c->peer, m) != 0) c->b->failed = 1;
}

static int c_send(void *ctx, const uint8_t *by, size_t len, int rel) {
  client *c = ctx;
  return gk_net_transport_send(&c->t, c->id, by, len, rel);
}

static void on_back(uv_timer_t *t) {
  add(t->data, 1);
}

static void on_drop(uv_timer_t *t) {
  bench *b = t->data;
  gk_net_peer_uv_stop(&b->c[1].peer);
  gk_net_transport_disconnect(&b->c[1].t, b->c[1].id, 1);
  uv_timer_start(&b->back_timer, on_back, 500, 0);
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t h) {
  client *c = ctx;
  bench *b = c->b;
  (void)h;
  if (c != &b->c[0]) return;
  record(in, p->sim->input_size);
  if (in->step == b->drop && !b->dropped) {
    b->dropped = 1;
    uv_timer_start(&b->drop_timer, on_drop, 0, 0);
  }
  if (in->step == b->spect_at && !b->spectating) {
    b->spectating = 1;
    for (uint32_t i = 0; i < b->nspect; i++) add(b, 2);
  }
  if (in->step == b->spect_at + 600 && !b->end_sent) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    bsend(c, &m);
    b->end_sent = 1;
  }
}

static void on_snapshot(void *ctx, gk_net_peer *p, int rc,
                        const gk_net_peer_snap_info *info) {
  client *c = ctx;
  if (rc != 0) {
    fprintf(stderr, "snapshot refused: %s\n", info->error);
    c->b->failed = 1;
    return;
  }
  c->snapped = 1;
  c->info = *info;
  if (c->kind == 1 && snap_bytes == NULL) {
    gk_buf_writer w;
    gk_buf_writer_init(&w);
    p->sim->write_state(gk_loop_state(&p->loop), &w.w);
    snap_bytes = gk_buf_writer_take(&w, &snap_len);
    gk_buf_writer_close(&w);
    recd.from = info->step;
  }
  const gk__sv_state *st = gk_loop_state(&p->loop);
  c->enemies = st != NULL ? st->n_enemies : 0;
}

static void on_resumed(void *ctx, gk_net_peer *p) {
  client *c = ctx;
  c->resumed = 1;
  c->info = p->snap;
  c->steps_at_resume = p->loop.steps;
}

static void on_ended(void *ctx, gk_net_peer *p, uint64_t s, int r) {
  client *c = ctx;
  (void)p;
  (void)s;
  (void)r;
  c->ended = 1;
}

static void on_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  client *c = ctx;
  bench *b = c->b;
  (void)p;
  if (m->type == GK_MSG_RECONNECT_SECRET)
    memcpy(c->secret, m->u.secret.secret, sizeof c->secret);
  else if (bench_room_message(m, &b->c[0].peer, &b->c[1].peer, b->s.code) != 0)
    b->failed = 1;
}

static void c_recv(void *ctx, gk_net_transport *t, uint32_t id,
                   const uint8_t *by, size_t len) {
  client *c = ctx;
  (void)t;
  (void)id;
  gk_net_peer_uv_receive(&c->peer, by, len);
}

static void c_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  client *c = ctx;
  bench *b = c->b;
  (void)t;
  c->id = id;
  if (c->kind == 1) {
    gk_net_peer_uv_rejoin(&c->peer, b->s.code, 1, b->c[1].secret, NULL);
  } else if (c->kind == 2) {
    gk_net_peer_uv_spectate(&c->peer, b->s.code, NULL);
  } else if (c == &b->c[0] && bench_room_create(&c->peer) != 0) {
    b->failed = 1;
  }
}

static client *add(bench *b, int kind) {
  if (b->nc >= CLIENTS) abort();
  client *c = &b->c[b->nc++];
  c->b = b;
  c->kind = kind;
  gk_net_transport_callbacks tc = {c, c_recv, c_connect, NULL};
  gk_net_peer_options po = {.bot_seed = b->nc};
  gk_net_peer_callbacks pc = {.ctx = c,
                              .send = c_send,
                              .step = on_step,
                              .ended = on_ended,
                              .message = on_message,
                              .snapshot = on_snapshot,
                              .resumed = on_resumed};
  bench_room_open(&b->s.loop, b->s.port, &c->t, &c->id, &tc, &c->peer, &po,
                  &pc);
  return c;
}

static void on_guard(uv_timer_t *t) {
  ((bench *)t->data)->failed = 1;
}

int main(int argc, char **argv) {
  static bench b;
  recd.rec = calloc(REC_STEPS, GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX);
  recd.mask = calloc(REC_STEPS, sizeof(uint32_t));
  b.drop = argc > 1 ? strtoull(argv[1], NULL, 10) : 36000;
  uint32_t hz = argc > 2 ? (uint32_t)atoi(argv[2]) : 600;
  b.nspect = argc > 3 ? (uint32_t)atoi(argv[3]) : 4;
  b.spect_at = b.drop + 600;
  static gk_server_config cfg;
  bench_room_config(&cfg, hz);
  cfg.replays_enabled = 0;
  cfg.reconnect_hold_ms = 60000;
  cfg.reconnect_neutral = 1;
  cfg.spectator_per_room = 16;
  FILE *logf = fopen("/dev/null", "w");
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_ERROR);
  if (bench_room_start(&b.s, &cfg, &log) != 0) return 1;
  uv_timer_t *ts[] = {&b.drop_timer, &b.back_timer, &b.guard};
  for (int i = 0; i < 3; i++) {
    uv_timer_init(&b.s.loop, ts[i]);
    ts[i]->data = &b;
  }
  uint64_t guard_ms = (b.drop + 2000) * 1000u / hz * 3u + 60000u;
  uv_timer_start(&b.guard, on_guard, guard_ms, 0);
  add(&b, 0);
  add(&b, 0);
  while (!b.failed && !b.c[0].ended) uv_run(&b.s.loop, UV_RUN_ONCE);
  gk_room_stats st = *gk_server_get_room_stats(b.s.srv);
  client *r = NULL;
  for (uint32_t i = 0; i < b.nc; i++)
    if (b.c[i].kind == 1) r = &b.c[i];
  if (b.failed || r == NULL || !r->resumed) {
    fprintf(stderr, "bench_rejoin: the run failed\n");
    return 1;
  }
  const gk_net_peer_snap_info *in = &r->info;
  double xfer_ms = (double)(in->adopted_ns - in->request_ns) / 1e6;
  double catch_ms = (double)(in->resumed_ns - in->adopted_ns) / 1e6;
  uint64_t caught = r->steps_at_resume - in->step;
  printf("rejoin at step %llu (%u Hz): %u enemies, snapshot %llu bytes\n",
         (unsigned long long)in->step, hz, r->enemies,
         (unsigned long long)in->bytes);
  printf("  request -> adopted (transfer, read, hash): %.1f ms\n", xfer_ms);
  printf("  catch-up: %llu steps in %.1f ms (%.0f steps/s)\n",
         (unsigned long long)caught, catch_ms,
         catch_ms > 0 ? (double)caught / (catch_ms / 1e3) : 0.0);
  uint64_t rsteps = 0;
  double rate = catchup_rate(&r->peer.eng, &rsteps);
  printf("  catch-up capacity (the same state over the next %llu merged "
         "inputs): %.0f steps/s\n",
         (unsigned long long)rsteps, rate);
  printf("  request -> resumed sampling: %.1f ms (goal < 1000)\n",
         (double)(in->resumed_ns - in->request_ns) / 1e6);
  printf("spectators: %u, %llu steps sent, server time %.2f us per "
         "spectator per step\n",
         b.nspect, (unsigned long long)st.spectator_steps,
         st.spectator_steps
             ? (double)st.spectator_ns / 1e3 / (double)st.spectator_steps
             : 0.0);
  for (int i = 0; i < 3; i++) uv_close((uv_handle_t *)ts[i], NULL);
  for (uint32_t i = 0; i < b.nc; i++)
    bench_room_close_client(&b.c[i].t, &b.c[i].peer);
  bench_room_shutdown(&b.s.loop, b.s.srv);
  fclose(logf);
  gk_server_config_free(&cfg);
  return 0;
}
