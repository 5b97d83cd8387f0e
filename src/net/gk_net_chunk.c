/* gk_net_chunk.c: chunked blobs (see gk_net_chunk.h). */
#include "gk_net_chunk.h"

#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_state.h"

uint32_t gk_chunk_crc(const uint8_t *bytes, size_t len) {
  return (uint32_t)gk_hash_bytes(bytes, len);
}

uint64_t gk_chunk_sum(const uint8_t *bytes, size_t len) {
  return gk_hash_bytes(bytes, len);
}

uint32_t gk_chunk_count(uint64_t total, uint32_t chunk_size) {
  if (chunk_size == 0 || chunk_size > GK_CHUNK_BYTES_MAX) return 0;
  uint64_t n = total == 0 ? 1 : (total + chunk_size - 1) / chunk_size;
  return n > UINT32_MAX ? 0 : (uint32_t)n;
}

size_t gk_chunk_slice(const uint8_t *bytes, uint64_t total, uint32_t chunk_size,
                      uint32_t index, const uint8_t **out) {
  uint64_t at = (uint64_t)index * chunk_size;
  *out = bytes;
  if (chunk_size == 0 || at > total || (at == total && total != 0)) return 0;
  *out = bytes + at;
  uint64_t n = total - at;
  return (size_t)(n < chunk_size ? n : chunk_size);
}

void gk_chunk_rx_close(gk_chunk_rx *rx) {
  if (rx == NULL) return;
  free(rx->bytes);
  free(rx->have);
  memset(rx, 0, sizeof *rx);
}

int gk_chunk_rx_begin(gk_chunk_rx *rx, uint32_t id, uint64_t total,
                      uint32_t chunk_size, uint32_t nchunks, uint64_t sum,
                      uint64_t limit) {
  gk_chunk_rx_close(rx);
  if (limit == 0 || limit > GK_CHUNK_TOTAL_MAX) limit = GK_CHUNK_TOTAL_MAX;
  if (chunk_size == 0 || chunk_size > GK_CHUNK_BYTES_MAX) return GK_ERANGE;
  if (total > limit) return GK_ETOOBIG;
  if (nchunks != gk_chunk_count(total, chunk_size)) return GK_EPROTO;
  rx->bytes = malloc(total > 0 ? (size_t)total : 1);
  rx->have = calloc((nchunks + 7u) / 8u, 1);
  if (rx->bytes == NULL || rx->have == NULL) {
    gk_chunk_rx_close(rx);
    return GK_ENOMEM;
  }
  rx->id = id;
  rx->total = total;
  rx->chunk_size = chunk_size;
  rx->nchunks = nchunks;
  rx->sum = sum;
  rx->open = 1;
  return 0;
}

int gk_chunk_rx_put(gk_chunk_rx *rx, uint32_t id, uint32_t index,
                    const uint8_t *bytes, size_t len, uint32_t crc) {
  if (!rx->open) return GK_ESTATE;
  if (id != rx->id) return GK_EMISMATCH;
  if (index >= rx->nchunks) return GK_ERANGE;
  const uint8_t *at;
  size_t want =
      gk_chunk_slice(rx->bytes, rx->total, rx->chunk_size, index, &at);
  if (len != want) return GK_EPROTO;
  if (gk_chunk_crc(bytes, len) != crc) return GK_ECORRUPT;
  if (rx->have[index / 8u] >> (index % 8u) & 1u) return 0;
  if (len > 0) memcpy(rx->bytes + (size_t)index * rx->chunk_size, bytes, len);
  rx->have[index / 8u] |= (uint8_t)(1u << (index % 8u));
  if (++rx->got < rx->nchunks) return 0;
  if (gk_chunk_sum(rx->bytes, (size_t)rx->total) != rx->sum) {
    gk_chunk_rx_close(rx);
    return GK_ECORRUPT;
  }
  return 1;
}

uint8_t *gk_chunk_rx_take(gk_chunk_rx *rx, size_t *len) {
  *len = 0;
  if (!rx->open || rx->got < rx->nchunks) return NULL;
  uint8_t *b = rx->bytes;
  *len = (size_t)rx->total;
  rx->bytes = NULL;
  gk_chunk_rx_close(rx);
  return b;
}
