/* driver.c: runs a fuzz target's LLVMFuzzerTestOneInput over every file in
 * the directories (or files) named on the command line, without libFuzzer.
 * This is how the seed corpora and past findings run as regression tests
 * in ordinary (gcc, ASan) builds. An empty corpus is an error. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      uint8_t *p = realloc(buf, cap * 2);
      if (p == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf == NULL) {
    fprintf(stderr, "%s: out of memory\n", path);
    return -1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) != 0) return 1;
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (d == NULL) {
      perror(argv[i]);
      return 1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (run_file(path) != 0) {
        closedir(d);
        return 1;
      }
      files++;
    }
    closedir(d);
  }
  printf("%d inputs ran without a finding\n", files);
  return files > 0 ? 0 : 1;
}
