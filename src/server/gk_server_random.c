/* gk_server_random.c: secure random bytes, room codes and match seeds.
 *
 * Room codes are the only thing that keeps a stranger out of a room, so
 * they come from the kernel's CSPRNG: getrandom(2), or /dev/urandom where
 * the syscall is missing (old kernels, some sandboxes). A short read or an
 * error is a failure, never a silent fallback to something predictable.
 * A code is GK_WIRE_CODE_LEN (16) base32 characters: 80 bits, from 10
 * random bytes.
 */
#include "gk_server_random.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "gk_err.h"

int gk_server_random(void *buf, size_t len) {
  uint8_t *p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t n = getrandom(p + got, len - got, 0);
    if (n > 0) {
      got += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) break;
    return GK_EIO;
  }
  if (got == len) return 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return GK_EIO;
  while (got < len) {
    ssize_t n = read(fd, p + got, len - got);
    if (n > 0) {
      got += (size_t)n;
    } else if (!(n < 0 && errno == EINTR)) {
      close(fd);
      return GK_EIO;
    }
  }
  close(fd);
  return 0;
}

int gk_server_room_code(char out[GK_WIRE_CODE_LEN + 1]) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  uint8_t raw[(GK_WIRE_CODE_LEN * 5 + 7) / 8];
  int rc = gk_server_random(raw, sizeof(raw));
  if (rc) return rc;
  /* 5 bits per character, most significant first */
  uint32_t acc = 0, bits = 0;
  size_t in = 0;
  for (size_t i = 0; i < GK_WIRE_CODE_LEN; i++) {
    if (bits < 5) {
      acc = (acc << 8) | raw[in++];
      bits += 8;
    }
    out[i] = alphabet[(acc >> (bits - 5)) & 31u];
    bits -= 5;
  }
  out[GK_WIRE_CODE_LEN] = '\0';
  memset(raw, 0, sizeof(raw));
  return 0;
}
