/* test_genre_load.c: genres from shared objects. The loader's checks
 * (src/genre_load), gk-replay --genre-lib (the real binary, one process
 * per command, so each starts with the built-in genres only) and
 * gk-server's genres.<name>.path. Criterion forks every test, so a genre
 * one test loads is not there in the next. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../replay/cli_run.h"
#include "gk_err.h"
#include "gk_genre_load.h"
#include "gk_genres.h"
#include "gk_server_config.h"

static char msg[1024];

Test(genre_load, a_genre_library_loads_and_is_found_by_name) {
  cr_assert_null(gk_genre_find("tally"));
  const gk_sim *sim = NULL;
  cr_assert_eq(gk_genre_load(TALLY_LIB, "tally", &sim, msg, sizeof msg), 0,
               "%s", msg);
  cr_assert_not_null(sim);
  cr_assert_eq(gk_genre_find("tally"), sim);
  size_t n = 0;
  while (gk_genres[n] != NULL) n++;
  cr_assert_eq(gk_genre_at(n), sim, "added genres follow the built-in ones");
  cr_assert_null(gk_genre_at(n + 1));
  /* Loading it again changes nothing. */
  cr_assert_eq(gk_genre_load(TALLY_LIB, NULL, NULL, msg, sizeof msg), 0);
  cr_assert_null(gk_genre_at(n + 1));
}

Test(genre_load, a_library_built_for_another_abi_is_refused_naming_both) {
  int rc = gk_genre_load(TALLY_LIB_ABI99, NULL, NULL, msg, sizeof msg);
  cr_assert_eq(rc, GK_EVERSION, "%s", msg);
  cr_assert(strstr(msg, "ABI 99") && strstr(msg, "ABI 1..4"), "%s", msg);
  cr_assert(strstr(msg, TALLY_LIB_ABI99), "%s", msg);
  cr_assert_null(gk_genre_find("tally"));
}

Test(genre_load, an_abi_1_library_loads_as_abi_2_without_late_join) {
  const gk_sim *a = NULL, *b = NULL;
  int rc = gk_genre_load(TALLY_LIB_ABI1, NULL, &a, msg, sizeof msg);
  cr_assert_eq(rc, 0, "%s", msg);
  cr_assert_not_null(a);
  cr_assert_eq(a->abi, GK_SIM_ABI);
  cr_assert_eq(a->late_join, 0);
  cr_assert_str_eq(a->name, "tally");
  cr_assert_eq(gk_genre_find("tally"), a);
  /* Loading it again finds the same copy. */
  cr_assert_eq(gk_genre_load(TALLY_LIB_ABI1, NULL, &b, msg, sizeof msg), 0);
  cr_assert_eq(a, b);
}

Test(genre_load, an_abi_3_library_loads_as_abi_4_without_a_copy_hook) {
  const gk_sim *a = NULL;
  int rc = gk_genre_load(TALLY_LIB_ABI3, NULL, &a, msg, sizeof msg);
  cr_assert_eq(rc, 0, "%s", msg);
  cr_assert_not_null(a);
  cr_assert_eq(a->abi, GK_SIM_ABI);
  /* the library's struct ends before copy_state: whatever lies past it
   * (tally_lib.c puts a hook there) is not read */
  cr_assert_null(a->copy_state);
  cr_assert_str_eq(a->name, "tally");
  cr_assert_not_null(a->step);
  cr_assert_eq(gk_genre_find("tally"), a);
}

Test(genre_load, a_library_without_the_symbol_is_refused) {
  int rc = gk_genre_load(TALLY_LIB_NOSYM, NULL, NULL, msg, sizeof msg);
  cr_assert_eq(rc, GK_ENOTFOUND, "%s", msg);
  cr_assert(strstr(msg, GK_GENRE_SYMBOL), "%s", msg);
}

Test(genre_load, a_missing_file_is_refused_with_the_linkers_reason) {
  int rc =
      gk_genre_load("/nonexistent/libnothing.so", NULL, NULL, msg, sizeof msg);
  cr_assert_eq(rc, GK_EIO, "%s", msg);
  cr_assert(strstr(msg, "/nonexistent/libnothing.so"), "%s", msg);
  cr_assert(strstr(msg, "No such file"), "%s", msg);
}

Test(genre_load, a_library_whose_genre_has_another_name_is_refused) {
  int rc = gk_genre_load(TALLY_LIB, "rts", NULL, msg, sizeof msg);
  cr_assert_eq(rc, GK_EMISMATCH, "%s", msg);
  cr_assert(strstr(msg, "\"tally\"") && strstr(msg, "\"rts\""), "%s", msg);
  cr_assert_null(gk_genre_find("tally"));
}

Test(genre_load, a_second_genre_of_the_same_name_is_refused) {
  cr_assert_eq(gk_genre_load(TALLY_LIB, NULL, NULL, msg, sizeof msg), 0);
  int rc = gk_genre_load(TALLY_LIB_V2, NULL, NULL, msg, sizeof msg);
  cr_assert_eq(rc, GK_EEXIST, "%s", msg);
  cr_assert_eq(gk_genre_find("tally")->version, 1);
  /* A built-in genre cannot be replaced either. */
  gk_sim copy = *gk_genres[0];
  cr_assert_eq(gk_genre_add(&copy, msg, sizeof msg), GK_EEXIST);
}

/* --- gk-replay --genre-lib ------------------------------------------------ */

static const char *record_tally(void) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/gk-genre-load-%d.gkr", (int)getpid());
  cli_result r;
  const char *argv[] = {"record", "--genre-lib", TALLY_LIB, "--genre",
                        "tally",  "--players",   "2",       "--seed",
                        "5",      "--steps",     "200",     "--out",
                        path,     NULL};
  cli_exec(&r, argv);
  cr_assert_eq(r.code, 0, "record: %s", r.err);
  return path;
}

Test(genre_load, gk_replay_records_and_verifies_a_genre_from_a_library) {
  const char *path = record_tally();
  cli_result r;
  const char *ok[] = {"verify", "--genre-lib", TALLY_LIB, path, NULL};
  cli_exec(&r, ok);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "200"), "%s", r.out);
  /* Without the library the genre is unknown, and said to be. */
  const char *bare[] = {"verify", path, NULL};
  cli_exec(&r, bare);
  cr_assert_eq(r.code, 2, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "tally") || strstr(r.err, "tally"), "%s%s", r.out,
            r.err);
  unlink(path);
}

Test(genre_load, gk_replay_refuses_a_replay_of_another_genre_version) {
  const char *path = record_tally();
  cli_result r;
  const char *v2[] = {"verify", "--genre-lib=" TALLY_LIB_V2, path, NULL};
  cli_exec(&r, v2);
  cr_assert_eq(r.code, 2, "%s%s", r.out, r.err);
  const char *text = strstr(r.out, "version") ? r.out : r.err;
  cr_assert(strstr(text, "version 1") && strstr(text, "version 2"), "%s%s",
            r.out, r.err);
  unlink(path);
}

Test(genre_load, gk_replay_names_a_library_that_does_not_load) {
  cli_result r;
  const char *argv[] = {"info", "--genre-lib", TALLY_LIB_ABI99, "x.gkr", NULL};
  cli_exec(&r, argv);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "ABI 99"), "%s", r.err);
}

/* --- gk-server: genres.<name>.path ---------------------------------------- */

static const char *write_config(const char *json) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/gk-genre-load-%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(json, f);
  fclose(f);
  return path;
}

Test(genre_load, the_server_config_loads_a_genre_named_by_path) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"genres\": {\"tally\": {\"path\": \"%s\", \"max_players\": 4,"
           " \"options\": {\"start\": 3}}}}",
           TALLY_LIB);
  const char *path = write_config(json);
  gk_server_config c;
  cr_assert_eq(gk_server_config_load(&c, path, msg, sizeof msg), 0, "%s", msg);
  const gk_server_genre *g = gk_server_config_genre(&c, "tally");
  cr_assert_not_null(g);
  cr_assert(g->enabled);
  cr_assert_eq(g->max_players, 4);
  /* Listing genres offers exactly those: the built-in ones are off. */
  cr_assert_not(gk_server_config_genre(&c, gk_genres[0]->name)->enabled);
  gk_server_config_free(&c);
  unlink(path);
}

Test(genre_load, a_bad_genre_path_names_the_file_and_the_key) {
  const char *path = write_config(
      "{\"genres\": {\"tally\": {\"path\": \"no-such-genre.so\"}}}");
  gk_server_config c;
  int rc = gk_server_config_load(&c, path, msg, sizeof msg);
  cr_assert_eq(rc, GK_EIO, "%s", msg);
  cr_assert(strstr(msg, path) && strstr(msg, "genres.tally.path"), "%s", msg);
  cr_assert(strstr(msg, "/tmp/no-such-genre.so"),
            "a relative path is relative to the config file: %s", msg);
  gk_server_config_free(&c);
  unlink(path);
}

Test(genre_load, a_genre_path_in_parsed_text_is_checked_but_not_loaded) {
  const char *json = "{\"genres\": {\"tally\": {\"path\": \"x.so\"}}}";
  gk_server_config c;
  int rc =
      gk_server_config_parse(&c, json, strlen(json), "t.json", msg, sizeof msg);
  cr_assert_eq(rc, GK_ENOTFOUND, "%s", msg);
  cr_assert(strstr(msg, "only when the config is read from a file"), "%s", msg);
  const char *bad = "{\"genres\": {\"survivors\": {\"path\": 3}}}";
  rc = gk_server_config_parse(&c, bad, strlen(bad), "t.json", msg, sizeof msg);
  cr_assert_eq(rc, GK_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "genres.survivors.path"), "%s", msg);
  gk_server_config_free(&c);
}
