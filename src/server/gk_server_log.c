/* gk_server_log.c: JSON-lines records built in a fixed buffer.
 *
 * Each field is appended whole or not at all: before a field is written
 * the current length is remembered, and if the field does not fit the
 * length goes back to that mark and the record is flagged as cut. String
 * values are escaped per RFC 8259 (quote, backslash, control characters as
 * \u00XX); bytes >= 0x80 are passed through, except that anything that is
 * not valid UTF-8 is replaced by '?' so the line stays valid JSON.
 */
#include "gk_server_log.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "gk_err.h"

#define TRUNC_MARK ",\"truncated\":true"
#define RESERVE (sizeof(TRUNC_MARK) - 1 + 2)

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void gk_log_init(gk_server_log *lg, FILE *out, gk_log_level level) {
  memset(lg, 0, sizeof(*lg));
  lg->out = out;
  lg->level = level;
}

int gk_log_level_parse(const char *name, gk_log_level *out) {
  for (int i = 0; i < 4; i++) {
    if (name && strcmp(name, level_names[i]) == 0) {
      *out = (gk_log_level)i;
      return 0;
    }
  }
  return GK_EINVAL;
}

const char *gk_log_level_name(gk_log_level level) {
  unsigned i = (unsigned)level;
  return i < 4 ? level_names[i] : "unknown";
}

static void put_raw(gk_server_log *lg, const char *s, size_t n) {
  /* keep room for the truncation marker, '}' and '\n' */
  if (lg->cut || lg->len + n + RESERVE > sizeof(lg->line)) {
    lg->cut = 1;
    return;
  }
  memcpy(lg->line + lg->len, s, n);
  lg->len += n;
}

static void put_cstr(gk_server_log *lg, const char *s) {
  put_raw(lg, s, strlen(s));
}

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  size_t n;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return n;
}

static void put_json_str(gk_server_log *lg, const char *s) {
  static const char hex[] = "0123456789abcdef";
  put_raw(lg, "\"", 1);
  const unsigned char *p = (const unsigned char *)s;
  while (*p && !lg->cut) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put_raw(lg, e, 2);
      p++;
    } else if (c < 0x20 || c == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      put_raw(lg, e, 6);
      p++;
    } else {
      size_t n = utf8_len(p);
      if (n == 0) {
        put_raw(lg, "?", 1);
        p++;
      } else {
        put_raw(lg, (const char *)p, n);
        p += n;
      }
    }
  }
  put_raw(lg, "\"", 1);
}

int gk_log_begin(gk_server_log *lg, gk_log_level level, const char *event,
                 const char *room) {
  lg->active = 0;
  if (!lg->out || level < lg->level) return 0;
  lg->active = 1;
  lg->cut = 0;
  lg->len = 0;

  struct timespec ts;
  struct tm tm;
  char tbuf[64];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  snprintf(tbuf, sizeof(tbuf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec, (long)(ts.tv_nsec / 1000000));
  put_cstr(lg, "{\"time\":\"");
  put_cstr(lg, tbuf);
  put_cstr(lg, "\",\"level\":\"");
  put_cstr(lg, gk_log_level_name(level));
  put_cstr(lg, "\",\"event\":");
  put_json_str(lg, event ? event : "");
  put_cstr(lg, ",\"room\":");
  if (room)
    put_json_str(lg, room);
  else
    put_cstr(lg, "null");
  lg->mark = lg->len;
  return 1;
}

/* Opens a field: `,"key":`. Returns 0 if no record is active or it was
 * already cut. */
static int field(gk_server_log *lg, const char *key) {
  if (!lg->active || lg->cut) return 0;
  lg->mark = lg->len;
  put_raw(lg, ",", 1);
  put_json_str(lg, key);
  put_raw(lg, ":", 1);
  return !lg->cut;
}

/* Closes a field: if it did not fit, the record ends at the previous one. */
static void field_done(gk_server_log *lg) {
  if (lg->cut)
    lg->len = lg->mark;
  else
    lg->mark = lg->len;
}

void gk_log_str(gk_server_log *lg, const char *key, const char *value) {
  if (!field(lg, key)) return;
  if (value)
    put_json_str(lg, value);
  else
    put_cstr(lg, "null");
  field_done(lg);
}

void gk_log_u64(gk_server_log *lg, const char *key, uint64_t value) {
  char b[32];
  if (!field(lg, key)) return;
  snprintf(b, sizeof(b), "%" PRIu64, value);
  put_cstr(lg, b);
  field_done(lg);
}

void gk_log_i64(gk_server_log *lg, const char *key, int64_t value) {
  char b[32];
  if (!field(lg, key)) return;
  snprintf(b, sizeof(b), "%" PRId64, value);
  put_cstr(lg, b);
  field_done(lg);
}

void gk_log_hex(gk_server_log *lg, const char *key, uint64_t value) {
  char b[32];
  if (!field(lg, key)) return;
  snprintf(b, sizeof(b), "\"%016" PRIx64 "\"", value);
  put_cstr(lg, b);
  field_done(lg);
}

void gk_log_bool(gk_server_log *lg, const char *key, int value) {
  if (!field(lg, key)) return;
  put_cstr(lg, value ? "true" : "false");
  field_done(lg);
}

void gk_log_json(gk_server_log *lg, const char *key, const char *json) {
  if (!field(lg, key)) return;
  put_cstr(lg, json ? json : "null");
  field_done(lg);
}

void gk_log_err(gk_server_log *lg, const char *key, int code) {
  char k[64];
  gk_log_str(lg, key, gk_err_name(code));
  snprintf(k, sizeof(k), "%s_text", key);
  gk_log_str(lg, k, gk_strerror(code));
}

void gk_log_end(gk_server_log *lg) {
  if (!lg->active) return;
  lg->active = 0;
  if (lg->cut) {
    /* put_raw always left RESERVE bytes free past the mark */
    lg->len = lg->mark;
    memcpy(lg->line + lg->len, TRUNC_MARK, sizeof(TRUNC_MARK) - 1);
    lg->len += sizeof(TRUNC_MARK) - 1;
  }
  lg->line[lg->len++] = '}';
  lg->line[lg->len++] = '\n';
  fwrite(lg->line, 1, lg->len, lg->out);
  fflush(lg->out);
}

void gk_log_msg(gk_server_log *lg, gk_log_level level, const char *event,
                const char *room, const char *key, const char *value) {
  if (!gk_log_begin(lg, level, event, room)) return;
  if (key) gk_log_str(lg, key, value);
  gk_log_end(lg);
}
