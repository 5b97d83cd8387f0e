/* gk_server_link.h: links, the server's one face of a connection,
 * whatever carries it: ENet (gk_server_link_enet.c) or WebSocket
 * (gk_server_link_ws.c, when websocket.enabled). Internal to gk-server
 * (included by gk_server_internal.h).
 *
 * The shape is Redis's ae.c and ENet's own: one API, several backends
 * behind it. A backend owns its link objects; each begins with an
 * sv_link (the base, embedded first, so the backend casts an sv_link *
 * back to its own type) whose `ops` is the backend's static vtable. The
 * rest of the server sees only the base and calls the sv_link_* wrappers
 * below, never a backend. Calls that can fail return 0 or a negative
 * gk_err code.
 *
 * A backend's listener (ENet: its host) begins with an sv_link_host,
 * registered with the server when it opens (sv_link_host_add): its
 * totals feed the metrics and the "stopped" record, and the server closes
 * and frees it at shutdown.
 *
 * The life of a link, as the backend reports it to the server (the
 * functions are in gk_server_route.c):
 *   sv_link_up     the link is connected; the server gives it a
 *                  connection id (l->conn) or closes it at once, before
 *                  sv_link_up returns;
 *   sv_link_data   one whole wire message from it (one datagram);
 *   sv_link_down   it is gone (closed by either side, or timed out): the
 *                  server forgets it; the backend may then reuse it.
 * Connection ids are the server's (gk_server_link.c: a slot and a
 * generation), not a backend's: a backend maps its own peers to its link
 * objects.
 */
#ifndef GK_SERVER_LINK_H
#define GK_SERVER_LINK_H

#include <stddef.h>
#include <stdint.h>

struct gk_server;
typedef struct sv_link sv_link;
typedef struct sv_link_host sv_link_host;

#define SV_NO_CONN UINT32_MAX /* no connection (= GK_ROOM_NO_CONN) */
#define SV_LINK_ADDR_MAX 48   /* the address as text, NUL included (IPv6) */
#define SV_LINK_HOSTS_MAX 4   /* backends a server may run at once */

/* What one link carried. Counted by sv_link_send (out: messages queued)
 * and by the server's receive path (in: messages handed to it). */
typedef struct sv_link_stats {
  uint64_t packets_in, bytes_in;
  uint64_t packets_out, bytes_out;
} sv_link_stats;

typedef struct sv_link_ops {
  /* Must be non-NULL: the transport's name, "enet" or "websocket":
   * admin /rooms and the metrics' `transport` label. */
  const char *kind;
  /* 1 if the transport proved the remote address before the first
   * message (a TCP handshake): no reply to such a link is capped to its
   * request's size, a cap meant for spoofable datagrams. */
  int addr_verified;
  /* Must be non-NULL. Queues one whole wire message (bytes are copied),
   * reliable and ordered, or unreliable (it may be lost or reordered).
   * 0, GK_ENOTFOUND if the link is no longer up (closing or gone),
   * GK_ETOOBIG over GK_WIRE_MAX, GK_EIO if the backend refuses. */
  int (*send)(sv_link *l, const uint8_t *bytes, size_t len, int reliable);
  /* Must be non-NULL. Closes the link: gracefully (what is queued is sent
   * first, then the link goes; sv_link_down follows later) or at once (no
   * notice to the other side; sv_link_down runs before close returns).
   * Closing a link that is already closing gracefully is allowed. */
  void (*close)(sv_link *l, int at_once);
  /* May be NULL (unknown: 0). The smoothed round trip in ms, and its
   * variance (mean deviation, ms): the input delay follows them. */
  uint32_t (*rtt_ms)(const sv_link *l);
  uint32_t (*rtt_var_ms)(const sv_link *l);
} sv_link_ops;

/* The base of every link object. The backend fills ops, host, addr,
 * addr_key and hello_len before sv_link_up; the server sets conn. */
struct sv_link {
  const sv_link_ops *ops;
  sv_link_host *host;
  uint32_t conn; /* connection id while the server holds it, else
                    SV_NO_CONN (set by sv_link_up, cleared by _down) */
  /* The remote address: text for logs ("127.0.0.1"), and a key equal for
   * two links from the same source, for the per-IP limits: an IPv4
   * address is its value in host order (127.0.0.1 is 0x7f000001); other
   * families must stay above 2^32 and below 2^63 (bit 63 is the open
   * mode's creator tag, gk_server_auth.c). */
  char addr[SV_LINK_ADDR_MAX];
  uint64_t addr_key;
  /* Bytes of the request that opened the link (ENet: its CONNECT
   * command): until one of its room requests is accepted, no reply to
   * the link is larger than the request that caused it (an abuse limit
   * against spoofed sources; none when ops->addr_verified). */
  size_t hello_len;
  sv_link_stats stats;
};

/* What a backend counted over all its links, closed ones included. */
typedef struct sv_link_host_stats {
  uint64_t packets_in, bytes_in;   /* messages received, before any check */
  uint64_t packets_out, bytes_out; /* messages queued */
  uint64_t drop_oversize;          /* over the size limit: no link saw them */
  uint64_t drains, drain_ns, drain_ns_max; /* service passes and their time
                                              (0 when it has none) */
  /* Socket calls that sent and that read messages (ENet: sendmmsg and
   * recvmmsg, 0 where the kernel has none; WebSocket: sendmsg and recv):
   * messages per call is what batching saves. */
  uint64_t send_calls, read_calls;
} sv_link_host_stats;

typedef struct sv_link_host_ops {
  /* Must be non-NULL: the same name as its links' ops->kind. */
  const char *kind;
  /* Must be non-NULL. Its totals now (valid until it is freed). */
  void (*stats)(const sv_link_host *h, sv_link_host_stats *out);
  /* Must be non-NULL. Shutdown: every link is dropped at once without
   * sv_link_down (the server has forgotten them all), the listener and
   * its handles close, and sv_link_host_closed(h) follows once they are,
   * from a later loop callback, never within close (the last host to
   * close may free the server). */
  void (*close)(sv_link_host *h);
  /* Must be non-NULL. Frees the host after sv_link_host_closed. */
  void (*free)(sv_link_host *h);
} sv_link_host_ops;

/* The base of a backend's listener. */
struct sv_link_host {
  const sv_link_host_ops *ops;
  struct gk_server *srv;
  int open;          /* added and not yet closed */
  uint32_t links;    /* links the server holds now */
  uint64_t links_up; /* links the server took, ever */
};

/* --- a backend tells the server (gk_server_route.c, gk_server_link.c) ---- */

/* The server takes the link (l->conn gets its connection id) or, if it
 * cannot (the connection table is full, a per-IP limit), closes it at
 * once: sv_link_down then runs within this call. While the server is
 * closing, the link is ignored (l->conn stays SV_NO_CONN). */
void sv_link_up(struct gk_server *s, sv_link *l);
/* One message from the link; bytes are valid for the call only. Ignored
 * if the server does not hold the link. */
void sv_link_data(struct gk_server *s, sv_link *l, const uint8_t *bytes,
                  size_t len);
/* The link is gone; the server forgets its connection (its room, its
 * per-IP count). Ignored if the server does not hold the link. */
void sv_link_down(struct gk_server *s, sv_link *l);
/* Registers an opened backend (at most SV_LINK_HOSTS_MAX). 0 or GK_EFULL. */
int sv_link_host_add(struct gk_server *s, sv_link_host *h);
/* The backend's close has completed (see sv_link_host_ops.close). */
void sv_link_host_closed(sv_link_host *h);

/* --- the server calls a link --------------------------------------------- */

static inline int sv_link_send(sv_link *l, const uint8_t *bytes, size_t len,
                               int reliable) {
  int rc = l->ops->send(l, bytes, len, reliable);
  if (rc == 0) {
    l->stats.packets_out++;
    l->stats.bytes_out += len;
  }
  return rc;
}

static inline void sv_link_close(sv_link *l, int at_once) {
  l->ops->close(l, at_once);
}

static inline uint32_t sv_link_rtt(const sv_link *l) {
  return l->ops->rtt_ms != NULL ? l->ops->rtt_ms(l) : 0;
}

static inline uint32_t sv_link_rtt_var(const sv_link *l) {
  return l->ops->rtt_var_ms != NULL ? l->ops->rtt_var_ms(l) : 0;
}

static inline const char *sv_link_kind(const sv_link *l) {
  return l->ops->kind;
}

/* --- connection ids (gk_server_link.c) ------------------------------------
 * A connection id is (generation << 16) | slot: the slot indexes the
 * server's connection table, the generation (1..65535, never 0) grows
 * each time the slot is taken. Free slots are taken in the order they
 * were freed (oldest first), so an id comes back only after its slot was
 * taken 65535 more times, and a slot at all only once every other free
 * slot was. A stale id (its connection gone, its slot perhaps taken
 * again) is never found: whatever still holds one (a room's slot, a
 * spectator, a desync) is told "no such connection". Id 0 and
 * SV_NO_CONN (UINT32_MAX) are never given. */

#define SV_IDS_MAX 65535u /* slots at most (slot 0xffff is never used) */

typedef struct sv_ids {
  uint32_t cap;   /* slots */
  uint16_t *gen;  /* per slot: the generation of its current or last id */
  uint8_t *used;  /* per slot: an id of it is live */
  uint32_t *fifo; /* free slots, a ring, the one freed longest ago first */
  uint32_t head;  /* fifo index of the next slot to take */
  uint32_t nfree;
} sv_ids;

/* cap: 1..SV_IDS_MAX. 0, GK_EINVAL or GK_ENOMEM (nothing to free then). */
int sv_ids_init(sv_ids *t, uint32_t cap);
void sv_ids_free(sv_ids *t);
/* A fresh id into *id. 0, or GK_EFULL when every slot is live. */
int sv_ids_take(sv_ids *t, uint32_t *id);
/* The slot of a live id, or SV_IDS_MAX if the id is not live (stale,
 * never given, out of range, or SV_NO_CONN). */
uint32_t sv_ids_find(const sv_ids *t, uint32_t id);
/* The id is no longer live (a stale id is ignored). */
void sv_ids_give(sv_ids *t, uint32_t id);

#endif
