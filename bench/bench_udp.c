/* bench_udp.c: the floor for "CPU per packet": a bare UDP send + receive
 * loop on 127.0.0.1, no ENet, no decoding, no rooms.
 *
 *   bench_udp [COUNT] [BYTES]
 *
 * One process, two sockets: each iteration sends one datagram of BYTES
 * (default 40, about an INPUT with a few records) from A to B and receives
 * it on B (blocking), then the same back, so every datagram costs one
 * sendto and one recvfrom, like a server that receives a packet and sends
 * one. Prints one JSON line: datagrams, CPU seconds (user + system, from
 * getrusage) and CPU nanoseconds per datagram handled (a send or a
 * receive counts as one, as in gk-server's packets_in + packets_out). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int bound(struct sockaddr_in *a) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return -1;
  memset(a, 0, sizeof(*a));
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(*a);
  if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
      getsockname(fd, (struct sockaddr *)a, &len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 200000;
  long bytes = argc > 2 ? atol(argv[2]) : 40;
  if (count <= 0 || bytes <= 0 || bytes > 1200) {
    fprintf(stderr, "usage: bench_udp [COUNT>0] [BYTES 1..1200]\n");
    return 2;
  }
  struct sockaddr_in a, b;
  int fa = bound(&a), fb = bound(&b);
  if (fa < 0 || fb < 0) {
    perror("socket");
    return 1;
  }
  unsigned char buf[1200];
  memset(buf, 7, sizeof(buf));
  double t0 = cpu_s();
  for (long i = 0; i < count; i++) {
    int from = i & 1 ? fb : fa, to = i & 1 ? fa : fb;
    struct sockaddr_in *dst = i & 1 ? &a : &b;
    if (sendto(from, buf, (size_t)bytes, 0, (struct sockaddr *)dst,
               sizeof(*dst)) != bytes ||
        recv(to, buf, sizeof(buf), 0) != bytes) {
      perror("send/recv");
      return 1;
    }
  }
  double cpu = cpu_s() - t0;
  printf("{\"datagrams\":%ld,\"bytes\":%ld,\"cpu_s\":%.3f,"
         "\"cpu_ns_per_packet\":%.0f}\n",
         count, bytes, cpu, cpu * 1e9 / (2.0 * (double)count));
  close(fa);
  close(fb);
  return 0;
}
