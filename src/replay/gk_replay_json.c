/* gk_replay_json.c: the header block's JSON text checked strictly before a
 * parser reads it (gk_replay_read.c), so cJSON (gk-replay, the server) and
 * JavaScript's JSON.parse (replay.js) read one same document, or neither
 * does and both give this file's refusal, with its offset.
 *
 * The two parsers read some texts differently: JSON.parse keeps the last
 * of duplicate keys and cJSON the first; cJSON reads leading zeros, "1.",
 * any byte <= 0x20 as white space, raw control characters in strings and
 * nests 1,000 deep, JSON.parse none of these (and deeper); cJSON cuts a
 * string at \u0000 and refuses a lone surrogate, which JSON.parse keeps;
 * TextDecoder turns invalid UTF-8 into U+FFFD where cJSON keeps the bytes;
 * cJSON reads a number from its first 63 characters only; JSON.parse puts
 * integer-like keys ("7") first in an object, which changes the order the
 * config's keys are applied in. So this accepts RFC 8259 JSON in UTF-8
 * only, and of it refuses: duplicate keys in an object (compared after
 * unescaping), keys of digits only, \u0000, unpaired surrogates, numbers
 * longer than GK__REPLAY_JSON_NUMBER_MAX characters or beyond +/-(2^53 -
 * 1) (JavaScript's exact integers), and nesting deeper than
 * GK__REPLAY_JSON_DEPTH_MAX. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_utf8.h"
#include "gk_replay_internal.h"

typedef struct key_span {
  size_t off, len; /* decoded bytes in kb */
  size_t at;       /* the key's offset in the text */
} key_span;

typedef struct jscan {
  const uint8_t *s;
  size_t len, pos;
  uint8_t *kb; /* decoded keys of the objects open now */
  size_t kb_len, kb_cap;
  key_span *keys;
  size_t nkeys, keys_cap;
  key_span *tmp; /* merge sort scratch */
  size_t tmp_cap;
  size_t at;
  const char *what;
  int rc;
} jscan;

static int refuse(jscan *j, size_t at, int rc, const char *what) {
  if (j->rc == 0) {
    j->at = at;
    j->what = what;
    j->rc = rc;
  }
  return -1;
}

static int syntax(jscan *j) {
  return refuse(j, j->pos, GK_EPARSE, "expected header JSON, parse error");
}

static void skip_ws(jscan *j) {
  while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' ||
                             j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
    j->pos++;
}

static int key_put(jscan *j, const uint8_t *b, size_t n) {
  if (j->kb_len + n > j->kb_cap) {
    size_t cap = j->kb_cap ? j->kb_cap : 256;
    while (cap < j->kb_len + n) cap *= 2;
    uint8_t *nb = realloc(j->kb, cap);
    if (nb == NULL) return refuse(j, j->pos, GK_ENOMEM, "out of memory");
    j->kb = nb;
    j->kb_cap = cap;
  }
  memcpy(j->kb + j->kb_len, b, n);
  j->kb_len += n;
  return 0;
}

static int hex4(const uint8_t *p, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t c = p[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v << 4 | (uint32_t)d;
  }
  *out = v;
  return 0;
}

/* A \u escape at j->pos (the backslash), a surrogate pair as one; its
 * code point in *cp. */
static int escape_u(jscan *j, uint32_t *cp) {
  size_t at = j->pos;
  if (j->len - j->pos < 6 || hex4(j->s + j->pos + 2, cp) != 0) return syntax(j);
  j->pos += 6;
  if (*cp == 0)
    return refuse(j, at, GK_EPARSE, "expected no \\u0000 in header JSON");
  if (*cp >= 0xdc00 && *cp <= 0xdfff) goto unpaired;
  if (*cp < 0xd800 || *cp > 0xdbff) return 0;
  uint32_t lo;
  if (j->len - j->pos < 6 || j->s[j->pos] != '\\' || j->s[j->pos + 1] != 'u' ||
      hex4(j->s + j->pos + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
    goto unpaired;
  j->pos += 6;
  *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
  return 0;
unpaired:
  return refuse(j, at, GK_EPARSE,
                "expected \\u escapes of surrogates in pairs in header JSON");
}

static size_t utf8_put(uint8_t *b, uint32_t cp) {
  if (cp < 0x80) return b[0] = (uint8_t)cp, 1;
  if (cp < 0x800) {
    b[0] = (uint8_t)(0xc0 | cp >> 6);
    b[1] = (uint8_t)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    b[0] = (uint8_t)(0xe0 | cp >> 12);
    b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
    b[2] = (uint8_t)(0x80 | (cp & 0x3f));
    return 3;
  }
  b[0] = (uint8_t)(0xf0 | cp >> 18);
  b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
  b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
  b[3] = (uint8_t)(0x80 | (cp & 0x3f));
  return 4;
}

/* A string at j->pos (its quote); a key's decoded bytes go to kb. */
static int string(jscan *j, int key) {
  j->pos++;
  for (;;) {
    if (j->pos >= j->len) return syntax(j);
    uint8_t c = j->s[j->pos];
    if (c == '"') break;
    if (c < 0x20) return syntax(j); /* JSON.parse refuses, cJSON keeps */
    uint8_t b[4];
    size_t n;
    if (c == '\\') {
      if (j->pos + 1 >= j->len) return syntax(j);
      const char *esc = "\"\\/bfnrt", *dec = "\"\\/\b\f\n\r\t";
      const char *e = j->s[j->pos + 1] ? strchr(esc, j->s[j->pos + 1]) : NULL;
      uint32_t cp;
      if (e != NULL) {
        b[0] = (uint8_t)dec[e - esc];
        n = 1;
        j->pos += 2;
      } else if (j->s[j->pos + 1] == 'u') {
        if (escape_u(j, &cp) != 0) return -1;
        n = utf8_put(b, cp);
      } else {
        return syntax(j);
      }
    } else {
      n = gk_utf8_len(j->s + j->pos, j->len - j->pos);
      if (n == 0)
        return refuse(j, j->pos, GK_EPARSE,
                      "expected UTF-8 text in header JSON");
      memcpy(b, j->s + j->pos, n);
      j->pos += n;
    }
    if (key && key_put(j, b, n) != 0) return -1;
  }
  j->pos++;
  return 0;
}

static int digits(jscan *j) {
  size_t from = j->pos;
  while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9')
    j->pos++;
  return j->pos > from ? 0 : syntax(j);
}

/* 1 if the number text t (valid JSON, n characters) reads as a double
 * beyond +/-(2^53 - 1): its decimal value is at least 9007199254740991.5,
 * which rounds (to even) to 2^53. Decided on the digits, with no strtod
 * (which would add its tables to the browser's .wasm). */
static int beyond_exact(const uint8_t *t, size_t n) {
  static const char half[] = "90071992547409915"; /* 0.(this) * 10^16 */
  char sig[GK__REPLAY_JSON_NUMBER_MAX];
  size_t ns = 0, i = t[0] == '-' ? 1 : 0;
  long point = 0; /* value = 0.sig * 10^point */
  int in_frac = 0;
  for (; i < n && t[i] != 'e' && t[i] != 'E'; i++) {
    if (t[i] == '.') {
      in_frac = 1;
      continue;
    }
    if (ns == 0 && t[i] == '0') {
      if (in_frac) point--;
      continue;
    }
    sig[ns++] = (char)t[i];
    if (!in_frac) point++;
  }
  if (ns == 0) return 0; /* zero */
  if (i < n) {
    int neg = t[++i] == '-';
    if (t[i] == '-' || t[i] == '+') i++;
    long e = 0;
    for (; i < n; i++)
      if (e < 100000) e = e * 10 + (t[i] - '0');
    point += neg ? -e : e;
  }
  if (point != 16) return point > 16;
  for (size_t k = 0; k < sizeof half - 1; k++) {
    char d = '0';
    if (k < ns) d = sig[k];
    if (d != half[k]) return d > half[k];
  }
  return 1; /* equal to the midpoint: rounds to 2^53 */
}

static int number(jscan *j) {
  size_t at = j->pos;
  if (j->s[j->pos] == '-') j->pos++;
  if (j->pos < j->len && j->s[j->pos] == '0')
    j->pos++;
  else if (digits(j) != 0)
    return -1;
  if (j->pos < j->len && j->s[j->pos] == '.') {
    j->pos++;
    if (digits(j) != 0) return -1;
  }
  if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
    j->pos++;
    if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
      j->pos++;
    if (digits(j) != 0) return -1;
  }
  if (j->pos - at > GK__REPLAY_JSON_NUMBER_MAX)
    return refuse(j, at, GK_EPARSE,
                  "expected numbers of at most " GK__REPLAY_STR(
                      GK__REPLAY_JSON_NUMBER_MAX) " characters in header JSON");
  if (beyond_exact(j->s + at, j->pos - at))
    return refuse(j, at, GK_EPARSE,
                  "expected numbers within +/-(2^53 - 1) in header JSON");
  return 0;
}

static int literal(jscan *j, const char *word) {
  size_t n = strlen(word);
  if (j->len - j->pos < n || memcmp(j->s + j->pos, word, n) != 0)
    return syntax(j);
  j->pos += n;
  return 0;
}

static int key_cmp(const jscan *j, const key_span *a, const key_span *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(j->kb + a->off, j->kb + b->off, n);
  if (c != 0) return c;
  if (a->len != b->len) return a->len < b->len ? -1 : 1;
  return a->at < b->at ? -1 : a->at > b->at;
}

/* Sorts k[0..n) by key bytes, then offset (a stable merge sort). */
static void sort_keys(const jscan *j, key_span *k, key_span *tmp, size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  sort_keys(j, k, tmp, h);
  sort_keys(j, k + h, tmp, n - h);
  size_t a = 0, b = h, o = 0;
  while (a < h && b < n)
    tmp[o++] = key_cmp(j, &k[b], &k[a]) < 0 ? k[b++] : k[a++];
  while (a < h) tmp[o++] = k[a++];
  while (b < n) tmp[o++] = k[b++];
  memcpy(k, tmp, n * sizeof *k);
}

/* The object's keys k[0..n): refuses the earliest second use of a key. */
static int unique_keys(jscan *j, size_t first) {
  size_t n = j->nkeys - first;
  if (n < 2) return 0;
  if (j->tmp_cap < n) {
    key_span *t = realloc(j->tmp, n * sizeof *t);
    if (t == NULL) return refuse(j, j->pos, GK_ENOMEM, "out of memory");
    j->tmp = t;
    j->tmp_cap = n;
  }
  key_span *k = j->keys + first;
  sort_keys(j, k, j->tmp, n);
  size_t dup = SIZE_MAX;
  for (size_t i = 1; i < n; i++)
    if (k[i].len == k[i - 1].len &&
        memcmp(j->kb + k[i].off, j->kb + k[i - 1].off, k[i].len) == 0 &&
        k[i].at < dup)
      dup = k[i].at;
  if (dup != SIZE_MAX)
    return refuse(j, dup, GK_EPARSE,
                  "expected each key once in a header JSON object");
  return 0;
}

static int value(jscan *j, int depth);

static int object_key(jscan *j) {
  if (j->pos >= j->len || j->s[j->pos] != '"') return syntax(j);
  if (j->nkeys == j->keys_cap) {
    size_t cap = j->keys_cap ? j->keys_cap * 2 : 64;
    key_span *k = realloc(j->keys, cap * sizeof *k);
    if (k == NULL) return refuse(j, j->pos, GK_ENOMEM, "out of memory");
    j->keys = k;
    j->keys_cap = cap;
  }
  key_span *k = &j->keys[j->nkeys++];
  k->off = j->kb_len;
  k->at = j->pos;
  if (string(j, 1) != 0) return -1;
  k->len = j->kb_len - k->off;
  size_t d = 0;
  while (d < k->len && j->kb[k->off + d] >= '0' && j->kb[k->off + d] <= '9')
    d++;
  if (k->len > 0 && d == k->len) /* JSON.parse puts these keys first */
    return refuse(j, k->at, GK_EPARSE,
                  "expected no key of digits only in header JSON");
  return 0;
}

static int container(jscan *j, int depth) {
  uint8_t open = j->s[j->pos], close = open == '{' ? '}' : ']';
  if (depth >= GK__REPLAY_JSON_DEPTH_MAX)
    return refuse(j, j->pos, GK_EPARSE,
                  "expected header JSON nested at most " GK__REPLAY_STR(
                      GK__REPLAY_JSON_DEPTH_MAX) " deep");
  size_t first = j->nkeys;
  j->pos++;
  skip_ws(j);
  if (j->pos < j->len && j->s[j->pos] == close) {
    j->pos++;
    return 0;
  }
  for (;;) {
    skip_ws(j);
    if (open == '{') {
      if (object_key(j) != 0) return -1;
      skip_ws(j);
      if (j->pos >= j->len || j->s[j->pos] != ':') return syntax(j);
      j->pos++;
      skip_ws(j);
    }
    if (value(j, depth + 1) != 0) return -1;
    skip_ws(j);
    if (j->pos >= j->len) return syntax(j);
    if (j->s[j->pos] == close) break;
    if (j->s[j->pos] != ',') return syntax(j);
    j->pos++;
  }
  j->pos++;
  if (open == '{') {
    if (unique_keys(j, first) != 0) return -1;
    if (j->nkeys > first) j->kb_len = j->keys[first].off;
    j->nkeys = first;
  }
  return 0;
}

static int value(jscan *j, int depth) {
  if (j->pos >= j->len) return syntax(j);
  uint8_t c = j->s[j->pos];
  if (c == '{' || c == '[') return container(j, depth);
  if (c == '"') return string(j, 0);
  if (c == '-' || (c >= '0' && c <= '9')) return number(j);
  if (c == 't') return literal(j, "true");
  if (c == 'f') return literal(j, "false");
  if (c == 'n') return literal(j, "null");
  return syntax(j);
}

int gk__replay_json_check(const uint8_t *text, size_t len, uint64_t *at,
                          const char **what) {
  jscan j;
  memset(&j, 0, sizeof j);
  j.s = text;
  j.len = len;
  skip_ws(&j);
  if (value(&j, 0) == 0) {
    skip_ws(&j);
    if (j.pos != len)
      refuse(&j, j.pos, GK_EPARSE, "expected the end of the header JSON");
  }
  free(j.kb);
  free(j.keys);
  free(j.tmp);
  *at = j.at;
  *what = j.what;
  return j.rc;
}
