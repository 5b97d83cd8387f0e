/* e2e_keep.c: what a failing end-to-end test leaves behind, and where.
 *
 * Criterion runs each test in a child of its runner process. The child
 * notes every folder it makes (e2e_dir_make) and every process it spawns
 * (e2e_spawn) in a list file that the runner names in GK_E2E_LIST before
 * any test starts. After each test the runner's hook reads the list:
 *   - a failed, crashed or timed-out test: its folders are moved under
 *     E2E_KEEP_ROOT (the build's meson-logs/e2e-kept), every non-empty
 *     file in them is named on stderr, and the last lines of each log (the
 * server's JSON log, every bot's stdout and stderr) are printed there too, so
 *     the failure message in meson's log explains itself even when the
 *     folder is gone; children it left running are killed first;
 *   - a passing test: nothing (it removed its folder itself).
 * Then the list is emptied for the next test.
 */
#define _GNU_SOURCE /* umount2 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

#ifndef E2E_KEEP_ROOT
#define E2E_KEEP_ROOT "/tmp/gk-e2e-kept"
#endif

enum { TAIL_LINES = 25 };

void e2e_keep_note(const char *kind, const char *what) {
  const char *list = getenv("GK_E2E_LIST");
  if (!list) return;
  FILE *f = fopen(list, "a");
  if (!f) return;
  fprintf(f, "%s %s\n", kind, what);
  fclose(f);
}

/* mkdir -p for the keep root (two or three levels at most). */
static void make_dirs(const char *path) {
  char buf[512];
  snprintf(buf, sizeof(buf), "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    (void)mkdir(buf, 0755);
    *p = '/';
  }
  (void)mkdir(buf, 0755);
}

/* The last TAIL_LINES lines of a file, on stderr, indented. */
static void print_tail(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  static char ring[TAIL_LINES][1024];
  int n = 0;
  while (fgets(ring[n % TAIL_LINES], sizeof(ring[0]), f)) n++;
  fclose(f);
  if (n == 0) return;
  int first = n > TAIL_LINES ? n - TAIL_LINES : 0;
  fprintf(stderr, "  --- %s (last %d of %d lines)\n", path, n - first, n);
  for (int i = first; i < n; i++) {
    const char *line = ring[i % TAIL_LINES];
    fprintf(stderr, "  | %s%s", line,
            line[strlen(line) - 1] == '\n' ? "" : "\n");
  }
}

/* Names every file of the kept folder and prints the logs' tails. */
static void report_folder(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || (S_ISREG(st.st_mode) && st.st_size == 0))
      continue; /* empty logs are not worth a line */
    fprintf(stderr, "  kept: %s (%lld bytes)\n", path, (long long)st.st_size);
    size_t len = strlen(e->d_name);
    int log = (len > 4 && (strcmp(e->d_name + len - 4, ".out") == 0 ||
                           strcmp(e->d_name + len - 4, ".err") == 0));
    if (log && S_ISREG(st.st_mode) && st.st_size > 0) print_tail(path);
  }
  closedir(d);
}

/* A child the test left running: killed if it is still one of ours. */
static void kill_leftover(pid_t pid) {
  char path[64], cmd[256] = "";
  snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
  fclose(f);
  cmd[n] = '\0';
  if (strstr(cmd, "gk-") == NULL) return;
  fprintf(stderr, "  killed a child left running: pid %d (%s)\n", (int)pid,
          cmd);
  kill(pid, SIGKILL);
}

/* rename(2) across file systems fails: copy the folder, then remove it. */
static int copy_tree(const char *from, const char *to, int err) {
  if (err != EXDEV) return 0;
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s' && rm -rf '%s'", from, to, from);
  return system(cmd) == 0;
}

/* A file system the test mounted inside its folder (a tmpfs for a full
 * disk) is copied out beside its mount point, then unmounted. */
static void unmount_inside(const char *dir) {
  FILE *f = fopen("/proc/self/mounts", "r");
  char line[1024], mnt[700];
  size_t n = strlen(dir);
  while (f && fgets(line, sizeof(line), f)) {
    if (sscanf(line, "%*s %699s", mnt) != 1) continue;
    if (strncmp(mnt, dir, n) != 0 || mnt[n] != '/') continue;
    char cmd[1600];
    snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s.contents'", mnt, mnt);
    if (system(cmd) == 0)
      fprintf(stderr, "  copied the mounted %s to %s.contents\n", mnt, mnt);
    (void)umount2(mnt, MNT_DETACH);
  }
  if (f) fclose(f);
}

static void keep(const char *suite, const char *name, const char *dir) {
  const char *base = strrchr(dir, '/');
  char to[768];
  struct stat st;
  if (stat(dir, &st) != 0) return; /* removed by the test: it passed there */
  make_dirs(E2E_KEEP_ROOT);
  snprintf(to, sizeof(to), "%s/%s.%s.%s", E2E_KEEP_ROOT, suite, name,
           base ? base + 1 : dir);
  if (rename(dir, to) != 0 && !copy_tree(dir, to, errno)) {
    fprintf(stderr, "  (could not move %s to %s)\n", dir, to);
    snprintf(to, sizeof(to), "%s", dir);
  }
  unmount_inside(to);
  fprintf(stderr, "e2e: %s::%s failed; its logs are kept in %s\n", suite, name,
          to);
  report_folder(to);
}

static void after_test(const struct criterion_test *t, int failed) {
  const char *list = getenv("GK_E2E_LIST");
  if (!list) return;
  FILE *f = fopen(list, "r");
  char line[600];
  while (f && fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    if (!failed) continue;
    if (strncmp(line, "pid ", 4) == 0) kill_leftover((pid_t)atoi(line + 4));
    if (strncmp(line, "dir ", 4) == 0) keep(t->category, t->name, line + 4);
  }
  if (f) fclose(f);
  f = fopen(list, "w"); /* empty for the next test */
  if (f) fclose(f);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  static char list[64];
  snprintf(list, sizeof(list), "/tmp/gk-e2e-list.%d", (int)getpid());
  FILE *f = fopen(list, "w");
  if (f) fclose(f);
  setenv("GK_E2E_LIST", list, 1);
}

ReportHook(POST_TEST)(struct criterion_test_stats *st) {
  int failed =
      st->test_status == CR_STATUS_FAILED || st->timed_out || st->crashed;
  after_test(st->test, failed);
}

ReportHook(TEST_CRASH)(struct criterion_test_stats *st) {
  after_test(st->test, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *st) {
  (void)st;
  const char *list = getenv("GK_E2E_LIST");
  if (list) (void)remove(list);
}
