/* test_match_options.c: a NESTED genre option goes from the server's config
 * through MATCH_START to every peer.
 *
 * In one process: a gk_server on 127.0.0.1 (port 0, no replays) and three
 * gk_net_peer clients over gk_net_transport. The genre is "tally-nested",
 * the network tests' tally genre with its one key under an object
 * ("mix": {"start": N}, i.e. the dotted key "mix.start"), which is not in
 * the registry: it is added to the server's config by hand, with options
 * checked by src/config exactly as gk_server_config_parse checks them, and
 * handed to the peers through their genre registry (options.genres).
 * Peer 0 creates a room with no options of its own, the others join,
 * peer 0 starts the match. Every peer
 * must start (its MATCH_START options parsed), hold mix.start = 5, and run
 * steps whose hashes agree with one another (the server's own copy of the
 * room compares them too; a DESYNC notice fails the test).
 *
 * With the old flat MATCH_START reader (gk_net_config_json), every peer
 * refused "mix" (an object) and no peer started.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "tally.h"

#define PEERS 3
#define STEPS_WANTED 40
#define GUARD_MS 20000

/* --- the genre: tally with a nested key ---------------------------------- */

static gk_sim nested_sim; /* tally_sim with another name and config keys */

static int nested_set(void *cfg, const char *key, const gk_value *v, char *err,
                      size_t errlen) {
  if (strcmp(key, "mix.start") != 0)
    return gk_errf(err, errlen, GK_ENOTFOUND, "unknown key '%s'", key);
  return tally_sim.config_set(cfg, "start", v, err, errlen);
}

static void nested_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  gk_value v = {GK_VALUE_INT, ((const tally_cfg *)cfg)->start, NULL};
  cb(ctx, "mix.start", &v);
}

static void nested_init(void) {
  nested_sim = tally_sim;
  nested_sim.name = "tally-nested";
  nested_sim.config_set = nested_set;
  nested_sim.config_each = nested_each;
}

/* --- one process: the server and the peers ------------------------------- */

typedef struct world world;

typedef struct client {
  world *w;
  uint32_t index;
  gk_net_transport t;
  uint32_t server_id;
  gk_net_peer_uv peer;
  int joined;        /* JOINED (or ROOM_CREATED) received */
  int start_refused; /* MATCH_START arrived and was refused: rc */
  int desyncs;
  int error; /* an ERROR from the server: its code */
  char error_text[GK_WIRE_TEXT_MAX + 1];
  uint64_t hashes[STEPS_WANTED];
  uint64_t nsteps;
} client;

struct world {
  uv_loop_t loop;
  gk_server *srv;
  char code[GK_WIRE_CODE_LEN + 1];
  int start_sent;
  int timed_out;
  uv_timer_t guard;
  client c[PEERS];
};

static void send_or_fail(client *c, const gk_wire_msg *m) {
  if (gk_net_peer_uv_send_msg(&c->peer, m) != 0) c->error = GK_EIO;
}

static void send_join(client *c) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_JOIN_ROOM;
  snprintf(m.u.room.code, sizeof m.u.room.code, "%s", c->w->code);
  send_or_fail(c, &m);
}

static int all_ran(const world *w) {
  for (uint32_t i = 0; i < PEERS; i++)
    if (w->c[i].nsteps < STEPS_WANTED) return 0;
  return 1;
}

static int any_failed(const world *w) {
  for (uint32_t i = 0; i < PEERS; i++)
    if (w->c[i].start_refused || w->c[i].error || w->c[i].desyncs) return 1;
  return 0;
}

static void maybe_start(world *w) {
  if (w->start_sent) return;
  for (uint32_t i = 0; i < PEERS; i++)
    if (!w->c[i].joined) return;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  send_or_fail(&w->c[0], &m);
  w->start_sent = 1;
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
  if (in->step < STEPS_WANTED) c->hashes[in->step] = hash;
  if (in->step + 1 > c->nsteps) c->nsteps = in->step + 1;
  if (all_ran(c->w)) uv_stop(&c->w->loop);
}

static void peer_desync(void *ctx, gk_net_peer *p, const gk_wire_desync *d) {
  (void)p;
  (void)d;
  client *c = ctx;
  c->desyncs++;
  uv_stop(&c->w->loop);
}

static void peer_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  (void)p;
  client *c = ctx;
  world *w = c->w;
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    snprintf(w->code, sizeof w->code, "%s", m->u.room.code);
    c->joined = 1;
    for (uint32_t i = 1; i < PEERS; i++) send_join(&w->c[i]);
    break;
  case GK_MSG_JOINED:
    c->joined = 1;
    maybe_start(w);
    break;
  case GK_MSG_ERROR:
    c->error = m->u.error.code != 0 ? m->u.error.code : GK_EINVAL;
    snprintf(c->error_text, sizeof c->error_text, "%s", m->u.error.text);
    uv_stop(&w->loop);
    break;
  default:
    break;
  }
}

static const gk_sim *find_genre(void *ctx, const char *name) {
  (void)ctx;
  return strcmp(name, nested_sim.name) == 0 ? &nested_sim : NULL;
}

static void client_receive(void *ctx, gk_net_transport *t, uint32_t id,
                           const uint8_t *bytes, size_t len) {
  (void)t;
  (void)id;
  client *c = ctx;
  int was_started = c->peer.eng.started;
  int rc = gk_net_peer_uv_receive(&c->peer, bytes, len);
  if (rc != 0 && !was_started && len >= GK_WIRE_HEADER &&
      bytes[1] == GK_MSG_MATCH_START) {
    c->start_refused = rc;
    uv_stop(&c->w->loop);
  }
}

static void client_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  (void)t;
  client *c = ctx;
  c->server_id = id;
  if (c->index != 0) return;
  /* the creator asks for the genre with no options of its own: the
   * server's options (nested) are what reaches MATCH_START */
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = PEERS;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "%s",
           nested_sim.name);
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
                              .message = peer_message};
  cr_assert_eq(gk_net_peer_uv_init(&c->peer, &w->loop, &po, &pc), 0);
  cr_assert_eq(
      gk_net_transport_connect(&c->t, "127.0.0.1", port, &c->server_id), 0);
}

Test(match_options, a_nested_server_option_reaches_every_peer, .timeout = 60) {
  nested_init();
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";

  /* The server's config: defaults, on loopback, and the test genre with
   * nested options, checked as gk_server_config_parse checks a genre's
   * "options" (genres.<name>.options). */
  static gk_server_config cfg;
  gk_server_config_default(&cfg);
  snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
  cfg.port = 0;
  cfg.replays_enabled = 0;
  cfg.shutdown_grace_ms = 0;
  cfg.step_hz = 200;
  cr_assert_lt(cfg.ngenres, GK_SERVER_GENRES_MAX);
  gk_server_genre *g = &cfg.genres[cfg.ngenres++];
  g->sim = &nested_sim;
  g->enabled = 1;
  g->max_players = PEERS;
  g->options = cJSON_Parse("{\"mix\": {\"start\": 5}}");
  cr_assert_not_null(g->options);
  tally_cfg check;
  nested_sim.config_default(&check);
  cr_assert_eq(gk_config_apply(&nested_sim, &check, g->options,
                               "genres.tally-nested.options", err, sizeof err),
               0, "%s", err);
  cr_assert_eq(check.start, 5);

  FILE *logf = fopen("/dev/null", "w");
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_ERROR);

  static world w;
  memset(&w, 0, sizeof w);
  cr_assert_eq(uv_loop_init(&w.loop), 0);
  cr_assert_eq(gk_server_start(&w.loop, &cfg, &log, 0, &w.srv, err, sizeof err),
               0, "%s", err);
  uint16_t port = gk_server_port(w.srv);
  uv_timer_init(&w.loop, &w.guard);
  w.guard.data = &w;
  uv_timer_start(&w.guard, on_guard, GUARD_MS, 0);
  for (uint32_t i = 0; i < PEERS; i++) setup_client(&w, i, port);

  while (!w.timed_out && !all_ran(&w) && !any_failed(&w))
    uv_run(&w.loop, UV_RUN_ONCE);

  /* what happened, before tearing down */
  int64_t start[PEERS];
  int started[PEERS];
  for (uint32_t i = 0; i < PEERS; i++) {
    client *c = &w.c[i];
    started[i] = c->peer.eng.started;
    start[i] = c->peer.eng.started && c->peer.eng.sim_cfg != NULL
                   ? ((const tally_cfg *)c->peer.eng.sim_cfg)->start
                   : -1;
  }

  /* Tear down: peers and transports, then the server, then the loop. */
  uv_timer_stop(&w.guard);
  uv_close((uv_handle_t *)&w.guard, NULL);
  for (uint32_t i = 0; i < PEERS; i++) {
    gk_net_peer_uv_close(&w.c[i].peer, NULL);
    gk_net_transport_close(&w.c[i].t, NULL);
  }
  gk_server_shutdown(w.srv);
  gk_server_shutdown(w.srv); /* finalise at once */
  for (int i = 0; i < 100000 && uv_run(&w.loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  uv_loop_close(&w.loop);
  fclose(logf);

  for (uint32_t i = 0; i < PEERS; i++) {
    client *c = &w.c[i];
    cr_expect_eq(c->error, 0, "peer %u got ERROR %s: %s", i,
                 gk_err_name(c->error), c->error_text);
    cr_assert_eq(c->start_refused, 0,
                 "peer %u refused MATCH_START's options (%s)", i,
                 gk_err_name(c->start_refused));
    cr_assert(started[i], "peer %u never started (timed out: %d)", i,
              w.timed_out);
    cr_assert_eq(start[i], 5, "peer %u: mix.start is %lld", i,
                 (long long)start[i]);
    cr_assert_eq(c->desyncs, 0, "peer %u was told of a desync", i);
    cr_assert_geq(c->nsteps, STEPS_WANTED, "peer %u ran %llu steps", i,
                  (unsigned long long)c->nsteps);
  }
  for (uint32_t s = 0; s < STEPS_WANTED; s++)
    for (uint32_t i = 1; i < PEERS; i++)
      cr_assert_eq(w.c[i].hashes[s], w.c[0].hashes[s],
                   "peer %u's hash differs at step %u", i, s);
  gk_server_config_free(&cfg);
}
