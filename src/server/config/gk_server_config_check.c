/* gk_server_config_check.c: what the config table's typed readers cannot
 * check alone: a key's value beyond its kind and bounds (a row's check),
 * an object as a whole (a table's check), and, once the whole document is
 * read, the keys that must agree with each other (sv_cfg_finish). Every
 * message names the key at fault.
 */
#include "gk_server_config_schema.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- one key ------------------------------------------------------------- */

/* websocket.host: the listener binds a literal, so no name lookups. */
int sv_cfg_check_ws_host(sv_cfg_ctx *x, const sv_cfg_row *r, const char *path) {
  const char *h = (const char *)x->c + r->off;
  unsigned char buf[16];
  if (inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1)
    return 0;
  return sv_cfg_fail(x, GK_ERANGE, path,
                     "must be a numeric IPv4 or IPv6 address, got \"%s\"", h);
}

/* One address or CIDR block ("10.0.0.0/8", "::1", "fd00::/8") into *n;
 * bits under the prefix must be 0. 0, or -1. */
static int net_parse(const char *text, gk_server_net *n) {
  char addr[64];
  const char *slash = strchr(text, '/');
  size_t len = slash ? (size_t)(slash - text) : strlen(text);
  if (len == 0 || len >= sizeof addr) return -1;
  memcpy(addr, text, len);
  addr[len] = '\0';
  memset(n, 0, sizeof(*n));
  if (inet_pton(AF_INET, addr, n->addr) == 1)
    n->family = 4;
  else if (inet_pton(AF_INET6, addr, n->addr) == 1)
    n->family = 6;
  else
    return -1;
  unsigned max = n->family == 4 ? 32u : 128u, bits = max;
  if (slash) {
    char *end = NULL;
    unsigned long b = strtoul(slash + 1, &end, 10);
    if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || b > max) return -1;
    bits = (unsigned)b;
  }
  n->bits = (uint8_t)bits;
  for (unsigned i = bits; i < max; i++) /* no host bits under a prefix */
    if (n->addr[i / 8] >> (7 - i % 8) & 1u) return -1;
  return 0;
}

int sv_cfg_check_ws_proxies(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path) {
  (void)r;
  gk_server_ws_config *w = &x->c->ws;
  for (uint32_t i = 0; i < w->ntrusted_proxies; i++)
    if (net_parse(w->trusted_proxies[i], &w->proxy_nets[i]) != 0)
      return sv_cfg_fail(x, GK_ERANGE, path,
                         "must be IPv4 or IPv6 addresses or CIDR blocks "
                         "(10.0.0.0/8, with no bit set past the prefix), "
                         "got \"%s\"",
                         w->trusted_proxies[i]);
  return 0;
}

/* websocket.path: the URL path. */
int sv_cfg_check_ws_path(sv_cfg_ctx *x, const sv_cfg_row *r, const char *path) {
  const char *p = (const char *)x->c + r->off;
  if (p[0] == '/') return 0;
  return sv_cfg_fail(x, GK_ERANGE, path, "must begin with '/', got \"%s\"", p);
}

int sv_cfg_check_ws_web_url(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path) {
  const char *u = (const char *)x->c + r->off;
  size_t n = strlen(u);
  if (n == 0) return 0;
  const char *rest = strncmp(u, "http://", 7) == 0    ? u + 7
                     : strncmp(u, "https://", 8) == 0 ? u + 8
                                                      : NULL;
  if (rest == NULL || rest[0] == '\0' || rest[0] == '/' || u[n - 1] != '/')
    return sv_cfg_fail(x, GK_ERANGE, path,
                       "must be http://HOST[:PORT]/ or https://... ending in "
                       "'/', got \"%s\"",
                       u);
  return 0;
}

/* --- one object ---------------------------------------------------------- */

/* "auth": mode "token" needs the key file (only named here: gk_server_start
 * reads and checks it). */
int sv_cfg_check_auth(sv_cfg_ctx *x, const char *path) {
  if (x->c->auth_mode == GK_AUTH_TOKEN && !x->c->auth_key_file[0])
    return sv_cfg_fail(x, GK_EINVAL, path,
                       "mode \"token\" needs key_file (32 bytes, mode 0600: "
                       "gk-token keygen --out FILE)");
  return 0;
}

/* --- across keys --------------------------------------------------------- */

/* "HOST:PORT" or "[V6]:PORT" into host (cap bytes) and port; the host is
 * not checked further. 0, or -1 if it is not of that shape. */
static int split_host_port(const char *l, char *host, size_t cap,
                           uint16_t *port) {
  const char *colon = strrchr(l, ':');
  const char *h = l, *he = colon;
  if (l[0] == '[') {
    h = l + 1;
    he = strchr(l, ']');
    if (!he || he[1] != ':')
      he = NULL;
    else
      colon = he + 1;
  }
  char *end = NULL;
  unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (!colon || !he || he == h || (size_t)(he - h) >= cap || !colon[1] ||
      *end || p > 65535 || colon[1] == '-' || colon[1] == '+')
    return -1;
  memcpy(host, h, (size_t)(he - h));
  host[he - h] = '\0';
  *port = (uint16_t)p;
  return 0;
}

/* 1 if host is an IPv4 or IPv6 literal; *loopback says whether it is
 * 127.0.0.0/8 or ::1. */
static int numeric_host(const char *host, int *loopback) {
  unsigned char addr[16];
  if (inet_pton(AF_INET, host, addr) == 1) {
    *loopback = addr[0] == 127;
    return 1;
  }
  if (inet_pton(AF_INET6, host, addr) == 1) {
    static const unsigned char one[16] = {[15] = 1};
    *loopback = memcmp(addr, one, 16) == 0;
    return 1;
  }
  return 0;
}

/* admin.listen "HOST:PORT" or "[V6]:PORT" into host and port: a numeric
 * address or "localhost" (no name lookups at start-up). */
int sv_cfg_admin_listen(sv_cfg_ctx *x, gk_server_admin_config *a) {
  if (split_host_port(a->listen, a->host, sizeof(a->host), &a->port) != 0)
    return sv_cfg_fail(
        x, GK_EINVAL, "admin.listen",
        "must be \"HOST:PORT\" (\"[V6]:PORT\" for IPv6), got \"%s\"",
        a->listen);
  if (strcmp(a->host, "localhost") == 0)
    snprintf(a->host, sizeof(a->host), "127.0.0.1");
  if (!numeric_host(a->host, &a->loopback))
    return sv_cfg_fail(
        x, GK_EINVAL, "admin.listen",
        "host must be a numeric address or localhost, got \"%s\"", a->host);
  return 0;
}

/* --- fleet ---------------------------------------------------------------- */

int sv_cfg_check_fleet_node(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path) {
  const char *n = (const char *)x->c + r->off;
  size_t len = strlen(n);
  if (len > 32)
    return sv_cfg_fail(x, GK_ERANGE, path, "must be 1 to 32 bytes long");
  for (size_t i = 0; i < len; i++) {
    char ch = n[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
      return sv_cfg_fail(x, GK_ERANGE, path,
                         "must be letters, digits, '_', '-' or '.', got "
                         "\"%s\"",
                         n);
  }
  return 0;
}

/* fleet.redis: "unix:PATH" or "HOST:PORT" with a numeric host (hiredis
 * 0.14 resolves a name with a blocking getaddrinfo on the loop). */
static int fleet_redis(sv_cfg_ctx *x, gk_server_fleet_config *f,
                       const char *path) {
  char p[256];
  sv_cfg_join(p, sizeof(p), path, "redis");
  f->redis_host[0] = '\0';
  f->redis_unix[0] = '\0';
  f->redis_port = 0;
  if (strncmp(f->redis, "unix:", 5) == 0) {
    if (!f->redis[5])
      return sv_cfg_fail(x, GK_EINVAL, p, "\"unix:\" needs a socket path");
    snprintf(f->redis_unix, sizeof(f->redis_unix), "%s", f->redis + 5);
    return 0;
  }
  int loopback = 0;
  if (split_host_port(f->redis, f->redis_host, sizeof(f->redis_host),
                      &f->redis_port) != 0 ||
      f->redis_port == 0)
    return sv_cfg_fail(x, GK_EINVAL, p,
                       "must be \"HOST:PORT\" or \"unix:PATH\", got \"%s\"",
                       f->redis);
  if (!numeric_host(f->redis_host, &loopback))
    return sv_cfg_fail(x, GK_EINVAL, p,
                       "host must be a numeric address (no name lookups on "
                       "the loop), got \"%s\"",
                       f->redis_host);
  return 0;
}

int sv_cfg_check_fleet(sv_cfg_ctx *x, const char *path) {
  gk_server_fleet_config *f = &x->c->fleet;
  int rc = fleet_redis(x, f, path);
  if (rc) return rc;
  char p[256];
  if (f->ttl_ms < 2u * f->heartbeat_ms) {
    sv_cfg_join(p, sizeof(p), path, "ttl_ms");
    return sv_cfg_fail(x, GK_ERANGE, p,
                       "must be at least 2 * heartbeat_ms (%u), got %u",
                       2u * f->heartbeat_ms, f->ttl_ms);
  }
  if (f->ws_url[0] && strncmp(f->ws_url, "ws://", 5) != 0 &&
      strncmp(f->ws_url, "wss://", 6) != 0) {
    sv_cfg_join(p, sizeof(p), path, "ws_url");
    return sv_cfg_fail(x, GK_ERANGE, p,
                       "must begin with ws:// or wss://, got \"%s\"",
                       f->ws_url);
  }
  if (f->enabled && (!f->node[0] || !f->enet[0]))
    return sv_cfg_fail(x, GK_EINVAL, path,
                       "enabled needs node (this node's id) and enet (the "
                       "\"HOST:PORT\" clients reach it at)");
  uint16_t port = 0;
  char host[GK_SERVER_FLEET_STR_MAX];
  if (f->enet[0] && split_host_port(f->enet, host, sizeof(host), &port) != 0) {
    sv_cfg_join(p, sizeof(p), path, "enet");
    return sv_cfg_fail(x, GK_EINVAL, p, "must be \"HOST:PORT\", got \"%s\"",
                       f->enet);
  }
  return 0;
}

/* The node's room limit within the process's. */
static int fleet_finish(sv_cfg_ctx *x) {
  gk_server_fleet_config *f = &x->c->fleet;
  if (f->max_rooms > x->c->max_rooms)
    return sv_cfg_fail(x, GK_ERANGE, "fleet.max_rooms",
                       "must not exceed limits.rooms (%u), got %u",
                       x->c->max_rooms, f->max_rooms);
  if (f->max_rooms == 0) f->max_rooms = x->c->max_rooms;
  return 0;
}

/* The admin listener's address, and its one safety rule: anything but
 * loopback needs a token for the mutating endpoints. */
static int ops_finish(sv_cfg_ctx *x) {
  gk_server_admin_config *a = &x->c->admin;
  int rc = sv_cfg_admin_listen(x, a);
  if (rc) return rc;
  if (a->enabled && !a->loopback && !a->token_file[0])
    return sv_cfg_fail(
        x, GK_EINVAL, "admin.token_file",
        "required when admin.listen (%s) is not a loopback address", a->listen);
  return 0;
}

/* The input delay's bounds and the window that must hold them. */
static int lockstep_finish(sv_cfg_ctx *x) {
  gk_server_config *c = x->c;
  if (c->input_delay_min > c->input_delay_max)
    return sv_cfg_fail(x, GK_ERANGE, "lockstep.input_delay_min",
                       "must not exceed lockstep.input_delay_max (%u), got %u",
                       c->input_delay_max, c->input_delay_min);
  if (!c->input_delay_auto && c->input_delay > c->input_delay_max)
    return sv_cfg_fail(x, GK_ERANGE, "lockstep.input_delay",
                       "must not exceed lockstep.input_delay_max (%u), got %u",
                       c->input_delay_max, c->input_delay);
  uint32_t lead =
      c->lead > c->prediction_window ? c->lead : c->prediction_window;
  if (c->window < 2u * (c->input_delay_max + lead) + 8u)
    return sv_cfg_fail(x, GK_ERANGE, "lockstep.window",
                       "must be at least 2 * (input_delay_max + max(lead, "
                       "prediction.window)) + 8 = %u",
                       2u * (c->input_delay_max + lead) + 8u);
  return 0;
}

/* reconnect.while_away, and spectators that a hash ring can follow. */
static int reconnect_finish(sv_cfg_ctx *x) {
  gk_server_config *c = x->c;
  if (strcmp(c->reconnect_while_away, "stall") == 0)
    c->reconnect_neutral = 0;
  else if (strcmp(c->reconnect_while_away, "neutral") == 0)
    c->reconnect_neutral = 1;
  else
    return sv_cfg_fail(x, GK_ERANGE, "reconnect.while_away",
                       "must be \"stall\" or \"neutral\", got \"%s\"",
                       c->reconnect_while_away);
  if (c->spectator_delay_steps + c->spectator_behind_steps > 1000u)
    return sv_cfg_fail(
        x, GK_ERANGE, "spectator.behind_steps",
        "spectator.delay_steps + behind_steps must not exceed 1000 "
        "(a room keeps its last 1024 step hashes), got %u",
        c->spectator_delay_steps + c->spectator_behind_steps);
  return 0;
}

int sv_cfg_finish(sv_cfg_ctx *x) {
  int rc = lockstep_finish(x);
  if (rc == 0) rc = sv_cfg_genres_finish(x);
  if (rc == 0) rc = reconnect_finish(x);
  if (rc == 0) rc = ops_finish(x);
  if (rc == 0) rc = fleet_finish(x);
  return rc;
}
