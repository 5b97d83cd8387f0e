/* test_ws_refusals.c: refused room requests over WebSocket, through the
 * real gk-server (raw WebSocket clients, tests/net/ws_raw.c).
 *
 * Every ERROR a WebSocket client can get before it has a room arrives
 * whole: the reply cap of connections not admitted (no reply larger than
 * its request) is for datagrams, whose source can be forged; TCP proved
 * a WebSocket's address. Most requests below are smaller than their answer.
 * And a connection whose first room request was refused is closed at
 * once, after its ERROR (a 1000 close frame), not left to
 * limits.handshake_ms.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "ws_e2e.h"

TestSuite(server_ws_refusals, .timeout = 120);

/* A request and the ERROR it must get, whole. */
typedef struct refusal {
  const char *what;
  gk_wire_type type;
  const char *code; /* room code: NULL for the lobby room's */
  uint8_t role;     /* JOIN_ROOM */
  const char *genre;
  int16_t err;
  const char *text;
} refusal;

static gk_wire_msg request(const refusal *f, const char *lobby) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = f->type;
  const char *code = f->code ? f->code : lobby;
  if (f->type == GK_MSG_CREATE_ROOM) {
    m.u.create_room.max_players = 2;
    snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "%s",
             f->genre);
  } else if (f->type == GK_MSG_REJOIN_ROOM) {
    snprintf(m.u.rejoin.code, sizeof m.u.rejoin.code, "%s", code);
  } else {
    snprintf(m.u.room.code, sizeof m.u.room.code, "%s", code);
    m.u.room.role = f->role;
  }
  return m;
}

static int larger; /* answers larger than their request */

/* Sends the request on a fresh connection; its ERROR must be whole and
 * the connection closed (1000) within a second of it. */
static void expect_refusal(const ws_server *s, const refusal *f,
                           const char *lobby) {
  static raw c;
  ws_open(&c, s, NULL, 0);
  gk_wire_msg m = request(f, lobby), got;
  uint8_t bytes[GK_WIRE_MAX];
  size_t req_len = 0;
  cr_assert_eq(gk_wire_encode(&m, bytes, sizeof bytes, &req_len), 0);
  ws_send_msg(&c, &m);
  memset(&got, 0, sizeof got);
  cr_assert(ws_wait_msg(&c, GK_MSG_ERROR, &got, 3000), "%s: no ERROR", f->what);
  cr_assert_eq(got.u.error.code, f->err, "%s: code %s", f->what,
               gk_err_name(got.u.error.code));
  cr_assert_str_eq(got.u.error.text, f->text, "%s: the text arrives whole",
                   f->what);
  if (5 + strlen(f->text) > req_len) larger++;
  uint64_t t0 = uv_hrtime() / 1000000u;
  int code = raw_close_code(&c, 3000);
  uint64_t took = uv_hrtime() / 1000000u - t0;
  cr_assert_eq(code, 1000, "%s: closed after its ERROR (%d)", f->what, code);
  cr_assert_leq(took, 1000, "%s: closed %" PRIu64 " ms after", f->what, took);
  raw_close(&c);
}

Test(server_ws_refusals,
     every_error_arrives_whole_and_a_refused_connection_closes_at_once) {
  static ws_server s;
  memset(&s, 0, sizeof s);
  /* handshake_ms far off: a refused connection closes long before */
  ws_server_start(&s, NULL, "\"limits\":{\"handshake_ms\":30000}");
  static raw a, b;
  char lobby[GK_WIRE_CODE_LEN + 1];
  int ecode = 0;
  ws_open(&a, &s, NULL, 0);
  cr_assert_eq(ws_create_room(&a, "push-puzzle", 2, NULL, lobby, &ecode),
               GK_MSG_ROOM_CREATED, "error %d", ecode);
  static const char unknown[] = "AAAAAAAAAAAAAAAA";
  const refusal before_full[] = {
      {"CREATE_ROOM, a genre not offered", GK_MSG_CREATE_ROOM, NULL, 0, "nope",
       GK_ENOTFOUND, "genre not offered: nope"},
      {"JOIN_ROOM, an unknown code", GK_MSG_JOIN_ROOM, unknown, 0, NULL,
       GK_ENOTFOUND, "no room with that code"},
      {"JOIN_ROOM as a spectator", GK_MSG_JOIN_ROOM, NULL,
       GK_WIRE_ROLE_SPECTATOR, NULL, GK_EPERM, "spectators are not served yet"},
      {"REJOIN_ROOM, an unknown code", GK_MSG_REJOIN_ROOM, unknown, 0, NULL,
       GK_ENOTFOUND, "no room with that code"},
      {"REJOIN_ROOM, a lobby", GK_MSG_REJOIN_ROOM, NULL, 0, NULL, GK_ECLOSED,
       "the room's match is not running"},
      {"SPECTATE, an unknown code", GK_MSG_SPECTATE, unknown, 0, NULL,
       GK_ENOTFOUND, "no room with that code"},
      {"SPECTATE, a lobby", GK_MSG_SPECTATE, NULL, 0, NULL, GK_ECLOSED,
       "the room's match is not running"},
  };
  for (size_t i = 0; i < sizeof before_full / sizeof before_full[0]; i++)
    expect_refusal(&s, &before_full[i], lobby);
  /* a second player fills the room: a third is told so, whole */
  ws_open(&b, &s, NULL, 0);
  refusal join = {"JOIN_ROOM", GK_MSG_JOIN_ROOM, NULL, 0, NULL, 0, NULL};
  gk_wire_msg m = request(&join, lobby), got;
  ws_send_msg(&b, &m);
  cr_assert(ws_wait_msg(&b, GK_MSG_JOINED, &got, 3000), "the second joins");
  const refusal full = {
      "JOIN_ROOM, a full room", GK_MSG_JOIN_ROOM, NULL, 0, NULL, GK_EFULL,
      "the room is full"};
  expect_refusal(&s, &full, lobby);
  cr_assert_geq(larger, 6, "the answers the cap would have cut");
  /* the admitted ones stay */
  raw_fill(&a, sizeof a.buf, 200);
  cr_assert(!a.eof, "the creator's connection stays");
  raw_close(&a);
  raw_close(&b);
  e2e_stop_server(&s.a.p);
  cr_assert_eq(e2e_stat(&s.a.p, "stopped", "replies_cut"), 0);
  cr_assert_eq(e2e_stat(&s.a.p, "stopped", "limit_handshake"), 0);
  cr_assert_eq(e2e_stat(&s.a.p, "stopped", "refused_closed"), 8);
  e2e_dir_remove(&s.a.d);
}
