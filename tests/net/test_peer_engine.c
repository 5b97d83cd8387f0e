/* test_peer_engine.c: the sans-I/O peer engine alone, time driven by hand
 * (as test_session.c drives the host session): no loop, no socket, no
 * clock, linked against the portable library only (gk_lockstep, plus
 * gk_config_kv for an options hook without cJSON).
 *
 * Every test starts a two-player tally match for slot 1 at T0 with a step
 * period of 2 ms and an input source whose record names the step it was
 * read for, then calls gk_net_peer_handle / _handle_timeout at chosen
 * times and checks what went out (decoded INPUTs: which steps, which
 * records, which hashes), the deadline the engine asks for, the steps its
 * loop ran and the delay switches. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config_kv.h"
#include "gk_err.h"
#include "gk_net_peer.h"
#include "tally.h"

#define SENT_MAX 256
#define T0 UINT64_C(1000000000000) /* any clock: 1000 s */
#define SN UINT64_C(2000000)       /* the step period: 1/500 s */
#define AT(k) (T0 + (uint64_t)(k)*SN)

/* A source whose record for step s is {s, 0xa5, 0, 0}; it logs the steps
 * it was read for. */
typedef struct step_source {
  gk_input base;
  uint64_t reads[256];
  uint32_t nreads;
  uint8_t record[4];
} step_source;

typedef struct fixture {
  gk_net_peer p;
  step_source src;
  gk_wire_msg sent[SENT_MAX]; /* decoded, bytes kept below */
  uint8_t bytes[SENT_MAX][GK_WIRE_MAX];
  int reliable[SENT_MAX];
  uint32_t nsent;
  uint64_t ran[256]; /* steps the loop ran, in order */
  uint8_t ran_rec[256][8];
  uint32_t nran;
  int ended;
  uint64_t end_step;
} fixture;

static fixture *fx;

static int src_read(gk_input *in, uint64_t step, gk_step_input *out) {
  step_source *s = (step_source *)in;
  if (s->nreads < 256) s->reads[s->nreads] = step;
  s->nreads++;
  s->record[0] = (uint8_t)step;
  s->record[1] = 0xa5;
  out->step = step;
  out->active_mask = 1;
  out->flags = 0;
  out->players = 1;
  out->inputs = s->record;
  return 0;
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int reliable) {
  fixture *f = ctx;
  cr_assert_lt(f->nsent, SENT_MAX);
  memcpy(f->bytes[f->nsent], bytes, len);
  cr_assert_eq(gk_wire_decode(f->bytes[f->nsent], len, &f->sent[f->nsent]), 0);
  f->reliable[f->nsent] = reliable;
  f->nsent++;
  return 0;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  fixture *f = ctx;
  uint64_t h = 0;
  cr_assert_eq(gk_loop_hash_at(&p->loop, in->step, &h), 0);
  cr_assert_eq(h, hash);
  f->ran[f->nran] = in->step;
  memcpy(f->ran_rec[f->nran], in->inputs, 8);
  f->nran++;
}

static void on_ended(void *ctx, gk_net_peer *p, uint64_t step, int reason) {
  (void)p;
  (void)reason;
  fixture *f = ctx;
  f->ended++;
  f->end_step = step;
}

/* Options hook without cJSON: {"start": N} only, through the flattened
 * key/value entry point, as a browser page's JSON.parse would feed it. */
static int kv_hook(void *ctx, const gk_sim *sim, void *cfg, const char *text,
                   size_t len, char *err, size_t errlen) {
  (void)ctx;
  char buf[64];
  long long v;
  if (len == 0) return 0;
  if (len >= sizeof buf) return GK_ETOOBIG;
  memcpy(buf, text, len);
  buf[len] = '\0';
  int end = 0;
  if (sscanf(buf, " {\"start\": %lld }%n", &v, &end) != 1 || end == 0 ||
      buf[end] != '\0')
    return gk_errf(err, errlen, GK_EPARSE, "options: not understood");
  return gk_config_apply_kv_int(sim, cfg, "start", v, "options", err, errlen);
}

static const gk_sim *const genres[] = {&tally_sim};

static void open_peer(gk_net_peer_options_fn hook) {
  memset(fx, 0, sizeof *fx);
  fx->src.base.read = src_read;
  gk_net_peer_options o = {.source = &fx->src.base,
                           .genres = {.sims = genres, .count = 1},
                           .apply_options = hook,
                           .window = 64};
  gk_net_peer_callbacks cb = {
      .ctx = fx, .send = on_send, .step = on_step, .ended = on_ended};
  cr_assert_eq(gk_net_peer_init(&fx->p, &o, &cb), 0);
}

static void setup(void) {
  fx = calloc(1, sizeof *fx);
  cr_assert_not_null(fx);
  open_peer(kv_hook);
}

static void teardown(void) {
  gk_net_peer_free(&fx->p);
  free(fx);
}

TestSuite(peer_engine, .init = setup, .fini = teardown, .timeout = 30);

static gk_wire_match_start match(uint32_t delay, uint32_t lead) {
  gk_wire_match_start ms;
  memset(&ms, 0, sizeof ms);
  ms.seed = 9;
  ms.players = 2;
  ms.slot = 1;
  ms.active_mask = 3;
  ms.input_delay = (uint8_t)delay;
  ms.lead = (uint8_t)lead;
  ms.step_seconds = (gk_ratio){1, 500};
  strcpy(ms.genre, "tally");
  return ms;
}

static void start(uint32_t delay, uint32_t lead) {
  char err[GK_ERRMSG_MAX] = "";
  gk_wire_match_start ms = match(delay, lead);
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
}

/* The host confirms steps first..first+count-1 at `now`: slot 0's record
 * {9}, slot 1's {7}; step `flag_step` carries `flags`. */
static int confirm_at(uint64_t now, uint64_t first, uint32_t count,
                      uint64_t flag_step, uint32_t flags, uint64_t hash_ack) {
  static uint8_t steps[32 * GK_WIRE_STEP_BYTES(2, 4)];
  uint8_t recs[8] = {9, 0, 0, 0, 7, 0, 0, 0};
  cr_assert_leq(count, 32);
  for (uint32_t i = 0; i < count; i++)
    gk_wire_step_pack(steps + i * GK_WIRE_STEP_BYTES(2, 4), 3,
                      first + i == flag_step ? flags : 0, recs, 2, 4);
  gk_wire_msg m;
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                      .input_size = 4,
                                      .count = (uint8_t)count,
                                      .hash_ack = hash_ack,
                                      .first = first,
                                      .steps = steps};
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  return gk_net_peer_handle(&fx->p, now, buf, len);
}

#define DELAY_FLAGS(d) (GK_STEP_DELAY | (uint32_t)(d) << GK_STEP_DELAY_SHIFT)

/* The last INPUT sent, or NULL. */
static const gk_wire_input *last_input(void) {
  for (uint32_t i = fx->nsent; i-- > 0;)
    if (fx->sent[i].type == GK_MSG_INPUT) return &fx->sent[i].u.input;
  return NULL;
}

/* The record an INPUT carries for step s: 0 none, 1 neutral, 2 the
 * source's record for s; anything else fails the test. */
static int record_for(const gk_wire_input *in, uint64_t s) {
  if (s < in->first || s >= in->first + in->count) return 0;
  const uint8_t *r = in->records + (s - in->first) * 4;
  if (r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0) return 1;
  cr_assert_eq(r[0], (uint8_t)s, "step %llu carries step %u's record",
               (unsigned long long)s, r[0]);
  cr_assert_eq(r[1], 0xa5);
  return 2;
}

Test(peer_engine, it_sends_input_for_the_steps_its_schedule_owes_at_now) {
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), GK_NET_PEER_NEVER,
               "no match, no deadline");
  start(2, 3); /* may sample s < confirmed + 2 + 3: steps 2, 3, 4 */
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), T0, "deadline 0 is now");
  cr_assert_eq(fx->nsent, 0, "nothing is sent before the first timeout");
  /* Deadline 0: one sample, for step 0 + delay. */
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, T0), AT(1));
  cr_assert_eq(fx->src.nreads, 1);
  cr_assert_eq(fx->src.reads[0], 2);
  const gk_wire_input *in = last_input();
  cr_assert_not_null(in);
  cr_assert_eq(in->slot, 1);
  cr_assert_eq(in->first, 2);
  cr_assert_eq(in->count, 1);
  cr_assert_eq(record_for(in, 2), 2);
  cr_assert_eq(fx->reliable[fx->nsent - 1], 0, "INPUT is unreliable");
  /* Early: nothing owed, nothing read, the same deadline. */
  uint32_t sent = fx->nsent;
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, AT(1) - 1), AT(1));
  cr_assert_eq(fx->src.nreads, 1);
  cr_assert_eq(fx->nsent, sent);
  /* 2.5 periods in: deadlines 1 and 2 are owed (steps 3 and 4), and every
   * unacknowledged record rides along. */
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, AT(2) + SN / 2), AT(3));
  cr_assert_eq(fx->src.nreads, 3);
  cr_assert_eq(fx->src.reads[2], 4);
  in = last_input();
  cr_assert_eq(in->first, 2);
  cr_assert_eq(in->count, 3);
  for (uint64_t s = 2; s <= 4; s++) cr_assert_eq(record_for(in, s), 2);
  /* Far later: step 5 is past the bound; it waits and asks again one
   * period from now, repeating its records meanwhile. */
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, AT(40)), AT(41));
  cr_assert_eq(fx->src.nreads, 3);
  cr_assert_eq(fx->p.stats.waits, 1);
  cr_assert_eq(last_input()->count, 3);
}

Test(peer_engine, a_confirmed_step_runs_and_its_hash_report_goes_out) {
  start(2, 3);
  gk_net_peer_handle_timeout(&fx->p, T0);
  gk_net_peer_handle_timeout(&fx->p, AT(2));
  gk_net_peer_handle_timeout(&fx->p, AT(3)); /* blocked on step 5 */
  cr_assert_eq(fx->p.blocked, 1);
  /* The host confirms steps 0..2 (step 2 holds this peer's record): they
   * run at once, in order, with the host's merged records. */
  uint64_t tc = AT(3) + 700000;
  cr_assert_eq(confirm_at(tc, 0, 3, UINT64_MAX, 0, 0), 0);
  cr_assert_eq(fx->nran, 3);
  for (uint32_t i = 0; i < 3; i++) {
    cr_assert_eq(fx->ran[i], i);
    cr_assert_eq(fx->ran_rec[i][0], 9);
    cr_assert_eq(fx->ran_rec[i][4], 7);
  }
  cr_assert_eq(fx->p.loop.steps, 3);
  /* Step 2 was sampled at T0: its confirm latency is tc - T0. */
  cr_assert_eq(fx->p.nlatency, 1);
  cr_assert_eq(fx->p.latency_us[0], (tc - T0) / 1000u);
  /* Sampling may resume: the engine asks for a timeout at once ... */
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), tc);
  /* ... which samples step 5 and restarts the schedule from then (no
   * burst for the deadlines the wait spanned). */
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, tc), tc + SN);
  cr_assert_eq(fx->src.nreads, 4);
  cr_assert_eq(fx->src.reads[3], 5);
  /* That INPUT acknowledges the confirmed steps and reports their
   * hashes, the loop's own, from the first not acknowledged. */
  const gk_wire_input *in = last_input();
  cr_assert_eq(in->ack, 3);
  cr_assert_eq(in->hash_first, 0);
  cr_assert_eq(in->hash_count, 3);
  for (uint32_t k = 0; k < 3; k++) {
    uint64_t h;
    cr_assert_eq(gk_loop_hash_at(&fx->p.loop, k, &h), 0);
    cr_assert_eq(gk_wire_input_hash(in, k), h);
  }
  /* The host holds hashes below 2: only step 2's is repeated. */
  cr_assert_eq(confirm_at(tc + SN, 3, 0, UINT64_MAX, 0, 2), 0);
  gk_net_peer_handle_timeout(&fx->p, tc + SN);
  in = last_input();
  cr_assert_eq(in->hash_first, 2);
  cr_assert_eq(in->hash_count, 1);
  for (uint32_t i = 0; i < fx->nsent; i++)
    cr_assert_neq(fx->sent[i].type, GK_MSG_HASH, "hashes ride in INPUT");
}

Test(peer_engine, a_delay_raise_is_followed_at_the_announced_step) {
  start(2, 2);
  /* Step 0 announces delay 4: the switch step is 0 + 2 + 2 = 4. */
  cr_assert_eq(confirm_at(T0, 0, 1, 0, DELAY_FLAGS(4), 0), 0);
  cr_assert_eq(fx->p.loop.steps, 1);
  cr_assert_eq(fx->p.delay, 2, "not yet: the switch is at step 4");
  /* Deadlines 0, 1, 2: steps 2, 3, then the switch: 4 and 5 are neutral
   * (the host holds them so for everyone) and deadline 2 samples step 6. */
  gk_net_peer_handle_timeout(&fx->p, AT(2));
  cr_assert_eq(fx->src.nreads, 3);
  cr_assert_eq(fx->src.reads[0], 2);
  cr_assert_eq(fx->src.reads[1], 3);
  cr_assert_eq(fx->src.reads[2], 6);
  const gk_wire_input *in = last_input();
  cr_assert_eq(in->first, 2);
  cr_assert_eq(in->count, 5);
  cr_assert_eq(record_for(in, 2), 2);
  cr_assert_eq(record_for(in, 3), 2);
  cr_assert_eq(record_for(in, 4), 1);
  cr_assert_eq(record_for(in, 5), 1);
  cr_assert_eq(record_for(in, 6), 2);
  cr_assert_eq(fx->p.delay, 4);
  cr_assert_eq(fx->p.stats.delay_changes, 1);
  cr_assert_eq(fx->p.ndelays, 2);
  cr_assert_eq(fx->p.delays[0].step, 0);
  cr_assert_eq(fx->p.delays[0].delay, 2);
  cr_assert_eq(fx->p.delays[1].step, 4);
  cr_assert_eq(fx->p.delays[1].delay, 4);
}

Test(peer_engine, a_delay_lowering_lets_deadlines_pass_unread) {
  start(4, 2);
  /* Step 0 announces delay 2: the switch step is 0 + 4 + 2 = 6; steps
   * 0..3 are confirmed so the bound does not get in the way. */
  cr_assert_eq(confirm_at(T0, 0, 4, 0, DELAY_FLAGS(2), 0), 0);
  gk_net_peer_handle_timeout(&fx->p, AT(1));
  cr_assert_eq(fx->src.nreads, 2, "steps 4 and 5");
  /* Deadlines 2 and 3 pass without reading the source (4 - 2 of them):
   * presses wait in the source for step 6's sample. */
  gk_net_peer_handle_timeout(&fx->p, AT(2));
  gk_net_peer_handle_timeout(&fx->p, AT(3));
  cr_assert_eq(fx->src.nreads, 2);
  cr_assert_eq(fx->p.stats.deadlines_skipped, 2);
  cr_assert_eq(fx->p.delay, 2);
  cr_assert_eq(fx->p.delays[1].step, 6);
  cr_assert_eq(fx->p.delays[1].delay, 2);
  /* Deadline 4 samples the switch step, and the next deadline follows. */
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, AT(4)), AT(5));
  cr_assert_eq(fx->src.nreads, 3);
  cr_assert_eq(fx->src.reads[2], 6);
  const gk_wire_input *in = last_input();
  cr_assert_eq(in->first, 4);
  cr_assert_eq(in->count, 3, "steps 4, 5, 6: none lacks a record");
  for (uint64_t s = 4; s <= 6; s++) cr_assert_eq(record_for(in, s), 2);
}

Test(peer_engine, the_match_end_stops_its_deadlines) {
  start(2, 3);
  gk_net_peer_handle_timeout(&fx->p, T0);
  gk_wire_msg m;
  m.type = GK_MSG_MATCH_END;
  m.u.match_end = (gk_wire_match_end){3, GK_WIRE_END_HOST};
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  cr_assert_eq(gk_net_peer_handle(&fx->p, AT(1), buf, len), 0);
  cr_assert_eq(fx->ended, 0, "step 3 has not run here yet");
  cr_assert_neq(gk_net_peer_poll_timeout(&fx->p), GK_NET_PEER_NEVER);
  uint32_t sent = fx->nsent;
  cr_assert_eq(confirm_at(AT(1), 0, 4, 3, GK_STEP_MATCH_END, 0), 0);
  cr_assert_eq(fx->ended, 1);
  cr_assert_eq(fx->end_step, 3);
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), GK_NET_PEER_NEVER);
  cr_assert_gt(fx->nsent, sent, "a last acknowledgement goes out");
  cr_assert_eq(last_input()->ack, 4);
}

Test(peer_engine,
     genres_come_from_the_callers_registry_and_options_from_its_hook) {
  char err[GK_ERRMSG_MAX] = "";
  gk_wire_match_start ms = match(2, 2);
  strcpy(ms.genre, "survivors"); /* compiled in, but not in this registry */
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert_neq(strstr(err, "survivors"), NULL, "%s", err);
  /* The hook applies the options; its errors are the start's. */
  ms = match(2, 2);
  strcpy(ms.config, "{\"start\": 1.5}");
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), GK_EPARSE);
  strcpy(ms.config, "{\"start\": 77}");
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(((const tally_cfg *)fx->p.sim_cfg)->start, 77);
  /* Without a hook, only blank options are taken. */
  gk_net_peer_free(&fx->p);
  open_peer(NULL);
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), GK_EINVAL);
  cr_assert_neq(strstr(err, "options hook"), NULL, "%s", err);
  strcpy(ms.config, " \n");
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
  /* A lookup function takes the place of the array. */
  gk_net_peer_free(&fx->p);
  memset(&fx->p, 0, sizeof fx->p);
  gk_net_peer_options o = {.source = &fx->src.base};
  gk_net_peer_callbacks cb = {.ctx = fx, .send = on_send};
  cr_assert_eq(gk_net_peer_init(&fx->p, &o, &cb), 0);
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err),
               GK_ENOTFOUND, "an empty registry knows no genre");
}

Test(peer_engine, stop_ends_the_deadlines_but_not_the_match) {
  start(2, 3);
  gk_net_peer_handle_timeout(&fx->p, T0);
  gk_net_peer_stop(&fx->p);
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), GK_NET_PEER_NEVER);
  uint32_t reads = fx->src.nreads;
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, AT(5)), GK_NET_PEER_NEVER);
  cr_assert_eq(fx->src.nreads, reads);
  /* Confirmed steps still run, and are acknowledged at once. */
  uint32_t sent = fx->nsent;
  cr_assert_eq(confirm_at(AT(5), 0, 2, UINT64_MAX, 0, 0), 0);
  cr_assert_eq(fx->p.loop.steps, 2);
  cr_assert_gt(fx->nsent, sent);
  cr_assert_eq(last_input()->ack, 2);
}

/* The schedule arithmetic the engine and gk-bot --light share. */
Test(peer_engine, the_shared_schedule_switches_raises_and_lowerings) {
  gk_net_sched s;
  gk_net_sched_event ev;
  gk_net_sched_init(&s, 2, 2, 2);
  cr_assert_eq(gk_net_sched_announce(&s, 0, 0), 0, "no change announced");
  cr_assert_eq(s.dl_pending, 0);
  cr_assert_eq(gk_net_sched_announce(&s, 0, DELAY_FLAGS(4)), 0);
  cr_assert_eq(s.dl_at, 4, "S = A + D + lead");
  for (uint64_t want = 2; want < 4; want++) {
    cr_assert_eq(gk_net_sched_deadline(&s, &ev), 0);
    cr_assert_eq(ev.switched + ev.held + ev.passed, 0);
    cr_assert_eq(gk_net_sched_next(&s), want);
    s.k++; /* sampled */
  }
  cr_assert_eq(gk_net_sched_deadline(&s, &ev), 0, "a raise samples on");
  cr_assert(ev.switched);
  cr_assert_eq(ev.at, 4);
  cr_assert_eq(ev.delay, 4);
  cr_assert_eq(ev.held_from, 4);
  cr_assert_eq(ev.held, 2);
  cr_assert_eq(gk_net_sched_next(&s), 6);
  cr_assert_eq(s.delay, 4);
  /* Lowering 4 -> 2 announced at step 0: two deadlines pass at S = 6. */
  gk_net_sched_init(&s, 4, 4, 2);
  gk_net_sched_announce(&s, 0, DELAY_FLAGS(2));
  s.k = 2;
  cr_assert_eq(gk_net_sched_deadline(&s, &ev), 1);
  cr_assert(ev.passed && !ev.switched);
  cr_assert_eq(gk_net_sched_next(&s), 6);
  cr_assert_eq(gk_net_sched_deadline(&s, &ev), 1);
  cr_assert(ev.passed && ev.switched);
  cr_assert_eq(ev.at, 6);
  cr_assert_eq(s.k, 4);
  cr_assert_eq(gk_net_sched_next(&s), 6, "the next sample is for S");
  cr_assert_eq(gk_net_sched_deadline(&s, &ev), 0);
  /* A second announcement before the switch: reported, the newer wins. */
  gk_net_sched_init(&s, 2, 2, 2);
  gk_net_sched_announce(&s, 0, DELAY_FLAGS(3));
  cr_assert_eq(gk_net_sched_announce(&s, 1, DELAY_FLAGS(5)), 1);
  cr_assert_eq(s.dl_at, 1 + 3 + 2);
  /* The bound: next < confirmed + delay + lead, within half the ring. */
  gk_net_sched_init(&s, 2, 2, 3);
  s.k = 2; /* next 4 */
  cr_assert(gk_net_sched_may_sample(&s, 0, 0, 64));
  s.k = 3; /* next 5 */
  cr_assert_not(gk_net_sched_may_sample(&s, 0, 0, 64));
  cr_assert(gk_net_sched_may_sample(&s, 1, 0, 64));
  cr_assert_not(gk_net_sched_may_sample(&s, 1, 0, 6), "half a ring of 6");
  /* An INPUT's records: from max(acked, first) to the next sample. */
  uint8_t ring[8 * 4], out[8 * 4];
  for (uint32_t i = 0; i < 8; i++) memset(ring + i * 4, (int)i, 4);
  uint64_t first = 0;
  cr_assert_eq(gk_net_sched_records(&s, 0, ring, 8, 4, 10, out, &first), 3);
  cr_assert_eq(first, 2);
  cr_assert_eq(out[0], 2);
  cr_assert_eq(out[8], 4);
  cr_assert_eq(gk_net_sched_records(&s, 4, ring, 8, 4, 10, out, &first), 1);
  cr_assert_eq(first, 4);
  cr_assert_eq(gk_net_sched_records(&s, 0, ring, 8, 4, 2, out, &first), 2,
               "at most what fits");
}

/* --- no simulation (gk-bot --light) --------------------------------------- */

/* A step callback for a peer that runs no loop: hash 0, no loop hash. */
static void on_step_nosim(void *ctx, gk_net_peer *p, const gk_step_input *in,
                          uint64_t hash) {
  fixture *f = ctx;
  cr_assert_eq(hash, 0, "no simulation, no hash");
  cr_assert_eq(p->loop.steps, 0, "no loop runs");
  f->ran[f->nran] = in->step;
  memcpy(f->ran_rec[f->nran], in->inputs, 8);
  f->nran++;
}

static void open_nosim(int fixed, uint32_t phase_num, uint32_t phase_den) {
  gk_net_peer_free(&fx->p);
  memset(fx, 0, sizeof *fx);
  fx->src.base.read = src_read;
  gk_net_peer_options o = {.source = &fx->src.base,
                           .genres = {.sims = genres, .count = 1},
                           .window = 64,
                           .no_sim = 1,
                           .fixed_schedule = fixed,
                           .phase_num = phase_num,
                           .phase_den = phase_den};
  gk_net_peer_callbacks cb = {
      .ctx = fx, .send = on_send, .step = on_step_nosim, .ended = on_ended};
  cr_assert_eq(gk_net_peer_init(&fx->p, &o, &cb), 0);
}

static int handle_msg(uint64_t now, gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  return gk_net_peer_handle(&fx->p, now, buf, len);
}

Test(peer_engine, without_simulation_confirmed_steps_reach_the_callback) {
  open_nosim(0, 0, 0);
  char err[GK_ERRMSG_MAX] = "";
  gk_wire_match_start ms = match(2, 3);
  strcpy(ms.config, "{\"start\": 5}"); /* no run: options are not read */
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, T0), AT(1));
  cr_assert_eq(fx->src.reads[0], 2, "the first sample is for 0 + delay");
  cr_assert_eq(record_for(last_input(), 2), 2);
  uint64_t tc = AT(1) + 300000;
  cr_assert_eq(confirm_at(tc, 0, 3, UINT64_MAX, 0, 0), 0);
  cr_assert_eq(fx->nran, 3, "every confirmed step, in order");
  for (uint32_t i = 0; i < 3; i++) {
    cr_assert_eq(fx->ran[i], i);
    cr_assert_eq(fx->ran_rec[i][0], 9);
    cr_assert_eq(fx->ran_rec[i][4], 7);
  }
  cr_assert_eq(fx->p.stats.steps_run, 3);
  cr_assert_eq(fx->p.nlatency, 1, "step 2 was sampled here");
  cr_assert_eq(fx->p.latency_us[0], (tc - T0) / 1000u);
  /* The next INPUT acknowledges them and carries no hash. */
  gk_net_peer_handle_timeout(&fx->p, AT(1));
  const gk_wire_input *in = last_input();
  cr_assert_eq(in->ack, 3);
  cr_assert_eq(in->hash_count, 0);
  cr_assert_eq(in->first, 2);
  cr_assert_eq(in->count, 2, "steps 2 and 3: the host has not acked them");
  /* The host holds step 2 now: only step 3 is repeated. */
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed =
      (gk_wire_confirmed){.players = 2, .input_size = 4, .ack = 3, .first = 3};
  cr_assert_eq(handle_msg(AT(1), &m), 0);
  gk_net_peer_handle_timeout(&fx->p, AT(2));
  in = last_input();
  cr_assert_eq(in->first, 3);
  cr_assert_eq(in->count, 2, "steps 3 and 4");
}

Test(peer_engine, with_a_fixed_schedule_a_wait_is_caught_up_within_the_bound) {
  open_nosim(1, 0, 0);
  start(2, 3); /* the bound: s < confirmed + 5 */
  gk_net_peer_handle_timeout(&fx->p, AT(3));
  cr_assert_eq(fx->src.nreads, 3, "steps 2, 3, 4; step 5 waits");
  cr_assert_eq(fx->p.blocked, 1);
  /* Steps 0..2 confirmed at deadline 6.5: the deadlines the wait held
   * back (3 .. 6: steps 5 .. 8) are due; the bound allows 5, 6 and 7. */
  uint64_t tc = AT(6) + SN / 2;
  cr_assert_eq(confirm_at(tc, 0, 3, UINT64_MAX, 0, 0), 0);
  cr_assert_eq(gk_net_peer_poll_timeout(&fx->p), tc, "resume at once");
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, tc), tc + SN,
               "blocked again on step 8: once a period");
  cr_assert_eq(fx->src.nreads, 6);
  cr_assert_eq(fx->src.reads[5], 7);
  const gk_wire_input *in = last_input();
  cr_assert_eq(in->first, 2);
  cr_assert_eq(in->count, 6, "steps 2..7, none acknowledged");
  /* Step 3 confirmed: step 8 goes, and the schedule is where it was: the
   * next deadline is deadline 7, not one period from now. */
  cr_assert_eq(confirm_at(tc + 1000, 3, 1, UINT64_MAX, 0, 0), 0);
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, tc + 1000), AT(7));
  cr_assert_eq(fx->src.reads[6], 8);
}

Test(peer_engine, a_phase_moves_the_first_deadline_into_the_period) {
  open_nosim(1, 1, 4);
  start(2, 3);
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, T0), T0 + SN / 4);
  cr_assert_eq(fx->src.nreads, 0);
  cr_assert_eq(fx->nsent, 0, "nothing owed, nothing sent");
  cr_assert_eq(gk_net_peer_handle_timeout(&fx->p, T0 + SN / 4),
               T0 + SN / 4 + SN);
  cr_assert_eq(fx->src.reads[0], 2);
}

Test(peer_engine, without_simulation_a_delay_raise_switches_at_its_step) {
  open_nosim(1, 0, 0);
  start(2, 2);
  cr_assert_eq(confirm_at(T0, 0, 1, 0, DELAY_FLAGS(4), 0), 0);
  gk_net_peer_handle_timeout(&fx->p, AT(2));
  cr_assert_eq(fx->src.reads[2], 6, "steps 4 and 5 are held neutral");
  const gk_wire_input *in = last_input();
  cr_assert_eq(record_for(in, 4), 1);
  cr_assert_eq(record_for(in, 5), 1);
  cr_assert_eq(record_for(in, 6), 2);
  cr_assert_eq(fx->p.ndelays, 2);
  cr_assert_eq(fx->p.delays[1].step, 4);
  cr_assert_eq(fx->p.delays[1].delay, 4);
}

Test(peer_engine, an_ended_peer_acknowledges_every_repeat_of_the_last_step) {
  open_nosim(1, 0, 0);
  start(2, 3);
  gk_net_peer_handle_timeout(&fx->p, T0);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_MATCH_END;
  m.u.match_end = (gk_wire_match_end){3, GK_WIRE_END_HOST};
  cr_assert_eq(handle_msg(AT(1), &m), 0);
  cr_assert_eq(confirm_at(AT(1), 0, 4, 3, GK_STEP_MATCH_END, 0), 0);
  cr_assert_eq(fx->ended, 1);
  cr_assert_eq(fx->nran, 4);
  uint32_t sent = fx->nsent;
  cr_assert_eq(last_input()->ack, 4);
  /* The host repeats step 3 (our acknowledgement was lost): again. */
  cr_assert_eq(confirm_at(AT(9), 3, 1, 3, GK_STEP_MATCH_END, 0), 0);
  cr_assert_eq(fx->nsent, sent + 1);
  cr_assert_eq(last_input()->ack, 4);
  cr_assert_eq(fx->ended, 1, "ended once");
}

Test(peer_engine, without_simulation_state_requests_and_snapshots_are_refused) {
  gk_net_peer_free(&fx->p);
  memset(&fx->p, 0, sizeof fx->p);
  gk_net_peer_options o = {.genres = {.sims = genres, .count = 1}, .no_sim = 1};
  gk_net_peer_callbacks cb = {.ctx = fx, .send = on_send};
  cr_assert_eq(gk_net_peer_init(&fx->p, &o, &cb), GK_EINVAL,
               "no simulation needs a source");
  o.source = &fx->src.base;
  o.phase_num = o.phase_den = 2;
  cr_assert_eq(gk_net_peer_init(&fx->p, &o, &cb), GK_EINVAL,
               "a phase is less than one period");
  open_nosim(0, 0, 0);
  uint8_t secret[GK_WIRE_SECRET_LEN] = {1};
  cr_assert_eq(gk_net_peer_rejoin(&fx->p, T0, "ABCDEF", 1, secret, NULL),
               GK_ESTATE);
  cr_assert_eq(gk_net_peer_spectate(&fx->p, T0, "ABCDEF", NULL), GK_ESTATE);
  char err[GK_ERRMSG_MAX] = "";
  gk_wire_match_start ms = match(2, 2);
  ms.active_mask = 1; /* slot 1 joins a running match: needs a snapshot */
  cr_assert_eq(gk_net_peer_start(&fx->p, T0, &ms, err, sizeof err), GK_ESTATE);
  cr_assert_neq(strstr(err, "snapshot"), NULL, "%s", err);
  start(2, 2);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STATE_REQUEST;
  m.u.state_req.step = 0;
  uint64_t drops = fx->p.stats.drop_unexpected;
  cr_assert_eq(handle_msg(T0, &m), GK_ESTATE);
  cr_assert_eq(fx->p.stats.drop_unexpected, drops + 1);
  cr_assert_eq(fx->nsent, 0, "no answer");
}
