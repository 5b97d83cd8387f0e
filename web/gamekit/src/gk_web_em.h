/* gk_web_em.h: the WebAssembly exports gamekit.js calls (gk_web_em.c).
 * Every u64 is two u32 halves: (lo, hi) arguments, out[0], out[1] results.
 * The calls mirror gk_web.h's; gk_webx_new's mode is GK_WEB_INPUT_*. */
#ifndef GK_WEB_EM_H
#define GK_WEB_EM_H

#include <stdint.h>

#include "gk_config_kv.h"
#include "gk_web.h"

gk_web *gk_webx_new(uint32_t mode, uint32_t seed_lo, uint32_t seed_hi);
void gk_webx_free(gk_web *w);
int gk_webx_handle(gk_web *w, const uint8_t *bytes, uint32_t len, uint32_t lo,
                   uint32_t hi);
void gk_webx_timeout(gk_web *w, uint32_t lo, uint32_t hi, uint32_t *out);
void gk_webx_deadline(gk_web *w, uint32_t *out);
int gk_webx_create_room(gk_web *w, uint32_t lo, uint32_t hi,
                        uint32_t max_players, uint32_t input_delay,
                        const char *genre, const char *options,
                        const uint8_t *token, uint32_t token_len);
int gk_webx_name(gk_web *w, uint32_t lo, uint32_t hi, const char *name);
int gk_webx_next_room(gk_web *w, uint32_t lo, uint32_t hi, const char *code);
int gk_webx_quick_play(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                       uint32_t max_players, uint32_t input_delay,
                       const char *genre, const char *options);
int gk_webx_join(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                 uint32_t role, const uint8_t *token, uint32_t token_len);
/* gk_web_code_shown; out holds GK_WIRE_CODE_LEN + 1 bytes. */
int gk_webx_code_shown(const char *code, char *out);
int gk_webx_spectate(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                     const uint8_t *token, uint32_t token_len);
int gk_webx_rejoin(gk_web *w, uint32_t lo, uint32_t hi, const char *code,
                   uint32_t slot, const uint8_t *secret, const uint8_t *token,
                   uint32_t token_len);
int gk_webx_start_match(gk_web *w, uint32_t lo, uint32_t hi);
int gk_webx_end_match(gk_web *w, uint32_t lo, uint32_t hi, uint32_t reason);
int gk_webx_remove_player(gk_web *w, uint32_t lo, uint32_t hi, uint32_t slot);
void gk_webx_axes(gk_web *w, int32_t x, int32_t y);
void gk_webx_press(gk_web *w, uint32_t buttons);
int gk_webx_perturb(gk_web *w, uint32_t lo, uint32_t hi, const char *path,
                    int32_t delta);
int gk_webx_perturbed(gk_web *w);
const uint8_t *gk_webx_state(gk_web *w, uint32_t sample, uint32_t *out);
const uint8_t *gk_webx_map_cols(gk_web *w, uint32_t head, const char *lists,
                                uint32_t *out);
const uint8_t *gk_webx_out(gk_web *w);
uint32_t gk_webx_out_len(gk_web *w);
void gk_webx_out_clear(gk_web *w);
void gk_webx_stats(gk_web *w, uint32_t *out);
const char *gk_webx_strerror(int code);
int gk_webx_kv_number(const gk_sim *sim, void *cfg, const char *key, double d,
                      char *err, uint32_t errlen);
int gk_webx_kv_bool(const gk_sim *sim, void *cfg, const char *key, int b,
                    char *err, uint32_t errlen);
int gk_webx_kv_text(const gk_sim *sim, void *cfg, const char *key,
                    const char *s, char *err, uint32_t errlen);

gk_config_walk *gk_webx_walk_new(void);
int gk_webx_walk_node(gk_config_walk *w, uint32_t keylen, const char *part,
                      uint32_t index, const char *kind, uint32_t children,
                      int depth, const char *path, char *err, uint32_t errlen);

#endif
