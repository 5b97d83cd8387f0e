/* gk_web.h: the lockstep peer engine for a JavaScript host (gamekit.js).
 *
 * One gk_web is one gk_net_peer (src/net/gk_net_peer.h) plus what a page
 * needs around it: the genres built in through an explicit registry
 * (survivors, push-puzzle), MATCH_START's genre options applied through
 * the flattened key/value calls of src/config/gk_config_kv.h (the host's
 * JSON.parse walks the object: gk_web_options_fn), a device input source
 * fed with axes and presses, and an out queue the host drains after every
 * call. Nothing here does I/O, reads a clock or uses a float: time comes in
 * as integer nanoseconds split in two u32 halves (lo, hi), so a wasm32
 * build hashes exactly as the native referee.
 *
 * Ownership: gk_web_new allocates; gk_web_free releases everything. Every
 * pointer argument is the caller's, read during the call only. Strings are
 * NUL-terminated. Returns are 0 or a negative GK_E* code (src/sim/gk_err.h).
 *
 * Out queue (gk_web_out / gk_web_out_len / gk_web_out_clear): records in
 * the order they happened, each
 *
 *   type u8 | len u32 | len bytes of body         (all little-endian)
 *
 *   GK_WEB_EV_SEND     reliable u8 | wire message bytes (one frame)
 *   GK_WEB_EV_STEP     step u64 | hash u64       (after every step run)
 *   GK_WEB_EV_STARTED  slot u8 | players u8 | active_mask u32 |
 *                      first_step u64 | input_delay u8 | seed u64 |
 *                      genre bytes (the rest)
 *   GK_WEB_EV_MESSAGE  the wire bytes of any other host message
 *                      (ROOM_CREATED, JOINED, ERROR, RECONNECT_SECRET,
 *                      SHUTDOWN, STATE_REQUEST ...; the host decodes the
 *                      few it needs, docs/PROTOCOL.md)
 *   GK_WEB_EV_STALL    step u64 | awaited u32 | waited_ms u32
 *   GK_WEB_EV_DESYNC   step u64 | player u8 | host_hash u64 | peer_hash u64
 *   GK_WEB_EV_REMOVED  slot u32 | step u64
 *   GK_WEB_EV_ENDED    step u64 | reason i32
 *   GK_WEB_EV_SNAPSHOT rc i32 | kind u8 | step u64 | next_input u64 |
 *                      error text (the rest)
 *   GK_WEB_EV_RESUMED  (no body)
 *   GK_WEB_EV_ROLLBACK head_steps u64 | confirmed u64 | rollbacks u64
 *                      (prediction: the head was restored from the
 *                      confirmed run and re-simulated this far)
 *   GK_WEB_EV_REDIRECT code (16 bytes) | enet_len u8 | enet bytes |
 *                      ws_url bytes (the rest; none: no WebSocket): a
 *                      fleet's REDIRECT, decoded by src/net's wire code
 *
 * State map (gk_web_state, gk_web_sample, gk_web_head): the genre's
 * canonical state of the confirmed run, of the predicted head (hash 0:
 * never hashed), or the confirmed run's HUD sample
 * (write_sample); the genre's canonical state
 * (write_state) or HUD sample (write_sample), field by field, named by the
 * unique paths of gk_state.h (`players[0].weapons[1].level`), the paths and
 * values `gk-replay dump --json` prints under "state". Encoded as
 *
 *   "GKS1" | step u64 | hash u64 | count u32 | count fields, each:
 *   kind u8 | keep u8 | add u8 | add bytes | value
 *
 * where the path is the first `keep` bytes of the previous field's path
 * followed by `add` bytes, kind is the gk_field_kind (U8..BOOL: value u64,
 * I kinds sign-extended; BYTES: len u32 | bytes), and kind | 0x80 marks a
 * BYTES piece that continues the previous field (a ring written in two
 * pieces, one field in dump's output). The buffer lives in the gk_web
 * until the next state or sample call.
 *
 * Columns (gk_web_head_cols): the fields of the top-level arrays named
 * (survivors' enemies, gems, projectiles: thousands of fields a frame)
 * leave the map for a section after it, one column per field name:
 *
 *   "GKC1" | ncols u32 | ncols columns, each:
 *   list_len u8 | list | key_len u8 | key | kind u8 | n u32 |
 *   n values, each lo u32 | hi u32 (as the map's, by element order)
 *
 * where key is the path after `list[i].` (`x`, or `weapons[1].level`).
 * A BYTES field, and a field past the 32nd column, stays in the map.
 */
#ifndef GK_WEB_H
#define GK_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_peer.h"

enum {
  GK_WEB_EV_SEND = 1,
  GK_WEB_EV_STEP = 2,
  GK_WEB_EV_STARTED = 3,
  GK_WEB_EV_MESSAGE = 4,
  GK_WEB_EV_STALL = 5,
  GK_WEB_EV_DESYNC = 6,
  GK_WEB_EV_REMOVED = 7,
  GK_WEB_EV_ENDED = 8,
  GK_WEB_EV_SNAPSHOT = 9,
  GK_WEB_EV_RESUMED = 10,
  GK_WEB_EV_ROLLBACK = 11,
  GK_WEB_EV_REDIRECT = 12
};

/* gk_web_new's input modes. */
enum {
  GK_WEB_INPUT_DEVICE = 0, /* axes and presses from gk_web_axes/_press */
  GK_WEB_INPUT_BOT = 1     /* the genre's bot (bot_next), seeded as gk-bot */
};
/* OR-ed into gk_web_create's mode: draw a predicted head
 * (gk_net_peer_options.predict; docs/PROTOCOL.md "Prediction"). */
#define GK_WEB_PREDICT 0x100u

/* gk_web_press: buttons, mapped onto each genre's record. */
enum {
  GK_WEB_BTN_LEFT = 1u << 0, /* push-puzzle: a move press */
  GK_WEB_BTN_UP = 1u << 1,
  GK_WEB_BTN_RIGHT = 1u << 2,
  GK_WEB_BTN_DOWN = 1u << 3,
  GK_WEB_BTN_UNDO = 1u << 4,    /* push-puzzle */
  GK_WEB_BTN_RESTART = 1u << 5, /* push-puzzle */
  GK_WEB_BTN_PAUSE = 1u << 6,   /* survivors */
  GK_WEB_BTN_PICK1 = 1u << 7,   /* survivors: upgrade 1..3 */
  GK_WEB_BTN_PICK2 = 1u << 8,
  GK_WEB_BTN_PICK3 = 1u << 9
};

/* Applies MATCH_START's options (`len` bytes of JSON text at `text`) to
 * the genre's config `cfg` of genre `sim` by calling gk_web_kv_* once per
 * leaf. The host implements it (gamekit.js: JSON.parse, then walks the
 * object in document order). Returns 0 or a negative code with a message
 * in err. */
typedef int (*gk_web_options_fn)(void *ctx, const gk_sim *sim, void *cfg,
                                 const char *text, size_t len, char *err,
                                 size_t errlen);

typedef struct gk_web gk_web;

/* A peer with no match yet. `mode` GK_WEB_INPUT_*; seed the bot's seed
 * (gk-bot seeds a player with its seed; the engine mixes in the slot).
 * `opts` may be NULL (gamekit.js's hook, or blank options only natively).
 * NULL on a bad mode or out of memory. */
gk_web *gk_web_create(uint32_t mode, uint64_t seed, gk_web_options_fn opts,
                      void *opts_ctx);
void gk_web_free(gk_web *w);
/* The peer itself (read-only for callers), e.g. for its stats. */
gk_net_peer *gk_web_peer(gk_web *w);

/* The explicit registry: the genres this build plays, by name. */
const gk_sim *gk_web_genre(const char *name);

/* One message from the host at `now`. */
int gk_web_handle_at(gk_web *w, uint64_t now, const uint8_t *bytes, size_t len);
/* The deadline passed (or early: harmless). Returns the next deadline. */
uint64_t gk_web_timeout_at(gk_web *w, uint64_t now);
uint64_t gk_web_deadline(const gk_web *w);

/* Lobby. token NULL or GK_WIRE_TOKEN_BYTES bytes (token_len 0 or that). */
int gk_web_create_room_at(gk_web *w, uint64_t now, uint32_t max_players,
                          uint32_t input_delay, const char *genre,
                          const char *options_json, const uint8_t *token,
                          uint32_t token_len);
/* NAME (docs/PROTOCOL.md "Names"): this player's name for its room, 1..24
 * bytes of UTF-8 without control characters. 0, GK_EINVAL or the peer's
 * code. */
int gk_web_name_at(gk_web *w, uint64_t now, const char *name);
/* Play again: NEXT_ROOM with `code` (as typed or on the wire), the room
 * this connection's host made after its room's match ended; the server
 * tells that room's others. GK_EINVAL if code is not a room code. */
int gk_web_next_room_at(gk_web *w, uint64_t now, const char *code);
/* QUICK_PLAY (docs/PROTOCOL.md "Quick play"): code NULL or "" for any
 * room, else the code a REDIRECT named (either form); the room wanted as
 * for CREATE_ROOM, without a token. 0, GK_EINVAL or the peer's code. */
int gk_web_quick_play_at(gk_web *w, uint64_t now, const char *code,
                         uint32_t max_players, uint32_t input_delay,
                         const char *genre, const char *options_json);
int gk_web_join_at(gk_web *w, uint64_t now, const char *code, uint32_t role,
                   const uint8_t *token, uint32_t token_len);
int gk_web_spectate_at(gk_web *w, uint64_t now, const char *code,
                       const uint8_t *token, uint32_t token_len);
/* A room code as people see it (GK_WIRE_SHORT_MIN..MAX characters, or 16
 * of an older server) in out (non-NULL), from a code as typed (a short
 * code, case-insensitive) or as on the wire (padded with '2's). The join,
 * spectate and rejoin calls take either form too. 0, or GK_EINVAL. */
int gk_web_code_shown(const char *code, char out[GK_WIRE_CODE_LEN + 1]);
int gk_web_rejoin_at(gk_web *w, uint64_t now, const char *code, uint32_t slot,
                     const uint8_t *secret, const uint8_t *token,
                     uint32_t token_len);
/* START_MATCH (the creator), END_MATCH with `reason`, REMOVE_PLAYER. */
int gk_web_start_match_at(gk_web *w, uint64_t now);
int gk_web_end_match_at(gk_web *w, uint64_t now, uint32_t reason);
int gk_web_remove_player_at(gk_web *w, uint64_t now, uint32_t slot);

/* Device input: axes held now (-127..127 each, clamped), and presses that
 * reach exactly the next sampled step (GK_WEB_BTN_*; consumed in
 * end_step). Survivors: axes are its move vector, PAUSE and PICK1..3 its
 * buttons. Push-puzzle: the axes' signs are the directions held, LEFT..
 * DOWN, UNDO, RESTART its presses. */
void gk_web_axes(gk_web *w, int32_t x, int32_t y);
void gk_web_press(gk_web *w, uint32_t buttons);

/* Tests: once the peer has run step `step`, adds `delta` to the field at
 * `path` of its own state (gk_state_patch_add; -delta if +delta does not
 * read back), so its hash parts from the referee's at step + 1. */
int gk_web_perturb(gk_web *w, uint64_t step, const char *path, int32_t delta);

/* The state or sample map (layout above); *len its bytes. NULL before
 * the match has a run, or out of memory. */
const uint8_t *gk_web_state(gk_web *w, uint32_t *len);
const uint8_t *gk_web_sample(gk_web *w, uint32_t *len);
/* The head's state map with prediction (the header's step: the head's
 * steps; its hash 0: never hashed), else the confirmed run's (as
 * gk_web_state). */
const uint8_t *gk_web_head(gk_web *w, uint32_t *len);
/* gk_web_head and gk_web_state with the fields of the top-level arrays
 * named in `lists` ("enemies,gems"; at most 8 names) in columns (layout
 * above). */
const uint8_t *gk_web_head_cols(gk_web *w, const char *lists, uint32_t *len);
const uint8_t *gk_web_state_cols(gk_web *w, const char *lists, uint32_t *len);

/* The out queue (layout above). */
const uint8_t *gk_web_out(const gk_web *w);
uint32_t gk_web_out_len(const gk_web *w);
void gk_web_out_clear(gk_web *w);

/* The flattened option calls for the options hook (gk_config_kv.h, path
 * "options"): a JS number, a boolean, a string. */
int gk_web_kv_number(const gk_sim *sim, void *cfg, const char *key, double d,
                     char *err, size_t errlen);
int gk_web_kv_bool(const gk_sim *sim, void *cfg, const char *key, int b,
                   char *err, size_t errlen);
int gk_web_kv_text(const gk_sim *sim, void *cfg, const char *key, const char *s,
                   char *err, size_t errlen);

#endif
