/* gk_net_ws_key.c: the handshake's key and accept value (see the header). */
#include "gk_net_ws_key.h"

#include <string.h>
#include <strings.h>

#include <nettle/base64.h>
#include <nettle/sha1.h>

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int gk_net_ws_key_check(const char *key) {
  if (key == NULL || strlen(key) != GK_NET_WS_KEY_LEN) return 0;
  uint8_t raw[BASE64_DECODE_LENGTH(GK_NET_WS_KEY_LEN) + 1];
  size_t n = sizeof raw;
  struct base64_decode_ctx d;
  base64_decode_init(&d);
  return base64_decode_update(&d, &n, raw, GK_NET_WS_KEY_LEN, key) == 1 &&
         base64_decode_final(&d) == 1 && n == 16;
}

void gk_net_ws_key_make(const uint8_t raw[16], char *out) {
  base64_encode_raw(out, 16, raw);
  out[GK_NET_WS_KEY_LEN] = '\0';
}

void gk_net_ws_key_accept(const char *key, char *out) {
  struct sha1_ctx s;
  uint8_t digest[SHA1_DIGEST_SIZE];
  sha1_init(&s);
  sha1_update(&s, strlen(key), (const uint8_t *)key);
  sha1_update(&s, sizeof WS_GUID - 1, (const uint8_t *)WS_GUID);
  sha1_digest(&s, sizeof digest, digest);
  base64_encode_raw(out, sizeof digest, digest);
  out[GK_NET_WS_ACCEPT_LEN] = '\0';
}

int gk_net_ws_has_token(const char *list, const char *tok) {
  size_t n = strlen(tok);
  const char *p = list;
  while (p != NULL && *p != '\0') {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    const char *end = p;
    while (*end != '\0' && *end != ',') end++;
    const char *last = end;
    while (last > p && (last[-1] == ' ' || last[-1] == '\t')) last--;
    if ((size_t)(last - p) == n && strncasecmp(p, tok, n) == 0) return 1;
    p = end;
  }
  return 0;
}
