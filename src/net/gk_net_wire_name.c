/* gk_net_wire_name.c: players' names (docs/PROTOCOL.md, "Names").
 *
 *  NAME    client -> host: name str8 (1..GK_WIRE_NAME_MAX bytes of UTF-8,
 *          no control character: gk_wire_name_valid)
 *  ROSTER  host -> client: count u8 (0..GK_PLAYERS_MAX) | count times
 *          (slot u8 | name str8), slots ascending, each once
 *
 * A name is text for people: it never reaches a simulation, its state or
 * its hash. */
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire_internal.h"
#include "gk_utf8.h"

int gk_wire_name_valid(const char *name, size_t n) {
  const uint8_t *s = (const uint8_t *)name;
  if (n < 1 || n > GK_WIRE_NAME_MAX) return 0;
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x20 || s[i] == 0x7f) return 0;
    size_t k = gk_utf8_len(s + i, n - i);
    if (k == 0) return 0;
    i += k;
  }
  return 1;
}

static void put_name(gk__wire_put *b, const char *name) {
  size_t n = strlen(name);
  gk__wire_put_le(b, n, 1);
  gk__wire_put_bytes(b, name, n);
}

static int get_name(gk_reader *r, char out[GK_WIRE_NAME_MAX + 1]) {
  size_t n = gk_read_u8(r);
  out[0] = '\0';
  if (r->err != 0) return r->err;
  if (n > GK_WIRE_NAME_MAX) return GK_ETOOBIG;
  if (n > gk_reader_left(r)) return GK_ETRUNC;
  int rc = gk_read_bytes(r, out, n);
  if (rc != 0) return rc;
  out[n] = '\0';
  if (!gk_wire_name_valid(out, n)) {
    out[0] = '\0';
    return GK_EPROTO;
  }
  return 0;
}

int gk__wire_enc_name(const gk_wire_msg *msg, gk__wire_put *b) {
  const char *name = msg->u.name;
  if (!gk_wire_name_valid(name, strnlen(name, GK_WIRE_NAME_MAX + 1)))
    return GK_EPROTO;
  put_name(b, name);
  return b->err;
}

int gk__wire_dec_name(gk_reader *r, gk_wire_msg *msg) {
  return get_name(r, msg->u.name);
}

int gk__wire_enc_roster(const gk_wire_msg *msg, gk__wire_put *b) {
  const gk_wire_roster *m = &msg->u.roster;
  if (m->count > GK_PLAYERS_MAX) return GK_ERANGE;
  gk__wire_put_le(b, m->count, 1);
  for (uint32_t i = 0; i < m->count; i++) {
    const char *name = m->name[i];
    if (m->slot[i] >= GK_PLAYERS_MAX || (i && m->slot[i] <= m->slot[i - 1]))
      return GK_ERANGE;
    if (!gk_wire_name_valid(name, strnlen(name, GK_WIRE_NAME_MAX + 1)))
      return GK_EPROTO;
    gk__wire_put_le(b, m->slot[i], 1);
    put_name(b, name);
  }
  return b->err;
}

int gk__wire_dec_roster(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_roster *m = &msg->u.roster;
  m->count = gk_read_u8(r);
  if (r->err != 0) return r->err;
  if (m->count > GK_PLAYERS_MAX) return GK_ERANGE;
  for (uint32_t i = 0; i < m->count; i++) {
    m->slot[i] = gk_read_u8(r);
    if (r->err != 0) return r->err;
    if (m->slot[i] >= GK_PLAYERS_MAX || (i && m->slot[i] <= m->slot[i - 1]))
      return GK_ERANGE;
    int rc = get_name(r, m->name[i]);
    if (rc != 0) return rc;
  }
  return 0;
}
