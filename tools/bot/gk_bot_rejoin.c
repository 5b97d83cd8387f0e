/* gk_bot_rejoin.c: gk-bot's --drop and --spectators.
 *
 * --drop SLOT:STEP:MS: in every room, once the player in SLOT has run
 * STEP (or, if it was away then, the first step it runs after it), its
 * connection and peer engine are closed at once (from a timer, outside
 * the loop's frame). MS ms later a fresh peer engine on a fresh ENet
 * connection sends REJOIN_ROOM with the room code, the slot and the
 * secret the server gave it in RECONNECT_SECRET; in token mode with a new
 * join token for that room and slot and the same client id (a token is
 * single-use: the one it joined with was spent). The peer adopts the
 * snapshot, catches up and samples again. Each rejoin is recorded: slot,
 * snapshot step and bytes, and resume_ms, from opening the new connection
 * to resumed sampling. A rejoin refused with GK_EEXIST (the server still
 * holds the old connection: its disconnect was lost) is tried again every
 * RETRY_MS, up to RETRY_MAX times; any other refusal fails the room.
 *
 * --spectators N: once the room's player 0 ran a quarter of the steps, N
 * spectators connect and SPECTATE by room code (token mode: a spectator's
 * join token each), each with its own peer engine that runs to the end of
 * the match. Every step a spectator runs is checked against the players'
 * hash of that step (the room's ring), and its final hash against
 * theirs: the summary's spectators.agree.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_bot.h"
#include "gk_err.h"

#define RETRY_MS 250u
#define RETRY_MAX 40u
#define DROP_MS_MAX 600000u
/* spectators' client ids: client_base + SPEC_CLIENT + room * 64 + k, above
 * every player's (client_base + room * 16 + slot) and below the next
 * seed's (client_base + 2^20) */
#define SPEC_CLIENT (UINT64_C(1) << 18)

/* --- arguments ------------------------------------------------------------ */

/* "A:B:C" of decimal numbers into out. 0 or -1. */
static int three_numbers(const char *v, uint64_t out[3]) {
  char buf[80];
  if (strlen(v) >= sizeof buf) return -1;
  snprintf(buf, sizeof buf, "%s", v);
  char *p = buf;
  for (int i = 0; i < 3; i++) {
    char *colon = strchr(p, ':');
    if ((colon != NULL) != (i < 2)) return -1;
    if (colon != NULL) *colon = '\0';
    if (gk_parse_u64(p, &out[i]) != 0) return -1;
    if (colon != NULL) p = colon + 1;
  }
  return 0;
}

int bot_parse_drop(const char *v, bot *b) {
  uint64_t n[3] = {0, 0, 0};
  const char *why = NULL;
  if (three_numbers(v, n) != 0)
    why = "want SLOT:STEP:MS, three decimal numbers (e.g. 1:300:1500)";
  else if (n[0] >= GK_PLAYERS_MAX)
    why = "SLOT is beyond the largest room";
  else if (n[1] >= GK_WIRE_STEP_LIMIT)
    why = "STEP is too large";
  else if (n[2] > DROP_MS_MAX)
    why = "MS is more than 600000 (10 minutes)";
  else if (b->ndrops >= DROP_MAX)
    why = "more than 16 drops";
  for (uint32_t i = 0; why == NULL && i < b->ndrops; i++)
    if (b->drops[i].slot == n[0] && b->drops[i].step == n[1])
      why = "that SLOT:STEP was given before";
  if (why != NULL) {
    fprintf(stderr, "gk-bot: --drop '%s': %s\n", v, why);
    return 1;
  }
  b->drops[b->ndrops++] = (bot_drop){(uint32_t)n[0], n[1], (uint32_t)n[2]};
  return 0;
}

int bot_check_rejoin_args(const bot *b) {
  for (uint32_t i = 0; i < b->ndrops; i++) {
    const bot_drop *d = &b->drops[i];
    const char *why = NULL;
    if (b->players < 2)
      why = "needs 2 players or more (a room whose only player leaves ends)";
    else if (d->slot >= b->players)
      why = "SLOT is not a player of the room (slots are 0..players-1)";
    else if (d->step + 1 >= b->steps)
      why = "STEP must come before the match's last step (--steps - 1)";
    if (why != NULL) {
      fprintf(stderr, "gk-bot: --drop %u:%llu:%u: %s\n", d->slot,
              (unsigned long long)d->step, d->ms, why);
      return 2;
    }
  }
  return -1;
}

/* --- tokens --------------------------------------------------------------- */

int bot_token(const bot *b, const gk_token_grant *g, uint64_t client,
              uint8_t *len, uint8_t tok[GK_TOKEN_BYTES]) {
  *len = 0;
  if (b->token_mode == BOT_TOKEN_NONE) return 0;
  *len = GK_TOKEN_BYTES;
  if (b->token_mode == BOT_TOKEN_FIXED) {
    memcpy(tok, b->token, GK_TOKEN_BYTES);
    return 0;
  }
  return gk_token_mint(g, client, (uint64_t)time(NULL), 60, b->key, tok);
}

uint64_t bot_client_id(const bot_peer *p) {
  const bot *b = p->b;
  if (p->spectator)
    return b->client_base + SPEC_CLIENT +
           (uint64_t)p->room->index * SPECTATORS_MAX + (p->index - b->players);
  return b->client_base + (uint64_t)p->room->index * 16u + p->index;
}

/* --- a player leaves and comes back --------------------------------------- */

static void fail(bot_peer *p, const char *what, const char *detail) {
  bot_room_fail(p->room, what, detail);
  bot_room_check_done(p->room);
}

static bot_peer *of_peer(gk_net_peer_uv *u) {
  return (bot_peer *)(void *)((char *)u - offsetof(bot_peer, peer));
}

static bot_peer *of_tr(gk_bot_link *t) {
  return (bot_peer *)(void *)((char *)t - offsetof(bot_peer, link));
}

static void peer_closed(gk_net_peer_uv *u) {
  of_peer(u)->closing--;
}

static void tr_closed(gk_bot_link *t) {
  of_tr(t)->closing--;
}

static void arm(bot_peer *p, uint64_t ms, uv_timer_cb cb) {
  if (!p->timer_open) {
    uv_timer_init(p->b->loop, &p->timer);
    p->timer.data = p;
    p->timer_open = 1;
  }
  uv_timer_start(&p->timer, cb, ms, 0);
}

/* Closes the player's connection (at once: the server sees it go) and its
 * peer engine; both close asynchronously (p->closing counts them). */
static void let_go(bot_peer *p) {
  p->away = 1;
  if (p->peer_open) {
    gk_net_peer_uv_stop(&p->peer);
    p->peer_open = 0;
    p->closing++;
    gk_net_peer_uv_close(&p->peer, peer_closed);
  }
  if (p->tr_open) {
    if (p->connected) gk_bot_link_disconnect(&p->link, p->conn, 1);
    p->tr_open = 0;
    p->closing++;
    gk_bot_link_close(&p->link, tr_closed);
  }
  p->connected = 0;
}

/* The way back: a fresh peer engine and connection (once the old ones
 * have closed); bot_rejoin_connected sends REJOIN_ROOM. */
static void on_back(uv_timer_t *t) {
  bot_peer *p = t->data;
  if (p->b->finished || p->room->done) return;
  if (p->closing > 0) {
    uv_timer_start(t, on_back, 1, 0);
    return;
  }
  int rc = bot_peer_open(p);
  if (rc != 0) {
    fail(p, "rejoin: cannot open a peer", gk_strerror(rc));
    return;
  }
  p->rejoining = 1;
  if (p->tries == 0) p->connect_ns = uv_hrtime();
  bot_connect_peer(p);
}

static void on_drop(uv_timer_t *t) {
  bot_peer *p = t->data;
  bot *b = p->b;
  if (b->finished || p->ended || p->room->done) return;
  if (!p->have_secret) {
    fail(p, "--drop: no RECONNECT_SECRET came",
         "does the server hold slots (reconnect.hold_ms)?");
    return;
  }
  p->tries = 0;
  p->rec = 0;
  p->redirected = 0; /* a new request: to --server, perhaps redirected */
  if (b->ws_swap) p->ws_flip ^= 1; /* back on the other transport */
  let_go(p);
  arm(p, b->drops[p->drop].ms, on_back);
}

static void on_retry(uv_timer_t *t) {
  bot_peer *p = t->data;
  if (p->b->finished || p->room->done) return;
  let_go(p);
  arm(p, RETRY_MS, on_back);
}

static void start_spectators(bot_room *r) {
  r->specs_started = 1;
  for (uint32_t k = 0; k < r->b->spectators; k++) {
    bot_peer *p = &r->specs[k];
    int rc = bot_peer_open(p);
    if (rc != 0) {
      fail(p, "spectator: cannot open a peer", gk_strerror(rc));
      return;
    }
    bot_connect_peer(p);
  }
}

void bot_rejoin_step(bot_peer *p, uint64_t step) {
  bot *b = p->b;
  bot_room *r = p->room;
  if (p->index == 0 && r->specs != NULL && !r->specs_started &&
      step >= b->steps / 4)
    start_spectators(r);
  if (p->away || p->rejoining ||
      (p->timer_open && uv_is_active((uv_handle_t *)&p->timer)))
    return;
  for (uint32_t i = 0; i < b->ndrops; i++) {
    const bot_drop *d = &b->drops[i];
    if ((r->drops_done >> i & 1u) || d->slot != p->peer.eng.match.slot ||
        step < d->step)
      continue;
    r->drops_done |= 1u << i;
    p->drop = i;
    arm(p, 0, on_drop); /* not inside the loop's frame */
    return;
  }
}

/* --- a fleet: REDIRECT ---------------------------------------------------- */

/* The request again, at the room's node, once the old engine and
 * connection have closed. */
static void on_redirect(uv_timer_t *t) {
  bot_peer *p = t->data;
  if (p->b->finished || p->room->done) return;
  if (p->closing > 0) {
    uv_timer_start(t, on_redirect, 1, 0);
    return;
  }
  int rc = bot_peer_open(p);
  if (rc != 0) {
    fail(p, "redirect: cannot open a peer", gk_strerror(rc));
    return;
  }
  if (!p->rejoining) p->away = 0; /* a lost connection fails the room */
  bot_connect_peer(p);
}

/* REDIRECT: the code is another node's. Followed once per request: a
 * second one is an error, and so is an address the player cannot use. */
static void redirect(bot_peer *p, const gk_wire_redirect *r) {
  if (p->redirected) {
    fail(p, "a second REDIRECT", r->enet);
    return;
  }
  if (gk_wire_addr_split(r->enet, p->rhost, sizeof p->rhost, &p->rport) != 0) {
    fail(p, "REDIRECT to a bad ENet address", r->enet);
    return;
  }
  if (bot_peer_ws(p) && !r->ws_url[0]) {
    fail(p, "REDIRECT to a node without WebSocket", r->enet);
    return;
  }
  snprintf(p->rws, sizeof(p->rws), "%s", r->ws_url);
  p->redirected = 1;
  p->room->redirects++;
  let_go(p); /* away until on_redirect: the old link's end is ours */
  arm(p, 0, on_redirect); /* not from inside the peer's own callback */
}

int bot_rejoin_message(bot_peer *p, const gk_wire_msg *m) {
  if (m->type == GK_MSG_REDIRECT) {
    redirect(p, &m->u.redirect);
    return 1;
  }
  if (m->type == GK_MSG_RECONNECT_SECRET) {
    memcpy(p->secret, m->u.secret.secret, GK_WIRE_SECRET_LEN);
    p->slot = m->u.secret.slot;
    p->have_secret = 1;
    return 1;
  }
  if (m->type != GK_MSG_ERROR || !p->rejoining ||
      m->u.error.code != GK_EEXIST || p->tries >= RETRY_MAX)
    return 0;
  p->tries++;
  arm(p, 0, on_retry); /* not from inside the peer's own callback */
  return 1;
}

void bot_rejoin_connected(bot_peer *p) {
  bot_room *r = p->room;
  gk_token_grant g;
  memset(&g, 0, sizeof g);
  g.kind = GK_TOKEN_JOIN;
  g.role = p->spectator ? GK_TOKEN_SPECTATOR : GK_TOKEN_PLAYER;
  g.slot = p->spectator ? GK_TOKEN_SLOT_ANY : (uint8_t)p->slot;
  memcpy(g.code, r->lobby.code, sizeof g.code);
  uint8_t len = 0, tok[GK_TOKEN_BYTES];
  int rc = bot_token(p->b, &g, bot_client_id(p), &len, tok);
  const uint8_t *t = len ? tok : NULL;
  if (rc == 0 && p->spectator)
    rc = gk_net_peer_uv_spectate(&p->peer, r->lobby.code, t);
  else if (rc == 0)
    rc = gk_net_peer_uv_rejoin(&p->peer, r->lobby.code, p->slot, p->secret, t);
  if (rc != 0) {
    fail(p, p->spectator ? "cannot spectate" : "cannot rejoin",
         gk_strerror(rc));
    return;
  }
  p->away = 0; /* from now on a lost connection fails the room */
}

/* --- peer callbacks ------------------------------------------------------- */

void bot_rejoin_snapshot(void *ctx, gk_net_peer *np, int rc,
                         const gk_net_peer_snap_info *info) {
  bot_peer *p = ctx;
  bot_room *r = p->room;
  (void)np;
  if (rc != 0) {
    const char *what = p->spectator ? "spectator: snapshot refused"
                                    : "rejoin: snapshot refused";
    fail(p, what, info->error);
    return;
  }
  if (p->spectator) {
    p->snaps++;
    return;
  }
  /* a late joiner's snapshot (kind JOIN) is gk_bot_late.c's, not a rejoin */
  if (info->kind != GK_WIRE_SNAP_REJOIN) return;
  if (p->rec == 0 && r->nrejoins < DROP_MAX) {
    r->rejoins[r->nrejoins] =
        (bot_rejoin_rec){p->slot, info->step, info->bytes, -1.0};
    p->rec = (int)++r->nrejoins;
  }
}

void bot_rejoin_resumed(void *ctx, gk_net_peer *np) {
  bot_peer *p = ctx;
  p->rejoining = 0;
  if (p->rec > 0 && np->snap.resumed_ns >= p->connect_ns)
    p->room->rejoins[p->rec - 1].resume_ms =
        (double)(np->snap.resumed_ns - p->connect_ns) / 1e6;
}

void bot_spec_step(bot_room *r, uint64_t step, uint64_t hash) {
  const ring_entry *e = &r->ring[step % RING];
  if (e->set && e->step == step && e->hash != hash) r->spec_mismatches++;
}

void bot_spec_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m) {
  bot_peer *p = ctx;
  (void)np;
  if (m->type != GK_MSG_ERROR) return;
  char detail[GK_WIRE_TEXT_MAX + 40];
  snprintf(detail, sizeof detail, "%s: %s", gk_err_name(m->u.error.code),
           gk_net_lobby_error_text(&m->u.error));
  fail(p, "spectator refused", detail);
}

/* --- spectators' storage, the end ----------------------------------------- */

int bot_spectators_alloc(bot *b) {
  for (uint32_t i = 0; b->spectators > 0 && i < b->rooms; i++) {
    bot_room *r = &b->room[i];
    r->specs = calloc(b->spectators, sizeof *r->specs);
    if (r->specs == NULL) return GK_ENOMEM;
    for (uint32_t k = 0; k < b->spectators; k++) {
      bot_peer *p = &r->specs[k];
      p->b = b;
      p->room = r;
      p->index = b->players + k;
      p->spectator = 1;
    }
  }
  return 0;
}

int bot_spectators_done(const bot_room *r) {
  /* not started: the match ended before a quarter of its steps (the
   * summary's count says so) */
  for (uint32_t k = 0; r->specs_started && k < r->b->spectators; k++)
    if (!r->specs[k].ended) return 0;
  return 1;
}

static void close_one(bot_peer *p) {
  if (p->timer_open) {
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, NULL);
    p->timer_open = 0;
  }
  if (!p->spectator) return; /* finish() closes the players' */
  if (p->peer_open) gk_net_peer_uv_close(&p->peer, NULL);
  if (p->tr_open) gk_bot_link_close(&p->link, NULL);
  p->peer_open = p->tr_open = 0;
}

void bot_rejoin_close(bot *b) {
  for (uint32_t i = 0; i < b->rooms; i++) {
    bot_room *r = &b->room[i];
    for (uint32_t j = 0; j < b->players; j++) close_one(&r->peers[j]);
    for (uint32_t k = 0; r->specs != NULL && k < b->spectators; k++)
      close_one(&r->specs[k]);
  }
}

void bot_rejoin_free(bot *b) {
  for (uint32_t i = 0; b->room != NULL && i < b->rooms; i++) {
    free(b->room[i].specs);
    b->room[i].specs = NULL;
  }
}

/* --- the summary ---------------------------------------------------------- */

static void add_rejoins(cJSON *ro, const bot_room *r) {
  cJSON *list = cJSON_AddArrayToObject(ro, "rejoins");
  for (uint32_t i = 0; i < r->nrejoins; i++) {
    const bot_rejoin_rec *e = &r->rejoins[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "slot", e->slot);
    cJSON_AddNumberToObject(o, "snapshot_step", (double)e->snapshot_step);
    cJSON_AddNumberToObject(o, "snapshot_bytes", (double)e->snapshot_bytes);
    if (e->resume_ms >= 0.0)
      cJSON_AddNumberToObject(o, "resume_ms", e->resume_ms);
    else
      cJSON_AddNullToObject(o, "resume_ms");
    cJSON_AddItemToArray(list, o);
  }
}

int bot_rejoin_summary(cJSON *ro, const bot *b, const bot_room *r) {
  add_rejoins(ro, r);
  cJSON *sp = cJSON_AddObjectToObject(ro, "spectators");
  const bot_peer *p0 = &r->peers[0];
  uint32_t count = 0;
  int agree = r->spec_mismatches == 0;
  for (uint32_t k = 0; r->specs != NULL && k < b->spectators; k++) {
    const bot_peer *p = &r->specs[k];
    if (p->snaps > 0) count++;
    if (!p->ended || p->steps != p0->steps || p->last_hash != p0->last_hash)
      agree = 0;
  }
  cJSON_AddNumberToObject(sp, "count", count);
  cJSON_AddNumberToObject(sp, "mismatches", (double)r->spec_mismatches);
  if (b->spectators == 0) {
    cJSON_AddNullToObject(sp, "agree");
    return 0;
  }
  agree = agree && count == b->spectators;
  cJSON_AddBoolToObject(sp, "agree", agree);
  /* a spectator that disagrees is a desync; a room that failed is counted
   * as failed instead */
  return !agree && p0->ended && !r->failed;
}

int bot_check_ws_url(const char *v, bot *b) {
  gk_net_ws_url u;
  char err[256];
  if (gk_net_ws_url_parse(v, &u, err, sizeof err) != 0) {
    fprintf(stderr, "gk-bot: --ws: %s\n", err);
    return 1;
  }
  b->ws_url = v;
  return 0;
}
