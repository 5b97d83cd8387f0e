/* gk_genres.c: the genre table. Adding a genre is a subdir() in the
 * top-level meson.build whose meson.build appends its descriptor's name to
 * `genre_syms`; the table below is generated from that list. */
#include "gk_genres.h"

#include <string.h>

#define GK__GENRE(sym) &sym,
const gk_sim *const gk_genres[] = {
#include "gk_genres_table.h"
    NULL,
};
#undef GK__GENRE

const gk_sim *gk_genre_find(const char *name) {
  if (name == NULL)
    return NULL;
  for (size_t i = 0; gk_genres[i] != NULL; i++)
    if (strcmp(gk_genres[i]->name, name) == 0)
      return gk_genres[i];
  return NULL;
}
