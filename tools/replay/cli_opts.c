/* cli_opts.c: gk-replay's option parser and text file reader (see
 * gk_replay_cli_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gk_replay_cli_internal.h"

/* Parses argv[first..] into opts and positionals. Returns 0 or
 * GK_CLI_INVALID with a message. */
int gkr_parse_opts(const char *cmd, int argc, char **argv, int first,
                   const gkr_opt *opts, const char **pos, int *npos, int maxpos,
                   FILE *err) {
  *npos = 0;
  int only_pos = 0;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (!only_pos && strcmp(a, "--") == 0) {
      only_pos = 1;
      continue;
    }
    if (!only_pos && a[0] == '-' && a[1] != '\0') {
      const char *eq = strchr(a, '=');
      size_t n = eq != NULL ? (size_t)(eq - a) : strlen(a);
      const gkr_opt *o = NULL;
      for (const gkr_opt *p = opts; p->name != NULL; p++)
        if (strlen(p->name) == n && strncmp(p->name, a, n) == 0) o = p;
      if (o == NULL) {
        fprintf(err,
                "gk-replay %s: unknown option '%.*s' (see gk-replay %s "
                "--help)\n",
                cmd, (int)n, a, cmd);
        return GK_CLI_INVALID;
      }
      if (!o->takes_value) {
        if (eq != NULL) {
          fprintf(err, "gk-replay %s: option %s takes no value\n", cmd,
                  o->name);
          return GK_CLI_INVALID;
        }
        *o->flag = 1;
        continue;
      }
      if (eq != NULL) {
        *o->value = eq + 1;
      } else if (i + 1 < argc) {
        *o->value = argv[++i];
      } else {
        fprintf(err, "gk-replay %s: option %s needs a value\n", cmd, o->name);
        return GK_CLI_INVALID;
      }
      continue;
    }
    if (*npos >= maxpos) {
      fprintf(err,
              "gk-replay %s: unexpected argument '%s' (see gk-replay %s "
              "--help)\n",
              cmd, a, cmd);
      return GK_CLI_INVALID;
    }
    pos[(*npos)++] = a;
  }
  return 0;
}

/* Reads a whole text file (at most `max` bytes) into a NUL-terminated
 * buffer. Returns NULL with a message. */
char *gkr_read_text(const char *path, size_t max, size_t *len, char *msg,
                    size_t msglen) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(msg, msglen, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf != NULL) {
    if (cap - n < 2) {
      if (cap > max) {
        free(buf);
        buf = NULL;
        snprintf(msg, msglen, "'%s' is larger than %zu bytes", path, max);
        break;
      }
      char *p = realloc(buf, cap * 2);
      if (p == NULL) {
        free(buf);
        buf = NULL;
        snprintf(msg, msglen, "out of memory reading '%s'", path);
        break;
      }
      buf = p;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        free(buf);
        buf = NULL;
        snprintf(msg, msglen, "read error on '%s'", path);
      }
      break;
    }
  }
  fclose(f);
  if (buf != NULL && n > max) {
    free(buf);
    snprintf(msg, msglen, "'%s' is larger than %zu bytes", path, max);
    return NULL;
  }
  if (buf != NULL) {
    buf[n] = '\0';
    *len = n;
  } else if (msg[0] == '\0') {
    snprintf(msg, msglen, "out of memory reading '%s'", path);
  }
  return buf;
}
