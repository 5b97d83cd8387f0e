/* gk_genres.h: every genre this process knows, by name.
 *
 * Two kinds of genres: the built-in ones, whose table is generated from
 * the genres the build compiles (genres/meson.build), so this header names
 * none; and genres added at run time with gk_genre_add (gk-server, gk-bot
 * and gk-replay add genres they load from shared objects through
 * src/genre_load; a test may add a genre it links). Tools and the server
 * look genres up here; code that needs one genre's descriptor or toolkit
 * includes that genre's public header (gk_push_puzzle.h, gk_survivors.h),
 * where the descriptor is declared once.
 *
 * The added genres live in one process-wide table: add them at start-up,
 * from one thread, before anything looks genres up from another thread.
 */
#ifndef GK_GENRES_H
#define GK_GENRES_H

#include <stddef.h>

#include "gk_sim.h"

#define GK_GENRES_ADDED_MAX 16 /* genres gk_genre_add accepts per process */

/* NULL-terminated table of the built-in genres, in the build's subdir()
 * order. */
extern const gk_sim *const gk_genres[];

/* Looks a genre up by its `name`, built-in first, then added; NULL if
 * unknown (or name is NULL). */
const gk_sim *gk_genre_find(const char *name);

/* The i-th genre: the built-in ones in table order, then the added ones in
 * the order they were added; NULL past the last. */
const gk_sim *gk_genre_at(size_t i);

/* Adds a genre (must be non-NULL; the descriptor must outlive every use,
 * e.g. static or from a shared object that is never closed). Checks it
 * with gk_sim_check. Adding the same descriptor twice is a no-op. Returns
 * 0, or GK_EINVAL / GK_EVERSION (a bad descriptor), GK_EEXIST (another
 * descriptor has that name) or GK_EFULL (GK_GENRES_ADDED_MAX reached),
 * with a message in err (may be NULL). */
int gk_genre_add(const gk_sim *sim, char *err, size_t errlen);

#endif
