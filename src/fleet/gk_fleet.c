/* gk_fleet.c: the room directory's client, on the caller's uv loop.
 *
 * One hiredis async context at a time, attached to the loop with
 * adapters/libuv.h. One uv timer, every heartbeat_ms, does all the timing:
 *   - up: a command unanswered for two heartbeats drops the connection
 *     (a stopped Redis never answers, and hiredis 0.14 has no timeout;
 *     a time the loop was held up, and read nothing, does not count),
 *     else the heartbeat script runs;
 *   - down: a new connection once the backoff has passed (heartbeat_ms,
 *     doubling to 8 x heartbeat_ms, back to heartbeat_ms once up);
 *   - closing: the connection is freed if it did not end by itself.
 * Every command carries a malloc'd request; hiredis calls each one back
 * exactly once, with NULL when the connection went, so nothing is left
 * pending and nothing is freed twice. The context is freed only from the
 * timer or by hiredis itself, never inside a reply callback.
 */
#include "gk_fleet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "gk_err.h"
#include "gk_fleet_internal.h"

/* Sets the node's key (KEYS[1]); refreshes each room key (KEYS[2..])
 * that holds this node's value, sets those Redis lost, and returns
 * {restored, key, ...}: the keys another node holds (or that are not
 * strings). */
static const char beat_lua[] =
    "redis.call('SET',KEYS[1],ARGV[1],'PX',ARGV[3]) "
    "local out={0} "
    "for i=2,#KEYS do "
    " local v=redis.pcall('GET',KEYS[i]) "
    " if v==ARGV[2] then redis.call('PEXPIRE',KEYS[i],ARGV[3]) "
    " elseif v==false then redis.call('SET',KEYS[i],ARGV[2],'PX',ARGV[3]) "
    "  out[1]=out[1]+1 "
    " else out[#out+1]=KEYS[i] end "
    "end "
    "return out";

/* Registers a code: set if free, refreshed if this node's already (a
 * quick-play room whose code the directory reserved for it); 1, or 0 if
 * another node holds it. */
static const char add_lua[] =
    "local v=redis.pcall('GET',KEYS[1]) "
    "if v==false then redis.call('SET',KEYS[1],ARGV[1],'PX',ARGV[2]) return 1 "
    "elseif v==ARGV[1] then redis.call('PEXPIRE',KEYS[1],ARGV[2]) return 1 end "
    "return 0";

/* Deletes a code's entry only if it is still this node's. */
static const char del_lua[] =
    "local v=redis.pcall('GET',KEYS[1]) "
    "if v==ARGV[1] then return redis.call('DEL',KEYS[1]) end return 0";

/* Public list: node's hash KEYS[1] := ARGV[3..] (code, value; TTL ARGV[2]),
 * node named in set KEYS[2]; returns {node, code, value, ...} of every
 * named node's hash (gone: left out; not a hash: {node, "", ""}). */
static const char pub_lua[] =
    "redis.call('DEL',KEYS[1]) "
    "if #ARGV>2 then redis.call('HSET',KEYS[1],unpack(ARGV,3)) "
    " redis.call('PEXPIRE',KEYS[1],ARGV[2]) end "
    "redis.call('SADD',KEYS[2],ARGV[1]) "
    "local out={} "
    "for _,n in ipairs(redis.call('SMEMBERS',KEYS[2])) do "
    " local h=redis.pcall('HGETALL','gk:pub:'..n) "
    " if type(h)~='table' or h.err then "
    "  out[#out+1]=n out[#out+1]='' out[#out+1]='' "
    " elseif #h==0 then "
    "  if redis.call('EXISTS','gk:node:'..n)==0 then "
    "   redis.call('SREM',KEYS[2],n) end "
    " else for i=1,#h-1,2 do "
    "  out[#out+1]=n out[#out+1]=h[i] out[#out+1]=h[i+1] end end "
    "end "
    "return out";

static void note(gk_fleet *f, const char *event, int code, const char *fmt, ...)
    GK_PRINTF(4, 5);
static void note(gk_fleet *f, const char *event, int code, const char *fmt,
                 ...) {
  if (!f->hooks.note) return;
  char text[GK_FLEET_TEXT_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  f->hooks.note(f->hooks.user, event, code, text);
}

static void room_key(char *out, const char *code) {
  snprintf(out, KEY_MAX, "gk:room:%s", code);
}

/* --- commands ------------------------------------------------------------ */

static void on_reply(redisAsyncContext *ac, void *r, void *priv);

int gk_fleet__send(gk_fleet *f, req_kind kind, const char *code, void *ctx,
                   int argc, const char **argv, const size_t *lens,
                   uint32_t nkeys) {
  if (!f->ac) return GK_EUNAVAILABLE;
  req *q = calloc(1, sizeof(*q));
  if (!q) return GK_ENOMEM;
  q->f = f;
  q->kind = kind;
  q->ctx = ctx;
  q->nkeys = nkeys;
  if (code) snprintf(q->code, sizeof(q->code), "%s", code);
  if (redisAsyncCommandArgv(f->ac, on_reply, q, argc, argv, lens) != REDIS_OK) {
    free(q);
    return GK_EUNAVAILABLE;
  }
  if (f->pending++ == 0) f->progress_ms = uv_now(f->loop);
  f->stats.commands++;
  return 0;
}

static int send_strs(gk_fleet *f, req_kind kind, const char *code, void *ctx,
                     int argc, const char **argv) {
  size_t lens[8];
  for (int i = 0; i < argc; i++) lens[i] = strlen(argv[i]);
  return gk_fleet__send(f, kind, code, ctx, argc, argv, lens, 0);
}

static void heartbeat(gk_fleet *f);
static void fill_pool(gk_fleet *f);
static void public_refresh(gk_fleet *f);

/* The connection is usable: registered codes are refreshed at once. */
static void went_up(gk_fleet *f) {
  f->up = 1;
  f->backoff_ms = f->heartbeat_ms;
  if (f->ever_up++) f->stats.reconnects++;
  f->stats.connects++;
  note(f, "fleet_up", 0, "room directory reachable; %u codes to refresh",
       f->ncodes);
  heartbeat(f);
  fill_pool(f);
  public_refresh(f);
}

void gk_fleet__error(gk_fleet *f, int bad, const char *what,
                     const char *detail) {
  f->stats.errors++;
  if (bad) f->stats.bad_replies++;
  note(f, "fleet_error", bad ? GK_EPROTO : GK_EIO, "%s: %s", what, detail);
}

/* A code another node holds now (or a key that is not ours to refresh):
 * this node keeps its room, but no longer answers for it in the fleet. */
static void drop_code(gk_fleet *f, uint32_t i) {
  f->stats.code_clashes++;
  note(f, "fleet_error", GK_EEXIST,
       "room %s: its directory entry is another node's or not a room; the "
       "room plays on, reachable here only",
       f->codes[i]);
  f->codes[i][0] = '\0'; /* compacted by the caller */
}

static void compact(gk_fleet *f) {
  uint32_t o = 0;
  for (uint32_t i = 0; i < f->ncodes; i++)
    if (f->codes[i][0])
      memmove(f->codes[o++], f->codes[i], sizeof(f->codes[0]));
  f->ncodes = o;
}

/* --- the pool ------------------------------------------------------------ */

/* Asks Redis for every empty place of the pool: SET NX of a candidate. */
static void fill_pool(gk_fleet *f) {
  if (!f->up || f->closing || !f->hooks.make_code) return;
  for (uint32_t i = 0; i < GK_FLEET_POOL; i++) {
    if (f->pool_state[i] != POOL_EMPTY) continue;
    if (f->hooks.make_code(f->hooks.user, f->pool[i]) != 0 ||
        !gk_fleet_code_ok(f->pool[i]))
      return;
    char key[KEY_MAX], ttl[16];
    room_key(key, f->pool[i]);
    snprintf(ttl, sizeof(ttl), "%u", f->ttl_ms);
    const char *argv[] = {"SET", key, f->room_value, "NX", "PX", ttl};
    size_t lens[6];
    for (int k = 0; k < 6; k++) lens[k] = strlen(argv[k]);
    if (gk_fleet__send(f, REQ_RESERVE, f->pool[i], NULL, 6, argv, lens, i) != 0)
      return;
    f->pool_state[i] = POOL_ASKING;
  }
}

/* A reservation's answer: OK (ours now), nil (another node's: a new
 * candidate at the next heartbeat) or anything else (an error). */
static void reserve_reply(gk_fleet *f, const req *q, const redisReply *r) {
  uint32_t i = q->nkeys;
  if (i >= GK_FLEET_POOL || f->pool_state[i] != POOL_ASKING ||
      strcmp(f->pool[i], q->code) != 0)
    return; /* the connection went meanwhile: the place was emptied */
  if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
    f->pool_state[i] = POOL_READY;
    f->stats.reserved++;
    return;
  }
  f->pool_state[i] = POOL_EMPTY;
  if (r->type != REDIS_REPLY_NIL)
    gk_fleet__error(f, 1, "reserve",
                    r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
}

/* The connection went: reservations in flight are forgotten (those
 * made stay in Redis until their TTL, and are refreshed if it comes
 * back in time). */
static void pool_down(gk_fleet *f) {
  for (uint32_t i = 0; i < GK_FLEET_POOL; i++)
    if (f->pool_state[i] == POOL_ASKING) f->pool_state[i] = POOL_EMPTY;
}

int gk_fleet_take_code(gk_fleet *f, char out[GK_FLEET_CODE_MAX + 1]) {
  if (!f->up || f->ncodes >= f->max_rooms) { /* a TTL may have run out */
    f->stats.pool_empty++;
    return GK_ENOTFOUND;
  }
  for (uint32_t i = 0; i < GK_FLEET_POOL; i++) {
    if (f->pool_state[i] != POOL_READY) continue;
    memcpy(out, f->pool[i], sizeof(f->pool[i]));
    memcpy(f->codes[f->ncodes++], f->pool[i], sizeof(f->pool[i]));
    f->pool_state[i] = POOL_EMPTY;
    fill_pool(f);
    return 0;
  }
  f->stats.pool_empty++;
  return GK_ENOTFOUND;
}

/* The heartbeat's answer: {restored, key, ...}. */
static void beat_reply(gk_fleet *f, const req *q, const redisReply *r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->elements > 1 + (size_t)q->nkeys ||
      r->element[0]->type != REDIS_REPLY_INTEGER ||
      r->element[0]->integer < 0 ||
      r->element[0]->integer > (long long)q->nkeys) {
    gk_fleet__error(f, 1, "heartbeat", "reply is not the script's array");
    return;
  }
  for (size_t i = 1; i < r->elements; i++) {
    const redisReply *e = r->element[i];
    if (e->type != REDIS_REPLY_STRING || e->len < 8 ||
        e->len > 8 + GK_FLEET_CODE_MAX || memcmp(e->str, "gk:room:", 8) != 0) {
      gk_fleet__error(f, 1, "heartbeat", "reply holds a bad key");
      return;
    }
  }
  f->stats.heartbeats++;
  f->stats.restored += (uint64_t)r->element[0]->integer;
  for (size_t i = 1; i < r->elements; i++) {
    const redisReply *e = r->element[i];
    for (uint32_t k = 0; k < f->ncodes; k++)
      if (strlen(f->codes[k]) == e->len - 8 &&
          memcmp(f->codes[k], e->str + 8, e->len - 8) == 0)
        drop_code(f, k);
    for (uint32_t k = 0; k < GK_FLEET_POOL; k++)
      if (f->pool_state[k] == POOL_READY && strlen(f->pool[k]) == e->len - 8 &&
          memcmp(f->pool[k], e->str + 8, e->len - 8) == 0)
        f->pool_state[k] = POOL_EMPTY; /* lost to another node */
  }
  compact(f);
  fill_pool(f);
}

static void lookup_reply(gk_fleet *f, const req *q, const redisReply *r) {
  gk_fleet_where w;
  char why[GK_FLEET_TEXT_MAX];
  f->stats.lookups++;
  if (r->type != REDIS_REPLY_STRING) {
    f->stats.lookups_failed++;
    snprintf(why, sizeof(why),
             "room %s: directory reply is not a string%s%.60s", q->code,
             r->type == REDIS_REPLY_ERROR ? ": " : "",
             r->type == REDIS_REPLY_ERROR ? r->str : "");
    gk_fleet__error(f, 1, "lookup", why);
    f->hooks.found(f->hooks.user, q->ctx, GK_EPROTO, NULL, why);
    return;
  }
  if (r->len == 0) { /* GETRANGE of a missing key */
    f->stats.lookups_missed++;
    f->hooks.found(f->hooks.user, q->ctx, GK_ENOTFOUND, NULL, "no such room");
    return;
  }
  char reason[96];
  if (gk_fleet_room_parse(r->str, r->len, &w, reason, sizeof(reason)) != 0) {
    f->stats.lookups_failed++;
    snprintf(why, sizeof(why), "room %s: directory entry does not parse: %s",
             q->code, reason);
    gk_fleet__error(f, 1, "lookup", why);
    f->hooks.found(f->hooks.user, q->ctx, GK_EPARSE, NULL, why);
    return;
  }
  if (strcmp(w.node, f->node) == 0 && q->nkeys != 1) { /* our own, of a room
                                                          that just went */
    f->stats.lookups_missed++;
    f->hooks.found(f->hooks.user, q->ctx, GK_ENOTFOUND, NULL, "no such room");
    return;
  }
  f->hooks.found(f->hooks.user, q->ctx, 0, &w, "");
}

/* --- the public list ----------------------------------------------------- */

static void public_reply(gk_fleet *f, const redisReply *r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements % 3 != 0) {
    gk_fleet__error(f, 1, "public list",
                    r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
    return;
  }
  uint32_t n = 0, bad = 0;
  char why[96] = "", first[96] = "";
  for (size_t i = 0; i + 2 < r->elements && n < GK_FLEET_PUB_MAX; i += 3) {
    redisReply *const *e = &r->element[i];
    int strs = e[0]->type == REDIS_REPLY_STRING &&
               e[1]->type == REDIS_REPLY_STRING &&
               e[2]->type == REDIS_REPLY_STRING;
    if (strs && gk_fleet_pub_entry(e[0]->str, e[0]->len, e[1]->str, e[1]->len,
                                   e[2]->str, e[2]->len, &f->pub_next[n], why,
                                   sizeof(why)) == 0)
      n++;
    else if (bad++ == 0)
      snprintf(first, sizeof(first), "%s", strs ? why : "not three strings");
  }
  gk_fleet_pub *t = f->pub;
  f->pub = f->pub_next;
  f->pub_next = t;
  f->npub = n;
  f->stats.public_refreshes++;
  f->stats.public_bad += bad; /* a line when bad entries first appear */
  if (bad && !f->pub_bad) {
    f->stats.bad_replies++;
    f->stats.errors++;
    note(f, "fleet_error", GK_EPARSE,
         "public list (gk:pub:*): %u entries do not parse (skipped): %s", bad,
         first);
  }
  f->pub_bad = bad;
}

/* Publishes this node's public rooms and reads the fleet's (pub_lua). */
static void public_refresh(gk_fleet *f) {
  if (!f->up || f->closing || f->pub_asking) return;
  uint32_t n = f->hooks.listed ? f->hooks.listed(f->hooks.user, f->pub_mine,
                                                 GK_FLEET_PUB_MAX)
                               : 0;
  if (n > GK_FLEET_PUB_MAX) n = GK_FLEET_PUB_MAX;
  int argc = 7 + 2 * (int)n;
  const char **argv = malloc(sizeof(*argv) * (size_t)argc);
  size_t *lens = malloc(sizeof(*lens) * (size_t)argc);
  char(*vals)[64] = malloc(64 * (size_t)(n ? n : 1));
  char key[KEY_MAX], ttl[16];
  if (!argv || !lens || !vals) {
    free(argv);
    free(lens);
    free(vals);
    gk_fleet__error(f, 0, "public list", "out of memory");
    return;
  }
  snprintf(key, sizeof(key), "gk:pub:%s", f->node);
  snprintf(ttl, sizeof(ttl), "%u", f->ttl_ms);
  int a = 0;
  argv[a++] = "EVAL";
  argv[a++] = pub_lua;
  argv[a++] = "2";
  argv[a++] = key;
  argv[a++] = "gk:pubnodes";
  argv[a++] = f->node;
  argv[a++] = ttl;
  for (uint32_t i = 0; i < n; i++) {
    if (!gk_fleet_code_ok(f->pub_mine[i].code) ||
        gk_fleet_pub_value(&f->pub_mine[i], vals[i], sizeof(vals[i])) != 0)
      continue; /* the owner's bug: not published */
    argv[a++] = f->pub_mine[i].code;
    argv[a++] = vals[i];
  }
  for (int i = 0; i < a; i++) lens[i] = strlen(argv[i]);
  int rc = gk_fleet__send(f, REQ_PUBLIC, NULL, NULL, a, argv, lens, 0);
  if (rc)
    gk_fleet__error(f, 0, "public list", gk_strerror(rc));
  else
    f->pub_asking = 1;
  free(argv);
  free(lens);
  free(vals);
}

uint32_t gk_fleet_public(const gk_fleet *f, const gk_fleet_pub **out) {
  *out = f->pub;
  return f->npub;
}

/* A reply to a request of ours (NULL: the connection went first). */
static void on_reply(redisAsyncContext *ac, void *rv, void *priv) {
  (void)ac;
  req *q = priv;
  gk_fleet *f = q->f;
  const redisReply *r = rv;
  if (f->pending) f->pending--;
  f->progress_ms = uv_now(f->loop);
  if (!r) {
    if (q->kind == REQ_PUBLIC) f->pub_asking = 0;
    if (q->kind == REQ_QUICK || q->kind == REQ_QSET)
      gk_fleet__quick_reply(f, q, NULL);
    if (q->kind == REQ_LOOKUP) {
      f->stats.lookups_failed++;
      f->hooks.found(f->hooks.user, q->ctx,
                     f->closing ? GK_ECLOSED : GK_EUNAVAILABLE, NULL,
                     "room directory connection lost");
    }
    free(q);
    return;
  }
  switch (q->kind) {
  case REQ_AUTH: /* AUTH (OK) or PING (PONG): the first answer */
    if (r->type == REDIS_REPLY_STATUS &&
        (strcmp(r->str, "OK") == 0 || strcmp(r->str, "PONG") == 0)) {
      went_up(f);
    } else {
      gk_fleet__error(f, r->type != REDIS_REPLY_ERROR, "AUTH",
                      r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
      if (f->ac) redisAsyncDisconnect(f->ac);
    }
    break;
  case REQ_BEAT:
    beat_reply(f, q, r);
    break;
  case REQ_RESERVE:
    reserve_reply(f, q, r);
    break;
  case REQ_ADD: /* add_lua: 1 ours, 0 another node's */
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 0) {
      for (uint32_t i = 0; i < f->ncodes; i++)
        if (strcmp(f->codes[i], q->code) == 0) drop_code(f, i);
      compact(f);
    } else if (r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
      gk_fleet__error(f, 1, "register",
                      r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
    }
    break;
  case REQ_DEL:
    if (r->type != REDIS_REPLY_INTEGER)
      gk_fleet__error(f, 1, "unregister",
                      r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
    break;
  case REQ_LOOKUP:
    lookup_reply(f, q, r);
    break;
  case REQ_PUBLIC:
    f->pub_asking = 0;
    public_reply(f, r);
    break;
  case REQ_QUICK:
  case REQ_QSET:
    gk_fleet__quick_reply(f, q, r);
    break;
  }
  free(q);
}

/* --- the heartbeat ------------------------------------------------------- */

static void heartbeat(gk_fleet *f) {
  if (!f->up || f->closing) return;
  uint32_t n = f->ncodes, ready = 0;
  for (uint32_t i = 0; i < GK_FLEET_POOL; i++)
    ready += f->pool_state[i] == POOL_READY;
  n += ready;
  int argc = 3 + 1 + (int)n + 3;
  const char **argv = malloc(sizeof(*argv) * (size_t)argc);
  size_t *lens = malloc(sizeof(*lens) * (size_t)argc);
  char(*keys)[KEY_MAX] = malloc(KEY_MAX * (size_t)(n ? n : 1));
  char nkeys[16], ttl[16], nodeval[GK_FLEET_VALUE_MAX];
  if (!argv || !lens || !keys) {
    free(argv);
    free(lens);
    free(keys);
    gk_fleet__error(f, 0, "heartbeat", "out of memory");
    return;
  }
  snprintf(nkeys, sizeof(nkeys), "%u", n + 1);
  snprintf(ttl, sizeof(ttl), "%u", f->ttl_ms);
  snprintf(nodeval, sizeof(nodeval), "gk1 %s %s %u %u %d", f->enet,
           f->ws_url[0] ? f->ws_url : "-", f->ncodes, f->max_rooms,
           f->draining);
  int a = 0;
  argv[a++] = "EVAL";
  argv[a++] = beat_lua;
  argv[a++] = nkeys;
  argv[a++] = f->node_key;
  uint32_t k = 0;
  for (uint32_t i = 0; i < f->ncodes; i++, k++) {
    room_key(keys[k], f->codes[i]);
    argv[a++] = keys[k];
  }
  for (uint32_t i = 0; i < GK_FLEET_POOL; i++)
    if (f->pool_state[i] == POOL_READY) {
      room_key(keys[k], f->pool[i]);
      argv[a++] = keys[k++];
    }
  argv[a++] = nodeval;
  argv[a++] = f->room_value;
  argv[a++] = ttl;
  for (int i = 0; i < a; i++) lens[i] = strlen(argv[i]);
  int rc = gk_fleet__send(f, REQ_BEAT, NULL, NULL, a, argv, lens, n);
  if (rc) gk_fleet__error(f, 0, "heartbeat", gk_strerror(rc));
  free(argv);
  free(lens);
  free(keys);
}

/* --- the connection ------------------------------------------------------ */

static void on_connect(const redisAsyncContext *ac, int status) {
  gk_fleet *f = ac->data;
  if (f->ac != ac) return;
  if (status != REDIS_OK) {
    /* hiredis frees the context after this; no disconnect callback */
    f->ac = NULL;
    f->pending = 0;
    note(f, "fleet_down", GK_EUNAVAILABLE,
         "room directory unreachable: %.100s; retry in %u ms", ac->errstr,
         f->backoff_ms);
    return;
  }
  if (!f->password[0]) { /* up once Redis answers, not when the socket
                           connects (a stopped Redis's backlog does) */
    const char *argv[] = {"PING"};
    send_strs(f, REQ_AUTH, NULL, NULL, 1, argv);
  }
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
  gk_fleet *f = ac->data;
  if (f->ac != ac) return; /* dropped by us: already accounted */
  f->ac = NULL;
  f->pending = 0;
  pool_down(f);
  int was_up = f->up;
  f->up = 0;
  f->retry_ms = uv_now(f->loop) + f->backoff_ms;
  if (was_up) f->stats.disconnects++;
  if (!f->closing)
    note(f, "fleet_down", GK_EUNAVAILABLE,
         "room directory connection lost%s%.100s; local rooms play on",
         status == REDIS_OK ? "" : ": ", status == REDIS_OK ? "" : ac->errstr);
}

static void start_connect(gk_fleet *f) {
  redisAsyncContext *ac = f->unix_path[0] ? redisAsyncConnectUnix(f->unix_path)
                                          : redisAsyncConnect(f->host, f->port);
  uint64_t now = uv_now(f->loop);
  f->retry_ms = now + f->backoff_ms;
  f->backoff_ms = f->backoff_ms * 2 > f->heartbeat_ms * BACKOFF_MAX_X
                      ? f->heartbeat_ms * BACKOFF_MAX_X
                      : f->backoff_ms * 2;
  if (!ac) return;
  if (ac->err || redisLibuvAttach(ac, f->loop) != REDIS_OK) {
    note(f, "fleet_down", GK_EUNAVAILABLE, "room directory unreachable: %.100s",
         ac->err ? ac->errstr : "cannot watch the socket");
    redisAsyncFree(ac);
    return;
  }
  ac->data = f;
  f->ac = ac;
  f->pending = 0;
  f->progress_ms = now;
  redisAsyncSetConnectCallback(ac, on_connect);
  redisAsyncSetDisconnectCallback(ac, on_disconnect);
  if (f->password[0]) {
    const char *argv[] = {"AUTH", f->password};
    send_strs(f, REQ_AUTH, NULL, NULL, 2, argv);
  }
}

/* Ends the connection now; hiredis answers what was in flight with NULL. */
static void drop(gk_fleet *f) {
  redisAsyncContext *ac = f->ac;
  f->ac = NULL;
  pool_down(f);
  if (f->up) f->stats.disconnects++;
  f->up = 0;
  f->pending = 0;
  f->retry_ms = uv_now(f->loop) + f->backoff_ms;
  redisAsyncFree(ac);
}

static void on_timer_closed(uv_handle_t *h) {
  gk_fleet *f = h->data;
  void (*closed)(void *) = f->hooks.closed;
  void *user = f->hooks.user;
  free(f->codes);
  free(f->pub);
  free(f->pub_next);
  free(f->pub_mine);
  free(f);
  if (closed) closed(user);
}

static void on_tick(uv_timer_t *t) {
  gk_fleet *f = t->data;
  uint64_t now = uv_now(f->loop);
  /* A tick later than a heartbeat: the loop was held up (a long step, a
   * stopped process) and read nothing meanwhile; that time is not
   * Redis's silence, and the wait starts that much later. */
  uint64_t gap = now - f->tick_ms;
  if (gap > f->heartbeat_ms) {
    uint64_t held = gap - f->heartbeat_ms;
    f->progress_ms = f->progress_ms + held < now ? f->progress_ms + held : now;
  }
  f->tick_ms = now;
  int stuck = f->ac && (f->pending || !f->up) &&
              now - f->progress_ms >= 2u * (uint64_t)f->heartbeat_ms;
  if (f->closing) { /* what is in flight gets a second at most */
    if (f->ac && now - f->closing_ms >= CLOSE_WAIT_MS) drop(f);
    if (!f->ac && !f->closed) {
      f->closed = 1;
      uv_close((uv_handle_t *)&f->timer, on_timer_closed);
    }
    return;
  }
  if (stuck) {
    f->stats.timeouts++;
    gk_fleet__error(f, 0, "connection",
                    "no answer for two heartbeats; dropped, reconnecting");
    drop(f);
    return;
  }
  if (f->up) {
    heartbeat(f);
    public_refresh(f);
  } else if (!f->ac && now >= f->retry_ms)
    start_connect(f);
}

/* --- the API ------------------------------------------------------------- */

static int copy(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) return GK_EINVAL;
  memcpy(dst, src ? src : "", n + 1);
  return 0;
}

int gk_fleet_start(uv_loop_t *loop, const gk_fleet_config *cfg,
                   const gk_fleet_hooks *hooks, gk_fleet **out) {
  *out = NULL;
  if (!cfg->node || !cfg->node[0] || !cfg->enet || !cfg->enet[0] ||
      !hooks->found || cfg->heartbeat_ms == 0 || cfg->max_rooms == 0)
    return GK_EINVAL;
  gk_fleet *f = calloc(1, sizeof(*f));
  if (!f) return GK_ENOMEM;
  f->codes = calloc(cfg->max_rooms, sizeof(f->codes[0]));
  f->pub = calloc(GK_FLEET_PUB_MAX, sizeof(*f->pub));
  f->pub_next = calloc(GK_FLEET_PUB_MAX, sizeof(*f->pub));
  f->pub_mine = calloc(GK_FLEET_PUB_MAX, sizeof(*f->pub));
  int rc = f->codes && f->pub && f->pub_next && f->pub_mine ? 0 : GK_ENOMEM;
  if (!rc) rc = copy(f->host, sizeof(f->host), cfg->host);
  if (!rc) rc = copy(f->unix_path, sizeof(f->unix_path), cfg->unix_path);
  if (!rc) rc = copy(f->password, sizeof(f->password), cfg->password);
  if (!rc) rc = copy(f->node, sizeof(f->node), cfg->node);
  if (!rc) rc = copy(f->enet, sizeof(f->enet), cfg->enet);
  if (!rc) rc = copy(f->ws_url, sizeof(f->ws_url), cfg->ws_url);
  if (!rc)
    rc = gk_fleet_room_value(f->node, f->enet, f->ws_url, f->room_value,
                             sizeof(f->room_value));
  if (rc) {
    free(f->codes);
    free(f->pub);
    free(f->pub_next);
    free(f->pub_mine);
    free(f);
    return rc == GK_ENOMEM ? rc : GK_EINVAL;
  }
  snprintf(f->node_key, sizeof(f->node_key), "gk:node:%s", f->node);
  f->loop = loop;
  f->hooks = *hooks;
  f->port = cfg->port;
  f->heartbeat_ms = cfg->heartbeat_ms;
  f->ttl_ms = cfg->ttl_ms;
  f->max_rooms = cfg->max_rooms;
  f->backoff_ms = cfg->heartbeat_ms;
  uv_timer_init(loop, &f->timer);
  f->timer.data = f;
  f->tick_ms = uv_now(loop);
  uv_timer_start(&f->timer, on_tick, cfg->heartbeat_ms, cfg->heartbeat_ms);
  start_connect(f);
  *out = f;
  return 0;
}

void gk_fleet_close(gk_fleet *f) {
  if (f->closing) return;
  f->closing = 1;
  f->closing_ms = uv_now(f->loop);
  f->up = 0;
  if (f->ac) redisAsyncDisconnect(f->ac); /* after what is in flight */
  /* the timer finishes: at once if the connection is gone by then */
  uv_timer_start(&f->timer, on_tick, 0, CLOSE_TICK_MS);
}

int gk_fleet_up(const gk_fleet *f) {
  return f->up;
}

int gk_fleet_room_add(gk_fleet *f, const char *code) {
  if (!gk_fleet_code_ok(code)) return GK_EINVAL;
  for (uint32_t i = 0; i < f->ncodes; i++)
    if (strcmp(f->codes[i], code) == 0) return 0; /* from the pool */
  if (f->ncodes >= f->max_rooms) return GK_EFULL;
  snprintf(f->codes[f->ncodes++], sizeof(f->codes[0]), "%s", code);
  if (!f->up) return 0; /* the heartbeat after the connection sets it */
  char key[KEY_MAX], ttl[16];
  room_key(key, code);
  snprintf(ttl, sizeof(ttl), "%u", f->ttl_ms);
  const char *argv[] = {"EVAL", add_lua, "1", key, f->room_value, ttl};
  int rc = send_strs(f, REQ_ADD, code, NULL, 6, argv);
  if (rc) gk_fleet__error(f, 0, "register", gk_strerror(rc));
  return 0;
}

int gk_fleet_room_remove(gk_fleet *f, const char *code) {
  uint32_t i = 0;
  while (i < f->ncodes && strcmp(f->codes[i], code) != 0) i++;
  if (i == f->ncodes) return GK_ENOTFOUND;
  f->codes[i][0] = '\0';
  compact(f);
  if (!f->up) return 0; /* its entry expires */
  char key[KEY_MAX];
  room_key(key, code);
  const char *argv[] = {"EVAL", del_lua, "1", key, f->room_value};
  int rc = send_strs(f, REQ_DEL, code, NULL, 5, argv);
  if (rc) gk_fleet__error(f, 0, "unregister", gk_strerror(rc));
  return 0;
}

uint32_t gk_fleet_rooms(const gk_fleet *f) {
  return f->ncodes;
}

void gk_fleet_set_draining(gk_fleet *f, int draining) {
  f->draining = draining ? 1 : 0;
}

/* A lookup (claim 0) or a claim (1: this node's own entry is an answer). */
static int lookup(gk_fleet *f, const char *code, void *ctx, uint32_t claim) {
  if (!gk_fleet_code_ok(code)) return GK_EINVAL;
  if (!f->up || f->closing) return GK_EUNAVAILABLE;
  char key[KEY_MAX], last[8];
  room_key(key, code);
  snprintf(last, sizeof(last), "%d", GK_FLEET_VALUE_MAX); /* one byte more
                                                             than allowed */
  const char *argv[] = {"GETRANGE", key, "0", last};
  size_t lens[4];
  for (int i = 0; i < 4; i++) lens[i] = strlen(argv[i]);
  return gk_fleet__send(f, REQ_LOOKUP, code, ctx, 4, argv, lens, claim);
}

int gk_fleet_lookup(gk_fleet *f, const char *code, void *ctx) {
  return lookup(f, code, ctx, 0);
}

int gk_fleet_claim(gk_fleet *f, const char *code, void *ctx) {
  return lookup(f, code, ctx, 1);
}

const gk_fleet_stats *gk_fleet_stats_of(const gk_fleet *f) {
  return &f->stats;
}
