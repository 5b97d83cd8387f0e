/* gk_push_puzzle.h: the push-puzzle genre (Sokoban rules on the fixed clock).
 *
 * The genre is one constant descriptor, gk_push_puzzle_sim ("push-puzzle",
 * declared below), plus the small toolkit that tools and tests need
 * to feed it published levels and solutions:
 *
 *   XSB levels   gk_pp_set_parse turns the text of a level set (the .sok/.xsb
 *                layout) into validated levels; errors name the file, the
 *                line and the column. gk_pp_set_find selects by title.
 *   LURD         gk_pp_lurd_parse turns a solution into moves; gk_pp_script
 *                turns moves into per-step input records for
 *                gk_script_input (one press per step); gk_pp_check replays
 *                moves on a level and reports the first push/no-push
 *                mismatch or blocked move.
 *
 * Rules (each step, players act in slot order, at most one turn each):
 *   - a press moves on the step it lands in; a direction still held after
 *     the press moves again 12 steps later, then every 6 steps (counted in
 *     steps; the counters are part of the canonical state). A held bit that
 *     was not pressed first does nothing.
 *   - walls block; a pusher pushes one box if the cell behind it is floor
 *     or goal without a box or a pusher; never two boxes, never into a wall
 *     or another pusher; a pusher never moves into another pusher.
 *   - undo (a press) reverts the last turn taken in the run by anyone;
 *     restart (a press) resets the level. Per player, restart wins over
 *     undo, undo over a direction; several directions pressed at once: the
 *     lowest bit wins (left, up, right, down). Undo ends that player's
 *     hold; restart ends every hold.
 *   - solved when every box is on a goal: event level_solved; with
 *     `advance` and a next level, that level starts in the same step (event
 *     level_started) and the remaining players' inputs for that step are
 *     ignored. Otherwise the run is over (is_over) and ignores input.
 *
 * Players and pushers: slot i drives pusher i (pushers are numbered in
 * reading order of the map: row by row, left to right). Pushers beyond the
 * run's player count are removed when a level starts (their cell becomes
 * floor or goal), so a one-player room can play a two-player map. Player
 * slots beyond the map's pusher count idle: their input is ignored.
 *
 * Memory: the set, the run and its undo history are allocated by create;
 * a step allocates nothing.
 */
#ifndef GK_PUSH_PUZZLE_H
#define GK_PUSH_PUZZLE_H

#include <stddef.h>
#include <stdint.h>

#include "gk_sim.h"

extern const gk_sim gk_push_puzzle_sim;

/* --- input record -------------------------------------------------------
 * GK_PP_INPUT_SIZE bytes per player:
 *   byte 0: directions held now        (GK_PP_LEFT..GK_PP_DOWN)
 *   byte 1: presses that landed in this step (the same four bits, plus
 *           GK_PP_UNDO and GK_PP_RESTART)
 * All zero = no input. Unknown bits are ignored. */
#define GK_PP_INPUT_SIZE 2
enum {
  GK_PP_LEFT = 1u << 0,
  GK_PP_UP = 1u << 1,
  GK_PP_RIGHT = 1u << 2,
  GK_PP_DOWN = 1u << 3,
  GK_PP_UNDO = 1u << 4,
  GK_PP_RESTART = 1u << 5
};
#define GK_PP_REPEAT_FIRST 12 /* steps from a press to the first repeat */
#define GK_PP_REPEAT_NEXT 6   /* steps between later repeats */

/* Directions as used in moves: 0 left, 1 up, 2 right, 3 down. */
enum { GK_PP_DIR_LEFT, GK_PP_DIR_UP, GK_PP_DIR_RIGHT, GK_PP_DIR_DOWN };

/* --- config ---------------------------------------------------------------
 * Keys (config_set / config_each, in this order):
 *   levels      string  XSB text of a level set; "" (the default) means the
 *                       levels shipped in genres/push-puzzle/levels/,
 *                       embedded at build time. Validated when set (the
 *                       message names the key, line and column).
 *   level       int     index of the first level, 0-based (default 0);
 *                       checked against the set when the run is created
 *   advance     bool    go on to the next level when one is solved
 *                       (default true)
 *   max_width   int     widest level accepted, 3..GK_PP_DIM_MAX (default 64)
 *   max_height  int     tallest level accepted, 3..GK_PP_DIM_MAX (default 64)
 *   undo_limit  int     turns kept for undo, 0..GK_PP_UNDO_MAX (default
 *                       1024); the history is part of the canonical state
 * Treat the struct as opaque; it owns `levels` and `parsed` (freed by
 * config_free), so copy it only with gk_pp_config_copy. `parsed` is the
 * set config_set("levels") validated (parsed at GK_PP_DIM_MAX), kept so
 * that create copies it instead of parsing the text again; create parses
 * the text when it is NULL, or when a level exceeds max_width/max_height
 * (for the same message as a parse with those limits). */
#define GK_PP_DIM_MAX 255
#define GK_PP_UNDO_MAX 65536
#define GK_PP_LEVELS_TEXT_MAX (8u << 20) /* bytes of XSB text accepted */
#define GK_PP_LEVELS_MAX 10000           /* levels in one set */
#define GK_PP_PUSHERS_MAX GK_PLAYERS_MAX /* `@` per level */

struct gk_pp_set;

typedef struct gk_pp_config {
  char *levels;             /* owned; NULL = the shipped levels */
  struct gk_pp_set *parsed; /* owned; `levels` parsed, or NULL */
  int32_t level;
  int32_t advance;
  int32_t max_width;
  int32_t max_height;
  int32_t undo_limit;
} gk_pp_config;

/* Deep copy (the levels text is duplicated). GK_ENOMEM on failure, with
 * *dst left as defaults. Free dst with gk_push_puzzle_sim.config_free. */
int gk_pp_config_copy(gk_pp_config *dst, const gk_pp_config *src);

/* The levels shipped with the genre, NUL-terminated XSB text. */
extern const char gk_pp_shipped_levels[];

/* --- levels (XSB) -------------------------------------------------------- */

/* Cell bits of a parsed level. A cell that is not a wall and is connected
 * to the edge of the map is OUTSIDE; a pusher, box or goal there is an
 * error ("open edge"), so every cell a pusher or box can reach has four
 * in-bounds neighbours. */
enum {
  GK_PP_WALL = 1u << 0,
  GK_PP_GOAL = 1u << 1,
  GK_PP_BOX = 1u << 2,
  GK_PP_OUTSIDE = 1u << 3
};

#define GK_PP_TITLE_MAX 64

typedef struct gk_pp_level {
  char title[GK_PP_TITLE_MAX]; /* from a Title: line, truncated; "" if none */
  uint32_t line;               /* 1-based line of the map's first row */
  uint16_t width, height;
  uint8_t *cells;    /* width*height GK_PP_* bits, row-major; owned
                        by the set */
  uint32_t npushers; /* 1..GK_PP_PUSHERS_MAX */
  uint32_t pushers[GK_PP_PUSHERS_MAX]; /* cell index, reading order */
  uint32_t boxes;                      /* == goals, >= 1 */
} gk_pp_level;

typedef struct gk_pp_set {
  gk_pp_level *levels; /* owned */
  uint32_t count;
} gk_pp_set;

/* Parses every level in `text` (len bytes; need not be NUL-terminated).
 * Levels are blocks of map rows separated by blank lines; `;` lines,
 * Title:/Author: lines, Comment: ... Comment-End: blocks and other free
 * text between levels are skipped. A Title: line names the level before it
 * if that level has no title yet, else the next one.
 * Characters: # wall, @ pusher, + pusher on goal, $ box, * box on goal,
 * . goal, space - _ floor. Checked: unknown character, no pusher, more than
 * GK_PP_PUSHERS_MAX pushers, boxes != goals, no box, every box already on
 * a goal, wider than max_width
 * or taller than max_height, an open edge (a pusher, box or goal connected
 * to the edge of the map), no level at all, more than GK_PP_LEVELS_MAX.
 * On error returns GK_EPARSE (or GK_ETOOBIG / GK_ENOMEM), leaves *set
 * empty, and writes "NAME:LINE:COLUMN: reason" into err. `name` is used in
 * messages only (e.g. the file name); NULL reads as "<levels>". */
int gk_pp_set_parse(gk_pp_set *set, const char *text, size_t len,
                    const char *name, uint32_t max_width, uint32_t max_height,
                    char *err, size_t errlen);
/* Frees the levels. Safe on an empty or zeroed set. */
void gk_pp_set_close(gk_pp_set *set);
/* Deep copy of src's levels into dst (both must be non-NULL): the same
 * levels without parsing again. GK_ENOMEM leaves dst empty. */
int gk_pp_set_copy(gk_pp_set *dst, const gk_pp_set *src);
/* Index of the first level whose title equals `title` (case-sensitive),
 * or GK_ENOTFOUND. */
int gk_pp_set_find(const gk_pp_set *set, const char *title);

/* --- moves (LURD) ---------------------------------------------------------
 * A move is one byte: bits 0-1 the direction (GK_PP_DIR_*), bit 2 set when
 * the move is written as a push (upper case). */
#define GK_PP_MOVE_PUSH 4u
#define GK_PP_LURD_MAX (1u << 22) /* moves accepted after expansion */
#define GK_PP_LURD_DEPTH 32       /* nested groups accepted */

typedef struct gk_pp_moves {
  uint8_t *moves;  /* count bytes, owned */
  uint32_t *where; /* count byte offsets of the letter in the text, owned */
  size_t count;
} gk_pp_moves;

/* Parses LURD: l u r d moves, L U R D pushes, a run-length count before a
 * letter or a parenthesised group (`3r`, `2(dull)`, nested), whitespace
 * ignored. Errors (GK_EPARSE / GK_ETOOBIG / GK_ENOMEM): unknown character,
 * a count of 0 or with nothing after it, unbalanced parentheses, nesting
 * deeper than GK_PP_LURD_DEPTH, more than GK_PP_LURD_MAX moves. Messages
 * are "NAME:LINE:COLUMN: reason". On error *out is left empty. */
int gk_pp_lurd_parse(gk_pp_moves *out, const char *text, size_t len,
                     const char *name, char *err, size_t errlen);
void gk_pp_moves_close(gk_pp_moves *m);

/* Line and column (1-based) of byte offset `off` in text. */
void gk_pp_text_pos(const char *text, size_t len, size_t off, uint32_t *line,
                    uint32_t *col);

/* Turns moves into step records for gk_script_input: step i holds one
 * press of moves[i]'s direction for player slot `player`; every other byte
 * is zero. `records` must hold count * players * GK_PP_INPUT_SIZE bytes.
 * GK_EINVAL if player >= players or players > GK_PLAYERS_MAX. */
int gk_pp_script(const uint8_t *moves, size_t count, uint32_t players,
                 uint32_t player, uint8_t *records);

/* What replaying moves on a level found. */
typedef struct gk_pp_check_result {
  size_t moves_done; /* moves that were played before stopping */
  uint32_t pushes;   /* pushes among them */
  int solved;        /* all boxes on goals after the last move played */
  size_t solved_at;  /* moves played when first solved (0 if never) */
} gk_pp_check_result;

/* Replays moves with pusher 0 on level `lvl` (other pushers stay put).
 * Fails with GK_EMISMATCH at the first move that is blocked, or (when
 * `strict`) at the first upper-case move that does not push or lower-case
 * move that does; the message gives the move number (1-based) and, when
 * `text` is non-NULL (the LURD the moves came from), its line and column.
 * Returns 0 when every move was played; *res is filled either way. */
int gk_pp_check(const gk_pp_level *lvl, const gk_pp_moves *m, int strict,
                const char *text, size_t textlen, gk_pp_check_result *res,
                char *err, size_t errlen);

#endif
