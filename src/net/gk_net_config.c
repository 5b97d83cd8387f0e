/* gk_net_config.c: genre options from JSON text (MATCH_START, CREATE_ROOM).
 *
 * The core keeps configs as plain structs changed one key at a time
 * through gk_sim.config_set; this maps a flat JSON object onto those calls.
 * It is the only place in src/net that reads JSON.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer.h"

int gk_net_config_json(const gk_sim *sim, void *cfg, const char *json,
                       char *err, size_t errlen) {
  if (sim == NULL || cfg == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "config: missing argument");
  if (json == NULL || json[strspn(json, " \t\r\n")] == '\0')
    return 0;
  cJSON *root = cJSON_ParseWithLength(json, strlen(json));
  if (root == NULL || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return gk_errf(err, errlen, GK_EPARSE,
                   "config: genre options must be a JSON object");
  }
  int rc = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, root) {
    gk_value v = {GK_VALUE_INT, 0, NULL};
    const char *key = item->string != NULL ? item->string : "";
    if (cJSON_IsBool(item)) {
      v.type = GK_VALUE_BOOL;
      v.i = cJSON_IsTrue(item) ? 1 : 0;
    } else if (cJSON_IsNumber(item)) {
      double d = item->valuedouble;
      if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) ||
          d != (double)(int64_t)d) {
        rc = gk_errf(err, errlen, GK_EINVAL,
                     "config: \"%s\": expected an integer", key);
        break;
      }
      v.i = (int64_t)d;
    } else if (cJSON_IsString(item)) {
      v.type = GK_VALUE_STRING;
      v.s = item->valuestring;
    } else {
      rc = gk_errf(err, errlen, GK_EINVAL,
                   "config: \"%s\": expected an integer, boolean or string",
                   key);
      break;
    }
    if ((rc = sim->config_set(cfg, key, &v, err, errlen)) != 0)
      break;
  }
  cJSON_Delete(root);
  return rc;
}
