/* test_config_corpus.c: the two entry points of src/config over one
 * corpus (tests/config/options_corpus.tsv): MATCH_START's JSON text
 * (gk_config_apply_text, what gk_config_match_options does for the uv
 * peer) and the flattened keys a browser page sends from JSON.parse
 * (gk_config_apply_kv_number/_bool/_text, one per leaf, in document
 * order). For every `both` row they must agree with the row and with each
 * other: the code, the message, and the config left behind. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gk_config.h"
#include "gk_config_kv.h"
#include "gk_err.h"
#include "tiny_sim.h"

#define CORPUS GK_SOURCE_ROOT "/tests/config/options_corpus.tsv"

typedef struct row {
  int both;
  int rc;
  char json[512];
  char msg[256];
} row;

static int code_of(const char *name) {
  static const struct {
    const char *name;
    int rc;
  } t[] = {{"0", 0},
           {"ENOTFOUND", GK_ENOTFOUND},
           {"ERANGE", GK_ERANGE},
           {"EINVAL", GK_EINVAL},
           {"ETOOBIG", GK_ETOOBIG},
           {"EPARSE", GK_EPARSE}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strcmp(name, t[i].name) == 0) return t[i].rc;
  cr_assert_fail("corpus: unknown code %s", name);
  return 1;
}

/* Reads the corpus; returns the number of rows. */
static size_t read_corpus(row *rows, size_t max) {
  FILE *f = fopen(CORPUS, "r");
  cr_assert_not_null(f, "cannot open %s", CORPUS);
  char line[1024];
  size_t n = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '#' || line[0] == '\0') continue;
    cr_assert_lt(n, max);
    char *cols[4] = {line, NULL, NULL, NULL};
    for (int c = 1; c < 4; c++) {
      char *tab = strchr(cols[c - 1], '\t');
      cr_assert_not_null(tab, "corpus row %zu: 4 tab-separated columns", n);
      *tab = '\0';
      cols[c] = tab + 1;
    }
    rows[n].both = strcmp(cols[0], "both") == 0;
    rows[n].rc = code_of(cols[1]);
    snprintf(rows[n].json, sizeof rows[n].json, "%s", cols[2]);
    snprintf(rows[n].msg, sizeof rows[n].msg, "%s", cols[3]);
    n++;
  }
  fclose(f);
  return n;
}

/* What a browser page does with JSON.parse's object: depth first, in
 * document order, one call per leaf with its dotted key; stops at the
 * first error. */
static int flatten(const cJSON *node, const char *prefix, tiny_cfg *cfg,
                   char *err, size_t errlen) {
  size_t index = 0;
  for (const cJSON *c = node->child; c != NULL; c = c->next, index++) {
    char key[512];
    char part[256];
    if (cJSON_IsArray(node))
      snprintf(part, sizeof part, "%zu", index);
    else
      snprintf(part, sizeof part, "%s", c->string);
    snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", part);
    int rc;
    if (cJSON_IsObject(c) || cJSON_IsArray(c))
      rc = flatten(c, key, cfg, err, errlen);
    else if (cJSON_IsNumber(c))
      rc = gk_config_apply_kv_number(&tiny_sim, cfg, key, c->valuedouble,
                                     "options", err, errlen);
    else if (cJSON_IsBool(c))
      rc = gk_config_apply_kv_bool(&tiny_sim, cfg, key, cJSON_IsTrue(c),
                                   "options", err, errlen);
    else if (cJSON_IsString(c))
      rc = gk_config_apply_kv_text(&tiny_sim, cfg, key, c->valuestring,
                                   "options", err, errlen);
    else
      rc = GK_EINVAL; /* a `text` row's shape: never in a `both` row */
    if (rc != 0) return rc;
  }
  return 0;
}

Test(config_corpus, text_and_flattened_keys_agree_on_every_row) {
  static row rows[64];
  size_t n = read_corpus(rows, 64);
  cr_assert_geq(n, 20);
  size_t both = 0;
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    tiny_cfg a, b;
    char ea[GK_ERRMSG_MAX] = "", eb[GK_ERRMSG_MAX] = "";
    tiny_sim.config_default(&a);
    int rc = gk_config_apply_text(&tiny_sim, &a, r->json, strlen(r->json),
                                  "options", ea, sizeof ea);
    cr_assert_eq(rc, r->rc, "text %s: %d (%s)", r->json, rc, ea);
    cr_assert_str_eq(ea, r->msg, "text %s", r->json);
    tiny_cfg h;
    tiny_sim.config_default(&h);
    cr_assert_eq(gk_config_match_options(NULL, &tiny_sim, &h, r->json,
                                         strlen(r->json), eb, sizeof eb),
                 r->rc, "the peer's hook is the text path: %s", r->json);
    cr_assert_eq(memcmp(&a, &h, sizeof a), 0, "%s", r->json);
    if (!r->both) continue;
    both++;
    cJSON *obj = cJSON_Parse(r->json);
    cr_assert(cJSON_IsObject(obj), "a `both` row is an object: %s", r->json);
    tiny_sim.config_default(&b);
    eb[0] = '\0';
    rc = flatten(obj, "", &b, eb, sizeof eb);
    cJSON_Delete(obj);
    cr_assert_eq(rc, r->rc, "kv %s: %d (%s)", r->json, rc, eb);
    cr_assert_str_eq(eb, ea, "kv %s", r->json);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "kv %s: another config", r->json);
  }
  cr_assert_geq(both, 15);
}

Test(config_corpus, the_kv_entry_points_check_what_a_c_caller_can_get_wrong) {
  tiny_cfg cfg;
  char err[GK_ERRMSG_MAX] = "";
  tiny_sim.config_default(&cfg);
  cr_assert_eq(gk_config_apply_kv_int(&tiny_sim, &cfg, "start", 7, NULL, err,
                                      sizeof err),
               0, "%s", err);
  cr_assert_eq(cfg.start, 7);
  cr_assert_eq(gk_config_apply_kv_int(&tiny_sim, &cfg, "start",
                                      INT64_C(9007199254740993), "o", err,
                                      sizeof err),
               GK_EINVAL);
  cr_assert_str_eq(
      err, "o.start: must be an integer within +/-2^53, got 9.0072e+15");
  cr_assert_eq(gk_config_apply_kv_text(&tiny_sim, &cfg, "label", NULL, "o", err,
                                       sizeof err),
               GK_EINVAL);
  cr_assert_eq(
      gk_config_apply_kv(&tiny_sim, &cfg, "start", NULL, "o", err, sizeof err),
      GK_EINVAL);
  cr_assert_eq(
      gk_config_apply_kv_bool(&tiny_sim, &cfg, NULL, 1, "o", err, sizeof err),
      GK_EINVAL);
  cr_assert_str_eq(err, "o: empty key");
  cr_assert_eq(
      gk_config_apply_kv_bool(NULL, &cfg, "twice", 1, "o", err, sizeof err),
      GK_EINVAL);
  cr_assert_eq(gk_config_apply_kv_number(&tiny_sim, &cfg, "start", 0.0 / 0.0,
                                         "o", err, sizeof err),
               GK_EINVAL, "NaN");
  cr_assert_eq(cfg.start, 7, "failed calls change nothing");
}
