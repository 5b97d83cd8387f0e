/* bench_desync.c: desync forensics on a big survivors match.
 *
 * In one process, over ENet on 127.0.0.1: a gk_server (replays on, the
 * bundle under a temporary folder) and two survivors peers (bots) in a
 * room whose options keep about 2,000 enemies alive (bench_room.c). At step
 * PERTURB (default 1200) player 1 adds 1 to players[0].health
 * (gk_state_patch_add + gk_loop_replace, as gk-bot
 * --perturb), so the server sees the mismatch at the next step. The world
 * is made REPS times (default 5: a fresh server and peers each time);
 * printed, one line per run, then the medians over the runs:
 *   - the time from the mismatch (the server's sv_desync_begin) to the
 *     written report (`us` of the desync_report line: the referee's
 *     re-simulation, STATE_REQUEST, the peer's re-simulation and chunks,
 *     the diff, the flush of the recording and the bundle on the thread
 *     pool);
 *   - the bytes moved: the peer's STATE_* datagrams (bytes_in) and the
 *     state they carried;
 *   - the peer memory kept to answer (its gk_history: bytes now and at
 *     its peak, for a window of its hash ring + 64 steps);
 *   - the worst-case re-simulation at the peer: the state 63 steps after
 *     a snapshot (every = 64), timed alone.
 *
 * Usage: bench_desync [PERTURB [STEP_HZ [REPS]]]  (defaults 1200 600 5)
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "gk_err.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_server.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "gk_state.h"
#include "gk_state_diff.h"
#include "gk_sv_internal.h"
#include "bench_room.h"

typedef struct bench bench;
typedef struct client {
  bench *b;
  gk_net_transport t;
  uint32_t id;
  gk_net_peer_uv peer;
  int ended;
} client;

struct bench {
  bench_server s;
  uint64_t perturb;
  int failed, end_sent;
  uint32_t enemies;
  uv_timer_t guard;
  client c[2];
  char *logbuf;
  size_t loglen;
};

static int c_send(void *ctx, const uint8_t *by, size_t len, int rel) {
  client *c = ctx;
  return gk_net_transport_send(&c->t, c->id, by, len, rel);
}

static void perturb_now(void *ctx, gk_net_peer *p) {
  client *c = ctx;
  void *st = NULL;
  char err[GK_ERRMSG_MAX] = "";
  const gk__sv_state *s = gk_loop_state(&p->loop);
  c->b->enemies = s->n_enemies;
  int rc = gk_state_patch_add(p->sim, p->sim_cfg, gk_loop_state(&p->loop),
                              "players[0].health", -1, &st, err, sizeof err);
  if (rc == 0) rc = gk_loop_replace(&p->loop, st);
  if (rc != 0) {
    fprintf(stderr, "perturb: %s\n", err[0] ? err : gk_strerror(rc));
    c->b->failed = 1;
  }
}

static void on_ended(void *ctx, gk_net_peer *p, uint64_t s, int r) {
  client *c = ctx;
  (void)p, (void)s, (void)r;
  c->ended = 1;
}

static void on_message(void *ctx, gk_net_peer *p, const gk_wire_msg *m) {
  client *c = ctx;
  bench *b = c->b;
  (void)p;
  if (bench_room_message(m, &b->c[0].peer, &b->c[1].peer, b->s.code) != 0)
    b->failed = 1;
}

static void c_recv(void *ctx, gk_net_transport *t, uint32_t id,
                   const uint8_t *by, size_t len) {
  client *c = ctx;
  (void)t, (void)id;
  gk_net_peer_uv_receive(&c->peer, by, len);
}

static void c_connect(void *ctx, gk_net_transport *t, uint32_t id) {
  client *c = ctx;
  (void)t;
  c->id = id;
  if (c == &c->b->c[0] && bench_room_create(&c->peer) != 0) c->b->failed = 1;
}

static void add(bench *b, int i) {
  client *c = &b->c[i];
  c->b = b;
  gk_net_transport_callbacks tc = {c, c_recv, c_connect, NULL};
  gk_net_peer_options po = {.bot_seed = (uint64_t)i + 1};
  gk_net_peer_callbacks pc = {
      .ctx = c, .send = c_send, .ended = on_ended, .message = on_message};
  bench_room_open(&b->s.loop, b->s.port, &c->t, &c->id, &tc, &c->peer, &po,
                  &pc);
  if (i == 1) gk_net_peer_after_step(&c->peer.eng, b->perturb, perturb_now, c);
}

static void on_guard(uv_timer_t *t) {
  ((bench *)t->data)->failed = 1;
}

/* The desync_report line, once the log holds it (caller deletes). */
static cJSON *report(bench *b) {
  const char *at =
      b->logbuf != NULL ? strstr(b->logbuf, "\"desync_report\"") : NULL;
  if (at == NULL) return NULL;
  while (at > b->logbuf && at[-1] != '\n') at--;
  const char *end = strchr(at, '\n');
  return end != NULL ? cJSON_ParseWithLength(at, (size_t)(end - at)) : NULL;
}

static double num(const cJSON *j, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(j, k);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The peer's worst case: the state 63 steps past its newest snapshot
 * that has 63 kept steps after it. */
static double worst_resim_ms(const gk_history *h) {
  uint64_t every = h->o.every, n = h->last - 1;
  while (n > h->first && n % every != every - 1) n--;
  uint8_t *bytes = NULL;
  size_t len = 0;
  uint64_t t0 = uv_hrtime();
  int rc = gk_history_state_at(h, n, &bytes, &len, NULL, NULL, 0);
  double ms = (double)(uv_hrtime() - t0) / 1e6;
  free(bytes);
  return rc == 0 ? ms : -1;
}

/* One world's figures (the medians are taken over the repetitions). */
typedef struct fig {
  double ms, bytes_in, peer_state, ref_state, fields, hist_now, hist_peak,
      resim_ms;
  uint64_t step, window;
  uint32_t enemies, every;
  char result[32], path[64];
} fig;

static void take(bench *b, const cJSON *ev, fig *f) {
  const gk_history *h = &b->c[1].peer.eng.hist;
  const cJSON *r = cJSON_GetObjectItem(ev, "result");
  const cJSON *fp = cJSON_GetObjectItem(ev, "first_path");
  f->ms = num(ev, "us") / 1e3;
  f->bytes_in = num(ev, "bytes_in");
  f->peer_state = num(ev, "peer_state_bytes");
  f->ref_state = num(ev, "referee_state_bytes");
  f->fields = num(ev, "fields_differ");
  f->step = (uint64_t)num(ev, "step");
  f->enemies = b->enemies;
  snprintf(f->result, sizeof f->result, "%s",
           cJSON_IsString(r) ? r->valuestring : "?");
  snprintf(f->path, sizeof f->path, "%s",
           cJSON_IsString(fp) ? fp->valuestring : "-");
  f->hist_now = (double)h->bytes;
  f->hist_peak = (double)h->peak_bytes;
  f->window = h->last - h->first;
  f->every = h->o.every;
  f->resim_ms = worst_resim_ms(h);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of one figure over n runs (n <= 64). */
static double median(const fig *f, int n, size_t off) {
  double v[64];
  for (int i = 0; i < n; i++) memcpy(&v[i], (const char *)&f[i] + off, 8);
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MED(field) median(f, n, offsetof(fig, field))

static void print(const fig *f, int n, uint32_t hz) {
  printf("desync at step %llu (%u Hz): %u enemies, peer state %.0f bytes, "
         "referee state %.0f bytes\n",
         (unsigned long long)f[0].step, hz, f[0].enemies, MED(peer_state),
         MED(ref_state));
  printf("  result: %s, first path %s, %.0f fields differ\n", f[0].result,
         f[0].path, f[0].fields);
  printf("  median of %d runs:\n", n);
  printf("  mismatch -> report written: %.1f ms\n", MED(ms));
  printf("  bytes moved: STATE_REQUEST %u + answer %.0f (STATE_BEGIN + "
         "chunks)\n",
         (unsigned)(GK_WIRE_HEADER + 12), MED(bytes_in));
  printf("  peer memory kept to answer: %.0f bytes now, %.0f peak "
         "(window %llu steps, a snapshot every %u)\n",
         MED(hist_now), MED(hist_peak), (unsigned long long)f[0].window,
         f[0].every);
  printf("  peer re-simulation, worst case (%u steps): %.1f ms\n",
         f[0].every - 1, MED(resim_ms));
}

static int setup(bench *b, gk_server_config *cfg, gk_server_log *log,
                 uint32_t hz, char *dir) {
  bench_room_config(cfg, hz);
  snprintf(cfg->replay_dir, sizeof cfg->replay_dir, "%s/replays", dir);
  snprintf(cfg->desync_dir, sizeof cfg->desync_dir, "%s/desyncs", dir);
  cfg->desync_timeout_ms = 10000;
  FILE *f = open_memstream(&b->logbuf, &b->loglen);
  if (f == NULL) return -1;
  gk_log_init(log, f, GK_LOG_WARN);
  return bench_room_start(&b->s, cfg, log);
}

/* One world: a server and two peers, the desync, its report. */
static int run_once(uint64_t perturb, uint32_t hz, char *dir, fig *out) {
  static bench b;
  memset(&b, 0, sizeof b);
  b.perturb = perturb;
  static gk_server_config cfg;
  gk_server_log log;
  if (setup(&b, &cfg, &log, hz, dir) != 0) return 1;
  uv_timer_init(&b.s.loop, &b.guard);
  b.guard.data = &b;
  uv_timer_start(&b.guard, on_guard, (b.perturb + 600) * 1000u / hz * 3 + 60000,
                 0);
  add(&b, 0);
  add(&b, 1);
  cJSON *ev = NULL;
  while (!b.failed && ev == NULL) {
    uv_run(&b.s.loop, UV_RUN_ONCE);
    fflush(log.out);
    ev = report(&b);
  }
  if (ev == NULL) {
    fprintf(stderr, "bench_desync: no desync_report\n");
    return 1;
  }
  take(&b, ev, out);
  const cJSON *bundle = cJSON_GetObjectItem(ev, "bundle");
  printf("run: %.1f ms, %.0f bytes in, history %.0f bytes, bundle %s\n",
         out->ms, out->bytes_in, out->hist_now,
         cJSON_IsString(bundle) ? bundle->valuestring : "(none)");
  cJSON_Delete(ev);
  uv_close((uv_handle_t *)&b.guard, NULL);
  for (int i = 0; i < 2; i++) bench_room_close_client(&b.c[i].t, &b.c[i].peer);
  bench_room_shutdown(&b.s.loop, b.s.srv);
  fclose(log.out);
  free(b.logbuf);
  gk_server_config_free(&cfg);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t perturb = argc > 1 ? strtoull(argv[1], NULL, 10) : 1200;
  uint32_t hz = argc > 2 ? (uint32_t)atoi(argv[2]) : 600;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (reps < 1 || reps > 64 || hz == 0) {
    fprintf(stderr, "usage: bench_desync [PERTURB [STEP_HZ [REPS 1..64]]]\n");
    return 2;
  }
  char dir[] = "/tmp/bench_desync.XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  static fig f[64];
  int rc = 0;
  for (int i = 0; i < reps && rc == 0; i++)
    rc = run_once(perturb, hz, dir, &f[i]);
  if (rc == 0) print(f, reps, hz);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? rc : 1;
}
