/* gk_genre_load.h: genres from shared objects, for programs that host
 * genres they were not built with (gk-server, gk-bot, gk-replay, a
 * studio's own tools).
 *
 * A genre library is a shared object that exports one symbol,
 * GK_GENRE_SYMBOL ("gk_genre_descriptor"), defined with
 * GK_GENRE_EXPORT(descriptor) (gk_sim.h; docs/GENRE_GUIDE.md). Loading it
 * checks, in this order, and stops at the first failure with a message
 * that names the file:
 *   - the file opens as a shared object (the dynamic linker's reason);
 *   - it exports the symbol, and the function returns a descriptor;
 *   - the descriptor's abi is in GK_SIM_ABI_MIN..GK_SIM_ABI (the numbers
 *     are named); an ABI 1, 2 or 3 descriptor is copied into an ABI 4
 *     one whose appended members are zero (late_join, prediction 0,
 *     bot_answer and copy_state NULL), and that copy is the one
 *     registered and returned;
 *   - gk_sim_check accepts it, and it has the name the caller expects;
 *   - gk_genre_add accepts it (no other genre has that name).
 * On success the genre is in the process's registry (gk_genre_find finds
 * it) and the library stays loaded until the process exits: descriptors
 * point into it. Loading the same library twice is a no-op.
 *
 * Not part of the core: it uses the dynamic linker (dlopen is in libc on
 * glibc >= 2.34). Start-up only, from one thread.
 */
#ifndef GK_GENRE_LOAD_H
#define GK_GENRE_LOAD_H

#include <stddef.h>

#include "gk_genres.h"
#include "gk_sim.h"

/* Loads the genre library at `path` (must be non-NULL; a path without a
 * '/' is searched by the dynamic linker, so write "./x.so" for a file in
 * the current directory). `name` may be NULL; if given, the genre must
 * have that name. *out (out may be NULL) gets the descriptor. Returns 0,
 * or GK_EIO (cannot open), GK_ENOTFOUND (no symbol), GK_EVERSION (another
 * ABI), GK_EINVAL (a bad descriptor), GK_EMISMATCH (another name),
 * GK_EEXIST or GK_EFULL (from gk_genre_add), with a message in err (may
 * be NULL). */
int gk_genre_load(const char *path, const char *name, const gk_sim **out,
                  char *err, size_t errlen);

#endif
