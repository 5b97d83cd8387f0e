#!/usr/bin/env python3
"""bench_ws_loss.py: WebSocket and ENet players at 5% loss (a benchmark,
not a test; needs root).

Runs in a network namespace of its own (tests/server/netns_loss.py:
re-executed under `unshare -n`; an nftables rule drops --tcp-permille of
the WebSocket port's TCP segments each way, gk-bot's fault relay --udp-loss
of ENet's datagrams). For each row it starts a fresh gk-server (60 steps/s)
and plays one 3-player survivors room of --steps steps with gk-bot:

  enet      every player on ENet           (loss: the relay, UDP)
  ws        every player on WebSocket      (loss: nftables, TCP)
  mixed     2 ENet players + 1 WebSocket   (both)

each once clean and once lossy, and reads:

  late%     steps past the budget: match_end steps_late over
            steps_confirmed (late: confirmed after start + (step + 1) *
            period + 50 ms, as bench_delay.py and bench_server.py count)
  removed   player_removed events in the server's log
  p50/p99   gk-bot's confirm latency (sample to confirmed, every peer, ms)
  dropped   TCP segments the nft rules dropped (to clients + to server),
            ENet datagrams the relay lost

A step is confirmed when every player's input is in, so a room's late
share is its slowest player's: the all-ENet and all-WebSocket rows
separate the transports, the mixed row is the issue's room. Goal: late
<= 2% and no removal at 5% loss.

  bench_ws_loss.py --server build/src/server/gk-server \\
      --bot build/tools/bot/gk-bot [--steps 1800] [--tcp-permille 50]
      [--udp-loss 0.05] [--no-pin]
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "server"))
import netns_loss  # noqa: E402

ROWS = (("enet", None), ("ws", 0), ("mixed", 1))


def one(args, label, ws_players, lossy, tmp):
    tcp = args.tcp_permille if lossy and ws_players is not None else 0
    udp = args.udp_loss if lossy and ws_players != 0 else 0
    o = {"server": args.server, "bot": args.bot, "players": 3,
         "ws_players": ws_players, "steps": args.steps, "tcp_permille": tcp,
         "udp_loss": udp, "hz": 60, "pin": args.pin}
    d = tempfile.mkdtemp(prefix="%s-" % label, dir=tmp)
    r = netns_loss.run_room(o, d)
    s, ev = r["summary"], r["events"]
    p50, p99 = netns_loss.confirm_ms(s) if s else (None, None)
    ok = (s is not None and s["desyncs"] == 0 and s["rooms_failed"] == 0)
    return {"label": label, "tcp": tcp / 10.0, "udp": 100.0 * udp,
            "steps": s["room_results"][0]["steps"] if s else 0,
            "late": 100.0 * (netns_loss.late_share(ev) or 0),
            "removed": netns_loss.count(ev, "player_removed"),
            "p50": p50, "p99": p99, "tcp_dropped": sum(r["dropped"]),
            "udp_lost": s.get("faults", {}).get("lost", 0) if s else 0,
            "ok": ok}


def ms(v):
    return "-" if v is None else "%.1f" % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--steps", type=int, default=1800)
    ap.add_argument("--tcp-permille", type=int, default=50)
    ap.add_argument("--udp-loss", type=float, default=0.05)
    ap.add_argument("--no-pin", dest="pin", action="store_false")
    args = ap.parse_args()
    args.pin = args.pin and len(os.sched_getaffinity(0)) >= 2
    try:
        netns_loss.enter()
    except netns_loss.Error as e:
        print("bench_ws_loss: %s" % e, file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="gk-bench-ws-loss-")
    rows = []
    try:
        for label, wsp in ROWS:
            for lossy in (False, True):
                rows.append(one(args, label, wsp, lossy, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%-6s %5s %5s %6s %6s %7s %7s %7s %9s %8s %s" %
          ("room", "tcp%", "udp%", "steps", "late%", "removed", "p50 ms",
           "p99 ms", "tcp drop", "udp lost", "ok"))
    for r in rows:
        print("%-6s %5.1f %5.1f %6d %6.2f %7d %7s %7s %9d %8d %s" %
              (r["label"], r["tcp"], r["udp"], r["steps"], r["late"],
               r["removed"], ms(r["p50"]), ms(r["p99"]), r["tcp_dropped"],
               r["udp_lost"], "yes" if r["ok"] else "NO"))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
