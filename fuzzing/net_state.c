/* net_state.c: fuzz target for the state transfer of desync forensics:
 * the STATE_* decoder (gk_net_wire_state.c), the chunk receiver behind it
 * and the genre reading what it assembled, the way the server takes a
 * peer's answer (src/room/gk_room_desync.c).
 *
 * The input is a sequence of datagrams, each `len u16 | len bytes`.
 * Each is decoded; whatever decodes must encode back to the same bytes.
 * STATE_BEGIN (status 0) opens a receiver bounded to 256 KiB; STATE_CHUNK
 * goes into it; a completed state is read by survivors and diffed against
 * a fresh run's state. Any crash, sanitizer report or abort is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_net_chunk.h"
#include "gk_net_wire.h"
#include "gk_state_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The assembled state against a fresh survivors run's. */
static void diff_state(const uint8_t *bytes, size_t len) {
  const gk_sim *sim = gk_genre_find("survivors");
  if (sim == NULL) return;
  void *cfg = calloc(1, sim->config_size);
  if (cfg == NULL) return;
  sim->config_default(cfg);
  void *st = sim->create(cfg, 1, 2, NULL, 0);
  gk_buf_writer w;
  gk_buf_writer_init(&w);
  if (st != NULL) sim->write_state(st, &w.w);
  size_t rlen = 0;
  uint8_t *ref = gk_buf_writer_take(&w, &rlen);
  gk_diff_field f[4];
  gk_state_diff d;
  gk_state_diff_init(&d, f, 4);
  char err[GK_ERRMSG_MAX];
  gk_state_diff_run(&d, sim, cfg, ref, rlen, bytes, len, err, sizeof err);
  char text[512];
  gk_state_diff_text(&d, text, sizeof text);
  gk_state_diff_json(&d, text, sizeof text);
  free(ref);
  sim->destroy(st);
  if (sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
}

static void take(gk_chunk_rx *rx, const gk_wire_msg *m) {
  if (m->type == GK_MSG_STATE_BEGIN && m->u.state_begin.status == 0) {
    const gk_wire_state_begin *b = &m->u.state_begin;
    gk_chunk_rx_begin(rx, b->id, b->total, b->chunk_size, b->chunks, b->sum,
                      256u << 10);
  } else if (m->type == GK_MSG_STATE_CHUNK) {
    const gk_wire_snap_chunk *k = &m->u.snap_chunk;
    if (gk_chunk_rx_put(rx, k->id, k->index, k->bytes, k->len, k->crc) == 1) {
      size_t len = 0;
      uint8_t *bytes = gk_chunk_rx_take(rx, &len);
      if (bytes == NULL) abort(); /* complete means it can be taken */
      diff_state(bytes, len);
      free(bytes);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  size_t at = 0;
  while (size - at >= 2) {
    size_t n = (size_t)data[at] | (size_t)data[at + 1] << 8;
    at += 2;
    if (n > size - at) n = size - at;
    gk_wire_msg m;
    if (gk_wire_decode(data + at, n, &m) == 0) {
      uint8_t out[GK_WIRE_MAX];
      size_t len;
      if (gk_wire_encode(&m, out, sizeof out, &len) != 0 || len != n ||
          memcmp(out, data + at, n) != 0)
        abort();
      take(&rx, &m);
    }
    at += n;
  }
  gk_chunk_rx_close(&rx);
  return 0;
}
