/* gk__sv_state.c: canonical bytes, snapshots, the HUD sample and the bot.
 *
 * write_state streams every canonical field in one fixed order: run
 * header, the PRNG, every player slot, then the three entity lists (count
 * first, then each live entity in index order). The entity records go
 * through gk_write_list with a spec per struct, so hashing copies them in
 * runs; the player slots are one gk_batch (write_players).
 * read_state reads exactly that back and checks every count against the
 * config's caps, every kind and level against its table, and every position
 * against the arena, so a hostile snapshot can neither index past an array nor
 * move the grid lookup out of range.
 */
#include <stddef.h>
#include <string.h>

#include "gk_sv_internal.h"

#define STATE_MAGIC 0x31565347u /* "GSV1" */

#define F(type, member, kind, name)                                            \
  { name, GK_FIELD_##kind, (uint16_t)offsetof(type, member) }

/* Canonical field order of each entity record (gk_write_list). */
static const gk_field_spec enemy_spec[] = {
    F(gk__sv_enemy, x, I32, "x"),
    F(gk__sv_enemy, y, I32, "y"),
    F(gk__sv_enemy, health, I32, "health"),
    F(gk__sv_enemy, id, U32, "id"),
    F(gk__sv_enemy, kind, U8, "kind"),
    F(gk__sv_enemy, killer, U8, "killer"),
};

static const gk_field_spec proj_spec[] = {
    F(gk__sv_proj, x, I32, "x"),
    F(gk__sv_proj, y, I32, "y"),
    F(gk__sv_proj, vx, I32, "vx"),
    F(gk__sv_proj, vy, I32, "vy"),
    F(gk__sv_proj, damage, I32, "damage"),
    F(gk__sv_proj, last_hit, U32, "last_hit"),
    F(gk__sv_proj, life, U16, "life"),
    F(gk__sv_proj, pierce, U8, "pierce"),
    F(gk__sv_proj, owner, U8, "owner"),
};

static const gk_field_spec gem_spec[] = {
    F(gk__sv_gem, x, I32, "x"),
    F(gk__sv_gem, y, I32, "y"),
    F(gk__sv_gem, value, U32, "value"),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

void gk__sv_lists_init(gk__sv_lists *l) {
  /* Constant specs within GK_FIELD_LIST_MAX: these cannot fail. */
  gk_field_list_init(&l->enemy, enemy_spec, COUNT(enemy_spec));
  gk_field_list_init(&l->proj, proj_spec, COUNT(proj_spec));
  gk_field_list_init(&l->gem, gem_spec, COUNT(gem_spec));
}

/* One player slot field by field: readable writers, a full stage. */
static void player_fields(gk_batch *b, uint32_t i, const gk__sv_player *p) {
  gk_batch_group(b, "players", i);
  gk_batch_i32(b, "x", p->x);
  gk_batch_i32(b, "y", p->y);
  gk_batch_i32(b, "health", p->health);
  gk_batch_i32(b, "max_health", p->max_health);
  gk_batch_i32(b, "speed", p->speed);
  gk_batch_i32(b, "pickup", p->pickup);
  gk_batch_u32(b, "xp", p->xp);
  gk_batch_u32(b, "kills", p->kills);
  gk_batch_u16(b, "level", p->level);
  gk_batch_u16(b, "hurt_cd", p->hurt_cd);
  gk_batch_bool(b, "alive", p->alive);
  gk_batch_u8(b, "gone", p->gone); /* 0/1 as a BOOL was; 2 waiting */
  for (int k = 0; k < GK_SV_WEAPONS; k++) {
    static const char *const lv[] = {"weapons[0].level", "weapons[1].level",
                                     "weapons[2].level"};
    static const char *const tm[] = {"weapons[0].timer", "weapons[1].timer",
                                     "weapons[2].timer"};
    gk_batch_u8(b, lv[k], p->wlevel[k]);
    gk_batch_u16(b, tm[k], p->wtimer[k]);
  }
  gk_batch_u16(b, "orbit_angle", p->orbit_angle);
  gk_batch_u8(b, "ups_health", p->ups_health);
  gk_batch_u8(b, "ups_speed", p->ups_speed);
  gk_batch_u8(b, "ups_magnet", p->ups_magnet);
  gk_batch_bool(b, "pick_pending", p->pick_pending);
  gk_batch_u8(b, "options[0]", p->options[0]);
  gk_batch_u8(b, "options[1]", p->options[1]);
  gk_batch_u8(b, "options[2]", p->options[2]);
  gk_batch_u32(b, "pick_timer", p->pick_timer);
  gk_batch_group_end(b);
}

#define PLAYER_BYTES 60 /* canonical bytes of one slot (player_fields) */

/* One player slot's canonical bytes at q: player_fields's bytes, each
 * field a store at a fixed offset (the test "field callbacks carry the
 * hashed bytes" holds the two to one layout). On little-endian hosts the
 * two runs whose memory already is their canonical bytes (x .. gone, and
 * orbit_angle .. options) are copied whole, the BOOLs in them normalised
 * after; the weapons (interleaved in the bytes, not in memory) and
 * pick_timer are stores. */
static void player_bytes(uint8_t *q, const gk__sv_player *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint8_t *m = (const uint8_t *)p;
  memcpy(q, m, 32);
  memcpy(q + 30, m + 30, 8); /* x .. gone: canonical 0..37 */
  q[36] = p->alive != 0;
#else
  gk_batch_put(q, 0, (uint32_t)p->x, 4);
  gk_batch_put(q, 4, (uint32_t)p->y, 4);
  gk_batch_put(q, 8, (uint32_t)p->health, 4);
  gk_batch_put(q, 12, (uint32_t)p->max_health, 4);
  gk_batch_put(q, 16, (uint32_t)p->speed, 4);
  gk_batch_put(q, 20, (uint32_t)p->pickup, 4);
  gk_batch_put(q, 24, p->xp, 4);
  gk_batch_put(q, 28, p->kills, 4);
  gk_batch_put(q, 32, p->level, 2);
  gk_batch_put(q, 34, p->hurt_cd, 2);
  gk_batch_put(q, 36, p->alive != 0, 1);
  gk_batch_put(q, 37, p->gone, 1);
#endif
  gk_batch_put(q, 38, p->wlevel[0], 1);
  gk_batch_put(q, 39, p->wtimer[0], 2);
  gk_batch_put(q, 41, p->wlevel[1], 1);
  gk_batch_put(q, 42, p->wtimer[1], 2);
  gk_batch_put(q, 44, p->wlevel[2], 1);
  gk_batch_put(q, 45, p->wtimer[2], 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(q + 47, m + offsetof(gk__sv_player, orbit_angle), 16); /* 47..55 */
  q[52] = p->pick_pending != 0;
#else
  gk_batch_put(q, 47, p->orbit_angle, 2);
  gk_batch_put(q, 49, p->ups_health, 1);
  gk_batch_put(q, 50, p->ups_speed, 1);
  gk_batch_put(q, 51, p->ups_magnet, 1);
  gk_batch_put(q, 52, p->pick_pending != 0, 1);
  gk_batch_put(q, 53, p->options[0], 1);
  gk_batch_put(q, 54, p->options[1], 1);
  gk_batch_put(q, 55, p->options[2], 1);
#endif
  gk_batch_put(q, 56, p->pick_timer, 4);
}
/* The runs player_bytes copies whole: canonical order is memory order. */
_Static_assert(offsetof(gk__sv_player, y) == 4 &&
                   offsetof(gk__sv_player, kills) == 28 &&
                   offsetof(gk__sv_player, level) == 32 &&
                   offsetof(gk__sv_player, hurt_cd) == 34 &&
                   offsetof(gk__sv_player, alive) == 36 &&
                   offsetof(gk__sv_player, gone) == 37,
               "player x .. gone are their canonical bytes 0..37");
_Static_assert(offsetof(gk__sv_player, ups_health) ==
                       offsetof(gk__sv_player, orbit_angle) + 2 &&
                   offsetof(gk__sv_player, ups_speed) ==
                       offsetof(gk__sv_player, orbit_angle) + 3 &&
                   offsetof(gk__sv_player, ups_magnet) ==
                       offsetof(gk__sv_player, orbit_angle) + 4 &&
                   offsetof(gk__sv_player, pick_pending) ==
                       offsetof(gk__sv_player, orbit_angle) + 5 &&
                   offsetof(gk__sv_player, options) ==
                       offsetof(gk__sv_player, orbit_angle) + 6 &&
                   offsetof(gk__sv_player, orbit_angle) + 16 <=
                       sizeof(gk__sv_player),
               "player orbit_angle .. options are canonical bytes 47..55");

/* Every player slot in canonical order, in one batch. A slot's fields
 * are eleven runs apart in memory (two BOOLs, the weapons interleaved),
 * which gk_write_list pays a loop per run for; here each is one store at
 * a fixed offset. Readable writers get the same fields one by one. */
static void write_players(const gk__sv_state *s, gk_writer *w) {
  gk_batch b = gk_batch_begin(w, (size_t)(PLAYER_BYTES + 8) * s->players);
  for (uint32_t i = 0; i < s->players; i++) {
    uint8_t *q = gk_batch_claim(&b, PLAYER_BYTES);
    if (q != NULL)
      player_bytes(q, &s->p[i]);
    else
      player_fields(&b, i, &s->p[i]);
  }
  gk_batch_end(&b);
}
_Static_assert(GK_SV_WEAPONS == 3, "write_players writes three weapons");

void gk__sv_write_state(const void *state, gk_writer *w) {
  const gk__sv_state *s = state;
  /* the run header: one batch of 36 bytes */
  gk_batch b = gk_batch_begin(w, 36);
  gk_batch_u32(&b, "magic", STATE_MAGIC);
  gk_batch_u8(&b, "players", (uint8_t)s->players);
  gk_batch_u64(&b, "step", s->step);
  gk_batch_u32(&b, "play_steps", s->play_steps);
  gk_batch_bool(&b, "paused", s->paused);
  gk_batch_bool(&b, "over", s->over);
  gk_batch_u8(&b, "over_reason", s->over_reason);
  gk_batch_u32(&b, "wave", s->wave);
  gk_batch_u32(&b, "spawn_timer", s->spawn_timer);
  gk_batch_u32(&b, "kills", s->kills);
  gk_batch_u32(&b, "next_enemy_id", s->next_enemy_id);
  gk_batch_end(&b);
  gk_rng_write(&s->rng, w);
  write_players(s, w);
  gk_write_u32(w, "enemy_count", s->n_enemies);
  gk_write_list(w, "enemies", &s->lists.enemy, s->enemies, sizeof s->enemies[0],
                s->n_enemies);
  gk_write_u32(w, "projectile_count", s->n_proj);
  gk_write_list(w, "projectiles", &s->lists.proj, s->proj, sizeof s->proj[0],
                s->n_proj);
  gk_write_u32(w, "gem_count", s->n_gems);
  gk_write_list(w, "gems", &s->lists.gem, s->gems, sizeof s->gems[0],
                s->n_gems);
}

/* --- reading ------------------------------------------------------------ */

typedef struct rd {
  gk_reader *r;
  const char *what; /* first field that failed a semantic check */
} rd;

static void bad(rd *d, const char *what) {
  if (d->r->err == 0) {
    d->what = what;
    gk_reader_fail(d->r, GK_ERANGE);
  }
}

/* A position must lie in [0, size] units (entities may touch the edge). */
static gk_fx read_pos(rd *d, int32_t size, const char *what) {
  gk_fx v = gk_read_i32(d->r);
  if (v < 0 || v > gk_fx_from_int(size)) bad(d, what);
  return v;
}

static void read_player(rd *d, const gk_sv_config *cfg, gk__sv_player *p) {
  gk_reader *r = d->r;
  p->x = read_pos(d, cfg->arena_width, "player x");
  p->y = read_pos(d, cfg->arena_height, "player y");
  p->health = gk_read_i32(r);
  p->max_health = gk_read_i32(r);
  /* The largest max_health a run can reach: the config's cap plus the five
   * health upgrades. Bounding it keeps upgrade arithmetic from overflowing. */
  if (p->max_health < 1 || p->max_health > 1000000 + 5 * 20 || p->health < 0 ||
      p->health > p->max_health)
    bad(d, "player health");
  p->speed = gk_read_i32(r);
  if (p->speed < 0 || p->speed > GK_FX_ONE * 16) bad(d, "player speed");
  p->pickup = gk_read_i32(r);
  if (p->pickup < 0 || p->pickup > 4096) bad(d, "player pickup");
  p->xp = gk_read_u32(r);
  p->kills = gk_read_u32(r);
  p->level = gk_read_u16(r);
  if (p->level < 1 || p->level > GK__SV_LEVEL_MAX) bad(d, "player level");
  p->hurt_cd = gk_read_u16(r);
  p->alive = (uint8_t)gk_read_bool(r);
  p->gone = gk_read_u8(r);
  if (p->gone > GK__SV_WAITING) bad(d, "player gone");
  if (p->gone && p->alive) bad(d, "player gone but alive");
  for (int k = 0; k < GK_SV_WEAPONS; k++) {
    p->wlevel[k] = gk_read_u8(r);
    if (p->wlevel[k] > GK_SV_WEAPON_LEVEL_MAX) bad(d, "weapon level");
    p->wtimer[k] = gk_read_u16(r);
  }
  p->orbit_angle = gk_read_u16(r);
  p->ups_health = gk_read_u8(r);
  p->ups_speed = gk_read_u8(r);
  p->ups_magnet = gk_read_u8(r);
  if (p->ups_health > 5 || p->ups_speed > 5 || p->ups_magnet > 5)
    bad(d, "upgrade count");
  p->pick_pending = (uint8_t)gk_read_bool(r);
  for (int k = 0; k < 3; k++) {
    p->options[k] = gk_read_u8(r);
    if (p->options[k] >= GK_SV_UP_COUNT) bad(d, "upgrade option");
  }
  p->pick_timer = gk_read_u32(r);
  if (p->pick_pending && p->pick_timer == 0) bad(d, "pick timer");
}

static uint32_t read_count(rd *d, int32_t cap, const char *what) {
  uint32_t n = gk_read_u32(d->r);
  if (n > (uint32_t)cap) {
    bad(d, what);
    return 0;
  }
  return n;
}

void *gk__sv_read_state(const void *cfgp, gk_reader *r, char *err,
                        size_t errlen) {
  const gk_sv_config *cfg = cfgp;
  if (r == NULL || gk__sv_config_check(cfg, err, errlen) != 0) return NULL;
  rd d = {r, NULL};
  if (gk_read_u32(r) != STATE_MAGIC && r->err == 0) bad(&d, "magic");
  uint32_t players = gk_read_u8(r);
  if (r->err == 0 && (players < 1 || players > GK_SV_PLAYERS_MAX))
    bad(&d, "player count");
  if (r->err != 0) {
    gk_errf(err, errlen, r->err, "survivors: bad state at offset %lu: %s",
            (unsigned long)r->pos, d.what ? d.what : "truncated");
    return NULL;
  }
  gk__sv_state *s = gk__sv_alloc(cfg, players);
  if (s == NULL) {
    gk_errf(err, errlen, GK_ENOMEM, "survivors: out of memory");
    return NULL;
  }
  s->step = gk_read_u64(r);
  s->play_steps = gk_read_u32(r);
  s->paused = (uint8_t)gk_read_bool(r);
  s->over = (uint8_t)gk_read_bool(r);
  s->over_reason = gk_read_u8(r);
  if (s->over_reason > 2) bad(&d, "over reason");
  s->wave = gk_read_u32(r);
  s->spawn_timer = gk_read_u32(r);
  if (s->spawn_timer > 3600) bad(&d, "spawn timer");
  s->kills = gk_read_u32(r);
  s->next_enemy_id = gk_read_u32(r);
  if (s->next_enemy_id == 0) bad(&d, "next enemy id");
  gk_rng_read(&s->rng, r);
  for (uint32_t i = 0; i < players && r->err == 0; i++)
    read_player(&d, cfg, &s->p[i]);

  s->n_enemies = read_count(&d, cfg->max_enemies, "enemy count");
  for (uint32_t i = 0; i < s->n_enemies && r->err == 0; i++) {
    gk__sv_enemy *e = &s->enemies[i];
    e->x = read_pos(&d, cfg->arena_width, "enemy x");
    e->y = read_pos(&d, cfg->arena_height, "enemy y");
    e->health = gk_read_i32(r);
    if (e->health <= 0) bad(&d, "enemy health");
    e->id = gk_read_u32(r);
    e->kind = gk_read_u8(r);
    if (e->kind >= GK_SV_KINDS) bad(&d, "enemy kind");
    e->killer = gk_read_u8(r);
  }
  s->n_proj = read_count(&d, cfg->max_projectiles, "projectile count");
  for (uint32_t i = 0; i < s->n_proj && r->err == 0; i++) {
    gk__sv_proj *q = &s->proj[i];
    q->x = read_pos(&d, cfg->arena_width, "projectile x");
    q->y = read_pos(&d, cfg->arena_height, "projectile y");
    q->vx = gk_read_i32(r);
    q->vy = gk_read_i32(r);
    if (q->vx < -GK_FX_ONE * 64 || q->vx > GK_FX_ONE * 64 ||
        q->vy < -GK_FX_ONE * 64 || q->vy > GK_FX_ONE * 64)
      bad(&d, "projectile velocity");
    q->damage = gk_read_i32(r);
    if (q->damage < 0 || q->damage > 1000000) bad(&d, "projectile damage");
    q->last_hit = gk_read_u32(r);
    q->life = gk_read_u16(r);
    if (q->life == 0) bad(&d, "projectile life");
    q->pierce = gk_read_u8(r);
    q->owner = gk_read_u8(r);
    if (q->owner >= players) bad(&d, "projectile owner");
  }
  s->n_gems = read_count(&d, cfg->max_gems, "gem count");
  for (uint32_t i = 0; i < s->n_gems && r->err == 0; i++) {
    s->gems[i].x = read_pos(&d, cfg->arena_width, "gem x");
    s->gems[i].y = read_pos(&d, cfg->arena_height, "gem y");
    s->gems[i].value = gk_read_u32(r);
  }
  if (r->err != 0) {
    gk_errf(err, errlen, r->err, "survivors: bad state at offset %lu: %s",
            (unsigned long)r->pos, d.what ? d.what : "truncated");
    gk__sv_free(s);
    return NULL;
  }
  return s;
}

/* --- copy (gk_sim.copy_state) ------------------------------------------ */

/* dst becomes src: the canonical part and the live entities, field for
 * field (no canonical bytes between), into dst's own buffers. The
 * derived part (grid, lists, move scratch) is rebuilt by every step
 * before it is read, as after read_state; the event queue is empty. */
int gk__sv_copy_state(void *dstp, const void *srcp) {
  gk__sv_state *dst = dstp;
  const gk__sv_state *src = srcp;
  if (dst == src) return 0;
  if (dst->players != src->players ||
      memcmp(&dst->cfg, &src->cfg, sizeof dst->cfg) != 0)
    return GK_EINVAL;
  dst->step = src->step;
  dst->play_steps = src->play_steps;
  dst->paused = src->paused;
  dst->over = src->over;
  dst->over_reason = src->over_reason;
  dst->wave = src->wave;
  dst->spawn_timer = src->spawn_timer;
  dst->kills = src->kills;
  dst->next_enemy_id = src->next_enemy_id;
  dst->rng = src->rng;
  memcpy(dst->p, src->p, sizeof dst->p);
  dst->n_enemies = src->n_enemies;
  memcpy(dst->enemies, src->enemies, src->n_enemies * sizeof *src->enemies);
  dst->n_proj = src->n_proj;
  memcpy(dst->proj, src->proj, src->n_proj * sizeof *src->proj);
  dst->n_gems = src->n_gems;
  memcpy(dst->gems, src->gems, src->n_gems * sizeof *src->gems);
  dst->n_events = 0;
  dst->events_unreported = 0;
  dst->hud_version = src->hud_version;
  return 0;
}

/* --- HUD sample --------------------------------------------------------- */

void gk__sv_write_sample(const void *state, gk_writer *w) {
  const gk__sv_state *s = state;
  gk_write_u32(w, "elapsed_steps", s->play_steps);
  gk_write_u32(w, "elapsed_ms",
               (uint32_t)((uint64_t)s->play_steps * 1000 / 60));
  gk_write_u32(w, "wave", s->wave);
  gk_write_u32(w, "kills", s->kills);
  gk_write_u32(w, "enemies", s->n_enemies);
  gk_write_bool(w, "paused", s->paused);
  gk_write_bool(w, "over", s->over);
  for (uint32_t i = 0; i < s->players; i++) {
    const gk__sv_player *p = &s->p[i];
    gk_write_begin(w, "players", i);
    gk_write_i32(w, "health", p->health);
    gk_write_i32(w, "max_health", p->max_health);
    gk_write_u16(w, "level", p->level);
    gk_write_u32(w, "experience", p->xp);
    gk_write_u32(w, "experience_next", gk__sv_xp_next(p->level));
    gk_write_bool(w, "alive", p->alive);
    gk_write_end(w);
  }
}

/* --- bot ---------------------------------------------------------------- */

/* The bot cannot see the state: it steers in slowly turning arcs (which
 * keeps it kiting rather than walking into a wall for long), sends a random
 * pick now and then (so a pending pick is made some seconds late, and now
 * and then times out), and very rarely pauses, unpausing a second or two
 * later. */
void gk__sv_bot_init(void *bot, const void *cfg, uint64_t seed,
                     uint32_t player) {
  gk__sv_bot *b = bot;
  memset(b, 0, sizeof *b);
  uint64_t x = seed ^ ((uint64_t)player << 32);
  uint64_t a = gk_splitmix64(&x);
  gk_rng_seed(&b->rng, a, gk_splitmix64(&x));
  b->player = player;
  b->angle = (uint16_t)gk_rng_next(&b->rng);
}

void gk__sv_bot_next(void *bot, uint8_t *record) {
  gk__sv_bot *b = bot;
  if (b->hold == 0) {
    int32_t turn = gk_rng_range(&b->rng, 60, 140);
    if (b->turn < 0 ? gk_rng_below(&b->rng, 4) != 0
                    : gk_rng_below(&b->rng, 4) == 0)
      turn = -turn;
    b->turn = (int16_t)turn;
    b->hold = (uint16_t)gk_rng_range(&b->rng, 60, 240);
    b->magnitude = (uint8_t)gk_rng_range(&b->rng, 100, 127);
  }
  b->hold--;
  b->angle = (uint16_t)(b->angle + b->turn);
  int32_t mx = gk_fx_mul(gk_fx_cos(b->angle), gk_fx_from_int(b->magnitude));
  int32_t my = gk_fx_mul(gk_fx_sin(b->angle), gk_fx_from_int(b->magnitude));
  uint8_t buttons = 0, pick = 0;
  if (b->unpause_in > 0) {
    if (--b->unpause_in == 0) buttons = GK_SV_BUTTON_PAUSE;
  } else if (gk_rng_below(&b->rng, 6000) == 0) {
    buttons = GK_SV_BUTTON_PAUSE;
    b->unpause_in = (uint16_t)gk_rng_range(&b->rng, 30, 150);
  }
  if (gk_rng_below(&b->rng, 200) == 0)
    pick = (uint8_t)(1 + gk_rng_below(&b->rng, 3));
  gk_sv_input_pack(record, (int8_t)gk_fx_to_int(mx), (int8_t)gk_fx_to_int(my),
                   buttons, pick);
}

/* A server's bot sees the run: it takes a pending pick at once (the first
 * card, the one a timeout would take), so the world it froze for everyone
 * moves again a few steps later; and it never pauses the world the people
 * play in (the bot's rare pause and unpause presses are dropped; gk-bot's
 * and gk-replay record's bots, which answer nothing, still press them). */
void gk__sv_bot_answer(const void *state, uint32_t player, uint8_t *record) {
  const gk__sv_state *s = state;
  if (s == NULL || player >= s->players) return;
  record[2] = (uint8_t)(record[2] & ~GK_SV_BUTTON_PAUSE);
  if (!s->p[player].pick_pending) return;
  if (record[3] < 1 || record[3] > 3) record[3] = 1;
}
