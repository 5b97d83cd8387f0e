/* cmd_info.c: gk-replay info (see the help text below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_replay_cli_internal.h"

/* The help; each genre's gk_sim.tool->sample_help goes in between. */
static const char info_help_head[] =
    "usage: gk-replay info [--json] FILE\n"
    "\n"
    "Prints the header (format, genre and version, seed, players, config,\n"
    "origin), the step count, the final hash, and the HUD sample after the\n"
    "last step (the replay is run through GameLoop to get it; every hash is\n"
    "checked on the way).\n"
    "\n"
    "It lists who was in the match: the slots active at the first step,\n"
    "then every join and removal, each at the step it took effect (from the\n"
    "active mask of each recorded step; a late join is a bit that turns\n"
    "on). Reconnects are not in a replay: a player who comes back changes\n"
    "no input (gk-server logs them as player_rejoined).";
static const char info_help_tail[] =
    "\n"
    "\n"
    "  --json   print one JSON object\n"
    "\n"
    "Exit status: 0 a valid replay whose hashes match; 1 a hash differs\n"
    "(the info is still printed, with verified false); 2 not a valid\n"
    "replay, or a usage error.\n";

/* --- who was in the match ------------------------------------------------ */

#define ROSTER_MAX 64 /* joins, and removals, listed at most */

typedef struct roster_event {
  uint64_t step;
  uint32_t slot;
} roster_event;

typedef struct roster {
  uint32_t start_mask;
  roster_event joins[ROSTER_MAX], removals[ROSTER_MAX];
  uint64_t njoins, nremovals; /* all of them (the lists keep ROSTER_MAX) */
} roster;

static void roster_add(roster_event *list, uint64_t *n, uint64_t step,
                       uint32_t slot) {
  if (*n < ROSTER_MAX) list[*n] = (roster_event){step, slot};
  (*n)++;
}

/* Joins and removals from the active masks of the recorded steps. */
static void roster_read(const gk_replay *r, roster *ro) {
  memset(ro, 0, sizeof *ro);
  size_t hint = 0;
  uint32_t prev = 0;
  for (uint64_t st = 0; st < r->steps; st++) {
    gk_replay_step rs;
    if (gk_replay_step_at(r, st, &rs, &hint) != 0) break;
    if (st == 0) {
      ro->start_mask = prev = rs.active_mask;
      continue;
    }
    uint32_t on = rs.active_mask & ~prev, off = prev & ~rs.active_mask;
    for (uint32_t i = 0; i < 32; i++) {
      if (on >> i & 1u) roster_add(ro->joins, &ro->njoins, st, i);
      if (off >> i & 1u) roster_add(ro->removals, &ro->nremovals, st, i);
    }
    prev = rs.active_mask;
  }
}

static cJSON *roster_list_json(const roster_event *list, uint64_t n) {
  cJSON *a = cJSON_CreateArray();
  for (uint64_t i = 0; a != NULL && i < n && i < ROSTER_MAX; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "slot", list[i].slot);
    cJSON_AddNumberToObject(e, "step", (double)list[i].step);
    cJSON_AddItemToArray(a, e);
  }
  return a;
}

static void roster_json(cJSON *o, const roster *ro) {
  cJSON_AddNumberToObject(o, "start_mask", ro->start_mask);
  cJSON_AddItemToObject(o, "joins", roster_list_json(ro->joins, ro->njoins));
  cJSON_AddItemToObject(o, "removals",
                        roster_list_json(ro->removals, ro->nremovals));
  if (ro->njoins > ROSTER_MAX || ro->nremovals > ROSTER_MAX) {
    cJSON_AddNumberToObject(o, "joins_total", (double)ro->njoins);
    cJSON_AddNumberToObject(o, "removals_total", (double)ro->nremovals);
  }
  cJSON_AddBoolToObject(o, "reconnects_recorded", 0);
}

static void roster_list_text(FILE *out, const char *what,
                             const roster_event *list, uint64_t n) {
  fprintf(out, "%s:", what);
  if (n == 0) fprintf(out, " none");
  for (uint64_t i = 0; i < n && i < ROSTER_MAX; i++)
    fprintf(out, "%s slot %" PRIu32 " at step %" PRIu64, i ? "," : "",
            list[i].slot, list[i].step);
  if (n > ROSTER_MAX) fprintf(out, " (and %" PRIu64 " more)", n - ROSTER_MAX);
  fputc('\n', out);
}

static void roster_text(FILE *out, const roster *ro) {
  fprintf(out, "start: slots");
  for (uint32_t i = 0; i < 32; i++)
    if (ro->start_mask >> i & 1u) fprintf(out, " %" PRIu32, i);
  fprintf(out, " (active mask 0x%" PRIx32 ")\n", ro->start_mask);
  roster_list_text(out, "joins", ro->joins, ro->njoins);
  roster_list_text(out, "removals", ro->removals, ro->nremovals);
  fprintf(out, "reconnects: not recorded (they change no input)\n");
}

/* The info as one JSON object. */
static void info_json(FILE *out, const char *file, const gk_replay *r,
                      const gk_loop *loop, const gk_replay_verdict *v,
                      const char *fh) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", file);
  cJSON_AddNumberToObject(o, "format", r->format);
  cJSON_AddStringToObject(o, "genre", r->genre);
  cJSON_AddNumberToObject(o, "genre_version", r->genre_version);
  cJSON *seed = cJSON_GetObjectItemCaseSensitive(r->header, "seed");
  cJSON_AddItemToObject(o, "seed", cJSON_Duplicate(seed, 1));
  cJSON_AddNumberToObject(o, "players", r->players);
  cJSON_AddNumberToObject(o, "input_size", r->input_size);
  cJSON *ss = cJSON_GetObjectItemCaseSensitive(r->header, "step_seconds");
  cJSON_AddItemToObject(o, "step_seconds", cJSON_Duplicate(ss, 1));
  if (r->origin != NULL) cJSON_AddStringToObject(o, "origin", r->origin);
  cJSON_AddItemToObject(o, "config", cJSON_Duplicate(r->config, 1));
  cJSON_AddNumberToObject(o, "steps", (double)r->steps);
  cJSON_AddStringToObject(o, "final_hash", fh);
  cJSON_AddBoolToObject(o, "complete", r->complete);
  roster ro;
  roster_read(r, &ro);
  roster_json(o, &ro);
  if (r->cut_short) {
    cJSON *c = cJSON_AddObjectToObject(o, "cut_short");
    cJSON_AddNumberToObject(c, "step", (double)r->steps);
    cJSON_AddStringToObject(c, "code", gk_err_name(r->cut.code));
    cJSON_AddNumberToObject(c, "offset", (double)r->cut.offset);
    cJSON_AddNumberToObject(c, "bytes_dropped", (double)r->cut.dropped);
    cJSON_AddStringToObject(c, "reason", r->cut.reason);
  }
  if (r->damage.code != 0) {
    cJSON *d = cJSON_AddObjectToObject(o, "damage");
    cJSON_AddNumberToObject(d, "offset", (double)r->damage.offset);
    cJSON_AddStringToObject(d, "code", gk_err_name(r->damage.code));
    cJSON_AddStringToObject(d, "what", r->damage.what);
  }
  cJSON_AddBoolToObject(o, "verified", v->status == GK_REPLAY_OK);
  if (v->status == GK_REPLAY_MISMATCH)
    cJSON_AddStringToObject(o, "mismatch", v->message);
  gkr_json_render jr;
  if (gkr_json_render_init(&jr) == 0) {
    gk_loop_write_sample(loop, &jr.w);
    cJSON_AddItemToObject(o, "sample", jr.stack[0]);
  }
  gkr_print_json(out, o);
}

/* The info as text lines. */
static void info_text(FILE *out, const char *file, const gk_replay *r,
                      const gk_loop *loop, const gk_replay_verdict *v,
                      const char *fh) {
  char seed[24];
  snprintf(seed, sizeof seed, "%" PRIu64, r->seed);
  char *cfg = cJSON_PrintUnformatted(r->config);
  fprintf(out, "file: %s\n", file);
  fprintf(out, "format: %" PRIu32 "\n", r->format);
  fprintf(out, "genre: %s (version %" PRIu32 ")\n", r->genre, r->genre_version);
  fprintf(out, "seed: %s\n", seed);
  fprintf(out, "players: %" PRIu32 "\n", r->players);
  fprintf(out, "step: %" PRIu32 "/%" PRIu32 " s\n", r->step_seconds.num,
          r->step_seconds.den);
  if (r->origin != NULL) fprintf(out, "origin: %s\n", r->origin);
  /* level sets can be long: show the config's size, not all of it */
  if (cfg != NULL && strlen(cfg) <= 400)
    fprintf(out, "config: %s\n", cfg);
  else if (cfg != NULL)
    fprintf(out, "config: (%zu bytes of JSON; see --json)\n", strlen(cfg));
  cJSON_free(cfg);
  fprintf(out, "steps: %" PRIu64 "\n", r->steps);
  fprintf(out, "final hash: %s\n", fh);
  roster ro;
  roster_read(r, &ro);
  roster_text(out, &ro);
  if (r->cut_short)
    fprintf(out,
            "cut short: at step %" PRIu64 " (recovered: offset %" PRIu64
            " of the crashed file: %s (%s); %" PRIu64 " bytes dropped)\n",
            r->steps, r->cut.offset, r->cut.reason, gk_err_name(r->cut.code),
            r->cut.dropped);
  if (r->damage.code != 0)
    fprintf(out, "damage: offset %" PRIu64 ": %s (%s)\n", r->damage.offset,
            r->damage.what, gk_err_name(r->damage.code));
  fprintf(out, "verified: %s\n",
          v->status == GK_REPLAY_OK ? "yes" : v->message);
  fprintf(out, "sample:\n");
  gkr_text_render tr;
  gkr_text_render_init(&tr, out, "  ");
  gk_loop_write_sample(loop, &tr.w);
}

int gkr_cmd_info(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const gkr_opt opts[] = {{"--json", 0, NULL, &json},
                          {"--help", 0, NULL, &help},
                          {"-h", 0, NULL, &help},
                          {NULL, 0, NULL, NULL}};
  const char *files[1];
  int n = 0;
  int rc = gkr_parse_opts("info", argc, argv, 2, opts, files, &n, 1, err);
  if (rc != 0) return rc;
  if (help) {
    fputs(info_help_head, out);
    for (size_t i = 0; gk_genres[i] != NULL; i++)
      if (gk_genres[i]->tool != NULL && gk_genres[i]->tool->sample_help)
        fputs(gk_genres[i]->tool->sample_help, out);
    fputs(info_help_tail, out);
    return 0;
  }
  if (n != 1) {
    fprintf(err, "gk-replay info: expected one FILE (see gk-replay info "
                 "--help)\n");
    return GK_CLI_INVALID;
  }
  gk_replay r;
  gk_loop loop;
  gk_replay_verdict v;
  rc = gkr_open_and_run("info", files[0], UINT64_MAX, json, &r, &loop, &v, out,
                        err);
  if (rc == GK_CLI_INVALID) {
    gk_replay_close(&r);
    return rc;
  }
  if (r.damage.code != 0)
    rc = GK_CLI_INVALID; /* a file cut short: show what it has, then fail */
  char fh[24];
  gkr_hex_hash(fh, sizeof fh, r.complete ? r.final_hash : r.last_hash);
  if (json)
    info_json(out, files[0], &r, &loop, &v, fh);
  else
    info_text(out, files[0], &r, &loop, &v, fh);
  gk_loop_close(&loop);
  gk_replay_close(&r);
  return rc;
}
