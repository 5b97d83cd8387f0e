/* gk_sv_internal.h: the survivors run state, shared by the genre's sources
 * and its rule tests (which set scenes up by placing entities directly).
 * Not a public interface: nothing outside genres/survivors includes it.
 *
 * Canonical state is everything from `step` to the gem array; the grid,
 * scratch arrays, event buffer and hud_version are derived or output-only
 * and never written.
 */
#ifndef GK_SV_INTERNAL_H
#define GK_SV_INTERNAL_H

#include <stdint.h>

#include "gk_fixed.h"
#include "gk_rng.h"
#include "gk_survivors.h"

#define GK__SV_CELL_UNITS_SHIFT 5 /* grid cells are 32 units */
#define GK__SV_CELL_SHIFT (GK__SV_CELL_UNITS_SHIFT + GK_FX_SHIFT)
#define GK__SV_PLAYER_RADIUS 12
#define GK__SV_PROJ_RADIUS 4
#define GK__SV_ENEMY_RADIUS_MAX 20
#define GK__SV_LEVEL_MAX 60000
#define GK__SV_RECIP_SHIFT 40
#define GK__SV_GRID_SLACK 4 /* spare entries past the sorted arrays' end */

/* gk__sv_player.gone */
#define GK__SV_IN 0      /* in the match (alive or dead) */
#define GK__SV_LEFT 1    /* its active bit went off: out for good */
#define GK__SV_WAITING 2 /* not in the match yet: nothing of it counts */

typedef struct gk__sv_kind_info {
  gk_fx speed;    /* units per step, Q16.16 */
  int32_t health; /* before wave and enemy_health_pct scaling */
  int32_t damage; /* contact damage */
  int32_t radius; /* whole units */
  uint32_t xp;    /* gem value dropped */
} gk__sv_kind_info;

extern const gk__sv_kind_info gk__sv_kinds[GK_SV_KINDS];

typedef struct gk__sv_player {
  gk_fx x, y;
  int32_t health, max_health;
  gk_fx speed;
  int32_t pickup; /* pickup radius, whole units */
  uint32_t xp;    /* experience towards the next level */
  uint32_t kills;
  uint16_t level;
  uint16_t hurt_cd; /* steps of immunity left */
  uint8_t alive;
  uint8_t gone; /* GK__SV_IN, _LEFT (inactive; never comes back) or
                   _WAITING (inactive since the first step: joins when
                   its active bit turns on: late join) */
  uint8_t wlevel[GK_SV_WEAPONS];  /* 0 = not held */
  uint16_t wtimer[GK_SV_WEAPONS]; /* steps until the weapon acts */
  uint16_t orbit_angle;
  uint8_t ups_health, ups_speed, ups_magnet;
  uint8_t pick_pending;
  uint8_t options[3];
  uint32_t pick_timer; /* steps left before option 1 is taken */
} gk__sv_player;

typedef struct gk__sv_enemy {
  gk_fx x, y;
  int32_t health;
  uint32_t id;    /* unique per run, from next_enemy_id */
  uint8_t kind;   /* < GK_SV_KINDS */
  uint8_t killer; /* player slot that hit it last, 0xFF none */
} gk__sv_enemy;

typedef struct gk__sv_proj {
  gk_fx x, y, vx, vy;
  int32_t damage;
  uint32_t last_hit; /* id of the enemy hit last (0: none; ids start at 1) */
  uint16_t life;     /* steps left */
  uint8_t pierce;    /* further enemies it may hit after the next */
  uint8_t owner;
} gk__sv_proj;

typedef struct gk__sv_gem {
  gk_fx x, y;
  uint32_t value;
} gk__sv_gem;

/* One grid cell's run in the sorted order; valid only if its stamp is the
 * grid's current stamp (so a build never clears the cell table). */
typedef struct gk__sv_cell {
  uint32_t stamp;
  uint32_t start, end; /* [start, end) in the sorted arrays */
} gk__sv_cell;

/* The collision grid (gk_sv_enemies.c): enemies sorted by (cell, index),
 * with their positions and radii copied into arrays in that order, and a
 * cell table stamped per build. A build costs O(enemies): a radix sort on
 * cell keys (digits of `digit_bits`) or an insertion sort when few, then one
 * pass over the sorted runs; empty cells are never touched. */
typedef struct gk__sv_grid {
  uint32_t w, h;       /* cells across and down */
  uint32_t digit_bits; /* radix digit width: half the key's bits, rounded up */
  uint32_t stamp;      /* current build; cells with another stamp are empty */
  uint32_t n;          /* enemies sorted */
  gk__sv_cell *cells;  /* 2 * w * h (the second half: a split build's odd
                          indices), owned */
  uint32_t *order;     /* n enemy indices, sorted by (cell, index), owned */
  uint32_t *key;       /* n cell keys, in sorted order, owned */
  uint32_t *tmp_order, *tmp_key; /* radix scratch, owned */
  uint32_t *count;               /* 1 << digit_bits radix counters, owned */
  gk_fx *x, *y;    /* positions in sorted order, + GK__SV_GRID_SLACK, owned */
  int32_t *r16;    /* radius << GK_FX_SHIFT, sorted order, + slack, owned */
  int32_t r16_max; /* the largest of the n r16 (0: none) */
  int64_t *push_x, *push_y; /* separation sums (Q24), sorted order, owned */
  /* recip[r] = ceil(2^GK__SV_RECIP_SHIFT / r^2) for a sum of two radii
   * r: separation divides by r^2 with a multiply and a shift, exactly
   * (gk_sv_grid.c says why). */
  uint64_t recip[2 * GK__SV_ENEMY_RADIUS_MAX + 1];
} gk__sv_grid;

/* The record layouts write_state hashes entity lists through
 * (gk_sv_state.c); players go field by field in one gk_batch. */
typedef struct gk__sv_lists {
  gk_field_list enemy, proj, gem;
} gk__sv_lists;

typedef struct gk__sv_state {
  gk_sv_config cfg; /* copied at create */
  uint32_t players;

  /* --- canonical --- */
  uint64_t step;       /* steps run, frozen or not */
  uint32_t play_steps; /* steps of unfrozen play */
  uint8_t paused;
  uint8_t over;
  uint8_t over_reason;
  uint32_t wave;
  uint32_t spawn_timer;
  uint32_t kills;
  uint32_t next_enemy_id;
  gk_rng rng;
  gk__sv_player p[GK_SV_PLAYERS_MAX];
  uint32_t n_enemies;
  gk__sv_enemy *enemies; /* cfg.max_enemies, owned */
  uint32_t n_proj;
  gk__sv_proj *proj; /* cfg.max_projectiles, owned */
  uint32_t n_gems;
  gk__sv_gem *gems; /* cfg.max_gems, owned */

  /* --- derived / scratch (never written) --- */
  gk__sv_grid grid;
  gk__sv_lists lists;
  gk_fx *move_x, *move_y; /* max_enemies, owned */
  gk_event *events;       /* owned, GK_SV_EVENTS_MAX, allocated at create */
  uint32_t n_events;
  uint32_t events_unreported; /* dropped since the last drain */
  uint64_t events_dropped;    /* dropped in the whole run */
  uint64_t hud_version;
} gk__sv_state;

/* --- shared by the genre's files (gk_sv_*.c) ---------------------------- */

static inline gk_fx gk__sv_clampfx(gk_fx v, gk_fx lo, gk_fx hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
static inline int64_t gk__sv_sq64(int64_t v) {
  return v * v;
}

/* Queues an event (fields added with gk__sv_event_field); NULL when the
 * queue is full, which counts the event as dropped (gk_sv_sim.c). */
gk_event *gk__sv_event(gk__sv_state *s, const char *name, int32_t player);
/* Adds a field to an event from gk__sv_event; e NULL is a no-op. */
void gk__sv_event_field(gk_event *e, const char *key, int64_t value);

/* Allocates / frees the grid's arrays for cfg (gk_sv_grid.c); init
 * returns 0 or -1 on ENOMEM (then close frees what was allocated). */
int gk__sv_grid_init(gk__sv_grid *g, const gk_sv_config *cfg);
void gk__sv_grid_close(gk__sv_grid *g);
/* Sorts the enemies into the grid from their current positions. */
void gk__sv_grid_build(gk__sv_state *s);
/* The same, split for the separation: the even enemy indices take sorted
 * positions [0, (n + 1) / 2) and cell rows 0..h-1, the odd ones the rest
 * and rows h..2h-1 (each part by (cell, index)). Queries need a plain
 * build. */
void gk__sv_grid_build_split(gk__sv_state *s);

/* The cell column (or row) of a coordinate, clamped to 0..n-1. */
static inline uint32_t gk__sv_cell_coord(gk_fx v, uint32_t n) {
  if (v < 0) return 0;
  uint32_t c = (uint32_t)v >> GK__SV_CELL_SHIFT;
  return c < n ? c : n - 1;
}

/* The sorted run [*lo, *hi) of the enemies in cells cx0..cx1 of row cy
 * (empty: *lo == *hi). Cells of a row are consecutive keys, so the run is
 * from the first occupied cell's start to the last one's end. */
static inline void gk__sv_grid_row(const gk__sv_grid *g, uint32_t cy,
                                   uint32_t cx0, uint32_t cx1, uint32_t *lo,
                                   uint32_t *hi) {
  const gk__sv_cell *row = g->cells + (size_t)cy * g->w;
  uint32_t a = 0, b = 0;
  int found = 0;
  for (uint32_t cx = cx0; cx <= cx1; cx++)
    if (row[cx].stamp == g->stamp) {
      if (!found) a = row[cx].start;
      found = 1;
      b = row[cx].end;
    }
  *lo = a;
  *hi = b;
}

/* Visits every enemy inside the square of half-size `r` (whole units)
 * around (x, y), edges included, cells row by row, each cell in index
 * order: so a callback that needs a circle of radius <= r sees every enemy
 * it could accept, in the same order as when every enemy of the cells
 * touching the square was visited. The callback returns non-zero to stop.
 * The grid is the one the last gk__sv_enemies_move built (gk_sv_enemies.c),
 * and enemies must not have moved since. */
typedef int (*gk__sv_grid_cb)(gk__sv_state *s, uint32_t enemy, void *ctx);
void gk__sv_grid_query(gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                       gk__sv_grid_cb cb, void *ctx);

/* The wand's target for player i: the living enemy nearest to it within
 * its range (the lowest index of equals), or -1 (gk_sv_weapons.c). Needs
 * the grid of the last gk__sv_enemies_move when there are more than a few
 * enemies, as gk__sv_grid_query does. */
int32_t gk__sv_wand_target(const gk__sv_state *s, uint32_t i);

/* Puts player i at its start, with the starting wand (gk_sv_players.c). */
void gk__sv_player_init(gk__sv_state *s, uint32_t i);
/* Players in and out from a step's active mask (step 1 of the step
 * order): a slot inactive at the first step waits, a waiting slot whose
 * bit is on joins (gk__sv_player_join), a slot in the match whose bit is
 * off leaves for good (gk_sv_players.c). */
void gk__sv_players_presence(gk__sv_state *s, uint32_t mask);
/* A waiting slot joins now: fresh stats (gk__sv_player_init) at a place
 * drawn from the run's PRNG, a "player_joined" event. */
void gk__sv_player_join(gk__sv_state *s, uint32_t i);
/* Player i dies; reason 0 killed, 1 left the match. */
void gk__sv_player_die(gk__sv_state *s, uint32_t i, int reason);
/* Opens a pick if player i has the experience for the next level. */
void gk__sv_check_level_up(gk__sv_state *s, uint32_t i);
/* Resolves player i's pending pick with option `choice` (1..3). */
void gk__sv_resolve_pick(gk__sv_state *s, uint32_t i, uint32_t choice,
                         int timed_out);

/* The play phases, in the order the step runs them; each lives in the file
 * of what it moves (gk_sv_enemies.c, gk_sv_players.c, gk_sv_weapons.c). */
void gk__sv_spawn_phase(gk__sv_state *s);
void gk__sv_players_move(gk__sv_state *s, const gk_step_input *in);
void gk__sv_enemies_move(gk__sv_state *s);
void gk__sv_contact_phase(gk__sv_state *s);
void gk__sv_weapons_phase(gk__sv_state *s);
void gk__sv_projectiles_phase(gk__sv_state *s);
void gk__sv_deaths_phase(gk__sv_state *s);
void gk__sv_gems_phase(gk__sv_state *s);

/* Allocates a state with empty entity arrays for cfg (already validated)
 * and `players` players; NULL on ENOMEM. Nothing is placed. */
gk__sv_state *gk__sv_alloc(const gk_sv_config *cfg, uint32_t players);
/* Frees a state from gk__sv_alloc (NULL is ok). */
void gk__sv_free(gk__sv_state *s);
/* Validates a config as a whole; 0 or a code with a message. */
int gk__sv_config_check(const gk_sv_config *cfg, char *err, size_t errlen);
/* Places a new enemy of `kind` (health from the current wave); returns its
 * index or -1 if the cap is reached. */
int32_t gk__sv_spawn_enemy(gk__sv_state *s, uint32_t kind, gk_fx x, gk_fx y);
/* Places a gem; returns its index or -1 when full. */
int32_t gk__sv_add_gem(gk__sv_state *s, gk_fx x, gk_fx y, uint32_t value);
/* Experience a player needs to go from `level` to the next. */
uint32_t gk__sv_xp_next(uint32_t level);
/* The velocity (Q16.16 per step) that an input vector gives at `speed`. */
void gk__sv_move_vector(int32_t mx, int32_t my, gk_fx speed, gk_fx *vx,
                        gk_fx *vy);

/* Config and state functions behind the descriptor (one file each). */
void gk__sv_config_default(void *cfg);
int gk__sv_config_set(void *cfg, const char *key, const gk_value *v, char *err,
                      size_t errlen);
void gk__sv_config_each(const void *cfg, gk_config_each_cb cb, void *ctx);
void gk__sv_write_state(const void *state, gk_writer *w);
/* Plans the record layouts of write_state (at alloc). */
void gk__sv_lists_init(gk__sv_lists *l);
void *gk__sv_read_state(const void *cfg, gk_reader *r, char *err,
                        size_t errlen);
/* gk_sim.copy_state: dst becomes src (same config and players). */
int gk__sv_copy_state(void *dst, const void *src);
void gk__sv_write_sample(const void *state, gk_writer *w);
void gk__sv_bot_init(void *bot, const void *cfg, uint64_t seed,
                     uint32_t player);
void gk__sv_bot_next(void *bot, uint8_t *record);
void gk__sv_bot_answer(const void *state, uint32_t player, uint8_t *record);

typedef struct gk__sv_bot {
  gk_rng rng;
  uint32_t player;
  uint16_t angle;
  int16_t turn;
  uint16_t hold;       /* steps until the bot changes its course */
  uint16_t unpause_in; /* >0: steps until it presses pause again */
  uint8_t magnitude;
} gk__sv_bot;

#endif
