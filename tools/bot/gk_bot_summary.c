/* gk_bot_summary.c: gk-bot's JSON summary (see gk_bot.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_bot.h"
#include "gk_bot_light.h"

static int hex_str(char *out, size_t cap, uint64_t v) {
  return snprintf(out, cap, "%016" PRIx64, v);
}

/* What finish adds up over the rooms. */
typedef struct bot_totals {
  uint64_t desyncs, mismatches, completed, failed;
  uint32_t *lat; /* every peer's confirm latencies, may be NULL */
  uint64_t nlat;
  uint32_t *disp; /* every peer's input-to-display latencies */
  uint64_t ndisp;
  gk_net_peer_head head; /* --predict: the heads' counts added up */
} bot_totals;

/* A peer's input-to-display samples (its confirm latencies without a
 * head) and its head's counts, into *t. */
static void add_display(bot_totals *t, const gk_net_peer *e) {
  const uint32_t *src = e->opts.predict ? e->display_us : e->latency_us;
  uint32_t n = e->opts.predict ? e->ndisplay : e->nlatency;
  if (t->disp != NULL)
    for (uint32_t k = 0; k < n; k++) t->disp[t->ndisp++] = src[k];
  gk_net_peer_head *h = &t->head;
  h->rollbacks += e->head.rollbacks;
  h->restores += e->head.restores;
  h->steps_run += e->head.steps_run;
  h->resim_steps += e->head.resim_steps;
  h->checked += e->head.checked;
  h->mispredicted += e->head.mispredicted;
  h->capped += e->head.capped;
  if (e->head.state_bytes > h->state_bytes)
    h->state_bytes = e->head.state_bytes;
  for (uint32_t i = 0; i <= GK_NET_PEER_RESIM_MAX; i++)
    h->resim_hist[i] += e->head.resim_hist[i];
}

/* The nearest-rank percentile of a histogram of counts by value. */
static uint32_t hist_pct(const uint64_t *hist, uint32_t nb, uint32_t pct) {
  uint64_t n = 0, seen = 0;
  for (uint32_t i = 0; i < nb; i++) n += hist[i];
  uint64_t rank = (n * pct + 99u) / 100u;
  for (uint32_t i = 0; i < nb && n > 0; i++)
    if ((seen += hist[i]) >= (rank ? rank : 1)) return i;
  return 0;
}

/* --predict: "prediction" in the summary. */
static void add_prediction(cJSON *out, const bot_totals *t) {
  const gk_net_peer_head *h = &t->head;
  cJSON *o = cJSON_AddObjectToObject(out, "prediction");
  cJSON_AddNumberToObject(o, "rollbacks", (double)h->rollbacks);
  cJSON_AddNumberToObject(o, "restores", (double)h->restores);
  cJSON_AddNumberToObject(o, "head_steps", (double)h->steps_run);
  cJSON_AddNumberToObject(o, "resim_steps", (double)h->resim_steps);
  cJSON_AddNumberToObject(
      o, "resim_per_frame_p50",
      hist_pct(h->resim_hist, GK_NET_PEER_RESIM_MAX + 1, 50));
  cJSON_AddNumberToObject(
      o, "resim_per_frame_p99",
      hist_pct(h->resim_hist, GK_NET_PEER_RESIM_MAX + 1, 99));
  cJSON_AddNumberToObject(o, "capped_frames", (double)h->capped);
  cJSON_AddNumberToObject(o, "predicted_steps", (double)h->checked);
  cJSON_AddNumberToObject(o, "mispredicted", (double)h->mispredicted);
  if (h->checked > 0)
    cJSON_AddNumberToObject(o, "accuracy",
                            1.0 - (double)h->mispredicted / (double)h->checked);
  else
    cJSON_AddNullToObject(o, "accuracy");
  cJSON_AddNumberToObject(o, "state_bytes", (double)h->state_bytes);
}

/* Player 0's input delays ([step, delay] pairs, from MATCH_START's) and
 * its steps per wall second from step 60 to its last (null if shorter). */
static void add_delays(cJSON *ro, const bot_peer *p) {
  cJSON *ds = cJSON_AddArrayToObject(ro, "input_delays");
  for (uint32_t i = 0; p->peer_open && i < p->peer.eng.ndelays; i++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(
        pair, cJSON_CreateNumber((double)p->peer.eng.delays[i].step));
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(p->peer.eng.delays[i].delay));
    cJSON_AddItemToArray(ds, pair);
  }
  if (p->t60_ns != 0 && p->last_ns > p->t60_ns && p->steps > 61)
    cJSON_AddNumberToObject(ro, "steps_per_second",
                            (double)(p->steps - 61) * 1e9 /
                                (double)(p->last_ns - p->t60_ns));
  else
    cJSON_AddNullToObject(ro, "steps_per_second");
}

/* One room's entry of the summary; adds its counts to *t. */
static cJSON *room_summary(bot *b, bot_room *r, bot_totals *t) {
  cJSON *ro = cJSON_CreateObject();
  cJSON_AddStringToObject(ro, "code", r->lobby.created ? r->lobby.code : "");
  int agree = 1, ended = 1;
  uint64_t steps = r->peers[0].steps, hash = r->peers[0].last_hash;
  cJSON *hashes = cJSON_CreateArray();
  uint64_t room_desyncs = 0;
  char h[20];
  for (uint32_t j = 0; j < bot_room_peers(b); j++) {
    bot_peer *p = &r->peers[j];
    if (!bot_peer_in_play(b, p)) continue; /* a late joiner not yet in */
    hex_str(h, sizeof(h), p->last_hash);
    cJSON_AddItemToArray(hashes, cJSON_CreateString(h));
    if (p->steps != steps || p->last_hash != hash) agree = 0;
    if (!p->ended) ended = 0;
    room_desyncs += p->desyncs;
    if (t->lat && p->peer_open)
      for (uint32_t k = 0; k < p->peer.eng.nlatency; k++)
        t->lat[t->nlat++] = p->peer.eng.latency_us[k];
    if (p->peer_open) add_display(t, &p->peer.eng);
  }
  hex_str(h, sizeof(h), hash);
  /* final hashes are comparable only when every player ran to the same
   * end; a room cut short (timeout, disconnect) is a failure, not a
   * desync. Step-by-step comparisons (r->mismatches) always count. */
  int comparable = ended && !r->failed;
  cJSON_AddNumberToObject(ro, "steps", (double)steps);
  cJSON_AddStringToObject(ro, "final_hash", h);
  cJSON_AddItemToObject(ro, "player_hashes", hashes);
  if (comparable)
    cJSON_AddBoolToObject(ro, "agree", agree && !r->mismatches);
  else
    cJSON_AddNullToObject(ro, "agree");
  cJSON_AddNumberToObject(ro, "desyncs", (double)room_desyncs);
  cJSON_AddNumberToObject(ro, "mismatches", (double)r->mismatches);
  cJSON_AddNumberToObject(ro, "redirects", (double)r->redirects);
  if (r->mismatches)
    cJSON_AddNumberToObject(ro, "first_mismatch", (double)r->first_mismatch);
  cJSON_AddStringToObject(ro, "end_reason",
                          gk_wire_end_name(r->peers[0].end_reason));
  add_delays(ro, &r->peers[0]);
  bot_late_summary(ro, b, r);
  if (r->failed || !ended) {
    cJSON_AddStringToObject(ro, "error",
                            r->failed ? r->error : "did not finish");
    t->failed++;
  } else {
    t->completed++;
  }
  t->desyncs += room_desyncs;
  t->mismatches += r->mismatches + (comparable && !agree ? 1 : 0);
  t->mismatches += (uint64_t)bot_rejoin_summary(ro, b, r);
  return ro;
}

/* Prints the one JSON summary; returns the exit status it implies. */
int bot_print_summary(bot *b) {
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "genre", b->sim->name);
  cJSON_AddNumberToObject(out, "rooms", b->rooms);
  cJSON_AddNumberToObject(out, "players", b->players);
  cJSON_AddNumberToObject(out, "steps_requested", (double)b->steps);
  cJSON *rooms = cJSON_AddArrayToObject(out, "room_results");
  bot_totals t;
  memset(&t, 0, sizeof(t));
  uint64_t nlat = 0;
  for (uint32_t i = 0; i < b->rooms; i++)
    for (uint32_t j = 0; j < bot_room_peers(b); j++)
      nlat += b->room[i].peers[j].peer_open
                  ? b->room[i].peers[j].peer.eng.nlatency
                  : 0;
  t.lat = malloc((nlat ? nlat : 1) * sizeof(*t.lat));
  uint64_t ndisp = 0;
  for (uint32_t i = 0; i < b->rooms; i++)
    for (uint32_t j = 0; j < bot_room_peers(b); j++)
      if (b->room[i].peers[j].peer_open)
        ndisp += b->room[i].peers[j].peer.eng.ndisplay +
                 b->room[i].peers[j].peer.eng.nlatency;
  t.disp = malloc((ndisp ? ndisp : 1) * sizeof(*t.disp));
  for (uint32_t i = 0; i < b->rooms; i++)
    cJSON_AddItemToArray(rooms, room_summary(b, &b->room[i], &t));
  cJSON_AddNumberToObject(out, "rooms_completed", (double)t.completed);
  cJSON_AddNumberToObject(out, "rooms_failed", (double)t.failed);
  cJSON_AddNumberToObject(out, "desyncs", (double)(t.desyncs + t.mismatches));
  cJSON_AddNumberToObject(out, "server_desyncs", (double)t.desyncs);
  cJSON_AddNumberToObject(out, "peer_mismatches", (double)t.mismatches);
  if (b->perturb_path != NULL) {
    cJSON_AddNumberToObject(out, "perturbed_rooms", (double)b->perturbed);
    cJSON_AddNumberToObject(out, "perturbed_by_minus_one",
                            (double)b->perturb_minus);
  }
  if (b->chaos_dup)
    cJSON_AddNumberToObject(out, "chaos_extra_datagrams",
                            (double)b->chaos_extra);
  gk_bot_add_latency(out, t.lat, t.nlat);
  gk_bot_add_pcts(out, "display_latency_us", t.disp, t.ndisp);
  if (b->predict) add_prediction(out, &t);
  free(t.lat);
  free(t.disp);
  if (b->fault_open) {
    cJSON *f = cJSON_AddObjectToObject(out, "faults");
    cJSON_AddNumberToObject(f, "datagrams", (double)b->fault.stats.in);
    cJSON_AddNumberToObject(f, "lost", (double)b->fault.stats.lost);
    cJSON_AddNumberToObject(f, "forwarded", (double)b->fault.stats.forwarded);
  }
  cJSON_AddBoolToObject(out, "timed_out", b->timed_out);
  gk_bot_print_summary(out);
  return t.desyncs + t.mismatches ? 1 : t.failed ? 3 : 0;
}
