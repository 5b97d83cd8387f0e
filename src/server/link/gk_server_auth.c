/* gk_server_auth.c: who may ask for rooms, and how often: connect tokens
 * and abuse limits.
 *
 * Connect tokens. With auth.mode "token", CREATE_ROOM, JOIN_ROOM,
 * REJOIN_ROOM and SPECTATE carry a connect token (src/token/gk_token.h)
 * minted by a backend that shares the server's key (a rejoin: a join
 * token for that room as a player, for its slot or any, whose client id
 * is the slot's at MATCH_START; a spectator: a join token for that room
 * as a spectator). Before the room code sees a request, sv_auth_request
 * opens its token with the wall clock and checks, in this order, each
 * refusal with its own ERROR code and counter:
 *   no token                                 GK_ENOTOKEN   auth_missing
 *   size, magic, format, version, private part  (gk_token_open's code)
 *                                                          auth_malformed
 *   wrong key or tampered                    GK_EAUTH      auth_bad
 *   expired, or issued in the future         GK_EEXPIRED / GK_ENOTYET
 *                                                          auth_expired
 *   another kind, genre, player count, room, slot, or a connection bound
 *   to another client id                     GK_EGRANT     auth_grant
 *   a spectator's token for a player (or the reverse)
 *                                            GK_EROLE      auth_role
 *   rooms per minute for this client id      GK_ELIMIT     limit_create_rate
 *   a token id admitted before               GK_EEXIST     auth_reused
 *   the replay cache full of unexpired ids   GK_EFULL      auth_full
 * A token is spent (its id kept until it expires) by the first request it
 * passes, even if the room then refuses it (full, started): the backend
 * mints another. The connection is bound to the token's client id.
 *
 * Abuse limits ("limits" in the config; 0 turns one off), in both modes:
 * connections at once per IP and new connections per IP per second
 * (checked on connect: a connection over a limit is dropped at once, with
 * no reply), rooms created per minute per client id (token mode) or per
 * IP (open mode; a QUICK_PLAY that makes a room counts as one: see
 * sv_auth_quick_create), and a handshake deadline for connections that never
 * have a room request accepted (the sweep drops them). Every refusal is
 * counted; a "limit" record is logged at most once per source per
 * limits.log_interval_ms, with the count of refusals not logged.
 *
 * Amplification: before one of its requests is accepted, a connection
 * over a datagram transport (ENet) never gets a reply larger than the
 * datagram that caused it (an ERROR's text is left out, its code sent; or
 * nothing is sent): see sv_auth_reply_cap. A WebSocket's address was
 * proved by TCP's handshake: its replies are whole.
 *
 * Tables are bounded: the per-IP table has 2 * limits.peers entries, the
 * creators' table 2 * limits.rooms (at least 256); when one is full the
 * entry used longest ago that holds no connection is evicted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_internal.h"

_Static_assert(GK_WIRE_TOKEN_BYTES == GK_TOKEN_BYTES, "token size");
_Static_assert(GK_WIRE_CODE_LEN == GK_TOKEN_CODE_LEN, "room code length");
_Static_assert((int)GK_WIRE_ROLE_SPECTATOR == (int)GK_TOKEN_SPECTATOR, "roles");

#define CREATE_WINDOW_MS 60000u
#define CONNECT_WINDOW_MS 1000u
#define OPEN_KEY_IP (UINT64_C(1) << 63) /* open mode: creators by IP */

/* --- a connection's part ------------------------------------------------- */

/* A connection's admission state, kept by the slot of its id in a table of
 * this file (s->auth.conns, max_peers entries, reset by sv_auth_connect):
 * no other file sees its fields. */
struct sv_admit {
  uint64_t connected_ms; /* the handshake deadline counts from here */
  int ip_counted;        /* counted in the per-IP table (link->addr_key) */
  int admitted;          /* a room request of it was accepted */
  size_t req_len;        /* bytes of its last datagram: an ERROR to a
                            connection not admitted is never larger */
  int client_bound;      /* a token bound it to client_id */
  uint64_t client_id;
  uint32_t create_players; /* the last create token's grant: max players */
};

/* The admission state of a live connection id, or NULL. */
static sv_admit *admit_of(const gk_server *s, uint32_t peer) {
  uint32_t slot = sv_ids_find(&s->ids, peer);
  if (slot == SV_IDS_MAX || s->auth.conns == NULL) return NULL;
  return &s->auth.conns[slot];
}

void sv_auth_admit(gk_server *s, uint32_t peer) {
  sv_admit *n = admit_of(s, peer);
  if (n) n->admitted = 1;
}

int sv_auth_admitted(const gk_server *s, uint32_t peer) {
  const sv_admit *n = admit_of(s, peer);
  return n != NULL && n->admitted;
}

void sv_auth_datagram(gk_server *s, uint32_t peer, size_t len) {
  sv_admit *n = admit_of(s, peer);
  if (n) n->req_len = len;
}

/* --- a connection's client id ------------------------------------------- */

int sv_auth_client_id(const gk_server *s, uint32_t peer, uint64_t *out) {
  const sv_admit *n = admit_of(s, peer);
  if (!n || !n->client_bound) return 0;
  *out = n->client_id;
  return 1;
}

/* --- bounded source tables ------------------------------------------------ */

/* The entry for `key`, added if new (evicting the idle entry used longest
 * ago when full). NULL only if every entry holds a connection. */
static sv_src *src_get(sv_src *t, uint32_t n, uint64_t key, uint64_t now) {
  sv_src *victim = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].used && t[i].key == key) {
      t[i].seen_ms = now;
      return &t[i];
    }
    if (t[i].conns == 0 && (!victim || !t[i].used ||
                            (victim->used && t[i].seen_ms < victim->seen_ms)))
      victim = &t[i];
  }
  if (!victim) return NULL;
  memset(victim, 0, sizeof(*victim));
  victim->used = 1;
  victim->key = key;
  victim->seen_ms = now;
  return victim;
}

/* Counts one event in the source's window; 1 if that passes `limit`. */
static int src_rate(sv_src *e, uint32_t limit, uint64_t window_ms,
                    uint64_t now) {
  if (now - e->win_ms >= window_ms || now < e->win_ms) {
    e->win_ms = now;
    e->win_n = 0;
  }
  if (e->win_n < UINT32_MAX) e->win_n++;
  return limit && e->win_n > limit;
}

/* One refusal by limit `what` for source e (may be NULL): logged if the
 * source was not logged within the interval, else counted as suppressed.
 * addr: the link's address as text, or NULL (a client id's limit). */
static void limit_log(gk_server *s, sv_src *e, const char *what,
                      const char *addr, const uint64_t *client) {
  uint64_t now = sv_now_ms(s);
  if (e && e->logged && now - e->logged_ms < s->cfg->limit_log_ms) {
    e->suppressed++;
    return;
  }
  if (gk_log_begin(s->log, GK_LOG_WARN, "limit", NULL)) {
    gk_log_str(s->log, "limit", what);
    if (addr) gk_log_str(s->log, "ip", addr);
    if (client) gk_log_u64(s->log, "client", *client);
    gk_log_u64(s->log, "suppressed", e ? e->suppressed : 0);
    gk_log_end(s->log);
  }
  if (e) {
    e->logged = 1;
    e->logged_ms = now;
    e->suppressed = 0;
  }
}

/* --- lifecycle ------------------------------------------------------------ */

int sv_auth_init(gk_server *s, char *err, size_t errlen) {
  const gk_server_config *c = s->cfg;
  sv_auth *a = &s->auth;
  memset(a, 0, sizeof(*a));
  if (c->auth_mode == GK_AUTH_TOKEN) {
    char why[GK_SERVER_CONFIG_ERR_MAX];
    int rc = gk_token_key_load(c->auth_key_file, a->key, why, sizeof(why));
    if (rc) return gk_errf(err, errlen, rc, "auth.key_file: %s", why);
    a->seen_store = calloc(c->auth_replay_cache, sizeof(*a->seen_store));
    if (!a->seen_store ||
        gk_token_seen_init(&a->seen, a->seen_store, c->auth_replay_cache)) {
      sv_auth_free(s);
      return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
    }
  }
  a->nips = 2u * c->max_peers;
  a->ncreators = 2u * c->max_rooms < 256u ? 256u : 2u * c->max_rooms;
  a->ips = calloc(a->nips, sizeof(*a->ips));
  a->creators = calloc(a->ncreators, sizeof(*a->creators));
  a->conns = calloc(c->max_peers, sizeof(*a->conns));
  if (!a->ips || !a->creators || !a->conns) {
    sv_auth_free(s);
    return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  }
  return 0;
}

void sv_auth_free(gk_server *s) {
  sv_auth *a = &s->auth;
  free(a->seen_store);
  free(a->ips);
  free(a->creators);
  free(a->conns);
  /* volatile: the compiler may not drop the wipe of a dying buffer */
  volatile uint8_t *k = a->key;
  for (size_t i = 0; i < sizeof(a->key); i++) k[i] = 0;
  a->seen_store = NULL;
  a->ips = a->creators = NULL;
  a->conns = NULL;
}

/* --- connections ---------------------------------------------------------- */

int sv_auth_connect(gk_server *s, uint32_t peer) {
  const sv_conn *c = sv_conn_get(s, peer);
  sv_admit *n = admit_of(s, peer);
  if (!n) return GK_ENOMEM; /* no table: sv_auth_init did not run */
  uint64_t now = sv_now_ms(s);
  memset(n, 0, sizeof(*n));
  n->connected_ms = now;
  sv_src *e = src_get(s->auth.ips, s->auth.nips, c->link->addr_key, now);
  const char *what = NULL;
  /* no entry: every entry of the table holds connections */
  if (e && src_rate(e, s->cfg->connects_per_ip_per_s, CONNECT_WINDOW_MS, now)) {
    s->stats.limit_connect_rate++;
    what = "connects_per_ip_per_s";
  } else if (!e || (s->cfg->conns_per_ip && e->conns >= s->cfg->conns_per_ip)) {
    s->stats.limit_conns_per_ip++;
    what = "conns_per_ip";
  }
  if (what) {
    limit_log(s, e, what, c->link->addr, NULL);
    return GK_ELIMIT;
  }
  e->conns++;
  n->ip_counted = 1;
  n->req_len = c->link->hello_len; /* the request that opened the link */
  return 0;
}

int sv_auth_ip_full(const gk_server *s, uint64_t addr_key) {
  uint32_t limit = s->cfg->conns_per_ip;
  for (uint32_t i = 0; limit && i < s->auth.nips; i++) {
    const sv_src *e = &s->auth.ips[i];
    if (e->used && e->key == addr_key) return e->conns >= limit;
  }
  return 0;
}

void sv_auth_disconnect(gk_server *s, const sv_conn *c) {
  const sv_admit *n = admit_of(s, c->rc.id);
  if (!n || !n->ip_counted) return;
  for (uint32_t i = 0; i < s->auth.nips; i++) {
    sv_src *e = &s->auth.ips[i];
    if (e->used && e->key == c->link->addr_key) {
      if (e->conns) e->conns--;
      return;
    }
  }
}

void sv_auth_sweep(gk_server *s, uint64_t now_ms) {
  uint64_t limit = s->cfg->handshake_ms;
  if (!limit) return;
  for (uint32_t p = 0; p < s->cfg->max_peers; p++) {
    sv_conn *c = &s->conns[p];
    const sv_admit *n = &s->auth.conns[p]; /* the same slot */
    if (!c->used || n->admitted || now_ms < n->connected_ms ||
        now_ms - n->connected_ms <= limit)
      continue;
    s->stats.limit_handshake++;
    const sv_link *l = c->link;
    sv_src *e = n->ip_counted
                    ? src_get(s->auth.ips, s->auth.nips, l->addr_key, now_ms)
                    : NULL;
    limit_log(s, e, "handshake_ms", l->addr, NULL);
    sv_link_close(c->link, 1); /* clears c */
  }
}

size_t sv_auth_reply_cap(const gk_server *s, uint32_t peer) {
  const sv_admit *n = admit_of(s, peer);
  if (!n) return 0;
  const sv_conn *c = sv_conn_get(s, peer);
  if (n->admitted || c->link->ops->addr_verified) return SIZE_MAX;
  return n->req_len;
}

/* --- tokens --------------------------------------------------------------- */

static const char *role_name(uint32_t role) {
  return role == GK_TOKEN_SPECTATOR ? "spectator" : "player";
}

/* REJOIN_ROOM and SPECTATE: a join token for that room, as a player for
 * the rejoin's slot (or any slot), or as a spectator. */
static int grant_match_snap(const gk_token_grant *g, const gk_wire_msg *m,
                            char *err, size_t errlen) {
  int rejoin = m->type == GK_MSG_REJOIN_ROOM;
  const char *code = rejoin ? m->u.rejoin.code : m->u.room.code;
  uint32_t role = rejoin ? GK_TOKEN_PLAYER : GK_TOKEN_SPECTATOR;
  if (g->kind != GK_TOKEN_JOIN)
    return gk_errf(err, errlen, GK_EGRANT, "token grants a room, not a join");
  if (memcmp(g->code, code, GK_WIRE_CODE_LEN) != 0)
    return gk_errf(err, errlen, GK_EGRANT, "token is for another room");
  if (g->role != role)
    return gk_errf(err, errlen, GK_EROLE, "token is for a %s, not a %s",
                   role_name(g->role), role_name(role));
  if (rejoin && g->slot != GK_TOKEN_SLOT_ANY && g->slot != m->u.rejoin.slot)
    return gk_errf(err, errlen, GK_EGRANT, "token is for slot %u, not %u",
                   g->slot, m->u.rejoin.slot);
  return 0;
}

/* Does the opened token grant what `m` asks? GK_EGRANT / GK_EROLE. */
static int grant_match(const gk_token *t, const gk_wire_msg *m,
                       const uint64_t *client, char *err, size_t errlen) {
  const gk_token_grant *g = &t->grant;
  if (client && *client != t->client_id)
    return gk_errf(err, errlen, GK_EGRANT,
                   "token is for another client than this connection's");
  if (m->type == GK_MSG_REJOIN_ROOM || m->type == GK_MSG_SPECTATE)
    return grant_match_snap(g, m, err, errlen);
  if (m->type == GK_MSG_CREATE_ROOM) {
    const gk_wire_create_room *cr = &m->u.create_room;
    if (g->kind != GK_TOKEN_CREATE)
      return gk_errf(err, errlen, GK_EGRANT, "token grants a join, not a room");
    if (strcmp(g->genre, cr->genre) != 0)
      return gk_errf(err, errlen, GK_EGRANT, "token is for genre %s", g->genre);
    if (cr->max_players > g->max_players)
      return gk_errf(err, errlen, GK_EGRANT,
                     "token allows at most %u players, asked %u",
                     g->max_players, cr->max_players);
    return 0;
  }
  const gk_wire_room_code *j = &m->u.room;
  if (g->kind != GK_TOKEN_JOIN)
    return gk_errf(err, errlen, GK_EGRANT, "token grants a room, not a join");
  if (memcmp(g->code, j->code, GK_WIRE_CODE_LEN) != 0)
    return gk_errf(err, errlen, GK_EGRANT, "token is for another room");
  if (g->role != j->role)
    return gk_errf(err, errlen, GK_EROLE, "token is for a %s, not a %s",
                   role_name(g->role), role_name(j->role));
  return 0;
}

/* The token bytes of a room request (its length in *len). */
static const uint8_t *request_token(const gk_wire_msg *m, size_t *len) {
  switch (m->type) {
  case GK_MSG_CREATE_ROOM:
    *len = m->u.create_room.token_len;
    return m->u.create_room.token;
  case GK_MSG_REJOIN_ROOM:
    *len = m->u.rejoin.token_len;
    return m->u.rejoin.token;
  default: /* JOIN_ROOM, SPECTATE */
    *len = m->u.room.token_len;
    return m->u.room.token;
  }
}

/* Opens the token of m and matches its grant: 0 with *out filled. */
static int token_open_match(const uint8_t key[GK_TOKEN_KEY_BYTES],
                            const gk_wire_msg *m, const uint64_t *client,
                            uint64_t now_s, gk_token *out, char *err,
                            size_t errlen) {
  size_t len = 0;
  const uint8_t *tok = request_token(m, &len);
  if (len == 0)
    return gk_errf(err, errlen, GK_ENOTOKEN, "a connect token is required");
  char why[160];
  int rc = gk_token_open(tok, len, key, GK_WIRE_VERSION, now_s, out, why,
                         sizeof(why));
  if (rc) return gk_errf(err, errlen, rc, "token refused: %s", why);
  return grant_match(out, m, client, err, errlen);
}

/* Spends an opened token: its id is kept until it expires. */
static int token_admit(gk_token_seen *seen, const gk_token *t, uint64_t now_s,
                       char *err, size_t errlen) {
  int rc = gk_token_seen_check_and_add(seen, t->pub.id, t->pub.expire_s, now_s);
  if (rc == GK_EEXIST) return gk_errf(err, errlen, rc, "token was used before");
  if (rc == GK_EFULL)
    return gk_errf(err, errlen, rc, "too many tokens in use, try again");
  if (rc) return gk_errf(err, errlen, rc, "token refused");
  return 0;
}

int sv_auth_check_token(const uint8_t key[GK_TOKEN_KEY_BYTES],
                        gk_token_seen *seen, const gk_wire_msg *m,
                        const uint64_t *client, uint64_t now_s, gk_token *out,
                        char *err, size_t errlen) {
  int rc = token_open_match(key, m, client, now_s, out, err, errlen);
  return rc ? rc : token_admit(seen, out, now_s, err, errlen);
}

/* The counter of a token refusal's code. */
static uint64_t *refusal_counter(gk_server_stats *st, int code) {
  switch (code) {
  case GK_ENOTOKEN:
    return &st->auth_missing;
  case GK_EAUTH:
    return &st->auth_bad;
  case GK_EEXPIRED:
  case GK_ENOTYET:
    return &st->auth_expired;
  case GK_EGRANT:
    return &st->auth_grant;
  case GK_EROLE:
    return &st->auth_role;
  case GK_EEXIST:
    return &st->auth_reused;
  case GK_EFULL:
    return &st->auth_full;
  case GK_ELIMIT:
    return &st->limit_create_rate;
  default:
    return &st->auth_malformed;
  }
}

/* --- guessing codes ------------------------------------------------------- */

#define MISS_WINDOW_MS 60000u

/* The IP entry of a connection, with its miss window current. */
static sv_src *miss_src(gk_server *s, uint32_t peer) {
  const sv_conn *c = sv_conn_get(s, peer);
  if (!c) return NULL;
  uint64_t now = sv_now_ms(s);
  sv_src *e = src_get(s->auth.ips, s->auth.nips, c->link->addr_key, now);
  if (e && (now - e->miss_ms >= MISS_WINDOW_MS || now < e->miss_ms)) {
    e->miss_ms = now;
    e->misses = 0;
  }
  return e;
}

int sv_auth_misses_over(gk_server *s, uint32_t peer) {
  uint32_t limit = s->cfg->misses_per_ip_per_min;
  sv_src *e = limit ? miss_src(s, peer) : NULL;
  if (!e || e->misses < limit) return 0;
  s->stats.limit_misses++;
  const sv_conn *c = sv_conn_get(s, peer);
  limit_log(s, e, "misses_per_ip_per_min", c ? c->link->addr : NULL, NULL);
  char why[96];
  snprintf(why, sizeof(why), "more than %u unknown room codes a minute", limit);
  sv_send_error(s, peer, GK_ELIMIT, why);
  return 1;
}

void sv_auth_miss(gk_server *s, uint32_t peer) {
  s->stats.code_misses++;
  sv_src *e = miss_src(s, peer);
  if (e && e->misses < UINT32_MAX) e->misses++;
}

/* A room refused to a creator over limits.creates_per_min: logged, and
 * the sentence. */
static int create_refused(gk_server *s, sv_src *e, const sv_conn *c,
                          const uint64_t *client, char *err, size_t errlen) {
  limit_log(s, e, "creates_per_min", client ? NULL : c->link->addr, client);
  return gk_errf(err, errlen, GK_ELIMIT, "more than %u rooms a minute",
                 s->cfg->creates_per_min);
}

/* Rooms per minute for the creator (client id, or IP in open mode). */
static int create_rate(gk_server *s, const sv_conn *c, const uint64_t *client,
                       char *err, size_t errlen) {
  uint64_t now = sv_now_ms(s);
  uint64_t key = client ? *client : OPEN_KEY_IP | c->link->addr_key;
  sv_src *e = src_get(s->auth.creators, s->auth.ncreators, key, now);
  if (!e || !src_rate(e, s->cfg->creates_per_min, CREATE_WINDOW_MS, now))
    return 0;
  return create_refused(s, e, c, client, err, errlen);
}

/* The open-mode creator entry of a connection (its IP), if it has one;
 * nothing made or evicted. */
static sv_src *creator_of(const gk_server *s, uint32_t peer) {
  const sv_conn *c = sv_conn_get(s, peer);
  uint64_t key = c ? OPEN_KEY_IP | c->link->addr_key : 0;
  for (uint32_t i = 0; c && i < s->auth.ncreators; i++)
    if (s->auth.creators[i].used && s->auth.creators[i].key == key)
      return &s->auth.creators[i];
  return NULL;
}

int sv_auth_may_create(const gk_server *s, uint32_t peer) {
  uint32_t limit = s->cfg->creates_per_min;
  const sv_src *e = limit ? creator_of(s, peer) : NULL;
  uint64_t now = sv_now_ms(s);
  if (!e || now - e->win_ms >= CREATE_WINDOW_MS || now < e->win_ms) return 1;
  return e->win_n < limit;
}

int sv_auth_quick_create(gk_server *s, uint32_t peer, int count, char *err,
                         size_t errlen) {
  const sv_conn *c = sv_conn_get(s, peer);
  if (!c) return 0;
  int rc = count ? create_rate(s, c, NULL, err, errlen)
                 : create_refused(s, creator_of(s, peer), c, NULL, err, errlen);
  if (rc) s->stats.limit_create_rate++;
  return rc;
}

/* A join token naming a slot: the room's next slot must be that one. */
static int slot_match(gk_server *s, const gk_token *t, char *err,
                      size_t errlen) {
  if (t->grant.kind != GK_TOKEN_JOIN || t->grant.slot == GK_TOKEN_SLOT_ANY)
    return 0;
  const gk_room *r = sv_room_find(s, t->grant.code);
  if (!r) return 0;
  gk_room_view v;
  gk_room_view_of(r, &v);
  if (v.state == GK_ROOM_DRAINING || v.next_slot == t->grant.slot)
    return 0; /* the room code says what is wrong (a running room: its
                 next slot is a late joiner's) */
  return gk_errf(err, errlen, GK_EGRANT, "token is for slot %u, next is %u",
                 t->grant.slot, v.next_slot);
}

/* A rejoin's token must carry the client id its slot had at MATCH_START
 * (a room or slot that is not there is left to the rejoin's own checks). */
static int rejoin_client(gk_server *s, const gk_token *t, const gk_wire_msg *m,
                         char *err, size_t errlen) {
  if (m->type != GK_MSG_REJOIN_ROOM) return 0;
  uint32_t slot = m->u.rejoin.slot;
  const gk_room *r = sv_room_find(s, m->u.rejoin.code);
  if (!r) return 0;
  gk_room_view v;
  gk_room_view_of(r, &v);
  if (v.state != GK_ROOM_PLAYING || slot >= v.nslots) return 0;
  uint64_t id = 0;
  if (!gk_room_slot_client(r, slot, &id))
    return gk_errf(err, errlen, GK_EGRANT, "slot %u has no client id", slot);
  if (id != t->client_id)
    return gk_errf(err, errlen, GK_EGRANT,
                   "token is for another client than slot %u's", slot);
  return 0;
}

/* Token mode: open, match, the creation rate, spend; then the
 * connection is bound to the token's client id. 0 or a refusal code. */
static int token_request(gk_server *s, sv_conn *c, const gk_wire_msg *m,
                         uint64_t now_s, char *err, size_t errlen) {
  gk_token t;
  memset(&t, 0, sizeof(t));
  sv_admit *n = admit_of(s, c->rc.id);
  const uint64_t *bound = n->client_bound ? &n->client_id : NULL;
  int rc = token_open_match(s->auth.key, m, bound, now_s, &t, err, errlen);
  if (!rc && m->type == GK_MSG_JOIN_ROOM) rc = slot_match(s, &t, err, errlen);
  if (!rc) rc = rejoin_client(s, &t, m, err, errlen);
  /* the rate before the replay cache: a request refused for its rate does
   * not spend its token */
  if (!rc && m->type == GK_MSG_CREATE_ROOM)
    rc = create_rate(s, c, &t.client_id, err, errlen);
  if (!rc) rc = token_admit(&s->auth.seen, &t, now_s, err, errlen);
  if (rc) return rc;
  s->stats.auth_admitted++;
  n->client_bound = 1;
  n->client_id = t.client_id;
  if (m->type == GK_MSG_CREATE_ROOM) n->create_players = t.grant.max_players;
  return 0;
}

uint32_t sv_auth_create_players(const gk_server *s, uint32_t peer) {
  if (s->cfg->auth_mode != GK_AUTH_TOKEN) return GK_PLAYERS_MAX;
  const sv_admit *n = admit_of(s, peer);
  return n ? n->create_players : 0;
}

int sv_auth_request(gk_server *s, uint32_t peer, const gk_wire_msg *m,
                    uint64_t now_s) {
  sv_conn *c = sv_conn_get(s, peer);
  char err[GK_SERVER_CONFIG_ERR_MAX];
  err[0] = '\0';
  int rc = 0;
  if (s->cfg->auth_mode == GK_AUTH_TOKEN)
    rc = token_request(s, c, m, now_s, err, sizeof(err));
  else if (m->type == GK_MSG_CREATE_ROOM)
    rc = create_rate(s, c, NULL, err, sizeof(err));
  if (!rc) return 0;
  s->host.stats.refused++;
  (*refusal_counter(&s->stats, rc))++;
  if (gk_log_begin(s->log, GK_LOG_DEBUG, "auth_refused", NULL)) {
    gk_log_u64(s->log, "peer", peer);
    gk_log_err(s->log, "code", rc);
    gk_log_str(s->log, "reason", err);
    gk_log_end(s->log);
  }
  sv_send_error(s, peer, rc, err);
  return rc;
}
