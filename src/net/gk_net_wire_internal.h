/* gk_net_wire_internal.h: what gk_net_wire.c shares with the codec files
 * of message groups kept apart from it (src/net only). */
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

/* gk_net_wire_snap.c: the bodies of the GK_WIRE_SNAP_MSG_MAP messages.
 * encode appends m's body to b; decode reads the body from r into m
 * (m->type is set). Both return 0, GK_ETOOBIG, GK_EPROTO, GK_ERANGE or
 * GK_ETRUNC; GK_EPROTO for a type that is not theirs. */
int gk__wire_snap_encode(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_snap_decode(gk_reader *r, gk_wire_msg *m);
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
/* gk_net_wire_snap.c: the body of SNAPSHOT_CHUNK, which STATE_CHUNK
 * shares. */
int gk__wire_chunk_encode(const gk_wire_snap_chunk *k, gk__wire_put *b);
int gk__wire_chunk_decode(gk_reader *r, gk_wire_snap_chunk *k);

/* gk_net_wire_state.c: the bodies of the GK_WIRE_STATE_MSG_MAP messages
 * (gk__wire_snap_* hand them over); as above. */
int gk__wire_state_encode(const gk_wire_msg *m, gk__wire_put *b);
int gk__wire_state_decode(gk_reader *r, gk_wire_msg *m);

#endif
