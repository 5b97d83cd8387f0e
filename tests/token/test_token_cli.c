/* test_token_cli.c: the gk-token binary (GK_TOKEN_BIN) end to end:
 * keygen, mint, inspect, and its refusals with exit codes 1 and 2. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "gk_token.h"

extern char **environ;

static char dir[64], keyf[128];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/gk-token-cli-XXXXXX");
  cr_assert(mkdtemp(dir) != NULL);
  snprintf(keyf, sizeof keyf, "%s/key", dir);
}

static void teardown(void) {
  const char *names[] = {"key", "key2", "out", "err", "in", "loose"};
  char path[160];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

TestSuite(token_cli, .init = setup, .fini = teardown);

typedef struct run_result {
  int code;
  char out[8192];
  char err[4096];
} run_result;

static void slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  cr_assert(f != NULL, "%s", path);
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* Runs gk-token with argv (NULL-terminated, without the program name),
 * stdin from `input` (may be NULL: empty). */
static void gk_token_run(run_result *r, const char *input,
                         const char *const *argv) {
  char out[160], err[160], in[160];
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(err, sizeof err, "%s/err", dir);
  snprintf(in, sizeof in, "%s/in", dir);
  FILE *f = fopen(in, "wb");
  cr_assert(f != NULL);
  fputs(input != NULL ? input : "", f);
  fclose(f);
  char *args[32];
  int argc = 0;
  args[argc++] = (char *)GK_TOKEN_BIN;
  while (argv[argc - 1] != NULL && argc < 31) {
    args[argc] = (char *)argv[argc - 1];
    argc++;
  }
  args[argc] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid;
  int rc = posix_spawn(&pid, GK_TOKEN_BIN, &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(rc, 0, "cannot run %s", GK_TOKEN_BIN);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "gk-token died from a signal");
  r->code = WEXITSTATUS(status);
  slurp(out, r->out, sizeof r->out);
  slurp(err, r->err, sizeof r->err);
}

#define RUN(r, ...)                                                            \
  gk_token_run((r), NULL, (const char *const[]){__VA_ARGS__, NULL})

static void keygen(const char *path) {
  run_result r;
  RUN(&r, "keygen", "--out", path);
  cr_assert_eq(r.code, 0, "%s", r.err);
}

/* Mints with the given options; returns the token text (static). */
static const char *mint_ok(run_result *r) {
  cr_assert_eq(r->code, 0, "mint: %s", r->err);
  size_t n = strlen(r->out);
  cr_assert_eq(n, GK_TOKEN_B64_LEN + 1, "%s", r->out);
  cr_assert_eq(r->out[n - 1], '\n');
  r->out[n - 1] = '\0';
  return r->out;
}

static cJSON *json(const run_result *r) {
  cJSON *j = cJSON_Parse(r->out);
  cr_assert(j != NULL, "not JSON: %s", r->out);
  return j;
}

static const char *str(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  cr_assert(cJSON_IsString(v), "no string '%s'", name);
  return v->valuestring;
}

static double num(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  cr_assert(cJSON_IsNumber(v), "no number '%s'", name);
  return v->valuedouble;
}

Test(token_cli, keygen_mint_inspect_create) {
  keygen(keyf);
  struct stat st;
  cr_assert_eq(stat(keyf, &st), 0);
  cr_assert_eq(st.st_mode & 077, 0);
  cr_assert_eq(st.st_size, GK_TOKEN_KEY_BYTES);
  run_result m, r;
  RUN(&m, "mint", "--key", keyf, "--client", "18446744073709551615", "--create",
      "survivors", "--players", "4", "--expires-in", "120");
  const char *tok = mint_ok(&m);
  RUN(&r, "inspect", "--key", keyf, tok);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "\"client_id\":\t18446744073709551615") != NULL,
            "client id not exact: %s", r.out);
  cJSON *j = json(&r);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "valid")));
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "authentic")));
  cr_assert_str_eq(str(j, "code"), "GK_OK");
  cr_assert_str_eq(str(j, "reason"), "ok");
  cr_assert_eq(num(j, "format"), GK_TOKEN_FORMAT);
  cr_assert_eq(num(j, "protocol_version"), GK_TOKEN_PROTOCOL);
  cr_assert_eq(num(j, "expire_s") - num(j, "create_s"), 120);
  cr_assert_eq(strlen(str(j, "id")), 32);
  cr_assert_eq(strlen(str(j, "nonce")), 48);
  cJSON *g = cJSON_GetObjectItem(j, "grant");
  cr_assert_str_eq(str(g, "kind"), "create");
  cr_assert_str_eq(str(g, "genre"), "survivors");
  cr_assert_eq(num(g, "max_players"), 4);
  cJSON_Delete(j);
}

Test(token_cli, join_spectator_and_slot_from_stdin) {
  keygen(keyf);
  run_result m, r;
  RUN(&m, "mint", "--key", keyf, "--client", "7", "--join", "ABCDEFGHIJKLMNOP",
      "--spectator");
  char line[GK_TOKEN_B64_LEN + 2];
  snprintf(line, sizeof line, "%s\n", mint_ok(&m));
  gk_token_run(&r, line,
               (const char *const[]){"inspect", "--key", keyf, "-", NULL});
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cJSON *j = json(&r);
  cJSON *g = cJSON_GetObjectItem(j, "grant");
  cr_assert_str_eq(str(g, "kind"), "join");
  cr_assert_str_eq(str(g, "code"), "ABCDEFGHIJKLMNOP");
  cr_assert_str_eq(str(g, "role"), "spectator");
  cr_assert_str_eq(str(g, "slot"), "any");
  cJSON_Delete(j);
  RUN(&m, "mint", "--key", keyf, "--client", "8", "--join", "ABCDEFGHIJKLMNOP",
      "--slot", "5");
  RUN(&r, "inspect", "--key", keyf, mint_ok(&m));
  j = json(&r);
  g = cJSON_GetObjectItem(j, "grant");
  cr_assert_str_eq(str(g, "role"), "player");
  cr_assert_eq(num(g, "slot"), 5);
  cJSON_Delete(j);
}

Test(token_cli, invalid_tokens_exit_1_with_the_reason) {
  char key2[160];
  snprintf(key2, sizeof key2, "%s/key2", dir);
  keygen(keyf);
  keygen(key2);
  run_result m, r;
  RUN(&m, "mint", "--key", keyf, "--client", "1", "--create", "survivors",
      "--players", "2", "--now", "1000", "--expires-in", "60");
  char tok[GK_TOKEN_B64_LEN + 1];
  snprintf(tok, sizeof tok, "%s", mint_ok(&m));

  RUN(&r, "inspect", "--key", keyf, tok); /* now: long after 1060 */
  cr_assert_eq(r.code, 1, "%s", r.out);
  cJSON *j = json(&r);
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "valid")));
  cr_assert_str_eq(str(j, "code"), "GK_EEXPIRED");
  cr_assert(strstr(str(j, "reason"), "expired") != NULL);
  /* An expired token is authentic: what it granted is shown. */
  cr_assert_str_eq(str(cJSON_GetObjectItem(j, "grant"), "genre"), "survivors");
  cJSON_Delete(j);

  RUN(&r, "inspect", "--key", keyf, "--now", "1030", tok);
  cr_assert_eq(r.code, 0, "%s", r.out);

  RUN(&r, "inspect", "--key", key2, "--now", "1030", tok);
  cr_assert_eq(r.code, 1, "%s", r.out);
  j = json(&r);
  cr_assert_str_eq(str(j, "code"), "GK_EAUTH");
  cr_assert(strstr(str(j, "reason"), "wrong key or tampered") != NULL);
  cr_assert_null(cJSON_GetObjectItem(j, "grant"), "private part shown");
  cr_assert_null(cJSON_GetObjectItem(j, "client_id"), "client id shown");
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "authentic")));
  cJSON_Delete(j);

  RUN(&r, "inspect", "--key", keyf, "--now", "1030", "--protocol", "9", tok);
  cr_assert_eq(r.code, 1);
  j = json(&r);
  cr_assert_str_eq(str(j, "code"), "GK_EVERSION");
  cJSON_Delete(j);

  tok[50] = tok[50] == 'A' ? 'B' : 'A';
  RUN(&r, "inspect", "--key", keyf, "--now", "1030", tok);
  cr_assert_eq(r.code, 1);
  j = json(&r);
  cr_assert_str_eq(str(j, "code"), "GK_EAUTH");
  cJSON_Delete(j);

  tok[100] = '+';
  RUN(&r, "inspect", "--key", keyf, tok);
  cr_assert_eq(r.code, 1);
  j = json(&r);
  cr_assert_str_eq(str(j, "code"), "GK_EPARSE");
  cJSON_Delete(j);

  RUN(&r, "inspect", "--key", keyf, "abc");
  cr_assert_eq(r.code, 1);
  j = json(&r);
  cr_assert_str_eq(str(j, "code"), "GK_ETRUNC");
  cJSON_Delete(j);
}

Test(token_cli, usage_and_io_errors_exit_2) {
  keygen(keyf);
  run_result r;
  RUN(&r, "keygen", "--out", keyf);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "never overwritten") != NULL, "%s", r.err);

  char loose[160];
  snprintf(loose, sizeof loose, "%s/loose", dir);
  keygen(loose);
  cr_assert_eq(chmod(loose, 0644), 0);
  RUN(&r, "mint", "--key", loose, "--client", "1", "--create", "survivors",
      "--players", "2");
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "mode 0644") != NULL, "%s", r.err);
  cr_assert_str_eq(r.out, "");

  const struct {
    const char *args[12];
    const char *says;
  } cases[] = {
      {{"frobnicate"}, "unknown command"},
      {{"keygen"}, "--out"},
      {{"mint", "--key", keyf, "--create", "survivors", "--players", "2"},
       "--client"},
      {{"mint", "--key", keyf, "--client", "-1", "--create", "x", "--players",
        "2"},
       "--client"},
      {{"mint", "--key", keyf, "--client", "18446744073709551616", "--create",
        "x", "--players", "2"},
       "--client"},
      {{"mint", "--key", keyf, "--client", "1", "--create", "survivors"},
       "--players"},
      {{"mint", "--key", keyf, "--client", "1", "--create", "survivors",
        "--players", "17"},
       "--players"},
      {{"mint", "--key", keyf, "--client", "1", "--create", "Bad Name",
        "--players", "2"},
       "genre name"},
      {{"mint", "--key", keyf, "--client", "1", "--join", "SHORT"},
       "room code"},
      {{"mint", "--key", keyf, "--client", "1", "--join", "ABCDEFGHIJKLMNOP",
        "--spectator", "--slot", "1"},
       "--slot"},
      {{"mint", "--key", keyf, "--client", "1", "--join", "ABCDEFGHIJKLMNOP",
        "--slot", "16"},
       "--slot"},
      {{"mint", "--key", keyf, "--client", "1", "--join", "ABCDEFGHIJKLMNOP",
        "--expires-in", "0"},
       "--expires-in"},
      {{"mint", "--key", keyf, "--client", "1", "--join", "ABCDEFGHIJKLMNOP",
        "--create", "survivors"},
       "exactly one"},
      {{"mint", "--client", "1", "--join", "ABCDEFGHIJKLMNOP"}, "--key"},
      {{"mint", "--key", keyf, "--key", keyf}, "twice"},
      {{"mint", "--key"}, "needs a value"},
      {{"inspect", "--key", keyf}, "TOKEN"},
      {{"inspect", "--key", keyf, "a", "b"}, "unexpected argument"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *argv[13] = {0};
    memcpy(argv, cases[i].args, sizeof cases[i].args);
    gk_token_run(&r, NULL, argv);
    cr_assert_eq(r.code, 2, "case %zu exit %d", i, r.code);
    cr_assert(strstr(r.err, cases[i].says) != NULL, "case %zu: %s", i, r.err);
    cr_assert(strstr(r.err, "usage:") != NULL, "case %zu", i);
    cr_assert_str_eq(r.out, "", "case %zu", i);
  }
}
