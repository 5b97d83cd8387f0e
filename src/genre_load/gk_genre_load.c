/* gk_genre_load.c: see gk_genre_load.h. */
#include "gk_genre_load.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The descriptor a library's symbol returns, or NULL with a message. The
 * function pointer is read through a union: ISO C has no cast from the
 * void * dlsym returns to a function pointer. */
static const gk_sim *descriptor(void *lib, const char *path, int *rc, char *err,
                                size_t errlen) {
  union {
    void *p;
    gk_genre_descriptor_fn fn;
  } sym;
  dlerror();
  sym.p = dlsym(lib, GK_GENRE_SYMBOL);
  if (sym.p == NULL) {
    *rc = gk_errf(err, errlen, GK_ENOTFOUND,
                  "genre library '%s' does not export %s (define it with "
                  "GK_GENRE_EXPORT(descriptor), see docs/GENRE_GUIDE.md)",
                  path, GK_GENRE_SYMBOL);
    return NULL;
  }
  const gk_sim *sim = sym.fn();
  if (sim == NULL)
    *rc = gk_errf(err, errlen, GK_EINVAL,
                  "genre library '%s': %s returned no descriptor", path,
                  GK_GENRE_SYMBOL);
  return sim;
}

/* The members an older descriptor lacks (ABI 1 ends before `late_join`,
 * ABI 2 before `prediction` and `bot_answer`, ABI 3 before `copy_state`)
 * are read from a copy where they are zero. One copy per descriptor (loading a
 * library twice finds the first), kept for the life of the process like the
 * library. */
#define OLD_ABI_MAX 16
static struct {
  const gk_sim *from;
  gk_sim *copy;
} old_abi[OLD_ABI_MAX];

static const gk_sim *upgrade_old(const gk_sim *sim, int *rc, char *err,
                                 size_t errlen) {
  for (size_t i = 0; i < OLD_ABI_MAX; i++)
    if (old_abi[i].from == sim) return old_abi[i].copy;
  for (size_t i = 0; i < OLD_ABI_MAX; i++) {
    if (old_abi[i].from != NULL) continue;
    gk_sim *c = calloc(1, sizeof *c);
    if (c == NULL) break;
    memcpy(c, sim,
           sim->abi == 1   ? offsetof(gk_sim, late_join)
           : sim->abi == 2 ? offsetof(gk_sim, prediction)
                           : offsetof(gk_sim, copy_state));
    c->abi = GK_SIM_ABI;
    old_abi[i].from = sim;
    old_abi[i].copy = c;
    return c;
  }
  *rc = gk_errf(err, errlen, GK_ENOMEM,
                "no room for another ABI %u genre (out of memory or more "
                "than %d)",
                (unsigned)sim->abi, OLD_ABI_MAX);
  return NULL;
}

/* Every check after the symbol was found; *simp may be replaced by an
 * upgraded copy. Returns 0 or a code. */
static int check(const gk_sim **simp, const char *path, const char *name,
                 char *err, size_t errlen) {
  const gk_sim *sim = *simp;
  if (sim->abi < GK_SIM_ABI_MIN || sim->abi > GK_SIM_ABI)
    return gk_errf(err, errlen, GK_EVERSION,
                   "genre library '%s' was built for gk_sim ABI %u, but this "
                   "program speaks ABI %u..%u: rebuild the genre against this "
                   "gamekit",
                   path, (unsigned)sim->abi, (unsigned)GK_SIM_ABI_MIN,
                   (unsigned)GK_SIM_ABI);
  if (sim->abi < GK_SIM_ABI) {
    int rc = 0;
    sim = upgrade_old(sim, &rc, err, errlen);
    if (sim == NULL) return rc;
    *simp = sim;
  }
  char msg[GK_ERRMSG_MAX];
  int rc = gk_sim_check(sim, msg, sizeof msg);
  if (rc != 0)
    return gk_errf(err, errlen, rc, "genre library '%s': %s", path, msg);
  if (name != NULL && strcmp(sim->name, name) != 0)
    return gk_errf(err, errlen, GK_EMISMATCH,
                   "genre library '%s' holds genre \"%s\", not \"%s\"", path,
                   sim->name, name);
  rc = gk_genre_add(sim, msg, sizeof msg);
  if (rc != 0)
    return gk_errf(err, errlen, rc, "genre library '%s': %s", path, msg);
  return 0;
}

int gk_genre_load(const char *path, const char *name, const gk_sim **out,
                  char *err, size_t errlen) {
  if (out != NULL) *out = NULL;
  if (path == NULL || *path == '\0')
    return gk_errf(err, errlen, GK_EINVAL, "no genre library path");
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    return gk_errf(err, errlen, GK_EIO, "cannot load genre library '%s': %s",
                   path, why != NULL ? why : "unknown reason");
  }
  int rc = 0;
  const gk_sim *sim = descriptor(lib, path, &rc, err, errlen);
  if (sim != NULL) rc = check(&sim, path, name, err, errlen);
  if (rc != 0) {
    dlclose(lib);
    return rc;
  }
  /* Kept open for the life of the process: the registry points into it. */
  if (out != NULL) *out = sim;
  return 0;
}
