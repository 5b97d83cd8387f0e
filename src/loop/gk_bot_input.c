/* gk_bot_input.c: a genre's built-in bots as a step input (see
 * gk_loop.h). The one place bots are seeded and asked for records, so
 * gk-replay record, the golden replays, the determinism probe, the bench
 * and a lockstep peer all derive the same inputs from the same seed. */
#include <string.h>

#include "gk_loop.h"
#include "gk_rng.h"

static int bot_read(gk_input *in, uint64_t step, gk_step_input *out) {
  gk_bot_input *b = (gk_bot_input *)in;
  size_t rs = b->sim->input_size;
  for (uint32_t p = 0; p < b->players; p++)
    b->sim->bot_next(b->bots[p], b->records + p * rs);
  out->step = step;
  out->active_mask = b->active_mask;
  out->flags = 0;
  out->players = b->players;
  out->inputs = b->records;
  return 0;
}

/* Checks the genre and the count, and clears *b. */
static int bot_setup(gk_bot_input *b, const gk_sim *sim, uint32_t players) {
  if (b == NULL || sim == NULL || sim->bot_size == 0 ||
      sim->bot_size > GK_BOT_SIZE_MAX || sim->bot_init == NULL ||
      sim->bot_next == NULL || sim->input_size > GK_INPUT_SIZE_MAX ||
      players == 0 || players > GK_PLAYERS_MAX)
    return GK_EINVAL;
  memset(b, 0, sizeof *b);
  b->base.read = bot_read;
  b->sim = sim;
  b->players = players;
  b->active_mask = gk_all_players(players);
  return 0;
}

int gk_bot_input_init(gk_bot_input *b, const gk_sim *sim, const void *cfg,
                      uint64_t seed, uint32_t players) {
  int rc = bot_setup(b, sim, players);
  if (rc != 0) return rc;
  uint64_t x = seed;
  for (uint32_t p = 0; p < players; p++)
    sim->bot_init(b->bots[p], cfg, gk_splitmix64(&x), p);
  return 0;
}

int gk_bot_input_init_one(gk_bot_input *b, const gk_sim *sim, const void *cfg,
                          uint64_t seed, uint32_t player) {
  int rc = bot_setup(b, sim, 1);
  if (rc != 0) return rc;
  sim->bot_init(b->bots[0], cfg, seed, player);
  return 0;
}
