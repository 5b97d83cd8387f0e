#!/usr/bin/python3
"""test_tls.py: wss:// through deploy/nginx/gamekit.conf. A throwaway
self-signed certificate (openssl, made here), Debian's nginx running that
very server block as a foreground process from a temp prefix on
ephemeral ports, the real gk-server behind it, and Chromium loading
web/test/protocol.html over https:// and creating a room through wss://.

Chromium trusts the certificate by its SPKI hash only
(--ignore-certificate-errors-spki-list=<sha256 of the public key>, which
Chromium honours with a --user-data-dir, as cdp.Browser always has): any
other certificate error still fails, and a browser without the flag
refuses the page (checked)."""
import asyncio
import os
import re
import shutil
import socket
import ssl
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
from gknginx import Nginx, free_port, make_cert, missing_tool  # noqa: E402
from gkserver import GkServer, server_exe  # noqa: E402

SRC = os.environ.get("GK_SOURCE_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rewrite(conf, tls_port, http_port, ws_port, cert, key):
    """deploy/nginx/gamekit.conf for this run: only its listen ports, its
    certificate paths and its upstream address change (each must be found
    exactly as often as the file has it, or the test fails)."""
    subs = [
        (r"^(\s*)listen 443 ssl;$", r"\1listen 127.0.0.1:%d ssl;" % tls_port, 1),
        (r"^(\s*)listen \[::\]:443 ssl;$", "", 1),
        (r"^(\s*)listen 80;$", r"\1listen 127.0.0.1:%d;" % http_port, 1),
        (r"^(\s*)listen \[::\]:80;$", "", 1),
        (r"^(\s*)ssl_certificate\s+\S+;$", r"\1ssl_certificate %s;" % cert, 1),
        (r"^(\s*)ssl_certificate_key\s+\S+;$",
         r"\1ssl_certificate_key %s;" % key, 1),
        (r"^(\s*)server 127\.0\.0\.1:7779;$",
         r"\1server 127.0.0.1:%d;" % ws_port, 1),
    ]
    for pat, rep, want in subs:
        conf, n = re.subn(pat, rep, conf, flags=re.M)
        assert n == want, "gamekit.conf: %r matched %d times" % (pat, n)
    return conf


PER_IP = 3  # limits.conns_per_ip: the pages below hold 3 at most


class Env:
    dir = None  # made in main(), after the tools are found
    srv = nginx = None
    cert = key = spki = None
    tls_port = http_port = None


def nginx_log():
    return Env.nginx.log() if Env.nginx is not None else ""


def start(_b):
    """nginx runs gamekit.conf in front of gk-server"""
    Env.srv = GkServer(server_exe(),
                       ws={"static_dir": os.path.join(SRC, "web"),
                           "trusted_proxies": ["127.0.0.1"]},
                       config={"limits": {"conns_per_ip": PER_IP}})
    Env.tls_port, Env.http_port = free_port(), free_port()
    with open(os.path.join(SRC, "deploy", "nginx", "gamekit.conf")) as f:
        site = rewrite(f.read(), Env.tls_port, Env.http_port,
                       Env.srv.ws_port, Env.cert, Env.key)
    Env.nginx = Nginx(Env.dir, site, Env.tls_port)


def https(path):
    return "https://127.0.0.1:%d%s" % (Env.tls_port, path)


def the_page_over_https_creates_a_room_through_wss(b):
    p = b.new_page(https("/test/protocol.html"))
    r = p.wait_for("window.gkResult", timeout=10)
    assert r.get("ok") is True, (r, nginx_log())
    assert p.eval("location.protocol") == "https:"
    assert p.eval("gkLobbies[0].ws.url") == \
        "wss://127.0.0.1:%d/play" % Env.tls_port
    room = Env.srv.admin_get("/rooms/" + r["code"])
    assert room["state"] == "lobby", room
    assert room["players"][0]["transport"] == "websocket", room
    # a second tab joins through the proxy too
    q = b.new_page(https("/test/protocol.html?auto=0"))
    q.wait_for("document.getElementById('status').textContent === 'ready'")
    j = q.eval("await gkJoin(%r)" % r["code"])
    assert j == {"ok": True, "slot": 1, "players": 2}, j
    assert not p.exceptions and not q.exceptions


def per_ip_limits_count_each_client_behind_the_proxy(_b):
    """websocket.trusted_proxies ["127.0.0.1"]: gk-server counts the
    address nginx appends to X-Forwarded-For, not nginx's own: from one
    source PER_IP links, then 429; another source still gets in. (Without
    the key every link would count as 127.0.0.1's.)"""
    import websockets
    ctx = ssl.create_default_context(cafile=Env.cert)

    async def upgrade(src):
        s = socket.socket()
        s.bind((src, 0))
        s.setblocking(False)
        await asyncio.get_running_loop().sock_connect(
            s, ("127.0.0.1", Env.tls_port))
        try:
            ws = await websockets.connect(
                "wss://127.0.0.1:%d/play" % Env.tls_port, ssl=ctx, sock=s,
                server_hostname="127.0.0.1", subprotocols=["gamekit.1"],
                open_timeout=5)
            return ws, 101
        except websockets.exceptions.InvalidStatusCode as e:
            s.close()
            return None, e.status_code

    async def go():
        held, got = [], []
        for src in ["127.0.0.7"] * (PER_IP + 1) + ["127.0.0.8"]:
            ws, status = await upgrade(src)
            got.append(status)
            if ws is not None:
                held.append(ws)
        for ws in held:
            await ws.close()
        return got
    got = asyncio.run(asyncio.wait_for(go(), 30))
    assert got == [101] * PER_IP + [429, 101], (got, nginx_log())


def without_the_spki_flag_chromium_refuses_the_certificate(_b):
    with cdp.Browser() as other:
        p = other.new_page()
        try:
            p.goto(https("/test/protocol.html"))
        except cdp.CdpError as e:
            assert "ERR_CERT" in str(e), str(e)
        else:
            raise AssertionError("loaded over an untrusted certificate: "
                                 + p.eval("document.title"))


def a_python_client_speaks_the_protocol_through_wss(_b):
    import websockets
    ctx = ssl.create_default_context(cafile=Env.cert)
    create = bytes.fromhex("0210020009") + b"survivors" + bytes(3)

    async def go():
        async with websockets.connect(
                "wss://127.0.0.1:%d/play" % Env.tls_port, ssl=ctx,
                subprotocols=["gamekit.1"], open_timeout=5) as ws:
            await ws.send(create)
            return await asyncio.wait_for(ws.recv(), 5)
    got = asyncio.run(asyncio.wait_for(go(), 15))
    assert len(got) == 19 and got[:2] == b"\x02\x11", got
    assert re.fullmatch(rb"[A-Z2-7]{16}", got[2:18]) and got[18] == 0, got


def pages_pass_through_with_their_headers_and_refusals(_b):
    ctx = ssl.create_default_context(cafile=Env.cert)
    with urllib.request.urlopen(https("/test/protocol.js"), context=ctx,
                                timeout=5) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert r.headers["Cache-Control"] == "no-cache"
        assert b"encodeCreateRoom" in r.read()
    for path, want in (("/test/nope.html", 404), ("/.env", 404),
                       ("/test/%2e%2e/%2e%2e/etc/passwd", 400)):
        try:
            urllib.request.urlopen(https(path), context=ctx, timeout=5)
        except urllib.error.HTTPError as e:
            assert e.code == want, (path, e.code)
        else:
            raise AssertionError(path + " was served")


def plain_http_redirects_to_https(_b):
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open("http://127.0.0.1:%d/test/protocol.html" % Env.http_port,
                    timeout=5)
    except urllib.error.HTTPError as e:
        assert e.code == 301, e.code
        assert e.headers["Location"] == \
            "https://127.0.0.1/test/protocol.html", e.headers["Location"]
    else:
        raise AssertionError("no redirect")


def stop_nginx():
    return Env.nginx.stop() if Env.nginx is not None else None


def stop(_b):
    """nginx and gk-server stop cleanly"""
    rc = stop_nginx()
    assert rc == 0, (rc, nginx_log())
    Env.srv.close()
    assert Env.srv.proc.returncode == 0


why = missing_tool()
if why is not None:
    cdp.skip_or_bail("%s (Debian packages nginx, openssl)" % why)

def main():
    Env.dir = tempfile.mkdtemp(prefix="gk-tls-")
    try:
        # the certificate must exist before Chromium starts with its hash
        Env.cert, Env.key, Env.spki = make_cert(Env.dir)
    except BaseException:
        shutil.rmtree(Env.dir, ignore_errors=True)
        raise
    cases = [start, per_ip_limits_count_each_client_behind_the_proxy,
             the_page_over_https_creates_a_room_through_wss,
             without_the_spki_flag_chromium_refuses_the_certificate,
             a_python_client_speaks_the_protocol_through_wss,
             pages_pass_through_with_their_headers_and_refusals,
             plain_http_redirects_to_https, stop]
    try:
        cdp.run(cases, flags=["--ignore-certificate-errors-spki-list="
                              + Env.spki])
    finally:
        stop_nginx()
        if Env.srv is not None:
            Env.srv.close()
        shutil.rmtree(Env.dir, ignore_errors=True)


main()
