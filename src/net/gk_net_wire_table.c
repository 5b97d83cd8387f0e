/* gk_net_wire_table.c: the one table of message types, and the codec's
 * entry points that drive it (the ENet model: a command table indexed by
 * command number).
 *
 * Row `id` holds the type's name and channel (from GK_WIRE_MSG_MAP), the
 * body codec of the file that owns the noun (gk_net_wire.c, _snap.c,
 * _state.c; gk_net_wire_internal.h), and the shortest and longest body the
 * type can have. gk_wire_encode and gk_wire_decode write or check the
 * header, look the type up (bounds first: a type byte from the wire never
 * indexes past the table, and a gap is no type), hold the body to the
 * row's size limits, and call the row's codec. A new type is a line in
 * GK_WIRE_MSG_MAP, its codec in its noun's file, and a row here; the test
 * tests/net/test_wire_table.c fails until all three are there. */
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire_internal.h"

_Static_assert(GK__WIRE_TYPE_END <= 256, "a type id is one byte");

/* GK_WIRE_MSG_MAP's `reliable` column, by name. */
enum {
#define GK__WIRE_REL(name, id, rel) REL_##name = (rel),
  GK_WIRE_MSG_MAP(GK__WIRE_REL)
#undef GK__WIRE_REL
};

/* Body sizes in bytes, from the layouts in gk_net_wire.h. */
#define BODY_MAX (GK_WIRE_MAX - GK_WIRE_HEADER)
#define STR8(n) (1 + (n))                   /* str8 of n bytes */
#define STR16(n) (2 + (n))                  /* str16 of n bytes */
#define TOKEN_MAX (1 + GK_WIRE_TOKEN_BYTES) /* token_len, then a token */
#define CODE GK_WIRE_CODE_LEN
#define SECRET GK_WIRE_SECRET_LEN
#define TRANSFER (4 + 2 + 4 + 8)  /* total | chunk_size | chunks | sum */
#define CHUNK_MIN (4 + 4 + 4 + 2) /* id | index | crc | len, no bytes */
/* MATCH_START before its strings */
#define MATCH_START_FIXED (8 + 1 + 1 + 4 + 8 + 1 + 1 + 4 + 4)

#define ENC(noun) gk__wire_enc_##noun
#define DEC(noun) gk__wire_dec_##noun
#define ROW(name, noun, min, max)                                              \
  [GK_MSG_##name] = {#name, REL_##name, (min), (max), ENC(noun), DEC(noun)}
#define FIXED(name, noun, size) ROW(name, noun, size, size)

static const gk__wire_codec codecs[GK__WIRE_TYPE_END] = {
    /* gk_net_wire.c: INPUT and CONFIRMED are held to the datagram limit
     * (and their counts to what fits in it, gk_wire_*_fit) */
    ROW(INPUT, input, 2 + 8 + 8 + 1 + 1, BODY_MAX),
    ROW(CONFIRMED, confirmed, 2 + 8 + 8 + 8 + 1, BODY_MAX),
    ROW(HASH, hash, 8 + 1 + 8, 8 + 1 + 8 * GK_WIRE_STEPS_MAX),
    FIXED(STALL, stall, 8 + 4 + 4),
    FIXED(DESYNC, desync, 8 + 1 + 8 + 8),
    FIXED(MATCH_END, match_end, 8 + 1),
    FIXED(REMOVE_PLAYER, remove, 1 + 8),
    FIXED(END_MATCH, end_match, 1),
    ROW(CREATE_ROOM, create_room, 2 + STR8(1) + STR16(0) + 1,
        2 + STR8(GK_WIRE_GENRE_MAX) + STR16(GK_WIRE_CONFIG_MAX) + TOKEN_MAX),
    FIXED(ROOM_CREATED, room_created, CODE + 1),
    ROW(JOIN_ROOM, join_room, CODE + 1 + 1, CODE + 1 + TOKEN_MAX),
    FIXED(JOINED, joined, 1 + 1),
    FIXED(START_MATCH, empty, 0),
    ROW(MATCH_START, match_start, MATCH_START_FIXED + STR8(1) + STR16(0),
        MATCH_START_FIXED + STR8(GK_WIRE_GENRE_MAX) +
            STR16(GK_WIRE_CONFIG_MAX)),
    FIXED(SHUTDOWN, shutdown, 4),
    ROW(ERROR, error, 2 + STR8(0), 2 + STR8(GK_WIRE_TEXT_MAX)),
    /* gk_net_wire_snap.c */
    FIXED(SNAPSHOT_BEGIN, snap_begin, 4 + 1 + CODE + 8 + 8 + 8 + 4 + TRANSFER),
    ROW(SNAPSHOT_CHUNK, chunk, CHUNK_MIN, CHUNK_MIN + GK_WIRE_SNAP_CHUNK_MAX),
    ROW(REJOIN_ROOM, rejoin, CODE + 1 + SECRET + 1,
        CODE + 1 + SECRET + TOKEN_MAX),
    ROW(SPECTATE, spectate, CODE + 1, CODE + TOKEN_MAX),
    FIXED(RECONNECT_SECRET, secret, 1 + SECRET),
    /* gk_net_wire_state.c; STATE_CHUNK has SNAPSHOT_CHUNK's layout */
    FIXED(STATE_REQUEST, state_request, 4 + 8),
    FIXED(STATE_BEGIN, state_begin, 2 + 4 + 8 + 8 + 8 + 8 + TRANSFER),
    ROW(STATE_CHUNK, chunk, CHUNK_MIN, CHUNK_MIN + GK_WIRE_SNAP_CHUNK_MAX),
    /* gk_net_wire.c: a fleet */
    ROW(REDIRECT, redirect, CODE + STR8(1) + STR8(0),
        CODE + STR8(GK_WIRE_ADDR_MAX) + STR8(GK_WIRE_ADDR_MAX)),
    /* gk_net_wire_quick.c: quick play */
    ROW(QUICK_PLAY, quick_play, CODE + 2 + STR8(1) + STR16(0) + 1,
        CODE + 2 + STR8(GK_WIRE_GENRE_MAX) + STR16(GK_WIRE_CONFIG_MAX) +
            TOKEN_MAX),
    FIXED(QUICK_JOINED, quick_joined, CODE + 1 + 1),
    FIXED(NEXT_ROOM, next_room, CODE),
    /* gk_net_wire_name.c: names */
    ROW(NAME, name, STR8(1), STR8(GK_WIRE_NAME_MAX)),
    ROW(ROSTER, roster, 1, 1 + GK_PLAYERS_MAX * (1 + STR8(GK_WIRE_NAME_MAX))),
};

const gk__wire_codec *gk__wire_codec_of(int type) {
  if (type < 0 || (size_t)type >= GK__WIRE_TYPE_END) return NULL;
  const gk__wire_codec *c = &codecs[type];
  return c->encode != NULL ? c : NULL;
}

const char *gk_wire_type_name(int type) {
  const gk__wire_codec *c = gk__wire_codec_of(type);
  return c != NULL ? c->name : "UNKNOWN";
}

int gk_wire_type_reliable(int type) {
  const gk__wire_codec *c = gk__wire_codec_of(type);
  return c != NULL ? c->reliable : 0;
}

int gk_wire_encode(const gk_wire_msg *m, uint8_t *out, size_t cap,
                   size_t *len) {
  if (m == NULL || out == NULL || len == NULL) return GK_EINVAL;
  *len = 0;
  const gk__wire_codec *c = gk__wire_codec_of((int)m->type);
  if (c == NULL) return GK_EPROTO;
  size_t most = GK_WIRE_HEADER + (size_t)c->body_max;
  gk__wire_put b = {out, cap < most ? cap : most, 0, 0};
  gk__wire_put_le(&b, GK_WIRE_VERSION, 1);
  gk__wire_put_le(&b, (uint64_t)m->type, 1);
  int rc = c->encode(m, &b);
  if (rc == 0) rc = b.err;
  if (rc != 0) return rc;
  *len = b.len;
  return 0;
}

int gk_wire_decode(const uint8_t *bytes, size_t len, gk_wire_msg *m) {
  if (m == NULL || (bytes == NULL && len > 0)) return GK_EINVAL;
  memset(m, 0, sizeof *m);
  if (len > GK_WIRE_MAX) return GK_ETOOBIG;
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  uint8_t version = gk_read_u8(&r);
  uint8_t type = gk_read_u8(&r);
  if (r.err != 0) return r.err;
  if (version != GK_WIRE_VERSION) return GK_EVERSION;
  const gk__wire_codec *c = gk__wire_codec_of(type);
  if (c == NULL) return GK_EPROTO; /* no such type */
  m->type = (gk_wire_type)type;
  size_t body = gk_reader_left(&r);
  int rc;
  if (body < c->body_min)
    rc = GK_ETRUNC;
  else if (body > c->body_max)
    rc = GK_EPROTO; /* trailing bytes, whatever the fields say */
  else
    rc = c->decode(&r, m);
  if (rc == 0 && r.err != 0) rc = r.err;
  if (rc == 0 && gk_reader_left(&r) != 0) rc = GK_EPROTO; /* trailing bytes */
  if (rc != 0) {
    memset(m, 0, sizeof *m);
    m->type = (gk_wire_type)type;
  }
  return rc;
}
