/* tiny_sim.h: a tiny test genre for the replay suite ("tiny").
 *
 * Small enough to reason about, rich enough to exercise everything the
 * replay format carries: up to 4 players with 2-byte input records, a
 * PRNG in the state, every config value type, a dotted (nested) key, a
 * HUD sample and a built-in bot. It is not in the genre registry; tests
 * pass it to the replay library explicitly.
 */
#ifndef TINY_SIM_H
#define TINY_SIM_H

#include "gk_sim.h"

typedef struct tiny_cfg {
  int64_t start;     /* "start": 0..1000000 */
  int twice;         /* "twice": bool */
  char label[32];    /* "label": string, < 32 bytes */
  int64_t limit_max; /* "limits.max": 1..1000000 */
} tiny_cfg;

extern const gk_sim tiny_sim;

#endif
