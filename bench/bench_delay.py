#!/usr/bin/env python3
"""bench_delay.py: the input delay on slow links (a benchmark, not a test).

For each injected round trip (gk-bot --latency RTT/2 each way, --jitter 2)
it starts a fresh gk-server on 127.0.0.1, plays one 2-player survivors room
of --steps steps with gk-bot, once with lockstep.input_delay "auto" and
once with a fixed delay of 3 (the old default), and reads:

  delay        the input delay chosen at MATCH_START (match_start log) and
               the delays in force during the match (match_end log)
  steps/s      gk-bot's steps per wall second (player 0, step 60 to end)
  confirm p50/p99  gk-bot's confirm latency (sample to confirmed, ms)
  bound        delay x step + RTT: what the confirm latency should be
               when every step arrives in time (ms)
  late share   steps confirmed after start + (step + 1) * period + 50 ms

  bench_delay.py --server build/src/server/gk-server \\
      --bot build/tools/bot/gk-bot [--rtts 0,60,120,200] [--steps 1200]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import events, wait_port  # noqa: E402


def run_one(args, rtt, delay, tmp):
    d = tempfile.mkdtemp(prefix="rtt%d-" % rtt, dir=tmp)
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 60,
        "limits": {"peers": 64},
        # the round trip's delay, as before prediction (bench_predict.py
        # measures a predicting room)
        "lockstep": {"input_delay": delay, "prediction": "off"},
        "replays": {"enabled": False},
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
               str(args.steps), "--latency", str(rtt // 2), "--jitter", "2",
               "--timeout", str(30 + args.steps // 20)]
        bot = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=60 + args.steps // 10)
        summary = json.loads(bot.stdout.strip().splitlines()[-1])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=20)
    ev = events(log)
    start = next(e for e in ev if e.get("event") == "match_start")
    end = next(e for e in ev if e.get("event") == "match_end")
    room = summary["room_results"][0]
    lat = summary["confirm_latency_us"]
    chosen = start["input_delay"]
    confirmed = max(1, end["steps_confirmed"])
    return {
        "rtt": rtt,
        "mode": "auto" if delay == "auto" else "fixed %d" % delay,
        "delay": chosen,
        "delays": end.get("input_delays", ""),
        "sps": room.get("steps_per_second") or 0.0,
        "p50": (lat["p50"] or 0) / 1000.0,
        "p99": (lat["p99"] or 0) / 1000.0,
        "bound": chosen * 1000.0 / 60 + rtt,
        "late": 100.0 * end["steps_late"] / confirmed,
        "ok": summary["desyncs"] == 0 and summary["rooms_failed"] == 0,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--rtts", default="0,60,120,200")
    ap.add_argument("--steps", type=int, default=1200)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gk-bench-delay-")
    rows = []
    try:
        for rtt in [int(x) for x in args.rtts.split(",")]:
            for mode in ("auto", 3):
                rows.append(run_one(args, rtt, mode, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%-5s %-8s %5s %-22s %8s %8s %8s %8s %6s %s" %
          ("rtt", "mode", "delay", "delays (step:delay)", "steps/s",
           "p50 ms", "p99 ms", "bound ms", "late%", "ok"))
    for r in rows:
        print("%-5d %-8s %5d %-22s %8.2f %8.1f %8.1f %8.1f %6.1f %s" %
              (r["rtt"], r["mode"], r["delay"], r["delays"][:22], r["sps"],
               r["p50"], r["p99"], r["bound"], r["late"],
               "yes" if r["ok"] else "NO"))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
