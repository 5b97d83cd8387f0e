/* rejoin_world.h: the in-process world of the rejoin tests: a gk_server
 * (the referee, replays on in a temporary folder) and survivors peers over
 * real ENet on 127.0.0.1, created and started through the real room
 * handshake, with the scenario knobs below (a drop and a rejoin, faults,
 * tampered snapshots, wrong secrets, spectators, input delay changes, a
 * late joiner, a non-creator's host actions; another genre or room size).
 * Shared by test_rejoin.c, test_rejoin_delay.c, test_late_join.c and
 * test_host_actions.c (rejoin_world.c). After a late join's run, `info`
 * holds the real `gk-replay info --json` of its replay. The step rate is
 * 200 Hz.
 */
#ifndef GK_TESTS_REJOIN_WORLD_H
#define GK_TESTS_REJOIN_WORLD_H

#include <stdint.h>

#include <uv.h>

#include "gk_net_fault.h"
#include "gk_net_peer_uv.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_server.h"

#define CLIENTS 10
#define HCAP 4096
#define GUARD_MS 60000

enum { K_PLAYER = 1, K_REJOIN, K_SPECTATOR, K_LATE };
enum { T_NONE, T_FLIP, T_FLIP_FIXED, T_ROOM };

typedef struct scen {
  const char *genre;    /* NULL: survivors */
  uint32_t players;     /* at the start; 0: 3 */
  uint32_t max_players; /* the room's cap; 0: players */
  uint64_t late_step;   /* 0: none; else one more player joins then */
  int neutral;
  uint32_t hold_ms;
  int faults;         /* 5% loss, 30 ms latency each way, for everyone */
  uint64_t drop_step; /* 0: nobody drops */
  uint32_t away_ms;
  int silent_drop; /* player 2's DISCONNECT is lost (its own relay cuts
                      everything): the server still holds the old
                      connection when the rejoin comes */
  int tamper;      /* the first rejoin attempt's snapshot is tampered */
  /* the first bad_secret rejoin attempts (at most 4) have a wrong secret:
   * attempt k has one bit of its byte bad_byte[k - 1] flipped */
  int bad_secret;
  uint8_t bad_byte[4];
  int expect_back; /* a rejoin must succeed in the end */
  uint64_t end_step;
  uint32_t spectators;      /* join at player 0's step spectate_step */
  uint64_t spectate_step;   /* 0: 300 */
  uint32_t spectator_delay; /* spectator.delay_steps; 0: 30 */
  int throttle_spectator; /* the first spectator loses everything for a while */
  /* input delay changes mid-match (through the shared relay's latency):
   * at player 0's step raise_step the latency becomes raise_ms each way,
   * at lower_step it falls back (0: no change) */
  uint64_t raise_step, lower_step;
  uint32_t raise_ms;
  /* only the creator acts: at its step guest_remove_step (0: never)
   * player 1 sends REMOVE_PLAYER for player 2; with guest_lobby_end
   * player 1 sends END_MATCH in the lobby, and the creator starts once
   * the server struck player 1 for it (or stops if the lobby closed) */
  uint64_t guest_remove_step;
  int guest_lobby_end;
} scen;

typedef struct world world;

typedef struct client {
  world *w;
  int used, kind, attempt;
  gk_net_transport t;
  uint32_t server_id;
  gk_net_peer_uv peer;
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
  /* the input delays its peer ran with, kept at its end */
  uint32_t delay;
  gk_net_peer_delay delays[GK_NET_PEER_DELAYS_MAX];
  uint32_t ndelays;
  uint32_t last_mask; /* the active mask of the last step it ran */
  uint32_t removals;  /* REMOVE_PLAYER notices it heard */
  int lobby_end;      /* a MATCH_END came before any MATCH_START */
  /* a spectator: the confirmed steps it received while the match was
   * playing, and those it received too soon (less than
   * spectator.delay_steps behind the referee's last step); the first */
  uint64_t spec_checked, spec_early;
  uint64_t early_step, early_head;
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
  uv_timer_t guard, drop_timer, back_timer, throttle_timer, start_timer;
  int dropped, spectating, throttled, late_added, guest_removed;
  uint8_t secret[GK_WIRE_SECRET_LEN]; /* of the dropped slot */
  uint32_t drop_slot;
  client c[CLIENTS];
  uint32_t nc;
  gk_room_stats stats;          /* the rooms' counters at the end */
  gk_server_stats server_stats; /* the shell's */
  char dir[64];                 /* the replays */
  uint32_t replays_ok;          /* replays that verified */
  char replay_err[2048];        /* the first that did not */
  char info[16384]; /* late join: gk-replay info --json of the replay */
};

/* Runs scenario o in w (zeroed first) until it is done or the guard
 * fires; then closes everything and verifies (and removes) the replays. */
void rw_run(world *w, const scen *o);
/* Frees what rw_run left in w (hash rings, held datagrams). */
void rw_free(world *w);
/* The client that rejoined (the last rejoin attempt), or NULL. */
client *rw_rejoined(world *w);
/* The client of the first rejoin attempt, or NULL. */
client *rw_first_rejoin(world *w);
/* The client of rejoin attempt k (1: the first), or NULL. */
client *rw_rejoin_attempt(world *w, int k);
/* The late joiner (scen.late_step), or NULL. */
client *rw_late(world *w);
/* Every step `c` ran from its snapshot on hashes as player 0's did. */
void rw_expect_agrees(const world *w, const client *c, const char *who);
/* Every player that stayed saw the host's end, no desync, one replay
 * that verifies. */
void rw_expect_ended_normally(const world *w);
/* The last rejoin attempt succeeded: snapshot, resumed sampling, the end
 * seen, no desync, a snapshot at or after the drop, hashes that agree
 * with player 0's from it on. Returns that client. */
client *rw_expect_rejoined(world *w, const scen *o);
/* A whole rejoin scenario: run, the rejoin succeeded, its hashes agree. */
void rw_rejoin_case(const scen *o);
/* Player 2 drops at step 1000 for 2 s, held 10 s; the host ends at 1600. */
scen rw_base(void);

#endif
