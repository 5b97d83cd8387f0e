/* gk_token_tool.c: the gk-token CLI, for backends and operators.
 *
 *   gk-token keygen --out FILE
 *   gk-token mint --key FILE --client ID
 *            (--create GENRE --players N | --join CODE [--spectator]
 *             [--slot N]) [--expires-in SECONDS] [--now UNIX_S]
 *   gk-token inspect --key FILE [--protocol N] [--now UNIX_S] TOKEN|-
 *
 * A rejoin into a held slot (REJOIN_ROOM) takes a new join token with
 * --slot N and the client id the player first joined with (tokens are
 * single-use); SPECTATE takes one with --spectator.
 *
 * mint prints the token (base64url, no padding) and a newline. inspect
 * prints JSON with every field, "valid" and the reason; the private part
 * only when the token is authentic. Exit status: 0 ok (inspect: valid),
 * 1 the token is invalid (inspect), 2 usage or I/O error. --now replaces
 * the clock (tests, and checking a token against another time).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "gk_err.h"
#include "gk_token.h"

#define EXIT_INVALID 1
#define EXIT_USAGE 2
#define MSG_MAX 256

static const char usage_text[] =
    "usage:\n"
    "  gk-token keygen --out FILE\n"
    "  gk-token mint --key FILE --client ID\n"
    "           (--create GENRE --players N | --join CODE [--spectator]\n"
    "            [--slot N]) [--expires-in SECONDS] [--now UNIX_S]\n"
    "  gk-token inspect --key FILE [--protocol N] [--now UNIX_S] TOKEN|-\n"
    "a rejoin (REJOIN_ROOM): --join CODE --slot N with the player's client\n"
    "id, a new token each time; SPECTATE: --join CODE --spectator\n"
    "exit: 0 ok, 1 token invalid (inspect), 2 usage or I/O error\n";

static int usage(const char *fmt, ...) GK_PRINTF(1, 2);

/* Prints "gk-token: <message>" and the usage; returns EXIT_USAGE. */
static int usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gk-token: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n%s", usage_text);
  va_end(ap);
  return EXIT_USAGE;
}

/* Parses a whole decimal u64 in min..max; returns 0 or -1. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return -1;
  uint64_t v = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') return -1;
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  if (v < min || v > max) return -1;
  *out = v;
  return 0;
}

typedef struct opts {
  const char *out, *key, *client, *create, *players, *join, *slot, *expires_in,
      *now, *protocol, *token;
  int spectator;
} opts;

/* Reads the options: every one takes a value except --spectator; one
 * positional argument (the token) is allowed when `positional` is set. */
static int parse_opts(int argc, char **argv, int positional, opts *o) {
  static const struct {
    const char *name;
    size_t off;
  } table[] = {
      {"--out", offsetof(opts, out)},
      {"--key", offsetof(opts, key)},
      {"--client", offsetof(opts, client)},
      {"--create", offsetof(opts, create)},
      {"--players", offsetof(opts, players)},
      {"--join", offsetof(opts, join)},
      {"--slot", offsetof(opts, slot)},
      {"--expires-in", offsetof(opts, expires_in)},
      {"--now", offsetof(opts, now)},
      {"--protocol", offsetof(opts, protocol)},
  };
  memset(o, 0, sizeof *o);
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--spectator") == 0) {
      o->spectator = 1;
      continue;
    }
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (!positional || o->token != NULL)
        return usage("unexpected argument '%s'", a);
      o->token = a;
      continue;
    }
    size_t k = 0;
    while (k < sizeof table / sizeof table[0] && strcmp(a, table[k].name) != 0)
      k++;
    if (k == sizeof table / sizeof table[0])
      return usage("unknown option '%s'", a);
    const char **slot = (const char **)((char *)o + table[k].off);
    if (*slot != NULL) return usage("option '%s' given twice", a);
    if (i + 1 >= argc) return usage("option '%s' needs a value", a);
    *slot = argv[++i];
  }
  return 0;
}

static int now_or(const char *arg, uint64_t *now) {
  if (arg == NULL) {
    time_t t = time(NULL);
    *now = t < 0 ? 0 : (uint64_t)t;
    return 0;
  }
  if (parse_u64(arg, 0, UINT64_MAX, now) != 0)
    return usage("--now '%s' is not unix seconds", arg);
  return 0;
}

static int load_key(const char *path, uint8_t key[GK_TOKEN_KEY_BYTES]) {
  if (path == NULL) return usage("%s", "--key FILE is required");
  char err[MSG_MAX];
  if (gk_token_key_load(path, key, err, sizeof err) != 0) {
    fprintf(stderr, "gk-token: %s\n", err);
    return EXIT_USAGE;
  }
  return 0;
}

static int cmd_keygen(int argc, char **argv) {
  opts o;
  int rc = parse_opts(argc, argv, 0, &o);
  if (rc != 0) return rc;
  if (o.out == NULL) return usage("%s", "keygen needs --out FILE");
  if (o.key || o.client || o.create || o.players || o.join || o.slot ||
      o.expires_in || o.now || o.protocol || o.spectator)
    return usage("%s", "keygen takes only --out FILE");
  char err[MSG_MAX];
  if (gk_token_key_write(o.out, err, sizeof err) != 0) {
    fprintf(stderr, "gk-token: %s\n", err);
    return EXIT_USAGE;
  }
  return 0;
}

static int grant_from_opts(const opts *o, gk_token_grant *g) {
  memset(g, 0, sizeof *g);
  g->slot = GK_TOKEN_SLOT_ANY;
  uint64_t v;
  if ((o->create != NULL) == (o->join != NULL))
    return usage("%s", "give exactly one of --create GENRE and --join CODE");
  if (o->create != NULL) {
    if (o->spectator || o->slot != NULL)
      return usage("%s", "--spectator and --slot are for --join");
    if (strlen(o->create) > GK_TOKEN_GENRE_MAX)
      return usage("genre name '%s' is too long", o->create);
    g->kind = GK_TOKEN_CREATE;
    strcpy(g->genre, o->create);
    if (o->players == NULL) return usage("%s", "--create needs --players N");
    if (parse_u64(o->players, 1, GK_TOKEN_PLAYERS_MAX, &v) != 0)
      return usage("--players '%s' is not 1..16", o->players);
    g->max_players = (uint8_t)v;
  } else {
    if (o->players != NULL) return usage("%s", "--players is for --create");
    if (strlen(o->join) > GK_TOKEN_CODE_LEN)
      return usage("room code '%s' is too long", o->join);
    g->kind = GK_TOKEN_JOIN;
    strcpy(g->code, o->join);
    g->role = o->spectator ? GK_TOKEN_SPECTATOR : GK_TOKEN_PLAYER;
    if (o->slot != NULL) {
      if (o->spectator)
        return usage("%s", "--slot is for players, not --spectator");
      if (parse_u64(o->slot, 0, GK_TOKEN_PLAYERS_MAX - 1, &v) != 0)
        return usage("--slot '%s' is not 0..15", o->slot);
      g->slot = (uint8_t)v;
    }
  }
  char err[MSG_MAX];
  if (gk_token_grant_check(g, err, sizeof err) != 0) return usage("%s", err);
  return 0;
}

static int cmd_mint(int argc, char **argv) {
  opts o;
  int rc = parse_opts(argc, argv, 0, &o);
  if (rc != 0) return rc;
  if (o.out != NULL || o.protocol != NULL)
    return usage("%s", "mint takes no --out or --protocol");
  uint64_t client, expires = 60, now;
  if (o.client == NULL) return usage("%s", "mint needs --client ID");
  if (parse_u64(o.client, 0, UINT64_MAX, &client) != 0)
    return usage("--client '%s' is not an unsigned 64-bit number", o.client);
  if (o.expires_in != NULL &&
      parse_u64(o.expires_in, 1, GK_TOKEN_LIFETIME_MAX, &expires) != 0)
    return usage("--expires-in '%s' is not 1..3600 seconds", o.expires_in);
  gk_token_grant g;
  if ((rc = grant_from_opts(&o, &g)) != 0 || (rc = now_or(o.now, &now)) != 0)
    return rc;
  uint8_t key[GK_TOKEN_KEY_BYTES];
  if ((rc = load_key(o.key, key)) != 0) return rc;
  uint8_t tok[GK_TOKEN_BYTES];
  char text[GK_TOKEN_B64_LEN + 1];
  rc = gk_token_mint(&g, client, now, (uint32_t)expires, key, tok);
  memset(key, 0, sizeof key);
  if (rc != 0) {
    fprintf(stderr, "gk-token: cannot mint: %s\n", gk_strerror(rc));
    return EXIT_USAGE;
  }
  gk_token_to_base64(tok, text);
  if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
    fprintf(stderr, "gk-token: cannot write the token: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  return 0;
}

static void add_u64(cJSON *o, const char *name, uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  cJSON_AddItemToObject(o, name, cJSON_CreateRaw(buf)); /* exact, no double */
}

static void add_hex(cJSON *o, const char *name, const uint8_t *b, size_t n) {
  char buf[2 * GK_TOKEN_NONCE_BYTES + 1];
  for (size_t i = 0; i < n; i++) snprintf(buf + 2 * i, 3, "%02x", b[i]);
  buf[2 * n] = '\0';
  cJSON_AddStringToObject(o, name, buf);
}

static cJSON *grant_json(const gk_token_grant *g) {
  cJSON *j = cJSON_CreateObject();
  if (g->kind == GK_TOKEN_CREATE) {
    cJSON_AddStringToObject(j, "kind", "create");
    cJSON_AddStringToObject(j, "genre", g->genre);
    cJSON_AddNumberToObject(j, "max_players", g->max_players);
  } else {
    cJSON_AddStringToObject(j, "kind", "join");
    cJSON_AddStringToObject(j, "code", g->code);
    cJSON_AddStringToObject(
        j, "role", g->role == GK_TOKEN_SPECTATOR ? "spectator" : "player");
    if (g->slot == GK_TOKEN_SLOT_ANY)
      cJSON_AddStringToObject(j, "slot", "any");
    else
      cJSON_AddNumberToObject(j, "slot", g->slot);
  }
  return j;
}

/* Reads the token argument, or one line of stdin for "-". */
static int token_text(const char *arg, char *buf, size_t cap, size_t *len) {
  if (strcmp(arg, "-") != 0) {
    *len = strlen(arg);
    if (*len >= cap)
      *len = cap - 1; /* longer than any token: refused as too long */
    memcpy(buf, arg, *len);
    return 0;
  }
  if (fgets(buf, (int)cap, stdin) == NULL) {
    fprintf(stderr, "gk-token: no token on stdin\n");
    return EXIT_USAGE;
  }
  *len = strcspn(buf, "\r\n");
  return 0;
}

static int cmd_inspect(int argc, char **argv) {
  opts o;
  int rc = parse_opts(argc, argv, 1, &o);
  if (rc != 0) return rc;
  if (o.token == NULL)
    return usage("%s", "inspect needs a TOKEN (or - for stdin)");
  if (o.out || o.client || o.create || o.players || o.join || o.slot ||
      o.expires_in || o.spectator)
    return usage("%s", "inspect takes --key, --protocol, --now and TOKEN");
  uint64_t now, protocol = GK_TOKEN_PROTOCOL;
  if ((rc = now_or(o.now, &now)) != 0) return rc;
  if (o.protocol != NULL && parse_u64(o.protocol, 0, UINT32_MAX, &protocol))
    return usage("--protocol '%s' is not a u32", o.protocol);
  uint8_t key[GK_TOKEN_KEY_BYTES];
  if ((rc = load_key(o.key, key)) != 0) return rc;
  char text[GK_TOKEN_B64_LEN + 2];
  size_t len = 0;
  if ((rc = token_text(o.token, text, sizeof text, &len)) != 0) return rc;

  char why[MSG_MAX] = "";
  uint8_t tok[GK_TOKEN_BYTES];
  gk_token_public pub;
  gk_token t;
  int have_pub = 0, authentic = 0;
  int code = gk_token_from_base64(text, len, tok);
  if (code != 0) {
    snprintf(why, sizeof why,
             "not a token in base64url (%d characters, "
             "expected %d of [A-Za-z0-9_-]): %s",
             (int)len, GK_TOKEN_B64_LEN, gk_strerror(code));
  } else {
    have_pub = gk_token_peek(tok, sizeof tok, &pub) == 0;
    code = gk_token_open(tok, sizeof tok, key, (uint32_t)protocol, now, &t, why,
                         sizeof why);
    authentic = code == 0;
    /* Expiry is checked last: such a token is authentic and well-formed,
     * so open it at its own creation time to show what it grants. */
    if (code == GK_EEXPIRED || code == GK_ENOTYET)
      authentic = gk_token_open(tok, sizeof tok, key, (uint32_t)protocol,
                                pub.create_s, &t, NULL, 0) == 0;
  }
  memset(key, 0, sizeof key);

  cJSON *j = cJSON_CreateObject();
  cJSON_AddBoolToObject(j, "valid", code == 0);
  cJSON_AddStringToObject(j, "code", gk_err_name(code));
  cJSON_AddStringToObject(j, "reason", code == 0 ? "ok" : why);
  add_u64(j, "now_s", now);
  cJSON_AddBoolToObject(j, "authentic", authentic);
  if (have_pub) {
    cJSON_AddNumberToObject(j, "format", pub.format);
    cJSON_AddNumberToObject(j, "protocol_version", pub.protocol_version);
    add_u64(j, "create_s", pub.create_s);
    add_u64(j, "expire_s", pub.expire_s);
    add_hex(j, "id", pub.id, sizeof pub.id);
    add_hex(j, "nonce", pub.nonce, sizeof pub.nonce);
  }
  if (authentic) {
    add_u64(j, "client_id", t.client_id);
    cJSON_AddItemToObject(j, "grant", grant_json(&t.grant));
  }
  char *s = cJSON_Print(j);
  cJSON_Delete(j);
  if (s == NULL) {
    fprintf(stderr, "gk-token: out of memory\n");
    return EXIT_USAGE;
  }
  int ok = printf("%s\n", s) >= 0 && fflush(stdout) == 0;
  cJSON_free(s);
  if (!ok) {
    fprintf(stderr, "gk-token: cannot write: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  return code == 0 ? 0 : EXIT_INVALID;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage("%s", "no command");
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(cmd, "keygen") == 0) return cmd_keygen(argc, argv);
  if (strcmp(cmd, "mint") == 0) return cmd_mint(argc, argv);
  if (strcmp(cmd, "inspect") == 0) return cmd_inspect(argc, argv);
  return usage("unknown command '%s'", cmd);
}
