/* gk_net_peer_state.c: the peer's side of desync forensics.
 *
 * The peer keeps a gk_history of its run (fed after every step by
 * gk_net_peer.c, marked after anything that changes the run between
 * frames: gk_net_peer_after_step's call, a snapshot it adopts) whose
 * window covers its hash ring, so that it can answer the host's
 * STATE_REQUEST for any step it may still be told it desynced at. The
 * answer is STATE_BEGIN, then the state in bounded, checksummed
 * STATE_CHUNKs (gk_net_chunk.h) over the reliable channel; a step outside
 * the history (or a state over the wire's limit) is a STATE_BEGIN with a
 * status and no chunks.
 *
 * options.state_fault lets tests make a peer that never answers, answers
 * garbage or says it cannot (GK_ENOTKEPT), so the host's handling of each is
 * tested over real ENet (tests/server/test_desync.c).
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_internal.h"

int gk__peer_history_open(gk_net_peer *p, uint32_t players) {
  gk_history_options o = p->opts.history;
  if (o.window == 0) o.window = p->opts.hash_ring + 64u;
  int rc = gk_history_init(&p->hist, p->sim, p->sim_cfg, players, &o);
  if (rc == 0) rc = gk_history_mark(&p->hist, &p->loop);
  if (rc != 0) gk_history_close(&p->hist);
  return rc;
}

/* STATE_BEGIN and the chunks; `corrupt` changes chunk 0's bytes after its
 * checksum was taken (a test fault). */
static int send_state(gk_net_peer *p, gk_wire_msg *m, const uint8_t *bytes,
                      int corrupt) {
  const gk_wire_state_begin *b = &m->u.state_begin;
  int rc = gk_net_peer_send_msg(p, p->now, m);
  uint8_t copy[GK_CHUNK_BYTES_MAX];
  for (uint32_t i = 0; rc == 0 && b->status == 0 && i < b->chunks; i++) {
    gk_wire_msg c;
    gk_wire_chunk_msg(&c, GK_MSG_STATE_CHUNK, b->id, bytes, b->total,
                      b->chunk_size, i);
    size_t n = c.u.snap_chunk.len;
    if (corrupt && i == 0 && n > 0) {
      memcpy(copy, c.u.snap_chunk.bytes, n);
      copy[n / 2] ^= 0x5a;
      c.u.snap_chunk.bytes = copy;
    }
    rc = gk_net_peer_send_msg(p, p->now, &c);
  }
  return rc;
}

int gk__peer_on_state_request(gk_net_peer *p, const gk_wire_state_request *q) {
  if (!p->started || p->await_snapshot) {
    p->stats.drop_unexpected++;
    return GK_ESTATE;
  }
  p->stats.state_requests++;
  int fault = p->opts.state_fault;
  if (fault == GK_NET_PEER_STATE_SILENT) return 0;
  uint8_t *bytes = NULL;
  size_t len = 0;
  uint64_t hash = 0;
  int rc =
      gk_history_state_at(&p->hist, q->step + 1, &bytes, &len, &hash, NULL, 0);
  if (rc == 0 && len > GK_WIRE_SNAP_TOTAL_MAX) rc = GK_ETOOBIG;
  if (rc == 0 && fault == GK_NET_PEER_STATE_GARBAGE) len /= 2;
  if (rc == 0 && fault == GK_NET_PEER_STATE_CANNOT) {
    free(bytes);
    bytes = NULL;
    rc = GK_ENOTKEPT;
  }
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STATE_BEGIN;
  gk_wire_state_begin *b = &m.u.state_begin;
  b->id = q->id;
  b->step = q->step;
  b->from = p->hist.first > 0 ? p->hist.first - 1 : 0;
  b->to = p->hist.last > 0 ? p->hist.last - 1 : 0;
  if (b->from > b->to) b->from = b->to;
  if (rc != 0) {
    b->status = (int16_t)rc;
    p->stats.state_refused++;
  } else {
    static const uint8_t none[1];
    const uint8_t *data = bytes != NULL ? bytes : none;
    b->hash = hash;
    b->total = (uint32_t)len;
    b->chunk_size = GK_WIRE_SNAP_CHUNK_MAX;
    b->chunks = gk_chunk_count(len, GK_WIRE_SNAP_CHUNK_MAX);
    b->sum = gk_chunk_sum(data, len);
    p->stats.state_bytes += len;
    rc = send_state(p, &m, data, fault == GK_NET_PEER_STATE_CORRUPT);
    free(bytes);
    return rc;
  }
  return gk_net_peer_send_msg(p, p->now, &m);
}
