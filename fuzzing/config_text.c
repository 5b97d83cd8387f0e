/* config_text.c: fuzz target for src/config's text entry point, the path
 * every peer's MATCH_START options and every CREATE_ROOM's options take.
 *
 * The first byte picks a genre of this build (gk_genres); the rest is the
 * options text, applied over that genre's defaults with
 * gk_config_apply_text. Whatever the bytes, it must return 0 or a code with
 * a non-empty, NUL-terminated message; an accepted config must write back
 * out (gk_config_to_json) and read in again to the same keys and values,
 * and must free cleanly. Any crash, hang, leak, sanitizer report or abort
 * is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_genres.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void release(const gk_sim *sim, void *cfg) {
  if (sim->config_free != NULL) sim->config_free(cfg);
  free(cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t ngenres = 0;
  while (gk_genres[ngenres] != NULL) ngenres++;
  if (size < 1 || ngenres == 0) return 0;
  const gk_sim *sim = gk_genres[data[0] % ngenres];
  void *cfg = calloc(1, sim->config_size ? sim->config_size : 1);
  if (cfg == NULL) return 0;
  sim->config_default(cfg);
  char err[GK_ERRMSG_MAX];
  err[0] = '\0';
  int rc = gk_config_apply_text(sim, cfg, (const char *)data + 1, size - 1,
                                "options", err, sizeof err);
  if (rc > 0 ||
      (rc != 0 && (err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL)))
    abort();
  if (rc == 0) {
    /* round trip: out, in, and out again to the same text */
    cJSON *out = gk_config_to_json(sim, cfg);
    void *back = calloc(1, sim->config_size ? sim->config_size : 1);
    if (out != NULL && back != NULL) {
      if (gk_config_from_json(sim, back, out, err, sizeof err) != 0) abort();
      cJSON *again = gk_config_to_json(sim, back);
      if (again == NULL || !cJSON_Compare(out, again, 1)) abort();
      cJSON_Delete(again);
    }
    cJSON_Delete(out);
    if (back != NULL) release(sim, back);
  }
  release(sim, cfg);
  return 0;
}
