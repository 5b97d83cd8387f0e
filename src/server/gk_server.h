/* gk_server.h: gk-server, many lockstep rooms on one libuv loop.
 *
 * One process, one uv loop, one ENet host (gk_net_transport), many rooms.
 * A room is: a code, a genre, a genre config, a seed, a creator (the host
 * player, slot 0), the connections in its slots, and once its match runs a
 * gk_net_session (the relay and referee of the match) and a replay writer.
 *
 * Connections and routing. Every ENet connection has an entry in the
 * connection table: the room it is in and its slot, or none. A datagram
 * from a connection in a playing room whose type is a match message
 * (INPUT, HASH, REMOVE_PLAYER, END_MATCH) goes to that room's session with
 * the connection's slot, so a client can only ever speak for its own slot
 * in its own room; everything else is decoded here as room control
 * (CREATE_ROOM, JOIN_ROOM, START_MATCH, END_MATCH in a lobby). Bad input is
 * dropped and counted per room and per server; each bad message (malformed,
 * of a type no client sends, for another slot, from a non-creator, too far
 * ahead, a wrong room code) is a strike, and a connection with
 * `limits.strikes` strikes is disconnected at once.
 *
 * Admission (gk_server_auth.c). In token mode (auth.mode) every CREATE_ROOM
 * and JOIN_ROOM must carry a connect token that opens with the key file's
 * key, grants that request and was not used before; each refusal has its
 * own ERROR code and counter. In both modes, connections per IP, connects
 * per IP per second, rooms per minute per creator and a handshake deadline
 * are limited, and no reply to a connection that has had no request
 * accepted is larger than the datagram that caused it.
 *
 * The step timer. One timer for all rooms. Its deadlines are t0 + k *
 * step_ns on uv_hrtime (step_ns = 1e9 / step_hz), and it is re-armed as a
 * one-shot for the next deadline every time, so it cannot drift: over ten
 * minutes it ticks 60.00 times a second at 60 Hz. Each tick calls every
 * playing room's gk_net_session_tick, which steps the room's GameLoop by
 * the count of confirmed steps with a `{ steps }` budget. Catch-up rule: a
 * tick steps everything that is ready, so deadlines that passed while the
 * process could not run (stopped, swapped, a slow disk) are not replayed
 * one by one: when the timer fires late, it runs one tick and moves k to
 * the current deadline; the skipped deadlines are counted (ticks_missed)
 * and, if more than `timing.catchup_ticks` were skipped at once, logged.
 *
 * Matches end when the genre says game over, the creator ends it, every
 * player has left, the desync policy is "end", or the server shuts down.
 * Then the replay is finalised (footer, fsync, rename to .gkr) into the
 * replay folder on libuv's thread pool, so a slow disk never holds up the
 * other rooms' steps; the room drains (repeats the last confirmed steps
 * until every player has them, at most a second) and is freed, and its
 * connections are free to create or join another room.
 *
 * Shutdown (SIGTERM/SIGINT or gk_server_shutdown): the server stops taking
 * rooms, closes lobbies, tells every player (SHUTDOWN with the grace time)
 * and ends every match at its next step; replays are finalised as the
 * matches end. If matches are still running when the grace time is up,
 * their replays are finalised as they stand (every appended step is whole)
 * and the loop is stopped. A second signal does that at once.
 */
#ifndef GK_SERVER_H
#define GK_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"
#include "gk_room_stats.h"
#include "gk_server_config.h"
#include "gk_server_log.h"
#include "gk_server_random.h"

/* libuv's loop (uv_loop_t), declared so that this header does not need
 * uv.h: code that only reads configs or makes room codes builds without
 * libuv. */
struct uv_loop_s;

typedef struct gk_server gk_server;

/* The shell's counters (the rooms' own are gk_room_stats, gk_room.h):
 * GK_SERVER_COUNTERS is the one list, X(name, key, div, help), that makes
 * this struct's fields and the keys of the "stopped" record (the value
 * divided by div: the tick times are kept in ns and logged in us). */
/* clang-format off */
#define GK_SERVER_COUNTERS(X)                                                 \
  X(connects, "connects", 1, "Connections accepted.")                         \
  X(disconnects, "disconnects", 1, "Connections gone.")                       \
  X(kicked, "kicked", 1, "Connections dropped for strikes.")                  \
  X(packets_in, "packets_in", 1, "Messages received.")                        \
  X(bytes_in, "bytes_in", 1, "Bytes of messages received.")                   \
  X(drop_malformed, "drop_malformed", 1,                                      \
    "Messages that are not a valid message.")                                 \
  X(drop_no_room, "drop_no_room", 1,                                          \
    "Match messages from a connection in no playing room.")                   \
  X(strikes, "strikes", 1, "Bad messages counted against connections.")       \
  X(ticks, "ticks", 1, "Step timer ticks.")                                   \
  X(ticks_missed, "ticks_missed", 1, "Step timer deadlines skipped.")         \
  X(auth_admitted, "auth_admitted", 1, "Requests whose token was accepted.")  \
  X(auth_missing, "auth_missing", 1, "No token (GK_ENOTOKEN).")               \
  X(auth_bad, "auth_bad", 1, "Wrong key or tampered (GK_EAUTH).")             \
  X(auth_malformed, "auth_malformed", 1, "Not a token of this protocol.")     \
  X(auth_expired, "auth_expired", 1, "Expired, or issued in the future.")     \
  X(auth_grant, "auth_grant", 1,                                              \
    "For another room, genre, player count, slot or client.")                 \
  X(auth_role, "auth_role", 1,                                                \
    "A spectator's token for a player (GK_EROLE).")                           \
  X(auth_reused, "auth_reused", 1, "A token id admitted before (GK_EEXIST).") \
  X(auth_full, "auth_full", 1, "The replay cache was full (GK_EFULL).")       \
  X(limit_conns_per_ip, "limit_conns_per_ip", 1,                              \
    "Connections refused: limits.conns_per_ip.")                              \
  X(limit_connect_rate, "limit_connect_rate", 1,                              \
    "Connections refused: limits.connects_per_s.")                            \
  X(limit_create_rate, "limit_create_rate", 1,                                \
    "Rooms refused: limits.creates_per_min.")                                 \
  X(limit_handshake, "limit_handshake", 1,                                    \
    "Connections cut: limits.handshake_ms.")                                  \
  X(refused_closed, "refused_closed", 1,                                      \
    "Connections closed after their first room request was refused.")         \
  X(code_misses, "code_misses", 1,                                            \
    "Room requests for a code no room has (here or in the fleet).")           \
  X(limit_misses, "limit_misses", 1,                                          \
    "Room requests refused: limits.misses_per_ip_per_min.")                   \
  X(tick_ns, "tick_us", 1000, "Time in the step timer's ticks, in total.")    \
  X(tick_ns_max, "tick_us_max", 1000, "The longest tick.")                    \
  X(tick_over, "tick_over", 1, "Ticks that took longer than a step period.")  \
  X(tick_late_ns_max, "tick_late_us_max", 1000,                               \
    "The latest a tick began after its deadline.")
/* clang-format on */

typedef struct gk_server_stats {
#define GK_SERVER_STATS_FIELD(name, key, div, help) uint64_t name;
  GK_SERVER_COUNTERS(GK_SERVER_STATS_FIELD)
#undef GK_SERVER_STATS_FIELD
} gk_server_stats;

/* Creates the server on `loop`: binds the ENet host, starts the step
 * timer and (if handle_signals) reads SIGTERM and SIGINT from a signalfd
 * on the loop: it blocks them in the calling thread, and the caller must
 * have blocked them in every other thread (gk_server_run blocks them
 * before any thread starts; threads inherit the mask). `cfg` and `log`
 * are owned by the caller and must outlive the server. On success *out is
 * the new server; it frees itself once it has shut down and every handle
 * is closed (uv_run then returns). Returns 0 or GK_EIO (bind failed),
 * GK_ENOMEM, GK_EINVAL with a message. */
int gk_server_start(struct uv_loop_s *loop, const gk_server_config *cfg,
                    gk_server_log *log, int handle_signals, gk_server **out,
                    char *err, size_t errlen);

/* Begins a graceful shutdown (what SIGTERM does). Idempotent; a second
 * call (a second signal) finalises what is left at once. */
void gk_server_shutdown(gk_server *s);

/* The bound UDP port (the real one when the config said 0). */
uint16_t gk_server_port(const gk_server *s);

const gk_server_stats *gk_server_get_stats(const gk_server *s);
/* The rooms' counters (gk_room_stats.h), since start. */
const gk_room_stats *gk_server_get_room_stats(const gk_server *s);

/* Runs a server on a fresh loop until it has shut down. Returns the
 * process exit status: 0 after a clean shutdown, 1 if it could not start
 * (the reason is logged). */
int gk_server_run(const gk_server_config *cfg, gk_server_log *log);

/* gk_server_random and gk_server_room_code: see gk_server_random.h. */

#endif
