/* tests/tsan_cjson.c: makes cJSON's process-global parse state visible to
 * ThreadSanitizer. Linked into every program of a -Db_sanitize=thread
 * build only (meson.build wraps cjson_dep; scripts/tsan.sh).
 *
 * cJSON writes a process-global error position (global_error) on every
 * parse, so two parses on two threads at once race: the reason for the
 * rule "no cJSON call runs off the loop thread". Debian's libcjson is not
 * instrumented, so TSan cannot see that write. These wrappers (the linker
 * sends every call of the project's code to them: --wrap in meson.build)
 * do the same thing cJSON does, a plain write to one global, in
 * instrumented code, and then call the real function: two parses on two
 * threads with no order between them are reported as a data race on
 * `parse_state`, with both stacks, exactly where cJSON's own race is.
 * cJSON_GetErrorPtr reads it, as cJSON's does.
 */
#include <stddef.h>

#include <cjson/cJSON.h>

cJSON *__real_cJSON_Parse(const char *value);
cJSON *__real_cJSON_ParseWithLength(const char *value, size_t len);
cJSON *__real_cJSON_ParseWithOpts(const char *value, const char **end,
                                  cJSON_bool null_terminated);
cJSON *__real_cJSON_ParseWithLengthOpts(const char *value, size_t len,
                                        const char **end,
                                        cJSON_bool null_terminated);
const char *__real_cJSON_GetErrorPtr(void);
cJSON *__wrap_cJSON_Parse(const char *value);
cJSON *__wrap_cJSON_ParseWithLength(const char *value, size_t len);
cJSON *__wrap_cJSON_ParseWithOpts(const char *value, const char **end,
                                  cJSON_bool null_terminated);
cJSON *__wrap_cJSON_ParseWithLengthOpts(const char *value, size_t len,
                                        const char **end,
                                        cJSON_bool null_terminated);
const char *__wrap_cJSON_GetErrorPtr(void);

/* cJSON's global_error, as TSan should see it: written by every parse. */
static const char *parse_state;

cJSON *__wrap_cJSON_Parse(const char *value) {
  parse_state = value;
  return __real_cJSON_Parse(value);
}

cJSON *__wrap_cJSON_ParseWithLength(const char *value, size_t len) {
  parse_state = value;
  return __real_cJSON_ParseWithLength(value, len);
}

cJSON *__wrap_cJSON_ParseWithOpts(const char *value, const char **end,
                                  cJSON_bool null_terminated) {
  parse_state = value;
  return __real_cJSON_ParseWithOpts(value, end, null_terminated);
}

cJSON *__wrap_cJSON_ParseWithLengthOpts(const char *value, size_t len,
                                        const char **end,
                                        cJSON_bool null_terminated) {
  parse_state = value;
  return __real_cJSON_ParseWithLengthOpts(value, len, end, null_terminated);
}

const char *__wrap_cJSON_GetErrorPtr(void) {
  (void)parse_state; /* a read of the same global, as cJSON's */
  const char *volatile seen = parse_state;
  (void)seen;
  return __real_cJSON_GetErrorPtr();
}
