/* test_faults.c: the real gk-server when things break.
 *
 * The fault matrix: rooms of healthy bots play while, in turn, a bot is
 * killed with SIGKILL, a peer sends its inputs twice and out of order
 * (gk-bot --chaos dup), a peer's clock jumps (its process is stopped and
 * continued: on resume its monotonic clock is far past its schedule), the
 * server gets SIGTERM while replay writes are in flight (flush_ms 10), and
 * the replay disk fills (a 256 KiB tmpfs mounted by the test; skipped
 * with a message where mounting is not allowed). Each row prints what
 * happened, what the server logged, and that every other room finished
 * with 0 desyncs and a verified replay.
 *
 * Crash recovery: the server is killed with SIGKILL mid-match; restarted
 * on the same folder it recovers every .gkr.tmp (at least the steps of
 * the flush interval before the kill) and moves a damaged one aside;
 * then its folder disappears and the next room makes it again. Nothing
 * left behind is ever renamed over a file: a leftover whose replay name
 * is taken is recovered under another name, and a second damaged
 * leftover of a name is moved aside next to the first.
 */
#define _GNU_SOURCE /* umount2 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "e2e.h"
#include "gk_replay.h"

/* One row of the matrix, printed as it finishes. */
static void row(int n, const char *fault, const char *happened,
                const char *logged, const char *others) {
  fprintf(stderr,
          "fault matrix row %d: %s\n  what happened: %s\n  server logged: "
          "%s\n  other rooms:   %s\n",
          n, fault, happened, logged, others);
}

/* The healthy rooms of a row: a gk-bot of 2 rooms x 2 players. */
static void others_check(e2e_proc *bot, char *out, size_t cap) {
  char codes[2][17];
  uint64_t hashes[2];
  int n = e2e_check_bot(bot, 2, codes, hashes);
  snprintf(out, cap, "%d rooms (%s, %s) finished, 0 desyncs", n, codes[0],
           codes[1]);
}

/* A string field of the last `event` line, into buf. */
static const char *last_str(const e2e_proc *srv, const char *event,
                            const char *key, char *buf, size_t cap) {
  cJSON *j = e2e_last_event(srv, event);
  const cJSON *v = j ? cJSON_GetObjectItem(j, key) : NULL;
  snprintf(buf, cap, "%s", cJSON_IsString(v) ? v->valuestring : "(none)");
  cJSON_Delete(j);
  return buf;
}

/* Log lines of the server that contain `needle`. */
static int count_lines(const e2e_proc *srv, const char *needle) {
  FILE *f = fopen(srv->out, "r");
  char line[8192];
  int n = 0;
  while (f && fgets(line, sizeof(line), f))
    if (strstr(line, needle)) n++;
  if (f) fclose(f);
  return n;
}

/* The rooms whose match started after the first `starts` match_start
 * lines: the `n` rooms of one row (fails the test if there are fewer). */
static void row_rooms(const e2e_proc *srv, int starts, int n,
                      char (*codes)[17]) {
  int got = e2e_event_rooms(srv, "match_start", starts, codes, n);
  cr_assert_geq(got, n, "the row started %d of its %d matches", got, n);
}

/* Waits until each of the row's rooms has its replay_written line. The
 * recording is finished on the thread pool after match_end (and after the
 * bots exit), so without this wait the row's last replay_written could be
 * logged while the next row has begun: a row counting the log's
 * replay_written lines from its start would then count one too many. */
static void row_settle(const e2e_proc *srv, int starts, int n) {
  char codes[8][17];
  row_rooms(srv, starts, n, codes);
  for (int waited = 0; waited <= 10000; waited += 20) {
    if (e2e_count_room_events(srv, "replay_written", (const char(*)[17])codes,
                              n) == n)
      return;
    e2e_sleep_ms(20);
  }
  cr_assert_fail("the row's %d recordings were not all finished in 10 s", n);
}

/* Row 1: a bot process is killed with SIGKILL mid-match. */
static void row_bot_killed(const e2e_dir *d, e2e_proc *srv, uint16_t port) {
  int ends = e2e_count_events(srv, "match_end");
  int starts = e2e_count_events(srv, "match_start");
  e2e_proc ok, victim;
  e2e_start_bot(&ok, d, "r1-others", port, "2", "2", "480");
  e2e_start_bot(&victim, d, "r1-victim", port, "1", "2", "1000000");
  cr_assert(e2e_wait_events(srv, "match_start", starts + 3, 10000));
  e2e_sleep_ms(500);
  kill(victim.pid, SIGKILL);
  cr_assert(e2e_wait(&victim, 5000));
  char others[128];
  others_check(&ok, others, sizeof(others));
  cr_assert(e2e_wait_events(srv, "match_end", ends + 3, 10000),
            "the killed bot's match did not end");
  char why[256], logged[512];
  int left = count_lines(srv, "\"event\":\"match_end\"") -
             count_lines(srv, "\"reason\":\"host\"");
  cr_assert_eq(left, 1, "the killed bot's match ends because all left");
  snprintf(why, sizeof(why),
           "gk-bot (1 room) got SIGKILL 0.5 s into its match (exit %d); "
           "its peers went silent",
           victim.status);
  snprintf(logged, sizeof(logged),
           "%d x player_left, %d x match_end reason all_left, "
           "replay_written for it",
           e2e_count_events(srv, "player_left"),
           count_lines(srv, "\"reason\":\"all_left\""));
  row_settle(srv, starts, 3);
  row(1, "a bot is killed with SIGKILL", why, logged, others);
}

/* Row 2: a peer sends every INPUT twice and an older one after it. */
static void row_dup_inputs(const e2e_dir *d, e2e_proc *srv, uint16_t port) {
  int starts = e2e_count_events(srv, "match_start");
  e2e_proc ok, dup;
  const char *chaos[] = {"--chaos", "dup", NULL};
  e2e_start_bot(&ok, d, "r2-others", port, "2", "2", "480");
  e2e_start_bot_x(&dup, d, "r2-dup", port, "1", "2", "480", chaos);
  char others[128], codes[1][17], happened[256], logged[512];
  uint64_t hashes[1];
  e2e_check_bot(&dup, 1, codes, hashes);
  others_check(&ok, others, sizeof(others));
  cJSON *sum = e2e_read_json(dup.out);
  double extra = cJSON_GetObjectItem(sum, "chaos_extra_datagrams")->valuedouble;
  cJSON_Delete(sum);
  cr_assert_gt(extra, 400, "the chaos peer did not send its extra inputs");
  snprintf(happened, sizeof(happened),
           "room %s: player 1 sent %.0f extra INPUT datagrams (each twice, "
           "and the one before it again); the room finished, 0 desyncs",
           codes[0], extra);
  snprintf(logged, sizeof(logged),
           "match_end for the room; no desync (%d desync lines in all)",
           e2e_count_events(srv, "desync"));
  cr_assert_eq(e2e_count_events(srv, "desync"), 0);
  row_settle(srv, starts, 3);
  row(2, "a peer sends its inputs twice and out of order", happened, logged,
      others);
}

/* Row 3: a peer's clock jumps: its process stops for 0.9 s. */
static void row_clock_jump(const e2e_dir *d, e2e_proc *srv, uint16_t port) {
  int starts = e2e_count_events(srv, "match_start");
  int stalls = e2e_count_events(srv, "stall");
  e2e_proc ok, jump;
  e2e_start_bot(&jump, d, "r3-jump", port, "1", "2", "600");
  cr_assert(e2e_wait_events(srv, "match_start", starts + 1, 10000));
  e2e_start_bot(&ok, d, "r3-others", port, "2", "2", "480");
  e2e_sleep_ms(300);
  kill(jump.pid, SIGSTOP);
  e2e_sleep_ms(900);
  kill(jump.pid, SIGCONT);
  char others[128], codes[1][17], happened[256], logged[256];
  uint64_t hashes[1];
  e2e_check_bot(&jump, 1, codes, hashes);
  others_check(&ok, others, sizeof(others));
  int new_stalls = e2e_count_events(srv, "stall") - stalls;
  cr_assert_geq(new_stalls, 1, "the stopped peer was not noticed");
  snprintf(happened, sizeof(happened),
           "room %s: both peers' process stopped for 0.9 s, then continued "
           "with its clock 0.9 s past its schedule; the room finished, 0 "
           "desyncs",
           codes[0]);
  snprintf(logged, sizeof(logged), "%d x stall (awaited mask %.0f)", new_stalls,
           e2e_stat(srv, "stall", "awaited_mask"));
  row_settle(srv, starts, 3);
  row(3, "a peer's clock jumps", happened, logged, others);
}

/* Row 4: SIGTERM while every room's recording is being flushed. */
static void row_sigterm(const e2e_dir *d, e2e_proc *srv, uint16_t port) {
  int starts = e2e_count_events(srv, "match_start");
  e2e_proc bot;
  e2e_start_bot(&bot, d, "r4-bot", port, "3", "2", "1000000");
  cr_assert(e2e_wait_events(srv, "match_start", starts + 3, 10000));
  char codes[3][17];
  row_rooms(srv, starts, 3, codes);
  e2e_sleep_ms(700);
  e2e_stop_server(srv); /* SIGTERM; exit 0 and "stopped" are checked */
  /* the row's own rooms, by code: each one's recording is finished */
  const char(*mine)[17] = (const char(*)[17])codes;
  cr_assert_eq(e2e_count_room_events(srv, "replay_written", mine, 3), 3,
               "every recording is finished");
  cr_assert_eq(e2e_count_room_events(srv, "match_end", mine, 3), 3);
  cr_assert_eq(count_lines(srv, "\"reason\":\"shutdown\""), 3);
  double flushes = e2e_stat(srv, "stopped", "replay_flushes");
  cr_assert_gt(flushes, 20, "flush jobs ran while the matches played");
  cr_assert_eq(e2e_stat(srv, "stopped", "replays_failed"), 0);
  cr_assert(e2e_wait(&bot, 20000) || (e2e_kill(&bot), 0));
  char happened[256], logged[256];
  snprintf(happened, sizeof(happened),
           "SIGTERM 0.7 s into 3 matches, their recordings flushed every "
           "10 ms on the thread pool (%.0f flush jobs in all)",
           flushes);
  snprintf(logged, sizeof(logged),
           "signal, shutdown, 3 x match_end reason shutdown, 3 x "
           "replay_written, stopped (exit 0)");
  row(4, "the server gets SIGTERM during replay writes", happened, logged,
      "the 3 matches ended by the shutdown, 0 desyncs; rows 1-4: every "
      "replay verifies (below)");
}

/* A disk fault is logged once: an error-level replay_failed line only
 * begins a fault, replay_resumed only ends one. With both rooms at the
 * edge of a full disk, one room's dropped .tmp can give a flush of the
 * other room room to succeed (a real resume, logged) before that room
 * fails too; so a row may see two faults, never two lines for one.
 * Returns the number of faults (at least 1). */
static int faults_logged_once(const e2e_proc *srv) {
  FILE *f = fopen(srv->out, "r");
  cr_assert_not_null(f, "%s", srv->out);
  char line[8192];
  int in_fault = 0, faults = 0;
  while (fgets(line, sizeof(line), f)) {
    if (strstr(line, "\"event\":\"replay_failed\"")) {
      cr_assert(!in_fault, "a second replay_failed line in one fault: %s",
                line);
      in_fault = 1;
      faults++;
    } else if (strstr(line, "\"event\":\"replay_resumed\"")) {
      cr_assert(in_fault, "replay_resumed outside a fault: %s", line);
      in_fault = 0;
    }
  }
  fclose(f);
  cr_assert_geq(faults, 1, "the full disk was not logged");
  cr_assert(!in_fault, "the last fault did not end in replay_resumed");
  return faults;
}

/* Row 5: the replay disk fills; then space comes back. */
static void row_disk_full(void) {
  e2e_dir d;
  e2e_dir_make(&d);
  cr_assert_eq(mkdir(d.replays, 0755), 0);
  if (mount("tmpfs", d.replays, "tmpfs", 0, "size=256k") != 0) {
    fprintf(stderr,
            "fault matrix row 5: the replay disk fills: SKIPPED: cannot "
            "mount a tmpfs here (%s; needs root or CAP_SYS_ADMIN)\n",
            strerror(errno));
    e2e_dir_remove(&d);
    return;
  }
  /* fill it but for 8 KiB: a header and a flush or two fit */
  char filler[400];
  snprintf(filler, sizeof(filler), "%s/filler", d.replays);
  struct statvfs vfs;
  cr_assert_eq(statvfs(d.replays, &vfs), 0);
  size_t room = (size_t)vfs.f_bavail * vfs.f_frsize - 8192;
  char *zeros = calloc(1, room);
  int fd = open(filler, O_WRONLY | O_CREAT, 0644);
  cr_assert_eq(write(fd, zeros, room), (ssize_t)room);
  close(fd);
  free(zeros);

  e2e_proc srv, ok, later;
  uint16_t port;
  e2e_start_server_x(&srv, &d, "\"flush_ms\":50", NULL, &port);
  e2e_start_bot(&ok, &d, "r5-bots", port, "2", "2", "600");
  char others[128], reason[128], resumed[160], logged[512];
  others_check(&ok, others, sizeof(others));
  cr_assert(e2e_wait_events(&srv, "replay_failed", 1, 5000));
  last_str(&srv, "replay_failed", "errno", reason, sizeof(reason));
  cr_assert_str_eq(reason, "No space left on device");
  /* space comes back: a new room records again */
  cr_assert_eq(unlink(filler), 0);
  e2e_start_bot(&later, &d, "r5-later", port, "1", "2", "240");
  char codes[1][17];
  uint64_t hashes[1];
  e2e_check_bot(&later, 1, codes, hashes);
  cr_assert(e2e_wait_events(&srv, "replay_resumed", 1, 5000));
  snprintf(resumed, sizeof(resumed), "replay_resumed (recordings_lost %.0f)",
           e2e_stat(&srv, "replay_resumed", "recordings_lost"));
  e2e_stop_server(&srv);
  double errors = e2e_stat(&srv, "stopped", "replay_disk_errors");
  cr_assert_geq(errors, 1);
  int faults = faults_logged_once(&srv);
  char rc[8][17];
  uint64_t rh[8];
  int verified = e2e_verify_replays(d.replays, rc, rh, 8);
  cr_assert_geq(verified, 1, "the room after the fault was recorded");
  snprintf(logged, sizeof(logged),
           "%d x replay_failed (error level, errno \"%s\"), each "
           "starting a fault; %s, stopped "
           "replay_disk_errors %.0f; %d replay(s) written and verified",
           faults, reason, resumed, errors, verified);
  row(5, "the replay disk fills (256 KiB tmpfs, 8 KiB left)",
      "the 2 matches played on while their recordings hit ENOSPC and were "
      "dropped (the .tmp removed); then the filler was deleted and a new "
      "room was recorded",
      logged, others);
  umount2(d.replays, MNT_DETACH);
  e2e_dir_remove(&d);
}

Test(server_faults,
     the_fault_matrix_leaves_every_other_room_in_sync_with_a_replay,
     .timeout = 120) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv;
  uint16_t port;
  e2e_start_server_x(&srv, &d, "\"flush_ms\":10",
                     "\"stall\":{\"notice_ms\":300},"
                     "\"timing\":{\"peer_timeout_ms\":2500}",
                     &port);
  row_bot_killed(&d, &srv, port);
  row_dup_inputs(&d, &srv, port);
  row_clock_jump(&d, &srv, port);
  row_sigterm(&d, &srv, port);
  cr_assert_eq(e2e_count_events(&srv, "desync"), 0);
  char codes[16][17];
  uint64_t hashes[16];
  int n = e2e_verify_replays(d.replays, codes, hashes, 16);
  cr_assert_eq(n, 3 + 3 + 3 + 3, "rows 1-4: one verified replay per room");
  fprintf(stderr, "fault matrix rows 1-4: %d replays, every one verified\n", n);
  e2e_dir_remove(&d);
  row_disk_full();
}

/* --- crash recovery --------------------------------------------------------
 */

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  static uint8_t buf[1 << 16];
  *len = fread(buf, 1, sizeof(buf), f);
  cr_assert(feof(f), "%s is larger than %zu bytes", path, sizeof(buf));
  fclose(f);
  uint8_t *copy = malloc(*len);
  cr_assert_not_null(copy);
  memcpy(copy, buf, *len);
  return copy;
}

/* The fewest steps a copy of any .gkr.tmp in `dir` recovers to right now
 * (what a crash at this moment would keep), or -1 if there is none. The
 * copy may catch a flush half written: recovery then drops its torn tail,
 * so this is a lower bound. */
static long flushed_steps(const e2e_dir *d) {
  DIR *dir = opendir(d->replays);
  if (!dir) return -1;
  long fewest = -1;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 8 || strcmp(e->d_name + len - 8, ".gkr.tmp") != 0) continue;
    char from[600], snap[600], out[600];
    snprintf(from, sizeof(from), "%s/%s", d->replays, e->d_name);
    snprintf(snap, sizeof(snap), "%s/snap.gkr.tmp", d->path);
    snprintf(out, sizeof(out), "%s/snap.gkr", d->path);
    size_t n = 0;
    uint8_t *bytes = slurp(from, &n);
    FILE *f = fopen(snap, "wb");
    int ok = f && fwrite(bytes, 1, n, f) == n;
    if (f) ok = (fclose(f) == 0) && ok;
    free(bytes);
    gk_replay_recovery rec;
    long steps = 0;
    if (ok && gk_replay_recover_new(snap, out, NULL, &rec) == GK_REPLAY_OK)
      steps = (long)rec.steps;
    (void)remove(snap);
    (void)remove(out);
    if (fewest < 0 || steps < fewest) fewest = steps;
  }
  closedir(dir);
  return fewest;
}

Test(server_faults,
     a_killed_server_recovers_its_recordings_at_start_and_keeps_damage) {
  e2e_dir d;
  e2e_dir_make(&d);
  e2e_proc srv, bot;
  uint16_t port;
  e2e_start_server_x(&srv, &d, "\"flush_ms\":100", NULL, &port);
  e2e_start_bot(&bot, &d, "bot", port, "2", "2", "1000000");
  cr_assert(e2e_wait_events(&srv, "match_start", 2, 10000));
  /* killed once both recordings hold 100 steps on disk (a flush every
   * 100 ms at 120 Hz: about a second, less than one 256-step block), not
   * after a fixed time: the step pace and the disk are the machine's */
  long seen = -1;
  for (int waited = 0; waited < 20000 && seen < 100; waited += 20) {
    e2e_sleep_ms(20);
    seen = flushed_steps(&d);
  }
  cr_assert_geq(seen, 100, "flushes every 100 ms put 100 steps on disk");
  kill(srv.pid, SIGKILL);
  cr_assert(e2e_wait(&srv, 5000));
  e2e_kill(&bot);
  char junk[400];
  snprintf(junk, sizeof(junk), "%s/junk.gkr.tmp", d.replays);
  e2e_write(&d, "replays/junk.gkr.tmp", "not a replay", junk, sizeof(junk));

  e2e_start_server_x(&srv, &d, "\"flush_ms\":100", NULL, &port);
  cr_assert_eq(e2e_count_events(&srv, "replay_recovered"), 2);
  cr_assert_eq(e2e_count_events(&srv, "replay_unrecoverable"), 1);
  cJSON *rec = e2e_last_event(&srv, "replay_recovered");
  double steps = cJSON_GetObjectItem(rec, "steps")->valuedouble;
  int dropped_known = cJSON_IsNumber(cJSON_GetObjectItem(rec, "bytes_dropped"));
  cJSON_Delete(rec);
  cr_assert_geq(steps, seen, "what was flushed before the kill is kept");
  cr_assert(dropped_known);
  char damaged[400];
  snprintf(damaged, sizeof(damaged), "%s/junk.gkr.damaged", d.replays);
  struct stat st;
  cr_assert_eq(stat(damaged, &st), 0, "the damaged leftover was kept");
  cr_assert_neq(stat(junk, &st), 0);
  char codes[4][17];
  uint64_t hashes[4];
  cr_assert_eq(e2e_verify_replays(d.replays, codes, hashes, 4), 2);
  /* the folder goes missing while the server runs: the next room makes
   * it again and is recorded */
  char moved[400];
  snprintf(moved, sizeof(moved), "%s/old-replays", d.path);
  cr_assert_eq(rename(d.replays, moved), 0);
  e2e_start_bot(&bot, &d, "bot2", port, "1", "2", "240");
  e2e_check_bot(&bot, 1, codes, hashes);
  cr_assert(e2e_wait_events(&srv, "replay_written", 1, 5000));
  cr_assert_eq(e2e_verify_replays(d.replays, codes, hashes, 4), 1);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_recovered"), 2);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_damaged"), 1);
  e2e_dir_remove(&d);
}

/* --- leftovers whose names are taken ---------------------------------------
 */

#define GOLDEN_PP                                                              \
  GK_SOURCE_ROOT "/tests/data/replays/push-puzzle-xsokoban0001.gkr"

static void put_file(const char *dir, const char *name, const void *bytes,
                     size_t len) {
  char path[400];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  cr_assert_eq(fwrite(bytes, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
}

/* dir/name holds exactly `len` bytes of `want`. */
static void same_file(const char *dir, const char *name, const void *want,
                      size_t len) {
  char path[400];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  size_t n;
  uint8_t *got = slurp(path, &n);
  cr_assert(n == len && memcmp(got, want, len) == 0,
            "%s: %zu bytes, not the %zu it held", name, n, len);
  free(got);
}

static int has_file(const char *dir, const char *name) {
  char path[400];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

Test(server_faults,
     a_leftover_whose_replay_exists_is_recovered_under_another_name) {
  e2e_dir d;
  e2e_dir_make(&d);
  cr_assert_eq(mkdir(d.replays, 0755), 0);
  size_t len;
  uint8_t *golden = slurp(GOLDEN_PP, &len);
  static const char published[] = "the replay published as m.gkr";
  put_file(d.replays, "m.gkr", published, sizeof(published));
  put_file(d.replays, "m.gkr.tmp", golden, len - 40); /* cut short */
  e2e_proc srv;
  uint16_t port;
  e2e_start_server_x(&srv, &d, NULL, NULL, &port);
  same_file(d.replays, "m.gkr", published, sizeof(published));
  cr_assert(!has_file(d.replays, "m.gkr.tmp"));
  cr_assert(!has_file(d.replays, "m.gkr.tmp.damaged") &&
            !has_file(d.replays, "m.gkr.damaged"));
  cr_assert_eq(e2e_count_events(&srv, "replay_unrecoverable"), 0);
  cJSON *rec = e2e_last_event(&srv, "replay_recovered");
  cr_assert_not_null(rec, "no replay_recovered line");
  const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "path"));
  const char *taken =
      cJSON_GetStringValue(cJSON_GetObjectItem(rec, "name_taken"));
  char want[400];
  snprintf(want, sizeof(want), "%s/m.recovered.gkr", d.replays);
  cr_assert(path && strcmp(path, want) == 0, "recovered to %s",
            path ? path : "(none)");
  snprintf(want, sizeof(want), "%s/m.gkr", d.replays);
  cr_assert(taken && strcmp(taken, want) == 0, "name_taken %s",
            taken ? taken : "(none)");
  cJSON_Delete(rec);
  /* the recovered one is a whole replay, cut short where the .tmp was */
  gk_replay r;
  snprintf(want, sizeof(want), "%s/m.recovered.gkr", d.replays);
  cr_assert_eq(gk_replay_open_file(&r, want), 0, "%s", r.damage.what);
  cr_assert(r.complete && r.cut_short);
  gk_replay_close(&r);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_recovered"), 1);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_damaged"), 0);
  free(golden);
  e2e_dir_remove(&d);
}

Test(server_faults, a_damaged_leftover_never_replaces_an_earlier_damaged_one) {
  e2e_dir d;
  e2e_dir_make(&d);
  cr_assert_eq(mkdir(d.replays, 0755), 0);
  static const char earlier[] = "moved aside at an earlier start";
  static const char junk[] = "not a replay either";
  put_file(d.replays, "m.gkr.damaged", earlier, sizeof(earlier));
  put_file(d.replays, "m.gkr.tmp", junk, sizeof(junk));
  e2e_proc srv;
  uint16_t port;
  e2e_start_server_x(&srv, &d, NULL, NULL, &port);
  same_file(d.replays, "m.gkr.damaged", earlier, sizeof(earlier));
  same_file(d.replays, "m.gkr.damaged.1", junk, sizeof(junk));
  cr_assert(!has_file(d.replays, "m.gkr.tmp"));
  cJSON *ev = e2e_last_event(&srv, "replay_unrecoverable");
  cr_assert_not_null(ev, "no replay_unrecoverable line");
  const char *to = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "moved_to"));
  char want[400];
  snprintf(want, sizeof(want), "%s/m.gkr.damaged.1", d.replays);
  cr_assert(to && strcmp(to, want) == 0, "moved to %s", to ? to : "(none)");
  cJSON_Delete(ev);
  e2e_stop_server(&srv);
  cr_assert_eq(e2e_stat(&srv, "stopped", "replays_damaged"), 1);
  e2e_dir_remove(&d);
}

/* gk-server reads SIGTERM from a signalfd, blocked in every thread, so a
 * signal sent the moment it logs "listening" waits for the loop instead
 * of depending on an asynchronous handler (with uv_signal, one start in
 * about forty under ThreadSanitizer lost it and never stopped, after a
 * start that had moved a damaged leftover aside, as here). */
Test(server_faults, a_sigterm_sent_as_soon_as_it_listens_is_never_lost) {
  static const char junk[] = "not a replay";
  for (int i = 0; i < 20; i++) {
    e2e_dir d;
    e2e_dir_make(&d);
    cr_assert_eq(mkdir(d.replays, 0755), 0);
    put_file(d.replays, "m.gkr.tmp", junk, sizeof(junk));
    e2e_proc srv;
    uint16_t port;
    e2e_start_server(&srv, &d, NULL, &port);
    e2e_stop_server(&srv); /* within 15 s, exit 0, one "stopped" line */
    cr_assert_eq(e2e_count_events(&srv, "signal"), 1, "start %d", i);
    e2e_dir_remove(&d);
  }
}
