/* tally.h: a tiny genre for the network tests.
 *
 * Each player's 4-byte record is added into that player's running sum and
 * mixed into a state word with the run's PRNG, so any difference in any
 * record at any step changes every later hash. The state also counts the
 * steps each player was active, so a removal at a different step shows.
 * Its bot emits pseudo-random records (some of them neutral).
 */
#ifndef GK_TEST_TALLY_H
#define GK_TEST_TALLY_H

#include "gk_sim.h"

typedef struct tally_cfg {
  int64_t start;
} tally_cfg;

extern const gk_sim tally_sim;

#endif
