/* pp_util.c: see pp_util.h. */
#include "pp_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *pp_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  cr_assert_not_null(buf);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap + 1);
      cr_assert_not_null(buf);
    }
  }
  fclose(f);
  buf[n] = '\0';
  if (len != NULL) *len = n;
  return buf;
}

static void collect(void *ctx, const gk_event *ev) {
  pp_harness *h = ctx;
  if (h->nevents < PP_EVENTS_KEPT) h->events[h->nevents++] = *ev;
}

void pp_start(pp_harness *h, const char *levels, uint32_t players,
              int advance) {
  const gk_sim *sim = &gk_push_puzzle_sim;
  memset(h, 0, sizeof *h);
  char err[GK_ERRMSG_MAX] = "";
  sim->config_default(&h->cfg);
  if (levels != NULL) {
    gk_value v = {GK_VALUE_STRING, 0, levels};
    cr_assert_eq(sim->config_set(&h->cfg, "levels", &v, err, sizeof err), 0,
                 "%s", err);
  }
  gk_value adv = {GK_VALUE_BOOL, advance ? 1 : 0, NULL};
  cr_assert_eq(sim->config_set(&h->cfg, "advance", &adv, err, sizeof err), 0);
  h->players = players;
  h->state = sim->create(&h->cfg, 1, players, err, sizeof err);
  cr_assert_not_null(h->state, "%s", err);
  sim->drain_events(h->state, collect, h);
}

void pp_stop(pp_harness *h) {
  gk_push_puzzle_sim.destroy(h->state);
  gk_push_puzzle_sim.config_free(&h->cfg);
  h->state = NULL;
}

void pp_step(pp_harness *h, const uint8_t *records) {
  gk_step_input in;
  memset(&in, 0, sizeof in);
  in.step = h->step++;
  in.players = h->players;
  in.active_mask = (1u << h->players) - 1u;
  in.inputs = records;
  gk_push_puzzle_sim.step(h->state, &in);
  gk_push_puzzle_sim.drain_events(h->state, collect, h);
}

void pp_press(pp_harness *h, uint32_t p, uint8_t held, uint8_t press) {
  uint8_t rec[GK_PLAYERS_MAX * GK_PP_INPUT_SIZE];
  memset(rec, 0, sizeof rec);
  rec[p * GK_PP_INPUT_SIZE] = held;
  rec[p * GK_PP_INPUT_SIZE + 1] = press;
  pp_step(h, rec);
}

uint8_t *pp_state_bytes(const gk_sim *sim, const void *state, size_t *len) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(state, &b.w);
  uint8_t *bytes = gk_buf_writer_take(&b, len);
  cr_assert_eq(b.w.err, 0);
  gk_buf_writer_close(&b);
  return bytes;
}

char *pp_board(const gk_sim *sim, const void *state) {
  size_t len;
  uint8_t *bytes = pp_state_bytes(sim, state, &len);
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  (void)gk_read_u8(&r);  /* players */
  (void)gk_read_u32(&r); /* level */
  uint32_t w = gk_read_u16(&r), h = gk_read_u16(&r);
  (void)gk_read_u64(&r); /* box_digest */
  const uint8_t *cells = bytes + r.pos;
  r.pos += (size_t)w * h;
  uint32_t np = gk_read_u8(&r);
  uint32_t at[GK_PLAYERS_MAX];
  for (uint32_t i = 0; i < np && i < GK_PLAYERS_MAX; i++) {
    uint32_t x = gk_read_u16(&r), y = gk_read_u16(&r);
    at[i] = y * w + x;
  }
  cr_assert_eq(r.err, 0);
  char *out = malloc((size_t)(w + 1) * h + 1);
  cr_assert_not_null(out);
  size_t k = 0;
  for (uint32_t y = 0; y < h; y++) {
    for (uint32_t x = 0; x < w; x++) {
      uint32_t c = y * w + x;
      uint8_t v = cells[c];
      char ch = ' ';
      if (v & GK_PP_WALL)
        ch = '#';
      else if ((v & GK_PP_BOX) && (v & GK_PP_GOAL))
        ch = '*';
      else if (v & GK_PP_BOX)
        ch = '$';
      else if (v & GK_PP_GOAL)
        ch = '.';
      for (uint32_t i = 0; i < np; i++) {
        if (at[i] == c) {
          if (np == 1)
            ch = (v & GK_PP_GOAL) ? '+' : '@';
          else
            ch = (char)(((v & GK_PP_GOAL) ? 'A' : 'a') + (int)i);
        }
      }
      out[k++] = ch;
    }
    /* trim trailing blanks so pictures need none */
    while (k > 0 && out[k - 1] == ' ') k--;
    out[k++] = '\n';
  }
  out[k] = '\0';
  free(bytes);
  return out;
}

typedef struct find_field {
  const char *name;
  uint64_t value;
} find_field;

static void find_cb(gk_writer *w, gk_field_kind kind, const char *name,
                    uint64_t value, const uint8_t *bytes, size_t len) {
  (void)bytes;
  (void)len;
  find_field *f = w->data;
  if (kind != GK_FIELD_BEGIN && kind != GK_FIELD_END && name != NULL &&
      strcmp(name, f->name) == 0)
    f->value = value;
}

uint64_t pp_sample(const gk_sim *sim, const void *state, const char *name) {
  find_field f = {name, UINT64_MAX};
  gk_writer w;
  memset(&w, 0, sizeof w);
  w.field = find_cb;
  w.data = &f;
  sim->write_sample(state, &w);
  return f.value;
}

void pp_lurd(gk_pp_moves *m, const char *lurd) {
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_pp_lurd_parse(m, lurd, strlen(lurd), "t", err, sizeof err), 0,
               "%s", err);
}
