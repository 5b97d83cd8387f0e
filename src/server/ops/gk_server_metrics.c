/* gk_server_metrics.c: the server's figures as Prometheus text.
 *
 * Two histograms are recorded as the server runs (fixed buckets, no
 * allocation): how late each step-timer tick fired after its deadline,
 * and how long after its place on the match's fixed schedule (match start
 * + (step + 1) * step period) each step a room ran was confirmed, 0 when
 * it was on time. Everything else is read when /metrics is asked for:
 * the server totals (gk_server_stats, which take in a match's session
 * counters when it ends), plus the session counters of the matches still
 * running, so a counter never goes backwards when a match ends. The
 * process figures come from getrusage and /proc/self/statm.
 *
 * Names follow Prometheus conventions: gk_ prefix, _total for counters,
 * seconds and bytes. No series is per room (rooms come and go; /rooms
 * has them), so a scrape costs one pass over the room table.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_net_ws.h"
#include "gk_fleet.h"
#include "gk_server_internal.h"

const uint64_t sv_hist_bounds_ns[SV_HIST_BUCKETS] = {
    250000u,    500000u,     1000000u,   2000000u,   5000000u,
    10000000u,  20000000u,   50000000u,  100000000u, 250000000u,
    500000000u, 1000000000u, 2500000000u};

void sv_hist_observe(sv_hist *h, uint64_t ns) {
  uint32_t i = 0;
  while (i < SV_HIST_BUCKETS && ns > sv_hist_bounds_ns[i]) i++;
  if (i < SV_HIST_BUCKETS) h->bucket[i]++;
  h->count++;
  h->sum_ns += ns;
}

void sv_metrics_tick(gk_server *s, uint64_t now_ns, uint64_t late_ns) {
  sv_metrics *m = &s->metrics;
  uint64_t sec = now_ns / 1000000000u;
  if (sec != m->worst_sec) {
    m->worst_ns[1] = sec == m->worst_sec + 1 ? m->worst_ns[0] : 0;
    m->worst_ns[0] = 0;
    m->worst_sec = sec;
  }
  if (late_ns > m->worst_ns[0]) m->worst_ns[0] = late_ns;
  m->last_tick_ns = now_ns;
  sv_hist_observe(&m->tick_late, late_ns);
}

void sv_metrics_confirm(gk_server *s, uint64_t late_ms) {
  sv_hist_observe(&s->metrics.confirm, late_ms * 1000000u);
}

uint64_t sv_metrics_recent_late_ns(const gk_server *s, uint64_t now_ns) {
  const sv_metrics *m = &s->metrics;
  uint64_t sec = now_ns / 1000000000u, worst = 0;
  if (sec == m->worst_sec)
    worst = m->worst_ns[0] > m->worst_ns[1] ? m->worst_ns[0] : m->worst_ns[1];
  else if (sec == m->worst_sec + 1)
    worst = m->worst_ns[0];
  /* a timer that stopped firing is late by the time since its last tick,
   * less the one step period it is allowed */
  uint64_t since = now_ns > m->last_tick_ns ? now_ns - m->last_tick_ns : 0;
  since = since > s->step_ns ? since - s->step_ns : 0;
  return since > worst ? since : worst;
}

/* --- the text ------------------------------------------------------------ */

typedef struct out {
  char *buf;
  size_t cap, len;
} out;

static void put(out *o, const char *fmt, ...) GK_PRINTF(2, 3);

static void put(out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = o->len < o->cap ? o->cap - o->len : 0;
  int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) o->len += (size_t)n;
}

static void head(out *o, const char *name, const char *type, const char *help) {
  put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(out *o, const char *name, const char *type, const char *help,
                uint64_t v) {
  head(o, name, type, help);
  put(o, "%s %" PRIu64 "\n", name, v);
}

static void counter(out *o, const char *name, const char *help, uint64_t v) {
  one(o, name, "counter", help, v);
}

static void hist(out *o, const char *name, const char *help, const sv_hist *h) {
  head(o, name, "histogram", help);
  uint64_t cum = 0;
  for (uint32_t i = 0; i < SV_HIST_BUCKETS; i++) {
    cum += h->bucket[i];
    uint64_t b = sv_hist_bounds_ns[i];
    /* the shortest form ("0.05", "1"), as client libraries write le */
    put(o, "%s_bucket{le=\"%.9g\"} %" PRIu64 "\n", name, (double)b / 1e9, cum);
  }
  put(o, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, h->count);
  put(o, "%s_sum %" PRIu64 ".%09" PRIu64 "\n", name, h->sum_ns / 1000000000u,
      h->sum_ns % 1000000000u);
  put(o, "%s_count %" PRIu64 "\n", name, h->count);
}

/* What the rooms hold now: states, players, and the counters of the
 * matches still running (ended ones are in the server totals). */
typedef struct live {
  uint64_t rooms[4]; /* by gk_room_state */
  uint64_t players;
  uint64_t bots; /* seats played by the server's bots (room.bots) */
  uint64_t desyncs;
  sv_figures f; /* the schedule's figures of the running matches */
} live;

static void gather(const gk_server *s, live *l) {
  memset(l, 0, sizeof(*l));
  for (uint32_t i = 0; s->rooms && i < s->cfg->max_rooms; i++) {
    const gk_room *r = s->rooms[i];
    if (!r) continue;
    gk_room_view v;
    gk_room_view_of(r, &v);
    if ((unsigned)v.state < 4) l->rooms[v.state]++;
    uint32_t m = v.connected;
    for (; m; m &= m - 1) l->players++;
    if (v.state != GK_ROOM_PLAYING) continue;
    for (m = v.bot_mask; m; m &= m - 1) l->bots++;
#define SV_LIVE_FIGURE(name, kind, help) l->f.name += v.name;
    GK_ROOM_SCHEDULE(SV_LIVE_FIGURE)
#undef SV_LIVE_FIGURE
    l->desyncs += v.desyncs;
  }
}

static void figures_of(const gk_server *s, const live *l, sv_figures *f) {
  const gk_room_stats *st = &s->host.stats;
  memcpy(f->rooms, l->rooms, sizeof(f->rooms));
  f->players = l->players;
  f->bots = l->bots;
  f->steps = st->room_steps;
#define SV_ALL_FIGURE(name, kind, help) f->name = st->name + l->f.name;
  GK_ROOM_SCHEDULE(SV_ALL_FIGURE)
#undef SV_ALL_FIGURE
}

void sv_metrics_figures(const gk_server *s, sv_figures *f) {
  live l;
  gather(s, &l);
  figures_of(s, &l, f);
}

uint64_t sv_hist_quantile_ns(const sv_hist *now, const sv_hist *before,
                             uint32_t permille) {
  uint64_t n[SV_HIST_BUCKETS + 1], total = 0;
  for (uint32_t i = 0; i <= SV_HIST_BUCKETS; i++) {
    uint64_t a = i < SV_HIST_BUCKETS ? now->bucket[i] : now->count;
    uint64_t b = 0;
    if (before) b = i < SV_HIST_BUCKETS ? before->bucket[i] : before->count;
    n[i] = a > b ? a - b : 0;
    if (i < SV_HIST_BUCKETS) total += n[i];
  }
  /* the +Inf bucket: what the count has beyond the real buckets */
  n[SV_HIST_BUCKETS] =
      n[SV_HIST_BUCKETS] > total ? n[SV_HIST_BUCKETS] - total : 0;
  total += n[SV_HIST_BUCKETS];
  if (!total || !permille || permille >= 1000) return UINT64_MAX;
  /* the rank, times 1000: permille * total */
  uint64_t rank = (uint64_t)permille * total, cum = 0;
  for (uint32_t i = 0; i < SV_HIST_BUCKETS; i++) {
    if ((cum + n[i]) * 1000u < rank) {
      cum += n[i];
      continue;
    }
    uint64_t lo = i ? sv_hist_bounds_ns[i - 1] : 0, hi = sv_hist_bounds_ns[i];
    /* admin side only: a double for the fraction of the bucket */
    double frac = (double)(rank - cum * 1000u) / (double)(n[i] * 1000u);
    return lo + (uint64_t)((double)(hi - lo) * frac + 0.5);
  }
  return sv_hist_bounds_ns[SV_HIST_BUCKETS - 1];
}

static void process(out *o) {
  struct rusage ru;
  uint64_t cpu_us = 0;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
             (uint64_t)ru.ru_utime.tv_usec +
             (uint64_t)ru.ru_stime.tv_sec * 1000000u +
             (uint64_t)ru.ru_stime.tv_usec;
  head(o, "gk_process_cpu_seconds_total", "counter",
       "User and system CPU time of the process.");
  put(o, "gk_process_cpu_seconds_total %" PRIu64 ".%06" PRIu64 "\n",
      cpu_us / 1000000u, cpu_us % 1000000u);
  unsigned long resident = 0;
  char line[128];
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fgets(line, sizeof(line), f)) { /* "size resident shared ..." */
      char *end = NULL;
      strtoul(line, &end, 10);
      resident = strtoul(end, NULL, 10);
    }
    fclose(f);
  }
  long page = sysconf(_SC_PAGESIZE);
  one(o, "gk_process_resident_memory_bytes", "gauge",
      "Resident memory of the process.",
      (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096));
}

static void rooms_and_players(out *o, const gk_server *s, const sv_figures *l) {
  static const char *const names[4] = {NULL, "lobby", "playing", "draining"};
  head(o, "gk_rooms", "gauge", "Rooms open, by state.");
  for (int i = 1; i < 4; i++)
    put(o, "gk_rooms{state=\"%s\"} %" PRIu64 "\n", names[i], l->rooms[i]);
  one(o, "gk_rooms_limit", "gauge", "Rooms the server may hold at once.",
      s->cfg->max_rooms);
  one(o, "gk_players", "gauge", "Players connected in a room's slot.",
      l->players);
  one(o, "gk_bot_players", "gauge",
      "Seats played by the server's bots in running matches (room.bots; "
      "not in gk_players).",
      l->bots);
  one(o, "gk_draining", "gauge",
      "1 while the server drains or shuts down (no new rooms).",
      s->host.shutting_down ? 1u : 0u);
}

static void traffic(out *o, const gk_server *s) {
  const gk_server_stats *st = &s->stats;
  sv_link_host_stats lt;
  sv_links_totals(s, &lt);
  const sv_link_host_stats *ts = &lt;
  int open = s->hosts_open > 0 && !s->closing;
  counter(o, "gk_datagrams_received_total", "Datagrams received.",
          st->packets_in);
  counter(o, "gk_received_bytes_total", "Bytes of datagrams received.",
          st->bytes_in);
  counter(o, "gk_datagrams_sent_total", "Datagrams sent.",
          open ? ts->packets_out : s->packets_out);
  counter(o, "gk_sent_bytes_total", "Bytes of datagrams sent.", ts->bytes_out);
  head(o, "gk_datagrams_dropped_total", "counter",
       "Datagrams dropped, by reason.");
  const struct {
    const char *reason;
    uint64_t v;
  } drops[] = {{"oversize", open ? ts->drop_oversize : s->drop_oversize},
               {"malformed", st->drop_malformed},
               {"unexpected", s->host.stats.drop_unexpected},
               {"session", s->host.stats.drop_session},
               {"no_room", st->drop_no_room}};
  for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
    put(o, "gk_datagrams_dropped_total{reason=\"%s\"} %" PRIu64 "\n",
        drops[i].reason, drops[i].v);
  counter(o, "gk_strikes_total", "Bad messages counted against connections.",
          st->strikes);
  counter(o, "gk_connects_total", "Connections accepted.", st->connects);
  counter(o, "gk_kicked_total", "Connections dropped for strikes.", st->kicked);
}

/* Connections by transport: one series per backend. */
static void links(out *o, const gk_server *s) {
  head(o, "gk_connections", "gauge", "Connections open now, by transport.");
  for (uint32_t i = 0; i < s->nhosts; i++)
    put(o, "gk_connections{transport=\"%s\"} %" PRIu32 "\n",
        s->hosts[i]->ops->kind, s->hosts[i]->links);
  head(o, "gk_connections_opened_total", "counter",
       "Connections accepted, by transport.");
  for (uint32_t i = 0; i < s->nhosts; i++)
    put(o, "gk_connections_opened_total{transport=\"%s\"} %" PRIu64 "\n",
        s->hosts[i]->ops->kind, s->hosts[i]->links_up);
  head(o, "gk_socket_calls_total", "counter",
       "Socket calls that sent or read messages, by transport (enet: "
       "sendmmsg and recvmmsg; websocket: sendmsg and recv).");
  for (uint32_t i = 0; i < s->nhosts; i++) {
    sv_link_host_stats hs;
    s->hosts[i]->ops->stats(s->hosts[i], &hs);
    put(o,
        "gk_socket_calls_total{transport=\"%s\",op=\"send\"} %" PRIu64 "\n"
        "gk_socket_calls_total{transport=\"%s\",op=\"read\"} %" PRIu64 "\n",
        s->hosts[i]->ops->kind, hs.send_calls, s->hosts[i]->ops->kind,
        hs.read_calls);
  }
}

typedef struct named {
  const char *name;
  uint64_t v;
} named;

static void family(out *o, const char *name, const char *label, const named *v,
                   size_t n) {
  for (size_t i = 0; i < n; i++)
    put(o, "%s{%s=\"%s\"} %" PRIu64 "\n", name, label, v[i].name, v[i].v);
}

/* The WebSocket listener's handshakes by result and closes by reason
 * (docs/PROTOCOL.md, "WebSocket framing"), when it runs. */
static void websocket(out *o, const gk_server *s) {
  const gk_net_ws_stats *w = sv_ws_stats(s);
  if (!w) return;
  const named hs[] = {
      {"ok", w->hs_ok},           {"path", w->hs_path},
      {"method", w->hs_method},   {"upgrade", w->hs_upgrade},
      {"version", w->hs_version}, {"protocol", w->hs_protocol},
      {"origin", w->hs_origin},   {"full", w->hs_full},
      {"limit", w->hs_limit},     {"per_ip", w->hs_per_ip},
      {"timeout", w->hs_timeout}, {"forwarded", w->hs_forwarded}};
  head(o, "gk_websocket_handshakes_total", "counter",
       "WebSocket upgrade requests: answered 101 (ok), or refused, by why.");
  family(o, "gk_websocket_handshakes_total", "result", hs,
         sizeof(hs) / sizeof(hs[0]));
  const named cl[] = {
      {"local", w->close_local},       {"peer", w->close_peer},
      {"protocol", w->close_protocol}, {"text", w->close_text},
      {"utf8", w->close_utf8},         {"slow", w->close_slow},
      {"too_big", w->close_too_big},   {"timeout", w->close_timeout},
      {"abnormal", w->close_abnormal}};
  head(o, "gk_websocket_closes_total", "counter",
       "WebSocket connections ended, by who and why.");
  family(o, "gk_websocket_closes_total", "reason", cl,
         sizeof(cl) / sizeof(cl[0]));
  counter(o, "gk_websocket_replaced_total",
          "Queued INPUT/CONFIRMED replaced by a newer one (a slow reader).",
          w->replaced);
}

static void matches(out *o, const gk_server *s, const live *l,
                    const sv_figures *f) {
  const gk_server_stats *st = &s->stats;
  const gk_room_stats *rs = &s->host.stats;
  counter(o, "gk_ticks_total", "Step timer ticks.", st->ticks);
  counter(o, "gk_tick_deadlines_skipped_total",
          "Step timer deadlines skipped because the timer fired late.",
          st->ticks_missed);
  counter(o, "gk_steps_total", "Steps run by the rooms' own loops.", f->steps);
#define SV_FIGURE_COUNTER(name, kind, help)                                    \
  counter(o, "gk_" #name "_total", (help), f->name);
  GK_ROOM_SCHEDULE(SV_FIGURE_COUNTER)
#undef SV_FIGURE_COUNTER
  counter(o, "gk_desyncs_total", "Desyncs detected.", rs->desyncs + l->desyncs);
  counter(o, "gk_admin_requests_total", "Admin HTTP requests answered.",
          s->metrics.http_requests);
  counter(o, "gk_admin_connections_cut_total",
          "Admin HTTP connections cut for sending a request too slowly.",
          s->metrics.http_cut);
}

/* Every room counter of kind GK_ROOM_METRIC (gk_room_stats.h), as
 * gk_<name>_total. */
static void room_counters(out *o, const gk_server *s) {
  const gk_room_stats *rs = &s->host.stats;
#define SV_ROOM_COUNTER(name, kind, help)                                      \
  if ((kind) == GK_ROOM_METRIC)                                                \
    counter(o, "gk_" #name "_total", (help), rs->name);
  GK_ROOM_COUNTERS(SV_ROOM_COUNTER)
#undef SV_ROOM_COUNTER
}

/* Desync forensics: reports by result. Every result has its line, 0 until
 * it happens, so a rate() never misses the first one. */
static void desync_counters(out *o, const gk_server *s) {
  const gk_room_stats *rs = &s->host.stats;
  head(o, "gk_desync_reports_total", "counter",
       "desync_report lines logged, by result (diffed, or why there is no "
       "diff).");
  for (int i = 0; i < GK_ROOM_DSY_RESULTS; i++)
    put(o, "gk_desync_reports_total{result=\"%s\"} %" PRIu64 "\n",
        gk_room_dsy_result_names[i], rs->desync_reports[i]);
}

/* Quick play's outcomes (gk_server_quick.c), with or without a fleet. */
static void quick_counters(out *o, const gk_server *s) {
  const sv_quick_counts *q = &s->quick_stats;
  head(o, "gk_quick_play_total", "counter",
       "QUICK_PLAY requests by outcome: joined (a lobby here), created (a "
       "new one here), redirected (a lobby on another node), refused "
       "(ERROR), limited (no lobby fitted and limits.creates_per_min "
       "refused a new room: GK_ELIMIT); moved: of joined and created, those "
       "that came for a lobby that had filled meanwhile.");
  put(o,
      "gk_quick_play_total{outcome=\"joined\"} %" PRIu64 "\n"
      "gk_quick_play_total{outcome=\"created\"} %" PRIu64 "\n"
      "gk_quick_play_total{outcome=\"redirected\"} %" PRIu64 "\n"
      "gk_quick_play_total{outcome=\"refused\"} %" PRIu64 "\n"
      "gk_quick_play_total{outcome=\"limited\"} %" PRIu64 "\n"
      "gk_quick_play_total{outcome=\"moved\"} %" PRIu64 "\n",
      q->joined, q->created, q->redirected, q->refused, q->limited, q->moved);
}

/* A fleet's node (gk_server_fleet.c): its redirects and its directory's
 * counters (gk_fleet.h, one X-macro list), as gk_fleet_<name>_total;
 * nothing without a fleet. */
static void fleet_counters(out *o, const gk_server *s) {
  const gk_fleet_stats *fs = sv_fleet_directory_stats(s);
  if (!fs) return;
  counter(o, "gk_fleet_redirects_total",
          "Room requests answered REDIRECT: the room is on another node.",
          s->fleet_stats.redirects);
  counter(o, "gk_fleet_redirects_failed_total",
          "Room requests for another node's code the directory could not "
          "answer (unreachable, bad entry).",
          s->fleet_stats.redirects_failed);
  head(o, "gk_fleet_up", "gauge",
       "1 while the room directory (Redis) is reachable.");
  put(o, "gk_fleet_up %d\n", sv_fleet_reachable(s));
#define SV_FLEET_COUNTER(name, help)                                           \
  counter(o, "gk_fleet_" #name "_total", "Room directory: " help ".", fs->name);
  GK_FLEET_STATS(SV_FLEET_COUNTER)
#undef SV_FLEET_COUNTER
}

size_t sv_metrics_write(const gk_server *s, char *buf, size_t cap) {
  out o = {buf, cap, 0};
  if (buf && cap) buf[0] = '\0';
  live l;
  sv_figures f;
  gather(s, &l);
  figures_of(s, &l, &f);
  rooms_and_players(&o, s, &f);
  traffic(&o, s);
  links(&o, s);
  websocket(&o, s);
  matches(&o, s, &l, &f);
  room_counters(&o, s);
  desync_counters(&o, s);
  quick_counters(&o, s);
  fleet_counters(&o, s);
  hist(&o, "gk_tick_lateness_seconds",
       "How long after its deadline each step timer tick fired.",
       &s->metrics.tick_late);
  hist(&o, "gk_confirm_latency_seconds",
       "How long after its place on the match's schedule each step was "
       "confirmed (0 when on time, and for a stall's step: a stall moves "
       "the schedule, see gk_stalls_total).",
       &s->metrics.confirm);
  process(&o);
  return o.len;
}
