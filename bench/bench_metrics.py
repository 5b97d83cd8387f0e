#!/usr/bin/env python3
"""bench_metrics.py: what one GET /metrics costs gk-server at 128 rooms,
end to end (a benchmark, not a test).

Starts gk-server on 127.0.0.1 (admin listener on a free port) and gk-bot
with 128 one-player survivors rooms, waits until all 128 play, then stops
the bots (SIGSTOP: the 128 rooms stay open and playing, stalled on their
players' input, so the rooms' own cost no longer swamps the figure) and
measures:

  idle       the server's CPU (user + system, /proc/PID/stat) over
             IDLE seconds with no scrapes (ticks, stall checks);
  scraping   the server's CPU over SCRAPES sequential GET /metrics;

and prints the CPU per scrape: (scraping CPU - idle rate * scraping wall
time) / SCRAPES, i.e. accepting the connection, the HTTP handling, the
exposition and the send. /proc counts in clock ticks (10 ms), hence the
many scrapes. The in-process figure of the exposition alone is
bench_metrics (bench/bench_metrics.c).

  bench_metrics.py --server build/src/server/gk-server \\
      --bot build/tools/bot/gk-bot [--rooms 128] [--scrapes 2000] [--idle 4]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def event(path, name):
    try:
        with open(path) as f:
            for line in f:
                if '"event":"%s"' % name in line:
                    return json.loads(line)
    except OSError:
        pass
    return None


def get(port, path):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--rooms", type=int, default=128)
    ap.add_argument("--scrapes", type=int, default=2000)
    ap.add_argument("--idle", type=float, default=4.0)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gk-bench-metrics-")
    cfg = os.path.join(tmp, "server.json")
    with open(cfg, "w") as f:
        json.dump({"listen": {"host": "127.0.0.1", "port": 0},
                   "replays": {"enabled": False},
                   "timing": {"peer_timeout_ms": 120000},
                   "stall": {"notice_ms": 3600000},
                   "limits": {"rooms": 256, "peers": 1024},
                   "admin": {"enabled": True, "listen": "127.0.0.1:0"}}, f)
    log = os.path.join(tmp, "server.out")
    srv = subprocess.Popen([a.server, "--config", cfg],
                           stdout=open(log, "w"), stderr=subprocess.STDOUT)
    bot = None
    try:
        for _ in range(500):
            if event(log, "listening"):
                break
            time.sleep(0.02)
        udp = event(log, "listening")["port"]
        http = event(log, "admin_listening")["port"]
        bot = subprocess.Popen(
            [a.bot, "--server", "127.0.0.1:%d" % udp, "--genre", "survivors",
             "--rooms", str(a.rooms), "--players", "1", "--steps", "1000000",
             "--timeout", "120"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            rooms = json.loads(get(http, "/rooms"))["rooms"]
            if sum(r["state"] == "playing" for r in rooms) >= a.rooms:
                break
            time.sleep(0.2)
        else:
            sys.exit("bench_metrics: the rooms did not all start")
        bot.send_signal(signal.SIGSTOP)
        time.sleep(1.0)
        c0, t0 = cpu_seconds(srv.pid), time.time()
        time.sleep(a.idle)
        idle_rate = (cpu_seconds(srv.pid) - c0) / (time.time() - t0)
        size = 0
        c0, t0 = cpu_seconds(srv.pid), time.time()
        for _ in range(a.scrapes):
            size = len(get(http, "/metrics"))
        wall = time.time() - t0
        used = cpu_seconds(srv.pid) - c0
        playing = sum(r["state"] == "playing"
                      for r in json.loads(get(http, "/rooms"))["rooms"])
        if playing < a.rooms:
            sys.exit("bench_metrics: rooms ended during the measurement")
        per = (used - idle_rate * wall) / a.scrapes
        print("metrics scrape at %d rooms (end to end)  %.1f us/scrape CPU "
              "(server idle %.1f%% CPU with %d rooms; %d scrapes in %.2f s; "
              "%d bytes)" % (a.rooms, per * 1e6, idle_rate * 100, a.rooms,
                             a.scrapes, wall, size))
    finally:
        if bot:
            bot.send_signal(signal.SIGCONT)
            bot.kill()
            bot.wait()
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(20)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


if __name__ == "__main__":
    main()
