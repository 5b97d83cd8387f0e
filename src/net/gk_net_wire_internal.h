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

#endif
