/* rts.c: the rts genre's rules, state and descriptor (see rts.h and
 * docs/GENRE_GUIDE.md, which this file follows step by step). */
#include <stdlib.h>
#include <string.h>

#include "rts_internal.h"

#define EVENTS_MAX 64

typedef struct unit {
  uint8_t x, y, order;
  uint8_t tx, ty; /* move: the goal tile */
  uint8_t tp, tu; /* attack: the target's player and unit */
  int32_t hp;     /* 0: dead */
  uint16_t wait;  /* steps until it may walk again */
  uint16_t cool;  /* steps until it may hit again */
} unit;

typedef struct rts_state {
  /* --- the state: all of it is written by write_state --- */
  uint32_t players;
  uint64_t step;
  uint64_t kills;
  gk_rng rng; /* the run's PRNG: hit damage varies */
  unit u[RTS_PLAYERS_MAX][RTS_UNITS_MAX];
  /* --- derived from the config alone: not written --- */
  rts_config cfg;
  uint8_t wall[RTS_MAP_MAX][RTS_MAP_MAX];
  /* --- scratch and outputs: never affect the future --- */
  uint16_t dist[RTS_MAP_MAX][RTS_MAP_MAX];
  uint16_t queue[RTS_MAP_MAX * RTS_MAP_MAX];
  gk_event events[EVENTS_MAX];
  uint32_t nevents;
  uint64_t dropped;
} rts_state;

/* --- the map ---------------------------------------------------------------
 * Walls come from map_seed alone, through a PRNG of their own, so
 * read_state rebuilds them from the config. The 3x3 corners stay open. */
static void build_map(rts_state *s) {
  gk_rng m;
  gk_rng_seed(&m, (uint64_t)s->cfg.map_seed, 0x6d6170u);
  int w = (int)s->cfg.width, h = (int)s->cfg.height;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int corner = (x < 3 || x >= w - 3) && (y < 3 || y >= h - 3);
      uint32_t r = gk_rng_below(&m, 100);
      s->wall[y][x] = !corner && r < (uint32_t)s->cfg.wall_percent;
    }
}

static void spawn(rts_state *s) {
  int w = (int)s->cfg.width, h = (int)s->cfg.height;
  for (uint32_t p = 0; p < s->players; p++)
    for (uint32_t i = 0; i < (uint32_t)s->cfg.units; i++) {
      int dx = (int)(i % 3), dy = (int)(i / 3);
      unit *u = &s->u[p][i];
      u->x = (uint8_t)(p == 1 || p == 2 ? w - 1 - dx : dx);
      u->y = (uint8_t)(p == 1 || p == 3 ? h - 1 - dy : dy);
      u->hp = (int32_t)s->cfg.hp;
    }
}

static rts_state *alloc_state(const void *cfg, uint32_t players, char *err,
                              size_t errlen) {
  if (players < 2 || players > RTS_PLAYERS_MAX) {
    gk_errf(err, errlen, GK_EINVAL, "rts takes 2..%d players, not %u",
            RTS_PLAYERS_MAX, (unsigned)players);
    return NULL;
  }
  rts_state *s = calloc(1, sizeof *s);
  if (s == NULL) {
    gk_errf(err, errlen, GK_ENOMEM, "out of memory");
    return NULL;
  }
  memcpy(&s->cfg, cfg, sizeof s->cfg);
  s->players = players;
  build_map(s);
  return s;
}

static void *create(const void *cfg, uint64_t seed, uint32_t players, char *err,
                    size_t errlen) {
  rts_state *s = alloc_state(cfg, players, err, errlen);
  if (s == NULL) return NULL;
  gk_rng_seed(&s->rng, seed, 0x727473u);
  spawn(s);
  return s;
}

static void destroy(void *state) {
  free(state);
}

/* --- events ----------------------------------------------------------------
 * A fixed queue; what does not fit is counted and reported at the drain. */
static void emit_kill(rts_state *s, uint32_t p, uint32_t i, uint32_t tp,
                      uint32_t tu) {
  if (s->nevents == EVENTS_MAX) {
    s->dropped++;
    return;
  }
  gk_event *e = &s->events[s->nevents++];
  memset(e, 0, sizeof *e);
  e->name = "unit_killed";
  e->step = s->step;
  e->player = (int32_t)p;
  e->nfields = 3;
  e->fields[0].key = "unit";
  e->fields[0].value = i;
  e->fields[1].key = "target_player";
  e->fields[1].value = tp;
  e->fields[2].key = "target_unit";
  e->fields[2].value = tu;
}

static void drain_events(void *state, gk_event_cb cb, void *ctx) {
  rts_state *s = state;
  for (uint32_t i = 0; i < s->nevents; i++) cb(ctx, &s->events[i]);
  gk_event_report_dropped(cb, ctx, s->step, s->dropped);
  s->nevents = 0;
  s->dropped = 0;
}

/* --- pathfinding -----------------------------------------------------------
 * Breadth-first search from the goal over open tiles (units do not block
 * the search, only the step). A unit steps to the neighbour closest to the
 * goal; ties go to the first in the fixed order North, East, South, West. */
static const int dir_x[4] = {0, 1, 0, -1}, dir_y[4] = {-1, 0, 1, 0};

static void bfs(rts_state *s, int gx, int gy) {
  int w = (int)s->cfg.width, h = (int)s->cfg.height;
  memset(s->dist, 0xff, sizeof s->dist);
  uint32_t head = 0, tail = 0;
  s->dist[gy][gx] = 0;
  s->queue[tail++] = (uint16_t)(gy * RTS_MAP_MAX + gx);
  while (head < tail) {
    int x = s->queue[head] % RTS_MAP_MAX, y = s->queue[head] / RTS_MAP_MAX;
    head++;
    for (int d = 0; d < 4; d++) {
      int nx = x + dir_x[d], ny = y + dir_y[d];
      if (nx < 0 || ny < 0 || nx >= w || ny >= h || s->wall[ny][nx] ||
          s->dist[ny][nx] != UINT16_MAX)
        continue;
      s->dist[ny][nx] = (uint16_t)(s->dist[y][x] + 1);
      s->queue[tail++] = (uint16_t)(ny * RTS_MAP_MAX + nx);
    }
  }
}

static int occupied(const rts_state *s, int x, int y) {
  for (uint32_t p = 0; p < s->players; p++)
    for (uint32_t i = 0; i < (uint32_t)s->cfg.units; i++)
      if (s->u[p][i].hp > 0 && s->u[p][i].x == x && s->u[p][i].y == y) return 1;
  return 0;
}

/* One tile toward (gx, gy), if the way is free and the unit may walk. */
static void walk_toward(rts_state *s, unit *u, int gx, int gy) {
  if (u->wait > 0) return;
  bfs(s, gx, gy);
  int w = (int)s->cfg.width, h = (int)s->cfg.height;
  int best = -1;
  uint16_t best_d = s->dist[u->y][u->x];
  for (int d = 0; d < 4; d++) {
    int nx = u->x + dir_x[d], ny = u->y + dir_y[d];
    if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
    if (s->dist[ny][nx] < best_d && !occupied(s, nx, ny)) {
      best = d;
      best_d = s->dist[ny][nx];
    }
  }
  if (best < 0) return; /* no way, or blocked by a unit: wait */
  u->x = (uint8_t)(u->x + dir_x[best]);
  u->y = (uint8_t)(u->y + dir_y[best]);
  u->wait = (uint16_t)s->cfg.move_steps;
}

/* --- the step ---------------------------------------------------------- */

/* Reads one player's record. Anything the rules cannot carry out is
 * ignored: input comes from the network and is never trusted. */
static void apply_order(rts_state *s, uint32_t p, const uint8_t *rec) {
  uint32_t units = (uint32_t)s->cfg.units;
  if (rec[0] == RTS_ORDER_NONE || rec[1] >= units) return;
  unit *u = &s->u[p][rec[1]];
  if (u->hp <= 0) return;
  if (rec[0] == RTS_ORDER_MOVE && rec[2] < s->cfg.width &&
      rec[3] < s->cfg.height && !s->wall[rec[3]][rec[2]]) {
    u->order = RTS_ORDER_MOVE;
    u->tx = rec[2];
    u->ty = rec[3];
  } else if (rec[0] == RTS_ORDER_ATTACK && rec[2] < s->players && rec[2] != p &&
             rec[3] < units) {
    u->order = RTS_ORDER_ATTACK;
    u->tp = rec[2];
    u->tu = rec[3];
  }
}

static void hit(rts_state *s, uint32_t p, uint32_t i, unit *u, unit *t) {
  int32_t dmg = (int32_t)s->cfg.damage +
                (int32_t)gk_rng_below(&s->rng, (uint32_t)s->cfg.damage / 2 + 1);
  t->hp = t->hp > dmg ? t->hp - dmg : 0;
  u->cool = (uint16_t)s->cfg.cooldown;
  if (t->hp == 0) {
    s->kills++;
    emit_kill(s, p, i, u->tp, u->tu);
    u->order = RTS_ORDER_NONE;
  }
}

static void act(rts_state *s, uint32_t p, uint32_t i) {
  unit *u = &s->u[p][i];
  if (u->wait > 0) u->wait--;
  if (u->cool > 0) u->cool--;
  if (u->order == RTS_ORDER_MOVE) {
    if (u->x == u->tx && u->y == u->ty)
      u->order = RTS_ORDER_NONE;
    else
      walk_toward(s, u, u->tx, u->ty);
  } else if (u->order == RTS_ORDER_ATTACK) {
    unit *t = &s->u[u->tp][u->tu];
    int dx = abs(t->x - u->x), dy = abs(t->y - u->y);
    if (t->hp <= 0)
      u->order = RTS_ORDER_NONE;
    else if (dx + dy != 1)
      walk_toward(s, u, t->x, t->y);
    else if (u->cool == 0)
      hit(s, p, i, u, t);
  }
}

static void step(void *state, const gk_step_input *in) {
  rts_state *s = state;
  for (uint32_t p = 0; p < s->players && p < in->players; p++)
    if (in->active_mask >> p & 1u)
      apply_order(s, p, in->inputs + (size_t)p * RTS_INPUT_SIZE);
  /* Every unit acts once, in a fixed order: player, then unit. */
  for (uint32_t p = 0; p < s->players; p++)
    for (uint32_t i = 0; i < (uint32_t)s->cfg.units; i++)
      if (s->u[p][i].hp > 0) act(s, p, i);
  s->step++;
}

static uint32_t alive(const rts_state *s, uint32_t p) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < (uint32_t)s->cfg.units; i++) n += s->u[p][i].hp > 0;
  return n;
}

static int is_over(const void *state) {
  const rts_state *s = state;
  uint32_t left = 0;
  for (uint32_t p = 0; p < s->players; p++) left += alive(s, p) > 0;
  return left <= 1 ||
         (s->cfg.max_steps > 0 && s->step >= (uint64_t)s->cfg.max_steps);
}

/* --- samples (the HUD) -----------------------------------------------------
 */

static uint64_t sample_version(const void *state) {
  return ((const rts_state *)state)->kills;
}

static void write_sample(const void *state, gk_writer *w) {
  const rts_state *s = state;
  gk_write_u64(w, "step", s->step);
  for (uint32_t p = 0; p < s->players; p++) {
    gk_write_begin(w, "player", p);
    gk_write_u32(w, "units", alive(s, p));
    gk_write_end(w);
  }
}

/* --- canonical state ----------------------------------------------------- */

static void write_state(const void *state, gk_writer *w) {
  const rts_state *s = state;
  gk_write_u32(w, "players", s->players);
  gk_write_u64(w, "step", s->step);
  gk_write_u64(w, "kills", s->kills);
  gk_rng_write(&s->rng, w);
  for (uint32_t p = 0; p < s->players; p++)
    for (uint32_t i = 0; i < (uint32_t)s->cfg.units; i++) {
      const unit *u = &s->u[p][i];
      gk_write_begin(w, "unit", p * RTS_UNITS_MAX + i);
      gk_write_u8(w, "x", u->x);
      gk_write_u8(w, "y", u->y);
      gk_write_u8(w, "order", u->order);
      gk_write_u8(w, "tx", u->tx);
      gk_write_u8(w, "ty", u->ty);
      gk_write_u8(w, "tp", u->tp);
      gk_write_u8(w, "tu", u->tu);
      gk_write_i32(w, "hp", u->hp);
      gk_write_u16(w, "wait", u->wait);
      gk_write_u16(w, "cool", u->cool);
      gk_write_end(w);
    }
}

/* Every count and index is checked: these bytes may come from a file. */
static int read_unit(rts_state *s, unit *u, gk_reader *r) {
  const rts_config *c = &s->cfg;
  u->x = gk_read_u8(r);
  u->y = gk_read_u8(r);
  u->order = gk_read_u8(r);
  u->tx = gk_read_u8(r);
  u->ty = gk_read_u8(r);
  u->tp = gk_read_u8(r);
  u->tu = gk_read_u8(r);
  u->hp = gk_read_i32(r);
  u->wait = gk_read_u16(r);
  u->cool = gk_read_u16(r);
  if (u->x >= c->width || u->y >= c->height || u->order > 2 ||
      u->tx >= c->width || u->ty >= c->height || u->tp >= s->players ||
      u->tu >= c->units || u->hp < 0 || u->hp > c->hp ||
      u->wait > c->move_steps || u->cool > c->cooldown)
    return gk_reader_fail(r, GK_ERANGE);
  return r->err;
}

static void *read_state(const void *cfg, gk_reader *r, char *err,
                        size_t errlen) {
  uint32_t players = gk_read_u32(r);
  rts_state *s = r->err ? NULL : alloc_state(cfg, players, err, errlen);
  if (s == NULL) {
    if (r->err) gk_errf(err, errlen, GK_ETRUNC, "rts state: truncated");
    return NULL;
  }
  s->step = gk_read_u64(r);
  s->kills = gk_read_u64(r);
  gk_rng_read(&s->rng, r);
  for (uint32_t p = 0; p < players && r->err == 0; p++)
    for (uint32_t i = 0; i < (uint32_t)s->cfg.units && r->err == 0; i++)
      read_unit(s, &s->u[p][i], r);
  if (r->err == 0 && gk_reader_left(r) != 0) gk_reader_fail(r, GK_EINVAL);
  if (r->err != 0) {
    gk_errf(err, errlen, r->err, "rts state: bad bytes at offset %zu (%s)",
            r->pos, gk_strerror(r->err));
    free(s);
    return NULL;
  }
  return s;
}

/* --- the descriptor --------------------------------------------------------
 */

const gk_sim gk_rts_sim = {
    .abi = GK_SIM_ABI,
    .name = "rts",
    .version = 1,
    .step_seconds = {1, 30},
    .input_size = RTS_INPUT_SIZE,
    .players_min = 2,
    .players_max = RTS_PLAYERS_MAX,
    .config_size = sizeof(rts_config),
    .config_default = rts__config_default,
    .config_set = rts__config_set,
    .config_each = rts__config_each,
    .create = create,
    .destroy = destroy,
    .step = step,
    .drain_events = drain_events,
    .is_over = is_over,
    .every_ms = 250,
    .sample_version = sample_version,
    .write_sample = write_sample,
    .write_state = write_state,
    .read_state = read_state,
    .bot_size = sizeof(rts_bot),
    .bot_init = rts__bot_init,
    .bot_next = rts__bot_next,
};

/* The one symbol gk-server, gk-bot and gk-replay look for in librts.so. */
GK_GENRE_EXPORT(gk_rts_sim)
