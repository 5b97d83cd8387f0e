/* test_fleet_entry.c: the public list's values (gk_fleet_entry.c), pure:
 * what gk_fleet_pub_value writes parses back the same, and every value
 * that is not exactly that is GK_EPARSE with a reason. No Redis. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_fleet.h"

static int parse(const char *v, gk_fleet_pub *p, char *why) {
  return gk_fleet_pub_parse(v, strlen(v), p, why, 96);
}

Test(fleet_entry, a_public_value_parses_back_to_what_was_written) {
  gk_fleet_pub in, out;
  memset(&in, 0, sizeof in);
  strcpy(in.genre, "push-puzzle");
  in.taken = 3;
  in.free_seats = 255;
  in.playing = 1;
  char v[64], why[96] = "";
  cr_assert_eq(gk_fleet_pub_value(&in, v, sizeof v), 0);
  cr_assert_str_eq(v, "gk1 push-puzzle 3 255 playing");
  cr_assert_eq(parse(v, &out, why), 0, "%s", why);
  cr_assert_str_eq(out.genre, "push-puzzle");
  cr_assert_eq(out.taken, 3);
  cr_assert_eq(out.free_seats, 255);
  cr_assert_eq(out.playing, 1);
  in.taken = 256;
  cr_assert_eq(gk_fleet_pub_value(&in, v, sizeof v), GK_EINVAL);
}

Test(fleet_entry, public_values_that_are_not_exact_do_not_parse) {
  static const char *const bad[] = {
      "",
      "gk2 survivors 1 3 lobby",
      "gk1 survivors 01 3 lobby",    /* a leading zero */
      "gk1 survivors 1 256 lobby",   /* over 255 */
      "gk1 survivors -1 3 lobby",    /* a sign */
      "gk1 survivors 1 3 waiting",   /* no such state */
      "gk1 survivors 1 3 lobby ",    /* a trailing space */
      "gk1 survivors 1 3 lobby x",   /* a field too many */
      "gk1 survivors 1 3",           /* a field too few */
      "gk1 Survivors 1 3 lobby",     /* genre: [a-z0-9_-] */
      "gk1 survivors  1 3 lobby",    /* two spaces */
      "gk1 survivors 1\x01 3 lobby", /* a control byte */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    gk_fleet_pub p;
    char why[96] = "";
    cr_assert_eq(parse(bad[i], &p, why), GK_EPARSE, "\"%s\" parsed", bad[i]);
    cr_assert_neq(why[0], '\0', "\"%s\": no reason", bad[i]);
  }
}

Test(fleet_entry, an_entry_needs_a_node_name_and_a_room_code) {
  gk_fleet_pub p;
  char why[96] = "";
  const char *v = "gk1 survivors 1 3 lobby";
  cr_assert_eq(
      gk_fleet_pub_entry("a", 1, "ABCD", 4, v, strlen(v), &p, why, sizeof why),
      0, "%s", why);
  cr_assert_str_eq(p.node, "a");
  cr_assert_str_eq(p.code, "ABCD");
  cr_assert_eq(gk_fleet_pub_entry("a b", 3, "ABCD", 4, v, strlen(v), &p, why,
                                  sizeof why),
               GK_EPARSE);
  cr_assert_eq(
      gk_fleet_pub_entry("a", 1, "abcd", 4, v, strlen(v), &p, why, sizeof why),
      GK_EPARSE);
  cr_assert_eq(gk_fleet_pub_entry("yy", 2, "", 0, "", 0, &p, why, sizeof why),
               GK_EPARSE);
  cr_assert_str_eq(why, "gk:pub:yy is not a hash");
}
