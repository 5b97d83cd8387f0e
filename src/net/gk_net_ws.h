/* gk_net_ws.h: a WebSocket listener on a libuv loop (browser players).
 *
 * Browsers cannot send UDP; this is the same lockstep protocol over
 * WebSocket (RFC 6455), one wire message per binary frame, the same bytes
 * as over ENet (docs/PROTOCOL.md, "WebSocket framing").
 *
 * Built on two maintained Debian libraries:
 *   - libmicrohttpd (MHD_USE_EPOLL, MHD_ALLOW_UPGRADE) parses the HTTP
 *     upgrade request; its epoll descriptor sits under a uv_poll and a
 *     uv_timer fires at MHD_get_timeout, as in the admin listener. The
 *     handshake is checked here (path, Upgrade, version 13, key, Origin,
 *     subprotocol, slots) and answered 101 with
 *     MHD_create_response_for_upgrade, or refused with an HTTP status.
 *   - wslay (libwslay1) does the framing on a uv_poll of the upgraded
 *     socket: masks, control frames, fragments, UTF-8 of close reasons,
 *     the close handshake. TCP_NODELAY is set on every connection, and
 *     a frame's header is held until wslay hands over its payload, so
 *     both go in one sendmsg, one segment (wslay writes them in two
 *     calls: as two send()s without TCP_NODELAY, Nagle and delayed ACKs
 *     cost about 45 ms a message). TCP_NOTSENT_LOWAT keeps the kernel's
 *     unsent bytes small, so a backlog waits in our queue instead, where
 *     the newest INPUT/CONFIRMED replaces an older one.
 * The accept key (gk_net_ws_key.h, shared with the client) uses
 * nettle's SHA-1 and base64 (a dependency of
 * libmicrohttpd's GnuTLS already).
 *
 * Everything runs on the loop thread but the reads of static files'
 * bytes (libuv's thread pool, gk_net_ws_static.c). No callback runs
 * inside libmicrohttpd, and none inside a call of this API but the
 * at-once gk_net_ws_disconnect and gk_net_ws_close (`disconnect`, before
 * they return), and `admit`, `trusted` and `json_get`, questions asked
 * inside libmicrohttpd.
 *
 * Connections are named by a 32-bit id, (generation << 16) | slot, valid
 * from the `connect` callback until the `disconnect` callback; a stale id
 * is refused (GK_ENOTFOUND), not taken for a newer connection in its
 * slot (until the slot's 16-bit generation wraps, 65,536 later).
 *
 * Sending: every connection has a bounded queue of messages not yet
 * handed to the kernel (opts.queue_len messages, opts.queue_bytes bytes:
 * room for a burst such as a snapshot's chunks, sent all at once). An
 * unreliable message whose type is one of opts.replace_types replaces a queued
 * one of the same type in place (the protocol repeats every unacknowledged
 * record in INPUT and CONFIRMED, so nothing is lost and a slow reader gets the
 * newest one). A send that finds the queue full of other messages (either
 * bound) closes the connection with 1008 (close_slow): a slow reader costs
 * neither latency nor memory without bound.
 *
 * Close codes this side sends (counted in the stats):
 *   1000  gk_net_ws_disconnect, graceful   close_local
 *   1001  the listener closes (gk_net_ws_close; best effort: sent if
 *         the socket takes it at once)   close_local
 *   1002  protocol error (unmasked frame, bad opcode, bad close code,
 *         continuation out of place: wslay's checks)   close_protocol
 *   1003  a text frame                     close_text
 *   1007  bad UTF-8 in a close reason or text frame  close_utf8
 *   1008  slow reader (send queue full, control frames piling up)
 *                                          close_slow
 *   1009  a message over opts.max_msg      close_too_big
 * A connection silent for opts.timeout_ms is cut (close_timeout); one
 * whose TCP ends without a close frame is close_abnormal (reason 1006).
 *
 * Static files (opts.static_dir): every other path of the same port is
 * a plain HTTP GET or HEAD of a file under that directory (a browser
 * loads the page and its scripts from the origin it then opens the
 * WebSocket to). Paths are clean or refused: only [A-Za-z0-9._~-/]
 * after %-decoding (a %00 or bad escape is refused, never cut), no
 * "." or ".." segment, no "//", at most GK_NET_WS_URL_MAX bytes;
 * segments beginning with '.' are not found; a file whose realpath
 * leaves the directory's (a symlink out) is not found; '/' ends mean
 * index.html and nothing is listed; only regular files up to
 * opts.static_max bytes. Answers: 200 (ETag, Cache-Control: no-cache,
 * X-Content-Type-Options: nosniff, a MIME type by extension: html, js,
 * mjs, wasm as application/wasm, css, json, png, svg, ...), 304 for a
 * matching If-None-Match, 301 to add a directory's '/', 400, 403 (too
 * large), 404, 405 (Allow: GET, HEAD), 414; each counted in the stats.
 * Without static_dir another path is 404 as before.
 *
 * JSON paths (callbacks.json_get): a path the caller serves is asked of
 * it before the static files, so a page reads data from the origin it was
 * loaded from (same origin: no CORS). The listener does the HTTP: 405
 * (Allow: GET, HEAD) for another method, 400 for a request body or more
 * than GK_NET_WS_ARGS_MAX query arguments, then the caller's answer: 200
 * with its JSON, 400 with its reason, 500; every answer has
 * Cache-Control: no-store and X-Content-Type-Options: nosniff, and is
 * counted (api_ok, api_bad, api_err; 405 in http_method).
 */
#ifndef GK_NET_WS_H
#define GK_NET_WS_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>
#include <uv.h>

#define GK_NET_WS_ORIGINS_MAX 8
#define GK_NET_WS_REPLACE_MAX 8
#define GK_NET_WS_STR_MAX 128  /* path, subprotocol, each origin, NUL in */
#define GK_NET_WS_URL_MAX 1024 /* a static file's decoded path, bytes */

#define GK_NET_WS_ARGS_MAX 8 /* query arguments of a JSON path's request */

typedef struct gk_net_ws gk_net_ws;
typedef struct gk_net_ws_conn gk_net_ws_conn;

/* One query argument, %-decoded (a bad or NUL escape is byte 0x01, as in
 * paths); value NULL for an argument without '='. */
typedef struct gk_net_ws_arg {
  const char *key, *value;
} gk_net_ws_arg;

typedef struct gk_net_ws_callbacks {
  void *ctx;
  /* Must be non-NULL. One binary message from `conn`; valid for the call
   * only. */
  void (*receive)(void *ctx, gk_net_ws *w, uint32_t conn, const uint8_t *bytes,
                  size_t len);
  /* May be NULL. A connection finished its handshake; `addr` is the
   * remote address (sockaddr_in or sockaddr_in6), valid for the call. */
  void (*connect)(void *ctx, gk_net_ws *w, uint32_t conn,
                  const struct sockaddr *addr);
  /* May be NULL. A connection is gone; `reason` is a close code: ours if
   * this side began the close, the peer's if it did, 1006 if TCP ended
   * (or timed out) without a close frame. The id is dead afterwards. */
  void (*disconnect)(void *ctx, gk_net_ws *w, uint32_t conn, int reason);
  /* May be NULL (every good handshake is taken). Asked about a good
   * handshake before its 101, from inside libmicrohttpd: it must not
   * call this API. `addr` is the remote address. Returns 0 to take it,
   * GK_ELIMIT to refuse it 429 (a per-address limit: hs_limit), anything
   * else to refuse it 503 (full: hs_full). */
  int (*admit)(void *ctx, gk_net_ws *w, const struct sockaddr *addr);
  /* May be NULL (no proxy is trusted). 1 if the TCP peer `addr` is a
   * trusted reverse proxy, from inside libmicrohttpd (must not call this
   * API). A trusted peer is not held to opts.per_ip at accept, and the
   * last address of its upgrade's X-Forwarded-For (the one the proxy
   * added) is the client's: `admit` and `connect` get that address, and
   * gk_net_ws_peer_addr gives it; no header: the proxy's own; a last entry
   * that is not an IPv4 or IPv6 literal: 400 (hs_forwarded). From any
   * other peer the header is ignored. */
  int (*trusted)(void *ctx, gk_net_ws *w, const struct sockaddr *addr);
  /* May be NULL (no JSON paths). Asked, from inside libmicrohttpd (must
   * not call this API), about every request of a path other than the
   * WebSocket one, before the static files. `path` is %-decoded, without
   * the query. With body == NULL: only whether the path is served (0) or
   * not (GK_ENOTFOUND: static files, or 404). Otherwise (a GET or HEAD)
   * the answer: 0 and *body a malloc'd JSON text (200, application/json),
   * GK_EINVAL and *body a malloc'd JSON reason or NULL (400), anything
   * else 500; the listener frees *body. Must not block (no I/O): it
   * answers from memory. */
  int (*json_get)(void *ctx, gk_net_ws *w, const char *path,
                  const gk_net_ws_arg *args, size_t n_args, char **body);
} gk_net_ws_callbacks;

typedef struct gk_net_ws_options {
  const char *host;           /* IPv4 or IPv6 literal; NULL -> "127.0.0.1" */
  uint16_t port;              /* 0 -> an ephemeral port (see gk_net_ws.port) */
  const char *path;           /* the URL path; NULL -> "/play" */
  const char *const *origins; /* allowed Origin values, exact match */
  size_t n_origins;           /* 0 -> any Origin (and none) is allowed */
  const char *subprotocol;    /* required; NULL -> "gamekit.1" */
  uint32_t max_conns;         /* WebSocket connections at once; 0 -> 64; more
                                 get HTTP 503 */
  uint32_t handshakes;        /* HTTP connections not yet upgraded, on top of
                                 max_conns; 0 -> 16 (more are closed unanswered
                                 by libmicrohttpd) */
  uint32_t handshake_ms;      /* a whole request within this of the TCP
                                 accept, else the connection is shut,
                                 unanswered (hs_timeout); 0 -> 5000 */
  uint32_t per_ip;            /* TCP connections (a request being read,
                                 upgraded, or closing) from one address at
                                 once; more are closed at accept, before a
                                 byte is read (hs_per_ip); 0 -> no limit */
  uint32_t ping_ms;           /* ping every connection this often; 0 -> off */
  uint32_t timeout_ms;        /* cut a connection silent this long; 0 -> off */
  uint32_t close_ms;          /* after our close frame, wait this long for the
                                 peer's; 0 -> 1000 */
  size_t max_msg;             /* incoming message limit; 0 -> GK_WIRE_MAX */
  uint32_t queue_len; /* send queue per connection, messages at most; 0 ->
                         4096 (its ring starts at 64 and doubles as
                         needed, so an idle connection keeps 64) */
  size_t queue_bytes; /* ... and payload bytes at most; 0 -> 1 MiB */
  uint8_t replace_types[GK_NET_WS_REPLACE_MAX]; /* wire types (the second
                            byte of a message) that replace, when sent
                            unreliable */
  size_t n_replace;
  int sndbuf;     /* SO_SNDBUF of each connection, bytes; 0 -> the kernel's */
  int unsent_max; /* TCP_NOTSENT_LOWAT: bytes the kernel may hold unsent
                     before a send would block, so the rest waits in our
                     queue where it can be replaced; 0 -> 16384, < 0 ->
                     the kernel's (unbounded: seconds of backlog) */
  const char *static_dir; /* serve files from this directory on the other
                             paths (see above; resolved at init, so it
                             may go after); NULL or "" -> none */
  uint64_t static_max;    /* the largest file served, bytes; 0 -> 64 MiB */
} gk_net_ws_options;

typedef struct gk_net_ws_stats {
  uint64_t msgs_in, bytes_in;   /* binary messages delivered, payload */
  uint64_t msgs_out, bytes_out; /* binary messages handed to the kernel */
  uint64_t wire_in, wire_out;   /* socket bytes after the handshake */
  uint64_t reads;               /* recv calls that wslay's reading made */
  uint64_t replaced;            /* queued messages replaced by a newer one */
  uint64_t drop_send;           /* sends refused, all reasons (the sum below) */
  uint64_t drop_gone;           /* no such connection, or it is closing */
  uint64_t drop_big;            /* over max_msg (or bad arguments) */
  uint64_t drop_full;           /* the queue was full: the 1008 close follows */
  uint64_t drop_lost; /* queued, then cut by a close (1008, an error, at
                         once) or out of memory */
  uint64_t drop_in;   /* incoming messages after a close began */
  uint64_t queue_max; /* the longest send queue seen */
  uint64_t connects, disconnects;
  uint64_t pings, pongs; /* our pings sent; their pongs matched */
  uint64_t pings_rode;   /* of the pings, those sent with a data message */
  uint64_t writes;       /* sendmsg calls on upgraded connections */
  uint64_t mhd_runs;     /* MHD_run calls (handshakes, cleanup) */
  /* handshakes: answered 101, and refused by the reason (HTTP status) */
  uint64_t hs_ok;
  uint64_t hs_path;      /* 404: another path */
  uint64_t hs_method;    /* 405: not GET */
  uint64_t hs_upgrade;   /* 400: no Upgrade/Connection, bad key, not 1.1 */
  uint64_t hs_version;   /* 426: Sec-WebSocket-Version is not 13 */
  uint64_t hs_protocol;  /* 400: the subprotocol was not offered */
  uint64_t hs_origin;    /* 403: Origin not allowed */
  uint64_t hs_full;      /* 503: max_conns connections already (or admit) */
  uint64_t hs_limit;     /* 429: admit refused it for a per-address limit */
  uint64_t hs_per_ip;    /* closed at accept: per_ip from that address */
  uint64_t hs_timeout;   /* shut unanswered: no whole request in handshake_ms */
  uint64_t hs_forwarded; /* 400: a trusted proxy's bad X-Forwarded-For */
  /* static files (opts.static_dir), by answer */
  uint64_t http_ok, http_304, http_301;
  uint64_t http_bad;     /* 400: a body, a bad byte or segment */
  uint64_t http_missing; /* 404 */
  uint64_t http_big;     /* 403: over static_max */
  uint64_t http_method;  /* 405: not GET or HEAD */
  uint64_t http_long;    /* 414: over GK_NET_WS_URL_MAX */
  /* JSON paths (callbacks.json_get), by answer; 405 is http_method */
  uint64_t api_ok;  /* 200 */
  uint64_t api_bad; /* 400: a body, too many arguments, or the caller's */
  uint64_t api_err; /* 500: the caller failed (out of memory) */
  /* connections ended, by who and why (see the header comment) */
  uint64_t close_local, close_peer, close_protocol, close_text, close_utf8;
  uint64_t close_slow, close_too_big, close_timeout, close_abnormal;
} gk_net_ws_stats;

struct gk_net_ws {
  /* read-only for callers */
  gk_net_ws_stats stats;
  uint16_t port; /* the bound port */
  int sys_err;   /* after init's GK_EIO: why, as a libuv error code
                    (UV_EADDRINUSE: the port is taken; uv_strerror names
                    it), or 0 if not known */
  /* private */
  uv_loop_t *loop;
  void *daemon; /* struct MHD_Daemon */
  gk_net_ws_callbacks cb;
  gk_net_ws_options opts;
  char path[GK_NET_WS_STR_MAX];
  char proto[GK_NET_WS_STR_MAX];
  char origins[GK_NET_WS_ORIGINS_MAX][GK_NET_WS_STR_MAX];
  char *static_root;         /* realpath of static_dir (malloc), or NULL */
  size_t static_len;         /* its length; 0 for "/" */
  gk_net_ws_conn *conns;     /* max_conns slots */
  struct gk__ws_tcp *tcp;    /* max_conns + handshakes TCP connections */
  uint32_t used;             /* slots not free (handshake, open, closing) */
  uint32_t pending;          /* upgraded, `connect` not run yet */
  uv_poll_t poll;            /* MHD's epoll descriptor */
  uv_timer_t mhd_timer;      /* MHD_get_timeout, and kicks */
  uv_timer_t tick;           /* pings, timeouts, close deadlines */
  int handles;               /* listener and connection handles still open */
  int in_mhd;                /* inside MHD_run */
  uint32_t unclosed;         /* upgraded sockets handed back to MHD to close,
                                not closed by it yet */
  struct gk__ws_file *files; /* static files being sent (a list) */
  int closing;
  void (*close_cb)(gk_net_ws *w);
};

/* Starts listening. Returns 0, GK_EINVAL (bad options: host not a
 * literal, a string too long, too many origins or types, max_conns over
 * 65535), GK_ENOTFOUND (static_dir is not a directory), GK_EIO (cannot
 * listen, e.g. port in use: w->sys_err says which) or GK_ENOMEM. */
int gk_net_ws_init(gk_net_ws *w, uv_loop_t *loop, const gk_net_ws_options *opts,
                   const gk_net_ws_callbacks *cb);

/* Queues one binary message (copied) and writes what the socket takes.
 * `type` is the message's wire type: with reliable == 0 and a type in
 * opts.replace_types, it replaces a queued message of that type. Returns
 * 0; GK_ENOTFOUND for an id with no open connection (or one closing);
 * GK_ETOOBIG over max_msg; GK_EFULL when the queue was full, and the
 * connection is then being closed with 1008. Never calls a callback. */
int gk_net_ws_send(gk_net_ws *w, uint32_t conn, const uint8_t *bytes,
                   size_t len, int reliable, uint8_t type);

/* Closes one connection: gracefully (what is queued first, then a 1000
 * close frame; `disconnect` follows the peer's answer, or close_ms) or
 * at once (the socket is closed now, no close frame; `disconnect` runs
 * before this returns, like gk_net_transport_disconnect). Either way
 * the id is refused by send from the call on. */
void gk_net_ws_disconnect(gk_net_ws *w, uint32_t conn, int at_once);

/* Round trip measured by our pings (RFC 6455 ping/pong with a timestamp
 * payload), smoothed as TCP does (RFC 6298: 1/8 of each sample; the
 * first sample is the estimate), and its mean deviation, in ms; 0 if no
 * pong came yet. The _us forms give microseconds. */
uint32_t gk_net_ws_rtt(const gk_net_ws *w, uint32_t conn);
uint32_t gk_net_ws_rtt_var(const gk_net_ws *w, uint32_t conn);
uint64_t gk_net_ws_rtt_us(const gk_net_ws *w, uint32_t conn);
uint64_t gk_net_ws_rtt_var_us(const gk_net_ws *w, uint32_t conn);

/* The remote address of `conn` into *out (its length into *len); returns
 * 0 or GK_ENOTFOUND. gk_net_ws_peer_ipv4: the IPv4 address in host byte
 * order (0 for none or IPv6), as gk_net_transport_peer_ipv4. */
int gk_net_ws_peer_addr(const gk_net_ws *w, uint32_t conn,
                        struct sockaddr_storage *out, socklen_t *len);
uint32_t gk_net_ws_peer_ipv4(const gk_net_ws *w, uint32_t conn);

/* Messages waiting in `conn`'s send queue (0 for no such connection). */
uint32_t gk_net_ws_queued(const gk_net_ws *w, uint32_t conn);

/* Stops everything: every connection is closed at once (`disconnect`
 * for each), the listener and its handles are closed, and close_cb (may
 * be NULL) runs once they are; then `w` may be freed. */
void gk_net_ws_close(gk_net_ws *w, void (*close_cb)(gk_net_ws *w));

#endif
