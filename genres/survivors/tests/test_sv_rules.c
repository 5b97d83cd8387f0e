/* Survivors rules: movement, chase, separation, each weapon, gems, level-up
 * and picks, pause, damage, death and the end of the run. Each test builds
 * a run with spawning off and places exactly the entities it needs. */
#include "sv_test.h"

static int64_t dist2(gk_fx ax, gk_fx ay, gk_fx bx, gk_fx by) {
  int64_t dx = (int64_t)ax - bx, dy = (int64_t)ay - by;
  return dx * dx + dy * dy;
}

/* --- movement ----------------------------------------------------------- */

Test(survivors_move, a_full_stick_moves_the_player_by_its_speed_per_step) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  gk_fx x0 = s->p[0].x, y0 = s->p[0].y;
  uint8_t rec[4];
  gk_sv_input_pack(rec, 127, 0, 0, 0);
  sv_step_with(s, rec, NULL);
  cr_assert_eq(s->p[0].x - x0, s->p[0].speed);
  cr_assert_eq(s->p[0].y, y0);
  gk_sv_input_pack(rec, 0, -128, 0, 0);
  sv_step_with(s, rec, NULL);
  cr_assert_eq(y0 - s->p[0].y, s->p[0].speed, "-128 is clamped to full");
  gk_survivors_sim.destroy(s);
}

Test(survivors_move, a_diagonal_is_not_faster_than_a_straight_line) {
  const int8_t sticks[][2] = {{127, 127}, {-128, -128}, {-128, 127},
                              {127, -90}, {100, 100},   {-7, 127}};
  gk_fx speed = gk_fx_from_int(2);
  for (size_t i = 0; i < sizeof sticks / sizeof sticks[0]; i++) {
    gk_fx vx, vy;
    gk__sv_move_vector(sticks[i][0], sticks[i][1], speed, &vx, &vy);
    int64_t v2 = (int64_t)vx * vx + (int64_t)vy * vy;
    int64_t full = (int64_t)speed * speed;
    /* Never faster; at most a few 1/65536 units slower from truncation. */
    cr_assert_leq(v2, full, "stick %d,%d", sticks[i][0], sticks[i][1]);
    cr_assert_geq(v2, (int64_t)(speed - 4) * (speed - 4), "stick %d,%d",
                  sticks[i][0], sticks[i][1]);
    cr_assert(vx == 0 || (vx > 0) == (sticks[i][0] > 0));
    cr_assert(vy == 0 || (vy > 0) == (sticks[i][1] > 0));
  }
}

Test(survivors_move, a_half_stick_moves_half_as_fast_and_zero_does_not_move) {
  gk_fx speed = gk_fx_from_int(2), vx, vy;
  gk__sv_move_vector(0, 0, speed, &vx, &vy);
  cr_assert(vx == 0 && vy == 0);
  gk__sv_move_vector(0, 64, speed, &vx, &vy);
  cr_assert_eq(vx, 0);
  cr_assert_eq(vy, (gk_fx)((int64_t)speed * 64 / 127));
}

Test(survivors_move, players_stop_at_the_arena_edge) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 14, 14);
  uint8_t rec[4];
  gk_sv_input_pack(rec, -128, -128, 0, 0);
  for (int i = 0; i < 10; i++) sv_step_with(s, rec, NULL);
  cr_assert_eq(s->p[0].x, FX(GK__SV_PLAYER_RADIUS));
  cr_assert_eq(s->p[0].y, FX(GK__SV_PLAYER_RADIUS));
  gk_survivors_sim.destroy(s);
}

/* --- enemies ------------------------------------------------------------ */

Test(survivors_enemies,
     an_enemy_chases_the_nearest_living_player_at_its_speed) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  disarm(s, 0);
  disarm(s, 1);
  place_player(s, 0, 200, 800);
  place_player(s, 1, 1400, 800);
  cr_assert_eq(gk__sv_spawn_enemy(s, GK_SV_ZOMBIE, FX(1000), FX(800)), 0);
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->enemies[0].x, FX(1000) + gk__sv_kinds[GK_SV_ZOMBIE].speed,
               "moves right, toward player 1, by exactly its speed");
  cr_assert_eq(s->enemies[0].y, FX(800));
  /* Once player 1 is dead it turns to player 0. */
  s->p[1].alive = 0;
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->enemies[0].x, FX(1000));
  gk_survivors_sim.destroy(s);
}

Test(survivors_enemies, kinds_differ_in_speed_health_damage_and_size) {
  for (int a = 0; a < GK_SV_KINDS; a++)
    for (int b = a + 1; b < GK_SV_KINDS; b++) {
      const gk__sv_kind_info *x = &gk__sv_kinds[a], *y = &gk__sv_kinds[b];
      cr_assert(x->speed != y->speed && x->health != y->health &&
                x->damage != y->damage && x->radius != y->radius);
    }
}

Test(survivors_enemies,
     enemies_on_one_spot_spread_out_until_they_barely_overlap) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  place_player(s, 0, 100, 100);
  /* A pile far from the player; the player stays out of reach. */
  for (int i = 0; i < 40; i++)
    cr_assert_geq(gk__sv_spawn_enemy(s, GK_SV_ZOMBIE, FX(1200), FX(1200)), 0);
  for (int t = 0; t < 90; t++) {
    sv_step_with(s, NULL, NULL);
    place_player(s, 0, 100, 100); /* hold the chase target still */
  }
  gk_fx rr = FX(2 * gk__sv_kinds[GK_SV_ZOMBIE].radius);
  int64_t tight = (int64_t)rr * rr / 4; /* closer than one radius apart */
  for (uint32_t i = 0; i < s->n_enemies; i++)
    for (uint32_t j = i + 1; j < s->n_enemies; j++)
      cr_assert_gt(dist2(s->enemies[i].x, s->enemies[i].y, s->enemies[j].x,
                         s->enemies[j].y),
                   tight, "enemies %u and %u are still piled up", i, j);
  gk_survivors_sim.destroy(s);
}

Test(survivors_enemies, two_touching_enemies_are_pushed_apart) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  place_player(s, 0, 800, 20); /* far away, straight up */
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(797), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(803), FX(800));
  sv_step_with(s, NULL, NULL);
  gk_fx gap = s->enemies[1].x - s->enemies[0].x;
  cr_assert_gt(gap, FX(6), "the gap grew");
  cr_assert_eq(FX(797) - s->enemies[0].x, s->enemies[1].x - FX(803),
               "each was pushed by the same amount");
  gk_survivors_sim.destroy(s);
}

/* --- weapons ------------------------------------------------------------ */

Test(survivors_weapons,
     the_wand_shoots_the_nearest_enemy_and_the_shot_dies_on_hit) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 400, 800);
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(700), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(600), FX(800)); /* nearer */
  int32_t hp_far = s->enemies[0].health, hp_near = s->enemies[1].health;
  sv_events ev = {.n = 0};
  sv_step_with(s, NULL, &ev);
  cr_assert_eq(s->n_proj, 1);
  cr_assert_gt(s->proj[0].vx, 0);
  cr_assert_eq(s->proj[0].vy, 0, "aimed straight at the nearer enemy");
  s->p[0].wtimer[GK_SV_WAND] = 1000; /* no second shot */
  unsigned t = 0;
  while (s->n_proj == 1 && t++ < 60) sv_step_with(s, NULL, &ev);
  cr_assert_eq(s->enemies[1].health, hp_near - 8, "level 1 wand: 8 damage");
  cr_assert_eq(s->enemies[0].health, hp_far, "a level 1 shot does not pierce");
  gk_survivors_sim.destroy(s);
}

Test(survivors_weapons, a_piercing_shot_hits_two_enemies_in_a_line) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.start_weapon_level = 3; /* pierce 1, two shots fanned out */
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 400, 800);
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(500), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(560), FX(800));
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(620), FX(800));
  int32_t hp = s->enemies[0].health;
  s->p[0].wtimer[GK_SV_WAND] = 1;
  /* Fire one volley: two shots; each may hit two brutes. */
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->n_proj, 2);
  s->p[0].wtimer[GK_SV_WAND] = 1000;
  for (int t = 0; t < 80 && s->n_proj > 0; t++) sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->n_proj, 0);
  int32_t dealt = 0;
  for (uint32_t i = 0; i < s->n_enemies; i++)
    dealt += hp - s->enemies[i].health;
  cr_assert_eq(dealt, 4 * 16, "two shots, two hits each, 16 damage a hit");
  gk_survivors_sim.destroy(s);
}

Test(survivors_weapons, a_shot_that_hits_nothing_expires) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 800, 800);
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(1100), FX(800));
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->n_proj, 1);
  disarm(s, 0);
  s->enemies[0].y = FX(1500); /* out of the shot's way */
  s->enemies[0].x = FX(1500);
  unsigned t = 1;
  while (s->n_proj > 0 && t < 200) {
    sv_step_with(s, NULL, NULL);
    t++;
  }
  cr_assert_eq(s->n_proj, 0);
  cr_assert_leq(t, 75, "gone by its lifetime");
  gk_survivors_sim.destroy(s);
}

Test(survivors_weapons,
     the_aura_hurts_what_is_near_every_tick_and_nothing_farther) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  s->p[0].wlevel[GK_SV_AURA] = 1;
  place_player(s, 0, 800, 800);
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(860), FX(800)); /* 60: in reach */
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(800), FX(900)); /* 100: out */
  int32_t hp = s->enemies[0].health;
  s->enemies[0].health = s->enemies[1].health = hp;
  sv_step_with(s, NULL, NULL);
  /* Brutes chase; keep the one in reach in place by re-placing it. */
  cr_assert_eq(s->enemies[0].health, hp - 3, "level 1 aura: 3 a tick");
  for (int t = 0; t < 20; t++) {
    s->enemies[0].x = FX(860);
    s->enemies[0].y = FX(800);
    s->enemies[1].x = FX(800);
    s->enemies[1].y = FX(900);
    sv_step_with(s, NULL, NULL);
  }
  cr_assert_eq(s->enemies[0].health, hp - 6, "ticks every 20 steps");
  cr_assert_eq(s->enemies[1].health, hp);
  gk_survivors_sim.destroy(s);
}

Test(survivors_weapons, the_orbit_hurts_enemies_on_its_ring_only) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.enemy_health_pct = 10000; /* nobody dies, indices stay put */
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  s->p[0].wlevel[GK_SV_ORBIT] = 1;
  place_player(s, 0, 800, 800);
  /* Eight brutes on the orbit ring, one far outside it. */
  gk_fx pos[9][2];
  for (int k = 0; k < 8; k++) {
    uint16_t a = (uint16_t)(k * 8192);
    pos[k][0] = FX(800) + gk_fx_cos(a) * 72;
    pos[k][1] = FX(800) + gk_fx_sin(a) * 72;
  }
  pos[8][0] = FX(800);
  pos[8][1] = FX(1200);
  for (int k = 0; k < 9; k++)
    gk__sv_spawn_enemy(s, GK_SV_BRUTE, pos[k][0], pos[k][1]);
  int32_t hp = s->enemies[8].health;
  for (int t = 0; t < 60; t++) {
    for (int k = 0; k < 9; k++) { /* hold them still */
      s->enemies[k].x = pos[k][0];
      s->enemies[k].y = pos[k][1];
    }
    sv_step_with(s, NULL, NULL);
  }
  int hit = 0;
  for (int k = 0; k < 8; k++) hit += s->enemies[k].health < hp;
  cr_assert_geq(hit, 4, "the orb swept past several ring enemies (%d)", hit);
  cr_assert_eq(s->enemies[8].health, hp);
  gk_survivors_sim.destroy(s);
}

Test(survivors_weapons, a_kill_drops_a_gem_and_reports_the_killer) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  disarm(s, 1);
  place_player(s, 0, 400, 800);
  place_player(s, 1, 1400, 200);
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(560), FX(800));
  sv_events ev = {.n = 0};
  for (int t = 0; t < 60 && s->kills == 0; t++) sv_step_with(s, NULL, &ev);
  cr_assert_eq(s->kills, 1);
  cr_assert_eq(s->n_enemies, 0);
  cr_assert_eq(s->n_gems, 1);
  cr_assert_eq(s->gems[0].value, gk__sv_kinds[GK_SV_BAT].xp);
  const gk_event *k = sv_find(&ev, "enemy_killed");
  cr_assert_eq(k->player, 0);
  cr_assert_eq(sv_field(k, "kind"), GK_SV_BAT);
  cr_assert_eq(s->p[0].kills, 1);
  gk_survivors_sim.destroy(s);
}

/* --- gems and levels ---------------------------------------------------- */

Test(survivors_levels, a_gem_in_reach_is_collected_and_one_out_of_reach_stays) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 800, 800);
  gk__sv_add_gem(s, FX(840), FX(800), 3);
  gk__sv_add_gem(s, FX(900), FX(800), 4);
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->p[0].xp, 3);
  cr_assert_eq(s->n_gems, 1);
  cr_assert_eq(s->gems[0].value, 4);
  gk_survivors_sim.destroy(s);
}

static gk__sv_state *leveled(const gk_sv_config *cfg, sv_events *ev) {
  gk__sv_state *s = sv_new(cfg, 2);
  disarm(s, 0);
  disarm(s, 1);
  place_player(s, 0, 800, 800);
  place_player(s, 1, 300, 300);
  gk__sv_add_gem(s, FX(800), FX(800), gk__sv_xp_next(1));
  gk__sv_spawn_enemy(s, GK_SV_ZOMBIE, FX(1200), FX(800));
  sv_step_with(s, NULL, ev);
  cr_assert_eq(s->p[0].level, 2);
  cr_assert(s->p[0].pick_pending);
  return s;
}

Test(survivors_levels,
     a_level_up_offers_three_distinct_upgrades_and_freezes_play) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  sv_events ev = {.n = 0};
  gk__sv_state *s = leveled(&cfg, &ev);
  const gk_event *lu = sv_find(&ev, "level_up");
  cr_assert_eq(lu->player, 0);
  cr_assert_eq(sv_field(lu, "level"), 2);
  int64_t o1 = sv_field(lu, "option1"), o2 = sv_field(lu, "option2"),
          o3 = sv_field(lu, "option3");
  cr_assert(o1 != o2 && o2 != o3 && o1 != o3);
  cr_assert(o1 < GK_SV_UP_COUNT && o2 < GK_SV_UP_COUNT && o3 < GK_SV_UP_COUNT);
  gk_fx ex = s->enemies[0].x;
  uint32_t play = s->play_steps;
  uint8_t rec[8] = {0};
  gk_sv_input_pack(rec + 4, 127, 0, 0, 0); /* player 1 tries to move */
  gk_fx px1 = s->p[1].x;
  for (int t = 0; t < 50; t++) sv_step_with(s, rec, NULL);
  cr_assert_eq(s->enemies[0].x, ex, "enemies frozen");
  cr_assert_eq(s->p[1].x, px1, "other players frozen too");
  cr_assert_eq(s->play_steps, play);
  cr_assert_eq(s->step, 51, "steps still count");
  gk_survivors_sim.destroy(s);
}

Test(survivors_levels, a_pick_applies_that_option_and_play_resumes) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  sv_events ev = {.n = 0};
  gk__sv_state *s = leveled(&cfg, &ev);
  /* Make the choice checkable: force option 2 to a new aura. */
  s->p[0].options[1] = GK_SV_UP_AURA;
  uint8_t rec[8] = {0};
  rec[3] = 2;
  ev.n = 0;
  sv_step_with(s, rec, &ev);
  cr_assert_not(s->p[0].pick_pending);
  cr_assert_eq(s->p[0].wlevel[GK_SV_AURA], 1);
  const gk_event *up = sv_find(&ev, "upgrade_picked");
  cr_assert_eq(sv_field(up, "choice"), 2);
  cr_assert_eq(sv_field(up, "upgrade"), GK_SV_UP_AURA);
  cr_assert_eq(sv_field(up, "timed_out"), 0);
  gk_fx ex = s->enemies[0].x;
  sv_step_with(s, NULL, NULL);
  cr_assert_neq(s->enemies[0].x, ex, "play resumed");
  gk_survivors_sim.destroy(s);
}

Test(survivors_levels, a_late_pick_is_still_taken_and_only_from_its_player) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  sv_events ev = {.n = 0};
  gk__sv_state *s = leveled(&cfg, &ev);
  uint8_t rec[8] = {0};
  rec[4 + 3] = 1; /* player 1 has nothing pending: ignored */
  for (int t = 0; t < 400; t++) sv_step_with(s, rec, NULL);
  cr_assert(s->p[0].pick_pending);
  uint8_t opt = s->p[0].options[2];
  memset(rec, 0, sizeof rec);
  rec[3] = 3;
  ev.n = 0;
  sv_step_with(s, rec, &ev);
  cr_assert_not(s->p[0].pick_pending);
  cr_assert_eq(sv_field(sv_find(&ev, "upgrade_picked"), "upgrade"), opt);
  gk_survivors_sim.destroy(s);
}

Test(survivors_levels, a_pick_not_made_in_time_takes_the_first_option) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.pick_timeout_steps = 10;
  sv_events ev = {.n = 0};
  gk__sv_state *s = leveled(&cfg, &ev);
  uint8_t opt = s->p[0].options[0];
  ev.n = 0;
  sv_steps(s, 9, &ev);
  cr_assert(s->p[0].pick_pending);
  sv_steps(s, 1, &ev);
  cr_assert_not(s->p[0].pick_pending);
  const gk_event *up = sv_find(&ev, "upgrade_picked");
  cr_assert_eq(sv_field(up, "choice"), 1);
  cr_assert_eq(sv_field(up, "upgrade"), opt);
  cr_assert_eq(sv_field(up, "timed_out"), 1);
  gk_survivors_sim.destroy(s);
}

Test(survivors_levels, a_server_bot_takes_a_pending_pick_and_never_pauses) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  sv_events ev = {.n = 0};
  gk__sv_state *s = leveled(&cfg, &ev);
  cr_assert(s->p[0].pick_pending);
  uint8_t rec[GK_SV_INPUT_SIZE];
  gk_sv_input_pack(rec, 5, -5, GK_SV_BUTTON_PAUSE, 0);
  gk_survivors_sim.bot_answer(s, 0, rec);
  cr_assert_eq(rec[3], 1, "the first card, at once");
  cr_assert_eq(rec[2] & GK_SV_BUTTON_PAUSE, 0, "no pause");
  cr_assert_eq((int8_t)rec[0], 5, "its move stays");
  /* nothing asked: the pick stays none, and still no pause */
  gk_sv_input_pack(rec, 5, -5, GK_SV_BUTTON_PAUSE, 0);
  gk_survivors_sim.bot_answer(s, 1, rec);
  cr_assert_eq(rec[3], 0);
  cr_assert_eq(rec[2] & GK_SV_BUTTON_PAUSE, 0);
  gk_survivors_sim.destroy(s);
}

Test(survivors_levels,
     experience_for_two_levels_opens_a_second_pick_after_the_first) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  place_player(s, 0, 800, 800);
  gk__sv_add_gem(s, FX(800), FX(800), gk__sv_xp_next(1) + gk__sv_xp_next(2));
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->p[0].level, 2);
  uint8_t rec[4] = {0, 0, 0, 1};
  sv_events ev = {.n = 0};
  sv_step_with(s, rec, &ev);
  cr_assert_eq(s->p[0].level, 3);
  cr_assert(s->p[0].pick_pending);
  cr_assert_eq(sv_count(&ev, "level_up"), 1);
  cr_assert_eq(s->p[0].xp, 0);
  gk_survivors_sim.destroy(s);
}

/* --- pause -------------------------------------------------------------- */

Test(survivors_pause, a_press_pauses_at_that_step_and_the_next_press_resumes) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  disarm(s, 0);
  disarm(s, 1);
  gk__sv_spawn_enemy(s, GK_SV_ZOMBIE, FX(1200), FX(800));
  uint8_t press[8] = {0};
  gk_sv_input_pack(press, 127, 0, GK_SV_BUTTON_PAUSE, 0);
  gk_fx ex = s->enemies[0].x, px = s->p[0].x;
  sv_step_with(s, press, NULL);
  cr_assert(s->paused);
  cr_assert_eq(s->enemies[0].x, ex, "the press step is already frozen");
  cr_assert_eq(s->p[0].x, px);
  uint8_t hold[8] = {0};
  gk_sv_input_pack(hold, 127, 0, 0, 0);
  for (int t = 0; t < 30; t++) sv_step_with(s, hold, NULL);
  cr_assert_eq(s->play_steps, 0);
  cr_assert_eq(s->step, 31);
  memset(press, 0, sizeof press);
  press[4 + 2] = GK_SV_BUTTON_PAUSE; /* the other player unpauses */
  sv_step_with(s, press, NULL);
  cr_assert_not(s->paused);
  cr_assert_eq(s->play_steps, 1, "the unpause step plays");
  cr_assert_neq(s->enemies[0].x, ex);
  gk_survivors_sim.destroy(s);
}

Test(survivors_pause, two_presses_in_one_step_toggle_once) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  uint8_t press[8] = {0};
  press[2] = press[6] = GK_SV_BUTTON_PAUSE;
  sv_step_with(s, press, NULL);
  cr_assert(s->paused);
  sv_step_with(s, press, NULL);
  cr_assert_not(s->paused);
  gk_survivors_sim.destroy(s);
}

/* --- damage, death, the end --------------------------------------------- */

Test(survivors_end, contact_hurts_once_per_cooldown) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.hit_cooldown_steps = 30;
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  place_player(s, 0, 800, 800);
  gk__sv_spawn_enemy(s, GK_SV_BRUTE, FX(820), FX(800));
  sv_events ev = {.n = 0};
  for (int t = 0; t < 31; t++) sv_step_with(s, NULL, &ev);
  cr_assert_eq(sv_count(&ev, "player_hit"), 1);
  const gk_event *h = sv_find(&ev, "player_hit");
  cr_assert_eq(sv_field(h, "damage"), gk__sv_kinds[GK_SV_BRUTE].damage);
  sv_step_with(s, NULL, &ev);
  cr_assert_eq(sv_count(&ev, "player_hit"), 2);
  gk_survivors_sim.destroy(s);
}

Test(survivors_end, the_last_player_dying_ends_the_run) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  disarm(s, 0);
  disarm(s, 1);
  place_player(s, 0, 400, 800);
  place_player(s, 1, 1200, 800);
  s->p[0].health = 1;
  s->p[1].health = 1;
  gk__sv_spawn_enemy(s, GK_SV_BAT, FX(410), FX(800));
  sv_events ev = {.n = 0};
  sv_step_with(s, NULL, &ev);
  cr_assert_not(s->p[0].alive);
  cr_assert_eq(sv_field(sv_find(&ev, "player_died"), "reason"), 0);
  cr_assert_not(gk_survivors_sim.is_over(s), "player 1 still lives");
  for (int t = 0; t < 2000 && !s->over; t++) sv_step_with(s, NULL, &ev);
  cr_assert(gk_survivors_sim.is_over(s));
  cr_assert_eq(sv_count(&ev, "player_died"), 2);
  const gk_event *go = sv_find(&ev, "game_over");
  cr_assert_eq(sv_field(go, "reason"), 0);
  uint32_t play = s->play_steps;
  sv_steps(s, 10, &ev);
  cr_assert_eq(s->play_steps, play, "nothing plays after game over");
  cr_assert_eq(sv_count(&ev, "game_over"), 1);
  gk_survivors_sim.destroy(s);
}

Test(survivors_end, surviving_the_duration_ends_the_run) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  cfg.duration_steps = 100;
  gk__sv_state *s = sv_new(&cfg, 1);
  sv_events ev = {.n = 0};
  sv_steps(s, 99, &ev);
  cr_assert_not(gk_survivors_sim.is_over(s));
  sv_steps(s, 1, &ev);
  cr_assert(gk_survivors_sim.is_over(s));
  cr_assert_eq(sv_field(sv_find(&ev, "game_over"), "reason"), 1);
  gk_survivors_sim.destroy(s);
}

Test(survivors_end, a_removed_player_dies_and_stops_mattering) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 2);
  sv_steps(s, 1, NULL); /* both in at the first step (absent then: waits) */
  gk_step_input in = {1, 1u, 0, 2, NULL};
  uint8_t rec[8] = {0};
  rec[4 + 2] = GK_SV_BUTTON_PAUSE; /* a neutral-only player cannot pause */
  in.inputs = rec;
  gk_survivors_sim.step(s, &in);
  sv_events ev = {.n = 0};
  gk_survivors_sim.drain_events(s, sv_record, &ev);
  cr_assert(s->p[1].gone);
  cr_assert_not(s->p[1].alive);
  cr_assert_eq(sv_field(sv_find(&ev, "player_died"), "reason"), 1);
  cr_assert_not(s->paused);
  cr_assert_not(s->over);
  /* Even if its bit comes back, it stays gone. */
  in.active_mask = 3;
  gk_survivors_sim.step(s, &in);
  cr_assert(s->p[1].gone);
  cr_assert_not(s->paused);
  gk_survivors_sim.destroy(s);
}

Test(survivors_end, the_match_end_flag_ends_the_run) {
  gk_sv_config cfg;
  sv_quiet_config(&cfg);
  gk__sv_state *s = sv_new(&cfg, 1);
  uint8_t rec[4] = {0};
  gk_step_input in = {0, 1u, GK_STEP_MATCH_END, 1, rec};
  gk_survivors_sim.step(s, &in);
  sv_events ev = {.n = 0};
  gk_survivors_sim.drain_events(s, sv_record, &ev);
  cr_assert(s->over);
  cr_assert_eq(sv_field(sv_find(&ev, "game_over"), "reason"), 2);
  gk_survivors_sim.destroy(s);
}

/* --- spawning ----------------------------------------------------------- */

Test(survivors_spawn, enemies_spawn_on_schedule_around_a_living_player) {
  gk_sv_config cfg;
  gk_survivors_sim.config_default(&cfg);
  cfg.spawn_interval_start = 10;
  cfg.spawn_batch = 3;
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  sv_steps(s, 9, NULL);
  cr_assert_eq(s->n_enemies, 0);
  sv_steps(s, 1, NULL);
  cr_assert_eq(s->n_enemies, 3);
  for (uint32_t i = 0; i < 3; i++) {
    int64_t d2 = dist2(s->enemies[i].x, s->enemies[i].y, s->p[0].x, s->p[0].y);
    int64_t lo = (int64_t)FX(cfg.spawn_distance - 2);
    int64_t hi = (int64_t)FX(cfg.spawn_distance * 5 / 4 + 2);
    cr_assert(d2 >= lo * lo && d2 <= hi * hi, "enemy %u at the ring", i);
  }
  gk_survivors_sim.destroy(s);
}

Test(survivors_spawn, waves_start_on_schedule_and_the_enemy_cap_holds) {
  gk_sv_config cfg;
  gk_survivors_sim.config_default(&cfg);
  cfg.wave_steps = 60;
  cfg.spawn_interval_start = 1;
  cfg.spawn_interval_min = 1;
  cfg.spawn_batch = 10;
  cfg.max_enemies = 50;
  cfg.player_health = 1000000;
  gk__sv_state *s = sv_new(&cfg, 1);
  disarm(s, 0);
  sv_events ev = {.n = 0};
  sv_steps(s, 130, &ev);
  cr_assert_eq(sv_count(&ev, "wave_started"), 2);
  cr_assert_eq(sv_field(sv_find(&ev, "wave_started"), "wave"), 1);
  cr_assert_eq(s->n_enemies, 50);
  gk_survivors_sim.destroy(s);
}

/* --- the grid finds every neighbour ------------------------------------- */

/* The same chase and separation as the genre, over all pairs: the grid may
 * only change how neighbours are found, never which ones. The separation
 * is staggered: at play step t the pair (i, j) pushes, twice as hard as an
 * every-step spring would, only if i + j + t is even. */
static void reference_move(const gk__sv_state *s, uint32_t t, uint32_t i,
                           gk_fx *nx, gk_fx *ny) {
  const gk__sv_enemy *e = &s->enemies[i];
  const gk__sv_kind_info *k = &gk__sv_kinds[e->kind];
  int64_t best = INT64_MAX, bdx = 0, bdy = 0;
  for (uint32_t pi = 0; pi < s->players; pi++) {
    int64_t dx = (int64_t)s->p[pi].x - e->x, dy = (int64_t)s->p[pi].y - e->y;
    if (s->p[pi].alive && dx * dx + dy * dy < best) {
      best = dx * dx + dy * dy;
      bdx = dx;
      bdy = dy;
    }
  }
  int64_t d = (int64_t)gk_isqrt64((uint64_t)best), vx = 0, vy = 0;
  int64_t stop = FX(k->radius + GK__SV_PLAYER_RADIUS);
  if (d > stop) {
    int64_t sp = d - stop < k->speed ? d - stop : k->speed;
    vx = sp * bdx / d;
    vy = sp * bdy / d;
  }
  int64_t px = 0, py = 0;
  for (uint32_t j = 0; j < s->n_enemies; j++) {
    const gk__sv_enemy *o = &s->enemies[j];
    int64_t rr = (int64_t)(k->radius + gk__sv_kinds[o->kind].radius) << 8;
    int64_t dx = (int64_t)(e->x >> 8) - (o->x >> 8),
            dy = (int64_t)(e->y >> 8) - (o->y >> 8);
    int64_t f = rr * rr - (dx * dx + dy * dy);
    if (j == i || (i + j + t) % 2 != 0 || f <= 0) continue;
    if (dx == 0 && dy == 0) {
      px += (i < j ? -rr : rr) * 16384;
      continue;
    }
    px += dx * (f * 65536 / (rr * rr));
    py += dy * (f * 65536 / (rr * rr));
  }
  px /= 256;
  py /= 256;
  gk_fx cap = GK_FX_ONE * 2;
  px = px < -cap ? -cap : px > cap ? cap : px;
  py = py < -cap ? -cap : py > cap ? cap : py;
  gk_fx lo = FX(k->radius);
  gk_fx hx = FX(s->cfg.arena_width - k->radius);
  gk_fx hy = FX(s->cfg.arena_height - k->radius);
  gk_fx x = (gk_fx)(e->x + vx + px), y = (gk_fx)(e->y + vy + py);
  *nx = x < lo ? lo : x > hx ? hx : x;
  *ny = y < lo ? lo : y > hy ? hy : y;
}

/* A dense crowd across cell borders and against the arena's edges, with
 * some enemies on exactly the same point, of the first `kinds` kinds (the
 * separation's windows follow the largest radius present), moved once at a
 * play step of parity t & 1 (pairs within a parity, or across): every
 * enemy lands where the all-pairs reference puts it. */
static void crowd_matches_the_reference(uint32_t t, uint32_t kinds) {
  gk_sv_config cfg;
  gk__sv_state *s = sv_new_crowd(&cfg, 1500, 3);
  gk_rng rng;
  gk_rng_seed(&rng, 11, 3);
  for (uint32_t i = 0; i < 3; i++) disarm(s, i);
  for (int i = 0; i < 1500; i++) {
    gk_fx x = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(400));
    gk_fx y = (gk_fx)gk_rng_below(&rng, (uint32_t)FX(300));
    if (i % 50 == 1 || i % 50 == 2) { /* both parities on one point */
      x = s->enemies[i - 1].x;
      y = s->enemies[i - 1].y;
    }
    cr_assert_geq(gk__sv_spawn_enemy(s, gk_rng_below(&rng, kinds), x, y), 0);
  }
  place_player(s, 0, 1500, 1500);
  place_player(s, 1, 200, 150); /* inside the crowd */
  place_player(s, 2, 1500, 100);
  s->play_steps = t - 1; /* the step plays step t */
  gk_fx want_x[1500], want_y[1500];
  for (uint32_t i = 0; i < 1500; i++)
    reference_move(s, t, i, &want_x[i], &want_y[i]);
  s->p[1].hurt_cd = 1000; /* only the movement phase may change enemies */
  sv_step_with(s, NULL, NULL);
  cr_assert_eq(s->play_steps, t);
  cr_assert_eq(s->n_enemies, 1500);
  for (uint32_t i = 0; i < 1500; i++) {
    cr_assert_eq(s->enemies[i].x, want_x[i], "t %u kinds %u: enemy %u x", t,
                 kinds, i);
    cr_assert_eq(s->enemies[i].y, want_y[i], "t %u kinds %u: enemy %u y", t,
                 kinds, i);
  }
  gk_survivors_sim.destroy(s);
}

Test(survivors_enemies, grid_separation_matches_an_all_pairs_reference) {
  crowd_matches_the_reference(1, GK_SV_KINDS); /* odd: even with odd */
  crowd_matches_the_reference(2, GK_SV_KINDS); /* even: within a parity */
  crowd_matches_the_reference(1, 2);           /* bats and zombies only */
  crowd_matches_the_reference(2, 2);
}
