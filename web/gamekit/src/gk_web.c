/* gk_web.c: the peer, its callbacks as out-queue records, the lobby
 * (see gk_web.h). The input source and the state map are gk_web_state.c. */
#include "gk_web.h"

#include <stdlib.h>
#include <string.h>

#include "gk_config_kv.h"
#include "gk_err.h"
#include "gk_push_puzzle.h"
#include "gk_survivors.h"
#include "gk_web_internal.h"

/* --- the registry ------------------------------------------------------- */

static const gk_sim *const web_genres[] = {&gk_survivors_sim,
                                           &gk_push_puzzle_sim};

const gk_sim *gk_web_genre(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < sizeof web_genres / sizeof web_genres[0]; i++)
    if (strcmp(web_genres[i]->name, name) == 0) return web_genres[i];
  return NULL;
}

static const gk_sim *find_genre(void *ctx, const char *name) {
  (void)ctx;
  return gk_web_genre(name);
}

/* --- out queue ---------------------------------------------------------- */

static uint8_t *out_reserve(gk_web *w, size_t n) {
  if (w->out_err) return NULL;
  if (w->out_len + n > w->out_cap) {
    size_t cap = w->out_cap ? w->out_cap : 4096;
    while (cap < w->out_len + n) cap *= 2;
    uint8_t *b = realloc(w->out, cap);
    if (b == NULL) {
      w->out_err = GK_ENOMEM;
      return NULL;
    }
    w->out = b;
    w->out_cap = cap;
  }
  uint8_t *p = w->out + w->out_len;
  w->out_len += n;
  return p;
}

void gk__web_put_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* One record: type, then a body of `len` bytes the caller fills. */
static uint8_t *out_record(gk_web *w, uint8_t type, size_t len) {
  uint8_t *p = out_reserve(w, 5 + len);
  if (p == NULL) return NULL;
  p[0] = type;
  gk__web_put_le(p + 1, len, 4);
  return p + 5;
}

static int on_send(void *ctx, const uint8_t *bytes, size_t len, int reliable) {
  gk_web *w = ctx;
  uint8_t *p = out_record(w, GK_WEB_EV_SEND, 1 + len);
  if (p == NULL) return GK_ENOMEM;
  p[0] = (uint8_t)(reliable != 0);
  memcpy(p + 1, bytes, len);
  return 0;
}

static void on_started(void *ctx, gk_net_peer *np) {
  gk_web *w = ctx;
  const gk_wire_match_start *ms = &np->match;
  size_t g = strlen(ms->genre);
  uint8_t *p = out_record(w, GK_WEB_EV_STARTED, 23 + g);
  if (p == NULL) return;
  p[0] = ms->slot;
  p[1] = ms->players;
  gk__web_put_le(p + 2, ms->active_mask, 4);
  gk__web_put_le(p + 6, ms->first_step, 8);
  p[14] = ms->input_delay;
  gk__web_put_le(p + 15, ms->seed, 8);
  memcpy(p + 23, ms->genre, g);
}

static void on_step(void *ctx, gk_net_peer *np, const gk_step_input *in,
                    uint64_t hash) {
  (void)np;
  uint8_t *p = out_record(ctx, GK_WEB_EV_STEP, 16);
  if (p == NULL) return;
  gk__web_put_le(p, in->step, 8);
  gk__web_put_le(p + 8, hash, 8);
}

static void on_stall(void *ctx, gk_net_peer *np, const gk_wire_stall *st) {
  (void)np;
  uint8_t *p = out_record(ctx, GK_WEB_EV_STALL, 16);
  if (p == NULL) return;
  gk__web_put_le(p, st->step, 8);
  gk__web_put_le(p + 8, st->awaited, 4);
  gk__web_put_le(p + 12, st->waited_ms, 4);
}

static void on_desync(void *ctx, gk_net_peer *np, const gk_wire_desync *d) {
  (void)np;
  uint8_t *p = out_record(ctx, GK_WEB_EV_DESYNC, 25);
  if (p == NULL) return;
  gk__web_put_le(p, d->step, 8);
  p[8] = d->player;
  gk__web_put_le(p + 9, d->host_hash, 8);
  gk__web_put_le(p + 17, d->peer_hash, 8);
}

static void on_removed(void *ctx, gk_net_peer *np, uint32_t slot,
                       uint64_t step) {
  (void)np;
  uint8_t *p = out_record(ctx, GK_WEB_EV_REMOVED, 12);
  if (p == NULL) return;
  gk__web_put_le(p, slot, 4);
  gk__web_put_le(p + 4, step, 8);
}

static void on_ended(void *ctx, gk_net_peer *np, uint64_t step, int reason) {
  (void)np;
  uint8_t *p = out_record(ctx, GK_WEB_EV_ENDED, 12);
  if (p == NULL) return;
  gk__web_put_le(p, step, 8);
  gk__web_put_le(p + 8, (uint32_t)reason, 4);
}

/* A fleet's REDIRECT as fields, so no host decodes the wire twice. */
static void on_redirect(gk_web *w, const gk_wire_redirect *r) {
  size_t e = strlen(r->enet), u = strlen(r->ws_url);
  uint8_t *p = out_record(w, GK_WEB_EV_REDIRECT, GK_WIRE_CODE_LEN + 1 + e + u);
  if (p == NULL) return;
  memcpy(p, r->code, GK_WIRE_CODE_LEN);
  p[GK_WIRE_CODE_LEN] = (uint8_t)e;
  memcpy(p + GK_WIRE_CODE_LEN + 1, r->enet, e);
  memcpy(p + GK_WIRE_CODE_LEN + 1 + e, r->ws_url, u);
}

/* Host messages the engine does not handle: their wire bytes, which the
 * engine's own encoder reproduces exactly (strings are copied on decode). */
static void on_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m) {
  gk_web *w = ctx;
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  (void)np;
  if (m->type == GK_MSG_REDIRECT) {
    on_redirect(w, &m->u.redirect);
    return;
  }
  if (gk_wire_encode(m, buf, sizeof buf, &len) != 0) return;
  uint8_t *p = out_record(w, GK_WEB_EV_MESSAGE, len);
  if (p != NULL) memcpy(p, buf, len);
}

static void on_snapshot(void *ctx, gk_net_peer *np, int rc,
                        const gk_net_peer_snap_info *info) {
  (void)np;
  size_t e = strlen(info->error);
  uint8_t *p = out_record(ctx, GK_WEB_EV_SNAPSHOT, 21 + e);
  if (p == NULL) return;
  gk__web_put_le(p, (uint32_t)rc, 4);
  p[4] = (uint8_t)info->kind;
  gk__web_put_le(p + 5, info->step, 8);
  gk__web_put_le(p + 13, info->next_input, 8);
  memcpy(p + 21, info->error, e);
}

static void on_resumed(void *ctx, gk_net_peer *np) {
  (void)np;
  out_record(ctx, GK_WEB_EV_RESUMED, 0);
}

static void on_head(void *ctx, gk_net_peer *np, int restored) {
  if (!restored) return;
  uint8_t *p = out_record(ctx, GK_WEB_EV_ROLLBACK, 24);
  if (p == NULL) return;
  gk__web_put_le(p, np->head.steps, 8);
  gk__web_put_le(p + 8, np->loop.steps, 8);
  gk__web_put_le(p + 16, np->head.rollbacks, 8);
}

const uint8_t *gk_web_out(const gk_web *w) {
  return w->out;
}
uint32_t gk_web_out_len(const gk_web *w) {
  return (uint32_t)w->out_len;
}
void gk_web_out_clear(gk_web *w) {
  w->out_len = 0;
  w->out_err = 0;
}

/* --- the peer ----------------------------------------------------------- */

static int apply_options(void *ctx, const gk_sim *sim, void *cfg,
                         const char *text, size_t len, char *err,
                         size_t errlen) {
  gk_web *w = ctx;
  size_t i = 0;
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                     text[i] == '\r'))
    i++;
  if (i == len) return 0; /* blank: the defaults */
  if (w->opts_fn == NULL)
    return gk_errf(err, errlen, GK_EINVAL, "options: no options hook");
  return w->opts_fn(w->opts_ctx, sim, cfg, text, len, err, errlen);
}

gk_web *gk_web_create(uint32_t mode, uint64_t seed, gk_web_options_fn opts,
                      void *opts_ctx) {
  int predict = (mode & GK_WEB_PREDICT) != 0;
  mode &= ~GK_WEB_PREDICT;
  if (mode != GK_WEB_INPUT_DEVICE && mode != GK_WEB_INPUT_BOT) return NULL;
  gk_web *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->opts_fn = opts;
  w->opts_ctx = opts_ctx;
  gk__web_input_init(w);
  gk_net_peer_options o;
  memset(&o, 0, sizeof o);
  o.source = mode == GK_WEB_INPUT_DEVICE ? &w->dev.base : NULL;
  o.bot_seed = seed;
  o.genres.find = find_genre;
  o.apply_options = apply_options;
  o.options_ctx = w;
  o.ack_every = GK_NET_PEER_ACK_EVERY_STREAM; /* always a WebSocket */
  o.predict = predict;
  gk_net_peer_callbacks cb = {
      .ctx = w,
      .send = on_send,
      .started = on_started,
      .step = on_step,
      .stall = on_stall,
      .desync = on_desync,
      .removed = on_removed,
      .ended = on_ended,
      .message = on_message,
      .snapshot = on_snapshot,
      .resumed = on_resumed,
      .head = on_head,
  };
  if (gk_net_peer_init(&w->peer, &o, &cb) != 0) {
    free(w);
    return NULL;
  }
  return w;
}

void gk_web_free(gk_web *w) {
  if (w == NULL) return;
  gk_net_peer_free(&w->peer);
  free(w->out);
  free(w->map);
  free(w);
}

gk_net_peer *gk_web_peer(gk_web *w) {
  return &w->peer;
}

int gk_web_handle_at(gk_web *w, uint64_t now, const uint8_t *bytes,
                     size_t len) {
  if (bytes == NULL && len > 0) return GK_EINVAL;
  return gk_net_peer_handle(&w->peer, now, bytes, len);
}

uint64_t gk_web_timeout_at(gk_web *w, uint64_t now) {
  return gk_net_peer_handle_timeout(&w->peer, now);
}

uint64_t gk_web_deadline(const gk_web *w) {
  return gk_net_peer_poll_timeout(&w->peer);
}

/* --- lobby -------------------------------------------------------------- */

static int put_token(uint8_t *len, uint8_t *dst, const uint8_t *token,
                     uint32_t token_len) {
  if (token_len == 0) {
    *len = 0;
    return 0;
  }
  if (token == NULL || token_len != GK_WIRE_TOKEN_BYTES) return GK_EINVAL;
  memcpy(dst, token, GK_WIRE_TOKEN_BYTES);
  *len = GK_WIRE_TOKEN_BYTES;
  return 0;
}

/* A CREATE_ROOM body (CREATE_ROOM's, QUICK_PLAY's). */
static int room_body(gk_wire_create_room *c, uint32_t max_players,
                     uint32_t input_delay, const char *genre,
                     const char *options_json, const uint8_t *token,
                     uint32_t token_len) {
  if (genre == NULL || strlen(genre) > GK_WIRE_GENRE_MAX || max_players > 255 ||
      input_delay > 255 ||
      (options_json != NULL && strlen(options_json) > GK_WIRE_CONFIG_MAX))
    return GK_EINVAL;
  c->max_players = (uint8_t)max_players;
  c->input_delay = (uint8_t)input_delay;
  strcpy(c->genre, genre);
  if (options_json != NULL) strcpy(c->config, options_json);
  return put_token(&c->token_len, c->token, token, token_len);
}

int gk_web_create_room_at(gk_web *w, uint64_t now, uint32_t max_players,
                          uint32_t input_delay, const char *genre,
                          const char *options_json, const uint8_t *token,
                          uint32_t token_len) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_CREATE_ROOM;
  int rc = room_body(&m.u.create_room, max_players, input_delay, genre,
                     options_json, token, token_len);
  return rc != 0 ? rc : gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_name_at(gk_web *w, uint64_t now, const char *name) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_NAME;
  size_t n = name ? strnlen(name, GK_WIRE_NAME_MAX + 1) : 0;
  if (!gk_wire_name_valid(name ? name : "", n)) return GK_EINVAL;
  memcpy(m.u.name, name, n);
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_next_room_at(gk_web *w, uint64_t now, const char *code) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_NEXT_ROOM;
  if (code == NULL || gk_wire_code_pad(code, m.u.room.code) != 0)
    return GK_EINVAL;
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_quick_play_at(gk_web *w, uint64_t now, const char *code,
                         uint32_t max_players, uint32_t input_delay,
                         const char *genre, const char *options_json) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_QUICK_PLAY;
  if (code == NULL || code[0] == '\0')
    memcpy(m.u.quick.code, GK_WIRE_CODE_ANY, GK_WIRE_CODE_LEN + 1);
  else if (gk_wire_code_pad(code, m.u.quick.code) != 0)
    return GK_EINVAL;
  int rc = room_body(&m.u.quick.room, max_players, input_delay, genre,
                     options_json, NULL, 0);
  return rc != 0 ? rc : gk_net_peer_send_msg(&w->peer, now, &m);
}

static int room_msg(gk_wire_msg *m, gk_wire_type type, const char *code,
                    const uint8_t *token, uint32_t token_len) {
  memset(m, 0, sizeof *m);
  m->type = type;
  /* a short code as people type it, or a wire code */
  if (code == NULL || gk_wire_code_pad(code, m->u.room.code) != 0)
    return GK_EINVAL;
  return put_token(&m->u.room.token_len, m->u.room.token, token, token_len);
}

int gk_web_join_at(gk_web *w, uint64_t now, const char *code, uint32_t role,
                   const uint8_t *token, uint32_t token_len) {
  gk_wire_msg m;
  int rc = room_msg(&m, GK_MSG_JOIN_ROOM, code, token, token_len);
  if (rc != 0) return rc;
  if (role != GK_WIRE_ROLE_PLAYER && role != GK_WIRE_ROLE_SPECTATOR)
    return GK_EINVAL;
  m.u.room.role = (uint8_t)role;
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_spectate_at(gk_web *w, uint64_t now, const char *code,
                       const uint8_t *token, uint32_t token_len) {
  gk_wire_msg m;
  int rc = room_msg(&m, GK_MSG_SPECTATE, code, token, token_len);
  if (rc != 0) return rc;
  return gk_net_peer_spectate(&w->peer, now, m.u.room.code,
                              token_len ? m.u.room.token : NULL);
}

int gk_web_code_shown(const char *code, char out[GK_WIRE_CODE_LEN + 1]) {
  char wire[GK_WIRE_CODE_LEN + 1];
  if (code == NULL || gk_wire_code_pad(code, wire) != 0) return GK_EINVAL;
  return gk_wire_code_shown(wire, out);
}

int gk_web_rejoin_at(gk_web *w, uint64_t now, const char *code, uint32_t slot,
                     const uint8_t *secret, const uint8_t *token,
                     uint32_t token_len) {
  gk_wire_msg m;
  int rc = room_msg(&m, GK_MSG_REJOIN_ROOM, code, token, token_len);
  if (rc != 0) return rc;
  if (secret == NULL) return GK_EINVAL;
  return gk_net_peer_rejoin(&w->peer, now, code, slot, secret,
                            token_len ? m.u.room.token : NULL);
}

int gk_web_start_match_at(gk_web *w, uint64_t now) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_START_MATCH;
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_end_match_at(gk_web *w, uint64_t now, uint32_t reason) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_END_MATCH;
  if (reason > GK_WIRE_END_REASON_MAX) return GK_EINVAL;
  m.u.end_reason = (uint8_t)reason;
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

int gk_web_remove_player_at(gk_web *w, uint64_t now, uint32_t slot) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_REMOVE_PLAYER;
  if (slot >= GK_PLAYERS_MAX) return GK_EINVAL;
  m.u.remove.slot = (uint8_t)slot;
  m.u.remove.step = GK_WIRE_STEP_ASAP;
  return gk_net_peer_send_msg(&w->peer, now, &m);
}

/* --- flattened options -------------------------------------------------- */

int gk_web_kv_number(const gk_sim *sim, void *cfg, const char *key, double d,
                     char *err, size_t errlen) {
  return gk_config_apply_kv_number(sim, cfg, key, d, "options", err, errlen);
}

int gk_web_kv_bool(const gk_sim *sim, void *cfg, const char *key, int b,
                   char *err, size_t errlen) {
  return gk_config_apply_kv_bool(sim, cfg, key, b, "options", err, errlen);
}

int gk_web_kv_text(const gk_sim *sim, void *cfg, const char *key, const char *s,
                   char *err, size_t errlen) {
  return gk_config_apply_kv_text(sim, cfg, key, s, "options", err, errlen);
}
