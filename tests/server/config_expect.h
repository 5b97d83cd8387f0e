/* config_expect.h: the server config tests' parse and expectation helpers
 * (test_config.c, test_config_fleet.c; one executable, "server config"). */
#ifndef GK_TEST_CONFIG_EXPECT_H
#define GK_TEST_CONFIG_EXPECT_H

#include <stddef.h>

#include "gk_server_config.h"

/* gk_server_config_parse of `json` as a file named "test.json". */
int cfg_parse(gk_server_config *c, const char *json, char *err, size_t errlen);
/* Parses `json`, expects failure with `code` and a message that contains
 * every one of the NULL-terminated fragments. */
void cfg_expect_error(const char *json, int code, ...);

#endif
