/* gk_genres.c: the genre table. Adding a genre is one line here and one
 * subdir() in the top-level meson.build. */
#include "gk_genres.h"

#include <string.h>

const gk_sim *const gk_genres[] = {
    &gk_push_puzzle_sim,
    &gk_survivors_sim,
    NULL,
};

const gk_sim *gk_genre_find(const char *name) {
  if (name == NULL)
    return NULL;
  for (size_t i = 0; gk_genres[i] != NULL; i++)
    if (strcmp(gk_genres[i]->name, name) == 0)
      return gk_genres[i];
  return NULL;
}
