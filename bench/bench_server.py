#!/usr/bin/env python3
"""bench_server.py: gk-server capacity on loopback (a benchmark, not a test).

For each room count R (2 players per room, 60 steps/s, survivors with the
built-in bots) it starts a fresh gk-server on 127.0.0.1, plays N steps per
room with gk-bot (split into processes of at most --rooms-per-bot rooms),
stops the server with SIGTERM and reads:

  server CPU      user + system seconds of the server process (wait4)
  room-steps      steps run by the rooms' own loops ("stopped" log line)
  packets         datagrams received + sent by the server
  late share      steps confirmed later than start + (step + 1) * period +
                  late_slack_ms (50 ms), over all steps confirmed
  tick rate       step timer ticks per second of server wall time
  tick ms         the server's time in one tick (every room steps on it),
                  mean and max; also the longest drain of the socket and
                  how late a tick began (JSON lines on stderr)
  rooms late      rooms with any late step (a few rooms late at every
                  step is a schedule that moved; many rooms late at a few
                  steps is a server that paused)

and prints a table: CPU per room-step and per packet, late share, confirm
latency (p50/p99 over every bot peer), and the largest R with at most 1%
late steps. A bare UDP send + receive loop (bench_udp) is measured in the
same run, for the CPU-per-packet comparison.

  bench_server.py --server build/src/server/gk-server \
      --bot build/tools/bot/gk-bot --udp build/bench/bench_udp \
      [--rooms 8,16,32,64,128] [--steps 600] [--rooms-per-bot 32]
      [--full-bots] [--no-pin] [--search-s 240]
      [--transports enet,websocket]

Load: gk-bot --light (many players per ENet host, no simulation, no hash
reports: it costs less than the server), one process per --rooms-per-bot
rooms (--full-bots: the full bot, one ENet host and one simulation per
player). With two or more cores the server is pinned to core 0 and the
bots to core 1 (taskset), so the late share is the server's own: the
steps its sessions confirmed late (match_end steps_late over
steps_confirmed; the "stopped" line sums them).

Transports: --transports enet,websocket measures every room count (and
the capacity search) once per transport in the same run: with
websocket, the server's WebSocket listener is on and every bot player
connects over it (gk-bot --ws), one TCP connection each; CPU per packet
is then per WebSocket message, and the confirm latency is over TCP.
Rooms stop at 2,039 on either transport: limits.peers and
websocket.max_connections are at most 4095 (ENet's 12-bit peer ids; every
link takes a place in the one connection table), and a run of R rooms
asks for 2 R + 16 places.

Capacity: after the fixed list, the largest room count with <= 1% late
steps (and every room completed) is searched for: doubling from the
largest good count of the list until one fails, then bisection to within
1/16, stopping when --search-s seconds are spent (0: no search).
"""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MAX_ROOMS = 4096
# limits.peers (and websocket.max_connections) are at most 4095: ENet's peer
# ids are 12 bits, and every link, ENet or WebSocket, takes a place in the
# server's one connection table. A run of R two-player rooms asks for
# 2 R + PEER_SLACK places, so R stops at PEER_ROOMS_MAX on either transport.
PEERS_MAX = 4095
PEER_SLACK = 16
PEER_ROOMS_MAX = (PEERS_MAX - PEER_SLACK) // 2  # 2039


def peers_for(rooms):
    """Connection places for a run of `rooms` two-player rooms."""
    return min(PEERS_MAX, max(64, 2 * rooms + PEER_SLACK))


def pinned(cmd, core, args):
    """cmd run on one core (taskset -c), when pinning is on."""
    return ["taskset", "-c", str(core)] + cmd if args.pin else cmd


def events(path):
    out = []
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def wait_listening(path, proc, timeout=10.0):
    """The server's "listening" line (its port, and ws_port)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("gk-server exited: %s" % open(path).read())
        for e in events(path):
            if e.get("event") == "listening":
                return e
        time.sleep(0.02)
    raise RuntimeError("gk-server did not log its port")


def wait_port(path, proc, timeout=10.0):
    return wait_listening(path, proc, timeout)["port"]


def ts(e):
    t = time.strptime(e["time"][:19], "%Y-%m-%dT%H:%M:%S")
    return time.mktime(t) + int(e["time"][20:23]) / 1000.0


def server_config(rooms, transport, d):
    """The gk-server config of a run of `rooms` rooms, replays under d."""
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 60,
        # ENet scans its whole peer table on every service and flush: size
        # it for the run, as an operator would
        "limits": {"rooms": MAX_ROOMS, "peers": peers_for(rooms),
                   # every bot is on 127.0.0.1: no per-IP limits
                   "conns_per_ip": 0, "connects_per_ip_per_s": 0,
                   "creates_per_min": 0},
        "replays": {"enabled": True, "dir": os.path.join(d, "replays")},
    }
    ws = transport == "websocket"
    if ws:
        cfg["websocket"] = {"enabled": True, "host": "127.0.0.1", "port": 0,
                            "max_connections": peers_for(rooms)}
    return cfg


def run_one(args, rooms, tmp, keep_log=False):
    d = tempfile.mkdtemp(prefix="r%d-" % rooms, dir=tmp)
    ws = getattr(args, "transport", "enet") == "websocket"
    cfg = server_config(rooms, "websocket" if ws else "enet", d)
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(d, "server.log")
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w") as lf:
        srv = subprocess.Popen(pinned([args.server, "--config", cpath], 0,
                                      args), stdout=lf,
                               stderr=subprocess.STDOUT)
    t0 = time.monotonic()
    lst = wait_listening(log, srv)
    port = lst["port"]
    bots = []
    left = rooms
    while left > 0:
        n = min(left, args.rooms_per_bot)
        left -= n
        cmd = [args.bot, "--server", "127.0.0.1:%d" % port, "--genre",
               "survivors", "--rooms", str(n), "--players", "2", "--steps",
               str(args.steps), "--timeout", str(60 + args.steps // 10)]
        if not args.full_bots:
            cmd.append("--light")
        if ws:
            cmd += ["--ws", "ws://127.0.0.1:%d/play" % lst["ws_port"]]
        bots.append(subprocess.Popen(pinned(cmd, 1, args),
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL))
    summaries, bot_cpu = [], 0.0
    for b in bots:
        out, _ = b.communicate(timeout=120 + args.steps // 10)
        try:
            summaries.append(json.loads(out))
        except ValueError:
            summaries.append({})
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bots, reaped
    bot_cpu = (ru.ru_utime + ru.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    srv.send_signal(signal.SIGTERM)
    _, status, sru = os.wait4(srv.pid, 0)
    srv.returncode = status
    wall = time.monotonic() - t0
    evs = events(log)
    stopped = [e for e in evs if e.get("event") == "stopped"]
    server_desyncs = sum(1 for e in evs if e.get("event") == "desync")
    st = stopped[-1] if stopped else {}
    cpu = sru.ru_utime + sru.ru_stime
    lat = []
    for s in summaries:
        cl = s.get("confirm_latency_us") or {}
        if cl.get("p50") is not None:
            lat.append((cl["p50"], cl["p99"], cl.get("samples", 0)))
    completed = sum(s.get("rooms_completed", 0) for s in summaries)
    # light players that connected again after an attempt got no answer
    retries = sum(s.get("connect_retries", 0) for s in summaries)
    desyncs = sum(s.get("desyncs", 0) for s in summaries)
    steps = st.get("room_steps", 0)
    # the server's own late share, from the rooms' match_end lines (the
    # "stopped" line sums the same counters)
    m_late = sum(e.get("steps_late", 0) for e in evs
                 if e.get("event") == "match_end")
    m_conf = sum(e.get("steps_confirmed", 0) for e in evs
                 if e.get("event") == "match_end")
    packets = st.get("packets_in", 0) + st.get("packets_out", 0)
    confirmed = st.get("steps_confirmed", 0) or 1
    res = {
        "transport": "websocket" if ws else "enet",
        "rooms": rooms,
        "completed": completed,
        "connect_retries": retries,
        "desyncs": desyncs,
        "server_desyncs": server_desyncs,
        "server_cpu_s": round(cpu, 3),
        "bot_cpu_s": round(bot_cpu, 3),
        "wall_s": round(wall, 2),
        "room_steps": steps,
        "packets": packets,
        "cpu_us_per_room_step": round(cpu * 1e6 / steps, 2) if steps else None,
        "cpu_ns_per_packet": round(cpu * 1e9 / packets) if packets else None,
        "late_share": (m_late / m_conf if m_conf else
                       st.get("steps_late", 0) / confirmed),
        "datagrams_per_room_step": round(packets / steps, 2) if steps else None,
        "tick_hz": round(st["ticks"] * 1e6 / st["uptime_us"], 3)
        if st.get("uptime_us") else None,
        "ticks_missed": st.get("ticks_missed"),
        # weighted by samples: an approximation of the overall percentile
        "confirm_p50_ms": round(sum(a * n for a, _, n in lat) /
                                max(1, sum(n for *_, n in lat)) / 1000, 1)
        if lat else None,
        "confirm_p99_ms": round(max(b for _, b, _ in lat) / 1000, 1)
        if lat else None,
        # the step timer's burst: every room steps on one tick
        "tick_ms_mean": round(st["tick_us"] / 1000 / st["ticks"], 2)
        if st.get("ticks") and "tick_us" in st else None,
        "tick_ms_max": round(st.get("tick_us_max", 0) / 1000, 2),
        "ticks_over_period": st.get("tick_over"),
        "tick_late_ms_max": round(st.get("tick_late_us_max", 0) / 1000, 2),
        "drain_ms_max": round(st.get("drain_us_max", 0) / 1000, 2),
        "server_busy": round(cpu / wall, 3) if wall > 0 else None,
        # rooms with any late step, and the most late steps in one room:
        # a few rooms late at every step is a schedule that moved
        "rooms_late": sum(1 for e in evs if e.get("event") == "match_end"
                          and e.get("steps_late", 0) > 0),
        "room_late_max": max([e.get("steps_late", 0) for e in evs
                              if e.get("event") == "match_end"], default=0),
        # stalls move a room's schedule (configs/README.md, "Lateness,
        # stalls and confirm latency"): a room late at every step after
        # one moved reads one stall, its wait in stalled_ms
        "stalls": sum(e.get("stalls", 0) for e in evs
                      if e.get("event") == "match_end"),
        "stalled_ms": sum(e.get("stalled_ms", 0) for e in evs
                          if e.get("event") == "match_end"),
        "exit": status,
        "uptime_s": st.get("uptime_us", 0) / 1e6,
    }
    # the rooms' own step rate: steps over match_start .. match_end
    starts = {e["room"]: ts(e) for e in evs if e.get("event") == "match_start"}
    ends = [e for e in evs if e.get("event") == "match_end"]
    if ends and ends[0]["room"] in starts:
        dt = ts(ends[0]) - starts[ends[0]["room"]]
        res["match_steps"] = ends[0]["steps"]
        res["match_steps_per_s"] = ends[0]["steps"] / dt if dt > 0 else 0
    return res


def good(r):
    return r["late_share"] <= 0.01 and r["completed"] == r["rooms"]


def measure(args, rooms, tmp):
    res = run_one(args, rooms, tmp)
    print(json.dumps(res), file=sys.stderr, flush=True)
    return res


def search(args, results, tmp):
    """The largest room count with <= 1% late steps: doubling from the
    largest good count measured, then bisection, within args.search_s."""
    good_n = max([r["rooms"] for r in results if good(r)], default=0)
    bad_n = min([r["rooms"] for r in results
                 if not good(r) and r["rooms"] > good_n], default=None)
    if args.search_s <= 0:
        return good_n or None
    end = time.monotonic() + args.search_s
    lo = max(good_n, 1)
    top = PEER_ROOMS_MAX
    while bad_n is None and time.monotonic() < end and lo < top:
        r = measure(args, min(2 * lo, top), tmp)
        results.append(r)
        if good(r):
            lo = good_n = r["rooms"]
        else:
            bad_n = r["rooms"]
    while (bad_n is not None and bad_n - good_n > max(1, good_n // 16)
           and time.monotonic() < end):
        mid = (good_n + bad_n) // 2
        r = measure(args, mid, tmp)
        results.append(r)
        if good(r):
            good_n = mid
        else:
            bad_n = mid
    return good_n or None


def report(args, udp, results, best):
    print("bare UDP send+receive on loopback: %d ns CPU per datagram "
          "(%d datagrams of 40 bytes)" % (udp["cpu_ns_per_packet"],
                                          udp["datagrams"]))
    print("transport: %s" % args.transport)
    print("load: %s; %s" % ("full gk-bot" if args.full_bots
                            else "gk-bot --light",
                            "server on core 0, bots on core 1" if args.pin
                            else "not pinned"))
    print()
    print("| rooms (2p) | done | desyncs bot/server | server CPU s | bot CPU s "
          "| CPU us/room-step | datagrams/room-step | CPU ns/packet "
          "| x bare UDP | late % | confirm p50/p99 ms | tick Hz "
          "| tick ms mean/max | rooms late |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda x: x["rooms"]):
        ratio = (r["cpu_ns_per_packet"] / udp["cpu_ns_per_packet"]
                 if r["cpu_ns_per_packet"] else 0)
        print("| %d | %d | %d/%d | %.2f | %.2f | %s | %s | %s | %.1f | %.2f "
              "| %s/%s | %s | %s/%s | %s |" % (
                  r["rooms"], r["completed"], r["desyncs"],
                  r["server_desyncs"], r["server_cpu_s"], r["bot_cpu_s"],
                  r["cpu_us_per_room_step"], r["datagrams_per_room_step"],
                  r["cpu_ns_per_packet"], ratio, 100 * r["late_share"],
                  r["confirm_p50_ms"], r["confirm_p99_ms"], r["tick_hz"],
                  r["tick_ms_mean"], r["tick_ms_max"], r["rooms_late"]))
    print()
    print("largest room count with <= 1%% late steps: %s" % best)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--udp", required=True)
    ap.add_argument("--rooms", default="8,16,32,64,128")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--rooms-per-bot", type=int, default=None,
                    help="rooms per gk-bot process (32 full, 1024 light)")
    ap.add_argument("--keep", action="store_true", help="keep the logs")
    ap.add_argument("--full-bots", action="store_true",
                    help="the full gk-bot (a simulation per player)")
    ap.add_argument("--no-pin", action="store_true",
                    help="do not pin the server and the bots to cores")
    ap.add_argument("--search-s", type=float, default=240,
                    help="seconds for the capacity search (0: none)")
    ap.add_argument("--transports", default="enet",
                    help="enet, websocket or both (comma-separated): each "
                    "measured in this run")
    ap.add_argument("--drift-steps", type=int, default=3600,
                    help="one long 2-room match for the step rate (0: skip)")
    args = ap.parse_args()
    if args.rooms_per_bot is None:
        args.rooms_per_bot = 32 if args.full_bots else 1024

    args.pin = not args.no_pin and (os.cpu_count() or 1) >= 2 and \
        shutil.which("taskset") is not None
    udp_cmd = pinned([args.udp, "200000", "40"], 0, args)
    udp = json.loads(subprocess.run(udp_cmd, check=True, capture_output=True,
                                    text=True).stdout)
    for tr in args.transports.split(","):
        if tr not in ("enet", "websocket"):
            ap.error("--transports: enet or websocket, not %r" % tr)
    for tr in args.transports.split(","):
        args.transport = tr
        tmp = tempfile.mkdtemp(prefix="gk-bench-server-")
        results = []
        try:
            for r in [int(x) for x in args.rooms.split(",")]:
                if r > PEER_ROOMS_MAX:
                    continue
                results.append(measure(args, r, tmp))
            best = search(args, results, tmp)
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
        report(args, udp, results, best)
        print()
    if args.drift_steps:
        tmp = tempfile.mkdtemp(prefix="gk-bench-drift-")
        try:
            a2 = argparse.Namespace(**vars(args))
            a2.steps = args.drift_steps
            a2.transport = "enet"
            r = run_one(a2, 2, tmp, keep_log=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("step timer over %.0f s: %.3f ticks/s (step_hz 60, %s "
              "deadlines missed); match rate %.3f steps/s over %d steps"
              % (r["uptime_s"], r["tick_hz"], r["ticks_missed"],
                 r["match_steps_per_s"], r["match_steps"]))


if __name__ == "__main__":
    main()
