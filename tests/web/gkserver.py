"""gkserver.py: a real gk-server for the web tests, on ephemeral ports.

    with GkServer(exe, ws={"static_dir": "/path"}) as s:
        s.ws_port, s.admin_port, s.url("/test/protocol.html")
        s.admin_get("/rooms")   # parsed JSON

Writes a config into a temp directory (ENet, admin and WebSocket on
127.0.0.1 port 0; replays off unless asked), starts the server with its
stdout/stderr in a log file there, and reads the bound ports from the
"listening" and "admin_listening" log lines (bounded wait). Stopping is
SIGTERM, then SIGKILL after a bounded wait; the directory is removed.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request


def server_exe():
    """GK_SERVER (meson sets it), else the in-tree build's gk-server."""
    exe = os.environ.get("GK_SERVER")
    if not exe:
        top = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        exe = os.path.join(top, "build", "src", "server", "gk-server")
    exe = os.path.abspath(exe)
    if not os.access(exe, os.X_OK):
        raise RuntimeError("no gk-server at %s (set GK_SERVER)" % exe)
    return exe


class GkServer:
    def __init__(self, exe, ws=None, config=None, start_timeout=10.0):
        self.dir = tempfile.mkdtemp(prefix="gk-web-srv-")
        cfg = {
            "listen": {"host": "127.0.0.1", "port": 0},
            "admin": {"enabled": True, "listen": "127.0.0.1:0"},
            "websocket": {"enabled": True, "host": "127.0.0.1", "port": 0},
            "replays": {"enabled": False},
        }
        cfg["websocket"].update(ws or {})
        cfg.update(config or {})
        self.config_path = os.path.join(self.dir, "server.json")
        with open(self.config_path, "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        self.log_path = os.path.join(self.dir, "server.log")
        self._log = open(self.log_path, "wb")
        self.ws_port = self.admin_port = None
        self._closed = False
        self.final_log = None
        self.proc = None
        try:
            self.proc = subprocess.Popen([exe, "--config", self.config_path],
                                         stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=self._log,
                                         cwd=self.dir)
            self._wait_ports(start_timeout)
        except BaseException:
            self.close()
            raise

    def _wait_ports(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.events():
                if ev.get("event") == "listening":
                    self.ws_port = ev.get("ws_port")
                if ev.get("event") == "admin_listening":
                    self.admin_port = ev.get("port")
            if self.ws_port and self.admin_port:
                return
            if self.proc.poll() is not None:
                raise RuntimeError("gk-server exited %d:\n%s"
                                   % (self.proc.returncode, self.log_text()))
            time.sleep(0.05)
        raise RuntimeError("gk-server did not log its ports within %.0f s:\n%s"
                           % (timeout, self.log_text()))

    def log_text(self, full=False):
        """The log's last 20,000 bytes (full: all of it; after close()
        the tail only)."""
        if self.final_log is not None:
            return self.final_log
        with open(self.log_path, "rb") as f:
            data = f.read()
        return (data if full else data[-20000:]).decode("utf-8", "replace")

    def events(self, full=False):
        """The JSON log lines so far (other lines skipped); of the log's
        tail, or with full=True of all of it."""
        out = []
        for line in self.log_text(full).splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.ws_port, path)

    def admin_get(self, path, timeout=5.0):
        url = "http://127.0.0.1:%d%s" % (self.admin_port, path)
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return json.loads(r.read())

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(8.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5.0)
        self._log.close()
        self.final_log = self.log_text()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_chain(path):
    """A hash chain file (gk-bot --hashes, gk-web-native): one "STEP HASH"
    line per step -> {step: hash}."""
    chain = {}
    with open(path) as f:
        for line in f:
            step, h = line.split()
            chain[int(step)] = h
    return chain
