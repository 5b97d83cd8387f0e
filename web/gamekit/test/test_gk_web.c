/* test_gk_web.c: the browser client's C glue (gk_web.c, gk_web_state.c)
 * built natively, so the sanitizers see it: lobby arguments, the out
 * queue, the options hook, the device input record, the state map. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_push_puzzle.h"
#include "gk_survivors.h"
#include "gk_web_internal.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* The options hook a page implements, for a fixed object: one key. */
static int hook(void *ctx, const gk_sim *sim, void *cfg, const char *text,
                size_t len, char *err, size_t errlen) {
  (void)ctx;
  if (len >= 5 && memcmp(text, "{\"bad", 5) == 0)
    return gk_web_kv_number(sim, cfg, "no_such_key", 1, err, errlen);
  return gk_web_kv_number(sim, cfg, "spawn_batch", 3, err, errlen);
}

static void match_start(gk_wire_match_start *ms, const char *config) {
  memset(ms, 0, sizeof *ms);
  ms->seed = 5;
  ms->players = 2;
  ms->slot = 1;
  ms->active_mask = 3;
  ms->input_delay = 2;
  ms->lead = 4;
  ms->step_seconds = (gk_ratio){1, 60};
  strcpy(ms->genre, "survivors");
  strcpy(ms->config, config);
}

/* The newest step in the out queue's INPUT frames (the engine repeats
 * unacknowledged records: the newest is the one just sampled): its
 * number in *step and its record, copied to rec; 0 if none was sent. */
static int newest_sent(const gk_web *w, uint64_t *step, uint8_t *rec) {
  const uint8_t *o = gk_web_out(w);
  uint32_t len = gk_web_out_len(w);
  int found = 0;
  for (uint32_t i = 0; i + 5 <= len;) {
    uint32_t n = le32(o + i + 1);
    gk_wire_msg m;
    if (o[i] == GK_WEB_EV_SEND && n > 1 &&
        gk_wire_decode(o + i + 6, n - 1, &m) == 0 && m.type == GK_MSG_INPUT &&
        m.u.input.count > 0) {
      gk_wire_input *in = &m.u.input;
      *step = in->first + in->count - 1u;
      memcpy(rec, in->records + (in->count - 1u) * in->input_size,
             in->input_size);
      found = 1;
    }
    i += 5 + n;
  }
  return found;
}

/* A one-seat match of `genre` with device input, started at time 0;
 * returns the step period in ns. */
static uint64_t start_alone(gk_web *w, const char *genre) {
  gk_wire_match_start ms;
  char err[GK_ERRMSG_MAX] = "";
  match_start(&ms, "");
  ms.players = 1;
  ms.slot = 0;
  ms.active_mask = 1;
  strcpy(ms.genre, genre);
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0,
               "%s", err);
  return 1000000000u / 60u;
}

/* Two press calls in one step period, then two deadlines: the step
 * sampled first carries both presses, the next one neither (ADR-0004). */
static void two_presses_reach_one_step(const char *genre, uint32_t a,
                                       uint32_t b, size_t at,
                                       const uint8_t *want, size_t n) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, NULL, NULL);
  uint64_t period = start_alone(w, genre), s1 = 0, s2 = 0;
  uint8_t one[GK_INPUT_SIZE_MAX], two[GK_INPUT_SIZE_MAX];
  gk_web_timeout_at(w, 0); /* the first step sampled with nothing pressed */
  gk_web_press(w, a);
  gk_web_press(w, b);
  gk_web_out_clear(w);
  gk_web_timeout_at(w, period);
  cr_assert(newest_sent(w, &s1, one), "%s: a step was sampled", genre);
  gk_web_out_clear(w);
  gk_web_timeout_at(w, 2 * period);
  cr_assert(newest_sent(w, &s2, two), "%s: a step was sampled", genre);
  cr_assert_eq(s2, s1 + 1, "%s: one step per period", genre);
  cr_assert_eq(memcmp(one + at, want, n), 0,
               "%s: step %llu carries both presses: got %02x %02x", genre,
               (unsigned long long)s1, one[at], n > 1 ? one[at + 1] : 0);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(two[at + i], 0,
                 "%s: step %llu carries no press (byte %zu: %02x)", genre,
                 (unsigned long long)s2, at + i, two[at + i]);
  gk_web_free(w);
}

Test(gk_web, lobby_calls_refuse_bad_arguments_and_queue_one_frame) {
  cr_assert_null(gk_web_create(7, 0, NULL, NULL));
  gk_web *w = gk_web_create(GK_WEB_INPUT_BOT, 1, NULL, NULL);
  cr_assert_not_null(w);
  cr_assert_eq(gk_web_join_at(w, 0, "short", 0, NULL, 0), GK_EINVAL);
  cr_assert_eq(gk_web_join_at(w, 0, "AAAAAAAAAAAAAAAA", 0, NULL, 5), GK_EINVAL);
  cr_assert_eq(gk_web_create_room_at(w, 0, 2, 0, NULL, NULL, NULL, 0),
               GK_EINVAL);
  cr_assert_eq(gk_web_out_len(w), 0, "nothing was sent");
  cr_assert_eq(gk_web_join_at(w, 0, "AAAAAAAAAAAAAAAA", 0, NULL, 0), 0);
  const uint8_t *o = gk_web_out(w);
  uint32_t n = le32(o + 1);
  cr_assert_eq(o[0], GK_WEB_EV_SEND);
  cr_assert_eq(gk_web_out_len(w), 5 + n, "one record");
  cr_assert_eq(o[5], 1, "JOIN_ROOM goes reliably");
  gk_wire_msg m;
  cr_assert_eq(gk_wire_decode(o + 6, n - 1, &m), 0);
  cr_assert_eq(m.type, GK_MSG_JOIN_ROOM);
  cr_assert_str_eq(m.u.room.code, "AAAAAAAAAAAAAAAA");
  gk_web_out_clear(w);
  cr_assert_eq(gk_web_out_len(w), 0);
  gk_web_free(w);
}

Test(gk_web, a_short_code_as_typed_joins_and_is_shown_without_its_padding) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_BOT, 1, NULL, NULL);
  cr_assert_not_null(w);
  cr_assert_eq(gk_web_join_at(w, 0, "mtkb", 0, NULL, 0), 0);
  const uint8_t *o = gk_web_out(w);
  gk_wire_msg m;
  cr_assert_eq(gk_wire_decode(o + 6, le32(o + 1) - 1, &m), 0);
  cr_assert_str_eq(m.u.room.code, "MTKB222222222222", "padded on the wire");
  char shown[GK_WIRE_CODE_LEN + 1];
  cr_assert_eq(gk_web_code_shown("MTKB222222222222", shown), 0);
  cr_assert_str_eq(shown, "MTKB");
  cr_assert_eq(gk_web_code_shown("mtkb3x", shown), 0);
  cr_assert_str_eq(shown, "MTKB3X");
  cr_assert_eq(gk_web_code_shown("VOIFRQZXWQKLYCOE", shown), 0);
  cr_assert_str_eq(shown, "VOIFRQZXWQKLYCOE", "an older code, whole");
  cr_assert_eq(gk_web_code_shown("MTK", shown), GK_EINVAL, "too short");
  cr_assert_eq(gk_web_code_shown("MTKB0", shown), GK_EINVAL, "a look-alike");
  gk_web_free(w);
}

Test(gk_web, match_options_go_through_the_hook_and_a_bad_key_is_refused) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, hook, NULL);
  gk_wire_match_start ms;
  char err[GK_ERRMSG_MAX] = "";
  match_start(&ms, "{\"bad\": 1}");
  cr_assert_lt(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0);
  cr_assert(strstr(err, "no_such_key") != NULL, "%s", err);
  gk_web_free(w);
  w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, hook, NULL);
  match_start(&ms, "{\"spawn_batch\": 3}");
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0,
               "%s", err);
  const gk_sv_config *cfg = gk_web_peer(w)->sim_cfg;
  cr_assert_eq(cfg->spawn_batch, 3);
  gk_web_free(w);
}

Test(gk_web, device_input_packs_axes_and_presses_for_one_step) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, NULL, NULL);
  gk_wire_match_start ms;
  char err[GK_ERRMSG_MAX] = "";
  match_start(&ms, "");
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0,
               "%s", err);
  gk_web_axes(w, 300, -5);
  gk_web_press(w, GK_WEB_BTN_PAUSE | GK_WEB_BTN_PICK2);
  gk_step_input in;
  gk_input *src = &w->dev.base;
  cr_assert_eq(src->read(src, 0, &in), 0);
  const uint8_t want[4] = {127, (uint8_t)-5, 1, 2};
  cr_assert_eq(memcmp(in.inputs, want, 4), 0, "axes clamped, pause, pick 2");
  src->end_step(src);
  cr_assert_eq(src->read(src, 1, &in), 0);
  const uint8_t held[4] = {127, (uint8_t)-5, 0, 0};
  cr_assert_eq(memcmp(in.inputs, held, 4), 0, "presses reached one step");
  gk_web_free(w);
}

Test(gk_web, a_level_up_pick_and_a_pause_in_one_period_reach_one_step_each) {
  const uint8_t pause_pick2[2] = {1, 2}; /* record bytes 2, 3 */
  two_presses_reach_one_step("survivors", GK_WEB_BTN_PICK2, GK_WEB_BTN_PAUSE, 2,
                             pause_pick2, 2);
}

Test(gk_web, an_undo_and_a_move_in_one_period_reach_one_step_each) {
  const uint8_t undo_left[1] = {GK_PP_UNDO | GK_PP_LEFT}; /* record byte 1 */
  two_presses_reach_one_step("push-puzzle", GK_WEB_BTN_UNDO, GK_WEB_BTN_LEFT, 1,
                             undo_left, 1);
}

Test(gk_web, a_connect_token_longer_than_148_bytes_is_refused_not_cut) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, NULL, NULL);
  uint8_t token[GK_WIRE_TOKEN_BYTES + 1], secret[16] = {0};
  memset(token, 0xab, sizeof token);
  const char *code = "AAAAAAAAAAAAAAAA";
  for (uint32_t n = GK_WIRE_TOKEN_BYTES - 1; n <= GK_WIRE_TOKEN_BYTES + 1;
       n += 2) {
    cr_assert_eq(gk_web_create_room_at(w, 0, 2, 0, "survivors", NULL, token, n),
                 GK_EINVAL, "create_room with a %u-byte token", n);
    cr_assert_eq(gk_web_join_at(w, 0, code, 0, token, n), GK_EINVAL,
                 "join with a %u-byte token", n);
    cr_assert_eq(gk_web_spectate_at(w, 0, code, token, n), GK_EINVAL,
                 "spectate with a %u-byte token", n);
    cr_assert_eq(gk_web_rejoin_at(w, 0, code, 0, secret, token, n), GK_EINVAL,
                 "rejoin with a %u-byte token", n);
  }
  cr_assert_eq(gk_web_out_len(w), 0, "nothing was sent");
  cr_assert_eq(gk_web_join_at(w, 0, code, 0, token, GK_WIRE_TOKEN_BYTES), 0);
  gk_web_free(w);
}

Test(gk_web, the_state_map_names_every_field_by_path) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_BOT, 0, NULL, NULL);
  uint32_t len = 7;
  cr_assert_null(gk_web_state(w, &len), "no run yet");
  cr_assert_eq(len, 0);
  gk_wire_match_start ms;
  char err[GK_ERRMSG_MAX] = "";
  match_start(&ms, "");
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0);
  const uint8_t *m = gk_web_state(w, &len);
  cr_assert_not_null(m);
  cr_assert_eq(memcmp(m, "GKS1", 4), 0);
  uint32_t count = le32(m + 20);
  cr_assert_gt(count, 20);
  /* first field: kind u8, keep 0, the whole path, then its value */
  cr_assert_eq(m[25], 0, "nothing to keep from before the first path");
  cr_assert_eq(memcmp(m + 27, "magic", 5), 0);
  /* walk to the end: the fields fill the buffer exactly */
  size_t o = 24;
  for (uint32_t i = 0; i < count; i++) {
    uint8_t kind = m[o] & 0x7f, add = m[o + 2];
    o += 3 + add;
    o += kind == GK_FIELD_BYTES ? 4 + le32(m + o) : 8;
    cr_assert_leq(o, len);
  }
  cr_assert_eq(o, len);
  cr_assert_not_null(gk_web_sample(w, &len));
  cr_assert_eq(gk_web_perturb(w, 3, "", 1), 0);
  cr_assert_eq(gk_web_perturb(w, 3, "x", 0), GK_EINVAL);
  gk_web_free(w);
}

Test(gk_web, a_predicting_client_draws_a_head_ahead_of_its_confirmed_state) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_BOT | GK_WEB_PREDICT, 0, NULL, NULL);
  cr_assert_not_null(w);
  gk_wire_match_start ms;
  char err[GK_ERRMSG_MAX] = "";
  match_start(&ms, "");
  ms.input_delay = 1;
  ms.lead = 8;
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0);
  uint64_t period = 1000000000u / 60u;
  for (uint64_t k = 0; k <= 5; k++) gk_web_timeout_at(w, k * period + 1);
  uint32_t len = 0;
  const uint8_t *h = gk_web_head(w, &len);
  cr_assert_not_null(h);
  cr_assert_eq(memcmp(h, "GKS1", 4), 0);
  cr_assert_eq(le32(h + 4), 6, "nothing confirmed: 6 samples, 6 head steps");
  cr_assert_eq(le32(h + 12), 0, "the head is never hashed");
  cr_assert_not_null(gk_web_state(w, &len));
  cr_assert_eq(gk_web_peer(w)->loop.steps, 0, "the confirmed run waits");
  gk_web_free(w);
  /* without the flag the head map is the confirmed state */
  w = gk_web_create(GK_WEB_INPUT_BOT, 0, NULL, NULL);
  cr_assert_eq(gk_net_peer_start(gk_web_peer(w), 0, &ms, err, sizeof err), 0);
  for (uint64_t k = 0; k <= 5; k++) gk_web_timeout_at(w, k * period + 1);
  h = gk_web_head(w, &len);
  cr_assert_not_null(h);
  cr_assert_eq(le32(h + 4), 0);
  gk_web_free(w);
}

/* A fleet's REDIRECT reaches the page as its fields (code, ENet address,
 * WebSocket URL), decoded once by the wire code, not as raw bytes. */
static void redirect_record(const char *ws_url) {
  gk_web *w = gk_web_create(GK_WEB_INPUT_DEVICE, 0, NULL, NULL);
  const char *code = "ABCDEFGHIJKLMNOP", *enet = "b.example:7777";
  cr_assert_eq(gk_web_join_at(w, 0, code, 0, NULL, 0), 0);
  gk_web_out_clear(w);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_REDIRECT;
  strcpy(m.u.redirect.code, code);
  strcpy(m.u.redirect.enet, enet);
  strcpy(m.u.redirect.ws_url, ws_url);
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  cr_assert_eq(gk_web_handle_at(w, 1, buf, len), 0);
  const uint8_t *o = gk_web_out(w);
  size_t e = strlen(enet), u = strlen(ws_url), n = 16 + 1 + e + u;
  cr_assert_eq(gk_web_out_len(w), 5 + n, "one record (%u bytes)",
               gk_web_out_len(w));
  cr_assert_eq(o[0], GK_WEB_EV_REDIRECT, "a REDIRECT record, not %u", o[0]);
  cr_assert_eq(le32(o + 1), n);
  cr_assert_eq(memcmp(o + 5, code, 16), 0, "the code asked for");
  cr_assert_eq(o[21], e, "the ENet address's length");
  cr_assert_eq(memcmp(o + 22, enet, e), 0, "the ENet address");
  cr_assert_eq(memcmp(o + 22 + e, ws_url, u), 0, "the WebSocket URL");
  gk_web_free(w);
}

Test(gk_web, a_redirect_is_handed_over_as_its_fields) {
  redirect_record("ws://b.example:7779/play");
  redirect_record(""); /* a node that takes no WebSocket players */
}

/* A survivors state of 8 players with a few hundred enemies, gems and
 * projectiles (spawning every step), as the dense page draws it. */
static void *busy_survivors(uint32_t steps) {
  gk_sv_config cfg;
  gk_survivors_sim.config_default(&cfg);
  cfg.spawn_interval_start = 1;
  cfg.spawn_interval_min = 1;
  cfg.spawn_batch = 20;
  cfg.player_health = 1000000;
  char err[GK_ERRMSG_MAX] = "";
  void *s = gk_survivors_sim.create(&cfg, 7, 8, err, sizeof err);
  cr_assert_not_null(s, "%s", err);
  uint8_t rec[8 * GK_INPUT_SIZE_MAX];
  memset(rec, 0, sizeof rec);
  for (uint64_t k = 0; k < steps; k++) {
    gk_step_input in = {
        .step = k, .players = 8, .active_mask = 0xff, .inputs = rec};
    gk_survivors_sim.step(s, &in);
  }
  return s;
}

/* The value of `path` in a map's fields (its kind in *kind), or 0 with
 * *kind 0xff when absent. */
static uint64_t map_value(const uint8_t *m, const char *path, uint8_t *kind) {
  char prev[GK_PATH_MAX] = "", cur[GK_PATH_MAX];
  size_t o = 24;
  for (uint32_t i = 0, n = le32(m + 20); i < n; i++) {
    uint8_t k = m[o] & 0x7f, keep = m[o + 1], add = m[o + 2];
    memcpy(cur, prev, keep);
    memcpy(cur + keep, m + o + 3, add);
    cur[keep + add] = '\0';
    o += 3 + add;
    uint64_t v = k == GK_FIELD_BYTES
                     ? 0
                     : (uint64_t)le32(m + o) | (uint64_t)le32(m + o + 4) << 32;
    if (strcmp(cur, path) == 0) {
      *kind = k;
      return v;
    }
    o += k == GK_FIELD_BYTES ? 4 + le32(m + o) : 8;
    memcpy(prev, cur, sizeof prev);
  }
  *kind = 0xff;
  return 0;
}

Test(gk_web, columns_hold_each_listed_field_by_element_and_leave_the_map) {
  void *s = busy_survivors(120);
  uint8_t *a = NULL, *b = NULL;
  size_t alen = 0, acap = 0, blen = 0, bcap = 0;
  uint32_t na = 0, nb = 0;
  const uint8_t *full = gk__web_map_of((gk__web_buf){&a, &alen, &acap},
                                       &gk_survivors_sim, s, NULL, 120, 0, &na);
  const uint8_t *cols =
      gk__web_map_cols_of((gk__web_buf){&b, &blen, &bcap}, &gk_survivors_sim, s,
                          NULL, 120, 0, "enemies,gems,projectiles,nosuch", &nb);
  cr_assert_not_null(full);
  cr_assert_not_null(cols);
  uint8_t kind;
  uint64_t enemies = map_value(full, "enemy_count", &kind);
  cr_assert_gt(enemies, 50, "%" PRIu64 " enemies", enemies);
  /* the map keeps the rest, without an element of a listed array */
  cr_assert_eq(map_value(cols, "enemy_count", &kind), enemies);
  cr_assert_eq(map_value(cols, "players[7].x", &kind),
               map_value(full, "players[7].x", &kind));
  map_value(cols, "enemies[0].x", &kind);
  cr_assert_eq(kind, 0xff, "enemies[0].x is in a column, not the map");
  /* walk the fields, then the columns: every value is the full map's */
  size_t o = 24;
  for (uint32_t i = 0, n = le32(cols + 20); i < n; i++) {
    uint8_t k = cols[o] & 0x7f, add = cols[o + 2];
    o += 3 + add;
    o += k == GK_FIELD_BYTES ? 4 + le32(cols + o) : 8;
  }
  cr_assert_eq(memcmp(cols + o, "GKC1", 4), 0);
  uint32_t ncols = le32(cols + o + 4), checked = 0;
  o += 8;
  for (uint32_t c = 0; c < ncols; c++) {
    char list[40] = "", key[GK_PATH_MAX] = "", path[GK_PATH_MAX + 48];
    memcpy(list, cols + o + 1, cols[o]);
    o += 1 + cols[o];
    memcpy(key, cols + o + 1, cols[o]);
    o += 1 + cols[o];
    uint8_t ck = cols[o];
    uint32_t n = le32(cols + o + 1);
    o += 5;
    for (uint32_t i = 0; i < n; i++, o += 8) {
      snprintf(path, sizeof path, "%s[%u].%s", list, i, key);
      uint64_t want = map_value(full, path, &kind);
      cr_assert_eq(kind, ck, "%s", path);
      cr_assert_eq((uint64_t)le32(cols + o) | (uint64_t)le32(cols + o + 4)
                                                  << 32,
                   want, "%s", path);
      checked++;
    }
  }
  cr_assert_eq(o, nb, "the columns end the buffer");
  cr_assert_geq(checked, 3 * enemies, "every enemy's kind, x and y at least");
  free(a);
  free(b);
  gk_survivors_sim.destroy(s);
}
