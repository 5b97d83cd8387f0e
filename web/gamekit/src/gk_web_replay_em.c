/* gk_web_replay_em.c: gk_web_replay's calls as WebAssembly exports for
 * replay.js. As in gk_web_em.c, every u64 crosses as two u32 halves (lo,
 * hi arguments; out arrays of u32 the caller allocated).
 *
 * The header block's text is parsed by JavaScript: the reader calls
 * js_parse (gk_replay_parser), which calls Module.gkReplayHeader; that
 * JSON.parses the text and fills the gk_replay_fields through the
 * gk_webrx_field_* exports, so the reader judges the header exactly as
 * cJSON's (gk_replay_read.c). The config's leaves come back through
 * gk_webrx_kv_* (gk_config_kv.h, path "config"). */
#include <emscripten.h>
#include <string.h>

#include "gk_config_kv.h"
#include "gk_err.h"
#include "gk_web_replay_em.h"

#define EXPORT EMSCRIPTEN_KEEPALIVE

static uint64_t u64(uint32_t lo, uint32_t hi) {
  return (uint64_t)hi << 32 | lo;
}

static void put(uint32_t *out, uint64_t v) {
  out[0] = (uint32_t)v;
  out[1] = (uint32_t)(v >> 32);
}

/* clang-format off */
EM_JS(int, gk_web_js_replay_header, (gk_replay_fields *f, const char *text,
                                     size_t len), {
  return Module.gkReplayHeader(f, text, len);
})
/* clang-format on */

static int js_parse(void *ctx, gk_replay *r, const char *text, size_t len,
                    gk_replay_fields *f) {
  (void)ctx;
  (void)r;
  return gk_web_js_replay_header(f, text, len);
}

static const gk_replay_parser js_parser = {js_parse, NULL};

/* --- the header's fields, from JSON.parse ------------------------------ */

EXPORT void gk_webrx_field_have(gk_replay_fields *f, uint32_t bits) {
  f->have |= bits;
}

/* which: 0 format, 1 genre_version, 2 players, 3 input_size,
 * 4 step_seconds[0], 5 step_seconds[1], 6 input_delay, 7 lead. */
EXPORT void gk_webrx_field_u32(gk_replay_fields *f, uint32_t which,
                               uint32_t v) {
  uint32_t *slot[] = {
      &f->format,          &f->genre_version,   &f->players,     &f->input_size,
      &f->step_seconds[0], &f->step_seconds[1], &f->input_delay, &f->lead};
  if (which < sizeof slot / sizeof slot[0]) *slot[which] = v;
}

static void copy_cut(char *dst, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n > cap - 1) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

/* which: 0 genre, 1 seed (cut to the field's size, so longer fails). */
EXPORT void gk_webrx_field_text(gk_replay_fields *f, uint32_t which,
                                const char *s) {
  if (which == 0) copy_cut(f->genre, sizeof f->genre, s);
  if (which == 1) copy_cut(f->seed, sizeof f->seed, s);
}

EXPORT void gk_webrx_field_fail(gk_replay_fields *f, uint32_t at,
                                const char *what) {
  f->at = at;
  copy_cut(f->what, sizeof f->what, what);
}

/* --- the replay --------------------------------------------------------- */

EXPORT gk_web_replay *gk_webrx_new(void) {
  return gk_web_replay_new();
}

EXPORT void gk_webrx_free(gk_web_replay *w) {
  gk_web_replay_free(w);
}

EXPORT int gk_webrx_open(gk_web_replay *w, const uint8_t *bytes, uint32_t len) {
  return gk_web_replay_open(w, bytes, len, &js_parser);
}

/* out: header_ok, format, players, input_size, genre_version, step num,
 * step den, has_lockstep, input_delay, lead, complete, cut_short, damage
 * code, then steps, seed, final hash, damage offset, size (lo, hi each). */
EXPORT void gk_webrx_info(gk_web_replay *w, uint32_t *out) {
  const gk_replay *r = gk_web_replay_reader(w);
  uint32_t a[] = {(uint32_t)r->header_ok,
                  r->format,
                  r->players,
                  r->input_size,
                  r->genre_version,
                  r->step_seconds.num,
                  r->step_seconds.den,
                  (uint32_t)r->has_lockstep,
                  r->input_delay,
                  r->lead,
                  (uint32_t)r->complete,
                  (uint32_t)r->cut_short,
                  (uint32_t)r->damage.code};
  memcpy(out, a, sizeof a);
  put(out + 13, r->steps);
  put(out + 15, r->seed);
  put(out + 17, r->final_hash);
  put(out + 19, r->damage.offset);
  put(out + 21, r->size);
}

EXPORT const char *gk_webrx_genre(gk_web_replay *w) {
  return gk_web_replay_reader(w)->genre;
}

EXPORT const char *gk_webrx_damage(gk_web_replay *w) {
  return gk_web_replay_reader(w)->damage.what;
}

/* The recorded hash after step `step` (0-based) in out; 0 or GK_ERANGE. */
EXPORT int gk_webrx_step_hash(gk_web_replay *w, uint32_t lo, uint32_t hi,
                              uint32_t *out) {
  gk_replay_step s;
  int rc = gk_replay_step_at(gk_web_replay_reader(w), u64(lo, hi), &s, NULL);
  if (rc == 0) put(out, s.hash);
  return rc;
}

EXPORT int gk_webrx_prepare(gk_web_replay *w) {
  return gk_web_replay_prepare(w);
}

EXPORT int gk_webrx_kv_number(gk_web_replay *w, const char *key, double d,
                              char *err, uint32_t errlen) {
  return gk_config_apply_kv_number(gk_web_replay_sim(w), gk_web_replay_cfg(w),
                                   key, d, "config", err, errlen);
}

EXPORT int gk_webrx_kv_bool(gk_web_replay *w, const char *key, int b, char *err,
                            uint32_t errlen) {
  return gk_config_apply_kv_bool(gk_web_replay_sim(w), gk_web_replay_cfg(w),
                                 key, b, "config", err, errlen);
}

EXPORT int gk_webrx_kv_text(gk_web_replay *w, const char *key, const char *s,
                            char *err, uint32_t errlen) {
  return gk_config_apply_kv_text(gk_web_replay_sim(w), gk_web_replay_cfg(w),
                                 key, s, "config", err, errlen);
}

EXPORT void gk_webrx_refuse(gk_web_replay *w, int code, const char *what) {
  gk_web_replay_refuse(w, code, what);
}

EXPORT int gk_webrx_start(gk_web_replay *w, uint32_t every) {
  return gk_web_replay_start(w, every);
}

EXPORT int gk_webrx_run(gk_web_replay *w, uint32_t lo, uint32_t hi) {
  return gk_web_replay_run(w, u64(lo, hi));
}

EXPORT int gk_webrx_seek(gk_web_replay *w, uint32_t lo, uint32_t hi) {
  return gk_web_replay_seek(w, u64(lo, hi));
}

EXPORT int gk_webrx_scan(gk_web_replay *w, uint32_t steps) {
  return gk_web_replay_scan(w, steps);
}

/* out: position, verified, snapshot bytes (lo, hi each), snapshots,
 * (out[7] unused), scanned (lo, hi). */
EXPORT void gk_webrx_where(gk_web_replay *w, uint32_t *out) {
  uint64_t bytes = 0;
  uint32_t n = gk_web_replay_snapshots(w, &bytes);
  put(out, gk_web_replay_position(w));
  put(out + 2, gk_web_replay_verified(w));
  put(out + 4, bytes);
  out[6] = n;
  out[7] = 0;
  put(out + 8, gk_web_replay_scanned(w));
}

/* out: done, status, code, then steps_checked, step, expected, actual,
 * offset (lo, hi each). Returns the verdict's message. */
EXPORT const char *gk_webrx_verdict(gk_web_replay *w, uint32_t *out) {
  int done = 0;
  const gk_replay_verdict *v = gk_web_replay_verdict(w, &done);
  out[0] = (uint32_t)done;
  out[1] = (uint32_t)v->status;
  out[2] = (uint32_t)v->code;
  put(out + 3, v->steps_checked);
  put(out + 5, v->step);
  put(out + 7, v->expected);
  put(out + 9, v->actual);
  put(out + 11, v->offset);
  return v->message;
}

EXPORT const char *gk_webrx_err_name(int code) {
  return gk_err_name(code);
}

/* The map's address; its length in out[0]. */
EXPORT const uint8_t *gk_webrx_state(gk_web_replay *w, uint32_t sample,
                                     uint32_t *out) {
  uint32_t len = 0;
  const uint8_t *p = gk_web_replay_state(w, sample != 0, &len);
  out[0] = len;
  return p;
}

EXPORT const uint8_t *gk_webrx_state_of(gk_web_replay *w, const uint8_t *bytes,
                                        uint32_t len, uint32_t *out) {
  uint32_t n = 0;
  const uint8_t *p = gk_web_replay_state_of(w, bytes, len, &n);
  out[0] = n;
  return p;
}

EXPORT const char *gk_webrx_diff(gk_web_replay *w, const uint8_t *a,
                                 uint32_t alen, const uint8_t *b, uint32_t blen,
                                 uint32_t max) {
  return gk_web_replay_diff(w, a, alen, b, blen, max);
}

EXPORT const char *gk_webrx_error(gk_web_replay *w) {
  return gk_web_replay_error(w);
}
