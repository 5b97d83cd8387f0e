/* gk_net_chunk.h: a byte blob cut into bounded, checksummed chunks, and
 * put back together.
 *
 * Used for state transfer over the reliable channel: the host's snapshots
 * for a rejoining player or a spectator (SNAPSHOT_BEGIN / SNAPSHOT_CHUNK),
 * and any other blob a peer or the host must send in pieces that each fit
 * one datagram. No allocation on the sender side; the receiver allocates
 * the whole blob once, at begin, after checking its announced size against
 * the caller's limit. Nothing read from the wire is trusted: the chunk
 * count must match the size, every index is checked, a chunk's length
 * must be exactly what its index implies, each chunk carries a 32-bit
 * checksum of its bytes and the whole blob a 64-bit one (XXH3-64, the
 * state hash function), checked when the last chunk arrives.
 *
 * Pure C over byte buffers (libc + gk_core): no ENet, no libuv.
 */
#ifndef GK_NET_CHUNK_H
#define GK_NET_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#define GK_CHUNK_BYTES_MAX 1024u /* payload of one chunk */
/* largest blob a receiver takes unless its caller says less */
#define GK_CHUNK_TOTAL_MAX (UINT64_C(64) << 20)

/* The checksum of one chunk: the low 32 bits of XXH3-64 of its bytes. */
uint32_t gk_chunk_crc(const uint8_t *bytes, size_t len);
/* The checksum of a whole blob: XXH3-64. */
uint64_t gk_chunk_sum(const uint8_t *bytes, size_t len);
/* How many chunks of chunk_size bytes hold `total` bytes (at least 1: an
 * empty blob is one empty chunk). 0 if chunk_size is 0 or above
 * GK_CHUNK_BYTES_MAX. */
uint32_t gk_chunk_count(uint64_t total, uint32_t chunk_size);
/* Chunk `index` of a blob: *out points into `bytes`; returns its length
 * (0 for an index past the end). */
size_t gk_chunk_slice(const uint8_t *bytes, uint64_t total, uint32_t chunk_size,
                      uint32_t index, const uint8_t **out);

/* The receiving side of one transfer. Zero it (or gk_chunk_rx_close it)
 * before the first begin. */
typedef struct gk_chunk_rx {
  /* read-only for callers */
  uint32_t id;    /* the transfer this assembles */
  uint64_t total; /* bytes announced */
  uint32_t chunk_size;
  uint32_t nchunks;
  uint32_t got;   /* distinct chunks received */
  uint64_t sum;   /* announced XXH3-64 of the whole */
  uint8_t *bytes; /* total bytes (owned); complete once got == nchunks */
  /* private */
  uint8_t *have; /* one bit per chunk */
  int open;
} gk_chunk_rx;

/* Starts assembling transfer `id` (dropping any previous one). GK_ERANGE
 * if chunk_size is 0 or above GK_CHUNK_BYTES_MAX, GK_ETOOBIG if total is
 * above `limit` (0 -> GK_CHUNK_TOTAL_MAX), GK_EPROTO if nchunks is not
 * gk_chunk_count(total, chunk_size), GK_ENOMEM. */
int gk_chunk_rx_begin(gk_chunk_rx *rx, uint32_t id, uint64_t total,
                      uint32_t chunk_size, uint32_t nchunks, uint64_t sum,
                      uint64_t limit);
/* One chunk. Returns 1 when this chunk completed the blob and the whole
 * checksum matches, 0 when more are needed (a repeat of a chunk already
 * held is 0 too), or GK_ESTATE (no transfer open), GK_EMISMATCH (another
 * transfer's id), GK_ERANGE (index), GK_EPROTO (length not the one the
 * index implies), GK_ECORRUPT (the chunk's checksum, or on the last chunk
 * the whole blob's; the transfer is then dropped). `rx` must be non-NULL,
 * bytes may be NULL only when len is 0. */
int gk_chunk_rx_put(gk_chunk_rx *rx, uint32_t id, uint32_t index,
                    const uint8_t *bytes, size_t len, uint32_t crc);
/* Hands the completed blob over (the caller frees it with free()); *len
 * gets its size. NULL if the transfer is not complete. The receiver is
 * closed afterwards. */
uint8_t *gk_chunk_rx_take(gk_chunk_rx *rx, size_t *len);
/* Frees what the receiver holds. NULL is a no-op. */
void gk_chunk_rx_close(gk_chunk_rx *rx);

#endif
