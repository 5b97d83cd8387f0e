/* gk_pp_tool.c: what gk-replay offers for push-puzzle (gk_sim_tool, see
 * gk_sim.h): the sample keys in `info --help`, and recording a published
 * solution on a level: `record --genre push-puzzle --level FILE[#N]
 * --lurd SOLUTION|@FILE`. Files are read through the tool's reader; this
 * file does no I/O of its own. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_pp_internal.h"

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s != NULL ? s + 1 : path;
}

static int set_key(void *cfg, const char *key, gk_value_type type, int64_t i,
                   const char *s, char *msg, size_t msglen) {
  gk_value v = {type, i, s};
  return gk_push_puzzle_sim.config_set(cfg, key, &v, msg, msglen);
}

/* --level FILE[#N]: reads and checks the set, and points cfg at level N
 * (1-based; a '#' not followed by digits is part of the name) without
 * advancing. Copies the file name into path (pathlen bytes). */
static int load_level(void *cfg, const char *level, gk_read_text_fn read_text,
                      void *read_ctx, char *path, size_t pathlen,
                      uint64_t *index, char *err, size_t errlen) {
  char msg[GK_ERRMSG_MAX] = "";
  const char *hash = strrchr(level, '#');
  size_t plen = strlen(level);
  *index = 1;
  if (hash != NULL && gk_parse_u64(hash + 1, index) == 0) {
    plen = (size_t)(hash - level);
    if (*index < 1 || *index > GK_PP_LEVELS_MAX)
      return gk_errf(err, errlen, GK_ERANGE, "--level %s: N must be 1..%d",
                     level, GK_PP_LEVELS_MAX);
  }
  if (plen >= pathlen)
    return gk_errf(err, errlen, GK_ERANGE, "--level: path too long");
  memcpy(path, level, plen);
  path[plen] = '\0';
  size_t len = 0;
  char *xsb =
      read_text(read_ctx, path, GK_PP_LEVELS_TEXT_MAX, &len, msg, sizeof msg);
  if (xsb == NULL) return gk_errf(err, errlen, GK_EIO, "--level: %s", msg);
  /* check the set here so the message names the file */
  gk_pp_set set;
  int rc = gk_pp_set_parse(&set, xsb, len, path, GK_PP_DIM_MAX, GK_PP_DIM_MAX,
                           msg, sizeof msg);
  if (rc == 0) {
    if (*index > set.count) {
      snprintf(msg, sizeof msg, "%.200s has %" PRIu32 " level(s), not %" PRIu64,
               path, set.count, *index);
      rc = GK_ERANGE;
    }
    gk_pp_set_close(&set);
  }
  if (rc == 0)
    rc = set_key(cfg, "levels", GK_VALUE_STRING, 0, xsb, msg, sizeof msg);
  if (rc == 0)
    rc = set_key(cfg, "level", GK_VALUE_INT, (int64_t)*index - 1, NULL, msg,
                 sizeof msg);
  if (rc == 0)
    rc = set_key(cfg, "advance", GK_VALUE_BOOL, 0, NULL, msg, sizeof msg);
  free(xsb);
  if (rc != 0) return gk_errf(err, errlen, rc, "--level: %s", msg);
  return 0;
}

/* --lurd SOLUTION|@FILE: parses the solution into moves. */
static int load_solution(const char *lurd, gk_read_text_fn read_text,
                         void *read_ctx, gk_pp_moves *moves, char *err,
                         size_t errlen) {
  char msg[GK_ERRMSG_MAX] = "";
  char *text = NULL;
  size_t len = 0;
  const char *name = "--lurd";
  if (lurd[0] == '@') {
    name = lurd + 1;
    text = read_text(read_ctx, lurd + 1, 0, &len, msg, sizeof msg);
    if (text == NULL) return gk_errf(err, errlen, GK_EIO, "--lurd: %s", msg);
  } else {
    len = strlen(lurd);
    text = malloc(len + 1);
    if (text == NULL) return GK_ENOMEM;
    memcpy(text, lurd, len + 1);
  }
  int rc = gk_pp_lurd_parse(moves, text, len, name, msg, sizeof msg);
  free(text);
  if (rc != 0) return gk_errf(err, errlen, rc, "--lurd: %s", msg);
  return 0;
}

/* One move is one step, pressed by player 0. */
static int record_script(void *cfg, const char *const *values, uint32_t players,
                         gk_read_text_fn read_text, void *read_ctx,
                         gk_sim_script *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  char path[4096];
  uint64_t index = 1;
  int rc = load_level(cfg, values[0], read_text, read_ctx, path, sizeof path,
                      &index, err, errlen);
  if (rc != 0) return rc;
  gk_pp_moves moves;
  rc = load_solution(values[1], read_text, read_ctx, &moves, err, errlen);
  if (rc != 0) return rc;
  size_t rsize = (size_t)players * GK_PP_INPUT_SIZE;
  uint8_t *records = malloc(moves.count * rsize + 1);
  if (records == NULL ||
      gk_pp_script(moves.moves, moves.count, players, 0, records) != 0) {
    free(records);
    gk_pp_moves_close(&moves);
    return gk_errf(err, errlen, GK_EINVAL, "cannot build the step inputs");
  }
  out->records = records;
  out->count = moves.count;
  snprintf(out->origin, sizeof out->origin,
           "gk-replay record --genre push-puzzle --level %.300s#%" PRIu64
           " (%zu moves)",
           base_name(path), index, moves.count);
  gk_pp_moves_close(&moves);
  return 0;
}

const gk_sim_tool gk__pp_tool = {
    .sample_help = " For push-puzzle the sample has the keys solved,\n"
                   "moves and pushes.",
    .record_opts = {"--level", "--lurd", NULL},
    .record_usage = "--genre push-puzzle --level FILE[#N]\n"
                    "                        --lurd SOLUTION|@FILE "
                    "--out OUT.gkr\n"
                    "                        [--players P] [--seed S]\n",
    .record_help =
        "push-puzzle: records a published Sokoban solution on a level. FILE "
        "is\n"
        "an XSB level set; #N picks its N-th level (1-based, default 1). The\n"
        "solution is LURD text (l u r d moves, L U R D pushes, run-length\n"
        "counts such as 3r or 2(dl)), or @FILE to read it from a file. One "
        "move\n"
        "is one step, pressed by player 0. `gk-replay info` then shows "
        "whether\n"
        "the level is solved, with moves and pushes.\n",
    .record_script = record_script,
};
