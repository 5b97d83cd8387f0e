/* rts_bot.c: the rts genre's built-in bot. It sees only its config and
 * its own random numbers (bots never read the run state), so it gives
 * orders blind: every eighth step, usually "attack" a random enemy unit,
 * sometimes "move" to a random tile. Orders the rules cannot carry out
 * (a dead unit, a missing player) are ignored by the genre. */
#include <string.h>

#include "rts_internal.h"

void rts__bot_init(void *bot, const void *cfg, uint64_t seed, uint32_t player) {
  const rts_config *c = cfg;
  rts_bot *b = bot;
  memset(b, 0, sizeof *b);
  gk_rng_seed(&b->rng, seed, player * 2u + 1u);
  b->player = player;
  b->width = (uint32_t)c->width;
  b->height = (uint32_t)c->height;
  b->units = (uint32_t)c->units;
}

void rts__bot_next(void *bot, uint8_t *record) {
  rts_bot *b = bot;
  memset(record, 0, RTS_INPUT_SIZE);
  if (b->calls++ % 8 != b->player % 8) return;
  record[1] = (uint8_t)gk_rng_below(&b->rng, b->units);
  if (gk_rng_below(&b->rng, 5) == 0) {
    record[0] = RTS_ORDER_MOVE;
    record[2] = (uint8_t)gk_rng_below(&b->rng, b->width);
    record[3] = (uint8_t)gk_rng_below(&b->rng, b->height);
  } else {
    record[0] = RTS_ORDER_ATTACK;
    uint32_t other = 1u + gk_rng_below(&b->rng, RTS_PLAYERS_MAX - 1);
    record[2] = (uint8_t)((b->player + other) % RTS_PLAYERS_MAX);
    record[3] = (uint8_t)gk_rng_below(&b->rng, b->units);
  }
}
