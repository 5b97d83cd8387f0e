#!/usr/bin/env python3
"""TAP test: every config bench_server.py hands gk-server is one it takes.

For each transport, the smallest run, the largest run the capacity search
may reach (PEER_ROOMS_MAX) and the first room count past it (whose places
are capped) are written as bench_server writes them, on one server and as
a node of a 2-node fleet (--nodes 2: its share of the rooms, the `fleet`
section fleet_config writes), and gk-server --check-config must accept
each (it reads the fleet section without connecting to Redis). The
largest run again with both listeners and the fleet's ENet address on
the veth pair's address (--veth, bench/netpair.py).

  test_bench_config.py --server build/src/server/gk-server
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_server  # noqa: E402
import netpair  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    args = ap.parse_args()
    top = bench_server.PEER_ROOMS_MAX
    lo, veth = "127.0.0.1", netpair.SERVER_ADDR
    cases = [(t, r, n, lo) for t in ("enet", "websocket")
             for r in (1, top, top + 1, bench_server.MAX_ROOMS // 2)
             for n in (1, 2)]
    cases += [(t, top, n, veth) for t in ("enet", "websocket")
              for n in (1, 2)]
    print("1..%d" % len(cases))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gk-bench-cfg-") as d:
        for i, (transport, rooms, nodes, host) in enumerate(cases, 1):
            path = os.path.join(d, "server.json")
            # the last node of the run: its share, its fleet section
            share = bench_server.split(rooms, nodes)[-1]
            fleet = (bench_server.fleet_config(
                "n%d" % (nodes - 1), os.path.join(d, "redis.sock"), host)
                if nodes > 1 else None)
            with open(path, "w") as f:
                json.dump(bench_server.server_config(share, transport, d,
                                                     fleet, 0, host), f)
            p = subprocess.run([args.server, "--config", path,
                                "--check-config"], capture_output=True,
                               text=True, timeout=30)
            ok = p.returncode == 0
            failed += not ok
            print("%s %d - the %s config of %d rooms on %s at %s is one "
                  "gk-server takes" % (
                      "ok" if ok else "not ok", i, transport, rooms,
                      "one server" if nodes == 1 else
                      "%d fleet nodes (node n%d)" % (nodes, nodes - 1), host))
            if not ok:
                print("# " + (p.stdout + p.stderr).strip().replace(
                    "\n", "\n# "))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
