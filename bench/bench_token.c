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
 * With the server library (GK_BENCH_SERVER), also the server's whole
 * check per room request: sv_auth_check_token from
 * src/server/link/gk_server_auth.c opens the token, matches its grant against
 * the JOIN_ROOM and admits its id once in the replay cache (a scan). Every
 * check gets a fresh token minted before the clock starts, so every check
 * is admitted, as on a real server; the cache (capacity 8192, the default
 * auth.replay_cache) holds 0, 1000 or 7000 unexpired ids when a batch
 * starts: "server check  cache <n>  <ns> ns/op". A forged token (one
 * flipped byte) is refused before the cache: "server refused".
 *
 * usage: bench_token [BATCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_token.h"
#ifdef GK_BENCH_SERVER
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"
#endif

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

#ifdef GK_BENCH_SERVER
#define CAPACITY 8192

/* Refills the cache with n unexpired ids no token will have. */
static void prefill(gk_token_seen *seen, gk_token_seen_entry *store, size_t n) {
  gk_token_seen_init(seen, store, CAPACITY);
  uint8_t id[GK_TOKEN_ID_BYTES] = {0xff};
  for (size_t i = 0; i < n; i++) {
    memcpy(id + 1, &i, sizeof i);
    gk_token_seen_check_and_add(seen, id, NOW + 60, NOW);
  }
}

/* ns per check of ITERS fresh tokens, cache prefilled with `fill`. */
static uint64_t batch(const uint8_t *key, uint8_t (*toks)[GK_TOKEN_BYTES],
                      gk_token_seen *seen, gk_token_seen_entry *store,
                      size_t fill, gk_wire_msg *m, int *fails) {
  prefill(seen, store, fill);
  gk_token t;
  uint64_t t0 = now_ns();
  for (int i = 0; i < ITERS; i++) {
    memcpy(m->u.room.token, toks[i], GK_TOKEN_BYTES);
    if (sv_auth_check_token(key, seen, m, NULL, NOW, &t, NULL, 0) != 0)
      ++*fails;
  }
  return now_ns() - t0;
}

/* The server figures; returns how many checks went unexpectedly. */
static int server_figures(int batches, const uint8_t *key,
                          const gk_token_grant *g, uint64_t *ns) {
  static gk_wire_msg m;
  m.type = GK_MSG_JOIN_ROOM;
  strcpy(m.u.room.code, g->code);
  m.u.room.token_len = GK_TOKEN_BYTES;
  uint8_t(*toks)[GK_TOKEN_BYTES] = malloc(ITERS * sizeof *toks);
  gk_token_seen_entry *store = calloc(CAPACITY, sizeof *store);
  if (!toks || !store) return 1;
  gk_token_seen seen;
  static const size_t fills[] = {0, 1000, 7000};
  int fails = 0;
  for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
    for (int b = 0; b < batches; b++) {
      for (int i = 0; i < ITERS; i++)
        if (gk_token_mint(g, (uint64_t)i, NOW, 60, key, toks[i]) != 0) fails++;
      ns[b] = batch(key, toks, &seen, store, fills[f], &m, &fails);
    }
    qsort(ns, (size_t)batches, sizeof *ns, cmp_u64);
    printf("server check  cache %-5zu %8.0f ns/op\n", fills[f],
           (double)ns[batches / 2] / ITERS);
  }
  for (int i = 0; i < ITERS; i++) toks[i][100] ^= 1; /* forged */
  for (int b = 0; b < batches; b++) {
    int refused = 0;
    ns[b] = batch(key, toks, &seen, store, 1000, &m, &refused);
    if (refused != ITERS) fails++;
  }
  qsort(ns, (size_t)batches, sizeof *ns, cmp_u64);
  printf("server refused            %8.0f ns/op\n",
         (double)ns[batches / 2] / ITERS);
  free(toks);
  free(store);
  return fails;
}
#endif

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
  }
  int fails = 0;
#ifdef GK_BENCH_SERVER
  fails = server_figures(batches, key, &g, ns[0]);
  if (fails) fprintf(stderr, "bench_token: %d unexpected results\n", fails);
#endif
  for (int f = 0; f < FIGURES; f++) free(ns[f]);
  free(store);
  return fails ? 1 : 0;
}
