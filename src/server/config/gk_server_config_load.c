/* gk_server_config_load.c: reading a config FILE. The file is read whole
 * (bounded by GK_SERVER_CONFIG_FILE_MAX), the genre libraries it names are
 * loaded, then gk_server_config_parse (pure: no I/O) checks the text. Kept
 * apart from the parser so the parser and its fuzzer never touch a disk or
 * dlopen. */
#include "gk_server_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_genre_load.h"

/* --- genre libraries ("genres.<name>.path") --------------------------------
 * Loaded before the config is parsed, so the parser (pure: no I/O) sees
 * them as registered genres. A relative path is relative to the config
 * file's directory. Bad JSON is left for the parser to report. */
static int load_genre_lib(const char *file, const cJSON *g, char *err,
                          size_t errlen) {
  const cJSON *lib = cJSON_GetObjectItemCaseSensitive(g, "path");
  if (!cJSON_IsString(lib) || lib->valuestring[0] == '\0' ||
      strlen(lib->valuestring) >= GK_SERVER_PATH_MAX)
    return 0; /* the parser names the problem */
  char full[2 * GK_SERVER_PATH_MAX];
  const char *slash = strrchr(file, '/');
  if (lib->valuestring[0] == '/')
    snprintf(full, sizeof full, "%s", lib->valuestring);
  else if (slash == NULL)
    snprintf(full, sizeof full, "./%s", lib->valuestring);
  else
    snprintf(full, sizeof full, "%.*s/%s", (int)(slash - file), file,
             lib->valuestring);
  char msg[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_genre_load(full, g->string, NULL, msg, sizeof msg);
  if (rc != 0 && err && errlen)
    snprintf(err, errlen, "%s: genres.%s.path: %s", file, g->string, msg);
  return rc;
}

static int load_genre_libs(const char *json, size_t len, const char *file,
                           char *err, size_t errlen) {
  cJSON *root = cJSON_ParseWithLength(json, len);
  const cJSON *genres = cJSON_GetObjectItemCaseSensitive(root, "genres");
  int rc = 0;
  if (cJSON_IsObject(genres))
    for (const cJSON *g = genres->child; g && rc == 0; g = g->next)
      if (cJSON_IsObject(g)) rc = load_genre_lib(file, g, err, errlen);
  cJSON_Delete(root);
  return rc;
}

int gk_server_config_load(gk_server_config *c, const char *path, char *err,
                          size_t errlen) {
  gk_server_config_default(c);
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    if (err && errlen)
      snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
    return e == ENOENT ? GK_ENOTFOUND : GK_EIO;
  }
  char *buf = malloc(GK_SERVER_CONFIG_FILE_MAX + 1);
  if (!buf) {
    fclose(f);
    if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
    return GK_ENOMEM;
  }
  size_t n = fread(buf, 1, GK_SERVER_CONFIG_FILE_MAX + 1, f);
  int bad = ferror(f);
  fclose(f);
  int rc;
  if (bad) {
    if (err && errlen) snprintf(err, errlen, "%s: read error", path);
    rc = GK_EIO;
  } else if (n > GK_SERVER_CONFIG_FILE_MAX) {
    if (err && errlen)
      snprintf(err, errlen, "%s: larger than %u bytes", path,
               GK_SERVER_CONFIG_FILE_MAX);
    rc = GK_ETOOBIG;
  } else {
    rc = load_genre_libs(buf, n, path, err, errlen);
    if (rc == 0) rc = gk_server_config_parse(c, buf, n, path, err, errlen);
  }
  free(buf);
  return rc;
}
