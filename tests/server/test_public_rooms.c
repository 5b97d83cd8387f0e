/* test_public_rooms.c: the public room list of one process (admin
 * GET /rooms/public, src/server/gk_server_fleet.c), end to end on
 * 127.0.0.1 with the real gk-server and raw ENet clients: a room is
 * private unless its options say room.listed; a listed room shows its
 * genre, code, seats taken and free, state and node (null without a
 * fleet), follows joins and the start, and leaves the list when its match
 * ends; genre= filters; other queries are refused. The WebSocket port
 * answers the same list (for browsers), with its own refusals (405, a
 * body, too many arguments). Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_http.h"
#include "e2e.h"
#include "e2e_raw.h"

#define STEP_HZ 60

/* A raw client that created a survivors room of `seats` seats with
 * `config` as its options; the code in code[17]. */
static void create(const admin_srv *s, raw *c, uint32_t seats,
                   const char *config, char code[17]) {
  raw_connect(c, s->udp);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = seats;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "survivors");
  snprintf(m.u.create_room.config, sizeof(m.u.create_room.config), "%s",
           config);
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_ROOM_CREATED, 3000);
  memcpy(code, c->last[GK_MSG_ROOM_CREATED].u.room.code, 17);
}

/* The list's entry for `code` (NULL: not listed), from a fresh GET. */
static cJSON *entry(const admin_srv *s, const char *path, const char *code,
                    cJSON **list) {
  *list = admin_get_json(s, path);
  const cJSON *rooms = cJSON_GetObjectItemCaseSensitive(*list, "rooms");
  cr_assert(cJSON_IsArray(rooms), "%s has no rooms array", path);
  const cJSON *e;
  cJSON_ArrayForEach(e, rooms) {
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "code");
    if (cJSON_IsString(k) && strcmp(k->valuestring, code) == 0)
      return (cJSON *)e;
  }
  return NULL;
}

static void expect_entry(const admin_srv *s, const char *code,
                         const char *state, double taken, double free_seats) {
  cJSON *list;
  const cJSON *e = entry(s, "/rooms/public", code, &list);
  cr_assert_not_null(e, "listed room %s is not in /rooms/public", code);
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(e, "genre");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "state");
  cr_assert(cJSON_IsString(g) && strcmp(g->valuestring, "survivors") == 0);
  cr_assert(cJSON_IsString(st) && strcmp(st->valuestring, state) == 0,
            "room %s: state %s, expected %s", code,
            cJSON_IsString(st) ? st->valuestring : "?", state);
  cr_assert_eq(
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "seats_taken")),
      taken);
  cr_assert_eq(
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "seats_free")),
      free_seats);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "node")),
            "without a fleet the node is null");
  cJSON_Delete(list);
}

static int listed(const admin_srv *s, const char *path, const char *code) {
  cJSON *list;
  int in = entry(s, path, code, &list) != NULL;
  cJSON_Delete(list);
  return in;
}

Test(server_public_rooms,
     a_listed_room_is_listed_with_its_seats_until_its_end_a_private_never,
     .timeout = 60) {
  admin_srv s;
  memset(&s, 0, sizeof(s));
  admin_srv_start(&s, STEP_HZ, NULL);
  cr_assert_eq(enet_initialize(), 0);
  raw priv, pub, second;
  char pcode[17], code[17];
  create(&s, &priv, 4, "{\"room\":{\"bots\":0}}", pcode);
  create(&s, &pub, 4, "{\"room\":{\"listed\":true}}", code);
  cr_assert_not(listed(&s, "/rooms/public", pcode), "a private room is listed");
  expect_entry(&s, code, "lobby", 1, 3);
  cr_assert(listed(&s, "/rooms/public?genre=survivors", code));
  cr_assert_not(listed(&s, "/rooms/public?genre=push-puzzle", code));
  /* a second player takes a seat */
  raw_connect(&second, s.udp);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_JOIN_ROOM;
  memcpy(m.u.room.code, code, 17);
  raw_send_msg(&second, &m);
  raw_expect(&second, GK_MSG_JOINED, 3000);
  expect_entry(&s, code, "lobby", 2, 2);
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_START_MATCH;
  raw_send_msg(&pub, &m);
  raw_expect(&pub, GK_MSG_MATCH_START, 3000);
  expect_entry(&s, code, "playing", 2, 0);
  cr_assert_not(listed(&s, "/rooms/public", pcode));
  /* the end takes it out of the list at once: while the room still
   * drains (in /rooms, not playing) it is no longer listed */
  char path[64];
  snprintf(path, sizeof(path), "/rooms/%s/end", code);
  cr_assert_eq(admin_http(&s, "POST", path, ADMIN_TOKEN, NULL), 202);
  snprintf(path, sizeof(path), "/rooms/%s", code);
  int checked = 0;
  for (int i = 0; i < 100 && !checked; i++) {
    char *body = NULL;
    long st = admin_http(&s, "GET", path, NULL, &body);
    int draining = st == 200 && strstr(body, "\"state\":\"draining\"");
    free(body);
    if (st == 404 || draining) {
      cr_assert_not(listed(&s, "/rooms/public", code),
                    "an ended room stays in /rooms/public");
      checked = 1;
    }
    raw_pump(&pub, 5);
  }
  cr_assert(checked, "the ended room neither drains nor goes");
  raw_close(&second);
  raw_close(&pub);
  raw_close(&priv);
  enet_deinitialize();
  e2e_stop_server(&s.p);
  e2e_dir_remove(&s.d);
}

Test(server_public_rooms, other_queries_are_refused_with_400, .timeout = 30) {
  admin_srv s;
  memset(&s, 0, sizeof(s));
  admin_srv_start(&s, STEP_HZ, NULL);
  char *body = NULL;
  cr_assert_eq(admin_http(&s, "GET", "/rooms/public?since=1", NULL, &body),
               400);
  cr_assert(strstr(body, "/rooms/public takes genre=NAME only"), "%s", body);
  free(body);
  cr_assert_eq(admin_http(&s, "GET", "/series?genre=x", NULL, &body), 400);
  cr_assert(strstr(body, "/series takes since=SEQ only"), "%s", body);
  free(body);
  cr_assert_eq(admin_http(&s, "POST", "/rooms/public", ADMIN_TOKEN, NULL), 405);
  e2e_stop_server(&s.p);
  e2e_dir_remove(&s.d);
}

/* GET `path` on the WebSocket port: the status, body and headers. */
static long ws_get(uint16_t port, const char *method, const char *path,
                   const char *send, char **body, char **hdrs) {
  return e2e_http(port, method, path, NULL, send, body, hdrs);
}

static void expect_400(uint16_t port, const char *path, const char *why) {
  char *body = NULL, *hdrs = NULL;
  long st = ws_get(port, "GET", path, NULL, &body, &hdrs);
  cr_assert_eq(st, 400, "GET %s on the WebSocket port: %ld %s", path, st, body);
  cr_assert(strstr(body, why), "GET %s: %s, expected \"%s\"", path, body, why);
  cr_assert(strstr(hdrs, "Cache-Control: no-store"), "%s", hdrs);
  free(body);
  free(hdrs);
}

Test(server_public_rooms,
     the_websocket_port_answers_the_same_list_and_refuses_bad_requests,
     .timeout = 60) {
  admin_srv s;
  memset(&s, 0, sizeof(s));
  admin_srv_start(&s, STEP_HZ,
                  "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
                  "\"port\":0}");
  cJSON *l = e2e_last_event(&s.p, "listening");
  cr_assert_not_null(l, "no listening line");
  uint16_t ws =
      (uint16_t)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "ws_port"));
  cJSON_Delete(l);
  cr_assert_neq(ws, 0, "no WebSocket port in the listening line");
  cr_assert_eq(enet_initialize(), 0);
  raw priv, pub;
  char pcode[17], code[17];
  create(&s, &priv, 4, "{\"room\":{\"bots\":0}}", pcode);
  create(&s, &pub, 3, "{\"room\":{\"listed\":true}}", code);
  /* the same answer as the admin's, a browser's headers */
  char *body = NULL, *hdrs = NULL, *admin = NULL;
  cr_assert_eq(ws_get(ws, "GET", "/rooms/public", NULL, &body, &hdrs), 200,
               "%s", body);
  cr_assert_eq(admin_http(&s, "GET", "/rooms/public", NULL, &admin), 200);
  cr_assert_str_eq(body, admin, "the ports' lists differ");
  cr_assert(strstr(body, code), "the listed room is missing: %s", body);
  cr_assert_null(strstr(body, pcode), "the private room is listed: %s", body);
  cr_assert(strstr(hdrs, "Content-Type: application/json"), "%s", hdrs);
  cr_assert(strstr(hdrs, "Cache-Control: no-store"), "%s", hdrs);
  free(body);
  free(hdrs);
  free(admin);
  cr_assert_eq(
      ws_get(ws, "GET", "/rooms/public?genre=survivors", NULL, &body, NULL),
      200);
  cr_assert(strstr(body, code), "genre=survivors: %s", body);
  free(body);
  cr_assert_eq(
      ws_get(ws, "GET", "/rooms/public?genre=push-puzzle", NULL, &body, NULL),
      200);
  cr_assert_str_eq(body, "{\"rooms\":[]}\n");
  free(body);
  cr_assert_eq(
      ws_get(ws, "GET", "/rooms/public?genre=no-such-genre", NULL, &body, NULL),
      200);
  cr_assert_str_eq(body, "{\"rooms\":[]}\n", "an unknown genre: %s", body);
  free(body);
  /* HEAD: the headers, no body */
  cr_assert_eq(ws_get(ws, "HEAD", "/rooms/public", NULL, &body, &hdrs), 200);
  cr_assert_str_eq(body, "");
  cr_assert(strstr(hdrs, "Cache-Control: no-store"), "%s", hdrs);
  free(body);
  free(hdrs);
  /* the admin's query rules, then the listener's own */
  expect_400(ws, "/rooms/public?since=1",
             "bad query argument \\\"since\\\": /rooms/public takes "
             "genre=NAME only");
  expect_400(ws, "/rooms/public?genre=survivors&genre=survivors",
             "bad query argument \\\"genre\\\"");
  expect_400(ws, "/rooms/public?genre=", "bad query argument");
  expect_400(ws, "/rooms/public?genre=abcdefghijklmnopqrstuvwxyz0123456",
             "bad query argument");
  expect_400(ws, "/rooms/public?a&b&c&d&e&f&g&h&i", "too many query arguments");
  cr_assert_eq(ws_get(ws, "GET", "/rooms/public", "x", &body, NULL), 400,
               "a GET with a body: %s", body);
  cr_assert(strstr(body, "a request body is not read here"), "%s", body);
  free(body);
  cr_assert_eq(ws_get(ws, "POST", "/rooms/public", NULL, &body, &hdrs), 405);
  cr_assert(strstr(hdrs, "Allow: GET, HEAD"), "%s", hdrs);
  free(body);
  free(hdrs);
  /* other paths stay what they were: no static directory here, 404 */
  cr_assert_eq(ws_get(ws, "GET", "/rooms/publicx", NULL, NULL, NULL), 404);
  cr_assert_eq(ws_get(ws, "GET", "/rooms", NULL, NULL, NULL), 404);
  raw_close(&pub);
  raw_close(&priv);
  enet_deinitialize();
  e2e_stop_server(&s.p);
  e2e_dir_remove(&s.d);
}
