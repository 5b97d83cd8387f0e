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
  memory          the server's peak resident set (wait4's ru_maxrss)
                  and that over the rooms (rss_kib_per_room)
  room errors     why rooms did not complete: each failed room's error
                  from the bots' summaries, counted (room_errors)

and prints a table: CPU per room-step and per packet, late share, confirm
latency (p50/p99 over every bot peer), and the largest R with at most 1%
late steps. A bare UDP send + receive loop (bench_udp) is measured in the
same run, for the CPU-per-packet comparison, and with --enet-echo an ENet
echo server (bench_enet_echo: 8 connections, one packet in flight each),
ENet's own floor, which the table divides ENet rows by ("x echo"), and
with --tcp-echo a TCP echo server (bench_tcp_echo, the same shape over
TCP with TCP_NODELAY), the floor WebSocket rows are divided by.

  bench_server.py --server build/src/server/gk-server \
      --bot build/tools/bot/gk-bot --udp build/bench/bench_udp \
      [--enet-echo build/bench/bench_enet_echo] \
      [--tcp-echo build/bench/bench_tcp_echo] \
      [--rooms 8,16,32,64,128] [--steps 600] [--rooms-per-bot 32]
      [--full-bots] [--no-pin] [--search-s 240]
      [--transports enet,websocket] [--nodes 1,2] [--veth]

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

Network: on loopback by default, where the sender's core does the
receiver's kernel work too (the server's core pays for the bots' TCP
receiving); --veth (root) puts the bots in a network namespace of their
own behind a veth pair, each side's receiving steered to its own core
(bench/netpair.py). The echo floors stay loopback's.

Nodes: --nodes N runs the rooms on N gk-server processes instead of one,
each a node of a fleet (its `fleet` section: fleet_config, heartbeat 1 s,
TTL 5 s) sharing one redis-server that the bench starts for the run and
stops after it (a unix socket in a temp directory, no persistence:
tests/web/gkfleet.py), pinned with the bots to core 1. Every node is on
core 0; the rooms are split evenly across the nodes, each gk-bot process
playing on one node (limits.peers sized for the node's own rooms). Each
figure is over the nodes together: server CPU is the sum of the nodes'
(wait4 of each, Redis's not in it: "redis_cpu_s" in the JSON lines),
room-steps, packets, late and confirmed steps are summed, tick figures
are means and maxima over the nodes. N = 1 (the default) is one server
without a `fleet` section and without Redis; --no-fleet makes every
node such a plain server (what splitting the rooms costs without the
directory). A list (--nodes 1,2) measures every room count on each node
count in turn, then searches the capacity of each, and ends with a
table of CPU per room-step, context switches and capacity against the
first node count.

Capacity: after the fixed list, the largest room count with <= 1% of its
steps late or held by stalls, every room completed and the step timer at
its rate (good()) is searched for: doubling from the
largest good count of the list until one fails, then bisection to within
1/16, stopping when --search-s seconds are spent (0: no search).
"""
import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tests", "web"))
from gkfleet import Redis  # noqa: E402
import netpair  # noqa: E402

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


def wait_listening(path, proc, timeout=10.0, event="listening"):
    """The server's "listening" line (its port, and ws_port), or another
    event's first line."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("gk-server exited: %s" % open(path).read())
        for e in events(path):
            if e.get("event") == event:
                return e
        time.sleep(0.02)
    raise RuntimeError("gk-server did not log %s: %s" % (event, path))


def wait_port(path, proc, timeout=10.0):
    return wait_listening(path, proc, timeout)["port"]


def ts(e):
    t = time.strptime(e["time"][:19], "%Y-%m-%dT%H:%M:%S")
    return time.mktime(t) + int(e["time"][20:23]) / 1000.0


def fleet_config(node, redis_sock, host="127.0.0.1"):
    """The `fleet` section of node `node` (an id) with Redis on a unix
    socket: its ENet port is its own (listen.port 0), heartbeat 1 s."""
    return {"enabled": True, "redis": "unix:" + redis_sock, "node": node,
            "enet": host + ":0", "heartbeat_ms": 1000, "ttl_ms": 5000,
            "max_rooms": MAX_ROOMS}


def server_config(rooms, transport, d, fleet=None, socket_buffer=0,
                  host="127.0.0.1"):
    """The gk-server config of a run of `rooms` rooms, replays under d;
    with `fleet` (fleet_config), one node of a fleet; socket_buffer is
    listen.socket_buffer (0: ENet's 256 KiB); both listeners on host."""
    cfg = {
        "listen": {"host": host, "port": 0},
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
        cfg["websocket"] = {"enabled": True, "host": host, "port": 0,
                            "max_connections": peers_for(rooms)}
    if fleet:
        cfg["fleet"] = fleet
    if socket_buffer:
        cfg["listen"]["socket_buffer"] = socket_buffer
    return cfg


def split(rooms, parts):
    """`rooms` shared among `parts` as evenly as can be."""
    return [rooms // parts + (i < rooms % parts) for i in range(parts)]


def pin_pid(pid, core, args):
    """A running process, every thread, moved to one core (taskset -p)."""
    if args.pin:
        subprocess.run(["taskset", "-a", "-p", "-c", str(core), str(pid)],
                       check=True, stdout=subprocess.DEVNULL)


def proc_cpu_s(pid):
    """user + system seconds of a live process (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_node(args, i, rooms, d, redis):
    """Node i of a run, carrying `rooms` rooms, pinned to core 0: its
    process and log. With redis (a fleet), node "n<i>" of it."""
    nd = os.path.join(d, "n%d" % i)
    os.mkdir(nd)
    host = getattr(args, "host", "127.0.0.1")
    fleet = fleet_config("n%d" % i, redis.sock, host) if redis else None
    cpath = os.path.join(nd, "server.json")
    with open(cpath, "w") as f:
        json.dump(server_config(rooms, args.transport, nd, fleet,
                                getattr(args, "socket_buffer", 0), host), f)
    log = os.path.join(nd, "server.log")
    with open(log, "w") as lf:
        srv = subprocess.Popen(pinned([args.server, "--config", cpath], 0,
                                      args), stdout=lf,
                               stderr=subprocess.STDOUT)
    return srv, log


def start_bots(args, rooms, lst):
    """gk-bot processes (core 1) playing `rooms` rooms on the node whose
    "listening" line is lst, at most --rooms-per-bot rooms each."""
    ws = args.transport == "websocket"
    host = getattr(args, "host", "127.0.0.1")
    bots = []
    left = rooms
    while left > 0:
        n = min(left, args.rooms_per_bot)
        left -= n
        cmd = [args.bot, "--server", "%s:%d" % (host, lst["port"]), "--genre",
               "survivors", "--rooms", str(n), "--players", "2", "--steps",
               str(args.steps), "--timeout", str(60 + args.steps // 10)]
        if not args.full_bots:
            cmd.append("--light")
        if ws:
            cmd += ["--ws", "ws://%s:%d/play" % (host, lst["ws_port"])]
        bots.append(subprocess.Popen(getattr(args, "bot_prefix", []) +
                                     pinned(cmd, 1, args),
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL))
    return bots


def summed(lines):
    """The nodes' "stopped" lines as one: counters summed, maxima (keys
    ending in _max) the largest."""
    out = {}
    for st in lines:
        for k, v in st.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            out[k] = (max(out.get(k, v), v) if k.endswith("_max")
                      else out.get(k, 0) + v)
    return out


def play(args, shares, d, redis):
    """Node i carrying shares[i] rooms (a fleet node with redis), their
    bots, until the bots are done; then the nodes stopped (SIGTERM) and
    reaped: their logs, the bots' summaries and CPU, the nodes' CPU and
    context switches (wait4), the wall time and an exit status."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    srvs, bots = [], []
    out = {"logs": [], "summaries": [], "node_cpu": [], "node_sys": [],
           "node_rss_kib": [], "switches": 0,
           "status": 0}
    try:
        for i, n in enumerate(shares):
            srv, log = start_node(args, i, n, d, redis)
            srvs.append(srv)
            out["logs"].append(log)
        t0 = time.monotonic()
        logs = out["logs"]
        lsts = [wait_listening(log, srv) for srv, log in zip(srvs, logs)]
        for srv, log in zip(srvs, logs) if redis else ():
            wait_listening(log, srv, event="fleet_up")
        for lst, n in zip(lsts, shares):
            bots += start_bots(args, n, lst)
        for b in bots:
            so, _ = b.communicate(timeout=120 + args.steps // 10)
            try:
                out["summaries"].append(json.loads(so))
            except ValueError:
                out["summaries"].append({})
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bots, reaped
        out["bot_cpu"] = (ru.ru_utime + ru.ru_stime) - (ru0.ru_utime +
                                                        ru0.ru_stime)
        for srv in srvs:
            srv.send_signal(signal.SIGTERM)
        for srv in srvs:
            _, status, sru = os.wait4(srv.pid, 0)
            srv.returncode = status
            out["status"] = out["status"] or status
            out["node_cpu"].append(sru.ru_utime + sru.ru_stime)
            out["node_sys"].append(sru.ru_stime)
            out["node_rss_kib"].append(sru.ru_maxrss)  # Linux: KiB
            out["switches"] += sru.ru_nvcsw + sru.ru_nivcsw
        out["wall"] = time.monotonic() - t0
    finally:
        for p in bots + srvs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


def run_one(args, rooms, tmp, keep_log=False):
    """One run of `rooms` rooms on args.nodes gk-server processes (1: one
    server, no Redis; more: a fleet sharing one redis-server)."""
    d = tempfile.mkdtemp(prefix="r%d-" % rooms, dir=tmp)
    args.transport = getattr(args, "transport", "enet")
    ws = args.transport == "websocket"
    nodes = getattr(args, "nodes", 1)
    fleet = nodes > 1 and not getattr(args, "no_fleet", False)
    redis = Redis() if fleet else None
    try:
        if redis:  # the directory is on the load's core, not the nodes'
            pin_pid(redis.proc.pid, 1, args)
        p = play(args, split(rooms, nodes), d, redis)
        redis_cpu = proc_cpu_s(redis.proc.pid) if redis else None
    finally:
        if redis:
            redis.close()
    summaries, sru, csw = p["summaries"], p["node_cpu"], p["switches"]
    bot_cpu, wall, status = p["bot_cpu"], p["wall"], p["status"]
    evs = [e for log in p["logs"] for e in events(log)]
    st = summed(e for e in evs if e.get("event") == "stopped")
    server_desyncs = sum(1 for e in evs if e.get("event") == "desync")
    cpu = sum(sru)
    lat = []
    for s in summaries:
        cl = s.get("confirm_latency_us") or {}
        if cl.get("p50") is not None:
            lat.append((cl["p50"], cl["p99"], cl.get("samples", 0)))
    completed = sum(s.get("rooms_completed", 0) for s in summaries)
    # why rooms did not complete: the bots' error per failed room, counted
    errors = {}
    for s in summaries:
        for ro in s.get("room_results") or []:
            if ro.get("error"):
                errors[ro["error"]] = errors.get(ro["error"], 0) + 1
    if len(summaries) > sum(1 for s in summaries if s):
        errors["a gk-bot printed no summary"] = len(summaries) - sum(
            1 for s in summaries if s)
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
        "nodes": nodes,
        "rooms": rooms,
        "completed": completed,
        "room_errors": dict(sorted(errors.items(), key=lambda x: -x[1])[:5]),
        "connect_retries": retries,
        "desyncs": desyncs,
        "server_desyncs": server_desyncs,
        "server_cpu_s": round(cpu, 3),
        # each node's own (wait4), and Redis's (a fleet only)
        "node_cpu_s": [round(c, 3) for c in sru],
        "node_sys_s": [round(c, 3) for c in p["node_sys"]],
        # each node's peak resident memory (wait4's ru_maxrss), and per
        # room: the process's base is in it, so it reads high at few rooms
        "node_rss_kib": p["node_rss_kib"],
        "rss_kib_per_room": round(sum(p["node_rss_kib"]) / rooms, 1)
        if p["node_rss_kib"] else None,
        "redis_cpu_s": redis_cpu,
        "bot_cpu_s": round(bot_cpu, 3),
        "wall_s": round(wall, 2),
        "room_steps": steps,
        "packets": packets,
        "cpu_us_per_room_step": round(cpu * 1e6 / steps, 2) if steps else None,
        "cpu_ns_per_packet": round(cpu * 1e9 / packets) if packets else None,
        # the nodes' context switches (wait4: voluntary, the loop waiting
        # for work, and involuntary) per room-step: nodes sharing a core
        # each wake for their own share of the datagrams
        "switches_per_room_step": round(csw / steps, 3) if steps else None,
        "late_share": (m_late / m_conf if m_conf else
                       st.get("steps_late", 0) / confirmed),
        "steps_confirmed": m_conf or confirmed,
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
        "uptime_s": st.get("uptime_us", 0) / 1e6 / nodes,
    }
    # the rooms' own step rate: steps over match_start .. match_end
    starts = {e["room"]: ts(e) for e in evs if e.get("event") == "match_start"}
    ends = [e for e in evs if e.get("event") == "match_end"]
    if ends and ends[0]["room"] in starts:
        dt = ts(ends[0]) - starts[ends[0]["room"]]
        res["match_steps"] = ends[0]["steps"]
        res["match_steps_per_s"] = ends[0]["steps"] / dt if dt > 0 else 0
    return res


STEP_HZ = 60


def held_share(r):
    """Late steps and the steps stalls held (their stalled_ms at the step
    period), over the steps confirmed: a stall is a late step the schedule
    moved to (configs/README.md, "Lateness, stalls and confirm latency"),
    so the late share alone does not see a server that stalled its rooms.
    """
    conf = r.get("steps_confirmed") or r.get("room_steps") or 1
    held = r.get("stalled_ms", 0) * STEP_HZ / 1000.0
    return r["late_share"] + held / conf


def good(r):
    """Capacity holds at r: every room completed, at most 1% of the steps
    late or held by stalls, and the step timer kept its rate (a server too
    busy to tick 59.4 times a second runs its referees behind)."""
    return (held_share(r) <= 0.01 and r["completed"] == r["rooms"]
            and (r.get("tick_hz") or 0) >= 0.99 * STEP_HZ)


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


def report(args, udp, results, best, echo=None, tcp_echo=None):
    print("bare UDP send+receive on loopback: %d ns CPU per datagram "
          "(%d datagrams of 40 bytes)" % (udp["cpu_ns_per_packet"],
                                          udp["datagrams"]))
    if echo:
        print("ENet echo server on loopback (bench_enet_echo, %d connections "
              "with one packet in flight each): %d ns CPU per datagram"
              % (echo["in_flight"], echo["cpu_ns_per_packet"]))
    if tcp_echo:
        print("TCP echo server on loopback (bench_tcp_echo, %d connections "
              "with one message in flight each): %d ns CPU per message"
              % (tcp_echo["in_flight"], tcp_echo["cpu_ns_per_message"]))
    # the column "x echo": ENet's echo for ENet rows, TCP's for WebSocket
    floor = None
    if args.transport == "websocket" and tcp_echo:
        floor = tcp_echo["cpu_ns_per_message"]
    elif args.transport == "enet" and echo:
        floor = echo["cpu_ns_per_packet"]
    print("transport: %s" % args.transport)
    print("gk-server processes: %d%s" % (
        args.nodes, "" if args.nodes == 1 else " (no fleet section, no Redis)"
        if args.no_fleet else " (a fleet: redis-server on a unix socket, on "
        "the bots' core)"))
    print("load: %s; %s; %s" % (
        "full gk-bot" if args.full_bots else "gk-bot --light",
        "server on core 0, bots on core 1" if args.pin else "not pinned",
        "the bots in a network namespace of their own behind a veth pair, "
        "each side's receiving on its own core (RPS; the floors above are "
        "loopback's)" if getattr(args, "veth", False) else "loopback"))
    print()
    print("| rooms (2p) | done | desyncs bot/server | server CPU s | bot CPU s "
          "| CPU us/room-step | datagrams/room-step | CPU ns/packet "
          "| x bare UDP | x echo | late % | late+stalled % | confirm p50/p99 ms | tick Hz "
          "| tick ms mean/max | rooms late | RSS MiB (KiB/room) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda x: x["rooms"]):
        ratio = (r["cpu_ns_per_packet"] / udp["cpu_ns_per_packet"]
                 if r["cpu_ns_per_packet"] else 0)
        eratio = ("%.2f" % (r["cpu_ns_per_packet"] / floor)
                  if floor and r["cpu_ns_per_packet"] else "-")
        print("| %d | %d | %d/%d | %.2f | %.2f | %s | %s | %s | %.1f | %s "
              "| %.2f | %.2f | %s/%s | %s | %s/%s | %s | %.1f (%s) |" % (
                  r["rooms"], r["completed"], r["desyncs"],
                  r["server_desyncs"], r["server_cpu_s"], r["bot_cpu_s"],
                  r["cpu_us_per_room_step"], r["datagrams_per_room_step"],
                  r["cpu_ns_per_packet"], ratio, eratio,
                  100 * r["late_share"], 100 * held_share(r),
                  r["confirm_p50_ms"], r["confirm_p99_ms"], r["tick_hz"],
                  r["tick_ms_mean"], r["tick_ms_max"], r["rooms_late"],
                  sum(r.get("node_rss_kib") or [0]) / 1024.0,
                  r.get("rss_kib_per_room")))
    print()
    print("largest room count with <= 1%% of steps late or stalled, every "
          "room done, ticks at %d Hz: %s%s" % (STEP_HZ,
        best, bracket(results, best)))


def bracket(results, best):
    """What bounds a capacity from above: the smallest failing count
    measured past it (the search stops within 1/16 of it, or at its
    time limit short of that)."""
    bad = min([r["rooms"] for r in results
               if not good(r) and r["rooms"] > (best or 0)], default=None)
    return " (%d failed)" % bad if bad else ""


def compare(node_counts, rooms, results, best):
    """CPU per room-step of the fixed room counts (measured on every node
    count in turn) and the capacity, against the first node count."""
    name = ["%d node%s" % (n, "s" if n > 1 else "") for n in node_counts]
    print("| rooms (2p) | CPU us/room-step: %s | x %s | late %%: %s "
          "| context switches/room-step |"
          % (" / ".join(name), name[0], " / ".join(name)))
    print("|---|---|---|---|---|")
    by = {n: {r["rooms"]: r for r in results[n]} for n in node_counts}
    for r in rooms:
        if not all(r in by[n] for n in node_counts):
            continue
        cpu = [by[n][r]["cpu_us_per_room_step"] for n in node_counts]
        late = ["%.2f" % (100 * by[n][r]["late_share"]) for n in node_counts]
        ratio = ["%.3f" % (c / cpu[0]) if c and cpu[0] else "-"
                 for c in cpu[1:]]
        sw = [str(by[n][r]["switches_per_room_step"]) for n in node_counts]
        print("| %d | %s | %s | %s | %s |" % (
            r, " / ".join(map(str, cpu)), " / ".join(ratio),
            " / ".join(late), " / ".join(sw)))
    caps = [best[n] for n in node_counts]
    print()
    print("capacity (<= 1%% late): %s; x %s: %s" % (
        " / ".join("%s%s" % (best[n], bracket(results[n], best[n]))
                   for n in node_counts), name[0],
        " / ".join("%.3f" % (c / caps[0]) if c and caps[0] else "-"
                   for c in caps[1:])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--udp", required=True)
    ap.add_argument("--enet-echo", help="bench_enet_echo: ENet's own floor "
                    "per datagram, and each row's ratio to it")
    ap.add_argument("--tcp-echo", help="bench_tcp_echo: TCP's floor "
                    "per message, what WebSocket rows are divided by")
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
    ap.add_argument("--nodes", default="1",
                    help="gk-server processes carrying the rooms: 1 (no "
                    "Redis) or more (a fleet); a list (1,2) measures each "
                    "in this run")
    ap.add_argument("--no-fleet", action="store_true",
                    help="--nodes above 1 as plain servers: no fleet "
                    "section, no Redis (the split's own cost)")
    ap.add_argument("--drift-steps", type=int, default=3600,
                    help="one long 2-room match for the step rate (0: skip)")
    ap.add_argument("--veth", action="store_true",
                    help="the bots in a network namespace of their own, "
                    "behind a veth pair, each side's receiving steered to "
                    "its own core (bench/netpair.py; root): on loopback "
                    "the server's core also does the bots' receiving")
    ap.add_argument("--socket-buffer", type=int, default=0,
                    help="the server's listen.socket_buffer, bytes (0: "
                    "ENet's 256 KiB; Linux caps it at net.core.rmem_max)")
    args = ap.parse_args()
    if args.rooms_per_bot is None:
        args.rooms_per_bot = 32 if args.full_bots else 1024

    args.pin = not args.no_pin and (os.cpu_count() or 1) >= 2 and \
        shutil.which("taskset") is not None
    udp_cmd = pinned([args.udp, "200000", "40"], 0, args)
    udp = json.loads(subprocess.run(udp_cmd, check=True, capture_output=True,
                                    text=True).stdout)
    echo = None
    if args.enet_echo:  # the server on core 0, its client on core 1
        cpus = ["0", "1"] if args.pin else ["-1", "-1"]
        echo = json.loads(subprocess.run(
            [args.enet_echo, "200000", "40", "8"] + cpus, check=True,
            capture_output=True, text=True, timeout=120).stdout)
    tcp_echo = None
    if args.tcp_echo:  # the same, over TCP: WebSocket's floor
        cpus = ["0", "1"] if args.pin else ["-1", "-1"]
        tcp_echo = json.loads(subprocess.run(
            [args.tcp_echo, "200000", "40", "8"] + cpus, check=True,
            capture_output=True, text=True, timeout=120).stdout)
    for tr in args.transports.split(","):
        if tr not in ("enet", "websocket"):
            ap.error("--transports: enet or websocket, not %r" % tr)
    node_counts = []
    for x in args.nodes.split(","):
        if not x.isdigit() or not 1 <= int(x) <= 64:
            ap.error("--nodes: 1 to 64 (or a list of them), not %r" % x)
        node_counts.append(int(x))
    if max(node_counts) > 1 and not args.no_fleet and \
            shutil.which("redis-server") is None:
        ap.error("--nodes above 1 needs redis-server on the PATH")
    with contextlib.ExitStack() as stack:
        if args.veth:
            pair = stack.enter_context(netpair.NetPair(0, 1))
            args.host, args.bot_prefix = netpair.SERVER_ADDR, pair.prefix()
        measure_all(args, node_counts, udp, echo, tcp_echo)


def measure_all(args, node_counts, udp, echo, tcp_echo):
    """Every transport's fixed list and capacity search, their tables, and
    the step rate's long match."""
    for tr in args.transports.split(","):
        args.transport = tr
        tmp = tempfile.mkdtemp(prefix="gk-bench-server-")
        results = {n: [] for n in node_counts}
        best = {}
        try:
            # each room count on every node count in turn, so the machine's
            # load moves both alike
            rooms = [int(x) for x in args.rooms.split(",")
                     if int(x) <= PEER_ROOMS_MAX]
            for r in rooms:
                for n in node_counts:
                    args.nodes = n
                    results[n].append(measure(args, r, tmp))
            for n in node_counts:
                args.nodes = n
                best[n] = search(args, results[n], tmp)
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
        for n in node_counts:
            args.nodes = n
            report(args, udp, results[n], best[n], echo, tcp_echo)
            print()
        if len(node_counts) > 1:
            compare(node_counts, rooms, results, best)
            print()
    if args.drift_steps:
        tmp = tempfile.mkdtemp(prefix="gk-bench-drift-")
        try:
            a2 = argparse.Namespace(**vars(args))
            a2.steps = args.drift_steps
            a2.transport = "enet"
            a2.nodes = 1
            r = run_one(a2, 2, tmp, keep_log=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("step timer over %.0f s: %.3f ticks/s (step_hz 60, %s "
              "deadlines missed); match rate %.3f steps/s over %d steps"
              % (r["uptime_s"], r["tick_hz"], r["ticks_missed"],
                 r["match_steps_per_s"], r["match_steps"]))


if __name__ == "__main__":
    main()
