/* slow_read.c: an LD_PRELOAD shim for test_ws_limits.c: every read of a
 * file whose name ends in ".slow" (pread, preadv, read, sendfile, as
 * libuv's thread pool and libmicrohttpd would make them) first sleeps
 * GK_SLOW_READ_US microseconds (default 300000): a slow disk. Whichever
 * thread reads such a file waits; the test sees whether the loop did. */
#undef _FILE_OFFSET_BITS /* both pread and pread64 are defined here */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void maybe_wait(int fd) {
  char link[64], path[512];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 5 || memcmp(path + n - 5, ".slow", 5) != 0) return;
  const char *us = getenv("GK_SLOW_READ_US");
  long d = us ? atol(us) : 300000;
  struct timespec t = {d / 1000000, (d % 1000000) * 1000};
  nanosleep(&t, NULL);
}

/* The next definition of `name` (libc's), as its own pointer type. */
#define REAL(name)                                                             \
  __typeof__(&name) real_##name;                                               \
  do {                                                                         \
    void *p_ = dlsym(RTLD_NEXT, #name);                                        \
    memcpy(&real_##name, &p_, sizeof p_);                                      \
  } while (0)

ssize_t read(int fd, void *buf, size_t n) {
  maybe_wait(fd);
  REAL(read);
  return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  maybe_wait(fd);
  REAL(pread);
  return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
  maybe_wait(fd);
  REAL(pread64);
  return real_pread64(fd, buf, n, off);
}

ssize_t preadv(int fd, const struct iovec *v, int n, off_t off) {
  maybe_wait(fd);
  REAL(preadv);
  return real_preadv(fd, v, n, off);
}

ssize_t preadv64(int fd, const struct iovec *v, int n, off64_t off) {
  maybe_wait(fd);
  REAL(preadv64);
  return real_preadv64(fd, v, n, off);
}

ssize_t sendfile(int out, int in, off_t *off, size_t n) {
  maybe_wait(in);
  REAL(sendfile);
  return real_sendfile(out, in, off, n);
}

ssize_t sendfile64(int out, int in, off64_t *off, size_t n) {
  maybe_wait(in);
  REAL(sendfile64);
  return real_sendfile64(out, in, off, n);
}
