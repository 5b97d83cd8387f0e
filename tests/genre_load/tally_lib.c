/* tally_lib.c: tests/net's tally genre as a genre library, the way a
 * studio ships its genre. Built four ways (tests/genre_load/meson.build):
 *   (plain)             exports tally_sim through GK_GENRE_EXPORT
 *   -DTALLY_LIB_ABI=N   exports a copy whose abi is N (a stale build)
 *   -DTALLY_LIB_VERSION=N  a copy whose genre version is N
 *   -DTALLY_LIB_NOSYM   exports nothing (not a genre library) */
#include "tally.h"

#if defined(TALLY_LIB_ABI) || defined(TALLY_LIB_VERSION)
static gk_sim changed;

GK__EXPORT const gk_sim *gk_genre_descriptor(void);
GK__EXPORT const gk_sim *gk_genre_descriptor(void) {
  changed = tally_sim;
#ifdef TALLY_LIB_ABI
  changed.abi = TALLY_LIB_ABI;
#else
  changed.version = TALLY_LIB_VERSION;
#endif
  return &changed;
}
#elif defined(TALLY_LIB_NOSYM)
int tally_lib_is_not_a_genre(void);
int tally_lib_is_not_a_genre(void) {
  return 1;
}
#else
GK_GENRE_EXPORT(tally_sim)
#endif
