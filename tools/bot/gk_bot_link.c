/* gk_bot_link.c: ENet or WebSocket behind one set of calls (see the
 * header). */
#include "gk_bot_link.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gk_err.h"

static gk_bot_link *of_tr(gk_net_transport *t) {
  return (gk_bot_link *)((char *)t - offsetof(gk_bot_link, u.tr));
}

static gk_bot_link *of_wc(gk_net_ws_client *c) {
  return (gk_bot_link *)((char *)c - offsetof(gk_bot_link, u.wc));
}

static void tr_receive(void *ctx, gk_net_transport *t, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  gk_bot_link *l = ctx;
  (void)t;
  l->cb.receive(l->cb.ctx, l, conn, bytes, len);
}

static void tr_connect(void *ctx, gk_net_transport *t, uint32_t conn) {
  gk_bot_link *l = ctx;
  (void)t;
  if (l->cb.connect != NULL) l->cb.connect(l->cb.ctx, l, conn);
}

static void tr_disconnect(void *ctx, gk_net_transport *t, uint32_t conn) {
  gk_bot_link *l = ctx;
  (void)t;
  if (l->cb.disconnect != NULL)
    l->cb.disconnect(l->cb.ctx, l, conn, "disconnected (ENet)");
}

static void wc_receive(void *ctx, gk_net_ws_client *c, uint32_t conn,
                       const uint8_t *bytes, size_t len) {
  gk_bot_link *l = ctx;
  (void)c;
  l->cb.receive(l->cb.ctx, l, conn, bytes, len);
}

static void wc_connect(void *ctx, gk_net_ws_client *c, uint32_t conn) {
  gk_bot_link *l = ctx;
  (void)c;
  if (l->cb.connect != NULL) l->cb.connect(l->cb.ctx, l, conn);
}

static void wc_disconnect(void *ctx, gk_net_ws_client *c, uint32_t conn,
                          const gk_net_ws_client_end *e) {
  gk_bot_link *l = ctx;
  (void)c;
  char why[320];
  if (e->err != 0)
    snprintf(why, sizeof why, "WebSocket %s: %s", gk_err_name(e->err), e->why);
  else
    snprintf(why, sizeof why, "WebSocket closed (%d): %s", e->code, e->why);
  if (l->cb.disconnect != NULL) l->cb.disconnect(l->cb.ctx, l, conn, why);
}

int gk_bot_link_init(gk_bot_link *l, uv_loop_t *loop,
                     const gk_bot_link_options *o,
                     const gk_bot_link_callbacks *cb, char *err,
                     size_t errlen) {
  memset(l, 0, sizeof *l);
  l->cb = *cb;
  if (o->ws_url != NULL) {
    int rc = gk_net_ws_url_parse(o->ws_url, &l->url, err, errlen);
    if (rc != 0) return rc;
    l->ws = 1;
    gk_net_ws_client_options wo = {.max_conns = o->max_conns,
                                   .handshake_ms = 5000,
                                   .ping_ms = 100,
                                   .timeout_ms = o->timeout_ms};
    gk_net_ws_client_callbacks wcb = {l, wc_receive, wc_connect, wc_disconnect};
    return gk_net_ws_client_init(&l->u.wc, loop, &wo, &wcb);
  }
  snprintf(l->host, sizeof l->host, "%s", o->host != NULL ? o->host : "");
  l->port = o->port;
  gk_net_transport_options to;
  memset(&to, 0, sizeof to);
  to.max_peers = o->max_conns;
  to.service_ms = 5;
  to.timeout_ms = o->timeout_ms;
  gk_net_transport_callbacks tc = {l, tr_receive, tr_connect, tr_disconnect};
  return gk_net_transport_init(&l->u.tr, loop, &to, &tc);
}

int gk_bot_link_connect(gk_bot_link *l, uint32_t *conn) {
  return l->ws ? gk_net_ws_client_connect_url(&l->u.wc, &l->url, conn)
               : gk_net_transport_connect(&l->u.tr, l->host, l->port, conn);
}

int gk_bot_link_send(gk_bot_link *l, uint32_t conn, const uint8_t *bytes,
                     size_t len, int reliable) {
  return l->ws ? gk_net_ws_client_send(&l->u.wc, conn, bytes, len, reliable)
               : gk_net_transport_send(&l->u.tr, conn, bytes, len, reliable);
}

void gk_bot_link_disconnect(gk_bot_link *l, uint32_t conn, int at_once) {
  if (l->ws)
    gk_net_ws_client_disconnect(&l->u.wc, conn, at_once);
  else
    gk_net_transport_disconnect(&l->u.tr, conn, at_once);
}

uint32_t gk_bot_link_slot(const gk_bot_link *l, uint32_t conn) {
  return l->ws ? conn & 0xffffu : conn;
}

static void tr_closed(gk_net_transport *t) {
  gk_bot_link *l = of_tr(t);
  if (l->close_cb != NULL) l->close_cb(l);
}

static void wc_closed(gk_net_ws_client *c) {
  gk_bot_link *l = of_wc(c);
  if (l->close_cb != NULL) l->close_cb(l);
}

void gk_bot_link_close(gk_bot_link *l, void (*close_cb)(gk_bot_link *l)) {
  l->close_cb = close_cb;
  if (l->ws)
    gk_net_ws_client_close(&l->u.wc, wc_closed);
  else
    gk_net_transport_close(&l->u.tr, tr_closed);
}
