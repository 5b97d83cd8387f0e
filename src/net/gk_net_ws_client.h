/* gk_net_ws_client.h: WebSocket client connections on a libuv loop
 * (native players over WebSocket: gk-bot --ws, tests, benchmarks).
 *
 * The client side of docs/PROTOCOL.md, "WebSocket framing": one wire
 * message per binary frame, the same bytes as one ENet datagram. The API
 * mirrors gk_net_transport.h's client use (init on a loop, connect -> a
 * connection id, send, disconnect, close with a callback; receive,
 * connect and disconnect callbacks; round trip), so a bot switches
 * transports with a small shim (tools/bot/gk_bot_link.h).
 *
 *   - URL: ws://HOST[:PORT][/PATH] (port 80 by default, path "/" by
 *     default; a query string is sent as part of the path). HOST is an
 *     IPv4 literal, an IPv6 literal in brackets, or "localhost"
 *     (127.0.0.1): names are not resolved on the loop. wss:// is
 *     refused: TLS is for browsers, in front of the server a proxy's job.
 *   - TCP through uv_tcp with TCP_NODELAY; a frame's header and payload
 *     go in one write (wslay hands them over in two calls).
 *   - The handshake: GET PATH HTTP/1.1 with Host, Upgrade: websocket,
 *     Connection: Upgrade, Sec-WebSocket-Version: 13, a
 *     Sec-WebSocket-Key of 16 bytes from the OS (getrandom), the
 *     subprotocol offered (gamekit.1) and, when opts.origin is set, an
 *     Origin. The 101 is checked strictly (below); the whole handshake,
 *     TCP connect included, must end within opts.handshake_ms.
 *   - Framing by wslay (client context): every frame masked (a mask from
 *     a splitmix64 stream seeded by getrandom, per client), the server's
 *     pings answered, our pings (opts.ping_ms, an 8-byte big-endian
 *     uv_hrtime payload) give the round trip (RFC 6298 smoothing, as the
 *     listener does), messages over opts.max_msg refused (1009), text
 *     frames refused (1003), the close handshake bounded by
 *     opts.close_ms.
 *
 * Why an attempt or a connection ended reaches the disconnect callback
 * as a gk_net_ws_client_end: `err` is 0 for a connection that opened
 * (`code` then is the close code: ours if we began the close, the
 * server's if it did, 1006 if TCP ended without a close frame, or it
 * timed out), or the GK_E code of an attempt that never opened:
 *
 *   err            why (the `why` sentence says which, with the detail)
 *   GK_EIO         TCP connect failed (refused, unreachable), or TCP
 *                  ended or failed during the handshake
 *   GK_ETIMEDOUT   no complete 101 within opts.handshake_ms
 *   GK_EREFUSED    an HTTP status other than 101 (http_status has it: 404
 *                  another path, 403 Origin not allowed, 400, 426, 503)
 *   GK_EPROTO      not an HTTP/1.1 response, headers over 4096 bytes or
 *                  malformed, no "Upgrade: websocket" or "Connection:
 *                  Upgrade", a header repeated, an extension the client
 *                  did not offer
 *   GK_EMISMATCH   Sec-WebSocket-Accept missing or not the key's
 *   GK_EVERSION    Sec-WebSocket-Protocol missing or not the one offered
 *                  (the subprotocol names the protocol's version)
 *
 * Sending: wslay gets each message at once, and what the socket does not
 * take waits in libuv's write queue. While that backlog is over
 * opts.backlog bytes, an unreliable message (INPUT, CONFIRMED: the
 * protocol repeats every unacknowledged record) is refused (GK_EFULL,
 * counted; nothing is lost), a reliable one is still queued; over four
 * times opts.backlog the connection is closed with 1008: a server that
 * does not read costs neither memory nor latency without bound.
 *
 * Connections are named by (generation << 16) | slot, valid from
 * gk_net_ws_client_connect until the `disconnect` callback; a stale id
 * is refused (GK_ENOTFOUND). Everything runs on the loop thread; no
 * callback runs inside a call of this API but gk_net_ws_client_disconnect
 * at once and gk_net_ws_client_close (`disconnect`, before they return),
 * as gk_net_transport does.
 */
#ifndef GK_NET_WS_CLIENT_H
#define GK_NET_WS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#define GK_NET_WS_URL_HOST_MAX 64  /* host text, brackets off, NUL in */
#define GK_NET_WS_URL_PATH_MAX 128 /* path (and query), NUL in */

typedef struct gk_net_ws_client gk_net_ws_client;
typedef struct gk__wsc_conn gk__wsc_conn;

/* A parsed ws:// URL. */
typedef struct gk_net_ws_url {
  char host[GK_NET_WS_URL_HOST_MAX]; /* as written ("::1" without brackets) */
  uint16_t port;
  char path[GK_NET_WS_URL_PATH_MAX]; /* begins with '/' */
  struct sockaddr_storage addr;      /* host:port, numeric */
} gk_net_ws_url;

/* Parses `url` into *out. Returns 0, or GK_EINVAL with a sentence in err
 * (errlen bytes; err may be NULL): not ws:// (wss:// named as the
 * browsers' and a proxy's), a host that is not a literal or localhost,
 * a bad or zero port, a host or path too long, user info, a fragment. */
int gk_net_ws_url_parse(const char *url, gk_net_ws_url *out, char *err,
                        size_t errlen);

typedef struct gk_net_ws_client_end {
  int err;         /* 0: it had opened (see `code`); else a GK_E code */
  int code;        /* the close code once open, else 0 */
  int http_status; /* with GK_EREFUSED: the status the server answered */
  const char *why; /* a sentence; never NULL; valid for the call */
} gk_net_ws_client_end;

typedef struct gk_net_ws_client_callbacks {
  void *ctx;
  /* Must be non-NULL. One binary message; valid for the call only. */
  void (*receive)(void *ctx, gk_net_ws_client *c, uint32_t conn,
                  const uint8_t *bytes, size_t len);
  /* May be NULL. The handshake was accepted: the connection is open. */
  void (*connect)(void *ctx, gk_net_ws_client *c, uint32_t conn);
  /* May be NULL. The attempt failed or the connection ended (`end` says
   * why, see the header comment). The id is dead afterwards. */
  void (*disconnect)(void *ctx, gk_net_ws_client *c, uint32_t conn,
                     const gk_net_ws_client_end *end);
} gk_net_ws_client_callbacks;

typedef struct gk_net_ws_client_options {
  uint32_t max_conns;      /* connections at once, 1..65535; 0 -> 1 */
  const char *subprotocol; /* offered and required; NULL -> "gamekit.1" */
  const char *origin;      /* sent as Origin; NULL -> none */
  uint32_t handshake_ms;   /* TCP connect + upgrade within; 0 -> 5000 */
  uint32_t ping_ms;        /* ping this often (round trip); 0 -> off */
  uint32_t timeout_ms;     /* cut a connection silent this long (1006);
                              0 -> off */
  uint32_t close_ms;       /* after our close frame, wait this long for the
                              server's; 0 -> 1000 */
  size_t max_msg;          /* incoming message limit; 0 -> GK_WIRE_MAX */
  size_t backlog;          /* bytes waiting for the socket before unreliable
                              sends are refused; 0 -> 65536 */
} gk_net_ws_client_options;

typedef struct gk_net_ws_client_stats {
  uint64_t msgs_in, bytes_in;   /* binary messages delivered, payload */
  uint64_t msgs_out, bytes_out; /* binary messages handed to wslay */
  uint64_t wire_in, wire_out;   /* socket bytes, handshake included */
  uint64_t drop_full;           /* unreliable sends refused (backlog) */
  uint64_t drop_send;           /* sends refused, all reasons */
  uint64_t connects, disconnects, failed; /* opened, ended after open,
                                             attempts that never opened */
  uint64_t pings, pongs;
} gk_net_ws_client_stats;

struct gk_net_ws_client {
  /* read-only for callers */
  gk_net_ws_client_stats stats;
  /* private */
  uv_loop_t *loop;
  gk_net_ws_client_callbacks cb;
  gk_net_ws_client_options opts;
  char proto[64];
  char origin[128];
  gk__wsc_conn *conns; /* max_conns slots */
  uv_timer_t tick;     /* deadlines, pings */
  uint64_t mask_rng;   /* splitmix64 state for frame masks */
  int handles;         /* open handles (tick + connections' TCP) */
  int closing;
  void (*close_cb)(gk_net_ws_client *c);
  uint8_t rbuf[16384]; /* every read lands here, then goes to wslay */
};

/* Returns 0, GK_EINVAL (max_conns over 65535, a subprotocol or origin
 * too long or with a space or control byte) or GK_ENOMEM. */
int gk_net_ws_client_init(gk_net_ws_client *c, uv_loop_t *loop,
                          const gk_net_ws_client_options *opts,
                          const gk_net_ws_client_callbacks *cb);

/* Starts a connection to `url` (parsed as gk_net_ws_url_parse); *conn
 * gets its id. `connect` follows once the 101 is checked, `disconnect`
 * if anything fails. Returns 0, GK_EINVAL (a bad URL), GK_EFULL (every
 * slot is taken), GK_ECLOSED (closing) or GK_EIO (libuv refused). */
int gk_net_ws_client_connect(gk_net_ws_client *c, const char *url,
                             uint32_t *conn);
/* The same with a URL already parsed. */
int gk_net_ws_client_connect_url(gk_net_ws_client *c, const gk_net_ws_url *u,
                                 uint32_t *conn);

/* Sends one binary message (copied). Returns 0; GK_ENOTFOUND for an id
 * that is not open (or is closing); GK_ETOOBIG over GK_WIRE_MAX; GK_EFULL
 * for an unreliable message while the backlog is over opts.backlog (or a
 * reliable one over four times that: the connection is then closed with
 * 1008). Never calls a callback. */
int gk_net_ws_client_send(gk_net_ws_client *c, uint32_t conn,
                          const uint8_t *bytes, size_t len, int reliable);

/* Closes one connection: gracefully (a 1000 close frame after what is
 * queued; `disconnect` follows the server's answer, or close_ms) or at
 * once (TCP closed now, no close frame; `disconnect` runs before this
 * returns). An attempt still in its handshake is always ended at once. */
void gk_net_ws_client_disconnect(gk_net_ws_client *c, uint32_t conn,
                                 int at_once);

/* Round trip from our pings, smoothed, and its mean deviation: ms (0 if
 * unknown), or microseconds (_us). */
uint32_t gk_net_ws_client_rtt(const gk_net_ws_client *c, uint32_t conn);
uint32_t gk_net_ws_client_rtt_var(const gk_net_ws_client *c, uint32_t conn);
uint64_t gk_net_ws_client_rtt_us(const gk_net_ws_client *c, uint32_t conn);

/* Bytes waiting for the socket on `conn` (0 for no such connection). */
size_t gk_net_ws_client_backlog(const gk_net_ws_client *c, uint32_t conn);

/* Stops everything: every connection is ended at once (`disconnect` for
 * each, code 1006 or the attempt's GK_ECLOSED), the handles are closed,
 * and close_cb (may be NULL) runs once they are; then `c` may be freed. */
void gk_net_ws_client_close(gk_net_ws_client *c,
                            void (*close_cb)(gk_net_ws_client *c));

#endif
