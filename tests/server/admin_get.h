/* admin_get.h: a GET from the admin listener of an in-process server
 * while the test's own uv loop runs it (test_link.c, test_ws_link.c). */
#ifndef GK_TESTS_ADMIN_GET_H
#define GK_TESTS_ADMIN_GET_H

#include <uv.h>

#include "gk_server_ops.h"
#include "gk_server_test.h"

/* GETs http://127.0.0.1:<admin port><path> from a thread (libcurl) while
 * `loop` runs; fails the test unless the answer is 200. Returns the body
 * (NUL-terminated; the caller frees it). */
char *admin_get(uv_loop_t *loop, gk_server *s, const char *path);

#endif
