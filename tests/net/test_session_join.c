/* test_session_join.c: a player joins a running match (late join), on the
 * host session alone, fed datagrams by hand. The join is a command at the
 * next unconfirmed step J: the joiner's bit is set in the merged input
 * from J on, its first input-delay records are neutral, it is sent the
 * confirmed steps from J, and it is awaited from J + delay. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_session.h"
#include "tally.h"

#define SENT_MAX 1024

typedef struct sent {
  uint32_t slot;
  size_t len;
  uint8_t bytes[GK_WIRE_MAX];
} sent;

static struct {
  gk_net_session s;
  sent out[SENT_MAX];
  uint32_t nout;
} fx;

static int on_send(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
                   int reliable) {
  (void)ctx;
  (void)reliable;
  if (fx.nout < SENT_MAX) {
    fx.out[fx.nout].slot = slot;
    fx.out[fx.nout].len = len;
    memcpy(fx.out[fx.nout].bytes, bytes, len);
    fx.nout++;
  }
  return 0;
}

/* Three slots, 0 and 1 present at the start; input delay 2, lead 2. */
static void open_session(void) {
  static const tally_cfg cfg = {0};
  memset(&fx, 0, sizeof fx);
  gk_net_session_config c = {.sim = &tally_sim,
                             .sim_config = &cfg,
                             .seed = 3,
                             .players = 3,
                             .active_mask = 3,
                             .input_delay = 2,
                             .lead = 2,
                             .window = 64};
  gk_net_session_callbacks cb = {.ctx = &fx, .send = on_send};
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_net_session_init(&fx.s, &c, &cb, 1000, err, sizeof err), 0,
               "%s", err);
}

static void fini(void) {
  gk_net_session_close(&fx.s);
}

TestSuite(session_join, .fini = fini);

/* Records of value v from `slot` for steps first..first+count-1. */
static int input(uint32_t slot, uint64_t first, uint8_t count, uint8_t v) {
  uint8_t recs[64 * 4];
  memset(recs, 0, sizeof recs);
  for (uint32_t i = 0; i < count; i++) recs[i * 4u] = v;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = (uint8_t)slot,
                              .input_size = 4,
                              .count = count,
                              .first = first,
                              .records = recs};
  return gk_net_session_on_msg(&fx.s, slot, &m, 1000);
}

/* Runs to step 10 with slots 0 and 1, every step run by the host. */
static void play_to_10(void) {
  cr_assert_eq(input(0, 2, 8, 5), 0);
  cr_assert_eq(input(1, 2, 8, 6), 0);
  gk_net_session_tick(&fx.s, 1000);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 10);
  cr_assert_eq(fx.s.loop.steps, 10);
}

Test(session_join, a_join_is_set_at_the_next_step_and_awaited_after_the_delay) {
  open_session();
  play_to_10();
  uint64_t at = 0, next = 0;
  cr_assert_eq(gk_net_session_join(&fx.s, 2, 10, &at, &next, 1000), 0);
  cr_assert_eq(at, 10);
  cr_assert_eq(next, 12, "J + input delay");
  cr_assert_eq(fx.s.stats.joins, 1);
  /* The others' records confirm J and J+1 (the joiner's are neutral)... */
  cr_assert_eq(input(0, 10, 4, 5), 0);
  cr_assert_eq(input(1, 10, 4, 6), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 12);
  /* ... and J + delay waits on it. */
  cr_assert_eq(gk_inbuf_missing(&fx.s.inbuf, 12), 1u << 2);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, 9, &in), 0);
  cr_assert_eq(in.active_mask, 3u, "before J: as at the start");
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, 10, &in), 0);
  cr_assert_eq(in.active_mask, 7u, "from J: the joiner's bit is set");
  cr_assert_eq(in.inputs[2 * 4], 0, "its first records are neutral");
  /* Its record for J + delay confirms the step, with its input in it. */
  cr_assert_eq(input(2, 12, 1, 9), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 13);
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, 12, &in), 0);
  cr_assert_eq(in.inputs[2 * 4], 9);
  /* It is sent the confirmed steps from J. */
  int got = 0;
  for (uint32_t i = 0; i < fx.nout; i++) {
    gk_wire_msg m;
    if (fx.out[i].slot == 2 &&
        gk_wire_decode(fx.out[i].bytes, fx.out[i].len, &m) == 0 &&
        m.type == GK_MSG_CONFIRMED && m.u.confirmed.first == 10)
      got = 1;
  }
  cr_assert(got, "CONFIRMED from step 10 to the joiner");
}

Test(session_join, a_join_that_cannot_be_taken_is_refused_and_changes_nothing) {
  open_session();
  play_to_10();
  uint64_t at = 99;
  cr_assert_eq(gk_net_session_join(&fx.s, 3, 10, &at, NULL, 1000), GK_ERANGE);
  cr_assert_eq(gk_net_session_join(&fx.s, 1, 10, &at, NULL, 1000), GK_EEXIST);
  cr_assert_eq(gk_net_session_join(&fx.s, 2, 9, &at, NULL, 1000), GK_ESTALE);
  cr_assert_eq(at, 99);
  cr_assert_eq(gk_inbuf_active_at(&fx.s.inbuf, 20), 3u);
  cr_assert_eq(gk_net_session_join(&fx.s, 2, 10, NULL, NULL, 1000), 0);
  cr_assert_eq(gk_net_session_join(&fx.s, 2, 10, NULL, NULL, 1000), GK_EEXIST,
               "twice");
  cr_assert_eq(fx.s.stats.joins, 1);
}

Test(session_join, no_join_once_the_end_is_scheduled) {
  open_session();
  play_to_10();
  cr_assert_eq(gk_net_session_end(&fx.s, GK_WIRE_END_HOST, 1000), 0);
  cr_assert_eq(gk_net_session_join(&fx.s, 2, fx.s.loop.steps, NULL, NULL, 1000),
               GK_ECLOSED);
}

Test(session_join, a_join_waits_out_an_input_delay_change) {
  open_session();
  play_to_10();
  cr_assert_eq(gk_net_session_set_delay(&fx.s, 3, NULL, NULL, 1000), 0);
  cr_assert_eq(gk_net_session_join(&fx.s, 2, 10, NULL, NULL, 1000), GK_EBUSY);
}
