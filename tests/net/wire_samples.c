/* wire_samples.c: one valid message of every wire type, and the encode
 * and round-trip helpers the codec's tests share (wire_samples.h). */
#include "wire_samples.h"

#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"

uint8_t records[64 * 4];
static uint8_t steps[8 * GK_WIRE_STEP_BYTES(3, 4)];
uint8_t hashes[3 * 8];

/* One valid message of every type, filled with distinctive values. */
/* Samples of the rejoin, spectator and snapshot messages. */
static int sample_snap_msg(int i, gk_wire_msg *m) {
  static const uint8_t chunk[5] = {1, 2, 3, 4, 5};
  switch (i) {
  case 17:
    m->type = GK_MSG_SNAPSHOT_BEGIN;
    m->u.snap_begin = (gk_wire_snap_begin){.id = 7,
                                           .kind = GK_WIRE_SNAP_REJOIN,
                                           .step = 1000,
                                           .hash = 0x1122334455667788ull,
                                           .next_input = 1004,
                                           .active_mask = 7,
                                           .total = 2049,
                                           .chunk_size = 1024,
                                           .chunks = 3,
                                           .sum = 42};
    strcpy(m->u.snap_begin.code, "ABCDEFGHJKMNPQ27");
    return 1;
  case 18:
    m->type = GK_MSG_SNAPSHOT_CHUNK;
    m->u.snap_chunk = (gk_wire_snap_chunk){
        .id = 7, .index = 2, .crc = 99, .len = 5, .bytes = chunk};
    return 1;
  case 19:
    m->type = GK_MSG_REJOIN_ROOM;
    strcpy(m->u.rejoin.code, "ABCDEFGHJKMNPQ27");
    m->u.rejoin.slot = 2;
    memset(m->u.rejoin.secret, 0xa5, GK_WIRE_SECRET_LEN);
    m->u.rejoin.token_len = GK_WIRE_TOKEN_BYTES; /* token mode */
    memset(m->u.rejoin.token, 0x5b, GK_WIRE_TOKEN_BYTES);
    return 1;
  case 20:
    m->type = GK_MSG_SPECTATE;
    strcpy(m->u.room.code, "ZZZZ234567ABCDEF");
    return 1; /* no token: open mode */
  case 21:
    m->type = GK_MSG_RECONNECT_SECRET;
    m->u.secret.slot = 1;
    memset(m->u.secret.secret, 0x3c, GK_WIRE_SECRET_LEN);
    return 1;
  case 22: /* desync forensics */
    m->type = GK_MSG_STATE_REQUEST;
    m->u.state_req = (gk_wire_state_request){.id = 9, .step = 901};
    return 1;
  case 23:
    m->type = GK_MSG_STATE_BEGIN;
    m->u.state_begin = (gk_wire_state_begin){.id = 9,
                                             .step = 901,
                                             .from = 100,
                                             .to = 1200,
                                             .hash = 5,
                                             .total = 2049,
                                             .chunk_size = 1024,
                                             .chunks = 3,
                                             .sum = 77};
    return 1;
  case 24:
    m->type = GK_MSG_STATE_CHUNK;
    m->u.snap_chunk = (gk_wire_snap_chunk){
        .id = 9, .index = 1, .crc = 3, .len = 5, .bytes = chunk};
    return 1;
  case 25: /* a fleet */
    m->type = GK_MSG_REDIRECT;
    strcpy(m->u.redirect.code, "ABCDEFGHJKMNPQ27");
    strcpy(m->u.redirect.enet, "b.example:7777");
    strcpy(m->u.redirect.ws_url, "wss://b.example/7779/play");
    return 1;
  case 26: /* quick play */
    m->type = GK_MSG_QUICK_PLAY;
    strcpy(m->u.quick.code, GK_WIRE_CODE_ANY);
    m->u.quick.room.max_players = 4;
    strcpy(m->u.quick.room.genre, "survivors");
    strcpy(m->u.quick.room.config, "{\"level\":2}");
    return 1;
  case 28: /* names */
    m->type = GK_MSG_NAME;
    strcpy(m->u.name, "Zo\xc3\xab \xe2\x98\x85");
    return 1;
  case 29:
    m->type = GK_MSG_ROSTER;
    m->u.roster.count = 2;
    m->u.roster.slot[0] = 0;
    strcpy(m->u.roster.name[0], "ada");
    m->u.roster.slot[1] = 3;
    strcpy(m->u.roster.name[1], "Zo\xc3\xab");
    return 1;
  case 30: /* Play again */
    m->type = GK_MSG_NEXT_ROOM;
    strcpy(m->u.room.code, "K7QX222222222222");
    return 1;
  case 27:
    m->type = GK_MSG_QUICK_JOINED;
    strcpy(m->u.quick_joined.code, "K7QX222222222222");
    m->u.quick_joined.slot = 3;
    m->u.quick_joined.players = 4;
    return 1;
  default:
    return 0;
  }
}

int sample_msg(int i, gk_wire_msg *m) {
  memset(m, 0, sizeof *m);
  for (size_t k = 0; k < sizeof records; k++) records[k] = (uint8_t)(k * 7 + 1);
  switch (i) {
  case 0:
    m->type = GK_MSG_INPUT;
    m->u.input = (gk_wire_input){.slot = 3,
                                 .input_size = 4,
                                 .count = 5,
                                 .ack = 99,
                                 .first = 1000,
                                 .records = records};
    return 1;
  case 1: {
    m->type = GK_MSG_CONFIRMED;
    for (uint32_t s = 0; s < 8; s++)
      gk_wire_step_pack(steps + s * GK_WIRE_STEP_BYTES(3, 4), s == 7 ? 5u : 7u,
                        s == 7 ? GK_STEP_MATCH_END : 0, records + s, 3, 4);
    m->u.confirmed = (gk_wire_confirmed){.players = 3,
                                         .input_size = 4,
                                         .count = 8,
                                         .ack = 17,
                                         .hash_ack = 15,
                                         .first = 12,
                                         .steps = steps};
    return 1;
  }
  case 2:
    m->type = GK_MSG_HASH;
    m->u.hash.first = 77;
    m->u.hash.count = 3;
    m->u.hash.hashes[0] = 0x0123456789abcdefull;
    m->u.hash.hashes[1] = 1;
    m->u.hash.hashes[2] = UINT64_MAX;
    return 1;
  case 3:
    m->type = GK_MSG_STALL;
    m->u.stall = (gk_wire_stall){.step = 42, .awaited = 0x5, .waited_ms = 1500};
    return 1;
  case 4:
    m->type = GK_MSG_DESYNC;
    m->u.desync = (gk_wire_desync){
        .step = 9, .player = 2, .host_hash = 5, .peer_hash = 6};
    return 1;
  case 5:
    m->type = GK_MSG_MATCH_END;
    m->u.match_end =
        (gk_wire_match_end){.step = 3600, .reason = GK_WIRE_END_HOST};
    return 1;
  case 6:
    m->type = GK_MSG_REMOVE_PLAYER;
    m->u.remove = (gk_wire_remove){.slot = 1, .step = GK_WIRE_STEP_ASAP};
    return 1;
  case 7:
    m->type = GK_MSG_END_MATCH;
    m->u.end_reason = GK_WIRE_END_HOST;
    return 1;
  case 8:
    m->type = GK_MSG_CREATE_ROOM;
    m->u.create_room.max_players = 4;
    m->u.create_room.input_delay = 3;
    strcpy(m->u.create_room.genre, "survivors");
    strcpy(m->u.create_room.config, "{\"arena\": 3,\n \"name\": \"x\"}");
    return 1;
  case 9:
    m->type = GK_MSG_ROOM_CREATED;
    strcpy(m->u.room.code, "ABCDEFGHJKMNPQ27");
    m->u.room.slot = 0;
    return 1;
  case 10:
    m->type = GK_MSG_JOIN_ROOM;
    strcpy(m->u.room.code, "ZZZZ234567ABCDEF");
    return 1;
  case 11:
    m->type = GK_MSG_JOINED;
    m->u.joined = (gk_wire_joined){.slot = 2, .players = 3};
    return 1;
  case 12:
    m->type = GK_MSG_START_MATCH;
    return 1;
  case 13: {
    m->type = GK_MSG_MATCH_START;
    gk_wire_match_start *s = &m->u.match_start;
    s->seed = 0xfeedfacecafebeefull;
    s->players = 4;
    s->slot = 3;
    s->active_mask = 0xb;
    s->first_step = 0;
    s->input_delay = 2;
    s->lead = 4;
    s->step_seconds = (gk_ratio){1, 60};
    strcpy(s->genre, "push-puzzle");
    strcpy(s->config, "{}");
    return 1;
  }
  case 14:
    m->type = GK_MSG_SHUTDOWN;
    m->u.shutdown_grace_ms = 5000;
    return 1;
  case 15:
    m->type = GK_MSG_ERROR;
    m->u.error.code = GK_ENOTFOUND;
    strcpy(m->u.error.text, "no room with that code");
    return 1;
  case 16: /* INPUT with a hash report (wire version 2) */
    for (size_t k = 0; k < sizeof hashes; k++)
      hashes[k] = (uint8_t)(k * 13 + 5);
    m->type = GK_MSG_INPUT;
    m->u.input = (gk_wire_input){.slot = 1,
                                 .input_size = 4,
                                 .count = 2,
                                 .ack = 50,
                                 .first = 52,
                                 .records = records,
                                 .hash_count = 3,
                                 .hash_first = 47,
                                 .hashes = hashes};
    return 1;
  default:
    return sample_snap_msg(i, m);
  }
}

size_t encode_ok(const gk_wire_msg *m, uint8_t *buf) {
  size_t len = 0;
  int rc = gk_wire_encode(m, buf, GK_WIRE_MAX, &len);
  cr_assert_eq(rc, 0, "encode %s: %s", gk_wire_type_name((int)m->type),
               gk_strerror(rc));
  cr_assert_gt(len, 1);
  return len;
}

/* Encodes m and, if that works, decodes the bytes into d: the first error
 * or 0. */
int round_trip(const gk_wire_msg *m, gk_wire_msg *d) {
  uint8_t buf[GK_WIRE_MAX];
  size_t len;
  int rc = gk_wire_encode(m, buf, sizeof buf, &len);
  if (rc != 0) return rc;
  return gk_wire_decode(buf, len, d);
}
