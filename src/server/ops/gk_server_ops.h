/* gk_server_ops.h: what operators and orchestrators talk to, shared by the
 * server's files and nobody else:
 *   gk_server_metrics.c  fixed-bucket histograms the step timer and the
 *                        rooms record into, and the Prometheus text
 *                        exposition of every server figure;
 *   gk_server_series.c   a ring of the last minutes of those figures,
 *                        sampled on a uv timer, for the status page's
 *                        charts (GET /series);
 *   gk_server_admin.c    the admin HTTP listener (libmicrohttpd driven
 *                        from the server's uv loop): /healthz, /metrics,
 *                        /rooms, /series, room actions, /drain, the
 *                        status page;
 *   gk_server_public.c   GET /rooms/public's query and answer, shared by
 *                        the admin and WebSocket listeners;
 *   gk_server_agones.c   the Agones SDK REST client (libcurl's
 *                        multi-socket API on the uv loop): ready, health,
 *                        counters, shutdown.
 * Everything runs on the server's loop thread: nothing here touches room
 * state from another thread. Arguments are never NULL.
 */
#ifndef GK_SERVER_OPS_H
#define GK_SERVER_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "gk_room_stats.h"

struct gk_server;
struct gk_room;

/* --- gk_server_metrics.c ------------------------------------------------- */

#define SV_HIST_BUCKETS 13

/* Upper bounds of the histogram buckets, in ns (the exposition prints
 * them in seconds); the last real bucket is followed by +Inf. */
extern const uint64_t sv_hist_bounds_ns[SV_HIST_BUCKETS];

/* A fixed-bucket histogram of durations: bucket[i] counts observations
 * <= sv_hist_bounds_ns[i] and > the bound before (not cumulative; the
 * exposition sums them). count and sum_ns cover every observation. */
typedef struct sv_hist {
  uint64_t bucket[SV_HIST_BUCKETS];
  uint64_t count;
  uint64_t sum_ns;
} sv_hist;

void sv_hist_observe(sv_hist *h, uint64_t ns);

typedef struct sv_metrics {
  sv_hist tick_late;    /* each step-timer tick: how long after its deadline */
  sv_hist confirm;      /* each step a room ran: how long after its place on
                           the match's fixed schedule it was confirmed */
  uint64_t worst_ns[2]; /* worst tick lateness in the current second and
                           the one before (/healthz) */
  uint64_t worst_sec;   /* the second worst_ns[0] is for (uv_hrtime / 1e9) */
  uint64_t last_tick_ns;
  uint64_t http_requests, http_cut; /* admin requests served; slow
                                       connections cut */
} sv_metrics;

/* The step timer fired `late_ns` after the deadline it was armed for. */
void sv_metrics_tick(struct gk_server *s, uint64_t now_ns, uint64_t late_ns);
/* A room's session confirmed a step late_ms after its place on the
 * match's schedule (env.confirmed; 0 on time and for a stall's step). */
void sv_metrics_confirm(struct gk_server *s, uint64_t late_ms);
/* The worst tick lateness in the last one to two seconds, or the time
 * since the last tick if that is longer (a timer that stopped firing). */
uint64_t sv_metrics_recent_late_ns(const struct gk_server *s, uint64_t now_ns);

/* The figures /metrics prints that the status page charts, read the same
 * way for both (gk_server_series.c samples them): rooms by state, players
 * and bot seats now; steps and the schedule's figures (GK_ROOM_SCHEDULE:
 * steps confirmed, late, stalls, ...) since start (the server totals plus
 * the matches still running). */
typedef struct sv_figures {
  uint64_t rooms[4]; /* by gk_room_state: [1] lobby, [2] playing, [3]
                        draining */
  uint64_t players, bots;
  uint64_t steps;
#define SV_FIGURE_FIELD(name, kind, help) uint64_t name;
  GK_ROOM_SCHEDULE(SV_FIGURE_FIELD)
#undef SV_FIGURE_FIELD
} sv_figures;

void sv_metrics_figures(const struct gk_server *s, sv_figures *f);

/* The q-quantile (q = permille / 1000, 1..999) of the observations `now`
 * holds beyond `before` (an earlier copy of the same histogram; NULL =
 * none before), in ns, interpolated in its bucket the way Prometheus'
 * histogram_quantile does (linearly; an observation past the last bound
 * counts as that bound). UINT64_MAX when there is no observation between
 * the two. */
uint64_t sv_hist_quantile_ns(const sv_hist *now, const sv_hist *before,
                             uint32_t permille);

/* Writes the Prometheus text exposition (format 0.0.4) of the server into
 * buf (cap bytes, NUL-terminated when cap > 0). Returns the length the
 * whole text needs, without the NUL: when it is >= cap the text was cut,
 * and the caller retries with a larger buffer. buf may be NULL if cap is
 * 0. */
size_t sv_metrics_write(const struct gk_server *s, char *buf, size_t cap);

/* --- gk_server_series.c ------------------------------------------------- */

/* One sample of the status page's series: the figures as /metrics has them
 * at that moment (sv_figures), and the confirm-latency quantiles of the
 * steps confirmed since the sample before. */
typedef struct sv_series_sample {
  uint64_t seq; /* 0 for the first sample taken */
  uint64_t ms;  /* loop ms since the series started */
  sv_figures f;
  uint64_t confirms;       /* gk_confirm_latency_seconds_count */
  uint64_t p50_ns, p99_ns; /* UINT64_MAX: no step confirmed in between */
} sv_series_sample;

/* A fixed ring of the last `cap` samples, in storage the caller owns. */
typedef struct sv_series {
  sv_series_sample *ring; /* cap entries, the caller's */
  uint32_t cap;
  uint64_t taken;  /* samples taken so far; the ring holds the last cap */
  uint64_t t0_ms;  /* loop ms at sv_series_init */
  sv_hist confirm; /* the confirm histogram at the last sample */
  uint32_t period_ms;
} sv_series;

/* Sets up an empty series over `ring` (cap >= 1 entries, owned by the
 * caller, outliving the series), sampled every period_ms from now_ms. */
void sv_series_init(sv_series *se, sv_series_sample *ring, uint32_t cap,
                    uint32_t period_ms, uint64_t now_ms);
/* Takes one sample of the server now (loop thread). */
void sv_series_take(sv_series *se, const struct gk_server *s, uint64_t now_ms);
/* The sample numbered seq, or NULL when the ring no longer (or not yet)
 * holds it. */
const sv_series_sample *sv_series_at(const sv_series *se, uint64_t seq);
/* The series as the JSON of GET /series (a cJSON object the caller
 * deletes; NULL when out of memory): the samples held with seq >= from
 * (0: all of them). */
struct cJSON *sv_series_json(const sv_series *se, uint64_t from);

/* --- gk_server_admin.c --------------------------------------------------- */

/* Starts the admin listener if cfg->admin.enabled (else returns 0 and does
 * nothing): reads the token file, binds, logs "admin_listening" with the
 * real port. Returns 0, or GK_EIO / GK_EINVAL / GK_ENOMEM with a message
 * naming the key. Its uv handles count in s->handles. */
int sv_admin_start(struct gk_server *s, char *err, size_t errlen);
/* Stops listening and closes the handles (asynchronously). Idempotent. */
void sv_admin_close(struct gk_server *s);
/* The bound port, or 0 when the listener is off. */
uint16_t sv_admin_port(const struct gk_server *s);

/* --- gk_server_public.c -------------------------------------------------- */

struct gk_net_ws_arg;

/* GET /rooms/public's one query argument, the same on both listeners: 1
 * if key is "genre" and value a name of 1 to GK_WIRE_GENRE_MAX bytes
 * (copied into genre, GK_WIRE_GENRE_MAX + 1 bytes); 0 for anything else
 * (answered 400 with SV_PUBLIC_QUERY). An unknown genre lists nothing. */
int sv_public_genre_arg(const char *key, const char *value, char *genre);
#define SV_PUBLIC_QUERY "/rooms/public takes genre=NAME only"
/* A JSON answer's body: j printed on one line and a newline, malloc'd
 * (the caller frees it); j is deleted. NULL when out of memory. */
char *sv_json_text(struct cJSON *j);
/* The WebSocket listener's JSON paths (gk_net_ws json_get): GET
 * /rooms/public[?genre=NAME], the same JSON as the admin's from
 * sv_fleet_public_rooms (this process's listed rooms, and the fleet's from
 * its node-local copy: never a Redis call); any other path GK_ENOTFOUND. */
int sv_public_get(const struct gk_server *s, const char *path,
                  const struct gk_net_ws_arg *args, size_t n_args, char **body);

/* --- gk_server_agones.c -------------------------------------------------- */

/* Starts the Agones client if cfg->agones.enabled: POST /ready now (and
 * again every health_ms until it succeeds), then POST /health every
 * health_ms and the counters "rooms" and "players" whenever they change.
 * Returns 0, or GK_ENOMEM / GK_EIO with a message. */
int sv_agones_start(struct gk_server *s, char *err, size_t errlen);
/* The server is done: POST /shutdown, then close the client's handles
 * once the request completed or failed (bounded by a timeout). The
 * server is freed only after that (its handles count in s->handles).
 * Idempotent; does nothing when the client is off. */
void sv_agones_close(struct gk_server *s);

#endif
