/* gk_replay_cli_internal.h: what the gk-replay commands share. Internal to
 * tools/replay: tests and other programs use gk_replay_cli.h.
 *
 *   gk_replay_cli.c  the command table and `gk-replay --help`
 *   cmd_verify.c, cmd_info.c, cmd_dump.c, cmd_record.c, cmd_recover.c,
 *   cmd_diff.c, cmd_synctest.c
 *                    one per command
 *   cli_opts.c       option parsing, reading text files
 *   cli_render.c     the canonical writer's fields as text or JSON; hashes
 *   cli_open.c       progress on a terminal; opening and running a replay
 *
 * A command takes gk_replay_cli's argv (argv[1] is its name), writes
 * results to `out` and errors to `err`, and returns a GK_CLI_* code. No
 * file names a genre: genre-specific help and recording come from
 * gk_sim.tool.
 */
#ifndef GK_REPLAY_CLI_INTERNAL_H
#define GK_REPLAY_CLI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "gk_loop.h"
#include "gk_replay.h"
#include "gk_replay_cli.h"

#define GKR_TEXT_FILE_MAX (16u << 20) /* levels, solutions, configs */
#define GKR_RENDER_DEPTH_MAX 32       /* nesting rendered; deeper is cut */

/* --- the commands --------------------------------------------------------- */
int gkr_cmd_verify(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_info(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_dump(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_record(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_recover(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_diff(int argc, char **argv, FILE *out, FILE *err);
int gkr_cmd_synctest(int argc, char **argv, FILE *out, FILE *err);

/* Writes the canonical bytes of `state` to `path` (cmd_diff.c). Returns 0,
 * or GK_CLI_INVALID with a message on err. */
int gkr_write_state_file(const gk_sim *sim, const void *state, const char *path,
                         FILE *err);

/* --- options (cli_opts.c) ------------------------------------------------- */
/* One option; a table of them ends with a NULL name. */
typedef struct gkr_opt {
  const char *name; /* "--json" */
  int takes_value;
  const char **value; /* where a value goes */
  int *flag;          /* set to 1 when seen (for flags) */
} gkr_opt;

/* Parses argv[first..] into opts (values point into argv) and up to
 * `maxpos` positionals (pos has room for maxpos). `--` ends the options;
 * `--name=value` and `--name value` both work. Returns 0, or
 * GK_CLI_INVALID with a message on err naming `cmd`. */
int gkr_parse_opts(const char *cmd, int argc, char **argv, int first,
                   const gkr_opt *opts, const char **pos, int *npos, int maxpos,
                   FILE *err);

/* Reads a whole text file (at most `max` bytes) into a NUL-terminated
 * buffer the caller frees. Returns NULL with a message in msg, which the
 * caller sets to "" first. */
char *gkr_read_text(const char *path, size_t max, size_t *len, char *msg,
                    size_t msglen);

/* --- rendering (cli_render.c) ---------------------------------------------
 * A gk_writer whose `field` callback prints every field of a genre's
 * canonical writer (state or HUD sample): as indented text lines, or into
 * a cJSON tree. */
typedef struct gkr_text_render {
  gk_writer w; /* must be first */
  FILE *out;
  int depth;
  const char *indent0;
} gkr_text_render;

/* Prints to `out`, each line starting with `indent0` (not copied). */
void gkr_text_render_init(gkr_text_render *t, FILE *out, const char *indent0);

typedef struct gkr_json_render {
  gk_writer w; /* must be first */
  cJSON *stack[GKR_RENDER_DEPTH_MAX + 1];
  int depth;
  int skip; /* groups nested beyond the limit, being ignored */
  int failed;
} gkr_json_render;

/* Creates the root object, stack[0], which the caller then owns (add it
 * to a tree or cJSON_Delete it). Returns 0 or GK_ENOMEM. */
int gkr_json_render_init(gkr_json_render *j);

/* A gk_writer that prints a genre's canonical state one field per line,
 * "path: value" with each field's unique path (gk_path), to `out`; or, if
 * `obj` is set, adds each field to `obj` under its path (a flat object).
 * BYTES print as hex. Call gkr_path_render_end when the writer is done. */
typedef struct gkr_path_render {
  gk_writer w; /* must be first */
  gk_path path;
  FILE *out;  /* text mode, or NULL */
  cJSON *obj; /* JSON mode (not owned), or NULL */
  int open;   /* a BYTES line is open (a later piece may follow) */
  int failed; /* out of memory in JSON mode */
} gkr_path_render;

void gkr_path_render_init(gkr_path_render *p, FILE *out, cJSON *obj);
void gkr_path_render_end(gkr_path_render *p);

/* Prints a JSON item on one line and deletes it (NULL prints an out of
 * memory error object). */
void gkr_print_json(FILE *out, cJSON *item);
/* "0x" and 16 hex digits into buf (n >= 19). */
void gkr_hex_hash(char *buf, size_t n, uint64_t h);
/* Adds a hash to o under key, as gkr_hex_hash writes it. */
void gkr_add_hash(cJSON *o, const char *key, uint64_t h);

/* --- running replays (cli_open.c) ----------------------------------------- */
/* Progress of one file, shown on `err` (a terminal) for long replays. */
typedef struct gkr_progress {
  FILE *err;
  const char *file;
  int shown;
} gkr_progress;

/* A gk_replay_progress_cb; ctx is a gkr_progress. */
void gkr_on_progress(void *ctx, uint64_t done, uint64_t total);
/* Clears the progress line if one was shown. */
void gkr_progress_end(gkr_progress *p);
/* True if f is a terminal. */
int gkr_is_tty(FILE *f);

/* Opens and runs `path` up to `steps` steps (for info and dump). *r is
 * opened in every case (close it); on success *loop holds the run (close
 * it). Returns an exit code; on failure a message naming `cmd` is
 * printed. */
int gkr_open_and_run(const char *cmd, const char *path, uint64_t steps,
                     int json, gk_replay *r, gk_loop *loop,
                     gk_replay_verdict *v, FILE *out, FILE *err);

#endif
