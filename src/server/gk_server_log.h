/* gk_server_log.h: JSON-lines logging for gk-server.
 *
 * Every log record is one JSON object on one line:
 *
 *   {"time":"2026-11-30T05:34:47.123Z","level":"info","event":"listening",
 *    "room":null,"host":"127.0.0.1","port":7777}
 *
 * `time`, `level`, `event` and `room` come first, always; the event's own
 * fields follow in the order they were added. A record is built in a fixed
 * buffer owned by the gk_server_log (no allocation) and written with one
 * fwrite + fflush, so lines from one process never interleave. A record
 * whose fields would overflow the buffer is cut at the last whole field
 * and gets "truncated":true, so the line is always valid JSON.
 *
 * Usage:
 *   if (gk_log_begin(lg, GK_LOG_INFO, "room_created", code)) {
 *     gk_log_str(lg, "genre", name);
 *     gk_log_u64(lg, "players", n);
 *     gk_log_end(lg);
 *   }
 * gk_log_begin returns 0 (and the field calls and end do nothing) when the
 * level is below the logger's threshold. There is no global logger: the
 * server owns one, tests own theirs.
 */
#ifndef GK_SERVER_LOG_H
#define GK_SERVER_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum gk_log_level {
  GK_LOG_DEBUG = 0,
  GK_LOG_INFO = 1,
  GK_LOG_WARN = 2,
  GK_LOG_ERROR = 3
} gk_log_level;

#define GK_LOG_LINE_MAX 2048

typedef struct gk_server_log {
  FILE *out;          /* not owned; NULL discards every record */
  gk_log_level level; /* records below it are skipped */
  /* private */
  int active; /* a record is being built */
  int cut;    /* a field did not fit */
  size_t len;
  size_t mark; /* end of the last whole field */
  char line[GK_LOG_LINE_MAX];
} gk_server_log;

void gk_log_init(gk_server_log *lg, FILE *out, gk_log_level level);

/* "debug", "info", "warn", "error" -> 0 and *out; GK_EINVAL otherwise. */
int gk_log_level_parse(const char *name, gk_log_level *out);
const char *gk_log_level_name(gk_log_level level);

/* Starts a record; `room` may be NULL (written as null). Returns 1 if the
 * record will be written, 0 if the level is filtered out. */
int gk_log_begin(gk_server_log *lg, gk_log_level level, const char *event,
                 const char *room);
void gk_log_str(gk_server_log *lg, const char *key, const char *value);
void gk_log_u64(gk_server_log *lg, const char *key, uint64_t value);
void gk_log_i64(gk_server_log *lg, const char *key, int64_t value);
/* A 64-bit hash as a 16-digit lower-case hex string. */
void gk_log_hex(gk_server_log *lg, const char *key, uint64_t value);
void gk_log_bool(gk_server_log *lg, const char *key, int value);
/* A value that is already JSON text (an object, array, number...; NULL:
 * null), written as it is: the caller must give valid JSON, e.g. from
 * cJSON or gk_state_diff_json. */
void gk_log_json(gk_server_log *lg, const char *key, const char *json);
/* An error code: "<key>":"GK_EPROTO" and "<key>_text":"malformed message". */
void gk_log_err(gk_server_log *lg, const char *key, int code);
void gk_log_end(gk_server_log *lg);

/* One-call form for a record with a single string field (may be NULL). */
void gk_log_msg(gk_server_log *lg, gk_log_level level, const char *event,
                const char *room, const char *key, const char *value);

#endif
