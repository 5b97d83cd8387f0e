/* gk_net_ws_client_internal.h: what gk_net_ws_client.c (slots, URL,
 * TCP, the handshake) and gk_net_ws_client_conn.c (framing, sends, pings,
 * closes) share. Not for callers of gk_net_ws_client.h. */
#ifndef GK_NET_WS_CLIENT_INTERNAL_H
#define GK_NET_WS_CLIENT_INTERNAL_H

#include <stdint.h>

#include "gk_net_ws_client.h"
#include "gk_net_ws_key.h"

#define GK__WSC_WHY_MAX 224

enum gk__wsc_state {
  GK__WSC_FREE = 0,
  GK__WSC_TCP,       /* uv_tcp_connect under way */
  GK__WSC_HANDSHAKE, /* request sent, reading the 101 */
  GK__WSC_OPEN,      /* framing (closing included) */
  GK__WSC_DEAD       /* ended: the TCP handle is closing */
};

struct gk__wsc_conn {
  gk_net_ws_client *c;
  uint32_t gen; /* bumped when the slot is freed */
  uint8_t state;
  uint8_t pend_len; /* a frame header held for its payload */
  uint8_t pend[16];
  uint16_t code; /* the close code we sent (0: none) */
  uv_tcp_t tcp;
  uv_connect_t creq;
  gk_net_ws_url url;
  char key[GK_NET_WS_KEY_LEN + 1];
  char accept[GK_NET_WS_ACCEPT_LEN + 1]; /* what the 101 must say */
  char *hs; /* the response so far (HS_MAX), while HANDSHAKE */
  size_t hs_len;
  void *ws;          /* wslay_event_context_ptr, once OPEN */
  const uint8_t *in; /* bytes wslay may read now */
  size_t in_len;
  char why[GK__WSC_WHY_MAX]; /* why we began the close */
  uint64_t due_ms;           /* handshake deadline, then the close's */
  uint64_t last_in_ms;       /* last byte from the server */
  uint64_t ping_due_ms;      /* next ping */
  uint64_t ping_ns;          /* payload of the ping in flight (0: none) */
  uint64_t srtt_us, rttvar_us;
};

/* gk_net_ws_client.c */
uint32_t gk__wsc_id(const gk_net_ws_client *c, const gk__wsc_conn *k);
gk__wsc_conn *gk__wsc_lookup(const gk_net_ws_client *c, uint32_t id);
/* Ends the connection or attempt now: TCP closed, `disconnect` with the
 * end (err for an attempt, code for an open one), slot freed once the
 * handle is closed. */
void gk__wsc_drop(gk__wsc_conn *k, int err, int code, int status,
                  const char *why);
void gk__wsc_handle_closed(gk_net_ws_client *c);

/* gk_net_ws_client_conn.c */
/* Bytes to the socket: what it takes now, the rest queued in libuv (in
 * order). 0, or -1 if libuv refused. */
int gk__wsc_write(gk__wsc_conn *k, const uv_buf_t *bufs, unsigned n);
/* The 101 was good: the wslay client context. 0 or GK_ENOMEM. */
int gk__wsc_conn_open(gk__wsc_conn *k);
/* Frees what the open connection held (wslay's context). */
void gk__wsc_conn_free(gk__wsc_conn *k);
/* Bytes from the socket into wslay; messages, pongs, closes follow. */
void gk__wsc_conn_in(gk__wsc_conn *k, const uint8_t *p, size_t n);
/* TCP ended (UV_EOF) or failed while open. */
void gk__wsc_conn_eof(gk__wsc_conn *k, ssize_t n);
/* Begins our close with `code` (a close frame; the server's answer or
 * close_ms ends it). */
void gk__wsc_conn_fail(gk__wsc_conn *k, uint16_t code, const char *why);
/* Deadlines and pings of an open connection. */
void gk__wsc_conn_tick(gk__wsc_conn *k, uint64_t now_ms);

#endif
