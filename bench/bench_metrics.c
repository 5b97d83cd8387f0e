/* bench_metrics.c: the CPU cost of one /metrics scrape at 128 rooms.
 *
 * Builds a server's state in process (a bare server of
 * gk_server_test.h, rooms built with gk_room_internal.h): 128 playing
 * rooms of 4 players each with running session counters, filled
 * histograms, live transport counters (a stand-in link backend), and
 * times sv_metrics_write, the
 * function the admin listener calls for GET /metrics (the gather over the
 * room table, the text, getrusage and /proc/self/statm). The figure is
 * the median over BATCHES batches of ITERS calls of the thread's CPU time
 * per call (CLOCK_THREAD_CPUTIME_ID, so other load on the machine counts
 * only as far as it evicts caches), in µs, plus the text's size. The HTTP
 * round trip on top is measured end to end by bench/bench_metrics.py.
 *
 * usage: bench_metrics [BATCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_genres.h"
#include "gk_room_internal.h"
#include "gk_server_link.h"
#include "gk_server_ops.h"
#include "gk_server_test.h"

#define ROOMS 128
#define ITERS 200

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A stand-in backend whose totals are a few minutes of traffic. */
static void fake_stats(const sv_link_host *h, sv_link_host_stats *out) {
  (void)h;
  memset(out, 0, sizeof(*out));
  out->packets_out = 4000000;
}

static void fake_close(sv_link_host *h) {
  (void)h;
}

static const sv_link_host_ops fake_ops = {.kind = "enet",
                                          .stats = fake_stats,
                                          .close = fake_close,
                                          .free = fake_close};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* 128 playing rooms with figures like a few minutes of play. */
static void fill(gk_server *s, gk_room *rooms) {
  static sv_link_host host = {.ops = &fake_ops, .links = ROOMS * 4};
  static gk_server_genre genre = {.enabled = 1, .max_players = 8};
  genre.sim = gk_genre_find("survivors");
  sv_link_host_add(s, &host);
  for (uint32_t i = 0; i < ROOMS; i++) {
    gk_room *r = &rooms[i];
    r->host = sv_test_room_host(s);
    r->genre = &genre;
    r->state = GK_ROOM_PLAYING;
    r->session_open = 1;
    r->nslots = 4;
    for (uint32_t p = 0; p < GK_PLAYERS_MAX; p++)
      r->conn[p] = p < 4 ? i * 4 + p : GK_ROOM_NO_CONN;
    gk_net_session_stats *st = &r->session.stats;
    st->steps_confirmed = 10000 + i;
    st->steps_late = i;
    st->stalls = i % 3;
    st->packets_in = 40000 + i;
    r->desyncs = i % 2;
    sv_room_publish(s, r);
  }
  sv_test_stats(s)->packets_in = 5000000;
  sv_test_room_host(s)->stats.room_steps = 1280000;
  sv_metrics *m = sv_test_metrics(s);
  for (uint64_t k = 0; k < 100000; k++) {
    sv_hist_observe(&m->tick_late, (k * 7919u) % 3000000u);
    sv_hist_observe(&m->confirm, (k * 104729u) % 40000000u);
  }
}

int main(int argc, char **argv) {
  int batches = argc > 1 ? atoi(argv[1]) : 25;
  if (batches < 1 || batches > 1000) {
    fprintf(stderr, "usage: bench_metrics [BATCHES 1..1000]\n");
    return 2;
  }
  static gk_server_config cfg;
  static gk_room rooms[ROOMS];
  gk_server_config_default(&cfg);
  cfg.max_rooms = 256;
  gk_server *s = sv_test_server_new(&cfg);
  if (!s) return 1;
  fill(s, rooms);
  static char buf[1 << 16];
  size_t len = sv_metrics_write(s, buf, sizeof(buf));
  if (len >= sizeof(buf) || !strstr(buf, "gk_rooms{state=\"playing\"} 128")) {
    fprintf(stderr, "bench_metrics: unexpected exposition\n");
    return 1;
  }
  uint64_t *per = calloc((size_t)batches, sizeof(*per));
  if (!per) return 1;
  for (int b = 0; b < batches; b++) {
    uint64_t t0 = cpu_ns();
    for (int i = 0; i < ITERS; i++) len = sv_metrics_write(s, buf, sizeof(buf));
    per[b] = (cpu_ns() - t0) / ITERS;
  }
  qsort(per, (size_t)batches, sizeof(*per), cmp_u64);
  printf("metrics scrape at %d rooms (in process)  %.1f us/scrape CPU  "
         "(min %.1f, max %.1f; %zu bytes of text)\n",
         ROOMS, per[batches / 2] / 1000.0, per[0] / 1000.0,
         per[batches - 1] / 1000.0, len);
  free(per);
  sv_test_server_free(s);
  return 0;
}
