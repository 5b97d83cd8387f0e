/* bench_tcp_echo.c: the TCP floor for "CPU per WebSocket message": a TCP
 * echo server on 127.0.0.1 and nothing else (no WebSocket framing, no
 * rooms), as bench_enet_echo.c is ENet's.
 *
 *   bench_tcp_echo [COUNT] [BYTES] [IN_FLIGHT] [SERVER_CPU] [CLIENT_CPU]
 *
 * Two processes: the server (this one, one epoll loop, level-triggered as
 * gk-server's uv_poll) and a client (forked) with IN_FLIGHT (default 8)
 * connections, each keeping one message of BYTES (default 40: about an
 * INPUT) in flight and sending one more for each echo, until COUNT
 * (default 200,000) have come back. Both ends set TCP_NODELAY, as
 * gk-server's WebSocket connections and the browsers' do: one message, one
 * segment. The server reads what a wake-up brings with one recv and sends
 * it back with one send, as gk-server reads a message and sends a
 * CONFIRMED. SERVER_CPU and CLIENT_CPU pin the two (-1: not pinned).
 * Prints one JSON line: messages (the server's in + out), the server's
 * CPU seconds (user + system, getrusage) and CPU nanoseconds per message:
 * what a WebSocket message's cost in gk-server compares with. */
#define _GNU_SOURCE
#include "bench_floor.h"
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLIGHT_MAX 4000

static void nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The client: `flight` blocking connections, one message out on each;
 * an echo whole on a connection sends the next. Ends after `count`
 * echoes or 60 s. Returns the process's exit status. */
static int client(const struct sockaddr_in *to, long count, size_t bytes,
                  long flight) {
  static int fd[FLIGHT_MAX];
  static size_t have[FLIGHT_MAX];
  unsigned char buf[1200];
  memset(buf, 7, sizeof buf);
  int ep = epoll_create1(0);
  if (ep < 0) return 1;
  for (long i = 0; i < flight; i++) {
    fd[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (fd[i] < 0 ||
        connect(fd[i], (const struct sockaddr *)to, sizeof *to) != 0)
      return 1;
    nodelay(fd[i]);
    struct epoll_event e = {.events = EPOLLIN, .data.u64 = (uint64_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e) != 0) return 1;
    if (send(fd[i], buf, bytes, MSG_NOSIGNAL) != (ssize_t)bytes) return 1;
  }
  long got = 0, sent = flight;
  time_t end = time(NULL) + 60;
  struct epoll_event evs[64];
  while (got < count && time(NULL) < end) {
    int n = epoll_wait(ep, evs, 64, 100);
    for (int k = 0; k < n; k++) {
      long i = (long)evs[k].data.u64;
      ssize_t r = recv(fd[i], buf, sizeof buf, 0);
      if (r <= 0) return 1;
      have[i] += (size_t)r;
      for (; have[i] >= bytes; have[i] -= bytes) {
        got++;
        if (sent < count) {
          if (send(fd[i], buf, bytes, MSG_NOSIGNAL) != (ssize_t)bytes) return 1;
          sent++;
        }
      }
    }
  }
  for (long i = 0; i < flight; i++) close(fd[i]);
  close(ep);
  return got >= count ? 0 : 1;
}

/* The server's loop: accepts, echoes, ends when the client exits.
 * Counts messages in and out by bytes; *cpu: CPU seconds from the last
 * connection's accept on. */
static int serve(int ls, pid_t pid, size_t bytes, long flight, long *msgs,
                 double *cpu) {
  int ep = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN, .data.fd = ls};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ls, &e) != 0) return -1;
  long conns = 0;
  uint64_t in = 0, out = 0;
  double t0 = 0;
  int status = -1;
  unsigned char buf[4096];
  struct epoll_event evs[64];
  for (;;) {
    int n = epoll_wait(ep, evs, 64, 5);
    for (int k = 0; k < n; k++) {
      int fd = evs[k].data.fd;
      if (fd == ls) {
        int c = accept(ls, NULL, NULL);
        if (c < 0) continue;
        nodelay(c);
        struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
        if (++conns == flight) {
          t0 = bench_cpu_s();
          in = out = 0;
        }
        continue;
      }
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r <= 0) {
        if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
          close(fd);
        }
        continue;
      }
      in += (uint64_t)r;
      ssize_t w = send(fd, buf, (size_t)r, MSG_NOSIGNAL);
      if (w > 0) out += (uint64_t)w;
    }
    if (waitpid(pid, &status, WNOHANG) == pid) break;
  }
  *cpu = bench_cpu_s() - t0;
  *msgs = (long)((in + out) / bytes);
  close(ep);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv) {
  bench_floor_args a;
  if (bench_floor_args_parse(argc, argv, "bench_tcp_echo", &a) != 0) return 2;
  long count = a.count, bytes = a.bytes, flight = a.flight;
  long scpu = a.scpu, ccpu = a.ccpu;
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = 0};
  inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
  socklen_t len = sizeof at;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0 || bind(ls, (struct sockaddr *)&at, sizeof at) != 0 ||
      listen(ls, FLIGHT_MAX) != 0 ||
      getsockname(ls, (struct sockaddr *)&at, &len) != 0) {
    fprintf(stderr, "bench_tcp_echo: no TCP listener on 127.0.0.1\n");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(ls);
    bench_pin(ccpu);
    _exit(client(&at, count, (size_t)bytes, flight));
  }
  bench_pin(scpu);
  long msgs = 0;
  double cpu = 0;
  if (serve(ls, pid, (size_t)bytes, flight, &msgs, &cpu) != 0) {
    fprintf(stderr, "bench_tcp_echo: the client did not get %ld echoes\n",
            count);
    return 1;
  }
  printf("{\"messages\": %ld, \"cpu_s\": %.3f, \"cpu_ns_per_message\": %.0f, "
         "\"in_flight\": %ld, \"bytes\": %ld}\n",
         msgs, cpu, cpu * 1e9 / (double)msgs, flight, bytes);
  return 0;
}
