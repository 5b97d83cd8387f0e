/* gk_genres.h: every genre this build knows, by name.
 *
 * Tools and the server look genres up here; nothing else names a genre's
 * descriptor directly. Each genre exports exactly one `const gk_sim`.
 */
#ifndef GK_GENRES_H
#define GK_GENRES_H

#include "gk_sim.h"

extern const gk_sim gk_push_puzzle_sim; /* genres/push-puzzle */
extern const gk_sim gk_survivors_sim;   /* genres/survivors */

/* NULL-terminated table of all genres. */
extern const gk_sim *const gk_genres[];

/* Looks a genre up by its `name`; NULL if unknown. */
const gk_sim *gk_genre_find(const char *name);

#endif
