/* test_token.c: src/token, the connect token API: mint/open round trips,
 * every refusal with its own code, base64url, the replay cache, key files
 * and the committed fuzz seeds. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "gk_err.h"
#include "gk_token.h"
#include "token_fuzz.h"

#define NOW UINT64_C(1700000000)

static uint8_t key[GK_TOKEN_KEY_BYTES];

static void setup(void) {
  for (int i = 0; i < GK_TOKEN_KEY_BYTES; i++) key[i] = (uint8_t)(i * 7 + 1);
}

TestSuite(token, .init = setup);

static gk_token_grant create_grant(const char *genre, uint8_t players) {
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_CREATE;
  size_t n = strlen(genre);
  memcpy(g.genre, genre, n < GK_TOKEN_GENRE_MAX ? n : GK_TOKEN_GENRE_MAX);
  g.max_players = players;
  g.slot = GK_TOKEN_SLOT_ANY;
  return g;
}

static gk_token_grant join_grant(const char *code, uint8_t role, uint8_t slot) {
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_JOIN;
  size_t n = strlen(code);
  memcpy(g.code, code, n < GK_TOKEN_CODE_LEN ? n : GK_TOKEN_CODE_LEN);
  g.role = role;
  g.slot = slot;
  return g;
}

static void mint(const gk_token_grant *g, uint8_t tok[GK_TOKEN_BYTES]) {
  cr_assert_eq(gk_token_mint(g, 42, NOW, 60, key, tok), 0);
}

static int open_at(const uint8_t *tok, size_t len, uint64_t now, gk_token *t,
                   char *err, size_t errlen) {
  return gk_token_open(tok, len, key, GK_TOKEN_PROTOCOL, now, t, err, errlen);
}

Test(token, round_trip_create) {
  gk_token_grant g = create_grant("survivors", 4);
  uint8_t tok[GK_TOKEN_BYTES];
  cr_assert_eq(gk_token_mint(&g, UINT64_MAX, NOW, 30, key, tok), 0);
  gk_token t;
  char err[256];
  cr_assert_eq(open_at(tok, sizeof tok, NOW + 5, &t, err, sizeof err), 0, "%s",
               err);
  cr_assert_str_eq(err, "");
  cr_assert_eq(t.client_id, UINT64_MAX);
  cr_assert_eq(t.pub.format, GK_TOKEN_FORMAT);
  cr_assert_eq(t.pub.protocol_version, GK_TOKEN_PROTOCOL);
  cr_assert_eq(t.pub.create_s, NOW);
  cr_assert_eq(t.pub.expire_s, NOW + 30);
  cr_assert_eq(t.grant.kind, GK_TOKEN_CREATE);
  cr_assert_str_eq(t.grant.genre, "survivors");
  cr_assert_eq(t.grant.max_players, 4);
  cr_assert_eq(t.grant.slot, GK_TOKEN_SLOT_ANY);
  cr_assert_eq(memcmp(t.pub.id, tok + 28, GK_TOKEN_ID_BYTES), 0);
  cr_assert_eq(memcmp(t.pub.nonce, tok + 44, GK_TOKEN_NONCE_BYTES), 0);
  cr_assert_eq(memcmp(tok, "GKCT", 4), 0);
}

Test(token, round_trip_join) {
  const struct {
    uint8_t role, slot;
  } cases[] = {{GK_TOKEN_PLAYER, GK_TOKEN_SLOT_ANY},
               {GK_TOKEN_PLAYER, 0},
               {GK_TOKEN_PLAYER, 15},
               {GK_TOKEN_SPECTATOR, GK_TOKEN_SLOT_ANY}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gk_token_grant g =
        join_grant("ABCDEFGHIJKLMN27", cases[i].role, cases[i].slot);
    uint8_t tok[GK_TOKEN_BYTES];
    mint(&g, tok);
    gk_token t;
    cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, NULL, 0), 0);
    cr_assert_eq(t.client_id, 42);
    cr_assert_eq(t.grant.kind, GK_TOKEN_JOIN);
    cr_assert_str_eq(t.grant.code, "ABCDEFGHIJKLMN27");
    cr_assert_eq(t.grant.role, cases[i].role);
    cr_assert_eq(t.grant.slot, cases[i].slot);
    cr_assert_eq(t.grant.genre[0], '\0');
  }
}

Test(token, tokens_differ_in_id_and_nonce) {
  gk_token_grant g = create_grant("push-puzzle", 1);
  uint8_t a[GK_TOKEN_BYTES], b[GK_TOKEN_BYTES];
  mint(&g, a);
  mint(&g, b);
  cr_assert_neq(memcmp(a + 28, b + 28, 16), 0);
  cr_assert_neq(memcmp(a + 44, b + 44, 24), 0);
}

Test(token, mint_refuses_bad_grants_and_lifetimes) {
  uint8_t tok[GK_TOKEN_BYTES];
  memset(tok, 0xAB, sizeof tok);
  gk_token_grant bad[] = {
      create_grant("", 2),
      create_grant("Survivors", 2),
      create_grant("has space", 2),
      create_grant("survivors", 0),
      create_grant("survivors", 17),
      create_grant("abcdefghijabcdefghijabcdefghijab", 2), /* + 'c' below */
      join_grant("ABCDEFGHIJKLMNO", GK_TOKEN_PLAYER, 0),   /* 15 chars */
      join_grant("ABCDEFGHIJKLMNO1", GK_TOKEN_PLAYER, 0),  /* '1' */
      join_grant("abcdefghijklmnop", GK_TOKEN_PLAYER, 0),
      join_grant("ABCDEFGHIJKLMNOP", 2, GK_TOKEN_SLOT_ANY),
      join_grant("ABCDEFGHIJKLMNOP", GK_TOKEN_PLAYER, 16),
      join_grant("ABCDEFGHIJKLMNOP", GK_TOKEN_SPECTATOR, 3),
  };
  bad[5].genre[32] = 'c'; /* not NUL-terminated within the field */
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(gk_token_mint(&bad[i], 1, NOW, 60, key, tok), GK_ERANGE,
                 "bad grant %zu minted", i);
    char err[256];
    cr_assert_eq(gk_token_grant_check(&bad[i], err, sizeof err), GK_ERANGE);
    cr_assert_neq(err[0], '\0');
  }
  gk_token_grant g = create_grant("survivors", 2);
  g.kind = 3;
  cr_assert_eq(gk_token_mint(&g, 1, NOW, 60, key, tok), GK_ERANGE);
  g = create_grant("survivors", 2);
  cr_assert_eq(gk_token_mint(&g, 1, NOW, 0, key, tok), GK_ERANGE);
  cr_assert_eq(gk_token_mint(&g, 1, NOW, GK_TOKEN_LIFETIME_MAX + 1, key, tok),
               GK_ERANGE);
  cr_assert_eq(gk_token_mint(&g, 1, UINT64_MAX - 10, 60, key, tok), GK_ERANGE);
  for (size_t i = 0; i < sizeof tok; i++)
    cr_assert_eq(tok[i], 0xAB, "out written on failure");
  cr_assert_eq(gk_token_mint(NULL, 1, NOW, 60, key, tok), GK_EINVAL);
  cr_assert_eq(gk_token_mint(&g, 1, NOW, 60, NULL, tok), GK_EINVAL);
  cr_assert_eq(gk_token_mint(&g, 1, NOW, 60, key, NULL), GK_EINVAL);
  cr_assert_eq(gk_token_grant_check(NULL, NULL, 0), GK_EINVAL);
}

Test(token, expired_and_not_yet_valid) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint(&g, tok); /* NOW .. NOW + 60 */
  gk_token t;
  char err[256];
  cr_assert_eq(open_at(tok, sizeof tok, NOW + 59, &t, err, sizeof err), 0);
  cr_assert_eq(open_at(tok, sizeof tok, NOW + 60, &t, err, sizeof err),
               GK_EEXPIRED);
  cr_assert(strstr(err, "expired") != NULL, "%s", err);
  cr_assert_eq(t.client_id, 0, "out not zeroed");
  cr_assert_eq(open_at(tok, sizeof tok, UINT64_MAX, &t, NULL, 0), GK_EEXPIRED);
  /* Issued in the future: within the skew it opens, beyond it does not. */
  cr_assert_eq(open_at(tok, sizeof tok, NOW - GK_TOKEN_SKEW_S, &t, NULL, 0), 0);
  cr_assert_eq(
      open_at(tok, sizeof tok, NOW - GK_TOKEN_SKEW_S - 1, &t, err, sizeof err),
      GK_ENOTYET);
  cr_assert(strstr(err, "future") != NULL, "%s", err);
  cr_assert_eq(open_at(tok, sizeof tok, 0, &t, NULL, 0), GK_ENOTYET);
}

Test(token, wrong_key) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES], other[GK_TOKEN_KEY_BYTES];
  mint(&g, tok);
  memcpy(other, key, sizeof other);
  other[31] ^= 1;
  gk_token t;
  char err[256];
  cr_assert_eq(gk_token_open(tok, sizeof tok, other, GK_TOKEN_PROTOCOL, NOW, &t,
                             err, sizeof err),
               GK_EAUTH);
  cr_assert(strstr(err, "wrong key or tampered") != NULL, "%s", err);
}

/* Flipping any bit of any byte is refused. Flips in the magic and format
 * and the protocol are caught before the seal, with their own codes;
 * every other byte (times, id, nonce, sealed part, tag) fails the seal. */
Test(token, every_byte_tampered_is_refused) {
  gk_token_grant g = join_grant("QRSTUVWXYZ234567", GK_TOKEN_PLAYER, 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint(&g, tok);
  gk_token t;
  for (size_t i = 0; i < GK_TOKEN_BYTES; i++) {
    for (int bit = 0; bit < 8; bit++) {
      uint8_t bad[GK_TOKEN_BYTES];
      memcpy(bad, tok, sizeof bad);
      bad[i] ^= (uint8_t)(1u << bit);
      int want = i < 8 ? GK_EPROTO : i < 12 ? GK_EVERSION : GK_EAUTH;
      int rc = open_at(bad, sizeof bad, NOW, &t, NULL, 0);
      cr_assert_eq(rc, want, "byte %zu bit %d: %s, expected %s", i, bit,
                   gk_err_name(rc), gk_err_name(want));
    }
  }
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, NULL, 0), 0);
}

Test(token, wrong_protocol_version) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint(&g, tok);
  gk_token t;
  char err[256];
  cr_assert_eq(gk_token_open(tok, sizeof tok, key, GK_TOKEN_PROTOCOL + 1, NOW,
                             &t, err, sizeof err),
               GK_EVERSION);
  cr_assert(strstr(err, "protocol version") != NULL, "%s", err);
}

Test(token, truncated_and_too_long) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES + 1];
  mint(&g, tok);
  tok[GK_TOKEN_BYTES] = 0;
  gk_token t;
  char err[256];
  for (size_t len = 0; len < GK_TOKEN_BYTES; len++) {
    cr_assert_eq(open_at(tok, len, NOW, &t, err, sizeof err), GK_ETRUNC);
    cr_assert(strstr(err, "truncated") != NULL, "%s", err);
  }
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ETOOBIG);
  cr_assert_eq(open_at(NULL, 0, NOW, &t, NULL, 0), GK_ETRUNC);
  cr_assert_eq(open_at(NULL, 5, NOW, &t, NULL, 0), GK_EINVAL);
  cr_assert_eq(open_at(tok, GK_TOKEN_BYTES, NOW, NULL, NULL, 0), GK_EINVAL);
  cr_assert_eq(gk_token_open(tok, GK_TOKEN_BYTES, NULL, 1, NOW, &t, NULL, 0),
               GK_EINVAL);
}

/* Seals a hand-made private part with a valid public part, the way a
 * buggy backend would: the seal opens, the contents are refused. */
static void seal(uint8_t tok[GK_TOKEN_BYTES],
                 const uint8_t plain[GK_TOKEN_PRIVATE_BYTES], uint64_t create,
                 uint64_t expire) {
  gk_token_grant g = create_grant("x", 1);
  mint(&g, tok);
  for (int i = 0; i < 8; i++) {
    tok[12 + i] = (uint8_t)(create >> (8 * i));
    tok[20 + i] = (uint8_t)(expire >> (8 * i));
  }
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      tok + GK_TOKEN_PUBLIC_BYTES, NULL, plain, GK_TOKEN_PRIVATE_BYTES, tok,
      GK_TOKEN_PUBLIC_BYTES, NULL, tok + 44, key);
}

static void plain_create(uint8_t p[GK_TOKEN_PRIVATE_BYTES]) {
  memset(p, 0, GK_TOKEN_PRIVATE_BYTES);
  p[0] = 9; /* client id 9 */
  p[8] = GK_TOKEN_CREATE;
  p[9] = 3; /* players */
  p[11] = GK_TOKEN_SLOT_ANY;
  memcpy(p + 16, "survivors", 9);
}

Test(token, malformed_private_part) {
  uint8_t p[GK_TOKEN_PRIVATE_BYTES], tok[GK_TOKEN_BYTES];
  gk_token t;
  char err[256];
  plain_create(p);
  seal(tok, p, NOW, NOW + 60);
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(t.client_id, 9);
  cr_assert_str_eq(t.grant.genre, "survivors");
  struct {
    int at;
    uint8_t v;
    const char *says;
  } cases[] = {
      {8, 0, "kind"},         {8, 3, "kind"},          {9, 0, "max players"},
      {9, 17, "max players"}, {10, 1, "role"},         {11, 0, "slot"},
      {12, 1, "reserved"},    {16, 'S', "genre name"}, {18, ' ', "genre name"},
      {16, 0, "not zero"},    {30, 'x', "not zero"},   {63, 1, "not zero"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    plain_create(p);
    p[cases[i].at] = cases[i].v;
    seal(tok, p, NOW, NOW + 60);
    cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ERANGE,
                 "case %zu", i);
    cr_assert(strstr(err, cases[i].says) != NULL, "case %zu: %s", i, err);
  }
  /* An empty genre name. */
  plain_create(p);
  memset(p + 16, 0, 48);
  seal(tok, p, NOW, NOW + 60);
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ERANGE);
  cr_assert(strstr(err, "genre name") != NULL, "%s", err);
  /* A name filling the whole field is not NUL-terminated. */
  plain_create(p);
  memset(p + 16, 'a', 48);
  seal(tok, p, NOW, NOW + 60);
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ERANGE);
  /* A join with a 17-character code. */
  plain_create(p);
  p[8] = GK_TOKEN_JOIN;
  p[9] = 0;
  memset(p + 16, 0, 48);
  memcpy(p + 16, "ABCDEFGHIJKLMNOPQ", 17);
  seal(tok, p, NOW, NOW + 60);
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ERANGE);
  /* Lifetimes: empty, reversed, longer than the limit. */
  plain_create(p);
  uint64_t bad[][2] = {
      {NOW, NOW}, {NOW, NOW - 1}, {NOW, NOW + GK_TOKEN_LIFETIME_MAX + 1}};
  for (size_t i = 0; i < 3; i++) {
    seal(tok, p, bad[i][0], bad[i][1]);
    cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), GK_ERANGE,
                 "lifetime %zu", i);
    cr_assert(strstr(err, "lifetime") != NULL, "%s", err);
  }
  seal(tok, p, NOW, NOW + GK_TOKEN_LIFETIME_MAX);
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, err, sizeof err), 0);
}

Test(token, peek_reads_the_public_part) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint(&g, tok);
  gk_token_public p;
  cr_assert_eq(gk_token_peek(tok, sizeof tok, &p), 0);
  cr_assert_eq(p.create_s, NOW);
  cr_assert_eq(p.expire_s, NOW + 60);
  cr_assert_eq(gk_token_peek(tok, sizeof tok - 1, &p), GK_ETRUNC);
  tok[0] = 'X';
  cr_assert_eq(gk_token_peek(tok, sizeof tok, &p), GK_EPROTO);
  cr_assert_eq(gk_token_peek(tok, sizeof tok, NULL), GK_EINVAL);
}

Test(token, base64url) {
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES], back[GK_TOKEN_BYTES];
  mint(&g, tok);
  char text[GK_TOKEN_B64_LEN + 1];
  cr_assert_eq(gk_token_to_base64(tok, text), 0);
  cr_assert_eq(strlen(text), GK_TOKEN_B64_LEN);
  cr_assert_eq(strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                            "wxyz0123456789-_"),
               GK_TOKEN_B64_LEN);
  cr_assert_eq(gk_token_from_base64(text, strlen(text), back), 0);
  cr_assert_eq(memcmp(tok, back, sizeof tok), 0);
  cr_assert_eq(gk_token_from_base64(text, GK_TOKEN_B64_LEN - 1, back),
               GK_ETRUNC);
  char longer[GK_TOKEN_B64_LEN + 2];
  memcpy(longer, text, GK_TOKEN_B64_LEN);
  longer[GK_TOKEN_B64_LEN] = 'A';
  cr_assert_eq(gk_token_from_base64(longer, GK_TOKEN_B64_LEN + 1, back),
               GK_ETOOBIG);
  /* (char)0x89 and 0xC9: libsodium 1.0.18 alone decodes them. */
  const char bad_chars[] = {'+',        '/',        '=',       ' ',
                            '\n',       '\0',       '.',       (char)0x89,
                            (char)0xC9, (char)0xFF, (char)0x80};
  for (size_t i = 0; i < sizeof bad_chars; i++) {
    char t2[GK_TOKEN_B64_LEN + 1];
    memcpy(t2, text, sizeof t2);
    t2[100] = bad_chars[i];
    cr_assert_eq(gk_token_from_base64(t2, GK_TOKEN_B64_LEN, back), GK_EPARSE,
                 "char %d", bad_chars[i]);
  }
  /* 148 bytes end on one byte in two characters: the last character's low
   * 4 bits are unused and must be zero (one token, one text). */
  char t3[GK_TOKEN_B64_LEN + 1];
  memcpy(t3, text, sizeof t3);
  cr_assert(strchr("AQgw", t3[GK_TOKEN_B64_LEN - 1]) != NULL);
  t3[GK_TOKEN_B64_LEN - 1] = 'B'; /* 'A' with an unused bit set */
  cr_assert_eq(gk_token_from_base64(t3, GK_TOKEN_B64_LEN, back), GK_EPARSE);
  cr_assert_eq(gk_token_from_base64(NULL, 0, back), GK_ETRUNC);
  cr_assert_eq(gk_token_from_base64(text, GK_TOKEN_B64_LEN, NULL), GK_EINVAL);
  cr_assert_eq(gk_token_to_base64(NULL, text), GK_EINVAL);
}

Test(token, replay_cache_refuses_reuse) {
  gk_token_seen_entry store[4];
  gk_token_seen c;
  cr_assert_eq(gk_token_seen_init(&c, store, 4), 0);
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  mint(&g, tok);
  gk_token t;
  cr_assert_eq(open_at(tok, sizeof tok, NOW, &t, NULL, 0), 0);
  cr_assert_eq(gk_token_seen_check_and_add(&c, t.pub.id, t.pub.expire_s, NOW),
               0);
  /* The same token again, later but before it expires. */
  cr_assert_eq(open_at(tok, sizeof tok, NOW + 59, &t, NULL, 0), 0);
  cr_assert_eq(
      gk_token_seen_check_and_add(&c, t.pub.id, t.pub.expire_s, NOW + 59),
      GK_EEXIST);
  cr_assert_eq(c.count, 1);
  /* Expired: never admitted; the expired entry is dropped. */
  cr_assert_eq(
      gk_token_seen_check_and_add(&c, t.pub.id, t.pub.expire_s, NOW + 60),
      GK_EEXPIRED);
  uint8_t other[GK_TOKEN_ID_BYTES] = {1};
  cr_assert_eq(gk_token_seen_check_and_add(&c, other, NOW + 200, NOW + 60), 0);
  cr_assert_eq(c.count, 1);
}

Test(token, replay_cache_full_refuses_instead_of_forgetting) {
  gk_token_seen_entry store[3];
  gk_token_seen c;
  cr_assert_eq(gk_token_seen_init(&c, store, 3), 0);
  uint8_t id[GK_TOKEN_ID_BYTES] = {0};
  for (uint8_t i = 0; i < 3; i++) {
    id[0] = i;
    cr_assert_eq(gk_token_seen_check_and_add(&c, id, NOW + 10 + i, NOW), 0);
  }
  id[0] = 3;
  cr_assert_eq(gk_token_seen_check_and_add(&c, id, NOW + 100, NOW), GK_EFULL);
  /* Every used id is still refused while the cache is full. */
  for (uint8_t i = 0; i < 3; i++) {
    id[0] = i;
    cr_assert_eq(gk_token_seen_check_and_add(&c, id, NOW + 10 + i, NOW + 5),
                 GK_EEXIST);
  }
  /* Once the first expires, there is room again. */
  id[0] = 3;
  cr_assert_eq(gk_token_seen_check_and_add(&c, id, NOW + 100, NOW + 10), 0);
  cr_assert_eq(gk_token_seen_check_and_add(&c, id, NOW + 100, NOW + 10),
               GK_EEXIST);
  cr_assert_eq(gk_token_seen_check_and_add(NULL, id, NOW + 100, NOW),
               GK_EINVAL);
  cr_assert_eq(gk_token_seen_init(&c, store, 0), GK_EINVAL);
  cr_assert_eq(gk_token_seen_init(&c, NULL, 3), GK_EINVAL);
}

/* --- key files ------------------------------------------------------------ */

static char dir[64];

static void mkdir_tmp(void) {
  snprintf(dir, sizeof dir, "/tmp/gk-token-test-XXXXXX");
  cr_assert(mkdtemp(dir) != NULL);
}

static void rm_tmp(void) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  char path[512];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (unlink(path) != 0) rmdir(path);
  }
  closedir(d);
  rmdir(dir);
}

static void write_file(const char *path, const void *b, size_t n, int mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, b, n), (ssize_t)n);
  cr_assert_eq(fchmod(fd, (mode_t)mode), 0);
  close(fd);
}

TestSuite(token_key, .init = mkdir_tmp, .fini = rm_tmp);

Test(token_key, mode_0644_refused_0600_accepted) {
  char path[128], err[256];
  uint8_t k[GK_TOKEN_KEY_BYTES];
  snprintf(path, sizeof path, "%s/key", dir);
  write_file(path, key, sizeof key, 0644);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_EPERM);
  cr_assert(strstr(err, "mode 0644") != NULL, "%s", err);
  cr_assert(strstr(err, "group or others") != NULL, "%s", err);
  const int refused[] = {0640, 0604, 0620, 0602, 0601, 0610};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    cr_assert_eq(chmod(path, (mode_t)refused[i]), 0);
    cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_EPERM,
                 "mode %o", refused[i]);
  }
  cr_assert_eq(chmod(path, 0600), 0);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(err, "");
  cr_assert_eq(memcmp(k, key, sizeof k), 0);
  cr_assert_eq(chmod(path, 0400), 0);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), 0, "%s", err);
}

Test(token_key, wrong_size_missing_and_not_regular) {
  char path[128], err[256];
  uint8_t k[GK_TOKEN_KEY_BYTES], big[33] = {0};
  snprintf(path, sizeof path, "%s/short", dir);
  write_file(path, key, 31, 0600);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_ETRUNC);
  cr_assert(strstr(err, "31 bytes") != NULL, "%s", err);
  snprintf(path, sizeof path, "%s/long", dir);
  write_file(path, big, sizeof big, 0600);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_ETOOBIG);
  cr_assert(strstr(err, "more than 32 bytes") != NULL, "%s", err);
  snprintf(path, sizeof path, "%s/none", dir);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_ENOTFOUND);
  cr_assert(strstr(err, "none") != NULL, "%s", err);
  snprintf(path, sizeof path, "%s/sub", dir);
  cr_assert_eq(mkdir(path, 0700), 0);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), GK_EINVAL);
  cr_assert(strstr(err, "not a regular file") != NULL, "%s", err);
  cr_assert_eq(gk_token_key_load(NULL, k, err, sizeof err), GK_EINVAL);
  cr_assert_eq(gk_token_key_load(path, NULL, NULL, 0), GK_EINVAL);
}

Test(token_key, write_makes_0600_and_never_overwrites) {
  char path[128], err[256];
  uint8_t k[GK_TOKEN_KEY_BYTES], k2[GK_TOKEN_KEY_BYTES];
  snprintf(path, sizeof path, "%s/new", dir);
  mode_t old = umask(0);
  int rc = gk_token_key_write(path, err, sizeof err);
  umask(old);
  cr_assert_eq(rc, 0, "%s", err);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0600);
  cr_assert_eq(st.st_size, GK_TOKEN_KEY_BYTES);
  cr_assert_eq(gk_token_key_load(path, k, err, sizeof err), 0, "%s", err);
  cr_assert_eq(gk_token_key_write(path, err, sizeof err), GK_EEXIST);
  cr_assert(strstr(err, "never overwritten") != NULL, "%s", err);
  cr_assert_eq(gk_token_key_load(path, k2, err, sizeof err), 0);
  cr_assert_eq(memcmp(k, k2, sizeof k), 0, "key file changed");
  /* A key made by it mints tokens that open with it. */
  gk_token_grant g = create_grant("survivors", 2);
  uint8_t tok[GK_TOKEN_BYTES];
  gk_token t;
  cr_assert_eq(gk_token_mint(&g, 5, NOW, 60, k, tok), 0);
  cr_assert_eq(
      gk_token_open(tok, sizeof tok, k, GK_TOKEN_PROTOCOL, NOW, &t, NULL, 0),
      0);
  cr_assert_eq(gk_token_key_write(NULL, err, sizeof err), GK_EINVAL);
}

/* --- the fuzz seeds ---------------------------------------------------------
 * fuzzing/corpus/token/valid-*.bin are tokens minted by
 * tests/token/gen_corpus.c with the fuzz target's key and clock
 * (fuzzing/token_fuzz.h); they must keep opening, or the format changed
 * and the seeds need remaking. */
Test(token, fuzz_seeds_still_open) {
  uint8_t fkey[GK_TOKEN_KEY_BYTES];
  gk_fuzz_token_key(fkey);
  char path[512];
  snprintf(path, sizeof path, "%s/fuzzing/corpus/token", GK_SOURCE_ROOT);
  DIR *d = opendir(path);
  cr_assert(d != NULL, "%s", path);
  int seen = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "valid-", 6) != 0) continue;
    char file[768];
    snprintf(file, sizeof file, "%s/%s", path, e->d_name);
    FILE *f = fopen(file, "rb");
    cr_assert(f != NULL);
    uint8_t tok[GK_TOKEN_BYTES + 1];
    size_t n = fread(tok, 1, sizeof tok, f);
    fclose(f);
    gk_token t;
    char err[256];
    cr_assert_eq(gk_token_open(tok, n, fkey, GK_TOKEN_PROTOCOL,
                               GK_FUZZ_TOKEN_NOW, &t, err, sizeof err),
                 0, "%s: %s", e->d_name, err);
    seen++;
  }
  closedir(d);
  cr_assert_geq(seen, 2);
}
