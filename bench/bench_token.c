/* bench_token.c: what a connect token costs (src/token).
 *
 *   open:     gk_token_open of a valid token, the server's check per
 *             connect (XChaCha20-Poly1305 over 64 bytes + 68 bytes of
 *             associated data, then the grant checks);
 *   refused:  gk_token_open of a token with one flipped byte in the
 *             sealed part: what a flood of forged tokens costs the server;
 *   mint:     gk_token_mint, the backend's cost (two randombytes_buf calls
 *             and the seal);
 *   seen:     gk_token_seen_check_and_add answering "already used" for an
 *             id found last in a cache of 1,000 unexpired ids (the scan).
 * Each figure is the median over BATCHES batches of ITERS calls (20,000
 * calls in all), in ns per call. Output: one line per figure,
 * "token <name>  <ns> ns/op".
 *
 * usage: bench_token [BATCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_token.h"

#define ITERS 1000
#define SEEN 1000
#define NOW UINT64_C(1700000000)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static volatile int sink;

enum { OPEN, REFUSED, MINT, SEEN_CHECK, FIGURES };
static const char *names[FIGURES] = {"open", "refused", "mint", "seen"};

int main(int argc, char **argv) {
  int batches = argc > 1 ? atoi(argv[1]) : 20;
  if (batches < 1 || batches > 1000) {
    fprintf(stderr, "usage: bench_token [BATCHES 1..1000]\n");
    return 2;
  }
  uint8_t key[GK_TOKEN_KEY_BYTES];
  for (int i = 0; i < GK_TOKEN_KEY_BYTES; i++) key[i] = (uint8_t)(i * 13 + 5);
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_JOIN;
  strcpy(g.code, "ABCDEFGHIJKLMNOP");
  g.slot = GK_TOKEN_SLOT_ANY;
  uint8_t tok[GK_TOKEN_BYTES], bad[GK_TOKEN_BYTES], out[GK_TOKEN_BYTES];
  gk_token t;
  if (gk_token_mint(&g, 42, NOW, 60, key, tok) != 0 ||
      gk_token_open(tok, sizeof tok, key, GK_TOKEN_PROTOCOL, NOW, &t, NULL,
                    0) != 0) {
    fprintf(stderr, "bench_token: mint/open failed\n");
    return 1;
  }
  memcpy(bad, tok, sizeof bad);
  bad[100] ^= 1;
  gk_token_seen_entry *store = calloc(SEEN, sizeof *store);
  gk_token_seen seen;
  if (store == NULL || gk_token_seen_init(&seen, store, SEEN) != 0) return 1;
  uint8_t id[GK_TOKEN_ID_BYTES] = {0};
  for (int i = 0; i < SEEN; i++) {
    memcpy(id, &i, sizeof i);
    if (gk_token_seen_check_and_add(&seen, id, NOW + 60, NOW) != 0) return 1;
  }

  uint64_t *ns[FIGURES];
  for (int f = 0; f < FIGURES; f++)
    if ((ns[f] = calloc((size_t)batches, sizeof *ns[f])) == NULL) return 1;
  for (int b = 0; b < batches; b++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < ITERS; i++)
      sink += gk_token_open(tok, sizeof tok, key, GK_TOKEN_PROTOCOL, NOW, &t,
                            NULL, 0);
    uint64_t t1 = now_ns();
    for (int i = 0; i < ITERS; i++)
      sink += gk_token_open(bad, sizeof bad, key, GK_TOKEN_PROTOCOL, NOW, &t,
                            NULL, 0);
    uint64_t t2 = now_ns();
    for (int i = 0; i < ITERS; i++)
      sink += gk_token_mint(&g, 42, NOW, 60, key, out);
    uint64_t t3 = now_ns();
    for (int i = 0; i < ITERS; i++)
      sink += gk_token_seen_check_and_add(&seen, id, NOW + 60, NOW);
    uint64_t t4 = now_ns();
    ns[OPEN][b] = t1 - t0;
    ns[REFUSED][b] = t2 - t1;
    ns[MINT][b] = t3 - t2;
    ns[SEEN_CHECK][b] = t4 - t3;
  }
  printf("connect tokens: median of %d batches of %d calls, ns per call\n",
         batches, ITERS);
  for (int f = 0; f < FIGURES; f++) {
    qsort(ns[f], (size_t)batches, sizeof *ns[f], cmp_u64);
    printf("token %-8s %8.0f ns/op\n", names[f],
           (double)ns[f][batches / 2] / ITERS);
    free(ns[f]);
  }
  free(store);
  return 0;
}
