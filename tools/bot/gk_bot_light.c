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
 * off until its timeout). From MATCH_START on, the one
 * sampling timer (every millisecond) gives each player a record for every
 * step whose deadline has passed, as far as the lockstep bound lets it
 * (step < confirmed + input_delay + lead), and sends one INPUT with every
 * record the server has not acknowledged and its acknowledgement of the
 * confirmed steps. The deadlines are fixed from MATCH_START on (step k at
 * start + phase + k periods): a player held back by the bound, or by a
 * late wake-up, catches up at once when it may, as a real client does,
 * so one hiccup never shifts the rest of its match (that shift made
 * every later step late and capped the capacity the bench saw). The
 * protocol arithmetic (the next sample's step, the lockstep bound, delay
 * change announcements and switches, the records of an INPUT) is the peer
 * engine's own (gk_net_sched.h); what is light here is the rest: no
 * simulation, no hashes, one timer and one ENet host for many players. A
 * CONFIRMED moves the player's contiguous confirmed step (the data itself is
 * not kept) and the server's acknowledgement of its records. Player 0 sends
 * END_MATCH once N steps are confirmed; a player is done once it heard
 * MATCH_END and holds the last step, and says so with one last INPUT.
 */
#include "gk_bot_light.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_net_sched.h"
#include "gk_bot_link.h"
#include "gk_net_wire.h"
#include "gk_rng.h"

#define RING 128         /* records and sample times kept per player */
#define PATTERN_STEPS 32 /* a pattern value is held this many steps */
#define LAT_MAX (1u << 22)
#define TICK_MS 1
#define CONNECT_TRIES 6                 /* connection attempts per player */
#define CONNECT_WAIT_NS 5000000000ull   /* an attempt's answer, at most */
#define CONNECT_BACKOFF_NS 250000000ull /* before the second attempt */
#define CONNECT_BACKOFF_MAX_NS 2000000000ull /* doubling up to this */

typedef struct lbot lbot;
typedef struct lroom lroom;
typedef struct lplayer lplayer;

/* A host is one link: an ENet host, or a WebSocket client whose players
 * each have a TCP connection (--ws). The match code sends with
 * gk_net_transport_send(&host->tr, ...): on a link that is the link's
 * send, whichever transport it runs on. */
#define gk_net_transport_send gk_bot_link_send

typedef struct lhost {
  lbot *b;
  gk_bot_link tr;
  int open;
  lplayer *by_conn[GK_BOT_LIGHT_HOST_PEERS];
} lhost;

struct lplayer {
  lroom *room;
  uint32_t index; /* in the room; 0 creates, starts and ends */
  lhost *host;
  uint32_t conn;
  int connected, joined, started, done;
  int attempting;      /* a connection is open or being opened */
  uint32_t tries;      /* connection attempts made */
  uint64_t attempt_ns; /* attempting: its start; else the next one's */

  int blocked;        /* the lockstep bound holds sampling back */
  uint64_t retry_ns;  /* blocked: the next INPUT (acknowledgements) */
  gk_net_sched sched; /* the next sample's step, the lockstep bound, delay
                         changes: the peer engine's own code */
  char delays[160];   /* "step:delay,...": the start and every switch made,
                         as the server's match_end input_delays */
  uint8_t slot;       /* from MATCH_START */
  uint64_t confirmed; /* every step below is confirmed (contiguous) */
  uint64_t acked;     /* the server holds my records below this */
  uint64_t end_step;  /* from MATCH_END, or UINT64_MAX */
  uint64_t next_ns;   /* next sampling deadline: t0_ns + sched.k periods */
  uint64_t t0_ns;     /* deadline 0 (uv_hrtime): never moves */
  uint64_t rng, pattern;
  uint8_t *rec; /* RING records */
  uint64_t sampled_ns[RING];
};

struct lroom {
  lbot *b;
  uint32_t index;
  lplayer *pl;
  char code[GK_WIRE_CODE_LEN + 1];
  int created, start_sent, end_sent, failed, done;
  char error[160];
  uint64_t desyncs;
  uint64_t step_ns, phase_ns;
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
  uint32_t *lat;
  uint64_t nlat;
  int exit_status;
  uint8_t buf[GK_WIRE_MAX];
};

/* --- sending -------------------------------------------------------------- */

static int send_msg(lplayer *p, const gk_wire_msg *m) {
  lbot *b = p->room->b;
  size_t len;
  if (!p->connected) return GK_ENOTFOUND;
  int rc = gk_wire_encode(m, b->buf, sizeof b->buf, &len);
  if (rc != 0) return rc;
  return gk_net_transport_send(&p->host->tr, p->conn, b->buf, len,
                               gk_wire_type_reliable((int)m->type));
}

static uint64_t next_step(const lplayer *p) {
  return gk_net_sched_next(&p->sched);
}

/* One INPUT: every record the server has not acknowledged (as many as
 * fit), and the acknowledgement of every confirmed step. No hashes. */
static void send_input(lplayer *p) {
  uint32_t isz = p->room->b->o.sim->input_size;
  uint8_t records[GK_WIRE_MAX];
  uint64_t from = 0;
  uint32_t n = gk_net_sched_records(&p->sched, p->acked, p->rec, RING, isz,
                                    gk_wire_input_fit(isz), records, &from);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = p->slot,
                              .input_size = (uint8_t)isz,
                              .count = (uint8_t)n,
                              .ack = p->confirmed,
                              .first = from,
                              .records = records};
  send_msg(p, &m);
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

static void room_fail(lroom *r, const char *what, const char *detail) {
  if (!r->failed)
    snprintf(r->error, sizeof r->error, "%s%s%s", what, detail ? ": " : "",
             detail ? detail : "");
  r->failed = 1;
  room_done(r);
}

static void player_done(lplayer *p) {
  if (p->done) return;
  p->done = 1;
  send_input(p); /* the acknowledgement of the last step */
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

/* Everyone joined: player 0 starts the match. */
static void maybe_start(lroom *r) {
  if (!r->created || r->start_sent) return;
  for (uint32_t i = 0; i < r->b->o.players; i++)
    if (!r->pl[i].joined) return;
  r->start_sent = 1;
  send_simple(&r->pl[0], GK_MSG_START_MATCH);
}

static void on_match_start(lplayer *p, const gk_wire_match_start *ms) {
  lroom *r = p->room;
  const gk_sim *sim = r->b->o.sim;
  if (p->started) return;
  if (strcmp(ms->genre, sim->name) != 0 || ms->first_step != 0 ||
      ms->players != r->b->o.players) {
    room_fail(r, "unexpected match start", ms->genre);
    return;
  }
  p->started = 1;
  p->slot = ms->slot;
  gk_net_sched_init(&p->sched, ms->first_step + ms->input_delay,
                    ms->input_delay, ms->lead);
  p->confirmed = p->acked = ms->first_step;
  snprintf(p->delays, sizeof p->delays, "%llu:%u",
           (unsigned long long)ms->first_step, (unsigned)ms->input_delay);
  r->step_ns =
      (uint64_t)ms->step_seconds.num * 1000000000u / ms->step_seconds.den;
  if (r->step_ns == 0) r->step_ns = 1;
  r->phase_ns = r->step_ns * r->index / r->b->o.rooms;
  p->t0_ns = p->next_ns = uv_hrtime() + r->phase_ns;
}

/* --- the match ------------------------------------------------------------ */

static void note_latency(lbot *b, const lplayer *p, uint64_t s, uint64_t now) {
  if (s < p->sched.first || s >= next_step(p) || b->nlat >= LAT_MAX ||
      p->sampled_ns[s % RING] == 0) /* a step the host held neutral */
    return;
  uint64_t us = (now - p->sampled_ns[s % RING]) / 1000u;
  b->lat[b->nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* A newly confirmed step `s` of `c` that announces an input delay change
 * (docs/PROTOCOL.md, "Input delay"): every engine switches at
 * S = s + D + lead, D the delay announced before. */
static void take_announcement(lplayer *p, const gk_wire_confirmed *c,
                              uint64_t s) {
  gk_step_input in;
  gk_wire_step_get(c, (uint32_t)(s - c->first), &in);
  gk_net_sched_announce(&p->sched, s, in.flags);
}

static void on_confirmed(lplayer *p, const gk_wire_confirmed *c) {
  lroom *r = p->room;
  lbot *b = r->b;
  if (!p->started || c->input_size != b->o.sim->input_size) return;
  if (c->ack > p->acked && c->ack <= next_step(p)) p->acked = c->ack;
  uint64_t end = c->first + c->count;
  if (c->first <= p->confirmed && end > p->confirmed) {
    uint64_t now = uv_hrtime();
    for (uint64_t s = p->confirmed; s < end; s++) {
      note_latency(b, p, s, now);
      take_announcement(p, c, s);
    }
    p->confirmed = end;
    if (p->blocked) {
      p->blocked = 0;
      p->retry_ns = 0; /* at the next tick, every step now due */
    }
  }
  if (p->index == 0 && !r->end_sent && p->confirmed >= b->o.steps) {
    r->end_sent = 1;
    send_simple(p, GK_MSG_END_MATCH);
  }
  if (p->done)
    send_input(p); /* repeated: our acknowledgement was lost */
  else if (p->end_step != UINT64_MAX && p->confirmed > p->end_step)
    player_done(p);
}

static void on_match_msg(lplayer *p, const gk_wire_msg *m) {
  switch (m->type) {
  case GK_MSG_CONFIRMED:
    on_confirmed(p, &m->u.confirmed);
    break;
  case GK_MSG_MATCH_END:
    if (m->u.match_end.reason == GK_WIRE_END_REMOVED ||
        m->u.match_end.reason == GK_WIRE_END_SHUTDOWN) {
      room_fail(p->room, "match ended",
                gk_wire_end_name(m->u.match_end.reason));
      return;
    }
    p->end_step = m->u.match_end.step;
    if (p->started && p->confirmed > p->end_step) player_done(p);
    break;
  case GK_MSG_DESYNC:
    p->room->desyncs++;
    break;
  case GK_MSG_REMOVE_PLAYER:
    if (p->started && m->u.remove.slot == p->slot)
      room_fail(p->room, "a player was removed", NULL);
    break;
  default: /* STALL and the rest: nothing to do */
    break;
  }
}

static void on_msg(lplayer *p, const gk_wire_msg *m) {
  lroom *r = p->room;
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    if (p->index != 0 || r->created) break;
    memcpy(r->code, m->u.room.code, sizeof r->code);
    r->created = 1;
    p->joined = 1;
    for (uint32_t i = 1; i < r->b->o.players; i++) connect_player(&r->pl[i]);
    maybe_start(r);
    break;
  case GK_MSG_JOINED:
    p->joined = 1;
    maybe_start(r);
    break;
  case GK_MSG_MATCH_START:
    on_match_start(p, &m->u.match_start);
    break;
  case GK_MSG_ERROR:
    room_fail(r, "server error", m->u.error.text);
    break;
  case GK_MSG_SHUTDOWN:
    room_fail(r, "the server is shutting down", NULL);
    break;
  default:
    on_match_msg(p, m);
    break;
  }
}

/* --- sampling --------------------------------------------------------------
 */

static int may_sample(const lplayer *p) {
  return gk_net_sched_may_sample(&p->sched, p->confirmed, p->acked, RING);
}

/* At a deadline whose step is the switch step of an announced change
 * (gk_net_sched_deadline): raising, the next sample skips the steps the
 * host holds neutral; lowering, D - D' deadlines pass unsampled (returns
 * 1: this deadline is used up), then the next sample is for S. */
static int delay_switch(lplayer *p) {
  gk_net_sched_event ev;
  int used = gk_net_sched_deadline(&p->sched, &ev);
  uint32_t isz = p->room->b->o.sim->input_size;
  for (uint64_t s = ev.held_from; s < ev.held_from + ev.held; s++) {
    memset(p->rec + (s % RING) * isz, 0, isz);
    p->sampled_ns[s % RING] = 0; /* held neutral: no latency */
  }
  if (ev.switched) {
    size_t n = strlen(p->delays);
    snprintf(p->delays + n, sizeof p->delays - n, ",%llu:%u",
             (unsigned long long)ev.at, (unsigned)ev.delay);
  }
  p->next_ns = p->t0_ns + p->sched.k * p->room->step_ns;
  return used;
}

/* A player's deadline passed: a record for every step now due, as far as
 * the bound lets it (the schedule never moves: a player held back catches
 * up), then one INPUT either way (acknowledgements keep flowing; while
 * blocked, one a period). */
static void sample(lplayer *p, uint64_t now) {
  lroom *r = p->room;
  uint32_t isz = r->b->o.sim->input_size;
  while (now >= p->next_ns) {
    if (delay_switch(p)) continue;
    if (!may_sample(p)) break;
    uint64_t s = next_step(p);
    if ((s - p->sched.first) % PATTERN_STEPS == 0)
      p->pattern = gk_splitmix64(&p->rng);
    uint8_t *dst = p->rec + (s % RING) * isz;
    memset(dst, 0, isz);
    dst[0] = (uint8_t)p->pattern;
    if (isz > 1) dst[1] = (uint8_t)(p->pattern >> 8);
    p->sampled_ns[s % RING] = now;
    p->sched.k++;
    p->next_ns += r->step_ns;
  }
  p->blocked = now >= p->next_ns;
  if (p->blocked) p->retry_ns = now + r->step_ns;
  send_input(p);
}

static void on_tick(uv_timer_t *t) {
  lbot *b = t->data;
  uint64_t now = uv_hrtime();
  for (uint32_t i = 0; i < b->o.rooms; i++) {
    lroom *r = &b->room[i];
    if (r->done) continue;
    for (uint32_t j = 0; j < b->o.players; j++) {
      lplayer *p = &r->pl[j];
      if (p->started && !p->done && now >= p->next_ns && now >= p->retry_ns)
        sample(p, now);
      else if (!p->joined && p->tries > 0)
        check_connect(p, now);
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
  gk_wire_msg m;
  if (p == NULL || p->room->b->finished) return;
  if (gk_wire_decode(bytes, len, &m) == 0) on_msg(p, &m);
}

static void tr_connect(void *ctx, gk_bot_link *t, uint32_t conn) {
  (void)t;
  lplayer *p = player_of(ctx, conn);
  if (p == NULL) return;
  lbot *b = p->room->b;
  p->connected = 1;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  if (p->index == 0) {
    m.type = GK_MSG_CREATE_ROOM;
    m.u.create_room.max_players = (uint8_t)b->o.players;
    m.u.create_room.input_delay = (uint8_t)b->o.input_delay;
    snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "%s",
             b->o.sim->name);
    snprintf(m.u.create_room.config, sizeof m.u.create_room.config, "%s",
             b->o.options ? b->o.options : "");
  } else {
    m.type = GK_MSG_JOIN_ROOM;
    memcpy(m.u.room.code, p->room->code, sizeof m.u.room.code);
  }
  send_msg(p, &m);
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
  cJSON *cl = cJSON_AddObjectToObject(out, "confirm_latency_us");
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
    cJSON *ro = cJSON_CreateObject();
    cJSON_AddStringToObject(ro, "code", r->created ? r->code : "");
    cJSON_AddNumberToObject(ro, "steps", (double)r->pl[0].confirmed);
    cJSON_AddNumberToObject(ro, "desyncs", (double)r->desyncs);
    cJSON_AddStringToObject(ro, "input_delays", r->pl[0].delays);
    int agree = 1;
    for (uint32_t j = 1; j < b->o.players; j++)
      agree &= strcmp(r->pl[j].delays, r->pl[0].delays) == 0;
    cJSON_AddBoolToObject(ro, "input_delays_agree", agree);
    if (r->failed || !r->done) {
      cJSON_AddStringToObject(ro, "error",
                              r->failed ? r->error : "did not finish");
      failed++;
    } else {
      completed++;
    }
    desyncs += r->desyncs;
    cJSON_AddItemToArray(rooms, ro);
  }
  cJSON_AddNumberToObject(out, "rooms_completed", (double)completed);
  cJSON_AddNumberToObject(out, "rooms_failed", (double)failed);
  cJSON_AddNumberToObject(out, "desyncs", (double)desyncs);
  cJSON_AddNumberToObject(out, "server_desyncs", (double)desyncs);
  cJSON_AddNumberToObject(out, "peer_mismatches", 0);
  cJSON_AddNumberToObject(out, "connect_retries", (double)b->connect_retries);
  gk_bot_add_latency(out, b->lat, b->nlat);
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

static int open_rooms(lbot *b) {
  size_t isz = b->o.sim->input_size;
  b->room = calloc(b->o.rooms, sizeof *b->room);
  b->lat = malloc(LAT_MAX * sizeof *b->lat);
  if (b->room == NULL || b->lat == NULL) return GK_ENOMEM;
  for (uint32_t i = 0; i < b->o.rooms; i++) {
    lroom *r = &b->room[i];
    r->b = b;
    r->index = i;
    r->pl = calloc(b->o.players, sizeof *r->pl);
    if (r->pl == NULL) return GK_ENOMEM;
    for (uint32_t j = 0; j < b->o.players; j++) {
      lplayer *p = &r->pl[j];
      uint64_t g = (uint64_t)i * b->o.players + j;
      p->room = r;
      p->index = j;
      p->host = host_of(b, i, j);
      p->end_step = UINT64_MAX;
      p->rng = b->o.seed ^ (g * 0x9e3779b97f4a7c15ull);
      p->rec = calloc(RING, isz);
      if (p->rec == NULL) return GK_ENOMEM;
    }
  }
  return 0;
}

static void free_all(lbot *b) {
  for (uint32_t i = 0; b->room && i < b->o.rooms; i++) {
    for (uint32_t j = 0; b->room[i].pl && j < b->o.players; j++)
      free(b->room[i].pl[j].rec);
    free(b->room[i].pl);
  }
  free(b->room);
  free(b->hosts);
  free(b->lat);
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
