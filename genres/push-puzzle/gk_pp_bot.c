/* gk_pp_bot.c: push-puzzle's built-in bot (the descriptor's bot_init and
 * bot_next): random presses, undos, restarts and holds from its own
 * gk_rng, seeded per player by SplitMix64 (recorded bot replays depend on
 * the exact sequence). Moved out of gk_pp_sim.c unchanged.
 */
#include <string.h>

#include "gk_pp_internal.h"
#include "gk_rng.h"

/* The bot's storage comes from the caller with no alignment promise, so
 * it is bytes only; the PRNG is copied in and out. */
typedef struct pp_bot {
  uint8_t rng[sizeof(gk_rng)];
  uint8_t held;      /* direction bit being held, 0 none */
  uint8_t hold_left; /* steps the hold goes on */
} pp_bot;

void gk__pp_bot_init(void *botp, const void *cfg, uint64_t seed,
                     uint32_t player) {
  (void)cfg;
  pp_bot *bot = botp;
  uint64_t x = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(player + 1));
  uint64_t a = gk_splitmix64(&x);
  uint64_t b = gk_splitmix64(&x);
  gk_rng rng;
  gk_rng_seed(&rng, a, b);
  memcpy(bot->rng, &rng, sizeof rng);
  bot->held = 0;
  bot->hold_left = 0;
}

void gk__pp_bot_next(void *botp, uint8_t *rec) {
  pp_bot *bot = botp;
  rec[0] = 0;
  rec[1] = 0;
  if (bot->hold_left > 0) {
    bot->hold_left--;
    rec[0] = bot->held;
    if (bot->hold_left == 0) bot->held = 0;
    return;
  }
  gk_rng rng;
  memcpy(&rng, bot->rng, sizeof rng);
  uint32_t r = gk_rng_below(&rng, 1000);
  if (r < 2) {
    rec[1] = GK_PP_RESTART;
  } else if (r < 40) {
    rec[1] = GK_PP_UNDO;
  } else if (r < 500) {
    uint8_t d = (uint8_t)(1u << gk_rng_below(&rng, 4));
    rec[0] = d;
    rec[1] = d;
    if (gk_rng_below(&rng, 8) == 0) {
      bot->held = d;
      bot->hold_left = (uint8_t)gk_rng_range(&rng, 1, 40);
    }
  }
  memcpy(bot->rng, &rng, sizeof rng);
}

_Static_assert(sizeof(pp_bot) == GK__PP_BOT_SIZE,
               "GK__PP_BOT_SIZE is the bot's storage");
