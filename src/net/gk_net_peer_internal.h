/* gk_net_peer_internal.h: what gk_net_peer.c shares with
 * gk_net_peer_snap.c and gk_net_peer_state.c (src/net only). */
#ifndef GK_NET_PEER_INTERNAL_H
#define GK_NET_PEER_INTERNAL_H

#include "gk_net_peer.h"

/* gk_net_peer.c: sends one INPUT (unacknowledged records, the ack, the
 * hashes the host has not acknowledged). */
void gk__peer_send_inputs(gk_net_peer *p);
/* gk_net_peer.c: makes the next deadline now (catch-up, sampling). */
void gk__peer_kick(gk_net_peer *p);
/* gk_net_peer_snap.c: SNAPSHOT_BEGIN or SNAPSHOT_CHUNK from the host.
 * Returns 0 or why it was dropped (counted). */
int gk__peer_on_snapshot(gk_net_peer *p, const gk_wire_msg *m);

/* gk_net_peer_state.c: a STATE_REQUEST from the host: the state from the
 * history over the reliable channel, or a "cannot" STATE_BEGIN. Returns 0
 * or why it was dropped (counted). */
int gk__peer_on_state_request(gk_net_peer *p, const gk_wire_state_request *q);
/* gk_net_peer_state.c: opens the history of a started match (after
 * gk_loop_start) and takes its first snapshot. */
int gk__peer_history_open(gk_net_peer *p, uint32_t players);

#endif
