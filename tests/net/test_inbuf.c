/* test_inbuf.c: the lockstep input buffer, host side (per-player records)
 * and peer side (merged steps), and a GameLoop stepping over it. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_loop.h"
#include "gk_net_inbuf.h"
#include "tally.h"

static gk_inbuf b;

static void rec(uint8_t out[4], uint32_t v) {
  for (int i = 0; i < 4; i++) out[i] = (uint8_t)(v >> (8 * i));
}

static int put(uint32_t slot, uint64_t step, uint32_t v) {
  uint8_t r[4];
  rec(r, v);
  return gk_inbuf_put(&b, slot, step, r);
}

static void open3(uint32_t window, uint32_t neutral) {
  gk_inbuf_options o = {.players = 3,
                        .input_size = 4,
                        .active_mask = 7,
                        .first_step = 0,
                        .window = window,
                        .neutral_steps = neutral,
                        .ack_mask = 7};
  cr_assert_eq(gk_inbuf_init(&b, &o), 0);
}

static void fini(void) {
  gk_inbuf_close(&b);
}

static uint32_t rec_at(const gk_step_input *in, uint32_t p) {
  const uint8_t *r = in->inputs + 4 * p;
  return (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
         (uint32_t)r[3] << 24;
}

TestSuite(inbuf, .fini = fini);

Test(inbuf, a_step_is_confirmed_only_once_every_active_player_is_in) {
  open3(16, 0);
  cr_assert_eq(put(0, 0, 10), 0);
  cr_assert_eq(put(2, 0, 30), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 0);
  cr_assert_eq(gk_inbuf_missing(&b, 0), 0x2);
  cr_assert_eq(put(1, 1, 21), 0); /* ahead of step 0: held */
  cr_assert_eq(put(1, 0, 20), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 1);
  cr_assert_eq(b.confirmed, 1);
  cr_assert_eq(gk_inbuf_missing(&b, 1), 0x5);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 0, &in), 0);
  cr_assert_eq(in.active_mask, 7);
  cr_assert_eq(in.flags, 0);
  cr_assert_eq(rec_at(&in, 0), 10);
  cr_assert_eq(rec_at(&in, 1), 20);
  cr_assert_eq(rec_at(&in, 2), 30);
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), GK_EAHEAD);
}

Test(inbuf, bad_and_redundant_records_are_refused_and_change_nothing) {
  open3(8, 0);
  cr_assert_eq(put(3, 0, 1), GK_ERANGE);
  cr_assert_eq(put(0, 8, 1), GK_EAHEAD);
  cr_assert_eq(put(0, UINT64_MAX, 1), GK_EAHEAD);
  cr_assert_eq(put(0, 7, 1), 0);
  cr_assert_eq(put(0, 7, 2), GK_EEXIST);
  for (uint32_t p = 0; p < 3; p++) cr_assert_eq(put(p, 0, 5), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 1);
  cr_assert_eq(put(1, 0, 9), GK_ESTALE);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 0, &in), 0);
  cr_assert_eq(rec_at(&in, 1), 5);
  gk_step_input m = {.step = 1, .players = 3, .inputs = in.inputs};
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_ESTATE);
}

Test(inbuf, neutral_steps_are_confirmed_without_anyone_sending) {
  open3(16, 3);
  cr_assert_eq(gk_inbuf_confirm(&b), 3);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 2, &in), 0);
  for (uint32_t p = 0; p < 3; p++) cr_assert_eq(rec_at(&in, p), 0);
  cr_assert_eq(put(0, 2, 1), GK_ESTALE);
}

Test(inbuf, a_removed_player_is_neutral_and_no_longer_awaited_from_its_step) {
  open3(16, 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 2, GK_INBUF_REMOVE_PLAYER, 1), 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 3, GK_INBUF_REMOVE_PLAYER, 1), GK_EPERM);
  for (uint64_t s = 0; s < 4; s++) {
    cr_assert_eq(put(0, s, 100 + (uint32_t)s), 0);
    cr_assert_eq(put(2, s, 300 + (uint32_t)s), 0);
  }
  cr_assert_eq(put(1, 0, 200), 0);
  cr_assert_eq(put(1, 2, 202), GK_EPERM); /* out from step 2 on */
  cr_assert_eq(gk_inbuf_confirm(&b), 1);  /* step 1 waits for player 1 */
  cr_assert_eq(gk_inbuf_missing(&b, 1), 0x2);
  cr_assert_eq(put(1, 1, 201), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 3);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), 0);
  cr_assert_eq(in.active_mask, 7);
  cr_assert_eq(rec_at(&in, 1), 201);
  cr_assert_eq(gk_inbuf_get(&b, 2, &in), 0);
  cr_assert_eq(in.active_mask, 5);
  cr_assert_eq(rec_at(&in, 1), 0);
  cr_assert_eq(rec_at(&in, 2), 302);
  cr_assert_eq(b.active_mask, 5);
  cr_assert_eq(b.ack_mask, 5); /* its acks no longer hold releases */
}

Test(inbuf, an_added_player_is_awaited_from_its_step) {
  gk_inbuf_options o = {.players = 2,
                        .input_size = 4,
                        .active_mask = 1,
                        .window = 16,
                        .ack_mask = 1};
  cr_assert_eq(gk_inbuf_init(&b, &o), 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 1, GK_INBUF_ADD_PLAYER, 1), 0);
  /* it is sent the steps from 1 on, so its acks hold releases at once */
  cr_assert_eq(b.ack_mask, 3u);
  cr_assert_eq(b.acked[1], 1);
  cr_assert_eq(put(1, 0, 5), GK_EPERM);
  cr_assert_eq(put(0, 0, 1), 0);
  cr_assert_eq(put(0, 1, 1), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 1);
  cr_assert_eq(gk_inbuf_missing(&b, 1), 0x2);
  cr_assert_eq(put(1, 1, 7), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 1);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), 0);
  cr_assert_eq(in.active_mask, 3);
  cr_assert_eq(rec_at(&in, 1), 7);
}

Test(inbuf, a_match_end_confirms_its_step_with_missing_inputs_neutral) {
  open3(16, 0);
  for (uint32_t p = 0; p < 3; p++) cr_assert_eq(put(p, 0, 1), 0);
  cr_assert_eq(put(0, 1, 11), 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 1, GK_INBUF_MATCH_END, 0), 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 2, GK_INBUF_MATCH_END, 0), GK_EEXIST);
  cr_assert_eq(put(0, 2, 1), GK_ECLOSED);
  cr_assert_eq(gk_inbuf_confirm(&b), 2);
  cr_assert_eq(b.end_step, 1);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), 0);
  cr_assert_eq(in.flags, GK_STEP_MATCH_END);
  cr_assert_eq(rec_at(&in, 0), 11);
  cr_assert_eq(rec_at(&in, 1), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 0, GK_INBUF_REMOVE_PLAYER, 0), GK_ESTALE);
}

Test(inbuf, steps_are_released_only_once_read_and_acknowledged_by_all) {
  open3(4, 0);
  for (uint64_t s = 0; s < 4; s++)
    for (uint32_t p = 0; p < 3; p++) cr_assert_eq(put(p, s, 1), 0);
  cr_assert_eq(put(0, 4, 1), GK_EAHEAD); /* window full */
  cr_assert_eq(gk_inbuf_confirm(&b), 4);
  gk_step_input in;
  for (uint64_t s = 0; s < 3; s++)
    cr_assert_eq(b.base.read(&b.base, s, &in), 0);
  cr_assert_eq(b.low, 0); /* nobody acked */
  cr_assert_eq(gk_inbuf_ack(&b, 0, 3), 0);
  cr_assert_eq(gk_inbuf_ack(&b, 1, 3), 0);
  cr_assert_eq(b.low, 0);
  cr_assert_eq(gk_inbuf_ack(&b, 2, 100), 0); /* clamped to confirmed */
  cr_assert_eq(b.acked[2], 4);
  cr_assert_eq(b.low, 2); /* step 2 is the last read: still in use */
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), GK_ESTALE);
  cr_assert_eq(put(0, 5, 1), 0);
  cr_assert_eq(put(0, 6, 1), GK_EAHEAD);
  cr_assert_eq(gk_inbuf_ack(&b, 3, 1), GK_ERANGE);
}

Test(inbuf, contiguous_tells_how_far_a_player_has_sent) {
  open3(16, 2);
  cr_assert_eq(gk_inbuf_contiguous(&b, 1, 0), 2);
  cr_assert_eq(put(1, 2, 1), 0);
  cr_assert_eq(put(1, 3, 1), 0);
  cr_assert_eq(put(1, 5, 1), 0);
  cr_assert_eq(gk_inbuf_contiguous(&b, 1, 0), 4);
}

Test(inbuf, scheduling_refuses_bad_commands) {
  open3(128, 0);
  cr_assert_eq(gk_inbuf_schedule(&b, 128, GK_INBUF_REMOVE_PLAYER, 0),
               GK_EAHEAD);
  cr_assert_eq(gk_inbuf_schedule(&b, 1, GK_INBUF_REMOVE_PLAYER, 3), GK_ERANGE);
  cr_assert_eq(gk_inbuf_schedule(&b, 1, GK_INBUF_ADD_PLAYER, 0), GK_EEXIST);
  cr_assert_eq(gk_inbuf_schedule(&b, 1, (gk_inbuf_cmd)9, 0), GK_EINVAL);
  for (uint64_t i = 0; i < GK_INBUF_CMDS_MAX; i++)
    cr_assert_eq(
        gk_inbuf_schedule(
            &b, 1 + i, i % 2 ? GK_INBUF_ADD_PLAYER : GK_INBUF_REMOVE_PLAYER, 0),
        0);
  cr_assert_eq(gk_inbuf_schedule(&b, 100, GK_INBUF_MATCH_END, 0), GK_EFULL);
}

Test(inbuf, merged_steps_confirm_in_order_whatever_order_they_arrive_in) {
  gk_inbuf_options o = {
      .players = 2, .input_size = 4, .active_mask = 3, .window = 8};
  cr_assert_eq(gk_inbuf_init(&b, &o), 0);
  uint8_t recs[8];
  rec(recs, 1);
  rec(recs + 4, 2);
  gk_step_input m = {.step = 1, .active_mask = 1, .players = 2, .inputs = recs};
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 0);
  m.step = 0;
  m.active_mask = 3;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), 0);
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_EEXIST);
  cr_assert_eq(gk_inbuf_confirm(&b), 2);
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_ESTALE);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 1, &in), 0);
  cr_assert_eq(rec_at(&in, 1), 0); /* inactive: stored neutral */
  cr_assert_eq(b.active_mask, 1);
  m.step = 2;
  m.active_mask = 4;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_EPROTO);
  m.active_mask = 1;
  m.flags = 8;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_EPROTO);
  m.flags = GK_STEP_MATCH_END;
  m.players = 3;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_EINVAL);
  m.players = 2;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), 0);
  m.step = 3;
  m.flags = 0;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), 0);
  cr_assert_eq(gk_inbuf_confirm(&b), 1);
  cr_assert_eq(b.end_step, 2);
  m.step = 9;
  cr_assert_eq(gk_inbuf_put_merged(&b, &m), GK_ECLOSED);
  cr_assert_eq(put(0, 4, 1), GK_ESTATE);
}

Test(inbuf, a_game_loop_steps_exactly_the_confirmed_steps_over_it) {
  open3(64, 2);
  gk_loop loop;
  char err[GK_ERRMSG_MAX];
  tally_cfg cfg = {0};
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, &tally_sim, &cfg, 1, 3, err, sizeof err), 0,
               "%s", err);
  for (uint64_t s = 2; s < 10; s++)
    for (uint32_t p = 0; p < 3; p++)
      if (!(s == 6 && p == 1))
        cr_assert_eq(put(p, s, (uint32_t)(s * 3 + p)), 0);
  gk_inbuf_confirm(&b);
  cr_assert_eq(gk_inbuf_ready(&b), 6);
  cr_assert_eq(
      gk_loop_frame(&loop, &b.base, gk_budget_steps(gk_inbuf_ready(&b)), 0), 6);
  cr_assert_eq(gk_inbuf_ready(&b), 0);
  /* Asking for more than is confirmed stops at the first missing step. */
  cr_assert_eq(gk_loop_frame(&loop, &b.base, gk_budget_steps(1), 0), 0);
  cr_assert_eq(loop.input_err, GK_EAHEAD);
  cr_assert_eq(put(1, 6, 19), 0);
  gk_inbuf_confirm(&b);
  cr_assert_eq(
      gk_loop_frame(&loop, &b.base, gk_budget_steps(gk_inbuf_ready(&b)), 0), 4);
  cr_assert_eq(loop.steps, 10);
  gk_loop_close(&loop);
}

/* Host side with lead 2, delay 3 (neutral steps 0..2). */
static void open_delay(void) {
  gk_inbuf_options o = {.players = 2,
                        .input_size = 4,
                        .active_mask = 3,
                        .window = 64,
                        .neutral_steps = 3,
                        .ack_mask = 3,
                        .lead = 2};
  cr_assert_eq(gk_inbuf_init(&b, &o), 0);
  gk_inbuf_confirm(&b);
}

static void put_both(uint64_t from, uint64_t to) {
  for (uint64_t s = from; s < to; s++) {
    cr_assert_eq(put(0, s, 100 + (uint32_t)s), 0);
    cr_assert_eq(put(1, s, 200 + (uint32_t)s), 0);
  }
}

Test(inbuf, raising_the_delay_holds_the_skipped_steps_neutral_for_everyone) {
  open_delay();
  cr_assert_eq(b.confirmed, 3);
  uint64_t at = 0;
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 6, &at), 0);
  cr_assert_eq(at, 3 + 3 + 2); /* announce + old delay + lead */
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 7, NULL), GK_EBUSY);
  put_both(3, 8); /* what peers sampled under the old rule: steps < 8 */
  cr_assert_eq(gk_inbuf_confirm(&b), 3 + 5 - 3 + 3);
  /* 3..7 confirmed with inputs, 8..10 neutral without anyone sending */
  cr_assert_eq(b.confirmed, 11);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&b, 3, &in), 0);
  cr_assert_eq(in.flags, GK_STEP_DELAY | 6u << GK_STEP_DELAY_SHIFT);
  cr_assert_eq(GK_STEP_DELAY_OF(in.flags), 6);
  for (uint64_t s = 8; s < 11; s++) {
    cr_assert_eq(gk_inbuf_get(&b, s, &in), 0);
    cr_assert_eq(rec_at(&in, 0), 0);
    cr_assert_eq(rec_at(&in, 1), 0);
    cr_assert_eq(in.flags, 0);
  }
  cr_assert_eq(put(0, 9, 5), GK_ESTALE); /* a peer's copy is not used */
  cr_assert_eq(b.delay, 6);
  /* busy until step 11 (the first sampled under the new rule) confirms */
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 11, 4, NULL), GK_EBUSY);
  put_both(11, 12);
  gk_inbuf_confirm(&b);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 12, 6, NULL), GK_EEXIST);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 12, 4, &at), 0);
  cr_assert_eq(at, 12 + 6 + 2);
}

Test(inbuf, lowering_the_delay_fills_nothing_and_waits_for_every_record) {
  open_delay();
  uint64_t at = 0;
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 1, &at), 0);
  cr_assert_eq(at, 8);
  put_both(3, 8);
  gk_inbuf_confirm(&b);
  cr_assert_eq(b.confirmed, 8); /* step 8 waits for its samples */
  cr_assert_eq(gk_inbuf_missing(&b, 8), 3);
  cr_assert_eq(b.delay, 1);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 8, 2, NULL), GK_EBUSY);
  put_both(8, 9);
  gk_inbuf_confirm(&b);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 9, 2, NULL), 0);
}

Test(inbuf, a_delay_change_is_refused_when_it_would_not_fit_or_is_odd) {
  open_delay();
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 0, NULL), GK_EINVAL);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 256, NULL), GK_EINVAL);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 3, 200, NULL), GK_EAHEAD);
  cr_assert_eq(gk_inbuf_schedule_delay(&b, 2, 5, NULL), GK_ESTALE);
  cr_assert(gk_step_flags_valid(GK_STEP_DELAY | 5u << GK_STEP_DELAY_SHIFT));
  cr_assert(!gk_step_flags_valid(GK_STEP_DELAY));
  cr_assert(!gk_step_flags_valid(5u << GK_STEP_DELAY_SHIFT));
  cr_assert(!gk_step_flags_valid(1u << 4));
}
