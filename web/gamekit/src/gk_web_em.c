/* gk_web_em.c: gk_web's calls as WebAssembly exports for gamekit.js.
 *
 * JavaScript has no 64-bit integer a wasm32 export can take without
 * BigInt legalisation, so every u64 crosses as two u32 halves: `lo`,
 * `hi` arguments in, and an `out` array of two u32 (lo, hi) the caller
 * allocated for results. Times are nanoseconds on the caller's monotonic
 * clock (gamekit.js: performance.now() turned into integer nanoseconds
 * once, at the edge; nothing inside is a float).
 *
 * The options hook calls back into JavaScript (Module.gkOptions), which
 * JSON.parses MATCH_START's options and calls gk_webx_kv_* for every leaf
 * (gk_config_kv.h): no JSON parser in C. */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_web_em.h"
#include "gk_web_internal.h"

#define EXPORT EMSCRIPTEN_KEEPALIVE

static uint64_t u64(uint32_t lo, uint32_t hi) {
  return (uint64_t)hi << 32 | lo;
}

static void put(uint32_t *out, uint64_t v) {
  if (out == NULL) return;
  out[0] = (uint32_t)v;
  out[1] = (uint32_t)(v >> 32);
}

/* clang-format off */
EM_JS(int, gk_web_js_options, (void *ctx, const gk_sim *sim, void *cfg,
                               const char *text, size_t len, char *err,
                               size_t errlen), {
  return Module.gkOptions(ctx, sim, cfg, text, len, err, errlen);
})
/* clang-format on */

static int js_options(void *ctx, const gk_sim *sim, void *cfg, const char *text,
                      size_t len, char *err, size_t errlen) {
  return gk_web_js_options(ctx, sim, cfg, text, len, err, errlen);
}

EXPORT gk_web *gk_webx_new(uint32_t mode, uint32_t seed_lo, uint32_t seed_hi) {
  gk_web *w = gk_web_create(mode, u64(seed_lo, seed_hi), js_options, NULL);
  if (w != NULL) w->opts_ctx = w;
  return w;
}

EXPORT void gk_webx_free(gk_web *w) {
  gk_web_free(w);
}

EXPORT int gk_webx_handle(gk_web *w, const uint8_t *bytes, uint32_t len,
                          uint32_t lo, uint32_t hi) {
  return gk_web_handle_at(w, u64(lo, hi), bytes, len);
}

EXPORT void gk_webx_timeout(gk_web *w, uint32_t lo, uint32_t hi,
                            uint32_t *out) {
  put(out, gk_web_timeout_at(w, u64(lo, hi)));
}

EXPORT void gk_webx_deadline(gk_web *w, uint32_t *out) {
  put(out, gk_web_deadline(w));
}

EXPORT int gk_webx_create_room(gk_web *w, uint32_t lo, uint32_t hi,
                               uint32_t max_players, uint32_t input_delay,
                               const char *genre, const char *options,
                               const uint8_t *token, uint32_t token_len) {
  return gk_web_create_room_at(w, u64(lo, hi), max_players, input_delay, genre,
                               options, token, token_len);
}

EXPORT int gk_webx_name(gk_web *w, uint32_t lo, uint32_t hi, const char *name) {
  return gk_web_name_at(w, u64(lo, hi), name);
}

EXPORT int gk_webx_next_room(gk_web *w, uint32_t lo, uint32_t hi,
                             const char *code) {
  return gk_web_next_room_at(w, u64(lo, hi), code);
}

EXPORT int gk_webx_quick_play(gk_web *w, uint32_t lo, uint32_t hi,
                              const char *code, uint32_t max_players,
                              uint32_t input_delay, const char *genre,
                              const char *options) {
  return gk_web_quick_play_at(w, u64(lo, hi), code, max_players, input_delay,
                              genre, options);
}

EXPORT int gk_webx_join(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                        uint32_t role, const uint8_t *token,
                        uint32_t token_len) {
  return gk_web_join_at(w, u64(lo, hi), code, role, token, token_len);
}

EXPORT int gk_webx_code_shown(const char *code, char *out) {
  return gk_web_code_shown(code, out);
}

EXPORT int gk_webx_spectate(gk_web *w, uint32_t lo, uint32_t hi,
                            const char *code, const uint8_t *token,
                            uint32_t token_len) {
  return gk_web_spectate_at(w, u64(lo, hi), code, token, token_len);
}

EXPORT int gk_webx_rejoin(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                          uint32_t slot, const uint8_t *secret,
                          const uint8_t *token, uint32_t token_len) {
  return gk_web_rejoin_at(w, u64(lo, hi), code, slot, secret, token, token_len);
}

EXPORT int gk_webx_start_match(gk_web *w, uint32_t lo, uint32_t hi) {
  return gk_web_start_match_at(w, u64(lo, hi));
}

EXPORT int gk_webx_end_match(gk_web *w, uint32_t lo, uint32_t hi,
                             uint32_t reason) {
  return gk_web_end_match_at(w, u64(lo, hi), reason);
}

EXPORT int gk_webx_remove_player(gk_web *w, uint32_t lo, uint32_t hi,
                                 uint32_t slot) {
  return gk_web_remove_player_at(w, u64(lo, hi), slot);
}

EXPORT void gk_webx_axes(gk_web *w, int32_t x, int32_t y) {
  gk_web_axes(w, x, y);
}

EXPORT void gk_webx_press(gk_web *w, uint32_t buttons) {
  gk_web_press(w, buttons);
}

EXPORT int gk_webx_perturb(gk_web *w, uint32_t lo, uint32_t hi,
                           const char *path, int32_t delta) {
  return gk_web_perturb(w, u64(lo, hi), path, delta);
}

/* 0 not yet, 1 done, or the perturbation's error code. */
EXPORT int gk_webx_perturbed(gk_web *w) {
  return w->perturb_rc;
}

/* The map's address; its length in out[0]. */
EXPORT const uint8_t *gk_webx_state(gk_web *w, uint32_t sample, uint32_t *out) {
  uint32_t len = 0;
  /* 0: the confirmed state, 1: its HUD sample, 2: the predicted head */
  const uint8_t *p = sample == 2 ? gk_web_head(w, &len)
                     : sample    ? gk_web_sample(w, &len)
                                 : gk_web_state(w, &len);
  if (out != NULL) out[0] = len;
  return p;
}

EXPORT const uint8_t *gk_webx_map_cols(gk_web *w, uint32_t head,
                                       const char *lists, uint32_t *out) {
  uint32_t len = 0;
  /* 0: the confirmed state, 2: the predicted head (as gk_webx_state) */
  const uint8_t *p = head == 2 ? gk_web_head_cols(w, lists, &len)
                               : gk_web_state_cols(w, lists, &len);
  if (out != NULL) out[0] = len;
  return p;
}

EXPORT const uint8_t *gk_webx_out(gk_web *w) {
  return gk_web_out(w);
}

EXPORT uint32_t gk_webx_out_len(gk_web *w) {
  return gk_web_out_len(w);
}

EXPORT void gk_webx_out_clear(gk_web *w) {
  gk_web_out_clear(w);
}

/* Stats for tests and the HUD: out[0..] = steps run, samples, waits,
 * packets in, packets out, dropped (malformed + unexpected), state
 * requests answered, snapshots adopted; each as lo, hi. */
EXPORT void gk_webx_stats(gk_web *w, uint32_t *out) {
  const gk_net_peer *p = &w->peer;
  uint64_t v[10] = {p->loop.steps,
                    p->stats.samples,
                    p->stats.waits,
                    p->stats.packets_in,
                    p->stats.packets_out,
                    p->stats.drop_malformed + p->stats.drop_unexpected,
                    p->stats.state_requests,
                    p->snapshots,
                    p->rtt_ns / 1000000u,
                    p->rtt_samples};
  for (int i = 0; i < 10; i++) put(out + 2 * i, v[i]);
}

EXPORT const char *gk_webx_strerror(int code) {
  return gk_strerror(code);
}

EXPORT int gk_webx_kv_number(const gk_sim *sim, void *cfg, const char *key,
                             double d, char *err, uint32_t errlen) {
  return gk_web_kv_number(sim, cfg, key, d, err, errlen);
}

EXPORT int gk_webx_kv_bool(const gk_sim *sim, void *cfg, const char *key, int b,
                           char *err, uint32_t errlen) {
  return gk_web_kv_bool(sim, cfg, key, b, err, errlen);
}

EXPORT int gk_webx_kv_text(const gk_sim *sim, void *cfg, const char *key,
                           const char *s, char *err, uint32_t errlen) {
  return gk_web_kv_text(sim, cfg, key, s, err, errlen);
}

/* A walk over a config object for kvLeaves (gamekit.js), judged node by
 * node as the cJSON walker judges it: gk_config_kv_node. The struct
 * starts with the node's dotted key, so the walk's address is the key's.
 * Free it with free. */
EXPORT gk_config_walk *gk_webx_walk_new(void) {
  return calloc(1, sizeof(gk_config_walk));
}

/* kind: the JSON type by JavaScript's name for it ("number", "boolean",
 * "string", "null", "object", "array"); part NULL for an array element. */
EXPORT int gk_webx_walk_node(gk_config_walk *w, uint32_t keylen,
                             const char *part, uint32_t index, const char *kind,
                             uint32_t children, int depth, const char *path,
                             char *err, uint32_t errlen) {
  static const char *const kinds[] = {"number", "boolean", "string",
                                      "null",   "object",  "array"};
  static const int node[] = {GK_CONFIG_NODE_NUMBER, GK_CONFIG_NODE_BOOL,
                             GK_CONFIG_NODE_STRING, GK_CONFIG_NODE_NULL,
                             GK_CONFIG_NODE_OBJECT, GK_CONFIG_NODE_ARRAY};
  int k = GK_CONFIG_NODE_NULL;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(kind, kinds[i]) == 0) k = node[i];
  return gk_config_kv_node(w, keylen, part, index, k, children, depth, path,
                           err, errlen);
}
