/* test_config.c: gk-server's config reader, JSON-lines log and room codes.
 *
 * Config errors must name the file, the key (as a JSON path) and the
 * reason; the shipped configs/server.json must be valid; log records must
 * be one valid JSON object per line whatever the field values; room codes
 * must be well-formed and not repeat.
 */
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

Test(server_config, an_empty_object_gives_the_documented_defaults) {
  gk_server_config c;
  char err[256];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.port, 7777);
  cr_assert_eq(c.step_hz, 60);
  cr_assert_eq(c.desync, GK_DESYNC_REPORT);
  cr_assert_eq(c.stall_auto_remove_ms, 0);
  cr_assert_eq(c.replays_enabled, 1);
  cr_assert_str_eq(c.replay_dir, "replays");
  uint32_t n = 0;
  while (gk_genres[n]) n++;
  cr_assert_eq(c.ngenres, n);
  gk_server_config_free(&c);
}

Test(server_config, the_shipped_server_json_and_genre_examples_are_valid) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_config_load(&c, GK_SOURCE_ROOT "/configs/server.json", err,
                                 sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
  /* each configs/genres/<name>.json is a valid options object for the
   * genre of that name (checked for the genres this build has) */
  int checked = 0;
  for (uint32_t i = 0; i < c.ngenres; i++) {
    const gk_sim *sim = c.genres[i].sim;
    char path[512];
    snprintf(path, sizeof(path), "%s/configs/genres/%s.json", GK_SOURCE_ROOT,
             sim->name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no option example for %s", sim->name);
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *opts = cJSON_Parse(text);
    cr_assert_not_null(opts, "%s: not JSON", path);
    void *cfg = calloc(1, sim->config_size);
    sim->config_default(cfg);
    rc = gk_config_apply(sim, cfg, opts, path, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    if (sim->config_free) sim->config_free(cfg);
    free(cfg);
    cJSON_Delete(opts);
    checked++;
  }
  cr_assert_gt(checked, 0);
  gk_server_config_free(&c);
}

Test(server_config, every_key_is_read_into_the_struct) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  const char *json =
      "{\"listen\":{\"host\":\"127.0.0.1\",\"port\":0},\"log_level\":\"warn\","
      "\"step_hz\":120,\"limits\":{\"rooms\":32,\"players_per_room\":4,"
      "\"peers\":100,\"packet_bytes\":600,\"strikes\":3,"
      "\"lobby_timeout_ms\":0},\"lockstep\":{\"input_delay\":2,"
      "\"input_delay_max\":4,\"lead\":3,\"window\":128,\"late_slack_ms\":7,"
      "\"stall_ms\":8},"
      "\"stall\":{\"notice_ms\":250,\"auto_remove_ms\":5000},"
      "\"desync\":\"end\",\"replays\":{\"enabled\":false,\"dir\":\"/tmp/r\"},"
      "\"shutdown_grace_ms\":1500,\"timing\":{\"service_ms\":2,"
      "\"peer_timeout_ms\":3000,\"catchup_ticks\":9}}";
  cr_assert_eq(cfg_parse(&c, json, err, sizeof(err)), 0, "%s", err);
  cr_assert_str_eq(c.host, "127.0.0.1");
  cr_assert_eq(c.port, 0);
  cr_assert_eq(c.log_level, GK_LOG_WARN);
  cr_assert_eq(c.step_hz, 120);
  cr_assert_eq(c.max_rooms, 32);
  cr_assert_eq(c.max_players, 4);
  cr_assert_eq(c.max_peers, 100);
  cr_assert_eq(c.max_packet, 600);
  cr_assert_eq(c.strikes, 3);
  cr_assert_eq(c.lobby_timeout_ms, 0);
  cr_assert_eq(c.input_delay, 2);
  cr_assert_eq(c.input_delay_max, 4);
  cr_assert_eq(c.lead, 3);
  cr_assert_eq(c.window, 128);
  cr_assert_eq(c.late_slack_ms, 7);
  cr_assert_eq(c.stall_ms, 8);
  cr_assert_eq(c.stall_notice_ms, 250);
  cr_assert_eq(c.stall_auto_remove_ms, 5000);
  cr_assert_eq(c.desync, GK_DESYNC_END);
  cr_assert_eq(c.replays_enabled, 0);
  cr_assert_str_eq(c.replay_dir, "/tmp/r");
  cr_assert_eq(c.shutdown_grace_ms, 1500);
  cr_assert_eq(c.service_ms, 2);
  cr_assert_eq(c.peer_timeout_ms, 3000);
  cr_assert_eq(c.catchup_ticks, 9);
  gk_server_config_free(&c);
}

Test(server_config, an_unknown_key_is_named_with_its_path) {
  cfg_expect_error("{\"limits\":{\"romos\":3}}", GK_ENOTFOUND, "limits.romos",
                   "unknown key", NULL);
  cfg_expect_error("{\"colour\":1}", GK_ENOTFOUND, "colour", NULL);
}

Test(server_config, a_wrong_type_is_named_with_its_path) {
  cfg_expect_error("{\"limits\":{\"rooms\":\"many\"}}", GK_EINVAL,
                   "limits.rooms", "integer", "a string", NULL);
  cfg_expect_error("{\"listen\":{\"port\":true}}", GK_EINVAL, "listen.port",
                   "a boolean", NULL);
  cfg_expect_error("{\"replays\":{\"enabled\":1}}", GK_EINVAL,
                   "replays.enabled", "true or false", NULL);
  cfg_expect_error("{\"stall\":[]}", GK_EINVAL, "stall", "an object", NULL);
  cfg_expect_error("{\"desync\":3}", GK_EINVAL, "desync", "report", NULL);
}

Test(server_config, an_out_of_range_value_is_named_with_its_path) {
  cfg_expect_error("{\"limits\":{\"rooms\":0}}", GK_ERANGE, "limits.rooms",
                   "1..4096", "got 0", NULL);
  cfg_expect_error("{\"listen\":{\"port\":70000}}", GK_ERANGE, "listen.port",
                   NULL);
  cfg_expect_error("{\"step_hz\":1.5}", GK_ERANGE, "step_hz", NULL);
  cfg_expect_error("{\"step_hz\":-1}", GK_ERANGE, "step_hz", NULL);
  cfg_expect_error("{\"step_hz\":1e300}", GK_ERANGE, "step_hz", NULL);
  cfg_expect_error("{\"log_level\":\"loud\"}", GK_ERANGE, "log_level", NULL);
  cfg_expect_error("{\"desync\":\"panic\"}", GK_ERANGE, "desync", NULL);
  cfg_expect_error("{\"listen\":{\"host\":\"\"}}", GK_ERANGE, "listen.host",
                   NULL);
}

Test(server_config, keys_that_must_agree_are_checked_together) {
  cfg_expect_error("{\"lockstep\":{\"input_delay\":9,\"input_delay_max\":4}}",
                   GK_ERANGE, "lockstep.input_delay", "input_delay_max", NULL);
  cfg_expect_error("{\"lockstep\":{\"window\":64,\"input_delay_max\":40}}",
                   GK_ERANGE, "lockstep.window", NULL);
}

Test(server_config, a_duplicate_key_is_refused) {
  cfg_expect_error("{\"step_hz\":60,\"step_hz\":61}", GK_EINVAL, "step_hz",
                   "duplicate", NULL);
  cfg_expect_error("{\"limits\":{\"rooms\":1,\"rooms\":2}}", GK_EINVAL,
                   "limits.rooms", "duplicate", NULL);
}

Test(server_config, broken_json_is_reported_with_line_and_column) {
  cfg_expect_error("{\n  \"step_hz\": 60,\n  oops\n}", GK_EPARSE, "line 3",
                   NULL);
  cfg_expect_error("[1,2]", GK_EPARSE, "JSON object", NULL);
  cfg_expect_error("{} {}", GK_EPARSE, "after the JSON value", NULL);
  cfg_expect_error("", GK_EPARSE, "invalid JSON", NULL);
}

/* A genre's options go into every replay's JSON header as they are: bytes
 * that are not UTF-8 would make replays that no reader takes. */
Test(server_config, a_file_that_is_not_utf8_is_refused_with_line_and_column) {
  cfg_expect_error("{\n \"genres\": {\"survivors\": {\"options\": "
                   "{\"level\": \"caf\xe9\"}}}}",
                   GK_EPARSE, "not UTF-8 at line 2, column 52", NULL);
  cfg_expect_error("{\"x\": \"\xed\xa0\x80\"}", GK_EPARSE,
                   "not UTF-8 at line 1, column 8", NULL); /* a surrogate */
}

Test(server_config, a_failed_parse_leaves_the_defaults) {
  gk_server_config c;
  char err[256];
  cr_assert_neq(cfg_parse(&c, "{\"step_hz\":90,\"limits\":{\"rooms\":0}}", err,
                          sizeof(err)),
                0);
  cr_assert_eq(c.step_hz, 60);
  gk_server_config_free(&c);
}

Test(server_config, a_missing_file_is_named) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_config_load(&c, "/nonexistent/gk.json", err, sizeof(err));
  cr_assert_eq(rc, GK_ENOTFOUND);
  cr_assert(strstr(err, "/nonexistent/gk.json"), "%s", err);
  gk_server_config_free(&c);
}

Test(server_config, an_unknown_genre_is_named) {
  cfg_expect_error("{\"genres\":{\"chess\":{}}}", GK_ENOTFOUND, "genres.chess",
                   "unknown genre", NULL);
}

Test(server_config, genre_options_are_checked_by_the_genre_with_their_path) {
  cfg_expect_error(
      "{\"genres\":{\"survivors\":{\"options\":{\"max_enemis\":3}}}}",
      GK_ENOTFOUND, "genres.survivors.options.max_enemis", NULL);
  cfg_expect_error(
      "{\"genres\":{\"survivors\":{\"options\":{\"max_enemies\":0}}}}",
      GK_ERANGE, "genres.survivors.options.max_enemies", NULL);
  cfg_expect_error(
      "{\"genres\":{\"survivors\":{\"options\":{\"spawning\":null}}}}",
      GK_EINVAL, "genres.survivors.options.spawning", NULL);
  cfg_expect_error("{\"genres\":{\"survivors\":{\"max_players\":99}}}",
                   GK_ERANGE, "genres.survivors.max_players", NULL);
  cfg_expect_error("{\"genres\":{\"survivors\":{\"colour\":1}}}", GK_ENOTFOUND,
                   "genres.survivors.colour", NULL);
}

Test(server_config, listing_genres_offers_exactly_those) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc =
      cfg_parse(&c,
                "{\"genres\":{\"survivors\":{\"max_players\":3,\"options\":"
                "{\"duration_steps\":600}}}}",
                err, sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
  const gk_server_genre *sv = gk_server_config_genre(&c, "survivors");
  cr_assert(sv && sv->enabled && sv->max_players == 3);
  cr_assert(sv->options != NULL);
  for (uint32_t i = 0; i < c.ngenres; i++)
    if (&c.genres[i] != sv)
      cr_assert(!c.genres[i].enabled, "%s", c.genres[i].sim->name);
  gk_server_config_free(&c);
}

struct seen {
  int64_t duration, enemies;
};

static void seen_cb(void *ctx, const char *key, const gk_value *v) {
  struct seen *s = ctx;
  if (strcmp(key, "duration_steps") == 0) s->duration = v->i;
  if (strcmp(key, "max_enemies") == 0) s->enemies = v->i;
}

Test(server_config, a_room_config_takes_server_options_then_the_clients) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c,
                         "{\"genres\":{\"survivors\":{\"options\":"
                         "{\"duration_steps\":600,\"max_enemies\":50}}}}",
                         err, sizeof(err)),
               0, "%s", err);
  const gk_server_genre *g = gk_server_config_genre(&c, "survivors");
  cr_assert(g);
  void *cfg = calloc(1, g->sim->config_size);
  const char *mine = "{\"max_enemies\":70}";
  cr_assert_eq(
      gk_server_room_config(g, cfg, mine, strlen(mine), err, sizeof(err)), 0,
      "%s", err);
  struct seen seen = {-1, -1};
  g->sim->config_each(cfg, seen_cb, &seen);
  cr_assert_eq(seen.duration, 600);
  cr_assert_eq(seen.enemies, 70);
  if (g->sim->config_free) g->sim->config_free(cfg);

  const char *bad = "{\"max_enemies\":0}";
  cr_assert_eq(
      gk_server_room_config(g, cfg, bad, strlen(bad), err, sizeof(err)),
      GK_ERANGE);
  cr_assert(strstr(err, "options.max_enemies"), "%s", err);
  const char *notobj = "[1]";
  cr_assert_eq(
      gk_server_room_config(g, cfg, notobj, strlen(notobj), err, sizeof(err)),
      GK_EPARSE);
  free(cfg);
  gk_server_config_free(&c);
}

/* --- log ----------------------------------------------------------------- */

static char *capture(void (*fill)(gk_server_log *), size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  cr_assert(f);
  gk_server_log lg;
  gk_log_init(&lg, f, GK_LOG_DEBUG);
  fill(&lg);
  fclose(f);
  return buf;
}

static void fill_plain(gk_server_log *lg) {
  if (gk_log_begin(lg, GK_LOG_INFO, "listening", NULL)) {
    gk_log_str(lg, "host", "127.0.0.1");
    gk_log_u64(lg, "port", 7777);
    gk_log_i64(lg, "neg", -5);
    gk_log_hex(lg, "hash", 0x0123456789abcdefull);
    gk_log_bool(lg, "ok", 1);
    gk_log_err(lg, "code", GK_EPROTO);
    gk_log_end(lg);
  }
  gk_log_msg(lg, GK_LOG_WARN, "desync", "ABCDEFGHIJKLMNOP", "why",
             "quote\" backslash\\ tab\t nl\n bad\xff utf8\xc3\xa9 ctl\x01");
}

Test(server_log, each_record_is_one_json_object_per_line) {
  size_t len = 0;
  char *out = capture(fill_plain, &len);
  char *save = NULL;
  int lines = 0;
  for (char *l = strtok_r(out, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save)) {
    cJSON *j = cJSON_Parse(l);
    cr_assert(j, "not JSON: %s", l);
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(j, "time")));
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(j, "level")));
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(j, "event")));
    cr_assert(cJSON_GetObjectItem(j, "room") != NULL);
    if (lines == 0) {
      cr_assert_eq(cJSON_GetObjectItem(j, "port")->valuedouble, 7777);
      cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "room")));
      cr_assert_str_eq(cJSON_GetObjectItem(j, "hash")->valuestring,
                       "0123456789abcdef");
      cr_assert_str_eq(cJSON_GetObjectItem(j, "code")->valuestring,
                       "GK_EPROTO");
    } else {
      const char *why = cJSON_GetObjectItem(j, "why")->valuestring;
      cr_assert(strstr(why, "quote\" backslash\\ tab\t nl\n bad? utf8\xc3\xa9"),
                "%s", why);
      cr_assert_str_eq(cJSON_GetObjectItem(j, "room")->valuestring,
                       "ABCDEFGHIJKLMNOP");
    }
    cJSON_Delete(j);
    lines++;
  }
  cr_assert_eq(lines, 2);
  free(out);
}

static void fill_huge(gk_server_log *lg) {
  char big[1500];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  if (gk_log_begin(lg, GK_LOG_INFO, "big", NULL)) {
    gk_log_str(lg, "a", big);
    gk_log_str(lg, "b", big); /* does not fit */
    gk_log_u64(lg, "c", 1);
    gk_log_end(lg);
  }
}

Test(server_log, a_record_too_long_is_cut_at_a_whole_field_and_says_so) {
  size_t len = 0;
  char *out = capture(fill_huge, &len);
  cr_assert(len <= GK_LOG_LINE_MAX);
  cr_assert_eq(out[len - 1], '\n');
  cJSON *j = cJSON_Parse(out);
  cr_assert(j, "not JSON: %s", out);
  cr_assert(cJSON_IsString(cJSON_GetObjectItem(j, "a")));
  cr_assert_null(cJSON_GetObjectItem(j, "b"));
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
  cJSON_Delete(j);
  free(out);
}

static void fill_filtered(gk_server_log *lg) {
  lg->level = GK_LOG_WARN;
  cr_assert_eq(gk_log_begin(lg, GK_LOG_INFO, "quiet", NULL), 0);
  gk_log_u64(lg, "x", 1);
  gk_log_end(lg);
}

Test(server_log, records_below_the_level_are_not_written) {
  size_t len = 0;
  char *out = capture(fill_filtered, &len);
  cr_assert_eq(len, 0);
  free(out);
}

/* --- room codes ------------------------------------------------------------
 */

Test(server_codes, a_code_is_16_base32_characters_and_codes_do_not_repeat) {
  enum { N = 2000 };
  static char codes[N][GK_WIRE_CODE_LEN + 1];
  unsigned hist[32] = {0};
  for (int i = 0; i < N; i++) {
    cr_assert_eq(gk_server_room_code(codes[i]), 0);
    cr_assert_eq(strlen(codes[i]), GK_WIRE_CODE_LEN);
    for (int k = 0; k < GK_WIRE_CODE_LEN; k++) {
      const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
      const char *at = strchr(a, codes[i][k]);
      cr_assert(at && *at, "%s", codes[i]);
      hist[at - a]++;
    }
    for (int j = 0; j < i; j++) cr_assert_str_neq(codes[i], codes[j]);
  }
  /* 32000 symbols over 32 letters: every letter is used, none dominates */
  for (int k = 0; k < 32; k++)
    cr_assert(hist[k] > 700 && hist[k] < 1300, "letter %d: %u", k, hist[k]);
}

Test(server_config, the_auth_section_and_the_abuse_limits_are_read_strictly) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.auth_mode, GK_AUTH_OPEN);
  cr_assert_gt(c.conns_per_ip, 0);
  cr_assert_gt(c.connects_per_ip_per_s, 0);
  cr_assert_gt(c.creates_per_min, 0);
  cr_assert_gt(c.handshake_ms, 0);
  cr_assert_eq(c.misses_per_ip_per_min, 30);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"auth\":{\"mode\":\"token\",\"key_file\":\"k.key\","
                         "\"replay_cache\":100},\"limits\":{\"conns_per_ip\":3,"
                         "\"connects_per_ip_per_s\":0,\"creates_per_min\":2,"
                         "\"handshake_ms\":1500,\"log_interval_ms\":500}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.auth_mode, GK_AUTH_TOKEN);
  cr_assert_str_eq(c.auth_key_file, "k.key");
  cr_assert_eq(c.auth_replay_cache, 100);
  cr_assert_eq(c.conns_per_ip, 3);
  cr_assert_eq(c.connects_per_ip_per_s, 0);
  cr_assert_eq(c.creates_per_min, 2);
  cr_assert_eq(c.handshake_ms, 1500);
  cr_assert_eq(c.limit_log_ms, 500);
  gk_server_config_free(&c);
  cfg_expect_error("{\"auth\":{\"mode\":\"token\"}}", GK_EINVAL, "auth",
                   "needs key_file", NULL);
  cfg_expect_error("{\"auth\":{\"mode\":\"closed\"}}", GK_ERANGE, "auth.mode",
                   "\"open\" or \"token\"", NULL);
  cfg_expect_error("{\"auth\":{\"mode\":1}}", GK_EINVAL, "auth.mode", NULL);
  cfg_expect_error("{\"auth\":{\"key\":\"x\"}}", GK_ENOTFOUND, "auth.key",
                   "unknown key", NULL);
  cfg_expect_error("{\"auth\":[]}", GK_EINVAL, "auth", "must be an object",
                   NULL);
  cfg_expect_error("{\"auth\":{\"mode\":\"open\",\"mode\":\"token\"}}",
                   GK_EINVAL, "auth.mode", "duplicate", NULL);
  cfg_expect_error("{\"auth\":{\"replay_cache\":1}}", GK_ERANGE,
                   "auth.replay_cache", NULL);
  cfg_expect_error("{\"limits\":{\"log_interval_ms\":0}}", GK_ERANGE,
                   "limits.log_interval_ms", NULL);
}

Test(server_config, the_input_delay_is_auto_by_default_and_a_number_fixes_it) {
  gk_server_config c;
  char err[256];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.input_delay_auto, 1);
  cr_assert_eq(c.input_delay_min, 2);
  cr_assert_eq(c.input_delay_max, 20);
  cr_assert_eq(c.ping_ms, 100);
  gk_server_config_free(&c);
  cr_assert_eq(
      cfg_parse(&c,
                "{\"lockstep\":{\"input_delay\":4,\"input_delay_min\":1,"
                "\"delay_hold_ms\":7,\"delay_every_ms\":8,"
                "\"delay_jitter_x\":3},\"timing\":{\"ping_ms\":0}}",
                err, sizeof(err)),
      0, "%s", err);
  cr_assert_eq(c.input_delay_auto, 0);
  cr_assert_eq(c.input_delay, 4);
  cr_assert_eq(c.input_delay_min, 1);
  cr_assert_eq(c.delay_hold_ms, 7);
  cr_assert_eq(c.delay_every_ms, 8);
  cr_assert_eq(c.delay_jitter_x, 3);
  cr_assert_eq(c.ping_ms, 0);
  gk_server_config_free(&c);
  cfg_expect_error("{\"lockstep\":{\"input_delay\":\"fast\"}}", GK_ERANGE,
                   "lockstep.input_delay", "\"auto\"", NULL);
  cfg_expect_error("{\"lockstep\":{\"input_delay\":true}}", GK_EINVAL,
                   "lockstep.input_delay", NULL);
  cfg_expect_error(
      "{\"lockstep\":{\"input_delay_min\":9,\"input_delay_max\":4}}", GK_ERANGE,
      "lockstep.input_delay_min", NULL);
}

Test(server_config, prediction_follows_the_genre_or_a_mode_or_an_object) {
  gk_server_config c;
  char err[256];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.prediction, GK_PREDICT_GENRE);
  cr_assert_eq(c.prediction_window, 8);
  cr_assert_eq(c.prediction_rtt_ms, 100);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c, "{\"lockstep\":{\"prediction\":\"off\"}}", err,
                         sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.prediction, GK_PREDICT_OFF);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"lockstep\":{\"prediction\":{\"mode\":\"on\","
                         "\"window\":12,\"rtt_ms\":60}}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.prediction, GK_PREDICT_ON);
  cr_assert_eq(c.prediction_window, 12);
  cr_assert_eq(c.prediction_rtt_ms, 60);
  gk_server_config_free(&c);
  cfg_expect_error("{\"lockstep\":{\"prediction\":\"maybe\"}}", GK_ERANGE,
                   "lockstep.prediction", NULL);
  cfg_expect_error("{\"lockstep\":{\"prediction\":{\"window\":0}}}", GK_ERANGE,
                   "lockstep.prediction.window", "1..60", NULL);
  cfg_expect_error("{\"lockstep\":{\"prediction\":{\"size\":3}}}", GK_ENOTFOUND,
                   "lockstep.prediction.size", NULL);
  /* the window must hold max(lead, prediction.window) ahead */
  cfg_expect_error("{\"lockstep\":{\"window\":64,\"prediction\":{\"window\":"
                   "20}}}",
                   GK_ERANGE, "lockstep.window", "prediction.window", NULL);
}

Test(server_config, desync_takes_an_object_with_a_policy_a_folder_and_limits) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c,
                         "{\"desync\":{\"policy\":\"end\",\"dir\":\"/tmp/d\","
                         "\"timeout_ms\":250,\"max_state_bytes\":4096,"
                         "\"fields\":3,\"history_every\":16}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.desync, GK_DESYNC_END);
  cr_assert_str_eq(c.desync_dir, "/tmp/d");
  cr_assert_eq(c.desync_timeout_ms, 250);
  cr_assert_eq(c.desync_max_state_bytes, 4096);
  cr_assert_eq(c.desync_fields, 3);
  cr_assert_eq(c.desync_history_every, 16);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c, "{\"desync\":\"report\"}", err, sizeof(err)), 0);
  cr_assert_eq(c.desync, GK_DESYNC_REPORT);
  cr_assert_str_eq(c.desync_dir, "", "the default: <replays.dir>/desyncs");
  gk_server_config_free(&c);
  cfg_expect_error("{\"desync\":{\"timeout_ms\":0}}", GK_ERANGE,
                   "desync.timeout_ms", NULL);
  cfg_expect_error("{\"desync\":{\"polcy\":\"end\"}}", GK_ENOTFOUND,
                   "desync.polcy", "unknown key", NULL);
  cfg_expect_error("{\"desync\":{\"fields\":2,\"fields\":3}}", GK_EINVAL,
                   "desync.fields", "duplicate", NULL);
  cfg_expect_error("{\"desync\":{\"dir\":3}}", GK_EINVAL, "desync.dir", NULL);
  cfg_expect_error("{\"desync\":{\"policy\":\"panic\"}}", GK_ERANGE,
                   "desync.policy", NULL);
}

Test(server_config, websocket_is_off_by_default_and_reads_every_key) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(c.ws.enabled, 0);
  cr_assert_str_eq(c.ws.path, "/play");
  cr_assert_eq(c.ws.norigins, 0u);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"websocket\":{\"enabled\":true,\"host\":\"::1\","
                         "\"port\":0,\"path\":\"/ws\",\"origins\":["
                         "\"https://a.example\",\"http://localhost:8080\"],"
                         "\"max_connections\":12,\"ping_ms\":250}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.ws.enabled, 1);
  cr_assert_str_eq(c.ws.host, "::1");
  cr_assert_eq(c.ws.port, 0);
  cr_assert_str_eq(c.ws.path, "/ws");
  cr_assert_eq(c.ws.norigins, 2u);
  cr_assert_str_eq(c.ws.origins[1], "http://localhost:8080");
  cr_assert_eq(c.ws.max_connections, 12u);
  cr_assert_eq(c.ws.ping_ms, 250u);
  gk_server_config_free(&c);
}

Test(server_config, websocket_static_dir_defaults_to_the_installed_pages) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_str_eq(c.ws.static_dir, GK_WEB_DIR);
  cr_assert_eq(c.ws.static_dir_set, 0);
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"websocket\":{\"static_dir\":\"my pages/web\"}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_str_eq(c.ws.static_dir, "my pages/web");
  cr_assert_eq(c.ws.static_dir_set, 1);
  gk_server_config_free(&c);
  cr_assert_eq(
      cfg_parse(&c, "{\"websocket\":{\"static_dir\":\"\"}}", err, sizeof(err)),
      0, "%s", err);
  cr_assert_str_eq(c.ws.static_dir, "");
  gk_server_config_free(&c);
  char big[GK_SERVER_PATH_MAX + 64];
  int n = snprintf(big, sizeof(big), "{\"websocket\":{\"static_dir\":\"");
  memset(big + n, 'a', GK_SERVER_PATH_MAX);
  snprintf(big + n + GK_SERVER_PATH_MAX,
           sizeof(big) - (size_t)n - GK_SERVER_PATH_MAX, "\"}}");
  cfg_expect_error(big, GK_ERANGE, "websocket.static_dir", "at most", NULL);
}

Test(server_config, websocket_web_url_is_an_http_address_ending_in_a_slash) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c, "{}", err, sizeof(err)), 0, "%s", err);
  cr_assert_str_eq(c.ws.web_url, "");
  gk_server_config_free(&c);
  cr_assert_eq(cfg_parse(&c,
                         "{\"websocket\":{\"web_url\":"
                         "\"https://play.example.org/games/\"}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_str_eq(c.ws.web_url, "https://play.example.org/games/");
  gk_server_config_free(&c);
  cfg_expect_error("{\"websocket\":{\"web_url\":\"play.example.org/\"}}",
                   GK_ERANGE, "websocket.web_url", "http://HOST", NULL);
  cfg_expect_error("{\"websocket\":{\"web_url\":\"http://example.org\"}}",
                   GK_ERANGE, "websocket.web_url", "ending in '/'", NULL);
  cfg_expect_error("{\"websocket\":{\"web_url\":\"https:///\"}}", GK_ERANGE,
                   "websocket.web_url", NULL);
}

Test(server_config, websocket_bad_values_name_the_key) {
  cfg_expect_error("{\"websocket\":true}", GK_EINVAL, "websocket", "object",
                   NULL);
  cfg_expect_error("{\"websocket\":{\"enabled\":1}}", GK_EINVAL,
                   "websocket.enabled", "true or false", NULL);
  cfg_expect_error("{\"websocket\":{\"port\":65536}}", GK_ERANGE,
                   "websocket.port", "0..65535", NULL);
  cfg_expect_error("{\"websocket\":{\"port\":\"80\"}}", GK_EINVAL,
                   "websocket.port", NULL);
  cfg_expect_error("{\"websocket\":{\"host\":\"example.com\"}}", GK_ERANGE,
                   "websocket.host", "numeric", NULL);
  cfg_expect_error("{\"websocket\":{\"host\":\"\"}}", GK_ERANGE,
                   "websocket.host", NULL);
  cfg_expect_error("{\"websocket\":{\"path\":\"play\"}}", GK_ERANGE,
                   "websocket.path", "'/'", NULL);
  cfg_expect_error("{\"websocket\":{\"path\":\"/a b\"}}", GK_ERANGE,
                   "websocket.path", "space", NULL);
  cfg_expect_error("{\"websocket\":{\"origins\":\"https://a\"}}", GK_EINVAL,
                   "websocket.origins", "array", NULL);
  cfg_expect_error("{\"websocket\":{\"origins\":[\"https://a\",3]}}", GK_EINVAL,
                   "websocket.origins[1]", "string", NULL);
  cfg_expect_error("{\"websocket\":{\"origins\":[\"\"]}}", GK_ERANGE,
                   "websocket.origins[0]", NULL);
  cfg_expect_error("{\"websocket\":{\"origins\":[\"a\",\"b\",\"c\",\"d\",\"e\","
                   "\"f\",\"g\",\"h\",\"i\"]}}",
                   GK_ERANGE, "websocket.origins", "at most 8", NULL);
  cfg_expect_error("{\"websocket\":{\"max_connections\":0}}", GK_ERANGE,
                   "websocket.max_connections", NULL);
  cfg_expect_error("{\"websocket\":{\"ping_ms\":-1}}", GK_ERANGE,
                   "websocket.ping_ms", NULL);
  cfg_expect_error("{\"websocket\":{\"ping_ms\":1.5}}", GK_ERANGE,
                   "websocket.ping_ms", NULL);
  cfg_expect_error("{\"websocket\":{\"static_dir\":1}}", GK_EINVAL,
                   "websocket.static_dir", "string", NULL);
  cfg_expect_error("{\"websocket\":{\"static_dir\":\"a\\nb\"}}", GK_ERANGE,
                   "websocket.static_dir", "control", NULL);
  cfg_expect_error("{\"websocket\":{\"tls\":true}}", GK_ENOTFOUND,
                   "websocket.tls", "unknown key", NULL);
  cfg_expect_error("{\"websocket\":{\"port\":1,\"port\":2}}", GK_EINVAL,
                   "websocket.port", "duplicate", NULL);
}

/* A spectator is served from the room's last 1024 step hashes: delay_steps
 * + behind_steps over 1000 is refused at start, 1000 is not. */
Test(server_config, spectator_delay_and_behind_over_what_a_room_keeps_refused) {
  cfg_expect_error(
      "{\"spectator\": {\"delay_steps\": 400, \"behind_steps\": 601}}",
      GK_ERANGE, "spectator.behind_steps", "must not exceed 1000", "got 1001",
      NULL);
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c,
                         "{\"spectator\": {\"delay_steps\": 400, "
                         "\"behind_steps\": 600}}",
                         err, sizeof(err)),
               0, "%s", err);
  gk_server_config_free(&c);
}

/* websocket.trusted_proxies: addresses and CIDR blocks, parsed once; an
 * address matches the blocks it lies in (an IPv4-mapped IPv6 one as its
 * IPv4 address), and no other. */
Test(server_config, trusted_proxies_are_addresses_or_cidr_blocks) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  cr_assert_eq(cfg_parse(&c,
                         "{\"websocket\":{\"trusted_proxies\":[\"10.0.0.0/8\","
                         "\"192.168.1.7\",\"fd00::/8\",\"0.0.0.0/0\"]}}",
                         err, sizeof(err)),
               0, "%s", err);
  cr_assert_eq(c.ws.ntrusted_proxies, 4u);
  c.ws.ntrusted_proxies = 3; /* the catch-all last one aside */
  struct sockaddr_in v4 = {.sin_family = AF_INET};
  struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
  static const struct {
    const char *addr;
    int trusted;
  } cases[] = {{"10.200.3.4", 1},      {"11.0.0.1", 0},
               {"192.168.1.7", 1},     {"192.168.1.8", 0},
               {"fd12::1", 1},         {"fe80::1", 0},
               {"::ffff:10.1.2.3", 1}, {"::ffff:192.168.1.6", 0},
               {"9.255.255.255", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct sockaddr *sa = (const struct sockaddr *)&v4;
    if (inet_pton(AF_INET, cases[i].addr, &v4.sin_addr) != 1) {
      cr_assert_eq(inet_pton(AF_INET6, cases[i].addr, &v6.sin6_addr), 1);
      sa = (const struct sockaddr *)&v6;
    }
    cr_assert_eq(gk_server_config_proxy(&c, sa), cases[i].trusted, "%s",
                 cases[i].addr);
  }
  c.ws.ntrusted_proxies = 4;
  inet_pton(AF_INET, "11.0.0.1", &v4.sin_addr);
  cr_assert_eq(gk_server_config_proxy(&c, (const struct sockaddr *)&v4), 1);
  cr_assert_eq(gk_server_config_proxy(&c, NULL), 0);
  gk_server_config_free(&c);
  static const char *const bad[] = {"example.com", "10.0.0.0/33", "10.0.0.1/8",
                                    "10.0.0.0/",   "10.0.0.0/x",  "::1/129",
                                    "/8"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char json[160];
    snprintf(json, sizeof json,
             "{\"websocket\":{\"trusted_proxies\":[\"%s\"]}}", bad[i]);
    cfg_expect_error(json, GK_ERANGE, "websocket.trusted_proxies", "CIDR",
                     bad[i], NULL);
  }
}
