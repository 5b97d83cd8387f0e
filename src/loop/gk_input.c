/* gk_input.c: the two stock step inputs, a script and a constant. Both
 * index by step number and keep no per-frame state, so end_step and
 * end_frame are NULL. */
#include <string.h>

#include "gk_loop.h"

static int script_read(gk_input *in, uint64_t step, gk_step_input *out) {
  gk_script_input *s = (gk_script_input *)in;
  size_t stride = (size_t)s->players * s->input_size;
  out->step = step;
  out->players = s->players;
  out->active_mask = s->active_mask;
  out->flags = 0;
  if (step < s->count) {
    out->inputs = s->records + (size_t)step * stride;
    if (step + 1 == s->count) out->flags = s->end_flags;
  } else {
    out->inputs = s->neutral;
  }
  return 0;
}

void gk_script_input_init(gk_script_input *s, const uint8_t *records,
                          uint64_t count, uint32_t players,
                          uint32_t input_size) {
  memset(s, 0, sizeof *s);
  s->base.read = script_read;
  s->records = records;
  s->count = records != NULL ? count : 0;
  s->players = players;
  s->input_size = input_size;
  s->active_mask = gk_all_players(players);
}

static int const_read(gk_input *in, uint64_t step, gk_step_input *out) {
  gk_const_input *c = (gk_const_input *)in;
  out->step = step;
  out->players = c->players;
  out->active_mask = c->active_mask;
  out->flags = 0;
  out->inputs = c->records;
  return 0;
}

int gk_const_input_init(gk_const_input *c, const uint8_t *records,
                        uint32_t players, uint32_t input_size) {
  memset(c, 0, sizeof *c);
  if (players > GK_PLAYERS_MAX || input_size > GK_INPUT_SIZE_MAX)
    return GK_EINVAL;
  c->base.read = const_read;
  c->players = players;
  c->active_mask = gk_all_players(players);
  if (records != NULL)
    memcpy(c->records, records, (size_t)players * input_size);
  return 0;
}
