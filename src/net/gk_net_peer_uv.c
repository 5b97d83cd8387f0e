/* gk_net_peer_uv.c: the peer engine on a uv loop (see gk_net_peer_uv.h).
 *
 * Every call into the engine is made at uv_hrtime() and followed by
 * rearm(): the engine's next deadline (poll_timeout) becomes a one-shot
 * uv_timer of ceil((deadline - now) / 1 ms), or the timer stops if there
 * is none. A deadline that did not change leaves a running timer alone,
 * so the timer is restarted exactly where the engine moved its deadline
 * (a timeout, a resume, the start, the end), as the uv-bound engine did.
 */
#include "gk_net_peer_uv.h"

#include <stddef.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"

gk_net_peer_uv *gk_net_peer_uv_of(gk_net_peer *p) {
  return (gk_net_peer_uv *)(void *)((char *)p - offsetof(gk_net_peer_uv, eng));
}

static void on_timer(uv_timer_t *t);

static void rearm(gk_net_peer_uv *u, uint64_t now) {
  if (!u->open) return;
  uint64_t d = gk_net_peer_poll_timeout(&u->eng);
  if (d == GK_NET_PEER_NEVER) {
    uv_timer_stop(&u->timer);
    u->armed = GK_NET_PEER_NEVER;
    return;
  }
  if (d == u->armed && uv_is_active((uv_handle_t *)&u->timer)) return;
  uint64_t ms = d > now ? (d - now + 999999u) / 1000000u : 0;
  uv_timer_start(&u->timer, on_timer, ms, 0);
  u->armed = d;
}

static void on_timer(uv_timer_t *t) {
  gk_net_peer_uv *u = t->data;
  uint64_t now = uv_hrtime();
  u->armed = GK_NET_PEER_NEVER; /* one-shot: it fired */
  gk_net_peer_handle_timeout(&u->eng, now);
  rearm(u, now);
}

static const gk_sim *builtin_genre(void *ctx, const char *name) {
  (void)ctx;
  return gk_genre_find(name);
}

int gk_net_peer_uv_init(gk_net_peer_uv *u, uv_loop_t *loop,
                        const gk_net_peer_options *opts,
                        const gk_net_peer_callbacks *cb) {
  if (u == NULL || loop == NULL || opts == NULL) return GK_EINVAL;
  gk_net_peer_options o = *opts;
  if (o.genres.find == NULL && o.genres.count == 0)
    o.genres.find = builtin_genre;
  if (o.apply_options == NULL) o.apply_options = gk_config_match_options;
  int rc = gk_net_peer_init(&u->eng, &o, cb);
  if (rc != 0) return rc;
  uv_timer_init(loop, &u->timer);
  u->timer.data = u;
  u->armed = GK_NET_PEER_NEVER;
  u->open = 1;
  u->close_cb = NULL;
  return 0;
}

int gk_net_peer_uv_receive(gk_net_peer_uv *u, const uint8_t *bytes,
                           size_t len) {
  uint64_t now = uv_hrtime();
  int rc = gk_net_peer_handle(&u->eng, now, bytes, len);
  rearm(u, now);
  return rc;
}

int gk_net_peer_uv_start(gk_net_peer_uv *u, const gk_wire_match_start *ms,
                         char *err, size_t errlen) {
  uint64_t now = uv_hrtime();
  int rc = gk_net_peer_start(&u->eng, now, ms, err, errlen);
  rearm(u, now);
  return rc;
}

int gk_net_peer_uv_send_msg(gk_net_peer_uv *u, const gk_wire_msg *m) {
  uint64_t now = uv_hrtime();
  int rc = gk_net_peer_send_msg(&u->eng, now, m);
  rearm(u, now);
  return rc;
}

int gk_net_peer_uv_rejoin(gk_net_peer_uv *u, const char *code, uint32_t slot,
                          const uint8_t secret[GK_WIRE_SECRET_LEN],
                          const uint8_t *token) {
  uint64_t now = uv_hrtime();
  int rc = gk_net_peer_rejoin(&u->eng, now, code, slot, secret, token);
  rearm(u, now);
  return rc;
}

int gk_net_peer_uv_spectate(gk_net_peer_uv *u, const char *code,
                            const uint8_t *token) {
  uint64_t now = uv_hrtime();
  int rc = gk_net_peer_spectate(&u->eng, now, code, token);
  rearm(u, now);
  return rc;
}

void gk_net_peer_uv_stop(gk_net_peer_uv *u) {
  gk_net_peer_stop(&u->eng);
  rearm(u, uv_hrtime());
}

static void on_closed(uv_handle_t *h) {
  gk_net_peer_uv *u = h->data;
  gk_net_peer_free(&u->eng);
  if (u->close_cb != NULL) u->close_cb(u);
}

void gk_net_peer_uv_close(gk_net_peer_uv *u,
                          void (*close_cb)(gk_net_peer_uv *u)) {
  if (!u->open) return;
  u->open = 0;
  gk_net_peer_stop(&u->eng);
  u->close_cb = close_cb;
  uv_close((uv_handle_t *)&u->timer, on_closed);
}
