/* test_wire_addr.c: gk_wire_addr_split, the one reading of an ENet
 * address "HOST:PORT" (a REDIRECT's `enet`, the testkit's servers): good
 * ones split, every malformed one refused with nothing written. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"

Test(wire_addr, a_host_and_port_split_at_the_last_colon) {
  char host[64];
  uint16_t port = 0;
  cr_assert_eq(gk_wire_addr_split("b.example:7777", host, sizeof host, &port),
               0);
  cr_assert_str_eq(host, "b.example");
  cr_assert_eq(port, 7777);
  cr_assert_eq(gk_wire_addr_split("[::1]:65535", host, sizeof host, &port), 0);
  cr_assert_str_eq(host, "[::1]");
  cr_assert_eq(port, 65535);
  cr_assert_eq(gk_wire_addr_split("127.0.0.1:1", host, sizeof host, &port), 0);
  cr_assert_eq(port, 1);
}

Test(wire_addr, a_malformed_address_is_refused_and_nothing_written) {
  const char *bad[] = {"",
                       "host",
                       ":7777",
                       "host:",
                       "host:0",
                       "host:65536",
                       "host:99999999999",
                       "host:77a",
                       "host:-1",
                       "host: 1",
                       "host:+1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char host[64] = "untouched";
    uint16_t port = 9;
    cr_assert_eq(gk_wire_addr_split(bad[i], host, sizeof host, &port),
                 GK_EINVAL, "\"%s\" is refused", bad[i]);
    cr_assert_str_eq(host, "untouched", "\"%s\": the host untouched", bad[i]);
    cr_assert_eq(port, 9, "\"%s\": the port untouched", bad[i]);
  }
  char small[4];
  uint16_t port = 0;
  cr_assert_eq(gk_wire_addr_split("abcd:1", small, sizeof small, &port),
               GK_ETOOBIG);
  cr_assert_eq(gk_wire_addr_split(NULL, small, sizeof small, &port), GK_EINVAL);
}
