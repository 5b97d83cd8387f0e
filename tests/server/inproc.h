/* inproc.h: a gk_server and its players in one process, over real ENet on
 * 127.0.0.1 (issue 12's tests: test_rejoin.c, test_late_join.c).
 *
 * A scenario (scen) says what happens: the genre and the room, who drops
 * and comes back with which faults, spectators, a late joiner, when the
 * creator ends the match. inproc_run plays it to the end (every loop
 * bounded by a guard timer), then verifies every replay the server wrote
 * (and, for a late join, runs `gk-replay info --json` on it). The
 * clients' hashes per step, their snapshots, errors and ends are in the
 * world for the test to check. The step rate is 200 Hz so that 1600
 * steps take 8 s.
 */
#ifndef GK_TESTS_INPROC_H
#define GK_TESTS_INPROC_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gk_net_fault.h"
#include "gk_net_peer.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_server.h"

#define INPROC_CLIENTS 10
#define INPROC_HCAP 4096
#define INPROC_GUARD_MS 60000

enum { K_PLAYER = 1, K_REJOIN, K_SPECTATOR, K_LATE };
enum { T_NONE, T_FLIP, T_FLIP_FIXED, T_ROOM };

typedef struct scen {
  const char *genre;    /* NULL: survivors */
  uint32_t players;     /* at the start; 0: 3 */
  uint32_t max_players; /* the room's cap; 0: players */
  int neutral;
  uint32_t hold_ms;
  int faults;         /* 5% loss, 30 ms latency each way, for everyone */
  uint64_t drop_step; /* 0: nobody drops */
  uint32_t away_ms;
  int tamper;      /* the first rejoin attempt's snapshot is tampered */
  int bad_secret;  /* the first rejoin attempt has a wrong secret */
  int expect_back; /* a rejoin must succeed in the end */
  uint64_t end_step;
  uint32_t spectators;    /* join at step 300 */
  int throttle_spectator; /* the first spectator loses everything for a while */
  uint64_t late_step;     /* 0: none; else one more player joins then */
} scen;

typedef struct world world;

typedef struct client {
  world *w;
  int used, kind, attempt;
  gk_net_transport t;
  uint32_t server_id;
  gk_net_peer peer;
  gk_net_fault relay;
  int relayed;
  int connected, join_sent;
  int joined, ended, end_reason, desyncs, error;
  char error_text[GK_WIRE_TEXT_MAX + 1];
  uint8_t secret[GK_WIRE_SECRET_LEN];
  int have_secret;
  uint32_t slot;
  uint64_t *hashes;
  uint64_t first_run, nsteps;
  uint32_t start_mask; /* the active mask of the first step it ran */
  uint64_t join_seen;  /* the first step whose mask had another bit */
  int snap_rc, snaps, resumed;
  char snap_err[GK_ERRMSG_MAX];
  gk_net_peer_snap_info info;
  int tamper;
  uint8_t *held[64]; /* T_FLIP_FIXED: the transfer, held back */
  size_t held_len[64];
  uint32_t nheld;
} client;

struct world {
  uv_loop_t loop;
  gk_server *srv;
  scen o;
  uint16_t port, front;
  gk_net_fault shared;
  int shared_up;
  char code[GK_WIRE_CODE_LEN + 1];
  int start_sent, end_sent, timed_out;
  uv_timer_t guard, drop_timer, back_timer, throttle_timer;
  int dropped, spectating, throttled, late_added;
  uint8_t secret[GK_WIRE_SECRET_LEN]; /* of the dropped slot */
  uint32_t drop_slot;
  client c[INPROC_CLIENTS];
  uint32_t nc;
  gk_server_stats stats;
  char dir[64];          /* the replays */
  uint32_t replays_ok;   /* replays that verified */
  char replay_err[2048]; /* the first that did not */
  char info[16384];      /* late join: gk-replay info --json of the replay */
};

/* Plays scenario `o` in `w` (overwritten) to its end. */
void inproc_run(world *w, const scen *o);
/* Frees what a run allocated (after the checks). */
void inproc_free(world *w);
/* The client of the last / the first rejoin attempt, or NULL. */
client *inproc_rejoined(world *w);
client *inproc_first_rejoin(world *w);
/* The late joiner, or NULL. */
client *inproc_late(world *w);
/* Every step `c` ran from its snapshot on hashes as player 0's did. */
void inproc_expect_agrees(const world *w, const client *c, const char *who);
/* Every player of the start (but one that dropped) ended by the
 * creator's END_MATCH, nobody heard of a desync, and the one replay
 * verified. */
void inproc_expect_ended(const world *w);

#endif
