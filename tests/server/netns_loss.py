"""netns_loss.py: one gk-server room with TCP loss on its WebSocket players,
inside a private network namespace (shared by test_e2e_ws_loss.py and
bench/bench_ws_loss.py).

`tc netem` does not work on this machine; a network namespace of our own
(`unshare -n`, its loopback brought up) and an nftables table in it do:

  table inet gk_loss {
    chain o {
      type filter hook output priority 0; policy accept;
      tcp sport PORT numgen random mod 1000 < N counter drop  # to clients
      tcp dport PORT numgen random mod 1000 < N counter drop  # to server
    }
  }

Every packet on loopback goes through the output hook once, so N/1000 of
the WebSocket port's TCP segments are dropped each way (retransmitted by
TCP: late, never lost); UDP (ENet) is not matched, its loss comes from
gk-bot's fault relay (--loss). The counters say how many were dropped.

enter() re-executes the calling script under `unshare -n` (needs root)
and returns inside the namespace; every process the script then starts is
in it, so nothing touches the host's network and any port is free.
Missing tools or no root is an error, never a skip.
"""
import json
import os
import shutil
import signal
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "bench"))
from bench_server import events, wait_listening  # noqa: E402

ENV = "GK_NETNS_LOSS_INSIDE"
TABLE = "gk_loss"
TOOLS = {"unshare": "util-linux", "nft": "nftables", "ip": "iproute2"}


class Error(Exception):
    """The namespace or the nftables table could not be set up."""


def _run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                       timeout=20)
    if p.returncode != 0:
        raise Error("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                         p.stderr.strip()))
    return p.stdout


def enter():
    """Re-executes this script in a new network namespace with lo up;
    returns only inside it. Raises Error when it cannot."""
    missing = ["%s (Debian package %s)" % (t, pkg)
               for t, pkg in TOOLS.items() if shutil.which(t) is None]
    if missing:
        raise Error("missing: %s; install them (scripts/lib.sh "
                    "GK_TEST_PACKAGES)" % ", ".join(missing))
    if os.environ.get(ENV) != "1":
        if os.geteuid() != 0:
            raise Error("unshare -n and nft need root (uid %d)" %
                        os.geteuid())
        _run(["unshare", "-n", "true"])  # e.g. a container without SYS_ADMIN
        env = dict(os.environ)
        env[ENV] = "1"
        sys.stdout.flush()
        os.execvpe("unshare", ["unshare", "-n", "--", sys.executable,
                               os.path.abspath(sys.argv[0])] + sys.argv[1:],
                   env)
    _run(["ip", "link", "set", "lo", "up"])
    links = _run(["ip", "-o", "link", "show"]).strip().splitlines()
    if len(links) != 1 or ": lo:" not in links[0]:
        raise Error("not a private namespace: %s" % links)


def drop_tcp_port(port, permille):
    """Loads the table: permille/1000 of TCP to and from port dropped."""
    rules = "".join(
        "    tcp %s %d numgen random mod 1000 < %d counter drop\n" %
        (way, port, permille) for way in ("sport", "dport"))
    _run(["nft", "-f", "-"],
         "table inet %s {\n  chain o {\n    type filter hook output "
         "priority 0; policy accept;\n%s  }\n}\n" % (TABLE, rules))


def dropped():
    """(to clients, to the server): packets the table's rules dropped."""
    out = json.loads(_run(["nft", "-j", "list", "table", "inet", TABLE]))
    counts = {}
    for item in out.get("nftables", []):
        rule = item.get("rule")
        if rule is None:
            continue
        way, packets = None, None
        for e in rule["expr"]:
            m = e.get("match")
            if m and "payload" in m["left"]:
                way = m["left"]["payload"]["field"]
            if "counter" in e:
                packets = e["counter"]["packets"]
        counts[way] = packets
    return counts.get("sport", 0), counts.get("dport", 0)


def _server_config(d, hz):
    return {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "debug",
        "step_hz": hz,
        "websocket": {"enabled": True, "host": "127.0.0.1", "port": 0},
        "replays": {"dir": os.path.join(d, "replays")},
        "shutdown_grace_ms": 5000,
    }


def _pinned(o, core):
    return ["taskset", "-c", str(core)] if o.get("pin") else []


def run_room(o, d):
    """One survivors room: o is a dict with server, bot, players,
    ws_players (None: none on WebSocket, 0: all), steps, tcp_permille,
    udp_loss, hz, and optionally pin (server on core 0, bot on core 1,
    taskset). Files go to directory d (server.json, server.log, replays/,
    bot.out, bot.err). Returns a dict: summary (gk-bot's
    JSON), log (the server's log path), events, dropped (to clients, to
    server), bot_stderr."""
    os.makedirs(os.path.join(d, "replays"), exist_ok=True)
    cpath = os.path.join(d, "server.json")
    with open(cpath, "w") as f:
        json.dump(_server_config(d, o.get("hz", 60)), f)
    log = os.path.join(d, "server.log")
    with open(log, "w") as lf:
        srv = subprocess.Popen(_pinned(o, 0) + [o["server"], "--config",
                                                cpath], stdout=lf,
                               stderr=subprocess.STDOUT)
    out = {"log": log, "summary": None, "dropped": (0, 0), "bot_stderr": ""}
    try:
        lst = wait_listening(log, srv)
        cmd = _pinned(o, 1) + [o["bot"], "--server", "127.0.0.1:%d" % lst["port"], "--genre",
               "survivors", "--rooms", "1", "--players", str(o["players"]),
               "--steps", str(o["steps"]), "--timeout",
               str(30 + o["steps"] // 20)]
        if o.get("ws_players") is not None:
            cmd += ["--ws", "ws://127.0.0.1:%d/play" % lst["ws_port"]]
            if o["ws_players"]:
                cmd += ["--ws-players", str(o["ws_players"])]
        if o.get("udp_loss"):
            cmd += ["--loss", str(o["udp_loss"])]
        if o.get("tcp_permille"):
            drop_tcp_port(lst["ws_port"], o["tcp_permille"])
        bot = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=90 + o["steps"] // 10)
        out["bot_stderr"] = bot.stderr
        for name, text in (("bot.out", bot.stdout), ("bot.err", bot.stderr)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out["bot_status"] = bot.returncode
        lines = bot.stdout.strip().splitlines()
        out["summary"] = json.loads(lines[-1]) if lines else None
        if o.get("tcp_permille"):
            out["dropped"] = dropped()
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(timeout=20)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
    out["server_status"] = srv.returncode
    out["events"] = events(log)
    return out


def count(ev, name):
    return sum(1 for e in ev if e.get("event") == name)


def first(ev, name):
    return next((e for e in ev if e.get("event") == name), None)


def confirm_ms(summary):
    """gk-bot's confirm latency p50, p99 in ms (None when no samples)."""
    lat = summary["confirm_latency_us"]
    return tuple(None if lat[k] is None else lat[k] / 1000.0
                 for k in ("p50", "p99"))


def late_share(ev):
    """Steps confirmed past the budget (match_end steps_late over
    steps_confirmed; late: after start + (step + 1) * period + 50 ms)."""
    end = first(ev, "match_end")
    if end is None:
        return None
    return end["steps_late"] / max(1, end["steps_confirmed"])
