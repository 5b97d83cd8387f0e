/* bench_room.c: the benchmarks' room (see bench_room.h). */
#include "bench_room.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"

const char *const bench_room_options =
    "{\"max_enemies\":2000,\"spawn_batch\":64,\"spawn_interval_start\":1,"
    "\"spawn_interval_min\":1,\"enemy_health_pct\":100000,"
    "\"player_health\":1000000,\"duration_steps\":1000000}";

int bench_room_create(gk_net_peer_uv *creator) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  m.u.create_room.max_players = 2;
  snprintf(m.u.create_room.genre, sizeof m.u.create_room.genre, "survivors");
  snprintf(m.u.create_room.config, sizeof m.u.create_room.config, "%s",
           bench_room_options);
  return gk_net_peer_uv_send_msg(creator, &m);
}

int bench_room_message(const gk_wire_msg *m, gk_net_peer_uv *creator,
                       gk_net_peer_uv *joiner, char *code) {
  gk_wire_msg out;
  memset(&out, 0, sizeof out);
  if (m->type == GK_MSG_ROOM_CREATED) {
    memcpy(code, m->u.room.code, GK_WIRE_CODE_LEN + 1);
    out.type = GK_MSG_JOIN_ROOM;
    memcpy(out.u.room.code, code, GK_WIRE_CODE_LEN + 1);
    return gk_net_peer_uv_send_msg(joiner, &out) == 0 ? 0 : -1;
  }
  if (m->type == GK_MSG_JOINED) {
    out.type = GK_MSG_START_MATCH;
    return gk_net_peer_uv_send_msg(creator, &out) == 0 ? 0 : -1;
  }
  if (m->type == GK_MSG_ERROR) {
    fprintf(stderr, "ERROR %s: %s\n", gk_err_name(m->u.error.code),
            m->u.error.text);
    return -1;
  }
  return 0;
}

void bench_room_open(uv_loop_t *loop, uint16_t port, gk_net_transport *t,
                     uint32_t *id, const gk_net_transport_callbacks *tc,
                     gk_net_peer_uv *p, const gk_net_peer_options *po,
                     const gk_net_peer_callbacks *pc) {
  gk_net_transport_options to = {.max_peers = 1, .service_ms = 2};
  if (gk_net_transport_init(t, loop, &to, tc) != 0 ||
      gk_net_peer_uv_init(p, loop, po, pc) != 0 ||
      gk_net_transport_connect(t, "127.0.0.1", port, id) != 0)
    abort();
}

void bench_room_close_client(gk_net_transport *t, gk_net_peer_uv *p) {
  gk_net_peer_uv_close(p, NULL);
  gk_net_transport_close(t, NULL);
}

void bench_room_config(gk_server_config *cfg, uint32_t hz) {
  gk_server_config_default(cfg);
  snprintf(cfg->host, sizeof cfg->host, "127.0.0.1");
  cfg->port = 0;
  cfg->shutdown_grace_ms = 0;
  cfg->step_hz = hz;
}

int bench_room_start(bench_server *bs, const gk_server_config *cfg,
                     gk_server_log *log) {
  char err[GK_SERVER_CONFIG_ERR_MAX];
  uv_loop_init(&bs->loop);
  if (gk_server_start(&bs->loop, cfg, log, 0, &bs->srv, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  bs->port = gk_server_port(bs->srv);
  return 0;
}

void bench_room_shutdown(uv_loop_t *loop, gk_server *srv) {
  gk_server_shutdown(srv);
  gk_server_shutdown(srv);
  for (int i = 0; i < 100000 && uv_run(loop, UV_RUN_NOWAIT) != 0; i++)
    ;
  uv_loop_close(loop);
}
