/* gk_net_wire_state.c: the codec of the desync forensics messages
 * (GK_WIRE_STATE_MSG_MAP: STATE_REQUEST, STATE_BEGIN, STATE_CHUNK;
 * layouts in gk_net_wire.h). gk_net_wire_snap.c hands these types here;
 * the checks are shared by both directions, so whatever encodes also
 * decodes. */
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

static int enc_begin(const gk_wire_state_begin *b, cur *c) {
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

static int dec_begin(gk_reader *r, gk_wire_state_begin *b) {
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

int gk__wire_state_encode(const gk_wire_msg *m, cur *cp) {
  cur c = *cp;
  int rc;
  switch (m->type) {
  case GK_MSG_STATE_REQUEST:
    if (m->u.state_req.step >= GK_WIRE_STEP_LIMIT) return GK_ERANGE;
    put_le(&c, m->u.state_req.id, 4);
    put_le(&c, m->u.state_req.step, 8);
    rc = c.err;
    break;
  case GK_MSG_STATE_BEGIN:
    rc = enc_begin(&m->u.state_begin, &c);
    break;
  case GK_MSG_STATE_CHUNK:
    rc = gk__wire_chunk_encode(&m->u.snap_chunk, &c);
    break;
  default:
    return GK_EPROTO;
  }
  if (rc == 0) *cp = c;
  return rc;
}

int gk__wire_state_decode(gk_reader *r, gk_wire_msg *m) {
  switch (m->type) {
  case GK_MSG_STATE_REQUEST:
    m->u.state_req.id = gk_read_u32(r);
    m->u.state_req.step = gk_read_u64(r);
    if (r->err != 0) return r->err;
    return m->u.state_req.step < GK_WIRE_STEP_LIMIT ? 0 : GK_ERANGE;
  case GK_MSG_STATE_BEGIN:
    return dec_begin(r, &m->u.state_begin);
  case GK_MSG_STATE_CHUNK:
    return gk__wire_chunk_decode(r, &m->u.snap_chunk);
  default:
    return GK_EPROTO;
  }
}
