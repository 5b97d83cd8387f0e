/* gk_net_ws_json.c: JSON paths beside the WebSocket path (the caller's
 * callbacks.json_get; gk_net_ws.h says what is answered).
 *
 * The caller names the paths it serves and makes each answer's body; the
 * HTTP is done here, in order, each with its status and counter:
 *   -    a path the caller does not serve: the static files (or 404)
 *   405  not GET or HEAD (Allow: GET, HEAD)                  http_method
 *   400  a body (gk__ws_has_body), more than GK_NET_WS_ARGS_MAX query
 *        arguments                                          api_bad
 *   400  the caller refused the query (GK_EINVAL)           api_bad
 *   500  the caller failed otherwise (out of memory)        api_err
 *   200  the caller's JSON                                  api_ok
 * Every answer has Cache-Control: no-store (the data is live: a browser
 * must ask again, not revalidate) and X-Content-Type-Options: nosniff;
 * a body the caller made is application/json, this file's own reasons
 * are JSON too ({"error": "..."}), so a page reads every answer alike.
 * HEAD is libmicrohttpd's: the same headers, no body.
 */
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "gk_err.h"
#include "gk_net_ws_internal.h"

typedef struct args {
  gk_net_ws_arg a[GK_NET_WS_ARGS_MAX];
  size_t n;
  int over; /* more than GK_NET_WS_ARGS_MAX */
} args;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind,
                              const char *key, const char *value) {
  args *q = cls;
  (void)kind;
  if (q->n == GK_NET_WS_ARGS_MAX) {
    q->over = 1;
    return MHD_NO;
  }
  q->a[q->n].key = key;
  q->a[q->n].value = value;
  q->n++;
  return MHD_YES;
}

/* Answers `status` with `body`: malloc'd (freed here, whatever happens)
 * or, with mine set, a constant of this file. */
static enum MHD_Result answer(struct MHD_Connection *mc, unsigned status,
                              char *body, int mine, uint64_t *counter) {
  (*counter)++;
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(body), body,
      mine ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
  if (r == NULL) {
    if (!mine) free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", "application/json");
  MHD_add_response_header(r, "Cache-Control", "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, "Allow", "GET, HEAD");
  enum MHD_Result rc = MHD_queue_response(mc, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result say(struct MHD_Connection *mc, unsigned status,
                           const char *json, uint64_t *counter) {
  return answer(mc, status, (char *)json, 1, counter);
}

int gk__ws_json(gk_net_ws *w, struct MHD_Connection *mc, const char *url,
                const char *method) {
  gk_net_ws_stats *s = &w->stats;
  void *ctx = w->cb.ctx;
  if (w->cb.json_get(ctx, w, url, NULL, 0, NULL) != 0) return -1;
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return say(mc, MHD_HTTP_METHOD_NOT_ALLOWED,
               "{\"error\":\"use GET or HEAD\"}\n", &s->http_method);
  if (gk__ws_has_body(mc))
    return say(mc, MHD_HTTP_BAD_REQUEST,
               "{\"error\":\"a request body is not read here\"}\n",
               &s->api_bad);
  args q;
  memset(&q, 0, sizeof q);
  MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, on_arg, &q);
  if (q.over)
    return say(mc, MHD_HTTP_BAD_REQUEST,
               "{\"error\":\"too many query arguments\"}\n", &s->api_bad);
  char *body = NULL;
  int rc = w->cb.json_get(ctx, w, url, q.a, q.n, &body);
  if (rc == 0 && body != NULL)
    return answer(mc, MHD_HTTP_OK, body, 0, &s->api_ok);
  if (rc == GK_EINVAL && body != NULL)
    return answer(mc, MHD_HTTP_BAD_REQUEST, body, 0, &s->api_bad);
  free(body);
  if (rc == GK_EINVAL)
    return say(mc, MHD_HTTP_BAD_REQUEST, "{\"error\":\"bad query\"}\n",
               &s->api_bad);
  return say(mc, MHD_HTTP_INTERNAL_SERVER_ERROR,
             "{\"error\":\"the server could not answer\"}\n", &s->api_err);
}
