/* gk_net_peer_uv.h: the peer engine (gk_net_peer.h) on a uv loop.
 *
 * The engine is sans-I/O; this adapter gives it a clock (uv_hrtime), one
 * one-shot uv_timer re-armed for each deadline the engine asks for
 * (gk_net_peer_poll_timeout, re-read after every call into the engine),
 * and the native defaults of what the engine takes from its caller: the
 * genres of the built-in registry (gk_genre_find, which also holds the
 * genres gk_genre_load added) and MATCH_START's options through src/config
 * (gk_config_match_options). Bytes go out through the callbacks' `send`
 * as before (an ENet transport, natively); datagrams come in through
 * gk_net_peer_uv_receive.
 *
 * The engine is embedded (`eng`): read its fields freely (stats, loop,
 * match, delays, ...); drive it only through these functions, or from
 * inside its own callbacks (the adapter re-arms its timer after every
 * call it makes into the engine, so an engine call made from a callback,
 * such as gk_net_peer_send_msg(np, np->now, m) or gk_net_peer_stop(np),
 * is taken into account when the outer call returns).
 */
#ifndef GK_NET_PEER_UV_H
#define GK_NET_PEER_UV_H

#include <uv.h>

#include "gk_net_peer.h"

typedef struct gk_net_peer_uv gk_net_peer_uv;

struct gk_net_peer_uv {
  gk_net_peer eng; /* the engine: must be first */
  /* private */
  uv_timer_t timer;
  uint64_t armed; /* the deadline the timer is armed for, or NEVER */
  int open;
  void (*close_cb)(gk_net_peer_uv *u);
};

/* The adapter of an engine that gk_net_peer_uv_init prepared (from the
 * gk_net_peer * its callbacks get). */
gk_net_peer_uv *gk_net_peer_uv_of(gk_net_peer *p);

/* Prepares the engine (gk_net_peer_init) and its timer on `loop`.
 * opts->genres empty -> the built-in registry; opts->apply_options NULL ->
 * gk_config_match_options. Returns 0 or GK_EINVAL/GK_ENOMEM. */
int gk_net_peer_uv_init(gk_net_peer_uv *u, uv_loop_t *loop,
                        const gk_net_peer_options *opts,
                        const gk_net_peer_callbacks *cb);

/* The engine's calls at uv_hrtime(), then the timer re-armed. */
int gk_net_peer_uv_receive(gk_net_peer_uv *u, const uint8_t *bytes, size_t len);
int gk_net_peer_uv_start(gk_net_peer_uv *u, const gk_wire_match_start *ms,
                         char *err, size_t errlen);
int gk_net_peer_uv_send_msg(gk_net_peer_uv *u, const gk_wire_msg *m);
int gk_net_peer_uv_rejoin(gk_net_peer_uv *u, const char *code, uint32_t slot,
                          const uint8_t secret[GK_WIRE_SECRET_LEN],
                          const uint8_t *token);
int gk_net_peer_uv_spectate(gk_net_peer_uv *u, const char *code,
                            const uint8_t *token);
/* Stops sampling and the timer (the match is left as it is). */
void gk_net_peer_uv_stop(gk_net_peer_uv *u);

/* Closes the timer; once it is closed the engine is freed and close_cb
 * (may be NULL) runs, after which `u` may be freed. A second call does
 * nothing. */
void gk_net_peer_uv_close(gk_net_peer_uv *u,
                          void (*close_cb)(gk_net_peer_uv *u));

#endif
