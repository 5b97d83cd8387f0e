/* test_peer.c: the peer engine driven by its uv adapter (gk_net_peer_uv)
 * on a real loop and clock, fed host messages by hand and with its sends
 * captured (no sockets); tests/net/test_peer_engine.c drives the engine
 * alone, with time by hand. Checks what it samples and
 * sends, the bound on sampling ahead of confirmation, how it runs
 * confirmed steps, and how it refuses bad match parameters and messages.
 * Loops are bounded by a stop timer; only counts are asserted. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_uv.h"
#include "tally.h"

#define SENT_MAX 2048

typedef struct fixture {
  uv_loop_t loop;
  gk_net_peer_uv p;
  gk_wire_msg sent[SENT_MAX]; /* decoded; records copied below */
  uint8_t bytes[SENT_MAX][GK_WIRE_MAX];
  uint32_t nsent;
  int ended;
  int end_reason;
  uint64_t end_step;
  uint64_t steps;
} fixture;

static fixture *fx;

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int reliable) {
  (void)reliable;
  fixture *f = ctx;
  if (f->nsent < SENT_MAX) {
    memcpy(f->bytes[f->nsent], bytes, len);
    cr_assert_eq(gk_wire_decode(f->bytes[f->nsent], len, &f->sent[f->nsent]),
                 0);
    f->nsent++;
  }
  return 0;
}

static void on_ended(void *ctx, gk_net_peer *p, uint64_t step, int reason) {
  (void)p;
  fixture *f = ctx;
  f->ended++;
  f->end_step = step;
  f->end_reason = reason;
}

static void on_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                    uint64_t hash) {
  (void)p;
  (void)hash;
  fixture *f = ctx;
  cr_assert_eq(in->step, f->steps);
  f->steps++;
}

static const gk_sim *find(void *ctx, const char *name) {
  (void)ctx;
  return strcmp(name, "tally") == 0 ? &tally_sim : NULL;
}

static void setup(void) {
  fx = calloc(1, sizeof *fx);
  cr_assert_not_null(fx);
  cr_assert_eq(uv_loop_init(&fx->loop), 0);
  gk_net_peer_options o = {
      .bot_seed = 3, .genres = {.find = find}, .window = 64};
  gk_net_peer_callbacks cb = {
      .ctx = fx, .send = on_send, .ended = on_ended, .step = on_step};
  cr_assert_eq(gk_net_peer_uv_init(&fx->p, &fx->loop, &o, &cb), 0);
}

static void teardown(void) {
  gk_net_peer_uv_close(&fx->p, NULL);
  uv_run(&fx->loop, UV_RUN_DEFAULT);
  uv_loop_close(&fx->loop);
  free(fx);
}

TestSuite(peer, .init = setup, .fini = teardown, .timeout = 60);

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
  strcpy(ms.config, "{\"start\": 1}");
  return ms;
}

static void on_stop(uv_timer_t *t) {
  uv_stop(t->loop);
}

/* Runs the loop for about `ms` milliseconds (bounded, never asserted). */
static void run_for(uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&fx->loop, &t);
  uv_timer_start(&t, on_stop, ms, 0);
  uv_run(&fx->loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&fx->loop, UV_RUN_NOWAIT);
}

static int feed(const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof buf, &len), 0);
  return gk_net_peer_uv_receive(&fx->p, buf, len);
}

static uint64_t confirm_hash_ack; /* CONFIRMED.hash_ack that confirm sends */

/* Confirms steps first..first+count-1 with both players' record = v. */
static int confirm(uint64_t first, uint8_t count, uint32_t flags_last) {
  static uint8_t steps[16 * GK_WIRE_STEP_BYTES(2, 4)];
  uint8_t recs[8] = {1, 0, 0, 0, 2, 0, 0, 0};
  for (uint32_t i = 0; i < count; i++)
    gk_wire_step_pack(steps + i * GK_WIRE_STEP_BYTES(2, 4), 3,
                      i + 1u == count ? flags_last : 0, recs, 2, 4);
  gk_wire_msg m;
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed = (gk_wire_confirmed){.players = 2,
                                      .input_size = 4,
                                      .count = count,
                                      .ack = 0,
                                      .hash_ack = confirm_hash_ack,
                                      .first = first,
                                      .steps = steps};
  return feed(&m);
}

/* The end of the hash reports in the INPUTs sent from sent[from] on (0 if
 * none carried one); *first gets the first step of the last report. */
static uint64_t hashes_reported(uint32_t from, uint64_t *first) {
  uint64_t end = 0;
  for (uint32_t i = from; i < fx->nsent; i++) {
    const gk_wire_input *in = &fx->sent[i].u.input;
    if (fx->sent[i].type != GK_MSG_INPUT || in->hash_count == 0) continue;
    end = in->hash_first + in->hash_count;
    *first = in->hash_first;
  }
  return end;
}

/* The last message of `type` the peer sent, or NULL. */
static const gk_wire_msg *last_sent(gk_wire_type type) {
  const gk_wire_msg *m = NULL;
  for (uint32_t i = 0; i < fx->nsent; i++)
    if (fx->sent[i].type == type) m = &fx->sent[i];
  return m;
}

Test(peer, it_samples_no_further_than_the_lead_past_confirmation) {
  gk_wire_msg m;
  m.type = GK_MSG_MATCH_START;
  m.u.match_start = match();
  cr_assert_eq(feed(&m), 0);
  cr_assert(fx->p.eng.started);
  run_for(150); /* ~75 step periods: far more than the bound allows */
  cr_assert_eq(fx->p.eng.stats.samples, 3); /* steps 2, 3, 4 = delay + lead */
  cr_assert_gt(fx->p.eng.stats.waits, 0);
  /* Its INPUTs carry its slot and every unacknowledged record. */
  const gk_wire_msg *last = last_sent(GK_MSG_INPUT);
  cr_assert_not_null(last);
  cr_assert_eq(last->u.input.slot, 1);
  cr_assert_eq(last->u.input.first, 2);
  cr_assert_eq(last->u.input.count, 3);
  /* Confirmation lets it go on, and the steps run at once. */
  cr_assert_eq(confirm(0, 3, 0), 0);
  cr_assert_eq(fx->steps, 3);
  cr_assert_eq(fx->p.eng.loop.steps, 3);
  run_for(100);
  cr_assert_eq(fx->p.eng.stats.samples, 6);
  cr_assert_eq(fx->p.eng.nlatency, 1); /* step 2 was sampled here */
  /* Hashes of the steps it ran were reported, inside its INPUTs (no HASH
   * datagram of their own). */
  uint64_t first = 99;
  cr_assert_eq(hashes_reported(0, &first), 3);
  cr_assert_eq(first, 0, "unacknowledged hashes are repeated from the first");
  for (uint32_t i = 0; i < fx->nsent; i++)
    cr_assert_neq(fx->sent[i].type, GK_MSG_HASH);
}

/* MATCH_START, then steps 0..2 confirmed (and run at once). */
static void start_and_run_3(void) {
  gk_wire_msg m;
  m.type = GK_MSG_MATCH_START;
  m.u.match_start = match();
  cr_assert_eq(feed(&m), 0);
  run_for(20);
  cr_assert_eq(confirm(0, 3, 0), 0);
}

Test(peer, its_hashes_ride_in_inputs_until_the_host_acknowledges_them) {
  start_and_run_3();
  run_for(20);
  uint64_t first = 99;
  cr_assert_eq(hashes_reported(0, &first), 3);
  /* Each report is the host's copy of the peer's hash. */
  for (uint32_t i = 0; i < fx->nsent; i++) {
    const gk_wire_input *in = &fx->sent[i].u.input;
    for (uint32_t k = 0; fx->sent[i].type == GK_MSG_INPUT && k < in->hash_count;
         k++) {
      uint64_t mine;
      cr_assert_eq(gk_loop_hash_at(&fx->p.eng.loop, in->hash_first + k, &mine),
                   0);
      cr_assert_eq(gk_wire_input_hash(in, k), mine);
    }
  }
  /* The host holds hashes below 2: only step 2's is repeated ... */
  confirm_hash_ack = 2;
  cr_assert_eq(confirm(3, 1, 0), 0);
  uint32_t mark = fx->nsent;
  run_for(20);
  cr_assert_eq(hashes_reported(mark, &first), 4);
  cr_assert_eq(first, 2);
  /* ... and once it holds them all, INPUTs carry no hashes. */
  confirm_hash_ack = 4;
  cr_assert_eq(confirm(4, 0, 0), 0);
  mark = fx->nsent;
  run_for(20);
  cr_assert_gt(fx->nsent, mark);
  cr_assert_eq(hashes_reported(mark, &first), 0);
  /* An acknowledgement past what it ran is ignored. */
  confirm_hash_ack = 100;
  cr_assert_eq(confirm(4, 1, 0), 0);
  cr_assert_eq(fx->p.eng.hash_from, 4);
  confirm_hash_ack = 0;
}

Test(peer, it_ends_once_it_ran_the_last_step_and_heard_the_match_end) {
  gk_wire_msg m;
  m.type = GK_MSG_MATCH_START;
  m.u.match_start = match();
  cr_assert_eq(feed(&m), 0);
  m.type = GK_MSG_MATCH_END;
  m.u.match_end = (gk_wire_match_end){3, GK_WIRE_END_HOST};
  cr_assert_eq(feed(&m), 0);
  cr_assert_eq(fx->ended, 0); /* step 3 has not run here yet */
  cr_assert_eq(confirm(0, 4, GK_STEP_MATCH_END), 0);
  cr_assert_eq(fx->ended, 1);
  cr_assert_eq(fx->end_step, 3);
  cr_assert_eq(fx->end_reason, GK_WIRE_END_HOST);
  /* Nothing past the end is taken. */
  cr_assert_eq(confirm(4, 1, 0), 0);
  cr_assert_eq(fx->p.eng.loop.steps, 4);
  cr_assert_eq(fx->ended, 1);
}

Test(peer, bad_match_parameters_and_messages_are_refused) {
  char err[GK_ERRMSG_MAX] = "";
  gk_wire_match_start ms = match();
  strcpy(ms.genre, "chess");
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert_neq(strstr(err, "chess"), NULL, "%s", err);
  ms = match();
  strcpy(ms.config, "{\"speed\": 3}");
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert_neq(strstr(err, "speed"), NULL, "%s", err);
  ms = match();
  strcpy(ms.config, "{\"start\": 1.5}");
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), GK_EINVAL);
  ms = match();
  strcpy(ms.config, "[1]");
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), GK_EPARSE);
  ms = match();
  ms.players = 17;
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), GK_EINVAL);
  cr_assert_not(fx->p.eng.started);
  /* Match messages before a match are dropped. */
  cr_assert_eq(confirm(0, 1, 0), GK_ESTATE);
  uint8_t junk[3] = {GK_WIRE_VERSION, 2, 3};
  cr_assert_eq(gk_net_peer_uv_receive(&fx->p, junk, sizeof junk), GK_ETRUNC);
  cr_assert_eq(fx->p.eng.stats.drop_malformed, 1);
  /* A good start, then a CONFIRMED of the wrong shape. */
  ms = match();
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), GK_ESTATE);
  static uint8_t steps[GK_WIRE_STEP_BYTES(3, 4)];
  gk_wire_msg m;
  m.type = GK_MSG_CONFIRMED;
  m.u.confirmed = (gk_wire_confirmed){
      .players = 3, .input_size = 4, .count = 1, .steps = steps};
  cr_assert_eq(feed(&m), GK_EPROTO);
  /* Steps far past the window are not taken. */
  cr_assert_eq(confirm(1000, 1, 0), 0);
  cr_assert_eq(fx->p.eng.inbuf.confirmed, 0);
  cr_assert_geq(fx->p.eng.stats.drop_unexpected, 2);
}

/* A source that logs the calls the peer makes: r(ead), e(nd_step),
 * f(end_frame), and the step each read was for. */
typedef struct log_source {
  gk_input base;
  char log[4096];
  size_t len;
  uint64_t steps[1024];
  uint32_t reads;
  uint8_t record[4];
} log_source;

static void log_put(log_source *s, char c) {
  if (s->len + 1 < sizeof s->log) s->log[s->len++] = c;
}

static int log_read(gk_input *in, uint64_t step, gk_step_input *out) {
  log_source *s = (log_source *)in;
  log_put(s, 'r');
  if (s->reads < 1024) s->steps[s->reads] = step;
  s->reads++;
  s->record[0] = (uint8_t)s->reads;
  out->step = step;
  out->active_mask = 1;
  out->flags = 0;
  out->players = 1;
  out->inputs = s->record;
  return 0;
}

static void log_end_step(gk_input *in) {
  log_put((log_source *)in, 'e');
}
static void log_end_frame(gk_input *in) {
  log_put((log_source *)in, 'f');
}

Test(peer, each_sample_is_read_then_ended_and_each_tick_ends_a_frame) {
  static log_source src;
  memset(&src, 0, sizeof src);
  src.base.read = log_read;
  src.base.end_step = log_end_step;
  src.base.end_frame = log_end_frame;
  /* A peer of its own with the logging source. */
  gk_net_peer_uv_close(&fx->p, NULL);
  uv_run(&fx->loop, UV_RUN_DEFAULT);
  gk_net_peer_options o = {
      .source = &src.base, .genres = {.find = find}, .window = 64};
  gk_net_peer_callbacks cb = {.ctx = fx, .send = on_send};
  cr_assert_eq(gk_net_peer_uv_init(&fx->p, &fx->loop, &o, &cb), 0);
  char err[GK_ERRMSG_MAX];
  gk_wire_match_start ms = match();
  ms.lead = 40;
  cr_assert_eq(gk_net_peer_uv_start(&fx->p, &ms, err, sizeof err), 0, "%s",
               err);
  run_for(60);
  cr_assert_geq(src.reads, 2);
  cr_assert_eq(src.reads, fx->p.eng.stats.samples);
  for (uint32_t i = 0; i < src.reads && i < 1024; i++)
    cr_assert_eq(src.steps[i], 2 + i, "read %u was for step %llu", i,
                 (unsigned long long)src.steps[i]);
  src.log[src.len] = '\0';
  /* r e (r e)* f, repeated: every read is followed by its end_step, and
   * end_frame closes each tick that sampled. */
  cr_assert_eq(src.log[0], 'r');
  cr_assert_eq(src.log[src.len - 1], 'f', "%s", src.log);
  for (size_t i = 0; i + 1 < src.len; i++) {
    if (src.log[i] == 'r') cr_assert_eq(src.log[i + 1], 'e', "%s", src.log);
    if (src.log[i] == 'e')
      cr_assert(src.log[i + 1] == 'r' || src.log[i + 1] == 'f', "%s", src.log);
    if (src.log[i] == 'f') cr_assert_eq(src.log[i + 1], 'r', "%s", src.log);
  }
  /* The records sent are the ones the source produced, in order. */
  const gk_wire_msg *last = NULL;
  for (uint32_t i = 0; i < fx->nsent; i++)
    if (fx->sent[i].type == GK_MSG_INPUT && fx->sent[i].u.input.count > 0)
      last = &fx->sent[i];
  cr_assert_not_null(last);
  cr_assert_eq(last->u.input.first, 2);
  for (uint32_t i = 0; i < last->u.input.count; i++)
    cr_assert_eq(last->u.input.records[4 * i], (uint8_t)(i + 1));
}

Test(peer, it_answers_a_state_request_from_its_history_or_says_it_cannot) {
  start_and_run_3();
  cr_assert_eq(fx->p.eng.loop.steps, 3);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STATE_REQUEST;
  m.u.state_req = (gk_wire_state_request){.id = 5, .step = 1};
  uint32_t before = fx->nsent;
  cr_assert_eq(feed(&m), 0);
  const gk_wire_msg *b = last_sent(GK_MSG_STATE_BEGIN);
  cr_assert_not_null(b);
  cr_assert_eq(b->u.state_begin.status, 0);
  cr_assert_eq(b->u.state_begin.id, 5);
  cr_assert_eq(b->u.state_begin.to, 2, "it ran steps 0..2");
  /* the chunks give back the state after step 1: its hash is the one the
   * peer reported for step 1 */
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  const gk_wire_state_begin *sb = &b->u.state_begin;
  cr_assert_eq(gk_chunk_rx_begin(&rx, sb->id, sb->total, sb->chunk_size,
                                 sb->chunks, sb->sum, 0),
               0);
  int done = 0;
  for (uint32_t i = before; i < fx->nsent; i++) {
    const gk_wire_snap_chunk *k = &fx->sent[i].u.snap_chunk;
    if (fx->sent[i].type == GK_MSG_STATE_CHUNK)
      done = gk_chunk_rx_put(&rx, k->id, k->index, k->bytes, k->len, k->crc);
  }
  cr_assert_eq(done, 1);
  size_t len = 0;
  uint8_t *bytes = gk_chunk_rx_take(&rx, &len);
  uint64_t want = 0;
  cr_assert_eq(gk_loop_hash_at(&fx->p.eng.loop, 1, &want), 0);
  cr_assert_eq(gk_hash_bytes(bytes, len), want);
  cr_assert_eq(sb->hash, want);
  free(bytes);
  /* a step it has not run: a "cannot" answer with its window */
  m.u.state_req = (gk_wire_state_request){.id = 6, .step = 40};
  cr_assert_eq(feed(&m), 0);
  b = last_sent(GK_MSG_STATE_BEGIN);
  cr_assert_eq(b->u.state_begin.id, 6);
  cr_assert_eq(b->u.state_begin.status, GK_ENOTKEPT);
  cr_assert_eq(b->u.state_begin.total, 0);
  cr_assert_eq(fx->p.eng.stats.state_requests, 2);
  cr_assert_eq(fx->p.eng.stats.state_refused, 1);
}
