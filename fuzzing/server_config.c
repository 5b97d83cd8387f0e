/* server_config.c: fuzz target for gk-server's config reader.
 *
 * Parses the input as a server config (strict JSON: unknown keys, wrong
 * types, ranges, duplicates, genre options through the genres' own
 * config_set). Whatever the bytes, the reader must return 0 or a code with
 * a non-empty, NUL-terminated message, and leave a config that frees
 * cleanly. When the config is valid, every enabled genre's room config is
 * built from its options, as a room would, with the input's tail as the
 * client's options. Any crash, hang, leak or sanitizer report is a
 * finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_server_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gk_server_config c;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_config_parse(&c, (const char *)data, size, "fuzz.json",
                                  err, sizeof(err));
  if (rc != 0 && (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL))
    abort();
  if (rc == 0) {
    size_t tail = size > 64 ? 64 : size;
    for (uint32_t i = 0; i < c.ngenres; i++) {
      const gk_server_genre *g = &c.genres[i];
      if (!g->enabled) continue;
      void *cfg = calloc(1, g->sim->config_size ? g->sim->config_size : 1);
      if (!cfg) break;
      if (gk_server_room_config(g, cfg, NULL, 0, err, sizeof(err)) == 0 &&
          g->sim->config_free)
        g->sim->config_free(cfg);
      if (gk_server_room_config(g, cfg, (const char *)data + size - tail, tail,
                                err, sizeof(err)) == 0 &&
          g->sim->config_free)
        g->sim->config_free(cfg);
      free(cfg);
    }
  }
  gk_server_config_free(&c);
  return 0;
}
