/* test_link.c: the server's links.
 *
 * The connection ids (sv_ids, gk_server_link.c): an id is not given again
 * while its stale copies may still be held, and a stale id is never found,
 * even once its slot serves another connection (this fails if the
 * generation check in sv_ids_find is removed). Then a stand-in backend
 * ("fake", next to the real ENet one) on an in-process server: its links
 * get connection ids, replies and per-IP limits through the interface
 * alone, a stale id reaches nobody, and /metrics and sv_conn_kind name
 * its transport. Last, one room with a player on each backend: admin
 * /rooms names each player's transport, /metrics counts both.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_get.h"
#include "gk_err.h"
#include "gk_net_transport.h"
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"

/* --- ids ------------------------------------------------------------------ */

Test(server_link, a_stale_id_is_not_found_once_its_slot_is_taken_again) {
  sv_ids t;
  cr_assert_eq(sv_ids_init(&t, 1), 0);
  uint32_t a, b;
  cr_assert_eq(sv_ids_take(&t, &a), 0);
  cr_assert_eq(sv_ids_find(&t, a), 0u);
  sv_ids_give(&t, a);
  cr_assert_eq(sv_ids_find(&t, a), SV_IDS_MAX, "a given id is not live");
  cr_assert_eq(sv_ids_take(&t, &b), 0);
  cr_assert_neq(a, b, "the slot's next id differs");
  cr_assert_eq(sv_ids_find(&t, b), 0u);
  cr_assert_eq(sv_ids_find(&t, a), SV_IDS_MAX,
               "a stale id on a slot in use again must not be found");
  sv_ids_give(&t, a); /* stale: ignored */
  cr_assert_eq(sv_ids_find(&t, b), 0u, "giving a stale id frees nothing");
  cr_assert_eq(t.nfree, 0u);
  sv_ids_free(&t);
}

Test(server_link, one_slot_gives_65535_ids_before_one_comes_back) {
  static uint8_t seen[1u << 16];
  memset(seen, 0, sizeof(seen));
  sv_ids t;
  cr_assert_eq(sv_ids_init(&t, 1), 0);
  uint32_t first = 0;
  for (uint32_t i = 0; i < 65535u; i++) {
    uint32_t id;
    cr_assert_eq(sv_ids_take(&t, &id), 0);
    if (i == 0) first = id;
    cr_assert_neq(id, 0u);
    cr_assert_neq(id, SV_NO_CONN);
    cr_assert_eq(seen[id >> 16], 0, "id %08x given twice", id);
    seen[id >> 16] = 1;
    sv_ids_give(&t, id);
    cr_assert_eq(sv_ids_find(&t, first), SV_IDS_MAX);
  }
  uint32_t again;
  cr_assert_eq(sv_ids_take(&t, &again), 0);
  cr_assert_eq(again, first, "after 65535 the generation wraps (never 0)");
  sv_ids_free(&t);
}

Test(server_link, free_slots_are_taken_oldest_freed_first) {
  sv_ids t;
  cr_assert_eq(sv_ids_init(&t, 4), 0);
  uint32_t id[4], x;
  for (int i = 0; i < 4; i++) cr_assert_eq(sv_ids_take(&t, &id[i]), 0);
  cr_assert_eq(sv_ids_take(&t, &x), GK_EFULL);
  sv_ids_give(&t, id[2]);
  sv_ids_give(&t, id[0]);
  cr_assert_eq(sv_ids_take(&t, &x), 0);
  cr_assert_eq(x & 0xffffu, 2u, "slot 2 was freed first");
  cr_assert_neq(x, id[2]);
  cr_assert_eq(sv_ids_find(&t, id[2]), SV_IDS_MAX);
  sv_ids_give(&t, id[3]);
  cr_assert_eq(sv_ids_take(&t, &x), 0);
  cr_assert_eq(x & 0xffffu, 0u, "then slot 0, before slot 3");
  sv_ids_free(&t);
}

Test(server_link, ids_out_of_range_are_not_found) {
  sv_ids t;
  cr_assert_eq(sv_ids_init(&t, 2), 0);
  uint32_t a;
  cr_assert_eq(sv_ids_take(&t, &a), 0);
  cr_assert_eq(sv_ids_find(&t, SV_NO_CONN), SV_IDS_MAX);
  cr_assert_eq(sv_ids_find(&t, 0), SV_IDS_MAX, "id 0 is never given");
  cr_assert_eq(sv_ids_find(&t, (a & 0xffff0000u) | 7u), SV_IDS_MAX);
  sv_ids_free(&t);
  sv_ids u;
  cr_assert_eq(sv_ids_init(&u, 0), GK_EINVAL);
  cr_assert_eq(sv_ids_init(&u, SV_IDS_MAX + 1u), GK_EINVAL);
}

/* --- a stand-in backend on a real server ---------------------------------- */

typedef struct fake_link {
  sv_link base; /* first */
  gk_server *s;
  uint32_t sent;
  gk_wire_msg last; /* the last message sent to it, decoded */
  int closed;       /* 1 graceful, 2 at once */
} fake_link;

static int fake_send(sv_link *l, const uint8_t *bytes, size_t len,
                     int reliable) {
  (void)reliable;
  fake_link *f = (fake_link *)l;
  if (f->closed) return GK_ENOTFOUND;
  f->sent++;
  cr_assert_eq(gk_wire_decode(bytes, len, &f->last), 0);
  return 0;
}

static void fake_close(sv_link *l, int at_once) {
  fake_link *f = (fake_link *)l;
  f->closed = at_once ? 2 : 1;
  if (at_once) sv_link_down(f->s, l); /* as the interface says */
}

static const sv_link_ops fake_ops = {
    .kind = "fake", .send = fake_send, .close = fake_close};

static void fake_host_stats(const sv_link_host *h, sv_link_host_stats *out) {
  (void)h;
  memset(out, 0, sizeof(*out));
}

static void fake_host_nothing(sv_link_host *h) {
  (void)h;
}

static const sv_link_host_ops fake_host_ops = {.kind = "fake",
                                               .stats = fake_host_stats,
                                               .close = fake_host_nothing,
                                               .free = fake_host_nothing};

static void fake_up(gk_server *s, sv_link_host *h, fake_link *f,
                    uint64_t addr) {
  memset(f, 0, sizeof(*f));
  f->s = s;
  f->base.ops = &fake_ops;
  f->base.host = h;
  f->base.addr_key = addr;
  snprintf(f->base.addr, sizeof(f->base.addr), "fake-%llu",
           (unsigned long long)addr);
  f->base.hello_len = 48;
  sv_link_up(s, &f->base);
}

/* JOIN_ROOM with a code no room has: the server answers ERROR. */
static void join_unknown(gk_server *s, fake_link *f) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, "AAAAAAAAAAAAAAAA", GK_WIRE_CODE_LEN);
  m.u.room.role = GK_WIRE_ROLE_PLAYER;
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof(buf), &len), 0);
  sv_link_data(s, &f->base, buf, len);
}

Test(server_link, a_second_backend_plays_by_the_same_rules, .timeout = 60) {
  static gk_server_config cfg;
  gk_server_config_default(&cfg);
  snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
  cfg.port = 0;
  cfg.replays_enabled = 0;
  cfg.shutdown_grace_ms = 0;
  cfg.conns_per_ip = 2;
  FILE *logf = fopen("/dev/null", "w");
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_ERROR);
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  gk_server *s = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  cr_assert_eq(gk_server_start(&loop, &cfg, &log, 0, &s, err, sizeof err), 0,
               "%s", err);
  static sv_link_host host = {.ops = &fake_host_ops};
  cr_assert_eq(sv_link_host_add(s, &host), 0);

  static fake_link a, b, c, d;
  fake_up(s, &host, &a, 7);
  uint32_t ida = a.base.conn;
  cr_assert_neq(ida, SV_NO_CONN);
  cr_assert_str_eq(sv_conn_kind(s, ida), "fake");
  cr_assert_eq(host.links, 1u);
  join_unknown(s, &a);
  cr_assert_eq(a.sent, 1u);
  cr_assert_eq(a.last.type, GK_MSG_ERROR);
  cr_assert_eq(a.last.u.error.code, GK_ENOTFOUND);
  cr_assert_eq(a.base.stats.packets_in, 1u);
  cr_assert_eq(a.base.stats.packets_out, 1u);

  /* per-IP limit through addr_key: two from 7, the third is dropped */
  fake_up(s, &host, &b, 7);
  cr_assert_neq(b.base.conn, SV_NO_CONN);
  fake_up(s, &host, &c, 7);
  cr_assert_eq(c.closed, 2, "over limits.conns_per_ip: closed at once");
  cr_assert_eq(c.base.conn, SV_NO_CONN);
  cr_assert_eq(host.links, 2u);

  /* a goes; its id is stale from now on, even once its slot is reused */
  sv_link_down(s, &a.base);
  cr_assert_eq(a.base.conn, SV_NO_CONN);
  cr_assert_null(sv_conn_kind(s, ida), "a stale id is found");
  gk_wire_msg note;
  memset(&note, 0, sizeof(note));
  note.type = GK_MSG_SHUTDOWN;
  for (int i = 0; i < 2 * (int)cfg.max_peers; i++) {
    fake_up(s, &host, &d, 100u + (uint64_t)i);
    cr_assert_neq(d.base.conn, ida);
    cr_assert_eq(sv_send(s, ida, &note), GK_ENOTFOUND);
    sv_link_down(s, &d.base);
  }
  fake_up(s, &host, &d, 9);
  cr_assert_eq(sv_send(s, ida, &note), GK_ENOTFOUND);
  cr_assert_eq(d.sent, 0u, "a stale id reaches no one");
  cr_assert_eq(sv_send(s, d.base.conn, &note), 0);
  cr_assert_eq(d.sent, 1u);
  sv_link_data(s, &a.base, (const uint8_t *)"x", 1); /* a is gone: ignored */
  cr_assert_eq(a.base.stats.packets_in, 1u);

  static char text[1 << 16];
  size_t n = sv_metrics_write(s, text, sizeof(text));
  cr_assert_lt(n, sizeof(text));
  cr_assert_not_null(strstr(text, "gk_connections{transport=\"fake\"} 2\n"),
                     "%s", text);
  cr_assert_not_null(strstr(text, "gk_connections{transport=\"enet\"} 0\n"));

  gk_server_shutdown(s);
  gk_server_shutdown(s); /* at once */
  sv_link_host_closed(&host);
  for (int i = 0; i < 100000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  cr_assert_eq(uv_loop_close(&loop), 0);
  fclose(logf);
}

/* --- one room, two transports, seen by the admin listener ---------------- */

static void on_tick(uv_timer_t *t) {
  (void)t; /* wakes the loop while a thread waits on the server */
}

typedef struct enet_client {
  gk_net_transport t;
  uint32_t server;
  int up;
  gk_wire_msg last;
  int got;
} enet_client;

static void client_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                           const uint8_t *bytes, size_t len) {
  (void)t;
  (void)peer;
  enet_client *c = ctx;
  if (gk_wire_decode(bytes, len, &c->last) == 0) c->got++;
}

static void client_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  (void)peer;
  ((enet_client *)ctx)->up = 1;
}

static void send_msg(gk_server *s, fake_link *f, enet_client *e,
                     const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof(buf), &len), 0);
  if (f)
    sv_link_data(s, &f->base, buf, len);
  else
    cr_assert_eq(gk_net_transport_send(&e->t, e->server, buf, len, 1), 0);
}

static const cJSON *player(const cJSON *room, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItem(room, "players"), i);
}

Test(server_link, one_room_two_transports_in_admin_rooms, .timeout = 60) {
  static gk_server_config cfg;
  gk_server_config_default(&cfg);
  snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
  cfg.port = 0;
  cfg.replays_enabled = 0;
  cfg.shutdown_grace_ms = 0;
  cfg.admin.enabled = 1;
  snprintf(cfg.admin.host, sizeof cfg.admin.host, "127.0.0.1");
  snprintf(cfg.admin.listen, sizeof cfg.admin.listen, "127.0.0.1:0");
  cfg.admin.port = 0; /* what the parser makes of "127.0.0.1:0" */
  cfg.admin.loopback = 1;
  FILE *logf = fopen("/dev/null", "w");
  cr_assert_not_null(logf);
  gk_server_log log;
  gk_log_init(&log, logf, GK_LOG_ERROR);
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  gk_server *s = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX] = "";
  cr_assert_eq(gk_server_start(&loop, &cfg, &log, 0, &s, err, sizeof err), 0,
               "%s", err);
  static sv_link_host host = {.ops = &fake_host_ops};
  cr_assert_eq(sv_link_host_add(s, &host), 0);
  uv_timer_t tick;
  uv_timer_init(&loop, &tick);
  uv_timer_start(&tick, on_tick, 10, 10);

  /* the creator on the stand-in backend */
  static fake_link a;
  fake_up(s, &host, &a, 7);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "push-puzzle");
  send_msg(s, &a, NULL, &m);
  cr_assert_eq(a.last.type, GK_MSG_ROOM_CREATED, "%s",
               a.last.type == GK_MSG_ERROR ? a.last.u.error.text : "");
  char code[GK_WIRE_CODE_LEN + 1];
  memcpy(code, a.last.u.room.code, sizeof(code));

  /* a joiner over ENet */
  static enet_client e;
  memset(&e, 0, sizeof(e));
  gk_net_transport_options to = {.max_peers = 1};
  gk_net_transport_callbacks tc = {&e, client_receive, client_connect, NULL};
  cr_assert_eq(gk_net_transport_init(&e.t, &loop, &to, &tc), 0);
  cr_assert_eq(
      gk_net_transport_connect(&e.t, "127.0.0.1", gk_server_port(s), &e.server),
      0);
  while (!e.up) uv_run(&loop, UV_RUN_ONCE);
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, GK_WIRE_CODE_LEN);
  m.u.room.role = GK_WIRE_ROLE_PLAYER;
  send_msg(s, NULL, &e, &m);
  while (e.got == 0) uv_run(&loop, UV_RUN_ONCE);
  cr_assert_eq(e.last.type, GK_MSG_JOINED);
  cr_assert_eq(e.last.u.joined.slot, 1);

  char path[64];
  snprintf(path, sizeof(path), "/rooms/%s", code);
  char *body = admin_get(&loop, s, path);
  cJSON *room = cJSON_Parse(body);
  cr_assert_not_null(room, "%s", body);
  cr_assert_str_eq(
      cJSON_GetObjectItem(player(room, 0), "transport")->valuestring, "fake");
  cr_assert_str_eq(
      cJSON_GetObjectItem(player(room, 1), "transport")->valuestring, "enet");
  cJSON_Delete(room);
  free(body);
  body = admin_get(&loop, s, "/metrics");
  cr_assert_not_null(strstr(body, "gk_connections{transport=\"enet\"} 1\n"),
                     "%s", body);
  cr_assert_not_null(strstr(body, "gk_connections{transport=\"fake\"} 1\n"));
  free(body);

  /* the creator goes, and the lobby with it */
  sv_link_down(s, &a.base);
  cr_assert_null(sv_room_find(s, code));

  gk_net_transport_close(&e.t, NULL);
  uv_close((uv_handle_t *)&tick, NULL);
  gk_server_shutdown(s);
  gk_server_shutdown(s);
  sv_link_host_closed(&host);
  for (int i = 0; i < 100000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  cr_assert_eq(uv_loop_close(&loop), 0);
  fclose(logf);
}
