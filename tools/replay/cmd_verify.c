/* cmd_verify.c: gk-replay verify (see the help text below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay_cli_internal.h"

static const char verify_help[] =
    "usage: gk-replay verify [--json] FILE...\n"
    "\n"
    "Runs each replay through GameLoop with { steps } budgets and compares\n"
    "the state hash after every step with the recorded one.\n"
    "\n"
    "  --json   one JSON object per file instead of text\n"
    "\n"
    "Exit status: 0 every file matches; 1 a hash differs (the file, the\n"
    "first differing step, the expected and the computed hash are named);\n"
    "2 a file is not a valid replay (the offset and what was expected are\n"
    "named) or a usage error. A file cut short is verified up to its last\n"
    "complete block and then reported as not valid.\n";

static int verify_one(const char *path, int json, FILE *out, FILE *err) {
  gk_replay r;
  gk_replay_open_file(&r, path);
  gkr_progress pr = {err, path, 0};
  gk_replay_verdict v;
  int tty = !json && gkr_is_tty(err);
  gk_replay_verify(&r, NULL, tty ? gkr_on_progress : NULL, &pr, &v);
  gkr_progress_end(&pr);
  char eh[24], ah[24];
  gkr_hex_hash(eh, sizeof eh, v.expected);
  gkr_hex_hash(ah, sizeof ah, v.actual);
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", path);
    cJSON_AddStringToObject(o, "status",
                            v.status == GK_REPLAY_OK         ? "ok"
                            : v.status == GK_REPLAY_MISMATCH ? "mismatch"
                                                             : "invalid");
    if (r.header_ok) cJSON_AddStringToObject(o, "genre", r.genre);
    cJSON_AddNumberToObject(o, "steps_verified", (double)v.steps_checked);
    if (v.status == GK_REPLAY_OK) {
      cJSON_AddNumberToObject(o, "steps", (double)r.steps);
      gkr_add_hash(o, "final_hash", r.final_hash);
      cJSON_AddBoolToObject(o, "cut_short", r.cut_short);
    } else if (v.status == GK_REPLAY_MISMATCH) {
      cJSON_AddNumberToObject(o, "step", (double)v.step);
      cJSON_AddStringToObject(o, "expected", eh);
      cJSON_AddStringToObject(o, "actual", ah);
    } else {
      cJSON_AddNumberToObject(o, "offset", (double)v.offset);
      cJSON_AddStringToObject(o, "code", gk_err_name(v.code));
      cJSON_AddStringToObject(o, "error", v.message);
    }
    gkr_print_json(out, o);
  } else if (v.status == GK_REPLAY_OK) {
    char fh[24];
    gkr_hex_hash(fh, sizeof fh, r.final_hash);
    fprintf(out, "%s: ok: %" PRIu64 " steps verified, final hash %s%s\n", path,
            v.steps_checked, fh,
            r.cut_short ? " (recovered: cut short, see gk-replay info)" : "");
  } else if (v.status == GK_REPLAY_MISMATCH) {
    fprintf(out,
            "%s: MISMATCH at step %" PRIu64 ": expected hash %s, actual %s\n",
            path, v.step, eh, ah);
  } else {
    fprintf(out, "%s: INVALID: %s\n", path, v.message);
  }
  gk_replay_close(&r);
  return v.status;
}

int gkr_cmd_verify(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const gkr_opt opts[] = {{"--json", 0, NULL, &json},
                          {"--help", 0, NULL, &help},
                          {"-h", 0, NULL, &help},
                          {NULL, 0, NULL, NULL}};
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  if (files == NULL) return GK_CLI_INVALID;
  int n = 0;
  int rc = gkr_parse_opts("verify", argc, argv, 2, opts, files, &n, argc, err);
  if (rc == 0 && help) {
    fputs(verify_help, out);
  } else if (rc == 0 && n == 0) {
    fprintf(err, "gk-replay verify: no FILE given (see gk-replay verify "
                 "--help)\n");
    rc = GK_CLI_INVALID;
  } else if (rc == 0) {
    for (int i = 0; i < n; i++) {
      int st = verify_one(files[i], json, out, err);
      if (st > rc) rc = st;
    }
  }
  free(files);
  return rc;
}
