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
  uint8_t gone; /* left the match (inactive); never comes back */
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
  uint32_t grid_w, grid_h;
  uint32_t *cell_start;   /* grid_w * grid_h + 1, owned */
  uint32_t *cell_items;   /* max_enemies enemy indices, owned */
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

/* Visits every enemy whose cell touches the square of half-size `r` (whole
 * units) around (x, y), cells row by row, each cell in index order. The
 * callback returns non-zero to stop. The grid is the one the last
 * gk__sv_enemies_move built (gk_sv_enemies.c). */
typedef int (*gk__sv_grid_cb)(gk__sv_state *s, uint32_t enemy, void *ctx);
void gk__sv_grid_query(gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                       gk__sv_grid_cb cb, void *ctx);

/* Puts player i at its start, with the starting wand (gk_sv_players.c). */
void gk__sv_player_init(gk__sv_state *s, uint32_t i);
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
void *gk__sv_read_state(const void *cfg, gk_reader *r, char *err,
                        size_t errlen);
void gk__sv_write_sample(const void *state, gk_writer *w);
void gk__sv_bot_init(void *bot, const void *cfg, uint64_t seed,
                     uint32_t player);
void gk__sv_bot_next(void *bot, uint8_t *record);

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
