#!/usr/bin/python3
"""play_cdp.py: survivors.js draws what web/gamekit's client plays.

A real gk-server (ENet and WebSocket on ephemeral ports of 127.0.0.1),
web/gamekit's client in headless Chromium (tests/web/cdp.py) playing
survivors with the genre's bot on the WebSocket link; after 300 steps (at the
first state with no level-up pick pending and no pause) the page draws
the client's state with survivors.js, and the screenshot must
show the player and every uncovered enemy in its colour at the position
that state gives (the checks of views_survivors.py). Prints TAP.

usage: play_cdp.py   (GK_SERVER: gk-server; skips without Chromium, or
                      without web/gamekit/dist)
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
import cdp  # noqa: E402
import pngread  # noqa: E402
import views_harness  # noqa: E402
import views_survivors  # noqa: E402

srv = None
ws_url = None


def start_server(tmp):
    cfg = {'listen': {'host': '127.0.0.1', 'port': 0}, 'log_level': 'info',
           'replays': {'dir': os.path.join(tmp, 'replays')},
           'websocket': {'enabled': True, 'host': '127.0.0.1', 'port': 0}}
    path = os.path.join(tmp, 'server.json')
    with open(path, 'w') as f:
        json.dump(cfg, f)
    p = subprocess.Popen([os.environ['GK_SERVER'], '--config', path],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    deadline = time.time() + 10
    for line in p.stdout:  # the server prints a line per event
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get('event') == 'listening':
            # keep reading its log, so a full pipe never blocks it
            threading.Thread(target=p.stdout.read, daemon=True).start()
            return p, o['ws_port']
        if time.time() > deadline:
            break
    p.kill()
    raise RuntimeError('gk-server: no listening line')


def the_client_state_is_drawn_where_it_says(b):
    """survivors: the client's state after 300 steps, drawn, pixel-checked"""
    p = b.new_page(srv.url('play.html', ws=ws_url))
    p.wait_for('window.lastStep >= 300 || window.failed', timeout=40)
    failed = p.eval('window.failed || null')
    if failed:
        raise AssertionError('the client failed: %s' % failed)
    # a state with no pick pending and no pause: those dim the arena
    st = p.wait_for("(() => { const s = drawNow(); return !s.paused && "
                    "!s['players[0].pick_pending'] ? s : null; })()",
                    timeout=40)
    page = p.eval('window.palette')
    png = os.path.join(tempfile.mkdtemp(prefix='gk-play-'), 'play.png')
    p.screenshot(png)
    img = pngread.read(png)
    views_harness.failures.clear()
    opts = {'arenaWidth': 1600, 'arenaHeight': 1600, 'camera': 'arena'}
    counts = views_survivors.sv_check_entities(img, st, page, opts, 800, 600,
                                               'play')
    if views_harness.failures:
        raise AssertionError('; '.join(views_harness.failures[:5]))
    if counts.get('player0', 0) != 1:
        raise AssertionError('the player was not checked: %s' % counts)
    print('# step %s: %d enemies, checked %s' % (
        st['step'], st['enemy_count'], sorted(counts.items())))


if __name__ == '__main__':
    if not os.path.exists(os.path.join(ROOT, 'web', 'gamekit', 'dist',
                                       'gamekit.wasm')):
        print('1..0 # SKIP web/gamekit/dist is not built')
        sys.exit(0)
    tmp = tempfile.mkdtemp(prefix='gk-play-')
    server, ws_port = start_server(tmp)
    ws_url = 'ws://127.0.0.1:%d/play' % ws_port
    srv = views_harness.Server(tmp)
    try:
        cdp.run([the_client_state_is_drawn_where_it_says], timeout=120)
    finally:
        srv.close()
        server.terminate()
        server.wait(5)
