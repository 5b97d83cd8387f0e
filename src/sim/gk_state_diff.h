/* gk_state_diff.h: which fields two canonical states disagree on.
 *
 * Given a genre, its config and two byte strings that write_state produced
 * (for example the referee's and a peer's state at one step), reads both
 * back with the genre's read_state, writes them again through a field
 * callback and matches the fields by their unique paths (gk_path). A field
 * present on one side only (a list that is longer on one side) counts as a
 * difference too. A BYTES field is compared byte by byte: a differing byte
 * is reported as `path[i]`.
 *
 * The result keeps the first `cap` differences in field order (A's write
 * order, then fields only B has) and counts all of them. Part of the core:
 * libc only, allocates while it runs (never on a step path) and frees
 * before it returns; the entries are caller-owned storage.
 */
#ifndef GK_STATE_DIFF_H
#define GK_STATE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "gk_sim.h"

typedef enum gk_diff_side {
  GK_DIFF_BOTH,   /* on both sides, with different values */
  GK_DIFF_ONLY_A, /* only A has this field (b is 0) */
  GK_DIFF_ONLY_B  /* only B has this field (a is 0) */
} gk_diff_side;

typedef struct gk_diff_field {
  char path[GK_PATH_MAX]; /* e.g. "players[0].health", "cells[37]" */
  gk_field_kind kind;     /* a byte of a BYTES field is GK_FIELD_U8 */
  gk_diff_side side;
  uint64_t a, b; /* values as the field callback saw them (signed kinds
                    sign-extended: reinterpret as int64_t) */
} gk_diff_field;

typedef struct gk_state_diff {
  gk_diff_field *fields; /* caller-owned, `cap` entries; may be NULL if 0 */
  uint32_t cap;
  uint32_t count;      /* entries filled: min(total, cap) */
  uint64_t total;      /* differing fields (and bytes of BYTES fields) */
  uint64_t fields_a;   /* fields A has */
  uint64_t fields_b;   /* fields B has */
  uint64_t first_byte; /* first differing byte offset; UINT64_MAX: equal */
  int unreadable;      /* 0, or 'a' / 'b': that side did not read back */
} gk_state_diff;

/* Sets up an empty result over caller storage. d must be non-NULL. */
void gk_state_diff_init(gk_state_diff *d, gk_diff_field *fields, uint32_t cap);

/* Compares A and B (each may be NULL only with length 0). sim and cfg (the
 * config both runs were created with) must be non-NULL. Returns 0 with
 * the differences in d; GK_EINVAL if a side does not read back (d->
 * unreadable says which, err names it and the genre's reason; first_byte
 * is still set); GK_ENOMEM. */
int gk_state_diff_run(gk_state_diff *d, const gk_sim *sim, const void *cfg,
                      const void *a, size_t alen, const void *b, size_t blen,
                      char *err, size_t errlen);

/* One value as text: decimal (signed for I kinds), true/false for BOOL.
 * Returns buf (n >= 24 holds any value). */
const char *gk_field_value_text(gk_field_kind kind, uint64_t value, char *buf,
                                size_t n);

/* The differences as text, one line each: "path: A != B" (a side that
 * lacks the field shows "(none)"), then "N fields differ" or "(and N
 * more)". snprintf-style: writes at most n bytes with the NUL and returns
 * the length it needed. buf may be NULL if n is 0. */
size_t gk_state_diff_text(const gk_state_diff *d, char *buf, size_t n);

/* The differences as one JSON object: {"total":N,"first_byte":K|null,
 * "fields":[{"path":"...","a":V,"b":V},...]} (a missing side is null;
 * integers beyond 2^53 are strings). snprintf-style, as above. */
size_t gk_state_diff_json(const gk_state_diff *d, char *buf, size_t n);

/* --- one field by path ---------------------------------------------------- */

/* Finds the value field at `path` (as gk_path names it) in the bytes
 * write_state produces for `state`: its byte offset, kind and width in
 * bytes. A byte of a BYTES field is found as `path[i]` (kind U8). Returns
 * 0 or GK_ENOTFOUND. sim, state and path must be non-NULL; the out
 * pointers may be NULL. */
int gk_state_field_at(const gk_sim *sim, const void *state, const char *path,
                      size_t *offset, gk_field_kind *kind, unsigned *width);

/* Writes `state`, adds `delta` to the integer field at `path` in the bytes
 * (wrapping within its width; a BOOL is flipped when delta is odd) and
 * reads the bytes back into a new state (*out, freed with sim->destroy).
 * Returns 0; GK_ENOTFOUND (no such path); the genre's code if the patched
 * bytes do not read back (e.g. a value out of range); GK_ENOMEM. */
int gk_state_patch_add(const gk_sim *sim, const void *cfg, const void *state,
                       const char *path, int64_t delta, void **out, char *err,
                       size_t errlen);

#endif
