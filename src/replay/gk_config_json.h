/* gk_config_json.h: a genre's config, to and from JSON.
 *
 * The core keeps configs as plain structs changed one key at a time
 * (gk_sim.config_set) so that it links only libc. This module is the glue
 * to cJSON, shared by replay headers (src/replay), the gk-replay tool and
 * the server's room configs.
 *
 * Mapping: a JSON integer is GK_VALUE_INT, true/false is GK_VALUE_BOOL, a
 * string is GK_VALUE_STRING. A nested object or array is flattened into
 * dotted keys ("waves": {"count": 3} sets "waves.count"; "spawns": [5, 7]
 * sets "spawns.0" and "spawns.1"), so it is accepted exactly when the genre
 * knows those keys, and otherwise rejected by the genre's config_set with a
 * message naming the key. null, non-integral numbers, integers beyond
 * +/-2^53 (not exact in JSON), duplicate keys, keys longer than
 * GK_CONFIG_KEY_MAX, nesting deeper than GK_CONFIG_DEPTH_MAX and more than
 * GK_CONFIG_KEYS_MAX keys are errors.
 */
#ifndef GK_CONFIG_JSON_H
#define GK_CONFIG_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "gk_sim.h"

#define GK_CONFIG_KEY_MAX 128   /* bytes in a (dotted) key, without NUL */
#define GK_CONFIG_DEPTH_MAX 8   /* object/array nesting below the top */
#define GK_CONFIG_KEYS_MAX 1024 /* keys applied from one object */

/* Fills `cfg` (sim->config_size bytes, caller-owned) with the genre's
 * defaults, then applies every key of `obj` in document order through
 * sim->config_set. `obj` may be NULL (defaults only); otherwise it must be
 * an object. Returns 0, or the genre's code (GK_ENOTFOUND, GK_EINVAL,
 * GK_ERANGE) or GK_EINVAL/GK_ETOOBIG for what this module rejects, with a
 * message naming the key in err. On failure cfg is reset to the defaults.
 * Either way the caller releases cfg with sim->config_free (if non-NULL). */
int gk_config_from_json(const gk_sim *sim, void *cfg, const cJSON *obj,
                        char *err, size_t errlen);

/* Returns a new JSON object with every key of cfg (sim->config_each, in its
 * order; dotted keys stay flat), owned by the caller (cJSON_Delete). Returns
 * NULL on ENOMEM or if an integer value is beyond +/-2^53. Reading the
 * object back with gk_config_from_json gives the same config. */
cJSON *gk_config_to_json(const gk_sim *sim, const void *cfg);

#endif
