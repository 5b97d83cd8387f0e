"""gkfleet.py: a real redis-server and gk-server fleet nodes for the web
tests (docs/PROTOCOL.md, "A fleet of servers: REDIRECT"), and what their
pages share.

    require_redis()  # skips (or bails, GK_WEB_REQUIRED=1) without it
    with Fleet(gkserver.server_exe()) as f:
        f.add("a", ws=web)
        f.add("b", ws=web)
        f.nodes["a"].ws_url  # "ws://127.0.0.1:PORT/play", what b hands out
        p.eval(CHAIN)  # then agree(host chain, guest chain, steps)

Redis: redis-server on a unix socket in a temp directory (no TCP port, no
persistence), up once it answers PING (bounded wait); stopped with
SIGTERM, then SIGKILL. FleetNode: a GkServer (gkserver.py) with `fleet`
on, its heartbeat 200 ms, up once it logged fleet_up (bounded wait).
advertise: the ws_url other nodes hand out for it (default: its own,
"ws://127.0.0.1:0/play"; "" = none); config: more top-level members.
Fleet: one Redis and the nodes added to it, closed together.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from gkserver import GkServer

# Every step's hash a play page ran, kept by the page from its first step
# in window.chain (step -> hash), for agree().
CHAIN = ("window.chain = {}; play.client.on('step', (s, h) => "
         "{ chain[s] = h; }); 0")


def have_redis():
    return shutil.which("redis-server") is not None


def require_redis():
    if not have_redis():
        import cdp  # the browser tests' harness; not for bench_server.py
        cdp.skip_or_bail('no redis-server')


def agree(a, b, least, what='the pages'):
    """Two chains (step -> hash) equal at every step both hold, and at
    least `least` such steps: their number."""
    both = [s for s in b if s in a]
    bad = [s for s in both if a[s] != b[s]]
    if len(both) < least or bad:
        raise AssertionError('%s: %d steps in both (want %d+), first that '
                             'differs: %s' % (what, len(both), least,
                                              bad[:1]))
    return len(both)


class Redis:
    def __init__(self, timeout=10.0):
        self.dir = tempfile.mkdtemp(prefix="gk-web-redis-")
        self.sock = os.path.join(self.dir, "redis.sock")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock,
             "--save", "", "--appendonly", "no", "--dir", self.dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while self.ping() != b"+PONG\r\n":
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("redis-server did not answer PING")
            time.sleep(0.02)

    def ping(self):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(1.0)
                s.connect(self.sock)
                s.sendall(b"PING\r\n")
                return s.recv(64)
        except OSError:
            return b""

    def commands(self):
        """total_commands_processed of INFO stats (every command Redis
        ran, this one's INFO included)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2.0)
            s.connect(self.sock)
            s.sendall(b"INFO stats\r\n")
            data = b""
            while b"total_commands_processed:" not in data or \
                    not data.endswith(b"\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        for line in data.decode("latin-1").split("\r\n"):
            if line.startswith("total_commands_processed:"):
                return int(line.split(":", 1)[1])
        raise RuntimeError("no total_commands_processed in INFO stats")

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5.0)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FleetNode(GkServer):
    def __init__(self, exe, redis, node, advertise="ws://127.0.0.1:0/play",
                 ws=None, config=None, timeout=10.0):
        fleet = {"enabled": True, "redis": "unix:" + redis.sock,
                 "node": node, "enet": "127.0.0.1:0", "ws_url": advertise,
                 "heartbeat_ms": 200, "ttl_ms": 2000}
        super().__init__(exe, ws=ws, config={"fleet": fleet, **(config or {})})
        self.ws_url = "ws://127.0.0.1:%d/play" % self.ws_port
        deadline = time.monotonic() + timeout
        while not any(e.get("event") == "fleet_up" for e in self.events(True)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = self.log_text()
                self.close()
                raise RuntimeError("node %s never reached the directory:\n%s"
                                   % (node, log))
            time.sleep(0.05)


class Fleet:
    """A Redis and the fleet nodes added to it (by name, in `nodes`); close
    stops the nodes, then Redis, whatever failed."""

    def __init__(self, exe):
        self.exe = exe
        self.nodes = {}
        self.redis = Redis()

    def add(self, name, **kw):
        """A FleetNode named `name` (FleetNode's keywords)."""
        self.nodes[name] = FleetNode(self.exe, self.redis, name, **kw)
        return self.nodes[name]

    def close(self):
        try:
            for n in self.nodes.values():
                n.close()
        finally:
            self.redis.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
