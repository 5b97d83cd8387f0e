/* Survivors grid: queries and the wand's target find what looking at
 * every enemy finds, in the documented order, with a few enemies (looked
 * at one by one) and with a crowd (through the cells). */
#include "sv_test.h"

typedef struct visits {
  uint32_t idx[640]; /* every enemy of the test */
  uint32_t n;
} visits;

static int visit(gk__sv_state *s, uint32_t enemy, void *ctx) {
  (void)s;
  visits *v = ctx;
  if (v->n < 640) v->idx[v->n++] = enemy;
  return 0;
}

/* The cell key the grid sorts by: row, then column (32-unit cells). */
static uint32_t cell_of(const gk__sv_state *s, uint32_t j) {
  return gk__sv_cell_coord(s->enemies[j].y, s->grid.h) * s->grid.w +
         gk__sv_cell_coord(s->enemies[j].x, s->grid.w);
}

/* The enemies inside the square of half-size r around (x, y), by cell key,
 * then index: the order a query promises. */
static void reference_visits(const gk__sv_state *s, gk_fx x, gk_fx y, int32_t r,
                             visits *v) {
  v->n = 0;
  for (uint32_t j = 0; j < s->n_enemies; j++) {
    const gk__sv_enemy *e = &s->enemies[j];
    if (e->x < x - FX(r) || e->x > x + FX(r) || e->y < y - FX(r) ||
        e->y > y + FX(r))
      continue;
    uint32_t m = v->n++;
    for (; m > 0 && (cell_of(s, v->idx[m - 1]) > cell_of(s, j)); m--)
      v->idx[m] = v->idx[m - 1];
    v->idx[m] = j;
  }
}

Test(survivors_grid, a_query_visits_by_cell_then_index_with_few_or_many) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  gk_rng rng;
  gk_rng_seed(&rng, 3, 4);
  for (uint32_t total = 12; total <= 600; total += 588) {
    while (s->n_enemies < total) {
      gk_fx x = FX(700) +
                (gk_fx)gk_rng_below(&rng, (uint32_t)FX(total > 12 ? 200 : 90));
      gk_fx y = FX(700) +
                (gk_fx)gk_rng_below(&rng, (uint32_t)FX(total > 12 ? 200 : 90));
      cr_assert_geq(
          gk__sv_spawn_enemy(s, gk_rng_below(&rng, GK_SV_KINDS), x, y), 0);
    }
    gk__sv_grid_build(s);
    for (int q = 0; q < 200; q++) {
      gk_fx x = FX(680) + (gk_fx)gk_rng_below(&rng, (uint32_t)FX(240));
      gk_fx y = FX(680) + (gk_fx)gk_rng_below(&rng, (uint32_t)FX(240));
      int32_t r = 10 + (int32_t)gk_rng_below(&rng, 40);
      visits got = {.n = 0}, want;
      gk__sv_grid_query(s, x, y, r, visit, &got);
      reference_visits(s, x, y, r, &want);
      cr_assert_eq(got.n, want.n, "%u enemies, query %d", total, q);
      for (uint32_t i = 0; i < got.n; i++)
        cr_assert_eq(got.idx[i], want.idx[i], "%u enemies, query %d, visit %u",
                     total, q, i);
    }
  }
  gk_survivors_sim.destroy(s);
}

/* The wand's target by looking at every enemy: the nearest living one
 * within range, the lowest index of equals. */
static int32_t reference_target(const gk__sv_state *s, gk_fx px, gk_fx py) {
  int64_t best = gk__sv_sq64(FX(420)) + 1;
  int32_t target = -1;
  for (uint32_t j = 0; j < s->n_enemies; j++) {
    const gk__sv_enemy *e = &s->enemies[j];
    int64_t d2 =
        gk__sv_sq64((int64_t)e->x - px) + gk__sv_sq64((int64_t)e->y - py);
    if (d2 < best && e->health > 0) {
      best = d2;
      target = (int32_t)j;
    }
  }
  return target;
}

Test(survivors_weapons,
     the_wand_finds_the_same_target_in_a_crowd_as_by_looking_at_all) {
  gk_sv_config cfg;
  gk__sv_state *s = sv_new_crowd(&cfg, 600, 1);
  gk_rng rng;
  gk_rng_seed(&rng, 5, 9);
  /* Ties first: four enemies 100 units from (800, 800), so the lowest
   * index must win, and a dead enemy nearer than all of them. */
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(900), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(700), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(800), FX(900));
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(800), FX(700));
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(810), FX(800));
  s->enemies[4].health = 0;
  /* A crowd in one corner (the far side of the arena sees none in range). */
  while (s->n_enemies < 600) {
    gk_fx x = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(500));
    gk_fx y = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(500));
    gk__sv_spawn_enemy(s, gk_rng_below(&rng, GK_SV_KINDS), x, y);
    if (gk_rng_below(&rng, 20) == 0) s->enemies[s->n_enemies - 1].health = 0;
  }
  gk__sv_grid_build(s);
  gk_fx at[][2] = {{FX(800), FX(800)},   {0, 0},
                   {FX(1600), FX(1600)}, {FX(256), FX(256)},
                   {FX(640), FX(32)},    {FX(900), FX(100)}};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    s->p[0].x = at[i][0];
    s->p[0].y = at[i][1];
    cr_assert_eq(gk__sv_wand_target(s, 0),
                 reference_target(s, at[i][0], at[i][1]), "player at (%d, %d)",
                 at[i][0] >> 16, at[i][1] >> 16);
  }
  s->p[0].x = FX(1600);
  s->p[0].y = FX(1600);
  cr_assert_eq(gk__sv_wand_target(s, 0), -1, "nothing within range");
  for (int i = 0; i < 400; i++) {
    gk_fx x = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(1600) + 1);
    gk_fx y = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(1000) + 1);
    s->p[0].x = x;
    s->p[0].y = y;
    cr_assert_eq(gk__sv_wand_target(s, 0), reference_target(s, x, y),
                 "player at (%d, %d)", x, y);
  }
  s->p[0].x = FX(800);
  s->p[0].y = FX(800);
  cr_assert_eq(gk__sv_wand_target(s, 0), 0, "of four as near, the first");
  gk_survivors_sim.destroy(s);
}
