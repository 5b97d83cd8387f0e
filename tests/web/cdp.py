"""cdp.py: headless Chromium driven over the DevTools protocol, for tests.

Debian's chromium (/usr/bin/chromium; GK_CHROMIUM overrides the path) runs
headless with --no-sandbox (the tests run as root) and a throwaway
--user-data-dir, on an ephemeral --remote-debugging-port (port 0: Chromium
writes the port it bound into DevToolsActivePort in the profile). This
module talks to it over one WebSocket (python3-websockets, asyncio, on a
thread of its own so events are read as they come) with flattened target
sessions, one per page.

    import cdp
    def the_page_fetches_y(b):
        # the TAP name: the docstring's first line, else the function's
        p = b.new_page("http://127.0.0.1:1234/x.html")
        p.wait_for("window.done === true", timeout=10)
        assert p.eval("await fetch('/y').then(r => r.status)") == 200
    cdp.run([the_page_fetches_y])

run() prints TAP (meson protocol 'tap'). Without Chromium it prints
"1..0 # SKIP ..." (meson: skipped, and says why on stderr), unless
GK_WEB_REQUIRED=1 (scripts/test.sh sets it, so CI cannot pass without the
browser): then "Bail out!" and exit 1.

Every wait has a deadline: commands (default 10 s each), Browser start
(20 s), wait_for (its timeout). run() also arms an alarm for the whole
program.
Chromium is started in a process group of its own and always ends with the
Browser: Browser.close, then SIGTERM, then SIGKILL to the group, each with
a bounded wait; the profile directory is removed.

Each Page records what the page said: console calls (console.log ...),
uncaught exceptions and log entries (failed loads, CSP, ...), as lines in
Page.console / Page.exceptions; Page.report() formats them, and run()
prints every page's report and the tail of Chromium's stderr on failure.

Pixels: Page.screenshot() is the PNG bytes of the viewport (decode_png
gives width, height and RGBA rows, Page.pixel(x, y) one pixel of a fresh
screenshot); Page.canvas_pixels(selector, x, y, w, h) reads a canvas's
RGBA through getImageData in the page.

Tabs in the background: Page.hide() / Page.show() make the page hidden
the way a tab in another window is (document.visibilityState "hidden",
visibilitychange fired, timers throttled as Chromium throttles them:
setTimeout/setInterval at most once a second after a while) by
minimising its window; Page.freeze() / Page.resume() use the Page
Lifecycle API (a frozen page runs no timer, event or network task; eval
from DevTools still runs); Page.throttle_cpu(rate) slows the renderer's
CPU rate times.
"""
import asyncio
import atexit
import base64
import itertools
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib

CHROMIUM = os.environ.get("GK_CHROMIUM", "/usr/bin/chromium")


class CdpError(Exception):
    """A DevTools command failed, or Chromium went away."""


class JsError(CdpError):
    """The evaluated JavaScript threw (or its promise rejected)."""


class Timeout(CdpError):
    """A deadline passed."""


def chromium_missing():
    """None if CHROMIUM can run, else why not."""
    if not os.path.isfile(CHROMIUM) or not os.access(CHROMIUM, os.X_OK):
        return "%s is not installed (Debian package chromium)" % CHROMIUM
    return None


class Browser:
    """One headless Chromium. Use as a context manager, or call close()."""

    def __init__(self, flags=(), timeout=10.0, start_timeout=20.0,
                 viewport=(800, 600)):
        self.timeout = timeout
        self.viewport = viewport
        window = (viewport[0], viewport[1] + 100)
        self.dir = tempfile.mkdtemp(prefix="gk-cdp-")
        self.pages = []
        self._ids = itertools.count(1)
        self._pending = {}
        self._sessions = {}
        self._ws = None
        self._dead = None
        self._closed = False
        self.stderr_path = os.path.join(self.dir, "chromium.log")
        profile = os.path.join(self.dir, "profile")
        argv = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                "--user-data-dir=" + profile, "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--disable-default-apps",
                "--mute-audio", "--password-store=basic",
                "--window-size=%d,%d" % window]
        argv += list(flags) + ["about:blank"]
        self._log = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log,
                                     start_new_session=True)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="cdp", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # an uncaught error still ends it
        try:
            url = self._wait_port(start_timeout)
            self._run(self._connect(url), start_timeout)
        except BaseException:
            self.close()
            raise

    # --- start, stop ---------------------------------------------------------

    def _wait_port(self, timeout):
        path = os.path.join(self.dir, "profile", "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CdpError("chromium exited with %d before listening:\n%s"
                               % (self.proc.returncode, self.stderr_tail()))
            try:
                with open(path, encoding="ascii") as f:
                    lines = f.read().split("\n")
                if len(lines) >= 2 and lines[0].isdigit() and lines[1]:
                    return "ws://127.0.0.1:%s%s" % (lines[0], lines[1])
            except OSError:
                pass
            time.sleep(0.05)
        raise Timeout("chromium did not write DevToolsActivePort within %.0f s"
                      % timeout)

    def close(self):
        """Ends Chromium (bounded: about 8 s at most) and removes the
        profile. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._ws is not None and self._dead is None:
            try:
                self.send("Browser.close", timeout=2.0)
            except CdpError:
                pass
        for sig, wait in ((None, 3.0), (signal.SIGTERM, 2.0),
                          (signal.SIGKILL, 2.0)):
            if sig is not None:
                try:
                    os.killpg(self.proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # renderers and helpers left in the group
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self._ws is not None:
            try:
                self._run(self._ws.close(), 2.0)
            except Exception:
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(3.0)
        self._log.close()
        self._stderr_kept = self.stderr_tail()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def stderr_tail(self, lines=30):
        """The last lines of Chromium's stderr (dbus noise left out)."""
        if getattr(self, "_stderr_kept", None) is not None:
            return self._stderr_kept
        try:
            with open(self.stderr_path, "rb") as f:
                text = f.read()[-65536:].decode("utf-8", "replace")
        except OSError:
            return ""
        keep = [l for l in text.splitlines() if "dbus" not in l]
        return "\n".join(keep[-lines:])

    # --- the protocol --------------------------------------------------------

    def _run(self, coro, timeout):
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout)
        except TimeoutError as e:  # concurrent.futures.TimeoutError
            fut.cancel()
            raise Timeout("no answer within %.1f s" % timeout) from e

    async def _connect(self, url):
        import websockets
        self._ws = await websockets.connect(url, max_size=None, max_queue=None,
                                            ping_interval=None,
                                            open_timeout=10)
        self._loop.create_task(self._reader())

    async def _reader(self):
        try:
            async for raw in self._ws:
                msg = json.loads(raw)
                if "id" in msg:
                    fut = self._pending.pop(msg["id"], None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                    continue
                page = self._sessions.get(msg.get("sessionId"))
                if page is not None:
                    page._event(msg.get("method", ""), msg.get("params", {}))
        except Exception as e:  # the connection broke: fail every waiter
            self._dead = repr(e)
        self._dead = self._dead or "the DevTools connection closed"
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(CdpError("chromium went away: " + self._dead))
        self._pending.clear()

    async def _send(self, method, params, session):
        if self._dead is not None:
            raise CdpError("chromium went away: " + self._dead)
        mid = next(self._ids)
        fut = self._loop.create_future()
        self._pending[mid] = fut
        msg = {"id": mid, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        await self._ws.send(json.dumps(msg))
        return await fut

    def send(self, method, params=None, session=None, timeout=None):
        """One DevTools command; returns its result, raises CdpError with
        the protocol's message if it failed."""
        t = self.timeout if timeout is None else timeout
        try:
            msg = self._run(self._send(method, params, session), t)
        except Timeout as e:
            raise Timeout("%s: %s" % (method, e)) from None
        if "error" in msg:
            raise CdpError("%s: %s" % (method, msg["error"].get("message")))
        return msg.get("result", {})

    def new_page(self, url="about:blank"):
        """A new tab, attached, with Runtime, Page and Log enabled and the
        Browser's viewport (CSS pixels, device pixel ratio 1)."""
        tid = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = self.send("Target.attachToTarget",
                        {"targetId": tid, "flatten": True})["sessionId"]
        page = Page(self, tid, sid)
        self._sessions[sid] = page
        self.pages.append(page)
        for m in ("Runtime.enable", "Page.enable", "Log.enable"):
            page.send(m)
        page.send("Emulation.setDeviceMetricsOverride", {
            "width": self.viewport[0], "height": self.viewport[1],
            "deviceScaleFactor": 1, "mobile": False})
        if url != "about:blank":
            page.goto(url)
        return page


class Page:
    """One tab. Its commands go to its session."""

    def __init__(self, browser, target_id, session_id):
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self.console = []     # "type: text" lines, in order
        self.exceptions = []  # uncaught exceptions and rejections
        self._lock = threading.Lock()

    def send(self, method, params=None, timeout=None):
        return self.browser.send(method, params, self.session_id, timeout)

    def _event(self, method, p):
        if method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_text(a) for a in p.get("args", []))
            line = "%s: %s" % (p.get("type", "log"), text)
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            line = _exception_text(d)
            with self._lock:
                self.exceptions.append(line)
            line = "exception: " + line
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            line = "%s (%s): %s %s" % (e.get("level"), e.get("source"),
                                       e.get("text"), e.get("url", ""))
        else:
            return
        with self._lock:
            self.console.append(line)

    def report(self):
        """What the page said, for a failure message."""
        with self._lock:
            lines = list(self.console)
        return "\n".join("  | " + l for l in lines) or "  | (nothing)"

    # --- navigation and JavaScript -------------------------------------------

    def goto(self, url, timeout=None):
        """Navigates and waits for the load event (document.readyState
        "complete"). Raises CdpError if the page did not load at all
        (net::ERR_...); an HTTP error page loads, check it yourself."""
        t = self.browser.timeout if timeout is None else timeout
        r = self.send("Page.navigate", {"url": url}, timeout=t)
        if r.get("errorText"):
            raise CdpError("%s: %s" % (url, r["errorText"]))
        self.wait_for("document.readyState === 'complete' && location.href "
                      "!== 'about:blank'" if url != "about:blank" else
                      "document.readyState === 'complete'", timeout=t)

    def eval(self, expr, timeout=None):
        """The value of a JavaScript expression or statements (a promise
        is awaited; with `await` in it, it runs in DevTools' REPL mode, so
        top-level await works), as JSON-able Python. Raises
        JsError with the exception's text if it threw."""
        t = self.browser.timeout if timeout is None else timeout
        r = self.send("Runtime.evaluate", {
            "expression": expr, "awaitPromise": True, "returnByValue": True,
            "replMode": "await" in expr, "userGesture": True,
            "timeout": int(t * 1000)}, timeout=t + 1.0)
        if "exceptionDetails" in r:
            raise JsError("%s\n  in: %s" % (_exception_text(
                r["exceptionDetails"]), expr[:200]))
        v = r.get("result", {})
        if v.get("type") == "undefined":
            return None
        return v.get("value", v.get("description"))

    def wait_for(self, expr, timeout=10.0, interval=0.05):
        """Evaluates `expr` until it is truthy (returns that value) or
        `timeout` seconds pass (raises Timeout with its last value)."""
        deadline = time.monotonic() + timeout
        last = None
        for _ in range(int(timeout / interval) + 2):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                last = self.eval(expr, timeout=max(min(left, 5.0), 0.1))
            except JsError as e:
                last = "threw: %s" % e
            except Timeout:
                last = "evaluation timed out"
            else:
                if last:
                    return last
            time.sleep(min(interval, max(deadline - time.monotonic(), 0)))
        raise Timeout("not true within %.1f s: %s (last value %r)"
                      % (timeout, expr[:200], last))

    # --- pixels ----------------------------------------------------------------

    def screenshot(self, path=None):
        """The viewport as PNG bytes (also written to `path` if given)."""
        data = base64.b64decode(self.send("Page.captureScreenshot",
                                          {"format": "png"})["data"])
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

    def pixel(self, x, y):
        """(r, g, b, a) at CSS pixel (x, y) of a fresh screenshot (device
        pixel ratio 1 in headless)."""
        w, h, rows = decode_png(self.screenshot())
        if not (0 <= x < w and 0 <= y < h):
            raise ValueError("(%d, %d) outside %dx%d" % (x, y, w, h))
        return tuple(rows[y][4 * x:4 * x + 4])

    def canvas_pixels(self, selector, x, y, w=1, h=1):
        """RGBA bytes of a canvas region, read with getImageData."""
        js = ("(() => { const c = document.querySelector(%s);"
              " if (!c) throw new Error('no canvas ' + %s);"
              " const d = c.getContext('2d').getImageData(%d, %d, %d, %d).data;"
              " return Array.from(d); })()" % (json.dumps(selector),
                                              json.dumps(selector), x, y, w, h))
        return bytes(self.eval(js))

    # --- background tabs ------------------------------------------------------

    def _window(self, state):
        wid = self.browser.send("Browser.getWindowForTarget",
                                {"targetId": self.target_id})["windowId"]
        self.browser.send("Browser.setWindowBounds",
                          {"windowId": wid, "bounds": {"windowState": state}})

    def hide(self, timeout=5.0):
        """Hidden as a minimised window's tab is; waits until the page sees
        document.visibilityState === 'hidden'."""
        self._window("minimized")
        self.wait_for("document.visibilityState === 'hidden'", timeout)

    def show(self, timeout=5.0):
        self._window("normal")
        self.wait_for("document.visibilityState === 'visible'", timeout)

    def freeze(self):
        """Page Lifecycle "frozen": timers, events and loads stop (DevTools
        eval still runs)."""
        self.send("Page.setWebLifecycleState", {"state": "frozen"})

    def resume(self):
        self.send("Page.setWebLifecycleState", {"state": "active"})

    def throttle_cpu(self, rate):
        """The renderer runs `rate` times slower (1 = normal)."""
        self.send("Emulation.setCPUThrottlingRate", {"rate": rate})

    def close(self):
        self.browser._sessions.pop(self.session_id, None)
        self.browser.send("Target.closeTarget", {"targetId": self.target_id})


def _remote_text(obj):
    if "value" in obj:
        v = obj["value"]
        return v if isinstance(v, str) else json.dumps(v)
    pre = obj.get("preview")
    if pre and "properties" in pre:  # {a: 2} -> Object {a: 2}
        props = ", ".join("%s: %s" % (p.get("name"), p.get("value"))
                          for p in pre["properties"])
        return "%s {%s%s}" % (obj.get("description", ""), props,
                              ", ..." if pre.get("overflow") else "")
    return obj.get("description") or obj.get("unserializableValue") or \
        obj.get("type", "?")


def _exception_text(d):
    ex = d.get("exception") or {}
    text = ex.get("description") or d.get("text", "exception")
    where = d.get("url", "")
    if where:
        text += " (%s:%s:%s)" % (where, d.get("lineNumber", 0) + 1,
                                 d.get("columnNumber", 0) + 1)
    return text


def decode_png(data):
    """(width, height, rows) of an 8-bit RGB or RGBA, non-interlaced PNG
    (what Chromium writes); rows are bytearrays of RGBA. Raises ValueError
    for anything else."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if len(body) != n:
            raise ValueError("truncated PNG chunk")
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if hdr is None:
        raise ValueError("PNG without IHDR")
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        raise ValueError("PNG depth %d colour type %d interlace %d not handled"
                         % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        raise ValueError("PNG data is %d bytes, want %d"
                         % (len(raw), h * (stride + 1)))
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        _unfilter(f, cur, prev, bpp)
        prev = cur
        if bpp == 3:
            out = bytearray(w * 4)
            out[0::4], out[1::4], out[2::4] = cur[0::3], cur[1::3], cur[2::3]
            out[3::4] = b"\xff" * w
            rows.append(out)
        else:
            rows.append(cur)
    return w, h, rows


def _unfilter(f, cur, prev, bpp):
    n = len(cur)
    if f == 0:
        return
    if f == 1:
        for i in range(bpp, n):
            cur[i] = (cur[i] + cur[i - bpp]) & 0xff
    elif f == 2:
        for i in range(n):
            cur[i] = (cur[i] + prev[i]) & 0xff
    elif f == 3:
        for i in range(n):
            left = cur[i - bpp] if i >= bpp else 0
            cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 0xff
    elif f == 4:
        for i in range(n):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (cur[i] + pr) & 0xff
    else:
        raise ValueError("bad PNG filter %d" % f)


class _Stop(BaseException):
    """The whole test's alarm, or SIGTERM/SIGINT (meson's timeout)."""


def _case_name(fn):
    doc = (fn.__doc__ or "").strip().splitlines()
    return doc[0] if doc else fn.__name__.replace("_", " ")


def skip_or_bail(why):
    """A test that cannot run here (`why`): a TAP skip and exit 0, or with
    GK_WEB_REQUIRED=1 (scripts/test.sh) a bail-out and exit 1."""
    if os.environ.get("GK_WEB_REQUIRED") == "1":
        print("Bail out! %s, and GK_WEB_REQUIRED=1" % why)
        print("FAIL: %s, and GK_WEB_REQUIRED=1" % why, file=sys.stderr)
        sys.exit(1)
    print("1..0 # SKIP %s" % why)
    print("SKIP: %s (GK_WEB_REQUIRED=1 fails instead)" % why,
          file=sys.stderr)
    sys.exit(0)


def require_gamekit_dist():
    """skip_or_bail unless web/gamekit/dist holds the built gamekit.wasm."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(root, "web", "gamekit", "dist",
                                       "gamekit.wasm")):
        skip_or_bail("web/gamekit/dist is not built (sh web/gamekit/build.sh)")


def run(cases, timeout=120, flags=(), browser=True):
    """Runs a list of cases, each fn(browser), as one TAP test program
    (meson's protocol 'tap'): one Browser for all of them (started again
    if a case lost it), the pages a case opened closed after it. A case
    passes if it returns, fails if it raises: then the error, what each of
    its pages said and Chromium's stderr tail are printed as TAP
    diagnostics. An alarm of `timeout` seconds bounds the whole program,
    and SIGTERM/SIGINT end it the same way: Chromium is always closed.
    Exits 0 if every case passed, 1 if not. Without Chromium: a TAP skip,
    or with GK_WEB_REQUIRED=1 a bail-out and exit 1. browser=False runs
    the cases the same way with None for the browser (HTTP-only tests)."""
    why = chromium_missing() if browser else None
    if why is not None:
        skip_or_bail(why)

    def on_signal(signum, frame):
        raise _Stop("signal %d (alarm: the program ran over %d s)"
                    % (signum, timeout))

    for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    signal.alarm(timeout)
    print("1..%d" % len(cases), flush=True)
    failed, b = 0, None
    try:
        for i, fn in enumerate(cases, 1):
            if browser and (b is None or b._dead is not None):
                if b is not None:
                    b.close()
                b = Browser(flags=flags)
            first = len(b.pages) if b is not None else 0
            try:
                fn(b)
                print("ok %d - %s" % (i, _case_name(fn)), flush=True)
            except Exception:
                failed += 1
                print("not ok %d - %s" % (i, _case_name(fn)))
                _diag(traceback.format_exc())
                for j, p in enumerate(b.pages[first:] if b else []):
                    _diag("page %d said:\n%s" % (j, p.report()))
                if b is not None:
                    _diag("chromium stderr (tail):\n" + b.stderr_tail(15))
                sys.stdout.flush()
            if b is not None:
                _close_pages(b, first)
    except _Stop as e:
        print("Bail out! %s" % e, flush=True)
        failed += 1
    finally:
        signal.alarm(0)
        if b is not None:
            b.close()
    sys.exit(1 if failed else 0)


def _close_pages(b, first):
    for p in b.pages[first:]:
        try:
            p.close()
        except CdpError:
            pass
    del b.pages[first:]


def _diag(text):
    for line in text.rstrip().splitlines():
        print("# " + line)
