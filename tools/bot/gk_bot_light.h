/* gk_bot_light.h: gk-bot --light, a load generator that costs less than
 * the server it loads.
 *
 * Each light player is a peer engine (gk_net_peer.h) in its
 * no-simulation mode and the room's setup is gk_net_lobby.h's: the same
 * protocol code as the full bot's; what follows is what the driver adds
 * around it, and what the engine's mode means for the load.
 *
 * The full gk-bot gives every player its own ENet host, its own timer and
 * its own run of the match (the genre's bot as input, every step simulated
 * and hashed): on a small machine it burns more CPU than the server, so
 * a capacity run measures the bots. Light players do only what the
 * server needs from a player:
 *   - many players share one ENet host (up to GK_BOT_LIGHT_HOST_PEERS
 *     connections each; the server tells them apart by connection, as it
 *     would tell apart players behind one NAT); with --ws, players of
 *     WebSocket have one TCP connection each, GK_BOT_LIGHT_HOST_PEERS
 *     of them per client object (gk_bot_link.h);
 *   - one uv timer samples every player on its own schedule (rooms are
 *     spread over the step period, so the load has no burst per step);
 *     the schedule is fixed from MATCH_START on: a player held back by
 *     the lockstep bound or a late wake-up catches up at once when it
 *     may, so a hiccup costs only the steps it delayed;
 *   - input delay changes are followed as docs/PROTOCOL.md says (a raise
 *     skips the steps the host holds neutral, a lowering lets deadlines
 *     pass), read from the confirmed steps' flags;
 *   - no simulation: inputs come from a seeded pattern (bytes 0 and 1 of
 *     each record from the player's splitmix64 stream, changed every 32
 *     steps; every other byte 0, so no button is ever pressed);
 *   - acknowledgements as usual (INPUT.ack, and every unacknowledged
 *     record repeated), no hash reports (the server takes that: it
 *     compares only what it is sent).
 * Room setup is the full bot's: player 0 creates the room, the others
 * join with its code, player 0 starts the match and ends it (END_MATCH)
 * once N steps are confirmed. A player whose request got no answer
 * (ROOM_CREATED, JOINED) within 5 s of its connect, or whose connection
 * ENet ended before that, connects again after a pause (250 ms, doubling
 * up to 2 s), up to 6 attempts, as a real client does: a connect burst of
 * a large run loses datagrams in the kernel. Output: one JSON summary on
 * stdout with the keys bench/bench_server.py reads (rooms_completed,
 * desyncs, confirm_latency_us), "mode": "light", and connect_retries
 * (attempts after a player's first).
 */
#ifndef GK_BOT_LIGHT_H
#define GK_BOT_LIGHT_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "gk_sim.h"

#define GK_BOT_LIGHT_HOST_PEERS 256 /* connections per ENet host */

typedef struct gk_bot_light_options {
  uv_loop_t *loop;   /* must be non-NULL; run by gk_bot_light_run */
  const gk_sim *sim; /* must be non-NULL: the genre (its input size) */
  const char *host;  /* must be non-NULL: the server (or a relay) */
  uint16_t port;     /* non-zero */
  uint32_t rooms;    /* 1..4096 */
  uint32_t players;  /* per room, within the genre's range */
  uint64_t steps;    /* per match, >= 1 */
  uint64_t seed;     /* input pattern */
  uint32_t input_delay;
  const char *options; /* genre options JSON text, may be NULL */
  uint32_t timeout_s;  /* give up after this long */
  const char *ws_url;  /* players over WebSocket to this URL; NULL: ENet */
  uint32_t ws_players; /* with ws_url: the last K of each room; 0: all */
} gk_bot_light_options;

/* Plays every room to its end (or the timeout) on o->loop, prints the
 * summary and closes what it opened. Returns the exit status: 0 every
 * room finished, 1 a desync notice, 3 a room failed (refused,
 * disconnected, timed out), 2 bad options. */
int gk_bot_light_run(const gk_bot_light_options *o);

/* Shared by both bots' summaries. Adds "confirm_latency_us" {p50, p99,
 * samples} (nearest rank; sorts lat, which may be NULL when n is 0). */
void gk_bot_add_latency(cJSON *out, uint32_t *lat, uint64_t n);
/* The same under another key (p50, p99, samples of `lat`, sorted here). */
void gk_bot_add_pcts(cJSON *out, const char *key, uint32_t *lat, uint64_t n);
/* Prints `out` as one line on stdout and deletes it. */
void gk_bot_print_summary(cJSON *out);

#endif
