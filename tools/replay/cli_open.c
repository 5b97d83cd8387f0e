/* cli_open.c: progress on a terminal, and opening and running a replay
 * for info and dump (see gk_replay_cli_internal.h). */
#include <inttypes.h>
#include <unistd.h>

#include "gk_replay_cli_internal.h"

void gkr_on_progress(void *ctx, uint64_t done, uint64_t total) {
  gkr_progress *p = ctx;
  if (total < 4 * (uint64_t)GK_REPLAY_PROGRESS_STEPS) return;
  fprintf(p->err, "\r%s: %" PRIu64 "/%" PRIu64 " steps (%u%%)", p->file, done,
          total, (unsigned)(done * 100 / total));
  fflush(p->err);
  p->shown = 1;
}

void gkr_progress_end(gkr_progress *p) {
  if (p->shown) fputs("\r\033[K", p->err);
}

int gkr_is_tty(FILE *f) {
  int fd = fileno(f);
  return fd >= 0 && isatty(fd);
}

/* Opens and runs `path` up to `steps` steps. On success *loop holds the
 * run (close it). Returns an exit code; on failure a message is printed. */
int gkr_open_and_run(const char *cmd, const char *path, uint64_t steps,
                     int json, gk_replay *r, gk_loop *loop,
                     gk_replay_verdict *v, FILE *out, FILE *err) {
  int orc = gk_replay_open_file(r, path);
  if (!r->header_ok) {
    fprintf(err,
            "gk-replay %s: %s: not a valid replay: offset %" PRIu64
            ": %s (%s)\n",
            cmd, path, r->damage.offset, r->damage.what, gk_err_name(orc));
    return GK_CLI_INVALID;
  }
  gk_loop_options lo = {GK_REPLAY_PROGRESS_STEPS};
  if (gk_loop_init(loop, &lo) != 0) {
    fprintf(err, "gk-replay %s: out of memory\n", cmd);
    return GK_CLI_INVALID;
  }
  gkr_progress pr = {err, path, 0};
  int tty = !json && gkr_is_tty(err);
  int st =
      gk_replay_run(r, NULL, steps, loop, tty ? gkr_on_progress : NULL, &pr, v);
  gkr_progress_end(&pr);
  (void)out;
  if (st == GK_REPLAY_INVALID) {
    fprintf(err, "gk-replay %s: %s: %s\n", cmd, path, v->message);
    gk_loop_close(loop);
    return GK_CLI_INVALID;
  }
  return st == GK_REPLAY_MISMATCH ? GK_CLI_MISMATCH : GK_CLI_OK;
}
