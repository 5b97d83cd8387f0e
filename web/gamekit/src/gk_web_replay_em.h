/* gk_web_replay_em.h: the WebAssembly exports replay.js calls
 * (gk_web_replay_em.c). Every u64 is two u32 halves: (lo, hi) arguments,
 * out[i], out[i + 1] results. The calls mirror gk_web_replay.h's. */
#ifndef GK_WEB_REPLAY_EM_H
#define GK_WEB_REPLAY_EM_H

#include <stdint.h>

#include "gk_web_replay.h"

EMSCRIPTEN_KEEPALIVE static uint64_t u64(uint32_t lo, uint32_t hi);
void gk_webrx_field_have(gk_replay_fields *f, uint32_t bits);
void gk_webrx_field_u32(gk_replay_fields *f, uint32_t which, uint32_t v);
void gk_webrx_field_text(gk_replay_fields *f, uint32_t which, const char *s);
void gk_webrx_field_fail(gk_replay_fields *f, uint32_t at, const char *what);
gk_web_replay *gk_webrx_new(void);
void gk_webrx_free(gk_web_replay *w);
int gk_webrx_open(gk_web_replay *w, const uint8_t *bytes, uint32_t len);
void gk_webrx_info(gk_web_replay *w, uint32_t *out);
const char *gk_webrx_genre(gk_web_replay *w);
const char *gk_webrx_damage(gk_web_replay *w);
int gk_webrx_step_hash(gk_web_replay *w, uint32_t lo, uint32_t hi,
                       uint32_t *out);
int gk_webrx_prepare(gk_web_replay *w);
int gk_webrx_kv_number(gk_web_replay *w, const char *key, double d, char *err,
                       uint32_t errlen);
int gk_webrx_kv_bool(gk_web_replay *w, const char *key, int b, char *err,
                     uint32_t errlen);
int gk_webrx_kv_text(gk_web_replay *w, const char *key, const char *s,
                     char *err, uint32_t errlen);
void gk_webrx_refuse(gk_web_replay *w, int code, const char *what);
int gk_webrx_start(gk_web_replay *w, uint32_t every);
int gk_webrx_run(gk_web_replay *w, uint32_t lo, uint32_t hi);
int gk_webrx_seek(gk_web_replay *w, uint32_t lo, uint32_t hi);
int gk_webrx_scan(gk_web_replay *w, uint32_t steps);
void gk_webrx_where(gk_web_replay *w, uint32_t *out);
const char *gk_webrx_verdict(gk_web_replay *w, uint32_t *out);
const char *gk_webrx_err_name(int code);
const uint8_t *gk_webrx_state(gk_web_replay *w, uint32_t sample, uint32_t *out);
const uint8_t *gk_webrx_state_of(gk_web_replay *w, const uint8_t *bytes,
                                 uint32_t len, uint32_t *out);
const char *gk_webrx_diff(gk_web_replay *w, const uint8_t *a, uint32_t alen,
                          const uint8_t *b, uint32_t blen, uint32_t max);
const char *gk_webrx_error(gk_web_replay *w);

#endif
