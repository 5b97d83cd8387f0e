#!/usr/bin/python3
"""test_protocol.py: web/test/protocol.html in Chromium, served by the real
gk-server from the tree's web/ (websocket.static_dir), speaking the room
messages as docs/PROTOCOL.md lays them out over ws:// to the same origin;
the admin listener confirms what the page did."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
from gkserver import GkServer, server_exe  # noqa: E402

SRC = os.environ.get("GK_SOURCE_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEB = os.path.join(SRC, "web")


class Env:
    srv = None


def doc_example():
    """The CREATE_ROOM example bytes of docs/PROTOCOL.md."""
    with open(os.path.join(SRC, "docs", "PROTOCOL.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^02 10 ([0-9a-f ]+)$", text, re.M)
    assert m, "no CREATE_ROOM example in docs/PROTOCOL.md"
    return [int(x, 16) for x in ("02 10 " + m.group(1)).split()]


def start(_b):
    """the server serves the tree's web/ beside /play"""
    Env.srv = GkServer(server_exe(), ws={"static_dir": WEB})


def open_page(b, query=""):
    p = b.new_page(Env.srv.url("/test/protocol.html" + query))
    p.wait_for("window.gkResult !== undefined || "
               "document.getElementById('status').textContent === 'ready'",
               timeout=10)
    return p


def the_page_creates_a_room_and_the_admin_lists_it(b):
    p = open_page(b)
    r = p.eval("window.gkResult")
    assert r.get("ok") is True, r
    assert re.fullmatch(r"[A-Z2-7]{16}", r["code"]) and r["slot"] == 0, r
    assert p.eval("document.getElementById('status').textContent") == \
        "ROOM_CREATED %s slot 0" % r["code"]
    room = Env.srv.admin_get("/rooms/" + r["code"])
    assert room["genre"] == "survivors" and room["state"] == "lobby", room
    assert room["max_players"] == 2, room
    assert room["players"][0]["transport"] == "websocket", room
    assert room["players"][0]["connected"] is True, room
    assert not p.exceptions, p.exceptions


def a_second_page_joins_the_room_by_its_code(b):
    p = open_page(b, "?auto=0")
    r = p.eval("await gkCreate({genre: 'survivors', players: 2})")
    assert r["ok"], r
    q = open_page(b, "?auto=0")
    j = q.eval("await gkJoin(%r)" % r["code"])
    assert j == {"ok": True, "slot": 1, "players": 2}, j
    room = Env.srv.admin_get("/rooms/" + r["code"])
    assert [pl["transport"] for pl in room["players"]] == \
        ["websocket", "websocket"], room
    full = q.eval("await gkJoin(%r)" % r["code"])  # a third player
    assert full["ok"] is False and full["error"] == -11, full  # GK_EFULL
    # whole, though no request of that connection was accepted yet: the
    # reply cap is for ENet's datagrams, TCP proved a WebSocket's address
    # (docs/PROTOCOL.md, limits against abuse)
    assert full["text"] == "the room is full", full


def refusals_come_back_as_error_with_code_and_text(b):
    p = open_page(b, "?auto=0")
    before = Env.srv.admin_get("/rooms")["count"]
    r = p.eval("await gkCreate({genre: 'no-such-genre'})")
    assert r["ok"] is False and r["error"] == -13, r  # GK_ENOTFOUND
    # whole, though larger than its 21-byte request
    assert r["text"] == "genre not offered: no-such-genre", r
    assert Env.srv.admin_get("/rooms")["count"] == before
    # once a request was accepted, the text comes whole
    two = p.eval("""
      const l = new gk.Lobby(); await l.open(gk.playUrl());
      const m = gk.encodeCreateRoom({maxPlayers: 2, genre: 'survivors'});
      l.send(m); const a = await l.next();
      l.send(m); const b = await l.next();
      l.close(); [a.name, b]""")
    assert two == ["ROOM_CREATED", {"type": 23, "name": "ERROR", "code": -16,
                                    "text": "already in a room"}], two
    r = p.eval("await gkCreate({genre: 'survivors', players: 16})")
    assert r["ok"] is False and r["error"] == -6, r  # GK_ERANGE
    assert "max_players" in r["text"], r
    r = p.eval("await gkJoin('AAAAAAAAAAAAAAAA')")
    assert r["ok"] is False and r["error"] == -13, r
    assert Env.srv.admin_get("/rooms")["count"] == before  # no room made


def the_page_encodes_the_documented_example_byte_for_byte(b):
    p = open_page(b, "?auto=0")
    got = p.eval("Array.from(gk.encodeCreateRoom({maxPlayers: 2, "
                 "genre: 'survivors'}))")
    assert got == doc_example(), (got, doc_example())


def the_decoder_refuses_what_the_doc_refuses(b):
    p = open_page(b, "?auto=0")
    ok = ("gk.decode(new Uint8Array([2, 17, ...new TextEncoder().encode("
          "'ABCDEFGHIJKLMNOP'), 0]))")
    assert p.eval(ok) == {"type": 17, "name": "ROOM_CREATED",
                          "code": "ABCDEFGHIJKLMNOP", "slot": 0}
    err = p.eval("gk.decode(new Uint8Array([2, 23, 0xf3, 0xff, 2, 104, 105]))")
    assert err == {"type": 23, "name": "ERROR", "code": -13, "text": "hi"}
    for bad in ("[1, 17, ...new TextEncoder().encode('ABCDEFGHIJKLMNOP'), 0]",
                "[2, 17, ...new TextEncoder().encode('ABCDEFGHIJKLMNOP'), 0, 0]",
                "[2, 17, ...new TextEncoder().encode('abcdefghijklmnop'), 0]",
                "[2, 19, 1]", "[2, 23, 0xf3, 0xff, 5, 104]"):
        try:
            p.eval("gk.decode(new Uint8Array(%s))" % bad)
        except cdp.JsError as e:
            assert "ProtocolError" in str(e) or "Error" in str(e), str(e)
        else:
            raise AssertionError("decoded " + bad)


def the_page_loaded_with_no_error(b):
    p = open_page(b)
    p.wait_for("window.gkResult !== undefined")
    bad = [l for l in p.console if l.startswith(("error", "exception"))]
    assert not bad and not p.exceptions, (bad, p.exceptions)
    assert p.eval("document.contentType") == "text/html"


def stop(_b):
    """the server stops cleanly"""
    Env.srv.close()
    assert Env.srv.proc.returncode == 0, Env.srv.log_text()[-2000:]


try:
    cdp.run([start, the_page_creates_a_room_and_the_admin_lists_it,
             a_second_page_joins_the_room_by_its_code,
             refusals_come_back_as_error_with_code_and_text,
             the_page_encodes_the_documented_example_byte_for_byte,
             the_decoder_refuses_what_the_doc_refuses,
             the_page_loaded_with_no_error, stop])
finally:
    if Env.srv is not None:
        Env.srv.close()
