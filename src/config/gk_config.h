/* gk_config.h: a genre's config, to and from JSON. The one mapper.
 *
 * The core keeps configs as plain structs changed one key at a time
 * (gk_sim.config_set) so that it links only libc. This module is the only
 * glue between those calls and cJSON. Every reader of genre options uses
 * it: the server's config file and room options (src/server), MATCH_START
 * on every peer (src/net), replay headers (src/replay), gk-replay, gk-bot,
 * the tests and the fuzzers. So an option the server accepts is accepted
 * by every peer, the same way.
 *
 * Mapping: a JSON integer is GK_VALUE_INT, true/false is GK_VALUE_BOOL, a
 * string is GK_VALUE_STRING. A nested object or array is flattened into
 * dotted keys ("waves": {"count": 3} sets "waves.count"; "spawns": [5, 7]
 * sets "spawns.0" and "spawns.1"), so it is accepted exactly when the genre
 * knows those keys, and otherwise rejected by the genre's config_set. Keys
 * are applied in document order. null, non-integral numbers, integers
 * beyond +/-2^53 (not exact in JSON), empty keys, empty nested objects or
 * arrays, duplicate keys (at any depth), keys longer than
 * GK_CONFIG_KEY_MAX, nesting deeper than GK_CONFIG_DEPTH_MAX and more than
 * GK_CONFIG_KEYS_MAX keys are errors. Each leaf goes through
 * gk_config_apply_kv (gk_config_kv.h), the cJSON-free entry point a
 * browser page feeds from JSON.parse.
 *
 * Messages: every error names the key as a JSON path under `path` (the
 * caller's name for the object, e.g. "options" or
 * "genres.survivors.options"), then the reason:
 *
 *   options.max_enemies: survivors: key 'max_enemies' is 0, must be in ...
 *
 * `path` may be NULL or "" (the key alone). Messages are written into
 * err (errlen bytes, may be NULL/0), truncated, always NUL-terminated.
 *
 * Ownership: cfg is sim->config_size bytes owned by the caller, released
 * with sim->config_free (if non-NULL) whatever these functions return.
 * `sim` must be a checked descriptor (gk_sim_check); NULL sim or cfg is
 * GK_EINVAL. Nothing here keeps a pointer to its arguments.
 */
#ifndef GK_CONFIG_H
#define GK_CONFIG_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "gk_config_kv.h" /* the limits; one flattened key (no cJSON) */
#include "gk_sim.h"

/* Applies every key of `obj` to cfg as it is (already filled by
 * config_default or an earlier apply). `obj` may be NULL (nothing to do);
 * otherwise it must be an object (else GK_EINVAL). Returns 0, the genre's
 * code (GK_ENOTFOUND, GK_EINVAL, GK_ERANGE, ...) or GK_EINVAL/GK_ETOOBIG
 * for what this module rejects, with the message in err. On failure the
 * keys before the bad one stay applied: reset or release cfg. */
int gk_config_apply(const gk_sim *sim, void *cfg, const cJSON *obj,
                    const char *path, char *err, size_t errlen);

/* The same for JSON text of `len` bytes (need not be NUL-terminated), e.g.
 * MATCH_START's or CREATE_ROOM's options. NULL, empty or whitespace-only
 * text is no options (returns 0). Text that is not exactly one JSON object
 * (bad JSON, trailing text, a NUL byte, another type) is GK_EPARSE
 * ("<path>: must be a JSON object"); more than GK_CONFIG_TEXT_MAX bytes is
 * GK_ETOOBIG. */
int gk_config_apply_text(const gk_sim *sim, void *cfg, const char *text,
                         size_t len, const char *path, char *err,
                         size_t errlen);

/* The peer engine's options hook (gk_net_peer_options.apply_options, ctx
 * unused): MATCH_START's options through gk_config_apply_text with path
 * "options", exactly as the server read them. */
int gk_config_match_options(void *ctx, const gk_sim *sim, void *cfg,
                            const char *text, size_t len, char *err,
                            size_t errlen);

/* Parses `len` bytes of options text as gk_config_apply_text does, without
 * applying it: *out gets a new object owned by the caller (cJSON_Delete),
 * or NULL for NULL/empty/whitespace-only text. out must be non-NULL.
 * Returns 0, GK_EPARSE or GK_ETOOBIG with a message under `path`. */
int gk_config_parse_text(const char *text, size_t len, const char *path,
                         cJSON **out, char *err, size_t errlen);

/* Fills cfg with the genre's defaults, then applies `obj` (NULL: defaults
 * only) with path "config" (the replay header's field). On failure cfg is
 * released (config_free) and reset to the defaults. Returns as
 * gk_config_apply. */
int gk_config_from_json(const gk_sim *sim, void *cfg, const cJSON *obj,
                        char *err, size_t errlen);

/* Returns a new JSON object with every key of cfg (sim->config_each, in its
 * order; dotted keys stay flat), owned by the caller (cJSON_Delete). Returns
 * NULL if sim or cfg is NULL, on ENOMEM, or if an integer value is beyond
 * +/-2^53. Reading the object back with gk_config_from_json gives the same
 * config. */
cJSON *gk_config_to_json(const gk_sim *sim, const void *cfg);

/* For messages about a JSON value: "an object", "an array", "a string",
 * "a boolean", "null", "a number", "an invalid value", or "nothing" for
 * NULL. A static string. */
const char *gk_config_type_name(const cJSON *v);

#endif
