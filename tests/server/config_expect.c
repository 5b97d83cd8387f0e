/* config_expect.c: what the server config tests share (config_expect.h). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_config.h"

#include "config_expect.h"

int cfg_parse(gk_server_config *c, const char *json, char *err, size_t errlen) {
  return gk_server_config_parse(c, json, strlen(json), "test.json", err,
                                errlen);
}

/* Parses `json`, expects failure with `code` and a message that contains
 * every one of the NULL-terminated fragments. */
void cfg_expect_error(const char *json, int code, ...) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = cfg_parse(&c, json, err, sizeof(err));
  cr_assert_eq(rc, code, "%s -> %s (%s), want %s", json, gk_err_name(rc), err,
               gk_err_name(code));
  cr_assert(strncmp(err, "test.json: ", 11) == 0, "file not named: %s", err);
  va_list ap;
  va_start(ap, code);
  for (const char *frag; (frag = va_arg(ap, const char *)) != NULL;)
    cr_assert(strstr(err, frag), "'%s' not in message: %s", frag, err);
  va_end(ap);
  gk_server_config_free(&c);
}
