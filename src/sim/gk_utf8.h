/* gk_utf8.h: UTF-8 checked strictly, for text from outside (a replay's
 * JSON header, a player's name on the wire). Pure, no allocation. */
#ifndef GK_UTF8_H
#define GK_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the UTF-8 sequence at p (left bytes available), or
 * 0 if it is not one: a stray continuation byte, an overlong form, a
 * surrogate, a code point beyond U+10FFFF, or a sequence cut short. */
size_t gk_utf8_len(const uint8_t *p, size_t left);

/* The offset of the first byte of p[0..n) that does not start a whole
 * UTF-8 sequence (as gk_utf8_len reads it), or n when all n bytes are
 * UTF-8. Control characters are left to the caller. */
size_t gk_utf8_check(const uint8_t *p, size_t n);

#endif
