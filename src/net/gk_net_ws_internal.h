/* gk_net_ws_internal.h: what gk_net_ws.c (listener, handshake) and
 * gk_net_ws_conn.c (framing, queue, pings, close) share. Not for callers
 * of gk_net_ws.h. */
#ifndef GK_NET_WS_INTERNAL_H
#define GK_NET_WS_INTERNAL_H

#include <stdint.h>

#include "gk_net_ws.h"

enum gk__ws_state {
  GK__WS_FREE = 0,
  GK__WS_HANDSHAKE, /* 101 queued, the upgraded socket not handed over yet */
  GK__WS_OPEN,      /* framing; closing (ours or the peer's) is within this */
  GK__WS_DEAD       /* dropped: the poll handle is closing */
};

/* Why a connection ends, for the counters. */
enum gk__ws_kind {
  GK__WK_NONE = 0,
  GK__WK_LOCAL,
  GK__WK_PEER,
  GK__WK_PROTOCOL,
  GK__WK_TEXT,
  GK__WK_UTF8,
  GK__WK_SLOW,
  GK__WK_TOO_BIG,
  GK__WK_TIMEOUT,
  GK__WK_ABNORMAL
};

/* One TCP connection libmicrohttpd holds (a request being read, a 101
 * going out, or upgraded), from its NOTIFY_STARTED to its NOTIFY_CLOSED:
 * the per-address count at accept, and the whole-request deadline. */
typedef struct gk__ws_tcp {
  uint8_t used;
  uint8_t upgraded; /* handed to a slot: no deadline */
  uint8_t cut;      /* shut down at its deadline, MHD closing it */
  uint8_t fam;      /* AF_INET (IPv4-mapped IPv6 included) or AF_INET6 */
  uint8_t ip[16];
  int fd;
  uint64_t since_ms;
} gk__ws_tcp;

typedef struct gk__ws_msg {
  uint8_t *data;
  uint32_t len;
  uint8_t type;
  uint8_t replace; /* may be replaced by a newer one of its type */
} gk__ws_msg;

struct gk_net_ws_conn {
  gk_net_ws *w;
  uint32_t gen;         /* bumped when the slot is freed */
  uint8_t state;        /* enum gk__ws_state */
  uint8_t kind;         /* enum gk__ws_kind once a close is decided */
  uint8_t graceful;     /* close frame once the queue drains */
  uint8_t announced;    /* `connect` ran: `disconnect` is owed */
  uint8_t broken;       /* a socket error seen inside a call: drop soon */
  uint8_t wslay_closed; /* wslay queued a close of its own (protocol) */
  uint8_t wr_shut;      /* shutdown(SHUT_WR) done after our close frame */
  uint8_t eof;          /* the peer ended its side of TCP */
  uint16_t code;        /* the close code we decided (0: none yet) */
  uint8_t pend_len;     /* bytes held for the next sendmsg: a frame's */
  uint8_t pend[32];     /* header for its payload (wslay writes the two in
                           two calls), and a riding ping ahead of them */
  uint8_t hold;         /* bytes of the riding ping frame still to hold */
  uint8_t ping_ride;    /* a ping waits for the next data message */
  int fd;
  void *hs_conn; /* struct MHD_Connection, while GK__WS_HANDSHAKE */
  void *urh;     /* struct MHD_UpgradeResponseHandle */
  void *ws;      /* wslay_event_context_ptr */
  uv_poll_t poll;
  int events;                   /* what the poll watches now */
  struct sockaddr_storage addr; /* the client's: the TCP peer's, or the
                                   one a trusted proxy forwarded (fwd) */
  socklen_t addr_len;
  struct sockaddr_storage fwd; /* set at the handshake when fwd_len != 0 */
  socklen_t fwd_len;
  uint8_t *extra; /* bytes libmicrohttpd read past the request */
  size_t extra_len, extra_off;
  size_t read_budget; /* bytes left for this wake-up (fairness) */
  int drained;        /* a read this wake-up came back short: the socket
                         had no more then (what came since wakes the poll) */
  gk__ws_msg *q;      /* ring of qcap (<= opts.queue_len) */
  uint32_t qhead, qlen, qcap;
  size_t qbytes;        /* payload bytes in the ring */
  uint64_t due_ms;      /* handshake deadline, then close deadline */
  uint64_t last_in_ms;  /* last byte from the peer */
  uint64_t ping_due_ms; /* next ping */
  uint64_t ride_due_ms; /* a waiting ping goes alone after this */
  uint64_t data_ms;     /* the last data message handed to wslay */
  uint64_t ping_ns;     /* payload of the ping in flight (0: none) */
  uint64_t srtt_us, rttvar_us;
};

/* gk_net_ws_conn.c */
uint32_t gk__ws_id(const gk_net_ws *w, const gk_net_ws_conn *c);
gk_net_ws_conn *gk__ws_lookup(const gk_net_ws *w, uint32_t id);
/* The upgraded socket: wslay context, poll, TCP_NODELAY. 0 or GK_E*. */
int gk__ws_conn_open(gk_net_ws_conn *c, int fd, void *urh, const char *extra,
                     size_t extra_len);
/* After MHD_run: `connect`, then the bytes MHD read ahead. */
void gk__ws_conn_start(gk_net_ws_conn *c);
/* Decides a close with a code (a close frame, then the close handshake
 * bounded by close_ms); drops at once if the socket is gone. */
void gk__ws_conn_fail(gk_net_ws_conn *c, uint16_t code, enum gk__ws_kind kind);
/* Ends the connection now: socket closed, `disconnect`, slot freed once
 * the poll handle is closed. */
void gk__ws_conn_drop(gk_net_ws_conn *c, int reason, enum gk__ws_kind kind);
/* The listener closes: a 1001 close frame if the socket takes it now
 * (what is queued is not waited for), then the drop. */
void gk__ws_conn_going_away(gk_net_ws_conn *c);
/* Writes what the queue and wslay hold, as far as the socket takes. */
void gk__ws_conn_pump(gk_net_ws_conn *c);
/* The tick: pings, timeouts, close and handshake deadlines. */
void gk__ws_conn_tick(gk_net_ws_conn *c, uint64_t now_ms);
int gk__ws_conn_queue(gk_net_ws_conn *c, const uint8_t *bytes, size_t len,
                      int replace, uint8_t type);

/* gk_net_ws.c */
void gk__ws_kick_mhd(gk_net_ws *w);
/* Hands an upgraded socket back to libmicrohttpd to close (urh: its
 * struct MHD_UpgradeResponseHandle) and runs MHD until it has. */
void gk__ws_upgrade_close(gk_net_ws *w, void *urh);
void gk__ws_slot_free(gk_net_ws_conn *c);
/* A handle closed: the last one of a closing listener frees the table and
 * runs close_cb. */
void gk__ws_handle_closed(gk_net_ws *w);

/* gk_net_ws_static.c. The listener's unescape callback for
 * libmicrohttpd (MHD_UnescapeCallback): %XX decoded in place, a NUL or
 * a malformed escape made a byte (0x01) that no path check accepts. */
struct MHD_Connection;
size_t gk__ws_unescape(void *cls, struct MHD_Connection *mc, char *s);
/* The MIME type of a file name by its extension. */
const char *gk__ws_mime(const char *name);
/* Resolves dir (NULL or "" -> none) into w->static_root: 0, GK_ENOTFOUND
 * (not a directory) or GK_EINVAL (too long). */
int gk__ws_static_init(gk_net_ws *w, const char *dir);
/* Answers one request for a path other than the WebSocket one (returns
 * libmicrohttpd's enum MHD_Result as an int). */
int gk__ws_static(gk_net_ws *w, struct MHD_Connection *mc, const char *url,
                  const char *method);
/* 1 if the request announces a body (Content-Length other than 0, or
 * Transfer-Encoding). */
int gk__ws_has_body(struct MHD_Connection *mc);
/* Before the daemon stops: every file answer waiting for a read is let
 * go on by libmicrohttpd (a suspended connection may not outlive it). */
void gk__ws_static_close(gk_net_ws *w);

/* gk_net_ws_json.c. Answers a request for a JSON path the caller
 * serves (callbacks.json_get; returns libmicrohttpd's enum MHD_Result as
 * an int), or returns -1 if the caller serves no such path. */
int gk__ws_json(gk_net_ws *w, struct MHD_Connection *mc, const char *url,
                const char *method);

#endif
