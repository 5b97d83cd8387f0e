/* gk_replay_header.c: the header block through cJSON (see gk_replay.h):
 * gk_replay_open_bytes and gk_replay_open_file parse the header's text
 * with cJSON into a gk_replay_fields, which the reader (gk_replay_read.c)
 * judges exactly as it judges another parser's (the browser's). The
 * parsed header stays in r->header (r->config, r->origin point into it).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_replay.h"
#include "gk_replay_internal.h"

/* An integral number member in 0..UINT32_MAX (NULL key: `it` itself). */
static int u32_of(const cJSON *it, uint32_t *out) {
  if (!cJSON_IsNumber(it)) return 0;
  double d = it->valuedouble;
  if (!(d >= 0 && d <= UINT32_MAX) || (double)(uint32_t)d != d) return 0;
  *out = (uint32_t)d;
  return 1;
}

static uint32_t member_u32(const cJSON *h, const char *key, uint32_t bit,
                           uint32_t *out) {
  return u32_of(cJSON_GetObjectItemCaseSensitive(h, key), out) ? bit : 0;
}

static void copy_text(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n > cap - 1) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void read_fields(gk_replay *r, const cJSON *h, gk_replay_fields *f) {
  f->have |= member_u32(h, "format", GK_REPLAY_HAVE_FORMAT, &f->format);
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(h, "genre");
  if (cJSON_IsString(g) && g->valuestring != NULL) {
    f->have |= GK_REPLAY_HAVE_GENRE;
    copy_text(f->genre, sizeof f->genre, g->valuestring);
  }
  f->have |= member_u32(h, "genre_version", GK_REPLAY_HAVE_GENRE_VERSION,
                        &f->genre_version);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(h, "seed");
  if (cJSON_IsString(s) && s->valuestring != NULL) {
    f->have |= GK_REPLAY_HAVE_SEED;
    copy_text(f->seed, sizeof f->seed, s->valuestring);
  }
  f->have |= member_u32(h, "players", GK_REPLAY_HAVE_PLAYERS, &f->players);
  f->have |=
      member_u32(h, "input_size", GK_REPLAY_HAVE_INPUT_SIZE, &f->input_size);
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(h, "step_seconds");
  if (cJSON_IsArray(ss) && cJSON_GetArraySize(ss) == 2) {
    f->have |= GK_REPLAY_HAVE_STEP_SECONDS;
    for (int i = 0; i < 2; i++)
      if (!u32_of(cJSON_GetArrayItem(ss, i), &f->step_seconds[i]))
        f->step_seconds[i] = 0;
  }
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(h, "config");
  if (cJSON_IsObject(c)) {
    f->have |= GK_REPLAY_HAVE_CONFIG;
    r->config = c;
  }
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(h, "origin");
  if (o != NULL) f->have |= GK_REPLAY_HAVE_ORIGIN;
  if (cJSON_IsString(o)) {
    f->have |= GK_REPLAY_ORIGIN_TEXT;
    r->origin = o->valuestring;
  }
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, "lockstep");
  if (l != NULL) f->have |= GK_REPLAY_HAVE_LOCKSTEP;
  if (cJSON_IsObject(l) &&
      member_u32(l, "input_delay", 1, &f->input_delay) != 0 &&
      member_u32(l, "lead", 1, &f->lead) != 0)
    f->have |= GK_REPLAY_LOCKSTEP_OK;
}

static void header_delete(cJSON *h) {
  cJSON_Delete(h);
}

static int fail(gk_replay_fields *f, uint64_t at, const char *what) {
  f->at = at;
  snprintf(f->what, sizeof f->what, "%s", what);
  return GK_EPARSE;
}

static int cjson_parse(void *ctx, gk_replay *r, const char *text, size_t len,
                       gk_replay_fields *f) {
  (void)ctx;
  const char *end = NULL;
  cJSON *h = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (h == NULL) {
    const char *at = cJSON_GetErrorPtr();
    uint64_t off = 0;
    if (at != NULL && at >= text && at <= text + len)
      off = (uint64_t)(at - text);
    return fail(f, off, "expected header JSON, parse error");
  }
  r->header = h;
  r->header_free = header_delete;
  while (end != NULL && end < text + len &&
         (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
    end++;
  if (end != text + len)
    return fail(f, end != NULL ? (uint64_t)(end - text) : 0,
                "expected the end of the header JSON");
  if (!cJSON_IsObject(h)) return fail(f, 0, "expected a header JSON object");
  read_fields(r, h, f);
  return 0;
}

static const gk_replay_parser cjson_parser = {cjson_parse, NULL};

const gk_replay_parser *gk_replay_cjson_parser(void) {
  return &cjson_parser;
}

int gk_replay_open_bytes(gk_replay *r, const void *bytes, size_t len) {
  return gk_replay_open_bytes_with(r, bytes, len, &cjson_parser);
}

int gk_replay_open_file(gk_replay *r, const char *path) {
  return gk__replay_open_file_with(r, path, &cjson_parser);
}
