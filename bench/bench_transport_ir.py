#!/usr/bin/env python3
"""bench_transport_ir.py: the server's instructions per message, ENet vs
WebSocket (a benchmark, not a test).

Seconds of CPU wobble on a shared machine; instruction counts do not. For
each transport and each of two room counts (2 players a room, survivors,
gk-bot --light, --steps steps) it starts gk-server under valgrind's
callgrind on 127.0.0.1 (the WebSocket listener on; with websocket every
bot player connects over it, gk-bot --ws), stops it with SIGTERM, and
reads the process's total instructions (callgrind's "summary" line) and
the messages it moved (packets_in + packets_out of the "stopped" line:
ENet datagrams, or WebSocket messages). The difference between the two
runs over the difference in messages is the marginal cost of one message
with everything it brings (decode, routing, the rooms' steps, the replay
writer): the rooms' work is the same for both transports, so the gap
between the two figures is the transport's.

  bench_transport_ir.py --server build-bench/src/server/gk-server \\
      --bot build-bench/tools/bot/gk-bot [--rooms 2,8] [--steps 300]
      [--transports enet,websocket]
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import events, wait_listening  # noqa: E402


def run_one(args, transport, rooms, tmp):
    d = tempfile.mkdtemp(prefix="%s-%d-" % (transport, rooms), dir=tmp)
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 60,
        "limits": {"peers": 64, "conns_per_ip": 0,
                   "connects_per_ip_per_s": 0, "creates_per_min": 0},
        "replays": {"enabled": True, "dir": os.path.join(d, "replays")},
    }
    if transport == "websocket":  # (a server older than it refuses the key)
        cfg["websocket"] = {"enabled": True, "host": "127.0.0.1", "port": 0}
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    log = os.path.join(d, "server.log")
    cg = os.path.join(d, "callgrind.out")
    with open(log, "w") as lf:
        srv = subprocess.Popen(["valgrind", "--tool=callgrind",
                                "--callgrind-out-file=" + cg, args.server,
                                "--config", cpath],
                               stdout=lf, stderr=subprocess.DEVNULL)
    lst = wait_listening(log, srv, timeout=60)
    cmd = [args.bot, "--server", "127.0.0.1:%d" % lst["port"], "--genre",
           "survivors", "--rooms", str(rooms), "--players", "2", "--steps",
           str(args.steps), "--light", "--timeout", "300"]
    if transport == "websocket":
        cmd += ["--ws", "ws://127.0.0.1:%d/play" % lst["ws_port"]]
    out = subprocess.run(cmd, capture_output=True, text=True,
                         timeout=400).stdout
    summary = json.loads(out) if out.strip() else {}
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=120)
    st = [e for e in events(log) if e.get("event") == "stopped"][-1]
    ir = None
    with open(cg) as f:
        for line in f:
            m = re.match(r"summary:\s+(\d+)", line)
            if m:
                ir = int(m.group(1))
    return {"transport": transport, "rooms": rooms,
            "completed": summary.get("rooms_completed"),
            "messages": st["packets_in"] + st["packets_out"], "ir": ir}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--rooms", default="2,8")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--transports", default="enet,websocket",
                    help="enet alone measures a server without WebSocket")
    args = ap.parse_args()
    lo, hi = [int(x) for x in args.rooms.split(",")]
    tmp = tempfile.mkdtemp(prefix="gk-bench-ir-")
    rows = []
    try:
        for tr in args.transports.split(","):
            a = run_one(args, tr, lo, tmp)
            b = run_one(args, tr, hi, tmp)
            print(json.dumps(a), file=sys.stderr)
            print(json.dumps(b), file=sys.stderr)
            dm = b["messages"] - a["messages"]
            rows.append((tr, a, b, (b["ir"] - a["ir"]) / dm if dm else None))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| transport | rooms | done | messages | instructions "
          "| marginal instructions per message |")
    print("|---|---|---|---|---|---|")
    for tr, a, b, per in rows:
        print("| %s | %d / %d | %s / %s | %d / %d | %d / %d | %.0f |" % (
            tr, a["rooms"], b["rooms"], a["completed"], b["completed"],
            a["messages"], b["messages"], a["ir"], b["ir"], per))
    if len(rows) == 2 and rows[0][3] and rows[1][3]:
        print("\nwebsocket / enet: %.2f x" % (rows[1][3] / rows[0][3]))


if __name__ == "__main__":
    main()
