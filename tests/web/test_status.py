#!/usr/bin/python3
"""test_status.py: the admin status page's charts and watch links in
Chromium, on the real gk-server (WebSocket listener serving the tree's
web/, admin listener with a token, one /series sample every 250 ms) with a
real room of gk-bot players.

While the match runs, the page's rooms and players charts must end on the
values /metrics gives (1 room, 3 players), drawn where those values say in
a screenshot, and the room's row must link to watch.html?room=CODE at
websocket.web_url (the `web` log line's URL). A second room, whose player 1
drops for 600 ms at step 300 and rejoins (gk-bot --drop 1:300:600), must read
at most 5% late and at least one stall in its row once the stall is over.
Once the match is ended (POST /rooms/CODE/end) and the room
is gone, the page's newest sample must equal /metrics' counters (steps,
steps confirmed, late steps), the late-steps chart must be the increases of
/series' counter, and the charts drawn at 0. On a failure the screenshot
and the server's log are kept in a directory the diagnostics name."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
from gkserver import GkServer, server_exe  # noqa: E402

SRC = os.environ.get("GK_SOURCE_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEB = os.path.join(SRC, "web")
TOKEN = "status-test-token-0123456789"
LINE = (0x4d, 0x94, 0xf0)  # the page's first line colour, COLOURS[0]
WEB_URL = "http://gk-play.test:8080/"  # websocket.web_url: where players go
PERIOD_MS = 250


def bot_exe():
    exe = os.environ.get("GK_BOT") or os.path.join(
        SRC, "build", "tools", "bot", "gk-bot")
    if not os.access(exe, os.X_OK):
        raise RuntimeError("no gk-bot at %s (set GK_BOT)" % exe)
    return exe


class Env:
    srv = None
    bot = None
    tmp = None
    code = None
    shots = []


def http(method, path, token=None, timeout=5.0):
    url = "http://127.0.0.1:%d%s" % (Env.srv.admin_port, path)
    req = urllib.request.Request(url, method=method,
                                 data=b"" if method == "POST" else None)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8")


def metrics():
    """/metrics as {name with labels: value}."""
    out = {}
    for line in http("GET", "/metrics")[1].splitlines():
        if line and not line.startswith("#"):
            name, _, v = line.rpartition(" ")
            out[name] = float(v)
    return out


def wait(what, fn, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out (%.0f s) waiting for %s"
                                 % (timeout, what))
        time.sleep(interval)


def fail(msg):
    """An AssertionError that keeps the evidence: the screenshots taken so
    far and the server's log, in a directory that is not removed."""
    keep = tempfile.mkdtemp(prefix="gk-web-status-fail-")
    for i, data in enumerate(Env.shots):
        with open(os.path.join(keep, "shot%d.png" % i), "wb") as f:
            f.write(data)
    with open(os.path.join(keep, "server.log"), "w", encoding="utf-8") as f:
        f.write(Env.srv.log_text() if Env.srv else "")
    return AssertionError("%s (kept in %s)" % (msg, keep))


def start(_b):
    """gk-server with web/ and a token, and a room of 3 gk-bot players"""
    Env.tmp = tempfile.mkdtemp(prefix="gk-web-status-")
    token = os.path.join(Env.tmp, "token")
    with open(token, "w", encoding="utf-8") as f:
        f.write(TOKEN + "\n")
    Env.srv = GkServer(server_exe(), ws={"static_dir": WEB,
                                         "web_url": WEB_URL}, config={
        "admin": {"enabled": True, "listen": "127.0.0.1:0",
                  "token_file": token, "series_ms": PERIOD_MS,
                  "series_samples": 120},
        "reconnect": {"hold_ms": 10000}})
    udp = [e["port"] for e in Env.srv.events() if e.get("event") == "listening"]
    Env.bot = subprocess.Popen(
        [bot_exe(), "--server", "127.0.0.1:%d" % udp[0], "--genre",
         "survivors", "--rooms", "1", "--players", "3", "--steps", "1000000",
         "--timeout", "60"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(Env.tmp, "bot.err"), "wb"))

    def playing():
        rs = Env.srv.admin_get("/rooms")["rooms"]
        return rs and rs[0]["state"] == "playing" and rs[0]["code"]
    Env.code = wait("the bots' room to play", playing, 30)


def open_status(b):
    """The status page in a 1280x1000 viewport (its charts are 420x150)."""
    p = b.new_page("about:blank")
    p.send("Emulation.setDeviceMetricsOverride", {
        "width": 1280, "height": 1000, "deviceScaleFactor": 1,
        "mobile": False})
    p.goto("http://127.0.0.1:%d/" % Env.srv.admin_port)
    return p


def chart(p, name):
    """What the page drew for a chart, and where its canvas is."""
    return p.eval("(() => { const c = document.getElementById('c-%s');"
                  " const r = c.getBoundingClientRect();"
                  " return Object.assign({left: r.left + c.clientLeft,"
                  " top: r.top + c.clientTop, cw: c.width, ch: c.height},"
                  " gkStatus.charts['%s']); })()" % (name, name))


def near(px, colour, d=40):
    return all(abs(px[i] - colour[i]) <= d for i in range(3))


def expect_drawn_at(rows, c, v, what):
    """The chart's line, in the screenshot, is at value v at its right end:
    every pixel of the line's colour in a column just left of the newest
    point is within 2.5 px of where v goes on the axis (0..max)."""
    pl = c["plot"]
    x = int(c["left"] + pl["x"] + pl["w"] - 3)
    want = c["top"] + pl["y"] + pl["h"] - v / c["max"] * pl["h"]
    ys = [y for y in range(int(c["top"]), int(c["top"] + c["ch"]))
          if near(rows[y][4 * x:4 * x + 3], LINE)]
    if not ys:
        raise fail("%s: no line drawn in column %d (value %s)" % (what, x, v))
    far = [y for y in ys if abs(y + 0.5 - want) > 2.5]
    if far:
        raise fail("%s: line pixels at y %s, value %s is at y %.1f (max %s)"
                   % (what, ys, v, want, c["max"]))


def last_values(p, name, n):
    return p.eval("gkStatus.charts['%s'] ? gkStatus.charts['%s'].lines[0]"
                  ".slice(-%d) : []" % (name, name, n))


def the_charts_and_the_watch_link_show_the_running_room(b):
    """while the room plays: rooms 1 and players 3 drawn as /metrics says"""
    p = open_status(b)
    # the newest 4 samples of both charts: the room and its 3 players
    p.wait_for("gkStatus.draws > 0 && %s" % " && ".join(
        "(gkStatus.charts.%s.lines[0].slice(-4).join() === '%s')"
        % (k, ",".join([v] * 4)) for k, v in (("rooms", "1"),
                                                ("players", "3"))),
        timeout=20)
    m = metrics()
    assert m['gk_rooms{state="playing"}'] == 1 and m["gk_players"] == 3, m
    w, h, rows = cdp.decode_png(p.screenshot())
    Env.shots.append(p.screenshot())
    for name, v in (("rooms", 1), ("players", 3)):
        c = chart(p, name)
        if c["lines"][0][-1] != v:
            raise fail("%s chart ends at %s, /metrics says %s"
                       % (name, c["lines"][0][-1], v))
        expect_drawn_at(rows, c, v, name)
    caption = p.eval("document.getElementById('v-players').textContent")
    assert caption == "3", caption
    # the watch link, at websocket.web_url (what players open), as the
    # server's `web` log line says
    want = WEB_URL + "watch.html?room=" + Env.code
    web = [e for e in Env.srv.events() if e.get("event") == "web"]
    assert web and web[0]["url"] == WEB_URL, web
    p.wait_for("document.querySelector('#rooms a.watch') !== null", timeout=10)
    href = p.eval("document.querySelector('#rooms a.watch').href")
    if href != want:
        raise fail("watch link %s, want %s" % (href, want))
    rooms = Env.srv.admin_get("/rooms")
    assert rooms["websocket"] == {"port": Env.srv.ws_port, "static": True,
                                  "url": WEB_URL}, \
        rooms["websocket"]
    assert not p.exceptions, p.exceptions


SHORT = set("ABCDEFGHJKMNPQRTUVWXY3467")


def shown(code):
    """A room code as the pages show it (docs/PROTOCOL.md, "Room codes")."""
    s = code.rstrip("2")
    return s if 4 <= len(s) <= 8 and set(s) <= SHORT else code


def cell_of(p, code, header):
    """The text of the page's cell of room `code` (shown short) under the
    column whose header is `header` (null if there is none)."""
    code = shown(code)
    return p.eval("""(() => {
      const hs = Array.from(document.querySelectorAll('thead th'))
        .map(th => th.textContent.trim());
      const col = hs.indexOf(%s);
      const row = Array.from(document.querySelectorAll('#rooms tr'))
        .find(tr => tr.cells[0].textContent === %s);
      return col < 0 || !row ? null : row.cells[col].textContent;
    })()""" % (json.dumps(header), json.dumps(code)))


def a_drop_and_a_rejoin_read_one_stall_and_few_late_steps(b):
    """a room whose player 1 drops 600 ms at step 300: <= 5% late, 1 stall"""
    before = set(r["code"] for r in Env.srv.admin_get("/rooms")["rooms"])
    udp = [e["port"] for e in Env.srv.events() if e.get("event") == "listening"]
    bot = subprocess.Popen(
        [bot_exe(), "--server", "127.0.0.1:%d" % udp[0], "--genre",
         "survivors", "--rooms", "1", "--players", "2", "--steps", "900",
         "--drop", "1:300:600", "--timeout", "60"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(Env.tmp, "bot-drop.err"), "wb"))
    try:
        wait("the rejoin", lambda: any(
            e.get("event") == "player_rejoined" for e in Env.srv.events()), 40)
        code = [r["code"] for r in Env.srv.admin_get("/rooms")["rooms"]
                if r["code"] not in before][0]
        time.sleep(1.0)  # steps flow again: the stall is over
        p = b.new_page("http://127.0.0.1:%d/" % Env.srv.admin_port)
        p.wait_for("document.querySelectorAll('#rooms tr').length >= 2",
                   timeout=20)
        late = cell_of(p, code, "late steps")
        stalls = cell_of(p, code, "stalls")
        room = [r for r in Env.srv.admin_get("/rooms")["rooms"]
                if r["code"] == code][0]
        if late is None or not late.endswith(" %") or float(late[:-2]) > 5.0:
            raise fail("room %s reads %r late on the page (/rooms: %s)"
                       % (code, late, room))
        if stalls is None or int(stalls.split(" ")[0]) < 1:
            raise fail("room %s reads %r stalls on the page (/rooms: %s)"
                       % (code, stalls, room))
        print("# drop room %s: late %s, stalls %s" % (code, late, stalls))
        assert not p.exceptions, p.exceptions
        if bot.wait(60) != 0:
            raise fail("gk-bot --drop failed")
        wait("the drop room to close", lambda: code not in set(
            r["code"] for r in Env.srv.admin_get("/rooms")["rooms"]), 15)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait(5)


def after_the_match_the_charts_end_on_the_metrics_counters(b):
    """after the match: the newest sample equals /metrics' counters"""
    p = open_status(b)
    p.wait_for("gkStatus.draws > 0", timeout=20)
    st, body = http("POST", "/rooms/%s/end" % Env.code, TOKEN)
    assert st == 202, (st, body)
    try:
        Env.bot.wait(30)
    except subprocess.TimeoutExpired:
        raise fail("gk-bot did not exit after the match ended")
    wait("the room to close",
         lambda: not Env.srv.admin_get("/rooms")["rooms"], 15)
    m = metrics()
    taken = Env.srv.admin_get("/series")["taken"]
    # 4 samples taken after /metrics answered, in the page
    p.wait_for("gkStatus.samples.length > 0 && gkStatus.samples"
               "[gkStatus.samples.length - 1].seq >= %d" % (taken + 4),
               timeout=20)
    last = p.eval("gkStatus.samples[gkStatus.samples.length - 1]")
    for k, name in (("steps", "gk_steps_total"),
                    ("steps_confirmed", "gk_steps_confirmed_total"),
                    ("steps_late", "gk_steps_late_total"),
                    ("confirms", "gk_confirm_latency_seconds_count")):
        if last[k] != m[name]:
            raise fail("page's newest %s %s, /metrics %s %s"
                       % (k, last[k], name, m[name]))
    assert last["steps"] > 0, last
    assert metrics()["gk_steps_total"] == m["gk_steps_total"]  # still
    # the late-steps chart draws the increases of /series' counter
    series = Env.srv.admin_get("/series")["samples"]
    by_seq = {x["seq"]: x for x in series}
    page = p.eval("({seqs: gkStatus.samples.map(x => x.seq),"
                  " late: gkStatus.charts.late.lines[0]})")
    checked = 0
    for seq, v in zip(page["seqs"], page["late"]):
        if seq in by_seq and seq - 1 in by_seq:
            want = by_seq[seq]["steps_late"] - by_seq[seq - 1]["steps_late"]
            if v != want:
                raise fail("late chart at seq %d: %s, /series says %s"
                           % (seq, v, want))
            checked += 1
    assert checked >= 4, checked
    shot = p.screenshot()
    Env.shots.append(shot)
    w, h, rows = cdp.decode_png(shot)
    for name in ("late", "rooms", "players"):
        c = chart(p, name)
        tail = c["lines"][0][-3:]
        if tail != [0, 0, 0]:
            raise fail("%s chart ends %s after the match" % (name, tail))
        expect_drawn_at(rows, c, 0, name)
    assert p.eval("document.getElementById('v-late').textContent") == "0"
    assert p.eval("gkStatus.charts.latency.lines[0].slice(-1)[0]") is None
    assert p.eval("document.querySelector('#rooms a.watch')") is None
    print("# %d steps, %d late, confirm count %d; screenshot %dx%d"
          % (m["gk_steps_total"], m["gk_steps_late_total"],
             m["gk_confirm_latency_seconds_count"], w, h))
    assert not p.exceptions, p.exceptions


def stop(_b):
    """the server stops"""
    if Env.bot is not None and Env.bot.poll() is None:
        Env.bot.kill()
        Env.bot.wait(5)
    if Env.srv is not None:
        Env.srv.close()
    if Env.tmp:
        shutil.rmtree(Env.tmp, ignore_errors=True)


if __name__ == "__main__":
    cdp.run([start, the_charts_and_the_watch_link_show_the_running_room,
             a_drop_and_a_rejoin_read_one_stall_and_few_late_steps,
             after_the_match_the_charts_end_on_the_metrics_counters, stop],
            timeout=150)
