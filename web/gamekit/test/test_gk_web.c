/* test_gk_web.c: the browser client's C glue (gk_web.c, gk_web_state.c)
 * built natively, so the sanitizers see it: lobby arguments, the out
 * queue, the options hook, the device input record, the state map. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
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
