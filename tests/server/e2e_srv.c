/* e2e_srv.c: the real gk-server and gk-bot for end-to-end tests (see
 * e2e_srv.h). */
#include "e2e_srv.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_HZ "120"

const char *config_json(char *buf, size_t cap, const e2e_dir *d,
                        const char *extra) {
  snprintf(buf, cap,
           "{\"listen\":{\"host\":\"127.0.0.1\",\"port\":0},"
           "\"log_level\":\"info\",\"step_hz\":" STEP_HZ ","
           "\"replays\":{\"dir\":\"%s\"},\"shutdown_grace_ms\":5000%s%s}",
           d->replays, extra ? "," : "", extra ? extra : "");
  return buf;
}

void start_server(e2e_proc *srv, const e2e_dir *d, const char *extra,
                  uint16_t *port) {
  char json[2048], path[512];
  e2e_write(d, "server.json", config_json(json, sizeof(json), d, extra), path,
            sizeof(path));
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(srv, d, "server", argv);
  *port = e2e_server_port(srv, 10000);
  cr_assert_neq(*port, 0, "the server did not log its port");
}

void start_bot(e2e_proc *bot, const e2e_dir *d, const char *tag, uint16_t port,
               const char *rooms, const char *players, const char *steps) {
  start_bot_opt(bot, d, tag, port, rooms, players, steps, NULL, NULL);
}

void start_bot_opt(e2e_proc *bot, const e2e_dir *d, const char *tag,
                   uint16_t port, const char *rooms, const char *players,
                   const char *steps, const char *opt, const char *val) {
  char server[64];
  snprintf(server, sizeof(server), "127.0.0.1:%u", (unsigned)port);
  char *argv[] = {(char *)GK_BOT_BIN,
                  (char *)"--server",
                  server,
                  (char *)"--genre",
                  (char *)"survivors",
                  (char *)"--rooms",
                  (char *)rooms,
                  (char *)"--players",
                  (char *)players,
                  (char *)"--steps",
                  (char *)steps,
                  (char *)"--timeout",
                  (char *)"60",
                  (char *)opt,
                  (char *)val,
                  NULL};
  e2e_spawn(bot, d, tag, argv);
}

/* Checks a finished gk-bot: exit 0, every room completed, no desync, and
 * records its room codes and final hashes. */
int check_bot(e2e_proc *bot, int rooms, char (*codes)[17], uint64_t *hashes) {
  cr_assert(e2e_wait(bot, 60000), "gk-bot did not finish");
  cJSON *sum = e2e_read_json(bot->out);
  cr_assert_not_null(sum, "gk-bot printed no JSON summary (%s)", bot->out);
  char *text = cJSON_PrintUnformatted(sum);
  cr_assert_eq(bot->status, 0, "gk-bot exit %d: %s", bot->status, text);
  cr_assert_eq(cJSON_GetObjectItem(sum, "rooms_completed")->valuedouble, rooms,
               "%s", text);
  cr_assert_eq(cJSON_GetObjectItem(sum, "desyncs")->valuedouble, 0, "%s", text);
  const cJSON *res = cJSON_GetObjectItem(sum, "room_results");
  int n = 0;
  for (const cJSON *r = res ? res->child : NULL; r; r = r->next, n++) {
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "agree")), "%s", text);
    snprintf(codes[n], 17, "%s", cJSON_GetObjectItem(r, "code")->valuestring);
    hashes[n] =
        strtoull(cJSON_GetObjectItem(r, "final_hash")->valuestring, NULL, 16);
  }
  cr_assert_eq(n, rooms);
  cJSON_free(text);
  cJSON_Delete(sum);
  return n;
}

void stop_server(e2e_proc *srv) {
  cr_assert_gt(srv->pid, 0);
  kill(srv->pid, SIGTERM);
  int done = e2e_wait(srv, 15000);
  if (!done) e2e_kill(srv);
  cr_assert(done, "gk-server did not exit after SIGTERM");
  cr_assert_eq(srv->status, 0, "gk-server exit status %d", srv->status);
  cr_assert_eq(e2e_count_events(srv, "stopped"), 1);
}

double stat_of(const e2e_proc *srv, const char *event, const char *key) {
  cJSON *j = e2e_last_event(srv, event);
  cr_assert_not_null(j, "no %s event", event);
  const cJSON *v = cJSON_GetObjectItem(j, key);
  cr_assert(cJSON_IsNumber(v), "%s.%s missing", event, key);
  double d = v->valuedouble;
  cJSON_Delete(j);
  return d;
}

int run_server_cfg(const e2e_dir *d, const char *json, char *err, size_t cap) {
  char path[512];
  e2e_write(d, "bad.json", json, path, sizeof(path));
  e2e_proc p;
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(&p, d, "bad", argv);
  cr_assert(e2e_wait(&p, 10000));
  FILE *f = fopen(p.err, "r");
  size_t n = f ? fread(err, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  err[n] = '\0';
  return p.status;
}
