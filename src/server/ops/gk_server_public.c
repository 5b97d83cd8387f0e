/* gk_server_public.c: GET /rooms/public, the public room list over HTTP
 * (gk_server_ops.h), on both listeners:
 *   - the admin port (gk_server_admin.c), for operators and tools;
 *   - the WebSocket port (gk_net_ws's json_get), for browsers: the play
 *     page is served from that port, so it reads the list from its own
 *     origin (no CORS), and the admin port stays private.
 * Both check the query with sv_public_genre_arg and answer
 * sv_fleet_public_rooms' JSON (gk_server_fleet.c): this process's listed
 * rooms as they are now and, with a fleet, the other nodes' from the
 * node-local copy the directory refreshes on its heartbeat. A request
 * never waits on Redis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_net_wire.h"
#include "gk_net_ws.h"
#include "gk_server_internal.h"

#define PUBLIC_PATH "/rooms/public"

int sv_public_genre_arg(const char *key, const char *value, char *genre) {
  if (strcmp(key, "genre") != 0 || !value || !value[0] ||
      strlen(value) > GK_WIRE_GENRE_MAX)
    return 0;
  snprintf(genre, GK_WIRE_GENRE_MAX + 1, "%s", value);
  return 1;
}

char *sv_json_text(cJSON *j) {
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  if (!text) return NULL;
  size_t n = strlen(text);
  char *body = malloc(n + 2);
  if (body) {
    memcpy(body, text, n);
    body[n] = '\n';
    body[n + 1] = '\0';
  }
  cJSON_free(text);
  return body;
}

/* {"error": "bad query argument \"KEY\": ..."} as a body. */
static char *bad_query(const char *key) {
  char why[128];
  snprintf(why, sizeof(why), "bad query argument \"%.47s\": %s", key,
           SV_PUBLIC_QUERY);
  cJSON *j = cJSON_CreateObject();
  if (j && !cJSON_AddStringToObject(j, "error", why)) {
    cJSON_Delete(j);
    j = NULL;
  }
  return sv_json_text(j);
}

int sv_public_get(const gk_server *s, const char *path,
                  const gk_net_ws_arg *args, size_t n_args, char **body) {
  if (strcmp(path, PUBLIC_PATH) != 0) return GK_ENOTFOUND;
  if (!body) return 0;
  char genre[GK_WIRE_GENRE_MAX + 1];
  int genre_set = 0;
  for (size_t i = 0; i < n_args; i++) {
    if (genre_set || !sv_public_genre_arg(args[i].key, args[i].value, genre)) {
      *body = bad_query(args[i].key);
      return GK_EINVAL;
    }
    genre_set = 1;
  }
  *body = sv_json_text(sv_fleet_public_rooms(s, genre_set ? genre : NULL));
  return *body ? 0 : GK_ENOMEM;
}
