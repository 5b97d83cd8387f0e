/* gk_net_wire_state.c: the codec of the desync forensics messages
 * STATE_REQUEST and STATE_BEGIN (GK_WIRE_STATE_MSG_MAP; layouts in
 * gk_net_wire.h), reached through the type table (gk_net_wire_table.c)
 * after the header; the checks are shared by both directions, so whatever
 * encodes also decodes. STATE_CHUNK has the layout of SNAPSHOT_CHUNK, and
 * the table gives it that codec (gk__wire_enc_chunk, gk_net_wire_snap.c). */
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire_internal.h"

typedef gk__wire_put cur;
#define put_le gk__wire_put_le

static int check_begin(const gk_wire_state_begin *b) {
  if (b->step >= GK_WIRE_STEP_LIMIT || b->from > b->to ||
      b->to >= GK_WIRE_STEP_LIMIT)
    return GK_ERANGE;
  if (b->status > 0) return GK_ERANGE;
  if (b->status < 0)
    return b->total == 0 && b->chunk_size == 0 && b->chunks == 0 &&
                   b->sum == 0 && b->hash == 0
               ? 0
               : GK_EPROTO;
  return gk__wire_transfer_check(b->total, b->chunk_size, b->chunks);
}

int gk__wire_enc_state_begin(const gk_wire_msg *m, cur *c) {
  const gk_wire_state_begin *b = &m->u.state_begin;
  int rc = check_begin(b);
  if (rc != 0) return rc;
  put_le(c, (uint16_t)b->status, 2);
  put_le(c, b->id, 4);
  put_le(c, b->step, 8);
  put_le(c, b->from, 8);
  put_le(c, b->to, 8);
  put_le(c, b->hash, 8);
  gk__wire_transfer_put(c, b->total, b->chunk_size, b->chunks, b->sum);
  return c->err;
}

int gk__wire_dec_state_begin(gk_reader *r, gk_wire_msg *m) {
  gk_wire_state_begin *b = &m->u.state_begin;
  b->status = gk_read_i16(r);
  b->id = gk_read_u32(r);
  b->step = gk_read_u64(r);
  b->from = gk_read_u64(r);
  b->to = gk_read_u64(r);
  b->hash = gk_read_u64(r);
  gk__wire_transfer_get(r, &b->total, &b->chunk_size, &b->chunks, &b->sum);
  if (r->err != 0) return r->err;
  return check_begin(b);
}

int gk__wire_enc_state_request(const gk_wire_msg *m, cur *c) {
  if (m->u.state_req.step >= GK_WIRE_STEP_LIMIT) return GK_ERANGE;
  put_le(c, m->u.state_req.id, 4);
  put_le(c, m->u.state_req.step, 8);
  return c->err;
}

int gk__wire_dec_state_request(gk_reader *r, gk_wire_msg *m) {
  m->u.state_req.id = gk_read_u32(r);
  m->u.state_req.step = gk_read_u64(r);
  if (r->err != 0) return r->err;
  return m->u.state_req.step < GK_WIRE_STEP_LIMIT ? 0 : GK_ERANGE;
}
