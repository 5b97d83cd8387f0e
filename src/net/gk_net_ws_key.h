/* gk_net_ws_key.h: the WebSocket handshake's key arithmetic (RFC 6455
 * 4.1, 4.2.2) and header token lists, shared by the listener (gk_net_ws.c) and
 * the client (gk_net_ws_client.c) so it is written once. nettle's SHA-1 and
 * base64.
 *
 *   Sec-WebSocket-Key     base64 of 16 random bytes: 24 characters
 *   Sec-WebSocket-Accept  base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-
 *                         C5AB0DC85B11")): 28 characters
 *
 * Pure functions: no allocation, no state; `out` buffers are the
 * caller's and get a NUL after the characters.
 */
#ifndef GK_NET_WS_KEY_H
#define GK_NET_WS_KEY_H

#include <stdint.h>

#define GK_NET_WS_KEY_LEN 24    /* base64 of 16 bytes */
#define GK_NET_WS_ACCEPT_LEN 28 /* base64 of a SHA-1 digest (20 bytes) */

/* 1 if `key` (may be NULL: 0) is the base64 of exactly 16 bytes. */
int gk_net_ws_key_check(const char *key);

/* The key of 16 raw bytes into out (GK_NET_WS_KEY_LEN + 1 bytes). */
void gk_net_ws_key_make(const uint8_t raw[16], char *out);

/* The accept value of `key` (non-NULL, NUL-terminated) into out
 * (GK_NET_WS_ACCEPT_LEN + 1 bytes). */
void gk_net_ws_key_accept(const char *key, char *out);

/* 1 if a comma-separated header value `list` (may be NULL: 0) holds
 * `tok` (ASCII case folded; spaces and tabs around items ignored). */
int gk_net_ws_has_token(const char *list, const char *tok);

#endif
