/* logsim.h: a tiny genre for the core tests. It logs every call the loop
 * makes into a caller-owned text log, so one string pins the step order.
 *
 * Input record (2 bytes): [0] added to the counter, [1] bit0 = emit an
 * event this step, bit1 = move the HUD version. */
#ifndef GK_TEST_LOGSIM_H
#define GK_TEST_LOGSIM_H

#include "gk_loop.h"
#include "gk_rng.h"

typedef struct logsim_log {
  char text[8192];
  size_t len;
} logsim_log;

typedef struct logsim_cfg {
  logsim_log *log; /* may be NULL: no logging */
  int64_t start;
} logsim_cfg;

void logsim_append(logsim_log *log, const char *s);
extern const gk_sim logsim_sim;       /* every_ms 0, step 1/60 */
extern const gk_sim logsim_sim_250;   /* every_ms 250 */
extern const gk_sim logsim_sim_tenth; /* step 1/10 */

typedef struct logsim_state {
  logsim_log *log;
  int64_t counter;
  uint64_t steps;
  uint64_t version;
  uint32_t players;
  uint32_t pending_events;
  gk_rng rng;
} logsim_state;

#endif
