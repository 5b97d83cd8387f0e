/* ws_e2e.h: helpers of the WebSocket tests against the real gk-server
 * (test_ws_hostile.c, test_ws_limits.c): the server with its WebSocket
 * and admin listeners on ephemeral ports, /metrics values, and raw
 * WebSocket clients (tests/net/ws_raw.c, with no in-process listener:
 * S is NULL) speaking wire messages. Every wait is bounded. */
#ifndef GK_TESTS_WS_E2E_H
#define GK_TESTS_WS_E2E_H

#include <stdint.h>

#include "admin_http.h"
#include "e2e.h"
#include "gk_net_wire.h"
#include "ws_raw.h"

typedef struct ws_server {
  admin_srv a; /* the server, its folder, ENet and admin ports */
  uint16_t ws; /* the WebSocket port */
} ws_server;

/* Spawns gk-server with admin_srv_start (in s->a.d, made there unless the
 * caller made it: zero s first), "websocket" enabled on 127.0.0.1 port 0
 * (origins ["http://good.example"], ping_ms 50, then `ws_extra`: more
 * members of "websocket", may be NULL), then `extra` (more top-level
 * members, may be NULL); reads the WebSocket port from its log. */
void ws_server_start(ws_server *s, const char *ws_extra, const char *extra);
/* SIGTERM, exit 0, the folder removed. */
void ws_server_stop(ws_server *s);

/* GET /metrics: the value of the sample named exactly `series` (e.g.
 * "gk_websocket_closes_total{reason=\"slow\"}"); fails the test if the
 * scrape fails or the series is missing. */
uint64_t ws_metric(const ws_server *s, const char *series);
/* Waits up to ms until the series is at least `want`; returns its value
 * then (or the last one read). */
uint64_t ws_metric_wait(const ws_server *s, const char *series, uint64_t want,
                        int ms);

/* A raw client from `src` (127.0.0.0/8) that completed the upgrade. */
void ws_open(raw *r, const ws_server *s, const char *src, int rcvbuf);
/* Waits up to ms for the server's end of the connection: EOF (or a
 * reset) with nothing more to read. Returns 1 if it came. */
int ws_wait_eof(raw *r, int ms);
/* CREATE_ROOM for `genre`, `players` (the token may be NULL); the answer's
 * type, and its room code into code (17 bytes) when it is ROOM_CREATED. */
int ws_create_room(raw *r, const char *genre, int players, const uint8_t *tok,
                   char *code, int *err_code);

#endif
