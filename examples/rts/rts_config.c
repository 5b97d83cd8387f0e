/* rts_config.c: the rts genre's config keys (see rts.h). Every key is an
 * integer with a range; the table is the one place that lists them. */
#include <stddef.h>
#include <string.h>

#include "rts_internal.h"

typedef struct key {
  const char *name;
  size_t off;
  int64_t min, max, def;
} key;

#define K(n, lo, hi, d)                                                        \
  { #n, offsetof(rts_config, n), lo, hi, d }
static const key keys[] = {
    K(width, 8, RTS_MAP_MAX, 16),  K(height, 8, RTS_MAP_MAX, 12),
    K(map_seed, 0, INT32_MAX, 1),  K(wall_percent, 0, 30, 12),
    K(units, 1, RTS_UNITS_MAX, 4), K(hp, 1, 100000, 100),
    K(damage, 1, 1000, 6),         K(cooldown, 1, 600, 4),
    K(move_steps, 1, 600, 3),      K(max_steps, 0, INT32_MAX, 0),
};
#define NKEYS (sizeof keys / sizeof keys[0])

static int64_t *field(void *cfg, const key *k) {
  return (int64_t *)((char *)cfg + k->off);
}

void rts__config_default(void *cfg) {
  memset(cfg, 0, sizeof(rts_config));
  for (size_t i = 0; i < NKEYS; i++) *field(cfg, &keys[i]) = keys[i].def;
}

int rts__config_set(void *cfg, const char *name, const gk_value *v, char *err,
                    size_t errlen) {
  for (size_t i = 0; i < NKEYS; i++) {
    const key *k = &keys[i];
    if (strcmp(k->name, name) != 0) continue;
    if (v->type != GK_VALUE_INT)
      return gk_errf(err, errlen, GK_EINVAL, "%s: expected an integer", name);
    if (v->i < k->min || v->i > k->max)
      return gk_errf(err, errlen, GK_ERANGE,
                     "%s: must be in %lld..%lld, got %lld", name,
                     (long long)k->min, (long long)k->max, (long long)v->i);
    *field(cfg, k) = v->i;
    return 0;
  }
  return gk_errf(err, errlen, GK_ENOTFOUND, "unknown key \"%s\"", name);
}

void rts__config_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  for (size_t i = 0; i < NKEYS; i++) {
    gk_value v = {GK_VALUE_INT, *field((void *)cfg, &keys[i]), NULL};
    cb(ctx, keys[i].name, &v);
  }
}
