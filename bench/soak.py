#!/usr/bin/env python3
"""soak.py: gk-server over a long run (a benchmark, not a test).

One gk-server on 127.0.0.1 (step_hz 60, replays on, flushed every
replays.flush_ms) holds a steady population of --rooms rooms (default 64,
2 players each, survivors): --rooms / --rooms-per-bot gk-bot processes
run at once, each creating its rooms, playing a match of a random length
(--min-steps..--max-steps) over a link with --loss datagram loss each way
(default 2%), ending it and leaving; as soon as one exits another starts,
so rooms are created and ended, and players join and leave, all the time.

Every --sample-s seconds (default 60) it samples the server's resident
memory (/proc/PID/statm), its open descriptors (/proc/PID/fd) and, from
the server's JSON-lines log, the matches that ended in that interval and
their late share (sum of steps_late over sum of steps_confirmed in
match_end). The replays written in the interval are verified with
gk-replay verify and removed (so the folder stays small). At the end it
prints one row per interval and the growth of memory and descriptors
after the warm-up (--warmup intervals): last minus first, and the
least-squares slope per interval.

  soak.py --server build-bench/src/server/gk-server \
      --bot build-bench/tools/bot/gk-bot --replay build-bench/tools/replay/gk-replay \
      [--minutes 3] [--warmup 1] [--rooms 64] [--loss 0.02] [--json OUT]

The bots share the machine's cores with the server: on a small machine
the late share measures the whole setup, not the server alone; --pin puts
the server on core 0 and everything else on core 1.
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import wait_port  # noqa: E402


class LogTail:
    """Reads the server's log lines appended since the last call."""

    def __init__(self, path):
        self.f = open(path)
        self.part = ""

    def events(self):
        out = []
        data = self.part + self.f.read()
        lines = data.split("\n")
        self.part = lines.pop()  # an unfinished last line waits
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def rss_kb(pid):
    with open("/proc/%d/statm" % pid) as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def verify_new(replay_bin, folder):
    """Verifies and removes the finished replays; returns (ok, bad)."""
    files = sorted(glob.glob(os.path.join(folder, "*.gkr")))
    ok = bad = 0
    for i in range(0, len(files), 64):
        batch = files[i:i + 64]
        r = subprocess.run([replay_bin, "verify", "--json"] + batch,
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            try:
                st = json.loads(line).get("status")
            except ValueError:
                continue
            if st == "ok":
                ok += 1
            else:
                bad += 1
                print("replay does not verify: %s" % line, file=sys.stderr)
        for f in batch:
            os.remove(f)
    return ok, bad


def slope(ys):
    n = len(ys)
    if n < 2:
        return 0.0
    mx = (n - 1) / 2.0
    my = sum(ys) / float(n)
    num = sum((i - mx) * (y - my) for i, y in enumerate(ys))
    den = sum((i - mx) ** 2 for i in range(n))
    return num / den


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="intervals left out of the growth figures")
    ap.add_argument("--sample-s", type=float, default=60)
    ap.add_argument("--rooms", type=int, default=64)
    ap.add_argument("--rooms-per-bot", type=int, default=4)
    ap.add_argument("--min-steps", type=int, default=600)
    ap.add_argument("--max-steps", type=int, default=1800)
    ap.add_argument("--loss", default="0.02")
    ap.add_argument("--flush-ms", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the rows and totals here too")
    ap.add_argument("--keep", action="store_true", help="keep the folder")
    ap.add_argument("--pin", action="store_true",
                    help="server on core 0, bots and verify on core 1")
    args = ap.parse_args()
    if args.pin and shutil.which("taskset") is None:
        sys.exit("soak.py: --pin needs taskset (util-linux)")
    if args.pin:
        os.sched_setaffinity(0, {1})  # this script, bots and verify: core 1
    rnd = random.Random(args.seed)

    def pin(cmd, core):
        return ["taskset", "-c", str(core)] + cmd if args.pin else cmd

    d = tempfile.mkdtemp(prefix="gk-soak-")
    replays = os.path.join(d, "replays")
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 60,
        # every bot connects from 127.0.0.1: the per-IP limits (60 rooms
        # created a minute by default) would refuse most of the churn
        "limits": {"rooms": 4096, "peers": 4 * args.rooms + 64,
                   "creates_per_min": 0, "conns_per_ip": 0,
                   "connects_per_ip_per_s": 0},
        "replays": {"enabled": True, "dir": replays,
                    "flush_ms": args.flush_ms},
    }
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(d, "server.log")
    with open(log, "w") as lf:
        srv = subprocess.Popen(pin([args.server, "--config", cpath], 0),
                               stdout=lf,
                               stderr=subprocess.STDOUT)
    port = wait_port(log, srv)
    tail = LogTail(log)

    nbots = max(1, args.rooms // args.rooms_per_bot)
    bots = []
    totals = {"bots": 0, "bot_failures": 0, "bot_desyncs": 0,
              "rooms_completed": 0, "replays_ok": 0, "replays_bad": 0}

    def spawn():
        steps = rnd.randint(args.min_steps, args.max_steps)
        errf = tempfile.TemporaryFile(dir=d)  # a pipe could fill, stall it
        p = subprocess.Popen(pin(
            [args.bot, "--server", "127.0.0.1:%d" % port, "--genre",
             "survivors", "--rooms", str(args.rooms_per_bot), "--players",
             "2", "--steps", str(steps), "--loss", args.loss, "--seed",
             str(rnd.randint(1, 1 << 30)), "--timeout",
             str(120 + steps // 10)], 1),
            stdout=subprocess.PIPE, stderr=errf, text=True)
        p.errf = errf
        bots.append(p)
        totals["bots"] += 1

    def reap():
        for p in list(bots):
            if p.poll() is None:
                continue
            bots.remove(p)
            out = p.stdout.read()
            p.stdout.close()
            p.errf.seek(0)
            why = p.errf.read().decode(errors="replace").strip()
            p.errf.close()
            try:
                s = json.loads(out)
            except ValueError:
                s = {}
            totals["rooms_completed"] += s.get("rooms_completed", 0)
            totals["bot_desyncs"] += s.get("desyncs", 0)
            if p.returncode != 0:
                totals["bot_failures"] += 1
                if totals["bot_failures"] <= 3:
                    print("bot failed (exit %d): %s" % (p.returncode,
                          why.splitlines()[-1] if why else "no message"),
                          file=sys.stderr)

    rows = []
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    next_sample = t0 + args.sample_s
    for _ in range(nbots):
        spawn()
    try:
        while time.monotonic() < end:
            reap()
            while len(bots) < nbots:
                spawn()
            if time.monotonic() >= next_sample:
                next_sample += args.sample_s
                evs = tail.events()
                ends = [e for e in evs if e.get("event") == "match_end"]
                late = sum(e.get("steps_late", 0) for e in ends)
                conf = sum(e.get("steps_confirmed", 0) for e in ends)
                ok, bad = verify_new(args.replay, replays)
                totals["replays_ok"] += ok
                totals["replays_bad"] += bad
                row = {
                    "minute": round((time.monotonic() - t0) / 60, 2),
                    "rss_kb": rss_kb(srv.pid),
                    "fds": fds(srv.pid),
                    "matches_ended": len(ends),
                    "late_share": late / conf if conf else 0.0,
                    "replays_verified": ok,
                    "replays_bad": bad,
                    "replay_failed": sum(1 for e in evs
                                         if e.get("event") == "replay_failed"),
                    "desyncs": sum(1 for e in evs
                                   if e.get("event") == "desync"),
                }
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            time.sleep(0.2)
    finally:
        for p in bots:
            p.kill()
            p.wait()
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=60)
    tail.events()
    ok, bad = verify_new(args.replay, replays)
    totals["replays_ok"] += ok
    totals["replays_bad"] += bad

    print("| interval | min | RSS KiB | fds | matches ended | late % "
          "| replays verified | bad | replay_failed | desyncs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows):
        print("| %d%s | %.2f | %d | %d | %d | %.3f | %d | %d | %d | %d |" % (
            i + 1, " (warm-up)" if i < args.warmup else "", r["minute"],
            r["rss_kb"], r["fds"], r["matches_ended"],
            100 * r["late_share"], r["replays_verified"], r["replays_bad"],
            r["replay_failed"], r["desyncs"]))
    after = rows[args.warmup:]
    res = {"rows": rows, "totals": totals}
    if after:
        rss = [r["rss_kb"] for r in after]
        fd = [r["fds"] for r in after]
        res["growth"] = {
            "intervals": len(after),
            "rss_kb": rss[-1] - rss[0],
            "rss_kb_per_interval": round(slope(rss), 1),
            "fds": fd[-1] - fd[0],
            "fds_per_interval": round(slope(fd), 2),
            "late_share_max": max(r["late_share"] for r in after),
        }
        g = res["growth"]
        print()
        print("after warm-up (%d intervals of %gs): RSS %+d KiB (slope %+.1f "
              "KiB/interval), fds %+d (slope %+.2f/interval), late share "
              "max %.3f%%" % (g["intervals"], args.sample_s, g["rss_kb"],
                              g["rss_kb_per_interval"], g["fds"],
                              g["fds_per_interval"],
                              100 * g["late_share_max"]))
    print("totals: %s; server exit %s" % (json.dumps(totals), srv.returncode))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    else:
        print("kept %s" % d)


if __name__ == "__main__":
    main()
