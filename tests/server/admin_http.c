/* admin_http.c: see admin_http.h. */
#include "admin_http.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void admin_srv_start(admin_srv *s, int step_hz, const char *extra) {
  if (!s->d.path[0]) e2e_dir_make(&s->d);
  char tok[512], json[2048], path[512];
  e2e_write(&s->d, "token", ADMIN_TOKEN "\n", tok, sizeof(tok));
  snprintf(json, sizeof(json),
           "{\"listen\":{\"host\":\"127.0.0.1\",\"port\":0},"
           "\"step_hz\":%d,\"replays\":{\"dir\":\"%s\"},"
           "\"shutdown_grace_ms\":5000,"
           "\"admin\":{\"enabled\":true,\"listen\":\"127.0.0.1:0\","
           "\"token_file\":\"%s\",\"request_ms\":2000,\"headers\":32%s%s}%s%s}",
           step_hz, s->d.replays, tok, s->admin_extra ? "," : "",
           s->admin_extra ? s->admin_extra : "", extra ? "," : "",
           extra ? extra : "");
  e2e_write(&s->d, "server.json", json, path, sizeof(path));
  char *argv[] = {(char *)GK_SERVER_BIN, (char *)"--config", path, NULL};
  e2e_spawn(&s->p, &s->d, "server", argv);
  s->udp = e2e_server_port(&s->p, 10000);
  cr_assert_neq(s->udp, 0, "the server did not start");
  cJSON *l = e2e_last_event(&s->p, "admin_listening");
  cr_assert_not_null(l, "no admin_listening line");
  s->http = (uint16_t)cJSON_GetObjectItem(l, "port")->valuedouble;
  cJSON_Delete(l);
}

typedef struct body {
  char *b;
  size_t n;
} body;

static size_t on_data(char *p, size_t sz, size_t nm, void *ud) {
  body *b = ud;
  size_t n = sz * nm;
  char *nb = realloc(b->b, b->n + n + 1);
  cr_assert_not_null(nb);
  memcpy(nb + b->n, p, n);
  b->b = nb;
  b->n += n;
  b->b[b->n] = '\0';
  return n;
}

long admin_http(const admin_srv *s, const char *method, const char *path,
                const char *token, char **out) {
  return e2e_http(s->http, method, path, token, NULL, out, NULL);
}

long e2e_http(uint16_t port, const char *method, const char *path,
              const char *token, const char *send, char **out, char **hdrs) {
  char url[1300], auth[512];
  snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)port, path);
  CURL *e = curl_easy_init();
  struct curl_slist *h = NULL;
  body b = {calloc(1, 1), 0}, hb = {calloc(1, 1), 0};
  cr_assert(b.b && hb.b);
  curl_easy_setopt(e, CURLOPT_URL, url);
  if (strcmp(method, "HEAD") == 0)
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  else
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
  if (strcmp(method, "POST") == 0 || send)
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, send ? send : "");
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &hb);
  if (token) {
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  long status = 0;
  if (curl_easy_perform(e) == CURLE_OK)
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(e);
  if (out)
    *out = b.b;
  else
    free(b.b);
  if (hdrs)
    *hdrs = hb.b;
  else
    free(hb.b);
  return status;
}

cJSON *admin_get_json(const admin_srv *s, const char *path) {
  char *text = NULL;
  long st = admin_http(s, "GET", path, NULL, &text);
  cr_assert_eq(st, 200, "GET %s: %ld %s", path, st, text);
  cJSON *j = cJSON_Parse(text);
  cr_assert_not_null(j, "GET %s: not JSON: %s", path, text);
  free(text);
  return j;
}
