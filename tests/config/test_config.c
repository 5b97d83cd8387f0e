/* test_config.c: genre configs to and from JSON (src/config, gk_config).
 *
 * Over the replay suite's tiny genre ("tiny": every value type and one
 * dotted key, "limits.max"). Messages name the key as a JSON path under
 * the caller's prefix ("config" for gk_config_from_json). */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_config.h"
#include "tiny_sim.h"

static int from_text(const char *text, tiny_cfg *cfg, char *err,
                     size_t errlen) {
  cJSON *obj = cJSON_Parse(text);
  cr_assert_not_null(obj, "test JSON does not parse: %s", text);
  int rc = gk_config_from_json(&tiny_sim, cfg, obj, err, errlen);
  cJSON_Delete(obj);
  return rc;
}

Test(config, a_null_object_gives_the_genre_defaults) {
  tiny_cfg cfg, def;
  memset(&cfg, 0xab, sizeof cfg);
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_config_from_json(&tiny_sim, &cfg, NULL, err, sizeof err), 0);
  tiny_sim.config_default(&def);
  cr_assert_eq(memcmp(&cfg, &def, sizeof cfg), 0);
}

Test(config, every_value_type_reaches_config_set) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"start\": 42, \"twice\": true, \"label\": \"hi\"}",
                         &cfg, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(cfg.start, 42);
  cr_assert_eq(cfg.twice, 1);
  cr_assert_str_eq(cfg.label, "hi");
  cr_assert_eq(cfg.limit_max, 1000, "untouched keys keep their defaults");
}

Test(config, a_nested_object_sets_dotted_keys_the_genre_knows) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"limits\": {\"max\": 9}}", &cfg, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(cfg.limit_max, 9);
}

Test(config, a_nested_key_the_genre_does_not_know_is_named) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"limits\": {\"min\": 9}}", &cfg, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert(strstr(err, "limits.min") != NULL, "%s", err);
}

Test(config, an_array_is_rejected_unless_the_genre_knows_its_items) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"start\": [1, 2]}", &cfg, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert(strstr(err, "start.0") != NULL, "%s", err);
}

Test(config, an_unknown_key_fails_naming_the_key_and_resets_to_defaults) {
  tiny_cfg cfg, def;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"start\": 5, \"speed\": 3}", &cfg, err, sizeof err),
               GK_ENOTFOUND);
  cr_assert(strstr(err, "config.speed: ") != NULL, "%s", err);
  tiny_sim.config_default(&def);
  cr_assert_eq(memcmp(&cfg, &def, sizeof cfg), 0);
}

Test(config, the_genre_judges_ranges_and_types) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"start\": -1}", &cfg, err, sizeof err), GK_ERANGE);
  cr_assert(strstr(err, "start") != NULL, "%s", err);
  cr_assert_eq(from_text("{\"twice\": 1}", &cfg, err, sizeof err), GK_EINVAL);
  cr_assert(strstr(err, "twice") != NULL, "%s", err);
}

Test(config, fractions_huge_numbers_and_null_are_errors_naming_the_key) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  const char *bad[] = {"{\"start\": 1.5}", "{\"start\": 1e300}",
                       "{\"start\": -9007199254740994}", "{\"start\": null}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    cr_assert_eq(from_text(bad[i], &cfg, err, sizeof err), GK_EINVAL, "%s",
                 bad[i]);
    cr_assert(strstr(err, "config.start: ") != NULL, "%s -> %s", bad[i], err);
  }
}

Test(config, a_duplicate_key_is_an_error) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("{\"start\": 1, \"start\": 2}", &cfg, err, sizeof err),
               GK_EINVAL);
  cr_assert(strstr(err, "config.start: duplicate key") != NULL, "%s", err);
}

Test(config, a_non_object_and_deep_nesting_are_rejected) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(from_text("[1]", &cfg, err, sizeof err), GK_EINVAL);
  cr_assert_eq(from_text("{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":"
                         "{\"h\":{\"i\":{\"j\":1}}}}}}}}}}",
                         &cfg, err, sizeof err),
               GK_ETOOBIG);
  cr_assert(strstr(err, "nested deeper") != NULL, "%s", err);
}

static int accept_all(void *cfg, const char *key, const gk_value *v, char *err,
                      size_t errlen) {
  return 0;
}

Test(config, too_many_keys_are_refused) {
  gk_sim lax = tiny_sim;
  lax.config_set = accept_all;
  cJSON *obj = cJSON_CreateObject();
  cr_assert_not_null(obj);
  cJSON *arr = cJSON_AddArrayToObject(obj, "list");
  for (int i = 0; i < GK_CONFIG_KEYS_MAX + 5; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(i));
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  int rc = gk_config_from_json(&lax, &cfg, obj, err, sizeof err);
  cJSON_Delete(obj);
  cr_assert_eq(rc, GK_ETOOBIG, "%s", err);
  cr_assert(strstr(err, "more than") != NULL, "%s", err);
}

Test(config, to_json_and_back_gives_the_same_config) {
  tiny_cfg cfg, back;
  tiny_sim.config_default(&cfg);
  cfg.start = 123456;
  cfg.twice = 1;
  memcpy(cfg.label, "round trip", 11);
  cfg.limit_max = 77;
  cJSON *obj = gk_config_to_json(&tiny_sim, &cfg);
  cr_assert_not_null(obj);
  char *text = cJSON_PrintUnformatted(obj);
  cr_assert_str_eq(text, "{\"start\":123456,\"twice\":true,\"label\":"
                         "\"round trip\",\"limits.max\":77}");
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(gk_config_from_json(&tiny_sim, &back, obj, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(memcmp(&cfg, &back, sizeof cfg), 0);
  cJSON_free(text);
  cJSON_Delete(obj);
}

/* --- text entry point (MATCH_START, CREATE_ROOM) and the path prefix --- */

static int text(tiny_cfg *cfg, const char *json, char *err, size_t errlen) {
  tiny_sim.config_default(cfg);
  return gk_config_apply_text(&tiny_sim, cfg, json,
                              json != NULL ? strlen(json) : 0, "options", err,
                              errlen);
}

Test(config, text_with_a_nested_object_sets_dotted_keys) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(text(&cfg, " {\"limits\": {\"max\": 9}, \"start\": 4}\n", err,
                    sizeof err),
               0, "%s", err);
  cr_assert_eq(cfg.limit_max, 9);
  cr_assert_eq(cfg.start, 4);
}

Test(config, null_empty_or_blank_text_is_no_options) {
  tiny_cfg cfg, def;
  char err[GK_ERRMSG_MAX] = "";
  tiny_sim.config_default(&def);
  const char *none[] = {NULL, "", " \t\r\n"};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
    cr_assert_eq(text(&cfg, none[i], err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(&cfg, &def, sizeof cfg), 0);
  }
}

Test(config, text_that_is_not_one_object_is_a_parse_error) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX];
  const char *bad[] = {"[1]",  "{\"start\": 1} x", "{\"start\":", "7", "{} {}",
                       "\"s\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    cr_assert_eq(text(&cfg, bad[i], err, sizeof err), GK_EPARSE, "%s", bad[i]);
    cr_assert_str_eq(err, "options: must be a JSON object", "%s", bad[i]);
  }
  static const char nul[] = "{\"start\": 1}\0{}";
  cr_assert_eq(gk_config_apply_text(&tiny_sim, &cfg, nul, sizeof nul - 1,
                                    "options", err, sizeof err),
               GK_EPARSE);
}

/* Options reach the replay's JSON header as they came: what is not UTF-8
 * is refused before anything reads them. */
Test(config, options_that_are_not_utf8_are_refused_naming_the_byte) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(text(&cfg, "{\"label\": \"caf\xe9\"}", err, sizeof err),
               GK_EPARSE);
  cr_assert_str_eq(err, "options: must be UTF-8 (byte 14 is not)");
  cr_assert_eq(text(&cfg, "{\"label\": \"\xc0\xaf\"}", err, sizeof err),
               GK_EPARSE, "an overlong '/' is not UTF-8");
  cr_assert_eq(text(&cfg, "{\"label\": \"caf\xc3\xa9\"}", err, sizeof err), 0,
               "%s", err);
}

Test(config, errors_name_the_key_as_a_path_under_the_prefix) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(text(&cfg, "{\"limits\": {\"min\": 1}}", err, sizeof err),
               GK_ENOTFOUND);
  cr_assert_str_eq(err, "options.limits.min: unknown key");
  cr_assert_eq(
      text(&cfg, "{\"limits\": {\"max\": 1, \"max\": 2}}", err, sizeof err),
      GK_EINVAL);
  cr_assert_str_eq(err, "options.limits.max: duplicate key");
  cr_assert_eq(text(&cfg, "{\"limits\": {}}", err, sizeof err), GK_EINVAL);
  cr_assert_str_eq(err, "options.limits: empty object");
  cr_assert_eq(text(&cfg, "{\"\": 1}", err, sizeof err), GK_EINVAL);
  cr_assert_str_eq(err, "options: empty key");
  tiny_sim.config_default(&cfg);
  cr_assert_eq(gk_config_apply_text(&tiny_sim, &cfg, "{\"start\": 0.5}", 14,
                                    NULL, err, sizeof err),
               GK_EINVAL);
  cr_assert_str_eq(err, "start: must be an integer within +/-2^53, got 0.5");
}

Test(config, apply_changes_only_the_keys_given) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  cr_assert_eq(text(&cfg, "{\"start\": 5}", err, sizeof err), 0, "%s", err);
  const char *more = "{\"twice\": true}";
  cr_assert_eq(gk_config_apply_text(&tiny_sim, &cfg, more, strlen(more),
                                    "options", err, sizeof err),
               0, "%s", err);
  cr_assert_eq(cfg.start, 5);
  cr_assert_eq(cfg.twice, 1);
  cJSON *arr = cJSON_CreateArray();
  cr_assert_eq(
      gk_config_apply(&tiny_sim, &cfg, arr, "server options", err, sizeof err),
      GK_EINVAL);
  cr_assert_str_eq(err, "server options: must be a JSON object, got an array");
  cJSON_Delete(arr);
  cr_assert_eq(gk_config_apply(&tiny_sim, &cfg, NULL, "x", err, sizeof err), 0);
  cr_assert_eq(gk_config_apply(NULL, &cfg, NULL, "x", err, sizeof err),
               GK_EINVAL);
}
