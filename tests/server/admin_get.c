/* admin_get.c: see admin_get.h. The request runs on a thread of its own,
 * since the server answering it runs on the test's loop, here. */
#include "admin_get.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct get_job {
  char url[128];
  char *body;
  size_t len;
  long status;
  atomic_int done; /* set by the thread after its last write to the job */
} get_job;

static size_t on_body(char *p, size_t size, size_t n, void *ctx) {
  get_job *j = ctx;
  char *b = realloc(j->body, j->len + size * n + 1);
  if (!b) return 0;
  memcpy(b + j->len, p, size * n);
  j->body = b;
  j->len += size * n;
  b[j->len] = '\0';
  return size * n;
}

static void *get_thread(void *arg) {
  get_job *j = arg;
  CURL *c = curl_easy_init();
  if (c) {
    curl_easy_setopt(c, CURLOPT_URL, j->url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    if (curl_easy_perform(c) == CURLE_OK)
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &j->status);
    curl_easy_cleanup(c);
  }
  atomic_store(&j->done, 1);
  return NULL;
}

char *admin_get(uv_loop_t *loop, gk_server *s, const char *path) {
  static get_job j;
  memset(&j, 0, sizeof(j));
  snprintf(j.url, sizeof(j.url), "http://127.0.0.1:%u%s",
           (unsigned)sv_admin_port(s), path);
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, get_thread, &j), 0);
  while (!atomic_load(&j.done)) uv_run(loop, UV_RUN_ONCE);
  pthread_join(th, NULL);
  cr_assert_eq(j.status, 200, "GET %s", path);
  return j.body;
}
