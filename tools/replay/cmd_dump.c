/* cmd_dump.c: gk-replay dump (see the help text below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay_cli_internal.h"

static const char dump_help[] =
    "usage: gk-replay dump --step N [--json] [--state-out OUT] FILE\n"
    "\n"
    "Runs the replay through GameLoop to step N (0-based: step 0 is the\n"
    "first step) and prints the state after it, field by field, from the\n"
    "genre's canonical state writer (the bytes the hash is computed over).\n"
    "Each field is named by its unique path, e.g. "
    "players[0].weapons[1].level.\n"
    "\n"
    "  --step N          the step (required)\n"
    "  --json            print one JSON object; \"state\" maps paths to "
    "values\n"
    "  --state-out OUT   also write the state's canonical bytes to OUT, for\n"
    "                    gk-replay diff --genre G A B (a genre author can "
    "diff\n"
    "                    two builds offline)\n"
    "\n"
    "Exit status: 0 printed; 1 a hash differs at or before step N; 2 not a\n"
    "valid replay, N out of range, or a usage error.\n";

static void print_state(FILE *out, const char *file, const gk_replay *r,
                        const gk_loop *loop, uint64_t step, uint64_t hash,
                        int json) {
  gkr_path_render pr;
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddStringToObject(o, "genre", r->genre);
    cJSON_AddNumberToObject(o, "step", (double)step);
    gkr_add_hash(o, "hash", hash);
    cJSON *state = cJSON_AddObjectToObject(o, "state");
    if (state != NULL) {
      gkr_path_render_init(&pr, NULL, state);
      loop->sim->write_state(gk_loop_state(loop), &pr.w);
    }
    gkr_print_json(out, o);
    return;
  }
  char h[24];
  gkr_hex_hash(h, sizeof h, hash);
  fprintf(out, "%s: %s, state after step %" PRIu64 " (hash %s)\n", file,
          r->genre, step, h);
  gkr_path_render_init(&pr, out, NULL);
  loop->sim->write_state(gk_loop_state(loop), &pr.w);
  gkr_path_render_end(&pr);
}

int gkr_cmd_dump(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const char *step_s = NULL, *state_out = NULL;
  const gkr_opt opts[] = {{"--json", 0, NULL, &json},
                          {"--step", 1, &step_s, NULL},
                          {"--state-out", 1, &state_out, NULL},
                          {"--help", 0, NULL, &help},
                          {"-h", 0, NULL, &help},
                          {NULL, 0, NULL, NULL}};
  const char *files[1];
  int n = 0;
  int rc = gkr_parse_opts("dump", argc, argv, 2, opts, files, &n, 1, err);
  if (rc != 0) return rc;
  if (help) {
    fputs(dump_help, out);
    return 0;
  }
  uint64_t step = 0;
  if (n != 1 || step_s == NULL || gk_parse_u64(step_s, &step) != 0 ||
      step == UINT64_MAX) {
    fprintf(err, "gk-replay dump: expected --step N (a step number) and one "
                 "FILE (see gk-replay dump --help)\n");
    return GK_CLI_INVALID;
  }
  gk_replay r;
  gk_loop loop;
  gk_replay_verdict v;
  rc = gkr_open_and_run("dump", files[0], step + 1, json, &r, &loop, &v, out,
                        err);
  if (rc == GK_CLI_INVALID) {
    gk_replay_close(&r);
    return rc;
  }
  if (step >= r.steps) {
    fprintf(err,
            "gk-replay dump: %s: step %" PRIu64 " is out of range (the "
            "replay has %" PRIu64 " readable steps: 0..%" PRIu64 ")\n",
            files[0], step, r.steps, r.steps ? r.steps - 1 : 0);
    rc = GK_CLI_INVALID;
  } else if (v.status == GK_REPLAY_MISMATCH) {
    fprintf(err, "gk-replay dump: %s: %s\n", files[0], v.message);
    rc = GK_CLI_MISMATCH;
  } else {
    gk_replay_step rs;
    gk_replay_step_at(&r, step, &rs, NULL);
    if (state_out != NULL &&
        gkr_write_state_file(loop.sim, gk_loop_state(&loop), state_out, err) !=
            0)
      rc = GK_CLI_INVALID;
    if (rc == 0) print_state(out, files[0], &r, &loop, step, rs.hash, json);
    if (r.damage.code != 0)
      fprintf(err, "gk-replay dump: warning: %s: offset %" PRIu64 ": %s\n",
              files[0], r.damage.offset, r.damage.what);
  }
  gk_loop_close(&loop);
  gk_replay_close(&r);
  return rc;
}
