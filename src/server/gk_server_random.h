/* gk_server_random.h: secure random bytes and room codes for gk-server.
 *
 * libc only (getrandom(2), else /dev/urandom): this is part of the
 * socket-free base library (gk_server_dep), with the config reader and
 * the log, so tests and fuzzers use it without libuv or ENet.
 * gk_server.h includes this header.
 */
#ifndef GK_SERVER_RANDOM_H
#define GK_SERVER_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"

/* len bytes from the kernel CSPRNG (getrandom, else /dev/urandom) into
 * buf (non-NULL unless len is 0). Returns 0 or GK_EIO; a short read is a
 * failure, never a silent fallback to something predictable. */
int gk_server_random(void *buf, size_t len);

/* A fresh room code: GK_WIRE_CODE_LEN base32 characters (80 random bits),
 * NUL-terminated, into out (non-NULL). Returns 0 or GK_EIO. */
int gk_server_room_code(char out[GK_WIRE_CODE_LEN + 1]);

/* A fresh short code in its wire form (gk_net_wire.h, "Short codes"):
 * uniformly random characters of GK_WIRE_SHORT_ALPHABET, as many as the
 * rooms alive call for (gk_server_short_len), then '2's. 0 or GK_EIO. */
int gk_server_room_code_short(char out[GK_WIRE_CODE_LEN + 1], uint32_t alive);
/* A short code's length for `alive` rooms: 4 below 256, 6 below 65,536,
 * else 8 (25^4 = 390,625 codes, so fewer than 1 in 1,500 is in use). */
uint32_t gk_server_short_len(uint32_t alive);

#endif
