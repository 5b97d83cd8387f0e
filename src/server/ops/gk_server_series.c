/* gk_server_series.c: the last minutes of the server's main figures, for
 * the status page's charts (GET /series; see gk_server_ops.h).
 *
 * The admin listener's timer calls sv_series_take every admin.series_ms on
 * the loop thread; each sample reads the figures with sv_metrics_figures,
 * the same function /metrics prints them from, so a sample taken while
 * nothing moves equals /metrics. The ring (admin.series_samples entries)
 * is the caller's; nothing is allocated here but the JSON.
 *
 * Confirm latency per sample: the p50 and p99 of the steps confirmed since
 * the sample before, from the difference of the confirm histogram then
 * and now (sv_hist_quantile_ns, as Prometheus' histogram_quantile over
 * the increase of the buckets would give it). The JSON gives them in
 * whole microseconds, null for an interval with no step confirmed.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_server_internal.h"

void sv_series_init(sv_series *se, sv_series_sample *ring, uint32_t cap,
                    uint32_t period_ms, uint64_t now_ms) {
  memset(se, 0, sizeof(*se));
  se->ring = ring;
  se->cap = cap;
  se->period_ms = period_ms;
  se->t0_ms = now_ms;
}

void sv_series_take(sv_series *se, const gk_server *s, uint64_t now_ms) {
  sv_series_sample *x = &se->ring[se->taken % se->cap];
  const sv_hist *now = &s->metrics.confirm;
  memset(x, 0, sizeof(*x));
  x->seq = se->taken;
  x->ms = now_ms > se->t0_ms ? now_ms - se->t0_ms : 0;
  sv_metrics_figures(s, &x->f);
  x->confirms = now->count;
  const sv_hist *before = se->taken ? &se->confirm : NULL;
  x->p50_ns = sv_hist_quantile_ns(now, before, 500);
  x->p99_ns = sv_hist_quantile_ns(now, before, 990);
  se->confirm = *now;
  se->taken++;
}

const sv_series_sample *sv_series_at(const sv_series *se, uint64_t seq) {
  if (seq >= se->taken || se->taken - seq > se->cap) return NULL;
  return &se->ring[seq % se->cap];
}

static void add_us(cJSON *j, const char *name, uint64_t ns) {
  if (ns == UINT64_MAX)
    cJSON_AddNullToObject(j, name);
  else {
    uint64_t us = (ns + 500u) / 1000u; /* whole microseconds, rounded */
    cJSON_AddNumberToObject(j, name, (double)us);
  }
}

static cJSON *sample_json(const sv_series_sample *x) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  const sv_figures *f = &x->f;
  cJSON_AddNumberToObject(j, "seq", (double)x->seq);
  cJSON_AddNumberToObject(j, "ms", (double)x->ms);
  cJSON_AddNumberToObject(j, "rooms",
                          (double)(f->rooms[1] + f->rooms[2] + f->rooms[3]));
  cJSON_AddNumberToObject(j, "rooms_playing", (double)f->rooms[2]);
  cJSON_AddNumberToObject(j, "players", (double)f->players);
  cJSON_AddNumberToObject(j, "bot_players", (double)f->bots);
  cJSON_AddNumberToObject(j, "steps", (double)f->steps);
#define SV_SAMPLE_FIGURE(name, kind, help)                                     \
  cJSON_AddNumberToObject(j, #name, (double)f->name);
  GK_ROOM_SCHEDULE(SV_SAMPLE_FIGURE)
#undef SV_SAMPLE_FIGURE
  cJSON_AddNumberToObject(j, "confirms", (double)x->confirms);
  add_us(j, "confirm_p50_us", x->p50_ns);
  add_us(j, "confirm_p99_us", x->p99_ns);
  return j;
}

cJSON *sv_series_json(const sv_series *se, uint64_t from) {
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = j ? cJSON_AddArrayToObject(j, "samples") : NULL;
  if (!arr) {
    cJSON_Delete(j);
    return NULL;
  }
  cJSON_AddNumberToObject(j, "period_ms", se->period_ms);
  cJSON_AddNumberToObject(j, "capacity", se->cap);
  cJSON_AddNumberToObject(j, "taken", (double)se->taken);
  uint64_t first = se->taken > se->cap ? se->taken - se->cap : 0;
  if (from > first) first = from;
  for (uint64_t seq = first; seq < se->taken; seq++) {
    cJSON *x = sample_json(sv_series_at(se, seq));
    if (!x || !cJSON_AddItemToArray(arr, x)) {
      cJSON_Delete(x);
      cJSON_Delete(j);
      return NULL;
    }
  }
  return j;
}
