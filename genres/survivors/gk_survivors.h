/* gk_survivors.h: the survivors genre (co-op arena action in fixed point).
 *
 * 1 to 8 players share a bounded arena. Enemies of three kinds spawn on a
 * schedule that grows with elapsed play time, around living players, chase
 * the nearest living player and keep apart from each other. Players carry up
 * to three weapons (a wand that shoots at the nearest enemy, an aura that
 * hurts what is near, orbiting orbs), collect the experience gems that kills
 * drop, level up and pick one of three upgrades. The run ends when every
 * player is dead, when the configured duration is survived, or when a step's
 * input carries GK_STEP_MATCH_END.
 *
 * The descriptor is `gk_survivors_sim` (declared below), name
 * "survivors". Everything in the state is an integer or Q16.16; randomness
 * comes from the run's gk_rng; entities live in fixed-capacity arrays that
 * are iterated in index order and compacted stably, so the canonical bytes
 * depend only on seed, config and inputs.
 *
 * Version 3 (half the separation work per step): enemies keep apart by
 * a staggered spring, each pair of overlapping enemies pushing every
 * other step at twice the push of version 2's every-step spring
 * (gk_sv_enemies.c), the per-step push bounded at 2 units instead of 1.5.
 *
 * Units: a world unit is one "pixel"; positions are Q16.16 world units, one
 * step is 1/60 s. Speeds are per step.
 *
 * --- Input record (input_size 4) -------------------------------------------
 *   byte 0  int8  move_x  -128..127, right positive
 *   byte 1  int8  move_y  -128..127, down positive
 *   byte 2  uint8 buttons bit0 = pause press; other bits ignored
 *   byte 3  uint8 pick    0 none, 1..3 the offered upgrade; others ignored
 * The move vector is analogue: its length is clamped to 127 and it is
 * normalised with integer math, so (127,127) is no faster than (127,0).
 * An all-zero record is "no input".
 *
 * Pause: if any active player's record has the pause bit at a step, the
 * pause toggles once at that step for everyone (several presses in the same
 * step still toggle once). Gameplay freezes while paused; steps still count.
 *
 * Picks: a level-up offers three upgrades drawn from the PRNG. While any
 * player's pick is pending, gameplay is frozen for everyone. A pick byte of
 * 1..3 from that player resolves it (also while paused); otherwise after
 * `pick_timeout_steps` steps (counted while frozen, paused or not) the first
 * option is taken, so a run never waits forever. Pick bytes while nothing is
 * pending are ignored.
 *
 * Removed players: a player whose bit is clear in active_mask at some step
 * leaves the match for good at that step: if alive, it dies (player_died
 * with reason 1), its pending pick is dropped, and its input and weapons
 * stop mattering. It no longer counts for "all players dead".
 *
 * --- Config keys (gk_value INT unless noted; defaults in brackets) ---------
 *   arena_width, arena_height   arena size in units, 256..16384 [1600]
 *   duration_steps      steps of play to survive, 1..5184000 [36000 = 10 min]
 *   wave_steps          play steps per wave, 60..1000000 [1800]
 *   spawn_interval_start  steps between spawns in wave 0, 1..3600 [40]
 *   spawn_interval_min  the interval never falls below this, 1..3600 [6]
 *   spawn_interval_step the interval shrinks by this per wave, 0..3600 [2]
 *   spawn_batch         enemies per spawn in wave 0, 1..256 [1]
 *   spawn_batch_every_waves  one more enemy per spawn every N waves, 0 = no
 *                       growth, 0..10000 [2]
 *   spawn_distance      spawn ring radius around a living player, 16..8192
 *                       [360]
 *   max_enemies         cap on live enemies, 1..8192 [800]
 *   max_projectiles     cap on live projectiles, 1..8192 [500]
 *   max_gems            cap on gems on the floor, 1..8192 [500]
 *   pick_timeout_steps  steps before a pending pick takes option 1,
 *                       1..1000000 [600]
 *   hit_cooldown_steps  steps a player is immune after a hit, 0..3600 [30]
 *   player_health       starting health, 1..1000000 [100]
 *   enemy_health_pct    scales enemy health, 1..100000 [100]
 *   wand_cooldown_steps wand's base fire interval, 1..3600 [24]
 *   start_weapon_level  level of the starting wand, 1..5 [1]
 *   spawning            BOOL, false disables the spawn schedule [true]
 * spawn_interval_min must not exceed spawn_interval_start (checked by
 * create, which names both keys).
 *
 * --- Events (gk_event; player is the slot or -1) ---------------------------
 *   enemy_killed    player = killer or -1; kind, x, y (whole units), total
 *   player_hit      damage, health
 *   player_died     reason (0 killed, 1 left the match)
 *   level_up        level, option1, option2, option3 (upgrade ids below)
 *   upgrade_picked  choice (1..3), upgrade, timed_out (0/1), level
 *   wave_started    wave, interval, batch
 *   game_over       reason (0 all dead, 1 survived, 2 match ended), kills,
 *                   elapsed_steps
 *   events_dropped  count: events lost since the last drain because the
 *                   queue was full; always the last event of a drain
 * Events are queued in the run until drained. The queue holds
 * GK_SV_EVENTS_MAX events (enough for every enemy of the default cap dying
 * in one step), allocated by create; a step never allocates. Events beyond
 * that are dropped, the next drain reports how many (events_dropped), and
 * gk_sv_events_dropped gives the run's total.
 *
 * --- HUD sample (every 250 ms) ---------------------------------------------
 *   elapsed_steps, elapsed_ms, wave, kills, enemies, paused, over, then a
 *   "players" list: health, max_health, level, experience, experience_next,
 *   alive.
 */
#ifndef GK_SURVIVORS_H
#define GK_SURVIVORS_H

#include <stdint.h>

#include "gk_sim.h"

#define GK_SV_PLAYERS_MAX 8
#define GK_SV_ENTITIES_MAX 8192 /* upper bound of every cap key */
#define GK_SV_EVENTS_MAX 1024   /* the event queue, allocated at create */
#define GK_SV_INPUT_SIZE 4

enum { GK_SV_BUTTON_PAUSE = 1u << 0 };

/* Upgrade ids, as offered in level_up and reported in upgrade_picked. */
enum {
  GK_SV_UP_WAND = 0, /* new or +1 level (max 5) */
  GK_SV_UP_AURA = 1,
  GK_SV_UP_ORBIT = 2,
  GK_SV_UP_HEALTH = 3, /* +20 max health, heals 20 (max 5 times) */
  GK_SV_UP_SPEED = 4,  /* +10% move speed (max 5 times) */
  GK_SV_UP_MAGNET = 5, /* +16 pickup radius (max 5 times) */
  GK_SV_UP_HEAL = 6,   /* heals 30; always available */
  GK_SV_UP_COUNT = 7
};

/* Weapon kinds (index into a player's weapon slots). */
enum { GK_SV_WAND = 0, GK_SV_AURA = 1, GK_SV_ORBIT = 2, GK_SV_WEAPONS = 3 };
#define GK_SV_WEAPON_LEVEL_MAX 5

/* Enemy kinds. */
enum { GK_SV_BAT = 0, GK_SV_ZOMBIE = 1, GK_SV_BRUTE = 2, GK_SV_KINDS = 3 };

/* The config struct behind config_size. Plain data; fill it with
 * gk_survivors_sim.config_default and change it through config_set. */
typedef struct gk_sv_config {
  int32_t arena_width;
  int32_t arena_height;
  int32_t duration_steps;
  int32_t wave_steps;
  int32_t spawn_interval_start;
  int32_t spawn_interval_min;
  int32_t spawn_interval_step;
  int32_t spawn_batch;
  int32_t spawn_batch_every_waves;
  int32_t spawn_distance;
  int32_t max_enemies;
  int32_t max_projectiles;
  int32_t max_gems;
  int32_t pick_timeout_steps;
  int32_t hit_cooldown_steps;
  int32_t player_health;
  int32_t enemy_health_pct;
  int32_t wand_cooldown_steps;
  int32_t start_weapon_level;
  int32_t spawning; /* 0 or 1 */
} gk_sv_config;

extern const gk_sim gk_survivors_sim;

/* Packs one input record (GK_SV_INPUT_SIZE bytes) into out. */
void gk_sv_input_pack(uint8_t *out, int8_t move_x, int8_t move_y,
                      uint8_t buttons, uint8_t pick);

/* Events dropped in the whole run because the event queue was full (0
 * normally); each drain also reports its share as events_dropped. */
uint64_t gk_sv_events_dropped(const void *state);

#endif
