/* gk_net_session_away.c: a player whose connection dropped, held for a
 * while, and its return from a snapshot; a player who joins after the
 * start (see gk_net_session.h, "Away and back" and "Late join").
 *
 * While a slot is away it stays active, so by default the match stalls on
 * it (the STALL notice names it). With `neutral` the host puts an all-zero
 * record for it at every step up to the furthest any player may have
 * sampled (confirmed + input_delay + lead), so the others play on; those
 * records are confirmed and recorded like any other. Either way the slot's
 * acknowledgement is moved up to the confirmed step, so that the input
 * buffer's window does not fill up behind a player that is not there:
 * it comes back from a snapshot, not from the steps it missed.
 */
#include <string.h>

#include "gk_err.h"
#include "gk_net_session.h"

static int slot_active(const gk_net_session *s, uint32_t slot) {
  return (gk_inbuf_active_at(&s->inbuf, UINT64_MAX - 1) >> slot & 1u) != 0;
}

int gk_net_session_away_tick(gk_net_session *s, uint32_t slot, int neutral) {
  if (slot >= s->cfg.players) return GK_ERANGE;
  if (s->ended || !slot_active(s, slot)) return GK_ECLOSED;
  gk__session_player *pl = &s->pl[slot];
  gk_inbuf *b = &s->inbuf;
  if (pl->acked < b->confirmed) pl->acked = b->confirmed;
  gk_inbuf_ack(b, slot, b->confirmed);
  if (!neutral) return 0;
  uint8_t zero[GK_INPUT_SIZE_MAX];
  memset(zero, 0, sizeof zero);
  uint64_t upto = b->confirmed + s->cfg.input_delay + s->cfg.lead + 1u;
  for (uint64_t st = gk_inbuf_contiguous(b, slot, b->confirmed); st < upto;
       st++) {
    int rc = gk_inbuf_put(b, slot, st, zero);
    if (rc != 0 && rc != GK_EEXIST) break; /* the window, or the end */
  }
  return 0;
}

/* A player starts receiving again from step `from` (a rejoin or a late
 * join): confirmed steps and hash reports from there, our ack of its
 * inputs (`input_ack`) at the next send. */
static void restart(gk__session_player *pl, uint64_t from, uint64_t input_ack) {
  pl->acked = from;
  pl->input_ack = input_ack;
  pl->input_ack_sent = UINT64_MAX; /* tell it at the next send */
  pl->sent_ms = 0;
  pl->hashes_upto = from;
  pl->npending = 0;
  pl->pend_head = 0;
  pl->desynced = 0;
}

int gk_net_session_rejoin(gk_net_session *s, uint32_t slot, uint64_t from,
                          uint64_t *next_input) {
  if (slot >= s->cfg.players) return GK_ERANGE;
  if (s->ended) return GK_ECLOSED;
  if (!slot_active(s, slot)) return GK_EPERM;
  if (from > s->inbuf.confirmed || from < s->inbuf.low) return GK_ESTALE;
  gk__session_player *pl = &s->pl[slot];
  restart(pl, from, gk_inbuf_contiguous(&s->inbuf, slot, s->inbuf.confirmed));
  if (next_input != NULL) *next_input = pl->input_ack;
  return 0;
}

/* --- late join ------------------------------------------------------------ */

int gk_net_session_join(gk_net_session *s, uint32_t slot, uint64_t from,
                        uint64_t *at, uint64_t *next_input, uint64_t now_ms) {
  if (now_ms > s->now_ms) s->now_ms = now_ms;
  gk_inbuf *b = &s->inbuf;
  if (slot >= s->cfg.players) return GK_ERANGE;
  if (s->ended || s->end_scheduled) return GK_ECLOSED;
  if (slot_active(s, slot) || (b->ack_mask >> slot & 1u) != 0) return GK_EEXIST;
  if (from != b->confirmed || from != s->loop.steps) return GK_ESTALE;
  if (gk_inbuf_delay_busy(b)) return GK_EBUSY;
  uint64_t j = b->confirmed;
  uint32_t delay = b->delay;
  if (j + delay >= b->low + b->window) return GK_EAHEAD;
  int rc = gk_inbuf_schedule(b, j, GK_INBUF_ADD_PLAYER, slot);
  if (rc != 0) return rc;
  /* Nobody sampled for it before J + delay: those records are neutral, as
   * every player's first `delay` steps are at the start. */
  uint8_t zero[GK_INPUT_SIZE_MAX];
  memset(zero, 0, sizeof zero);
  for (uint64_t st = j; st < j + delay; st++) gk_inbuf_put(b, slot, st, zero);
  restart(&s->pl[slot], j, j + delay);
  s->joined |= 1u << slot;
  s->stats.joins++;
  if (at != NULL) *at = j;
  if (next_input != NULL) *next_input = j + delay;
  /* The other peers learn of it from the merged input of step J (its bit
   * set in the active mask that CONFIRMED carries): no notice of its own.
   * J is confirmed by the next INPUT or tick, like any step. */
  return 0;
}
