/* gk_room_delay.c: a room's input delay from its players' round trips,
 * changed mid-match when they change.
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
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_net_delay.h"
#include "gk_room_internal.h"

#define GK_ROOM__DELAYS_MAX                                                    \
  32 /* input delay changes kept per match for logs                            \
      */

/* A room's part of this file (r->delay): no other file sees its fields. */
struct gk_room__delay {
  int on;                          /* "auto": chosen from round trips */
  uint32_t rtt_ms[GK_PLAYERS_MAX]; /* at MATCH_START, per slot */
  uint32_t rtt_var_ms[GK_PLAYERS_MAX];
  gk_delay_ctl ctl;
  uint64_t next_ms;                    /* next observation */
  uint64_t steps[GK_ROOM__DELAYS_MAX]; /* delays in force: from step ... */
  uint32_t vals[GK_ROOM__DELAYS_MAX];  /* ... this delay (switch steps) */
  uint32_t n;
};

gk_room__delay *gk_room__delay_new(int auto_on) {
  gk_room__delay *d = calloc(1, sizeof(*d));
  if (d != NULL) d->on = auto_on != 0;
  return d;
}

void gk_room__delay_free(gk_room__delay *d) {
  free(d);
}

/* --- lockstep.prediction ------------------------------------------------- */

int gk_room__predict_key(const char *key) {
  return strcmp(key, "prediction") == 0 ||
         strcmp(key, "prediction_window") == 0;
}

int gk_room__predict_configure(const gk_room_host *h, gk_room *r,
                               const cJSON *room, char *err, size_t errlen) {
  const gk_server_config *c = h->cfg;
  r->predict = c->prediction == GK_PREDICT_GENRE
                   ? r->genre->sim->prediction != 0
                   : c->prediction == GK_PREDICT_ON;
  uint32_t window = c->prediction_window;
  const cJSON *on = cJSON_IsObject(room)
                        ? cJSON_GetObjectItemCaseSensitive(room, "prediction")
                        : NULL;
  const cJSON *w =
      cJSON_IsObject(room)
          ? cJSON_GetObjectItemCaseSensitive(room, "prediction_window")
          : NULL;
  if (on != NULL) {
    if (!cJSON_IsBool(on))
      return gk_errf(err, errlen, GK_EINVAL,
                     "options.room.prediction: must be true or false, got %s",
                     gk_config_type_name(on));
    r->predict = cJSON_IsTrue(on);
  }
  if (w != NULL) {
    double d = cJSON_IsNumber(w) ? w->valuedouble : -1.0;
    if (!(d >= 1 && d <= 60) || d != (double)(uint32_t)d)
      return gk_errf(err, errlen, GK_ERANGE,
                     "options.room.prediction_window: must be an integer in "
                     "1..60");
    window = (uint32_t)d;
    /* the room's window must fit the input buffer as the config's does */
    if (c->window < 2u * (c->input_delay_max + window) + 8u)
      return gk_errf(err, errlen, GK_ERANGE,
                     "options.room.prediction_window: %u needs "
                     "lockstep.window >= %u",
                     window, 2u * (c->input_delay_max + window) + 8u);
  }
  r->lead = c->lead;
  if (r->predict && window > r->lead) r->lead = window;
  return 0;
}

uint32_t gk_room__predict_free_ms(const gk_room_host *h, const gk_room *r) {
  if (!r->predict) return 0;
  uint64_t cover = (uint64_t)r->lead * 1000u / h->cfg->step_hz;
  return h->cfg->prediction_rtt_ms < cover ? h->cfg->prediction_rtt_ms
                                           : (uint32_t)cover;
}

/* --- the delay ------------------------------------------------------------ */

static gk_delay_policy policy(const gk_room_host *h, const gk_room *r) {
  gk_delay_policy p;
  memset(&p, 0, sizeof p);
  p.min = r->predict ? 1u : h->cfg->input_delay_min;
  p.free_ms = gk_room__predict_free_ms(h, r);
  p.max = h->cfg->input_delay_max;
  p.step_us = 1000000u / h->cfg->step_hz;
  if (p.step_us == 0) p.step_us = 1;
  p.jitter_x = h->cfg->delay_jitter_x;
  p.hold_ms = h->cfg->delay_hold_ms;
  p.every_ms = h->cfg->delay_every_ms;
  return p;
}

/* The wanted delay now over the players still in the room (their RTTs into
 * rtt/var when non-NULL). */
static uint32_t wanted_now(const gk_room_host *h, const gk_room *r,
                           uint32_t *rtt, uint32_t *var) {
  gk_delay_policy p = policy(h, r);
  uint32_t want = p.min;
  for (uint32_t i = 0; i < r->nslots; i++) {
    if (r->conn[i] == GK_ROOM_NO_CONN) continue;
    uint32_t t = gk_room__conn_rtt(h, r->conn[i]);
    uint32_t v = gk_room__conn_rtt_var(h, r->conn[i]);
    if (rtt != NULL) rtt[i] = t;
    if (var != NULL) var[i] = v;
    uint32_t w = gk_delay_wanted(&p, t, v);
    if (w > want) want = w;
  }
  return want;
}

static void note(gk_room__delay *d, uint64_t step, uint32_t delay) {
  if (d->n >= GK_ROOM__DELAYS_MAX) return;
  d->steps[d->n] = step;
  d->vals[d->n++] = delay;
}

void gk_room__delay_choose(gk_room_host *h, gk_room *r) {
  gk_room__delay *d = r->delay;
  memset(d->rtt_ms, 0, sizeof d->rtt_ms);
  memset(d->rtt_var_ms, 0, sizeof d->rtt_var_ms);
  uint32_t want = wanted_now(h, r, d->rtt_ms, d->rtt_var_ms);
  if (d->on) r->input_delay = want;
  d->n = 0;
  note(d, 0, r->input_delay);
  gk_delay_policy p = policy(h, r);
  uint64_t now = gk_room__now(h);
  gk_delay_ctl_init(&d->ctl, &p, r->input_delay, now);
  d->next_ms = now + (h->cfg->ping_ms ? h->cfg->ping_ms : 100u);
}

cJSON *gk_room__delay_record(const gk_room_host *h, const gk_room *r) {
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
  cJSON_AddNumberToObject(o, "lead", r->lead);
  cJSON_AddBoolToObject(o, "auto", r->delay->on);
  cJSON_AddNumberToObject(o, "min", h->cfg->input_delay_min);
  cJSON_AddNumberToObject(o, "max", h->cfg->input_delay_max);
  cJSON_AddNumberToObject(o, "step_hz", h->cfg->step_hz);
  for (uint32_t i = 0; i < r->nslots; i++) {
    cJSON_AddItemToArray(rtt, cJSON_CreateNumber(r->delay->rtt_ms[i]));
    cJSON_AddItemToArray(var, cJSON_CreateNumber(r->delay->rtt_var_ms[i]));
  }
  cJSON_AddItemToObject(o, "rtt_ms", rtt);
  cJSON_AddItemToObject(o, "rtt_var_ms", var);
  return o;
}

static void log_change(gk_room_host *h, const gk_room *r, uint32_t from,
                       uint32_t to, uint64_t announce, uint64_t at) {
  if (!gk_log_begin(h->log, GK_LOG_INFO, "delay_change", r->code)) return;
  gk_log_u64(h->log, "from", from);
  gk_log_u64(h->log, "to", to);
  gk_log_u64(h->log, "announce_step", announce);
  gk_log_u64(h->log, "switch_step", at);
  char list[GK_PLAYERS_MAX * 12 + 1];
  size_t used = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < r->nslots && used < sizeof list; i++) {
    uint32_t t = gk_room__conn_rtt(h, r->conn[i]); /* 0 with no connection */
    int n = snprintf(list + used, sizeof list - used, "%s%u", i ? "," : "", t);
    if (n < 0) break;
    used += (size_t)n;
  }
  gk_log_str(h->log, "rtt_ms", list);
  gk_log_end(h->log);
}

void gk_room__delay_tick(gk_room_host *h, gk_room *r) {
  gk_room__delay *d = r->delay;
  if (!d->on || r->state != GK_ROOM_PLAYING || r->end_pending) return;
  uint64_t now = gk_room__now(h);
  if (now < d->next_ms) return;
  d->next_ms = now + (h->cfg->ping_ms ? h->cfg->ping_ms : 100u);
  uint32_t want = wanted_now(h, r, NULL, NULL);
  uint32_t to = gk_delay_ctl_observe(&d->ctl, now, want);
  if (to == 0) return;
  uint32_t from = gk_net_session_delay(&r->session);
  uint64_t announce = 0, at = 0;
  int rc = gk_net_session_set_delay(&r->session, to, &announce, &at, now);
  if (rc != 0) return; /* busy or ending: proposed again later */
  gk_delay_ctl_changed(&d->ctl, to, now);
  note(d, at, to);
  log_change(h, r, from, to, announce, at);
}

static void delays_text(const gk_room__delay *d, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < d->n && used < cap; i++) {
    int n = snprintf(out + used, cap - used, "%s%llu:%u", i ? "," : "",
                     (unsigned long long)d->steps[i], d->vals[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

void gk_room__delay_log_start(gk_room_host *h, const gk_room *r) {
  char list[GK_PLAYERS_MAX * 12 + 1];
  size_t used = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < r->nslots && used < sizeof list; i++) {
    int n = snprintf(list + used, sizeof list - used, "%s%u", i ? "," : "",
                     r->delay->rtt_ms[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  gk_log_bool(h->log, "input_delay_auto", r->delay->on);
  gk_log_bool(h->log, "prediction", r->predict);
  gk_log_str(h->log, "rtt_ms", list);
}

void gk_room__delay_log_end(gk_room_host *h, const gk_room *r) {
  char list[GK_ROOM__DELAYS_MAX * 24 + 1];
  delays_text(r->delay, list, sizeof list);
  gk_log_str(h->log, "input_delays", list);
  uint64_t steps = r->session_open ? r->session.loop.steps : 0;
  uint64_t ns = gk_room__clock_ns(h) - r->start_ns;
  /* steps per wall second, x1000, as an integer (the log has no floats) */
  gk_log_u64(h->log, "steps_per_ks",
             ns > 0 ? steps * 1000000000000ull / ns : 0);
}
