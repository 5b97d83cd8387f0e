/* bench_room.h: the room the network benchmarks play in: two survivors
 * engine peers over ENet on 127.0.0.1, one creating a 2-player room whose
 * options keep about 2,000 enemies alive (max_enemies 2000, tough
 * enemies, a fast spawn, players that do not die), the other joining,
 * the creator starting it. Shared by bench_rejoin.c and bench_desync.c. */
#ifndef GK_BENCH_ROOM_H
#define GK_BENCH_ROOM_H

#include <uv.h>

#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"

extern const char *const bench_room_options;

/* What every benchmark world starts with: its loop, the server on it, the
 * server's port and the room's code (bench_room_message fills it). */
typedef struct bench_server {
  uv_loop_t loop;
  gk_server *srv;
  uint16_t port;
  char code[GK_WIRE_CODE_LEN + 1];
} bench_server;

/* The benchmarks' server config: the defaults on 127.0.0.1, a free port,
 * no shutdown grace, `hz` steps a second. cfg must be non-NULL. */
void bench_room_config(gk_server_config *cfg, uint32_t hz);
/* Initialises bs->loop and starts the server on it with cfg and log (both
 * must be non-NULL, kept by the caller until bench_room_shutdown); sets
 * bs->srv and bs->port. Returns 0, or -1 with the reason on stderr. */
int bench_room_start(bench_server *bs, const gk_server_config *cfg,
                     gk_server_log *log);

/* CREATE_ROOM for 2 survivors players with bench_room_options. */
int bench_room_create(gk_net_peer_uv *creator);

/* The handshake, from either peer's `message` callback: ROOM_CREATED ->
 * the joiner sends JOIN_ROOM (the code is kept in `code`); JOINED -> the
 * creator sends START_MATCH. Returns -1 on an ERROR (printed) or a send
 * that failed, else 0 (other messages are left to the caller). */
int bench_room_message(const gk_wire_msg *m, gk_net_peer_uv *creator,
                       gk_net_peer_uv *joiner, char *code);

/* A transport on `loop` connecting to 127.0.0.1:port, and a peer; aborts
 * if either cannot start. *id gets the connection's id. */
void bench_room_open(uv_loop_t *loop, uint16_t port, gk_net_transport *t,
                     uint32_t *id, const gk_net_transport_callbacks *tc,
                     gk_net_peer_uv *p, const gk_net_peer_options *po,
                     const gk_net_peer_callbacks *pc);

/* Closes a client's peer and transport (bench_room_open's pair). */
void bench_room_close_client(gk_net_transport *t, gk_net_peer_uv *p);
/* Shuts the server down (twice: the second cuts the grace), runs the loop
 * until its handles are closed (bounded) and closes the loop. */
void bench_room_shutdown(uv_loop_t *loop, gk_server *srv);

#endif
