/* test_delay.c: the input delay chosen from round trips and changed
 * mid-match, in one process over ENet on 127.0.0.1.
 *
 * A gk_server (the network tests' tally genre added by hand, replays on
 * in a temporary folder) and two gk_net_peer clients, each behind its own
 * gk_net_fault relay whose latency the test sets (and changes while the
 * match runs, at given steps of peer 0). Peer 0 creates the room, peer 1
 * joins, peer 0 starts the match and ends it (END_MATCH) once it ran the
 * wanted steps. Every peer records each step's hash and when it ran it.
 *
 * What is measured: steps per wall second on peer 0 from step 60 (after
 * the start-up pipeline) to its last step, the server's late steps, the
 * delays each peer switched to, and the replay, verified by gk-replay's
 * verifier (hashes and the input delay rule). Times bound the runs (guard
 * timers); the rates asserted are what the feature promises. Kept here:
 * what needs real round trips (auto at 120 ms, a fixed delay too short,
 * a latency that rises and falls); the raise and lowering at the
 * announced step with round trips set by hand is in tests/room.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "gk_err.h"
#include "gk_net_delay.h"
#include "gk_net_fault.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_replay.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "tally.h"

#define PEERS 2
#define STEPS_CAP 2048
#define CHANGES_MAX 64

typedef struct change {
  uint64_t at_step; /* peer 0's step */
  uint32_t oneway_ms;
  uint32_t jitter_ms;
} change;

typedef struct scenario {
  uint32_t oneway_ms; /* each way, every peer */
  uint32_t jitter_ms;
  uint32_t fixed_delay; /* 0: auto */
  uint64_t steps;       /* peer 0 ends the match after these */
  uint32_t hold_ms, every_ms;
  const change *changes;
  uint32_t nchanges;
} scenario;

typedef struct world world;

typedef struct client {
  world *w;
  uint32_t index;
  gk_net_transport t;
  uint32_t server_id;
  gk_net_fault fault;
  gk_net_peer_uv peer;
  int joined, error, desyncs, ended;
  uint64_t hashes[STEPS_CAP];
  uint64_t ran_ns[STEPS_CAP];
  uint64_t nsteps;
} client;

struct world {
  uv_loop_t loop;
  gk_server *srv;
  const scenario *sc;
  char code[GK_WIRE_CODE_LEN + 1];
  int start_sent, end_sent, timed_out;
  uint32_t next_change;
  uv_timer_t guard;
  client c[PEERS];
};

typedef struct result {
  double rate; /* peer 0's steps per wall second from step 60 */
  uint64_t steps_confirmed, steps_late;
  uint64_t steps[PEERS];
  gk_net_peer_delay delays[PEERS][GK_NET_PEER_DELAYS_MAX];
  uint32_t ndelays[PEERS];
  int desyncs, errors, timed_out;
  uint64_t hash_mismatch_step; /* UINT64_MAX: none */
  int replay_status;
  char replay_msg[GK_REPLAY_MSG_MAX * 2];
  uint32_t replay_delay;
} result;

static void send_or_fail(client *c, const gk_wire_msg *m) {
  if (gk_net_peer_uv_send_msg(&c->peer, m) != 0) c->error = GK_EIO;
}

static void set_latency(world *w, uint32_t oneway, uint32_t jitter) {
  gk_net_fault_dir d = {0, 0, oneway, jitter};
  for (uint32_t i = 0; i < PEERS; i++) gk_net_fault_set(&w->c[i].fault, &d, &d);
}

static int done(const world *w) {
  for (uint32_t i = 0; i < PEERS; i++)
    if (!w->c[i].ended && !w->c[i].error) return 0;
  return 1;
}

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  client *c = ctx;
  return gk_net_transport_send(&c->t, c->server_id, bytes, len, reliable);
}

static void peer_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                      uint64_t hash) {
  (void)p;
  client *c = ctx;
  world *w = c->w;
  if (in->step < STEPS_CAP) {
    c->hashes[in->step] = hash;
    c->ran_ns[in->step] = uv_hrtime();
  }
  if (in->step + 1 > c->nsteps) c->nsteps = in->step + 1;
  if (c->index != 0) return;
  while (w->next_change < w->sc->nchanges &&
         in->step >= w->sc->changes[w->next_change].at_step) {
    const change *ch = &w->sc->changes[w->next_change++];
    set_latency(w, ch->oneway_ms, ch->jitter_ms);
  }
  if (!w->end_sent && in->step + 1 >= w->sc->steps) {
    gk_wire_msg m;
    memset(&m, 0, sizeof m);
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    send_or_fail(c, &m);
    w->end_sent = 1;
  }
}

static void peer_desync(void *ctx, gk_net_peer *p, const gk_wire_desync *d) {
  (void)p;
  (void)d;
  ((client *)ctx)->desyncs++;
}

static void peer_ended(void *ctx, gk_net_peer *p, uint64_t step, int reason) {
  (void)p;
  (void)step;
  (void)reason;
  client *c = ctx;
  c->ended = 1;
  if (done(c->w)) uv_stop(&c->w->loop);
}

static void peer_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  (void)p;
  client *c = ctx;
  world *w = c->w;
  gk_wire_msg out;
  memset(&out, 0, sizeof out);
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    snprintf(w->code, sizeof w->code, "%s", m->u.room.code);
    c->joined = 1;
    out.type = GK_MSG_JOIN_ROOM;
    snprintf(out.u.room.code, sizeof out.u.room.code, "%s", w->code);
    send_or_fail(&w->c[1], &out);
    break;
  case GK_MSG_JOINED:
    c->joined = 1;
    if (!w->start_sent) {
      out.type = GK_MSG_START_MATCH;
      send_or_fail(&w->c[0], &out);
      w->start_sent = 1;
    }
    break;
  case GK_MSG_ERROR:
    c->error = m->u.error.code != 0 ? m->u.error.code : GK_EINVAL;
    uv_stop(&w->loop);
    break;
  default:
    break;
  }
}

static const gk_sim *find_genre(void *ctx, const char *name) {
  (void)ctx;
  return strcmp(name, tally_sim.name) == 0 ? &tally_sim : NULL;
}

static void client_receive(void *ctx, gk_net_transport *t, uint32_t id,
                           const uint8_t *bytes, size_t len) {
  (void)t;
  (void)id;
  gk_net_peer_uv_receive(&((client *)ctx)->peer, bytes, len);
}

static void client_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  (void)t;
  client *c = ctx;
  c->server_id = id;
  if (c->index != 0) return;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = PEERS;
  m.u.create_room.input_delay = (uint8_t)c->w->sc->fixed_delay;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "%s",
           tally_sim.name);
  send_or_fail(c, &m);
}

static void on_guard(uv_timer_t *t) {
  world *w = t->data;
  w->timed_out = 1;
  uv_stop(&w->loop);
}

static void setup_client(world *w, uint32_t i, uint16_t port) {
  client *c = &w->c[i];
  c->w = w;
  c->index = i;
  gk_net_fault_options fo;
  memset(&fo, 0, sizeof fo);
  fo.target_host = "127.0.0.1";
  fo.target_port = port;
  fo.up.latency_ms = fo.down.latency_ms = w->sc->oneway_ms;
  fo.up.jitter_ms = fo.down.jitter_ms = w->sc->jitter_ms;
  fo.seed = 7u + i;
  fo.max_queued = 8192;
  cr_assert_eq(gk_net_fault_init(&c->fault, &w->loop, &fo), 0);
  gk_net_transport_options to = {.max_peers = 1, .service_ms = 5};
  gk_net_transport_callbacks tc = {
      .ctx = c, .receive = client_receive, .connect = client_connect};
  cr_assert_eq(gk_net_transport_init(&c->t, &w->loop, &to, &tc), 0);
  gk_net_peer_options po = {.bot_seed = 100u + i,
                            .genres = {.find = find_genre}};
  gk_net_peer_callbacks pc = {.ctx = c,
                              .send = peer_send,
                              .step = peer_step,
                              .desync = peer_desync,
                              .ended = peer_ended,
                              .message = peer_message};
  cr_assert_eq(gk_net_peer_uv_init(&c->peer, &w->loop, &po, &pc), 0);
  cr_assert_eq(gk_net_transport_connect(&c->t, "127.0.0.1", c->fault.port,
                                        &c->server_id),
               0);
}

/* The one .gkr file in dir, verified. */
static void verify_replay(const char *dir, result *res) {
  res->replay_status = -1;
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  char path[512] = "";
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".gkr") == 0)
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (path[0] == '\0') return;
  gk_replay r;
  if (gk_replay_open_file(&r, path) != 0 && !r.header_ok) {
    gk_replay_close(&r);
    return;
  }
  gk_replay_verdict v;
  res->replay_status = gk_replay_verify(&r, &tally_sim, NULL, NULL, &v);
  snprintf(res->replay_msg, sizeof res->replay_msg, "%s", v.message);
  res->replay_delay = r.has_lockstep ? r.input_delay : 0;
  gk_replay_close(&r);
  unlink(path);
}

static void config_for(gk_server_config *cfg, const scenario *sc,
                       const char *dir) {
  gk_server_config_default(cfg);
  snprintf(cfg->host, sizeof cfg->host, "127.0.0.1");
  cfg->port = 0;
  cfg->replays_enabled = 1;
  snprintf(cfg->replay_dir, sizeof cfg->replay_dir, "%s", dir);
  cfg->shutdown_grace_ms = 0;
  if (sc->hold_ms) cfg->delay_hold_ms = sc->hold_ms;
  if (sc->every_ms) cfg->delay_every_ms = sc->every_ms;
  gk_server_genre *g = &cfg->genres[cfg->ngenres++];
  g->sim = &tally_sim;
  g->enabled = 1;
  g->max_players = PEERS;
}

static void collect(world *w, result *res) {
  const client *c0 = &w->c[0];
  uint64_t last = c0->nsteps < STEPS_CAP ? c0->nsteps : STEPS_CAP;
  if (last > 61 && c0->ran_ns[last - 1] > c0->ran_ns[60])
    res->rate = (double)(last - 1 - 60) * 1e9 /
                (double)(c0->ran_ns[last - 1] - c0->ran_ns[60]);
  res->hash_mismatch_step = UINT64_MAX;
  for (uint32_t i = 0; i < PEERS; i++) {
    const client *c = &w->c[i];
    res->steps[i] = c->nsteps;
    res->desyncs += c->desyncs;
    res->errors += c->error != 0;
    res->ndelays[i] = c->peer.eng.ndelays;
    memcpy(res->delays[i], c->peer.eng.delays, sizeof res->delays[i]);
    for (uint64_t s = 0; s < last && s < c->nsteps; s++)
      if (c->hashes[s] != c0->hashes[s] && res->hash_mismatch_step > s)
        res->hash_mismatch_step = s;
  }
  res->timed_out = w->timed_out;
}

static void run(const scenario *sc, result *res) {
  memset(res, 0, sizeof *res);
  char dir[] = "/tmp/gk-delay-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  static gk_server_config cfg;
  config_for(&cfg, sc, dir);
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  const char *trace = getenv("GK_TEST_DELAY_LOG");
  FILE *logf = fopen(trace != NULL ? trace : "/dev/null", "a");
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, trace != NULL ? GK_LOG_DEBUG : GK_LOG_ERROR);
  static world w;
  memset(&w, 0, sizeof w);
  w.sc = sc;
  cr_assert_eq(uv_loop_init(&w.loop), 0);
  cr_assert_eq(gk_server_start(&w.loop, &cfg, &log, 0, &w.srv, err, sizeof err),
               0, "%s", err);
  uv_timer_init(&w.loop, &w.guard);
  w.guard.data = &w;
  uv_timer_start(&w.guard, on_guard, 8000 + sc->steps * 1000 / 60 * 2, 0);
  for (uint32_t i = 0; i < PEERS; i++)
    setup_client(&w, i, gk_server_port(w.srv));
  for (uint64_t n = 0; n < 10000000 && !w.timed_out && !done(&w); n++)
    uv_run(&w.loop, UV_RUN_ONCE);
  collect(&w, res);

  uv_timer_stop(&w.guard);
  uv_close((uv_handle_t *)&w.guard, NULL);
  for (uint32_t i = 0; i < PEERS; i++) {
    gk_net_peer_uv_close(&w.c[i].peer, NULL);
    gk_net_transport_close(&w.c[i].t, NULL);
    gk_net_fault_close(&w.c[i].fault, NULL);
  }
  gk_server_shutdown(w.srv);
  gk_server_shutdown(w.srv); /* finalise at once */
  const gk_room_stats *st = gk_server_get_room_stats(w.srv);
  res->steps_confirmed = st->steps_confirmed;
  res->steps_late = st->steps_late;
  for (int i = 0; i < 100000 && uv_run(&w.loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  uv_loop_close(&w.loop);
  fclose(logf);
  verify_replay(dir, res);
  rmdir(dir);
  gk_server_config_free(&cfg);
}

static void expect_clean(const result *r) {
  cr_log_info("steps %llu/%llu, rate %.2f, late %llu of %llu, delay %u",
              (unsigned long long)r->steps[0], (unsigned long long)r->steps[1],
              r->rate, (unsigned long long)r->steps_late,
              (unsigned long long)r->steps_confirmed, r->replay_delay);
  cr_assert_eq(r->timed_out, 0, "the run hit its guard timer");
  cr_assert_eq(r->errors, 0, "a peer got an ERROR");
  cr_assert_eq(r->desyncs, 0, "the server reported a desync");
  cr_assert_eq(r->hash_mismatch_step, UINT64_MAX,
               "peer hashes differ at step %llu",
               (unsigned long long)r->hash_mismatch_step);
  cr_assert_eq(r->replay_status, GK_REPLAY_OK, "replay: %d %s",
               r->replay_status, r->replay_msg);
}

/* --- steady latency: auto keeps the rate --------------------------------- */

/* What tells a working controller from a broken one, with room for a
 * loaded machine. A delay too small for the round trip makes nearly every
 * step late (304 of 307 with a fixed 3 at 120 ms, below); a working one
 * made 0 late on a quiet machine and up to 12 of 421 (2.8%) with the load
 * average at 14 on 2 cores, where the test once asserted 1% and failed:
 * the threads that run the peers and the server were not scheduled in
 * time, which is the machine, not the delay. So the late share must stay
 * under 10%, and the chosen delay must cover the relay's round trip
 * (which no load can make shorter). The figures themselves (late share,
 * confirm latency) are bench/bench_delay.py's, on a quiet machine. */
static void steady(uint32_t rtt_ms) {
  scenario sc = {.oneway_ms = rtt_ms / 2, .jitter_ms = 2, .steps = 420};
  result r;
  run(&sc, &r);
  expect_clean(&r);
  cr_assert_geq(r.rate, 60.0 * 0.95, "%u ms: %.2f steps/s (delay %u)", rtt_ms,
                r.rate, r.replay_delay);
  cr_assert_leq(r.rate, 60.0 * 1.02, "%u ms: %.2f steps/s", rtt_ms, r.rate);
  cr_assert_leq(r.steps_late * 10, r.steps_confirmed,
                "%u ms: %llu of %llu steps late (delay %u)", rtt_ms,
                (unsigned long long)r.steps_late,
                (unsigned long long)r.steps_confirmed, r.replay_delay);
  cr_assert_geq(r.replay_delay * 1000u, rtt_ms * 60u,
                "%u ms: a delay of %u steps does not cover the round trip",
                rtt_ms, r.replay_delay);
}

Test(delay, auto_keeps_sixty_steps_a_second_at_120_ms, .timeout = 30) {
  steady(120);
}
Test(delay, a_fixed_delay_of_3_at_120_ms_runs_in_slow_motion, .timeout = 30) {
  scenario sc = {
      .oneway_ms = 60, .jitter_ms = 2, .fixed_delay = 3, .steps = 300};
  result r;
  run(&sc, &r);
  expect_clean(&r);
  cr_assert_eq(r.replay_delay, 3);
  /* slower than the clock (56 steps/s measured), and most steps late:
   * far from what load alone does to a working delay (steady, above) */
  cr_assert_lt(r.rate, 60.0 * 0.98, "fixed delay 3 at 120 ms: %.2f steps/s",
               r.rate);
  cr_assert_gt(r.steps_late * 2, r.steps_confirmed, "%llu of %llu late",
               (unsigned long long)r.steps_late,
               (unsigned long long)r.steps_confirmed);
}

/* --- changing latency ----------------------------------------------------- */

Test(delay, latency_rising_then_falling_moves_the_delay_at_scheduled_steps,
     .timeout = 40) {
  static const change ch[] = {{120, 75, 2}, {540, 10, 2}};
  scenario sc = {.oneway_ms = 10,
                 .jitter_ms = 2,
                 .steps = 960,
                 .hold_ms = 1000,
                 .every_ms = 2000,
                 .changes = ch,
                 .nchanges = 2};
  result r;
  run(&sc, &r);
  expect_clean(&r);
  /* every peer switched at the same steps to the same delays */
  cr_assert_eq(r.ndelays[0], r.ndelays[1]);
  for (uint32_t i = 0; i < r.ndelays[0]; i++) {
    cr_assert_eq(r.delays[0][i].step, r.delays[1][i].step);
    cr_assert_eq(r.delays[0][i].delay, r.delays[1][i].delay);
  }
  uint32_t first = r.delays[0][0].delay, top = first;
  int rose = 0, fell = 0;
  for (uint32_t i = 1; i < r.ndelays[0]; i++) {
    uint32_t d = r.delays[0][i].delay;
    cr_assert_gt(r.delays[0][i].step, r.delays[0][i - 1].step);
    if (d > top) top = d, rose = 1;
    if (rose && d < top) fell = 1;
  }
  cr_assert(rose, "the delay never rose (stayed %u)", first);
  cr_assert_geq(top, 9u, "150 ms needs 9+ steps, the top was %u", top);
  cr_assert(fell, "the delay never fell back from %u", top);
  cr_assert_leq(r.delays[0][r.ndelays[0] - 1].delay, first + 1);
}

/* --- the controller alone ------------------------------------------------- */

Test(delay, the_wanted_delay_covers_the_round_trip_and_jitter) {
  gk_delay_policy p = {2, 20, 16666, 2, 1000, 2000, 0};
  cr_assert_eq(gk_delay_wanted(&p, 0, 0), 2);     /* the minimum */
  cr_assert_eq(gk_delay_wanted(&p, 100, 0), 7);   /* 100 / 16.67 = 6.0x */
  cr_assert_eq(gk_delay_wanted(&p, 100, 10), 8);  /* + 20 ms margin */
  cr_assert_eq(gk_delay_wanted(&p, 200, 5), 13);  /* 210 ms */
  cr_assert_eq(gk_delay_wanted(&p, 2000, 0), 20); /* the maximum */
}

Test(delay, with_prediction_only_the_round_trip_past_rtt_ms_needs_delay) {
  gk_delay_policy p = {1, 20, 16666, 2, 1000, 2000, 100};
  cr_assert_eq(gk_delay_wanted(&p, 0, 0), 1);    /* the minimum */
  cr_assert_eq(gk_delay_wanted(&p, 50, 0), 1);   /* the heads cover it */
  cr_assert_eq(gk_delay_wanted(&p, 100, 0), 1);  /* still */
  cr_assert_eq(gk_delay_wanted(&p, 110, 0), 1);  /* 10 ms: one step */
  cr_assert_eq(gk_delay_wanted(&p, 200, 0), 7);  /* 100 / 16.67 = 6.0x */
  cr_assert_eq(gk_delay_wanted(&p, 200, 10), 8); /* + 20 ms margin */
}

Test(delay, the_controller_changes_only_after_a_lasting_difference) {
  gk_delay_policy p = {2, 20, 16666, 2, 1000, 3000, 0};
  gk_delay_ctl c;
  gk_delay_ctl_init(&c, &p, 4, 0);
  /* swinging every 500 ms: never 1000 ms in one direction */
  uint32_t proposals = 0;
  for (uint64_t t = 0; t < 10000; t += 100)
    proposals += gk_delay_ctl_observe(&c, t, (t / 500) % 2 ? 9 : 3) != 0;
  cr_assert_eq(proposals, 0);
  /* a lasting rise: proposed after hold, the least value asked for */
  uint32_t to = 0;
  uint64_t t = 10000;
  gk_delay_ctl_observe(&c, 9999, 4); /* the swing is over */
  for (; t < 12000 && to == 0; t += 100)
    to = gk_delay_ctl_observe(&c, t, t == 10500 ? 12 : 9);
  cr_assert_eq(to, 9);
  cr_assert_geq(t, 11000);
  gk_delay_ctl_changed(&c, 9, t);
  /* a lasting fall right after: held back by every_ms */
  uint64_t changed = t;
  to = 0;
  for (t += 100; t < changed + 6000 && to == 0; t += 100)
    to = gk_delay_ctl_observe(&c, t, 5);
  cr_assert_eq(to, 5);
  cr_assert_geq(t - changed, 3000);
}
