/* gk_bot.h: what the files of gk-bot share (internal to tools/bot).
 *
 *   gk_bot.c          the peers and their callbacks, the rooms, main
 *   gk_bot_args.c     the command line: usage, parsing, checks
 *   gk_bot_summary.c  the JSON summary and the exit status it implies
 *   gk_bot_rejoin.c   --drop (a player leaves and rejoins from a
 *                     snapshot) and --spectators
 *   gk_bot_late.c     --late-join: one more player per room, mid-match
 */
#ifndef GK_BOT_H
#define GK_BOT_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "gk_net_fault.h"
#include "gk_net_lobby.h"
#include "gk_net_peer_uv.h"
#include "gk_bot_link.h"
#include "gk_net_transport.h"
#include "gk_net_wire.h"
#include "gk_token.h"

#define RING 4096 /* steps of hashes kept per room for cross-checks */

enum { BOT_TOKEN_NONE = 0, BOT_TOKEN_KEY = 1, BOT_TOKEN_FIXED = 2 };

typedef struct bot bot;
typedef struct bot_room bot_room;

typedef struct bot_peer {
  bot *b;
  bot_room *room;
  uint32_t index;   /* in the room; 0 creates and hosts */
  gk_bot_link link; /* ENet or WebSocket (gk_bot_link.h) */
  int tr_open;
  int ws_flip; /* --ws-swap: its rejoins alternate transports */
  uint32_t conn;
  int connected;
  gk_net_peer_uv peer; /* the engine is peer.eng */
  int peer_open;
  int joined;
  int ended;
  int end_reason;
  uint64_t desyncs; /* DESYNC notices about this peer */
  uint64_t steps;
  uint64_t last_hash;
  uint64_t t60_ns, last_ns;  /* when it ran step 60, and its last step */
  uint8_t held[GK_WIRE_MAX]; /* --chaos dup: the last INPUT sent */
  size_t held_len;
  /* --drop and --spectators (gk_bot_rejoin.c) */
  int spectator;   /* watches its room (index: players + its number) */
  int away;        /* its connection was closed on purpose (--drop) */
  int rejoining;   /* a new connection asks for the slot back */
  int have_secret; /* RECONNECT_SECRET came */
  uint32_t slot;
  uint8_t secret[GK_WIRE_SECRET_LEN];
  uint32_t closing;    /* closes of the old peer and transport pending */
  uv_timer_t timer;    /* the drop, the way back */
  int timer_open;      /* timer initialised (closed by finish) */
  uint32_t drop;       /* the --drop entry being played */
  uint32_t tries;      /* rejoins refused as "still connected" */
  uint64_t connect_ns; /* when the rejoin's connection was opened */
  int rec;             /* its entry in room->rejoins + 1, or 0 */
  int snaps;           /* snapshots adopted (spectators) */
  /* a fleet: REDIRECT followed once per request (gk_bot_rejoin.c) */
  int redirected;                   /* its request went to rhost */
  char rhost[GK_WIRE_ADDR_MAX + 1]; /* the room's node, ENet */
  uint16_t rport;
  char rws[GK_WIRE_ADDR_MAX + 1]; /* ... and WebSocket ("": none) */
} bot_peer;

#define SCHEDULE_MAX 16
#define DROP_MAX 16       /* --drop entries */
#define SPECTATORS_MAX 64 /* --spectators per room (= spectator.per_room) */

typedef struct bot_drop {
  uint32_t slot;
  uint64_t step;
  uint32_t ms;
} bot_drop;

/* One rejoin, for the summary. */
typedef struct bot_rejoin_rec {
  uint32_t slot;
  uint64_t snapshot_step, snapshot_bytes;
  double resume_ms; /* new connection -> resumed sampling; < 0: not yet */
} bot_rejoin_rec;

typedef struct latency_change {
  uint64_t step;
  uint32_t ms;
} latency_change;

typedef struct ring_entry {
  uint64_t step;
  uint64_t hash;
  int set;
} ring_entry;

struct bot_room {
  bot *b;
  uint32_t index;
  bot_peer *peers;
  gk_net_lobby lobby; /* create, join, start; the room's code */
  int end_sent, done, failed;
  char error[256];
  uint64_t mismatches; /* players of this room that disagreed */
  uint64_t first_mismatch;
  ring_entry *ring;
  /* --drop and --spectators (gk_bot_rejoin.c) */
  uint32_t drops_done; /* bit i: b->drops[i] was played */
  bot_rejoin_rec rejoins[DROP_MAX];
  uint32_t nrejoins;
  bot_peer *specs; /* b->spectators of them, or NULL */
  int specs_started;
  uint64_t spec_mismatches; /* spectator hashes unlike the players' */
  uint32_t redirects;       /* REDIRECTs its connections followed */
};

struct bot {
  uv_loop_t *loop;
  const gk_sim *sim;
  const char *host;
  uint16_t port; /* the server's, or the relay's */
  uint32_t rooms, players;
  uint64_t steps;
  uint64_t seed;
  uint32_t input_delay;
  const char *options;
  double loss;
  uint32_t latency_ms;
  uint32_t jitter_ms;
  latency_change schedule[SCHEDULE_MAX]; /* --latency-schedule */
  uint32_t nschedule, next_change;
  uint32_t timeout_s;
  bot_room *room;
  gk_net_fault fault;
  int fault_open;
  uv_timer_t timeout;
  uv_signal_t sigint;
  int finished;
  int timed_out;
  uint32_t rooms_done;
  int exit_status;
  /* connect tokens: BOT_TOKEN_KEY mints one per request with key;
   * BOT_TOKEN_FIXED sends `token` with every request */
  int token_mode;
  uint8_t key[GK_TOKEN_KEY_BYTES];
  uint8_t token[GK_TOKEN_BYTES];
  uint64_t client_base; /* client ids: client_base + room * 16 + player */
  int chaos_dup;        /* --chaos dup (a test option) */
  uint64_t chaos_extra; /* datagrams it sent twice or out of order */
  /* --perturb SLOT:STEP:PATH (a test option) */
  const char *perturb_path;
  uint32_t perturb_slot;
  uint64_t perturb_step;
  uint64_t perturbed;       /* rooms whose slot was perturbed */
  uint64_t perturb_minus;   /* of them, by -1 (+1 would not read back) */
  bot_drop drops[DROP_MAX]; /* --drop SLOT:STEP:MS */
  uint32_t ndrops;
  uint32_t spectators; /* --spectators N, per room */
  int state_fault;     /* --state-fault (a test option):
                          GK_NET_PEER_STATE_* */
  /* --late-join STEP (gk_bot_late.c): peers[players] of each room joins
   * once its creator ran STEP */
  int late_join;
  uint64_t late_join_step;
  /* --ws URL: players over WebSocket (all, or with --ws-players K the
   * last K of each room); --ws-swap: a --drop rejoin comes back on the
   * other transport */
  const char *ws_url;
  FILE *hashes; /* --hashes: room 0 player 0's "step hash" lines, or NULL */
  uint32_t ws_players;
  int ws_swap;
  /* --join CODE: the players join that room, another client's (a page):
   * its creator starts and ends the match; NULL: gk-bot makes its rooms */
  const char *join_code;                /* --join: join_wire, or NULL */
  char join_wire[GK_WIRE_CODE_LEN + 1]; /* its wire form */
  /* --predict: every player draws a predicted head (gk_net_peer_options.
   * predict); the summary adds display latency and rollback figures */
  int predict;
};

/* The command line, before it is checked as a whole. */
typedef struct bot_args {
  const char *server, *genre, *key_file, *token;
  uint64_t rooms, players, steps, seed, delay, latency, jitter, timeout;
  int have_rooms, have_players, have_steps;
  int light; /* --light: gk_bot_light.c plays instead */
} bot_args;

/* gk_bot_args.c. Parses argv into a and b. Returns -1 to go on, else the
 * exit status (0 after --help, 2 for a usage error, said on stderr). */
int bot_parse_args(int argc, char **argv, bot_args *a, bot *b);
/* Checks the arguments as a whole and fills b (the key file is read, a
 * --token decoded). host (256 bytes) gets the server's host name.
 * Returns -1 to go on, else the exit status. */
int bot_check_args(const bot_args *a, bot *b, char *host);

/* gk_bot_summary.c. Prints the one JSON summary; returns the exit status
 * it implies. */
int bot_print_summary(bot *b);

/* gk_bot.c, for gk_bot_rejoin.c. */
/* Records the room's first failure: `what` and an optional detail. */
void bot_room_fail(bot_room *r, const char *what, const char *detail);
/* The room is done once every player and spectator ended, or it failed. */
void bot_room_check_done(bot_room *r);
/* Opens p's peer engine (the player's or, with p->spectator, the
 * spectator's callbacks). 0 or gk_net_peer_init's code. */
int bot_peer_open(bot_peer *p);
/* Opens p's link (ENet or WebSocket, bot_peer_ws) and connects it; a
 * failure fails the room. */
void bot_connect_peer(bot_peer *p);
/* 1 if p's next connection goes over WebSocket. */
int bot_peer_ws(const bot_peer *p);

/* gk_bot_rejoin.c: --drop and --spectators. */
/* --ws URL into b, checked (a bad URL is said on stderr). 0 or 1. */
int bot_check_ws_url(const char *v, bot *b);
/* --drop SLOT:STEP:MS into b (repeatable). 0, or 1 after saying why. */
int bot_parse_drop(const char *v, bot *b);
/* Checks the drops and spectators against the rest; -1 to go on, else 2
 * after saying why. */
int bot_check_rejoin_args(const bot *b);
/* The connect token of a request with grant g for `client`: none (len 0),
 * --token's, or one minted with --key. 0 or gk_token_mint's code. */
int bot_token(const bot *b, const gk_token_grant *g, uint64_t client,
              uint8_t *len, uint8_t tok[GK_TOKEN_BYTES]);
/* A player's client id in token mode (the same for its rejoins). */
uint64_t bot_client_id(const bot_peer *p);
/* After each step a player ran: starts the drops and spectators due. */
void bot_rejoin_step(bot_peer *p, uint64_t step);
/* A player's message: 1 if handled here (RECONNECT_SECRET; a rejoin
 * refused because the server still holds the old connection). */
int bot_rejoin_message(bot_peer *p, const gk_wire_msg *m);
/* The transport of a rejoin or a spectator is up: sends the request. */
void bot_rejoin_connected(bot_peer *p);
/* Peer callbacks: a player's snapshot and resumed sampling; the
 * spectators' messages (their steps and end go through a player's). */
void bot_rejoin_snapshot(void *ctx, gk_net_peer *np, int rc,
                         const gk_net_peer_snap_info *info);
void bot_rejoin_resumed(void *ctx, gk_net_peer *np);
void bot_spec_message(void *ctx, gk_net_peer *np, const gk_wire_msg *m);
/* A spectator ran `step`: its hash against the players' of that step. */
void bot_spec_step(bot_room *r, uint64_t step, uint64_t hash);
/* Allocates each room's spectators (none without --spectators). */
int bot_spectators_alloc(bot *b);
/* 1 if every spectator of the room ended (or none has started). */
int bot_spectators_done(const bot_room *r);
/* finish(): closes the spectators and the drop timers. */
void bot_rejoin_close(bot *b);
/* After the loop: frees the spectators. */
void bot_rejoin_free(bot *b);
/* The room's "rejoins" and "spectators" summary entries; returns 1 if a
 * spectator disagrees with the players (a mismatch), else 0. */
int bot_rejoin_summary(cJSON *ro, const bot *b, const bot_room *r);

/* gk_bot_late.c (--late-join). Peers per room: players, plus the late
 * joiner. */
uint32_t bot_room_peers(const bot *b);
/* 1 if the peer takes part (a late joiner only once it connected). */
int bot_peer_in_play(const bot *b, const bot_peer *p);
/* The option checked against the genre: -1 to go on, else exit status. */
int bot_late_check(const bot *b);
/* From each peer's step callback: the creator's STEP connects the joiner. */
void bot_late_step(bot_peer *p, uint64_t step);
/* The room's `late_joins` list (nothing without --late-join). */
void bot_late_summary(cJSON *ro, const bot *b, const bot_room *r);

#endif
