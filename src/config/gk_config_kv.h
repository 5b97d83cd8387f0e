/* gk_config_kv.h: a genre's config from flattened keys, one key at a time,
 * with no JSON parser (libc + gk_core: library gk_config_kv).
 *
 * The same mapping as gk_config.h's JSON walker, which calls
 * gk_config_apply_kv for every leaf: a key is the leaf's dotted path
 * ("waves.count", "spawns.0"), its value an integer, a boolean or a
 * string, judged by the genre's config_set. A program that has its own
 * JSON parser walks its tree in document order and, for every member,
 * calls gk_config_kv_node, then for a leaf one gk_config_apply_kv_* call
 * with the node's dotted key (gamekit.js's kvLeaves walks what JSON.parse
 * gives this way).
 *
 * What only a JSON text can carry (null, empty objects or arrays,
 * nesting depth, the key count, empty or long member names) is judged by
 * gk_config_kv_node, node by node in document order: gk_config.h's walker
 * calls it for every member, and a walker over another parser's tree
 * (gamekit.js over JSON.parse's) calls it the same way, so both refuse the
 * same node with the same message (duplicate keys stay the walker's: a
 * parser that keeps one of them cannot tell). Here the key must be
 * non-empty and at most GK_CONFIG_KEY_MAX bytes, and a number integral
 * within +/-2^53 (what a JSON number can say exactly).
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

/* gk_config_kv_node's value kinds (a JSON value's type). */
enum {
  GK_CONFIG_NODE_NUMBER = 0,
  GK_CONFIG_NODE_BOOL = 1,
  GK_CONFIG_NODE_STRING = 2,
  GK_CONFIG_NODE_NULL = 3,
  GK_CONFIG_NODE_OBJECT = 4,
  GK_CONFIG_NODE_ARRAY = 5
};

/* A walk over one config object: the dotted key of the node being judged
 * (first, so a pointer to the walk is one to its key) and the leaves
 * counted. Zero it before the walk. */
typedef struct gk_config_walk {
  char key[GK_CONFIG_KEY_MAX + 1];
  size_t leaves;
} gk_config_walk;

/* One member of an object or element of an array in the config object,
 * in document order: `keylen` the length of its parent's dotted key in
 * w->key (0: a member of the config object itself), `part` its name (NULL:
 * an array element, `index`), `kind` GK_CONFIG_NODE_*, `children` the
 * members of an object or array, `depth` its parent's depth (0: the config
 * object). Refuses an empty or long name or key, an object or array
 * nested deeper than GK_CONFIG_DEPTH_MAX or empty, null, and a leaf beyond
 * GK_CONFIG_KEYS_MAX; else leaves the node's dotted key in w->key (a leaf
 * then goes to gk_config_apply_kv*, an object or array's members come
 * next with keylen strlen(w->key) and depth + 1). 0 or a code, with the
 * walker's message in err. */
int gk_config_kv_node(gk_config_walk *w, size_t keylen, const char *part,
                      size_t index, int kind, size_t children, int depth,
                      const char *path, char *err, size_t errlen);

#endif
