/* tally_lib.c: tests/net's tally genre as a genre library, the way a
 * studio ships its genre. Built these ways (tests/genre_load/meson.build):
 *   (plain)             exports tally_sim through GK_GENRE_EXPORT
 *   -DTALLY_LIB_ABI=N   exports a copy whose abi is N (a stale build; a
 *                       copy_state hook past an ABI 3 struct's end, which
 *                       a loader must not read)
 *   -DTALLY_LIB_VERSION=N  a copy whose genre version is N
 *   -DTALLY_LIB_NOSYM   exports nothing (not a genre library) */
#include "tally.h"

#if defined(TALLY_LIB_ABI) || defined(TALLY_LIB_VERSION)
static gk_sim changed;

#ifdef TALLY_LIB_ABI
static int not_this_abis(void *dst, const void *src) {
  (void)dst;
  (void)src;
  return GK_EINVAL;
}
#endif

GK__EXPORT const gk_sim *gk_genre_descriptor(void);
GK__EXPORT const gk_sim *gk_genre_descriptor(void) {
  changed = tally_sim;
#ifdef TALLY_LIB_ABI
  changed.abi = TALLY_LIB_ABI;
  changed.copy_state = not_this_abis;
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
