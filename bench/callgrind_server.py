#!/usr/bin/env python3
"""Where gk-server's instructions go, on a fixed load, under callgrind.

gk-server runs under valgrind --tool=callgrind with the config
bench_server.py writes (replays on); gk-bot --light plays R two-player
survivors rooms of N steps against it; then SIGTERM ends the server and
its profile is read back. Instruction counts do not move with the
machine's load (seconds do): this is the figure to compare before and
after a change. Loop turns do move with timing (a slow turn reads more
datagrams at once), so runs differ by a few percent; compare totals of
one load, run twice if a change is small.

  callgrind_server.py --server build-bench/src/server/gk-server \\
      --bot build-bench/tools/bot/gk-bot [--rooms 16] [--steps 600] \\
      [--transport enet|websocket] [--peers N] [--out FILE]

Prints Ir per room-step (room-steps = gk_sim_hash calls, one per room per
step) and per datagram (datagrams = ENet receives handed to the server +
sends it made), for the whole loop and for each part of the hot path.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_server  # noqa: E402

# (label, function, per) - inclusive Ir of function, divided by room-steps
# ("step") or by datagrams ("dgram")
PARTS = [
    ("loop total (uv_run)", "uv_run", "step"),
    ("ENet service: read, protocol, queue (enet_host_service)",
     "enet_host_service", "dgram"),
    ("ENet flush once per loop turn (enet_host_flush)", "enet_host_flush",
     "dgram"),
    ("a datagram in: link, auth, decode, room (on_receive)", "on_receive",
     "dgram"),
    ("  from the link on (sv_link_data)", "sv_link_data", "dgram"),
    ("  decode (gk_wire_decode)", "gk_wire_decode", "dgram"),
    ("  session: inbuf, confirm, reply (gk_net_session_on_msg)",
     "gk_net_session_on_msg", "dgram"),
    ("  encode CONFIRMED (gk_wire_encode)", "gk_wire_encode", "dgram"),
    ("  send through the link, ENet or WebSocket (link_send)", "link_send",
     "dgram"),
    ("  ENet: enet_packet_create, enet_peer_send (gk_net_transport_send)",
     "gk_net_transport_send", "dgram"),
    ("room-step: step timer (on_step)", "on_step", "step"),
    ("  room tick (gk_room__match_tick)", "gk_room__match_tick", "step"),
    ("  referee step (step)", "step", "step"),
    ("  hash (gk_sim_hash)", "gk_sim_hash", "step"),
    ("  replay recording (gk_room__replay_tick)", "gk_room__replay_tick",
     "step"),
    ("  replica end of step (replica_end_step)", "replica_end_step",
     "step"),
    ("  metrics (sv_metrics_tick)", "sv_metrics_tick", "step"),
    ("room start (gk_room__on_start), per room-step", "gk_room__on_start",
     "step"),
    ("malloc", "malloc", "step"),
    ("free", "free", "step"),
]


def inclusive(path):
    """{function: inclusive Ir} from callgrind_annotate."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes",
                          "--threshold=100", path], check=True,
                         capture_output=True, text=True).stdout
    res = {}
    pat = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+\S*?:([^\s\[]+)")
    for line in out.splitlines():
        m = pat.match(line)
        if m:
            res.setdefault(m.group(2), int(m.group(1).replace(",", "")))
    return res


def calls(path, names):
    """{function: calls into it} summed over every caller."""
    ids, cur, res = {}, None, dict.fromkeys(names, 0)
    pat = re.compile(r"^(c?)fn=\((\d+)\)(?: (.*))?$")
    with open(path) as f:
        for line in f:
            m = pat.match(line)
            if m:
                if m.group(3):
                    ids[m.group(2)] = m.group(3)
                if m.group(1):
                    cur = ids.get(m.group(2))
            elif line.startswith("calls=") and cur in res:
                res[cur] += int(line[6:].split()[0])
    return res


def run(args, d):
    cfg = bench_server.server_config(args.rooms, args.transport, d)
    if args.peers:
        cfg["limits"]["peers"] = args.peers
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(d, "server.log")
    with open(log, "w") as lf:
        srv = subprocess.Popen(["valgrind", "--tool=callgrind",
                                "--callgrind-out-file=" + args.out,
                                args.server, "--config", cpath],
                               stdout=lf, stderr=subprocess.DEVNULL)
    try:
        lst = bench_server.wait_listening(log, srv, 120)
        cmd = [args.bot, "--server", "127.0.0.1:%d" % lst["port"], "--genre",
               "survivors", "--rooms", str(args.rooms), "--players", "2",
               "--steps", str(args.steps), "--light", "--timeout",
               str(120 + args.steps // 5)]
        if args.transport == "websocket":
            cmd += ["--ws", "ws://127.0.0.1:%d/play" % lst["ws_port"]]
        bot = subprocess.run(cmd, capture_output=True, text=True)
        if bot.returncode != 0:
            sys.exit("gk-bot exit %d: %s" % (bot.returncode, bot.stdout))
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--rooms", type=int, default=16)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--transport", choices=["enet", "websocket"],
                    default="enet", help="every player on this transport")
    ap.add_argument("--peers", type=int, default=0,
                    help="limits.peers (default: as bench_server sizes it)")
    ap.add_argument("--out", default=None,
                    help="keep the callgrind file here")
    ap.add_argument("--read", default=None,
                    help="read this callgrind file instead of running")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gk-cg-") as d:
        if args.read:
            args.out = args.read
        else:
            args.out = args.out or os.path.join(d, "callgrind.out")
            run(args, d)
        inc = inclusive(args.out)
        n = calls(args.out, ["gk_sim_hash", "sv_link_data", "link_send",
                             "malloc"])
    steps = n["gk_sim_hash"]
    dgrams = n["sv_link_data"] + n["link_send"]
    print("load: %d two-player survivors rooms x %d steps, gk-bot --light"
          % (args.rooms, args.steps))
    print("transport %s: room-steps %d, datagrams or messages %d (in %d, "
          "out %d), mallocs %d" % (args.transport, steps, dgrams,
                                   n["sv_link_data"], n["link_send"],
                                   n["malloc"]))
    print()
    print("| part | Ir total | Ir per room-step | Ir per datagram |")
    print("|---|---|---|---|")
    for label, fn, per in PARTS:
        ir = inc.get(fn, 0)
        print("| %s | %d | %s | %s |" % (
            label, ir, "%.0f" % (ir / steps) if steps else "-",
            "%.0f" % (ir / dgrams) if per == "dgram" and dgrams else "-"))


if __name__ == "__main__":
    main()
