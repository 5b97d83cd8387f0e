/* replay_headers.c: the forged-header corpus (tests/data/replays/headers)
 * read by gk-replay's side: src/replay's reader with cJSON, then
 * gk_replay_verify. Each NAME.header is a header block's exact text; it
 * replaces the header of a base replay (tests/data/replays/
 * survivors-3p-40steps.gkr) and the block is sealed again (its XXH3-64
 * made right, as a forger would), so only the text decides.
 *
 *   replay_headers BASE DIR               TAP: each file's verdict line
 *                                         equals DIR/verdicts.txt's
 *   replay_headers BASE DIR --print       prints the lines (to review and
 *                                         write verdicts.txt)
 *   replay_headers BASE DIR --write OUT [STAMP]
 *                                         writes OUT/NAME.gkr for the
 *                                         browser side
 *
 * A verdict line (tab-separated) is: name, gk-replay verify's status and
 * message, then the header's values as the reader holds them ("-" when it
 * refused the header). web/gamekit/test/replay_headers.mjs computes the
 * same line with replay.js (JSON.parse) over the written files and checks
 * it against the same verdicts.txt: one verdict, the same values. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gk_replay.h"
#include "gk_state.h"

#define LINE_MAX_ 4096

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  uint8_t *b = malloc(cap);
  size_t got;
  while (b != NULL && (got = fread(b + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *nb = realloc(b, cap *= 2);
      if (nb == NULL) free(b);
      b = nb;
    }
  }
  fclose(f);
  *len = n;
  return b;
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* The base replay with its header payload replaced by text, the header
 * block sealed again (tools/replay/FORMAT.md). */
static uint8_t *forge(const uint8_t *base, size_t blen, const uint8_t *text,
                      size_t tlen, size_t *out_len) {
  size_t hpos = 16, plen = le32(base + hpos + 8);
  size_t rest = hpos + 12 + plen + 8;
  size_t n = hpos + 12 + tlen + 8 + (blen - rest);
  uint8_t *b = malloc(n);
  if (b == NULL) return NULL;
  memcpy(b, base, hpos + 12);
  for (int i = 0; i < 4; i++) b[hpos + 8 + i] = (uint8_t)(tlen >> (8 * i));
  if (tlen > 0) memcpy(b + hpos + 12, text, tlen);
  uint64_t h = gk_hash_bytes(b + hpos, 12 + tlen);
  for (int i = 0; i < 8; i++) b[hpos + 12 + tlen + i] = (uint8_t)(h >> (8 * i));
  memcpy(b + hpos + 12 + tlen + 8, base + rest, blen - rest);
  *out_len = n;
  return b;
}

/* Appends s, bytes below 0x20 and backslashes as \xHH (as the .mjs). */
static void put_escaped(char *line, size_t cap, const char *s) {
  size_t n = strlen(line);
  for (; *s != '\0' && n + 5 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == '\\')
      n += (size_t)snprintf(line + n, cap - n, "\\x%02x", c);
    else
      line[n++] = (char)c;
  }
  line[n] = '\0';
}

static const char *status_name(int s) {
  return s == GK_REPLAY_OK         ? "ok"
         : s == GK_REPLAY_MISMATCH ? "mismatch"
                                   : "invalid";
}

/* The verdict line of one forged file, as the native side reads it. */
static void verdict_line(const char *name, const uint8_t *b, size_t len,
                         char *line, size_t cap) {
  gk_replay r;
  gk_replay_open_bytes(&r, b, len);
  gk_replay_verdict v;
  gk_replay_verify(&r, NULL, NULL, NULL, &v);
  snprintf(line, cap, "%s\t%s\t", name, status_name(v.status));
  put_escaped(line, cap, v.message);
  size_t n = strlen(line);
  if (!r.header_ok) {
    snprintf(line + n, cap - n, "\t-");
  } else {
    snprintf(line + n, cap - n,
             "\tgenre=%s version=%" PRIu32 " seed=%" PRIu64 " players=%" PRIu32
             " input_size=%" PRIu32 " step=%" PRIu32 "/%" PRIu32 " lockstep=",
             r.genre, r.genre_version, r.seed, r.players, r.input_size,
             r.step_seconds.num, r.step_seconds.den);
    n = strlen(line);
    if (r.has_lockstep)
      snprintf(line + n, cap - n, "%" PRIu32 "/%" PRIu32, r.input_delay,
               r.lead);
    else
      snprintf(line + n, cap - n, "none");
    n = strlen(line);
    snprintf(line + n, cap - n, " origin=");
    put_escaped(line, cap, r.origin != NULL ? r.origin : "(none)");
  }
  gk_replay_close(&r);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The corpus's names (NAME of NAME.header), sorted; the count in *n. */
static char **corpus_names(const char *dir, size_t *n) {
  DIR *d = opendir(dir);
  if (d == NULL) return NULL;
  char **names = NULL;
  size_t cap = 0;
  *n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l <= 7 || strcmp(e->d_name + l - 7, ".header") != 0) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (nn == NULL) break;
      names = nn;
    }
    names[*n] = strndup(e->d_name, l - 7);
    if (names[*n] != NULL) (*n)++;
  }
  closedir(d);
  if (*n > 0) qsort(names, *n, sizeof *names, by_name);
  return names;
}

/* verdicts.txt's line for `name` into want; 0 if there is none. */
static int expected(const char *verdicts, const char *name, char *want,
                    size_t cap) {
  size_t l = strlen(name);
  for (const char *p = verdicts; *p != '\0';) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > l && p[l] == '\t' && strncmp(p, name, l) == 0 && n < cap) {
      memcpy(want, p, n);
      want[n] = '\0';
      return 1;
    }
    p += n + (e ? 1 : 0);
  }
  return 0;
}

static int run(const uint8_t *base, size_t blen, const char *dir, int mode,
               const char *out) {
  size_t n = 0;
  char **names = corpus_names(dir, &n);
  if (names == NULL || n == 0) {
    fprintf(stderr, "replay_headers: no .header files in %s\n", dir);
    return 2;
  }
  char path[4096], line[LINE_MAX_], want[LINE_MAX_];
  size_t vlen = 0;
  snprintf(path, sizeof path, "%s/verdicts.txt", dir);
  uint8_t *verdicts = mode == 0 ? slurp(path, &vlen) : NULL;
  if (mode == 0 && verdicts == NULL) {
    fprintf(stderr, "replay_headers: cannot read %s\n", path);
    return 2;
  }
  if (verdicts != NULL) verdicts[vlen] = 0; /* slurp leaves room */
  if (mode == 0) printf("1..%zu\n", n);
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    size_t tlen = 0, flen = 0;
    snprintf(path, sizeof path, "%s/%s.header", dir, names[i]);
    uint8_t *text = slurp(path, &tlen);
    uint8_t *b = text ? forge(base, blen, text, tlen, &flen) : NULL;
    if (b == NULL) {
      fprintf(stderr, "replay_headers: cannot read %s\n", path);
      return 2;
    }
    if (mode == 2) {
      snprintf(path, sizeof path, "%s/%s.gkr", out, names[i]);
      FILE *f = fopen(path, "wb");
      if (f == NULL || fwrite(b, 1, flen, f) != flen || fclose(f) != 0) {
        fprintf(stderr, "replay_headers: cannot write %s\n", path);
        return 2;
      }
    } else {
      verdict_line(names[i], b, flen, line, sizeof line);
      if (mode == 1) {
        printf("%s\n", line);
      } else if (!expected((char *)verdicts, names[i], want, sizeof want) ||
                 strcmp(want, line) != 0) {
        failed = 1;
        printf("not ok %zu - %s\n# verdicts.txt: %s\n# gk-replay:    %s\n",
               i + 1, names[i], want, line);
      } else {
        printf("ok %zu - %s\n", i + 1, names[i]);
      }
    }
    free(b);
    free(text);
    free(names[i]);
  }
  free(names);
  free(verdicts);
  return failed;
}

int main(int argc, char **argv) {
  int mode = argc == 4 && strcmp(argv[3], "--print") == 0   ? 1
             : argc >= 5 && strcmp(argv[3], "--write") == 0 ? 2
             : argc == 3                                    ? 0
                                                            : -1;
  if (mode < 0) {
    fprintf(stderr,
            "usage: replay_headers BASE DIR [--print | --write OUT [STAMP]]\n");
    return 2;
  }
  size_t blen = 0;
  uint8_t *base = slurp(argv[1], &blen);
  if (base == NULL || blen < 16 + 12 + 8 ||
      (size_t)le32(base + 24) + 16 + 12 + 8 > blen) {
    fprintf(stderr, "replay_headers: %s is not a base replay\n", argv[1]);
    return 2;
  }
  if (mode == 2 && mkdir(argv[4], 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "replay_headers: cannot make %s\n", argv[4]);
    return 2;
  }
  int rc = run(base, blen, argv[2], mode, mode == 2 ? argv[4] : NULL);
  if (rc == 0 && mode == 2 && argc == 6) {
    FILE *f = fopen(argv[5], "w");
    if (f == NULL || fclose(f) != 0) rc = 2;
  }
  free(base);
  return rc;
}
