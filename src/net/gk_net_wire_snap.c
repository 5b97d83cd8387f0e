/* gk_net_wire_snap.c: the codec of the rejoin, spectator and snapshot
 * messages (GK_WIRE_SNAP_MSG_MAP; layouts in gk_net_wire.h), reached
 * through the type table (gk_net_wire_table.c) after the header; the
 * checks are shared by both directions, so whatever encodes also decodes.
 * The chunk body is STATE_CHUNK's too, and the transfer shape
 * (gk__wire_transfer_*) STATE_BEGIN's (gk_net_wire_state.c). */
#include <string.h>

#include "gk_err.h"
#include "gk_net_chunk.h"
#include "gk_net_wire_internal.h"

typedef gk__wire_put cur;
#define put gk__wire_put_bytes
#define put_le gk__wire_put_le

int gk__wire_get_code(gk_reader *r, char *code) {
  int rc = gk_read_bytes(r, code, GK_WIRE_CODE_LEN);
  code[GK_WIRE_CODE_LEN] = '\0';
  if (rc != 0) return rc;
  if (!gk_wire_code_valid(code)) {
    code[0] = '\0';
    return GK_EPROTO;
  }
  return 0;
}

int gk__wire_transfer_check(uint32_t total, uint16_t chunk_size,
                            uint32_t chunks) {
  if (chunk_size == 0 || chunk_size > GK_WIRE_SNAP_CHUNK_MAX) return GK_ERANGE;
  if (total > GK_WIRE_SNAP_TOTAL_MAX) return GK_ETOOBIG;
  uint64_t n = total == 0 ? 1 : (total + chunk_size - 1u) / chunk_size;
  return n == chunks ? 0 : GK_EPROTO;
}

void gk__wire_transfer_put(cur *c, uint32_t total, uint16_t chunk_size,
                           uint32_t chunks, uint64_t sum) {
  put_le(c, total, 4);
  put_le(c, chunk_size, 2);
  put_le(c, chunks, 4);
  put_le(c, sum, 8);
}

void gk__wire_transfer_get(gk_reader *r, uint32_t *total, uint16_t *chunk_size,
                           uint32_t *chunks, uint64_t *sum) {
  *total = gk_read_u32(r);
  *chunk_size = gk_read_u16(r);
  *chunks = gk_read_u32(r);
  *sum = gk_read_u64(r);
}

static int check_begin(const gk_wire_snap_begin *b) {
  if (b->kind < GK_WIRE_SNAP_REJOIN || b->kind > GK_WIRE_SNAP_JOIN ||
      !gk_wire_code_valid(b->code))
    return GK_EPROTO;
  if (b->step >= GK_WIRE_STEP_LIMIT || b->next_input >= GK_WIRE_STEP_LIMIT)
    return GK_ERANGE;
  return gk__wire_transfer_check(b->total, b->chunk_size, b->chunks);
}

int gk__wire_enc_snap_begin(const gk_wire_msg *m, cur *c) {
  const gk_wire_snap_begin *b = &m->u.snap_begin;
  int rc = check_begin(b);
  if (rc != 0) return rc;
  put_le(c, b->id, 4);
  put_le(c, b->kind, 1);
  put(c, b->code, GK_WIRE_CODE_LEN);
  put_le(c, b->step, 8);
  put_le(c, b->hash, 8);
  put_le(c, b->next_input, 8);
  put_le(c, b->active_mask, 4);
  gk__wire_transfer_put(c, b->total, b->chunk_size, b->chunks, b->sum);
  return c->err;
}

int gk__wire_dec_snap_begin(gk_reader *r, gk_wire_msg *m) {
  gk_wire_snap_begin *b = &m->u.snap_begin;
  b->id = gk_read_u32(r);
  b->kind = gk_read_u8(r);
  int rc = gk__wire_get_code(r, b->code);
  if (rc != 0) return r->err != 0 ? r->err : rc;
  b->step = gk_read_u64(r);
  b->hash = gk_read_u64(r);
  b->next_input = gk_read_u64(r);
  b->active_mask = gk_read_u32(r);
  gk__wire_transfer_get(r, &b->total, &b->chunk_size, &b->chunks, &b->sum);
  if (r->err != 0) return r->err;
  return check_begin(b);
}

int gk__wire_enc_chunk(const gk_wire_msg *m, cur *c) {
  const gk_wire_snap_chunk *k = &m->u.snap_chunk;
  if (k->len > GK_WIRE_SNAP_CHUNK_MAX) return GK_ETOOBIG;
  if (k->len > 0 && k->bytes == NULL) return GK_EINVAL;
  put_le(c, k->id, 4);
  put_le(c, k->index, 4);
  put_le(c, k->crc, 4);
  put_le(c, k->len, 2);
  put(c, k->bytes, k->len);
  return c->err;
}

int gk__wire_dec_chunk(gk_reader *r, gk_wire_msg *m) {
  gk_wire_snap_chunk *k = &m->u.snap_chunk;
  k->id = gk_read_u32(r);
  k->index = gk_read_u32(r);
  k->crc = gk_read_u32(r);
  k->len = gk_read_u16(r);
  k->bytes = NULL;
  if (r->err != 0) return r->err;
  if (k->len > GK_WIRE_SNAP_CHUNK_MAX) return GK_ETOOBIG;
  if (k->len > gk_reader_left(r)) return GK_ETRUNC;
  k->bytes = r->p + r->pos;
  r->pos += k->len;
  return 0;
}

int gk__wire_enc_rejoin(const gk_wire_msg *m, cur *c) {
  const gk_wire_rejoin *j = &m->u.rejoin;
  if (!gk_wire_code_valid(j->code)) return GK_EPROTO;
  if (j->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  put(c, j->code, GK_WIRE_CODE_LEN);
  put_le(c, j->slot, 1);
  put(c, j->secret, GK_WIRE_SECRET_LEN);
  return c->err != 0 ? c->err : gk__wire_enc_token(j->token_len, j->token, c);
}

int gk__wire_dec_rejoin(gk_reader *r, gk_wire_msg *m) {
  gk_wire_rejoin *j = &m->u.rejoin;
  int rc = gk__wire_get_code(r, j->code);
  if (rc != 0) return rc;
  j->slot = gk_read_u8(r);
  gk_read_bytes(r, j->secret, GK_WIRE_SECRET_LEN);
  if (r->err != 0) return r->err;
  if (j->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  return gk__wire_dec_token(r, &j->token_len, j->token);
}

/* SPECTATE: the code and token fields of gk_wire_room_code. */
int gk__wire_enc_spectate(const gk_wire_msg *m, cur *c) {
  const gk_wire_room_code *s = &m->u.room;
  if (!gk_wire_code_valid(s->code)) return GK_EPROTO;
  put(c, s->code, GK_WIRE_CODE_LEN);
  return c->err != 0 ? c->err : gk__wire_enc_token(s->token_len, s->token, c);
}

int gk__wire_dec_spectate(gk_reader *r, gk_wire_msg *m) {
  gk_wire_room_code *s = &m->u.room;
  int rc = gk__wire_get_code(r, s->code);
  if (rc != 0) return rc;
  return gk__wire_dec_token(r, &s->token_len, s->token);
}

int gk__wire_enc_secret(const gk_wire_msg *m, cur *c) {
  if (m->u.secret.slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  put_le(c, m->u.secret.slot, 1);
  put(c, m->u.secret.secret, GK_WIRE_SECRET_LEN);
  return c->err;
}

int gk__wire_dec_secret(gk_reader *r, gk_wire_msg *m) {
  m->u.secret.slot = gk_read_u8(r);
  gk_read_bytes(r, m->u.secret.secret, GK_WIRE_SECRET_LEN);
  if (r->err != 0) return r->err;
  return m->u.secret.slot < GK_PLAYERS_MAX ? 0 : GK_ERANGE;
}

void gk_wire_chunk_msg(gk_wire_msg *out, gk_wire_type type, uint32_t id,
                       const uint8_t *bytes, uint64_t total,
                       uint32_t chunk_size, uint32_t index) {
  const uint8_t *at = bytes;
  size_t n = gk_chunk_slice(bytes, total, chunk_size, index, &at);
  memset(out, 0, sizeof *out);
  out->type = type;
  out->u.snap_chunk = (gk_wire_snap_chunk){.id = id,
                                           .index = index,
                                           .crc = gk_chunk_crc(at, n),
                                           .len = (uint16_t)n,
                                           .bytes = at};
}
