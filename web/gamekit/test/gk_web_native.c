/* gk_web_native.c: a native lockstep peer that joins a room by its code
 * over ENet and records its hash chain, so a test can hold the browser
 * client's chain (gamekit.wasm under node) against a native one step by
 * step.
 *
 *   gk-web-native HOST:PORT CODE SEED HASHES [TIMEOUT_S]
 *
 * Joins room CODE as a player, plays the genre's bot (gk_net_peer's own,
 * seeded with SEED as gk-bot seeds it), writes one line "STEP HASH" (hash
 * as 16 hex digits) per step run to the file HASHES, and exits 0 once the
 * match has ended for it, 1 on a refusal, a lost connection or the timeout
 * (default 120 s), 2 on a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"

typedef struct native {
  uv_loop_t *loop;
  gk_net_transport t;
  gk_net_peer_uv peer;
  uv_timer_t guard;
  uint32_t conn;
  const char *code;
  FILE *hashes;
  int status; /* -1 running */
} native;

static void finish(native *n, int status, const char *why) {
  if (n->status >= 0) return;
  n->status = status;
  if (why != NULL) fprintf(stderr, "gk-web-native: %s\n", why);
  uv_stop(n->loop);
}

static int p_send(void *ctx, const uint8_t *b, size_t len, int reliable) {
  native *n = ctx;
  return gk_net_transport_send(&n->t, n->conn, b, len, reliable);
}

static void p_step(void *ctx, gk_net_peer *p, const gk_step_input *in,
                   uint64_t hash) {
  native *n = ctx;
  (void)p;
  fprintf(n->hashes, "%" PRIu64 " %016" PRIx64 "\n", in->step, hash);
}

static void p_ended(void *ctx, gk_net_peer *p, uint64_t step, int reason) {
  (void)p;
  (void)step;
  (void)reason;
  finish(ctx, 0, NULL);
}

static void p_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  (void)p;
  if (m->type == GK_MSG_ERROR) {
    char why[GK_WIRE_TEXT_MAX + 64];
    snprintf(why, sizeof why, "server error %s: %s",
             gk_err_name(m->u.error.code), m->u.error.text);
    finish(ctx, 1, why);
  }
}

static void t_receive(void *ctx, gk_net_transport *t, uint32_t peer,
                      const uint8_t *bytes, size_t len) {
  native *n = ctx;
  (void)t;
  (void)peer;
  gk_net_peer_uv_receive(&n->peer, bytes, len);
}

static void t_connect(void *ctx, gk_net_transport *t, uint32_t peer) {
  native *n = ctx;
  (void)t;
  n->conn = peer;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_JOIN_ROOM;
  snprintf(m.u.room.code, sizeof m.u.room.code, "%s", n->code);
  m.u.room.role = GK_WIRE_ROLE_PLAYER;
  if (gk_net_peer_uv_send_msg(&n->peer, &m) != 0)
    finish(n, 1, "cannot send JOIN_ROOM");
}

static void t_disconnect(void *ctx, gk_net_transport *t, uint32_t peer) {
  (void)t;
  (void)peer;
  finish(ctx, 1, "disconnected");
}

static void on_guard(uv_timer_t *h) {
  finish(h->data, 1, "timed out");
}

static int run(native *n, const char *host, uint16_t port, uint64_t seed,
               uint64_t timeout_s) {
  gk_net_transport_options to;
  memset(&to, 0, sizeof to);
  gk_net_transport_callbacks tc = {n, t_receive, t_connect, t_disconnect};
  if (gk_net_transport_init(&n->t, n->loop, &to, &tc) != 0) return 1;
  gk_net_peer_options po;
  memset(&po, 0, sizeof po);
  po.bot_seed = seed;
  gk_net_peer_callbacks pc;
  memset(&pc, 0, sizeof pc);
  pc.ctx = n;
  pc.send = p_send;
  pc.step = p_step;
  pc.ended = p_ended;
  pc.message = p_message;
  if (gk_net_peer_uv_init(&n->peer, n->loop, &po, &pc) != 0) return 1;
  uint32_t id = 0;
  if (gk_net_transport_connect(&n->t, host, port, &id) != 0) return 1;
  uv_timer_init(n->loop, &n->guard);
  n->guard.data = n;
  uv_timer_start(&n->guard, on_guard, timeout_s * 1000, 0);
  uv_run(n->loop, UV_RUN_DEFAULT);
  gk_net_peer_uv_close(&n->peer, NULL);
  gk_net_transport_close(&n->t, NULL);
  uv_close((uv_handle_t *)&n->guard, NULL);
  uv_run(n->loop, UV_RUN_DEFAULT);
  return n->status;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc > 6) {
    fprintf(stderr, "usage: gk-web-native HOST:PORT CODE SEED HASHES "
                    "[TIMEOUT_S]\n");
    return 2;
  }
  char host[64];
  const char *colon = strrchr(argv[1], ':');
  unsigned long port = colon ? strtoul(colon + 1, NULL, 10) : 0;
  if (colon == NULL || (size_t)(colon - argv[1]) >= sizeof host || port == 0 ||
      port > 65535 || !gk_wire_code_valid(argv[2])) {
    fprintf(stderr, "gk-web-native: expected HOST:PORT and a room code\n");
    return 2;
  }
  memcpy(host, argv[1], (size_t)(colon - argv[1]));
  host[colon - argv[1]] = '\0';
  native n;
  memset(&n, 0, sizeof n);
  n.status = -1;
  n.code = argv[2];
  n.loop = uv_default_loop();
  n.hashes = fopen(argv[4], "w");
  if (n.hashes == NULL) {
    perror(argv[4]);
    return 2;
  }
  uint64_t seed = strtoull(argv[3], NULL, 10);
  uint64_t timeout = argc == 6 ? strtoull(argv[5], NULL, 10) : 120;
  int rc = run(&n, host, (uint16_t)port, seed, timeout ? timeout : 120);
  fclose(n.hashes);
  return rc < 0 ? 1 : rc;
}
