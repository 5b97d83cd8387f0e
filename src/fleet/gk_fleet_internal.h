/* gk_fleet_internal.h: what the directory client's files share
 * (src/fleet only): the node's state, one request in flight, and the
 * command helpers of gk_fleet.c. gk_fleet_quick.c adds quick play. */
#ifndef GK_FLEET_INTERNAL_H
#define GK_FLEET_INTERNAL_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "gk_fleet.h"

#define KEY_MAX 64
#define BACKOFF_MAX_X 8u
#define CLOSE_WAIT_MS 1000u /* closing: replies still awaited this long */
#define CLOSE_TICK_MS 20u   /* closing: how often the timer looks */

typedef enum req_kind {
  REQ_AUTH,
  REQ_BEAT,
  REQ_RESERVE, /* a pool code: SET NX */
  REQ_ADD,
  REQ_DEL,
  REQ_LOOKUP,
  REQ_PUBLIC, /* the public list: publish this node's, read the fleet's */
  REQ_QUICK,  /* quick play: a seat (gk_fleet_quick.c) */
  REQ_QSET    /* quick play: a room's seats, or its end */
} req_kind;

typedef struct req {
  gk_fleet *f;
  req_kind kind;
  void *ctx;                        /* LOOKUP, QUICK: the caller's */
  char code[GK_FLEET_CODE_MAX + 1]; /* ADD, DEL, LOOKUP */
  uint32_t nkeys;                   /* BEAT: room codes sent; RESERVE:
                                       its pool slot; LOOKUP: 1 for a
                                       claim (gk_fleet_claim) */
} req;

enum { POOL_EMPTY, POOL_ASKING, POOL_READY };

struct gk_fleet {
  uv_loop_t *loop;
  gk_fleet_hooks hooks;
  char host[64];
  uint16_t port;
  char unix_path[1024];
  char password[GK_FLEET_ADDR_MAX + 1];
  char node[GK_FLEET_NODE_MAX + 1];
  char enet[GK_FLEET_ADDR_MAX + 1];
  char ws_url[GK_FLEET_ADDR_MAX + 1];
  char room_value[GK_FLEET_VALUE_MAX];
  char node_key[KEY_MAX];
  uint32_t heartbeat_ms, ttl_ms, max_rooms;
  redisAsyncContext *ac; /* NULL = no connection */
  int up;                /* connected and authenticated */
  int closing, closed;
  uint64_t closing_ms; /* when gk_fleet_close was called */
  int draining;
  uint32_t pending;     /* commands in flight on ac */
  uint64_t progress_ms; /* last reply, or the send that began a wait */
  uint64_t tick_ms;     /* the timer's last run */
  uint64_t retry_ms;    /* down: the next connection not before this */
  uint32_t backoff_ms;
  uint64_t ever_up; /* connections that reached up */
  uv_timer_t timer;
  char (*codes)[GK_FLEET_CODE_MAX + 1]; /* max_rooms entries */
  uint32_t ncodes;
  char pool[GK_FLEET_POOL][GK_FLEET_CODE_MAX + 1]; /* reserved ahead */
  int pool_state[GK_FLEET_POOL];                   /* POOL_* */
  gk_fleet_pub *pub, *pub_next, *pub_mine;         /* GK_FLEET_PUB_MAX each */
  uint32_t npub, pub_bad; /* entries; bad ones at the last refresh */
  int pub_asking;         /* a REQ_PUBLIC in flight */
  gk_fleet_stats stats;
};

/* Sends argv with a request of `kind` (code and ctx kept in it): 0, or
 * GK_EUNAVAILABLE (no connection; nothing was sent) or GK_ENOMEM. */
int gk_fleet__send(gk_fleet *f, req_kind kind, const char *code, void *ctx,
                   int argc, const char **argv, const size_t *lens,
                   uint32_t nkeys);
/* A directory error: counted (bad: a reply of the wrong shape) and said
 * in a fleet_error note. */
void gk_fleet__error(gk_fleet *f, int bad, const char *what,
                     const char *detail);

/* gk_fleet_quick.c: a REQ_QUICK or REQ_QSET reply (r NULL: the
 * connection went first). */
void gk_fleet__quick_reply(gk_fleet *f, const req *q, const redisReply *r);

#endif
