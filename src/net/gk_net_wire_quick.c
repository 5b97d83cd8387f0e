/* gk_net_wire_quick.c: the quick-play messages' codec (docs/PROTOCOL.md,
 * "Quick play").
 *
 *  QUICK_PLAY    code: GK_WIRE_CODE_LEN bytes (GK_WIRE_CODE_ANY, or the
 *                code a REDIRECT named) | a CREATE_ROOM body
 *  QUICK_JOINED  code: GK_WIRE_CODE_LEN bytes | slot u8 | players u8
 * and the next room of an ended one (Play again):
 *  NEXT_ROOM     code: GK_WIRE_CODE_LEN bytes (msg->u.room.code)
 */
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire_internal.h"

int gk__wire_enc_quick_play(const gk_wire_msg *msg, gk__wire_put *b) {
  const gk_wire_quick_play *m = &msg->u.quick;
  if (!gk_wire_code_valid(m->code)) return GK_EPROTO;
  gk__wire_put_bytes(b, m->code, GK_WIRE_CODE_LEN);
  return gk__wire_enc_create_body(&m->room, b);
}

int gk__wire_dec_quick_play(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_quick_play *m = &msg->u.quick;
  int rc = gk__wire_get_code(r, m->code);
  return rc != 0 ? rc : gk__wire_dec_create_body(r, &m->room);
}

static int check_joined(const gk_wire_quick_joined *m) {
  if (m->players < 1 || m->players > GK_PLAYERS_MAX ||
      m->slot >= GK_PLAYERS_MAX)
    return GK_ERANGE;
  return 0;
}

int gk__wire_enc_quick_joined(const gk_wire_msg *msg, gk__wire_put *b) {
  const gk_wire_quick_joined *m = &msg->u.quick_joined;
  if (!gk_wire_code_valid(m->code)) return GK_EPROTO;
  if (check_joined(m) != 0) return GK_ERANGE;
  gk__wire_put_bytes(b, m->code, GK_WIRE_CODE_LEN);
  gk__wire_put_le(b, m->slot, 1);
  gk__wire_put_le(b, m->players, 1);
  return b->err;
}

int gk__wire_dec_quick_joined(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_quick_joined *m = &msg->u.quick_joined;
  int rc = gk__wire_get_code(r, m->code);
  if (rc != 0) return rc;
  m->slot = gk_read_u8(r);
  m->players = gk_read_u8(r);
  if (r->err != 0) return r->err;
  return check_joined(m);
}

int gk__wire_enc_next_room(const gk_wire_msg *msg, gk__wire_put *b) {
  if (!gk_wire_code_valid(msg->u.room.code)) return GK_EPROTO;
  gk__wire_put_bytes(b, msg->u.room.code, GK_WIRE_CODE_LEN);
  return b->err;
}

int gk__wire_dec_next_room(gk_reader *r, gk_wire_msg *msg) {
  return gk__wire_get_code(r, msg->u.room.code);
}
