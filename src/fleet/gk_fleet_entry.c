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

/* --- public rooms --------------------------------------------------------- */

int gk_fleet_pub_value(const gk_fleet_pub *p, char *out, size_t cap) {
  size_t g = strlen(p->genre);
  if (g == 0 || g > GK_FLEET_GENRE_MAX || p->taken > 255 || p->free_seats > 255)
    return GK_EINVAL;
  int n = snprintf(out, cap, "gk1 %s %u %u %s", p->genre, p->taken,
                   p->free_seats, p->playing ? "playing" : "lobby");
  return n < 0 || (size_t)n >= cap ? GK_ETOOBIG : 0;
}

/* A seat count: decimal 0..255, no sign, no leading zero. */
static int seats(const char *t, uint32_t *out) {
  size_t n = strlen(t);
  if (n == 0 || n > 3 || (n > 1 && t[0] == '0')) return GK_EPARSE;
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i] < '0' || t[i] > '9') return GK_EPARSE;
    v = v * 10u + (uint32_t)(t[i] - '0');
  }
  if (v > 255) return GK_EPARSE;
  *out = v;
  return 0;
}

int gk_fleet_pub_parse(const char *v, size_t len, gk_fleet_pub *p, char *why,
                       size_t cap) {
  char taken[8], free_seats[8], state[8];
  if (len > GK_FLEET_VALUE_MAX || len < 4 || memcmp(v, "gk1 ", 4) != 0) {
    snprintf(why, cap, "value does not begin with \"gk1 \" or is too long");
    return GK_EPARSE;
  }
  size_t at = 4;
  int rc =
      field(v, len, &at, p->genre, GK_FLEET_GENRE_MAX, 0, "genre", why, cap);
  for (size_t i = 0; !rc && p->genre[i]; i++) {
    char ch = p->genre[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
          ch == '-')) {
      snprintf(why, cap, "genre has byte 0x%02x", (unsigned char)ch);
      rc = GK_EPARSE;
    }
  }
  if (!rc) rc = field(v, len, &at, taken, 3, 0, "taken", why, cap);
  if (!rc) rc = field(v, len, &at, free_seats, 3, 0, "free", why, cap);
  if (!rc) rc = field(v, len, &at, state, 7, 0, "state", why, cap);
  if (!rc && (at != len || v[len - 1] == ' ')) {
    snprintf(why, cap, "bytes after the last field");
    rc = GK_EPARSE;
  }
  if (!rc && (seats(taken, &p->taken) || seats(free_seats, &p->free_seats))) {
    snprintf(why, cap, "seats are not decimal 0..255");
    rc = GK_EPARSE;
  }
  if (!rc && strcmp(state, "lobby") != 0 && strcmp(state, "playing") != 0) {
    snprintf(why, cap, "state is neither lobby nor playing");
    rc = GK_EPARSE;
  }
  if (!rc) p->playing = state[0] == 'p';
  return rc;
}

int gk_fleet_pub_entry(const char *node, size_t nlen, const char *code,
                       size_t clen, const char *v, size_t vlen, gk_fleet_pub *p,
                       char *why, size_t cap) {
  memset(p, 0, sizeof(*p));
  if (nlen > 0 && clen == 0 && vlen == 0) { /* pub_lua's mark */
    snprintf(why, cap, "gk:pub:%.*s is not a hash",
             (int)(nlen < GK_FLEET_NODE_MAX ? nlen : GK_FLEET_NODE_MAX), node);
    return GK_EPARSE;
  }
  int bad = nlen == 0 || nlen > GK_FLEET_NODE_MAX || clen == 0 ||
            clen > GK_FLEET_CODE_MAX;
  for (size_t i = 0; !bad && i < nlen; i++) bad = !node_char(node[i]);
  if (!bad) {
    memcpy(p->node, node, nlen);
    memcpy(p->code, code, clen);
    bad = !gk_fleet_code_ok(p->code);
  }
  if (bad) {
    memset(p, 0, sizeof(*p));
    snprintf(why, cap, "a bad node name or room code");
    return GK_EPARSE;
  }
  return gk_fleet_pub_parse(v, vlen, p, why, cap);
}
