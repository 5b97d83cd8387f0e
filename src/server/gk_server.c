/* gk_server.c: the server's lifecycle (the API of gk_server.h).
 *
 * gk_server_start binds the ENet host (the ENet backend of the server's
 * links, gk_server_link_enet.c; what links report goes to
 * gk_server_route.c) and, if enabled, the WebSocket listener
 * (gk_server_link_ws.c), starts the step timer, the sweep timer and the
 * signal handlers; gk_server_run does that on a fresh loop and runs it.
 * From then on this file owns the clock side of the server:
 *   - the step timer ticks every playing or draining room
 *     (sv_match_tick, gk_room_match.c) at step_hz, without drift;
 *   - the sweep closes lobbies and drops connections that sat in no room
 *     past lobby_timeout_ms;
 *   - shutdown (a signal or gk_server_shutdown) tells everyone, closes
 *     lobbies, ends matches at their next step, waits for them (at most
 *     the grace time), lets the last packets leave, closes every handle
 *     and frees the server once no replay job runs.
 * The other files of the server are described in gk_server_internal.h.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gk_err.h"
#include "gk_server_internal.h"

/* --- shutdown ------------------------------------------------------------ */

/* The server goes once its handles are closed and no replay job runs. */
void sv_maybe_free(gk_server *s) {
  if (s->closing && s->handles == 0 && s->hosts_open == 0 && s->jobs == 0) {
    sv_links_free(s);
    free(s);
  }
}

static void on_handle_closed(uv_handle_t *h) {
  gk_server *s = h->data;
  s->handles--;
  sv_maybe_free(s);
}

/* The last record: server totals. Written once every replay is final. */
void sv_log_stopped(gk_server *s) {
  if (s->stopped_logged) return;
  s->stopped_logged = 1;
  if (!gk_log_begin(s->log, GK_LOG_INFO, "stopped", NULL)) return;
  const gk_server_stats *st = &s->stats;
  const gk_room_stats *rs = &s->host.stats;
#define SV_LOG_SERVER(name, key, div, help)                                    \
  gk_log_u64(s->log, key, st->name / (div));
  GK_SERVER_COUNTERS(SV_LOG_SERVER)
#undef SV_LOG_SERVER
#define SV_LOG_ROOM(name, kind, help) gk_log_u64(s->log, #name, rs->name);
  GK_ROOM_COUNTERS(SV_LOG_ROOM)
#undef SV_LOG_ROOM
  gk_log_u64(s->log, "packets_out", s->packets_out);
  gk_log_u64(s->log, "drop_oversize", s->drop_oversize);
  /* deadlines / uptime is the step timer's rate: step_hz, no drift */
  gk_log_u64(s->log, "deadlines", s->k);
  gk_log_u64(s->log, "uptime_us", (uv_hrtime() - s->t0) / 1000u);
  sv_link_host_stats ls;
  sv_links_totals(s, &ls);
  gk_log_u64(s->log, "drains", ls.drains);
  gk_log_u64(s->log, "drain_us", ls.drain_ns / 1000u);
  gk_log_u64(s->log, "drain_us_max", ls.drain_ns_max / 1000u);
  gk_log_u64(s->log, "send_calls", ls.send_calls);
  gk_log_u64(s->log, "read_calls", ls.read_calls);
  gk_log_end(s->log);
}

static void close_all(gk_server *s) {
  if (s->closing) return;
  s->closing = 1;
  /* everything must be done: no room is left */
  uint64_t now = sv_room_now(s);
  for (uint32_t i = s->host.nrooms; i-- > 0;)
    gk_room_finalise(sv_live_room(s, i), GK_WIRE_END_SHUTDOWN, now);
  sv_link_host_stats ls;
  sv_links_totals(s, &ls);
  s->packets_out = ls.packets_out;
  s->drop_oversize = ls.drop_oversize;
  if (s->jobs == 0) sv_log_stopped(s); /* else when the last replay is done */
  uv_close((uv_handle_t *)&s->step_timer, on_handle_closed);
  uv_close((uv_handle_t *)&s->sweep_timer, on_handle_closed);
  uv_close((uv_handle_t *)&s->grace_timer, on_handle_closed);
  sv_admin_close(s);
  sv_agones_close(s); /* POST /shutdown: the drain is complete */
  sv_fleet_close(s);
  if (s->sig_fd >= 0) {
    uv_close((uv_handle_t *)&s->sig_poll, on_handle_closed);
    close(s->sig_fd); /* not polled once uv_close is called */
    s->sig_fd = -1;
  }
  sv_rooms_free(s);
  sv_conns_free(s);
  sv_auth_free(s);
  sv_links_close(s); /* the last to close may free s */
}

static void on_linger(uv_timer_t *t) {
  close_all(t->data);
}

/* Once shutting down and no room is left: let the last packets leave. */
static void maybe_done(gk_server *s) {
  if (!s->host.shutting_down || s->closing || s->lingering || s->host.nrooms)
    return;
  s->lingering = 1;
  uv_timer_stop(&s->grace_timer);
  uv_timer_start(&s->grace_timer, on_linger, SV_LINGER_MS, 0);
}

static void on_grace(uv_timer_t *t) {
  gk_server *s = t->data;
  if (s->lingering) {
    close_all(s);
    return;
  }
  if (gk_log_begin(s->log, GK_LOG_WARN, "grace_expired", NULL)) {
    gk_log_u64(s->log, "rooms_left", s->host.nrooms);
    gk_log_end(s->log);
  }
  s->forced = 1;
  close_all(s);
}

void gk_server_shutdown(gk_server *s) {
  if (s->closing) return;
  if (s->host.draining) {
    s->host.draining = 0; /* a signal during a drain: end the matches now */
    s->host.shutting_down = 0;
    s->lingering = 0;
    uv_timer_stop(&s->grace_timer);
  }
  if (s->host.shutting_down) {
    gk_log_msg(s->log, GK_LOG_WARN, "shutdown_forced", NULL, NULL, NULL);
    s->forced = 1;
    close_all(s);
    return;
  }
  s->host.shutting_down = 1;
  if (gk_log_begin(s->log, GK_LOG_INFO, "shutdown", NULL)) {
    gk_log_u64(s->log, "rooms", s->host.nrooms);
    gk_log_u64(s->log, "grace_ms", s->cfg->shutdown_grace_ms);
    gk_log_end(s->log);
  }
  uint64_t now = sv_room_now(s);
  for (uint32_t i = s->host.nrooms; i-- > 0;) {
    gk_room *r = sv_live_room(s, i);
    gk_room_send_shutdown(r, s->cfg->shutdown_grace_ms);
    if (gk_room_state_of(r) == GK_ROOM_LOBBY)
      gk_room_finalise(r, GK_WIRE_END_SHUTDOWN, now);
    else
      gk_room_end_match(r, GK_WIRE_END_SHUTDOWN, now);
  }
  uv_timer_start(&s->grace_timer, on_grace, s->cfg->shutdown_grace_ms, 0);
  maybe_done(s);
}

int sv_server_drain(gk_server *s) {
  if (s->host.shutting_down || s->closing) return GK_ECLOSED;
  s->host.shutting_down = 1; /* create, join and start are refused from now */
  s->host.draining = 1;
  sv_fleet_draining(s);
  uint32_t playing = 0;
  uint64_t now = sv_room_now(s);
  for (uint32_t i = s->host.nrooms; i-- > 0;) {
    gk_room *r = sv_live_room(s, i);
    if (gk_room_state_of(r) == GK_ROOM_LOBBY)
      gk_room_close_lobby(r, GK_ECLOSED, "server is draining",
                          GK_WIRE_END_SHUTDOWN, now);
    else
      playing++;
  }
  if (gk_log_begin(s->log, GK_LOG_INFO, "drain", NULL)) {
    gk_log_u64(s->log, "rooms", playing);
    gk_log_end(s->log);
  }
  maybe_done(s);
  return 0;
}

/* SIGTERM and SIGINT are read from a signalfd on the loop; no handler
 * runs asynchronously. They are blocked in every thread (gk_server_run
 * blocks them before anything starts a thread, and threads inherit the
 * mask), so the kernel keeps each one pending until the loop reads it.
 * (With uv_signal's handler, ThreadSanitizer's deferred delivery lost
 * about one SIGTERM in a hundred sent right after start.) One signal per
 * callback: the poll is level-triggered, and a second signal is a second
 * gk_server_shutdown. */
static void on_signal(uv_poll_t *h, int status, int events) {
  gk_server *s = h->data;
  struct signalfd_siginfo si;
  (void)events;
  if (status < 0 || s->sig_fd < 0) return;
  if (read(s->sig_fd, &si, sizeof si) != (ssize_t)sizeof si) return;
  gk_log_msg(s->log, GK_LOG_INFO, "signal", NULL, "signal",
             si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
  gk_server_shutdown(s);
}

/* SIGTERM and SIGINT in `set`, blocked in the calling thread. */
static void block_stop_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGINT);
  pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* The signalfd and its poll handle on the loop. 0 or GK_EIO. */
static int start_signals(gk_server *s, char *err, size_t errlen) {
  sigset_t set;
  block_stop_signals(&set);
  s->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (s->sig_fd < 0)
    return gk_errf(err, errlen, GK_EIO, "signalfd: %s", strerror(errno));
  int rc = uv_poll_init(s->loop, &s->sig_poll, s->sig_fd);
  if (rc != 0) {
    close(s->sig_fd);
    s->sig_fd = -1;
    return gk_errf(err, errlen, GK_EIO, "signals: %s", uv_strerror(rc));
  }
  s->sig_poll.data = s;
  s->handles++;
  uv_poll_start(&s->sig_poll, UV_READABLE, on_signal);
  return 0;
}

/* --- timers -------------------------------------------------------------- */

static void arm_step(gk_server *s);

static void tick_rooms(gk_server *s) {
  uint64_t now = sv_now_ms(s);
  s->stats.ticks++;
  for (uint32_t i = s->host.nrooms; i-- > 0;)
    gk_room_tick(sv_live_room(s, i), now);
  maybe_done(s);
}

/* How long one tick took and how late it began (the stopped line). */
static void note_tick(gk_server *s, uint64_t took_ns, uint64_t late_ns) {
  gk_server_stats *st = &s->stats;
  st->tick_ns += took_ns;
  if (took_ns > st->tick_ns_max) st->tick_ns_max = took_ns;
  if (took_ns > s->step_ns) st->tick_over++;
  if (late_ns > st->tick_late_ns_max) st->tick_late_ns_max = late_ns;
}

static void on_step(uv_timer_t *t) {
  gk_server *s = t->data;
  uint64_t now = uv_hrtime();
  uint64_t due = (now - s->t0) / s->step_ns; /* deadlines passed */
  if (due > s->k) {
    sv_metrics_tick(s, now, now - (s->t0 + (s->k + 1) * s->step_ns));
    uint64_t missed = due - s->k - 1;
    if (missed) {
      s->stats.ticks_missed += missed;
      if (missed > s->cfg->catchup_ticks &&
          gk_log_begin(s->log, GK_LOG_WARN, "ticks_missed", NULL)) {
        gk_log_u64(s->log, "missed", missed);
        gk_log_end(s->log);
      }
    }
    s->k = due;
    uint64_t t1 = uv_hrtime();
    tick_rooms(s);
    note_tick(s, uv_hrtime() - t1, now - (s->t0 + due * s->step_ns));
  }
  if (!s->closing) arm_step(s);
}

/* Arms the one-shot timer for deadline k + 1 (ms resolution, rounded up,
 * so it never fires before the deadline by more than the loop's clock
 * truncation; on_step checks the deadline on uv_hrtime). */
static void arm_step(gk_server *s) {
  uint64_t next = s->t0 + (s->k + 1) * s->step_ns;
  uint64_t now = uv_hrtime();
  uint64_t wait_ms = next > now ? (next - now + 999999u) / 1000000u : 0;
  uv_timer_start(&s->step_timer, on_step, wait_ms, 0);
}

static void on_sweep(uv_timer_t *t) {
  gk_server *s = t->data;
  uint64_t now = sv_now_ms(s);
  uint64_t limit = s->cfg->lobby_timeout_ms;
  if (!s->closing) sv_auth_sweep(s, now); /* the handshake deadline */
  if (!limit || s->closing) return;
  for (uint32_t i = s->host.nrooms; i-- > 0;) {
    gk_room *r = sv_live_room(s, i);
    gk_room_view v;
    gk_room_view_of(r, &v);
    if (v.state == GK_ROOM_LOBBY && now - v.created_ms > limit)
      gk_room_close_lobby(r, GK_ECLOSED, "lobby timed out",
                          GK_WIRE_END_ALL_LEFT, now);
  }
  /* connections that sit in no room hold a peer slot: not for ever */
  for (uint32_t p = 0; p < s->cfg->max_peers; p++) {
    sv_conn *c = &s->conns[p];
    if (c->used && c->rc.room == NULL && now > c->rc.since_ms &&
        now - c->rc.since_ms > limit) {
      gk_log_msg(s->log, GK_LOG_DEBUG, "idle_disconnect", NULL, NULL, NULL);
      sv_link_close(c->link, 0);
      c->rc.since_ms = now; /* disconnect callback follows */
    }
  }
}

/* --- start --------------------------------------------------------------- */

static int ensure_dir(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    return gk_errf(err, errlen, GK_EIO, "replays.dir: %s is not a folder", dir);
  }
  if (mkdir(dir, 0755) == 0) return 0;
  return gk_errf(err, errlen, GK_EIO, "replays.dir: cannot create %s: %s", dir,
                 strerror(errno));
}

/* Frees what gk_server_start allocated before its transport opened. */
static void free_tables(gk_server *s) {
  sv_rooms_free(s);
  sv_conns_free(s);
  free(s);
}

/* The room and connection tables, admission and the ENet host. On
 * failure the caller frees the tables (free_tables). */
static int open_tables(gk_server *s, char *err, size_t errlen) {
  if (sv_rooms_init(s) != 0 || sv_conns_init(s) != 0)
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  int rc = sv_auth_init(s, err, errlen); /* reads auth.key_file */
  if (rc) return rc;
  rc = sv_enet_open(s, err, errlen);
  if (rc) {
    sv_auth_free(s);
    return rc;
  }
  return 0;
}

/* The timers; the first step deadline. */
static void start_timers(gk_server *s) {
  uv_loop_t *loop = s->loop;
  uv_timer_init(loop, &s->step_timer);
  uv_timer_init(loop, &s->sweep_timer);
  uv_timer_init(loop, &s->grace_timer);
  s->step_timer.data = s->sweep_timer.data = s->grace_timer.data = s;
  s->handles += 3;
  s->step_ns = 1000000000u / s->cfg->step_hz;
  s->t0 = uv_hrtime();
  s->k = 0;
  arm_step(s);
  uv_timer_start(&s->sweep_timer, on_sweep, SV_SWEEP_MS, SV_SWEEP_MS);
}

static void log_listening(gk_server *s) {
  const gk_server_config *cfg = s->cfg;
  if (gk_log_begin(s->log, GK_LOG_INFO, "listening", NULL)) {
    gk_log_str(s->log, "host", cfg->host);
    gk_log_u64(s->log, "port", sv_enet_port(s));
    if (s->ws) gk_log_u64(s->log, "ws_port", sv_ws_port(s));
    if (s->ws) gk_log_str(s->log, "ws_static", sv_ws_static_root(s));
    gk_log_u64(s->log, "step_hz", cfg->step_hz);
    gk_log_u64(s->log, "max_rooms", cfg->max_rooms);
    gk_log_u64(s->log, "max_peers", cfg->max_peers);
    gk_log_u64(s->log, "socket_buffer", sv_enet_socket_buffer(s));
    gk_log_str(s->log, "replay_dir",
               cfg->replays_enabled ? cfg->replay_dir : NULL);
    gk_log_end(s->log);
  }
}

int gk_server_start(uv_loop_t *loop, const gk_server_config *cfg,
                    gk_server_log *log, int handle_signals, gk_server **out,
                    char *err, size_t errlen) {
  *out = NULL;
  gk_server *s = calloc(1, sizeof(*s));
  if (!s) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  s->loop = loop;
  s->cfg = cfg;
  s->log = log;
  s->sig_fd = -1;
  int rc = open_tables(s, err, errlen);
  if (rc) {
    free_tables(s);
    return rc;
  }
  if (cfg->replays_enabled) {
    /* a folder that cannot be made now is tried again by every room */
    char why[GK_SERVER_CONFIG_ERR_MAX];
    if (ensure_dir(cfg->replay_dir, why, sizeof(why)) == 0)
      gk_room_recover_replays(&s->host);
    else {
      s->host.replay_fault = 1;
      gk_log_msg(log, GK_LOG_ERROR, "replay_failed", NULL, "reason", why);
    }
  }
  start_timers(s);
  rc = handle_signals ? start_signals(s, err, errlen) : 0;
  if (!rc) rc = sv_ws_open(s, err, errlen);
  if (!rc) rc = sv_admin_start(s, err, errlen);
  if (!rc) rc = sv_agones_start(s, err, errlen);
  if (!rc) rc = sv_fleet_start(s, err, errlen);
  if (rc) {
    s->stopped_logged = 1; /* it never started */
    close_all(s);          /* frees s once the loop has closed it all */
    return rc;
  }
  log_listening(s);
  sv_ws_log_page(s);
  *out = s;
  return 0;
}

uint16_t gk_server_port(const gk_server *s) {
  return sv_enet_port(s);
}

const gk_room_stats *gk_server_get_room_stats(const gk_server *s) {
  return &s->host.stats;
}

const gk_server_stats *gk_server_get_stats(const gk_server *s) {
  return &s->stats;
}

int gk_server_run(const gk_server_config *cfg, gk_server_log *log) {
  sigset_t stop;
  block_stop_signals(&stop); /* before any thread starts: see on_signal */
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) {
    gk_log_msg(log, GK_LOG_ERROR, "start_failed", NULL, "reason",
               "uv_loop_init failed");
    return 1;
  }
  gk_server *s = NULL;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_start(&loop, cfg, log, 1, &s, err, sizeof(err));
  if (rc) {
    gk_log_msg(log, GK_LOG_ERROR, "start_failed", NULL, "reason", err);
    fprintf(stderr, "gk-server: %s\n", err);
    uv_run(&loop, UV_RUN_DEFAULT); /* what a late failure left closing */
    uv_loop_close(&loop);
    return 1;
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return 0;
}
