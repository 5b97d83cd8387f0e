/* gk_bot_light.c: gk-bot --light (see gk_bot_light.h).
 *
 * The story of one light player: its room's player 0 connects (on a shared
 * ENet host) and creates the room; the others connect and join once the
 * code is back; player 0 starts the match. A player the server has not
 * admitted yet (no ROOM_CREATED or JOINED) gives an attempt up after
 * CONNECT_WAIT_NS without an answer, or when ENet ends it, and connects
 * again on a fresh connection after a pause that doubles from
 * CONNECT_BACKOFF_NS, at most CONNECT_TRIES times (a connect burst at
 * 768+ rooms lost datagrams in the kernel, and ENet's handshake backed
 * off until its timeout). From MATCH_START on, each player is a peer
 * engine without simulation (gk_net_peer, options.no_sim): the engine
 * does the whole client protocol, as for the full bot (the sampling
 * schedule and its lockstep bound, INPUT with every unacknowledged record
 * and the acknowledgement of the confirmed steps, CONFIRMED, delay change
 * announcements and switches, MATCH_END, REMOVE_PLAYER); what is light
 * here is the rest: no simulation and no hashes, one timer (every
 * millisecond) that gives each player's engine its timeouts, and one ENet
 * host for many players. Inputs come from a seeded pattern (lsource).
 * The schedule is fixed from MATCH_START on (options.fixed_schedule: a
 * player held back by the bound or a late wake-up catches up at once when
 * it may, so one hiccup never shifts the rest of its match; that shift
 * made every later step late and capped the capacity the bench saw), and
 * rooms are spread over the step period (options.phase_*). Player 0 sends
 * END_MATCH once N steps are confirmed; a player is done once its engine
 * ended the match (MATCH_END heard and the last step confirmed, said so
 * with one last INPUT).
 */
#include "gk_bot_light.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_bot_link.h"
#include "gk_net_lobby.h"
#include "gk_net_peer.h"
#include "gk_net_wire.h"
#include "gk_rng.h"

#define WINDOW 128         /* steps an engine holds (records, sample times) */
#define PATTERN_STEPS 32   /* a pattern value is held this many steps */
#define LAT_MAX (1u << 22) /* latency samples over all players */
#define TICK_MS 1
#define CONNECT_TRIES 6                 /* connection attempts per player */
#define CONNECT_WAIT_NS 5000000000ull   /* an attempt's answer, at most */
#define CONNECT_BACKOFF_NS 250000000ull /* before the second attempt */
#define CONNECT_BACKOFF_MAX_NS 2000000000ull /* doubling up to this */

typedef struct lbot lbot;
typedef struct lroom lroom;
typedef struct lplayer lplayer;

/* A host is one link: an ENet host, or a WebSocket client whose players
 * each have a TCP connection (--ws). */

typedef struct lhost {
  lbot *b;
  gk_bot_link tr;
  int open;
  lplayer *by_conn[GK_BOT_LIGHT_HOST_PEERS];
} lhost;

/* A light player's input: bytes 0 and 1 of each record from its
 * splitmix64 stream, a new value every PATTERN_STEPS steps from the first
 * step it samples; every other byte 0 (no button is ever pressed). */
typedef struct lsource {
  gk_input base; /* must be first: the engine's options.source */
  uint64_t rng, pattern;
  uint8_t rec[GK_INPUT_SIZE_MAX];
} lsource;

struct lplayer {
  lroom *room;
  uint32_t index; /* in the room; 0 creates, starts and ends */
  lhost *host;
  uint32_t conn;
  int connected, joined, done;
  int attempting;      /* a connection is open or being opened */
  uint32_t tries;      /* connection attempts made */
  uint64_t attempt_ns; /* attempting: its start; else the next one's */
  gk_net_peer peer;    /* the client protocol, no simulation */
  int peer_open;
  uint64_t due_ns; /* the engine's poll_timeout, as of its last call */
  lsource src;
};

struct lroom {
  lbot *b;
  uint32_t index;
  lplayer *pl;
  gk_net_lobby lobby; /* create, join, start */
  int end_sent, failed, done;
  char error[160];
  uint64_t desyncs;
};

struct lbot {
  gk_bot_light_options o;
  lroom *room;
  lhost *hosts;
  uint32_t nhosts;
  uv_timer_t tick, timeout;
  int finished, timed_out;
  uint32_t rooms_done;
  uint64_t connect_retries; /* attempts after a first one */
  int exit_status;
};

/* --- sending -------------------------------------------------------------- */

static int send_msg(lplayer *p, const gk_wire_msg *m) {
  return gk_net_peer_send_msg(&p->peer, uv_hrtime(), m);
}

static void send_simple(lplayer *p, gk_wire_type type) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = type;
  if (type == GK_MSG_END_MATCH) m.u.end_reason = GK_WIRE_END_HOST;
  send_msg(p, &m);
}

/* --- rooms ---------------------------------------------------------------- */

static void finish(lbot *b);

static void room_done(lroom *r) {
  if (r->done) return;
  r->done = 1;
  if (++r->b->rooms_done == r->b->o.rooms) finish(r->b);
}

/* A long detail (a REDIRECT's address) is cut to fit r->error: the
 * summary's error is for a reader, and says which room failed anyway. */
static void room_fail(lroom *r, const char *what, const char *detail) {
  if (!r->failed &&
      snprintf(r->error, sizeof r->error, "%s%s%s", what, detail ? ": " : "",
               detail ? detail : "") >= (int)sizeof r->error)
    r->error[sizeof r->error - 2] = '~'; /* says it was cut */
  r->failed = 1;
  room_done(r);
}

static void player_done(lplayer *p) {
  if (p->done) return;
  p->done = 1; /* the engine sent the acknowledgement of the last step */
  lroom *r = p->room;
  for (uint32_t i = 0; i < r->b->o.players; i++)
    if (!r->pl[i].done) return;
  room_done(r);
}

static void connect_player(lplayer *p) {
  lbot *b = p->room->b;
  int rc = gk_bot_link_connect(&p->host->tr, &p->conn);
  uint32_t slot = gk_bot_link_slot(&p->host->tr, p->conn);
  if (rc == 0 && slot < GK_BOT_LIGHT_HOST_PEERS) {
    p->host->by_conn[slot] = p;
    p->attempting = 1;
    p->attempt_ns = uv_hrtime();
    if (p->tries++ > 0) b->connect_retries++;
  } else {
    room_fail(p->room, "cannot connect", gk_strerror(rc ? rc : GK_EFULL));
  }
}

/* A connection that ended (or is given up) before the server answered the
 * player's request (ROOM_CREATED, JOINED): as a real client does, try
 * again on a fresh connection after a pause (250 ms, doubling up to 2 s),
 * up to CONNECT_TRIES attempts. Under a burst of connects the kernel drops
 * datagrams, and ENet's handshake and first reliable message back off
 * (500 ms, doubling) until its peer timeout ends the attempt: one lost
 * exchange must not cost the room. The pause grows because an abandoned
 * attempt may live on at the server for a while (its VERIFY_CONNECT
 * repeats end a new attempt made on the same ENet peer slot, which ENet
 * hands out again first). Returns 1 if another attempt is due. */
static int retry_later(lplayer *p) {
  lbot *b = p->room->b;
  p->attempting = 0;
  if (p->joined || b->finished || p->room->failed || p->tries >= CONNECT_TRIES)
    return 0;
  uint64_t pause = CONNECT_BACKOFF_NS << (p->tries - 1);
  if (pause > CONNECT_BACKOFF_MAX_NS) pause = CONNECT_BACKOFF_MAX_NS;
  p->attempt_ns = uv_hrtime() + pause;
  return 1;
}

/* Every tick, for a player not yet admitted: start the attempt that is
 * due, or give up on one that got no answer in CONNECT_WAIT_NS (dropped
 * at once: the disconnect callback schedules the next one). */
static void check_connect(lplayer *p, uint64_t now) {
  if (p->attempting) {
    if (now - p->attempt_ns >= CONNECT_WAIT_NS)
      gk_bot_link_disconnect(&p->host->tr, p->conn, 1);
  } else if (p->tries > 0 && now >= p->attempt_ns) {
    connect_player(p);
  }
}

/* --- the match: the engine's callbacks -------------------------------------
 */

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  lplayer *p = ctx;
  if (!p->connected) return GK_ENOTFOUND;
  return gk_bot_link_send(&p->host->tr, p->conn, bytes, len, reliable);
}

static void peer_started(void *ctx, gk_net_peer *np) {
  lplayer *p = ctx;
  if (np->match.players != p->room->b->o.players) {
    gk_net_peer_stop(np);
    room_fail(p->room, "unexpected match start", np->match.genre);
  }
}

/* A confirmed step: player 0 ends the match once N are confirmed. */
static void peer_step(void *ctx, gk_net_peer *np, const gk_step_input *in,
                      uint64_t hash) {
  lplayer *p = ctx;
  lroom *r = p->room;
  (void)np;
  (void)hash;
  if (p->index == 0 && !r->end_sent && in->step + 1 >= r->b->o.steps) {
    r->end_sent = 1;
    send_simple(p, GK_MSG_END_MATCH);
  }
}

static void peer_desync(void *ctx, gk_net_peer *np, const gk_wire_desync *d) {
  (void)np;
  (void)d;
  ((lplayer *)ctx)->room->desyncs++;
}

static void peer_ended(void *ctx, gk_net_peer *np, uint64_t step, int reason) {
  lplayer *p = ctx;
  (void)np;
  (void)step;
  if (reason == GK_WIRE_END_REMOVED || reason == GK_WIRE_END_SHUTDOWN)
    room_fail(p->room, "match ended", gk_wire_end_name(reason));
  else
    player_done(p);
}

/* What the engine leaves to its owner: the room's setup (gk_net_lobby:
 * once the room exists the others connect; once all are in, player 0
 * starts the match) and errors. */
static void peer_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m) {
  lplayer *p = ctx;
  lroom *r = p->room;
  (void)np;
  if (m->type == GK_MSG_REDIRECT) { /* its rooms are made at --server */
    room_fail(r, "unexpected REDIRECT (--light has no --join)",
              m->u.redirect.enet);
    return;
  }
  switch (gk_net_lobby_on_msg(&r->lobby, p->index, m)) {
  case GK_NET_LOBBY_CREATED:
    p->joined = 1;
    for (uint32_t i = 1; i < r->b->o.players; i++) connect_player(&r->pl[i]);
    break;
  case GK_NET_LOBBY_JOINED:
    p->joined = 1;
    break;
  case GK_NET_LOBBY_ERROR:
    room_fail(r, "server error", gk_net_lobby_error_text(&m->u.error));
    return;
  case GK_NET_LOBBY_SHUTDOWN:
    room_fail(r, "the server is shutting down", NULL);
    return;
  default: /* STALL and the rest: nothing to do */
    return;
  }
  gk_wire_msg s;
  if (gk_net_lobby_start(&r->lobby, &s)) send_msg(&r->pl[0], &s);
}

/* A datagram for a player's engine. A MATCH_START it cannot take fails
 * the room (anything else it drops is counted in its stats). */
static void player_receive(lplayer *p, const uint8_t *bytes, size_t len) {
  int was = p->peer.started;
  int rc = gk_net_peer_handle(&p->peer, uv_hrtime(), bytes, len);
  p->due_ns = gk_net_peer_poll_timeout(&p->peer); /* it may have moved */
  if (rc != 0 && !was && len >= 2 && bytes[1] == GK_MSG_MATCH_START)
    room_fail(p->room, "unexpected match start", gk_strerror(rc));
}

/* The pattern source (lsource): the record of `step`. */
static int src_read(gk_input *in, uint64_t step, gk_step_input *out) {
  lsource *s = (lsource *)in;
  lplayer *p = (lplayer *)((char *)s - offsetof(lplayer, src));
  uint32_t isz = p->room->b->o.sim->input_size;
  if ((step - p->peer.sched.first) % PATTERN_STEPS == 0)
    s->pattern = gk_splitmix64(&s->rng);
  memset(s->rec, 0, isz);
  s->rec[0] = (uint8_t)s->pattern;
  if (isz > 1) s->rec[1] = (uint8_t)(s->pattern >> 8);
  *out = (gk_step_input){.step = step, .players = 1, .inputs = s->rec};
  return 0;
}

/* Every millisecond: each started player's engine at its deadline (it
 * samples what is due within the bound and sends its INPUT), and each
 * player not admitted yet its connection attempts. */
static void on_tick(uv_timer_t *t) {
  lbot *b = t->data;
  uint64_t now = uv_hrtime();
  for (uint32_t i = 0; i < b->o.rooms; i++) {
    lroom *r = &b->room[i];
    if (r->done) continue;
    for (uint32_t j = 0; j < b->o.players; j++) {
      lplayer *p = &r->pl[j];
      if (p->peer.started) {
        if (now >= p->due_ns)
          p->due_ns = gk_net_peer_handle_timeout(&p->peer, now);
      } else if (!p->joined && p->tries > 0) {
        check_connect(p, now);
      }
    }
  }
}

/* --- transport callbacks -------------------------------------------------- */

static lplayer *player_of(lhost *h, uint32_t conn) {
  uint32_t slot = gk_bot_link_slot(&h->tr, conn);
  lplayer *p = slot < GK_BOT_LIGHT_HOST_PEERS ? h->by_conn[slot] : NULL;
  return p != NULL && p->conn == conn ? p : NULL; /* not a stale id */
}

static void tr_receive(void *ctx, gk_bot_link *t, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  (void)t;
  lplayer *p = player_of(ctx, conn);
  if (p == NULL || p->room->b->finished) return;
  player_receive(p, bytes, len);
}

static void tr_connect(void *ctx, gk_bot_link *t, uint32_t conn) {
  (void)t;
  lplayer *p = player_of(ctx, conn);
  if (p == NULL) return;
  p->connected = 1;
  gk_wire_msg m; /* CREATE_ROOM or JOIN_ROOM */
  if (gk_net_lobby_request(&p->room->lobby, p->index, &m) == 0) send_msg(p, &m);
}

static void tr_disconnect(void *ctx, gk_bot_link *t, uint32_t conn,
                          const char *why) {
  lplayer *p = player_of(ctx, conn);
  if (p == NULL) return;
  p->connected = 0;
  ((lhost *)ctx)->by_conn[gk_bot_link_slot(t, conn)] = NULL;
  if (retry_later(p) || p->done || p->room->b->finished) return;
  if (p->joined) {
    room_fail(p->room, "a player was disconnected", why);
  } else {
    char n[120]; /* what fits the room's error after the sentence */
    snprintf(n, sizeof n, "%u attempts, the last: %s", p->tries, why);
    room_fail(p->room, "a player's connection got no answer", n);
  }
}

/* --- the end -------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

void gk_bot_add_latency(cJSON *out, uint32_t *lat, uint64_t n) {
  gk_bot_add_pcts(out, "confirm_latency_us", lat, n);
}

void gk_bot_add_pcts(cJSON *out, const char *key, uint32_t *lat, uint64_t n) {
  cJSON *cl = cJSON_AddObjectToObject(out, key);
  if (lat == NULL || n == 0) {
    cJSON_AddNullToObject(cl, "p50");
    cJSON_AddNullToObject(cl, "p99");
    cJSON_AddNumberToObject(cl, "samples", 0);
    return;
  }
  qsort(lat, n, sizeof *lat, cmp_u32);
  uint64_t r50 = (n * 50 + 99) / 100, r99 = (n * 99 + 99) / 100;
  cJSON_AddNumberToObject(cl, "p50", lat[r50 ? r50 - 1 : 0]);
  cJSON_AddNumberToObject(cl, "p99", lat[r99 ? r99 - 1 : 0]);
  cJSON_AddNumberToObject(cl, "samples", (double)n);
}

void gk_bot_print_summary(cJSON *out) {
  char *text = cJSON_PrintUnformatted(out);
  if (text) {
    printf("%s\n", text);
    fflush(stdout);
    cJSON_free(text);
  }
  cJSON_Delete(out);
}

/* A player's input delays as the server's match_end input_delays:
 * "step:delay,..." (the start and every switch its engine made). */
static void delays_text(const gk_net_peer *np, char *out, size_t cap) {
  size_t n = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < np->ndelays && n < cap; i++) {
    int w = snprintf(out + n, cap - n, "%s%llu:%u", i ? "," : "",
                     (unsigned long long)np->delays[i].step,
                     (unsigned)np->delays[i].delay);
    if (w < 0) break;
    n += (size_t)w;
  }
}

/* One room's entry of room_results (each player's delays must agree). */
static cJSON *room_result(const lroom *r) {
  char d0[GK_NET_PEER_DELAYS_MAX * 32], dj[sizeof d0];
  cJSON *ro = cJSON_CreateObject();
  cJSON_AddStringToObject(ro, "code", r->lobby.created ? r->lobby.code : "");
  cJSON_AddNumberToObject(ro, "steps", (double)r->pl[0].peer.inbuf.confirmed);
  cJSON_AddNumberToObject(ro, "desyncs", (double)r->desyncs);
  delays_text(&r->pl[0].peer, d0, sizeof d0);
  cJSON_AddStringToObject(ro, "input_delays", d0);
  int agree = 1;
  for (uint32_t j = 1; j < r->b->o.players; j++) {
    delays_text(&r->pl[j].peer, dj, sizeof dj);
    agree &= strcmp(dj, d0) == 0;
  }
  cJSON_AddBoolToObject(ro, "input_delays_agree", agree);
  if (r->failed || !r->done)
    cJSON_AddStringToObject(ro, "error",
                            r->failed ? r->error : "did not finish");
  return ro;
}

/* Every player's confirm latency samples, in one array for the summary. */
static void add_latency(lbot *b, cJSON *out) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < b->o.rooms; i++)
    for (uint32_t j = 0; j < b->o.players; j++)
      n += b->room[i].pl[j].peer.nlatency;
  uint32_t *lat = n ? malloc(n * sizeof *lat) : NULL;
  uint64_t k = 0;
  for (uint32_t i = 0; lat && i < b->o.rooms; i++)
    for (uint32_t j = 0; j < b->o.players; j++) {
      const gk_net_peer *np = &b->room[i].pl[j].peer;
      memcpy(lat + k, np->latency_us, np->nlatency * sizeof *lat);
      k += np->nlatency;
    }
  gk_bot_add_latency(out, lat, k);
  free(lat);
}

/* Prints the summary; returns the exit status it implies. */
static int print_summary(lbot *b) {
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "mode", "light");
  cJSON_AddStringToObject(out, "genre", b->o.sim->name);
  cJSON_AddNumberToObject(out, "rooms", b->o.rooms);
  cJSON_AddNumberToObject(out, "players", b->o.players);
  cJSON_AddNumberToObject(out, "steps_requested", (double)b->o.steps);
  cJSON *rooms = cJSON_AddArrayToObject(out, "room_results");
  uint64_t completed = 0, failed = 0, desyncs = 0;
  for (uint32_t i = 0; i < b->o.rooms; i++) {
    lroom *r = &b->room[i];
    if (r->failed || !r->done)
      failed++;
    else
      completed++;
    desyncs += r->desyncs;
    cJSON_AddItemToArray(rooms, room_result(r));
  }
  cJSON_AddNumberToObject(out, "rooms_completed", (double)completed);
  cJSON_AddNumberToObject(out, "rooms_failed", (double)failed);
  cJSON_AddNumberToObject(out, "desyncs", (double)desyncs);
  cJSON_AddNumberToObject(out, "server_desyncs", (double)desyncs);
  cJSON_AddNumberToObject(out, "peer_mismatches", 0);
  cJSON_AddNumberToObject(out, "connect_retries", (double)b->connect_retries);
  add_latency(b, out);
  cJSON_AddBoolToObject(out, "timed_out", b->timed_out);
  gk_bot_print_summary(out);
  return desyncs ? 1 : failed ? 3 : 0;
}

static void on_closed(uv_handle_t *h) {
  (void)h;
}

static void on_tr_closed(gk_bot_link *t) {
  (void)t;
}

static void finish(lbot *b) {
  if (b->finished) return;
  b->finished = 1;
  b->exit_status = print_summary(b);
  uv_close((uv_handle_t *)&b->tick, on_closed);
  uv_close((uv_handle_t *)&b->timeout, on_closed);
  for (uint32_t i = 0; i < b->nhosts; i++)
    if (b->hosts[i].open) gk_bot_link_close(&b->hosts[i].tr, on_tr_closed);
}

static void on_timeout(uv_timer_t *t) {
  lbot *b = t->data;
  b->timed_out = 1;
  for (uint32_t i = 0; i < b->o.rooms && !b->finished; i++)
    if (!b->room[i].done) room_fail(&b->room[i], "timed out", NULL);
}

/* --- set up --------------------------------------------------------------- */

/* Players per room over WebSocket (the last ones of each room). */
static uint32_t ws_per_room(const lbot *b) {
  if (b->o.ws_url == NULL) return 0;
  return b->o.ws_players ? b->o.ws_players : b->o.players;
}

/* The host of player j of room i: ENet hosts first, then WebSocket
 * clients, GK_BOT_LIGHT_HOST_PEERS players each. */
static lhost *host_of(lbot *b, uint32_t i, uint32_t j) {
  uint32_t ws = ws_per_room(b), en = b->o.players - ws;
  uint32_t nen =
      (uint32_t)(((uint64_t)b->o.rooms * en + GK_BOT_LIGHT_HOST_PEERS - 1) /
                 GK_BOT_LIGHT_HOST_PEERS);
  if (j < en)
    return &b->hosts[((uint64_t)i * en + j) / GK_BOT_LIGHT_HOST_PEERS];
  return &b->hosts[nen +
                   ((uint64_t)i * ws + (j - en)) / GK_BOT_LIGHT_HOST_PEERS];
}

static int open_hosts(lbot *b) {
  uint64_t ws = (uint64_t)b->o.rooms * ws_per_room(b);
  uint64_t en = (uint64_t)b->o.rooms * b->o.players - ws;
  uint32_t nen =
      (uint32_t)((en + GK_BOT_LIGHT_HOST_PEERS - 1) / GK_BOT_LIGHT_HOST_PEERS);
  b->nhosts = nen + (uint32_t)((ws + GK_BOT_LIGHT_HOST_PEERS - 1) /
                               GK_BOT_LIGHT_HOST_PEERS);
  b->hosts = calloc(b->nhosts, sizeof *b->hosts);
  if (b->hosts == NULL) return GK_ENOMEM;
  for (uint32_t i = 0; i < b->nhosts; i++) {
    lhost *h = &b->hosts[i];
    gk_bot_link_options lo = {.ws_url = i < nen ? NULL : b->o.ws_url,
                              .host = b->o.host,
                              .port = b->o.port,
                              .max_conns = GK_BOT_LIGHT_HOST_PEERS,
                              .timeout_ms = 10000};
    gk_bot_link_callbacks lc = {h, tr_receive, tr_connect, tr_disconnect};
    h->b = b;
    char err[256];
    int rc = gk_bot_link_init(&h->tr, b->o.loop, &lo, &lc, err, sizeof err);
    if (rc != 0) return rc;
    h->open = 1;
  }
  return 0;
}

/* Player g of the run (room-major): its engine, with no simulation, the
 * pattern source, the fixed schedule and its room's phase of the step
 * period, and latency samples for its share of LAT_MAX. */
static int open_player(lbot *b, lroom *r, lplayer *p, uint32_t j) {
  uint64_t g = (uint64_t)r->index * b->o.players + j;
  uint64_t share = LAT_MAX / ((uint64_t)b->o.rooms * b->o.players);
  p->room = r;
  p->index = j;
  p->host = host_of(b, r->index, j);
  p->src.base.read = src_read;
  p->src.rng = b->o.seed ^ (g * 0x9e3779b97f4a7c15ull);
  gk_net_peer_options po;
  memset(&po, 0, sizeof po);
  po.source = &p->src.base;
  po.genres = (gk_net_peer_genres){.sims = &b->o.sim, .count = 1};
  po.window = WINDOW;
  po.latency_cap = (uint32_t)(share < b->o.steps ? share : b->o.steps);
  po.no_sim = 1;
  po.fixed_schedule = 1;
  po.phase_num = r->index;
  po.phase_den = b->o.rooms;
  gk_net_peer_callbacks pc = {.ctx = p,
                              .send = peer_send,
                              .started = peer_started,
                              .step = peer_step,
                              .desync = peer_desync,
                              .ended = peer_ended,
                              .message = peer_message};
  int rc = gk_net_peer_init(&p->peer, &po, &pc);
  if (rc == 0) p->peer_open = 1;
  return rc;
}

static int open_rooms(lbot *b) {
  b->room = calloc(b->o.rooms, sizeof *b->room);
  if (b->room == NULL) return GK_ENOMEM;
  for (uint32_t i = 0; i < b->o.rooms; i++) {
    lroom *r = &b->room[i];
    r->b = b;
    r->index = i;
    gk_net_lobby_room lr = {b->o.sim->name, b->o.players, b->o.input_delay,
                            b->o.options, 0};
    int rc = gk_net_lobby_init(&r->lobby, &lr);
    if (rc != 0) return rc;
    r->pl = calloc(b->o.players, sizeof *r->pl);
    if (r->pl == NULL) return GK_ENOMEM;
    for (uint32_t j = 0; j < b->o.players; j++) {
      rc = open_player(b, r, &r->pl[j], j);
      if (rc != 0) return rc;
    }
  }
  return 0;
}

static void free_all(lbot *b) {
  for (uint32_t i = 0; b->room && i < b->o.rooms; i++) {
    for (uint32_t j = 0; b->room[i].pl && j < b->o.players; j++)
      if (b->room[i].pl[j].peer_open) gk_net_peer_free(&b->room[i].pl[j].peer);
    free(b->room[i].pl);
  }
  free(b->room);
  free(b->hosts);
}

int gk_bot_light_run(const gk_bot_light_options *o) {
  if (o == NULL || o->loop == NULL || o->sim == NULL || o->host == NULL ||
      o->port == 0 || o->rooms == 0 || o->rooms > 4096 || o->players == 0 ||
      o->players > GK_PLAYERS_MAX || o->steps == 0)
    return 2;
  lbot *b = calloc(1, sizeof *b);
  if (b == NULL) return 3;
  b->o = *o;
  int rc = open_hosts(b);
  if (rc == 0) rc = open_rooms(b);
  if (rc != 0) {
    fprintf(stderr, "gk-bot --light: %s\n", gk_strerror(rc));
    for (uint32_t i = 0; i < b->nhosts; i++)
      if (b->hosts[i].open) gk_bot_link_close(&b->hosts[i].tr, NULL);
    uv_run(o->loop, UV_RUN_DEFAULT);
    free_all(b);
    free(b);
    return 3;
  }
  uv_timer_init(o->loop, &b->tick);
  uv_timer_init(o->loop, &b->timeout);
  b->tick.data = b->timeout.data = b;
  uv_timer_start(&b->tick, on_tick, TICK_MS, TICK_MS);
  uv_timer_start(&b->timeout, on_timeout, (uint64_t)o->timeout_s * 1000u, 0);
  for (uint32_t i = 0; i < o->rooms; i++) connect_player(&b->room[i].pl[0]);
  uv_run(o->loop, UV_RUN_DEFAULT);
  int status = b->exit_status;
  free_all(b);
  free(b);
  return status;
}
