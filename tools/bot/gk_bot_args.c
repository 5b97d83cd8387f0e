/* gk_bot_args.c: gk-bot's command line (see gk_bot.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gk_bot.h"
#include "gk_err.h"
#include "gk_genre_load.h"
#include "gk_genres.h"
#include "gk_state.h"

/* --drop and --spectators (gk_bot_rejoin.c). */
static void usage_rejoin(FILE *f) {
  fprintf(f,
          "  --drop SLOT:STEP:MS  in every room the player in SLOT closes\n"
          "                  its connection once it ran STEP and, MS ms\n"
          "                  later, rejoins from the server's snapshot with\n"
          "                  the room code, slot and reconnect secret (up to\n"
          "                  16; the server needs reconnect.hold_ms > MS)\n"
          "  --spectators N  N spectators per room (0..64), from the step\n"
          "                  player 0 reaches a quarter of the way in\n");
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: gk-bot --server HOST:PORT --genre G --rooms R --players P\n"
          "              --steps N [--seed S] [--loss P] [--latency MS]\n"
          "              [--options JSON] [--input-delay D] [--timeout SEC]\n"
          "              [--key FILE | --token TOKEN] [--light] [--predict]\n"
          "              [--jitter MS] [--latency-schedule STEP:MS,...]\n"
          "              [--genre-lib PATH]... [--late-join STEP]\n"
          "              [--drop SLOT:STEP:MS]... [--spectators N]\n"
          "              [--ws URL [--ws-players K] [--ws-swap]]\n"
          "              [--hashes FILE]\n"
          "       gk-bot --server HOST:PORT --genre G --join CODE --players P\n"
          "              [--steps N] [--hashes FILE] [--ws URL] ...\n"
          "\n"
          "Plays R rooms of P bot players each against a gk-server, N steps\n"
          "per match, then the host of each room ends its match. Prints one\n"
          "JSON summary. Exit 0 if every room finished and every hash agreed,\n"
          "1 on a desync, 2 on a usage error, 3 if a room failed.\n"
          "\n"
          "  --join CODE     the P players join room CODE, made by another\n"
          "                  client (a page), each in any free slot; its\n"
          "                  creator starts and ends the match (one room;\n"
          "                  --steps only sets the default timeout; not\n"
          "                  with --options, --input-delay, --light,\n"
          "                  --late-join, --drop or --spectators). An\n"
          "                  unknown code or a full room: exit 3\n"
          "  --loss P        datagram loss each way, 0..1 (0.05 = 5%%)\n"
          "  --latency MS    added delay each way\n"
          "  --jitter MS     plus a uniform 0..MS each way\n"
          "  --latency-schedule STEP:MS,...  set --latency to MS once room 0\n"
          "                  ran STEP (up to 16 changes, steps increasing)\n"
          "  --options JSON  genre options for every room (a JSON object)\n"
          "  --hashes FILE   write room 0 player 0's hash after every step\n"
          "                  to FILE, one \"STEP HASH\" line (16 hex digits)\n"
          "  --input-delay D steps (0: the server's default)\n"
          "  --timeout SEC   give up after this long (default 60 + N / 20)\n"
          "  --light         many players per ENet host, no simulation,\n"
          "                  seeded inputs, no hash reports (load tests)\n"
          "  --predict       every player draws a predicted head (a room\n"
          "                  that predicts: lockstep.prediction); the\n"
          "                  summary adds \"prediction\" (rollbacks, steps\n"
          "                  re-simulated per frame, accuracy); not with\n"
          "                  --light\n"
          "  --chaos dup     (tests) each room's last player sends every\n"
          "                  INPUT twice and the one before it again\n"
          "  --perturb SLOT:STEP:PATH  (tests) after step STEP, player SLOT\n"
          "                  of every room adds 1 to the state field PATH\n"
          "                  (e.g. players[0].health; -1 if +1 is out of\n"
          "                  the field's range): a desync on purpose\n"
          "  --state-fault silent|corrupt|garbage|cannot  (tests) answer\n"
          "                  the server's STATE_REQUEST never, with a chunk\n"
          "                  that fails its checksum, with half a state, or\n"
          "                  with \"cannot\" (GK_ENOTKEPT)\n"
          "  --genre-lib PATH  load a genre from a shared object (repeatable)\n"
          "  --late-join STEP  one more player per room joins the running\n"
          "                  match at STEP (rooms are made for P + 1; the\n"
          "                  genre must take players after the start)\n"
          "  --key FILE      a server in token mode: mint a connect token for\n"
          "                  each request with this key (a room for player 0,\n"
          "                  a join of its room as a player for the others)\n"
          "  --token TOKEN   send exactly this token (base64url) with every\n"
          "                  request, for negative tests\n");
  usage_rejoin(f);
  fprintf(f,
          "  --ws URL        players connect over WebSocket to URL\n"
          "                  (ws://HOST:PORT/PATH, the server's websocket\n"
          "                  listener, e.g. ws://127.0.0.1:7779/play; wss://\n"
          "                  is for browsers behind a proxy); --server is\n"
          "                  then needed only for ENet players\n"
          "  --ws-players K  only the last K players of each room use --ws,\n"
          "                  the others ENet (mixed rooms)\n"
          "  --ws-swap       a --drop rejoin comes back on the other\n"
          "                  transport (ENet <-> WebSocket)\n");
}

/* A decimal number up to max (gk_parse_u64: digits only). 0 or -1. */
static int parse_num(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (gk_parse_u64(s, &v) != 0 || v > max) return -1;
  *out = v;
  return 0;
}

/* "SLOT:STEP:PATH" into b. Returns 0 or 1 (bad value). */
static int parse_perturb(const char *v, bot *b) {
  char *end = NULL;
  unsigned long slot = strtoul(v, &end, 10);
  if (end == v || *end != ':' || slot >= GK_PLAYERS_MAX) return 1;
  const char *s = end + 1;
  unsigned long long step = strtoull(s, &end, 10);
  if (end == s || *end != ':' || end[1] == '\0' ||
      strlen(end + 1) >= GK_PATH_MAX || step >= GK_WIRE_STEP_LIMIT)
    return 1;
  b->perturb_slot = (uint32_t)slot;
  b->perturb_step = step;
  b->perturb_path = end + 1;
  return 0;
}

/* "STEP:MS,STEP:MS,..." with steps increasing. Returns 0 or -1. */
static int parse_schedule(const char *v, bot *b) {
  char buf[512];
  if (strlen(v) >= sizeof buf) return -1;
  snprintf(buf, sizeof buf, "%s", v);
  b->nschedule = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(tok, ':');
    uint64_t step = 0, ms = 0;
    if (colon == NULL || b->nschedule >= SCHEDULE_MAX) return -1;
    *colon = '\0';
    if (parse_num(tok, GK_WIRE_STEP_LIMIT - 1, &step) != 0 ||
        parse_num(colon + 1, 10000, &ms) != 0 ||
        (b->nschedule > 0 && step <= b->schedule[b->nschedule - 1].step))
      return -1;
    b->schedule[b->nschedule++] = (latency_change){step, (uint32_t)ms};
  }
  return b->nschedule > 0 ? 0 : -1;
}

/* --genre-lib PATH: a genre from a shared object (gk_genre_load.h).
 * Returns 0, or 1 after printing why it did not load. */
static int load_genre_lib(const char *path) {
  char msg[GK_ERRMSG_MAX * 2];
  if (gk_genre_load(path, NULL, NULL, msg, sizeof msg) == 0) return 0;
  fprintf(stderr, "gk-bot: %s\n", msg);
  return 1;
}

/* Reads one "--name value" pair into a / b. Returns 0, 1 for a bad value,
 * or -1 for an unknown option. */
static int parse_opt(const char *o, const char *v, bot_args *a, bot *b) {
  if (strcmp(o, "--server") == 0)
    a->server = v;
  else if (strcmp(o, "--genre") == 0)
    a->genre = v;
  else if (strcmp(o, "--rooms") == 0)
    return a->have_rooms = 1, parse_num(v, 4096, &a->rooms) != 0;
  else if (strcmp(o, "--players") == 0)
    return a->have_players = 1, parse_num(v, GK_PLAYERS_MAX, &a->players) != 0;
  else if (strcmp(o, "--steps") == 0)
    return a->have_steps = 1,
           parse_num(v, GK_WIRE_STEP_LIMIT - 1, &a->steps) != 0;
  else if (strcmp(o, "--seed") == 0)
    return parse_num(v, UINT64_MAX, &a->seed) != 0;
  else if (strcmp(o, "--input-delay") == 0)
    return parse_num(v, 60, &a->delay) != 0;
  else if (strcmp(o, "--latency") == 0)
    return parse_num(v, 10000, &a->latency) != 0;
  else if (strcmp(o, "--timeout") == 0)
    return parse_num(v, 86400, &a->timeout) != 0;
  else if (strcmp(o, "--jitter") == 0)
    return parse_num(v, 10000, &a->jitter) != 0;
  else if (strcmp(o, "--latency-schedule") == 0)
    return parse_schedule(v, b) != 0;
  else if (strcmp(o, "--perturb") == 0)
    return parse_perturb(v, b);
  else if (strcmp(o, "--state-fault") == 0)
    return (b->state_fault =
                strcmp(v, "silent") == 0    ? GK_NET_PEER_STATE_SILENT
                : strcmp(v, "corrupt") == 0 ? GK_NET_PEER_STATE_CORRUPT
                : strcmp(v, "garbage") == 0 ? GK_NET_PEER_STATE_GARBAGE
                : strcmp(v, "cannot") == 0
                    ? GK_NET_PEER_STATE_CANNOT
                    : GK_NET_PEER_STATE_OK) == GK_NET_PEER_STATE_OK;
  else if (strcmp(o, "--chaos") == 0)
    return !(b->chaos_dup = strcmp(v, "dup") == 0);
  else if (strcmp(o, "--genre-lib") == 0)
    return load_genre_lib(v);
  else if (strcmp(o, "--drop") == 0)
    return bot_parse_drop(v, b);
  else if (strcmp(o, "--spectators") == 0) {
    uint64_t n = 0;
    if (parse_num(v, SPECTATORS_MAX, &n) != 0) return 1;
    b->spectators = (uint32_t)n;
  } else if (strcmp(o, "--late-join") == 0)
    return b->late_join = 1,
           parse_num(v, GK_WIRE_STEP_LIMIT - 1, &b->late_join_step) != 0;
  else if (strcmp(o, "--ws") == 0)
    return bot_check_ws_url(v, b);
  else if (strcmp(o, "--ws-players") == 0) {
    uint64_t n = 0;
    if (parse_num(v, GK_PLAYERS_MAX, &n) != 0 || n == 0) return 1;
    b->ws_players = (uint32_t)n;
  } else if (strcmp(o, "--options") == 0)
    b->options = v;
  else if (strcmp(o, "--join") == 0) /* short, or 16 characters */
    return b->join_code = b->join_wire, gk_wire_code_pad(v, b->join_wire) != 0;
  else if (strcmp(o, "--hashes") == 0)
    return b->hashes != NULL || (b->hashes = fopen(v, "w")) == NULL;
  else if (strcmp(o, "--key") == 0)
    a->key_file = v;
  else if (strcmp(o, "--token") == 0)
    a->token = v;
  else if (strcmp(o, "--loss") == 0) {
    char *end = NULL;
    b->loss = strtod(v, &end);
    return *end || !(b->loss >= 0.0 && b->loss <= 1.0);
  } else
    return -1;
  return 0;
}

/* Parses argv into a and b. Returns -1 to go on, else the exit status. */
int bot_parse_args(int argc, char **argv, bot_args *a, bot *b) {
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(o, "--light") == 0 || strcmp(o, "--ws-swap") == 0 ||
        strcmp(o, "--predict") == 0) {
      *(o[2] == 'l'   ? &a->light
        : o[2] == 'p' ? &b->predict
                      : &b->ws_swap) = 1; /* no value */
      continue;
    }
    if (i + 1 >= argc || strncmp(o, "--", 2) != 0) {
      fprintf(stderr, "gk-bot: %s: %s\n", o,
              strncmp(o, "--", 2) ? "unexpected argument" : "needs a value");
      usage(stderr);
      return 2;
    }
    const char *v = argv[++i];
    int rc = parse_opt(o, v, a, b);
    if (rc < 0) {
      fprintf(stderr, "gk-bot: unknown option '%s'\n", o);
      usage(stderr);
      return 2;
    }
    if (rc > 0) {
      fprintf(stderr, "gk-bot: %s: bad value '%s'%s\n", o, v,
              strcmp(o, "--join")
                  ? ""
                  : " (a room code: 4 to 8 of " GK_WIRE_SHORT_ALPHABET
                    ", or 16 of A-Z and 2-7)");
      return 2;
    }
  }
  int join = b->join_code != NULL; /* one room, --steps optional */
  if ((!a->server && !(b->ws_url && !b->ws_players && !b->ws_swap)) ||
      !a->genre || !(a->have_rooms || join) || !a->have_players ||
      !(a->have_steps || join) || (a->have_rooms && a->rooms == 0) ||
      a->players == 0 || (a->have_steps && a->steps == 0)) {
    fprintf(stderr, "gk-bot: --server (or --ws alone), --genre, --rooms, "
                    "--players and --steps are required (and non-zero; "
                    "--join needs no --rooms or --steps)\n");
    usage(stderr);
    return 2;
  }
  return -1;
}

/* --key or --token into b. Returns -1 to go on, else the exit status. */
static int check_token_args(const bot_args *a, bot *b) {
  char err[512];
  if (a->key_file && a->token) {
    fprintf(stderr, "gk-bot: give --key or --token, not both\n");
    return 2;
  }
  if (a->key_file) {
    if (gk_token_key_load(a->key_file, b->key, err, sizeof(err)) != 0) {
      fprintf(stderr, "gk-bot: --key: %s\n", err);
      return 2;
    }
    b->token_mode = BOT_TOKEN_KEY;
    /* distinct client ids per run and player (a backend's are its own) */
    b->client_base = (a->seed << 20) + ((uint64_t)time(NULL) << 32) + 1;
  } else if (a->token) {
    int rc = gk_token_from_base64(a->token, strlen(a->token), b->token);
    if (rc != 0) {
      fprintf(stderr, "gk-bot: --token: not a token in base64url (%s)\n",
              gk_strerror(rc));
      return 2;
    }
    b->token_mode = BOT_TOKEN_FIXED;
  }
  return -1;
}

/* --ws, --ws-players, --ws-swap as a whole (and --predict, which needs a
 * simulation). -1 to go on, else 2. */
static int check_ws_args(const bot_args *a, const bot *b) {
  if (b->predict && a->light) {
    fprintf(stderr, "gk-bot: --predict needs a simulation: not with "
                    "--light\n");
    return 2;
  }
  if ((b->ws_players || b->ws_swap) && b->ws_url == NULL) {
    fprintf(stderr, "gk-bot: --ws-players and --ws-swap need --ws\n");
    return 2;
  }
  if (b->ws_players > a->players) {
    fprintf(stderr, "gk-bot: --ws-players %u of %u players\n", b->ws_players,
            (unsigned)a->players);
    return 2;
  }
  /* the relay is UDP: it carries the ENet players of a mixed room only */
  int all_ws = b->ws_players == 0 || b->ws_players == a->players;
  if (b->ws_url && all_ws &&
      (b->loss > 0.0 || a->latency || a->jitter || b->nschedule)) {
    fprintf(stderr, "gk-bot: --loss, --latency, --jitter and "
                    "--latency-schedule are a UDP relay's: not with every "
                    "player on --ws (TCP loss: nftables in a network "
                    "namespace)\n");
    return 2;
  }
  return -1;
}

/* --join as a whole: one room, nothing only a room's creator asks for.
 * -1 to go on, else 2. */
static int check_join_args(const bot_args *a, const bot *b) {
  if (b->join_code == NULL) return -1;
  if (a->have_rooms && a->rooms != 1) {
    fprintf(stderr, "gk-bot: --join plays one room, not --rooms %llu\n",
            (unsigned long long)a->rooms);
    return 2;
  }
  if (b->options || a->delay || a->light || b->late_join || b->ndrops ||
      b->spectators) {
    fprintf(stderr, "gk-bot: --join takes no --options, --input-delay, "
                    "--light, --late-join, --drop or --spectators (the "
                    "room is its creator's)\n");
    return 2;
  }
  return -1;
}

int bot_check_args(const bot_args *a, bot *b, char *host) {
  int ws = check_ws_args(a, b);
  if (ws < 0) ws = check_join_args(a, b);
  if (ws >= 0) return ws;
  const char *server = a->server ? a->server : "127.0.0.1:1"; /* unused */
  const char *colon = strrchr(server, ':');
  uint64_t port = 0;
  if (!colon || colon == server || (size_t)(colon - server) >= 256 ||
      parse_num(colon + 1, 65535, &port) || port == 0) {
    fprintf(stderr, "gk-bot: --server must be HOST:PORT, got '%s'\n", server);
    return 2;
  }
  memcpy(host, server, (size_t)(colon - server));
  host[colon - server] = '\0';
  b->sim = gk_genre_find(a->genre);
  if (!b->sim) {
    fprintf(stderr, "gk-bot: unknown genre '%s'\n", a->genre);
    return 2;
  }
  /* joiners are some of a room's players: its creator is another */
  uint32_t min = b->join_code ? 1 : b->sim->players_min;
  if (a->players < min || a->players > b->sim->players_max) {
    fprintf(stderr, "gk-bot: %s takes %u..%u players\n", a->genre, min,
            b->sim->players_max);
    return 2;
  }
  if (b->perturb_path != NULL && b->perturb_slot >= a->players) {
    fprintf(stderr, "gk-bot: --perturb: slot %u of %u players\n",
            b->perturb_slot, (unsigned)a->players);
    return 2;
  }
  if (b->options && strlen(b->options) > GK_WIRE_CONFIG_MAX) {
    fprintf(stderr, "gk-bot: --options is longer than %d bytes\n",
            GK_WIRE_CONFIG_MAX);
    return 2;
  }
  b->host = host;
  b->port = (uint16_t)port;
  b->rooms = b->join_code ? 1 : (uint32_t)a->rooms;
  b->players = (uint32_t)a->players;
  b->steps = a->steps;
  b->seed = a->seed;
  b->input_delay = (uint32_t)a->delay;
  b->jitter_ms = (uint32_t)a->jitter;
  b->latency_ms = (uint32_t)a->latency;
  b->timeout_s =
      a->timeout ? (uint32_t)a->timeout : (uint32_t)(60 + a->steps / 20);
  int st = bot_check_rejoin_args(b);
  if (st >= 0) return st;
  for (uint32_t i = 0; !a->timeout && i < b->ndrops; i++)
    b->timeout_s += b->drops[i].ms / 1000u + 1u; /* away, and back */
  st = bot_late_check(b);
  if (st >= 0) return st;
  return check_token_args(a, b);
}
