/* gk_server_config_schema.h: the inside of the config reader, shared by
 * the src/server/config/ files only (the server and its tests see
 * gk_server_config.h).
 *
 * Every key of the config is one row of one table (gk_server_config_table.c):
 * its name, its kind, its place in gk_server_config, its bounds and its
 * default. A JSON object is a table; a row of kind SV_CFG_OBJECT names the
 * table of a nested object. The typed readers (gk_server_config_read.c)
 * read a value for any row of a kind, so adding a key is adding a row (and
 * its member in gk_server_config.h, and its line in configs/README.md).
 * What no single row can check is checked after the whole document has
 * been read (gk_server_config_check.c); "genres", whose keys are genre
 * names from the registry, is walked by gk_server_config_genres.c.
 */
#ifndef GK_SERVER_CONFIG_SCHEMA_H
#define GK_SERVER_CONFIG_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_server_config.h"

typedef enum sv_cfg_kind {
  SV_CFG_OBJECT,  /* a nested object: the table sub */
  SV_CFG_UINT,    /* uint16_t / uint32_t / uint64_t by size, in min..max */
  SV_CFG_DELAY,   /* an SV_CFG_UINT, or "auto": the int at aux becomes 1
                     (a number sets it to 0) */
  SV_CFG_STRING,  /* char[size]: min..size-1 bytes */
  SV_CFG_STRINGS, /* an array of at most max strings, each char[size] of
                     min..size-1 bytes, one after the other from off; the
                     count is the uint32_t at aux */
  SV_CFG_BOOL,    /* int, 0 or 1 */
  SV_CFG_ENUM,    /* one of names (an int-sized enum: the index of the
                     name); with sub, an object of that table as well */
  SV_CFG_GENRES   /* "genres": walked by sv_cfg_walk_genres */
} sv_cfg_kind;

/* Row flags. */
#define SV_CFG_TOKEN 1u  /* string: no space and no control character */
#define SV_CFG_NOCTRL 2u /* string: no control character */
#define SV_CFG_SEEN 4u   /* the int at aux becomes 1 when the key is given */
#define SV_CFG_EMPTY                                                           \
  8u /* string: its length errors read "must not be                            \
        empty" and "longer than N bytes" */

/* Table flags. */
#define SV_CFG_LIST 1u     /* an unknown key's message lists the keys */
#define SV_CFG_EXPECTED 2u /* ... as "(expected k1, k2)", else "(k1, k2)" */
#define SV_CFG_BRIEF                                                           \
  4u /* the websocket and desync objects' messages:                            \
        a number's range and an enum's choices without                         \
        the value got ("must be a string" for an enum                          \
        given something else), keys read in order                              \
        (a duplicate is an error when it is reached,                           \
        not before the first key is read) */

typedef struct sv_cfg_ctx {
  gk_server_config *c;
  const char *file;
  char *err;
  size_t errlen;
  uint32_t genre_max[GK_SERVER_GENRES_MAX]; /* 0 = not given */
  int genres_given;
} sv_cfg_ctx;

struct sv_cfg_table;

typedef struct sv_cfg_row {
  const char *key;
  sv_cfg_kind kind;
  unsigned flags;    /* SV_CFG_TOKEN ... */
  size_t off, size;  /* the member in gk_server_config */
  uint64_t min, max; /* UINT, DELAY: range; STRING(S): min length;
                        STRINGS: max = most strings */
  size_t aux;        /* DELAY: "auto" flag; STRINGS: count; SEEN: flag */
  uint64_t def;      /* default of UINT, DELAY, BOOL, ENUM */
  const char *sdef;  /* default of STRING (NULL = ""); DELAY: non-NULL =
                        "auto" */
  const struct sv_cfg_table *sub; /* OBJECT; ENUM: its object form */
  const char *const *names;       /* ENUM, NULL-terminated */
  /* After the value is stored: further checks of this key alone. */
  int (*check)(sv_cfg_ctx *x, const struct sv_cfg_row *r, const char *path);
} sv_cfg_row;

typedef struct sv_cfg_table {
  const sv_cfg_row *rows; /* ends with a row whose key is NULL */
  unsigned flags;         /* SV_CFG_LIST ... */
  /* After the object's keys are read (NULL = none). */
  int (*check)(sv_cfg_ctx *x, const char *path);
} sv_cfg_table;

/* gk_server_config_table.c: the top-level object. */
extern const sv_cfg_table sv_cfg_top;

/* gk_server_config_read.c: messages, the walker, the typed readers. */
int sv_cfg_fail(sv_cfg_ctx *x, int code, const char *path, const char *fmt, ...)
    GK_PRINTF(4, 5);
void sv_cfg_join(char *out, size_t cap, const char *path, const char *key);
int sv_cfg_check_keys(sv_cfg_ctx *x, const cJSON *obj, const char *path);
int sv_cfg_get_uint(sv_cfg_ctx *x, const cJSON *v, const char *path,
                    uint64_t min, uint64_t max, uint64_t *out);
int sv_cfg_get_bool(sv_cfg_ctx *x, const cJSON *v, const char *path, int *out);
int sv_cfg_walk(sv_cfg_ctx *x, const cJSON *obj, const sv_cfg_table *t,
                const char *path);
/* Every row's default into c, nested tables too. */
void sv_cfg_defaults(gk_server_config *c, const sv_cfg_table *t);

/* gk_server_config_check.c: checks of one key (rows' check) and of a
 * whole object (tables' check), then across keys once all is read. */
int sv_cfg_check_ws_host(sv_cfg_ctx *x, const sv_cfg_row *r, const char *path);
/* websocket.trusted_proxies: each an address or CIDR block, parsed into
 * ws.proxy_nets. */
int sv_cfg_check_ws_proxies(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path);
int sv_cfg_check_ws_path(sv_cfg_ctx *x, const sv_cfg_row *r, const char *path);
int sv_cfg_check_ws_web_url(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path);
int sv_cfg_check_auth(sv_cfg_ctx *x, const char *path);
/* fleet.node: 1..32 of [A-Za-z0-9_.-] (it is part of Redis keys). */
int sv_cfg_check_fleet_node(sv_cfg_ctx *x, const sv_cfg_row *r,
                            const char *path);
/* "fleet": the Redis address into redis_host/_port/_unix; enabled needs
 * node and enet; ttl_ms covers two heartbeats. */
int sv_cfg_check_fleet(sv_cfg_ctx *x, const char *path);
/* admin.listen into admin.host, .port and .loopback. */
int sv_cfg_admin_listen(sv_cfg_ctx *x, gk_server_admin_config *a);
int sv_cfg_finish(sv_cfg_ctx *x);

/* gk_server_config_genres.c: "genres", and each genre's max_players once
 * limits.players_per_room is known. */
int sv_cfg_walk_genres(sv_cfg_ctx *x, const cJSON *obj, const char *path);
int sv_cfg_genres_finish(sv_cfg_ctx *x);

#endif
