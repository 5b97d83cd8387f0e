/* test_fleet.c: the room directory client (src/fleet) against a real
 * redis-server started here on a unix socket: two or three nodes on one
 * uv loop, as three gk-server processes would use it. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gk_err.h"
#include "gk_fleet.h"
#include "redis_rig.h"

typedef struct answer {
  int n;      /* answers so far */
  int status; /* the last one's */
  gk_fleet_where w;
  char text[GK_FLEET_TEXT_MAX];
} answer;

typedef struct node {
  gk_fleet *f;
  uint32_t made; /* candidates given to the pool */
  int no_more;   /* make_code refuses: the pool stays as it is */
  int closed;
  int ups, downs, errors;
  char last_error[GK_FLEET_TEXT_MAX];
} node;

static void on_found(void *user, void *ctx, int status, const gk_fleet_where *w,
                     const char *text) {
  (void)user;
  answer *a = ctx;
  a->n++;
  a->status = status;
  if (w) a->w = *w;
  snprintf(a->text, sizeof(a->text), "%s", text);
}

static void on_note(void *user, const char *event, int code, const char *text) {
  node *n = user;
  (void)code;
  if (strcmp(event, "fleet_up") == 0) n->ups++;
  if (strcmp(event, "fleet_down") == 0) n->downs++;
  if (strcmp(event, "fleet_error") == 0) {
    n->errors++;
    snprintf(n->last_error, sizeof(n->last_error), "%s", text);
  }
}

static void on_closed(void *user) {
  ((node *)user)->closed = 1;
}

/* Pool candidates from a small shared list, so that nodes clash. */
static const char *const candidates[] = {"PA", "PB", "PC", "PD", "PE", "PF"};
#define NCANDIDATES 6u

typedef struct seat_answer {
  int n, status;
  gk_fleet_seat s;
} seat_answer;

static void on_seat(void *user, void *ctx, int status, const gk_fleet_seat *s,
                    const char *text) {
  (void)user;
  (void)text;
  seat_answer *a = ctx;
  a->n++;
  a->status = status;
  if (s) a->s = *s;
}

static int make_code(void *user, char out[GK_FLEET_CODE_MAX + 1]) {
  node *n = user;
  if (n->no_more) return GK_ENOTFOUND;
  snprintf(out, GK_FLEET_CODE_MAX + 1, "%s",
           candidates[n->made++ % NCANDIDATES]);
  return 0;
}

static uv_loop_t loop;
static redis_rig R;

static void setup(void) {
  cr_assert_eq(uv_loop_init(&loop), 0);
  cr_assert_eq(redis_rig_start(&R, NULL), 0, "redis-server did not start");
}

static int pool; /* nodes started with a pool */

static int no_ws; /* the next node_start gives no WebSocket URL */

static void node_start(node *n, const char *id, const char *password,
                       uint32_t heartbeat_ms, uint32_t ttl_ms) {
  memset(n, 0, sizeof(*n));
  char enet[64], ws[64] = "";
  snprintf(enet, sizeof(enet), "%s.example:7777", id);
  if (!no_ws) snprintf(ws, sizeof(ws), "ws://%s.example:7779/play", id);
  gk_fleet_config cfg = {.unix_path = R.sock,
                         .password = password,
                         .node = id,
                         .enet = enet,
                         .ws_url = ws,
                         .heartbeat_ms = heartbeat_ms,
                         .ttl_ms = ttl_ms,
                         .max_rooms = 16};
  gk_fleet_hooks hooks = {
      n, on_found, on_note, on_closed, pool ? make_code : NULL, NULL, on_seat};
  cr_assert_eq(gk_fleet_start(&loop, &cfg, &hooks, &n->f), 0);
}

static int tick_cb_ran;
static void tick(uv_timer_t *t) {
  (void)t;
  tick_cb_ran = 1;
}

/* Runs the loop until *flag is non-zero or ms pass; returns *flag. */
static int run_until(const int *flag, uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  uv_timer_start(&t, tick, 5, 5);
  uint64_t end = uv_now(&loop) + ms;
  while (!*flag && uv_now(&loop) < end) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  return *flag;
}

static void run_for(uint64_t ms) {
  int never = 0;
  run_until(&never, ms);
}

static void node_close(node *n) {
  gk_fleet_close(n->f);
  cr_assert(run_until(&n->closed, 5000), "the directory never closed");
}

static void teardown(void) {
  uv_run(&loop, UV_RUN_NOWAIT);
  uv_loop_close(&loop);
  redis_rig_stop(&R);
}

/* Runs the loop until Redis holds (present 1) or lacks (0) the code's
 * entry: what one node sent has landed before another node asks. */
static void wait_entry(const char *code, int present) {
  char v[64];
  for (int i = 0; i < 300; i++) {
    cr_assert_eq(redis_rig_cmd(&R, v, sizeof(v), "EXISTS gk:room:%s", code), 0);
    if (strcmp(v, present ? "1" : "0") == 0) return;
    run_for(10);
  }
  cr_assert_fail("gk:room:%s still %s after 3 s", code,
                 present ? "missing" : "there");
}

static answer lookup(node *n, const char *code) {
  answer a = {0};
  cr_assert_eq(gk_fleet_lookup(n->f, code, &a), 0, "lookup of %s refused",
               code);
  cr_assert(run_until(&a.n, 3000), "no answer for %s", code);
  return a;
}

TestSuite(fleet, .init = setup, .fini = teardown, .timeout = 60);

Test(fleet, a_room_added_on_one_node_is_found_from_another_with_its_addresses) {
  node a, b;
  node_start(&a, "a", NULL, 100, 1000);
  node_start(&b, "b", NULL, 100, 1000);
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(a.f, "ABCDEFGHJKMN2345"), 0);
  wait_entry("ABCDEFGHJKMN2345", 1);
  answer got = lookup(&b, "ABCDEFGHJKMN2345");
  cr_assert_eq(got.status, 0, "%s: %s", gk_err_name(got.status), got.text);
  cr_assert_str_eq(got.w.node, "a");
  cr_assert_str_eq(got.w.enet, "a.example:7777");
  cr_assert_str_eq(got.w.ws_url, "ws://a.example:7779/play");
  got = lookup(&b, "NOSUCHROOM");
  cr_assert_eq(got.status, GK_ENOTFOUND);
  /* a node's own entry is no redirect: the room is here or gone */
  got = lookup(&a, "ABCDEFGHJKMN2345");
  cr_assert_eq(got.status, GK_ENOTFOUND);
  cr_assert_eq(gk_fleet_room_remove(a.f, "ABCDEFGHJKMN2345"), 0);
  wait_entry("ABCDEFGHJKMN2345", 0);
  got = lookup(&b, "ABCDEFGHJKMN2345");
  cr_assert_eq(got.status, GK_ENOTFOUND, "a removed room is still listed");
  cr_assert_eq(gk_fleet_lookup(b.f, "bad code", &got), GK_EINVAL);
  node_close(&a);
  node_close(&b);
}

Test(fleet, a_code_another_node_holds_is_never_taken_twice) {
  node a, b;
  node_start(&a, "a", NULL, 100, 1000);
  node_start(&b, "b", NULL, 100, 1000);
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(a.f, "SAME"), 0);
  wait_entry("SAME", 1);
  cr_assert_eq(gk_fleet_room_add(b.f, "SAME"), 0);
  run_for(300); /* and a few heartbeats: b never takes it over */
  cr_assert_eq(gk_fleet_stats_of(b.f)->code_clashes, 1);
  cr_assert_eq(gk_fleet_rooms(b.f), 0u);
  char v[128];
  cr_assert_eq(redis_rig_cmd(&R, v, sizeof(v), "GET gk:room:SAME"), 0);
  cr_assert(strncmp(v, "gk1 a ", 6) == 0, "entry is %s", v);
  node_close(&a);
  node_close(&b);
}

Test(fleet, bytes_in_redis_that_do_not_parse_give_an_error_and_a_count) {
  node a;
  node_start(&a, "a", NULL, 100, 1000);
  cr_assert(run_until(&a.ups, 3000));
  static char huge[4096];
  memset(huge, 'x', sizeof(huge) - 1);
  memcpy(huge, "gk1 ", 4);
  const struct {
    const char *cmd, *arg, *code;
    int status;
    const char *words;
  } bad[] = {
      {"SET gk:room:GARBAGE %s", "hello", "GARBAGE", GK_EPARSE, "gk1"},
      {"SET gk:room:SHORT %s", "gk1", "SHORT", GK_EPARSE, "gk1"},
      {"SET gk:room:MISS %s", "gk1 n e:1", "MISS", GK_EPARSE,
       "ws_url is missing"},
      {"SET gk:room:CTRL %s", "gk1 n e\x01:1 -", "CTRL", GK_EPARSE,
       "byte 0x01"},
      {"SET gk:room:TRAIL %s", "gk1 n e:1 - more", "TRAIL", GK_EPARSE,
       "after the last"},
      {"HSET gk:room:HASH %s b", "a", "HASH", GK_EPROTO, "not a string"},
      {"SET gk:room:HUGE %s", huge, "HUGE", GK_EPARSE, "longer than"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    cr_assert_eq(redis_rig_cmd(&R, NULL, 0, bad[i].cmd, bad[i].arg), 0,
                 "could not write %s", bad[i].code);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t before = gk_fleet_stats_of(a.f)->bad_replies;
    answer got = lookup(&a, bad[i].code);
    cr_assert_eq(got.status, bad[i].status, "%s: %s (%s)", bad[i].code,
                 gk_err_name(got.status), got.text);
    cr_assert(strstr(got.text, bad[i].words), "%s: '%s' not in '%s'",
              bad[i].code, bad[i].words, got.text);
    cr_assert(strstr(got.text, bad[i].code), "text does not name the room");
    cr_assert_eq(gk_fleet_stats_of(a.f)->bad_replies, before + 1);
  }
  /* a hash where this node's own room key should be: the heartbeat says
   * so and keeps going */
  cr_assert_eq(gk_fleet_room_add(a.f, "OWN"), 0);
  wait_entry("OWN", 1);
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "DEL gk:room:OWN"), 0);
  cr_assert_eq(redis_rig_cmd(&R, NULL, 0, "HSET gk:room:OWN x y"), 0);
  run_for(300);
  cr_assert_eq(gk_fleet_stats_of(a.f)->code_clashes, 1);
  cr_assert(gk_fleet_stats_of(a.f)->heartbeats > 2);
  cr_assert(gk_fleet_up(a.f));
  node_close(&a);
}

Test(fleet, a_stopped_redis_drops_the_link_and_codes_are_back_after_restart) {
  node a, b;
  node_start(&a, "a", NULL, 100, 1000);
  node_start(&b, "b", NULL, 100, 1000);
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(a.f, "KEEP"), 0);
  wait_entry("KEEP", 1);
  redis_rig_signal(&R, SIGSTOP);
  answer pending = {0};
  cr_assert_eq(gk_fleet_lookup(b.f, "KEEP", &pending), 0);
  /* two heartbeats without an answer: dropped; what was in flight fails */
  cr_assert(run_until(&pending.n, 1000), "a lookup hung on a stopped Redis");
  cr_assert_eq(pending.status, GK_EUNAVAILABLE);
  cr_assert(gk_fleet_stats_of(b.f)->timeouts >= 1);
  cr_assert_eq(gk_fleet_lookup(b.f, "KEEP", &pending), GK_EUNAVAILABLE);
  /* a room made while Redis is away is registered once it is back */
  cr_assert_eq(gk_fleet_room_add(a.f, "LATE"), 0);
  redis_rig_signal(&R, SIGKILL);
  cr_assert_eq(redis_rig_restart(&R), 0);
  int back = 0;
  uint64_t t0 = uv_now(&loop);
  while (!back && uv_now(&loop) - t0 < 3000) {
    run_for(20);
    back = gk_fleet_up(a.f) && gk_fleet_up(b.f) &&
           gk_fleet_stats_of(a.f)->restored >= 2;
  }
  cr_assert(back, "not back within 3 s: up %d %d restored %llu",
            gk_fleet_up(a.f), gk_fleet_up(b.f),
            (unsigned long long)gk_fleet_stats_of(a.f)->restored);
  cr_assert_eq(lookup(&b, "KEEP").status, 0);
  cr_assert_eq(lookup(&b, "LATE").status, 0);
  cr_assert(gk_fleet_stats_of(a.f)->reconnects >= 1);
  node_close(&a);
  node_close(&b);
}

Test(fleet, a_node_that_stops_leaves_the_directory_within_the_ttl) {
  node a, b;
  node_start(&a, "a", NULL, 100, 500);
  node_start(&b, "b", NULL, 100, 500);
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(a.f, "GONE"), 0);
  run_for(300);
  cr_assert_eq(lookup(&b, "GONE").status, 0);
  node_close(&a); /* no unregister: as if killed */
  run_for(600);
  cr_assert_eq(lookup(&b, "GONE").status, GK_ENOTFOUND);
  char v[64];
  cr_assert_eq(redis_rig_cmd(&R, v, sizeof(v), "EXISTS gk:node:a"), 0);
  cr_assert_str_eq(v, "0");
  node_close(&b);
}

Test(fleet, auth_is_sent_first_and_a_wrong_password_is_an_error) {
  redis_rig_stop(&R);
  cr_assert_eq(redis_rig_start(&R, "s3cret-pw"), 0);
  node a, bad;
  node_start(&a, "a", "s3cret-pw", 100, 1000);
  node_start(&bad, "bad", "wrong", 100, 1000);
  cr_assert(run_until(&a.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(a.f, "AUTHED"), 0);
  run_for(300);
  cr_assert_eq(bad.ups, 0);
  cr_assert(bad.errors >= 1);
  cr_assert(strstr(bad.last_error, "AUTH"), "%s", bad.last_error);
  cr_assert_eq(lookup(&a, "AUTHED").status, GK_ENOTFOUND); /* its own */
  char v[64];
  cr_assert_eq(redis_rig_cmd(&R, v, sizeof(v), "EXISTS gk:room:AUTHED"), 0);
  cr_assert_str_eq(v, "1");
  node_close(&a);
  node_close(&bad);
}

Test(fleet, codes_reserved_ahead_are_never_given_to_two_nodes) {
  pool = 1;
  node a, b;
  node_start(&a, "a", NULL, 100, 1000);
  node_start(&b, "b", NULL, 100, 1000);
  pool = 0;
  char code[GK_FLEET_CODE_MAX + 1];
  cr_assert_eq(gk_fleet_take_code(a.f, code), GK_ENOTFOUND,
               "a code before Redis answered");
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000));
  run_for(500); /* reservations, and clashes tried again at heartbeats */
  const gk_fleet_stats *sa = gk_fleet_stats_of(a.f);
  const gk_fleet_stats *sb = gk_fleet_stats_of(b.f);
  cr_assert_eq(sa->reserved + sb->reserved, NCANDIDATES,
               "%llu + %llu reserved of %u candidates",
               (unsigned long long)sa->reserved,
               (unsigned long long)sb->reserved, NCANDIDATES);
  char taken[2 * GK_FLEET_POOL][GK_FLEET_CODE_MAX + 1];
  int ntaken = 0;
  node *both[] = {&a, &b};
  for (int k = 0; k < 2; k++)
    while (ntaken < 2 * GK_FLEET_POOL &&
           gk_fleet_take_code(both[k]->f, taken[ntaken]) == 0)
      ntaken++;
  cr_assert_eq(ntaken, (int)NCANDIDATES);
  for (int i = 0; i < ntaken; i++)
    for (int j = i + 1; j < ntaken; j++)
      cr_assert_str_neq(taken[i], taken[j], "%s given twice", taken[i]);
  /* a taken code is a room of its node: found from the other */
  run_for(300);
  answer got = lookup(&b, taken[0]);
  cr_assert_eq(got.status, 0, "%s: %s", gk_err_name(got.status), got.text);
  cr_assert_str_eq(got.w.node, "a");
  cr_assert_eq(gk_fleet_room_add(a.f, taken[0]), 0); /* held already */
  /* A removed code is free again: with candidates from a list of six,
   * the next heartbeat's refill would reserve it anew. No more. */
  a.no_more = b.no_more = 1;
  cr_assert_eq(gk_fleet_room_remove(a.f, taken[0]), 0);
  wait_entry(taken[0], 0);
  cr_assert_eq(lookup(&b, taken[0]).status, GK_ENOTFOUND);
  run_for(300); /* heartbeats refresh what a holds: not this code */
  cr_assert_eq(lookup(&b, taken[0]).status, GK_ENOTFOUND);
  cr_assert_eq(lookup(&b, taken[1]).status, 0, "the others stay");
  node_close(&a);
  node_close(&b);
}

/* A loop held up (a long step, a stopped process) reads nothing: its
 * own stall is not Redis's silence, and the link stays. */
Test(fleet, a_loop_held_up_for_heartbeats_does_not_drop_the_link) {
  node a;
  node_start(&a, "a", NULL, 50, 2000);
  cr_assert(run_until(&a.ups, 3000));
  answer got = {0};
  cr_assert_eq(gk_fleet_lookup(a.f, "HELDUP", &got), 0);
  struct timespec held = {0, 300000000L}; /* 300 ms: six heartbeats */
  nanosleep(&held, NULL);                 /* with a command waiting */
  cr_assert(run_until(&got.n, 3000), "no answer");
  cr_assert_eq(got.status, GK_ENOTFOUND, "%s: %s (timeouts %llu; %s)",
               gk_err_name(got.status), got.text,
               (unsigned long long)gk_fleet_stats_of(a.f)->timeouts,
               a.last_error);
  run_for(200);
  cr_assert_eq(gk_fleet_stats_of(a.f)->timeouts, 0);
  cr_assert_eq(a.downs, 0);
  cr_assert(gk_fleet_up(a.f));
  node_close(&a);
}

/* A new quick-play room goes to the least-loaded node, but a player on
 * WebSocket is never sent to a node that gives no WebSocket URL (the
 * asking node itself excepted: the player reached it). */
Test(fleet, quick_play_sends_a_websocket_player_only_where_it_can_follow) {
  node a, b, c;
  no_ws = 1;
  node_start(&a, "a", NULL, 50, 2000); /* no WebSocket URL, no rooms */
  no_ws = 0;
  node_start(&b, "b", NULL, 50, 2000);
  node_start(&c, "c", NULL, 50, 2000);
  cr_assert(run_until(&a.ups, 3000) && run_until(&b.ups, 3000) &&
            run_until(&c.ups, 3000));
  cr_assert_eq(gk_fleet_room_add(b.f, "BBBBBBBBBBBBBBB1"), 0);
  cr_assert_eq(gk_fleet_room_add(c.f, "CCCCCCCCCCCCCCC1"), 0);
  cr_assert_eq(gk_fleet_room_add(c.f, "CCCCCCCCCCCCCCC2"), 0);
  run_for(200); /* heartbeats carry the room counts: a 0, b 1, c 2 */
  seat_answer enet = {0}, ws = {0};
  cr_assert_eq(gk_fleet_quick(c.f, "a1", 2, "QQQQQQQQQQQQQQQ1",
                              GK_FLEET_QUICK_CREATE, &enet),
               0);
  cr_assert(run_until(&enet.n, 3000));
  cr_assert_eq(enet.status, 0, "%s", gk_err_name(enet.status));
  cr_assert_str_eq(enet.s.where.node, "a", "an ENet player: the least loaded");
  cr_assert_eq(gk_fleet_quick(c.f, "a2", 2, "QQQQQQQQQQQQQQQ2",
                              GK_FLEET_QUICK_CREATE | GK_FLEET_QUICK_WS, &ws),
               0);
  cr_assert(run_until(&ws.n, 3000));
  cr_assert_eq(ws.status, 0, "%s", gk_err_name(ws.status));
  cr_assert_str_eq(ws.s.where.node, "b", "a WebSocket player: not to a");
  cr_assert_str_eq(ws.s.where.ws_url, "ws://b.example:7779/play");
  node_close(&a);
  node_close(&b);
  node_close(&c);
}
