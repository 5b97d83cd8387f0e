/* test_admin_token.c: the admin listener's bearer token on every mutating
 * endpoint (src/server/ops/gk_server_admin.c: POST /rooms/CODE/end on a
 * playing room and on a lobby, POST /rooms/CODE/players/SLOT/remove and
 * POST /drain), end to end on 127.0.0.1.
 *
 * The real gk-server (admin listener with a token file), gk-bot playing
 * one 3-player room, and a raw ENet client holding a lobby open. Each
 * endpoint is sent tokens that are almost the configured one: with
 * characters added, a prefix, empty, one byte changed (first, middle,
 * last). Each must get 401 and change nothing: no admin_action in the
 * log, the server not draining, both rooms listed as they were, every
 * player still active. Then the right token does each action, which
 * proves the paths were right. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <enet/enet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_http.h"
#include "e2e.h"
#include "e2e_raw.h"
#include "gk_net_wire.h"

#define TOKEN ADMIN_TOKEN

typedef admin_srv admin;

/* POST `path` with "Authorization: Bearer <token>"; the status (0: no
 * answer). */
static long post(const admin *a, const char *path, const char *token) {
  return admin_http(a, "POST", path, token, NULL);
}

static void start(admin *a) {
  admin_srv_start(a, 120, NULL);
}

/* The room `code` as /rooms/CODE lists it: its state, and how many of
 * its players are active. */
static void room_state(const admin *a, const char *code, char *state,
                       size_t cap, int *active) {
  char path[64];
  snprintf(path, sizeof(path), "/rooms/%s", code);
  cJSON *j = admin_get_json(a, path);
  snprintf(state, cap, "%s", cJSON_GetObjectItem(j, "state")->valuestring);
  *active = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "players")) *active +=
      cJSON_IsTrue(cJSON_GetObjectItem(p, "active"));
  cJSON_Delete(j);
}

/* A raw client's lobby: a survivors room for 2 that nobody joins. */
static void open_lobby(raw *c, uint16_t port, char *code) {
  raw_connect(c, port);
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "survivors");
  raw_send_msg(c, &m);
  raw_expect(c, GK_MSG_ROOM_CREATED, 3000);
  snprintf(code, GK_WIRE_CODE_LEN + 1, "%s",
           c->last[GK_MSG_ROOM_CREATED].u.room.code);
}

Test(server_admin,
     every_admin_action_refuses_a_token_with_more_less_or_one_byte_off) {
  admin a;
  memset(&a, 0, sizeof(a));
  start(&a);
  e2e_proc bot;
  e2e_start_bot(&bot, &a.d, "bot", a.udp, "1", "3", "1000000");
  cr_assert(e2e_wait_events(&a.p, "match_start", 1, 30000),
            "the match did not start");
  cJSON *ms = e2e_last_event(&a.p, "match_start");
  char game[GK_WIRE_CODE_LEN + 1], lobby[GK_WIRE_CODE_LEN + 1];
  snprintf(game, sizeof(game), "%s",
           cJSON_GetObjectItem(ms, "room")->valuestring);
  cJSON_Delete(ms);
  cr_assert_eq(enet_initialize(), 0);
  raw c;
  open_lobby(&c, a.udp, lobby);

  const size_t n = strlen(TOKEN);
  char bad[7][64];
  snprintf(bad[0], sizeof(bad[0]), "%sx", TOKEN);    /* one more */
  snprintf(bad[1], sizeof(bad[1]), "%s0123", TOKEN); /* several more */
  snprintf(bad[2], sizeof(bad[2]), "%.*s", (int)(n - 1), TOKEN); /* prefix */
  snprintf(bad[3], sizeof(bad[3]), "%s", "");                    /* empty */
  const size_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; i++) { /* one byte changed, still printable */
    snprintf(bad[4 + i], sizeof(bad[4 + i]), "%s", TOKEN);
    bad[4 + i][at[i]] ^= 0x01;
  }
  char paths[4][96];
  snprintf(paths[0], sizeof(paths[0]), "/rooms/%s/players/2/remove", game);
  snprintf(paths[1], sizeof(paths[1]), "/rooms/%s/end", game);
  snprintf(paths[2], sizeof(paths[2]), "/rooms/%s/end", lobby);
  snprintf(paths[3], sizeof(paths[3]), "/drain");
  for (int p = 0; p < 4; p++) {
    for (int t = 0; t < 7; t++)
      cr_assert_eq(post(&a, paths[p], bad[t]), 401,
                   "POST %s with token \"%s\" was not refused", paths[p],
                   bad[t]);
    raw_pump(&c, 10); /* keep the lobby's connection alive */
  }

  /* nothing happened */
  cr_assert_eq(e2e_count_events(&a.p, "admin_action"), 0,
               "an action ran on a wrong token");
  cr_assert_eq(e2e_count_events(&a.p, "match_end"), 0);
  cr_assert_eq(e2e_count_events(&a.p, "drain"), 0);
  raw_pump(&c, 200); /* a removal takes effect at the next step */
  char state[32];
  int active = 0;
  room_state(&a, game, state, sizeof(state), &active);
  cr_assert_str_eq(state, "playing");
  cr_assert_eq(active, 3, "only %d players active", active);
  room_state(&a, lobby, state, sizeof(state), &active);
  cr_assert_str_eq(state, "lobby");
  cr_assert_eq(c.seen[GK_MSG_MATCH_END], 0, "the lobby was closed");
  cr_assert(!c.disconnected);
  cJSON *h = admin_get_json(&a, "/rooms");
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(h, "rooms")), 2);
  cJSON_Delete(h);

  /* the right token does each of them */
  cr_assert_eq(post(&a, paths[0], TOKEN), 202, "remove");
  cr_assert_eq(post(&a, paths[1], TOKEN), 202, "end");
  cr_assert_eq(post(&a, paths[2], TOKEN), 200, "end a lobby");
  raw_expect(&c, GK_MSG_MATCH_END, 3000);
  cr_assert_eq(post(&a, paths[3], TOKEN), 202, "drain");
  cr_assert_eq(e2e_count_events(&a.p, "admin_action"), 4);
  int exited = e2e_wait(&a.p, 30000);
  if (!exited) e2e_kill(&a.p);
  cr_assert(exited, "gk-server did not exit after the drain");
  cr_assert_eq(a.p.status, 0);
  raw_close(&c);
  e2e_kill(&bot);
  e2e_dir_remove(&a.d);
}
