/* test_chunk.c: chunked blobs (gk_net_chunk.h), as snapshots use them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_chunk.h"

static uint8_t blob[5000];

static void fill(void) {
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (uint8_t)(i * 31 + 7);
}

static int put(gk_chunk_rx *rx, uint32_t id, uint32_t i, const uint8_t *src,
               uint64_t total) {
  const uint8_t *at;
  size_t n = gk_chunk_slice(src, total, 1024, i, &at);
  return gk_chunk_rx_put(rx, id, i, at, n, gk_chunk_crc(at, n));
}

Test(chunk, a_blob_cut_into_chunks_comes_back_whole_in_any_order) {
  fill();
  uint32_t n = gk_chunk_count(sizeof blob, 1024);
  cr_assert_eq(n, 5);
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 9, sizeof blob, 1024, n,
                                 gk_chunk_sum(blob, sizeof blob), 0),
               0);
  uint32_t order[] = {4, 1, 3, 0};
  for (int k = 0; k < 4; k++)
    cr_assert_eq(put(&rx, 9, order[k], blob, sizeof blob), 0);
  cr_assert_eq(put(&rx, 9, 1, blob, sizeof blob), 0, "a repeat is harmless");
  cr_assert_eq(put(&rx, 9, 2, blob, sizeof blob), 1);
  size_t len;
  uint8_t *got = gk_chunk_rx_take(&rx, &len);
  cr_assert_not_null(got);
  cr_assert_eq(len, sizeof blob);
  cr_assert_arr_eq(got, blob, len);
  free(got);
}

Test(chunk, a_changed_byte_is_refused_by_the_chunk_checksum) {
  fill();
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  gk_chunk_rx_begin(&rx, 1, sizeof blob, 1024, 5,
                    gk_chunk_sum(blob, sizeof blob), 0);
  const uint8_t *at;
  size_t n = gk_chunk_slice(blob, sizeof blob, 1024, 2, &at);
  uint32_t crc = gk_chunk_crc(at, n);
  uint8_t copy[1024];
  memcpy(copy, at, n);
  copy[100] ^= 1;
  cr_assert_eq(gk_chunk_rx_put(&rx, 1, 2, copy, n, crc), GK_ECORRUPT);
  gk_chunk_rx_close(&rx);
}

Test(chunk, a_blob_whose_chunks_check_but_whole_does_not_is_refused) {
  fill();
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  gk_chunk_rx_begin(&rx, 1, sizeof blob, 1024, 5,
                    gk_chunk_sum(blob, sizeof blob) ^ 1u, 0);
  int rc = 0;
  for (uint32_t i = 0; i < 5; i++) rc = put(&rx, 1, i, blob, sizeof blob);
  cr_assert_eq(rc, GK_ECORRUPT);
  size_t len;
  cr_assert_null(gk_chunk_rx_take(&rx, &len));
}

Test(chunk, shapes_from_the_wire_are_checked_before_anything_is_allocated) {
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, 5000, 1024, 4, 0, 0), GK_EPROTO);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, 5000, 0, 1, 0, 0), GK_ERANGE);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, 5000, 2048, 3, 0, 0), GK_ERANGE);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, UINT64_C(1) << 40, 1024,
                                 gk_chunk_count(UINT64_C(1) << 40, 1024), 0, 0),
               GK_ETOOBIG);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, 5000, 1024, 5, 0, 4096), GK_ETOOBIG);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 1, 5000, 1024, 5, 0, 0), 0);
  uint8_t b[1024] = {0};
  cr_assert_eq(gk_chunk_rx_put(&rx, 2, 0, b, 1024, gk_chunk_crc(b, 1024)),
               GK_EMISMATCH);
  cr_assert_eq(gk_chunk_rx_put(&rx, 1, 5, b, 1024, gk_chunk_crc(b, 1024)),
               GK_ERANGE);
  cr_assert_eq(gk_chunk_rx_put(&rx, 1, 4, b, 1024, gk_chunk_crc(b, 1024)),
               GK_EPROTO, "the last chunk is 904 bytes");
  gk_chunk_rx_close(&rx);
  cr_assert_eq(gk_chunk_rx_put(&rx, 1, 0, b, 1024, 0), GK_ESTATE);
}

Test(chunk, an_empty_blob_is_one_empty_chunk) {
  gk_chunk_rx rx;
  memset(&rx, 0, sizeof rx);
  cr_assert_eq(gk_chunk_count(0, 1024), 1);
  cr_assert_eq(gk_chunk_rx_begin(&rx, 3, 0, 1024, 1, gk_chunk_sum(NULL, 0), 0),
               0);
  cr_assert_eq(gk_chunk_rx_put(&rx, 3, 0, NULL, 0, gk_chunk_crc(NULL, 0)), 1);
  size_t len = 99;
  uint8_t *got = gk_chunk_rx_take(&rx, &len);
  cr_assert_not_null(got);
  cr_assert_eq(len, 0);
  free(got);
}
