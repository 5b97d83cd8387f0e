/* probe_rts.c: the rts genre's determinism probe. Prints the hash chain
 * of a fixed bot run (gk_testkit_probe): build it with other compilers,
 * optimisation levels or CPUs and compare the output; the lines must be
 * identical.
 *
 *   probe_rts [STEPS] [SEED]     (default 3000 steps, seed 1) */
#include <gamekit/gk_testkit_probe.h>
#include <stdio.h>
#include <stdlib.h>

#include "rts.h"

int main(int argc, char **argv) {
  uint64_t steps = 3000, seed = 1;
  if ((argc > 1 && gk_parse_u64(argv[1], &steps) != 0) ||
      (argc > 2 && gk_parse_u64(argv[2], &seed) != 0) || argc > 3) {
    fprintf(stderr, "usage: probe_rts [STEPS] [SEED]\n");
    return 2;
  }
  char err[256];
  for (uint32_t players = 2; players <= 4; players++)
    if (gk_testkit_probe(&gk_rts_sim, NULL, seed, players, steps, 1000, stdout,
                         NULL, err, sizeof err) != 0) {
      fprintf(stderr, "probe_rts: %s\n", err);
      return 1;
    }
  return 0;
}
