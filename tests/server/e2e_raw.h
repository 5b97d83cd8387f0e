/* e2e_raw.h: a raw ENet client for end-to-end server tests: it sends any
 * bytes (well-formed messages or not) and keeps the last message of each
 * type it received, and that message's size on the wire. Every wait is
 * bounded. Call enet_initialize() before raw_connect. */
#ifndef GK_TESTS_E2E_RAW_H
#define GK_TESTS_E2E_RAW_H

#include <enet/enet.h>
#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"

typedef struct raw {
  ENetHost *h;
  ENetPeer *p;
  int connected, disconnected;
  gk_wire_msg last[64]; /* last message of each type (by type id) */
  size_t last_len[64];  /* its size in bytes */
  int seen[64];
} raw;

/* Services the client for about ms milliseconds. */
void raw_pump(raw *c, int ms);
/* Connects to 127.0.0.1:port (fails the test if that takes over 2 s). */
void raw_connect(raw *c, uint16_t port);
/* Connects without waiting: raw_pump until c->connected or
 * c->disconnected. */
void raw_connect_start(raw *c, uint16_t port);
void raw_send(raw *c, const void *bytes, size_t len, int reliable);
/* Encodes m (fails the test if it does not encode) and sends it reliably. */
void raw_send_msg(raw *c, const gk_wire_msg *m);
void raw_close(raw *c);
/* Waits until the client has seen a message of `type`. */
void raw_expect(raw *c, int type, int ms);

#endif
