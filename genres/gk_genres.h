/* gk_genres.h: every genre this build knows, by name.
 *
 * The table is generated from the genres the build compiles (genres/
 * meson.build), so this header names none. Tools and the server look
 * genres up here; code that needs one genre's descriptor or toolkit
 * includes that genre's public header (gk_push_puzzle.h, gk_survivors.h),
 * where the descriptor is declared once.
 */
#ifndef GK_GENRES_H
#define GK_GENRES_H

#include "gk_sim.h"

/* NULL-terminated table of all genres, in the build's subdir() order. */
extern const gk_sim *const gk_genres[];

/* Looks a genre up by its `name`; NULL if unknown. */
const gk_sim *gk_genre_find(const char *name);

#endif
