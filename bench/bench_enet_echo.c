/* bench_enet_echo.c: the ENet floor for "CPU per datagram": an ENet echo
 * server on 127.0.0.1, and nothing else (no decoding, no rooms).
 *
 *   bench_enet_echo [COUNT] [BYTES] [IN_FLIGHT] [SERVER_CPU] [CLIENT_CPU]
 *
 * Two processes: the server (this one) and a client (forked) with
 * IN_FLIGHT (default 8) connections, each keeping one unsequenced packet
 * of BYTES (default 40: about an INPUT) in flight and sending one more
 * for each echo, until COUNT (default 200,000) have come back: as
 * gk-server's players, one packet per connection per datagram (ENet
 * bundles a peer's packets of one flush into one datagram; these never
 * meet). The server services its host as
 * gk_net_transport does (one enet_host_service, then the events queued
 * by it, then a flush) and echoes each packet, unsequenced like
 * gk-server's INPUT and CONFIRMED. SERVER_CPU and CLIENT_CPU pin the two
 * (-1: not pinned). Prints one JSON line: datagrams (the server's packets
 * in + out, as gk-server's), the server's CPU seconds (user + system,
 * getrusage) and CPU nanoseconds per datagram: what bench_server.py
 * divides gk-server's by. */
#define _GNU_SOURCE
#include "bench_floor.h"
#include <enet/enet.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void send_one(ENetPeer *peer, const unsigned char *buf, size_t n) {
  ENetPacket *p = enet_packet_create(buf, n, ENET_PACKET_FLAG_UNSEQUENCED);
  if (p && enet_peer_send(peer, 0, p) != 0) enet_packet_destroy(p);
}

/* The client: connects, keeps `flight` packets out, ends after `count`
 * echoes (or 60 s). Returns the process's exit status. */
static int client(const ENetAddress *to, long count, size_t bytes,
                  long flight) {
  ENetHost *h = enet_host_create(NULL, (size_t)flight, 1, 0, 0);
  if (!h) return 1;
  for (long i = 0; i < flight; i++)
    if (!enet_host_connect(h, to, 1, 0)) return 1;
  unsigned char buf[1200];
  memset(buf, 7, sizeof buf);
  long got = 0;
  int up = 0;
  time_t end = time(NULL) + 60;
  ENetEvent ev;
  while (got < count && time(NULL) < end) {
    int rc = enet_host_service(h, &ev, 5);
    for (; rc > 0; rc = enet_host_check_events(h, &ev)) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) {
        up = 1;
        send_one(ev.peer, buf, bytes);
      } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        enet_packet_destroy(ev.packet);
        if (++got + flight <= count) send_one(ev.peer, buf, bytes);
      }
    }
    if (up) enet_host_flush(h);
  }
  for (size_t i = 0; i < h->peerCount; i++)
    enet_peer_disconnect_now(&h->peers[i], 0);
  enet_host_destroy(h);
  return got >= count ? 0 : 1;
}

int main(int argc, char **argv) {
  bench_floor_args a;
  if (bench_floor_args_parse(argc, argv, "bench_enet_echo", &a) != 0) return 2;
  long count = a.count, bytes = a.bytes, flight = a.flight;
  long scpu = a.scpu, ccpu = a.ccpu;
  if (enet_initialize() != 0) return 1;
  ENetAddress at = {.host = ENET_HOST_ANY, .port = 0};
  enet_address_set_host(&at, "127.0.0.1");
  ENetHost *h = enet_host_create(&at, (size_t)flight + 1, 1, 0, 0);
  if (!h) {
    fprintf(stderr, "bench_enet_echo: no ENet host on 127.0.0.1\n");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    bench_pin(ccpu);
    _exit(client(&h->address, count, (size_t)bytes, flight));
  }
  bench_pin(scpu);
  long in = 0, out = 0;
  double t0 = 0;
  int status = -1;
  ENetEvent ev;
  for (;;) {
    int rc = enet_host_service(h, &ev, 5);
    for (; rc > 0; rc = enet_host_check_events(h, &ev)) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) {
        t0 = bench_cpu_s(); /* from the last connection on */
        in = out = 0;
      } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        in++;
        send_one(ev.peer, ev.packet->data, ev.packet->dataLength);
        out++;
        enet_packet_destroy(ev.packet);
      }
    }
    enet_host_flush(h);
    if (waitpid(pid, &status, WNOHANG) == pid) break;
  }
  double cpu = bench_cpu_s() - t0;
  enet_host_destroy(h);
  enet_deinitialize();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_enet_echo: the client did not get %ld echoes\n",
            count);
    return 1;
  }
  printf("{\"datagrams\": %ld, \"cpu_s\": %.3f, \"cpu_ns_per_packet\": %.0f, "
         "\"in_flight\": %ld, \"bytes\": %ld}\n",
         in + out, cpu, cpu * 1e9 / (double)(in + out), flight, bytes);
  return 0;
}
