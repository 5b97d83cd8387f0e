/* gk_room_snapshot.c: the referee's state after its last step, sent to
 * one connection over the reliable channel: SNAPSHOT_BEGIN (the step, its
 * hash, the next input the connection will get, the active players),
 * then bounded, checksummed chunks (gk_net_chunk.h). The one sender of
 * snapshots: a rejoiner's (gk_room_rejoin.c), a late joiner's
 * (gk_room_join.c) and a spectator's (gk_room_spectate.c).
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_room_internal.h"
#include "gk_state.h"

static int send_chunks(gk_room_host *h, uint32_t peer, const gk_wire_msg *begin,
                       const uint8_t *bytes) {
  const gk_wire_snap_begin *b = &begin->u.snap_begin;
  int rc = gk_room__send(h, peer, begin);
  for (uint32_t i = 0; rc == 0 && i < b->chunks; i++) {
    gk_wire_msg m;
    gk_wire_chunk_msg(&m, GK_MSG_SNAPSHOT_CHUNK, b->id, bytes, b->total,
                      b->chunk_size, i);
    rc = gk_room__send(h, peer, &m);
  }
  return rc;
}

int gk_room__snapshot_send(gk_room_host *h, gk_room *r, uint32_t peer, int kind,
                           uint64_t next_input, uint64_t *bytes_out) {
  const gk_sim *sim = r->genre->sim;
  const gk_loop *lp = &r->session.loop;
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  sim->write_state(gk_loop_state(lp), &w.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&w, &len);
  int werr = w.w.err;
  gk_buf_writer_close(&w);
  static const uint8_t none[1];
  if (bytes == NULL && werr != 0) return GK_ENOMEM;
  if (len > GK_WIRE_SNAP_TOTAL_MAX) {
    free(bytes);
    return GK_ETOOBIG;
  }
  const uint8_t *data = bytes != NULL ? bytes : none;
  uint64_t hash = 0, steps = lp->steps;
  if (steps == 0 || gk_loop_hash_at(lp, steps - 1, &hash) != 0)
    hash = gk_chunk_sum(data, len);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SNAPSHOT_BEGIN;
  gk_wire_snap_begin *b = &m.u.snap_begin;
  b->id = (uint32_t)(h->stats.snapshots_sent + 1u);
  b->kind = (uint8_t)kind;
  memcpy(b->code, r->code, sizeof b->code);
  b->step = steps;
  b->hash = hash;
  b->next_input = next_input;
  b->active_mask = gk_inbuf_active_at(&r->session.inbuf, steps);
  if (b->active_mask == 0) b->active_mask = r->session.cfg.active_mask;
  b->total = (uint32_t)len;
  b->chunk_size = GK_WIRE_SNAP_CHUNK_MAX;
  b->chunks = gk_chunk_count(len, GK_WIRE_SNAP_CHUNK_MAX);
  b->sum = gk_chunk_sum(data, len);
  int rc = send_chunks(h, peer, &m, data);
  free(bytes);
  h->stats.snapshots_sent++;
  h->stats.snapshot_bytes += len;
  if (bytes_out != NULL) *bytes_out = len;
  return rc;
}
