/* rts_internal.h: shared by the rts genre's own files (rts.c, the config
 * table, the bot). */
#ifndef RTS_INTERNAL_H
#define RTS_INTERNAL_H

#include <gamekit/gk_rng.h>

#include "rts.h"

#define RTS_INPUT_SIZE 4

void rts__config_default(void *cfg);
int rts__config_set(void *cfg, const char *name, const gk_value *v, char *err,
                    size_t errlen);
void rts__config_each(const void *cfg, gk_config_each_cb cb, void *ctx);

/* The bot: plain data, seeded per player. */
typedef struct rts_bot {
  gk_rng rng;
  uint32_t player, calls;
  uint32_t width, height, units;
} rts_bot;

void rts__bot_init(void *bot, const void *cfg, uint64_t seed, uint32_t player);
void rts__bot_next(void *bot, uint8_t *record);

#endif
