/* gk_server.c: rooms, routing, the step timer and shutdown.
 *
 * The story of one match, as this file sees it:
 *   1. a connection sends CREATE_ROOM: the genre, player cap, input delay
 *      and options are checked against the config, a room gets a code from
 *      the CSPRNG and the creator gets slot 0 (ROOM_CREATED);
 *   2. others send JOIN_ROOM with the code and get the next slots (JOINED);
 *   3. the creator sends START_MATCH: the room opens a gk_net_session and
 *      a replay writer and sends every player MATCH_START with its slot;
 *   4. match datagrams from the room's connections go straight to the
 *      session with the sender's slot; the step timer ticks the session;
 *      the session's `step` callback appends each step to the replay;
 *   5. the session's `ended` callback marks the room; after the tick the
 *      replay is finished (footer, fsync, rename) and the room drains: it
 *      keeps repeating the last confirmed steps until every player has
 *      acknowledged them (peers end only after running the last step), at
 *      most DRAIN_MS, and is then freed.
 * Nothing a room does reaches another room: each has its own session,
 * counters and replay, and a failure in one (a replay disk error, a genre
 * that refuses its config) ends only that room.
 *
 * Callbacks from a session never change the room table directly: they set
 * flags (end_pending, desync_end) that the caller acts on once the session
 * call has returned.
 */
#include "gk_server.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gk_err.h"
#include "gk_net_session.h"
#include "gk_net_transport.h"
#include "gk_replay.h"

#define NO_ROOM UINT32_MAX
#define NO_CONN UINT32_MAX
#define SWEEP_MS 1000u  /* lobby and idle-connection sweep period */
#define LINGER_MS 150u  /* after the last room closes on shutdown, let the
                           final MATCH_END/SHUTDOWN packets leave */
#define DRAIN_MS 1000u  /* longest a room stays after its match ended, to
                           repeat the last confirmed steps until every
                           player has acknowledged them */

typedef enum room_state {
  ROOM_LOBBY = 1,
  ROOM_PLAYING = 2,
  ROOM_DRAINING = 3 /* the match ended; last confirmed steps still going
                       out (see room_drained) */
} room_state;

typedef struct room {
  gk_server *srv;
  uint32_t index;
  room_state state;
  char code[GK_WIRE_CODE_LEN + 1];
  const gk_server_genre *genre;
  void *cfg;                 /* genre config, owned (config_free + free) */
  char options[GK_WIRE_CONFIG_MAX + 1]; /* effective options (JSON text) */
  uint64_t seed;
  uint32_t max_players;
  uint32_t input_delay;
  uint32_t conn[GK_PLAYERS_MAX]; /* connection per slot, or NO_CONN */
  uint32_t nslots;           /* slots handed out */
  uint64_t created_ms;
  /* playing */
  gk_net_session session;
  int session_open;
  uint64_t start_ns;
  uint64_t late_seen;        /* steps below this were checked for lateness */
  gk_replay_writer replay;
  int replay_open;
  char replay_path[GK_SERVER_PATH_MAX + 64];
  int end_pending;           /* the session's loop ran the last step */
  int end_reason;
  int desync_end;            /* policy "end" asked for the end */
  /* draining */
  uint64_t drain_until_ms;
  uint64_t drain_ack[GK_PLAYERS_MAX]; /* player holds confirmed steps < */
  /* counters */
  uint64_t drops;
  uint64_t strikes;
  uint64_t desyncs;
} room;

typedef struct conn {
  int used;
  uint32_t room;             /* index or NO_ROOM */
  uint32_t slot;
  uint32_t strikes;
  uint64_t since_ms;         /* connected, or left its last room */
} conn;

struct gk_server {
  uv_loop_t *loop;
  const gk_server_config *cfg;
  gk_server_log *log;
  gk_server_stats stats;
  gk_net_transport transport;
  int transport_open;
  room **rooms;              /* max_rooms slots, NULL = free */
  uint32_t nrooms;
  conn *conns;               /* max_peers entries, by transport peer id */
  uv_timer_t step_timer;
  uv_timer_t sweep_timer;
  uv_timer_t grace_timer;
  uv_signal_t sig_term, sig_int;
  int signals;
  int handles;               /* open uv handles (close is asynchronous) */
  uint64_t t0;               /* uv_hrtime of deadline 0 */
  uint64_t k;                /* deadlines passed */
  uint64_t step_ns;
  uint32_t jobs;             /* replay finishes running on the thread pool */
  uint64_t packets_out, drop_oversize; /* transport totals, kept at close */
  int stopped_logged;
  int shutting_down;
  int lingering;
  int forced;
  int closing;
  uint8_t buf[GK_WIRE_MAX];
};

/* The loop's time, in ms: one value for a whole callback, so two reads
 * in one callback never disagree (a fresh clock read after `now` made
 * `now - since_ms` wrap round and disconnected a connection that had just
 * left its room). Deadlines of steps use uv_hrtime, not this. */
static uint64_t now_ms(const gk_server *s) {
  return uv_now(s->loop);
}

/* --- sending ---------------------------------------------------------------- */

static int send_msg(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  size_t len = 0;
  int rc = gk_wire_encode(m, s->buf, sizeof(s->buf), &len);
  if (rc) return rc;
  return gk_net_transport_send(&s->transport, peer, s->buf, len,
                               gk_wire_type_reliable((int)m->type));
}

static void send_error(gk_server *s, uint32_t peer, int code,
                       const char *text) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_ERROR;
  m.u.error.code = (int16_t)code;
  /* the wire allows printable ASCII only */
  size_t j = 0;
  for (size_t i = 0; text && text[i] && j < GK_WIRE_TEXT_MAX; i++) {
    unsigned char c = (unsigned char)text[i];
    m.u.error.text[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  m.u.error.text[j] = '\0';
  send_msg(s, peer, &m);
}

/* --- strikes ---------------------------------------------------------------- */

static void strike(gk_server *s, uint32_t peer, const char *why, int code) {
  conn *c = &s->conns[peer];
  s->stats.strikes++;
  c->strikes++;
  if (c->room != NO_ROOM && s->rooms[c->room]) s->rooms[c->room]->strikes++;
  const char *code_room =
      c->room != NO_ROOM && s->rooms[c->room] ? s->rooms[c->room]->code : NULL;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "bad_message", code_room)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_str(s->log, "why", why);
    gk_log_err(s->log, "code", code);
    gk_log_u64(s->log, "strikes", c->strikes);
    gk_log_end(s->log);
  }
  if (c->strikes == s->cfg->strikes) {
    s->stats.kicked++;
    if (gk_log_begin(s->log, GK_LOG_WARN, "peer_kicked", code_room)) {
      gk_log_u64(s->log, "peer", peer);
      gk_log_u64(s->log, "strikes", c->strikes);
      gk_log_str(s->log, "last", why);
      gk_log_end(s->log);
    }
    gk_net_transport_disconnect(&s->transport, peer, 1);
  }
}

/* --- rooms ---------------------------------------------------------------- */

static room *find_room(gk_server *s, const char *code) {
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++) {
    room *r = s->rooms[i];
    if (r && memcmp(r->code, code, GK_WIRE_CODE_LEN) == 0) return r;
  }
  return NULL;
}

static uint32_t connected_mask(const room *r) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != NO_CONN) m |= 1u << i;
  return m;
}

static uint32_t popcount32(uint32_t m) {
  uint32_t n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

/* Frees a room; its connections stay, in no room. */
static void room_free(gk_server *s, room *r) {
  for (uint32_t i = 0; i < r->nslots; i++) {
    uint32_t p = r->conn[i];
    if (p != NO_CONN && s->conns[p].used && s->conns[p].room == r->index) {
      s->conns[p].room = NO_ROOM;
      s->conns[p].since_ms = now_ms(s);
    }
  }
  if (r->session_open) gk_net_session_close(&r->session);
  if (r->replay_open) gk_replay_writer_abort(&r->replay);
  if (r->cfg) {
    if (r->genre->sim->config_free) r->genre->sim->config_free(r->cfg);
    free(r->cfg);
  }
  s->rooms[r->index] = NULL;
  s->nrooms--;
  s->stats.rooms_closed++;
  free(r);
}

/* --- finishing replays off the loop -----------------------------------------
 * gk_replay_writer_finish fsyncs the file and its folder, which can take a
 * long time on a slow or busy disk. It runs on libuv's thread pool so no
 * room waits for another room's disk: the writer is moved into a job (the
 * room never touches it again), the worker finishes it, and the result is
 * logged back on the loop. */
typedef struct replay_job {
  uv_work_t req;
  gk_server *srv;
  gk_replay_writer w;
  char code[GK_WIRE_CODE_LEN + 1];
  char path[GK_SERVER_PATH_MAX + 64];
  int rc;
  char err[GK_REPLAY_MSG_MAX];
} replay_job;

static void maybe_free(gk_server *s);
static void log_stopped(gk_server *s);

static void job_report(gk_server *s, replay_job *j) {
  if (j->rc == 0) {
    s->stats.replays_written++;
    if (gk_log_begin(s->log, GK_LOG_INFO, "replay_written", j->code)) {
      gk_log_str(s->log, "path", j->path);
      gk_log_u64(s->log, "steps", j->w.steps);
      gk_log_hex(s->log, "final_hash", j->w.last_hash);
      gk_log_end(s->log);
    }
  } else {
    s->stats.replays_failed++;
    if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_failed", j->code)) {
      gk_log_str(s->log, "path", j->path);
      gk_log_err(s->log, "code", j->rc);
      gk_log_str(s->log, "reason", j->err);
      gk_log_end(s->log);
    }
  }
}

static void job_work(uv_work_t *req) {
  replay_job *j = req->data;
  j->err[0] = '\0';
  j->rc = gk_replay_writer_finish(&j->w, j->err, sizeof(j->err));
}

static void job_done(uv_work_t *req, int status) {
  replay_job *j = req->data;
  gk_server *s = j->srv;
  (void)status; /* jobs are never cancelled */
  job_report(s, j);
  free(j);
  s->jobs--;
  if (s->closing && s->jobs == 0) {
    log_stopped(s);
    maybe_free(s);
  }
}

static void replay_finish_async(gk_server *s, room *r) {
  replay_job *j = calloc(1, sizeof(*j));
  r->replay_open = 0;
  if (j) {
    j->srv = s;
    j->w = r->replay; /* moved: the room's copy is dead from here on */
    memcpy(j->code, r->code, sizeof(j->code));
    snprintf(j->path, sizeof(j->path), "%s", r->replay_path);
    j->req.data = j;
    if (uv_queue_work(s->loop, &j->req, job_work, job_done) == 0) {
      s->jobs++;
      return;
    }
  }
  /* no job (out of memory, or the pool refused): finish it here */
  replay_job local;
  replay_job *k = j ? j : &local;
  if (!j) {
    memset(&local, 0, sizeof(local));
    local.w = r->replay;
    memcpy(local.code, r->code, sizeof(local.code));
    snprintf(local.path, sizeof(local.path), "%s", r->replay_path);
  }
  k->rc = gk_replay_writer_finish(&k->w, k->err, sizeof(k->err));
  job_report(s, k);
  free(j);
}

/* The match is over (or is being cut short): finish the replay and log
 * the room's counters. The room itself stays (draining) until room_free. */
static void room_end_match(gk_server *s, room *r, int reason) {
  uint64_t steps = r->session_open ? r->session.loop.steps : 0;
  uint64_t hash = r->session_open ? r->session.loop.last_hash : 0;
  if (r->replay_open) replay_finish_async(s, r);
  if (r->state != ROOM_PLAYING) return;
  const gk_net_session_stats *st = &r->session.stats;
  s->stats.matches_ended++;
  s->stats.steps_confirmed += st->steps_confirmed;
  s->stats.steps_late += st->steps_late;
  if (gk_log_begin(s->log, GK_LOG_INFO, "match_end", r->code)) {
    gk_log_str(s->log, "reason", gk_wire_end_name(reason));
    gk_log_u64(s->log, "steps", steps);
    gk_log_hex(s->log, "final_hash", hash);
    gk_log_u64(s->log, "players", r->nslots);
    gk_log_u64(s->log, "packets_in", st->packets_in);
    gk_log_u64(s->log, "packets_out", st->packets_out);
    gk_log_u64(s->log, "drop_malformed", st->drop_malformed);
    gk_log_u64(s->log, "drop_slot", st->drop_slot);
    gk_log_u64(s->log, "drop_unexpected", st->drop_unexpected);
    gk_log_u64(s->log, "drop_perm", st->drop_perm);
    gk_log_u64(s->log, "drop_ahead", st->drop_ahead);
    gk_log_u64(s->log, "hashes_compared", st->hashes_compared);
    gk_log_u64(s->log, "desyncs", st->desyncs);
    gk_log_u64(s->log, "steps_confirmed", st->steps_confirmed);
    gk_log_u64(s->log, "steps_late", st->steps_late);
    gk_log_u64(s->log, "stalls", st->stalls);
    gk_log_u64(s->log, "drops", r->drops);
    gk_log_u64(s->log, "strikes", r->strikes);
    gk_log_end(s->log);
  }
  r->state = ROOM_DRAINING;
  r->drain_until_ms = now_ms(s) + DRAIN_MS;
  for (uint32_t i = 0; i < r->nslots && i < GK_PLAYERS_MAX; i++)
    r->drain_ack[i] = r->session.pl[i].acked;
}

/* Ends what is running and frees the room at once (shutdown, errors). */
static void room_finalise(gk_server *s, room *r, int reason) {
  if (r->state == ROOM_LOBBY)
    gk_log_msg(s->log, GK_LOG_INFO, "room_closed", r->code, "reason",
               gk_wire_end_name(reason));
  else
    room_end_match(s, r, reason);
  room_free(s, r);
}

/* A draining room can go once every connected player acknowledged every
 * confirmed step (or DRAIN_MS passed): the peers wait for the last step
 * before they end, so the server repeats it (session ticks) until then. */
static int room_drained(gk_server *s, room *r) {
  if (now_ms(s) >= r->drain_until_ms) return 1;
  uint64_t want = r->session.inbuf.confirmed;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != NO_CONN && (r->session.cfg.active_mask >> i & 1u) &&
        r->drain_ack[i] < want)
      return 0;
  return 1;
}

/* While draining, the session no longer takes INPUT, so the players'
 * acknowledgements are read here. */
static void drain_receive(room *r, uint32_t slot, const uint8_t *bytes,
                          size_t len) {
  gk_wire_msg m;
  if (slot >= GK_PLAYERS_MAX || gk_wire_decode(bytes, len, &m) != 0 ||
      m.type != GK_MSG_INPUT || m.u.input.slot != slot)
    return;
  if (m.u.input.ack > r->drain_ack[slot]) r->drain_ack[slot] = m.u.input.ack;
}

/* Session callbacks (ctx = room). */
static int session_send(void *ctx, uint32_t slot, const uint8_t *bytes,
                        size_t len, int reliable) {
  room *r = ctx;
  if (slot >= r->nslots || r->conn[slot] == NO_CONN) return GK_ENOTFOUND;
  return gk_net_transport_send(&r->srv->transport, r->conn[slot], bytes, len,
                               reliable);
}

static void session_desync(void *ctx, const gk_net_desync *d) {
  room *r = ctx;
  gk_server *s = r->srv;
  r->desyncs++;
  if (gk_log_begin(s->log, GK_LOG_WARN, "desync", r->code)) {
    gk_log_u64(s->log, "step", d->step);
    gk_log_u64(s->log, "player", d->player);
    gk_log_hex(s->log, "host_hash", d->host_hash);
    gk_log_hex(s->log, "peer_hash", d->peer_hash);
    gk_log_str(s->log, "policy",
               s->cfg->desync == GK_DESYNC_END ? "end" : "report");
    gk_log_end(s->log);
  }
  if (s->cfg->desync == GK_DESYNC_END) r->desync_end = 1;
}

static void session_stall(void *ctx, uint64_t step, uint32_t awaited,
                          uint64_t waited_ms) {
  room *r = ctx;
  if (gk_log_begin(r->srv->log, GK_LOG_INFO, "stall", r->code)) {
    gk_log_u64(r->srv->log, "step", step);
    gk_log_u64(r->srv->log, "awaited_mask", awaited);
    gk_log_u64(r->srv->log, "waited_ms", waited_ms);
    gk_log_end(r->srv->log);
  }
}

static void session_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  room *r = ctx;
  r->srv->stats.room_steps++;
  if (!r->replay_open) return;
  int rc = gk_replay_writer_append(&r->replay, in, hash);
  if (rc) {
    /* the match goes on; only its recording is lost */
    r->srv->stats.replays_failed++;
    if (gk_log_begin(r->srv->log, GK_LOG_ERROR, "replay_failed", r->code)) {
      gk_log_str(r->srv->log, "path", r->replay_path);
      gk_log_u64(r->srv->log, "step", in->step);
      gk_log_err(r->srv->log, "code", rc);
      gk_log_end(r->srv->log);
    }
    gk_replay_writer_abort(&r->replay);
    r->replay_open = 0;
  }
}

static void session_removed(void *ctx, uint32_t slot, uint64_t step) {
  room *r = ctx;
  if (gk_log_begin(r->srv->log, GK_LOG_INFO, "player_removed", r->code)) {
    gk_log_u64(r->srv->log, "slot", slot);
    gk_log_u64(r->srv->log, "step", step);
    gk_log_end(r->srv->log);
  }
}

static void session_ended(void *ctx, uint64_t step, int reason) {
  room *r = ctx;
  (void)step;
  r->end_pending = 1;
  r->end_reason = reason;
}

/* After any call into a session: act on what its callbacks flagged. */
static void room_after(gk_server *s, room *r) {
  if (r->desync_end && !r->end_pending) {
    r->desync_end = 0;
    gk_net_session_end(&r->session, GK_WIRE_END_DESYNC, now_ms(s));
  }
}

/* --- room control ----------------------------------------------------------- */

/* Merges the server's options for the genre with the client's (the
 * client's keys win) into one JSON object text: what the room's config is
 * built from and what every peer gets in MATCH_START. */
static int merge_options(const gk_server_genre *g, const char *client,
                         char *out, size_t cap, char *err, size_t errlen) {
  cJSON *merged = g->options ? cJSON_Duplicate(g->options, 1)
                             : cJSON_CreateObject();
  cJSON *mine = NULL;
  int rc = 0;
  if (!merged) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  if (client && *client) {
    size_t len = strlen(client);
    const char *end = NULL;
    mine = cJSON_ParseWithLengthOpts(client, len, &end, 0);
    size_t at = mine && end ? (size_t)(end - client) : 0;
    while (mine && at < len &&
           (client[at] == ' ' || client[at] == '\n' || client[at] == '\t' ||
            client[at] == '\r'))
      at++;
    if (!mine || at < len || !cJSON_IsObject(mine)) {
      rc = gk_errf(err, errlen, GK_EPARSE, "options: must be a JSON object");
      goto out;
    }
    for (cJSON *c = mine->child; c; c = c->next) {
      for (cJSON *b = mine->child; b != c; b = b->next) {
        if (strcmp(b->string, c->string) == 0) {
          rc = gk_errf(err, errlen, GK_EINVAL, "options.%s: duplicate key",
                       c->string);
          goto out;
        }
      }
      cJSON *dup = cJSON_Duplicate(c, 1);
      if (!dup) {
        rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
        goto out;
      }
      if (cJSON_HasObjectItem(merged, c->string))
        cJSON_ReplaceItemInObjectCaseSensitive(merged, c->string, dup);
      else
        cJSON_AddItemToObject(merged, c->string, dup);
    }
  }
  {
    char *text = cJSON_PrintUnformatted(merged);
    if (!text) {
      rc = gk_errf(err, errlen, GK_ENOMEM, "out of memory");
      goto out;
    }
    size_t n = strlen(text);
    if (n >= cap || n > GK_WIRE_CONFIG_MAX)
      rc = gk_errf(err, errlen, GK_ETOOBIG,
                   "options: %zu bytes with the server's, limit %d", n,
                   GK_WIRE_CONFIG_MAX);
    else
      memcpy(out, text, n + 1);
    cJSON_free(text);
  }
out:
  cJSON_Delete(mine);
  cJSON_Delete(merged);
  return rc;
}

/* A connection whose match is over (its room draining) may go on to
 * another room: it leaves the old one first. */
static void leave_drained(gk_server *s, conn *c) {
  room *r = c->room != NO_ROOM ? s->rooms[c->room] : NULL;
  if (!r || r->state != ROOM_DRAINING) return;
  if (c->slot < r->nslots) r->conn[c->slot] = NO_CONN;
  c->room = NO_ROOM;
}

static void on_create(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  conn *c = &s->conns[peer];
  const gk_wire_create_room *cr = &m->u.create_room;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = 0;
  err[0] = '\0';
  leave_drained(s, c);

  if (s->shutting_down) {
    rc = gk_errf(err, sizeof(err), GK_ECLOSED, "server is shutting down");
  } else if (c->room != NO_ROOM) {
    rc = gk_errf(err, sizeof(err), GK_ESTATE, "already in a room");
  }
  const gk_server_genre *g = NULL;
  if (!rc) {
    g = gk_server_config_genre(s->cfg, cr->genre);
    if (!g || !g->enabled)
      rc = gk_errf(err, sizeof(err), GK_ENOTFOUND, "genre not offered: %s",
                   cr->genre);
  }
  uint32_t maxp = 0, delay = 0;
  if (!rc) {
    maxp = cr->max_players ? cr->max_players : g->max_players;
    delay = cr->input_delay ? cr->input_delay : s->cfg->input_delay;
    if (maxp < g->sim->players_min || maxp > g->max_players)
      rc = gk_errf(err, sizeof(err), GK_ERANGE,
                   "max_players must be in %u..%u", g->sim->players_min,
                   g->max_players);
    else if (delay > s->cfg->input_delay_max)
      rc = gk_errf(err, sizeof(err), GK_ERANGE,
                   "input_delay must be at most %u", s->cfg->input_delay_max);
    else if (s->nrooms >= s->cfg->max_rooms)
      rc = gk_errf(err, sizeof(err), GK_EFULL, "no room left (limit %u)",
                   s->cfg->max_rooms);
  }
  room *r = NULL;
  if (!rc) {
    r = calloc(1, sizeof(*r));
    if (r) r->cfg = calloc(1, g->sim->config_size ? g->sim->config_size : 1);
    if (!r || !r->cfg) {
      if (r) free(r);
      r = NULL;
      rc = gk_errf(err, sizeof(err), GK_ENOMEM, "out of memory");
    }
  }
  if (!rc) {
    rc = merge_options(g, cr->config, r->options, sizeof(r->options), err,
                       sizeof(err));
    if (!rc)
      rc = gk_server_room_config(g, r->cfg, r->options, strlen(r->options),
                                 err, sizeof(err));
    if (rc) {
      free(r->cfg);
      free(r);
      r = NULL;
    }
  }
  if (!rc) {
    rc = gk_server_room_code(r->code);
    if (!rc && find_room(s, r->code)) rc = GK_EEXIST; /* 2^-80: refuse */
    if (!rc) rc = gk_server_random(&r->seed, sizeof(r->seed));
    if (rc) {
      gk_errf(err, sizeof(err), rc, "no secure random source");
      if (g->sim->config_free) g->sim->config_free(r->cfg);
      free(r->cfg);
      free(r);
      r = NULL;
    }
  }
  if (rc) {
    s->stats.refused++;
    if (gk_log_begin(s->log, GK_LOG_INFO, "create_refused", NULL)) {
      gk_log_u64(s->log, "peer", peer);
      gk_log_err(s->log, "code", rc);
      gk_log_str(s->log, "reason", err);
      gk_log_end(s->log);
    }
    send_error(s, peer, rc, err);
    return;
  }

  uint32_t idx = 0;
  while (s->rooms[idx]) idx++; /* nrooms < max_rooms: a slot is free */
  r->srv = s;
  r->index = idx;
  r->state = ROOM_LOBBY;
  r->genre = g;
  r->max_players = maxp;
  r->input_delay = delay;
  for (uint32_t i = 0; i < GK_PLAYERS_MAX; i++) r->conn[i] = NO_CONN;
  r->conn[0] = peer;
  r->nslots = 1;
  r->created_ms = now_ms(s);
  s->rooms[idx] = r;
  s->nrooms++;
  s->stats.rooms_created++;
  c->room = idx;
  c->slot = 0;

  if (gk_log_begin(s->log, GK_LOG_INFO, "room_created", r->code)) {
    gk_log_str(s->log, "genre", g->sim->name);
    gk_log_u64(s->log, "max_players", maxp);
    gk_log_u64(s->log, "input_delay", delay);
    gk_log_str(s->log, "options", r->options);
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_ROOM_CREATED;
  memcpy(out.u.room.code, r->code, sizeof(r->code));
  out.u.room.slot = 0;
  send_msg(s, peer, &out);
}

static void on_join(gk_server *s, uint32_t peer, const gk_wire_msg *m) {
  conn *c = &s->conns[peer];
  int rc = 0;
  const char *why = NULL;
  room *r = NULL;
  leave_drained(s, c);
  if (s->shutting_down) {
    rc = GK_ECLOSED, why = "server is shutting down";
  } else if (c->room != NO_ROOM) {
    rc = GK_ESTATE, why = "already in a room";
  } else if (!gk_wire_code_valid(m->u.room.code) ||
             !(r = find_room(s, m->u.room.code))) {
    rc = GK_ENOTFOUND, why = "no room with that code";
  } else if (r->state != ROOM_LOBBY) {
    rc = GK_ESTATE, why = "the match has started";
  } else if (r->nslots >= r->max_players) {
    rc = GK_EFULL, why = "the room is full";
  }
  if (rc) {
    s->stats.refused++;
    if (rc == GK_ENOTFOUND) strike(s, peer, "join with an unknown code", rc);
    if (!s->conns[peer].used) return; /* kicked */
    send_error(s, peer, rc, why);
    return;
  }
  uint32_t slot = r->nslots++;
  r->conn[slot] = peer;
  c->room = r->index;
  c->slot = slot;
  if (gk_log_begin(s->log, GK_LOG_INFO, "player_joined", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_JOINED;
  out.u.joined.slot = (uint8_t)slot;
  out.u.joined.players = (uint8_t)popcount32(connected_mask(r));
  send_msg(s, peer, &out);
}

static int replay_path(gk_server *s, room *r) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(r->replay_path, sizeof(r->replay_path),
                   "%s/%04d%02d%02dT%02d%02d%02dZ-%s-%s.gkr",
                   s->cfg->replay_dir, tm.tm_year + 1900, tm.tm_mon + 1,
                   tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   r->genre->sim->name, r->code);
  return n > 0 && (size_t)n < sizeof(r->replay_path) ? 0 : GK_ETOOBIG;
}

static void on_start(gk_server *s, uint32_t peer) {
  conn *c = &s->conns[peer];
  room *r = c->room != NO_ROOM ? s->rooms[c->room] : NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = 0;
  err[0] = '\0';
  if (!r || r->state != ROOM_LOBBY) {
    rc = gk_errf(err, sizeof(err), GK_ESTATE, "not in a room's lobby");
  } else if (c->slot != 0) {
    rc = gk_errf(err, sizeof(err), GK_EPERM, "only the room's creator starts");
  } else if (s->shutting_down) {
    rc = gk_errf(err, sizeof(err), GK_ECLOSED, "server is shutting down");
  } else if (popcount32(connected_mask(r)) < r->genre->sim->players_min) {
    rc = gk_errf(err, sizeof(err), GK_ERANGE, "%s needs %u players",
                 r->genre->sim->name, r->genre->sim->players_min);
  }
  if (rc) {
    s->stats.refused++;
    if (rc == GK_EPERM) strike(s, peer, "start from a non-creator", rc);
    if (s->conns[peer].used) send_error(s, peer, rc, err);
    return;
  }

  gk_net_session_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.sim = r->genre->sim;
  sc.sim_config = r->cfg;
  sc.seed = r->seed;
  sc.players = r->nslots;
  sc.active_mask = connected_mask(r);
  sc.first_step = 0;
  sc.input_delay = r->input_delay;
  sc.lead = s->cfg->lead;
  sc.creator = 0;
  sc.window = s->cfg->window;
  sc.stall_notice_ms = s->cfg->stall_notice_ms;
  sc.auto_remove_ms = s->cfg->stall_auto_remove_ms;
  sc.late_slack_ms = s->cfg->late_slack_ms;
  sc.step_seconds.num = 1;
  sc.step_seconds.den = s->cfg->step_hz;
  gk_net_session_callbacks cb = {r,
                                 session_send,
                                 session_desync,
                                 session_stall,
                                 session_step,
                                 session_removed,
                                 session_ended};
  uint64_t now = now_ms(s);
  rc = gk_net_session_init(&r->session, &sc, &cb, now, err, sizeof(err));
  if (rc) {
    s->stats.refused++;
    if (gk_log_begin(s->log, GK_LOG_WARN, "start_failed", r->code)) {
      gk_log_err(s->log, "code", rc);
      gk_log_str(s->log, "reason", err);
      gk_log_end(s->log);
    }
    send_error(s, peer, rc, err);
    return;
  }
  r->session_open = 1;
  r->state = ROOM_PLAYING;
  r->start_ns = uv_hrtime();
  s->stats.matches_started++;

  if (s->cfg->replays_enabled) {
    char origin[128];
    snprintf(origin, sizeof(origin), "gk-server room %s", r->code);
    gk_replay_meta meta = {r->genre->sim, r->cfg, r->seed, r->nslots, origin};
    rc = replay_path(s, r);
    if (!rc)
      rc = gk_replay_writer_open(&r->replay, r->replay_path, &meta, err,
                                 sizeof(err));
    if (rc) {
      /* the match is played without a recording; say so loudly */
      s->stats.replays_failed++;
      if (gk_log_begin(s->log, GK_LOG_ERROR, "replay_failed", r->code)) {
        gk_log_str(s->log, "path", r->replay_path);
        gk_log_err(s->log, "code", rc);
        gk_log_str(s->log, "reason", err);
        gk_log_end(s->log);
      }
    } else {
      r->replay_open = 1;
    }
  }

  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_MATCH_START;
  gk_wire_match_start *ms = &out.u.match_start;
  ms->seed = r->seed;
  ms->players = (uint8_t)r->nslots;
  ms->active_mask = sc.active_mask;
  ms->first_step = 0;
  ms->input_delay = (uint8_t)r->input_delay;
  ms->lead = (uint8_t)s->cfg->lead;
  ms->step_seconds.num = 1;
  ms->step_seconds.den = s->cfg->step_hz;
  snprintf(ms->genre, sizeof(ms->genre), "%s", r->genre->sim->name);
  snprintf(ms->config, sizeof(ms->config), "%s", r->options);
  for (uint32_t i = 0; i < r->nslots; i++) {
    if (r->conn[i] == NO_CONN) continue;
    ms->slot = (uint8_t)i;
    send_msg(s, r->conn[i], &out);
  }
  if (gk_log_begin(s->log, GK_LOG_INFO, "match_start", r->code)) {
    gk_log_str(s->log, "genre", r->genre->sim->name);
    gk_log_u64(s->log, "players", r->nslots);
    gk_log_u64(s->log, "active_mask", sc.active_mask);
    gk_log_hex(s->log, "seed", r->seed);
    gk_log_u64(s->log, "input_delay", r->input_delay);
    gk_log_str(s->log, "replay", r->replay_open ? r->replay_path : NULL);
    gk_log_end(s->log);
  }
}

/* END_MATCH from the creator while the room is still a lobby: close it. */
static void on_lobby_end(gk_server *s, uint32_t peer) {
  conn *c = &s->conns[peer];
  room *r = c->room != NO_ROOM ? s->rooms[c->room] : NULL;
  if (!r || r->state != ROOM_LOBBY || c->slot != 0) {
    s->stats.drop_unexpected++;
    strike(s, peer, "END_MATCH outside a room it created", GK_EPERM);
    return;
  }
  gk_wire_msg out;
  memset(&out, 0, sizeof(out));
  out.type = GK_MSG_MATCH_END;
  out.u.match_end.step = 0;
  out.u.match_end.reason = GK_WIRE_END_HOST;
  for (uint32_t i = 0; i < r->nslots; i++)
    if (r->conn[i] != NO_CONN) send_msg(s, r->conn[i], &out);
  room_finalise(s, r, GK_WIRE_END_HOST);
}

/* --- transport callbacks ------------------------------------------------- */

static int is_match_type(int type) {
  return type == GK_MSG_INPUT || type == GK_MSG_HASH ||
         type == GK_MSG_REMOVE_PLAYER || type == GK_MSG_END_MATCH;
}

/* Session drop codes that mean the sender misbehaved (as opposed to the
 * normal fallout of redundancy and reordering). */
static int is_offence(int rc) {
  switch (rc) {
  case GK_ESTALE:
  case GK_EEXIST:
  case GK_ECLOSED:
  case GK_ESTATE:
  case GK_ENOTFOUND:
  case GK_EFULL:
    return 0;
  default:
    return rc < 0;
  }
}

static void on_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                       const uint8_t *bytes, size_t len) {
  gk_server *s = ctx;
  (void)t;
  if (s->closing || peer >= s->cfg->max_peers || !s->conns[peer].used)
    return;
  conn *c = &s->conns[peer];
  s->stats.packets_in++;
  s->stats.bytes_in += len;
  int type = len >= GK_WIRE_HEADER ? bytes[1] : -1;
  room *r = c->room != NO_ROOM ? s->rooms[c->room] : NULL;

  if (r && r->state == ROOM_DRAINING && is_match_type(type)) {
    drain_receive(r, c->slot, bytes, len);
    return;
  }
  if (r && r->state == ROOM_PLAYING && is_match_type(type)) {
    if (r->end_pending) return; /* the match is over; stragglers */
    uint32_t ridx = r->index;
    int rc = gk_net_session_receive(&r->session, c->slot, bytes, len,
                                    now_ms(s));
    if (rc) {
      r->drops++;
      s->stats.drop_session++;
      /* may disconnect the peer; a playing room outlives that */
      if (is_offence(rc)) strike(s, peer, "match message refused", rc);
    }
    if (!s->closing && s->rooms[ridx] == r) room_after(s, r);
    return;
  }

  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m);
  if (rc) {
    s->stats.drop_malformed++;
    if (r) r->drops++;
    strike(s, peer, "malformed", rc);
    return;
  }
  switch (m.type) {
  case GK_MSG_CREATE_ROOM:
    on_create(s, peer, &m);
    break;
  case GK_MSG_JOIN_ROOM:
    on_join(s, peer, &m);
    break;
  case GK_MSG_START_MATCH:
    on_start(s, peer);
    break;
  case GK_MSG_END_MATCH:
  case GK_MSG_INPUT:
  case GK_MSG_HASH:
  case GK_MSG_REMOVE_PLAYER:
    if (m.type == GK_MSG_END_MATCH && r && r->state == ROOM_LOBBY) {
      on_lobby_end(s, peer);
      break;
    }
    /* no playing room: normal for a few packets after a match ended */
    s->stats.drop_no_room++;
    break;
  default:
    /* server-to-client types: a client never sends these */
    s->stats.drop_unexpected++;
    if (r) r->drops++;
    strike(s, peer, "message type a client does not send", GK_EPROTO);
    break;
  }
}

static void on_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  gk_server *s = ctx;
  if (s->closing) return;
  if (peer >= s->cfg->max_peers) {
    gk_net_transport_disconnect(t, peer, 1);
    return;
  }
  conn *c = &s->conns[peer];
  memset(c, 0, sizeof(*c));
  c->used = 1;
  c->room = NO_ROOM;
  c->since_ms = now_ms(s);
  s->stats.connects++;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "connect", NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  if (s->shutting_down) {
    send_error(s, peer, GK_ECLOSED, "server is shutting down");
    gk_net_transport_disconnect(t, peer, 0);
  }
}

static void on_disconnect(void *ctx, gk_net_transport *t, uint32_t peer) {
  gk_server *s = ctx;
  (void)t;
  if (s->closing || peer >= s->cfg->max_peers || !s->conns[peer].used)
    return;
  conn *c = &s->conns[peer];
  s->stats.disconnects++;
  room *r = c->room != NO_ROOM ? s->rooms[c->room] : NULL;
  uint32_t slot = c->slot;
  memset(c, 0, sizeof(*c));
  c->room = NO_ROOM;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "disconnect", r ? r->code : NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_end(s->log);
  }
  if (!r || slot >= r->nslots || r->conn[slot] != peer) return;
  r->conn[slot] = NO_CONN;
  if (r->state == ROOM_DRAINING) return;
  if (r->state == ROOM_LOBBY) {
    if (slot == 0) {
      /* the creator left before the start: the room goes with it */
      for (uint32_t i = 0; i < r->nslots; i++)
        if (r->conn[i] != NO_CONN)
          send_error(s, r->conn[i], GK_ECLOSED, "the room's creator left");
      room_finalise(s, r, GK_WIRE_END_ALL_LEFT);
    }
    return;
  }
  if (gk_log_begin(s->log, GK_LOG_INFO, "player_left", r->code)) {
    gk_log_u64(s->log, "slot", slot);
    gk_log_end(s->log);
  }
  if (r->end_pending) return;
  uint64_t now = now_ms(s);
  gk_net_session_disconnect(&r->session, slot, now);
  if (connected_mask(r) == 0) gk_net_session_end(&r->session,
                                                 GK_WIRE_END_ALL_LEFT, now);
  room_after(s, r);
}

/* --- shutdown --------------------------------------------------------------- */

/* The server goes once its handles are closed and no replay job runs. */
static void maybe_free(gk_server *s) {
  if (s->closing && s->handles == 0 && !s->transport_open && s->jobs == 0)
    free(s);
}

static void on_handle_closed(uv_handle_t *h) {
  gk_server *s = h->data;
  s->handles--;
  maybe_free(s);
}

static void on_transport_closed(gk_net_transport *t) {
  gk_server *s = (gk_server *)((char *)t - offsetof(gk_server, transport));
  s->transport_open = 0;
  maybe_free(s);
}

/* The last record: server totals. Written once every replay is final. */
static void log_stopped(gk_server *s) {
  if (s->stopped_logged) return;
  s->stopped_logged = 1;
  if (gk_log_begin(s->log, GK_LOG_INFO, "stopped", NULL)) {
    const gk_server_stats *st = &s->stats;
    gk_log_u64(s->log, "connects", st->connects);
    gk_log_u64(s->log, "kicked", st->kicked);
    gk_log_u64(s->log, "rooms_created", st->rooms_created);
    gk_log_u64(s->log, "matches_started", st->matches_started);
    gk_log_u64(s->log, "matches_ended", st->matches_ended);
    gk_log_u64(s->log, "replays_written", st->replays_written);
    gk_log_u64(s->log, "replays_failed", st->replays_failed);
    gk_log_u64(s->log, "packets_in", st->packets_in);
    gk_log_u64(s->log, "packets_out", s->packets_out);
    gk_log_u64(s->log, "drop_oversize", s->drop_oversize);
    gk_log_u64(s->log, "drop_malformed", st->drop_malformed);
    gk_log_u64(s->log, "drop_unexpected", st->drop_unexpected);
    gk_log_u64(s->log, "drop_session", st->drop_session);
    gk_log_u64(s->log, "drop_no_room", st->drop_no_room);
    gk_log_u64(s->log, "refused", st->refused);
    gk_log_u64(s->log, "strikes", st->strikes);
    gk_log_u64(s->log, "ticks", st->ticks);
    gk_log_u64(s->log, "ticks_missed", st->ticks_missed);
    /* deadlines / uptime is the step timer's rate: step_hz, no drift */
    gk_log_u64(s->log, "deadlines", s->k);
    gk_log_u64(s->log, "uptime_us", (uv_hrtime() - s->t0) / 1000u);
    gk_log_u64(s->log, "room_steps", st->room_steps);
    gk_log_u64(s->log, "steps_confirmed", st->steps_confirmed);
    gk_log_u64(s->log, "steps_late", st->steps_late);
    gk_log_end(s->log);
  }
}

static void close_all(gk_server *s) {
  if (s->closing) return;
  s->closing = 1;
  /* everything must be done: no room is left */
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++)
    if (s->rooms[i]) room_finalise(s, s->rooms[i], GK_WIRE_END_SHUTDOWN);
  s->packets_out = s->transport.stats.packets_out;
  s->drop_oversize = s->transport.stats.drop_oversize;
  if (s->jobs == 0) log_stopped(s); /* else when the last replay is done */
  uv_close((uv_handle_t *)&s->step_timer, on_handle_closed);
  uv_close((uv_handle_t *)&s->sweep_timer, on_handle_closed);
  uv_close((uv_handle_t *)&s->grace_timer, on_handle_closed);
  if (s->signals) {
    uv_close((uv_handle_t *)&s->sig_term, on_handle_closed);
    uv_close((uv_handle_t *)&s->sig_int, on_handle_closed);
  }
  free(s->rooms);
  s->rooms = NULL;
  free(s->conns);
  s->conns = NULL;
  gk_net_transport_close(&s->transport, on_transport_closed);
}

static void on_linger(uv_timer_t *t) { close_all(t->data); }

/* Once shutting down and no room is left: let the last packets leave. */
static void maybe_done(gk_server *s) {
  if (!s->shutting_down || s->closing || s->lingering || s->nrooms) return;
  s->lingering = 1;
  uv_timer_stop(&s->grace_timer);
  uv_timer_start(&s->grace_timer, on_linger, LINGER_MS, 0);
}

static void on_grace(uv_timer_t *t) {
  gk_server *s = t->data;
  if (s->lingering) {
    close_all(s);
    return;
  }
  if (gk_log_begin(s->log, GK_LOG_WARN, "grace_expired", NULL)) {
    gk_log_u64(s->log, "rooms_left", s->nrooms);
    gk_log_end(s->log);
  }
  s->forced = 1;
  close_all(s);
}

void gk_server_shutdown(gk_server *s) {
  if (s->closing) return;
  if (s->shutting_down) {
    gk_log_msg(s->log, GK_LOG_WARN, "shutdown_forced", NULL, NULL, NULL);
    s->forced = 1;
    close_all(s);
    return;
  }
  s->shutting_down = 1;
  if (gk_log_begin(s->log, GK_LOG_INFO, "shutdown", NULL)) {
    gk_log_u64(s->log, "rooms", s->nrooms);
    gk_log_u64(s->log, "grace_ms", s->cfg->shutdown_grace_ms);
    gk_log_end(s->log);
  }
  gk_wire_msg note;
  memset(&note, 0, sizeof(note));
  note.type = GK_MSG_SHUTDOWN;
  note.u.shutdown_grace_ms = s->cfg->shutdown_grace_ms;
  uint64_t now = now_ms(s);
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++) {
    room *r = s->rooms[i];
    if (!r) continue;
    for (uint32_t j = 0; j < r->nslots; j++)
      if (r->conn[j] != NO_CONN) send_msg(s, r->conn[j], &note);
    if (r->state == ROOM_LOBBY) {
      room_finalise(s, r, GK_WIRE_END_SHUTDOWN);
    } else if (!r->end_pending) {
      gk_net_session_end(&r->session, GK_WIRE_END_SHUTDOWN, now);
    }
  }
  uv_timer_start(&s->grace_timer, on_grace, s->cfg->shutdown_grace_ms, 0);
  maybe_done(s);
}

static void on_signal(uv_signal_t *h, int signum) {
  gk_server *s = h->data;
  gk_log_msg(s->log, GK_LOG_INFO, "signal", NULL, "signal",
             signum == SIGTERM ? "SIGTERM" : "SIGINT");
  gk_server_shutdown(s);
}

/* --- timers ----------------------------------------------------------------- */

static void arm_step(gk_server *s);

static void tick_rooms(gk_server *s) {
  uint64_t now = now_ms(s);
  s->stats.ticks++;
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++) {
    room *r = s->rooms[i];
    if (r && r->state == ROOM_DRAINING) {
      gk_net_session_tick(&r->session, now); /* repeats unacknowledged */
      if (room_drained(s, r)) room_free(s, r);
      continue;
    }
    if (!r || r->state != ROOM_PLAYING) continue;
    if (!r->end_pending) {
      int rc = gk_net_session_tick(&r->session, now);
      if (rc < 0) {
        /* the genre or the loop failed: this room ends, no other */
        if (gk_log_begin(s->log, GK_LOG_ERROR, "room_failed", r->code)) {
          gk_log_err(s->log, "code", rc);
          gk_log_end(s->log);
        }
        room_finalise(s, r, GK_WIRE_END_DESYNC);
        continue;
      }
      room_after(s, r);
    }
    if (r->end_pending) room_end_match(s, r, r->end_reason);
  }
  maybe_done(s);
}

static void on_step(uv_timer_t *t) {
  gk_server *s = t->data;
  uint64_t now = uv_hrtime();
  uint64_t due = (now - s->t0) / s->step_ns; /* deadlines passed */
  if (due > s->k) {
    uint64_t missed = due - s->k - 1;
    if (missed) {
      s->stats.ticks_missed += missed;
      if (missed > s->cfg->catchup_ticks &&
          gk_log_begin(s->log, GK_LOG_WARN, "ticks_missed", NULL)) {
        gk_log_u64(s->log, "missed", missed);
        gk_log_end(s->log);
      }
    }
    s->k = due;
    tick_rooms(s);
  }
  if (!s->closing) arm_step(s);
}

/* Arms the one-shot timer for deadline k + 1 (ms resolution, rounded up,
 * so it never fires before the deadline by more than the loop's clock
 * truncation; on_step checks the deadline on uv_hrtime). */
static void arm_step(gk_server *s) {
  uint64_t next = s->t0 + (s->k + 1) * s->step_ns;
  uint64_t now = uv_hrtime();
  uint64_t wait_ms = next > now ? (next - now + 999999u) / 1000000u : 0;
  uv_timer_start(&s->step_timer, on_step, wait_ms, 0);
}

static void on_sweep(uv_timer_t *t) {
  gk_server *s = t->data;
  uint64_t now = now_ms(s);
  uint64_t limit = s->cfg->lobby_timeout_ms;
  if (!limit || s->closing) return;
  for (uint32_t i = 0; i < s->cfg->max_rooms; i++) {
    room *r = s->rooms[i];
    if (r && r->state == ROOM_LOBBY && now - r->created_ms > limit) {
      for (uint32_t j = 0; j < r->nslots; j++)
        if (r->conn[j] != NO_CONN)
          send_error(s, r->conn[j], GK_ECLOSED, "lobby timed out");
      room_finalise(s, r, GK_WIRE_END_ALL_LEFT);
    }
  }
  /* connections that sit in no room hold a peer slot: not for ever */
  for (uint32_t p = 0; p < s->cfg->max_peers; p++) {
    conn *c = &s->conns[p];
    if (c->used && c->room == NO_ROOM && now > c->since_ms &&
        now - c->since_ms > limit) {
      gk_log_msg(s->log, GK_LOG_DEBUG, "idle_disconnect", NULL, NULL, NULL);
      gk_net_transport_disconnect(&s->transport, p, 0);
      c->since_ms = now; /* disconnect callback follows */
    }
  }
}

/* --- start ------------------------------------------------------------------ */

static int ensure_dir(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    return gk_errf(err, errlen, GK_EIO, "replays.dir: %s is not a folder",
                   dir);
  }
  if (mkdir(dir, 0755) == 0) return 0;
  return gk_errf(err, errlen, GK_EIO, "replays.dir: cannot create %s: %s",
                 dir, strerror(errno));
}

int gk_server_start(uv_loop_t *loop, const gk_server_config *cfg,
                    gk_server_log *log, int handle_signals, gk_server **out,
                    char *err, size_t errlen) {
  *out = NULL;
  if (cfg->replays_enabled) {
    int rc = ensure_dir(cfg->replay_dir, err, errlen);
    if (rc) return rc;
  }
  gk_server *s = calloc(1, sizeof(*s));
  if (!s) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  s->loop = loop;
  s->cfg = cfg;
  s->log = log;
  s->rooms = calloc(cfg->max_rooms, sizeof(*s->rooms));
  s->conns = calloc(cfg->max_peers, sizeof(*s->conns));
  if (!s->rooms || !s->conns) {
    free(s->rooms);
    free(s->conns);
    free(s);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  gk_net_transport_options to;
  memset(&to, 0, sizeof(to));
  to.bind_host = cfg->host;
  to.port = cfg->port;
  to.max_peers = cfg->max_peers;
  to.service_ms = cfg->service_ms;
  to.timeout_ms = cfg->peer_timeout_ms;
  to.max_packet = cfg->max_packet;
  gk_net_transport_callbacks tc = {s, on_receive, on_connect, on_disconnect};
  int rc = gk_net_transport_init(&s->transport, loop, &to, &tc);
  if (rc) {
    free(s->rooms);
    free(s->conns);
    free(s);
    return gk_errf(err, errlen, rc, "cannot listen on %s:%u: %s", cfg->host,
                   (unsigned)cfg->port, gk_strerror(rc));
  }
  s->transport_open = 1;

  uv_timer_init(loop, &s->step_timer);
  uv_timer_init(loop, &s->sweep_timer);
  uv_timer_init(loop, &s->grace_timer);
  s->step_timer.data = s->sweep_timer.data = s->grace_timer.data = s;
  s->handles = 3;
  if (handle_signals) {
    uv_signal_init(loop, &s->sig_term);
    uv_signal_init(loop, &s->sig_int);
    s->sig_term.data = s->sig_int.data = s;
    uv_signal_start(&s->sig_term, on_signal, SIGTERM);
    uv_signal_start(&s->sig_int, on_signal, SIGINT);
    s->signals = 1;
    s->handles += 2;
  }
  s->step_ns = 1000000000u / cfg->step_hz;
  s->t0 = uv_hrtime();
  s->k = 0;
  arm_step(s);
  uv_timer_start(&s->sweep_timer, on_sweep, SWEEP_MS, SWEEP_MS);

  if (gk_log_begin(log, GK_LOG_INFO, "listening", NULL)) {
    gk_log_str(log, "host", cfg->host);
    gk_log_u64(log, "port", s->transport.port);
    gk_log_u64(log, "step_hz", cfg->step_hz);
    gk_log_u64(log, "max_rooms", cfg->max_rooms);
    gk_log_u64(log, "max_peers", cfg->max_peers);
    gk_log_str(log, "replay_dir", cfg->replays_enabled ? cfg->replay_dir
                                                       : NULL);
    gk_log_end(log);
  }
  *out = s;
  return 0;
}

uint16_t gk_server_port(const gk_server *s) { return s->transport.port; }

const gk_server_stats *gk_server_get_stats(const gk_server *s) {
  return &s->stats;
}

int gk_server_run(const gk_server_config *cfg, gk_server_log *log) {
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) {
    gk_log_msg(log, GK_LOG_ERROR, "start_failed", NULL, "reason",
               "uv_loop_init failed");
    return 1;
  }
  gk_server *s = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_start(&loop, cfg, log, 1, &s, err, sizeof(err));
  if (rc) {
    gk_log_msg(log, GK_LOG_ERROR, "start_failed", NULL, "reason", err);
    uv_loop_close(&loop);
    return 1;
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return 0;
}
