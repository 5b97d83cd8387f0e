/* gk_genres.c: the genre table, generated from the build's list of genres
 * (see genres/meson.build). Nothing here names a genre. */
#include "gk_genres.h"

#include <string.h>

/* Each genre's descriptor is declared in its own public header; the table
 * needs only the symbol, so it declares it from the list too. */
#define GK__GENRE(sym) extern const gk_sim sym;
#include "gk_genres_table.h"
#undef GK__GENRE

#define GK__GENRE(sym) &sym, /* NOLINT(bugprone-macro-parentheses) */
const gk_sim *const gk_genres[] = {
#include "gk_genres_table.h"
    NULL,
};
#undef GK__GENRE

const gk_sim *gk_genre_find(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; gk_genres[i] != NULL; i++)
    if (strcmp(gk_genres[i]->name, name) == 0) return gk_genres[i];
  return NULL;
}
