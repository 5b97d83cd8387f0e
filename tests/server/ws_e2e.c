/* ws_e2e.c: see ws_e2e.h. */
#include "ws_e2e.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void ws_server_start(ws_server *s, const char *ws_extra, const char *extra) {
  S = NULL; /* ws_raw.c: no in-process listener, sleep while waiting */
  char more[1536];
  snprintf(more, sizeof(more),
           "\"websocket\":{\"enabled\":true,\"host\":\"127.0.0.1\","
           "\"port\":0,\"origins\":[\"http://good.example\"],"
           "\"ping_ms\":50%s%s}%s%s",
           ws_extra ? "," : "", ws_extra ? ws_extra : "", extra ? "," : "",
           extra ? extra : "");
  admin_srv_start(&s->a, 120, more);
  cJSON *l = e2e_last_event(&s->a.p, "listening");
  cr_assert_not_null(l, "no listening line");
  const cJSON *v = cJSON_GetObjectItem(l, "ws_port");
  cr_assert(cJSON_IsNumber(v), "the listening line has no ws_port");
  s->ws = (uint16_t)v->valuedouble;
  cJSON_Delete(l);
}

void ws_server_stop(ws_server *s) {
  e2e_stop_server(&s->a.p);
  e2e_dir_remove(&s->a.d);
}

/* --- /metrics --------------------------------------------------------------
 */

uint64_t ws_metric(const ws_server *s, const char *series) {
  char *b = NULL;
  long status = admin_http(&s->a, "GET", "/metrics", NULL, &b);
  cr_assert_eq(status, 200, "GET /metrics: %ld", status);
  size_t n = strlen(series);
  const char *p = b;
  uint64_t v = 0;
  int found = 0;
  while ((p = strstr(p, series)) != NULL) {
    if ((p == b || p[-1] == '\n') && p[n] == ' ') {
      v = strtoull(p + n + 1, NULL, 10);
      found = 1;
      break;
    }
    p += n;
  }
  cr_assert(found, "no %s in /metrics:\n%s", series, b);
  free(b);
  return v;
}

uint64_t ws_metric_wait(const ws_server *s, const char *series, uint64_t want,
                        int ms) {
  uint64_t v = ws_metric(s, series);
  for (int waited = 0; v < want && waited < ms; waited += 20) {
    e2e_sleep_ms(20);
    v = ws_metric(s, series);
  }
  return v;
}

/* --- raw WebSocket clients -------------------------------------------------
 */

void ws_open(raw *r, const ws_server *s, const char *src, int rcvbuf) {
  raw_connect_to(r, src, s->ws, rcvbuf);
  int st = raw_handshake(r, "/play", "websocket", "13", "gamekit.1",
                         "Origin: http://good.example\r\n");
  cr_assert_eq(st, 101, "the upgrade from %s: %d", src ? src : "-", st);
}

int ws_wait_eof(raw *r, int ms) {
  uint64_t end = uv_hrtime() / 1000000u + (uint64_t)ms;
  while (uv_hrtime() / 1000000u < end) {
    r->len = 0; /* what came before the end is not looked at */
    raw_fill(r, sizeof r->buf, 20);
    if (r->eof) return 1;
  }
  return 0;
}

int ws_create_room(raw *r, const char *genre, int players, const uint8_t *tok,
                   char *code, int *err_code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof(m));
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = (uint8_t)players;
  snprintf(m.u.create_room.genre, sizeof(m.u.create_room.genre), "%s", genre);
  if (tok) {
    m.u.create_room.token_len = GK_WIRE_TOKEN_BYTES;
    memcpy(m.u.create_room.token, tok, GK_WIRE_TOKEN_BYTES);
  }
  ws_send_msg(r, &m);
  gk_wire_msg got;
  memset(&got, 0, sizeof(got));
  *err_code = 0;
  if (ws_wait_msg(r, GK_MSG_ROOM_CREATED, &got, 5000)) {
    memcpy(code, got.u.room.code, GK_WIRE_CODE_LEN + 1);
    return GK_MSG_ROOM_CREATED;
  }
  if (got.type == GK_MSG_ERROR) *err_code = got.u.error.code;
  return got.type;
}
