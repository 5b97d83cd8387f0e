#!/usr/bin/env python3
"""bench_predict.py: input-to-display latency with and without prediction
(a benchmark, not a test; docs/PROTOCOL.md "Prediction").

For each injected round trip (gk-bot --latency RTT/2 each way) it starts a
fresh gk-server on 127.0.0.1 that records replays, plays one 2-player
survivors room of --steps steps with gk-bot twice: with --predict in a
predicting room (lockstep.prediction "on") and without, in a room that
does not predict (the round trip's input delay, as before prediction). It
reads from gk-bot's summary and the server's log:

  delay        the input delay chosen at MATCH_START
  display p50/p99  gk-bot's input-to-display latency (ms): sample to the
               head showing that step (--predict) or to its confirmation
  resim p50/p99    steps re-simulated per frame that moved the head
  rollbacks    head restores after a misprediction, whole run, 2 players
  accuracy     confirmed steps the head predicted right
  late%        steps_late / steps confirmed (match_end)
  ok           0 desyncs, every room finished, `gk-replay verify` passes

  bench_predict.py --server build/src/server/gk-server \\
      --bot build/tools/bot/gk-bot --replay build/tools/replay/gk-replay \\
      [--rtts 0,50,100,200] [--steps 1200]
"""
import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import events, wait_port  # noqa: E402


def run_one(args, rtt, predict, tmp):
    d = tempfile.mkdtemp(prefix="rtt%d-" % rtt, dir=tmp)
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 60,
        "limits": {"peers": 64},
        "lockstep": {"prediction": "on" if predict else "off"},
        "replays": {"enabled": True, "dir": os.path.join(d, "replays")},
    }
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(d, "server.log")
    with open(log, "w") as lf:
        srv = subprocess.Popen([args.server, "--config", cpath], stdout=lf,
                               stderr=subprocess.STDOUT)
    try:
        port = wait_port(log, srv)
        cmd = [args.bot, "--server", "127.0.0.1:%d" % port, "--genre",
               "survivors", "--rooms", "1", "--players", "2", "--steps",
               str(args.steps), "--latency", str(rtt // 2),
               "--timeout", str(30 + args.steps // 20)]
        if predict:
            cmd.append("--predict")
        bot = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=60 + args.steps // 10)
        summary = json.loads(bot.stdout.strip().splitlines()[-1])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=20)
    ev = events(log)
    start = next(e for e in ev if e.get("event") == "match_start")
    end = next(e for e in ev if e.get("event") == "match_end")
    replays = glob.glob(os.path.join(d, "replays", "*.gkr"))
    verified = len(replays) == 1 and subprocess.run(
        [args.replay, "verify", replays[0]], capture_output=True).returncode == 0
    lat = summary["display_latency_us"]
    pr = summary.get("prediction", {})
    confirmed = max(1, end["steps_confirmed"])
    return {
        "rtt": rtt,
        "mode": "predict" if predict else "confirmed",
        "delay": start["input_delay"],
        "p50": (lat["p50"] or 0) / 1000.0,
        "p99": (lat["p99"] or 0) / 1000.0,
        "r50": pr.get("resim_per_frame_p50", 0),
        "r99": pr.get("resim_per_frame_p99", 0),
        "rollbacks": pr.get("rollbacks", 0),
        "acc": pr.get("accuracy") or 0.0,
        "late": 100.0 * end["steps_late"] / confirmed,
        "ok": summary["desyncs"] == 0 and summary["rooms_failed"] == 0
        and verified,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--rtts", default="0,50,100,200")
    ap.add_argument("--steps", type=int, default=1200)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gk-bench-predict-")
    rows = []
    try:
        for rtt in [int(x) for x in args.rtts.split(",")]:
            for predict in (True, False):
                rows.append(run_one(args, rtt, predict, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%-5s %-9s %5s %8s %8s %6s %6s %9s %8s %6s %s" %
          ("rtt", "mode", "delay", "p50 ms", "p99 ms", "rs p50", "rs p99",
           "rollbacks", "accuracy", "late%", "ok"))
    for r in rows:
        print("%-5d %-9s %5d %8.1f %8.1f %6d %6d %9d %8.3f %6.1f %s" %
              (r["rtt"], r["mode"], r["delay"], r["p50"], r["p99"], r["r50"],
               r["r99"], r["rollbacks"], r["acc"], r["late"],
               "yes" if r["ok"] else "NO"))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
