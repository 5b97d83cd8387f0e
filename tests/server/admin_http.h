/* admin_http.h: a spawned gk-server with its admin listener (a bearer
 * token file, a free port), and libcurl requests to it: the shared part
 * of test_admin.c and test_admin_token.c. Every request is bounded (10 s). */
#ifndef GK_TESTS_ADMIN_HTTP_H
#define GK_TESTS_ADMIN_HTTP_H

#include <stdint.h>

#include "e2e.h"

#define ADMIN_TOKEN "test-token-0123456789abcdef"

typedef struct admin_srv {
  e2e_dir d;
  e2e_proc p;
  uint16_t udp, http;      /* the ENet port and the admin port */
  const char *admin_extra; /* more members of "admin", "k":v,... (NULL:
                              none); set before admin_srv_start */
} admin_srv;

/* Starts gk-server in s->d (made here unless the caller made it) at
 * `step_hz`, the admin listener on 127.0.0.1:0 with ADMIN_TOKEN in a token
 * file. `extra` (may be NULL) is more top-level members, "k":v,... */
void admin_srv_start(admin_srv *s, int step_hz, const char *extra);

/* One request; returns the HTTP status (0: no answer) and the body in
 * *out (NUL-terminated, the caller frees; `out` may be NULL). `token`
 * NULL: no Authorization header. A POST sends an empty body. */
long admin_http(const admin_srv *s, const char *method, const char *path,
                const char *token, char **out);

/* One request to any HTTP port of 127.0.0.1 (admin_http is this on the
 * admin port); `hdrs` (may be NULL) receives the answer's header lines,
 * NUL-terminated, the caller frees. A POST sends an empty body; `body`
 * (may be NULL) is sent as the request's body otherwise. */
long e2e_http(uint16_t port, const char *method, const char *path,
              const char *token, const char *body, char **out, char **hdrs);

/* GET `path` as JSON; fails the test unless 200 and JSON. The caller
 * deletes the result. */
cJSON *admin_get_json(const admin_srv *s, const char *path);

#endif
