/* e2e_raw.c: a raw ENet client for the end-to-end server tests (see
 * e2e_raw.h). */
#include "e2e_raw.h"

#include <criterion/criterion.h>
#include <string.h>

void raw_pump(raw *c, int ms) {
  ENetEvent ev;
  for (int waited = 0; waited <= ms; waited += 5) {
    while (enet_host_service(c->h, &ev, 5) > 0) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) c->connected = 1;
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) c->disconnected = 1;
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        gk_wire_msg m;
        if (gk_wire_decode(ev.packet->data, ev.packet->dataLength, &m) == 0 &&
            (unsigned)m.type < 64) {
          /* pointers into the packet are not kept: only scalar fields and
           * copied strings are read later */
          c->last[m.type] = m;
          c->last_len[m.type] = ev.packet->dataLength;
          c->seen[m.type]++;
        }
        enet_packet_destroy(ev.packet);
      }
    }
  }
}

void raw_connect_start(raw *c, uint16_t port) {
  /* libenet 1.3.17 seeds a host's connect ids from its address in memory
   * and time(NULL): a client made right after one closed (raw_close: no
   * disconnect, the server still holds its peer) often gets the same
   * address, so the same connect id in the same second; if the kernel
   * also hands it the same UDP port, the server takes its CONNECT for a
   * resend of the old peer's and ignores it ("raw client could not
   * connect", about one fleet run in a dozen). Each host here moves on
   * from the last one's seed. */
  static enet_uint32 seed;
  memset(c, 0, sizeof(*c));
  c->h = enet_host_create(NULL, 1, 2, 0, 0);
  cr_assert_not_null(c->h);
  seed += 0x9e3779b9u;
  c->h->randomSeed += seed;
  ENetAddress a;
  enet_address_set_host(&a, "127.0.0.1");
  a.port = port;
  c->p = enet_host_connect(c->h, &a, 2, 0);
  cr_assert_not_null(c->p);
}

void raw_connect(raw *c, uint16_t port) {
  raw_connect_start(c, port);
  for (int i = 0; i < 200 && !c->connected; i++) raw_pump(c, 10);
  cr_assert(c->connected, "raw client could not connect");
}

void raw_send(raw *c, const void *bytes, size_t len, int reliable) {
  ENetPacket *pk = enet_packet_create(bytes, len,
                                      reliable ? ENET_PACKET_FLAG_RELIABLE
                                               : ENET_PACKET_FLAG_UNSEQUENCED);
  enet_peer_send(c->p, reliable ? 0 : 1, pk);
  enet_host_flush(c->h);
}

void raw_send_msg(raw *c, const gk_wire_msg *m) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(m, buf, sizeof(buf), &len), 0);
  raw_send(c, buf, len, 1);
}

void raw_close(raw *c) {
  if (c->h) enet_host_destroy(c->h);
  c->h = NULL;
}

/* Waits until the raw client has seen a message of `type`. */
void raw_expect(raw *c, int type, int ms) {
  for (int waited = 0; waited <= ms && !c->seen[type]; waited += 20)
    raw_pump(c, 20);
  cr_assert(c->seen[type], "no %s arrived (connection %s)",
            gk_wire_type_name(type),
            c->disconnected ? "was closed" : "still open");
}
