"""views_harness.py: what run_views.py's checks share: paths, the check
list, colours, the HTTP server for web/ and the dumps, headless Chromium
runs (screenshot, the page's #out report) and gk-replay.

Chromium runs once per page here (--screenshot / --dump-dom with a
virtual-time budget); tests/web/cdp.py could drive one browser for all.
"""
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import threading
import urllib.parse

import pngread

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.dirname(os.path.dirname(HERE))  # web/
ROOT = os.path.dirname(WEB)
LEVELS = os.path.join(ROOT, 'genres', 'push-puzzle', 'levels', 'intro.sok')
# The shipped solution of level 4 ("Warehouse"), as in test_pp_solutions.c.
WAREHOUSE = 'RurrddddlDRuuuuLLLrdRDrddlLdllUUdR'
CROSSING = 'luUluRRRDLulDrrrruLL'  # level 5
FX = 65536
TOL = 10  # per channel: screenshots of solid fills are exact; a little slack

failures = []  # what failed, in order (run_views.py counts them)


def check(ok, what):
    if not ok:
        failures.append(what)
        print('FAIL:', what)
    return ok


def rgb(hexcolor):
    h = hexcolor.lstrip('#')
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def close(a, b, tol=TOL):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


class Server:
    """web/ at /web/, the case directory at /case/, on 127.0.0.1:0."""

    def __init__(self, case_dir):
        handler = functools.partial(self.Handler, directory=ROOT)
        self.Handler.case_dir = case_dir
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    class Handler(http.server.SimpleHTTPRequestHandler):
        case_dir = None

        def translate_path(self, path):
            p = urllib.parse.urlparse(path).path
            if p.startswith('/case/'):
                name = os.path.basename(p)
                return os.path.join(self.case_dir, name)
            if not p.startswith('/web/'):
                return os.path.join(self.case_dir, 'missing')
            return super().translate_path(path)

        def end_headers(self):
            self.send_header('Cache-Control', 'no-store')
            super().end_headers()

        def log_message(self, *args):
            pass

    def url(self, page, **query):
        return 'http://127.0.0.1:%d/web/views/test/%s?%s' % (
            self.port, page, urllib.parse.urlencode(query))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Chromium:
    def __init__(self, exe, work):
        self.exe = exe
        self.work = work
        self.n = 0

    def _run(self, extra, url, w, h, virtual_time=True, dpr=1):
        self.n += 1
        profile = os.path.join(self.work, 'profile%d' % self.n)
        cmd = [self.exe, '--headless', '--no-sandbox', '--disable-gpu',
               '--hide-scrollbars', '--force-device-scale-factor=%d' % dpr,
               '--user-data-dir=' + profile, '--window-size=%d,%d' % (w, h)]
        if virtual_time:  # runs the page's fetches and tasks, then stops
            cmd.append('--virtual-time-budget=5000')
        cmd += extra + [url]
        # a group of its own: on a timeout the renderer and helpers go too
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError('chromium: no result within 90 s: %s' % url)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def screenshot(self, url, w, h, png, dpr=1):
        r = self._run(['--screenshot=' + png], url, w, h, dpr=dpr)
        if r.returncode != 0 or not os.path.exists(png):
            raise RuntimeError('chromium screenshot failed: %s' %
                               r.stderr.decode(errors='replace')[-2000:])
        return pngread.read(png)

    def report(self, url, w=800, h=600, virtual_time=True):
        """The JSON in the page's #out after it ran."""
        r = self._run(['--dump-dom'], url, w, h, virtual_time)
        dom = r.stdout.decode()
        start = dom.find('<pre id="out"')
        start = dom.find('>', start) + 1
        end = dom.find('</pre>', start)
        text = dom[start:end].replace('&quot;', '"').replace('&lt;', '<') \
            .replace('&gt;', '>').replace('&amp;', '&')
        try:
            out = json.loads(text)
        except ValueError:
            raise RuntimeError('no report from %s: %r' % (url, dom[-500:]))
        if isinstance(out, dict) and 'error' in out:
            raise RuntimeError('page error: %s' % out['error'])
        return out


class Tools:
    def __init__(self, replay, work):
        self.replay = replay
        self.work = work

    def run(self, *args):
        r = subprocess.run([self.replay] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0:
            raise RuntimeError('gk-replay %s: %s' % (' '.join(args),
                               r.stderr.decode(errors='replace')))
        return r.stdout

    def dump(self, gkr, step, name):
        out = self.run('dump', gkr, '--step', str(step), '--json')
        path = os.path.join(self.work, name)
        with open(path, 'wb') as f:
            f.write(out)
        return json.loads(out)['state'], name


