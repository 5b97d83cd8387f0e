/* gk_server_delay.c: a room's input delay from its players' round trips
 * (issue 19).
 *
 * With `lockstep.input_delay: "auto"` (and a creator that asked for 0):
 *   - at MATCH_START the delay is gk_delay_wanted over the slowest
 *     connected player's round trip and jitter (ENet's estimates, kept
 *     fresh by the links' pings from the lobby on: ENet's ping_ms);
 *   - during the match, every ping period, the wanted delay is observed
 *     again and the hysteresis controller (gk_net_delay.h) may propose a
 *     change, which the session announces at its next unconfirmed step
 *     (gk_net_session_set_delay): every engine switches at the same step.
 * The delays in force (switch step, delay) are kept for the match_end log
 * and gk-bot; the initial choice and its inputs go to the replay header.
 */
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_internal.h"

static gk_delay_policy policy(const gk_server *s) {
  gk_delay_policy p;
  p.min = s->cfg->input_delay_min;
  p.max = s->cfg->input_delay_max;
  p.step_us = 1000000u / s->cfg->step_hz;
  if (p.step_us == 0) p.step_us = 1;
  p.jitter_x = s->cfg->delay_jitter_x;
  p.hold_ms = s->cfg->delay_hold_ms;
  p.every_ms = s->cfg->delay_every_ms;
  return p;
}

/* The wanted delay now over the players still in the room (their RTTs into
 * rtt/var when non-NULL). */
static uint32_t wanted_now(const gk_server *s, const sv_room *r, uint32_t *rtt,
                           uint32_t *var) {
  gk_delay_policy p = policy(s);
  uint32_t want = p.min;
  for (uint32_t i = 0; i < r->nslots; i++) {
    if (r->conn[i] == SV_NO_CONN) continue;
    uint32_t t = sv_conn_rtt(s, r->conn[i]);
    uint32_t v = sv_conn_rtt_var(s, r->conn[i]);
    if (rtt != NULL) rtt[i] = t;
    if (var != NULL) var[i] = v;
    uint32_t w = gk_delay_wanted(&p, t, v);
    if (w > want) want = w;
  }
  return want;
}

static void note(sv_room *r, uint64_t step, uint32_t delay) {
  if (r->ndelays >= SV_DELAYS_MAX) return;
  r->delay_steps[r->ndelays] = step;
  r->delay_vals[r->ndelays++] = delay;
}

void sv_delay_choose(gk_server *s, sv_room *r) {
  memset(r->rtt_ms, 0, sizeof r->rtt_ms);
  memset(r->rtt_var_ms, 0, sizeof r->rtt_var_ms);
  uint32_t want = wanted_now(s, r, r->rtt_ms, r->rtt_var_ms);
  if (r->delay_auto) r->input_delay = want;
  r->ndelays = 0;
  note(r, 0, r->input_delay);
  gk_delay_policy p = policy(s);
  uint64_t now = sv_now_ms(s);
  gk_delay_ctl_init(&r->delay_ctl, &p, r->input_delay, now);
  r->delay_next_ms = now + (s->cfg->ping_ms ? s->cfg->ping_ms : 100u);
}

cJSON *sv_delay_record(const gk_server *s, const sv_room *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON *rtt = cJSON_CreateArray();
  cJSON *var = cJSON_CreateArray();
  if (o == NULL || rtt == NULL || var == NULL) {
    cJSON_Delete(o);
    cJSON_Delete(rtt);
    cJSON_Delete(var);
    return NULL;
  }
  cJSON_AddNumberToObject(o, "input_delay", r->input_delay);
  cJSON_AddNumberToObject(o, "lead", s->cfg->lead);
  cJSON_AddBoolToObject(o, "auto", r->delay_auto);
  cJSON_AddNumberToObject(o, "min", s->cfg->input_delay_min);
  cJSON_AddNumberToObject(o, "max", s->cfg->input_delay_max);
  cJSON_AddNumberToObject(o, "step_hz", s->cfg->step_hz);
  for (uint32_t i = 0; i < r->nslots; i++) {
    cJSON_AddItemToArray(rtt, cJSON_CreateNumber(r->rtt_ms[i]));
    cJSON_AddItemToArray(var, cJSON_CreateNumber(r->rtt_var_ms[i]));
  }
  cJSON_AddItemToObject(o, "rtt_ms", rtt);
  cJSON_AddItemToObject(o, "rtt_var_ms", var);
  return o;
}

static void log_change(gk_server *s, const sv_room *r, uint32_t from,
                       uint32_t to, uint64_t announce, uint64_t at) {
  if (!gk_log_begin(s->log, GK_LOG_INFO, "delay_change", r->code)) return;
  gk_log_u64(s->log, "from", from);
  gk_log_u64(s->log, "to", to);
  gk_log_u64(s->log, "announce_step", announce);
  gk_log_u64(s->log, "switch_step", at);
  char list[GK_PLAYERS_MAX * 12 + 1];
  size_t used = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < r->nslots && used < sizeof list; i++) {
    uint32_t t = sv_conn_rtt(s, r->conn[i]); /* 0 with no connection */
    int n = snprintf(list + used, sizeof list - used, "%s%u", i ? "," : "", t);
    if (n < 0) break;
    used += (size_t)n;
  }
  gk_log_str(s->log, "rtt_ms", list);
  gk_log_end(s->log);
}

void sv_delay_tick(gk_server *s, sv_room *r) {
  if (!r->delay_auto || r->state != SV_ROOM_PLAYING || r->end_pending) return;
  uint64_t now = sv_now_ms(s);
  if (now < r->delay_next_ms) return;
  r->delay_next_ms = now + (s->cfg->ping_ms ? s->cfg->ping_ms : 100u);
  uint32_t want = wanted_now(s, r, NULL, NULL);
  uint32_t to = gk_delay_ctl_observe(&r->delay_ctl, now, want);
  if (to == 0) return;
  uint32_t from = gk_net_session_delay(&r->session);
  uint64_t announce = 0, at = 0;
  int rc = gk_net_session_set_delay(&r->session, to, &announce, &at, now);
  if (rc != 0) return; /* busy or ending: proposed again later */
  gk_delay_ctl_changed(&r->delay_ctl, to, now);
  note(r, at, to);
  log_change(s, r, from, to, announce, at);
}

static void delays_text(const sv_room *r, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < r->ndelays && used < cap; i++) {
    int n = snprintf(out + used, cap - used, "%s%llu:%u", i ? "," : "",
                     (unsigned long long)r->delay_steps[i], r->delay_vals[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

void sv_delay_log_start(gk_server *s, const sv_room *r) {
  char list[GK_PLAYERS_MAX * 12 + 1];
  size_t used = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < r->nslots && used < sizeof list; i++) {
    int n = snprintf(list + used, sizeof list - used, "%s%u", i ? "," : "",
                     r->rtt_ms[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  gk_log_bool(s->log, "input_delay_auto", r->delay_auto);
  gk_log_str(s->log, "rtt_ms", list);
}

void sv_delay_log_end(gk_server *s, const sv_room *r) {
  char list[SV_DELAYS_MAX * 24 + 1];
  delays_text(r, list, sizeof list);
  gk_log_str(s->log, "input_delays", list);
  uint64_t steps = r->session_open ? r->session.loop.steps : 0;
  uint64_t ns = uv_hrtime() - r->start_ns;
  /* steps per wall second, x1000, as an integer (the log has no floats) */
  gk_log_u64(s->log, "steps_per_ks",
             ns > 0 ? steps * 1000000000000ull / ns : 0);
}
