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

uint32_t gk_server_short_len(uint32_t alive) {
  return alive < 256u ? 4u : alive < 65536u ? 6u : 8u;
}

int gk_server_room_code_short(char out[GK_WIRE_CODE_LEN + 1], uint32_t alive) {
  static const char alphabet[] = GK_WIRE_SHORT_ALPHABET;
  const uint32_t k = (uint32_t)sizeof(alphabet) - 1u; /* 25 */
  uint32_t len = gk_server_short_len(alive);
  uint8_t raw[32];
  uint32_t got = 0;
  while (got < len) { /* rejection: bytes below 250 map evenly onto 25 */
    int rc = gk_server_random(raw, sizeof(raw));
    if (rc) return rc;
    for (size_t i = 0; i < sizeof(raw) && got < len; i++)
      if (raw[i] < 250u) out[got++] = alphabet[raw[i] % k];
  }
  for (uint32_t i = len; i < GK_WIRE_CODE_LEN; i++) out[i] = '2';
  out[GK_WIRE_CODE_LEN] = '\0';
  memset(raw, 0, sizeof(raw));
  return 0;
}
