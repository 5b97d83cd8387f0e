/* cmd_record.c: gk-replay record (see the help text below).
 *
 * Two sources: a genre's own recording source (gk_sim.tool->record_script,
 * e.g. a level and its solution), with the options that genre names; or
 * else every player's built-in bot (gk_bot_input). The help text and the
 * option table are built from the genre registry, so no genre is named
 * here.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_genres.h"
#include "gk_replay_cli_internal.h"

#define RECORD_STEPS_MAX 100000000ull
#define GENRE_OPTS_MAX 32 /* genre-specific options in one build, at most */

/* Whether a genre has its own recording source. */
static int has_source(const gk_sim *sim) {
  return sim->tool != NULL && sim->tool->record_script != NULL &&
         sim->tool->record_opts[0] != NULL;
}

static const char record_help_tail[] =
    "bots, one per player, seeded from S with SplitMix64.\n"
    "\n"
    "  --config FILE.json   genre config keys (a JSON object); default: the\n"
    "                       genre's defaults\n"
    "\n"
    "The replay is written to OUT.gkr.tmp and renamed to OUT.gkr when done.\n"
    "Exit status: 0 written; 2 bad input or a usage error.\n";

/* The help: each genre's own source first, then the bots. */
static void record_help(FILE *out) {
  const char *lead = "usage: ";
  const char *example = NULL;
  for (size_t i = 0; gk_genres[i] != NULL; i++) {
    const gk_sim *sim = gk_genres[i];
    if (has_source(sim)) {
      fprintf(out, "%sgk-replay record %s", lead, sim->tool->record_usage);
      lead = "       ";
    } else if (example == NULL && sim->bot_size > 0) {
      example = sim->name;
    }
  }
  fprintf(out,
          "%sgk-replay record --genre NAME --players P --seed S --steps N\n"
          "                        --out OUT.gkr [--config FILE.json]\n"
          "\n",
          lead);
  for (size_t i = 0; gk_genres[i] != NULL; i++) {
    if (has_source(gk_genres[i])) {
      fputs(gk_genres[i]->tool->record_help, out);
      fputc('\n', out);
    }
  }
  fputs(lead[0] == 'u' ? "Genres" : "Other genres", out);
  if (example != NULL) fprintf(out, " (e.g. %s)", example);
  fputs(": records N steps of the genre's built-in\n", out);
  fputs(record_help_tail, out);
}

/* The genre-specific options of every genre in this build, each once, and
 * the values given for them. */
typedef struct genre_opts {
  const char *name[GENRE_OPTS_MAX];
  const char *value[GENRE_OPTS_MAX];
  size_t n;
} genre_opts;

static void genre_opts_collect(genre_opts *g) {
  memset(g, 0, sizeof *g);
  for (size_t i = 0; gk_genres[i] != NULL; i++) {
    if (!has_source(gk_genres[i])) continue;
    const char *const *o = gk_genres[i]->tool->record_opts;
    for (size_t k = 0; k < GK_SIM_TOOL_OPTS_MAX && o[k] != NULL; k++) {
      size_t j = 0;
      while (j < g->n && strcmp(g->name[j], o[k]) != 0) j++;
      if (j == g->n && g->n < GENRE_OPTS_MAX) g->name[g->n++] = o[k];
    }
  }
}

static const char *genre_opt(const genre_opts *g, const char *name) {
  for (size_t j = 0; j < g->n; j++)
    if (strcmp(g->name[j], name) == 0) return g->value[j];
  return NULL;
}

static int takes_opt(const gk_sim *sim, const char *name) {
  if (!has_source(sim)) return 0;
  const char *const *o = sim->tool->record_opts;
  for (size_t k = 0; k < GK_SIM_TOOL_OPTS_MAX && o[k] != NULL; k++)
    if (strcmp(o[k], name) == 0) return 1;
  return 0;
}

/* "--a", "--a and --b", "--a, --b and --c" */
static void print_opt_list(FILE *f, const char *const *o) {
  size_t n = 0;
  while (n < GK_SIM_TOOL_OPTS_MAX && o[n] != NULL) n++;
  for (size_t k = 0; k < n; k++)
    fprintf(f, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ", o[k]);
}

/* A genre-specific option given for a genre that does not take it:
 * prints which genre takes it and returns 1. */
static int foreign_opt(const gk_sim *sim, const genre_opts *g, FILE *err) {
  for (size_t j = 0; j < g->n; j++) {
    if (g->value[j] == NULL || takes_opt(sim, g->name[j])) continue;
    for (size_t i = 0; gk_genres[i] != NULL; i++) {
      if (takes_opt(gk_genres[i], g->name[j])) {
        fputs("gk-replay record: ", err);
        print_opt_list(err, gk_genres[i]->tool->record_opts);
        fprintf(err, " are for %s\n", gk_genres[i]->name);
        return 1;
      }
    }
  }
  return 0;
}

/* A step input that keeps a copy of the last merged input it produced. */
typedef struct tap_input {
  gk_input base; /* must be first */
  gk_input *inner;
  gk_step_input last;
} tap_input;

static int tap_read(gk_input *base, uint64_t step, gk_step_input *out) {
  tap_input *t = (tap_input *)base;
  int rc = t->inner->read(t->inner, step, out);
  if (rc == 0) t->last = *out;
  return rc;
}

/* Steps `steps` steps from `src` on a fresh run and writes the replay. */
static int record_run(const gk_sim *sim, const void *cfg, uint64_t seed,
                      uint32_t players, gk_input *src, uint64_t steps,
                      const char *outpath, const char *origin, FILE *out,
                      FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  gk_loop loop;
  if (gk_loop_init(&loop, NULL) != 0) {
    fprintf(err, "gk-replay record: out of memory\n");
    return GK_CLI_INVALID;
  }
  if (gk_loop_start(&loop, sim, cfg, seed, players, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: cannot start %s: %s\n", sim->name, msg);
    gk_loop_close(&loop);
    return GK_CLI_INVALID;
  }
  gk_replay_meta meta = {sim, cfg, seed, players, origin, NULL};
  gk_replay_writer w;
  if (gk_replay_writer_open(&w, outpath, &meta, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: %s\n", msg);
    gk_loop_close(&loop);
    return GK_CLI_INVALID;
  }
  tap_input tap;
  memset(&tap, 0, sizeof tap);
  tap.base.read = tap_read;
  tap.inner = src;
  int rc = 0;
  for (uint64_t s = 0; s < steps && rc == 0; s++) {
    int ran = gk_loop_frame(&loop, &tap.base, gk_budget_steps(1), 0);
    if (ran != 1) {
      fprintf(err,
              "gk-replay record: the run stopped at step %" PRIu64 ": %s\n", s,
              gk_strerror(ran < 0 ? ran : loop.input_err));
      rc = GK_CLI_INVALID;
    } else if (gk_replay_writer_append(&w, &tap.last, loop.last_hash) != 0) {
      fprintf(err, "gk-replay record: writing step %" PRIu64 ": %s\n", s,
              gk_strerror(w.err ? w.err : GK_EINVAL));
      rc = GK_CLI_INVALID;
    }
  }
  if (rc == 0 && gk_replay_writer_finish(&w, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: %s\n", msg);
    rc = GK_CLI_INVALID;
  }
  if (rc == 0) {
    char h[24];
    gkr_hex_hash(h, sizeof h, loop.last_hash);
    fprintf(out, "%s: %" PRIu64 " steps of %s, final hash %s\n", outpath, steps,
            sim->name, h);
  }
  gk_replay_writer_abort(&w);
  gk_loop_close(&loop);
  return rc;
}

/* Applies a JSON config file (or the defaults) into cfg. */
static int load_config(const gk_sim *sim, void *cfg, const char *path,
                       FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  if (path == NULL)
    return gk_config_from_json(sim, cfg, NULL, msg, sizeof msg) == 0
               ? 0
               : GK_CLI_INVALID;
  size_t len = 0;
  char *text = gkr_read_text(path, GKR_TEXT_FILE_MAX, &len, msg, sizeof msg);
  if (text == NULL) {
    fprintf(err, "gk-replay record: %s\n", msg);
    sim->config_default(cfg);
    return GK_CLI_INVALID;
  }
  cJSON *obj = cJSON_ParseWithLength(text, len);
  free(text);
  if (obj == NULL) {
    fprintf(err, "gk-replay record: %s: not valid JSON\n", path);
    sim->config_default(cfg);
    return GK_CLI_INVALID;
  }
  int rc = gk_config_from_json(sim, cfg, obj, msg, sizeof msg);
  cJSON_Delete(obj);
  if (rc != 0) {
    fprintf(err, "gk-replay record: %s: %s\n", path, msg);
    return GK_CLI_INVALID;
  }
  return 0;
}

/* The tool's file reader, lent to gk_sim_tool.record_script. */
static char *read_text(void *ctx, const char *path, size_t max, size_t *len,
                       char *msg, size_t msglen) {
  (void)ctx;
  return gkr_read_text(path, max ? max : GKR_TEXT_FILE_MAX, len, msg, msglen);
}

/* Records from the genre's own source (gk_sim.tool). */
static int record_source(const gk_sim *sim, void *cfg, const genre_opts *g,
                         const char *steps_s, uint32_t players, uint64_t seed,
                         const char *outpath, FILE *out, FILE *err) {
  const gk_sim_tool *t = sim->tool;
  const char *values[GK_SIM_TOOL_OPTS_MAX];
  int missing = steps_s != NULL;
  for (size_t k = 0; k < GK_SIM_TOOL_OPTS_MAX && t->record_opts[k]; k++) {
    values[k] = genre_opt(g, t->record_opts[k]);
    missing |= values[k] == NULL;
  }
  if (missing) {
    fprintf(err, "gk-replay record: %s takes ", sim->name);
    print_opt_list(err, t->record_opts);
    fputs(" (not --steps)\n", err);
    return GK_CLI_INVALID;
  }
  char msg[8192] = "";
  gk_sim_script script;
  if (t->record_script(cfg, values, players, read_text, NULL, &script, msg,
                       sizeof msg) != 0) {
    if (msg[0] != '\0') fprintf(err, "gk-replay record: %s\n", msg);
    return GK_CLI_INVALID;
  }
  gk_script_input in;
  gk_script_input_init(&in, script.records, script.count, players,
                       sim->input_size);
  int rc = record_run(sim, cfg, seed, players, &in.base, script.count, outpath,
                      script.origin, out, err);
  free(script.records);
  return rc;
}

/* Records `steps_s` steps of every player's built-in bot. */
static int record_bots(const gk_sim *sim, void *cfg, const char *config,
                       const char *players_s, const char *seed_s,
                       const char *steps_s, uint64_t players, uint64_t seed,
                       const char *outpath, FILE *out, FILE *err) {
  uint64_t steps = 0;
  gk_bot_input b;
  if (players_s == NULL || seed_s == NULL || steps_s == NULL) {
    fprintf(err,
            "gk-replay record: %s needs --players, --seed and "
            "--steps\n",
            sim->name);
    return GK_CLI_INVALID;
  }
  if (gk_parse_u64(steps_s, &steps) != 0 || steps > RECORD_STEPS_MAX) {
    fprintf(err, "gk-replay record: --steps: expected 0..%llu, got '%s'\n",
            (unsigned long long)RECORD_STEPS_MAX, steps_s);
    return GK_CLI_INVALID;
  }
  if (gk_bot_input_init(&b, sim, cfg, seed, (uint32_t)players) != 0) {
    fprintf(err, "gk-replay record: %s has no built-in bot\n", sim->name);
    return GK_CLI_INVALID;
  }
  char origin[256];
  snprintf(origin, sizeof origin,
           "gk-replay record --genre %s --players %" PRIu64 " --seed %" PRIu64
           " --steps %" PRIu64 "%s",
           sim->name, players, seed, steps,
           config != NULL ? " --config (file)" : "");
  return record_run(sim, cfg, seed, b.players, &b.base, steps, outpath, origin,
                    out, err);
}

int gkr_cmd_record(int argc, char **argv, FILE *out, FILE *err) {
  int help = 0;
  const char *genre = NULL, *outpath = NULL;
  const char *players_s = NULL, *seed_s = NULL, *steps_s = NULL;
  const char *config = NULL;
  genre_opts g;
  genre_opts_collect(&g);
  gkr_opt opts[10 + GENRE_OPTS_MAX + 1] = {
      {"--genre", 1, &genre, NULL},       {"--out", 1, &outpath, NULL},
      {"--players", 1, &players_s, NULL}, {"--seed", 1, &seed_s, NULL},
      {"--steps", 1, &steps_s, NULL},     {"--config", 1, &config, NULL},
      {"--help", 0, NULL, &help},         {"-h", 0, NULL, &help}};
  size_t nopts = 8;
  for (size_t j = 0; j < g.n; j++) {
    gkr_opt o = {g.name[j], 1, &g.value[j], NULL};
    opts[nopts++] = o;
  }
  const char *pos[1];
  int n = 0;
  int rc = gkr_parse_opts("record", argc, argv, 2, opts, pos, &n, 0, err);
  if (rc != 0) return rc;
  if (help) {
    record_help(out);
    return 0;
  }
  if (genre == NULL || outpath == NULL) {
    fprintf(err, "gk-replay record: --genre and --out are required (see "
                 "gk-replay record --help)\n");
    return GK_CLI_INVALID;
  }
  const gk_sim *sim = gk_genre_find(genre);
  if (sim == NULL) {
    fprintf(err,
            "gk-replay record: unknown genre '%s'; this build has:", genre);
    for (size_t i = 0; gk_genres[i] != NULL; i++)
      fprintf(err, " %s", gk_genres[i]->name);
    fputc('\n', err);
    return GK_CLI_INVALID;
  }
  uint64_t seed = 0, players = 0;
  if (seed_s != NULL && gk_parse_u64(seed_s, &seed) != 0) {
    fprintf(err, "gk-replay record: --seed: expected a number, got '%s'\n",
            seed_s);
    return GK_CLI_INVALID;
  }
  if (players_s != NULL &&
      (gk_parse_u64(players_s, &players) != 0 || players < sim->players_min ||
       players > sim->players_max)) {
    fprintf(err,
            "gk-replay record: --players: %s takes %" PRIu32 "..%" PRIu32
            " players, got '%s'\n",
            sim->name, sim->players_min, sim->players_max, players_s);
    return GK_CLI_INVALID;
  }
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (cfg == NULL) return GK_CLI_INVALID;
  rc = load_config(sim, cfg, config, err);
  if (rc == 0 && foreign_opt(sim, &g, err))
    rc = GK_CLI_INVALID;
  else if (rc == 0 && has_source(sim))
    rc = record_source(sim, cfg, &g, steps_s,
                       players ? (uint32_t)players : sim->players_min, seed,
                       outpath, out, err);
  else if (rc == 0)
    rc = record_bots(sim, cfg, config, players_s, seed_s, steps_s, players,
                     seed, outpath, out, err);
  if (sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
  return rc;
}
