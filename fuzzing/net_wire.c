/* net_wire.c: fuzz target for the wire codec, the input buffer and the
 * snapshot chunk receiver (src/net, gk_wire).
 *
 * The input is one datagram. It is decoded; whatever decodes must encode
 * back to exactly the same bytes (the codec accepts only what it could
 * have produced) and, if it carries inputs (INPUT) or confirmed steps
 * (CONFIRMED), those are fed to an input buffer the way the session and
 * the peer feed theirs, then confirmed and read. Any crash, sanitizer
 * report or abort is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_net_chunk.h"
#include "gk_net_inbuf.h"
#include "gk_net_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void feed_inputs(const gk_wire_input *m) {
  gk_inbuf b;
  gk_inbuf_options o = {.players = 4,
                        .input_size = m->input_size,
                        .active_mask = 0xf,
                        .window = 64,
                        .neutral_steps = 2,
                        .ack_mask = 0xf};
  if (gk_inbuf_init(&b, &o) != 0) return;
  if (m->slot < 4) gk_inbuf_schedule(&b, 3, GK_INBUF_REMOVE_PLAYER, m->slot);
  for (uint32_t p = 0; p < 4; p++)
    for (uint32_t i = 0; i < m->count; i++)
      gk_inbuf_put(&b, p, m->first + i, m->records + i * m->input_size);
  gk_inbuf_ack(&b, m->slot < 4 ? m->slot : 0, m->ack);
  gk_inbuf_confirm(&b);
  gk_step_input in;
  while (gk_inbuf_ready(&b) > 0)
    if (b.base.read(&b.base, b.next_read, &in) != 0) abort();
  gk_inbuf_close(&b);
}

static void feed_confirmed(const gk_wire_confirmed *c) {
  gk_inbuf b;
  gk_inbuf_options o = {.players = c->players,
                        .input_size = c->input_size,
                        .active_mask = 1,
                        .window = 32};
  if (gk_inbuf_init(&b, &o) != 0) return;
  for (uint32_t i = 0; i < c->count; i++) {
    gk_step_input in;
    gk_wire_step_get(c, i, &in);
    gk_inbuf_put_merged(&b, &in);
  }
  gk_inbuf_confirm(&b);
  gk_step_input in;
  while (gk_inbuf_ready(&b) > 0)
    if (b.base.read(&b.base, b.next_read, &in) != 0) abort();
  gk_inbuf_close(&b);
}

/* A snapshot's shape opens a receiver (bounded to 64 KiB here); a chunk
 * goes into a receiver of a 3-chunk transfer of its id, as the peer's
 * would (gk_net_peer_snap.c). */
static void feed_snapshot(const gk_wire_msg *m) {
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  if (m->type == GK_MSG_SNAPSHOT_BEGIN) {
    const gk_wire_snap_begin *b = &m->u.snap_begin;
    gk_chunk_rx_begin(&rx, b->id, b->total, b->chunk_size, b->chunks, b->sum,
                      65536);
  } else {
    const gk_wire_snap_chunk *k = &m->u.snap_chunk;
    if (gk_chunk_rx_begin(&rx, k->id, 2048 + 5, 1024, 3, 0, 0) == 0 &&
        gk_chunk_rx_put(&rx, k->id, k->index, k->bytes, k->len, k->crc) == 1)
      abort(); /* one chunk cannot complete three */
  }
  gk_chunk_rx_close(&rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gk_wire_msg m;
  if (gk_wire_decode(data, size, &m) != 0) return 0;
  uint8_t out[GK_WIRE_MAX];
  size_t len;
  if (gk_wire_encode(&m, out, sizeof out, &len) != 0 || len != size ||
      memcmp(out, data, size) != 0)
    abort();
  if (m.type == GK_MSG_INPUT)
    feed_inputs(&m.u.input);
  else if (m.type == GK_MSG_CONFIRMED)
    feed_confirmed(&m.u.confirmed);
  else if (m.type == GK_MSG_SNAPSHOT_BEGIN || m.type == GK_MSG_SNAPSHOT_CHUNK)
    feed_snapshot(&m);
  return 0;
}
