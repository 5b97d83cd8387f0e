/* cmd_synctest.c: gk-replay synctest (see the help text below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_genres.h"
#include "gk_replay_cli_internal.h"
#include "gk_synctest.h"

static const char synctest_help[] =
    "usage: gk-replay synctest --genre G [--players N] [--seed S]\n"
    "                          [--steps N] [--every K] [--config FILE]\n"
    "                          [--json]\n"
    "\n"
    "Runs the genre's bots in a run A and, every K steps, writes A's state,\n"
    "reads it back into a fresh run B and runs both on the same inputs,\n"
    "comparing hashes after every step. State the genre's writer forgets\n"
    "but its step uses makes the runs part: the first step where they do\n"
    "and the first field that differs there are printed.\n"
    "\n"
    "  --genre G      the genre (required)\n"
    "  --players N    players (default: the genre's minimum)\n"
    "  --seed S       seed of the run and its bots (default 1)\n"
    "  --steps N      steps to run (default 3600)\n"
    "  --every K      read back every K steps (default 60)\n"
    "  --config FILE  genre options (a JSON object); default: defaults\n"
    "  --json         print one JSON object\n"
    "\n"
    "Exit status: 0 the runs agree; 1 they part; 2 a usage error or a\n"
    "genre that cannot run.\n";

static int parse_num(const char *s, uint64_t *v, uint64_t min, uint64_t max) {
  return s == NULL || (gk_parse_u64(s, v) == 0 && *v >= min && *v <= max);
}

static void print_json(FILE *out, const char *genre, const gk_synctest_opts *o,
                       const gk_synctest_result *res, const char *line) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "genre", genre);
  cJSON_AddNumberToObject(j, "players", o->players);
  cJSON_AddNumberToObject(j, "steps", (double)res->steps_run);
  cJSON_AddNumberToObject(j, "every", (double)o->every);
  cJSON_AddNumberToObject(j, "checkpoints", (double)res->checkpoints);
  cJSON_AddBoolToObject(j, "ok", res->ok);
  if (!res->ok) {
    cJSON_AddBoolToObject(j, "at_readback", res->at_readback);
    if (res->fail_step != UINT64_MAX)
      cJSON_AddNumberToObject(j, "fail_step", (double)res->fail_step);
    cJSON_AddNumberToObject(j, "checkpoint", (double)res->checkpoint);
    gkr_add_hash(j, "hash_a", res->hash_a);
    gkr_add_hash(j, "hash_b", res->hash_b);
    cJSON_AddStringToObject(j, "path", res->path);
    cJSON_AddNumberToObject(j, "fields_differ", (double)res->fields_differ);
  }
  cJSON_AddStringToObject(j, "message", line);
  gkr_print_json(out, j);
}

/* The genre's config: defaults, then --config. */
static void *make_config(const gk_sim *sim, const char *path, FILE *err) {
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  char msg[GK_ERRMSG_MAX] = "";
  if (cfg == NULL) {
    fprintf(err, "gk-replay synctest: out of memory\n");
    return NULL;
  }
  sim->config_default(cfg);
  size_t len = 0;
  char *text =
      path ? gkr_read_text(path, GKR_TEXT_FILE_MAX, &len, msg, sizeof msg) : 0;
  int bad = path != NULL && text == NULL;
  if (!bad && text != NULL &&
      gk_config_apply_text(sim, cfg, text, len, path, msg, sizeof msg) != 0)
    bad = 1;
  free(text);
  if (bad) {
    fprintf(err, "gk-replay synctest: %s\n", msg);
    if (sim->config_free != NULL) sim->config_free(cfg);
    free(cfg);
    return NULL;
  }
  return cfg;
}

int gkr_cmd_synctest(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const char *genre = NULL, *config = NULL, *players_s = NULL, *seed_s = NULL,
             *steps_s = NULL, *every_s = NULL;
  const gkr_opt opts[] = {
      {"--json", 0, NULL, &json},     {"--genre", 1, &genre, NULL},
      {"--config", 1, &config, NULL}, {"--players", 1, &players_s, NULL},
      {"--seed", 1, &seed_s, NULL},   {"--steps", 1, &steps_s, NULL},
      {"--every", 1, &every_s, NULL}, {"--help", 0, NULL, &help},
      {"-h", 0, NULL, &help},         {NULL, 0, NULL, NULL}};
  int n = 0;
  int rc = gkr_parse_opts("synctest", argc, argv, 2, opts, NULL, &n, 0, err);
  if (rc != 0) return rc;
  if (help) {
    fputs(synctest_help, out);
    return 0;
  }
  const gk_sim *sim = genre != NULL ? gk_genre_find(genre) : NULL;
  gk_synctest_opts o = {0, 1, 3600, 60};
  uint64_t players = sim != NULL ? sim->players_min : 1;
  if (sim == NULL || !parse_num(players_s, &players, 1, GK_PLAYERS_MAX) ||
      !parse_num(seed_s, &o.seed, 0, UINT64_MAX) ||
      !parse_num(steps_s, &o.steps, 1, UINT32_MAX) ||
      !parse_num(every_s, &o.every, 1, UINT32_MAX)) {
    fprintf(err, "gk-replay synctest: %s (see gk-replay synctest --help)\n",
            genre == NULL ? "--genre G is required"
            : sim == NULL ? "unknown genre"
                          : "bad --players, --seed, --steps or --every");
    return GK_CLI_INVALID;
  }
  o.players = (uint32_t)players;
  void *cfg = make_config(sim, config, err);
  if (cfg == NULL) return GK_CLI_INVALID;
  gk_synctest_result res;
  char msg[GK_ERRMSG_MAX] = "";
  rc = gk_synctest_run(sim, cfg, &o, &res, msg, sizeof msg);
  if (rc != 0) {
    fprintf(err, "gk-replay synctest: %s\n", msg);
    rc = GK_CLI_INVALID;
  } else {
    char line[512];
    gk_synctest_describe(&res, line, sizeof line);
    if (json)
      print_json(out, genre, &o, &res, line);
    else
      fprintf(out, "%s: %s\n", genre, line);
    rc = res.ok ? GK_CLI_OK : GK_CLI_MISMATCH;
  }
  if (sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
  return rc;
}
