/* gk_genres.c: the genre table, generated from the build's list of genres
 * (see genres/meson.build), and the genres added at run time. Nothing
 * here names a genre. */
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

static const gk_sim *added[GK_GENRES_ADDED_MAX];
static size_t nadded;

const gk_sim *gk_genre_at(size_t i) {
  size_t nbuilt = sizeof gk_genres / sizeof gk_genres[0] - 1;
  if (i < nbuilt) return gk_genres[i];
  i -= nbuilt;
  return i < nadded ? added[i] : NULL;
}

const gk_sim *gk_genre_find(const char *name) {
  if (name == NULL) return NULL;
  const gk_sim *g;
  for (size_t i = 0; (g = gk_genre_at(i)) != NULL; i++)
    if (strcmp(g->name, name) == 0) return g;
  return NULL;
}

int gk_genre_add(const gk_sim *sim, char *err, size_t errlen) {
  if (sim == NULL) return gk_errf(err, errlen, GK_EINVAL, "no descriptor");
  int rc = gk_sim_check(sim, err, errlen);
  if (rc != 0) return rc;
  const gk_sim *same = gk_genre_find(sim->name);
  if (same == sim) return 0;
  if (same != NULL)
    return gk_errf(err, errlen, GK_EEXIST,
                   "a genre named \"%s\" is already known (version %u)",
                   sim->name, (unsigned)same->version);
  if (nadded == GK_GENRES_ADDED_MAX)
    return gk_errf(err, errlen, GK_EFULL,
                   "cannot add genre \"%s\": %d genres were added already",
                   sim->name, GK_GENRES_ADDED_MAX);
  added[nadded++] = sim;
  return 0;
}
