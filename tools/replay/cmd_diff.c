/* cmd_diff.c: gk-replay diff (see the help text below), and writing a
 * state's canonical bytes to a file for dump --state-out. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_genres.h"
#include "gk_replay_cli_internal.h"
#include "gk_state_diff.h"

static const char diff_help[] =
    "usage: gk-replay diff [--max N] [--json] BUNDLE_DIR\n"
    "       gk-replay diff --genre G [--config FILE] [--max N] [--json]\n"
    "                      A.state B.state\n"
    "\n"
    "Compares two canonical states field by field and prints the fields\n"
    "that differ, by their unique paths (e.g. players[0].health), with both\n"
    "values, then how many differ. A desync bundle written by gk-server\n"
    "holds referee.state (A), peer.state (B) and replay.gkr, whose header\n"
    "gives the genre and config. Two state files (from gk-replay dump\n"
    "--state-out) need --genre, and --config if the run was not made with\n"
    "the genre's defaults (a JSON object of options).\n"
    "\n"
    "  --max N    list at most N fields (default 20)\n"
    "  --json     print one JSON object\n"
    "\n"
    "Exit status: 0 the states are equal; 1 they differ; 2 a state does\n"
    "not read back, a bad file or a usage error.\n";

#define STATE_FILE_MAX (256u << 20)
#define DIFF_MAX_LIST 100000u

int gkr_write_state_file(const gk_sim *sim, const void *state, const char *path,
                         FILE *err) {
  gk_buf_writer b;
  gk_buf_writer_init(&b);
  sim->write_state(state, &b.w);
  size_t len = 0;
  uint8_t *bytes = gk_buf_writer_take(&b, &len);
  FILE *f = bytes != NULL ? fopen(path, "wb") : NULL;
  int ok = f != NULL && fwrite(bytes, 1, len, f) == len;
  if (f != NULL && fclose(f) != 0) ok = 0;
  if (!ok)
    fprintf(err, "gk-replay: cannot write '%s': %s\n", path,
            bytes == NULL ? "out of memory" : strerror(errno));
  free(bytes);
  return ok ? 0 : GK_CLI_INVALID;
}

typedef struct diff_in {
  const gk_sim *sim;
  void *cfg;
  char *a, *b;
  size_t alen, blen;
} diff_in;

/* The genre and config: from the bundle's replay header, or --genre and
 * --config. Prints a message and returns GK_CLI_INVALID on failure. */
static int load_config(diff_in *in, const char *bundle, const char *genre,
                       const char *config, FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  gk_replay r;
  int rc = 0;
  if (bundle != NULL) {
    char path[4096];
    snprintf(path, sizeof path, "%s/replay.gkr", bundle);
    gk_replay_open_file(&r, path);
    if (!r.header_ok)
      rc = fprintf(err, "gk-replay diff: %s: not a valid replay: %s\n", path,
                   r.damage.what);
    genre = r.header_ok ? r.genre : NULL;
  }
  in->sim = genre != NULL ? gk_genre_find(genre) : NULL;
  if (rc == 0 && in->sim == NULL)
    rc = fprintf(err, "gk-replay diff: unknown genre '%s'\n",
                 genre ? genre : "");
  in->cfg = in->sim != NULL && rc == 0 ? calloc(1, in->sim->config_size) : NULL;
  if (rc == 0 && in->cfg == NULL)
    rc = fprintf(err, "gk-replay diff: out of memory\n");
  if (rc == 0 && bundle != NULL) {
    if (gk_replay_prepare(&r, in->sim, in->cfg, msg, sizeof msg) != 0)
      rc = fprintf(err, "gk-replay diff: %s/replay.gkr: %s\n", bundle, msg);
  } else if (rc == 0) {
    in->sim->config_default(in->cfg);
    size_t len = 0;
    char *text =
        config ? gkr_read_text(config, GKR_TEXT_FILE_MAX, &len, msg, 256) : 0;
    if (config != NULL && text == NULL)
      rc = fprintf(err, "gk-replay diff: --config: %s\n", msg);
    else if (text != NULL && gk_config_apply_text(in->sim, in->cfg, text, len,
                                                  config, msg, 256) != 0)
      rc = fprintf(err, "gk-replay diff: %s\n", msg);
    free(text);
  }
  if (bundle != NULL) gk_replay_close(&r);
  if (rc != 0) {
    if (in->cfg != NULL && in->sim->config_free != NULL)
      in->sim->config_free(in->cfg);
    free(in->cfg);
    in->cfg = NULL;
    return GK_CLI_INVALID;
  }
  return 0;
}

static int load_states(diff_in *in, const char *pa, const char *pb, FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  in->a = gkr_read_text(pa, STATE_FILE_MAX, &in->alen, msg, sizeof msg);
  if (in->a != NULL)
    in->b = gkr_read_text(pb, STATE_FILE_MAX, &in->blen, msg, sizeof msg);
  if (in->a == NULL || in->b == NULL) {
    fprintf(err, "gk-replay diff: %s\n", msg);
    return GK_CLI_INVALID;
  }
  return 0;
}

static int print_diff(diff_in *in, uint32_t max, int json, FILE *out,
                      FILE *err) {
  gk_diff_field *fields = calloc(max ? max : 1, sizeof *fields);
  if (fields == NULL) {
    fprintf(err, "gk-replay diff: out of memory\n");
    return GK_CLI_INVALID;
  }
  gk_state_diff d;
  gk_state_diff_init(&d, fields, max);
  char msg[GK_ERRMSG_MAX] = "";
  int rc = gk_state_diff_run(&d, in->sim, in->cfg, in->a, in->alen, in->b,
                             in->blen, msg, sizeof msg);
  if (rc != 0) {
    fprintf(err, "gk-replay diff: %s\n", msg);
    if (d.first_byte != UINT64_MAX)
      fprintf(err,
              "gk-replay diff: first differing byte at offset %" PRIu64 "\n",
              d.first_byte);
    free(fields);
    return GK_CLI_INVALID;
  }
  size_t n =
      json ? gk_state_diff_json(&d, NULL, 0) : gk_state_diff_text(&d, NULL, 0);
  char *text = malloc(n + 1);
  if (text != NULL) {
    if (json)
      gk_state_diff_json(&d, text, n + 1);
    else
      gk_state_diff_text(&d, text, n + 1);
    fputs(text, out);
    if (json) fputc('\n', out);
  }
  free(text);
  free(fields);
  return d.total > 0 ? GK_CLI_MISMATCH : GK_CLI_OK;
}

int gkr_cmd_diff(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const char *genre = NULL, *config = NULL, *max_s = NULL;
  const gkr_opt opts[] = {
      {"--json", 0, NULL, &json},     {"--genre", 1, &genre, NULL},
      {"--config", 1, &config, NULL}, {"--max", 1, &max_s, NULL},
      {"--help", 0, NULL, &help},     {"-h", 0, NULL, &help},
      {NULL, 0, NULL, NULL}};
  const char *files[2];
  int n = 0;
  int rc = gkr_parse_opts("diff", argc, argv, 2, opts, files, &n, 2, err);
  if (rc != 0) return rc;
  if (help) {
    fputs(diff_help, out);
    return 0;
  }
  uint64_t max = 20;
  if ((max_s != NULL &&
       (gk_parse_u64(max_s, &max) != 0 || max > DIFF_MAX_LIST)) ||
      (genre == NULL && n != 1) || (genre != NULL && n != 2) ||
      (genre == NULL && config != NULL)) {
    fprintf(err,
            "gk-replay diff: expected BUNDLE_DIR, or --genre G and two "
            "state files; --max up to %u (see gk-replay diff --help)\n",
            DIFF_MAX_LIST);
    return GK_CLI_INVALID;
  }
  diff_in in = {0};
  char pa[4096], pb[4096];
  if (genre == NULL) {
    snprintf(pa, sizeof pa, "%s/referee.state", files[0]);
    snprintf(pb, sizeof pb, "%s/peer.state", files[0]);
  } else {
    snprintf(pa, sizeof pa, "%s", files[0]);
    snprintf(pb, sizeof pb, "%s", files[1]);
  }
  rc = load_config(&in, genre == NULL ? files[0] : NULL, genre, config, err);
  if (rc == 0) rc = load_states(&in, pa, pb, err);
  if (rc == 0) rc = print_diff(&in, (uint32_t)max, json, out, err);
  if (in.cfg != NULL && in.sim->config_free != NULL)
    in.sim->config_free(in.cfg);
  free(in.cfg);
  free(in.a);
  free(in.b);
  return rc;
}
