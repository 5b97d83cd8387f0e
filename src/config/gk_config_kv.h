/* gk_config_kv.h: a genre's config from flattened keys, one key at a time,
 * with no JSON parser (libc + gk_core: library gk_config_kv).
 *
 * The same mapping as gk_config.h's JSON walker, which calls
 * gk_config_apply_kv for every leaf: a key is the leaf's dotted path
 * ("waves.count", "spawns.0"), its value an integer, a boolean or a
 * string, judged by the genre's config_set. A program that has its own
 * JSON parser feeds it directly; a browser page, for instance, flattens
 * what JSON.parse gives and calls one function per leaf:
 *
 *   function flat(o, pre) {  // keys in document order, as the walker
 *     for (const [k, v] of Object.entries(o)) {
 *       const key = pre ? pre + "." + k : k;
 *       if (v !== null && typeof v === "object") flat(v, key);
 *       else if (typeof v === "number") kv_number(key, v);
 *       else if (typeof v === "boolean") kv_bool(key, v ? 1 : 0);
 *       else if (typeof v === "string") kv_text(key, v);
 *     }
 *   }
 *
 * What only a JSON text can carry (null, empty objects or arrays,
 * duplicate keys, nesting depth, the key count) is the walker's to refuse;
 * here the key must be non-empty and at most GK_CONFIG_KEY_MAX bytes, and
 * a number integral within +/-2^53 (what a JSON number can say exactly).
 * Messages are the walker's: "<path>.<key>: <reason>" (path may be NULL
 * or ""), written into err (errlen bytes, may be NULL/0), truncated, always
 * NUL-terminated. On failure cfg keeps every key applied before; release
 * it with sim->config_free as always.
 */
#ifndef GK_CONFIG_KV_H
#define GK_CONFIG_KV_H

#include <stddef.h>
#include <stdint.h>

#include "gk_sim.h"

#define GK_CONFIG_KEY_MAX 128         /* bytes in a (dotted) key, without NUL */
#define GK_CONFIG_DEPTH_MAX 8         /* object/array nesting below the top */
#define GK_CONFIG_KEYS_MAX 1024       /* keys applied from one object */
#define GK_CONFIG_TEXT_MAX (1u << 20) /* bytes of JSON text */

/* Sets one key to `v` through sim->config_set. Returns 0, the genre's code
 * (GK_ENOTFOUND, GK_EINVAL, GK_ERANGE, ...; a positive one becomes
 * GK_EINVAL), GK_EINVAL (no genre, config, key or value; an empty key) or
 * GK_ETOOBIG (a key over GK_CONFIG_KEY_MAX), with the message in err. */
int gk_config_apply_kv(const gk_sim *sim, void *cfg, const char *key,
                       const gk_value *v, const char *path, char *err,
                       size_t errlen);

/* The same with the value as an integer (within +/-2^53, as JSON can carry
 * it), a number (a JavaScript one: integral and within +/-2^53, else
 * GK_EINVAL), a boolean (0 false, anything else true) or a string (NULL:
 * GK_EINVAL). */
int gk_config_apply_kv_int(const gk_sim *sim, void *cfg, const char *key,
                           int64_t i, const char *path, char *err,
                           size_t errlen);
int gk_config_apply_kv_number(const gk_sim *sim, void *cfg, const char *key,
                              double d, const char *path, char *err,
                              size_t errlen);
int gk_config_apply_kv_bool(const gk_sim *sim, void *cfg, const char *key,
                            int b, const char *path, char *err, size_t errlen);
int gk_config_apply_kv_text(const gk_sim *sim, void *cfg, const char *key,
                            const char *s, const char *path, char *err,
                            size_t errlen);

#endif
