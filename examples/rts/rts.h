/* rts.h: "rts", a small real-time strategy genre, the example of
 * docs/GENRE_GUIDE.md. It is built out of tree, against an installed
 * gamekit (pkg-config gamekit-core), and loaded by gk-server, gk-bot and
 * gk-replay from librts.so.
 *
 * A tile map (walls from the config's map_seed), 2..4 players with
 * `units` units each, starting in the corners. Orders are inputs: move a
 * unit to a tile, or send it to attack an enemy unit. Units walk the
 * shortest path on the grid (breadth-first search from the goal, ties
 * broken North, East, South, West), one tile every `move_steps` steps;
 * an attacker next to its target deals `damage` every `cooldown` steps. A
 * player with no unit left is out; the run is over when one player (or
 * none) is left, or after `max_steps` steps (0: never).
 *
 * Input record, 4 bytes (all zero: no order):
 *   [0] order: 0 none, 1 move, 2 attack
 *   [1] which of the player's units (0..units-1)
 *   [2] move: x          attack: the target's player
 *   [3] move: y          attack: the target's unit
 */
#ifndef RTS_H
#define RTS_H

#include <gamekit/gk_sim.h>

#define RTS_MAP_MAX 32  /* width and height */
#define RTS_UNITS_MAX 8 /* per player */
#define RTS_PLAYERS_MAX 4

typedef struct rts_config {
  int64_t width, height; /* 8..RTS_MAP_MAX */
  int64_t map_seed;      /* the walls come from this (and nothing else) */
  int64_t wall_percent;  /* 0..30 */
  int64_t units;         /* per player, 1..RTS_UNITS_MAX */
  int64_t hp;            /* 1..100000 */
  int64_t damage;        /* 1..1000 */
  int64_t cooldown;      /* steps between hits, 1..600 */
  int64_t move_steps;    /* steps per tile, 1..600 */
  int64_t max_steps;     /* 0 = no limit */
} rts_config;

enum { RTS_ORDER_NONE = 0, RTS_ORDER_MOVE = 1, RTS_ORDER_ATTACK = 2 };

extern const gk_sim gk_rts_sim;

#endif
