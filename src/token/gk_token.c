/* gk_token.c: see gk_token.h. libsodium and libc only. */
#include "gk_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "gk_err.h"
#include "gk_net_wire.h" /* constants only: nothing of gk_wire is linked */

_Static_assert(GK_TOKEN_PROTOCOL == GK_WIRE_VERSION, "token protocol");
_Static_assert(GK_TOKEN_GENRE_MAX == GK_WIRE_GENRE_MAX, "genre limit");
_Static_assert(GK_TOKEN_CODE_LEN == GK_WIRE_CODE_LEN, "room code length");
_Static_assert(GK_TOKEN_PLAYERS_MAX == GK_PLAYERS_MAX, "players");
_Static_assert(GK_TOKEN_KEY_BYTES ==
                   crypto_aead_xchacha20poly1305_ietf_KEYBYTES,
               "key size");
_Static_assert(GK_TOKEN_NONCE_BYTES ==
                   crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
               "nonce size");
_Static_assert(GK_TOKEN_TAG_BYTES == crypto_aead_xchacha20poly1305_ietf_ABYTES,
               "tag size");
_Static_assert(GK_TOKEN_BYTES == GK_TOKEN_PUBLIC_BYTES +
                                     GK_TOKEN_PRIVATE_BYTES +
                                     GK_TOKEN_TAG_BYTES,
               "token size");
#define B64_VARIANT sodium_base64_VARIANT_URLSAFE_NO_PADDING
_Static_assert(GK_TOKEN_B64_LEN + 1 ==
                   sodium_base64_ENCODED_LEN(GK_TOKEN_BYTES, B64_VARIANT),
               "base64 length");

/* Offsets in the public part and in the private plaintext. */
enum {
  OFF_MAGIC = 0,
  OFF_FORMAT = 4,
  OFF_PROTOCOL = 8,
  OFF_CREATE = 12,
  OFF_EXPIRE = 20,
  OFF_ID = 28,
  OFF_NONCE = 44,
  P_CLIENT = 0,
  P_KIND = 8,
  P_PLAYERS = 9,
  P_ROLE = 10,
  P_SLOT = 11,
  P_RESERVED = 12,
  P_NAME = 16,
  P_NAME_LEN = 48
};
_Static_assert(OFF_NONCE + GK_TOKEN_NONCE_BYTES == GK_TOKEN_PUBLIC_BYTES,
               "public layout");
_Static_assert(P_NAME + P_NAME_LEN == GK_TOKEN_PRIVATE_BYTES, "private layout");

static const uint8_t magic[4] = {'G', 'K', 'C', 'T'};

static void msg(char *err, size_t errlen, const char *fmt, ...) GK_PRINTF(3, 4);

/* Writes a message to err (if any). */
static void msg(char *err, size_t errlen, const char *fmt, ...) {
  if (err == NULL || errlen == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* sodium_init is idempotent and thread-safe; it picks the fast ChaCha20
 * implementation for this CPU. */
static int sodium_ready(void) {
  return sodium_init() >= 0;
}

static int genre_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

static int code_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

/* Checks a NUL-terminated string within `cap` bytes of 1..max characters
 * for which ok() holds; returns its length or -1. */
static int text_check(const char *s, size_t cap, size_t max, int (*ok)(char)) {
  size_t n = 0;
  while (n < cap && s[n] != '\0') {
    if (n >= max || !ok(s[n])) return -1;
    n++;
  }
  return n == 0 || n == cap ? -1 : (int)n;
}

static int is_zero(const void *p, size_t n) {
  const uint8_t *b = p;
  uint8_t acc = 0;
  for (size_t i = 0; i < n; i++) acc |= b[i];
  return acc == 0;
}

int gk_token_grant_check(const gk_token_grant *g, char *err, size_t errlen) {
  if (g == NULL) {
    msg(err, errlen, "no grant");
    return GK_EINVAL;
  }
  if (g->kind == GK_TOKEN_CREATE) {
    if (text_check(g->genre, sizeof g->genre, GK_TOKEN_GENRE_MAX, genre_char) <
        0) {
      msg(err, errlen,
          "create grant: the genre name must be 1..%d "
          "characters of [a-z0-9_-]",
          GK_TOKEN_GENRE_MAX);
      return GK_ERANGE;
    }
    if (g->max_players < 1 || g->max_players > GK_TOKEN_PLAYERS_MAX) {
      msg(err, errlen, "create grant: max players %u is not 1..%d",
          (unsigned)g->max_players, GK_TOKEN_PLAYERS_MAX);
      return GK_ERANGE;
    }
    if (g->code[0] != '\0' || g->role != 0 || g->slot != GK_TOKEN_SLOT_ANY) {
      msg(err, errlen,
          "create grant: code and role must be empty and "
          "slot 'any'");
      return GK_ERANGE;
    }
    return 0;
  }
  if (g->kind == GK_TOKEN_JOIN) {
    int n = text_check(g->code, sizeof g->code, GK_TOKEN_CODE_LEN, code_char);
    if (n != GK_TOKEN_CODE_LEN) {
      msg(err, errlen,
          "join grant: the room code must be %d characters "
          "of [A-Z2-7]",
          GK_TOKEN_CODE_LEN);
      return GK_ERANGE;
    }
    if (g->role != GK_TOKEN_PLAYER && g->role != GK_TOKEN_SPECTATOR) {
      msg(err, errlen,
          "join grant: role %u is neither player (0) nor "
          "spectator (1)",
          (unsigned)g->role);
      return GK_ERANGE;
    }
    if (g->slot != GK_TOKEN_SLOT_ANY &&
        (g->role == GK_TOKEN_SPECTATOR || g->slot >= GK_TOKEN_PLAYERS_MAX)) {
      msg(err, errlen,
          "join grant: slot %u is not 0..%d or 'any' "
          "(spectators: 'any' only)",
          (unsigned)g->slot, GK_TOKEN_PLAYERS_MAX - 1);
      return GK_ERANGE;
    }
    if (g->genre[0] != '\0' || g->max_players != 0) {
      msg(err, errlen, "join grant: genre and max players must be empty");
      return GK_ERANGE;
    }
    return 0;
  }
  msg(err, errlen, "grant kind %u is neither create (1) nor join (2)",
      (unsigned)g->kind);
  return GK_ERANGE;
}

static void private_pack(uint8_t p[GK_TOKEN_PRIVATE_BYTES],
                         const gk_token_grant *g, uint64_t client_id) {
  memset(p, 0, GK_TOKEN_PRIVATE_BYTES);
  put64(p + P_CLIENT, client_id);
  p[P_KIND] = g->kind;
  p[P_PLAYERS] = g->max_players;
  p[P_ROLE] = g->role;
  p[P_SLOT] = g->slot;
  const char *name = g->kind == GK_TOKEN_CREATE ? g->genre : g->code;
  memcpy(p + P_NAME, name, strlen(name)); /* checked: at most 32 bytes */
}

/* Unpacks and checks a private part. */
static int private_unpack(const uint8_t p[GK_TOKEN_PRIVATE_BYTES], gk_token *t,
                          char *err, size_t errlen) {
  gk_token_grant *g = &t->grant;
  memset(g, 0, sizeof *g);
  t->client_id = get64(p + P_CLIENT);
  g->kind = p[P_KIND];
  g->max_players = p[P_PLAYERS];
  g->role = p[P_ROLE];
  g->slot = p[P_SLOT];
  if (!is_zero(p + P_RESERVED, P_NAME - P_RESERVED)) {
    msg(err, errlen, "private part: reserved bytes are not zero");
    return GK_ERANGE;
  }
  const uint8_t *name = p + P_NAME;
  size_t n = 0;
  while (n < P_NAME_LEN && name[n] != 0) n++;
  if (!is_zero(name + n, P_NAME_LEN - n)) {
    msg(err, errlen, "private part: bytes after the name are not zero");
    return GK_ERANGE;
  }
  char *dst = g->kind == GK_TOKEN_CREATE ? g->genre
              : g->kind == GK_TOKEN_JOIN ? g->code
                                         : NULL;
  size_t cap = g->kind == GK_TOKEN_CREATE ? sizeof g->genre : sizeof g->code;
  if (dst != NULL) {
    if (n >= cap) {
      msg(err, errlen, "private part: %s of %zu bytes is too long",
          g->kind == GK_TOKEN_CREATE ? "genre name" : "room code", n);
      return GK_ERANGE;
    }
    memcpy(dst, name, n);
    dst[n] = '\0';
  } else if (n != 0) {
    msg(err, errlen, "private part: a name without a grant kind");
    return GK_ERANGE;
  }
  char why[160];
  if (gk_token_grant_check(g, why, sizeof why) != 0) {
    msg(err, errlen, "private part: %s", why);
    return GK_ERANGE;
  }
  return 0;
}

int gk_token_mint(const gk_token_grant *g, uint64_t client_id, uint64_t now_s,
                  uint32_t expires_in_s, const uint8_t key[GK_TOKEN_KEY_BYTES],
                  uint8_t out[GK_TOKEN_BYTES]) {
  if (g == NULL || key == NULL || out == NULL) return GK_EINVAL;
  int rc = gk_token_grant_check(g, NULL, 0);
  if (rc != 0) return rc;
  if (expires_in_s < 1 || expires_in_s > GK_TOKEN_LIFETIME_MAX ||
      now_s > UINT64_MAX - expires_in_s)
    return GK_ERANGE;
  if (!sodium_ready()) return GK_EIO;
  uint8_t tok[GK_TOKEN_BYTES];
  uint8_t plain[GK_TOKEN_PRIVATE_BYTES];
  memcpy(tok + OFF_MAGIC, magic, sizeof magic);
  put32(tok + OFF_FORMAT, GK_TOKEN_FORMAT);
  put32(tok + OFF_PROTOCOL, GK_TOKEN_PROTOCOL);
  put64(tok + OFF_CREATE, now_s);
  put64(tok + OFF_EXPIRE, now_s + expires_in_s);
  randombytes_buf(tok + OFF_ID, GK_TOKEN_ID_BYTES);
  randombytes_buf(tok + OFF_NONCE, GK_TOKEN_NONCE_BYTES);
  private_pack(plain, g, client_id);
  unsigned long long clen = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      tok + GK_TOKEN_PUBLIC_BYTES, &clen, plain, sizeof plain, tok,
      GK_TOKEN_PUBLIC_BYTES, NULL, tok + OFF_NONCE, key);
  sodium_memzero(plain, sizeof plain);
  memcpy(out, tok, sizeof tok);
  return 0;
}

/* The size, magic and format checks shared by peek and open. */
static int public_unpack(const uint8_t *b, size_t len, gk_token_public *p,
                         char *err, size_t errlen) {
  if (len < GK_TOKEN_BYTES) {
    msg(err, errlen, "token is %zu bytes, expected %d: truncated", len,
        GK_TOKEN_BYTES);
    return GK_ETRUNC;
  }
  if (len > GK_TOKEN_BYTES) {
    msg(err, errlen, "token is %zu bytes, expected %d: too long", len,
        GK_TOKEN_BYTES);
    return GK_ETOOBIG;
  }
  if (memcmp(b + OFF_MAGIC, magic, sizeof magic) != 0) {
    msg(err, errlen, "not a connect token (bad magic)");
    return GK_EPROTO;
  }
  p->format = get32(b + OFF_FORMAT);
  if (p->format != GK_TOKEN_FORMAT) {
    msg(err, errlen, "token format %u, this build reads format %d",
        (unsigned)p->format, GK_TOKEN_FORMAT);
    return GK_EPROTO;
  }
  p->protocol_version = get32(b + OFF_PROTOCOL);
  p->create_s = get64(b + OFF_CREATE);
  p->expire_s = get64(b + OFF_EXPIRE);
  memcpy(p->id, b + OFF_ID, GK_TOKEN_ID_BYTES);
  memcpy(p->nonce, b + OFF_NONCE, GK_TOKEN_NONCE_BYTES);
  return 0;
}

int gk_token_peek(const uint8_t *bytes, size_t len, gk_token_public *out) {
  if (out == NULL || (bytes == NULL && len != 0)) return GK_EINVAL;
  gk_token_public p;
  memset(&p, 0, sizeof p);
  int rc = public_unpack(bytes, len, &p, NULL, 0);
  if (rc == 0) *out = p;
  return rc;
}

static int open_checked(const uint8_t *b, size_t len, const uint8_t *key,
                        uint32_t protocol_version, uint64_t now_s, gk_token *t,
                        char *err, size_t errlen) {
  int rc = public_unpack(b, len, &t->pub, err, errlen);
  if (rc != 0) return rc;
  if (t->pub.protocol_version != protocol_version) {
    msg(err, errlen,
        "token is for protocol version %u, this server speaks "
        "%u",
        (unsigned)t->pub.protocol_version, (unsigned)protocol_version);
    return GK_EVERSION;
  }
  if (!sodium_ready()) {
    msg(err, errlen, "libsodium failed to initialise");
    return GK_EIO;
  }
  uint8_t plain[GK_TOKEN_PRIVATE_BYTES];
  unsigned long long plen = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plain, &plen, NULL, b + GK_TOKEN_PUBLIC_BYTES,
          GK_TOKEN_PRIVATE_BYTES + GK_TOKEN_TAG_BYTES, b, GK_TOKEN_PUBLIC_BYTES,
          b + OFF_NONCE, key) != 0) {
    msg(err, errlen,
        "token failed authentication: wrong key or tampered "
        "(the two look the same by design)");
    return GK_EAUTH;
  }
  rc = private_unpack(plain, t, err, errlen);
  sodium_memzero(plain, sizeof plain);
  if (rc != 0) return rc;
  if (t->pub.expire_s <= t->pub.create_s ||
      t->pub.expire_s - t->pub.create_s > GK_TOKEN_LIFETIME_MAX) {
    msg(err, errlen, "token lifetime %llu..%llu is not 1..%d s",
        (unsigned long long)t->pub.create_s,
        (unsigned long long)t->pub.expire_s, GK_TOKEN_LIFETIME_MAX);
    return GK_ERANGE;
  }
  if (now_s >= t->pub.expire_s) {
    msg(err, errlen, "token expired %llu s ago",
        (unsigned long long)(now_s - t->pub.expire_s));
    return GK_EEXPIRED;
  }
  if (t->pub.create_s > now_s && t->pub.create_s - now_s > GK_TOKEN_SKEW_S) {
    msg(err, errlen,
        "token issued %llu s in the future (more than the "
        "%d s of clock skew allowed)",
        (unsigned long long)(t->pub.create_s - now_s), GK_TOKEN_SKEW_S);
    return GK_ENOTYET;
  }
  return 0;
}

int gk_token_open(const uint8_t *bytes, size_t len,
                  const uint8_t key[GK_TOKEN_KEY_BYTES],
                  uint32_t protocol_version, uint64_t now_s, gk_token *out,
                  char *err, size_t errlen) {
  msg(err, errlen, "%s", "");
  if (out == NULL || key == NULL || (bytes == NULL && len != 0)) {
    msg(err, errlen, "NULL argument");
    if (out != NULL) memset(out, 0, sizeof *out);
    return GK_EINVAL;
  }
  int rc =
      open_checked(bytes, len, key, protocol_version, now_s, out, err, errlen);
  if (rc != 0) memset(out, 0, sizeof *out);
  return rc;
}

/* --- base64url ----------------------------------------------------------- */

int gk_token_to_base64(const uint8_t tok[GK_TOKEN_BYTES],
                       char out[GK_TOKEN_B64_LEN + 1]) {
  if (tok == NULL || out == NULL) return GK_EINVAL;
  sodium_bin2base64(out, GK_TOKEN_B64_LEN + 1, tok, GK_TOKEN_BYTES,
                    B64_VARIANT);
  return 0;
}

int gk_token_from_base64(const char *text, size_t len,
                         uint8_t out[GK_TOKEN_BYTES]) {
  if (out == NULL || (text == NULL && len != 0)) return GK_EINVAL;
  if (len < GK_TOKEN_B64_LEN) return GK_ETRUNC;
  if (len > GK_TOKEN_B64_LEN) return GK_ETOOBIG;
  /* libsodium 1.0.18 decodes some bytes >= 0x80 as if they were base64
   * characters (found by fuzzing/token.c): check the alphabet first. */
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return GK_EPARSE;
  }
  uint8_t tok[GK_TOKEN_BYTES];
  size_t n = 0;
  const char *end = NULL;
  /* b64_end set: stops at the first invalid character instead of failing,
   * so require that it consumed everything. */
  if (sodium_base642bin(tok, sizeof tok, text, len, NULL, &n, &end,
                        B64_VARIANT) != 0 ||
      end != text + len || n != GK_TOKEN_BYTES)
    return GK_EPARSE;
  memcpy(out, tok, sizeof tok);
  return 0;
}

/* --- replay cache -------------------------------------------------------- */

int gk_token_seen_init(gk_token_seen *c, gk_token_seen_entry *storage,
                       size_t capacity) {
  if (c == NULL || storage == NULL || capacity == 0) return GK_EINVAL;
  c->entries = storage;
  c->capacity = capacity;
  c->count = 0;
  return 0;
}

int gk_token_seen_check_and_add(gk_token_seen *c,
                                const uint8_t id[GK_TOKEN_ID_BYTES],
                                uint64_t expire_s, uint64_t now_s) {
  if (c == NULL || c->entries == NULL || id == NULL || c->count > c->capacity)
    return GK_EINVAL;
  if (expire_s <= now_s) return GK_EEXPIRED;
  /* Drop expired ids (order does not matter: swap with the last one). */
  size_t i = 0;
  while (i < c->count) {
    if (c->entries[i].expire_s <= now_s)
      c->entries[i] = c->entries[--c->count];
    else
      i++;
  }
  for (i = 0; i < c->count; i++)
    if (memcmp(c->entries[i].id, id, GK_TOKEN_ID_BYTES) == 0) return GK_EEXIST;
  if (c->count == c->capacity) return GK_EFULL;
  gk_token_seen_entry *e = &c->entries[c->count++];
  memcpy(e->id, id, GK_TOKEN_ID_BYTES);
  e->expire_s = expire_s;
  return 0;
}

/* --- key files ----------------------------------------------------------- */

int gk_token_key_load(const char *path, uint8_t key[GK_TOKEN_KEY_BYTES],
                      char *err, size_t errlen) {
  msg(err, errlen, "%s", "");
  if (path == NULL || key == NULL) {
    msg(err, errlen, "NULL argument");
    return GK_EINVAL;
  }
  /* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
  int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    msg(err, errlen, "%s: cannot open key file: %s", path, strerror(e));
    return e == ENOENT ? GK_ENOTFOUND : GK_EIO;
  }
  struct stat st;
  int rc = 0;
  uint8_t buf[GK_TOKEN_KEY_BYTES + 1];
  ssize_t n = 0;
  if (fstat(fd, &st) != 0) {
    msg(err, errlen, "%s: cannot stat key file: %s", path, strerror(errno));
    rc = GK_EIO;
  } else if (!S_ISREG(st.st_mode)) {
    msg(err, errlen, "%s: key file is not a regular file", path);
    rc = GK_EINVAL;
  } else if ((st.st_mode & 077) != 0) {
    msg(err, errlen,
        "%s: key file has mode %04o: group or others may "
        "access it; it must be 0600 or stricter (chmod 600 %s)",
        path, (unsigned)(st.st_mode & 07777), path);
    rc = GK_EPERM;
  } else {
    size_t got = 0;
    while (got < sizeof buf) {
      n = read(fd, buf + got, sizeof buf - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (n < 0) {
      msg(err, errlen, "%s: cannot read key file: %s", path, strerror(errno));
      rc = GK_EIO;
    } else if (got != GK_TOKEN_KEY_BYTES) {
      msg(err, errlen,
          "%s: key file has %s%zu bytes, a key is exactly %d "
          "raw bytes",
          path, got > GK_TOKEN_KEY_BYTES ? "more than " : "",
          got > GK_TOKEN_KEY_BYTES ? (size_t)GK_TOKEN_KEY_BYTES : got,
          GK_TOKEN_KEY_BYTES);
      rc = got > GK_TOKEN_KEY_BYTES ? GK_ETOOBIG : GK_ETRUNC;
    } else {
      memcpy(key, buf, GK_TOKEN_KEY_BYTES);
    }
  }
  sodium_memzero(buf, sizeof buf);
  close(fd);
  return rc;
}

int gk_token_key_write(const char *path, char *err, size_t errlen) {
  msg(err, errlen, "%s", "");
  if (path == NULL) {
    msg(err, errlen, "NULL argument");
    return GK_EINVAL;
  }
  if (!sodium_ready()) {
    msg(err, errlen, "libsodium failed to initialise");
    return GK_EIO;
  }
  int fd =
      open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    msg(err, errlen, "%s: cannot create key file: %s%s", path, strerror(e),
        e == EEXIST ? " (a key file is never overwritten)" : "");
    return e == EEXIST ? GK_EEXIST : GK_EIO;
  }
  uint8_t key[GK_TOKEN_KEY_BYTES];
  randombytes_buf(key, sizeof key);
  size_t put = 0;
  int rc = 0;
  while (put < sizeof key) {
    ssize_t n = write(fd, key + put, sizeof key - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      rc = GK_EIO;
      break;
    }
    put += (size_t)n;
  }
  sodium_memzero(key, sizeof key);
  /* The mode at creation is 0600 minus the umask: make it exactly 0600. */
  if (rc == 0 && (fchmod(fd, 0600) != 0 || fsync(fd) != 0)) rc = GK_EIO;
  if (rc != 0)
    msg(err, errlen, "%s: cannot write key file: %s", path, strerror(errno));
  if (close(fd) != 0 && rc == 0) {
    msg(err, errlen, "%s: cannot write key file: %s", path, strerror(errno));
    rc = GK_EIO;
  }
  if (rc != 0) unlink(path);
  return rc;
}
