/* token.c: fuzz target for connect tokens (src/token): gk_token_open and
 * the base64url decoder.
 *
 * One input is tried three ways, with the fixed key and clock of
 * token_fuzz.h:
 *   1. as a token's raw bytes (what a server receives);
 *   2. as base64url text: whatever decodes must encode back to the same
 *      text (one token, one text), and is then opened;
 *   3. if it is exactly a public part + a private part in clear (132
 *      bytes), it is sealed here with the key and opened at its own
 *      creation time, so the fuzzer reaches the checks behind the seal
 *      (a random input almost never passes the seal).
 * An opened token must satisfy everything gk_token.h promises; a refused
 * one must come with a known code and a message. Any crash, sanitizer
 * report or abort is a finding. Seeds: tests/token/gen_corpus.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "gk_err.h"
#include "gk_token.h"
#include "token_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void check(int rc, const gk_token *t, const char *err, size_t errlen,
                  uint64_t now) {
  if (memchr(err, '\0', errlen) == NULL) abort();
  if (rc != 0) {
    static const gk_token zero;
    if (err[0] == '\0' || memcmp(t, &zero, sizeof zero) != 0) abort();
    switch (rc) {
    case GK_ETRUNC:
    case GK_ETOOBIG:
    case GK_EPROTO:
    case GK_EVERSION:
    case GK_EAUTH:
    case GK_ERANGE:
    case GK_EEXPIRED:
    case GK_ENOTYET:
      return;
    default:
      abort();
    }
  }
  if (gk_token_grant_check(&t->grant, NULL, 0) != 0 ||
      t->pub.expire_s <= t->pub.create_s ||
      t->pub.expire_s - t->pub.create_s > GK_TOKEN_LIFETIME_MAX ||
      now >= t->pub.expire_s ||
      (t->pub.create_s > now && t->pub.create_s - now > GK_TOKEN_SKEW_S) ||
      t->pub.format != GK_TOKEN_FORMAT ||
      t->pub.protocol_version != GK_TOKEN_PROTOCOL)
    abort();
}

static void open_and_check(const uint8_t *b, size_t n, const uint8_t *key,
                           uint64_t now) {
  gk_token t;
  char err[256];
  int rc =
      gk_token_open(b, n, key, GK_TOKEN_PROTOCOL, now, &t, err, sizeof err);
  check(rc, &t, err, sizeof err, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t key[GK_TOKEN_KEY_BYTES];
  gk_fuzz_token_key(key);
  open_and_check(data, size, key, GK_FUZZ_TOKEN_NOW);

  uint8_t tok[GK_TOKEN_BYTES];
  if (gk_token_from_base64((const char *)data, size, tok) == 0) {
    char text[GK_TOKEN_B64_LEN + 1];
    if (gk_token_to_base64(tok, text) != 0 || size != GK_TOKEN_B64_LEN ||
        memcmp(text, data, size) != 0)
      abort();
    open_and_check(tok, sizeof tok, key, GK_FUZZ_TOKEN_NOW);
  }

  if (size == GK_TOKEN_PUBLIC_BYTES + GK_TOKEN_PRIVATE_BYTES) {
    memcpy(tok, data, GK_TOKEN_PUBLIC_BYTES);
    crypto_aead_xchacha20poly1305_ietf_encrypt(
        tok + GK_TOKEN_PUBLIC_BYTES, NULL, data + GK_TOKEN_PUBLIC_BYTES,
        GK_TOKEN_PRIVATE_BYTES, tok, GK_TOKEN_PUBLIC_BYTES, NULL, tok + 44,
        key);
    open_and_check(tok, sizeof tok, key, le64(data + 12));
  }
  return 0;
}
