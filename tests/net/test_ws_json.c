/* test_ws_json.c: the WebSocket listener's JSON paths (gk_net_ws.h,
 * callbacks.json_get) on a uv loop in the test, on 127.0.0.1, with raw
 * HTTP requests: the caller's body answered 200 with its headers, HEAD,
 * 405 without the body being asked for, 400 for a request body and for
 * too many query arguments, the caller's own 400 and 500, %-decoded
 * paths and arguments, other paths left to the 404 and the WebSocket
 * path still upgrading; each answer counted. Every wait is bounded
 * (ws_raw.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_ws.h"
#include "ws_raw.h"

TestSuite(ws_json, .timeout = 60);

static raw R1;

/* What the callback saw last. */
static struct {
  int asked, probed; /* calls with a body pointer, and without */
  size_t n_args;
  char args[256]; /* "k=v&k&..." as given */
} seen;

static char *dup_text(const char *t) {
  char *p = malloc(strlen(t) + 1);
  cr_assert_not_null(p);
  return strcpy(p, t);
}

/* Serves /data: ?x=V answers {"x":"V"}; ?fail the caller's own 400,
 * ?bare a 400 without a body, ?nomem GK_ENOMEM. */
static int json_get(void *ctx, gk_net_ws *w, const char *path,
                    const gk_net_ws_arg *args, size_t n_args, char **body) {
  (void)w;
  cr_assert_eq(ctx, S);
  if (strcmp(path, "/data") != 0) return GK_ENOTFOUND;
  if (!body) {
    seen.probed++;
    return 0;
  }
  seen.asked++;
  seen.n_args = n_args;
  seen.args[0] = '\0';
  for (size_t i = 0; i < n_args; i++) {
    size_t at = strlen(seen.args);
    snprintf(seen.args + at, sizeof seen.args - at, "%s%s%s%s", i ? "&" : "",
             args[i].key, args[i].value ? "=" : "",
             args[i].value ? args[i].value : "");
  }
  const char *k = n_args ? args[0].key : "";
  if (strcmp(k, "fail") == 0) {
    *body = dup_text("{\"error\":\"the caller says no\"}\n");
    return GK_EINVAL;
  }
  if (strcmp(k, "bare") == 0) return GK_EINVAL;
  if (strcmp(k, "nomem") == 0) return GK_ENOMEM;
  char text[128];
  snprintf(text, sizeof text, "{\"x\":\"%s\"}\n",
           n_args && args[0].value ? args[0].value : "");
  *body = dup_text(text);
  return 0;
}

/* One request (the listener closes after it); the answer's status, its
 * whole text in R1.buf (NUL-terminated). */
static int request(const char *method, const char *target, const char *extra) {
  char req[1024];
  snprintf(req, sizeof req,
           "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n",
           method, target, extra ? extra : "");
  raw_connect(&R1, 0);
  raw_write(&R1, req, strlen(req));
  raw_fill(&R1, sizeof R1.buf - 1, 3000); /* to EOF */
  cr_assert(R1.eof, "%s %s: no end of the answer", method, target);
  R1.buf[R1.len] = '\0';
  int status = 0;
  sscanf((const char *)R1.buf, "HTTP/1.1 %d", &status);
  raw_close(&R1);
  return status;
}

static const char *answer_body(void) {
  const char *b = strstr((const char *)R1.buf, "\r\n\r\n");
  return b ? b + 4 : "";
}

static int has_header(const char *line) {
  return strstr((const char *)R1.buf, line) != NULL;
}

Test(ws_json, the_callers_paths_are_answered_with_its_json_and_counted) {
  memset(&seen, 0, sizeof seen);
  gk_net_ws_options o = ws_test_options();
  ws_srv_start_json(&o, json_get);
  const gk_net_ws_stats *st = &S->w.stats;
  cr_assert_eq(request("GET", "/data?x=1", NULL), 200, "%s", R1.buf);
  cr_assert_str_eq(answer_body(), "{\"x\":\"1\"}\n");
  cr_assert(has_header("Content-Type: application/json\r\n"), "%s", R1.buf);
  cr_assert(has_header("Cache-Control: no-store\r\n"), "%s", R1.buf);
  cr_assert(has_header("X-Content-Type-Options: nosniff\r\n"), "%s", R1.buf);
  cr_assert_eq(st->api_ok, 1);
  /* %-decoded path and arguments; a key without '=' has no value */
  cr_assert_eq(request("GET", "/d%61ta?x=%41%20b&k", NULL), 200);
  cr_assert_str_eq(answer_body(), "{\"x\":\"A b\"}\n");
  cr_assert_eq(seen.n_args, 2);
  cr_assert_str_eq(seen.args, "x=A b&k");
  /* HEAD: the headers, no body */
  cr_assert_eq(request("HEAD", "/data?x=1", NULL), 200);
  cr_assert_str_eq(answer_body(), "");
  cr_assert(has_header("Cache-Control: no-store\r\n"));
  cr_assert_eq(st->api_ok, 3);
  /* another method: 405, and the body is never asked for */
  int asked = seen.asked;
  cr_assert_eq(request("POST", "/data", "Content-Length: 0\r\n"), 405);
  cr_assert(has_header("Allow: GET, HEAD\r\n"), "%s", R1.buf);
  cr_assert(has_header("Cache-Control: no-store\r\n"));
  cr_assert_eq(request("DELETE", "/data", NULL), 405);
  cr_assert_eq(seen.asked, asked, "the body was made for a 405");
  cr_assert_eq(st->http_method, 2);
  ws_srv_stop();
}

Test(ws_json, bad_requests_and_the_callers_refusals_get_400_or_500) {
  memset(&seen, 0, sizeof seen);
  gk_net_ws_options o = ws_test_options();
  ws_srv_start_json(&o, json_get);
  const gk_net_ws_stats *st = &S->w.stats;
  int asked = seen.asked;
  cr_assert_eq(request("GET", "/data", "Content-Length: 3\r\n\r\nabc"), 400);
  cr_assert(strstr(answer_body(), "a request body is not read here"), "%s",
            R1.buf);
  cr_assert_eq(request("GET", "/data?a&b&c&d&e&f&g&h&i", NULL), 400);
  cr_assert(strstr(answer_body(), "too many query arguments"), "%s", R1.buf);
  cr_assert_eq(seen.asked, asked, "asked despite a body or 9 arguments");
  cr_assert_eq(request("GET", "/data?a&b&c&d&e&f&g&h", NULL), 200);
  cr_assert_eq(seen.n_args, GK_NET_WS_ARGS_MAX);
  cr_assert_eq(request("GET", "/data?fail", NULL), 400);
  cr_assert_str_eq(answer_body(), "{\"error\":\"the caller says no\"}\n");
  cr_assert(has_header("Content-Type: application/json\r\n"));
  cr_assert_eq(request("GET", "/data?bare", NULL), 400);
  cr_assert_str_eq(answer_body(), "{\"error\":\"bad query\"}\n");
  cr_assert_eq(request("GET", "/data?nomem", NULL), 500);
  cr_assert_str_eq(answer_body(),
                   "{\"error\":\"the server could not answer\"}\n");
  cr_assert_eq(st->api_bad, 4);
  cr_assert_eq(st->api_err, 1);
  cr_assert_eq(st->api_ok, 1);
  ws_srv_stop();
}

Test(ws_json, other_paths_stay_404_and_the_websocket_path_upgrades) {
  memset(&seen, 0, sizeof seen);
  gk_net_ws_options o = ws_test_options();
  ws_srv_start_json(&o, json_get);
  const gk_net_ws_stats *st = &S->w.stats;
  cr_assert_eq(request("GET", "/data/", NULL), 404);
  cr_assert_eq(request("GET", "/datax?x=1", NULL), 404);
  cr_assert_eq(st->hs_path, 2);
  cr_assert_eq(st->api_ok + st->api_bad + st->api_err, 0);
  int probed = seen.probed;
  raw_open(&R1); /* the WebSocket path is never the caller's */
  cr_assert_eq(seen.probed, probed);
  raw_echo_ok(&R1, 7);
  raw_close(&R1);
  ws_srv_stop();
}
