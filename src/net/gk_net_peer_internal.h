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

/* gk_net_peer_predict.c: allocates the head's rings for a started match
 * (0 or GK_ENOMEM); frees them. */
int gk__peer_head_open(gk_net_peer *p, uint32_t players);
void gk__peer_head_close(gk_net_peer *p);
/* Newly confirmed steps before..inbuf.confirmed-1 (still held): checks
 * them against what the head assumed and keeps each player's last record.
 * Call before the loop reads them. */
void gk__peer_head_confirmed(gk_net_peer *p, uint64_t before);
/* At the end of a timeout call: restores the head if it must and runs it
 * towards the step whose time it is (within the cap); notes display
 * latency. Without prediction, notes display latency of confirmed steps. */
void gk__peer_head_update(gk_net_peer *p);
/* After sampling: the gentle slow-down near the bound (prediction). */
void gk__peer_pace(gk_net_peer *p);
/* Notes one latency sample (us) from `since_ns` to p->now. */
void gk__peer_note(uint32_t *arr, uint32_t *n, uint32_t cap, uint64_t now,
                   uint64_t since_ns);

#endif
