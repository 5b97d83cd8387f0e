#!/usr/bin/env python3
"""test_redirect.py: gamekit.js under node follows a fleet's REDIRECT,
against a real redis-server and four real gk-server nodes (redirect.mjs
says what is checked). Nodes: A and B as deployed; C advertises B's
WebSocket URL as its own (a misconfigured node: a client sent to it
through B is sent on again); D advertises none.

Environment: GK_SERVER, NODE (meson sets them). Exit 77 (skipped) without
redis-server unless GK_WEB_REQUIRED=1, and without a node that has a global
WebSocket (node 20 or later; Debian 12's is 18), as test_web.py; 0 pass,
1 fail.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "web"))
sys.dont_write_bytecode = True
from gkfleet import FleetNode, Redis, have_redis  # noqa: E402
from gkserver import server_exe  # noqa: E402
sys.path.insert(0, HERE)
from test_web import node_has_websocket  # noqa: E402


def main():
    if not have_redis():
        print("no redis-server", file=sys.stderr)
        sys.exit(1 if os.environ.get("GK_WEB_REQUIRED") == "1" else 77)
    exe = server_exe()
    node = os.environ.get("NODE", "node")
    if not node_has_websocket(node):
        print("skip: %s has no global WebSocket (node 20 or later needed)" %
              node)
        sys.exit(77)
    hold = {"reconnect": {"hold_ms": 10000}}
    with Redis() as r, FleetNode(exe, r, "a", config=hold) as a, \
            FleetNode(exe, r, "b") as b, \
            FleetNode(exe, r, "c", advertise=b.ws_url) as c, \
            FleetNode(exe, r, "d", advertise="") as d:
        p = subprocess.run([node, "--experimental-websocket",
                            os.path.join(HERE, "redirect.mjs"), a.ws_url,
                            b.ws_url, c.ws_url, d.ws_url], timeout=90)
        if p.returncode != 0:
            for s in (a, b, c, d):
                sys.stderr.write(s.log_text()[-3000:])
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
