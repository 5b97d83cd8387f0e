/* gen_corpus.c: writes the seed corpus of the token fuzz target
 * (fuzzing/token.c) into DIR, with the target's key and clock
 * (fuzzing/token_fuzz.h):
 *   valid-*.bin    tokens (raw bytes) that open at GK_FUZZ_TOKEN_NOW
 *   b64-*.txt      the same tokens as base64url text
 *   sealed-*.bin   a public part + a private part in clear (68 + 64 bytes),
 *                  which the target seals itself to reach the grant parser
 * Not a test: run it by hand after a format change, then commit the files.
 *   build/tests/token/token_gen_corpus fuzzing/corpus/token */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "gk_token.h"
#include "token_fuzz.h"

static int put(const char *dir, const char *name, const void *b, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
    perror(path);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: token_gen_corpus DIR\n");
    return 2;
  }
  uint8_t key[GK_TOKEN_KEY_BYTES];
  gk_fuzz_token_key(key);
  gk_token_grant g[3];
  memset(g, 0, sizeof g);
  g[0].kind = GK_TOKEN_CREATE;
  strcpy(g[0].genre, "survivors");
  g[0].max_players = 4;
  g[0].slot = GK_TOKEN_SLOT_ANY;
  g[1].kind = GK_TOKEN_JOIN;
  strcpy(g[1].code, "ABCDEFGHIJKLMNOP");
  g[1].slot = 3;
  g[2].kind = GK_TOKEN_JOIN;
  strcpy(g[2].code, "QRSTUVWXYZ234567");
  g[2].role = GK_TOKEN_SPECTATOR;
  g[2].slot = GK_TOKEN_SLOT_ANY;
  const char *names[3] = {"create", "join", "spectator"};
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    uint8_t tok[GK_TOKEN_BYTES];
    char text[GK_TOKEN_B64_LEN + 1], name[64];
    if (gk_token_mint(&g[i], 1000 + (uint64_t)i, GK_FUZZ_TOKEN_NOW, 3600, key,
                      tok) != 0)
      return 1;
    gk_token_to_base64(tok, text);
    snprintf(name, sizeof name, "valid-%s.bin", names[i]);
    rc |= put(argv[1], name, tok, sizeof tok);
    snprintf(name, sizeof name, "b64-%s.txt", names[i]);
    rc |= put(argv[1], name, text, strlen(text));
    /* The private part in clear: open the sealed token to get it back. */
    uint8_t clear[GK_TOKEN_PUBLIC_BYTES + GK_TOKEN_PRIVATE_BYTES];
    memcpy(clear, tok, GK_TOKEN_PUBLIC_BYTES);
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(
            clear + GK_TOKEN_PUBLIC_BYTES, NULL, NULL,
            tok + GK_TOKEN_PUBLIC_BYTES, GK_TOKEN_BYTES - GK_TOKEN_PUBLIC_BYTES,
            tok, GK_TOKEN_PUBLIC_BYTES, tok + 44, key) != 0)
      return 1;
    snprintf(name, sizeof name, "sealed-%s.bin", names[i]);
    rc |= put(argv[1], name, clear, sizeof clear);
  }
  return rc;
}
