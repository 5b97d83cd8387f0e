/* test_config_fleet.c: the server config's fleet section and the short
 * room codes (part of "server config"). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "gk_config.h"
#include "gk_err.h"
#include "gk_genres.h"
#include "gk_net_wire.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "config_expect.h"

Test(server_config, fleet_is_off_by_default_and_reads_every_key) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.fleet.enabled, 0);
  cr_assert_eq(c.fleet.max_rooms, c.max_rooms);
  gk_server_config_free(&c);
  cr_assert_eq(
      cfg_parse(&c,
                "{\"limits\":{\"rooms\":100},\"fleet\":{\"enabled\":true,"
                "\"redis\":\"127.0.0.1:6390\",\"password\":\"pw\",\"node\":"
                "\"a-1\",\"enet\":\"game.example:7777\",\"ws_url\":"
                "\"wss://game.example/7779/play\",\"heartbeat_ms\":500,"
                "\"ttl_ms\":2000,\"max_rooms\":40}}",
                err, sizeof(err)),
      0, "%s", err);
  cr_assert_eq(c.fleet.enabled, 1);
  cr_assert_str_eq(c.fleet.redis_host, "127.0.0.1");
  cr_assert_eq(c.fleet.redis_port, 6390);
  cr_assert_str_eq(c.fleet.redis_unix, "");
  cr_assert_str_eq(c.fleet.password, "pw");
  cr_assert_str_eq(c.fleet.node, "a-1");
  cr_assert_str_eq(c.fleet.enet, "game.example:7777");
  cr_assert_str_eq(c.fleet.ws_url, "wss://game.example/7779/play");
  cr_assert_eq(c.fleet.heartbeat_ms, 500);
  cr_assert_eq(c.fleet.ttl_ms, 2000);
  cr_assert_eq(c.fleet.max_rooms, 40);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"fleet\":{\"redis\":\"unix:/tmp/r.sock\",\"node\":"
                         "\"b\",\"enet\":\"[::1]:7000\"}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_str_eq(c.fleet.redis_unix, "/tmp/r.sock");
  cr_assert_str_eq(c.fleet.redis_host, "");
  gk_server_config_free(&c);
}

Test(server_config, fleet_bad_values_are_refused_at_start) {
  cfg_expect_error("{\"fleet\":{\"enabled\":true}}", GK_EINVAL, "fleet",
                   "needs node", NULL);
  cfg_expect_error("{\"fleet\":{\"enabled\":true,\"node\":\"a\"}}", GK_EINVAL,
                   "fleet", "enet", NULL);
  cfg_expect_error("{\"fleet\":{\"redis\":\"redis.example:6379\"}}", GK_EINVAL,
                   "fleet.redis", "numeric", NULL);
  cfg_expect_error("{\"fleet\":{\"redis\":\"127.0.0.1\"}}", GK_EINVAL,
                   "fleet.redis", "HOST:PORT", NULL);
  cfg_expect_error("{\"fleet\":{\"redis\":\"127.0.0.1:0\"}}", GK_EINVAL,
                   "fleet.redis", NULL);
  cfg_expect_error("{\"fleet\":{\"redis\":\"unix:\"}}", GK_EINVAL,
                   "fleet.redis", "socket path", NULL);
  cfg_expect_error("{\"fleet\":{\"node\":\"a b\"}}", GK_ERANGE, "fleet.node",
                   "letters", NULL);
  cfg_expect_error("{\"fleet\":{\"node\":\"a:b\"}}", GK_ERANGE, "fleet.node",
                   NULL);
  cfg_expect_error(
      "{\"fleet\":{\"node\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}", GK_ERANGE,
      "fleet.node", "32", NULL);
  cfg_expect_error("{\"fleet\":{\"enet\":\"nohost\"}}", GK_EINVAL, "fleet.enet",
                   "HOST:PORT", NULL);
  cfg_expect_error("{\"fleet\":{\"ws_url\":\"http://a/play\"}}", GK_ERANGE,
                   "fleet.ws_url", "ws://", NULL);
  cfg_expect_error("{\"fleet\":{\"heartbeat_ms\":50}}", GK_ERANGE,
                   "fleet.heartbeat_ms", "100..60000", NULL);
  cfg_expect_error("{\"fleet\":{\"heartbeat_ms\":1000,\"ttl_ms\":1500}}",
                   GK_ERANGE, "fleet.ttl_ms", "2 * heartbeat_ms", NULL);
  cfg_expect_error("{\"limits\":{\"rooms\":10},\"fleet\":{\"max_rooms\":11}}",
                   GK_ERANGE, "fleet.max_rooms", "limits.rooms", NULL);
  cfg_expect_error("{\"fleet\":{\"redis_url\":\"x\"}}", GK_ENOTFOUND,
                   "fleet.redis_url", "expected enabled, redis", NULL);
  cfg_expect_error("{\"fleet\":{\"password\":\"a b\"}}", GK_ERANGE,
                   "fleet.password", "space", NULL);
}

Test(server_codes,
     a_short_code_grows_with_the_rooms_and_is_padded_on_the_wire) {
  cr_assert_eq(gk_server_short_len(0), 4);
  cr_assert_eq(gk_server_short_len(255), 4);
  cr_assert_eq(gk_server_short_len(256), 6);
  cr_assert_eq(gk_server_short_len(65536), 8);
  const uint32_t alive[] = {0, 300, 70000};
  for (size_t k = 0; k < 3; k++) {
    for (int i = 0; i < 200; i++) {
      char code[GK_WIRE_CODE_LEN + 1], shown[GK_WIRE_CODE_LEN + 1];
      cr_assert_eq(gk_server_room_code_short(code, alive[k]), 0);
      cr_assert(gk_wire_code_valid(code), "%s is no wire code", code);
      cr_assert_eq(gk_wire_code_shown(code, shown), 0);
      cr_assert_eq(strlen(shown), gk_server_short_len(alive[k]), "%s", code);
      for (const char *p = shown; *p; p++)
        cr_assert(strchr(GK_WIRE_SHORT_ALPHABET, *p), "%c in %s", *p, shown);
      char back[GK_WIRE_CODE_LEN + 1];
      cr_assert_eq(gk_wire_code_pad(shown, back), 0);
      cr_assert_str_eq(back, code);
    }
  }
  /* typed in lower case; look-alikes and bad lengths refused */
  char out[GK_WIRE_CODE_LEN + 1];
  cr_assert_eq(gk_wire_code_pad("abcd", out), 0);
  cr_assert_str_eq(out, "ABCD222222222222");
  cr_assert_eq(gk_wire_code_pad("ABC", out), GK_EINVAL);
  cr_assert_eq(gk_wire_code_pad("ABCDEFGHJ", out), GK_EINVAL);
  cr_assert_eq(gk_wire_code_pad("AB0D", out), GK_EINVAL);
  cr_assert_eq(gk_wire_code_pad("ABID", out), GK_EINVAL);
  cr_assert_eq(gk_wire_code_pad("AB2D", out), GK_EINVAL);
  /* an old 16-character code, trailing 2s and all, reads back whole */
  cr_assert_eq(gk_wire_code_pad("voifrqzxwqklyc22", out), 0, "typed small");
  cr_assert_str_eq(out, "VOIFRQZXWQKLYC22");
  cr_assert_eq(gk_wire_code_pad("VOIFRQZXWQKLYC21", out), GK_EINVAL);
  cr_assert_eq(gk_wire_code_pad("VOIFRQZXWQKLYC22", out), 0);
  char shown[GK_WIRE_CODE_LEN + 1], back[GK_WIRE_CODE_LEN + 1];
  cr_assert_eq(gk_wire_code_shown(out, shown), 0);
  cr_assert_str_eq(shown, "VOIFRQZXWQKLYC22");
  cr_assert_eq(gk_wire_code_pad(shown, back), 0);
  cr_assert_str_eq(back, out);
  cr_assert_eq(gk_wire_code_shown("VOIFRQZXWQKLYCOE", shown), 0);
  cr_assert_str_eq(shown, "VOIFRQZXWQKLYCOE");
}
