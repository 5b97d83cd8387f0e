/* test_transport.c: ENet on the uv loop, server and client in one process
 * on 127.0.0.1. Datagrams arrive both ways on both channels, oversized
 * packets are dropped and counted before anyone sees them, bad sends are
 * refused, closing runs its callback, and a port already taken is named
 * so; a client made after one closed connects with an id of its own.
 * Every loop is bounded. */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "gk_err.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"

typedef struct side {
  gk_net_transport t;
  uint32_t peer;
  int connects, disconnects, received, closed;
  size_t last_len;
  uint8_t last[2048];
} side;

typedef struct world {
  uv_loop_t loop;
  side server, client;
} world;

static world *w;

static void on_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                       const uint8_t *bytes, size_t len) {
  (void)t;
  side *s = ctx;
  s->peer = peer;
  s->received++;
  s->last_len = len;
  memcpy(s->last, bytes, len < sizeof s->last ? len : sizeof s->last);
}

static void on_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  side *s = ctx;
  s->peer = peer;
  s->connects++;
}

static void on_disconnect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  (void)peer;
  ((side *)ctx)->disconnects++;
}

static void on_closed(gk_net_transport *t) {
  ((side *)t)->closed = 1; /* t is the first member of side */
}

/* Runs the loop until *flag reaches want (bounded by iterations). */
static void run_until(const int *flag, int want) {
  for (int i = 0; i < 20000 && *flag < want; i++) uv_run(&w->loop, UV_RUN_ONCE);
}

static void setup(void) {
  w = calloc(1, sizeof *w);
  cr_assert_eq(uv_loop_init(&w->loop), 0);
  gk_net_transport_options so = {
      .bind_host = "127.0.0.1", .max_peers = 4, .service_ms = 5};
  gk_net_transport_callbacks sc = {.ctx = &w->server,
                                   .receive = on_receive,
                                   .connect = on_connect,
                                   .disconnect = on_disconnect};
  cr_assert_eq(gk_net_transport_init(&w->server.t, &w->loop, &so, &sc), 0);
  cr_assert_neq(w->server.t.port, 0);
  gk_net_transport_options co = {.service_ms = 5};
  gk_net_transport_callbacks cc = sc;
  cc.ctx = &w->client;
  cr_assert_eq(gk_net_transport_init(&w->client.t, &w->loop, &co, &cc), 0);
  cr_assert_eq(gk_net_transport_connect(&w->client.t, "127.0.0.1",
                                        w->server.t.port, &w->client.peer),
               0);
  run_until(&w->client.connects, 1);
  run_until(&w->server.connects, 1);
  cr_assert_eq(w->client.connects, 1);
  cr_assert_eq(w->server.connects, 1);
}

static void teardown(void) {
  gk_net_transport_close(&w->client.t, on_closed);
  gk_net_transport_close(&w->server.t, on_closed);
  run_until(&w->server.closed, 1);
  run_until(&w->client.closed, 1);
  cr_assert(w->client.closed && w->server.closed);
  uv_run(&w->loop, UV_RUN_NOWAIT);
  cr_assert_eq(uv_loop_close(&w->loop), 0);
  free(w);
}

TestSuite(transport, .init = setup, .fini = teardown, .timeout = 60);

Test(transport, datagrams_arrive_both_ways_on_both_channels) {
  const uint8_t hello[5] = {1, 20, 0, 0, 7};
  cr_assert_eq(gk_net_transport_send(&w->client.t, w->client.peer, hello, 5, 1),
               0);
  run_until(&w->server.received, 1);
  cr_assert_eq(w->server.last_len, 5);
  cr_assert_arr_eq(w->server.last, hello, 5);
  cr_assert_eq(gk_net_transport_send(&w->server.t, w->server.peer, hello, 3, 0),
               0);
  run_until(&w->client.received, 1);
  cr_assert_eq(w->client.last_len, 3);
  cr_assert_eq(w->server.t.stats.packets_in, 1);
  cr_assert_eq(w->server.t.stats.packets_out, 1);
}

Test(transport, oversized_packets_are_dropped_and_counted_before_delivery) {
  /* A hostile client is not bound by our send check: go below it. */
  static uint8_t big[GK_WIRE_MAX + 1];
  cr_assert_eq(
      gk_net_transport_send(&w->client.t, w->client.peer, big, sizeof big, 1),
      GK_ETOOBIG);
  ENetHost *ch = w->client.t.host;
  ENetPacket *pkt =
      enet_packet_create(big, sizeof big, ENET_PACKET_FLAG_RELIABLE);
  cr_assert_eq(enet_peer_send(&ch->peers[w->client.peer], 0, pkt), 0);
  const uint8_t ok[2] = {1, 20};
  cr_assert_eq(gk_net_transport_send(&w->client.t, w->client.peer, ok, 2, 1),
               0);
  run_until(&w->server.received, 1);
  cr_assert_eq(w->server.received, 1);
  cr_assert_eq(w->server.last_len, 2);
  cr_assert_eq(w->server.t.stats.drop_oversize, 1);
}

Test(transport, sends_to_unknown_peers_are_refused) {
  const uint8_t b[2] = {1, 20};
  cr_assert_eq(gk_net_transport_send(&w->server.t, 3, b, 2, 1), GK_ENOTFOUND);
  cr_assert_eq(gk_net_transport_send(&w->server.t, 999, b, 2, 1), GK_ENOTFOUND);
  cr_assert_eq(w->server.t.stats.drop_send, 2);
}

Test(transport, a_disconnect_reaches_the_other_side) {
  gk_net_transport_disconnect(&w->client.t, w->client.peer, 0);
  run_until(&w->server.disconnects, 1);
  run_until(&w->client.disconnects, 1);
  cr_assert_eq(w->server.disconnects, 1);
  cr_assert_eq(w->client.disconnects, 1);
  const uint8_t b[2] = {1, 20};
  cr_assert_eq(gk_net_transport_send(&w->client.t, w->client.peer, b, 2, 1),
               GK_ENOTFOUND);
}

/* The kernel's cap on a socket's receive buffer (net.core.rmem_max). */
static uint32_t rmem_max(void) {
  FILE *f = fopen("/proc/sys/net/core/rmem_max", "r");
  unsigned long v = 0;
  if (f != NULL) {
    if (fscanf(f, "%lu", &v) != 1) v = 0;
    fclose(f);
  }
  return (uint32_t)v;
}

Test(transport, a_socket_buffer_option_enlarges_the_udp_buffers) {
  uint32_t base = gk_net_transport_socket_buffer(&w->server.t);
  cr_assert_geq(base, 256u * 1024u, "ENet's default is 256 KiB, got %u", base);
  uint32_t cap = rmem_max();
  if (cap <= 256u * 1024u) {
    cr_skip_test("net.core.rmem_max is %u: no room above ENet's default", cap);
  }
  uint32_t want = 2u << 20;
  side big;
  memset(&big, 0, sizeof big);
  gk_net_transport_options o = {
      .bind_host = "127.0.0.1", .max_peers = 4, .socket_buffer = want};
  gk_net_transport_callbacks cb = {.ctx = &big, .receive = on_receive};
  cr_assert_eq(gk_net_transport_init(&big.t, &w->loop, &o, &cb), 0);
  uint32_t got = gk_net_transport_socket_buffer(&big.t);
  uint32_t floor = want < cap ? want : cap; /* Linux reports twice this */
  cr_expect_geq(got, floor, "asked %u bytes (cap %u), the kernel gave %u", want,
                cap, got);
  cr_expect_gt(got, base);
  gk_net_transport_close(&big.t, on_closed);
  run_until(&big.closed, 1);
  cr_assert(big.closed);
}

Test(transport, a_taken_port_fails_with_address_already_in_use) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
  side taken;
  memset(&taken, 0, sizeof taken);
  gk_net_transport_options o = {.bind_host = "127.0.0.1",
                                .port = ntohs(a.sin_port)};
  gk_net_transport_callbacks cb = {.ctx = &taken, .receive = on_receive};
  int rc = gk_net_transport_init(&taken.t, &w->loop, &o, &cb);
  close(fd);
  cr_assert_eq(rc, GK_EIO, "%s", gk_err_name(rc));
  cr_assert_eq(taken.t.sys_err, UV_EADDRINUSE, "%d: %s", taken.t.sys_err,
               taken.t.sys_err != 0 ? uv_strerror(taken.t.sys_err) : "none");
  cr_assert_str_eq(uv_strerror(taken.t.sys_err), "address already in use");
}

/* A client with ping_ms 40 that sends every 5 ms for `ms`, or is silent. */
typedef struct pinger {
  side s;
  uv_timer_t timer;
  int sending, ticks, closed;
  uint32_t datagrams; /* ENet's count of datagrams the client sent */
} pinger;

static void on_pinger_tick(uv_timer_t *h) {
  pinger *p = h->data;
  const uint8_t b[2] = {1, 20};
  if (p->sending) gk_net_transport_send(&p->s.t, p->s.peer, b, 2, 0);
  p->ticks++;
}

static void on_pinger_timer_closed(uv_handle_t *h) {
  ((pinger *)h->data)->closed = 1;
}

static void run_pinger(pinger *p, int sending, int ms) {
  memset(p, 0, sizeof *p);
  p->sending = sending;
  gk_net_transport_options o = {.service_ms = 5, .ping_ms = 40};
  gk_net_transport_callbacks cb = {
      .ctx = &p->s, .receive = on_receive, .connect = on_connect};
  cr_assert_eq(gk_net_transport_init(&p->s.t, &w->loop, &o, &cb), 0);
  cr_assert_eq(gk_net_transport_connect(&p->s.t, "127.0.0.1", w->server.t.port,
                                        &p->s.peer),
               0);
  run_until(&p->s.connects, 1);
  cr_assert_eq(p->s.connects, 1);
  uv_timer_init(&w->loop, &p->timer);
  p->timer.data = p;
  uv_timer_start(&p->timer, on_pinger_tick, 5, 5);
  run_until(&p->ticks, ms / 5);
  uv_close((uv_handle_t *)&p->timer, on_pinger_timer_closed);
  run_until(&p->closed, 1);
  p->datagrams = ((ENetHost *)p->s.t.host)->totalSentPackets;
  gk_net_transport_close(&p->s.t, on_closed);
  run_until(&p->s.closed, 1);
  cr_assert(p->s.closed);
}

Test(transport, pings_ride_in_the_datagrams_sent_and_go_alone_only_to_silence) {
  pinger p;
  run_pinger(&p, 1, 600);
  const gk_net_transport_stats *st = &p.s.t.stats;
  /* about one ping per 40 ms, nearly all of them inside a send */
  cr_expect_geq(st->pings, 8, "pings %llu", (unsigned long long)st->pings);
  cr_expect_leq(st->pings_alone * 4, st->pings, "%llu of %llu pings alone",
                (unsigned long long)st->pings_alone,
                (unsigned long long)st->pings);
  /* one datagram per send: the pings add none (the handshake a few) */
  cr_expect_leq(p.datagrams, st->packets_out + 4, "%u datagrams for %llu sends",
                p.datagrams, (unsigned long long)st->packets_out);
  run_pinger(&p, 0, 600);
  /* nothing sent: every ping goes alone, one per 40 to 51 ms */
  cr_expect_geq(st->pings_alone, 5, "pings alone %llu",
                (unsigned long long)st->pings_alone);
  cr_expect_eq(st->pings_alone, st->pings);
}

Test(transport, a_flush_to_many_peers_leaves_in_one_system_call) {
  side more[3];
  memset(more, 0, sizeof more);
  gk_net_transport_options co = {.service_ms = 5};
  for (int i = 0; i < 3; i++) {
    gk_net_transport_callbacks cb = {
        .ctx = &more[i], .receive = on_receive, .connect = on_connect};
    cr_assert_eq(gk_net_transport_init(&more[i].t, &w->loop, &co, &cb), 0);
    cr_assert_eq(gk_net_transport_connect(&more[i].t, "127.0.0.1",
                                          w->server.t.port, &more[i].peer),
                 0);
    run_until(&more[i].connects, 1);
    cr_assert_eq(more[i].connects, 1);
  }
  run_until(&w->server.connects, 4);
  cr_assert_eq(w->server.connects, 4);
  gk_net_transport_stats before = w->server.t.stats;
  const uint8_t b[3] = {1, 20, 9};
  ENetHost *h = w->server.t.host;
  for (uint32_t id = 0; id < 4; id++) /* every connected peer, one each */
    if (h->peers[id].state == ENET_PEER_STATE_CONNECTED)
      cr_assert_eq(gk_net_transport_send(&w->server.t, id, b, 3, 0), 0);
  uv_run(&w->loop, UV_RUN_NOWAIT); /* the flush, before the loop waits */
  const gk_net_transport_stats *st = &w->server.t.stats;
  uint64_t sent = st->datagrams_batched - before.datagrams_batched;
  uint64_t calls = st->send_calls - before.send_calls;
  cr_expect_geq(sent, 4, "%llu datagrams through the queue",
                (unsigned long long)sent);
  cr_expect(calls >= 1 && calls * 2 <= sent, "%llu calls for %llu datagrams",
            (unsigned long long)calls, (unsigned long long)sent);
  cr_expect_eq(st->send_dropped, 0);
  run_until(&w->client.received, 1);
  cr_expect_eq(w->client.received, 1);
  for (int i = 0; i < 3; i++) {
    run_until(&more[i].received, 1);
    cr_expect_eq(more[i].received, 1, "client %d", i);
    cr_expect_eq(more[i].last_len, 3);
    gk_net_transport_close(&more[i].t, on_closed);
    run_until(&more[i].closed, 1);
  }
}

Test(transport, a_datagram_the_kernel_refuses_is_counted_and_the_rest_go) {
  side c;
  memset(&c, 0, sizeof c);
  gk_net_transport_options co = {.service_ms = 5, .max_peers = 2};
  gk_net_transport_callbacks cb = {
      .ctx = &c, .receive = on_receive, .connect = on_connect};
  cr_assert_eq(gk_net_transport_init(&c.t, &w->loop, &co, &cb), 0);
  uint32_t nowhere, there;
  /* port 0: Linux refuses the send (EINVAL); queued first, in one batch */
  cr_assert_eq(gk_net_transport_connect(&c.t, "127.0.0.1", 0, &nowhere), 0);
  cr_assert_eq(
      gk_net_transport_connect(&c.t, "127.0.0.1", w->server.t.port, &there), 0);
  uv_run(&w->loop, UV_RUN_NOWAIT); /* the flush: both connects, one batch */
  cr_expect_eq(c.t.stats.datagrams_batched, 2);
  cr_expect_eq(c.t.stats.send_dropped, 1);
  cr_expect_eq(c.t.stats.send_calls, 2,
               "one refused at once, one for the rest");
  run_until(&c.connects, 1);
  cr_expect_eq(c.connects, 1);
  cr_expect_eq(c.peer, there);
  cr_expect_geq(c.t.stats.send_dropped, 1, "dropped %llu",
                (unsigned long long)c.t.stats.send_dropped);
  gk_net_transport_close(&c.t, on_closed);
  run_until(&c.closed, 1);
}

/* `n` raw datagrams of `len` bytes each to the server's port, from a plain
 * UDP socket: on loopback they are in the server's socket on return. */
static void spray(uint16_t port, int n, size_t len) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  static uint8_t junk[2048]; /* zeros: no ENet command ENet accepts */
  cr_assert_leq(len, sizeof junk);
  for (int i = 0; i < n; i++)
    cr_assert_eq(sendto(fd, junk, len, 0, (struct sockaddr *)&to, sizeof to),
                 (ssize_t)len);
  close(fd);
}

Test(transport, datagrams_waiting_together_are_read_with_one_system_call) {
  const gk_net_transport_stats *st = &w->server.t.stats;
  gk_net_transport_stats before = *st;
  spray(w->server.t.port, 10, 40);
  for (int i = 0; i < 1000 && st->datagrams_read < before.datagrams_read + 10;
       i++)
    uv_run(&w->loop, UV_RUN_ONCE);
  cr_expect_eq(
      st->datagrams_read - before.datagrams_read, 10,
      "%llu datagrams through the read queue",
      (unsigned long long)(st->datagrams_read - before.datagrams_read));
  /* one read for the ten, and no second one to hear EAGAIN */
  cr_expect_eq(st->read_calls - before.read_calls, 1, "%llu reads",
               (unsigned long long)(st->read_calls - before.read_calls));
  cr_expect_eq(st->read_dropped, 0);
}

Test(transport, a_datagram_larger_than_any_peer_sends_is_dropped_not_fatal) {
  const gk_net_transport_stats *st = &w->server.t.stats;
  gk_net_transport_stats before = *st;
  spray(w->server.t.port, 1, 1501);
  spray(w->server.t.port, 2, 40);
  const uint8_t ok[2] = {1, 20};
  cr_assert_eq(gk_net_transport_send(&w->client.t, w->client.peer, ok, 2, 1),
               0);
  run_until(&w->server.received, 1);
  cr_expect_eq(w->server.received, 1, "the connection goes on");
  cr_expect_eq(st->read_dropped, 1);
  cr_expect_geq(st->datagrams_read - before.datagrams_read, 3);
}

/* Runs each loop once, without waiting, `n` times. */
static void turn(uv_loop_t *server, uv_loop_t *clients, int n) {
  for (int i = 0; i < n; i++) {
    if (server) uv_run(server, UV_RUN_NOWAIT);
    if (clients) uv_run(clients, UV_RUN_NOWAIT);
  }
}

Test(transport, datagrams_queued_behind_a_connect_are_read_on_the_next_turn) {
  /* the server on a loop of its own, so the test chooses when it reads,
   * and a service timer that never fires: only its poll reads */
  uv_loop_t sl, cl;
  cr_assert_eq(uv_loop_init(&sl), 0);
  cr_assert_eq(uv_loop_init(&cl), 0);
  side s, a, b;
  memset(&s, 0, sizeof s);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  gk_net_transport_options so = {
      .bind_host = "127.0.0.1", .max_peers = 4, .service_ms = 600000};
  gk_net_transport_callbacks cb = {
      .ctx = &s, .receive = on_receive, .connect = on_connect};
  cr_assert_eq(gk_net_transport_init(&s.t, &sl, &so, &cb), 0);
  gk_net_transport_options co = {.service_ms = 5};
  cb.ctx = &a;
  cr_assert_eq(gk_net_transport_init(&a.t, &cl, &co, &cb), 0);
  cb.ctx = &b;
  cr_assert_eq(gk_net_transport_init(&b.t, &cl, &co, &cb), 0);
  cr_assert_eq(gk_net_transport_connect(&a.t, "127.0.0.1", s.t.port, &a.peer),
               0);
  for (int i = 0; i < 2000 && (a.connects < 1 || s.connects < 1); i++)
    turn(&sl, &cl, 1);
  cr_assert_eq(s.connects, 1);
  /* b's connect: the server answers; b's acknowledgement of that answer
   * is what makes it a connect on the server's side */
  cr_assert_eq(gk_net_transport_connect(&b.t, "127.0.0.1", s.t.port, &b.peer),
               0);
  for (int i = 0; i < 2000 && b.connects < 1; i++) turn(&sl, &cl, 1);
  cr_assert_eq(b.connects, 1);
  cr_assert_eq(s.connects, 1, "the server has not read b's acknowledgement");
  turn(NULL, &cl, 3); /* b's acknowledgement leaves, then a's data */
  const uint8_t d[2] = {1, 20};
  cr_assert_eq(gk_net_transport_send(&a.t, a.peer, d, 2, 1), 0);
  turn(NULL, &cl, 3);
  /* ENet's pass ends at b's connect; a's data, read in the same batch,
   * takes a second pass on the next turn of the server's loop, though the
   * socket is empty and the service timer far off */
  uint64_t services = s.t.stats.services;
  turn(&sl, NULL, 1);
  cr_expect_eq(s.connects, 2);
  cr_expect_eq(s.received, 0, "one pass per drain");
  turn(&sl, NULL, 1);
  cr_expect_eq(s.received, 1, "a's data waited in the read queue");
  cr_expect_eq(s.t.stats.services - services, 2);
  gk_net_transport_close(&a.t, on_closed);
  gk_net_transport_close(&b.t, on_closed);
  gk_net_transport_close(&s.t, on_closed);
  for (int i = 0; i < 2000 && !(a.closed && b.closed && s.closed); i++)
    turn(&sl, &cl, 1);
  cr_assert(a.closed && b.closed && s.closed);
  cr_assert_eq(uv_loop_close(&sl), 0);
  cr_assert_eq(uv_loop_close(&cl), 0);
}

/* The connect id of a client made, connected and closed (no goodbye). */
static enet_uint32 connect_id_of_a_fresh_client(void) {
  side c;
  memset(&c, 0, sizeof c);
  gk_net_transport_options co = {.service_ms = 5};
  gk_net_transport_callbacks cb = {
      .ctx = &c, .receive = on_receive, .connect = on_connect};
  cr_assert_eq(gk_net_transport_init(&c.t, &w->loop, &co, &cb), 0);
  cr_assert_eq(
      gk_net_transport_connect(&c.t, "127.0.0.1", w->server.t.port, &c.peer),
      0);
  enet_uint32 id = ((ENetHost *)c.t.host)->peers[c.peer].connectID;
  gk_net_transport_close(&c.t, on_closed);
  run_until(&c.closed, 1);
  cr_assert(c.closed);
  return id;
}

Test(transport, a_client_made_after_one_closed_connects_with_an_id_of_its_own) {
  /* libenet 1.3.17 seeds a host's connect ids from the host's address in
   * memory and time(NULL): a client made in the same second as one just
   * freed often gets the same address, so the same id; a server that
   * still holds the old peer at the same UDP port takes the new CONNECT
   * for a resend of the old one and ignores it */
  enet_uint32 ids[8];
  for (int i = 0; i < 8; i++) {
    ids[i] = connect_id_of_a_fresh_client();
    for (int j = 0; j < i; j++)
      cr_assert_neq(ids[i], ids[j], "clients %d and %d: connect id %u", j, i,
                    (unsigned)ids[i]);
  }
}
