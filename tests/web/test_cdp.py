#!/usr/bin/python3
"""test_cdp.py: the Chromium harness (cdp.py) itself, on data: pages."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

CANVAS = ("data:text/html,<body style='margin:0'>"
          "<canvas id=c width=40 height=30></canvas><script>"
          "const x = document.getElementById('c').getContext('2d');"
          "x.fillStyle = 'rgb(200,10,30)'; x.fillRect(0, 0, 40, 30);"
          "x.fillStyle = 'rgb(0,0,255)'; x.fillRect(20, 0, 20, 30);"
          "</script>")


def evaluates_expressions_and_awaits_promises(b):
    p = b.new_page()
    assert p.eval("1 + 2") == 3
    assert p.eval("({a: [1, 'x']})") == {"a": [1, "x"]}
    v = p.eval("await new Promise(r => setTimeout(() => r('late'), 50))")
    assert v == "late", v
    assert p.eval("undefined") is None


def a_throw_or_rejection_is_a_js_error_with_its_message(b):
    p = b.new_page()
    for expr in ("throw new Error('bad thing')",
                 "await Promise.reject(new Error('bad thing'))"):
        try:
            p.eval(expr)
        except cdp.JsError as e:
            assert "bad thing" in str(e), str(e)
        else:
            raise AssertionError("no JsError for " + expr)


def console_calls_and_uncaught_exceptions_are_recorded(b):
    p = b.new_page()
    p.goto("data:text/html,<script>console.log('hello', 7, {k: 1});"
           "console.error('oops');"
           "setTimeout(() => { throw new Error('uncaught one') }, 0)"
           "</script>")
    p.wait_for("new Promise(r => setTimeout(() => r(true), 100))")
    rep = p.report()
    assert "log: hello 7 Object {k: 1}" in rep, rep
    assert "error: oops" in rep, rep
    assert any("uncaught one" in e for e in p.exceptions), p.exceptions


def wait_for_returns_the_value_or_times_out_in_time(b):
    p = b.new_page()
    p.eval("setTimeout(() => { window.ready = 'yes' }, 200)")
    assert p.wait_for("window.ready", timeout=5) == "yes"
    t0 = time.monotonic()
    try:
        p.wait_for("window.never", timeout=0.5)
    except cdp.Timeout as e:
        assert "window.never" in str(e)
    else:
        raise AssertionError("no Timeout")
    assert time.monotonic() - t0 < 3.0


def a_page_that_cannot_load_raises(b):
    p = b.new_page()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    try:
        p.goto("http://127.0.0.1:%d/" % port)
    except cdp.CdpError as e:
        assert "ERR_CONNECTION_REFUSED" in str(e), str(e)
    else:
        raise AssertionError("loaded a page from a closed port")


def screenshots_and_canvas_reads_show_what_was_drawn(b):
    p = b.new_page(CANVAS)
    png = p.screenshot()
    w, h, rows = cdp.decode_png(png)
    assert (w, h) == (800, 600), (w, h)
    assert tuple(rows[10][4 * 5:4 * 5 + 4]) == (200, 10, 30, 255)
    assert p.pixel(30, 10) == (0, 0, 255, 255)
    assert p.pixel(100, 100) == (255, 255, 255, 255)  # the page's white
    assert p.canvas_pixels("#c", 19, 5, 2, 1) == bytes(
        [200, 10, 30, 255, 0, 0, 255, 255])


def a_hidden_tab_is_hidden_and_its_timers_are_throttled(b):
    p = b.new_page()
    p.eval("window.seen = []; document.addEventListener('visibilitychange',"
           " () => seen.push(document.visibilityState));"
           "window.n = 0; setInterval(() => n++, 10)")
    p.hide()
    n0 = p.eval("n")
    time.sleep(1.5)
    hidden_ticks = p.eval("n") - n0
    p.show()
    assert p.eval("seen") == ["hidden", "visible"], p.eval("seen")
    # visible, a 10 ms interval runs ~150 times in 1.5 s; hidden, Chromium
    # runs it about once a second
    assert hidden_ticks < 30, hidden_ticks
    n1 = p.eval("n")
    p.wait_for("n > %d + 20" % n1, timeout=5)


def a_frozen_page_runs_no_timer_until_resumed(b):
    p = b.new_page()
    p.eval("window.n = 0; setInterval(() => n++, 10)")
    p.wait_for("n > 2")
    p.freeze()
    n0 = p.eval("n")
    time.sleep(0.5)
    assert p.eval("n") == n0
    p.resume()
    p.wait_for("n > %d" % n0, timeout=5)


def a_throttled_cpu_still_runs_the_page(b):
    p = b.new_page()
    p.throttle_cpu(4)
    assert p.eval("await new Promise(r => setTimeout(() => r(5), 20))") == 5
    p.throttle_cpu(1)


def _group_alive(pgid):
    """Processes of group `pgid` that are not zombies."""
    alive = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(st[2]) == pgid and st[0] != "Z":
            alive.append(int(d))
    return alive


def closing_ends_every_chromium_process_and_the_profile(b):
    other = cdp.Browser()
    other.new_page(CANVAS)
    pgid, profile = other.proc.pid, other.dir
    assert _group_alive(pgid)
    t0 = time.monotonic()
    other.close()
    assert time.monotonic() - t0 < 10.0
    for _ in range(60):  # SIGKILLed helpers may take a moment to go
        if not _group_alive(pgid):
            break
        time.sleep(0.05)
    assert _group_alive(pgid) == [], _group_alive(pgid)
    assert not os.path.exists(profile)


cdp.run([
    evaluates_expressions_and_awaits_promises,
    a_throw_or_rejection_is_a_js_error_with_its_message,
    console_calls_and_uncaught_exceptions_are_recorded,
    wait_for_returns_the_value_or_times_out_in_time,
    a_page_that_cannot_load_raises,
    screenshots_and_canvas_reads_show_what_was_drawn,
    a_hidden_tab_is_hidden_and_its_timers_are_throttled,
    a_frozen_page_runs_no_timer_until_resumed,
    a_throttled_cpu_still_runs_the_page,
    closing_ends_every_chromium_process_and_the_profile,
])
