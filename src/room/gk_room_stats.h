/* gk_room_stats.h: the rooms' counters, written once.
 *
 * GK_ROOM_COUNTERS is the one list (an X-macro, as gk_err.h's error table
 * is): X(name, kind, help) for each counter. It makes the fields of
 * gk_room_stats, the keys of the server's "stopped" log record and, for
 * kind GK_ROOM_METRIC, the series gk_<name>_total of /metrics with its
 * help text. A counter is added here and nowhere else. Kind GK_ROOM_OWN
 * is a counter /metrics shows its own way (a label of another family, or
 * with the running matches' share added); it is still in the "stopped"
 * record.
 *
 * Every counter counts since the process started, over every room.
 */
#ifndef GK_ROOM_STATS_H
#define GK_ROOM_STATS_H

#include <stdint.h>

#define GK_ROOM_METRIC 1
#define GK_ROOM_OWN 0

/* The figures of the matches' schedules, each its sessions' counter of
 * the same name (gk_net_session_stats; the schedule, lateness and stalls
 * are defined at gk_net_session_config). Ended matches add theirs to the
 * rooms' counters, and log them in match_end; a room's view (/rooms) has
 * its match's; /metrics shows each as gk_<name>_total, ended matches and
 * running ones, with this help text. */
/* clang-format off */
#define GK_ROOM_SCHEDULE(X)                                                    \
  X(steps_confirmed, GK_ROOM_OWN, "Steps confirmed.")                         \
  X(steps_late, GK_ROOM_OWN,                                                  \
    "Steps confirmed more than lockstep.late_slack_ms after their place on "  \
    "the schedule (which a stall moves).")                                    \
  X(confirm_ms, GK_ROOM_OWN,                                                  \
    "Confirm latency, summed: ms each step was confirmed after its place on " \
    "the schedule (0 on time, and for a stall's step).")                      \
  X(stalls, GK_ROOM_OWN,                                                      \
    "Stalls: late steps that waited over lockstep.stall_ms with nothing "     \
    "confirmed; each moves the schedule to its step.")                        \
  X(stalled_ms, GK_ROOM_OWN,                                                  \
    "How late the stalls' steps were, ms: what they moved the schedule by.")  \
  X(stall_notices, GK_ROOM_OWN,                                               \
    "STALL notices sent to players (after stall.notice_ms).")

#define GK_ROOM_COUNTERS(X)                                                    \
  X(rooms_created, GK_ROOM_METRIC, "Rooms created.")                          \
  X(rooms_closed, GK_ROOM_METRIC, "Rooms closed.")                            \
  X(matches_started, GK_ROOM_METRIC, "Matches started.")                      \
  X(matches_ended, GK_ROOM_METRIC, "Matches ended.")                          \
  X(refused, GK_ROOM_METRIC, "Create, join or start requests refused.")       \
  X(next_rooms, GK_ROOM_METRIC,                                               \
    "Play again: hosts' NEXT_ROOMs sent on to their ended rooms' others.")    \
  X(drop_unexpected, GK_ROOM_OWN, "Valid messages a client may not send now.")\
  X(drop_session, GK_ROOM_OWN, "Match messages a room's session dropped.")   \
  X(replies_cut, GK_ROOM_OWN, "ERROR texts left out: over the request.")      \
  X(replies_suppressed, GK_ROOM_OWN,                                          \
    "ERRORs not sent: larger than the request.")                              \
  X(room_steps, GK_ROOM_OWN, "Steps run by the rooms' own loops.")           \
  GK_ROOM_SCHEDULE(X)                                                         \
  X(desyncs, GK_ROOM_OWN, "Desyncs, of ended matches.")                       \
  X(replays_written, GK_ROOM_METRIC, "Replays finalised.")                    \
  X(replays_failed, GK_ROOM_METRIC, "Replays that could not be written.")     \
  X(replay_disk_errors, GK_ROOM_METRIC,                                       \
    "Recordings lost to the disk (a missing or unwritable folder, ENOSPC, "    \
    "EDQUOT, EFBIG).")                                                         \
  X(replay_flushes, GK_ROOM_METRIC, "Replay flush jobs run.")                 \
  X(replays_recovered, GK_ROOM_METRIC,                                        \
    "Replay leftovers (.gkr.tmp) recovered at start.")                        \
  X(replays_damaged, GK_ROOM_METRIC,                                          \
    "Replay leftovers moved aside as .gkr.damaged at start.")                 \
  X(players_held, GK_ROOM_METRIC,                                             \
    "Dropped players whose slot was held for a rejoin.")                      \
  X(bot_seats, GK_ROOM_METRIC,                                                \
    "Seats the server's bots took at match starts (room.bots).")              \
  X(holds_expired, GK_ROOM_METRIC,                                            \
    "Held slots removed after reconnect.hold_ms.")                            \
  X(rejoins, GK_ROOM_METRIC, "Players that took their slot back.")            \
  X(rejoins_refused, GK_ROOM_METRIC, "REJOIN_ROOM requests refused.")         \
  X(rejoin_bad_secret, GK_ROOM_METRIC,                                        \
    "REJOIN_ROOM requests with a wrong secret.")                              \
  X(rejoin_takeovers, GK_ROOM_METRIC,                                         \
    "Rejoins that took a slot whose old connection was still up.")            \
  X(snapshots_sent, GK_ROOM_METRIC, "Snapshots sent.")                        \
  X(snapshot_bytes, GK_ROOM_METRIC, "State bytes sent in snapshots.")         \
  X(spectators_joined, GK_ROOM_METRIC, "Spectators admitted.")                \
  X(spectators_refused, GK_ROOM_METRIC, "SPECTATE requests refused.")         \
  X(spectator_refreshes, GK_ROOM_METRIC,                                      \
    "Newer snapshots sent to spectators that fell behind.")                   \
  X(spectator_desyncs, GK_ROOM_METRIC,                                        \
    "Spectator hashes that differed from the referee's.")                     \
  X(spectator_hashes, GK_ROOM_METRIC,                                         \
    "Spectator hashes compared with the referee's.")                          \
  X(spectator_steps, GK_ROOM_METRIC,                                          \
    "Steps sent to spectators (first sends).")                                \
  X(spectator_ns, GK_ROOM_OWN, "Time the server spent on spectators, ns.")    \
  X(desync_bundles_written, GK_ROOM_METRIC,                                   \
    "Desync bundles written whole.")                                          \
  X(desync_bundles_failed, GK_ROOM_METRIC,                                    \
    "Desync bundles not written whole (a disk error or out of memory; the "   \
    "report says which).")
/* clang-format on */

/* The results of a desync_report (gk_room_desync.c), in the exposition's
 * order: X(NAME, "label"). "diffed" is the one with a diff; the others say
 * why there is none. */
#define GK_ROOM_DSY_RESULT_TABLE(X)                                            \
  X(DIFFED, "diffed")                                                          \
  X(UNREADABLE, "unreadable")                                                  \
  X(DIFF_FAILED, "diff_failed")                                                \
  X(REFEREE_UNAVAILABLE, "referee_unavailable")                                \
  X(NO_ANSWER, "no_answer")                                                    \
  X(CANNOT, "cannot")                                                          \
  X(GARBAGE, "garbage")                                                        \
  X(TOO_LARGE, "too_large")                                                    \
  X(NO_CONNECTION, "no_connection")                                            \
  X(SEND_FAILED, "send_failed")                                                \
  X(ROOM_CLOSED, "room_closed")

enum {
#define GK_ROOM_DSY_ENUM(name, label) GK_ROOM_DSY_##name,
  GK_ROOM_DSY_RESULT_TABLE(GK_ROOM_DSY_ENUM)
#undef GK_ROOM_DSY_ENUM
      GK_ROOM_DSY_RESULTS
};

typedef struct gk_room_stats {
#define GK_ROOM_STATS_FIELD(name, kind, help) uint64_t name;
  GK_ROOM_COUNTERS(GK_ROOM_STATS_FIELD)
#undef GK_ROOM_STATS_FIELD
  /* desync_report lines logged, by result (gk_room_dsy_result_names) */
  uint64_t desync_reports[GK_ROOM_DSY_RESULTS];
} gk_room_stats;

/* The result names of desync_reports, in order. */
extern const char *const gk_room_dsy_result_names[GK_ROOM_DSY_RESULTS];

#endif
