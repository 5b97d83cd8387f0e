/* gk_fleet_quick.c: quick play in the directory (src/fleet/README.md,
 * "Quick play").
 *
 * A quick-play lobby is an entry of the hash "gk:qp:<kind>" (kind: the
 * hex of what the request asks for, gk_room_quick_key): room code ->
 * "<node> <seated> <seats>", written by the room's node whenever its lobby
 * changes (gk_fleet_quick_set) and taken out when its match starts or the
 * room ends (gk_fleet_quick_gone). Seats promised to players on their way
 * (a REDIRECT) are a sorted set "gk:qr:<code>" of reservations with their
 * deadlines as scores. One script (quick_lua) does the whole choice
 * atomically, so racing requests at any number of nodes never share a
 * seat and never open a second room while one fits:
 *   - the fullest lobby whose seated + live reservations < seats, on a
 *     node that lives (its gk:node key) and is not draining; a new
 *     reservation is added to it;
 *   - else a new room on the least-loaded node (rooms + rooms quick play
 *     made there this TTL, over max_rooms; ties go to the asking node):
 *     the candidate code is SET NX for that node as a room entry, entered
 *     in the hash with 0 seated, and reserved once.
 * Entries whose node or room entry is gone are dropped as they are met.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_fleet_internal.h"

/* ARGV: kind, candidate code, seats, asking node, ttl_ms, reserve_ms,
 * create (1: a new room may be made, 0: lobbies only), ws (1: the player
 * is on WebSocket: another node whose URL is "-" is passed over). Returns
 * {code, node, enet, ws, created} or {"full"}, {"clash"} or {"nocreate"}. */
static const char quick_lua[] =
    "local q='gk:qp:'..ARGV[1] "
    "local t=redis.call('TIME') "
    "local now=t[1]*1000+math.floor(t[2]/1000) "
    "local function nodeof(n) "
    " local v=redis.pcall('GET','gk:node:'..n) "
    " if type(v)~='string' then return nil end "
    " local e,w,r,m,d=string.match(v,'^gk1 (%S+) (%S+) (%d+) (%d+) ([01])$') "
    " if not e then return nil end "
    " if ARGV[8]=='1' and w=='-' and n~=ARGV[4] then d='1' end "
    " return {e=e,w=w,r=tonumber(r),m=tonumber(m),d=d} end "
    "local function reserve(c) "
    " local id=redis.call('INCR','gk:qseq') "
    " redis.call('ZADD','gk:qr:'..c,now+tonumber(ARGV[6]),id) "
    " redis.call('PEXPIRE','gk:qr:'..c,2*tonumber(ARGV[6])) end "
    "local h=redis.pcall('HGETALL',q) "
    "if type(h)~='table' or h.err then redis.call('DEL',q) h={} end "
    "local best,bn,bf=nil,nil,-1 "
    "for i=1,#h-1,2 do "
    " local c,v=h[i],h[i+1] "
    " local n,s,m=string.match(v,'^(%S+) (%d+) (%d+)$') "
    " local nd=n and nodeof(n) "
    " local rv=redis.pcall('GET','gk:room:'..c) "
    " if not nd or type(rv)~='string' or string.match(rv,'^gk1 (%S+)')~=n "
    " then redis.call('HDEL',q,c) redis.pcall('DEL','gk:qr:'..c) "
    " elseif nd.d=='0' then "
    "  redis.pcall('ZREMRANGEBYSCORE','gk:qr:'..c,'-inf',now) "
    "  local k=redis.pcall('ZCARD','gk:qr:'..c) "
    "  if type(k)~='number' then k=0 end "
    "  local fill=tonumber(s)+k "
    "  if fill<tonumber(m) and fill>bf then best,bn,bf=c,n,fill end "
    " end "
    "end "
    "if best then reserve(best) local nd=nodeof(bn) "
    " return {best,bn,nd.e,nd.w,0} end "
    "if ARGV[7]~='1' then return {'nocreate'} end "
    "local pick,pl=nil,nil "
    "for _,n in ipairs(redis.call('SMEMBERS','gk:pubnodes')) do "
    " local nd=nodeof(n) "
    " if nd and nd.d=='0' and nd.m>0 then "
    "  local a=tonumber(redis.pcall('GET','gk:qadd:'..n)) or 0 "
    "  if nd.r+a<nd.m then "
    "   local l=(nd.r+a)/nd.m "
    "   if not pick or l<pl or (l==pl and n==ARGV[4]) then pick,pl=n,l end "
    "  end "
    " end "
    "end "
    "if not pick then return {'full'} end "
    "local nd=nodeof(pick) "
    "if not redis.call('SET','gk:room:'..ARGV[2], "
    " 'gk1 '..pick..' '..nd.e..' '..nd.w,'NX','PX',ARGV[5]) then "
    " return {'clash'} end "
    "redis.call('HSET',q,ARGV[2],pick..' 0 '..ARGV[3]) "
    "redis.call('INCR','gk:qadd:'..pick) "
    "redis.call('PEXPIRE','gk:qadd:'..pick,ARGV[5]) "
    "reserve(ARGV[2]) "
    "return {ARGV[2],pick,nd.e,nd.w,1}";

/* ARGV: kind, code, node, seated, seats, consume (1: a reserved player
 * arrived). 1, or 0 if the entry is another node's. */
static const char set_lua[] =
    "local q='gk:qp:'..ARGV[1] "
    "local v=redis.pcall('HGET',q,ARGV[2]) "
    "if type(v)=='table' then return 0 end "
    "if type(v)=='string' and string.match(v,'^(%S+)')~=ARGV[3] then "
    " return 0 end "
    "if ARGV[6]=='1' then redis.pcall('ZPOPMIN','gk:qr:'..ARGV[2]) end "
    "redis.call('HSET',q,ARGV[2],ARGV[3]..' '..ARGV[4]..' '..ARGV[5]) "
    "return 1";

/* ARGV: kind, code, node. Takes the entry out if it is this node's. */
static const char gone_lua[] =
    "local q='gk:qp:'..ARGV[1] "
    "local v=redis.pcall('HGET',q,ARGV[2]) "
    "if type(v)=='string' and string.match(v,'^(%S+)')==ARGV[3] then "
    " redis.call('HDEL',q,ARGV[2]) redis.pcall('DEL','gk:qr:'..ARGV[2]) "
    " return 1 end "
    "return 0";

static int kind_ok(const char *kind) {
  size_t n = strlen(kind);
  if (n == 0 || n > GK_FLEET_KIND_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789abcdef", kind[i])) return 0;
  return 1;
}

static int send_all(gk_fleet *f, req_kind k, const char *code, void *ctx,
                    int argc, const char **argv) {
  size_t lens[12];
  for (int i = 0; i < argc; i++) lens[i] = strlen(argv[i]);
  return gk_fleet__send(f, k, code, ctx, argc, argv, lens, 0);
}

int gk_fleet_quick(gk_fleet *f, const char *kind, uint32_t seats,
                   const char *candidate, unsigned flags, void *ctx) {
  if (!kind_ok(kind) || !gk_fleet_code_ok(candidate) || seats < 1 ||
      seats > 255)
    return GK_EINVAL;
  if (!f->up || f->closing) return GK_EUNAVAILABLE;
  char n[8], ttl[16], resv[16];
  snprintf(n, sizeof(n), "%" PRIu32, seats);
  snprintf(ttl, sizeof(ttl), "%" PRIu32, f->ttl_ms);
  snprintf(resv, sizeof(resv), "%" PRIu32, GK_FLEET_RESERVE_MS);
  const char *argv[] = {"EVAL",
                        quick_lua,
                        "0",
                        kind,
                        candidate,
                        n,
                        f->node,
                        ttl,
                        resv,
                        flags & GK_FLEET_QUICK_CREATE ? "1" : "0",
                        flags & GK_FLEET_QUICK_WS ? "1" : "0"};
  int rc = send_all(f, REQ_QUICK, candidate, ctx, 11, argv);
  if (!rc) f->stats.quick_asks++;
  return rc;
}

int gk_fleet_quick_set(gk_fleet *f, const char *kind, const char *code,
                       uint32_t seated, uint32_t seats, int consume) {
  if (!kind_ok(kind) || !gk_fleet_code_ok(code) || seated > 255 || seats > 255)
    return GK_EINVAL;
  if (!f->up || f->closing) return GK_EUNAVAILABLE;
  char a[8], b[8];
  snprintf(a, sizeof(a), "%" PRIu32, seated);
  snprintf(b, sizeof(b), "%" PRIu32, seats);
  const char *argv[] = {
      "EVAL", set_lua, "0", kind, code, f->node, a, b, consume ? "1" : "0"};
  return send_all(f, REQ_QSET, code, NULL, 9, argv);
}

int gk_fleet_quick_gone(gk_fleet *f, const char *kind, const char *code) {
  if (!kind_ok(kind) || !gk_fleet_code_ok(code)) return GK_EINVAL;
  if (!f->up || f->closing) return GK_EUNAVAILABLE;
  const char *argv[] = {"EVAL", gone_lua, "0", kind, code, f->node};
  return send_all(f, REQ_QSET, code, NULL, 6, argv);
}

/* The script's {code, node, enet, ws, created}, checked strictly. */
static int seat_parse(const redisReply *r, gk_fleet_seat *s, char *why,
                      size_t cap) {
  memset(s, 0, sizeof(*s));
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
      r->element[0]->type == REDIS_REPLY_STRING) {
    const char *w = r->element[0]->str;
    if (strcmp(w, "full") == 0) {
      snprintf(why, cap, "no node of the fleet takes another room");
      return GK_EFULL;
    }
    if (strcmp(w, "clash") == 0) {
      snprintf(why, cap, "the new room's code is taken");
      return GK_EEXIST;
    }
    if (strcmp(w, "nocreate") == 0) {
      snprintf(why, cap, "no lobby fits, and no room may be made");
      return GK_ELIMIT;
    }
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 5) {
    snprintf(why, cap, "quick play: reply is not the script's array%s%.60s",
             r->type == REDIS_REPLY_ERROR ? ": " : "",
             r->type == REDIS_REPLY_ERROR ? r->str : "");
    return GK_EPROTO;
  }
  for (int i = 0; i < 4; i++)
    if (r->element[i]->type != REDIS_REPLY_STRING ||
        r->element[i]->len > GK_FLEET_ADDR_MAX) {
      snprintf(why, cap, "quick play: reply field %d is no string", i);
      return GK_EPROTO;
    }
  redisReply *const *e = r->element;
  if (e[4]->type != REDIS_REPLY_INTEGER || e[4]->integer < 0 ||
      e[4]->integer > 1 || e[0]->len > GK_FLEET_CODE_MAX) {
    snprintf(why, cap, "quick play: reply is not the script's array");
    return GK_EPROTO;
  }
  memcpy(s->code, e[0]->str, e[0]->len);
  s->code[e[0]->len] = '\0';
  char v[GK_FLEET_VALUE_MAX];
  int n =
      snprintf(v, sizeof(v), "gk1 %.*s %.*s %.*s", (int)e[1]->len, e[1]->str,
               (int)e[2]->len, e[2]->str, (int)e[3]->len, e[3]->str);
  char reason[96];
  if (!gk_fleet_code_ok(s->code) || n < 0 || (size_t)n >= sizeof(v) ||
      gk_fleet_room_parse(v, (size_t)n, &s->where, reason, sizeof(reason))) {
    snprintf(why, cap, "quick play: the entry does not parse: %s",
             gk_fleet_code_ok(s->code) ? reason : "bad code");
    return GK_EPARSE;
  }
  s->created = (int)e[4]->integer;
  return 0;
}

void gk_fleet__quick_reply(gk_fleet *f, const req *q, const redisReply *r) {
  if (q->kind == REQ_QSET) {
    if (r &&
        (r->type != REDIS_REPLY_INTEGER || r->integer < 0 || r->integer > 1))
      gk_fleet__error(f, 1, "quick play seats",
                      r->type == REDIS_REPLY_ERROR ? r->str : "odd reply");
    return;
  }
  gk_fleet_seat s;
  char why[GK_FLEET_TEXT_MAX] = "";
  int rc;
  if (!r) {
    rc = f->closing ? GK_ECLOSED : GK_EUNAVAILABLE;
    snprintf(why, sizeof(why), "room directory connection lost");
    memset(&s, 0, sizeof(s));
  } else {
    rc = seat_parse(r, &s, why, sizeof(why));
  }
  if (rc == GK_EPROTO || rc == GK_EPARSE)
    gk_fleet__error(f, 1, "quick play", why);
  if (rc == 0 && s.created) f->stats.quick_created++;
  if (rc == 0 && !s.created) f->stats.quick_seated++;
  if (rc == GK_EFULL) f->stats.quick_full++;
  if (rc == GK_EEXIST) f->stats.quick_clashes++;
  if (f->hooks.seat)
    f->hooks.seat(f->hooks.user, q->ctx, rc, rc ? NULL : &s, why);
}
