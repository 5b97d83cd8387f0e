/* test_desync.c: a desync caused on purpose against the real gk-server.
 *
 * gk-bot --perturb 1:900:players[0].health makes slot 1's engine change
 * one field of its state after step 900 (through gk_state_patch_add and
 * gk_loop_replace, between two frames); the server's hash comparison
 * names the first step the change shows in (901) and slot 1, while a
 * room of another gk-bot on the same server plays on undisturbed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "e2e.h"

Test(server_desync, a_perturbed_peer_is_reported_at_the_next_step_only) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bad, good;
  uint16_t port = 0;
  e2e_start_server(&srv, &d, NULL, &port);
  const char *perturb[] = {"--perturb", "1:900:players[0].health", NULL};
  e2e_start_bot_x(&bad, &d, "bad", port, "1", "3", "1000", perturb);
  e2e_start_bot(&good, &d, "good", port, "1", "3", "1000");
  char codes[1][17];
  uint64_t hashes[1];
  cr_assert_eq(e2e_check_bot(&good, 1, codes, hashes), 1);
  cr_assert(e2e_wait(&bad, 60000), "the perturbed gk-bot did not finish");
  cr_assert_eq(bad.status, 1, "a desync is exit 1");
  cJSON *sum = e2e_read_json(bad.out);
  cr_assert_not_null(sum);
  cr_assert_eq(cJSON_GetObjectItem(sum, "perturbed_rooms")->valuedouble, 1);
  cr_assert_eq(cJSON_GetObjectItem(sum, "rooms_completed")->valuedouble, 1);
  cJSON_Delete(sum);
  cr_assert(e2e_wait_events(&srv, "desync", 1, 5000));
  cr_assert_eq(e2e_count_events(&srv, "desync"), 1, "one report per slot");
  cJSON *ev = e2e_last_event(&srv, "desync");
  cr_assert_eq(cJSON_GetObjectItem(ev, "step")->valuedouble, 901);
  cr_assert_eq(cJSON_GetObjectItem(ev, "player")->valuedouble, 1);
  cr_assert_str_neq(cJSON_GetObjectItem(ev, "room")->valuestring, codes[0],
                    "the clean room is not the one reported");
  cJSON_Delete(ev);
  e2e_stop_server(&srv);
  e2e_dir_remove(&d);
}

Test(server_desync, a_perturb_option_out_of_range_is_a_usage_error) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc bot;
  const char *bad[] = {"--perturb", "3:10:players[0].health", NULL};
  e2e_start_bot_x(&bot, &d, "bot", 9, "1", "3", "10", bad);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  const char *worse[] = {"--perturb", "1:x:players[0].health", NULL};
  e2e_start_bot_x(&bot, &d, "bot2", 9, "1", "3", "10", worse);
  cr_assert(e2e_wait(&bot, 10000));
  cr_assert_eq(bot.status, 2);
  e2e_dir_remove(&d);
}
