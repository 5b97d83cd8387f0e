/* test_config_table.c: the one table of gk-server's config keys
 * (src/server/config/gk_server_config_table.c) and its typed readers.
 *
 * The rows themselves are checked (defaults inside the bounds, no key
 * twice in a table, members of the size their kind stores), so a row added
 * with a slip fails here rather than at someone's start-up. The messages of
 * the row kinds that the websocket and desync objects brought into the
 * table (string arrays, enums with an object form, strings that must not
 * be empty, keys read in order) are pinned whole: test_config.c checks
 * their fragments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_config.h"
#include "gk_server_config_schema.h"

static int parse(gk_server_config *c, const char *json, char *err,
                 size_t errlen) {
  return gk_server_config_parse(c, json, strlen(json), "t.json", err, errlen);
}

/* Parses `json`, expects failure with `code` and exactly `want`. */
static void expect_exact(const char *json, int code, const char *want) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = parse(&c, json, err, sizeof(err));
  cr_assert_eq(rc, code, "%s -> %s (%s), want %s", json, gk_err_name(rc), err,
               gk_err_name(code));
  cr_assert_str_eq(err, want, "%s", json);
  gk_server_config_free(&c);
}

static void check_row(const sv_cfg_table *t, const sv_cfg_row *r) {
  for (const sv_cfg_row *o = t->rows; o != r; o++)
    cr_assert(strcmp(o->key, r->key) != 0, "%s: twice in one table", r->key);
  switch (r->kind) {
  case SV_CFG_UINT:
  case SV_CFG_DELAY:
    cr_assert(r->size == 2 || r->size == 4 || r->size == 8, "%s", r->key);
    cr_assert(r->min <= r->def && r->def <= r->max, "%s: default", r->key);
    cr_assert(r->size == 8 || r->max < (1ull << (8 * r->size)), "%s", r->key);
    break;
  case SV_CFG_STRING:
  case SV_CFG_STRINGS:
    cr_assert(r->min < r->size, "%s", r->key);
    if (r->kind == SV_CFG_STRINGS) cr_assert(r->max > 0, "%s", r->key);
    if (r->sdef)
      cr_assert(strlen(r->sdef) >= r->min && strlen(r->sdef) < r->size,
                "%s: default", r->key);
    break;
  case SV_CFG_BOOL:
    cr_assert(r->size == sizeof(int) && r->def <= 1, "%s", r->key);
    break;
  case SV_CFG_ENUM: {
    uint64_t n = 0;
    while (r->names[n]) n++;
    cr_assert(r->size == sizeof(int) && r->def < n, "%s", r->key);
    break;
  }
  case SV_CFG_OBJECT:
    cr_assert_not_null(r->sub, "%s", r->key);
    break;
  case SV_CFG_GENRES:
    break;
  }
}

static unsigned check_table(const sv_cfg_table *t) {
  unsigned rows = 0;
  for (const sv_cfg_row *r = t->rows; r->key; r++, rows++) {
    check_row(t, r);
    if (r->sub) rows += check_table(r->sub);
  }
  return rows;
}

Test(server_config, every_row_of_the_table_is_well_formed) {
  /* 17 at the top: more means the nested tables were walked too */
  cr_assert_gt(check_table(&sv_cfg_top), 80u);
}

Test(server_config, the_defaults_are_the_rows_own) {
  gk_server_config c;
  gk_server_config_default(&c);
  cr_assert_eq(c.log_level, GK_LOG_INFO);
  cr_assert_eq(c.input_delay_auto, 1);
  cr_assert_eq(c.input_delay, 3u);
  cr_assert_eq(c.desync, GK_DESYNC_REPORT);
  cr_assert_str_eq(c.desync_dir, "");
  cr_assert_eq(c.desync_timeout_ms, 5000u);
  cr_assert_eq(c.desync_max_state_bytes, 16u << 20);
  cr_assert_eq(c.desync_fields, 8u);
  cr_assert_eq(c.desync_history_every, 64u);
  cr_assert_str_eq(c.ws.host, "0.0.0.0");
  cr_assert_eq(c.ws.port, 7779);
  cr_assert_eq(c.ws.max_connections, 256u);
  cr_assert_eq(c.ws.ping_ms, 100u);
  cr_assert_str_eq(c.admin.listen, "127.0.0.1:7778");
  /* read from admin.listen's default */
  cr_assert_str_eq(c.admin.host, "127.0.0.1");
  cr_assert_eq(c.admin.port, 7778);
  cr_assert_eq(c.admin.loopback, 1);
  cr_assert_str_eq(c.reconnect_while_away, "stall");
  gk_server_config_free(&c);
}

Test(server_config, an_enum_names_its_choices) {
  expect_exact("{\"log_level\":1}", GK_EINVAL,
               "t.json: log_level: must be one of \"debug\", \"info\", "
               "\"warn\", \"error\"");
  expect_exact("{\"auth\":{\"mode\":\"tokens\"}}", GK_ERANGE,
               "t.json: auth.mode: must be \"open\" or \"token\"");
  expect_exact("{\"desync\":[]}", GK_EINVAL,
               "t.json: desync: must be \"report\", \"end\" or an object");
  expect_exact("{\"desync\":{\"policy\":true}}", GK_EINVAL,
               "t.json: desync.policy: must be a string, got a boolean");
  expect_exact("{\"desync\":{\"policy\":\"stop\"}}", GK_ERANGE,
               "t.json: desync.policy: must be \"report\" or \"end\"");
}

Test(server_config, the_websocket_and_desync_messages_are_kept) {
  expect_exact("{\"websocket\":{\"port\":65536}}", GK_ERANGE,
               "t.json: websocket.port: must be an integer in 0..65535");
  expect_exact("{\"desync\":{\"fields\":\"8\"}}", GK_EINVAL,
               "t.json: desync.fields: must be an integer in 1..64");
  expect_exact("{\"websocket\":{\"x\":1}}", GK_ENOTFOUND,
               "t.json: websocket.x: unknown key (enabled, host, port, path, "
               "origins, trusted_proxies, max_connections, ping_ms, "
               "static_dir, static_max_bytes, web_url)");
  expect_exact("{\"desync\":{\"x\":1}}", GK_ENOTFOUND,
               "t.json: desync.x: unknown key (policy, dir, timeout_ms, "
               "max_state_bytes, fields, history_every)");
  expect_exact("{\"auth\":{\"x\":1}}", GK_ENOTFOUND,
               "t.json: auth.x: unknown key (expected mode, key_file, "
               "replay_cache)");
  expect_exact("{\"desync\":{\"dir\":\"\"}}", GK_ERANGE,
               "t.json: desync.dir: must not be empty");
  /* the other tables: the value got, and a plain "unknown key" */
  expect_exact("{\"listen\":{\"port\":65536}}", GK_ERANGE,
               "t.json: listen.port: must be an integer in 0..65535, got "
               "65536");
  expect_exact("{\"listen\":{\"x\":1}}", GK_ENOTFOUND,
               "t.json: listen.x: unknown key");
}

Test(server_config, websocket_and_desync_keys_are_read_in_order) {
  /* a bad value before a duplicate is reported first ... */
  expect_exact("{\"websocket\":{\"port\":-1,\"port\":2}}", GK_ERANGE,
               "t.json: websocket.port: must be an integer in 0..65535");
  expect_exact("{\"desync\":{\"x\":1,\"fields\":2,\"fields\":3}}", GK_ENOTFOUND,
               "t.json: desync.x: unknown key (policy, dir, timeout_ms, "
               "max_state_bytes, fields, history_every)");
  /* ... where the other objects refuse the duplicate before reading */
  expect_exact("{\"limits\":{\"rooms\":0,\"rooms\":2}}", GK_EINVAL,
               "t.json: limits.rooms: duplicate key");
}

Test(server_config, a_string_array_keeps_each_string_and_the_count) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(parse(&c,
                     "{\"websocket\":{\"origins\":[\"a\",\"b\",\"c\",\"d\","
                     "\"e\",\"f\",\"g\",\"h\"]}}",
                     err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.ws.norigins, 8u);
  cr_assert_str_eq(c.ws.origins[0], "a");
  cr_assert_str_eq(c.ws.origins[7], "h");
  gk_server_config_free(&c);
  cr_assert_eq(parse(&c, "{\"websocket\":{\"origins\":[]}}", err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.ws.norigins, 0u);
  gk_server_config_free(&c);
  expect_exact("{\"websocket\":{\"origins\":[\"a\",\"b c\"]}}", GK_ERANGE,
               "t.json: websocket.origins[1]: must have no space or control "
               "character");
}
