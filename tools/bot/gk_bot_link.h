/* gk_bot_link.h: one connection object for gk-bot's players over either
 * transport: ENet (gk_net_transport, a client host of max_conns peers)
 * or WebSocket (gk_net_ws_client, one TCP connection per player), with
 * the calls and callbacks the bots use of gk_net_transport (connect ->
 * id, send, disconnect, close), so neither bot knows which it runs on.
 *
 * The server is fixed at init: host:port for ENet, a ws:// URL for
 * WebSocket (parsed then: a bad URL is GK_EINVAL with a sentence). Ids
 * are the transport's: an ENet peer index, or a WebSocket connection id
 * ((generation << 16) | slot); gk_bot_link_slot gives the slot
 * (0..max_conns-1) of either, for tables indexed by connection. The
 * disconnect callback gets a sentence (ENet: "disconnected"; WebSocket:
 * the client's reason, e.g. "the server answered HTTP 404 ...").
 * Storage is the caller's; close is asynchronous (close_cb may be NULL).
 */
#ifndef GK_BOT_LINK_H
#define GK_BOT_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_net_transport.h"
#include "gk_net_ws_client.h"

typedef struct gk_bot_link gk_bot_link;

typedef struct gk_bot_link_callbacks {
  void *ctx;
  void (*receive)(void *ctx, gk_bot_link *l, uint32_t conn,
                  const uint8_t *bytes, size_t len); /* non-NULL */
  void (*connect)(void *ctx, gk_bot_link *l, uint32_t conn);
  void (*disconnect)(void *ctx, gk_bot_link *l, uint32_t conn, const char *why);
} gk_bot_link_callbacks;

typedef struct gk_bot_link_options {
  const char *ws_url; /* non-NULL: WebSocket to this URL; NULL: ENet */
  const char *host;   /* ENet: the server (or relay) */
  uint16_t port;
  uint32_t max_conns;  /* connections at once (1..4095 for ENet) */
  uint32_t timeout_ms; /* ENet's peer timeout; WebSocket's silence cut */
} gk_bot_link_options;

struct gk_bot_link {
  int ws; /* read-only: 1 over WebSocket */
  /* private */
  gk_bot_link_callbacks cb;
  char host[256];
  uint16_t port;
  gk_net_ws_url url;
  union {
    gk_net_transport tr;
    gk_net_ws_client wc;
  } u;
  void (*close_cb)(gk_bot_link *l);
};

/* 0, GK_EINVAL (a bad URL: err gets why, errlen bytes, may be NULL), or
 * the transport's init code. */
int gk_bot_link_init(gk_bot_link *l, uv_loop_t *loop,
                     const gk_bot_link_options *o,
                     const gk_bot_link_callbacks *cb, char *err, size_t errlen);
/* Starts a connection to the server; *conn gets its id. */
int gk_bot_link_connect(gk_bot_link *l, uint32_t *conn);
int gk_bot_link_send(gk_bot_link *l, uint32_t conn, const uint8_t *bytes,
                     size_t len, int reliable);
/* at_once: `disconnect` runs before this returns (both transports). */
void gk_bot_link_disconnect(gk_bot_link *l, uint32_t conn, int at_once);
/* The slot of an id: 0..max_conns-1. */
uint32_t gk_bot_link_slot(const gk_bot_link *l, uint32_t conn);
void gk_bot_link_close(gk_bot_link *l, void (*close_cb)(gk_bot_link *l));

#endif
