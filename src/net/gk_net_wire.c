/* gk_net_wire.c: the codec of the core messages (match and room control,
 * GK_WIRE_MSG_MAP up to ERROR), and what every codec file shares: the
 * checks, the encoding cursor and the optional connect token.
 *
 * Encoding writes through a small bounded cursor (put_*) that refuses to
 * pass the end; decoding reads only through gk_reader, so a short datagram
 * can only ever yield GK_ETRUNC. Each message body has one encoder and one
 * decoder next to each other, in the order of GK_WIRE_MSG_MAP, and both
 * call the same check_* functions so that whatever encodes also decodes.
 * They are reached only through the type table (gk_net_wire_table.c),
 * which also holds the header and the size limits.
 */
#include "gk_net_wire.h"

#include <string.h>

#include "gk_err.h"
#include "gk_net_wire_internal.h"
#include "gk_state.h"

const char *gk_wire_end_name(int reason) {
  switch (reason) {
  case GK_WIRE_END_GAME_OVER:
    return "game_over";
  case GK_WIRE_END_HOST:
    return "host";
  case GK_WIRE_END_ALL_LEFT:
    return "all_left";
  case GK_WIRE_END_SHUTDOWN:
    return "shutdown";
  case GK_WIRE_END_DESYNC:
    return "desync";
  case GK_WIRE_END_REMOVED:
    return "removed";
  default:
    return "none";
  }
}

/* --- shared checks ------------------------------------------------------- */

static int check_input_size(uint32_t n) {
  return n >= 1 && n <= GK_INPUT_SIZE_MAX ? 0 : GK_ERANGE;
}

static int check_players(uint32_t n) {
  return n >= 1 && n <= GK_PLAYERS_MAX ? 0 : GK_ERANGE;
}

/* A step range first..first+count-1 must stay below GK_WIRE_STEP_LIMIT, so
 * no receiver ever adds a wire value into an overflow. */
static int check_range(uint64_t first, uint64_t count) {
  return first < GK_WIRE_STEP_LIMIT && count <= GK_WIRE_STEP_LIMIT - first
             ? 0
             : GK_ERANGE;
}

static int check_mask(uint32_t mask, uint32_t players) {
  return (mask & ~gk_all_players(players)) == 0 ? 0 : GK_EPROTO;
}

static int genre_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

static int code_char(int c) {
  return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

/* kind: 'g' genre name, 'j' JSON text (no NUL, no control bytes but
 * whitespace; DEL 0x7f is a control byte), 't' printable ASCII text. */
static int check_text(const char *s, size_t len, size_t max, int kind) {
  if (len > max) return GK_ETOOBIG;
  if (kind == 'g' && len == 0) return GK_EPROTO;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    int ok;
    if (kind == 'g')
      ok = genre_char(c);
    else if (kind == 'j')
      ok = (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' || c == '\r';
    else
      ok = c >= 0x20 && c < 0x7f;
    if (!ok) return GK_EPROTO;
  }
  return 0;
}

int gk_wire_code_valid(const char *code) {
  if (code == NULL) return 0;
  for (size_t i = 0; i < GK_WIRE_CODE_LEN; i++)
    if (!code_char((unsigned char)code[i])) return 0;
  return code[GK_WIRE_CODE_LEN] == '\0';
}

int gk_wire_addr_split(const char *addr, char *host, size_t cap,
                       uint16_t *port) {
  if (addr == NULL || host == NULL || port == NULL) return GK_EINVAL;
  const char *colon = strrchr(addr, ':');
  if (colon == NULL || colon == addr || colon[1] == '\0') return GK_EINVAL;
  uint32_t v = 0;
  for (const char *c = colon + 1; *c != '\0'; c++) {
    if (*c < '0' || *c > '9' || v > 65535) return GK_EINVAL;
    v = v * 10 + (uint32_t)(*c - '0');
  }
  if (v == 0 || v > 65535) return GK_EINVAL;
  size_t n = (size_t)(colon - addr);
  if (n >= cap) return GK_ETOOBIG;
  memcpy(host, addr, n);
  host[n] = '\0';
  *port = (uint16_t)v;
  return 0;
}

static int check_confirmed_shape(uint32_t players, uint32_t input_size,
                                 uint32_t count) {
  int rc;
  if ((rc = check_players(players)) != 0 ||
      (rc = check_input_size(input_size)) != 0)
    return rc;
  if (count > gk_wire_confirmed_fit(players, input_size)) return GK_ETOOBIG;
  return 0;
}

/* Fixed part of CONFIRMED / INPUT: header + 2 u8 + 2 u64 + count u8. */
#define MATCH_FIXED (GK_WIRE_HEADER + 2u + 8u + 8u + 1u)

/* CONFIRMED has hash_ack too. */
#define CONFIRMED_FIXED (MATCH_FIXED + 8u)
/* INPUT has hash_count too, and with hashes hash_first before them. */
#define INPUT_FIXED (MATCH_FIXED + 1u)
#define HASH_PART_FIXED 8u

uint32_t gk_wire_confirmed_fit(uint32_t players, uint32_t input_size) {
  if (check_players(players) != 0 || check_input_size(input_size) != 0)
    return 0;
  size_t n =
      (GK_WIRE_MAX - CONFIRMED_FIXED) / GK_WIRE_STEP_BYTES(players, input_size);
  return n > GK_WIRE_STEPS_MAX ? GK_WIRE_STEPS_MAX : (uint32_t)n;
}

uint32_t gk_wire_input_fit(uint32_t input_size) {
  if (check_input_size(input_size) != 0) return 0;
  size_t n = (GK_WIRE_MAX - INPUT_FIXED) / input_size;
  return n > GK_WIRE_STEPS_MAX ? GK_WIRE_STEPS_MAX : (uint32_t)n;
}

uint32_t gk_wire_input_hash_fit(uint32_t input_size, uint32_t count) {
  if (check_input_size(input_size) != 0 ||
      count > gk_wire_input_fit(input_size))
    return 0;
  size_t used = INPUT_FIXED + (size_t)count * input_size + HASH_PART_FIXED;
  if (used >= GK_WIRE_MAX) return 0;
  size_t n = (GK_WIRE_MAX - used) / 8u;
  return n > GK_WIRE_STEPS_MAX ? GK_WIRE_STEPS_MAX : (uint32_t)n;
}

uint64_t gk_wire_input_hash(const gk_wire_input *m, uint32_t i) {
  return gk_load_le64(m->hashes + (size_t)i * 8u);
}

void gk_wire_step_pack(uint8_t *dst, uint32_t active_mask, uint32_t flags,
                       const uint8_t *records, uint32_t players,
                       uint32_t input_size) {
  gk_store_le(dst, active_mask, 4);
  gk_store_le(dst + 4, flags, 4);
  memcpy(dst + 8, records, (size_t)players * input_size);
}

void gk_wire_step_get(const gk_wire_confirmed *c, uint32_t i,
                      gk_step_input *out) {
  const uint8_t *p =
      c->steps + (size_t)i * GK_WIRE_STEP_BYTES(c->players, c->input_size);
  out->step = c->first + i;
  out->active_mask = gk_load_le32(p);
  out->flags = gk_load_le32(p + 4);
  out->players = c->players;
  out->inputs = p + 8;
}

/* --- encoding cursor ------------------------------------------------------ */

typedef gk__wire_put put_buf; /* gk_net_wire_internal.h */

static void put_bytes(put_buf *b, const void *src, size_t n) {
  if (b->err != 0) return;
  if (n > b->cap - b->len) {
    b->err = GK_ETOOBIG;
    return;
  }
  if (n > 0) memcpy(b->p + b->len, src, n);
  b->len += n;
}

static void put_le(put_buf *b, uint64_t v, unsigned n) {
  uint8_t tmp[8];
  if (n > sizeof tmp) { /* callers write 1..8 bytes; says so to gcc -O3 */
    b->err = GK_EINVAL;
    return;
  }
  gk_store_le(tmp, v, n);
  put_bytes(b, tmp, n);
}

void gk__wire_put_bytes(gk__wire_put *b, const void *src, size_t n) {
  put_bytes(b, src, n);
}

void gk__wire_put_le(gk__wire_put *b, uint64_t v, unsigned n) {
  put_le(b, v, n);
}

static void put_str(put_buf *b, const char *s, size_t max, unsigned lenbytes,
                    int kind) {
  size_t n = strnlen(s, max + 1);
  int rc = check_text(s, n, max, kind);
  if (rc != 0) {
    if (b->err == 0) b->err = rc;
    return;
  }
  put_le(b, n, lenbytes);
  put_bytes(b, s, n);
}

/* --- decoding helpers ----------------------------------------------------- */

/* Reads a length-prefixed string into out (max + 1 bytes), checked. */
static int get_str(gk_reader *r, char *out, size_t max, unsigned lenbytes,
                   int kind) {
  size_t n = lenbytes == 1 ? gk_read_u8(r) : gk_read_u16(r);
  out[0] = '\0';
  if (r->err != 0) return r->err;
  if (n > max) return GK_ETOOBIG;
  if (n > gk_reader_left(r)) return GK_ETRUNC;
  int rc = gk_read_bytes(r, out, n);
  if (rc != 0) return rc;
  out[n] = '\0';
  rc = check_text(out, n, max, kind);
  if (rc != 0) out[0] = '\0';
  return rc;
}

/* Points *out at the next n bytes of the datagram (no copy). */
static int get_span(gk_reader *r, size_t n, const uint8_t **out) {
  if (r->err != 0) return r->err;
  if (n > gk_reader_left(r)) return GK_ETRUNC;
  *out = r->p + r->pos;
  r->pos += n;
  return 0;
}

/* --- per message ---------------------------------------------------------- */

int gk__wire_enc_input(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_input *m = &msg->u.input;
  int rc;
  if ((rc = check_input_size(m->input_size)) != 0) return rc;
  if (m->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  if (m->count > gk_wire_input_fit(m->input_size)) return GK_ETOOBIG;
  if ((rc = check_range(m->first, m->count)) != 0 ||
      (rc = check_range(m->ack, 0)) != 0)
    return rc;
  if (m->count > 0 && m->records == NULL) return GK_EINVAL;
  put_le(b, m->slot, 1);
  put_le(b, m->input_size, 1);
  put_le(b, m->ack, 8);
  put_le(b, m->first, 8);
  put_le(b, m->count, 1);
  put_bytes(b, m->records, (size_t)m->count * m->input_size);
  put_le(b, m->hash_count, 1);
  if (m->hash_count == 0) return b->err;
  if (m->hash_count > GK_WIRE_STEPS_MAX) return GK_ETOOBIG;
  if ((rc = check_range(m->hash_first, m->hash_count)) != 0) return rc;
  if (m->hashes == NULL) return GK_EINVAL;
  put_le(b, m->hash_first, 8);
  put_bytes(b, m->hashes, (size_t)m->hash_count * 8u);
  return b->err;
}

/* The hash report after an INPUT's records: hash_count, and only when it
 * is not 0, hash_first and the hashes. */
static int dec_input_hashes(gk_reader *r, gk_wire_input *m) {
  int rc;
  m->hash_count = gk_read_u8(r);
  if (r->err != 0 || m->hash_count == 0) return r->err;
  if (m->hash_count > GK_WIRE_STEPS_MAX) return GK_ETOOBIG;
  m->hash_first = gk_read_u64(r);
  if (r->err != 0) return r->err;
  if ((rc = check_range(m->hash_first, m->hash_count)) != 0) return rc;
  return get_span(r, (size_t)m->hash_count * 8u, &m->hashes);
}

int gk__wire_dec_input(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_input *m = &msg->u.input;
  int rc;
  m->slot = gk_read_u8(r);
  m->input_size = gk_read_u8(r);
  m->ack = gk_read_u64(r);
  m->first = gk_read_u64(r);
  m->count = gk_read_u8(r);
  m->records = NULL;
  m->hash_count = 0;
  m->hash_first = 0;
  m->hashes = NULL;
  if (r->err != 0) return r->err;
  if (m->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  if ((rc = check_input_size(m->input_size)) != 0) return rc;
  if (m->count > gk_wire_input_fit(m->input_size)) return GK_ETOOBIG;
  if ((rc = check_range(m->first, m->count)) != 0 ||
      (rc = check_range(m->ack, 0)) != 0)
    return rc;
  rc = get_span(r, (size_t)m->count * m->input_size, &m->records);
  if (rc != 0) return rc;
  return dec_input_hashes(r, m);
}

/* Every step's mask must name only existing players and its flags only
 * known bits. */
static int check_steps(const gk_wire_confirmed *m) {
  for (uint32_t i = 0; i < m->count; i++) {
    gk_step_input s;
    gk_wire_step_get(m, i, &s);
    if (check_mask(s.active_mask, m->players) != 0 ||
        !gk_step_flags_valid(s.flags))
      return GK_EPROTO;
  }
  return 0;
}

int gk__wire_enc_confirmed(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_confirmed *m = &msg->u.confirmed;
  int rc;
  if ((rc = check_confirmed_shape(m->players, m->input_size, m->count)) != 0)
    return rc;
  if ((rc = check_range(m->first, m->count)) != 0 ||
      (rc = check_range(m->ack, 0)) != 0 ||
      (rc = check_range(m->hash_ack, 0)) != 0)
    return rc;
  if (m->count > 0 && m->steps == NULL) return GK_EINVAL;
  if ((rc = check_steps(m)) != 0) return rc;
  put_le(b, m->players, 1);
  put_le(b, m->input_size, 1);
  put_le(b, m->ack, 8);
  put_le(b, m->hash_ack, 8);
  put_le(b, m->first, 8);
  put_le(b, m->count, 1);
  put_bytes(b, m->steps,
            m->count * GK_WIRE_STEP_BYTES(m->players, m->input_size));
  return b->err;
}

int gk__wire_dec_confirmed(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_confirmed *m = &msg->u.confirmed;
  int rc;
  m->players = gk_read_u8(r);
  m->input_size = gk_read_u8(r);
  m->ack = gk_read_u64(r);
  m->hash_ack = gk_read_u64(r);
  m->first = gk_read_u64(r);
  m->count = gk_read_u8(r);
  m->steps = NULL;
  if (r->err != 0) return r->err;
  if ((rc = check_confirmed_shape(m->players, m->input_size, m->count)) != 0)
    return rc;
  if ((rc = check_range(m->first, m->count)) != 0 ||
      (rc = check_range(m->ack, 0)) != 0 ||
      (rc = check_range(m->hash_ack, 0)) != 0)
    return rc;
  rc = get_span(r, m->count * GK_WIRE_STEP_BYTES(m->players, m->input_size),
                &m->steps);
  if (rc != 0) return rc;
  return check_steps(m);
}

int gk__wire_enc_hash(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_hash *m = &msg->u.hash;
  int rc;
  if (m->count < 1 || m->count > GK_WIRE_STEPS_MAX) return GK_ERANGE;
  if ((rc = check_range(m->first, m->count)) != 0) return rc;
  put_le(b, m->first, 8);
  put_le(b, m->count, 1);
  for (uint32_t i = 0; i < m->count; i++) put_le(b, m->hashes[i], 8);
  return b->err;
}

int gk__wire_dec_hash(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_hash *m = &msg->u.hash;
  int rc;
  m->first = gk_read_u64(r);
  m->count = gk_read_u8(r);
  if (r->err != 0) return r->err;
  if (m->count < 1 || m->count > GK_WIRE_STEPS_MAX) return GK_ERANGE;
  if ((rc = check_range(m->first, m->count)) != 0) return rc;
  if ((size_t)m->count * 8u > gk_reader_left(r)) return GK_ETRUNC;
  for (uint32_t i = 0; i < m->count; i++) m->hashes[i] = gk_read_u64(r);
  return r->err;
}

int gk__wire_enc_stall(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_stall *m = &msg->u.stall;
  if (check_range(m->step, 0) != 0 || m->awaited == 0 ||
      check_mask(m->awaited, GK_PLAYERS_MAX) != 0)
    return GK_ERANGE;
  put_le(b, m->step, 8);
  put_le(b, m->awaited, 4);
  put_le(b, m->waited_ms, 4);
  return b->err;
}

int gk__wire_dec_stall(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_stall *m = &msg->u.stall;
  m->step = gk_read_u64(r);
  m->awaited = gk_read_u32(r);
  m->waited_ms = gk_read_u32(r);
  if (r->err != 0) return r->err;
  if (check_range(m->step, 0) != 0 || m->awaited == 0 ||
      check_mask(m->awaited, GK_PLAYERS_MAX) != 0)
    return GK_ERANGE;
  return 0;
}

int gk__wire_enc_desync(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_desync *m = &msg->u.desync;
  if (check_range(m->step, 0) != 0 || m->player >= GK_PLAYERS_MAX)
    return GK_ERANGE;
  put_le(b, m->step, 8);
  put_le(b, m->player, 1);
  put_le(b, m->host_hash, 8);
  put_le(b, m->peer_hash, 8);
  return b->err;
}

int gk__wire_dec_desync(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_desync *m = &msg->u.desync;
  m->step = gk_read_u64(r);
  m->player = gk_read_u8(r);
  m->host_hash = gk_read_u64(r);
  m->peer_hash = gk_read_u64(r);
  if (r->err != 0) return r->err;
  if (check_range(m->step, 0) != 0 || m->player >= GK_PLAYERS_MAX)
    return GK_ERANGE;
  return 0;
}

static int check_reason(uint32_t reason) {
  return reason >= 1 && reason <= GK_WIRE_END_REASON_MAX ? 0 : GK_ERANGE;
}

int gk__wire_enc_match_end(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_match_end *m = &msg->u.match_end;
  if (check_range(m->step, 0) != 0 || check_reason(m->reason) != 0)
    return GK_ERANGE;
  put_le(b, m->step, 8);
  put_le(b, m->reason, 1);
  return b->err;
}

int gk__wire_dec_match_end(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_match_end *m = &msg->u.match_end;
  m->step = gk_read_u64(r);
  m->reason = gk_read_u8(r);
  if (r->err != 0) return r->err;
  if (check_range(m->step, 0) != 0 || check_reason(m->reason) != 0)
    return GK_ERANGE;
  return 0;
}

int gk__wire_enc_end_match(const gk_wire_msg *m, put_buf *b) {
  int rc = check_reason(m->u.end_reason);
  put_le(b, m->u.end_reason, 1);
  return rc != 0 ? rc : b->err;
}

int gk__wire_dec_end_match(gk_reader *r, gk_wire_msg *m) {
  m->u.end_reason = gk_read_u8(r);
  return r->err != 0 ? r->err : check_reason(m->u.end_reason);
}

static int check_remove(const gk_wire_remove *m) {
  if (m->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  if (m->step != GK_WIRE_STEP_ASAP && check_range(m->step, 0) != 0)
    return GK_ERANGE;
  return 0;
}

int gk__wire_enc_remove(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_remove *m = &msg->u.remove;
  int rc = check_remove(m);
  if (rc != 0) return rc;
  put_le(b, m->slot, 1);
  put_le(b, m->step, 8);
  return b->err;
}

int gk__wire_dec_remove(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_remove *m = &msg->u.remove;
  m->slot = gk_read_u8(r);
  m->step = gk_read_u64(r);
  if (r->err != 0) return r->err;
  return check_remove(m);
}

/* The optional connect token of CREATE_ROOM, JOIN_ROOM, REJOIN_ROOM and
 * SPECTATE: its length (0 or GK_WIRE_TOKEN_BYTES, nothing else), then its
 * bytes (gk_net_wire_internal.h). */
static int check_token_len(uint32_t n) {
  return n == 0 || n == GK_WIRE_TOKEN_BYTES ? 0 : GK_EPROTO;
}

int gk__wire_enc_token(uint8_t len, const uint8_t *token, put_buf *b) {
  if (check_token_len(len) != 0) return GK_EPROTO;
  put_le(b, len, 1);
  put_bytes(b, token, len);
  return b->err;
}

int gk__wire_dec_token(gk_reader *r, uint8_t *len, uint8_t *token) {
  *len = gk_read_u8(r);
  if (r->err != 0) return r->err;
  if (check_token_len(*len) != 0) {
    *len = 0;
    return GK_EPROTO;
  }
  if (*len > gk_reader_left(r)) {
    *len = 0;
    return GK_ETRUNC;
  }
  return gk_read_bytes(r, token, *len);
}

int gk__wire_enc_create_room(const gk_wire_msg *msg, put_buf *b) {
  return gk__wire_enc_create_body(&msg->u.create_room, b);
}

int gk__wire_dec_create_room(gk_reader *r, gk_wire_msg *msg) {
  return gk__wire_dec_create_body(r, &msg->u.create_room);
}

int gk__wire_enc_create_body(const gk_wire_create_room *m, put_buf *b) {
  if (check_players(m->max_players) != 0) return GK_ERANGE;
  put_le(b, m->max_players, 1);
  put_le(b, m->input_delay, 1);
  put_str(b, m->genre, GK_WIRE_GENRE_MAX, 1, 'g');
  put_str(b, m->config, GK_WIRE_CONFIG_MAX, 2, 'j');
  if (b->err != 0) return b->err;
  return gk__wire_enc_token(m->token_len, m->token, b);
}

int gk__wire_dec_create_body(gk_reader *r, gk_wire_create_room *m) {
  int rc;
  m->max_players = gk_read_u8(r);
  m->input_delay = gk_read_u8(r);
  if ((rc = get_str(r, m->genre, GK_WIRE_GENRE_MAX, 1, 'g')) != 0 ||
      (rc = get_str(r, m->config, GK_WIRE_CONFIG_MAX, 2, 'j')) != 0 ||
      (rc = gk__wire_dec_token(r, &m->token_len, m->token)) != 0)
    return rc;
  return check_players(m->max_players);
}

static int check_role(uint32_t role) {
  return role == GK_WIRE_ROLE_PLAYER || role == GK_WIRE_ROLE_SPECTATOR
             ? 0
             : GK_ERANGE;
}

/* ROOM_CREATED (with_slot) and JOIN_ROOM (!with_slot: role and token). */
static int enc_code(const gk_wire_room_code *m, int with_slot, put_buf *b) {
  if (!gk_wire_code_valid(m->code)) return GK_EPROTO;
  if (with_slot && m->slot >= GK_PLAYERS_MAX) return GK_ERANGE;
  if (!with_slot && check_role(m->role) != 0) return GK_ERANGE;
  put_bytes(b, m->code, GK_WIRE_CODE_LEN);
  if (with_slot) {
    put_le(b, m->slot, 1);
    return b->err;
  }
  put_le(b, m->role, 1);
  if (b->err != 0) return b->err;
  return gk__wire_enc_token(m->token_len, m->token, b);
}

static int dec_code(gk_reader *r, gk_wire_room_code *m, int with_slot) {
  int rc = gk_read_bytes(r, m->code, GK_WIRE_CODE_LEN);
  m->code[GK_WIRE_CODE_LEN] = '\0';
  m->slot = with_slot ? gk_read_u8(r) : 0;
  m->role = with_slot ? 0 : gk_read_u8(r);
  if (rc != 0 || r->err != 0) return r->err != 0 ? r->err : rc;
  if (!gk_wire_code_valid(m->code)) {
    m->code[0] = '\0';
    return GK_EPROTO;
  }
  if (m->slot >= GK_PLAYERS_MAX || check_role(m->role) != 0) return GK_ERANGE;
  return with_slot ? 0 : gk__wire_dec_token(r, &m->token_len, m->token);
}

static int check_joined(const gk_wire_joined *m) {
  if (check_players(m->players) != 0 || m->slot >= GK_PLAYERS_MAX)
    return GK_ERANGE;
  return 0;
}

int gk__wire_enc_room_created(const gk_wire_msg *m, put_buf *b) {
  return enc_code(&m->u.room, 1, b);
}

int gk__wire_dec_room_created(gk_reader *r, gk_wire_msg *m) {
  return dec_code(r, &m->u.room, 1);
}

int gk__wire_enc_join_room(const gk_wire_msg *m, put_buf *b) {
  return enc_code(&m->u.room, 0, b);
}

int gk__wire_dec_join_room(gk_reader *r, gk_wire_msg *m) {
  return dec_code(r, &m->u.room, 0);
}

int gk__wire_enc_joined(const gk_wire_msg *m, put_buf *b) {
  int rc = check_joined(&m->u.joined);
  put_le(b, m->u.joined.slot, 1);
  put_le(b, m->u.joined.players, 1);
  return rc != 0 ? rc : b->err;
}

int gk__wire_dec_joined(gk_reader *r, gk_wire_msg *m) {
  m->u.joined.slot = gk_read_u8(r);
  m->u.joined.players = gk_read_u8(r);
  return r->err != 0 ? r->err : check_joined(&m->u.joined);
}

/* START_MATCH has no body. */
int gk__wire_enc_empty(const gk_wire_msg *m, put_buf *b) {
  (void)m;
  return b->err;
}

int gk__wire_dec_empty(gk_reader *r, gk_wire_msg *m) {
  (void)m;
  return r->err;
}

int gk__wire_enc_shutdown(const gk_wire_msg *m, put_buf *b) {
  put_le(b, m->u.shutdown_grace_ms, 4);
  return b->err;
}

int gk__wire_dec_shutdown(gk_reader *r, gk_wire_msg *m) {
  m->u.shutdown_grace_ms = gk_read_u32(r);
  return r->err;
}

static int check_match_start(const gk_wire_match_start *m) {
  if (check_players(m->players) != 0 || m->slot >= m->players) return GK_ERANGE;
  if (m->active_mask == 0 || check_mask(m->active_mask, m->players) != 0)
    return GK_EPROTO;
  if (check_range(m->first_step, 0) != 0) return GK_ERANGE;
  if (m->step_seconds.num == 0 || m->step_seconds.den == 0) return GK_ERANGE;
  return 0;
}

int gk__wire_enc_match_start(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_match_start *m = &msg->u.match_start;
  int rc = check_match_start(m);
  if (rc != 0) return rc;
  put_le(b, m->seed, 8);
  put_le(b, m->players, 1);
  put_le(b, m->slot, 1);
  put_le(b, m->active_mask, 4);
  put_le(b, m->first_step, 8);
  put_le(b, m->input_delay, 1);
  put_le(b, m->lead, 1);
  put_le(b, m->step_seconds.num, 4);
  put_le(b, m->step_seconds.den, 4);
  put_str(b, m->genre, GK_WIRE_GENRE_MAX, 1, 'g');
  put_str(b, m->config, GK_WIRE_CONFIG_MAX, 2, 'j');
  return b->err;
}

int gk__wire_dec_match_start(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_match_start *m = &msg->u.match_start;
  int rc;
  m->seed = gk_read_u64(r);
  m->players = gk_read_u8(r);
  m->slot = gk_read_u8(r);
  m->active_mask = gk_read_u32(r);
  m->first_step = gk_read_u64(r);
  m->input_delay = gk_read_u8(r);
  m->lead = gk_read_u8(r);
  m->step_seconds.num = gk_read_u32(r);
  m->step_seconds.den = gk_read_u32(r);
  if ((rc = get_str(r, m->genre, GK_WIRE_GENRE_MAX, 1, 'g')) != 0 ||
      (rc = get_str(r, m->config, GK_WIRE_CONFIG_MAX, 2, 'j')) != 0)
    return rc;
  return check_match_start(m);
}

int gk__wire_enc_error(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_error *m = &msg->u.error;
  if (m->code >= 0) return GK_ERANGE;
  put_le(b, (uint16_t)m->code, 2);
  put_str(b, m->text, GK_WIRE_TEXT_MAX, 1, 't');
  return b->err;
}

int gk__wire_dec_error(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_error *m = &msg->u.error;
  m->code = gk_read_i16(r);
  int rc = get_str(r, m->text, GK_WIRE_TEXT_MAX, 1, 't');
  if (rc != 0) return rc;
  return m->code < 0 ? 0 : GK_ERANGE;
}

/* --- REDIRECT ------------------------------------------------------------ */

/* An address: printable ASCII without space (kind 't' allows space). */
static int check_addr(const char *s, int may_be_empty) {
  size_t n = strnlen(s, GK_WIRE_ADDR_MAX + 1);
  if (n > GK_WIRE_ADDR_MAX) return GK_ETOOBIG;
  if (n == 0 && !may_be_empty) return GK_EPROTO;
  for (size_t i = 0; i < n; i++)
    if (s[i] == ' ') return GK_EPROTO;
  return 0;
}

int gk__wire_enc_redirect(const gk_wire_msg *msg, put_buf *b) {
  const gk_wire_redirect *m = &msg->u.redirect;
  if (!gk_wire_code_valid(m->code)) return GK_EPROTO;
  int rc = check_addr(m->enet, 0);
  if (rc == 0) rc = check_addr(m->ws_url, 1);
  if (rc != 0) return rc;
  put_bytes(b, m->code, GK_WIRE_CODE_LEN);
  put_str(b, m->enet, GK_WIRE_ADDR_MAX, 1, 't');
  put_str(b, m->ws_url, GK_WIRE_ADDR_MAX, 1, 't');
  return b->err;
}

int gk__wire_dec_redirect(gk_reader *r, gk_wire_msg *msg) {
  gk_wire_redirect *m = &msg->u.redirect;
  int rc = gk_read_bytes(r, m->code, GK_WIRE_CODE_LEN);
  m->code[GK_WIRE_CODE_LEN] = '\0';
  if (rc != 0) return rc;
  if (!gk_wire_code_valid(m->code)) return GK_EPROTO;
  rc = get_str(r, m->enet, GK_WIRE_ADDR_MAX, 1, 't');
  if (rc == 0) rc = get_str(r, m->ws_url, GK_WIRE_ADDR_MAX, 1, 't');
  if (rc == 0) rc = check_addr(m->enet, 0);
  if (rc == 0) rc = check_addr(m->ws_url, 1);
  return rc;
}

/* --- short codes ---------------------------------------------------------- */

int gk_wire_code_pad(const char *in, char out[GK_WIRE_CODE_LEN + 1]) {
  size_t n = in ? strnlen(in, GK_WIRE_CODE_LEN + 1) : 0;
  if (n == GK_WIRE_CODE_LEN) { /* a wire code, typed in either case */
    for (size_t i = 0; i < n; i++) {
      char c = in[i];
      if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
      out[i] = c;
    }
    out[n] = '\0';
    return gk_wire_code_valid(out) ? 0 : GK_EINVAL;
  }
  if (n < GK_WIRE_SHORT_MIN || n > GK_WIRE_SHORT_MAX) return GK_EINVAL;
  for (size_t i = 0; i < n; i++) {
    char c = in[i];
    if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if (!strchr(GK_WIRE_SHORT_ALPHABET, c) || c == '\0') return GK_EINVAL;
    out[i] = c;
  }
  for (size_t i = n; i < GK_WIRE_CODE_LEN; i++) out[i] = '2';
  out[GK_WIRE_CODE_LEN] = '\0';
  return 0;
}

int gk_wire_code_shown(const char *code, char out[GK_WIRE_CODE_LEN + 1]) {
  if (!gk_wire_code_valid(code)) return GK_EINVAL;
  size_t n = GK_WIRE_CODE_LEN;
  while (n > 0 && code[n - 1] == '2') n--;
  int short_code = n >= GK_WIRE_SHORT_MIN && n <= GK_WIRE_SHORT_MAX;
  for (size_t i = 0; i < n && short_code; i++)
    short_code = strchr(GK_WIRE_SHORT_ALPHABET, code[i]) != NULL;
  if (!short_code) n = GK_WIRE_CODE_LEN; /* an old code: whole */
  memcpy(out, code, n);
  out[n] = '\0';
  return 0;
}
