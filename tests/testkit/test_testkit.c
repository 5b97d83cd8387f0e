/* test_testkit.c: the test kit's checks that need no network: the sync
 * test (on every built-in genre, and on a genre that leaves a field out of
 * its state) and the determinism probe. The engines-over-ENet half is
 * tested by tests/net/test_lockstep.c, which is built on it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_genres.h"
#include "gk_rng.h"
#include "gk_testkit_probe.h"

static char err[512];

Test(testkit, the_sync_test_passes_for_every_built_in_genre) {
  int tested = 0;
  for (size_t i = 0; gk_genres[i] != NULL; i++) {
    const gk_sim *sim = gk_genres[i];
    if (sim->bot_size == 0) continue;
    gk_testkit_sync_result res;
    int rc = gk_testkit_sync(sim, NULL, 7, sim->players_min, 120, 240, &res,
                             err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", sim->name, err);
    cr_assert_eq(res.steps_compared, 240);
    cr_assert_not(res.parted);
    cr_assert_gt(res.state_bytes, 0);
    tested++;
  }
  cr_assert_gt(tested, 0);
}

/* "leaky": a genre whose write_state leaves out a counter that changes the
 * state every 16th step, the kind of bug the sync test is for. */
typedef struct leaky {
  uint64_t x;
  uint64_t hidden; /* not written: read_state restarts it at 0 */
} leaky;

static void cfg_default(void *cfg) {
  (void)cfg;
}
static int cfg_set(void *cfg, const char *key, const gk_value *v, char *e,
                   size_t elen) {
  (void)cfg;
  (void)v;
  return gk_errf(e, elen, GK_ENOTFOUND, "unknown key \"%s\"", key);
}
static void cfg_each(const void *cfg, gk_config_each_cb cb, void *ctx) {
  (void)cfg;
  (void)cb;
  (void)ctx;
}
static void *create(const void *cfg, uint64_t seed, uint32_t players, char *e,
                    size_t elen) {
  (void)cfg;
  (void)players;
  leaky *s = calloc(1, sizeof *s);
  if (s == NULL) gk_errf(e, elen, GK_ENOMEM, "out of memory");
  if (s != NULL) s->x = seed;
  return s;
}
static void destroy(void *s) {
  free(s);
}
static void step(void *state, const gk_step_input *in) {
  leaky *s = state;
  s->hidden++;
  s->x = s->x * 31u + in->inputs[0];
  if (s->hidden % 16 == 0) s->x ^= s->hidden;
}
static void write_state(const void *state, gk_writer *w) {
  gk_write_u64(w, "x", ((const leaky *)state)->x);
}
static void *read_state(const void *cfg, gk_reader *r, char *e, size_t elen) {
  leaky *s = create(cfg, 0, 1, e, elen);
  if (s != NULL) s->x = gk_read_u64(r);
  return s;
}
static void bot_init(void *bot, const void *cfg, uint64_t seed, uint32_t p) {
  (void)cfg;
  (void)p;
  memcpy(bot, &seed, sizeof seed);
}
static void bot_next(void *bot, uint8_t *record) {
  uint64_t v;
  memcpy(&v, bot, sizeof v);
  record[0] = (uint8_t)(gk_splitmix64(&v) | 1u);
  memcpy(bot, &v, sizeof v);
}

static const gk_sim leaky_sim = {.abi = GK_SIM_ABI,
                                 .name = "leaky",
                                 .version = 1,
                                 .step_seconds = {1, 60},
                                 .input_size = 1,
                                 .players_min = 1,
                                 .players_max = 1,
                                 .config_size = 1,
                                 .config_default = cfg_default,
                                 .config_set = cfg_set,
                                 .config_each = cfg_each,
                                 .create = create,
                                 .destroy = destroy,
                                 .step = step,
                                 .write_sample = write_state,
                                 .write_state = write_state,
                                 .read_state = read_state,
                                 .bot_size = sizeof(uint64_t),
                                 .bot_init = bot_init,
                                 .bot_next = bot_next};

Test(testkit, the_sync_test_reports_the_first_step_where_the_runs_part) {
  gk_testkit_sync_result res;
  int rc =
      gk_testkit_sync(&leaky_sim, NULL, 3, 1, 20, 100, &res, err, sizeof err);
  cr_assert_eq(rc, GK_EMISMATCH, "%s", err);
  cr_assert(res.parted);
  /* The straight run's counter reaches 32 after step 31; the read-back
   * run's only reaches 16 after step 35. */
  cr_assert_eq(res.parted_at, 31, "parted at %llu: %s",
               (unsigned long long)res.parted_at, err);
  cr_assert_eq(res.steps_compared, 12);
  cr_assert(strstr(err, "step 31"), "%s", err);
}

Test(testkit, the_probe_gives_one_chain_per_run_and_another_for_another_seed) {
  const gk_sim *sim = gk_genres[0];
  uint32_t players = sim->players_min;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cr_assert_not_null(out);
  gk_testkit_chain a, b, c;
  cr_assert_eq(gk_testkit_probe(sim, NULL, 9, players, 300, 100, out, &a, err,
                                sizeof err),
               0, "%s", err);
  cr_assert_eq(gk_testkit_probe(sim, NULL, 9, players, 300, 0, NULL, &b, err,
                                sizeof err),
               0, "%s", err);
  cr_assert_eq(gk_testkit_probe(sim, NULL, 10, players, 300, 0, NULL, &c, err,
                                sizeof err),
               0, "%s", err);
  fclose(out);
  cr_assert_eq(a.steps, 300);
  cr_assert_eq(a.digest, b.digest);
  cr_assert_eq(a.final_hash, b.final_hash);
  cr_assert_neq(a.digest, c.digest);
  /* Three per-step lines and the summary naming the genre and the chain. */
  char want[128];
  snprintf(want, sizeof want, "chain=%016llx\n", (unsigned long long)a.digest);
  cr_assert(strstr(text, want), "%s", text);
  cr_assert(strstr(text, "step 99 hash ") && strstr(text, "step 299 hash "),
            "%s", text);
  cr_assert(strstr(text, sim->name), "%s", text);
  free(text);
}

Test(testkit, the_probe_refuses_a_genre_without_a_bot_and_bad_players) {
  gk_sim nobot = leaky_sim;
  nobot.bot_size = 0;
  nobot.bot_init = NULL;
  nobot.bot_next = NULL;
  cr_assert_eq(
      gk_testkit_probe(&nobot, NULL, 1, 1, 10, 0, NULL, NULL, err, sizeof err),
      GK_EINVAL);
  cr_assert(strstr(err, "bot"), "%s", err);
  cr_assert_eq(gk_testkit_probe(&leaky_sim, NULL, 1, 2, 10, 0, NULL, NULL, err,
                                sizeof err),
               GK_EINVAL);
  cr_assert(strstr(err, "1..1 players"), "%s", err);
}
