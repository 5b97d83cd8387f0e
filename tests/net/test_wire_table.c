/* test_wire_table.c: the type table (gk_net_wire_table.c). Every type of
 * GK_WIRE_MSG_MAP has its row, with its name and channel; the smallest and
 * the largest message of every type round-trip at exactly the row's size
 * limits (one byte less is truncated, one byte more refused); and a type
 * value below 0, past the table's end or in a gap is no type, refused
 * before the table is indexed (under -Db_sanitize=address a row read out
 * of bounds would be reported here). */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_wire_internal.h"

/* records, steps, hashes and chunk bytes: all zero (valid masks, flags) */
static uint8_t pool[GK_WIRE_MAX];

static const char code[] = "ABCDEFGHJKMNPQ27";

static void text(char *s, size_t n, char c) {
  memset(s, c, n);
  s[n] = '\0';
}

/* The match messages: the smallest (big 0) or the largest (big 1). INPUT
 * and CONFIRMED are as large as a datagram takes, which is less than the
 * table's limit (the datagram's). */
static int sample_match(gk_wire_type type, int big, gk_wire_msg *m) {
  uint32_t n;
  switch (type) {
  case GK_MSG_INPUT:
    m->u.input.input_size = big ? GK_INPUT_SIZE_MAX : 1;
    m->u.input.count =
        (uint8_t)(big ? gk_wire_input_fit(GK_INPUT_SIZE_MAX) : 0);
    m->u.input.records = pool;
    n = gk_wire_input_hash_fit(m->u.input.input_size, m->u.input.count);
    m->u.input.hash_count = (uint8_t)(big ? n : 0);
    m->u.input.hashes = pool;
    return 1;
  case GK_MSG_CONFIRMED:
    m->u.confirmed.players = big ? GK_PLAYERS_MAX : 1;
    m->u.confirmed.input_size = big ? GK_INPUT_SIZE_MAX : 1;
    n = gk_wire_confirmed_fit(m->u.confirmed.players,
                              m->u.confirmed.input_size);
    m->u.confirmed.count = (uint8_t)(big ? n : 0);
    m->u.confirmed.steps = pool;
    return 1;
  case GK_MSG_HASH:
    m->u.hash.count = big ? GK_WIRE_STEPS_MAX : 1;
    return 1;
  case GK_MSG_STALL:
    m->u.stall.awaited = 1;
    return 1;
  case GK_MSG_MATCH_END:
    m->u.match_end.reason = GK_WIRE_END_GAME_OVER;
    return 1;
  case GK_MSG_END_MATCH:
    m->u.end_reason = GK_WIRE_END_HOST;
    return 1;
  case GK_MSG_DESYNC:
  case GK_MSG_REMOVE_PLAYER:
  case GK_MSG_START_MATCH:
  case GK_MSG_SHUTDOWN:
    return 1; /* all zero is valid */
  default:
    return 0;
  }
}

static int sample_room(gk_wire_type type, int big, gk_wire_msg *m) {
  switch (type) {
  case GK_MSG_CREATE_ROOM:
    m->u.create_room.max_players = 1;
    text(m->u.create_room.genre, big ? GK_WIRE_GENRE_MAX : 1, 'a');
    text(m->u.create_room.config, big ? GK_WIRE_CONFIG_MAX : 0, ' ');
    m->u.create_room.token_len = big ? GK_WIRE_TOKEN_BYTES : 0;
    return 1;
  case GK_MSG_ROOM_CREATED:
  case GK_MSG_JOIN_ROOM:
  case GK_MSG_SPECTATE:
    strcpy(m->u.room.code, code);
    m->u.room.token_len = big ? GK_WIRE_TOKEN_BYTES : 0;
    return 1;
  case GK_MSG_JOINED:
    m->u.joined.players = 1;
    return 1;
  case GK_MSG_MATCH_START:
    m->u.match_start.players = 1;
    m->u.match_start.active_mask = 1;
    m->u.match_start.step_seconds = (gk_ratio){1, 60};
    text(m->u.match_start.genre, big ? GK_WIRE_GENRE_MAX : 1, 'a');
    text(m->u.match_start.config, big ? GK_WIRE_CONFIG_MAX : 0, ' ');
    return 1;
  case GK_MSG_ERROR:
    m->u.error.code = GK_EINVAL;
    text(m->u.error.text, big ? GK_WIRE_TEXT_MAX : 0, 'x');
    return 1;
  case GK_MSG_REDIRECT:
    strcpy(m->u.redirect.code, code);
    text(m->u.redirect.enet, big ? GK_WIRE_ADDR_MAX : 1, 'e');
    text(m->u.redirect.ws_url, big ? GK_WIRE_ADDR_MAX : 0, 'w');
    return 1;
  case GK_MSG_QUICK_PLAY:
    strcpy(m->u.quick.code, code);
    m->u.quick.room.max_players = 1;
    text(m->u.quick.room.genre, big ? GK_WIRE_GENRE_MAX : 1, 'a');
    text(m->u.quick.room.config, big ? GK_WIRE_CONFIG_MAX : 0, ' ');
    m->u.quick.room.token_len = big ? GK_WIRE_TOKEN_BYTES : 0;
    return 1;
  case GK_MSG_QUICK_JOINED:
    strcpy(m->u.quick_joined.code, code);
    m->u.quick_joined.players = 1;
    return 1;
  case GK_MSG_NEXT_ROOM:
    strcpy(m->u.room.code, code);
    return 1;
  case GK_MSG_NAME:
    text(m->u.name, big ? GK_WIRE_NAME_MAX : 1, 'n');
    return 1;
  case GK_MSG_ROSTER:
    m->u.roster.count = big ? GK_PLAYERS_MAX : 0;
    for (uint32_t i = 0; i < m->u.roster.count; i++) {
      m->u.roster.slot[i] = (uint8_t)i;
      text(m->u.roster.name[i], GK_WIRE_NAME_MAX, 'n');
    }
    return 1;
  default:
    return 0;
  }
}

/* Rejoin, spectators, snapshots and desync forensics. */
static int sample_transfer(gk_wire_type type, int big, gk_wire_msg *m) {
  switch (type) {
  case GK_MSG_REJOIN_ROOM:
    strcpy(m->u.rejoin.code, code);
    m->u.rejoin.token_len = big ? GK_WIRE_TOKEN_BYTES : 0;
    return 1;
  case GK_MSG_RECONNECT_SECRET:
  case GK_MSG_STATE_REQUEST:
    return 1;
  case GK_MSG_SNAPSHOT_BEGIN: /* an empty state is one empty chunk */
    m->u.snap_begin.kind = GK_WIRE_SNAP_REJOIN;
    strcpy(m->u.snap_begin.code, code);
    m->u.snap_begin.chunk_size = 1;
    m->u.snap_begin.chunks = 1;
    return 1;
  case GK_MSG_STATE_BEGIN:
    m->u.state_begin.chunk_size = 1;
    m->u.state_begin.chunks = 1;
    return 1;
  case GK_MSG_SNAPSHOT_CHUNK:
  case GK_MSG_STATE_CHUNK:
    m->u.snap_chunk.len = big ? GK_WIRE_SNAP_CHUNK_MAX : 0;
    m->u.snap_chunk.bytes = pool;
    return 1;
  default:
    return 0;
  }
}

static void sample(gk_wire_type type, int big, gk_wire_msg *m) {
  memset(m, 0, sizeof *m);
  m->type = type;
  int ok = sample_match(type, big, m) || sample_room(type, big, m) ||
           sample_transfer(type, big, m);
  cr_assert(ok, "no sample for type %d", (int)type);
}

static int row_count(void) {
  int n = 0;
  for (int t = 0; t < (int)GK__WIRE_TYPE_END; t++)
    if (gk__wire_codec_of(t) != NULL) n++;
  return n;
}

static void expect_row(int id, const char *name, int rel) {
  const gk__wire_codec *c = gk__wire_codec_of(id);
  cr_assert_not_null(c, "%s (%d) has no row", name, id);
  cr_assert_str_eq(c->name, name);
  cr_assert_eq(c->reliable, rel, "%s", name);
  cr_assert(c->encode != NULL && c->decode != NULL, "%s", name);
  cr_assert_leq(c->body_min, c->body_max, "%s", name);
  cr_assert_leq(GK_WIRE_HEADER + c->body_max, GK_WIRE_MAX, "%s", name);
  cr_assert_str_eq(gk_wire_type_name(id), name);
  cr_assert_eq(gk_wire_type_reliable(id), rel, "%s", name);
}

Test(wire_table, every_message_type_in_the_map_has_its_row) {
  int n = 0;
#define GK__ROW(name, id, rel)                                                 \
  expect_row(id, #name, rel);                                                  \
  n++;
  GK_WIRE_MSG_MAP(GK__ROW)
#undef GK__ROW
  cr_assert_eq(row_count(), n, "the table has rows the map does not name");
  cr_assert_not_null(gk__wire_codec_of((int)GK__WIRE_TYPE_END - 1),
                     "the table ends at the largest type");
}

/* Encodes the sample and checks its body is `want` bytes (at most `want`
 * for an INPUT or CONFIRMED), that it decodes to the same bytes, and that
 * one byte less is truncated (small) or one byte more refused (big). */
static void expect_limit(gk_wire_type type, int big, size_t want) {
  const char *name = gk_wire_type_name((int)type);
  gk_wire_msg m, d;
  sample(type, big, &m);
  uint8_t a[GK_WIRE_MAX + 1], b[GK_WIRE_MAX];
  size_t la = 0, lb = 0;
  int rc = gk_wire_encode(&m, a, GK_WIRE_MAX, &la);
  cr_assert_eq(rc, 0, "%s big %d: %s", name, big, gk_strerror(rc));
  size_t body = la - GK_WIRE_HEADER;
  if (big && (type == GK_MSG_INPUT || type == GK_MSG_CONFIRMED))
    cr_assert_leq(body, want, "%s", name);
  else
    cr_assert_eq(body, want, "%s big %d: %zu bytes", name, big, body);
  cr_assert_eq(gk_wire_decode(a, la, &d), 0, "%s big %d", name, big);
  cr_assert_eq(d.type, type);
  cr_assert_eq(gk_wire_encode(&d, b, sizeof b, &lb), 0);
  cr_assert_eq(lb, la);
  cr_assert_arr_eq(a, b, la);
  if (!big) {
    cr_assert_eq(gk_wire_decode(a, la - 1, &d), GK_ETRUNC, "%s", name);
  } else if (la < GK_WIRE_MAX) {
    a[la] = 0;
    cr_assert_eq(gk_wire_decode(a, la + 1, &d), GK_EPROTO, "%s", name);
  }
}

Test(wire_table, each_types_smallest_and_largest_message_are_its_limits) {
#define GK__LIMITS(name, id, rel)                                              \
  expect_limit(GK_MSG_##name, 0, gk__wire_codec_of(id)->body_min);             \
  expect_limit(GK_MSG_##name, 1, gk__wire_codec_of(id)->body_max);
  GK_WIRE_MSG_MAP(GK__LIMITS)
#undef GK__LIMITS
}

/* A type value that is no type, to every entry point. */
static void expect_no_type(int t) {
  cr_assert_null(gk__wire_codec_of(t), "type %d", t);
  cr_assert_str_eq(gk_wire_type_name(t), "UNKNOWN");
  cr_assert_eq(gk_wire_type_reliable(t), 0);
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = (gk_wire_type)t;
  uint8_t out[GK_WIRE_MAX];
  size_t len = 99;
  cr_assert_eq(gk_wire_encode(&m, out, sizeof out, &len), GK_EPROTO, "%d", t);
  cr_assert_eq(len, 0);
  if (t < 0 || t > 255) return;
  /* as a type byte, with and without a body */
  static uint8_t dgram[GK_WIRE_MAX];
  dgram[0] = GK_WIRE_VERSION;
  dgram[1] = (uint8_t)t;
  cr_assert_eq(gk_wire_decode(dgram, 2, &m), GK_EPROTO, "type %d", t);
  cr_assert_eq(gk_wire_decode(dgram, sizeof dgram, &m), GK_EPROTO, "%d", t);
  cr_assert_eq(m.type, 0, "nothing of the datagram is kept");
}

Test(wire_table, type_values_past_the_end_or_in_a_gap_are_refused) {
  cr_assert_lt(GK__WIRE_TYPE_END, 256, "some type bytes are past the end");
  const int outside[] = {
      INT_MIN, -256, -1,     (int)GK__WIRE_TYPE_END, (int)GK__WIRE_TYPE_END + 1,
      255,     256,  INT_MAX};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
    expect_no_type(outside[i]);
  int gaps = 0;
  for (int t = 0; t < 256; t++) {
    if (gk__wire_codec_of(t) != NULL) continue;
    expect_no_type(t);
    if (t < (int)GK__WIRE_TYPE_END) gaps++;
  }
  cr_assert_gt(gaps, 0, "the table has gaps (0, 9..15, 24..39)");
}

/* Encodes m and, if that works, decodes the bytes into d: the first error
 * or 0. */
static int encode_decode(const gk_wire_msg *m, gk_wire_msg *d) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  int rc = gk_wire_encode(m, buf, sizeof buf, &len);
  return rc ? rc : gk_wire_decode(buf, len, d);
}

Test(wire_table, redirect_refuses_an_empty_or_spaced_address_and_a_bad_code) {
  gk_wire_msg m, d;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_REDIRECT;
  strcpy(m.u.redirect.code, "ABCDEFGHJKMNPQ27");
  strcpy(m.u.redirect.enet, "b:1");
  cr_assert_eq(encode_decode(&m, &d), 0); /* no WebSocket URL is fine */
  cr_assert_str_eq(d.u.redirect.enet, "b:1");
  cr_assert_str_eq(d.u.redirect.ws_url, "");
  strcpy(m.u.redirect.enet, "");
  cr_assert_eq(encode_decode(&m, &d), GK_EPROTO);
  strcpy(m.u.redirect.enet, "b 1:2");
  cr_assert_eq(encode_decode(&m, &d), GK_EPROTO);
  strcpy(m.u.redirect.enet, "b:1");
  strcpy(m.u.redirect.ws_url, "ws://a b");
  cr_assert_eq(encode_decode(&m, &d), GK_EPROTO);
  strcpy(m.u.redirect.ws_url, "");
  strcpy(m.u.redirect.code, "abcdefghjkmnpq27");
  cr_assert_eq(encode_decode(&m, &d), GK_EPROTO);
  /* the same bytes from the wire: a space in enet */
  uint8_t raw[] = {GK_WIRE_VERSION,
                   GK_MSG_REDIRECT,
                   'A',
                   'B',
                   'C',
                   'D',
                   'E',
                   'F',
                   'G',
                   'H',
                   'J',
                   'K',
                   'M',
                   'N',
                   'P',
                   'Q',
                   '2',
                   '7',
                   3,
                   'a',
                   ' ',
                   'b',
                   0};
  cr_assert_eq(gk_wire_decode(raw, sizeof raw, &d), GK_EPROTO);
  raw[20] = ':';
  cr_assert_eq(gk_wire_decode(raw, sizeof raw, &d), 0);
  cr_assert_str_eq(d.u.redirect.enet, "a:b");
}
