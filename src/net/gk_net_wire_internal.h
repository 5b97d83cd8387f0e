/* gk_net_wire_internal.h: what the wire codec's files share (src/net
 * only): the encoding cursor and token field of gk_net_wire.c, the type
 * table of gk_net_wire_table.c, and each file's message codecs, which the
 * table alone calls. */
#ifndef GK_NET_WIRE_INTERNAL_H
#define GK_NET_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"
#include "gk_state.h"

/* The encoder's bounded cursor (gk_net_wire.c): a write past cap sets err
 * to GK_ETOOBIG and writes nothing more. */
typedef struct gk__wire_put {
  uint8_t *p;
  size_t cap;
  size_t len;
  int err;
} gk__wire_put;
void gk__wire_put_bytes(gk__wire_put *b, const void *src, size_t n);
void gk__wire_put_le(gk__wire_put *b, uint64_t v, unsigned n);

/* gk_net_wire.c: the optional connect token of a room request
 * (token_len u8, then token_len bytes; the length is 0 or
 * GK_WIRE_TOKEN_BYTES, anything else is GK_EPROTO). encode appends it to
 * b; decode reads it from r (GK_ETRUNC if short) and leaves *len 0 on any
 * error. token must hold GK_WIRE_TOKEN_BYTES. */
int gk__wire_enc_token(uint8_t len, const uint8_t *token, gk__wire_put *b);
int gk__wire_dec_token(gk_reader *r, uint8_t *len, uint8_t *token);
/* gk_net_wire_snap.c: a room code field (GK_WIRE_CODE_LEN bytes) into
 * code (GK_WIRE_CODE_LEN + 1): 0, the reader's code, or GK_EPROTO (no
 * code: code is left empty). */
int gk__wire_get_code(gk_reader *r, char *code);
/* gk_net_wire.c: a CREATE_ROOM body (QUICK_PLAY carries one). */
int gk__wire_enc_create_body(const gk_wire_create_room *m, gk__wire_put *b);
int gk__wire_dec_create_body(gk_reader *r, gk_wire_create_room *m);

/* --- the type table (gk_net_wire_table.c) ------------------------------- */

/* A message body's codec. encode appends m's body to b; decode reads the
 * body from r into m (m->type is set, the rest of m zeroed). Both return
 * 0, GK_ETOOBIG, GK_EPROTO, GK_ERANGE, GK_ETRUNC or GK_EINVAL; the caller
 * writes and checks the header, and refuses trailing bytes. */
typedef int (*gk__wire_enc_fn)(const gk_wire_msg *m, gk__wire_put *b);
typedef int (*gk__wire_dec_fn)(gk_reader *r, gk_wire_msg *m);

/* One row of the table, indexed by type id. */
typedef struct gk__wire_codec {
  const char *name;  /* "INPUT", ...: the GK_WIRE_MSG_MAP name */
  int reliable;      /* the GK_WIRE_MSG_MAP column */
  uint16_t body_min; /* the shortest body that decodes, bytes; a shorter
                        datagram is GK_ETRUNC before the decoder runs */
  uint16_t body_max; /* the longest; a longer one is GK_EPROTO, and the
                        encoder may not write more */
  gk__wire_enc_fn encode;
  gk__wire_dec_fn decode;
} gk__wire_codec;

/* The size of the table: one past the largest id in GK_WIRE_MSG_MAP (the
 * size of a union of char[id + 1] over every type). */
union gk__wire_type_span {
#define GK__WIRE_SPAN(name, id, rel) char t_##name[(id) + 1];
  GK_WIRE_MSG_MAP(GK__WIRE_SPAN)
#undef GK__WIRE_SPAN
};
#define GK__WIRE_TYPE_END (sizeof(union gk__wire_type_span))

/* The row of `type`, or NULL when `type` is no message type: below 0, at
 * or past GK__WIRE_TYPE_END (checked before the table is indexed), or a
 * gap in the table. */
const gk__wire_codec *gk__wire_codec_of(int type);

/* --- the codecs, per file: one encoder and one decoder per body --------- */

/* gk_net_wire.c: match and room control. ROOM_CREATED and JOIN_ROOM share
 * u.room; START_MATCH has no body (gk__wire_*_empty). */
int gk__wire_enc_input(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_input(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_confirmed(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_confirmed(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_hash(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_hash(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_stall(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_stall(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_desync(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_desync(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_match_end(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_match_end(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_remove(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_remove(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_end_match(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_end_match(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_create_room(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_create_room(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_room_created(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_room_created(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_join_room(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_join_room(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_joined(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_joined(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_empty(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_empty(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_match_start(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_match_start(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_shutdown(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_shutdown(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_error(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_error(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_redirect(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_redirect(gk_reader *r, gk_wire_msg *m);
/* gk_net_wire_quick.c */
int gk__wire_enc_quick_play(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_quick_play(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_quick_joined(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_quick_joined(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_next_room(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_next_room(gk_reader *r, gk_wire_msg *m);
/* gk_net_wire_name.c */
int gk__wire_enc_name(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_name(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_roster(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_roster(gk_reader *r, gk_wire_msg *m);

/* gk_net_wire_snap.c: rejoin, spectators, snapshots. The chunk body is
 * SNAPSHOT_CHUNK's and STATE_CHUNK's (u.snap_chunk). */
int gk__wire_enc_snap_begin(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_snap_begin(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_chunk(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_chunk(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_rejoin(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_rejoin(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_spectate(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_spectate(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_secret(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_secret(gk_reader *r, gk_wire_msg *m);

/* gk_net_wire_state.c: desync forensics (STATE_CHUNK: the chunk codec). */
int gk__wire_enc_state_request(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_state_request(gk_reader *r, gk_wire_msg *m);
int gk__wire_enc_state_begin(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_dec_state_begin(gk_reader *r, gk_wire_msg *m);

/* gk_net_wire_snap.c: the shape of a chunked transfer (SNAPSHOT_BEGIN,
 * STATE_BEGIN): chunk_size 1..GK_WIRE_SNAP_CHUNK_MAX (else GK_ERANGE),
 * total at most GK_WIRE_SNAP_TOTAL_MAX (GK_ETOOBIG), exactly the chunks
 * they need (GK_EPROTO). */
int gk__wire_transfer_check(uint32_t total, uint16_t chunk_size,
                            uint32_t chunks);
/* ... and its fields on the wire: total u32 | chunk_size u16 | chunks u32
 * | sum u64 (the reader's error, if any, is left in r->err). */
void gk__wire_transfer_put(gk__wire_put *c, uint32_t total, uint16_t chunk_size,
                           uint32_t chunks, uint64_t sum);
void gk__wire_transfer_get(gk_reader *r, uint32_t *total, uint16_t *chunk_size,
                           uint32_t *chunks, uint64_t *sum);

#endif
