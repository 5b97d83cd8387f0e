/* gk_sv_config.c: the survivors config keys.
 *
 * One table drives defaults, config_set, config_each and the range checks,
 * so a key cannot be settable yet missing from config_each (replay headers
 * write the config back out through it). Every key is an int32 field of
 * gk_sv_config; `spawning` is the one BOOL. Cross-key rules live in
 * gk__sv_config_check, which create calls.
 */
#include <stddef.h>
#include <string.h>

#include "gk_sv_internal.h"

typedef struct key_info {
  const char *name;
  size_t offset;
  int32_t def, min, max;
  int is_bool;
} key_info;

#define KEY(f, d, lo, hi)                                                      \
  { #f, offsetof(gk_sv_config, f), d, lo, hi, 0 }

static const key_info keys[] = {
    KEY(arena_width, 1600, 256, 16384),
    KEY(arena_height, 1600, 256, 16384),
    KEY(duration_steps, 36000, 1, 5184000),
    KEY(wave_steps, 1800, 60, 1000000),
    KEY(spawn_interval_start, 40, 1, 3600),
    KEY(spawn_interval_min, 6, 1, 3600),
    KEY(spawn_interval_step, 2, 0, 3600),
    KEY(spawn_batch, 1, 1, 256),
    KEY(spawn_batch_every_waves, 2, 0, 10000),
    KEY(spawn_distance, 360, 16, 8192),
    KEY(max_enemies, 800, 1, GK_SV_ENTITIES_MAX),
    KEY(max_projectiles, 500, 1, GK_SV_ENTITIES_MAX),
    KEY(max_gems, 500, 1, GK_SV_ENTITIES_MAX),
    KEY(pick_timeout_steps, 600, 1, 1000000),
    KEY(hit_cooldown_steps, 30, 0, 3600),
    KEY(player_health, 100, 1, 1000000),
    KEY(enemy_health_pct, 100, 1, 100000),
    KEY(wand_cooldown_steps, 24, 1, 3600),
    KEY(start_weapon_level, 1, 1, GK_SV_WEAPON_LEVEL_MAX),
    {"spawning", offsetof(gk_sv_config, spawning), 1, 0, 1, 1},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static int32_t *field(void *cfg, const key_info *k) {
  return (int32_t *)(void *)((char *)cfg + k->offset);
}
static int32_t field_get(const void *cfg, const key_info *k) {
  return *(const int32_t *)(const void *)((const char *)cfg + k->offset);
}

void gk__sv_config_default(void *cfg) {
  memset(cfg, 0, sizeof(gk_sv_config));
  for (size_t i = 0; i < NKEYS; i++) *field(cfg, &keys[i]) = keys[i].def;
}

int gk__sv_config_set(void *cfg, const char *key, const gk_value *v, char *err,
                      size_t errlen) {
  if (cfg == NULL || key == NULL || v == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "survivors: missing argument");
  for (size_t i = 0; i < NKEYS; i++) {
    const key_info *k = &keys[i];
    if (strcmp(k->name, key) != 0) continue;
    if (k->is_bool) {
      if (v->type != GK_VALUE_BOOL || (v->i != 0 && v->i != 1))
        return gk_errf(err, errlen, GK_EINVAL,
                       "survivors: key '%s' must be a boolean", key);
    } else if (v->type != GK_VALUE_INT) {
      return gk_errf(err, errlen, GK_EINVAL,
                     "survivors: key '%s' must be an integer", key);
    }
    if (v->i < k->min || v->i > k->max)
      return gk_errf(err, errlen, GK_ERANGE,
                     "survivors: key '%s' is %lld, must be in %ld..%ld", key,
                     (long long)v->i, (long)k->min, (long)k->max);
    *field(cfg, k) = (int32_t)v->i;
    return 0;
  }
  return gk_errf(err, errlen, GK_ENOTFOUND, "survivors: unknown key '%s'", key);
}

void gk__sv_config_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  for (size_t i = 0; i < NKEYS; i++) {
    gk_value v;
    v.type = keys[i].is_bool ? GK_VALUE_BOOL : GK_VALUE_INT;
    v.i = field_get(cfg, &keys[i]);
    v.s = NULL;
    cb(ctx, keys[i].name, &v);
  }
}

/* A config struct can arrive filled by hand (or by a bad memcpy), so create
 * re-checks every range before the cross-key rules. */
int gk__sv_config_check(const gk_sv_config *cfg, char *err, size_t errlen) {
  if (cfg == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "survivors: no config");
  for (size_t i = 0; i < NKEYS; i++) {
    int32_t v = field_get(cfg, &keys[i]);
    if (v < keys[i].min || v > keys[i].max)
      return gk_errf(err, errlen, GK_ERANGE,
                     "survivors: key '%s' is %ld, must be in %ld..%ld",
                     keys[i].name, (long)v, (long)keys[i].min,
                     (long)keys[i].max);
  }
  if (cfg->spawn_interval_min > cfg->spawn_interval_start)
    return gk_errf(err, errlen, GK_ERANGE,
                   "survivors: key 'spawn_interval_min' (%ld) must not exceed "
                   "'spawn_interval_start' (%ld)",
                   (long)cfg->spawn_interval_min,
                   (long)cfg->spawn_interval_start);
  return 0;
}
