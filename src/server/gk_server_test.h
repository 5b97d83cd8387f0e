/* gk_server_test.h: what the shell's in-process tests and benchmarks may
 * use beyond gk_server.h, and nothing of its insides: gk_server stays
 * opaque here (its fields are in gk_server_internal.h, which nothing
 * outside src/server includes). The shell's own files get these
 * declarations through gk_server_internal.h.
 *
 * For a test of one module of the shell (links, metrics, the series)
 * there is a bare server: its config and tables, no listener and no
 * loop (sv_test_server_new). The module headers gk_server_link.h (the
 * link interface a stand-in backend implements) and gk_server_ops.h (the
 * histograms, figures and series) are a test's to include too.
 */
#ifndef GK_SERVER_TEST_H
#define GK_SERVER_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"
#include "gk_room.h"
#include "gk_server.h"
#include "gk_token.h"

struct sv_metrics;

/* Encodes and sends one message to a connection (reliable or not by its
 * type). Returns 0, the encoder's or the link's code, or GK_ENOTFOUND for
 * an id with no connection (gone, stale). */
int sv_send(gk_server *s, uint32_t peer, const gk_wire_msg *m);

/* One encoded message to a connection; GK_ENOTFOUND if it is gone. */
int sv_send_bytes(gk_server *s, uint32_t peer, const uint8_t *bytes, size_t len,
                  int reliable);

/* A connection's transport ("enet"), or NULL if it is gone. */
const char *sv_conn_kind(const gk_server *s, uint32_t peer);

/* The bound TCP port, 0 when there is no WebSocket listener. */
uint16_t sv_ws_port(const gk_server *s);

/* The room with that code (GK_WIRE_CODE_LEN characters), or NULL. */
gk_room *sv_room_find(const gk_server *s, const char *code);

/* Puts a room gk_room_create returned in the table. */
void sv_room_publish(gk_server *s, gk_room *r);

/* The token checks of sv_auth_request alone, without a server: opens the
 * token of `m` (any of the four) with `key` at now_s, matches its
 * grant against the request and, if `client` is non-NULL, against the
 * client id the connection is bound to, then admits its id once in
 * `seen`. Returns 0 with *out filled, or the refusal's code with a reason
 * in err: GK_ENOTOKEN, gk_token_open's codes, GK_EGRANT, GK_EROLE,
 * GK_EEXIST (used before) or GK_EFULL (cache full). */
int sv_auth_check_token(const uint8_t key[GK_TOKEN_KEY_BYTES],
                        gk_token_seen *seen, const gk_wire_msg *m,
                        const uint64_t *client, uint64_t now_s, gk_token *out,
                        char *err, size_t errlen);

/* The bound UDP port of the ENet host. */
uint16_t sv_enet_port(const gk_server *s);

/* A bare server for a module's test or benchmark: `cfg` (kept; it must
 * outlive the server) and its room and connection tables, the rooms'
 * host, no listener, no loop, no timer. NULL if out of memory. Freed by
 * sv_test_server_free, which frees nothing else (rooms a test put in
 * its table are the test's). */
gk_server *sv_test_server_new(const gk_server_config *cfg);
void sv_test_server_free(gk_server *s);
/* Its counters, histograms and rooms' host, to set or read. */
gk_server_stats *sv_test_stats(gk_server *s);
struct sv_metrics *sv_test_metrics(gk_server *s);
gk_room_host *sv_test_room_host(gk_server *s);

#endif
