/* gk_replay_cli.c: gk-replay verify | info | dump | record.
 *
 * Every command reads replays through the one bounded reader in
 * src/replay and runs them through gk_loop with { steps } budgets, the way
 * the server does. Output is plain text or, with --json, one JSON object
 * per file (cJSON). The state and HUD sample are rendered from the genre's
 * canonical writer: a gk_writer whose `field` callback sees every field's
 * name and value.
 *
 * Exit codes: 0 all good, 1 a hash mismatch, 2 a file that is not a valid
 * replay, bad input or a usage error (see gk_replay_cli.h).
 */
#include "gk_replay_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_config.h"
#include "gk_genres.h"
#include "gk_loop.h"
#include "gk_replay.h"
#include "gk_rng.h"
#if GK_HAVE_PUSH_PUZZLE
#include "gk_push_puzzle.h"
#endif

#define TEXT_FILE_MAX (16u << 20) /* levels, solutions, configs */
#define RECORD_STEPS_MAX 100000000ull
#define RENDER_DEPTH_MAX 32

/* ===================================================================== */
/* options                                                                 */

typedef struct opt {
  const char *name;   /* "--json" */
  int takes_value;
  const char **value; /* where a value goes */
  int *flag;          /* set to 1 when seen (for flags) */
} opt;

/* Parses argv[first..] into opts and positionals. Returns 0 or
 * GK_CLI_INVALID with a message. */
static int parse_opts(const char *cmd, int argc, char **argv, int first,
                      const opt *opts, const char **pos, int *npos, int maxpos,
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
      const opt *o = NULL;
      for (const opt *p = opts; p->name != NULL; p++)
        if (strlen(p->name) == n && strncmp(p->name, a, n) == 0)
          o = p;
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
      fprintf(err, "gk-replay %s: unexpected argument '%s' (see gk-replay %s "
              "--help)\n",
              cmd, a, cmd);
      return GK_CLI_INVALID;
    }
    pos[(*npos)++] = a;
  }
  return 0;
}

/* Strict decimal u64 (no sign, no spaces). */
static int parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0')
    return -1;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* Reads a whole text file (at most `max` bytes) into a NUL-terminated
 * buffer. Returns NULL with a message. */
static char *read_text(const char *path, size_t max, size_t *len, char *msg,
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

#if GK_HAVE_PUSH_PUZZLE
static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s != NULL ? s + 1 : path;
}
#endif

/* ===================================================================== */
/* rendering the canonical writer's fields                                 */

typedef struct text_render {
  gk_writer w; /* must be first */
  FILE *out;
  int depth;
  const char *indent0;
} text_render;

static void indent(text_render *t) {
  fputs(t->indent0, t->out);
  for (int i = 0; i < t->depth && i < RENDER_DEPTH_MAX; i++)
    fputs("  ", t->out);
}

static void text_field(gk_writer *w, gk_field_kind kind, const char *name,
                       uint64_t value, const uint8_t *bytes, size_t len) {
  text_render *t = (text_render *)w;
  if (name == NULL)
    name = "?";
  switch (kind) {
  case GK_FIELD_BEGIN:
    indent(t);
    if (value == UINT64_MAX)
      fprintf(t->out, "%s:\n", name);
    else
      fprintf(t->out, "%s[%" PRIu64 "]:\n", name, value);
    t->depth++;
    return;
  case GK_FIELD_END:
    if (t->depth > 0)
      t->depth--;
    return;
  default:
    break;
  }
  indent(t);
  fprintf(t->out, "%s: ", name);
  switch (kind) {
  case GK_FIELD_I8:
  case GK_FIELD_I16:
  case GK_FIELD_I32:
  case GK_FIELD_I64:
    fprintf(t->out, "%" PRId64 "\n", (int64_t)value);
    break;
  case GK_FIELD_BOOL:
    fputs(value ? "true\n" : "false\n", t->out);
    break;
  case GK_FIELD_BYTES:
    for (size_t i = 0; i < len; i++)
      fprintf(t->out, "%02x", bytes[i]);
    fputc('\n', t->out);
    break;
  default:
    fprintf(t->out, "%" PRIu64 "\n", value);
    break;
  }
}

static void text_render_init(text_render *t, FILE *out, const char *indent0) {
  memset(t, 0, sizeof *t);
  t->w.field = text_field;
  t->out = out;
  t->indent0 = indent0;
}

typedef struct json_render {
  gk_writer w; /* must be first */
  cJSON *stack[RENDER_DEPTH_MAX + 1];
  int depth;
  int skip; /* groups nested beyond the limit, being ignored */
  int failed;
} json_render;

#define EXACT_MAX 9007199254740992.0 /* 2^53 */

/* The key to use for `name` in obj, so that every key is unique: `name`
 * if it is free, else "name#2", "name#3"... (a genre may write a count and
 * a list under one name, or repeat a name). For a list item (`arr` non-NULL)
 * an array already under one of those keys is reused and returned. NULL if
 * none is free. */
static const char *pick_key(cJSON *obj, const char *name, cJSON **arr,
                            char *buf, size_t n) {
  for (int k = 1; k <= 1000; k++) {
    const char *key = name;
    if (k > 1) {
      snprintf(buf, n, "%s#%d", name, k);
      key = buf;
    }
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL) {
      if (arr != NULL)
        *arr = NULL;
      return key;
    }
    if (arr != NULL && cJSON_IsArray(item)) {
      *arr = item;
      return key;
    }
  }
  return NULL;
}

static void json_add(json_render *j, const char *name, cJSON *item) {
  char buf[160];
  cJSON *obj = j->stack[j->depth];
  name = pick_key(obj, name, NULL, buf, sizeof buf);
  if (item == NULL || name == NULL || !cJSON_AddItemToObject(obj, name, item)) {
    cJSON_Delete(item);
    j->failed = 1;
  }
}

static void json_field(gk_writer *w, gk_field_kind kind, const char *name,
                       uint64_t value, const uint8_t *bytes, size_t len) {
  json_render *j = (json_render *)w;
  if (name == NULL)
    name = "?";
  if (kind == GK_FIELD_BEGIN && (j->skip > 0 || j->depth >= RENDER_DEPTH_MAX)) {
    j->skip++;
    j->failed = 1;
    return;
  }
  if (kind == GK_FIELD_END) {
    if (j->skip > 0)
      j->skip--;
    else if (j->depth > 0)
      j->depth--;
    return;
  }
  if (j->skip > 0)
    return;
  cJSON *cur = j->stack[j->depth];
  if (kind == GK_FIELD_BEGIN) {
    cJSON *obj = cJSON_CreateObject();
    if (obj == NULL) {
      j->failed = 1;
      j->skip++;
      return;
    }
    char buf[160];
    if (value == UINT64_MAX) {
      const char *key = pick_key(cur, name, NULL, buf, sizeof buf);
      if (key == NULL || !cJSON_AddItemToObject(cur, key, obj)) {
        cJSON_Delete(obj);
        j->failed = 1;
        j->skip++;
        return;
      }
    } else {
      cJSON *arr = NULL;
      const char *key = pick_key(cur, name, &arr, buf, sizeof buf);
      if (arr == NULL) {
        arr = key != NULL ? cJSON_CreateArray() : NULL;
        if (arr == NULL || !cJSON_AddItemToObject(cur, key, arr)) {
          cJSON_Delete(arr);
          cJSON_Delete(obj);
          j->failed = 1;
          j->skip++;
          return;
        }
      }
      cJSON_AddItemToArray(arr, obj);
    }
    j->stack[++j->depth] = obj;
    return;
  }
  char buf[24];
  switch (kind) {
  case GK_FIELD_I8:
  case GK_FIELD_I16:
  case GK_FIELD_I32:
  case GK_FIELD_I64: {
    int64_t v = (int64_t)value;
    if (v > (int64_t)EXACT_MAX || v < -(int64_t)EXACT_MAX) {
      snprintf(buf, sizeof buf, "%" PRId64, v);
      json_add(j, name, cJSON_CreateString(buf));
    } else {
      json_add(j, name, cJSON_CreateNumber((double)v));
    }
    break;
  }
  case GK_FIELD_BOOL:
    json_add(j, name, cJSON_CreateBool(value != 0));
    break;
  case GK_FIELD_BYTES: {
    char *hex = malloc(len * 2 + 1);
    if (hex == NULL) {
      j->failed = 1;
      return;
    }
    for (size_t i = 0; i < len; i++)
      snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    hex[len * 2] = '\0';
    json_add(j, name, cJSON_CreateString(hex));
    free(hex);
    break;
  }
  default:
    if (value > (uint64_t)EXACT_MAX) {
      snprintf(buf, sizeof buf, "%" PRIu64, value);
      json_add(j, name, cJSON_CreateString(buf));
    } else {
      json_add(j, name, cJSON_CreateNumber((double)value));
    }
    break;
  }
}

static int json_render_init(json_render *j) {
  memset(j, 0, sizeof *j);
  j->w.field = json_field;
  j->stack[0] = cJSON_CreateObject();
  return j->stack[0] != NULL ? 0 : GK_ENOMEM;
}

/* Prints a JSON item on one line and deletes it. */
static void print_json(FILE *out, cJSON *item) {
  char *s = item != NULL ? cJSON_PrintUnformatted(item) : NULL;
  if (s != NULL) {
    fputs(s, out);
    fputc('\n', out);
    cJSON_free(s);
  } else {
    fputs("{\"error\":\"out of memory\"}\n", out);
  }
  cJSON_Delete(item);
}

static void hex_hash(char *buf, size_t n, uint64_t h) {
  snprintf(buf, n, "0x%016" PRIx64, h);
}

static void add_hash(cJSON *o, const char *key, uint64_t h) {
  char buf[24];
  hex_hash(buf, sizeof buf, h);
  cJSON_AddStringToObject(o, key, buf);
}

/* ===================================================================== */
/* progress on a terminal                                                  */

typedef struct progress {
  FILE *err;
  const char *file;
  int shown;
} progress;

static void on_progress(void *ctx, uint64_t done, uint64_t total) {
  progress *p = ctx;
  if (total < 4 * GK_REPLAY_PROGRESS_STEPS)
    return;
  fprintf(p->err, "\r%s: %" PRIu64 "/%" PRIu64 " steps (%u%%)", p->file, done,
          total, (unsigned)(done * 100 / total));
  fflush(p->err);
  p->shown = 1;
}

static void progress_end(progress *p) {
  if (p->shown)
    fputs("\r\033[K", p->err);
}

static int is_tty(FILE *f) {
  int fd = fileno(f);
  return fd >= 0 && isatty(fd);
}

/* ===================================================================== */
/* verify                                                                  */

static const char verify_help[] =
    "usage: gk-replay verify [--json] FILE...\n"
    "\n"
    "Runs each replay through GameLoop with { steps } budgets and compares\n"
    "the state hash after every step with the recorded one.\n"
    "\n"
    "  --json   one JSON object per file instead of text\n"
    "\n"
    "Exit status: 0 every file matches; 1 a hash differs (the file, the\n"
    "first differing step, the expected and the computed hash are named);\n"
    "2 a file is not a valid replay (the offset and what was expected are\n"
    "named) or a usage error. A file cut short is verified up to its last\n"
    "complete block and then reported as not valid.\n";

static int verify_one(const char *path, int json, FILE *out, FILE *err) {
  gk_replay r;
  gk_replay_open_file(&r, path);
  progress pr = {err, path, 0};
  gk_replay_verdict v;
  int tty = !json && is_tty(err);
  gk_replay_verify(&r, NULL, tty ? on_progress : NULL, &pr, &v);
  progress_end(&pr);
  char eh[24], ah[24];
  hex_hash(eh, sizeof eh, v.expected);
  hex_hash(ah, sizeof ah, v.actual);
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", path);
    cJSON_AddStringToObject(o, "status",
                            v.status == GK_REPLAY_OK         ? "ok"
                            : v.status == GK_REPLAY_MISMATCH ? "mismatch"
                                                             : "invalid");
    if (r.header_ok)
      cJSON_AddStringToObject(o, "genre", r.genre);
    cJSON_AddNumberToObject(o, "steps_verified", (double)v.steps_checked);
    if (v.status == GK_REPLAY_OK) {
      cJSON_AddNumberToObject(o, "steps", (double)r.steps);
      add_hash(o, "final_hash", r.final_hash);
    } else if (v.status == GK_REPLAY_MISMATCH) {
      cJSON_AddNumberToObject(o, "step", (double)v.step);
      cJSON_AddStringToObject(o, "expected", eh);
      cJSON_AddStringToObject(o, "actual", ah);
    } else {
      cJSON_AddNumberToObject(o, "offset", (double)v.offset);
      cJSON_AddStringToObject(o, "code", gk_err_name(v.code));
      cJSON_AddStringToObject(o, "error", v.message);
    }
    print_json(out, o);
  } else if (v.status == GK_REPLAY_OK) {
    char fh[24];
    hex_hash(fh, sizeof fh, r.final_hash);
    fprintf(out, "%s: ok: %" PRIu64 " steps verified, final hash %s\n", path,
            v.steps_checked, fh);
  } else if (v.status == GK_REPLAY_MISMATCH) {
    fprintf(out,
            "%s: MISMATCH at step %" PRIu64 ": expected hash %s, actual %s\n",
            path, v.step, eh, ah);
  } else {
    fprintf(out, "%s: INVALID: %s\n", path, v.message);
  }
  gk_replay_close(&r);
  return v.status;
}

static int cmd_verify(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const opt opts[] = {{"--json", 0, NULL, &json},
                      {"--help", 0, NULL, &help},
                      {"-h", 0, NULL, &help},
                      {NULL, 0, NULL, NULL}};
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  if (files == NULL)
    return GK_CLI_INVALID;
  int n = 0;
  int rc = parse_opts("verify", argc, argv, 2, opts, files, &n, argc, err);
  if (rc == 0 && help) {
    fputs(verify_help, out);
  } else if (rc == 0 && n == 0) {
    fprintf(err, "gk-replay verify: no FILE given (see gk-replay verify "
                 "--help)\n");
    rc = GK_CLI_INVALID;
  } else if (rc == 0) {
    for (int i = 0; i < n; i++) {
      int st = verify_one(files[i], json, out, err);
      if (st > rc)
        rc = st;
    }
  }
  free(files);
  return rc;
}

/* ===================================================================== */
/* opening a replay for info and dump                                      */

/* Opens and runs `path` up to `steps` steps. On success *loop holds the
 * run (close it). Returns an exit code; on failure a message is printed. */
static int open_and_run(const char *cmd, const char *path, uint64_t steps,
                        int json, gk_replay *r, gk_loop *loop,
                        gk_replay_verdict *v, FILE *out, FILE *err) {
  int orc = gk_replay_open_file(r, path);
  if (!r->header_ok) {
    fprintf(err, "gk-replay %s: %s: not a valid replay: offset %" PRIu64
                 ": %s (%s)\n",
            cmd, path, r->damage.offset, r->damage.what,
            gk_err_name(orc));
    return GK_CLI_INVALID;
  }
  gk_loop_options lo = {GK_REPLAY_PROGRESS_STEPS};
  if (gk_loop_init(loop, &lo) != 0) {
    fprintf(err, "gk-replay %s: out of memory\n", cmd);
    return GK_CLI_INVALID;
  }
  progress pr = {err, path, 0};
  int tty = !json && is_tty(err);
  int st = gk_replay_run(r, NULL, steps, loop, tty ? on_progress : NULL, &pr,
                         v);
  progress_end(&pr);
  (void)out;
  if (st == GK_REPLAY_INVALID) {
    fprintf(err, "gk-replay %s: %s: %s\n", cmd, path, v->message);
    gk_loop_close(loop);
    return GK_CLI_INVALID;
  }
  return st == GK_REPLAY_MISMATCH ? GK_CLI_MISMATCH : GK_CLI_OK;
}

/* ===================================================================== */
/* info                                                                    */

static const char info_help[] =
    "usage: gk-replay info [--json] FILE\n"
    "\n"
    "Prints the header (format, genre and version, seed, players, config,\n"
    "origin), the step count, the final hash, and the HUD sample after the\n"
    "last step (the replay is run through GameLoop to get it; every hash is\n"
    "checked on the way). For push-puzzle the sample has the keys solved,\n"
    "moves and pushes.\n"
    "\n"
    "  --json   print one JSON object\n"
    "\n"
    "Exit status: 0 a valid replay whose hashes match; 1 a hash differs\n"
    "(the info is still printed, with verified false); 2 not a valid\n"
    "replay, or a usage error.\n";

static int cmd_info(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const opt opts[] = {{"--json", 0, NULL, &json},
                      {"--help", 0, NULL, &help},
                      {"-h", 0, NULL, &help},
                      {NULL, 0, NULL, NULL}};
  const char *files[1];
  int n = 0;
  int rc = parse_opts("info", argc, argv, 2, opts, files, &n, 1, err);
  if (rc != 0)
    return rc;
  if (help) {
    fputs(info_help, out);
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
  rc = open_and_run("info", files[0], UINT64_MAX, json, &r, &loop, &v, out,
                    err);
  if (rc == GK_CLI_INVALID) {
    gk_replay_close(&r);
    return rc;
  }
  if (r.damage.code != 0)
    rc = GK_CLI_INVALID; /* a file cut short: show what it has, then fail */
  char fh[24];
  hex_hash(fh, sizeof fh, r.complete ? r.final_hash : r.last_hash);
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", files[0]);
    cJSON_AddNumberToObject(o, "format", r.format);
    cJSON_AddStringToObject(o, "genre", r.genre);
    cJSON_AddNumberToObject(o, "genre_version", r.genre_version);
    cJSON *seed = cJSON_GetObjectItemCaseSensitive(r.header, "seed");
    cJSON_AddItemToObject(o, "seed", cJSON_Duplicate(seed, 1));
    cJSON_AddNumberToObject(o, "players", r.players);
    cJSON_AddNumberToObject(o, "input_size", r.input_size);
    cJSON *ss = cJSON_GetObjectItemCaseSensitive(r.header, "step_seconds");
    cJSON_AddItemToObject(o, "step_seconds", cJSON_Duplicate(ss, 1));
    if (r.origin != NULL)
      cJSON_AddStringToObject(o, "origin", r.origin);
    cJSON_AddItemToObject(o, "config", cJSON_Duplicate(r.config, 1));
    cJSON_AddNumberToObject(o, "steps", (double)r.steps);
    cJSON_AddStringToObject(o, "final_hash", fh);
    cJSON_AddBoolToObject(o, "complete", r.complete);
    if (r.damage.code != 0) {
      cJSON *d = cJSON_AddObjectToObject(o, "damage");
      cJSON_AddNumberToObject(d, "offset", (double)r.damage.offset);
      cJSON_AddStringToObject(d, "code", gk_err_name(r.damage.code));
      cJSON_AddStringToObject(d, "what", r.damage.what);
    }
    cJSON_AddBoolToObject(o, "verified", v.status == GK_REPLAY_OK);
    if (v.status == GK_REPLAY_MISMATCH)
      cJSON_AddStringToObject(o, "mismatch", v.message);
    json_render jr;
    if (json_render_init(&jr) == 0) {
      gk_loop_write_sample(&loop, &jr.w);
      cJSON_AddItemToObject(o, "sample", jr.stack[0]);
    }
    print_json(out, o);
  } else {
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, r.seed);
    char *cfg = cJSON_PrintUnformatted(r.config);
    fprintf(out, "file: %s\n", files[0]);
    fprintf(out, "format: %" PRIu32 "\n", r.format);
    fprintf(out, "genre: %s (version %" PRIu32 ")\n", r.genre,
            r.genre_version);
    fprintf(out, "seed: %s\n", seed);
    fprintf(out, "players: %" PRIu32 "\n", r.players);
    fprintf(out, "step: %" PRIu32 "/%" PRIu32 " s\n", r.step_seconds.num,
            r.step_seconds.den);
    if (r.origin != NULL)
      fprintf(out, "origin: %s\n", r.origin);
    /* level sets can be long: show the config's size, not all of it */
    if (cfg != NULL && strlen(cfg) <= 400)
      fprintf(out, "config: %s\n", cfg);
    else if (cfg != NULL)
      fprintf(out, "config: (%zu bytes of JSON; see --json)\n", strlen(cfg));
    cJSON_free(cfg);
    fprintf(out, "steps: %" PRIu64 "\n", r.steps);
    fprintf(out, "final hash: %s\n", fh);
    if (r.damage.code != 0)
      fprintf(out, "damage: offset %" PRIu64 ": %s (%s)\n", r.damage.offset,
              r.damage.what, gk_err_name(r.damage.code));
    fprintf(out, "verified: %s\n",
            v.status == GK_REPLAY_OK ? "yes" : v.message);
    fprintf(out, "sample:\n");
    text_render tr;
    text_render_init(&tr, out, "  ");
    gk_loop_write_sample(&loop, &tr.w);
  }
  gk_loop_close(&loop);
  gk_replay_close(&r);
  return rc;
}

/* ===================================================================== */
/* dump                                                                    */

static const char dump_help[] =
    "usage: gk-replay dump --step N [--json] FILE\n"
    "\n"
    "Runs the replay through GameLoop to step N (0-based: step 0 is the\n"
    "first step) and prints the state after it, field by field, from the\n"
    "genre's canonical state writer (the bytes the hash is computed over).\n"
    "\n"
    "  --step N   the step (required)\n"
    "  --json     print one JSON object\n"
    "\n"
    "Exit status: 0 printed; 1 a hash differs at or before step N; 2 not a\n"
    "valid replay, N out of range, or a usage error.\n";

static int cmd_dump(int argc, char **argv, FILE *out, FILE *err) {
  int json = 0, help = 0;
  const char *step_s = NULL;
  const opt opts[] = {{"--json", 0, NULL, &json},
                      {"--step", 1, &step_s, NULL},
                      {"--help", 0, NULL, &help},
                      {"-h", 0, NULL, &help},
                      {NULL, 0, NULL, NULL}};
  const char *files[1];
  int n = 0;
  int rc = parse_opts("dump", argc, argv, 2, opts, files, &n, 1, err);
  if (rc != 0)
    return rc;
  if (help) {
    fputs(dump_help, out);
    return 0;
  }
  uint64_t step = 0;
  if (n != 1 || step_s == NULL || parse_u64(step_s, &step) != 0 ||
      step == UINT64_MAX) {
    fprintf(err, "gk-replay dump: expected --step N (a step number) and one "
                 "FILE (see gk-replay dump --help)\n");
    return GK_CLI_INVALID;
  }
  gk_replay r;
  gk_loop loop;
  gk_replay_verdict v;
  rc = open_and_run("dump", files[0], step + 1, json, &r, &loop, &v, out,
                    err);
  if (rc == GK_CLI_INVALID) {
    gk_replay_close(&r);
    return rc;
  }
  if (step >= r.steps) {
    fprintf(err,
            "gk-replay dump: %s: step %" PRIu64 " is out of range (the "
            "replay has %" PRIu64 " readable steps: 0..%" PRIu64 ")\n",
            files[0], step, r.steps, r.steps ? r.steps - 1 : 0);
    rc = GK_CLI_INVALID;
  } else if (v.status == GK_REPLAY_MISMATCH) {
    fprintf(err, "gk-replay dump: %s: %s\n", files[0], v.message);
    rc = GK_CLI_MISMATCH;
  } else {
    gk_replay_step rs;
    gk_replay_step_at(&r, step, &rs, NULL);
    if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "file", files[0]);
      cJSON_AddStringToObject(o, "genre", r.genre);
      cJSON_AddNumberToObject(o, "step", (double)step);
      add_hash(o, "hash", rs.hash);
      json_render jr;
      if (json_render_init(&jr) == 0) {
        loop.sim->write_state(gk_loop_state(&loop), &jr.w);
        cJSON_AddItemToObject(o, "state", jr.stack[0]);
      }
      print_json(out, o);
    } else {
      char h[24];
      hex_hash(h, sizeof h, rs.hash);
      fprintf(out, "%s: %s, state after step %" PRIu64 " (hash %s)\n",
              files[0], r.genre, step, h);
      text_render tr;
      text_render_init(&tr, out, "");
      loop.sim->write_state(gk_loop_state(&loop), &tr.w);
    }
    if (r.damage.code != 0)
      fprintf(err, "gk-replay dump: warning: %s: offset %" PRIu64 ": %s\n",
              files[0], r.damage.offset, r.damage.what);
  }
  gk_loop_close(&loop);
  gk_replay_close(&r);
  return rc;
}

/* ===================================================================== */
/* record                                                                  */

static const char record_help[] =
    "usage: gk-replay record --genre push-puzzle --level FILE[#N]\n"
    "                        --lurd SOLUTION|@FILE --out OUT.gkr\n"
    "                        [--players P] [--seed S]\n"
    "       gk-replay record --genre NAME --players P --seed S --steps N\n"
    "                        --out OUT.gkr [--config FILE.json]\n"
    "\n"
    "push-puzzle: records a published Sokoban solution on a level. FILE is\n"
    "an XSB level set; #N picks its N-th level (1-based, default 1). The\n"
    "solution is LURD text (l u r d moves, L U R D pushes, run-length\n"
    "counts such as 3r or 2(dl)), or @FILE to read it from a file. One move\n"
    "is one step, pressed by player 0. `gk-replay info` then shows whether\n"
    "the level is solved, with moves and pushes.\n"
    "\n"
    "Other genres (e.g. survivors): records N steps of the genre's built-in\n"
    "bots, one per player, seeded from S with SplitMix64.\n"
    "\n"
    "  --config FILE.json   genre config keys (a JSON object); default: the\n"
    "                       genre's defaults\n"
    "\n"
    "The replay is written to OUT.gkr.tmp and renamed to OUT.gkr when done.\n"
    "Exit status: 0 written; 2 bad input or a usage error.\n";

/* A step input that keeps a copy of the last merged input it produced. */
typedef struct tap_input {
  gk_input base; /* must be first */
  gk_input *inner;
  gk_step_input last;
} tap_input;

static int tap_read(gk_input *base, uint64_t step, gk_step_input *out) {
  tap_input *t = (tap_input *)base;
  int rc = t->inner->read(t->inner, step, out);
  if (rc == 0)
    t->last = *out;
  return rc;
}

/* The genre's bots, one per player. */
typedef struct bot_input {
  gk_input base; /* must be first */
  const gk_sim *sim;
  uint32_t players;
  uint8_t *bots;
  uint8_t records[GK_PLAYERS_MAX * GK_INPUT_SIZE_MAX];
} bot_input;

static int bot_read(gk_input *base, uint64_t step, gk_step_input *out) {
  bot_input *b = (bot_input *)base;
  size_t rs = b->sim->input_size;
  for (uint32_t p = 0; p < b->players; p++)
    b->sim->bot_next(b->bots + (size_t)p * b->sim->bot_size,
                     b->records + p * rs);
  out->step = step;
  out->active_mask = b->players >= 32 ? UINT32_MAX : (1u << b->players) - 1;
  out->flags = 0;
  out->players = b->players;
  out->inputs = b->records;
  return 0;
}

/* Steps `steps` steps from `src` on a fresh run and writes the replay. */
static int record_run(const gk_sim *sim, const void *cfg, uint64_t seed,
                      uint32_t players, gk_input *src, uint64_t steps,
                      const char *outpath, const char *origin, FILE *out,
                      FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  gk_loop loop;
  if (gk_loop_init(&loop, NULL) != 0) {
    fprintf(err, "gk-replay record: out of memory\n");
    return GK_CLI_INVALID;
  }
  if (gk_loop_start(&loop, sim, cfg, seed, players, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: cannot start %s: %s\n", sim->name, msg);
    gk_loop_close(&loop);
    return GK_CLI_INVALID;
  }
  gk_replay_meta meta = {sim, cfg, seed, players, origin};
  gk_replay_writer w;
  if (gk_replay_writer_open(&w, outpath, &meta, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: %s\n", msg);
    gk_loop_close(&loop);
    return GK_CLI_INVALID;
  }
  tap_input tap;
  memset(&tap, 0, sizeof tap);
  tap.base.read = tap_read;
  tap.inner = src;
  int rc = 0;
  for (uint64_t s = 0; s < steps && rc == 0; s++) {
    int ran = gk_loop_frame(&loop, &tap.base, gk_budget_steps(1), 0);
    if (ran != 1) {
      fprintf(err, "gk-replay record: the run stopped at step %" PRIu64
                   ": %s\n",
              s, gk_strerror(ran < 0 ? ran : loop.input_err));
      rc = GK_CLI_INVALID;
    } else if (gk_replay_writer_append(&w, &tap.last, loop.last_hash) != 0) {
      fprintf(err, "gk-replay record: writing step %" PRIu64 ": %s\n", s,
              gk_strerror(w.err ? w.err : GK_EINVAL));
      rc = GK_CLI_INVALID;
    }
  }
  if (rc == 0 && gk_replay_writer_finish(&w, msg, sizeof msg) != 0) {
    fprintf(err, "gk-replay record: %s\n", msg);
    rc = GK_CLI_INVALID;
  }
  if (rc == 0) {
    char h[24];
    hex_hash(h, sizeof h, loop.last_hash);
    fprintf(out, "%s: %" PRIu64 " steps of %s, final hash %s\n", outpath,
            steps, sim->name, h);
  }
  gk_replay_writer_abort(&w);
  gk_loop_close(&loop);
  return rc;
}

/* Applies a JSON config file (or the defaults) into cfg. */
static int load_config(const gk_sim *sim, void *cfg, const char *path,
                       FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  if (path == NULL)
    return gk_config_from_json(sim, cfg, NULL, msg, sizeof msg) == 0
               ? 0
               : GK_CLI_INVALID;
  size_t len = 0;
  char *text = read_text(path, TEXT_FILE_MAX, &len, msg, sizeof msg);
  if (text == NULL) {
    fprintf(err, "gk-replay record: %s\n", msg);
    sim->config_default(cfg);
    return GK_CLI_INVALID;
  }
  cJSON *obj = cJSON_ParseWithLength(text, len);
  free(text);
  if (obj == NULL) {
    fprintf(err, "gk-replay record: %s: not valid JSON\n", path);
    sim->config_default(cfg);
    return GK_CLI_INVALID;
  }
  int rc = gk_config_from_json(sim, cfg, obj, msg, sizeof msg);
  cJSON_Delete(obj);
  if (rc != 0) {
    fprintf(err, "gk-replay record: %s: %s\n", path, msg);
    return GK_CLI_INVALID;
  }
  return 0;
}

#if GK_HAVE_PUSH_PUZZLE
static int record_push_puzzle(const gk_sim *sim, void *cfg,
                              const char *level, const char *lurd,
                              uint32_t players, uint64_t seed,
                              const char *outpath, FILE *out, FILE *err) {
  char msg[GK_ERRMSG_MAX] = "";
  /* FILE#N: N is 1-based; a '#' not followed by digits is part of the name */
  char path[4096];
  uint64_t index = 1;
  const char *hash = strrchr(level, '#');
  size_t plen = strlen(level);
  if (hash != NULL && parse_u64(hash + 1, &index) == 0) {
    plen = (size_t)(hash - level);
    if (index < 1 || index > GK_PP_LEVELS_MAX) {
      fprintf(err, "gk-replay record: --level %s: N must be 1..%d\n", level,
              GK_PP_LEVELS_MAX);
      return GK_CLI_INVALID;
    }
  } else {
    index = 1;
  }
  if (plen >= sizeof path) {
    fprintf(err, "gk-replay record: --level: path too long\n");
    return GK_CLI_INVALID;
  }
  memcpy(path, level, plen);
  path[plen] = '\0';
  size_t len = 0;
  char *xsb = read_text(path, GK_PP_LEVELS_TEXT_MAX, &len, msg, sizeof msg);
  if (xsb == NULL) {
    fprintf(err, "gk-replay record: --level: %s\n", msg);
    return GK_CLI_INVALID;
  }
  /* check the set here so the message names the file */
  gk_pp_set set;
  int rc = gk_pp_set_parse(&set, xsb, len, path, GK_PP_DIM_MAX, GK_PP_DIM_MAX,
                           msg, sizeof msg);
  if (rc == 0) {
    if (index > set.count) {
      snprintf(msg, sizeof msg,
               "%.200s has %" PRIu32 " level(s), not %" PRIu64, path,
               set.count, index);
      rc = GK_ERANGE;
    }
    gk_pp_set_close(&set);
  }
  gk_value v = {GK_VALUE_STRING, 0, xsb};
  if (rc == 0)
    rc = sim->config_set(cfg, "levels", &v, msg, sizeof msg);
  v.type = GK_VALUE_INT;
  v.i = (int64_t)index - 1;
  v.s = NULL;
  if (rc == 0)
    rc = sim->config_set(cfg, "level", &v, msg, sizeof msg);
  v.type = GK_VALUE_BOOL;
  v.i = 0;
  if (rc == 0)
    rc = sim->config_set(cfg, "advance", &v, msg, sizeof msg);
  free(xsb);
  if (rc != 0) {
    fprintf(err, "gk-replay record: --level: %s\n", msg);
    return GK_CLI_INVALID;
  }
  /* the solution */
  char *text = NULL;
  const char *name = "--lurd";
  if (lurd[0] == '@') {
    name = lurd + 1;
    text = read_text(lurd + 1, TEXT_FILE_MAX, &len, msg, sizeof msg);
    if (text == NULL) {
      fprintf(err, "gk-replay record: --lurd: %s\n", msg);
      return GK_CLI_INVALID;
    }
  } else {
    len = strlen(lurd);
    text = malloc(len + 1);
    if (text == NULL)
      return GK_CLI_INVALID;
    memcpy(text, lurd, len + 1);
  }
  gk_pp_moves moves;
  rc = gk_pp_lurd_parse(&moves, text, len, name, msg, sizeof msg);
  free(text);
  if (rc != 0) {
    fprintf(err, "gk-replay record: --lurd: %s\n", msg);
    return GK_CLI_INVALID;
  }
  size_t rsize = (size_t)players * sim->input_size;
  uint8_t *records = malloc(moves.count * rsize + 1);
  if (records == NULL ||
      gk_pp_script(moves.moves, moves.count, players, 0, records) != 0) {
    fprintf(err, "gk-replay record: cannot build the step inputs\n");
    free(records);
    gk_pp_moves_close(&moves);
    return GK_CLI_INVALID;
  }
  gk_script_input script;
  gk_script_input_init(&script, records, moves.count, players,
                       sim->input_size);
  char origin[512];
  snprintf(origin, sizeof origin,
           "gk-replay record --genre push-puzzle --level %.300s#%" PRIu64
           " (%zu moves)",
           base_name(path), index, moves.count);
  rc = record_run(sim, cfg, seed, players, &script.base, moves.count,
                  outpath, origin, out, err);
  free(records);
  gk_pp_moves_close(&moves);
  return rc;
}
#endif

static int cmd_record(int argc, char **argv, FILE *out, FILE *err) {
  int help = 0;
  const char *genre = NULL, *level = NULL, *lurd = NULL, *outpath = NULL;
  const char *players_s = NULL, *seed_s = NULL, *steps_s = NULL;
  const char *config = NULL;
  const opt opts[] = {{"--genre", 1, &genre, NULL},
                      {"--level", 1, &level, NULL},
                      {"--lurd", 1, &lurd, NULL},
                      {"--out", 1, &outpath, NULL},
                      {"--players", 1, &players_s, NULL},
                      {"--seed", 1, &seed_s, NULL},
                      {"--steps", 1, &steps_s, NULL},
                      {"--config", 1, &config, NULL},
                      {"--help", 0, NULL, &help},
                      {"-h", 0, NULL, &help},
                      {NULL, 0, NULL, NULL}};
  const char *pos[1];
  int n = 0;
  int rc = parse_opts("record", argc, argv, 2, opts, pos, &n, 0, err);
  if (rc != 0)
    return rc;
  if (help) {
    fputs(record_help, out);
    return 0;
  }
  if (genre == NULL || outpath == NULL) {
    fprintf(err, "gk-replay record: --genre and --out are required (see "
                 "gk-replay record --help)\n");
    return GK_CLI_INVALID;
  }
  const gk_sim *sim = gk_genre_find(genre);
  if (sim == NULL) {
    fprintf(err, "gk-replay record: unknown genre '%s'; this build has:",
            genre);
    for (size_t i = 0; gk_genres[i] != NULL; i++)
      fprintf(err, " %s", gk_genres[i]->name);
    fputc('\n', err);
    return GK_CLI_INVALID;
  }
  uint64_t seed = 0, players = 0, steps = 0;
  if (seed_s != NULL && parse_u64(seed_s, &seed) != 0) {
    fprintf(err, "gk-replay record: --seed: expected a number, got '%s'\n",
            seed_s);
    return GK_CLI_INVALID;
  }
  if (players_s != NULL &&
      (parse_u64(players_s, &players) != 0 || players < sim->players_min ||
       players > sim->players_max)) {
    fprintf(err, "gk-replay record: --players: %s takes %" PRIu32
                 "..%" PRIu32 " players, got '%s'\n",
            sim->name, sim->players_min, sim->players_max, players_s);
    return GK_CLI_INVALID;
  }
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (cfg == NULL)
    return GK_CLI_INVALID;
  rc = load_config(sim, cfg, config, err);
  if (rc == 0 && strcmp(sim->name, "push-puzzle") == 0) {
#if GK_HAVE_PUSH_PUZZLE
    if (level == NULL || lurd == NULL || steps_s != NULL) {
      fprintf(err, "gk-replay record: push-puzzle takes --level and --lurd "
                   "(not --steps)\n");
      rc = GK_CLI_INVALID;
    } else {
      rc = record_push_puzzle(sim, cfg, level, lurd,
                              players ? (uint32_t)players : 1, seed, outpath,
                              out, err);
    }
#else
    fprintf(err, "gk-replay record: push-puzzle is not in this build\n");
    rc = GK_CLI_INVALID;
#endif
  } else if (rc == 0) {
    if (level != NULL || lurd != NULL) {
      fprintf(err, "gk-replay record: --level and --lurd are for "
                   "push-puzzle\n");
      rc = GK_CLI_INVALID;
    } else if (players_s == NULL || seed_s == NULL || steps_s == NULL) {
      fprintf(err, "gk-replay record: %s needs --players, --seed and "
                   "--steps\n",
              sim->name);
      rc = GK_CLI_INVALID;
    } else if (parse_u64(steps_s, &steps) != 0 || steps > RECORD_STEPS_MAX) {
      fprintf(err, "gk-replay record: --steps: expected 0..%llu, got '%s'\n",
              (unsigned long long)RECORD_STEPS_MAX, steps_s);
      rc = GK_CLI_INVALID;
    } else if (sim->bot_size == 0 || sim->bot_init == NULL ||
               sim->bot_next == NULL) {
      fprintf(err, "gk-replay record: %s has no built-in bot\n", sim->name);
      rc = GK_CLI_INVALID;
    } else {
      bot_input b;
      memset(&b, 0, sizeof b);
      b.base.read = bot_read;
      b.sim = sim;
      b.players = (uint32_t)players;
      b.bots = calloc((size_t)players, sim->bot_size);
      if (b.bots == NULL) {
        rc = GK_CLI_INVALID;
      } else {
        uint64_t x = seed;
        for (uint32_t p = 0; p < b.players; p++)
          sim->bot_init(b.bots + (size_t)p * sim->bot_size, cfg,
                        gk_splitmix64(&x), p);
        char origin[256];
        snprintf(origin, sizeof origin,
                 "gk-replay record --genre %s --players %" PRIu64
                 " --seed %" PRIu64 " --steps %" PRIu64 "%s",
                 sim->name, players, seed, steps,
                 config != NULL ? " --config (file)" : "");
        rc = record_run(sim, cfg, seed, b.players, &b.base, steps, outpath,
                        origin, out, err);
        free(b.bots);
      }
    }
  }
  if (sim->config_free != NULL)
    sim->config_free(cfg);
  free(cfg);
  return rc;
}

/* ===================================================================== */

static const char main_help[] =
    "usage: gk-replay COMMAND [OPTIONS] ...\n"
    "\n"
    "Commands:\n"
    "  verify FILE...             run replays and compare every step hash\n"
    "  info FILE                  header, steps, final hash and HUD sample\n"
    "  dump FILE --step N         the state after step N\n"
    "  record --genre G ... --out OUT.gkr   record a replay\n"
    "\n"
    "`gk-replay COMMAND --help` describes each command. Exit status: 0 ok,\n"
    "1 a hash mismatch, 2 an invalid replay or a usage error.\n";

int gk_replay_cli(int argc, char **argv, FILE *out, FILE *err) {
  if (argc < 2) {
    fputs(main_help, err);
    return GK_CLI_INVALID;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    fputs(main_help, out);
    return GK_CLI_OK;
  }
  int rc;
  if (strcmp(cmd, "verify") == 0)
    rc = cmd_verify(argc, argv, out, err);
  else if (strcmp(cmd, "info") == 0)
    rc = cmd_info(argc, argv, out, err);
  else if (strcmp(cmd, "dump") == 0)
    rc = cmd_dump(argc, argv, out, err);
  else if (strcmp(cmd, "record") == 0)
    rc = cmd_record(argc, argv, out, err);
  else {
    fprintf(err, "gk-replay: unknown command '%s' (see gk-replay --help)\n",
            cmd);
    rc = GK_CLI_INVALID;
  }
  fflush(out);
  return rc;
}
