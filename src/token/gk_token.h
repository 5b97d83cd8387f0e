/* gk_token.h: connect tokens, after netcode.io's.
 *
 * A backend that shares a 32-byte private key with the servers mints a
 * short-lived token that says who may connect (a client id), to do what
 * (create a room of a genre for N players, or join a room by code as a
 * player or a spectator), and until when. The server opens the token
 * before it gives out anything: a token it cannot open is refused.
 *
 * A token is GK_TOKEN_BYTES bytes: a public part, readable by anyone, and
 * a private part sealed with XChaCha20-Poly1305-IETF under the key, with
 * the whole public part as associated data, so changing any byte of
 * either part makes the token fail to open. Every integer is
 * little-endian, fixed width. The byte layout (docs/PROTOCOL.md, "Connect
 * tokens", says the same for backend authors):
 *
 *   public part (68 bytes, the AEAD's associated data)
 *    off size
 *     0   4  magic "GKCT" (0x47 0x4B 0x43 0x54)
 *     4   4  format u32 = GK_TOKEN_FORMAT
 *     8   4  protocol_version u32 (the wire's GK_WIRE_VERSION)
 *    12   8  create_s u64, unix seconds
 *    20   8  expire_s u64, unix seconds; create_s < expire_s <=
 *            create_s + GK_TOKEN_LIFETIME_MAX
 *    28  16  token id, random
 *    44  24  nonce, random (the XChaCha20-Poly1305-IETF nonce)
 *   sealed part (80 bytes at offset 68): the 64-byte private part
 *   encrypted, followed by the 16-byte Poly1305 tag
 *    off size (within the 64 plaintext bytes)
 *     0   8  client_id u64
 *     8   1  kind u8: 1 = GK_TOKEN_CREATE, 2 = GK_TOKEN_JOIN
 *     9   1  max_players u8: create 1..GK_TOKEN_PLAYERS_MAX; join 0
 *    10   1  role u8: join 0 = player, 1 = spectator; create 0
 *    11   1  slot u8: join as player 0..GK_TOKEN_PLAYERS_MAX-1 or
 *            GK_TOKEN_SLOT_ANY (255); spectator and create 255
 *    12   4  reserved, zero
 *    16  48  name, NUL-padded (every byte after the text is 0):
 *            create: genre name, 1..GK_TOKEN_GENRE_MAX of [a-z0-9_-]
 *            join:   room code, GK_TOKEN_CODE_LEN of [A-Z2-7]
 *
 * Opening checks, in this order, and stops at the first failure: the size
 * (GK_ETRUNC shorter, GK_ETOOBIG longer), the magic and format
 * (GK_EPROTO), the protocol version (GK_EVERSION), the seal (GK_EAUTH),
 * the private part and the lifetime (GK_ERANGE), then the time: expired
 * when now_s >= expire_s (GK_EEXPIRED), issued in the future when
 * create_s > now_s + GK_TOKEN_SKEW_S (GK_ENOTYET). So GK_EEXPIRED and
 * GK_ENOTYET are only returned for authentic, well-formed tokens.
 * A wrong key and a tampered token are indistinguishable by design: both
 * are GK_EAUTH, and nothing of the private part is revealed.
 *
 * A token can be opened any number of times until it expires: a server
 * that admits once per token also keeps the ids of the tokens it admitted
 * in a gk_token_seen cache (below) until they expire.
 *
 * Pointers: every pointer argument must be non-NULL unless its comment
 * says otherwise; a NULL one is refused with GK_EINVAL, never
 * dereferenced. `err` may be NULL (then errlen is ignored); otherwise it
 * receives a NUL-terminated message of at most errlen - 1 bytes that says
 * what failed ("" on success). All storage is the caller's.
 *
 * Threads: the functions keep no state of their own (a gk_token_seen is
 * the caller's; guard it if threads share it). This module links libsodium
 * and libc only.
 */
#ifndef GK_TOKEN_H
#define GK_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define GK_TOKEN_FORMAT 1
#define GK_TOKEN_PROTOCOL 2 /* = GK_WIRE_VERSION (checked at build) */
#define GK_TOKEN_KEY_BYTES 32
#define GK_TOKEN_ID_BYTES 16
#define GK_TOKEN_NONCE_BYTES 24
#define GK_TOKEN_PUBLIC_BYTES 68
#define GK_TOKEN_PRIVATE_BYTES 64
#define GK_TOKEN_TAG_BYTES 16
#define GK_TOKEN_BYTES 148      /* 68 + 64 + 16 */
#define GK_TOKEN_B64_LEN 198    /* base64url characters, no padding */
#define GK_TOKEN_GENRE_MAX 32   /* = GK_WIRE_GENRE_MAX */
#define GK_TOKEN_CODE_LEN 16    /* = GK_WIRE_CODE_LEN */
#define GK_TOKEN_PLAYERS_MAX 16 /* = GK_PLAYERS_MAX */
#define GK_TOKEN_SLOT_ANY 255
/* seconds from create to expire, at most */
#define GK_TOKEN_LIFETIME_MAX 3600
#define GK_TOKEN_SKEW_S 30 /* clock skew allowed for create_s, s */

enum { GK_TOKEN_CREATE = 1, GK_TOKEN_JOIN = 2 };
enum { GK_TOKEN_PLAYER = 0, GK_TOKEN_SPECTATOR = 1 };

/* What a token grants. Fields that do not belong to `kind` must be zero
 * (strings empty), except slot, which is GK_TOKEN_SLOT_ANY unless a join
 * as player names a slot. */
typedef struct gk_token_grant {
  uint8_t kind;                       /* GK_TOKEN_CREATE or _JOIN */
  char genre[GK_TOKEN_GENRE_MAX + 1]; /* create: [a-z0-9_-], 1..32 */
  uint8_t max_players;                /* create: 1..GK_TOKEN_PLAYERS_MAX */
  char code[GK_TOKEN_CODE_LEN + 1];   /* join: [A-Z2-7], exactly 16 */
  uint8_t role;                       /* join: GK_TOKEN_PLAYER/SPECTATOR */
  uint8_t slot;                       /* join as player: 0..15 or ANY */
} gk_token_grant;

/* The public part, as read from the bytes: unauthenticated until
 * gk_token_open succeeds on the same bytes. */
typedef struct gk_token_public {
  uint32_t format;
  uint32_t protocol_version;
  uint64_t create_s;
  uint64_t expire_s;
  uint8_t id[GK_TOKEN_ID_BYTES];
  uint8_t nonce[GK_TOKEN_NONCE_BYTES];
} gk_token_public;

/* An opened (authentic, well-formed, unexpired) token. */
typedef struct gk_token {
  gk_token_public pub;
  uint64_t client_id;
  gk_token_grant grant;
} gk_token;

/* Checks a grant the way gk_token_open checks a private part. Returns 0,
 * GK_EINVAL (g NULL) or GK_ERANGE, with the field named in err. */
int gk_token_grant_check(const gk_token_grant *g, char *err, size_t errlen);

/* Mints a token for `client_id` with grant `g`, created at now_s, expiring
 * at now_s + expires_in_s (1..GK_TOKEN_LIFETIME_MAX), with protocol
 * version GK_TOKEN_PROTOCOL and a random id and nonce. Returns 0,
 * GK_EINVAL (a NULL pointer), GK_ERANGE (a bad grant or expires_in_s, or
 * the expiry does not fit a u64) or GK_EIO (libsodium failed to start).
 * `out` is written only on success. */
int gk_token_mint(const gk_token_grant *g, uint64_t client_id, uint64_t now_s,
                  uint32_t expires_in_s, const uint8_t key[GK_TOKEN_KEY_BYTES],
                  uint8_t out[GK_TOKEN_BYTES]);

/* Opens `len` bytes as a token for `protocol_version` at time now_s.
 * Returns 0 and fills `out`, or one of the codes in the order given at the
 * top of this file (or GK_EINVAL for a NULL pointer; `bytes` may be NULL
 * only when len is 0); on failure `out` is zeroed. */
int gk_token_open(const uint8_t *bytes, size_t len,
                  const uint8_t key[GK_TOKEN_KEY_BYTES],
                  uint32_t protocol_version, uint64_t now_s, gk_token *out,
                  char *err, size_t errlen);

/* Reads the public part without the key: for display (gk-token inspect)
 * and logs only, never for a decision. Returns 0, GK_EINVAL, GK_ETRUNC,
 * GK_ETOOBIG or GK_EPROTO (magic or format); `bytes` may be NULL only when
 * len is 0. */
int gk_token_peek(const uint8_t *bytes, size_t len, gk_token_public *out);

/* --- text form: base64url (RFC 4648 section 5), no padding ------------- */

/* Writes the GK_TOKEN_B64_LEN characters and a NUL to `out`. Returns 0 or
 * GK_EINVAL. */
int gk_token_to_base64(const uint8_t tok[GK_TOKEN_BYTES],
                       char out[GK_TOKEN_B64_LEN + 1]);

/* Decodes `len` characters of text (no NUL needed; `text` may be NULL only
 * when len is 0) into a token's bytes. Only the canonical encoding is
 * accepted: no padding, no whitespace, unused low bits zero. Returns 0,
 * GK_EINVAL, GK_ETRUNC / GK_ETOOBIG (not GK_TOKEN_B64_LEN characters) or
 * GK_EPARSE (a character outside [A-Za-z0-9_-] or a non-canonical end).
 * `out` is written only on success. */
int gk_token_from_base64(const char *text, size_t len,
                         uint8_t out[GK_TOKEN_BYTES]);

/* --- replay cache ------------------------------------------------------- */

/* Ids of admitted tokens, kept until their tokens expire. The caller gives
 * the storage: `capacity` entries. Size it for the most tokens admitted
 * within one token lifetime (e.g. connects/s * the longest expires_in);
 * when it is full of unexpired ids, new tokens are refused (GK_EFULL)
 * rather than an unexpired id forgotten, because a forgotten id could be
 * used again. An id is dropped once now_s >= its expire_s, the same rule
 * gk_token_open uses, so pass both the same clock (wall clock seconds; if
 * it steps back, a dropped id could be replayed until its expiry). Each
 * call scans the entries: O(capacity), fine for thousands of entries; call
 * it only after gk_token_open succeeded, so only key holders can fill it. */
typedef struct gk_token_seen_entry {
  uint8_t id[GK_TOKEN_ID_BYTES];
  uint64_t expire_s;
} gk_token_seen_entry;

typedef struct gk_token_seen {
  gk_token_seen_entry *entries; /* the caller's storage */
  size_t capacity;
  size_t count; /* entries in use (some may have expired since) */
} gk_token_seen;

/* Starts an empty cache over `storage` (capacity >= 1 entries). Returns 0
 * or GK_EINVAL. */
int gk_token_seen_init(gk_token_seen *c, gk_token_seen_entry *storage,
                       size_t capacity);

/* Admits token `id` once: drops expired ids, then returns GK_EEXIST if
 * `id` is in the cache (the token was already used), GK_EFULL if the
 * cache is full of unexpired ids, GK_EEXPIRED if expire_s <= now_s (an
 * expired token is never admitted), else adds it and returns 0. GK_EINVAL
 * for a NULL pointer. */
int gk_token_seen_check_and_add(gk_token_seen *c,
                                const uint8_t id[GK_TOKEN_ID_BYTES],
                                uint64_t expire_s, uint64_t now_s);

/* --- key files ---------------------------------------------------------- */

/* Reads a key file: exactly GK_TOKEN_KEY_BYTES raw bytes, a regular file
 * (symbolic links are followed) whose mode gives group and others no
 * access at all (mode & 077 == 0, like ssh's private keys; checked with
 * fstat on the opened file). Returns 0, GK_EINVAL (NULL, or not a regular
 * file), GK_ENOTFOUND, GK_EIO (cannot open or read), GK_EPERM (group or
 * others may access it), GK_ETRUNC / GK_ETOOBIG (not 32 bytes). `key` is
 * written only on success. */
int gk_token_key_load(const char *path, uint8_t key[GK_TOKEN_KEY_BYTES],
                      char *err, size_t errlen);

/* Creates a new key file at `path`: 32 random bytes, mode 0600, refusing
 * to replace anything that exists (O_CREAT | O_EXCL, no symlink followed).
 * Returns 0, GK_EINVAL, GK_EEXIST or GK_EIO (a half-written file is
 * removed). */
int gk_token_key_write(const char *path, char *err, size_t errlen);

#endif
