/* bench_server_auth.c: the server's whole token check per room request
 * (issue 14), sv_auth_check_token from src/server/gk_server_auth.c: open
 * the token (XChaCha20-Poly1305), match its grant against the JOIN_ROOM,
 * and admit its id once in the replay cache (a scan of the cache). Every
 * call gets a fresh token (minted before the clock starts), so every call
 * is admitted, as on a real server.
 *
 * Figures, ns per check, the median over BATCHES batches of ITERS checks,
 * with the replay cache (capacity 8192, the default auth.replay_cache)
 * holding 0, 1000 and 7000 unexpired ids when a batch starts:
 *   "server check  cache <n>  <ns> ns/op"
 * and the refusal of a forged token (one flipped byte: open fails, the
 * cache is never scanned): "server refused  <ns> ns/op".
 *
 * usage: bench_server_auth [BATCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_err.h"
#include "gk_server_internal.h"

#define ITERS 1000
#define CAPACITY 8192
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

int main(int argc, char **argv) {
  int batches = argc > 1 ? atoi(argv[1]) : 15;
  if (batches < 1 || batches > 1000) {
    fprintf(stderr, "usage: bench_server_auth [BATCHES 1..1000]\n");
    return 2;
  }
  uint8_t key[GK_TOKEN_KEY_BYTES];
  for (int i = 0; i < GK_TOKEN_KEY_BYTES; i++) key[i] = (uint8_t)(i * 29 + 3);
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_JOIN;
  strcpy(g.code, "ABCDEFGHIJKLMNOP");
  g.slot = GK_TOKEN_SLOT_ANY;
  static gk_wire_msg m;
  m.type = GK_MSG_JOIN_ROOM;
  strcpy(m.u.room.code, "ABCDEFGHIJKLMNOP");
  m.u.room.token_len = GK_TOKEN_BYTES;
  uint8_t(*toks)[GK_TOKEN_BYTES] = malloc(ITERS * sizeof *toks);
  gk_token_seen_entry *store = calloc(CAPACITY, sizeof *store);
  uint64_t *ns = calloc((size_t)batches, sizeof *ns);
  if (!toks || !store || !ns) return 1;
  gk_token_seen seen;
  static const size_t fills[] = {0, 1000, 7000};
  int fails = 0;
  printf("server token check (open + grant + replay cache), median of %d "
         "batches of %d, ns per check\n",
         batches, ITERS);
  for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
    for (int b = 0; b < batches; b++) {
      for (int i = 0; i < ITERS; i++)
        if (gk_token_mint(&g, (uint64_t)i, NOW, 60, key, toks[i]) != 0)
          return 1;
      ns[b] = batch(key, toks, &seen, store, fills[f], &m, &fails);
    }
    qsort(ns, (size_t)batches, sizeof *ns, cmp_u64);
    printf("server check  cache %-5zu %8.0f ns/op\n", fills[f],
           (double)ns[batches / 2] / ITERS);
  }
  /* forged: one flipped byte of the sealed part */
  for (int i = 0; i < ITERS; i++) toks[i][100] ^= 1;
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
  free(ns);
  if (fails)
    fprintf(stderr, "bench_server_auth: %d unexpected results\n", fails);
  return fails ? 1 : 0;
}
