/* gk_room_bots.c: seats the server plays itself (the room option
 * `room.bots`, docs/PROTOCOL.md "Server bots").
 *
 * The story of a bot seat:
 *   1. CREATE_ROOM's options may hold {"room": {"bots": N}}: N seats
 *      beyond the room's max_players (the seats for people) that the
 *      server plays with the genre's built-in bot (gk_sim.bot_init,
 *      bot_next). gk_room_lobby.c takes the `room` object out of the
 *      options (the genre never sees it) and hands it to
 *      gk_room__bots_configure, which checks it and gives the room its part
 *      (r->bots; NULL for a room without bots);
 *   2. at START_MATCH the bots take the slots right after the players
 *      present (gk_room__bots_plan, gk_room__bots_seat): they are active in the
 *      session from step 0 like anyone, and every slot's bot is seeded as
 *      gk-replay record seeds it: slot p with the p-th gk_splitmix64
 *      output of the match seed (gk_bot_input_init);
 *   3. before every tick of the session and after every call into it
 *      (gk_room__bots_feed), each bot's records go into the session as an INPUT
 *      from its slot (gk_net_session_on_msg: the path of a remote
 *      player's INPUT, minus the datagram), for the next unconfirmed step
 *      only, and again for the next while that confirms a step: a step
 *      never waits for a bot, and a bot decides as late as it can. Peers
 *      only ever see confirmed steps, so feeding further ahead would win
 *      them nothing and make a bot answer input delay + lead steps late.
 *      A bot asks for one record per step it fills, in
 *      step order; the steps the host holds neutral (the first input_delay
 *      steps, the steps a delay raise skips) get none, as a peer does not
 *      sample them. A genre with bot_answer (gk_sim.h) then changes each
 *      record to answer what the referee's run asks of the bot now
 *      (survivors: its pending level-up pick, taken a few steps after the
 *      prompt, not after the genre's timer). The records are then
 *      confirmed, sent to every peer, recorded and run by the referee like
 *      any player's;
 *   4. a bot is never away, sends no hashes and gets no reconnect secret;
 *      the creator may remove it (REMOVE_PLAYER) like a player. When no
 *      player but bots is left in the match, it ends (all left), as a
 *      room without connections does.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_config.h"
#include "gk_err.h"
#include "gk_room_internal.h"

struct gk_room__bots {
  uint32_t seats;   /* room.bots: seats the server plays */
  uint32_t seated;  /* their slots once the match started (0 before) */
  uint32_t mask;    /* those of them still in the match */
  int all_left;     /* the end was asked for: nobody but bots is left */
  uint64_t records; /* records made */
  gk_bot_input in;  /* every slot's bot, seeded at the start */
  uint8_t rec[GK_WIRE_STEPS_MAX * GK_INPUT_SIZE_MAX];
};

static uint32_t popcount32(uint32_t m) {
  uint32_t n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

/* --- the option ----------------------------------------------------------- */

/* options.room.bots: an integer 0..GK_PLAYERS_MAX - 1 (the range before
 * the integer check: a cast of a number out of range is undefined). */
static int parse_bots(const cJSON *v, uint32_t *out, char *err, size_t errlen) {
  if (!cJSON_IsNumber(v))
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room.bots: must be an integer, got %s",
                   gk_config_type_name(v));
  double d = v->valuedouble;
  if (!(d >= 0 && d <= GK_PLAYERS_MAX - 1))
    return gk_errf(err, errlen, GK_ERANGE,
                   "options.room.bots: must be in 0..%d, got %g",
                   GK_PLAYERS_MAX - 1, d);
  if (d != (double)(uint32_t)d)
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room.bots: must be an integer, got a fraction");
  *out = (uint32_t)d;
  return 0;
}

/* The `room` object: known keys only. *bots gets room.bots (0 if absent). */
static int parse_room(const cJSON *room, uint32_t *bots, char *err,
                      size_t errlen) {
  *bots = 0;
  if (!room) return 0;
  if (!cJSON_IsObject(room))
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room: must be an object, got %s",
                   gk_config_type_name(room));
  for (const cJSON *v = room->child; v; v = v->next) {
    if (gk_room__predict_key(v->string)) continue;   /* gk_room_delay.c's */
    if (strcmp(v->string, "listed") == 0) continue;  /* gk_room_lobby.c's */
    if (strcmp(v->string, "rematch") == 0) continue; /* gk_room_quick.c's */
    if (strcmp(v->string, "bots") != 0)
      return gk_errf(err, errlen, GK_ENOTFOUND,
                     "options.room.%s: unknown key (expected bots, listed, "
                     "prediction, prediction_window, rematch)",
                     v->string);
    int rc = parse_bots(v, bots, err, errlen);
    if (rc) return rc;
  }
  return 0;
}

/* Can the room take `bots` bot seats beside `seats` seats for players? */
static int check_seats(uint32_t grant, const gk_room *r, uint32_t bots,
                       char *err, size_t errlen) {
  const gk_sim *sim = r->genre->sim;
  if (sim->bot_size == 0 || sim->bot_size > GK_BOT_SIZE_MAX)
    return gk_errf(err, errlen, GK_EINVAL,
                   "options.room.bots: genre %s has no built-in bot the "
                   "server can run",
                   sim->name);
  uint32_t total = r->max_players + bots;
  if (total > r->genre->max_players)
    return gk_errf(err, errlen, GK_ERANGE,
                   "options.room.bots: %u bots and %u seats for players make "
                   "%u players, %s rooms take at most %u",
                   bots, r->max_players, total, sim->name,
                   r->genre->max_players);
  if (total > grant)
    return gk_errf(err, errlen, GK_EGRANT,
                   "options.room.bots: the token allows %u players, %u seats "
                   "and %u bots make %u",
                   grant, r->max_players, bots, total);
  return 0;
}

int gk_room__bots_configure(gk_room *r, uint32_t grant, int seats_asked,
                            const cJSON *room, char *err, size_t errlen) {
  uint32_t bots = 0;
  int rc = parse_room(room, &bots, err, errlen);
  if (rc || bots == 0) return rc;
  /* max_players 0 asks for the genre's cap: the people get what the bots
   * leave of it */
  if (!seats_asked)
    r->max_players =
        r->genre->max_players > bots ? r->genre->max_players - bots : 1;
  rc = check_seats(grant, r, bots, err, errlen);
  if (rc) return rc;
  r->bots = calloc(1, sizeof(*r->bots));
  if (!r->bots) return gk_errf(err, errlen, GK_ENOMEM, "out of memory");
  r->bots->seats = bots;
  return 0;
}

void gk_room__bots_free(gk_room__bots *b) {
  free(b);
}

uint32_t gk_room__bots_seats(const gk_room__bots *b) {
  return b ? b->seats : 0;
}

uint32_t gk_room__bots_mask(const gk_room__bots *b) {
  return b ? b->seated : 0;
}

uint64_t gk_room__bots_records(const gk_room__bots *b) {
  return b ? b->records : 0;
}

/* --- the start ------------------------------------------------------------ */

uint32_t gk_room__bots_plan(const gk_room *r) {
  uint32_t n = gk_room__bots_seats(r->bots);
  if (n == 0) return 0;
  return (uint32_t)(((1u << n) - 1u) << r->nslots); /* nslots + n <= 16 */
}

int gk_room__bots_prepare(gk_room *r, uint32_t players, char *err,
                          size_t errlen) {
  if (!r->bots) return 0;
  int rc =
      gk_bot_input_init(&r->bots->in, r->genre->sim, r->cfg, r->seed, players);
  if (rc)
    return gk_errf(err, errlen, rc, "the genre's bots cannot start: %s",
                   gk_strerror(rc));
  return 0;
}

void gk_room__bots_seat(gk_room_host *h, gk_room *r, uint32_t mask) {
  if (!r->bots || mask == 0) return;
  r->bots->seated = r->bots->mask = mask;
  r->nslots += popcount32(mask);
  h->stats.bot_seats += popcount32(mask);
  gk_room__bots_feed(h, r);
}

/* --- each step ------------------------------------------------------------ */

/* Steps one call confirms from the bots' records at most; the rest follow
 * from the next tick (a player may be up to input delay + lead ahead). */
#define BOTS_STEPS_PER_CALL 64u

/* The bot of `slot` makes its records for the steps from the first its
 * slot has none for up to (not including) `upto`, and they go into the
 * session as its INPUT. A step the host holds already (neutral) ends a
 * batch; the next batch starts after it. */
static void feed_slot(gk_room_host *h, gk_room *r, uint32_t slot,
                      uint64_t upto) {
  gk_room__bots *b = r->bots;
  gk_net_session *se = &r->session;
  const gk_sim *sim = r->genre->sim;
  size_t size = sim->input_size;
  for (int batch = 0; batch < 8; batch++) {
    const gk_inbuf *ib = &se->inbuf;
    uint64_t from = gk_inbuf_contiguous(ib, slot, ib->confirmed);
    uint32_t n = 0;
    const void *run = gk_loop_state(&se->loop);
    while (from + n < upto && n < GK_WIRE_STEPS_MAX &&
           gk_inbuf_contiguous(ib, slot, from + n) == from + n) {
      sim->bot_next(b->in.bots[slot], b->rec + n * size);
      /* the bot answers what the run asks now (a level-up pick) */
      if (sim->bot_answer != NULL && run != NULL)
        sim->bot_answer(run, slot, b->rec + n * size);
      n++;
    }
    if (n == 0) return;
    b->records += n;
    gk_wire_msg m;
    memset(&m, 0, sizeof(m));
    m.type = GK_MSG_INPUT;
    m.u.input = (gk_wire_input){.slot = (uint8_t)slot,
                                .input_size = (uint8_t)size,
                                .count = (uint8_t)n,
                                .ack = ib->confirmed,
                                .first = from,
                                .records = b->rec};
    if (gk_net_session_on_msg(se, slot, &m, gk_room__now(h)) != 0) return;
  }
}

void gk_room__bots_feed(gk_room_host *h, gk_room *r) {
  gk_room__bots *b = r->bots;
  if (!b || b->mask == 0 || r->state != GK_ROOM_PLAYING || r->end_pending ||
      r->session.ended)
    return;
  gk_net_session *se = &r->session;
  for (uint32_t slot = 0; slot < se->cfg.players; slot++)
    if ((b->mask >> slot & 1u) != 0 && (se->inbuf.ack_mask >> slot & 1u) == 0)
      b->mask &= ~(1u << slot); /* removed by the creator */
  /* The next unconfirmed step only, and again while that confirms it (the
   * others' records were in): the host never waits for a bot, and a bot's
   * record is made as late as it can be, from the run's latest state. */
  for (uint32_t k = 0; k < BOTS_STEPS_PER_CALL && !se->ended; k++) {
    uint64_t next = se->inbuf.confirmed;
    for (uint32_t slot = 0; slot < se->cfg.players; slot++)
      if (b->mask >> slot & 1u) feed_slot(h, r, slot, next + 1);
    if (se->inbuf.confirmed == next) break;
  }
  /* nobody but bots left (removed, not merely away): the match ends as a
   * room whose players all left */
  if (!b->all_left && (se->inbuf.ack_mask & ~b->seated) == 0) {
    b->all_left = 1;
    gk_net_session_end(se, GK_WIRE_END_ALL_LEFT, gk_room__now(h));
  }
}
