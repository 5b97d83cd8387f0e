/* ws_handshake.c: fuzz target: arbitrary bytes as the upgrade request (and
 * whatever follows it) through the real listener: libmicrohttpd's parser,
 * then the handshake checks (path, method, Upgrade, Connection, key,
 * version, Origin, subprotocol) and, when they pass, the framing;
 * ws_fuzz.h has the harness. */
#define WF_HANDSHAKE_MS 30
#include "ws_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wf_run(NULL, 0, data, size);
  return 0;
}
