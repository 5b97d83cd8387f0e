/* token_fuzz.h: the fixed key and clock of the token fuzz target, shared
 * with tests/token (gen_corpus.c makes the seeds with them, test_token.c
 * checks that the committed seeds still open). Test material only: never
 * use this key anywhere else. */
#ifndef GK_TOKEN_FUZZ_H
#define GK_TOKEN_FUZZ_H

#include <stdint.h>

#include "gk_token.h"

#define GK_FUZZ_TOKEN_NOW UINT64_C(1700000000)

static inline void gk_fuzz_token_key(uint8_t key[GK_TOKEN_KEY_BYTES]) {
  for (int i = 0; i < GK_TOKEN_KEY_BYTES; i++) key[i] = (uint8_t)i;
}

#endif
