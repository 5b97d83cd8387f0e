/* test_peer_bounds.c: the sans-I/O peer engine's bounds, time driven by
 * hand (as test_peer_engine.c): the latency samples stop at latency_cap
 * (run it under ASan: a sample past the array is a heap overflow), a
 * peer that starts from a snapshot runs at most catchup_batch confirmed
 * steps per call, and a snapshot whose state goes on after what the
 * genre reads is refused, not adopted.
 *
 * The snapshots are made here as the host makes them: the tally genre's
 * state written with its write_state, hashed with gk_sim_hash, cut into
 * chunks with their checksums (gk_wire_chunk_msg). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_net_peer.h"
#include "gk_state.h"
#include "tally.h"

#define T0 UINT64_C(1000000000000) /* any clock: 1000 s */
#define SN UINT64_C(2000000)       /* the step period: 1/500 s */
#define AT(k) (T0 + (uint64_t)(k)*SN)
#define CODE "AAAABBBBCCCCDDDD"

typedef struct bounds {
  gk_net_peer p;
  gk_input src;
  uint8_t record[4];
  uint32_t sent;
  uint64_t steps_in_call; /* steps run since the call began */
  int snap_rc, snaps;
  char snap_error[GK_ERRMSG_MAX];
} bounds;

static bounds *B;

static int src_read(gk_input *in, uint64_t step, gk_step_input *out) {
  (void)in;
  B->record[0] = (uint8_t)step;
  B->record[1] = 0xa5;
  *out = (gk_step_input){
      .step = step, .active_mask = 1, .players = 1, .inputs = B->record};
  return 0;
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int rel) {
  (void)ctx;
  (void)bytes;
  (void)len;
  (void)rel;
  B->sent++;
  return 0;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  (void)ctx;
  (void)p;
  (void)in;
  (void)hash;
  B->steps_in_call++;
}

static void on_snapshot(void *ctx, gk_net_peer *p, int rc,
                        const gk_net_peer_snap_info *info) {
  (void)ctx;
  (void)p;
  B->snaps++;
  B->snap_rc = rc;
  snprintf(B->snap_error, sizeof B->snap_error, "%s", info->error);
}

static const gk_sim *const genres[] = {&tally_sim};

static void open_peer(uint32_t latency_cap, uint32_t catchup_batch) {
  B->src.read = src_read;
  gk_net_peer_options o = {.source = &B->src,
                           .genres = {.sims = genres, .count = 1},
                           .window = 256,
                           .latency_cap = latency_cap,
                           .catchup_batch = catchup_batch};
  gk_net_peer_callbacks cb = {
      .ctx = B, .send = on_send, .step = on_step, .snapshot = on_snapshot};
  cr_assert_eq(gk_net_peer_init(&B->p, &o, &cb), 0);
}

static void setup(void) {
  B = calloc(1, sizeof *B);
  cr_assert_not_null(B);
}

static void teardown(void) {
  gk_net_peer_free(&B->p);
  free(B);
}

TestSuite(peer_bounds, .init = setup, .fini = teardown, .timeout = 30);

static gk_wire_match_start match(void) {
  gk_wire_match_start ms;
  memset(&ms, 0, sizeof ms);
  ms.seed = 9;
  ms.players = 2;
  ms.slot = 1;
  ms.active_mask = 3;
  ms.input_delay = 2;
  ms.lead = 3;
  ms.step_seconds = (gk_ratio){1, 500};
  strcpy(ms.genre, "tally");
  return ms;
}

static int handle(uint64_t now, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  return gk_net_peer_handle(&B->p, now, buf, len);
}

/* The host confirms steps first..first+count-1 (count <= 32) and holds
 * this peer's inputs below first+count. */
static int confirm(uint64_t now, uint64_t first, uint32_t count) {
  static uint8_t steps[32 * GK_WIRE_STEP_BYTES(2, 4)];
  const uint8_t recs[8] = {9, 0, 0, 0, 7, 0, 0, 0};
  cr_assert_leq(count, 32);
  for (uint32_t i = 0; i < count; i++)
    gk_wire_step_pack(steps + i * GK_WIRE_STEP_BYTES(2, 4), 3, 0, recs, 2, 4);
  gk_wire_msg m = {.type = GK_MSG_CONFIRMED};
  m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                      .input_size = 4,
                                      .count = (uint8_t)count,
                                      .first = first,
                                      .ack = first + count};
  m.u.confirmed.steps = steps;
  return handle(now, &m);
}

/* --- latency_cap ---------------------------------------------------------- */

Test(peer_bounds, latency_samples_stop_at_the_cap_however_many_steps_run) {
  open_peer(3, 0);
  gk_wire_match_start ms = match();
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_net_peer_start(&B->p, T0, &ms, err, sizeof err), 0, "%s",
               err);
  /* Each period: sample one step, the host confirms what was sampled.
   * Every confirmed step this peer sampled is a latency sample, far more
   * of them than the cap of 3. */
  uint64_t confirmed = 0;
  for (uint32_t k = 0; k < 60; k++) {
    gk_net_peer_handle_timeout(&B->p, AT(k));
    uint64_t head = B->p.sched.first + B->p.stats.samples;
    uint32_t n = (uint32_t)(head - confirmed);
    if (n > 32) n = 32;
    cr_assert_eq(confirm(AT(k) + SN / 2, confirmed, n), 0);
    confirmed += n;
    cr_assert_leq(B->p.nlatency, 3, "%u latency samples at step %llu",
                  B->p.nlatency, (unsigned long long)confirmed);
  }
  cr_assert_geq(B->p.stats.samples, 50, "only %llu sampled",
                (unsigned long long)B->p.stats.samples);
  cr_assert_geq(B->p.loop.steps, 50);
  cr_assert_eq(B->p.nlatency, 3, "the cap is reached, not missed");
  cr_assert_gt(gk_net_peer_latency_pct(&B->p, 50), 0);
}

/* --- snapshots ------------------------------------------------------------ */

/* The tally state of a fresh two-player match (seed 9), as the host
 * writes it, with `extra` bytes of zeros after it; its hash the genre's
 * (over what write_state wrote). */
static uint8_t *tally_state(size_t extra, size_t *len, uint64_t *hash) {
  void *cfg = calloc(1, tally_sim.config_size);
  cr_assert_not_null(cfg);
  tally_sim.config_default(cfg);
  char err[GK_ERRMSG_MAX] = "";
  void *st = tally_sim.create(cfg, 9, 2, err, sizeof err);
  cr_assert_not_null(st, "%s", err);
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  tally_sim.write_state(st, &w.w);
  size_t n = 0;
  uint8_t *bytes = gk_buf_writer_take(&w, &n);
  cr_assert_not_null(bytes);
  gk_buf_writer_close(&w);
  gk_hasher h;
  cr_assert_eq(gk_hasher_init(&h), 0);
  *hash = gk_sim_hash(&tally_sim, st, &h);
  gk_hasher_close(&h);
  tally_sim.destroy(st);
  free(cfg);
  bytes = realloc(bytes, n + extra);
  cr_assert_not_null(bytes);
  memset(bytes + n, 0, extra);
  *len = n + extra;
  return bytes;
}

/* Asks for a snapshot of room CODE (kind: rejoin or spectate), takes
 * MATCH_START, then the host's SNAPSHOT_BEGIN and chunks of the state
 * after `step` steps (with `extra` trailing bytes); sampling resumes at
 * `next_input`. Returns the last chunk's handle result. */
static int snapshot(int kind, uint64_t step, uint64_t next_input,
                    size_t extra) {
  const uint8_t secret[GK_WIRE_SECRET_LEN] = {1};
  if (kind == GK_WIRE_SNAP_REJOIN)
    cr_assert_eq(gk_net_peer_rejoin(&B->p, T0, CODE, 1, secret, NULL), 0);
  else
    cr_assert_eq(gk_net_peer_spectate(&B->p, T0, CODE, NULL), 0);
  gk_wire_msg m = {.type = GK_MSG_MATCH_START};
  m.u.match_start = match();
  cr_assert_eq(handle(T0, &m), 0);
  size_t len;
  uint64_t hash;
  uint8_t *state = tally_state(extra, &len, &hash);
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SNAPSHOT_BEGIN;
  gk_wire_snap_begin *b = &m.u.snap_begin;
  *b = (gk_wire_snap_begin){.id = 7,
                            .kind = (uint8_t)kind,
                            .step = step,
                            .hash = hash,
                            .next_input = next_input,
                            .active_mask = 3,
                            .total = (uint32_t)len,
                            .chunk_size = 16,
                            .chunks = gk_chunk_count(len, 16),
                            .sum = gk_chunk_sum(state, len)};
  strcpy(b->code, CODE);
  cr_assert_eq(handle(T0, &m), 0);
  int rc = 0;
  for (uint32_t i = 0; i < gk_chunk_count(len, 16); i++) {
    gk_wire_chunk_msg(&m, GK_MSG_SNAPSHOT_CHUNK, 7, state, len, 16, i);
    rc = handle(T0, &m);
  }
  free(state);
  return rc;
}

/* After a snapshot of step 10, the host confirms 10..99 at once (three
 * CONFIRMED): no call runs more than the batch of 4, and the calls that
 * follow (timeouts when the peer asks) run the rest. */
static void catch_up_in_batches(int kind) {
  open_peer(0, 4);
  cr_assert_eq(snapshot(kind, 10, 102, 0), 0, "%s", B->snap_error);
  cr_assert_eq(B->snaps, 1);
  cr_assert_eq(B->snap_rc, 0, "%s", B->snap_error);
  cr_assert_eq(B->p.loop.steps, 10);
  uint64_t now = T0;
  for (uint64_t first = 10; first < 100; first += 30) {
    B->steps_in_call = 0;
    cr_assert_eq(confirm(now, first, 30), 0);
    cr_assert_leq(B->steps_in_call, 4,
                  "%llu steps ran in the CONFIRMED of %llu..%llu",
                  (unsigned long long)B->steps_in_call,
                  (unsigned long long)first, (unsigned long long)first + 29);
  }
  cr_assert_lt(B->p.loop.steps, 100, "no batch: all ran at once");
  uint32_t calls = 0;
  while (B->p.loop.steps < 100 && calls < 200) {
    uint64_t due = gk_net_peer_poll_timeout(&B->p);
    cr_assert_neq(due, GK_NET_PEER_NEVER);
    now = due > now ? due : now;
    B->steps_in_call = 0;
    gk_net_peer_handle_timeout(&B->p, now);
    cr_assert_leq(B->steps_in_call, 4, "%llu steps ran in timeout call %u",
                  (unsigned long long)B->steps_in_call, calls);
    calls++;
  }
  cr_assert_eq(B->p.loop.steps, 100, "caught up after %u calls", calls);
  cr_assert_geq(calls, 20, "90 steps by 4 take 23 calls, not %u", calls);
}

Test(peer_bounds, a_rejoining_player_catches_up_at_most_a_batch_per_call) {
  catch_up_in_batches(GK_WIRE_SNAP_REJOIN);
  cr_assert_neq(B->p.snap.resumed_ns, 0, "caught up, it samples again");
  cr_assert_eq(B->record[0], 102, "from the snapshot's next_input");
}

Test(peer_bounds, a_spectator_catches_up_at_most_a_batch_per_call) {
  catch_up_in_batches(GK_WIRE_SNAP_SPECTATE);
  cr_assert_eq(B->p.stats.samples, 0, "a spectator never samples");
}

Test(peer_bounds, a_snapshot_with_bytes_after_the_state_is_refused) {
  open_peer(0, 0);
  int rc = snapshot(GK_WIRE_SNAP_REJOIN, 10, 12, 3);
  cr_assert_eq(rc, GK_EPROTO, "a state and 3 bytes more: %s, '%s'",
               gk_err_name(rc), B->snap_error);
  cr_assert_eq(B->snaps, 1);
  cr_assert_eq(B->snap_rc, GK_EPROTO);
  cr_assert(strstr(B->snap_error, "trailing bytes") != NULL, "%s",
            B->snap_error);
  cr_assert_eq(B->p.snapshots, 0, "adopted");
  cr_assert_eq(B->p.snapshots_refused, 1);
  cr_assert_eq(B->p.loop.steps, 0, "the loop stayed where it was");
  cr_assert_eq(gk_net_peer_poll_timeout(&B->p), GK_NET_PEER_NEVER,
               "it still waits for a snapshot");
  /* the same state without the extra bytes is taken */
  gk_net_peer_free(&B->p);
  memset(B, 0, sizeof *B);
  open_peer(0, 0);
  cr_assert_eq(snapshot(GK_WIRE_SNAP_REJOIN, 10, 12, 0), 0, "%s",
               B->snap_error);
  cr_assert_eq(B->p.snapshots, 1);
}
