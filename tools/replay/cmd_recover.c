/* cmd_recover.c: gk-replay recover (see the help text below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay_cli_internal.h"

static const char recover_help[] =
    "usage: gk-replay recover [--json] FILE.gkr.tmp [--out FILE.gkr]\n"
    "\n"
    "Recovers the replay a crash left behind: keeps every complete,\n"
    "checksum-valid block, writes a finished replay whose footer says it\n"
    "was cut short at step N and why (where the damage is and what was\n"
    "expected there), and verifies every kept step before writing it.\n"
    "FILE is not changed. A FILE that already has its footer is copied.\n"
    "\n"
    "  --out OUT   where to write (default: FILE without its .tmp ending)\n"
    "  --json      print one JSON object\n"
    "\n"
    "Exit status: 0 recovered and verified (OUT written); 1 a kept step's\n"
    "hash differs; 2 nothing could be recovered (no valid header, an\n"
    "unknown genre, OUT cannot be written) or a usage error. Nothing is\n"
    "written unless the status is 0.\n";

/* FILE without ".tmp", into a new string (NULL if FILE has no such end). */
static char *default_out(const char *file) {
  size_t n = strlen(file);
  if (n <= 4 || strcmp(file + n - 4, ".tmp") != 0) return NULL;
  char *o = malloc(n - 3);
  if (o != NULL) {
    memcpy(o, file, n - 4);
    o[n - 4] = '\0';
  }
  return o;
}

static void report(FILE *out, int json, const char *file, const char *dest,
                   const gk_replay_recovery *rec) {
  const char *st = rec->status == GK_REPLAY_OK         ? "ok"
                   : rec->status == GK_REPLAY_MISMATCH ? "mismatch"
                                                       : "invalid";
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddStringToObject(o, "out", dest);
    cJSON_AddStringToObject(o, "status", st);
    cJSON_AddNumberToObject(o, "steps", (double)rec->steps);
    cJSON_AddBoolToObject(o, "complete", rec->complete);
    cJSON_AddNumberToObject(o, "bytes", (double)rec->size);
    cJSON_AddNumberToObject(o, "bytes_kept", (double)rec->kept);
    cJSON_AddNumberToObject(o, "bytes_dropped", (double)rec->cut.dropped);
    if (!rec->complete && rec->cut.code != 0) {
      cJSON *c = cJSON_AddObjectToObject(o, "cut");
      cJSON_AddStringToObject(c, "code", gk_err_name(rec->cut.code));
      cJSON_AddNumberToObject(c, "offset", (double)rec->cut.offset);
      cJSON_AddStringToObject(c, "reason", rec->cut.reason);
    }
    if (rec->status != GK_REPLAY_OK)
      cJSON_AddStringToObject(o, "error", rec->message);
    gkr_print_json(out, o);
    return;
  }
  if (rec->status != GK_REPLAY_OK) {
    fprintf(out, "%s: NOT RECOVERED (%s): %s\n", file, st, rec->message);
  } else if (rec->complete) {
    fprintf(out, "%s: complete, %" PRIu64 " steps verified, copied to %s\n",
            file, rec->steps, dest);
  } else {
    fprintf(out,
            "%s: recovered %" PRIu64 " steps (verified), cut short: offset "
            "%" PRIu64 ": %s (%s); kept %" PRIu64 " of %" PRIu64
            " bytes, dropped %" PRIu64 "; wrote %s\n",
            file, rec->steps, rec->cut.offset, rec->cut.reason,
            gk_err_name(rec->cut.code), rec->kept, rec->size, rec->cut.dropped,
            dest);
  }
}

int gkr_cmd_recover(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const char *dest = NULL;
  const gkr_opt opts[] = {{"--json", 0, NULL, &json},
                          {"--out", 1, &dest, NULL},
                          {"--help", 0, NULL, &help},
                          {"-h", 0, NULL, &help},
                          {NULL, 0, NULL, NULL}};
  const char *files[1];
  int n = 0;
  int rc = gkr_parse_opts("recover", argc, argv, 2, opts, files, &n, 1, err);
  if (rc != 0) return rc;
  if (help) {
    fputs(recover_help, out);
    return GK_CLI_OK;
  }
  if (n != 1) {
    fprintf(err, "gk-replay recover: expected one FILE (see gk-replay "
                 "recover --help)\n");
    return GK_CLI_INVALID;
  }
  char *def = dest == NULL ? default_out(files[0]) : NULL;
  if (dest == NULL && def == NULL) {
    fprintf(err,
            "gk-replay recover: %s does not end in .tmp: name the "
            "output with --out\n",
            files[0]);
    return GK_CLI_INVALID;
  }
  if (dest == NULL) dest = def;
  if (strcmp(dest, files[0]) == 0) {
    fprintf(err, "gk-replay recover: --out must differ from FILE\n");
    free(def);
    return GK_CLI_INVALID;
  }
  gk_replay_recovery rec;
  rc = gk_replay_recover(files[0], dest, NULL, &rec);
  report(out, json, files[0], dest, &rec);
  free(def);
  return rc;
}
