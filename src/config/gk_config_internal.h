/* gk_config_internal.h: what src/config's files share and nothing else
 * includes. */
#ifndef GK_CONFIG_INTERNAL_H
#define GK_CONFIG_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "gk_config_kv.h"
#include "gk_err.h"

/* Writes "<path>.<key>: <reason>" (either part may be empty, the reason
 * from fmt and ap) into err (up to errlen bytes; err may be NULL) and
 * returns code: every error message of the mapper, on both entry points
 * (gk_config.c's JSON walk, gk_config_kv.c's flattened keys). */
int gk__config_failv(const char *path, const char *key, char *err,
                     size_t errlen, int code, const char *fmt, va_list ap)
    GK_PRINTF(6, 0);

/* gk_config_kv_node's two halves, for the JSON walker, which judges
 * duplicate keys between them: the member's name (its dotted key left in
 * w->key), then its value. */
int gk__config_kv_name(gk_config_walk *w, size_t keylen, const char *part,
                       size_t index, const char *path, char *err,
                       size_t errlen);
int gk__config_kv_value(gk_config_walk *w, int kind, size_t children, int depth,
                        const char *path, char *err, size_t errlen);

#endif
