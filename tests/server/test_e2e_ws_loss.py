#!/usr/bin/env python3
"""test_e2e_ws_loss.py: test_e2e_ws.c's mixed room (two ENet gk-bot
players and one WebSocket player, survivors, 3,000 steps) with 5% loss on
both transports: the WebSocket port's TCP segments dropped at random by an
nftables rule each way, ENet's datagrams by gk-bot's fault relay
(--loss 0.05). The whole run (server, bot, gk-replay) is in a network
namespace of its own (netns_loss.py: re-executed under `unshare -n`);
missing tools or no root fail the test, they never skip it.

It checks: the room completes with the players agreeing and 0 desyncs
(bot and server), no player removed, 2 ENet and 1 WebSocket connect, the
replay verifies with gk-replay, and both the nft counters and the relay
dropped packets (so a rule that matched nothing fails the test). A failing
run's folder (server log, config, replays) is kept under --keep and the
tail of the server's log is printed. TAP on stdout.

  test_e2e_ws_loss.py --server gk-server --bot gk-bot --replay gk-replay
      --keep DIR
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_loss  # noqa: E402

NAME = ("two_enet_and_one_websocket_bot_play_3000_steps_at_5_percent_loss_"
        "on_both_transports_and_the_replay_verifies")
STEPS = 3000


def connects(ev, transport):
    return sum(1 for e in ev if e.get("event") == "connect" and
               e.get("transport") == transport)


def check(r, replay):
    """The failures of run r (a list of sentences; empty: passed)."""
    bad = []
    s, ev = r["summary"], r["events"]
    if s is None:
        return ["gk-bot printed no summary (exit %s): %s" %
                (r.get("bot_status"), r["bot_stderr"][-2000:])]
    room = s["room_results"][0]
    if r["bot_status"] != 0 or s["rooms_completed"] != 1:
        bad.append("the room did not complete (exit %s): %s" %
                   (r["bot_status"], room.get("error")))
    if s["desyncs"] != 0 or room.get("agree") is not True:
        bad.append("desyncs %s, agree %s" % (s["desyncs"], room.get("agree")))
    if room["steps"] < STEPS:
        bad.append("%d steps" % room["steps"])
    for name in ("desync", "player_removed"):
        if netns_loss.count(ev, name):
            bad.append("%d %s events" % (netns_loss.count(ev, name), name))
    if (connects(ev, "enet"), connects(ev, "websocket")) != (2, 1):
        bad.append("connects: %d ENet, %d WebSocket" %
                   (connects(ev, "enet"), connects(ev, "websocket")))
    down, up = r["dropped"]
    if down == 0 or up == 0:
        bad.append("the nft rules dropped %d to the client, %d to the "
                   "server: the loss was not applied" % (down, up))
    lost = s.get("faults", {}).get("lost", 0)
    if lost == 0:
        bad.append("the fault relay lost no ENet datagram")
    stopped = netns_loss.first(ev, "stopped")
    if stopped is None or stopped.get("replays_written") != 1:
        bad.append("server stop: %s" % stopped)
    rdir = os.path.join(r["dir"], "replays")
    files = sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []
    if len(files) != 1:
        bad.append("replays: %s" % files)
    for f in files:
        v = subprocess.run([replay, "verify", os.path.join(rdir, f)],
                           capture_output=True, text=True, timeout=60)
        if v.returncode != 0:
            bad.append("gk-replay verify %s: exit %d: %s" %
                       (f, v.returncode, (v.stdout + v.stderr)[-1000:]))
    print("# %d steps, late %.2f%%, dropped %d+%d TCP segments, %d ENet "
          "datagrams, confirm p50/p99 %s ms" %
          (room["steps"], 100.0 * (netns_loss.late_share(ev) or 0), down, up,
           lost, netns_loss.confirm_ms(s)))
    return bad


def keep(d, root, log):
    """Moves the run's folder under root; prints the server log's tail."""
    os.makedirs(root, exist_ok=True)
    dest = os.path.join(root, "ws-loss-%d-%d" % (int(time.time()),
                                                 os.getpid()))
    shutil.move(d, dest)
    print("# kept %s" % dest)
    try:
        with open(os.path.join(dest, os.path.basename(log))) as f:
            tail = f.read().splitlines()[-40:]
    except OSError:
        tail = []
    for line in tail:
        print("# server: %s" % line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--keep", required=True)
    args = ap.parse_args()
    try:
        netns_loss.enter()  # re-executes this script in the namespace
    except netns_loss.Error as e:
        print("1..1\nnot ok 1 - %s # network namespace: %s" % (NAME, e))
        return 1
    print("1..1")
    d = tempfile.mkdtemp(prefix="gk-ws-loss-")
    o = {"server": args.server, "bot": args.bot, "players": 3,
         "ws_players": 1, "steps": STEPS, "tcp_permille": 50,
         "udp_loss": 0.05, "hz": 120}
    r = {"dir": d}
    try:
        r.update(netns_loss.run_room(o, d))
        bad = check(r, args.replay)
    except Exception as e:  # a timeout, a bad log: still keep the folder
        bad = ["%s: %s" % (type(e).__name__, e)]
    if bad:
        for b in bad:
            print("# %s" % b)
        keep(d, args.keep, "server.log")
        print("not ok 1 - %s" % NAME)
        return 1
    shutil.rmtree(d, ignore_errors=True)
    print("ok 1 - %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())
