/* gk_fleet_entry.c: the directory's values, written and read strictly.
 *
 * What a node reads from Redis may have been written by anyone who can
 * reach Redis: every field is bounded and checked character by character
 * before it is copied, and a value that is not exactly what
 * gk_fleet_room_value writes is GK_EPARSE with the reason.
 */
#include <stdio.h>
#include <string.h>

#include "gk_err.h"
#include "gk_fleet.h"

int gk_fleet_code_ok(const char *code) {
  size_t n = strlen(code);
  if (n == 0 || n > GK_FLEET_CODE_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (!((code[i] >= 'A' && code[i] <= 'Z') ||
          (code[i] >= '0' && code[i] <= '9')))
      return 0;
  return 1;
}

int gk_fleet_room_value(const char *node, const char *enet, const char *ws_url,
                        char *out, size_t cap) {
  int n = snprintf(out, cap, "gk1 %s %s %s", node, enet,
                   ws_url && ws_url[0] ? ws_url : "-");
  return n < 0 || (size_t)n >= cap ? GK_ETOOBIG : 0;
}

static int node_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
}

/* The next field of v[*at..len) (up to a space or the end) into dst (at
 * most max bytes), each byte printable ASCII (node: node_char). */
static int field(const char *v, size_t len, size_t *at, char *dst, size_t max,
                 int node, const char *name, char *why, size_t cap) {
  size_t s = *at, e = s;
  while (e < len && v[e] != ' ') e++;
  if (e == s) {
    snprintf(why, cap, "%s is missing", name);
    return GK_EPARSE;
  }
  if (e - s > max) {
    snprintf(why, cap, "%s longer than %zu bytes", name, max);
    return GK_EPARSE;
  }
  for (size_t i = s; i < e; i++) {
    unsigned char ch = (unsigned char)v[i];
    if (node ? !node_char((char)ch) : (ch <= ' ' || ch >= 0x7f)) {
      snprintf(why, cap, "%s has byte 0x%02x", name, ch);
      return GK_EPARSE;
    }
  }
  memcpy(dst, v + s, e - s);
  dst[e - s] = '\0';
  *at = e < len ? e + 1 : e;
  return 0;
}

int gk_fleet_room_parse(const char *v, size_t len, gk_fleet_where *w, char *why,
                        size_t cap) {
  memset(w, 0, sizeof(*w));
  if (len > GK_FLEET_VALUE_MAX) {
    snprintf(why, cap, "value longer than %d bytes", GK_FLEET_VALUE_MAX);
    return GK_EPARSE;
  }
  if (len < 4 || memcmp(v, "gk1 ", 4) != 0) {
    snprintf(why, cap, "value does not begin with \"gk1 \"");
    return GK_EPARSE;
  }
  size_t at = 4;
  int rc = field(v, len, &at, w->node, GK_FLEET_NODE_MAX, 1, "node", why, cap);
  if (!rc)
    rc = field(v, len, &at, w->enet, GK_FLEET_ADDR_MAX, 0, "enet", why, cap);
  if (!rc)
    rc =
        field(v, len, &at, w->ws_url, GK_FLEET_ADDR_MAX, 0, "ws_url", why, cap);
  if (!rc && (at != len || v[len - 1] == ' ')) {
    snprintf(why, cap, "bytes after the last field");
    rc = GK_EPARSE;
  }
  if (!rc && strcmp(w->ws_url, "-") == 0) w->ws_url[0] = '\0';
  if (rc) memset(w, 0, sizeof(*w));
  return rc;
}
