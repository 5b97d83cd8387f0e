/* test_session.c: the host session on its own, fed datagrams by hand (no
 * sockets: the session has none). Hostile and misplaced messages are
 * dropped, counted and change nothing; confirmation, hash checks, stall
 * notices, removals and the match end behave as the header says. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_session.h"
#include "tally.h"

#define SENT_MAX 512

typedef struct sent {
  uint32_t slot;
  int reliable;
  size_t len;
  uint8_t bytes[GK_WIRE_MAX];
} sent;

typedef struct fixture {
  gk_net_session s;
  sent out[SENT_MAX];
  uint32_t nout;
  gk_net_desync desync;
  int ndesync;
  uint32_t stall_awaited;
  int nstall;
  int ended;
  int end_reason;
  uint64_t end_step;
  /* the host's loop, as seen from the step callback */
  uint64_t steps_seen;    /* step callbacks so far */
  gk_step_input last_run; /* the input of the last step it ran */
  /* when `ended` was called */
  uint64_t ended_loop_steps;
  gk_step_input ended_last_run;
  uint64_t ended_steps_seen;
  /* MATCH_END notices sent while the host had not yet run their step */
  int match_end_early;
  /* the confirmed callback: each step's late_ms, and how many came */
  uint64_t late_ms[128];
  uint64_t nconfirmed;
} fixture;

static fixture fx;

static int on_send(void *ctx, uint32_t slot, const uint8_t *bytes, size_t len,
                   int reliable) {
  fixture *f = ctx;
  gk_wire_msg m;
  if (gk_wire_decode(bytes, len, &m) == 0 && m.type == GK_MSG_MATCH_END &&
      f->s.loop.steps <= m.u.match_end.step)
    f->match_end_early++;
  if (f->nout < SENT_MAX) {
    sent *s = &f->out[f->nout++];
    s->slot = slot;
    s->reliable = reliable;
    s->len = len;
    memcpy(s->bytes, bytes, len);
  }
  return 0;
}

static void on_desync(void *ctx, const gk_net_desync *d) {
  fixture *f = ctx;
  f->desync = *d;
  f->ndesync++;
}

static void on_stall(void *ctx, uint64_t step, uint32_t awaited,
                     uint64_t waited_ms) {
  (void)step;
  (void)waited_ms;
  fixture *f = ctx;
  f->stall_awaited = awaited;
  f->nstall++;
}

static void on_step(void *ctx, const gk_step_input *in, uint64_t hash) {
  (void)hash;
  fixture *f = ctx;
  f->steps_seen++;
  f->last_run = *in;
}

static void on_ended(void *ctx, uint64_t step, int reason) {
  fixture *f = ctx;
  f->ended_loop_steps = f->s.loop.steps;
  f->ended_last_run = f->last_run;
  f->ended_steps_seen = f->steps_seen;
  f->ended++;
  f->end_reason = reason;
  f->end_step = step;
}

static void on_confirmed(void *ctx, uint64_t step, uint64_t late_ms) {
  fixture *f = ctx;
  cr_assert_eq(step, f->nconfirmed, "in step order, once each");
  if (step < 128) f->late_ms[step] = late_ms;
  f->nconfirmed++;
}

/* Two players of the tally genre, input delay 1, lead 2, opened at 1000
 * ms, with `c`'s stall and schedule settings. */
static void open_with(gk_net_session_config c) {
  static const tally_cfg cfg = {0};
  memset(&fx, 0, sizeof fx);
  c.sim = &tally_sim;
  c.sim_config = &cfg;
  c.seed = 7;
  c.players = 2;
  c.input_delay = 1;
  c.lead = 2;
  c.creator = 0;
  c.window = 64;
  gk_net_session_callbacks cb = {.ctx = &fx,
                                 .send = on_send,
                                 .desync = on_desync,
                                 .stall = on_stall,
                                 .step = on_step,
                                 .ended = on_ended,
                                 .confirmed = on_confirmed};
  char err[GK_ERRMSG_MAX];
  cr_assert_eq(gk_net_session_init(&fx.s, &c, &cb, 1000, err, sizeof err), 0,
               "%s", err);
}

static void open_session(uint64_t auto_remove_ms) {
  open_with((gk_net_session_config){.stall_notice_ms = 100,
                                    .auto_remove_ms = auto_remove_ms});
}

static void fini(void) {
  gk_net_session_close(&fx.s);
}

TestSuite(session, .fini = fini);

static int feed(uint32_t slot, const gk_wire_msg *m, uint64_t now) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  return gk_net_session_receive(&fx.s, slot, buf, len, now);
}

static int send_input_ack(uint32_t from, uint32_t claimed, uint64_t first,
                          uint8_t count, uint32_t value, uint64_t ack,
                          uint64_t now) {
  uint8_t recs[64 * 4];
  for (uint32_t i = 0; i < count * 4u; i += 4) {
    recs[i] = (uint8_t)value;
    recs[i + 1] = recs[i + 2] = recs[i + 3] = 0;
  }
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = (uint8_t)claimed,
                              .input_size = 4,
                              .count = count,
                              .ack = ack,
                              .first = first,
                              .records = recs};
  return feed(from, &m, now);
}

static int send_input(uint32_t from, uint32_t claimed, uint64_t first,
                      uint8_t count, uint32_t value, uint64_t now) {
  return send_input_ack(from, claimed, first, count, value, 0, now);
}

/* The last message of `type` sent to `slot`, decoded. */
static int last_sent(uint32_t slot, gk_wire_type type, gk_wire_msg *m) {
  for (uint32_t i = fx.nout; i-- > 0;)
    if (fx.out[i].slot == slot &&
        gk_wire_decode(fx.out[i].bytes, fx.out[i].len, m) == 0 &&
        m->type == type)
      return 1;
  return 0;
}

Test(session, inputs_from_both_players_confirm_and_are_broadcast) {
  open_session(0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 1); /* the neutral step */
  cr_assert_eq(send_input(0, 0, 1, 3, 10, 1001), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 1);
  cr_assert_eq(send_input(1, 1, 1, 2, 20, 1002), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 3);
  gk_wire_msg m;
  cr_assert(last_sent(1, GK_MSG_CONFIRMED, &m));
  cr_assert_eq(m.u.confirmed.first, 0);
  cr_assert_eq(m.u.confirmed.count, 3);
  cr_assert_eq(m.u.confirmed.ack, 3); /* player 1 sent steps 1..2 */
  gk_step_input in;
  gk_wire_step_get(&m.u.confirmed, 2, &in);
  cr_assert_eq(in.inputs[0], 10);
  cr_assert_eq(in.inputs[4], 20);
  cr_assert_eq(gk_net_session_tick(&fx.s, 1003), 3);
  cr_assert_eq(fx.s.loop.steps, 3);
  /* Repeats of records already held are counted, not errors. */
  cr_assert_eq(send_input(0, 0, 1, 3, 10, 1004), 0);
  cr_assert_eq(fx.s.stats.inputs_stale, 2);
  cr_assert_eq(fx.s.stats.inputs_dup, 1);
}

Test(session, misplaced_and_hostile_messages_are_dropped_and_counted) {
  open_session(0);
  /* Claims another player's slot. */
  cr_assert_eq(send_input(1, 0, 1, 1, 9, 1001), GK_EPERM);
  cr_assert_eq(fx.s.stats.drop_slot, 1);
  /* A sender slot the match does not have. */
  cr_assert_eq(send_input(5, 5, 1, 1, 9, 1001), GK_ERANGE);
  /* Far in the future. */
  cr_assert_eq(send_input(0, 0, 1000000, 1, 9, 1001), GK_EAHEAD);
  cr_assert_eq(fx.s.stats.drop_ahead, 1);
  /* Garbage, truncation, a wrong record size. */
  uint8_t junk[7] = {GK_WIRE_VERSION, GK_MSG_INPUT, 0, 4, 0, 0, 0};
  cr_assert_eq(gk_net_session_receive(&fx.s, 0, junk, sizeof junk, 1001),
               GK_ETRUNC);
  uint8_t rec[8] = {0};
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){
      .slot = 0, .input_size = 8, .count = 1, .first = 1, .records = rec};
  cr_assert_eq(feed(0, &m, 1001), GK_EPERM);
  cr_assert_eq(fx.s.stats.drop_malformed, 1);
  cr_assert_eq(fx.s.stats.drop_slot, 3);
  /* Room control sent to a match session. */
  m.type = GK_MSG_START_MATCH;
  cr_assert_eq(feed(1, &m, 1001), GK_EPROTO);
  cr_assert_eq(fx.s.stats.drop_unexpected, 1);
  /* A hash for a step nobody could have run. */
  m.type = GK_MSG_HASH;
  m.u.hash.first = 5;
  m.u.hash.count = 1;
  m.u.hash.hashes[0] = 1;
  cr_assert_eq(feed(1, &m, 1001), GK_EAHEAD);
  /* Host actions from a player who is not the creator. */
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){0, GK_WIRE_STEP_ASAP};
  cr_assert_eq(feed(1, &m, 1001), GK_EPERM);
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  cr_assert_eq(feed(1, &m, 1001), GK_EPERM);
  cr_assert_eq(fx.s.stats.drop_perm, 2);
  /* None of it moved the match. */
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 1);
  cr_assert_eq(gk_net_session_tick(&fx.s, 1002), 1);
  cr_assert_eq(fx.s.ended, 0);
}

Test(session, a_wrong_hash_is_reported_once_at_its_step_naming_the_player) {
  open_session(0);
  send_input(0, 0, 1, 4, 3, 1001);
  send_input(1, 1, 1, 4, 4, 1001);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 5);
  /* Reports before the host ran the steps wait, then are compared. */
  gk_wire_msg m;
  m.type = GK_MSG_HASH;
  m.u.hash.first = 0;
  m.u.hash.count = 5;
  cr_assert_eq(gk_net_session_tick(&fx.s, 1002), 5);
  for (uint32_t i = 0; i < 5; i++)
    cr_assert_eq(gk_loop_hash_at(&fx.s.loop, i, &m.u.hash.hashes[i]), 0);
  cr_assert_eq(feed(0, &m, 1003), 0);
  m.u.hash.hashes[3] ^= 1;
  m.u.hash.hashes[4] ^= 1;
  cr_assert_eq(feed(1, &m, 1003), 0);
  cr_assert_eq(fx.ndesync, 1);
  cr_assert_eq(fx.desync.step, 3);
  cr_assert_eq(fx.desync.player, 1);
  cr_assert_neq(fx.desync.host_hash, fx.desync.peer_hash);
  cr_assert_eq(fx.s.stats.hashes_compared, 10);
  gk_wire_msg d;
  cr_assert(last_sent(0, GK_MSG_DESYNC, &d));
  cr_assert_eq(d.u.desync.player, 1);
  cr_assert(last_sent(1, GK_MSG_DESYNC, &d));
}

Test(session, a_stall_is_noticed_naming_the_player_and_the_creator_removes_it) {
  open_session(0);
  send_input(0, 0, 1, 3, 1, 1000);
  send_input(1, 1, 1, 1, 1, 1000);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 2);
  gk_net_session_tick(&fx.s, 1050);
  cr_assert_eq(fx.nstall, 0);
  gk_net_session_tick(&fx.s, 1100);
  cr_assert_eq(fx.nstall, 1);
  cr_assert_eq(fx.stall_awaited, 0x2);
  gk_wire_msg m;
  cr_assert(last_sent(0, GK_MSG_STALL, &m));
  cr_assert_eq(m.u.stall.step, 2);
  cr_assert_eq(m.u.stall.awaited, 0x2);
  gk_net_session_tick(&fx.s, 1200); /* noticed once per stalled step */
  cr_assert_eq(fx.nstall, 1);
  m.type = GK_MSG_REMOVE_PLAYER;
  m.u.remove = (gk_wire_remove){1, GK_WIRE_STEP_ASAP};
  cr_assert_eq(feed(0, &m, 1201), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 4);
  cr_assert(last_sent(1, GK_MSG_REMOVE_PLAYER, &m));
  cr_assert_eq(m.u.remove.step, 2);
  /* The removed player's records are refused from then on. */
  cr_assert_eq(send_input(1, 1, 2, 1, 1, 1202), GK_EPERM);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, 2, &in), 0);
  cr_assert_eq(in.active_mask, 0x1);
}

Test(session, auto_removal_takes_a_stalled_player_out_when_configured) {
  open_session(300);
  send_input(0, 0, 1, 5, 1, 1000);
  gk_net_session_tick(&fx.s, 1200);
  cr_assert_eq(fx.nstall, 1);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 1);
  gk_net_session_tick(&fx.s, 1300);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 6);
}

Test(session, the_creator_ends_the_match_even_while_a_player_stalls) {
  open_session(0);
  send_input(0, 0, 1, 2, 1, 1000);
  gk_wire_msg m;
  m.type = GK_MSG_END_MATCH;
  m.u.end_reason = GK_WIRE_END_HOST;
  cr_assert_eq(feed(0, &m, 1001), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 2);
  cr_assert_eq(gk_net_session_end(&fx.s, GK_WIRE_END_HOST, 1001), GK_ESTATE);
  gk_net_session_tick(&fx.s, 1002);
  cr_assert_eq(fx.ended, 1);
  cr_assert_eq(fx.end_step, 1);
  cr_assert_eq(fx.end_reason, GK_WIRE_END_HOST);
  cr_assert(last_sent(1, GK_MSG_MATCH_END, &m));
  cr_assert_eq(m.u.match_end.step, 1);
  gk_net_session_tick(&fx.s, 1003);
  cr_assert_eq(fx.ended, 1);
  cr_assert_eq(fx.s.loop.steps, 2);
  cr_assert_eq(send_input(1, 1, 1, 1, 1, 1004), GK_ECLOSED);
}

Test(session, the_match_ends_when_every_player_has_left) {
  open_session(0);
  cr_assert_eq(gk_net_session_disconnect(&fx.s, 0, 1001), 0);
  cr_assert_eq(gk_net_session_disconnect(&fx.s, 0, 1001), 0); /* no-op */
  cr_assert_eq(gk_net_session_disconnect(&fx.s, 1, 1001), 0);
  gk_net_session_tick(&fx.s, 1002);
  gk_net_session_tick(&fx.s, 1003);
  cr_assert_eq(fx.ended, 1);
  cr_assert_eq(fx.end_reason, GK_WIRE_END_ALL_LEFT);
}

Test(session, bad_configs_are_refused_with_a_message) {
  static const tally_cfg cfg = {0};
  gk_net_session s;
  gk_net_session_callbacks cb = {.ctx = &fx, .send = on_send};
  char err[GK_ERRMSG_MAX] = "";
  gk_net_session_config c = {
      .sim = &tally_sim, .sim_config = &cfg, .players = 0};
  cr_assert_eq(gk_net_session_init(&s, &c, &cb, 0, err, sizeof err), GK_EINVAL);
  cr_assert_neq(strstr(err, "players"), NULL, "%s", err);
  c.players = 2;
  c.creator = 2;
  cr_assert_eq(gk_net_session_init(&s, &c, &cb, 0, err, sizeof err), GK_EINVAL);
  c.creator = 0;
  c.input_delay = 200; /* half the default window or more */
  cr_assert_eq(gk_net_session_init(&s, &c, &cb, 0, err, sizeof err), GK_EINVAL);
  open_session(0); /* so fini has something to close */
}

/* The first n hashes of the match open_session starts when player 0
 * sends `v0` and player 1 `v1` for every step after the neutral one, from
 * a plain gk_loop run of tally (the session's own run is not consulted). */
static void reference_hashes(uint32_t v0, uint32_t v1, uint64_t *hashes,
                             uint32_t n) {
  static const tally_cfg cfg = {0};
  uint8_t recs[16 * 2 * 4];
  cr_assert_leq(n, 16);
  memset(recs, 0, sizeof recs);
  for (uint32_t st = 1; st < n; st++) {
    recs[st * 8] = (uint8_t)v0;
    recs[st * 8 + 4] = (uint8_t)v1;
  }
  gk_script_input in;
  gk_script_input_init(&in, recs, n, 2, 4);
  gk_loop loop;
  cr_assert_eq(gk_loop_init(&loop, NULL), 0);
  cr_assert_eq(gk_loop_start(&loop, &tally_sim, &cfg, 7, 2, NULL, 0), 0);
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_eq(gk_loop_frame(&loop, &in.base, gk_budget_steps(1), 0), 1);
    hashes[i] = loop.last_hash;
  }
  gk_loop_close(&loop);
}

Test(
    session,
    hash_reports_that_arrive_before_the_host_ran_the_steps_are_all_compared_later) {
  open_session(0);
  send_input(0, 0, 1, 4, 3, 1001);
  send_input(1, 1, 1, 4, 4, 1001);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 5);
  uint64_t right[5];
  reference_hashes(3, 4, right, 5);
  /* Both players report steps 0-4 before the host has run any of them;
   * player 1, the last one in the table, is wrong at step 3. */
  gk_wire_msg m;
  m.type = GK_MSG_HASH;
  m.u.hash.first = 0;
  m.u.hash.count = 5;
  memcpy(m.u.hash.hashes, right, sizeof right);
  cr_assert_eq(feed(0, &m, 1002), 0);
  m.u.hash.hashes[3] ^= 1;
  cr_assert_eq(feed(1, &m, 1002), 0);
  cr_assert_eq(fx.s.loop.steps, 0);
  cr_assert_eq(fx.s.stats.hashes_compared, 0);
  cr_assert_eq(fx.ndesync, 0);
  /* Now the host runs them. */
  cr_assert_eq(gk_net_session_tick(&fx.s, 1003), 5);
  uint64_t mine;
  cr_assert_eq(gk_loop_hash_at(&fx.s.loop, 4, &mine), 0);
  cr_assert_eq(mine, right[4], "the reference run is not the host's run");
  cr_assert_eq(fx.ndesync, 1);
  cr_assert_eq(fx.desync.step, 3);
  cr_assert_eq(fx.desync.player, 1);
  cr_assert_eq(fx.desync.host_hash, right[3]);
  cr_assert_eq(fx.desync.peer_hash, right[3] ^ 1);
  cr_assert_eq(fx.s.stats.hashes_compared, 10, "5 reports of each player");
  cr_assert_eq(fx.s.stats.hashes_dropped, 0);
  cr_assert_eq(fx.s.stats.desyncs, 1);
  for (uint32_t p = 0; p < 2; p++) {
    gk_wire_msg d;
    cr_assert(last_sent(p, GK_MSG_DESYNC, &d), "no DESYNC to %u", p);
    cr_assert_eq(d.u.desync.step, 3);
    cr_assert_eq(d.u.desync.player, 1);
  }
}

Test(session,
     when_every_player_left_the_host_runs_the_end_step_before_announcing_it) {
  open_session(0);
  send_input(0, 0, 1, 2, 1, 1001);
  send_input(1, 1, 1, 2, 2, 1001);
  cr_assert_eq(gk_net_session_tick(&fx.s, 1002), 3);
  cr_assert_eq(gk_net_session_disconnect(&fx.s, 0, 1003), 0);
  cr_assert_eq(gk_net_session_disconnect(&fx.s, 1, 1003), 0);
  for (uint64_t now = 1004; !fx.ended && now < 1200; now += 17)
    gk_net_session_tick(&fx.s, now);
  cr_assert_eq(fx.ended, 1);
  cr_assert_eq(fx.end_reason, GK_WIRE_END_ALL_LEFT);
  cr_assert_eq(fx.s.end_reason, GK_WIRE_END_ALL_LEFT);
  /* The end step announced is the last step the host ran, and it had run
   * it (with the end flag) before the announcement. */
  cr_assert_eq(fx.end_step, fx.s.end_step);
  cr_assert_eq(fx.ended_loop_steps, fx.end_step + 1,
               "announced step %llu with %llu steps run",
               (unsigned long long)fx.end_step,
               (unsigned long long)fx.ended_loop_steps);
  cr_assert_eq(fx.ended_steps_seen, fx.end_step + 1);
  cr_assert_eq(fx.ended_last_run.step, fx.end_step);
  cr_assert(fx.ended_last_run.flags & GK_STEP_MATCH_END);
  cr_assert_eq(fx.ended_last_run.active_mask, 0);
  cr_assert_eq(fx.match_end_early, 0);
  /* Nothing runs after the end. */
  gk_net_session_tick(&fx.s, 1300);
  cr_assert_eq(fx.s.loop.steps, fx.end_step + 1);
  cr_assert_eq(fx.ended, 1);
}

/* The first CONFIRMED sent to `slot` from out[from] on, decoded. */
static int next_confirmed(uint32_t slot, uint32_t from, gk_wire_msg *m) {
  for (uint32_t i = from; i < fx.nout; i++)
    if (fx.out[i].slot == slot &&
        gk_wire_decode(fx.out[i].bytes, fx.out[i].len, m) == 0 &&
        m->type == GK_MSG_CONFIRMED)
      return 1;
  return 0;
}

/* INPUT from `slot` with no records and a hash report of steps
 * first..first+count-1 (the host's own hashes, `bad` flipped if < count). */
static int send_input_hashes(uint32_t slot, uint64_t first, uint8_t count,
                             uint32_t bad, uint64_t now) {
  uint8_t hs[GK_WIRE_STEPS_MAX * 8];
  for (uint32_t i = 0; i < count; i++) {
    uint64_t h = 0;
    gk_loop_hash_at(&fx.s.loop, first + i, &h);
    if (i == bad) h ^= 1;
    for (int k = 0; k < 8; k++) hs[i * 8 + k] = (uint8_t)(h >> (8 * k));
  }
  gk_wire_msg m;
  m.type = GK_MSG_INPUT;
  m.u.input = (gk_wire_input){.slot = (uint8_t)slot,
                              .input_size = 4,
                              .first = 1,
                              .hash_count = count,
                              .hash_first = first,
                              .hashes = hs};
  return feed(slot, &m, now);
}

Test(session, hashes_riding_in_input_are_compared_and_acknowledged) {
  open_session(0);
  send_input(0, 0, 1, 4, 3, 1001);
  send_input(1, 1, 1, 4, 4, 1001);
  cr_assert_eq(gk_net_session_tick(&fx.s, 1002), 5);
  cr_assert_eq(send_input_hashes(0, 0, 5, 99, 1003), 0);
  cr_assert_eq(send_input_hashes(1, 0, 3, 99, 1003), 0);
  cr_assert_eq(send_input_hashes(1, 2, 3, 1, 1003), 0); /* step 3 differs */
  cr_assert_eq(fx.ndesync, 1);
  cr_assert_eq(fx.desync.step, 3);
  cr_assert_eq(fx.desync.player, 1);
  cr_assert_eq(fx.s.stats.hashes_compared, 10, "step 2 counted once");
  /* A report of steps nobody could have run is refused; the records of
   * the same INPUT still count. */
  cr_assert_eq(send_input_hashes(0, 4, 3, 99, 1004), GK_EAHEAD);
  cr_assert_eq(fx.s.stats.drop_ahead, 1);
  /* The next CONFIRMED tells each player which hashes the host holds. */
  uint32_t mark = fx.nout;
  send_input(0, 0, 5, 1, 3, 1005);
  send_input(1, 1, 5, 1, 4, 1005);
  gk_wire_msg m;
  cr_assert(next_confirmed(0, mark, &m));
  cr_assert_eq(m.u.confirmed.hash_ack, 5);
  cr_assert(next_confirmed(1, mark, &m));
  cr_assert_eq(m.u.confirmed.hash_ack, 5);
}

Test(session, an_ack_of_step_n_whose_confirmed_was_lost_resends_from_n) {
  open_session(0);
  /* Steps 0-2 reach player 0 (A), which acknowledges them: ack = 3, "I
   * hold every confirmed step below 3". */
  send_input_ack(0, 0, 1, 2, 1, 1, 1001);
  send_input_ack(1, 1, 1, 2, 2, 1, 1001);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 3);
  cr_assert_eq(send_input_ack(0, 0, 3, 3, 1, 3, 1002), 0);
  /* B's records confirm steps 3-5; the CONFIRMED that carries them to A
   * is lost (B acknowledges them all). */
  uint32_t mark = fx.nout;
  cr_assert_eq(send_input_ack(1, 1, 3, 3, 2, 3, 1003), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 6);
  gk_wire_msg m;
  cr_assert(next_confirmed(0, mark, &m));
  cr_assert_eq(m.u.confirmed.first, 3, "the lost CONFIRMED");
  cr_assert_eq(send_input_ack(1, 1, 6, 0, 0, 6, 1004), 0);
  cr_assert_eq(gk_net_session_tick(&fx.s, 1004), 6);
  /* A still acknowledges 3, so step 3 stays held for it ... */
  cr_assert_eq(send_input_ack(0, 0, 6, 1, 1, 3, 1005), 0);
  cr_assert_leq(fx.s.inbuf.low, 3, "step 3 was released early");
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, 3, &in), 0);
  /* ... and the next CONFIRMED to A starts at 3: not one step period
   * after the last one (its acknowledgement may still be on its way),
   * but after two. */
  mark = fx.nout;
  gk_net_session_tick(&fx.s, 1003 + 17);
  cr_assert_not(next_confirmed(0, mark, &m), "repeated within two periods");
  gk_net_session_tick(&fx.s, 1003 + 34);
  cr_assert(next_confirmed(0, mark, &m), "nothing resent to A");
  cr_assert_eq(m.u.confirmed.first, 3);
  cr_assert_geq(m.u.confirmed.count, 3);
  cr_assert_eq(m.u.confirmed.ack, 7, "A's own inputs up to step 6 held");
  /* B acknowledged everything: nothing is repeated to it. */
  cr_assert_not(next_confirmed(1, mark, &m));
}

Test(
    session,
    records_for_the_end_step_and_after_it_are_refused_once_the_end_is_scheduled) {
  open_session(0);
  send_input(0, 0, 1, 3, 5, 1001);
  send_input(1, 1, 1, 2, 6, 1001);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), 3);
  /* The end is scheduled at the next unconfirmed step, E = 3, and E is
   * confirmed at once with player 1's missing record neutral. */
  cr_assert_eq(gk_net_session_end(&fx.s, GK_WIRE_END_HOST, 1002), 0);
  const uint64_t e = 3;
  cr_assert_eq(gk_net_session_confirmed(&fx.s), e + 1);
  /* A record for E arrives after that: stale, not an error, counted. */
  uint64_t stale = fx.s.stats.inputs_stale;
  cr_assert_eq(send_input(1, 1, e, 1, 9, 1003), 0);
  cr_assert_eq(fx.s.stats.inputs_stale, stale + 1);
  gk_step_input in;
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, e, &in), 0);
  cr_assert(in.flags & GK_STEP_MATCH_END);
  cr_assert_eq(in.inputs[0], 5, "player 0's record for E is in");
  cr_assert_eq(in.inputs[4], 0, "player 1's late record for E is not");
  /* A record for E + 1 is past the end: refused the same way, not held. */
  cr_assert_eq(send_input(0, 0, e + 1, 1, 7, 1003), 0);
  cr_assert_eq(send_input(1, 1, e + 1, 2, 7, 1003), 0);
  cr_assert_eq(fx.s.stats.inputs_stale, stale + 4);
  cr_assert_eq(fx.s.inbuf.meta[(e + 1) % fx.s.inbuf.window].present, 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), e + 1);
  cr_assert_eq(gk_inbuf_get(&fx.s.inbuf, e + 1, &in), GK_EAHEAD);
  /* The match ends at E; afterwards every INPUT is refused outright. */
  cr_assert_eq(gk_net_session_tick(&fx.s, 1004), 4);
  cr_assert_eq(fx.ended, 1);
  cr_assert_eq(fx.end_step, e);
  cr_assert_eq(send_input(1, 1, e, 1, 9, 1005), GK_ECLOSED);
  cr_assert_eq(send_input(0, 0, e + 1, 1, 9, 1005), GK_ECLOSED);
}

/* --- the schedule: late steps, stalls, confirm latency ------------------- */

/* 50 steps a second (step s due at 1000 + (s + 1) * 20 ms), a step late
 * past 50 ms, a stall after 100 ms with nothing confirmed. */
static void open_schedule(uint32_t stall_ms) {
  open_with((gk_net_session_config){
      .step_seconds = {1, 50}, .late_slack_ms = 50, .stall_ms = stall_ms});
}

/* Both players' records for `step` at `now`: the step is confirmed then. */
static void both(uint64_t step, uint64_t now) {
  cr_assert_eq(send_input(0, 0, step, 1, 1, now), 0);
  cr_assert_eq(send_input(1, 1, step, 1, 1, now), 0);
  cr_assert_eq(gk_net_session_confirmed(&fx.s), step + 1);
  cr_assert_geq(gk_net_session_tick(&fx.s, now), 0);
}

Test(session, a_step_past_its_place_and_the_slack_is_late) {
  open_schedule(100);
  both(1, 1000 + 2 * 20 + 50); /* 50 ms past: within the slack */
  both(2, 1000 + 3 * 20 + 51); /* 51 ms past, after a 21 ms wait */
  both(3, 1000 + 4 * 20 + 40); /* 40 ms past */
  cr_assert_eq(fx.late_ms[0], 0, "the neutral step, at the start");
  cr_assert_eq(fx.late_ms[1], 50);
  cr_assert_eq(fx.late_ms[2], 51);
  cr_assert_eq(fx.late_ms[3], 40);
  const gk_net_session_stats *st = &fx.s.stats;
  cr_assert_eq(st->steps_confirmed, 4);
  cr_assert_eq(fx.nconfirmed, 4);
  cr_assert_eq(st->steps_late, 1);
  cr_assert_eq(st->confirm_ms, 141);
  cr_assert_eq(st->stalls, 0);
}

Test(session, a_long_wait_is_one_stall_and_the_schedule_moves_to_it) {
  open_schedule(100);
  for (uint64_t s = 1; s < 10; s++) both(s, 1000 + (s + 1) * 20);
  /* step 10 comes 500 ms late, after 520 ms with nothing confirmed */
  uint64_t t = 1000 + 11 * 20 + 500;
  both(10, t);
  const gk_net_session_stats *st = &fx.s.stats;
  cr_assert_eq(st->stalls, 1);
  cr_assert_eq(st->stalled_ms, 500);
  cr_assert_eq(fx.late_ms[10], 0, "its wait is the stall's");
  /* the steps after it, at the pace since, are on time: 30 ms past the
   * new schedule is within the slack */
  both(11, t + 20);
  both(12, t + 40 + 30);
  both(13, t + 80);
  both(14, t + 80);
  cr_assert_eq(fx.late_ms[11], 0);
  cr_assert_eq(fx.late_ms[12], 30);
  cr_assert_eq(fx.late_ms[13], 20);
  cr_assert_eq(fx.late_ms[14], 0);
  cr_assert_eq(st->steps_late, 0);
  cr_assert_eq(st->confirm_ms, 50);
  cr_assert_eq(st->stalls, 1);
  cr_assert_eq(st->steps_confirmed, 15);
}

Test(session, a_match_that_runs_slow_without_a_wait_is_late_not_stalled) {
  open_schedule(100);
  /* a step every 25 ms where 20 are due: 5 ms further behind each step,
   * past the slack from step 10 and past stall_ms from step 20, never
   * after a wait of more than 25 ms */
  for (uint64_t s = 1; s <= 40; s++) both(s, 1000 + (s + 1) * 25);
  const gk_net_session_stats *st = &fx.s.stats;
  cr_assert_eq(st->stalls, 0);
  cr_assert_eq(fx.late_ms[40], 41 * 5);
  cr_assert_eq(st->steps_late, 31, "steps 10..40");
}

Test(session, with_stall_ms_0_the_schedule_never_moves) {
  open_schedule(0);
  both(1, 1000 + 2 * 20 + 500);
  both(2, 1000 + 3 * 20 + 500);
  cr_assert_eq(fx.s.stats.stalls, 0);
  cr_assert_eq(fx.s.stats.steps_late, 2);
  cr_assert_eq(fx.late_ms[2], 500);
}
