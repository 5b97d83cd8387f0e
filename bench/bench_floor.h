/* bench_floor.h: what the floor programs (bench_enet_echo.c,
 * bench_tcp_echo.c) share: the process's CPU time, a numeric argument,
 * pinning to a core. Header-only: each is one file, built on its own. */
#ifndef GK_BENCH_FLOOR_H
#define GK_BENCH_FLOOR_H

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

/* User + system CPU seconds of this process so far (getrusage). */
static inline double bench_cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* argv[i] as a whole number, or `dflt` when absent; LONG_MIN if it is
 * not one (the caller's usage check refuses it). */
static inline long bench_arg(int argc, char **argv, int i, long dflt) {
  if (i >= argc) return dflt;
  char *end = NULL;
  long v = strtol(argv[i], &end, 10);
  return end != argv[i] && *end == '\0' ? v : LONG_MIN;
}

/* Pins this process to core `cpu` (-1: leaves it where it is). */
static inline void bench_pin(long cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity");
}

/* The floor programs' arguments: [COUNT] [BYTES] [IN_FLIGHT] [SERVER_CPU]
 * [CLIENT_CPU] (defaults 200,000, 40, 8, -1, -1). */
typedef struct bench_floor_args {
  long count, bytes, flight, scpu, ccpu;
} bench_floor_args;

/* Reads them into *a: 0, or 2 (and the usage on stderr, naming `prog`)
 * for a bad one. */
static inline int bench_floor_args_parse(int argc, char **argv,
                                         const char *prog,
                                         bench_floor_args *a) {
  a->count = bench_arg(argc, argv, 1, 200000);
  a->bytes = bench_arg(argc, argv, 2, 40);
  a->flight = bench_arg(argc, argv, 3, 8);
  a->scpu = bench_arg(argc, argv, 4, -1);
  a->ccpu = bench_arg(argc, argv, 5, -1);
  if (a->count <= 0 || a->bytes <= 0 || a->bytes > 1200 || a->flight <= 0 ||
      a->flight > a->count || a->flight > 4000 || a->scpu < -1 ||
      a->ccpu < -1) {
    fprintf(stderr,
            "usage: %s [COUNT>0] [BYTES 1..1200] [IN_FLIGHT "
            "1..COUNT, <= 4000] [SERVER_CPU] [CLIENT_CPU]\n",
            prog);
    return 2;
  }
  return 0;
}

#endif
