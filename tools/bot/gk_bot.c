/* gk_bot.c: gk-bot, many headless lockstep peers in one process.
 *
 *   gk-bot --server HOST:PORT --genre G --rooms R --players P --steps N
 *          [--seed S] [--loss P] [--latency MS] [--options JSON]
 *          [--input-delay D] [--timeout SEC]
 *
 * What a load test or a smoke test needs: R rooms of P bot players each,
 * on one uv loop. Every player is a gk_net_peer with its own ENet client
 * (gk_net_transport, so the server sees one address per player) and the
 * genre's built-in bot as its input source. Per room: player 0 connects
 * and creates the room; once the code is back the others connect and join
 * it; when all have joined, player 0 starts the match; when player 0's loop
 * has run N steps it ends the match (END_MATCH), so the server finalises
 * the replay. With --loss/--latency every datagram goes through one
 * gk_net_fault relay in front of the server (both directions).
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

#include <cjson/cJSON.h>
#include <uv.h>

#include "gk_err.h"
#include "gk_genres.h"
#include "gk_net_fault.h"
#include "gk_net_peer.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_state_diff.h"

#include "gk_bot_light.h"

#define RING 4096 /* steps of hashes kept per room for cross-checks */

typedef struct bot bot;
typedef struct bot_room bot_room;

typedef struct bot_peer {
  bot *b;
  bot_room *room;
  uint32_t index; /* in the room; 0 creates and hosts */
  gk_net_transport tr;
  int tr_open;
  uint32_t conn;
  int connected;
  gk_net_peer peer;
  int peer_open;
  int joined;
  int ended;
  int end_reason;
  uint64_t desyncs; /* DESYNC notices about this peer */
  uint64_t steps;
  uint64_t last_hash;
  uint8_t held[GK_WIRE_MAX]; /* --chaos dup: the last INPUT sent */
  size_t held_len;
} bot_peer;

typedef struct ring_entry {
  uint64_t step;
  uint64_t hash;
  int set;
} ring_entry;

struct bot_room {
  bot *b;
  uint32_t index;
  bot_peer *peers;
  char code[GK_WIRE_CODE_LEN + 1];
  int created, start_sent, end_sent, done, failed;
  char error[160];
  uint64_t mismatches; /* players of this room that disagreed */
  uint64_t first_mismatch;
  ring_entry *ring;
};

struct bot {
  uv_loop_t *loop;
  const gk_sim *sim;
  const char *host;
  uint16_t port; /* the server's, or the relay's */
  uint32_t rooms, players;
  uint64_t steps;
  uint64_t seed;
  uint32_t input_delay;
  const char *options;
  double loss;
  uint32_t latency_ms;
  uint32_t timeout_s;
  bot_room *room;
  gk_net_fault fault;
  int fault_open;
  uv_timer_t timeout;
  uv_signal_t sigint;
  int finished;
  int timed_out;
  uint32_t rooms_done;
  int exit_status;
  int chaos_dup;        /* --chaos dup (a test option) */
  uint64_t chaos_extra; /* datagrams it sent twice or out of order */
  /* --perturb SLOT:STEP:PATH (a test option) */
  const char *perturb_path;
  uint32_t perturb_slot;
  uint64_t perturb_step;
  uint64_t perturbed;     /* rooms whose slot was perturbed */
  uint64_t perturb_minus; /* of them, by -1 (+1 would not read back) */
};

/* --- helpers ----------------------------------------------------------------
 */

/* Records the room's first failure: `what` and an optional detail. */
static void room_fail(bot_room *r, const char *what, const char *detail) {
  if (!r->failed) {
    snprintf(r->error, sizeof(r->error), "%s%s%s", what, detail ? ": " : "",
             detail ? detail : "");
    r->failed = 1;
  }
}

static void finish(bot *b);

static void room_check_done(bot_room *r) {
  if (r->done) return;
  int all = 1;
  for (uint32_t i = 0; i < r->b->players; i++)
    if (!r->peers[i].ended) all = 0;
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
  if (gk_net_transport_send(&p->tr, p->conn, bytes, len, reliable) == 0)
    p->b->chaos_extra++;
  if (p->held_len && gk_net_transport_send(&p->tr, p->conn, p->held,
                                           p->held_len, reliable) == 0)
    p->b->chaos_extra++;
  memcpy(p->held, bytes, len);
  p->held_len = len;
}

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  bot_peer *p = ctx;
  if (!p->connected) return GK_ENOTFOUND;
  int rc = gk_net_transport_send(&p->tr, p->conn, bytes, len, reliable);
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
  if (p->index == 0 && !r->end_sent && in->step + 1 >= r->b->steps) {
    gk_wire_msg m;
    memset(&m, 0, sizeof(m));
    m.type = GK_MSG_END_MATCH;
    m.u.end_reason = GK_WIRE_END_HOST;
    if (gk_net_peer_send_msg(&p->peer, &m) == 0) r->end_sent = 1;
  }
}

static void peer_desync(void *ctx, gk_net_peer *np, const gk_wire_desync *d) {
  bot_peer *p = ctx;
  (void)np;
  if (d->player < p->b->players)
    p->room->peers[d->player].desyncs++;
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
  gk_net_peer_stop(np);
  room_check_done(p->room);
}

static void connect_peer(bot_peer *p);

static void peer_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m) {
  bot_peer *p = ctx;
  bot_room *r = p->room;
  (void)np;
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    if (p->index != 0 || r->created) break;
    memcpy(r->code, m->u.room.code, sizeof(r->code));
    r->created = 1;
    p->joined = 1;
    for (uint32_t i = 1; i < p->b->players; i++) connect_peer(&r->peers[i]);
    break;
  case GK_MSG_JOINED:
    p->joined = 1;
    break;
  case GK_MSG_ERROR:
    room_fail(r, "server error", m->u.error.text);
    room_check_done(r);
    return;
  case GK_MSG_SHUTDOWN:
    room_fail(r, "the server is shutting down", NULL);
    return;
  default:
    break;
  }
  /* everyone is in: the host starts the match */
  if (r->created && !r->start_sent) {
    int all = 1;
    for (uint32_t i = 0; i < p->b->players; i++)
      if (!r->peers[i].joined) all = 0;
    if (all) {
      gk_wire_msg s;
      memset(&s, 0, sizeof(s));
      s.type = GK_MSG_START_MATCH;
      if (gk_net_peer_send_msg(&r->peers[0].peer, &s) == 0) r->start_sent = 1;
    }
  }
}

/* --- transport callbacks ----------------------------------------------------
 */

static void tr_receive(void *ctx, gk_net_transport *t, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  bot_peer *p = ctx;
  (void)t;
  (void)conn;
  if (p->peer_open) gk_net_peer_receive(&p->peer, bytes, len);
}

static void tr_connect(void *ctx, gk_net_transport *t, uint32_t conn) {
  bot_peer *p = ctx;
  (void)t;
  p->conn = conn;
  p->connected = 1;
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  if (p->index == 0) {
    m.type = GK_MSG_CREATE_ROOM;
    m.u.create_room.max_players = (uint8_t)p->b->players;
    m.u.create_room.input_delay = (uint8_t)p->b->input_delay;
    snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "%s",
             p->b->sim->name);
    snprintf(m.u.create_room.config, sizeof(m.u.create_room.config), "%s",
             p->b->options ? p->b->options : "");
  } else {
    m.type = GK_MSG_JOIN_ROOM;
    memcpy(m.u.room.code, p->room->code, sizeof(m.u.room.code));
  }
  gk_net_peer_send_msg(&p->peer, &m);
}

static void tr_disconnect(void *ctx, gk_net_transport *t, uint32_t conn) {
  bot_peer *p = ctx;
  (void)t;
  (void)conn;
  p->connected = 0;
  if (!p->ended && !p->b->finished) {
    room_fail(p->room, "a player was disconnected", NULL);
    room_check_done(p->room);
  }
}

static void connect_peer(bot_peer *p) {
  bot *b = p->b;
  gk_net_transport_options to;
  memset(&to, 0, sizeof(to));
  to.max_peers = 1;
  to.service_ms = 5;
  to.timeout_ms = 10000;
  gk_net_transport_callbacks tc = {p, tr_receive, tr_connect, tr_disconnect};
  int rc = gk_net_transport_init(&p->tr, b->loop, &to, &tc);
  if (rc == 0) {
    p->tr_open = 1;
    rc = gk_net_transport_connect(&p->tr, b->host, b->port, &p->conn);
  }
  if (rc) {
    room_fail(p->room, "cannot connect", gk_strerror(rc));
    room_check_done(p->room);
  }
}

/* --- end ---------------------------------------------------------------- */

static void on_closed_handle(uv_handle_t *h) {
  (void)h;
}
static void on_peer_closed(gk_net_peer *p) {
  (void)p;
}
static void on_tr_closed(gk_net_transport *t) {
  (void)t;
}
static void on_fault_closed(gk_net_fault *f) {
  (void)f;
}

static int hex_str(char *out, size_t cap, uint64_t v) {
  return snprintf(out, cap, "%016" PRIx64, v);
}

/* What finish adds up over the rooms. */
typedef struct bot_totals {
  uint64_t desyncs, mismatches, completed, failed;
  uint32_t *lat; /* every peer's confirm latencies, may be NULL */
  uint64_t nlat;
} bot_totals;

/* One room's entry of the summary; adds its counts to *t. */
static cJSON *room_summary(bot *b, bot_room *r, bot_totals *t) {
  cJSON *ro = cJSON_CreateObject();
  cJSON_AddStringToObject(ro, "code", r->created ? r->code : "");
  int agree = 1, ended = 1;
  uint64_t steps = r->peers[0].steps, hash = r->peers[0].last_hash;
  cJSON *hashes = cJSON_CreateArray();
  uint64_t room_desyncs = 0;
  char h[20];
  for (uint32_t j = 0; j < b->players; j++) {
    bot_peer *p = &r->peers[j];
    hex_str(h, sizeof(h), p->last_hash);
    cJSON_AddItemToArray(hashes, cJSON_CreateString(h));
    if (p->steps != steps || p->last_hash != hash) agree = 0;
    if (!p->ended) ended = 0;
    room_desyncs += p->desyncs;
    if (t->lat && p->peer_open)
      for (uint32_t k = 0; k < p->peer.nlatency; k++)
        t->lat[t->nlat++] = p->peer.latency_us[k];
  }
  hex_str(h, sizeof(h), hash);
  /* final hashes are comparable only when every player ran to the same
   * end; a room cut short (timeout, disconnect) is a failure, not a
   * desync. Step-by-step comparisons (r->mismatches) always count. */
  int comparable = ended && !r->failed;
  cJSON_AddNumberToObject(ro, "steps", (double)steps);
  cJSON_AddStringToObject(ro, "final_hash", h);
  cJSON_AddItemToObject(ro, "player_hashes", hashes);
  if (comparable)
    cJSON_AddBoolToObject(ro, "agree", agree && !r->mismatches);
  else
    cJSON_AddNullToObject(ro, "agree");
  cJSON_AddNumberToObject(ro, "desyncs", (double)room_desyncs);
  cJSON_AddNumberToObject(ro, "mismatches", (double)r->mismatches);
  if (r->mismatches)
    cJSON_AddNumberToObject(ro, "first_mismatch", (double)r->first_mismatch);
  cJSON_AddStringToObject(ro, "end_reason",
                          gk_wire_end_name(r->peers[0].end_reason));
  if (r->failed || !ended) {
    cJSON_AddStringToObject(ro, "error",
                            r->failed ? r->error : "did not finish");
    t->failed++;
  } else {
    t->completed++;
  }
  t->desyncs += room_desyncs;
  t->mismatches += r->mismatches + (comparable && !agree ? 1 : 0);
  return ro;
}

/* Prints the one JSON summary; returns the exit status it implies. */
static int print_summary(bot *b) {
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "genre", b->sim->name);
  cJSON_AddNumberToObject(out, "rooms", b->rooms);
  cJSON_AddNumberToObject(out, "players", b->players);
  cJSON_AddNumberToObject(out, "steps_requested", (double)b->steps);
  cJSON *rooms = cJSON_AddArrayToObject(out, "room_results");
  bot_totals t;
  memset(&t, 0, sizeof(t));
  uint64_t nlat = 0;
  for (uint32_t i = 0; i < b->rooms; i++)
    for (uint32_t j = 0; j < b->players; j++)
      nlat +=
          b->room[i].peers[j].peer_open ? b->room[i].peers[j].peer.nlatency : 0;
  t.lat = malloc((nlat ? nlat : 1) * sizeof(*t.lat));
  for (uint32_t i = 0; i < b->rooms; i++)
    cJSON_AddItemToArray(rooms, room_summary(b, &b->room[i], &t));
  cJSON_AddNumberToObject(out, "rooms_completed", (double)t.completed);
  cJSON_AddNumberToObject(out, "rooms_failed", (double)t.failed);
  cJSON_AddNumberToObject(out, "desyncs", (double)(t.desyncs + t.mismatches));
  cJSON_AddNumberToObject(out, "server_desyncs", (double)t.desyncs);
  cJSON_AddNumberToObject(out, "peer_mismatches", (double)t.mismatches);
  if (b->perturb_path != NULL) {
    cJSON_AddNumberToObject(out, "perturbed_rooms", (double)b->perturbed);
    cJSON_AddNumberToObject(out, "perturbed_by_minus_one",
                            (double)b->perturb_minus);
  }
  if (b->chaos_dup)
    cJSON_AddNumberToObject(out, "chaos_extra_datagrams",
                            (double)b->chaos_extra);
  gk_bot_add_latency(out, t.lat, t.nlat);
  free(t.lat);
  if (b->fault_open) {
    cJSON *f = cJSON_AddObjectToObject(out, "faults");
    cJSON_AddNumberToObject(f, "datagrams", (double)b->fault.stats.in);
    cJSON_AddNumberToObject(f, "lost", (double)b->fault.stats.lost);
    cJSON_AddNumberToObject(f, "forwarded", (double)b->fault.stats.forwarded);
  }
  cJSON_AddBoolToObject(out, "timed_out", b->timed_out);
  gk_bot_print_summary(out);
  return t.desyncs + t.mismatches ? 1 : t.failed ? 3 : 0;
}

/* Prints the summary and closes every handle (uv_run then returns). */
static void finish(bot *b) {
  if (b->finished) return;
  b->finished = 1;
  b->exit_status = print_summary(b);
  uv_timer_stop(&b->timeout);
  uv_close((uv_handle_t *)&b->timeout, on_closed_handle);
  uv_close((uv_handle_t *)&b->sigint, on_closed_handle);
  for (uint32_t i = 0; i < b->rooms; i++) {
    for (uint32_t j = 0; j < b->players; j++) {
      bot_peer *p = &b->room[i].peers[j];
      if (p->peer_open) gk_net_peer_close(&p->peer, on_peer_closed);
      if (p->tr_open) gk_net_transport_close(&p->tr, on_tr_closed);
    }
  }
  if (b->fault_open) gk_net_fault_close(&b->fault, on_fault_closed);
}

static void on_timeout(uv_timer_t *t) {
  bot *b = t->data;
  b->timed_out = 1;
  for (uint32_t i = 0; i < b->rooms; i++)
    if (!b->room[i].done) room_fail(&b->room[i], "timed out", NULL);
  finish(b);
}

static void on_sigint(uv_signal_t *h, int sig) {
  (void)sig;
  on_timeout((uv_timer_t *)&((bot *)h->data)->timeout);
}

/* --- command line -----------------------------------------------------------
 */

static void usage(FILE *f) {
  fprintf(f,
          "usage: gk-bot --server HOST:PORT --genre G --rooms R --players P\n"
          "              --steps N [--seed S] [--loss P] [--latency MS]\n"
          "              [--options JSON] [--input-delay D] [--timeout SEC]\n"
          "\n"
          "Plays R rooms of P bot players each against a gk-server, N steps\n"
          "per match, then the host of each room ends its match. Prints one\n"
          "JSON summary. Exit 0 if every room finished and every hash agreed,\n"
          "1 on a desync, 2 on a usage error, 3 if a room failed.\n"
          "\n"
          "  --loss P        datagram loss each way, 0..1 (0.05 = 5%%)\n"
          "  --latency MS    added delay each way\n"
          "  --options JSON  genre options for every room (a JSON object)\n"
          "  --input-delay D steps (0: the server's default)\n"
          "  --light         many players per ENet host, no simulation,\n"
          "                  seeded inputs, no hash reports (load tests)\n"
          "  --timeout SEC   give up after this long (default 60 + N / 20)\n"
          "  --chaos dup     (tests) each room's last player sends every\n"
          "                  INPUT twice and the one before it again\n"
          "  --perturb SLOT:STEP:PATH  (tests) after step STEP, player SLOT\n"
          "                  of every room adds 1 to the state field PATH\n"
          "                  (e.g. players[0].health; -1 if +1 is out of\n"
          "                  the field's range): a desync on purpose\n");
}

/* A decimal number up to max (gk_parse_u64: digits only). 0 or -1. */
static int parse_num(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (gk_parse_u64(s, &v) != 0 || v > max) return -1;
  *out = v;
  return 0;
}

/* "SLOT:STEP:PATH" into b. Returns 0 or 1 (bad value). */
static int parse_perturb(const char *v, bot *b) {
  char *end = NULL;
  unsigned long slot = strtoul(v, &end, 10);
  if (end == v || *end != ':' || slot >= GK_PLAYERS_MAX) return 1;
  const char *s = end + 1;
  unsigned long long step = strtoull(s, &end, 10);
  if (end == s || *end != ':' || end[1] == '\0' ||
      strlen(end + 1) >= GK_PATH_MAX || step >= GK_WIRE_STEP_LIMIT)
    return 1;
  b->perturb_slot = (uint32_t)slot;
  b->perturb_step = step;
  b->perturb_path = end + 1;
  return 0;
}

/* The command line, before it is checked as a whole. */
typedef struct bot_args {
  const char *server, *genre;
  uint64_t rooms, players, steps, seed, delay, latency, timeout;
  int have_rooms, have_players, have_steps;
  int light; /* --light: gk_bot_light.c plays instead */
} bot_args;

/* Reads one "--name value" pair into a / b. Returns 0, 1 for a bad value,
 * or -1 for an unknown option. */
static int parse_opt(const char *o, const char *v, bot_args *a, bot *b) {
  if (strcmp(o, "--server") == 0)
    a->server = v;
  else if (strcmp(o, "--genre") == 0)
    a->genre = v;
  else if (strcmp(o, "--rooms") == 0)
    return a->have_rooms = 1, parse_num(v, 4096, &a->rooms) != 0;
  else if (strcmp(o, "--players") == 0)
    return a->have_players = 1, parse_num(v, GK_PLAYERS_MAX, &a->players) != 0;
  else if (strcmp(o, "--steps") == 0)
    return a->have_steps = 1,
           parse_num(v, GK_WIRE_STEP_LIMIT - 1, &a->steps) != 0;
  else if (strcmp(o, "--seed") == 0)
    return parse_num(v, UINT64_MAX, &a->seed) != 0;
  else if (strcmp(o, "--input-delay") == 0)
    return parse_num(v, 60, &a->delay) != 0;
  else if (strcmp(o, "--latency") == 0)
    return parse_num(v, 10000, &a->latency) != 0;
  else if (strcmp(o, "--timeout") == 0)
    return parse_num(v, 86400, &a->timeout) != 0;
  else if (strcmp(o, "--options") == 0)
    b->options = v;
  else if (strcmp(o, "--chaos") == 0)
    return !(b->chaos_dup = strcmp(v, "dup") == 0);
  else if (strcmp(o, "--perturb") == 0)
    return parse_perturb(v, b);
  else if (strcmp(o, "--loss") == 0) {
    char *end = NULL;
    b->loss = strtod(v, &end);
    return *end || !(b->loss >= 0.0 && b->loss <= 1.0);
  } else
    return -1;
  return 0;
}

/* Parses argv into a and b. Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, bot_args *a, bot *b) {
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(o, "--light") == 0) { /* the one option without a value */
      a->light = 1;
      continue;
    }
    if (i + 1 >= argc || strncmp(o, "--", 2) != 0) {
      fprintf(stderr, "gk-bot: %s: %s\n", o,
              strncmp(o, "--", 2) ? "unexpected argument" : "needs a value");
      usage(stderr);
      return 2;
    }
    const char *v = argv[++i];
    int rc = parse_opt(o, v, a, b);
    if (rc < 0) {
      fprintf(stderr, "gk-bot: unknown option '%s'\n", o);
      usage(stderr);
      return 2;
    }
    if (rc > 0) {
      fprintf(stderr, "gk-bot: %s: bad value '%s'\n", o, v);
      return 2;
    }
  }
  if (!a->server || !a->genre || !a->have_rooms || !a->have_players ||
      !a->have_steps || a->rooms == 0 || a->players == 0 || a->steps == 0) {
    fprintf(stderr, "gk-bot: --server, --genre, --rooms, --players and "
                    "--steps are required (and non-zero)\n");
    usage(stderr);
    return 2;
  }
  return -1;
}

/* Checks the arguments as a whole and fills b. host (256 bytes) gets the
 * server's host name. Returns -1 to go on, else the exit status. */
static int check_args(const bot_args *a, bot *b, char *host) {
  const char *colon = strrchr(a->server, ':');
  uint64_t port = 0;
  if (!colon || colon == a->server || (size_t)(colon - a->server) >= 256 ||
      parse_num(colon + 1, 65535, &port) || port == 0) {
    fprintf(stderr, "gk-bot: --server must be HOST:PORT, got '%s'\n",
            a->server);
    return 2;
  }
  memcpy(host, a->server, (size_t)(colon - a->server));
  host[colon - a->server] = '\0';
  b->sim = gk_genre_find(a->genre);
  if (!b->sim) {
    fprintf(stderr, "gk-bot: unknown genre '%s'\n", a->genre);
    return 2;
  }
  if (a->players < b->sim->players_min || a->players > b->sim->players_max) {
    fprintf(stderr, "gk-bot: %s takes %u..%u players\n", a->genre,
            b->sim->players_min, b->sim->players_max);
    return 2;
  }
  if (b->perturb_path != NULL && b->perturb_slot >= a->players) {
    fprintf(stderr, "gk-bot: --perturb: slot %u of %u players\n",
            b->perturb_slot, (unsigned)a->players);
    return 2;
  }
  if (b->options && strlen(b->options) > GK_WIRE_CONFIG_MAX) {
    fprintf(stderr, "gk-bot: --options is longer than %d bytes\n",
            GK_WIRE_CONFIG_MAX);
    return 2;
  }
  b->host = host;
  b->port = (uint16_t)port;
  b->rooms = (uint32_t)a->rooms;
  b->players = (uint32_t)a->players;
  b->steps = a->steps;
  b->seed = a->seed;
  b->input_delay = (uint32_t)a->delay;
  b->latency_ms = (uint32_t)a->latency;
  b->timeout_s =
      a->timeout ? (uint32_t)a->timeout : (uint32_t)(60 + a->steps / 20);
  return -1;
}

/* With loss or latency, every bot talks to the server through a fault
 * relay on loopback. Returns 0 or a GK_E code. */
static int open_fault_relay(bot *b) {
  if (!(b->loss > 0.0 || b->latency_ms > 0)) return 0;
  gk_net_fault_options fo;
  memset(&fo, 0, sizeof(fo));
  fo.target_host = b->host;
  fo.target_port = b->port;
  fo.up.loss_ppm = fo.down.loss_ppm = (uint32_t)(b->loss * 1e6 + 0.5);
  fo.up.latency_ms = fo.down.latency_ms = b->latency_ms;
  fo.seed = b->seed;
  fo.max_clients = b->rooms * b->players;
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

/* Allocates the rooms and opens one peer engine per bot player. Returns
 * 0, or GK_ENOMEM / a peer's error code. */
static int open_rooms(bot *b) {
  b->room = calloc(b->rooms, sizeof(*b->room));
  if (!b->room) return GK_ENOMEM;
  for (uint32_t i = 0; i < b->rooms; i++) {
    bot_room *r = &b->room[i];
    r->b = b;
    r->index = i;
    r->peers = calloc(b->players, sizeof(*r->peers));
    r->ring = calloc(RING, sizeof(*r->ring));
    if (!r->peers || !r->ring) return GK_ENOMEM;
    for (uint32_t j = 0; j < b->players; j++) {
      bot_peer *p = &r->peers[j];
      p->b = b;
      p->room = r;
      p->index = j;
      gk_net_peer_options po;
      memset(&po, 0, sizeof(po));
      po.loop = b->loop;
      po.bot_seed = b->seed + i;
      gk_net_peer_callbacks pc;
      memset(&pc, 0, sizeof(pc));
      pc.ctx = p;
      pc.send = peer_send;
      pc.step = peer_step;
      pc.desync = peer_desync;
      pc.ended = peer_ended;
      pc.message = peer_message;
      int rc = gk_net_peer_init(&p->peer, &po, &pc);
      if (rc) return rc;
      p->peer_open = 1;
      if (b->perturb_path != NULL) /* perturb_now checks the slot */
        gk_net_peer_after_step(&p->peer, b->perturb_step, perturb_now, p);
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  bot b;
  memset(&b, 0, sizeof(b));
  bot_args a;
  memset(&a, 0, sizeof(a));
  a.seed = 1;
  static char host[256];
  int st = parse_args(argc, argv, &a, &b);
  if (st < 0) st = check_args(&a, &b, host);
  if (st >= 0) return st;
  uv_loop_t loop;
  uv_loop_init(&loop);
  b.loop = &loop;
  if (a.light) {
    if (b.loss > 0.0 || b.latency_ms > 0) {
      fprintf(stderr, "gk-bot: --light takes no --loss or --latency\n");
      return 2;
    }
    gk_bot_light_options lo = {&loop,         b.sim,     b.host,     b.port,
                               b.rooms,       b.players, b.steps,    b.seed,
                               b.input_delay, b.options, b.timeout_s};
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
  for (uint32_t i = 0; i < b.rooms; i++) connect_peer(&b.room[i].peers[0]);

  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  for (uint32_t i = 0; i < b.rooms; i++) {
    free(b.room[i].peers);
    free(b.room[i].ring);
  }
  free(b.room);
  return b.exit_status;
}
