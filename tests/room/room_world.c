/* room_world.c: the in-memory environment of tests/room (room_world.h). */
#define _XOPEN_SOURCE 700
#include "room_world.h"

#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"

#define NS_PER_MS UINT64_C(1000000)

/* --- boxes --------------------------------------------------------------- */

static void box_put(rw_box *b, const uint8_t *bytes, size_t len, int reliable,
                    uint64_t steps_at) {
  if (b->n == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 64;
    rw_msg *m = realloc(b->m, cap * sizeof(*m));
    cr_assert_not_null(m);
    b->m = m;
    b->cap = cap;
  }
  rw_msg *m = &b->m[b->n];
  m->bytes = malloc(len ? len : 1);
  cr_assert_not_null(m->bytes);
  memcpy(m->bytes, bytes, len);
  m->len = len;
  m->reliable = reliable;
  m->steps_at = steps_at;
  b->n++;
}

static void box_free(rw_box *b) {
  for (uint32_t i = 0; i < b->n; i++) free(b->m[i].bytes);
  free(b->m);
  memset(b, 0, sizeof(*b));
}

/* --- connections --------------------------------------------------------- */

rw_conn *rw_conn_of(rw_world *w, uint32_t id) {
  if (id < RW_ID(0) || id >= RW_ID(RW_CONNS)) return NULL;
  return &w->conns[id - RW_ID(0)];
}

static rw_conn *live_conn(rw_world *w, uint32_t id) {
  rw_conn *c = rw_conn_of(w, id);
  return c && c->used ? c : NULL;
}

uint32_t rw_connect(rw_world *w) {
  for (uint32_t i = 0; i < RW_CONNS; i++) {
    rw_conn *c = &w->conns[i];
    if (c->used || c->rc.id != 0) continue; /* ids are never reused */
    c->used = 1;
    c->w = w;
    c->rc.id = RW_ID(i);
    c->rc.since_ms = w->now_ms;
    return c->rc.id;
  }
  cr_assert_fail("no connection left (RW_CONNS)");
  return 0;
}

static void peer_drop(rw_conn *c) {
  if (!c->has_peer) return;
  gk_net_peer_free(&c->peer);
  c->has_peer = 0;
}

void rw_disconnect(rw_world *w, uint32_t id) {
  rw_conn *c = live_conn(w, id);
  if (!c) return;
  gk_room *r = c->rc.room;
  uint32_t slot = c->rc.slot;
  int spectator = c->rc.spectator;
  c->used = 0;
  c->rc.room = NULL;
  peer_drop(c);
  if (r) gk_room_conn_down(r, id, slot, spectator, w->now_ms);
}

/* --- the environment ----------------------------------------------------- */

static void env_each_conn(void *user, void (*fn)(void *ctx, gk_room_conn *c),
                          void *ctx) {
  rw_world *w = user;
  for (uint32_t i = 0; i < RW_CONNS; i++)
    if (w->conns[i].used) fn(ctx, &w->conns[i].rc);
}

static gk_room_conn *env_conn(void *user, uint32_t id) {
  rw_conn *c = live_conn(user, id);
  return c ? &c->rc : NULL;
}

static int env_send(void *user, uint32_t id, const uint8_t *bytes, size_t len,
                    int reliable) {
  rw_conn *c = live_conn(user, id);
  if (!c) {
    ((rw_world *)user)->lost++;
    return GK_ENOTFOUND;
  }
  box_put(&c->out, bytes, len, reliable, ((rw_world *)user)->steps);
  return 0;
}

static void env_close(void *user, uint32_t id, int at_once) {
  rw_conn *c = live_conn(user, id);
  if (!c) return;
  c->closes++;
  c->closed_at_once |= at_once;
}

static void env_rtt(void *user, uint32_t id, uint32_t *rtt, uint32_t *var) {
  rw_conn *c = live_conn(user, id);
  *rtt = c ? c->rtt_ms : 0;
  *var = c ? c->var_ms : 0;
}

static size_t env_reply_cap(void *user, uint32_t id) {
  (void)user;
  (void)id;
  return SIZE_MAX;
}

static void env_strike(void *user, uint32_t id, const char *why, int code) {
  (void)why;
  (void)code;
  rw_world *w = user;
  rw_conn *c = live_conn(w, id);
  if (!c) return;
  c->strikes++;
  if (c->rc.room) gk_room_note_strike(c->rc.room);
  if (c->strikes == w->cfg.strikes) env_close(w, id, 1);
}

static void env_admit(void *user, uint32_t id) {
  rw_conn *c = live_conn(user, id);
  if (c) c->admits++;
}

static int env_client_id(void *user, uint32_t id, uint64_t *out) {
  rw_world *w = user;
  if (!w->token_mode) return 0; /* open mode */
  *out = 1000u + id;
  return 1;
}

static int env_code_taken(void *user, const char *code) {
  return rw_room(user, code) != NULL;
}

static void env_gone(void *user, gk_room *r) {
  rw_world *w = user;
  for (uint32_t i = 0; i < w->nrooms; i++) {
    if (w->rooms[i] != r) continue;
    w->rooms[i] = w->rooms[--w->nrooms];
    w->host.nrooms = w->nrooms;
    if (w->ngone < RW_ROOMS) w->gone[w->ngone++] = r;
    return;
  }
  cr_assert_fail("env.gone for a room not in the table");
}

static void env_step(void *user, const gk_room *r, uint64_t step) {
  (void)r;
  (void)step;
  ((rw_world *)user)->steps++;
}

static void env_confirmed(void *user, const gk_room *r, uint64_t step,
                          uint64_t late_ms) {
  (void)r;
  (void)step;
  rw_world *w = user;
  w->confirms++;
  w->confirm_ms += late_ms;
  if (late_ms > w->confirm_ms_max) w->confirm_ms_max = late_ms;
}

static int env_queue(void *user, gk_room_job *job) {
  rw_world *w = user;
  if (w->queue_now) {
    job->work(job);
    job->done(job);
    w->jobs_run++;
    return 0;
  }
  if (w->njobs == RW_JOBS) return GK_EFULL;
  w->jobs[w->njobs++] = job;
  return 0;
}

static uint64_t env_clock_ns(void *user) {
  return ((rw_world *)user)->now_ms * NS_PER_MS;
}

/* 2026-01-01T00:00:00Z plus the test's clock: recordings' names. */
static uint64_t env_wall_s(void *user) {
  return 1767225600u + ((rw_world *)user)->now_ms / 1000u;
}

uint32_t rw_run_jobs(rw_world *w) {
  uint32_t ran = 0;
  while (w->njobs > 0) {
    gk_room_job *job = w->jobs[0];
    memmove(w->jobs, w->jobs + 1, --w->njobs * sizeof(w->jobs[0]));
    job->work(job);
    job->done(job);
    w->jobs_run++;
    ran++;
  }
  return ran;
}

/* --- the world ----------------------------------------------------------- */

rw_world *rw_new(void) {
  rw_world *w = calloc(1, sizeof(*w));
  cr_assert_not_null(w);
  w->now_ms = 1000;
  snprintf(w->dir, sizeof(w->dir), "/tmp/gk-room-test-XXXXXX");
  cr_assert_not_null(mkdtemp(w->dir));
  gk_server_config *c = &w->cfg;
  gk_server_config_default(c);
  c->step_hz = 50;
  c->input_delay = 2;
  c->input_delay_auto = 0;
  c->lead = 4;
  c->replays_enabled = 0;
  snprintf(c->replay_dir, sizeof(c->replay_dir), "%s/replays", w->dir);
  snprintf(c->desync_dir, sizeof(c->desync_dir), "%s/desyncs", w->dir);
  c->reconnect_hold_ms = 0;
  w->log_file = tmpfile();
  cr_assert_not_null(w->log_file);
  gk_log_init(&w->log, w->log_file, GK_LOG_DEBUG);
  const gk_room_env env = {w,
                           env_conn,
                           env_send,
                           env_close,
                           env_rtt,
                           env_reply_cap,
                           env_strike,
                           env_admit,
                           env_client_id,
                           env_code_taken,
                           env_gone,
                           env_step,
                           env_confirmed,
                           env_queue,
                           env_clock_ns,
                           env_wall_s,
                           NULL, /* short codes, unique through code_taken */
                           env_each_conn};
  gk_room_host_init(&w->host, &env, &w->cfg, &w->log);
  return w;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void rw_free(rw_world *w) {
  while (w->nrooms > 0) {
    w->host.nrooms = w->nrooms;
    gk_room_finalise(w->rooms[0], GK_WIRE_END_SHUTDOWN, w->now_ms);
  }
  rw_run_jobs(w);
  for (uint32_t i = 0; i < RW_CONNS; i++) {
    peer_drop(&w->conns[i]);
    box_free(&w->conns[i].out);
    box_free(&w->conns[i].up);
  }
  gk_server_config_free(&w->cfg);
  fclose(w->log_file);
  nftw(w->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(w);
}

gk_room *rw_room(rw_world *w, const char *code) {
  for (uint32_t i = 0; i < w->nrooms; i++)
    if (memcmp(gk_room_code(w->rooms[i]), code, GK_WIRE_CODE_LEN) == 0)
      return w->rooms[i];
  return NULL;
}

/* --- routing (as gk_server_route.c) -------------------------------------- */

static int is_match_type(int type) {
  return type == GK_MSG_INPUT || type == GK_MSG_HASH ||
         type == GK_MSG_REMOVE_PLAYER || type == GK_MSG_END_MATCH ||
         type == GK_MSG_STATE_BEGIN || type == GK_MSG_STATE_CHUNK;
}

static gk_room *publish(rw_world *w, gk_room *r) {
  if (!r) return NULL;
  cr_assert_lt(w->nrooms, RW_ROOMS);
  w->rooms[w->nrooms++] = r;
  w->host.nrooms = w->nrooms;
  return r;
}

static void route_control(rw_world *w, gk_room *r, uint32_t id,
                          const gk_wire_msg *m) {
  gk_room_host *h = &w->host;
  h->nrooms = w->nrooms;
  switch (m->type) {
  case GK_MSG_CREATE_ROOM:
    publish(w, gk_room_create(h, id, m, GK_PLAYERS_MAX, w->now_ms));
    break;
  case GK_MSG_JOIN_ROOM:
    gk_room_join(h, rw_room(w, m->u.room.code), id, m, w->now_ms);
    break;
  case GK_MSG_QUICK_PLAY: {
    gk_room *best = NULL;
    for (uint32_t i = 0; i < w->nrooms; i++)
      best = gk_room_quick_best(best, w->rooms[i], m);
    gk_room *got =
        gk_room_quick(h, best, id, m, NULL, GK_PLAYERS_MAX, w->now_ms);
    if (got && !best) publish(w, got);
    break;
  }
  case GK_MSG_START_MATCH:
    gk_room_start(h, r, id, w->now_ms);
    break;
  case GK_MSG_NAME:
    gk_room_name(h, r, id, m, w->now_ms);
    break;
  case GK_MSG_NEXT_ROOM:
    gk_room_next(h, id, m, w->now_ms);
    break;
  case GK_MSG_REJOIN_ROOM:
    gk_room_rejoin(h, rw_room(w, m->u.rejoin.code), id, m, w->now_ms);
    break;
  case GK_MSG_SPECTATE:
    gk_room_spectate(h, rw_room(w, m->u.room.code), id, m, w->now_ms);
    break;
  case GK_MSG_END_MATCH:
    if (r && gk_room_state_of(r) == GK_ROOM_LOBBY)
      gk_room_lobby_end(h, r, id, w->now_ms);
    break;
  default:
    if (!is_match_type((int)m->type)) {
      if (r) gk_room_note_drop(r);
      env_strike(w, id, "message type a client does not send", GK_EPROTO);
    }
    break;
  }
}

void rw_route(rw_world *w, uint32_t id, const uint8_t *bytes, size_t len) {
  rw_conn *c = live_conn(w, id);
  if (!c) return;
  int type = len >= GK_WIRE_HEADER ? bytes[1] : -1;
  gk_room *r = c->rc.room;
  gk_wire_msg m;
  int rc = gk_wire_decode(bytes, len, &m);
  if (r && gk_room_state_of(r) != GK_ROOM_LOBBY && is_match_type(type)) {
    gk_room_handle(r, id, type, rc, &m, len, w->now_ms);
    return;
  }
  if (rc) {
    if (r) gk_room_note_drop(r);
    env_strike(w, id, "malformed", rc);
    return;
  }
  route_control(w, r, id, &m);
}

void rw_send(rw_world *w, uint32_t id, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof(buf), &len), 0, "encode %s",
               gk_wire_type_name((int)m->type));
  rw_route(w, id, buf, len);
}

gk_room *rw_create(rw_world *w, uint32_t id, const char *genre,
                   uint32_t max_players, uint32_t input_delay,
                   const char *config) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = (uint8_t)max_players;
  m.u.create_room.input_delay = (uint8_t)input_delay;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "%s", genre);
  snprintf(m.u.create_room.config, sizeof(m.u.create_room.config), "%s",
           config ? config : "");
  uint32_t before = w->nrooms;
  rw_send(w, id, &m);
  return w->nrooms > before ? w->rooms[w->nrooms - 1] : NULL;
}

gk_room *rw_quick(rw_world *w, uint32_t id, const char *genre,
                  uint32_t max_players, const char *config) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_QUICK_PLAY;
  memcpy(m.u.quick.code, GK_WIRE_CODE_ANY, GK_WIRE_CODE_LEN + 1);
  m.u.quick.room.max_players = (uint8_t)max_players;
  snprintf(m.u.quick.room.genre, sizeof(m.u.quick.room.genre), "%s", genre);
  snprintf(m.u.quick.room.config, sizeof(m.u.quick.room.config), "%s",
           config ? config : "");
  rw_send(w, id, &m);
  rw_conn *c = rw_conn_of(w, id);
  return c ? c->rc.room : NULL;
}

void rw_join(rw_world *w, uint32_t id, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  snprintf(m.u.room.code, sizeof(m.u.room.code), "%s", code);
  m.u.room.role = GK_WIRE_ROLE_PLAYER;
  rw_send(w, id, &m);
}

void rw_start(rw_world *w, uint32_t id) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  rw_send(w, id, &m);
}

void rw_end_match(rw_world *w, uint32_t id, int reason) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = (uint8_t)reason;
  rw_send(w, id, &m);
}

/* --- what a connection got ------------------------------------------------ */

const rw_msg *rw_msg_at(rw_world *w, uint32_t id, uint32_t k) {
  rw_conn *c = rw_conn_of(w, id);
  cr_assert_not_null(c);
  return k < c->out.n ? &c->out.m[k] : NULL;
}

int rw_nth(rw_world *w, uint32_t id, int type, uint32_t n, gk_wire_msg *m) {
  rw_conn *c = rw_conn_of(w, id);
  cr_assert_not_null(c);
  for (uint32_t i = 0; i < c->out.n; i++) {
    cr_assert_eq(gk_wire_decode(c->out.m[i].bytes, c->out.m[i].len, m), 0);
    if ((type == 0 || (int)m->type == type) && n-- == 0) return 1;
  }
  return 0;
}

uint32_t rw_count(rw_world *w, uint32_t id, int type) {
  gk_wire_msg m;
  uint32_t n = 0;
  while (rw_nth(w, id, type, n, &m)) n++;
  return n;
}

int rw_last(rw_world *w, uint32_t id, int type, gk_wire_msg *m) {
  rw_conn *c = rw_conn_of(w, id);
  cr_assert_not_null(c);
  for (uint32_t i = c->out.n; i-- > 0;) {
    cr_assert_eq(gk_wire_decode(c->out.m[i].bytes, c->out.m[i].len, m), 0);
    if (type == 0 || (int)m->type == type) return 1;
  }
  return 0;
}

/* --- players -------------------------------------------------------------- */

static const gk_sim *find_genre(void *ctx, const char *name) {
  (void)ctx;
  return gk_genre_find(name);
}

static int peer_send(void *ctx, const uint8_t *bytes, size_t len,
                     int reliable) {
  rw_conn *c = ctx;
  int type = len >= GK_WIRE_HEADER ? bytes[1] : 0;
  if (c->mute || (type < 64 && (c->drop_up >> type & 1u))) return 0;
  box_put(&c->up, bytes, len, reliable, 0);
  return 0;
}

static void peer_snapshot(void *ctx, gk_net_peer *p, int rc,
                          const gk_net_peer_snap_info *info) {
  (void)p;
  rw_conn *c = ctx;
  c->snapshot_rc = rc;
  if (rc == 0)
    c->snapshots++;
  else
    cr_log_info("snapshot refused: %s", info->error);
}

void rw_player(rw_world *w, uint32_t id) {
  rw_player_with(w, id, 0);
}

void rw_player_with(rw_world *w, uint32_t id, int predict) {
  rw_conn *c = live_conn(w, id);
  cr_assert_not_null(c);
  cr_assert_not(c->has_peer);
  gk_net_peer_options o;
  memset(&o, 0, sizeof(o));
  o.bot_seed = id;
  o.genres.find = find_genre;
  o.apply_options = gk_config_match_options;
  o.predict = predict;
  gk_net_peer_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.ctx = c;
  cb.send = peer_send;
  cb.snapshot = peer_snapshot;
  cr_assert_eq(gk_net_peer_init(&c->peer, &o, &cb), 0);
  c->has_peer = 1;
}

void rw_peer_send(rw_world *w, uint32_t id, const gk_wire_msg *m) {
  rw_conn *c = live_conn(w, id);
  cr_assert(c && c->has_peer);
  cr_assert_eq(gk_net_peer_send_msg(&c->peer, w->now_ms * NS_PER_MS, m), 0);
}

gk_room *rw_match(rw_world *w, const char *genre, uint32_t n, uint32_t max,
                  const char *config, uint32_t *ids) {
  for (uint32_t i = 0; i < n; i++) {
    ids[i] = rw_connect(w);
    rw_player(w, ids[i]);
  }
  gk_room *r = rw_create(w, ids[0], genre, max, 0, config);
  cr_assert_not_null(r);
  for (uint32_t i = 1; i < n; i++) rw_join(w, ids[i], gk_room_code(r));
  rw_start(w, ids[0]);
  cr_assert_eq(gk_room_state_of(r), GK_ROOM_PLAYING);
  rw_pump(w);
  return r;
}

/* Feeds one player what it got and runs its due deadline: 1 if it got
 * anything. */
static int feed(rw_world *w, rw_conn *c) {
  uint64_t ns = w->now_ms * NS_PER_MS;
  int moved = 0;
  while (c->has_peer && c->fed < c->out.n) {
    rw_msg *m = &c->out.m[c->fed++];
    gk_net_peer_handle(&c->peer, ns, m->bytes, m->len);
    moved = 1;
  }
  if (c->has_peer && gk_net_peer_poll_timeout(&c->peer) <= ns)
    gk_net_peer_handle_timeout(&c->peer, ns);
  return moved;
}

/* Delivers what one player sent: 1 if anything. */
static int deliver(rw_world *w, rw_conn *c) {
  if (c->up.n == 0) return 0;
  rw_box up = c->up;
  memset(&c->up, 0, sizeof(c->up));
  for (uint32_t i = 0; i < up.n; i++)
    rw_route(w, c->rc.id, up.m[i].bytes, up.m[i].len);
  box_free(&up);
  return 1;
}

/* Closes asked for by the rooms happen now (never inside a room call). */
static int close_pending(rw_world *w) {
  int moved = 0;
  for (uint32_t i = 0; i < RW_CONNS; i++) {
    rw_conn *c = &w->conns[i];
    if (c->used && c->closes > 0) {
      rw_disconnect(w, c->rc.id);
      moved = 1;
    }
  }
  return moved;
}

void rw_pump(rw_world *w) {
  for (int round = 0; round < 64; round++) {
    int moved = 0;
    for (uint32_t i = 0; i < RW_CONNS; i++)
      if (w->conns[i].used) moved |= feed(w, &w->conns[i]);
    for (uint32_t i = 0; i < RW_CONNS; i++)
      if (w->conns[i].used) moved |= deliver(w, &w->conns[i]);
    moved |= close_pending(w);
    if (!moved) return;
  }
}

void rw_advance(rw_world *w, uint64_t ms) {
  for (uint64_t t = 0; t < ms; t++) {
    w->now_ms++;
    rw_pump(w);
    for (uint32_t i = 0; i < w->nrooms;) {
      gk_room *r = w->rooms[i];
      w->host.nrooms = w->nrooms;
      gk_room_tick(r, w->now_ms);
      if (i < w->nrooms && w->rooms[i] == r) i++;
    }
    rw_pump(w);
  }
}

/* --- the log -------------------------------------------------------------- */

static char *log_buf;

const char *rw_log_text(rw_world *w) {
  fflush(w->log_file);
  long n = ftell(w->log_file);
  cr_assert_geq(n, 0);
  free(log_buf);
  log_buf = calloc(1, (size_t)n + 1);
  cr_assert_not_null(log_buf);
  rewind(w->log_file);
  size_t got = fread(log_buf, 1, (size_t)n, w->log_file);
  cr_assert_eq(got, (size_t)n);
  fseek(w->log_file, 0, SEEK_END);
  return log_buf;
}

static const char *next_line_of(const char *p, const char *key) {
  return strstr(p, key);
}

uint32_t rw_log_count(rw_world *w, const char *event) {
  char key[96];
  snprintf(key, sizeof(key), "\"event\":\"%s\"", event);
  uint32_t n = 0;
  for (const char *p = rw_log_text(w); (p = next_line_of(p, key)) != NULL; p++)
    n++;
  return n;
}

int rw_log_last(rw_world *w, const char *event, char *out, size_t cap) {
  char key[96];
  snprintf(key, sizeof(key), "\"event\":\"%s\"", event);
  const char *text = rw_log_text(w), *last = NULL;
  for (const char *p = text; (p = next_line_of(p, key)) != NULL; p++) last = p;
  if (!last) return 0;
  const char *start = last;
  while (start > text && start[-1] != '\n') start--;
  const char *end = strchr(last, '\n');
  size_t n = end ? (size_t)(end - start) : strlen(start);
  if (n >= cap) n = cap - 1;
  memcpy(out, start, n);
  out[n] = '\0';
  return 1;
}

uint64_t rw_log_u64(const char *line, const char *key) {
  char k[96];
  snprintf(k, sizeof(k), "\"%s\":", key);
  const char *p = strstr(line, k);
  cr_assert_not_null(p, "no %s in %s", key, line);
  return strtoull(p + strlen(k), NULL, 10);
}
