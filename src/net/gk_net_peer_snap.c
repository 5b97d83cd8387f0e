/* gk_net_peer_snap.c: a peer that starts from the host's snapshot instead
 * of step 0: a rejoining player (REJOIN_ROOM) or a spectator (SPECTATE).
 *
 * The order, and why:
 *   1. MATCH_START sets the match up (genre, config, buffers) without
 *      sampling (await_snapshot); CONFIRMED is dropped until 3.
 *   2. SNAPSHOT_BEGIN opens a transfer (gk_net_chunk.c): its size is
 *      bounded, its room code must be the one asked for; SNAPSHOT_CHUNKs
 *      fill it, each checked against its checksum, the whole against the
 *      announced XXH3-64.
 *   3. The genre reads the state (read_state, which trusts nothing), the
 *      peer hashes it and compares with the host's hash at that step
 *      BEFORE it steps: a state that does not hash the same is refused
 *      (`snapshot` callback with the reason) and the peer stays as it
 *      was. Then gk_loop_adopt, a fresh input buffer from that step, and
 *      the catch-up: gk_net_peer.c runs the confirmed steps in batches
 *      from its timeouts and resumes sampling at the snapshot's next_input
 *      once it is within the input delay of the head.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_peer_internal.h"
#include "gk_state.h"

#define SAY(p, ...)                                                            \
  snprintf((p)->snap.error, sizeof(p)->snap.error, __VA_ARGS__)

/* A refused snapshot: counted, reported (the message is in p->snap.error),
 * and the peer goes on as it was. */
static int refuse(gk_net_peer *p, int rc) {
  p->snapshots_refused++;
  p->stats.drop_unexpected++;
  gk_chunk_rx_close(&p->snap_rx);
  if (p->cb.snapshot != NULL) p->cb.snapshot(p->cb.ctx, p, rc, &p->snap);
  return rc;
}

static int on_begin(gk_net_peer *p, const gk_wire_snap_begin *b) {
  if (!p->started || (!p->await_snapshot && !p->spectator)) {
    SAY(p, "snapshot: not asked for (no rejoin or spectate pending)");
    return refuse(p, GK_ESTATE);
  }
  if (strcmp(b->code, p->expect_code) != 0) {
    SAY(p, "snapshot: for room %s, this peer asked for %s: refused", b->code,
        p->expect_code);
    return refuse(p, GK_EMISMATCH);
  }
  if (b->active_mask == 0 ||
      (b->active_mask & ~gk_all_players(p->match.players)) != 0) {
    SAY(p, "snapshot: active mask %08x out of range", (unsigned)b->active_mask);
    return refuse(p, GK_EPROTO);
  }
  int rc = gk_chunk_rx_begin(&p->snap_rx, b->id, b->total, b->chunk_size,
                             b->chunks, b->sum, GK_WIRE_SNAP_TOTAL_MAX);
  if (rc != 0) {
    SAY(p, "snapshot: %u bytes in %u chunks of %u refused: %s",
        (unsigned)b->total, (unsigned)b->chunks, (unsigned)b->chunk_size,
        gk_strerror(rc));
    return refuse(p, rc);
  }
  p->snap_begin = *b;
  return 0;
}

/* The genre reads the state; it must hash to the host's hash at that step
 * before the loop adopts it. Returns 0 or a refusal. */
static int adopt(gk_net_peer *p, uint8_t *bytes, size_t len) {
  const gk_wire_snap_begin *b = &p->snap_begin;
  char err[GK_ERRMSG_MAX] = "";
  gk_reader r;
  gk_reader_init(&r, bytes, len);
  void *st = p->sim->read_state(p->sim_cfg, &r, err, sizeof err);
  if (st != NULL && (r.err != 0 || gk_reader_left(&r) != 0)) {
    p->sim->destroy(st);
    st = NULL;
  }
  if (st == NULL) {
    SAY(p,
        "snapshot: the genre refused the state of step %llu (%zu bytes): "
        "%.160s",
        (unsigned long long)b->step, len, err[0] ? err : "trailing bytes");
    return refuse(p, GK_EPROTO);
  }
  uint64_t h = gk_sim_hash(p->sim, st, p->loop.hasher);
  if (h != b->hash) {
    p->sim->destroy(st);
    {
      SAY(p,
          "snapshot: the state of step %llu hashes to %016llx, the host's "
          "is %016llx: refused",
          (unsigned long long)b->step, (unsigned long long)h,
          (unsigned long long)b->hash);
      return refuse(p, GK_EMISMATCH);
    }
  }
  gk_inbuf nb;
  gk_inbuf_options o = {.players = p->match.players,
                        .input_size = p->sim->input_size,
                        .active_mask = b->active_mask,
                        .first_step = b->step,
                        .window = p->inbuf.window};
  int rc = gk_inbuf_init(&nb, &o);
  if (rc != 0) {
    p->sim->destroy(st);
  } else if ((rc = gk_loop_adopt(&p->loop, p->sim, st, p->match.players,
                                 b->step)) != 0) {
    gk_inbuf_close(&nb); /* the loop freed the state */
  }
  if (rc != 0) {
    SAY(p, "snapshot: cannot adopt step %llu: %s", (unsigned long long)b->step,
        gk_strerror(rc));
    return refuse(p, rc);
  }
  gk_inbuf_close(&p->inbuf);
  p->inbuf = nb;
  gk_history_mark(&p->hist, &p->loop); /* its past starts here */
  return 0;
}

static void adopted(gk_net_peer *p, size_t len) {
  const gk_wire_snap_begin *b = &p->snap_begin;
  uint64_t from = b->next_input;
  if (p->spectator || from < b->step) from = b->step;
  p->sched.first = from;
  p->sched.k = 0;
  p->acked = from;
  p->hash_from = b->step;
  p->blocked = 0;
  p->await_snapshot = 0;
  p->catching_up = 1;
  p->snapshots++;
  p->snap.kind = b->kind;
  p->snap.step = b->step;
  p->snap.bytes = len;
  p->snap.next_input = from;
  p->snap.adopted_ns = p->now;
  p->snap.resumed_ns = 0;
  p->snap.error[0] = '\0';
  if (p->cb.snapshot != NULL) p->cb.snapshot(p->cb.ctx, p, 0, &p->snap);
  gk__peer_send_inputs(p); /* ack = the snapshot's step: send from there */
  gk__peer_kick(p);
}

static int on_chunk(gk_net_peer *p, const gk_wire_snap_chunk *k) {
  int rc =
      gk_chunk_rx_put(&p->snap_rx, k->id, k->index, k->bytes, k->len, k->crc);
  if (rc == GK_ESTATE || rc == GK_EMISMATCH) {
    p->stats.drop_unexpected++; /* a stale transfer's chunk */
    return rc;
  }
  if (rc < 0) {
    SAY(p, "snapshot: chunk %u of transfer %u refused: %s", (unsigned)k->index,
        (unsigned)k->id, gk_strerror(rc));
    return refuse(p, rc);
  }
  if (rc == 0) return 0;
  size_t len;
  uint8_t *bytes = gk_chunk_rx_take(&p->snap_rx, &len);
  if (bytes == NULL) {
    SAY(p, "snapshot: out of memory");
    return refuse(p, GK_ENOMEM);
  }
  rc = adopt(p, bytes, len);
  free(bytes);
  if (rc == 0) adopted(p, len);
  return rc;
}

int gk__peer_on_snapshot(gk_net_peer *p, const gk_wire_msg *m) {
  if (m->type == GK_MSG_SNAPSHOT_BEGIN) return on_begin(p, &m->u.snap_begin);
  return on_chunk(p, &m->u.snap_chunk);
}

static int ask(gk_net_peer *p, const char *code, gk_wire_msg *m) {
  if (p->started || p->await_snapshot || p->opts.no_sim ||
      !gk_wire_code_valid(code))
    return GK_ESTATE; /* no_sim: no state to adopt */
  memcpy(p->expect_code, code, GK_WIRE_CODE_LEN + 1);
  p->snap.request_ns = p->now;
  int rc = gk_net_peer_send_msg(p, p->now, m);
  if (rc == 0) p->await_snapshot = 1;
  return rc;
}

int gk_net_peer_rejoin(gk_net_peer *p, uint64_t now_ns, const char *code,
                       uint32_t slot, const uint8_t secret[GK_WIRE_SECRET_LEN],
                       const uint8_t *token) {
  p->now = now_ns;
  if (code == NULL || secret == NULL || slot >= GK_PLAYERS_MAX)
    return GK_EINVAL;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_REJOIN_ROOM;
  memcpy(m.u.rejoin.code, code, strnlen(code, GK_WIRE_CODE_LEN));
  m.u.rejoin.slot = (uint8_t)slot;
  memcpy(m.u.rejoin.secret, secret, GK_WIRE_SECRET_LEN);
  if (token != NULL) {
    m.u.rejoin.token_len = GK_WIRE_TOKEN_BYTES;
    memcpy(m.u.rejoin.token, token, GK_WIRE_TOKEN_BYTES);
  }
  return ask(p, code, &m);
}

int gk_net_peer_spectate(gk_net_peer *p, uint64_t now_ns, const char *code,
                         const uint8_t *token) {
  p->now = now_ns;
  if (code == NULL) return GK_EINVAL;
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_SPECTATE;
  memcpy(m.u.room.code, code, strnlen(code, GK_WIRE_CODE_LEN));
  if (token != NULL) {
    m.u.room.token_len = GK_WIRE_TOKEN_BYTES;
    memcpy(m.u.room.token, token, GK_WIRE_TOKEN_BYTES);
  }
  p->spectator = 1;
  int rc = ask(p, code, &m);
  if (rc != 0) p->spectator = 0;
  return rc;
}
