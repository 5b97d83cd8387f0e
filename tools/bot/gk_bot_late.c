/* gk_bot_late.c: gk-bot --late-join STEP (late join). One more bot player
 * per room, beyond --players, connects when the room's creator has run
 * step STEP and sends JOIN_ROOM to the running match. The room is created
 * with a cap of players + 1, so the server has a free slot for it; the
 * joiner's peer sees that its slot is not in MATCH_START's active mask and
 * starts from the server's snapshot (kind JOIN). From then on it is a
 * player like the others: its hashes are compared step by step with the
 * other bots' (the room's ring) and by the server (DESYNC notices), so the
 * summary's `desyncs` counts it. The room's entry gets `late_joins`: one
 * {"slot", "snapshot_step", "snapshot_bytes", "resume_ms"} per joiner
 * (resume_ms: from JOIN_ROOM sent to resumed sampling; null if it never
 * resumed).
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gk_bot.h"

uint32_t bot_room_peers(const bot *b) {
  return b->players + (b->late_join ? 1u : 0u);
}

int bot_peer_in_play(const bot *b, const bot_peer *p) {
  return p->index < b->players || p->tr_open;
}

int bot_late_check(const bot *b) {
  if (!b->late_join) return -1;
  if (!b->sim->late_join) {
    fprintf(stderr,
            "gk-bot: --late-join: %s takes no players after the start\n",
            b->sim->name);
    return 2;
  }
  if (b->late_join_step >= b->steps) {
    fprintf(stderr, "gk-bot: --late-join: step %llu is not before --steps\n",
            (unsigned long long)b->late_join_step);
    return 2;
  }
  if (b->players + 1 > b->sim->players_max) {
    fprintf(stderr, "gk-bot: --late-join: %s takes at most %u players\n",
            b->sim->name, b->sim->players_max);
    return 2;
  }
  return -1;
}

void bot_late_step(bot_peer *p, uint64_t step) {
  bot *b = p->b;
  bot_room *r = p->room;
  if (!b->late_join || p->index != 0 || step != b->late_join_step) return;
  bot_peer *j = &r->peers[b->players];
  if (!j->tr_open) bot_connect_peer(j);
}

void bot_late_summary(cJSON *ro, const bot *b, const bot_room *r) {
  if (!b->late_join) return;
  cJSON *list = cJSON_AddArrayToObject(ro, "late_joins");
  const bot_peer *j = &r->peers[b->players];
  if (list == NULL || !j->tr_open || !j->peer_open ||
      j->peer.eng.snapshots == 0)
    return;
  const gk_net_peer_snap_info *s = &j->peer.eng.snap;
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "slot", j->peer.eng.match.slot);
  cJSON_AddNumberToObject(e, "snapshot_step", (double)s->step);
  cJSON_AddNumberToObject(e, "snapshot_bytes", (double)s->bytes);
  if (s->resumed_ns != 0 && s->request_ns != 0)
    cJSON_AddNumberToObject(e, "resume_ms",
                            (double)(s->resumed_ns - s->request_ns) / 1e6);
  else
    cJSON_AddNullToObject(e, "resume_ms");
  cJSON_AddItemToArray(list, e);
}
