/* gk_server_rooms.c: the room table, and the rooms' host.
 *
 * The rooms are the library gk_room (src/room): sans-I/O, they ask the
 * outside for everything through their environment (gk_room_env). This
 * file is that environment for gk-server: sends and closes go to the
 * connections' links, strikes and admission to gk_server_auth.c and
 * gk_server_route.c, jobs to libuv's thread pool, the clock is uv_hrtime.
 * It also keeps the table the rooms live in (s->rooms, s->live), by code.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_err.h"
#include "gk_server_internal.h"

/* --- the table ----------------------------------------------------------- */

gk_room *sv_room_find(const gk_server *s, const char *code) {
  for (uint32_t i = 0; i < s->host.nrooms; i++) {
    gk_room *r = sv_live_room(s, i);
    if (memcmp(gk_room_code(r), code, GK_WIRE_CODE_LEN) == 0) return r;
  }
  return NULL;
}

void sv_room_publish(gk_server *s, gk_room *r) {
  /* gk_room_create refuses when nrooms reaches max_rooms: a slot is free */
  uint32_t idx = s->free_idx[s->cfg->max_rooms - s->host.nrooms - 1];
  gk_room_tag *tag = gk_room_tag_of(r);
  tag->index = idx;
  tag->live_at = s->host.nrooms;
  s->live[s->host.nrooms] = idx;
  s->rooms[idx] = r;
  s->host.nrooms++;
  sv_fleet_room_added(s, gk_room_code(r));
}

uint64_t sv_room_now(const gk_server *s) {
  return sv_now_ms(s);
}

/* --- the environment ----------------------------------------------------- */

static gk_room_conn *env_conn(void *user, uint32_t id) {
  sv_conn *c = sv_conn_get(user, id);
  return c ? &c->rc : NULL;
}

static int env_send(void *user, uint32_t id, const uint8_t *bytes, size_t len,
                    int reliable) {
  return sv_send_bytes(user, id, bytes, len, reliable);
}

static void env_close(void *user, uint32_t id, int at_once) {
  sv_conn_close(user, id, at_once);
}

static void env_rtt(void *user, uint32_t id, uint32_t *rtt, uint32_t *var) {
  *rtt = sv_conn_rtt(user, id);
  *var = sv_conn_rtt_var(user, id);
}

static size_t env_reply_cap(void *user, uint32_t id) {
  return sv_auth_reply_cap(user, id);
}

static void env_strike(void *user, uint32_t id, const char *why, int code) {
  sv_strike(user, id, why, code);
}

static void env_admit(void *user, uint32_t id) {
  sv_auth_admit(user, id);
}

static int env_client_id(void *user, uint32_t id, uint64_t *out) {
  return sv_auth_client_id(user, id, out);
}

static int env_code_taken(void *user, const char *code) {
  return sv_room_find(user, code) != NULL;
}

/* The room leaves the table: the last in use takes its place in s->live. */
static void env_gone(void *user, gk_room *r) {
  gk_server *s = user;
  const gk_room_tag *tag = gk_room_tag_of(r);
  sv_quick_gone(s, r);
  sv_fleet_room_gone(s, gk_room_code(r));
  s->rooms[tag->index] = NULL;
  s->host.nrooms--;
  uint32_t moved = s->live[s->host.nrooms];
  s->live[tag->live_at] = moved;
  if (s->rooms[moved]) gk_room_tag_of(s->rooms[moved])->live_at = tag->live_at;
  s->free_idx[s->cfg->max_rooms - s->host.nrooms - 1] = tag->index;
}

static void env_confirmed(void *user, const gk_room *r, uint64_t step,
                          uint64_t late_ms) {
  (void)r;
  (void)step;
  sv_metrics_confirm(user, late_ms);
}

/* A room's job on libuv's thread pool. */
typedef struct sv_job {
  uv_work_t req;
  gk_room_job *job;
  gk_server *s;
} sv_job;

static void job_work(uv_work_t *req) {
  sv_job *j = req->data;
  j->job->work(j->job);
}

static void job_after(uv_work_t *req, int status) {
  sv_job *j = req->data;
  gk_server *s = j->s;
  (void)status; /* jobs are never cancelled */
  gk_room_job *job = j->job;
  free(j);
  s->jobs--;
  job->done(job);
  if (s->closing && s->jobs == 0) {
    sv_log_stopped(s);
    sv_maybe_free(s);
  }
}

static int env_queue(void *user, gk_room_job *job) {
  gk_server *s = user;
  sv_job *j = malloc(sizeof(*j));
  if (!j) return GK_ENOMEM;
  j->req.data = j;
  j->job = job;
  j->s = s;
  if (uv_queue_work(s->loop, &j->req, job_work, job_after) != 0) {
    free(j);
    return GK_EIO;
  }
  s->jobs++;
  return 0;
}

static uint64_t env_clock_ns(void *user) {
  (void)user;
  return uv_hrtime();
}

static void env_each_conn(void *user, void (*fn)(void *ctx, gk_room_conn *c),
                          void *ctx) {
  gk_server *s = user;
  for (uint32_t i = 0; s->conns != NULL && i < s->cfg->max_peers; i++)
    if (s->conns[i].used) fn(ctx, &s->conns[i].rc);
}

static uint64_t env_wall_s(void *user) {
  (void)user;
  return (uint64_t)time(NULL);
}

int sv_rooms_init(gk_server *s) {
  const gk_room_env env = {s,
                           env_conn,
                           env_send,
                           env_close,
                           env_rtt,
                           env_reply_cap,
                           env_strike,
                           env_admit,
                           env_client_id,
                           env_code_taken,
                           env_gone,
                           NULL,
                           env_confirmed,
                           env_queue,
                           env_clock_ns,
                           env_wall_s,
                           sv_fleet_new_code,
                           env_each_conn};
  gk_room_host_init(&s->host, &env, s->cfg, s->log);
  uint32_t n = s->cfg->max_rooms;
  s->rooms = calloc(n ? n : 1, sizeof(gk_room *));
  s->live = calloc(n ? n : 1, sizeof(*s->live));
  s->free_idx = calloc(n ? n : 1, sizeof(*s->free_idx));
  if (!s->rooms || !s->live || !s->free_idx) return GK_ENOMEM;
  for (uint32_t i = 0; i < n; i++) s->free_idx[i] = n - 1 - i;
  return 0;
}

void sv_rooms_free(gk_server *s) {
  free(s->rooms);
  free(s->live);
  free(s->free_idx);
  s->rooms = NULL;
  s->live = NULL;
  s->free_idx = NULL;
}

/* --- a bare server for tests (gk_server_test.h) --------------------------- */

gk_server *sv_test_server_new(const gk_server_config *cfg) {
  gk_server *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->cfg = cfg;
  s->step_ns = 1000000000u / (cfg->step_hz ? cfg->step_hz : 60u);
  if (sv_rooms_init(s) != 0 || sv_conns_init(s) != 0) {
    sv_test_server_free(s);
    return NULL;
  }
  return s;
}

void sv_test_server_free(gk_server *s) {
  if (!s) return;
  sv_rooms_free(s);
  sv_conns_free(s);
  free(s);
}

gk_server_stats *sv_test_stats(gk_server *s) {
  return &s->stats;
}

sv_metrics *sv_test_metrics(gk_server *s) {
  return &s->metrics;
}

gk_room_host *sv_test_room_host(gk_server *s) {
  return &s->host;
}
