/* gk_utf8.c: UTF-8 checked strictly (gk_utf8.h). */
#include "gk_utf8.h"

size_t gk_utf8_len(const uint8_t *p, size_t left) {
  if (left == 0) return 0;
  uint8_t c = p[0];
  size_t n = c < 0x80                 ? 1
             : c >= 0xc2 && c <= 0xdf ? 2
             : (c & 0xf0) == 0xe0     ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || n > left) return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
  if (c == 0xed && p[1] >= 0xa0) return 0; /* a surrogate */
  if (c == 0xf0 && p[1] < 0x90) return 0;  /* overlong */
  if (c == 0xf4 && p[1] >= 0x90) return 0; /* beyond U+10FFFF */
  return n;
}

size_t gk_utf8_check(const uint8_t *p, size_t n) {
  size_t at = 0;
  while (at < n) {
    if (p[at] < 0x80) { /* ASCII, most of any JSON text */
      at++;
      continue;
    }
    size_t k = gk_utf8_len(p + at, n - at);
    if (k == 0) return at;
    at += k;
  }
  return n;
}
