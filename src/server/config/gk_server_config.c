/* gk_server_config.c: the entry points of the strict JSON config reader
 * (gk_server_config.h): the defaults, parsing a document, the genre
 * lookups and a room's genre config.
 *
 * Every key is a row of the one config table (gk_server_config_table.c,
 * gk_server_config_schema.h says what a row holds), read by the typed
 * readers of gk_server_config_read.c; the keys that must agree are checked
 * once the whole document is read (gk_server_config_check.c); "genres" is
 * walked by gk_server_config_genres.c. Reading a file and the genre
 * libraries it names is gk_server_config_load.c.
 */
#include "gk_server_config.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_server_config_schema.h"
#include "gk_utf8.h"

void gk_server_config_default(gk_server_config *c) {
  memset(c, 0, sizeof(*c));
  sv_cfg_defaults(c, &sv_cfg_top);
  /* admin.host, .port and .loopback as admin.listen's default says */
  sv_cfg_ctx x = {.c = c, .file = "config"};
  (void)sv_cfg_admin_listen(&x, &c->admin);
  for (uint32_t i = 0; gk_genre_at(i) && c->ngenres < GK_SERVER_GENRES_MAX;
       i++) {
    gk_server_genre *g = &c->genres[c->ngenres++];
    g->sim = gk_genre_at(i);
    g->enabled = 1;
    g->max_players = g->sim->players_max < c->max_players ? g->sim->players_max
                                                          : c->max_players;
  }
}

void gk_server_config_free(gk_server_config *c) {
  for (uint32_t i = 0; i < c->ngenres; i++) {
    cJSON_Delete(c->genres[i].options);
    c->genres[i].options = NULL;
  }
}

/* 1-based line and column of byte offset `at`. */
static void line_col(const char *s, size_t at, unsigned *line, unsigned *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at; i++) {
    if (s[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

int gk_server_config_parse(gk_server_config *c, const char *json, size_t len,
                           const char *file, char *err, size_t errlen) {
  sv_cfg_ctx x;
  memset(&x, 0, sizeof(x));
  x.c = c;
  x.file = file ? file : "config";
  x.err = err;
  x.errlen = errlen;
  gk_server_config_default(c);
  if (err && errlen) err[0] = '\0';
  if (len > GK_SERVER_CONFIG_FILE_MAX)
    return sv_cfg_fail(&x, GK_ETOOBIG, NULL, "larger than %u bytes",
                       GK_SERVER_CONFIG_FILE_MAX);
  if (memchr(json, '\0', len))
    return sv_cfg_fail(&x, GK_EPARSE, NULL, "contains a NUL byte");
  size_t bad = gk_utf8_check((const uint8_t *)json, len);
  if (bad < len) { /* the genres' options go into every replay's header */
    unsigned line, col;
    line_col(json, bad, &line, &col);
    return sv_cfg_fail(&x, GK_EPARSE, NULL, "not UTF-8 at line %u, column %u",
                       line, col);
  }

  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
  if (!root) {
    size_t at =
        end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
    unsigned line, col;
    line_col(json, at, &line, &col);
    return sv_cfg_fail(&x, GK_EPARSE, NULL,
                       "invalid JSON at line %u, column %u", line, col);
  }
  /* nothing but whitespace may follow the object */
  size_t at = end ? (size_t)(end - json) : len;
  while (at < len && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
                      json[at] == '\r'))
    at++;
  int rc;
  if (at < len) {
    unsigned line, col;
    line_col(json, at, &line, &col);
    rc = sv_cfg_fail(
        &x, GK_EPARSE, NULL,
        "unexpected text after the JSON value at line %u, column %u", line,
        col);
  } else if (!cJSON_IsObject(root)) {
    rc = sv_cfg_fail(&x, GK_EPARSE, NULL, "must be a JSON object, got %s",
                     gk_config_type_name(root));
  } else {
    rc = sv_cfg_walk(&x, root, &sv_cfg_top, "");
    if (rc == 0) rc = sv_cfg_finish(&x);
  }
  cJSON_Delete(root);
  if (rc) {
    gk_server_config_free(c);
    gk_server_config_default(c);
  }
  return rc;
}

const gk_server_genre *gk_server_config_genre(const gk_server_config *c,
                                              const char *name) {
  for (uint32_t i = 0; i < c->ngenres; i++)
    if (strcmp(c->genres[i].sim->name, name) == 0) return &c->genres[i];
  return NULL;
}

int gk_server_room_config(const gk_server_genre *g, void *cfg,
                          const char *client_json, size_t len, char *err,
                          size_t errlen) {
  const gk_sim *sim = g->sim;
  memset(cfg, 0, sim->config_size);
  sim->config_default(cfg);
  int rc = gk_config_apply(sim, cfg, g->options, "server options", err, errlen);
  if (rc == 0)
    rc = gk_config_apply_text(sim, cfg, client_json, len, "options", err,
                              errlen);
  if (rc && sim->config_free) sim->config_free(cfg);
  return rc;
}

int gk_server_config_proxy(const gk_server_config *c,
                           const struct sockaddr *sa) {
  uint8_t a[16];
  uint8_t fam = 0;
  if (sa && sa->sa_family == AF_INET) {
    memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    fam = 4;
  } else if (sa && sa->sa_family == AF_INET6) {
    const struct in6_addr *v6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    fam = IN6_IS_ADDR_V4MAPPED(v6) ? 4 : 6;
    memcpy(a, fam == 4 ? v6->s6_addr + 12 : v6->s6_addr, fam == 4 ? 4 : 16);
  }
  for (uint32_t i = 0; fam && i < c->ws.ntrusted_proxies; i++) {
    const gk_server_net *n = &c->ws.proxy_nets[i];
    unsigned b = n->bits, whole = b / 8;
    if (n->family != fam || memcmp(a, n->addr, whole) != 0) continue;
    if (b % 8 == 0 || ((a[whole] ^ n->addr[whole]) >> (8 - b % 8)) == 0)
      return 1;
  }
  return 0;
}
