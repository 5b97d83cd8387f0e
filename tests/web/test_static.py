#!/usr/bin/python3
"""test_static.py: gk-server's static files on the WebSocket port
(websocket.static_dir), over raw HTTP/1.1 requests on 127.0.0.1: what is
served and how, and every kind of bad request, each beside a good one.
Needs GK_SERVER (meson sets it); no browser."""
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
from gkserver import GkServer, server_exe  # noqa: E402

FILES = {
    "index.html": b"<!doctype html><title>root</title>\n",
    "app.js": b"export const x = 1;\n",
    "mod.mjs": b"export default 2;\n",
    "m.wasm": b"\0asm\1\0\0\0",
    "s.css": b"body{}\n",
    "d.json": b"{\"a\":1}\n",
    "i.png": b"\x89PNG\r\n\x1a\n",
    "v.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>\n",
    "blob.bin": b"\1\2\3",
    "sub/page.html": b"<p>sub</p>\n",
    "noindex/x.txt": b"x\n",
    ".hidden/secret.txt": b"hidden\n",
    ".env": b"KEY=1\n",
}
TYPES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "mod.mjs": "text/javascript; charset=utf-8",
    "m.wasm": "application/wasm",
    "s.css": "text/css; charset=utf-8",
    "d.json": "application/json",
    "i.png": "image/png",
    "v.svg": "image/svg+xml",
    "blob.bin": "application/octet-stream",
}


def make_tree(top):
    root = os.path.join(top, "root")
    for name, data in FILES.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    with open(os.path.join(top, "outside.txt"), "wb") as f:
        f.write(b"outside the root\n")
    os.symlink("../outside.txt", os.path.join(root, "out.txt"))
    os.symlink(top, os.path.join(root, "updir"))
    os.symlink("index.html", os.path.join(root, "alias.html"))
    os.mkfifo(os.path.join(root, "fifo.html"))
    with open(os.path.join(root, "huge.bin"), "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: one byte over the limit
    return root


def request(port, raw, timeout=5.0):
    """Sends raw bytes, reads to EOF (Connection: close); returns
    (status, headers with lower-case names, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(raw)
        data = b""
        while len(data) < (1 << 20):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1.1 "), lines[0]
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


def get(port, path, method="GET", extra=""):
    return request(port, ("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                          "%s\r\n" % (method, path, extra)).encode("latin-1"))


class Env:
    top = tempfile.mkdtemp(prefix="gk-static-")
    root = make_tree(top)
    srv = None


def start(_b):
    """the server starts with a static directory and logs its page URL"""
    Env.srv = GkServer(server_exe(), ws={"static_dir": Env.root})
    web = [e for e in Env.srv.events() if e.get("event") == "web"]
    assert web and web[0]["url"] == Env.srv.url("/"), web
    assert web[0]["index"] is True and web[0]["dir"] == Env.root, web


def files_are_served_with_their_mime_types_and_sizes(_b):
    p = Env.srv.ws_port
    for name, ctype in TYPES.items():
        st, h, body = get(p, "/" + name)
        assert st == 200, (name, st)
        assert h["content-type"] == ctype, (name, h)
        assert body == FILES[name], name
        assert int(h["content-length"]) == len(FILES[name])
        assert h["cache-control"] == "no-cache", h
        assert h["x-content-type-options"] == "nosniff", h
    st, h, body = get(Env.srv.ws_port, "/app.js?v=3")  # the query is ignored
    assert st == 200 and body == FILES["app.js"]


def slash_paths_mean_index_html_and_nothing_is_listed(_b):
    p = Env.srv.ws_port
    st, h, body = get(p, "/")
    assert st == 200 and body == FILES["index.html"], (st, body)
    st, h, _ = get(p, "/sub")
    assert st == 301 and h["location"] == "/sub/", (st, h)
    st, _, body = get(p, "/sub/")
    assert st == 404, st  # sub/ has no index.html, and is not listed
    assert b"page.html" not in body
    assert get(p, "/sub/page.html")[0] == 200
    assert get(p, "/noindex/")[0] == 404


def head_answers_the_headers_without_the_body(_b):
    st, h, body = get(Env.srv.ws_port, "/m.wasm", "HEAD")
    assert st == 200 and body == b"", (st, body)
    assert h["content-type"] == "application/wasm"
    assert int(h["content-length"]) == len(FILES["m.wasm"])


def a_matching_etag_is_a_304(_b):
    p = Env.srv.ws_port
    st, h, _ = get(p, "/app.js")
    etag = h["etag"]
    st, h2, body = get(p, "/app.js", extra="If-None-Match: %s\r\n" % etag)
    assert st == 304 and body == b"", (st, body)
    assert get(p, "/app.js", extra="If-None-Match: \"other\"\r\n")[0] == 200


def traversal_in_any_spelling_is_refused(_b):
    p = Env.srv.ws_port
    for path in ("/../outside.txt", "/sub/../../outside.txt",
                 "/%2e%2e/outside.txt", "/%2E%2E%2Foutside.txt",
                 "/sub/%2e%2e/index.html", "/./index.html", "/sub/.",
                 "//etc/passwd", "/..%5coutside.txt", "/..\\outside.txt",
                 "/index.html%00.png", "/%00", "/%zzindex.html", "/%2",
                 "/a b", "/%20", "/%7f", "/caf%c3%a9"):
        st, _, body = get(p, path)
        assert st == 400, (path, st)
        assert b"outside the root" not in body
    st, _, body = get(p, "/etc/passwd")  # the root is the root
    assert st == 404, st


def symlinks_out_of_the_root_are_not_found_and_inside_ones_work(_b):
    p = Env.srv.ws_port
    st, _, body = get(p, "/out.txt")
    assert st == 404 and b"outside" not in body, (st, body)
    assert get(p, "/updir/outside.txt")[0] == 404
    assert get(p, "/updir/")[0] == 404
    st, h, body = get(p, "/alias.html")
    assert st == 200 and body == FILES["index.html"], st


def hidden_files_fifos_and_missing_files_are_not_found(_b):
    p = Env.srv.ws_port
    for path in ("/.env", "/.hidden/secret.txt", "/.hidden/", "/nope.html",
                 "/sub/nope", "/fifo.html", "/index.html/x"):
        st, _, body = get(p, path)
        assert st == 404, (path, st)
        assert b"KEY" not in body and b"hidden" not in body


def a_file_over_the_limit_is_403(_b):
    st, _, body = get(Env.srv.ws_port, "/huge.bin")
    assert st == 403 and b"too large" in body, (st, body)


def methods_other_than_get_and_head_are_405(_b):
    for m in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "BREW"):
        st, h, _ = get(Env.srv.ws_port, "/index.html", m,
                       "Content-Length: 0\r\n")
        assert st == 405, (m, st)
        assert h.get("allow") == "GET, HEAD", (m, h)


def a_get_with_a_body_is_400(_b):
    p = Env.srv.ws_port
    st, _, _ = request(p, b"GET /index.html HTTP/1.1\r\nHost: x\r\n"
                       b"Connection: close\r\nContent-Length: 3\r\n\r\nabc")
    assert st == 400, st
    st, _, _ = request(p, b"GET /index.html HTTP/1.1\r\nHost: x\r\n"
                       b"Connection: close\r\nTransfer-Encoding: chunked\r\n"
                       b"\r\n3\r\nabc\r\n0\r\n\r\n")
    assert st == 400, st


def long_paths_are_414(_b):
    p = Env.srv.ws_port
    # the limit is on the decoded path, 1,024 bytes with its '/'
    assert get(p, "/" + "a" * 1024)[0] == 414
    assert get(p, "/" + "a" * 1023)[0] == 404  # at the limit: looked up
    assert get(p, "/" + "%61" * 1024)[0] == 414
    assert get(p, "/" + "%61" * 1023)[0] == 404
    st = get(p, "/" + "a" * 20000)[0]  # over libmicrohttpd's own buffer
    assert st == 414, st


def after_all_that_pages_and_the_websocket_path_still_work(_b):
    import asyncio
    import websockets
    p = Env.srv.ws_port
    assert get(p, "/index.html")[0] == 200

    async def hello():
        async with websockets.connect("ws://127.0.0.1:%d/play" % p,
                                      subprotocols=["gamekit.1"],
                                      open_timeout=5) as ws:
            return ws.subprotocol
    assert asyncio.run(asyncio.wait_for(hello(), 10)) == "gamekit.1"
    st, _, _ = get(p, "/play")  # a plain GET of the WebSocket path
    assert st == 400, st


def a_static_dir_that_is_not_there_stops_the_start(_b):
    try:
        GkServer(server_exe(), ws={"static_dir": Env.top + "/missing"})
    except RuntimeError as e:
        assert "websocket.static_dir" in str(e) and "not a directory" in \
            str(e), str(e)
    else:
        raise AssertionError("the server started")


def without_a_static_dir_other_paths_are_404(_b):
    with GkServer(server_exe(), ws={"static_dir": ""}) as s:
        assert not [e for e in s.events() if e.get("event") == "web"]
        st, _, body = get(s.ws_port, "/index.html")
        assert st == 404 and b"no such path" in body, (st, body)


def stop(_b):
    """the server stops cleanly"""
    Env.srv.close()
    assert Env.srv.proc.returncode == 0, Env.srv.proc.returncode


try:
    cdp.run([start, files_are_served_with_their_mime_types_and_sizes,
             slash_paths_mean_index_html_and_nothing_is_listed,
             head_answers_the_headers_without_the_body,
             a_matching_etag_is_a_304,
             traversal_in_any_spelling_is_refused,
             symlinks_out_of_the_root_are_not_found_and_inside_ones_work,
             hidden_files_fifos_and_missing_files_are_not_found,
             a_file_over_the_limit_is_403,
             methods_other_than_get_and_head_are_405,
             a_get_with_a_body_is_400, long_paths_are_414,
             after_all_that_pages_and_the_websocket_path_still_work,
             a_static_dir_that_is_not_there_stops_the_start,
             without_a_static_dir_other_paths_are_404, stop],
            browser=False)
finally:
    if Env.srv is not None:
        Env.srv.close()
    import shutil
    shutil.rmtree(Env.top, ignore_errors=True)
