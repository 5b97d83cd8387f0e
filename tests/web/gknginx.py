"""gknginx.py: Debian's nginx in front of gk-server for the web tests, and
a throwaway certificate for it.

    cert, key, spki = make_cert(d)        # openssl; spki for Chromium's
                                          # --ignore-certificate-errors-spki-list
    n = Nginx(d, site_text, port)         # runs the site, waits for port
    n.log(); n.stop()

The site is a deploy/ config rewritten by the test (listen ports,
certificate paths, upstream ports); Nginx wraps it in a whole nginx.conf
(foreground, every path in d), checks it with `nginx -t`, starts it in
its own process group and waits (bounded) until it accepts on `port`.
stop(): SIGTERM (the fast shutdown: the graceful one would wait on the
WebSockets Chromium may still hold), then SIGKILL to the group.
"""
import base64
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time

NGINX = os.environ.get("GK_NGINX", "/usr/sbin/nginx")
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"


def missing_tool():
    for tool in (NGINX, OPENSSL):
        if not os.access(tool, os.X_OK):
            return "%s is not installed" % tool
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_cert(d):
    """A P-256 self-signed certificate for 127.0.0.1, valid one day; returns
    (cert path, key path, base64 SHA-256 of its SubjectPublicKeyInfo)."""
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)
    pub = subprocess.run([OPENSSL, "x509", "-in", cert, "-pubkey", "-noout"],
                         check=True, capture_output=True, timeout=30).stdout
    der = subprocess.run([OPENSSL, "pkey", "-pubin", "-outform", "der"],
                         input=pub, check=True, capture_output=True,
                         timeout=30).stdout
    return cert, key, base64.b64encode(hashlib.sha256(der).digest()).decode()


def nginx_conf(d, site):
    """A whole nginx.conf around the site: foreground, every path in d."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers read d
    return ("{user}daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\n"
            "error_log {d}/error.log info;\n"
            "events {{ worker_connections 64; }}\n"
            "http {{\n  access_log {d}/access.log;\n"
            "  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n"
            "  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n"
            "  scgi_temp_path {d}/scgi;\n  include {site};\n}}\n"
            ).format(user=user, d=d, site=site)


class Nginx:
    def __init__(self, d, site, port, timeout=10.0):
        self.dir = d
        self.proc = None
        site_path = os.path.join(d, "site.conf")
        with open(site_path, "w") as f:
            f.write(site)
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(nginx_conf(d, site_path))
        argv = [NGINX, "-p", d, "-c", conf, "-e", os.path.join(d, "error.log")]
        t = subprocess.run(argv + ["-t"], capture_output=True, text=True,
                           timeout=30)
        assert t.returncode == 0, t.stderr
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "nginx exited:\n" + self.log()
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError("nginx did not listen:\n" + self.log())

    def log(self):
        try:
            with open(os.path.join(self.dir, "error.log"),
                      errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        """Stops nginx; returns its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the worker, if left
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        return self.proc.returncode
