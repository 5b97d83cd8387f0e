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

/* admin.listen "HOST:PORT" or "[V6]:PORT" into host and port: a numeric
 * address or "localhost" (no name lookups at start-up). */
int sv_cfg_admin_listen(sv_cfg_ctx *x, gk_server_admin_config *a) {
  const char *l = a->listen, *colon = strrchr(l, ':');
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
  unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (!colon || !he || he == h || (size_t)(he - h) >= sizeof(a->host) ||
      !colon[1] || *end || port > 65535 || colon[1] == '-' || colon[1] == '+')
    return sv_cfg_fail(
        x, GK_EINVAL, "admin.listen",
        "must be \"HOST:PORT\" (\"[V6]:PORT\" for IPv6), got \"%s\"", l);
  memcpy(a->host, h, (size_t)(he - h));
  a->host[he - h] = '\0';
  a->port = (uint16_t)port;
  if (strcmp(a->host, "localhost") == 0)
    snprintf(a->host, sizeof(a->host), "127.0.0.1");
  unsigned char addr[16];
  if (inet_pton(AF_INET, a->host, addr) == 1) {
    a->loopback = addr[0] == 127;
  } else if (inet_pton(AF_INET6, a->host, addr) == 1) {
    static const unsigned char one[16] = {[15] = 1};
    a->loopback = memcmp(addr, one, 16) == 0;
  } else {
    return sv_cfg_fail(
        x, GK_EINVAL, "admin.listen",
        "host must be a numeric address or localhost, got \"%s\"", a->host);
  }
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
  if (c->window < 2u * (c->input_delay_max + c->lead) + 8u)
    return sv_cfg_fail(x, GK_ERANGE, "lockstep.window",
                       "must be at least 2 * (input_delay_max + lead) + 8 = %u",
                       2u * (c->input_delay_max + c->lead) + 8u);
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
  return rc;
}
