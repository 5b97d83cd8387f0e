#!/usr/bin/env python3
"""bench_ws_memory.py: gk-server's resident memory per idle WebSocket
connection (a benchmark, not a test).

Starts gk-server on 127.0.0.1 with its WebSocket listener (and the admin
listener) on free ports, then opens idle upgraded connections in steps
(0, N/4, N/2, 3N/4, N by default) from raw sockets (the handshake by
hand, subprotocol gamekit.1; nothing sent after it, so each connection is
a link in no room). At each step it waits until /metrics shows that many
WebSocket connections, lets the server settle, and reads its VmRSS from
/proc/PID/status. It prints the RSS at each step, the growth from 0 to N
per connection, and the least-squares slope over the steps.

Pings are off (websocket.ping_ms 0) and the silence timeout and the
lobby timeout long, so the connections stay idle and open; a connection
costs the same with pings (its ping payload is 8 bytes in wslay's queue
while one is in flight).

  bench_ws_memory.py --server build/src/server/gk-server [--conns 1000]
      [--steps 4] [--settle 1.0]
"""
import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REQ = (b"GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\n"
       b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
       b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: gamekit.1\r\n"
       b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")


def log_event(path, event, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        with open(path) as f:
            for line in f:
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if j.get("event") == event:
                    return j
        time.sleep(0.05)
    sys.exit("no %s line in %s" % (event, path))


def metric(port, series):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(series + " "):
                return int(float(line.split()[1]))
    sys.exit("no %s in /metrics" % series)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def upgrade(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(REQ)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("connection closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        sys.exit("handshake refused: %r" % head.split(b"\r\n")[0])
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--settle", type=float, default=1.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = a.conns + 64
    if soft < need:
        if hard < need:
            sys.exit("need %d descriptors, the hard limit is %d" % (need, hard))
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    cap = a.conns + 16
    d = tempfile.mkdtemp(prefix="gk-ws-mem-")
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "replays": {"enabled": False},
        "admin": {"enabled": True, "listen": "127.0.0.1:0"},
        "websocket": {"enabled": True, "host": "127.0.0.1", "port": 0,
                      "max_connections": cap, "ping_ms": 0},
        "limits": {"peers": cap, "conns_per_ip": cap,
                   "connects_per_ip_per_s": 100000, "handshake_ms": 0,
                   "lobby_timeout_ms": 0},
        "timing": {"peer_timeout_ms": 600000},
    }
    with open(os.path.join(d, "server.json"), "w") as f:
        json.dump(cfg, f)
    logp = os.path.join(d, "server.log")
    with open(logp, "w") as out:
        srv = subprocess.Popen([a.server, "--config",
                                os.path.join(d, "server.json")],
                               stdout=out, stderr=subprocess.STDOUT)
    socks = []
    try:
        ws_port = log_event(logp, "listening")["ws_port"]
        http = log_event(logp, "admin_listening")["port"]
        points = []
        for i in range(a.steps + 1):
            want = a.conns * i // a.steps
            while len(socks) < want:
                socks.append(upgrade(ws_port))
            series = 'gk_connections{transport="websocket"}'
            end = time.time() + 10
            while metric(http, series) != want and time.time() < end:
                time.sleep(0.05)
            time.sleep(a.settle)
            kib = rss_kib(srv.pid)
            points.append((want, kib))
            print("conns %5d  rss %8d KiB" % (want, kib))
        n0, r0 = points[0]
        n1, r1 = points[-1]
        mx = sum(p[0] for p in points) / len(points)
        my = sum(p[1] for p in points) / len(points)
        sxx = sum((p[0] - mx) ** 2 for p in points)
        slope = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx
        print("per idle WebSocket connection: %.2f KiB (0 -> %d), "
              "slope %.2f KiB" % ((r1 - r0) / (n1 - n0), n1, slope))
    finally:
        for s in socks:
            s.close()
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(15)
        except subprocess.TimeoutExpired:
            srv.kill()


if __name__ == "__main__":
    main()
