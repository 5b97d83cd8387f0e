/* ws_frames.c: fuzz target: arbitrary bytes as a client's stream after a
 * good upgrade, through the real listener's wslay-backed connection code
 * (frames, fragments, control frames, close codes, the echo's send
 * queue); ws_fuzz.h has the harness. */
#include "ws_fuzz.h"

static const char REQ[] = "GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Version: 13\r\n"
                          "Sec-WebSocket-Protocol: gamekit.1\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                          "\r\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wf_run((const uint8_t *)REQ, sizeof REQ - 1, data, size);
  return 0;
}
