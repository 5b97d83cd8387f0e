/* gk_web_internal.h: the gk_web struct, shared by gk_web.c (peer, out
 * queue, lobby), gk_web_state.c (input source, state map) and gk_web_em.c
 * (the JavaScript exports). Not for callers. */
#ifndef GK_WEB_INTERNAL_H
#define GK_WEB_INTERNAL_H

#include "gk_state.h"
#include "gk_web.h"

/* The device source: axes held, presses waiting for the next sample. */
typedef struct gk__web_input {
  gk_input base; /* must be first */
  gk_web *w;
  int8_t x, y;
  uint32_t presses; /* GK_WEB_BTN_*, cleared by end_step */
  uint8_t record[GK_INPUT_SIZE_MAX];
} gk__web_input;

struct gk_web {
  gk_net_peer peer;
  gk__web_input dev;
  gk_web_options_fn opts_fn;
  void *opts_ctx;
  uint8_t *out; /* the out queue */
  size_t out_len, out_cap;
  int out_err;
  uint8_t *map; /* the last state or sample map */
  size_t map_len, map_cap;
  /* gk_web_perturb */
  char perturb_path[GK_PATH_MAX];
  int32_t perturb_delta;
  int perturb_rc;
};

void gk__web_input_init(gk_web *w);

/* A growing buffer held elsewhere (gk_web's map, gk_web_replay's). */
typedef struct gk__web_buf {
  uint8_t **bytes;
  size_t *len, *cap;
} gk__web_buf;
/* Writes the state map (gk_web.h's layout) of `state` of genre `sim`, or,
 * with `sample_of` non-NULL, that loop's HUD sample, into b, headed by
 * `steps` and `hash`. Returns *b.bytes with *len its bytes, or NULL
 * (state NULL, out of memory). */
const uint8_t *gk__web_map_of(gk__web_buf b, const gk_sim *sim,
                              const void *state, const gk_loop *sample_of,
                              uint64_t steps, uint64_t hash, uint32_t *len);
/* The same, the fields of the top-level arrays named in `lists` (comma
 * separated; NULL or "": none) in columns after the map (gk_web.h). */
const uint8_t *gk__web_map_cols_of(gk__web_buf b, const gk_sim *sim,
                                   const void *state, const gk_loop *sample_of,
                                   uint64_t steps, uint64_t hash,
                                   const char *lists, uint32_t *len);
void gk__web_put_le(uint8_t *p, uint64_t v, unsigned n);

#endif
