#!/usr/bin/python3
"""bench_watch.py: the watch page's figures (a benchmark, not a test).

  bench_watch.py [--server build/src/server/gk-server]
                 [--bot build/tools/bot/gk-bot] [--opens 7] [--watchers 8]
                 [--seconds 15]

1. Opening to first drawn state: a room of 2 gk-bot players (survivors,
   ENet) on a real gk-server (tests/web/gkserver.py, static_dir web/);
   `--opens` times a fresh tab opens /watch.html?room=CODE in headless
   Chromium (tests/web/cdp.py) and the page's watch.firstDrawMs is read:
   performance.now() at the first frame that drew a state, from the
   navigation's start (page, module, gamekit.wasm, WebSocket, SPECTATE,
   snapshot, first frame). Prints each and the median.
2. Server CPU per watcher per step: gk-server's CPU time (the sum of
   /proc/PID/task/*/schedstat, ns) over `--seconds` with the room alone,
   then with `--watchers` watch pages open, divided by the room's steps in
   each window (admin /rooms); (with - alone) / watchers is one browser
   watcher's cost per step. The same for native spectators: a gk-bot room
   with `--spectators K` (they join a quarter of the way in), its window
   before the join against the one after. Prints both and their ratio.

Every wait is bounded. The machine's other load moves the CPU figures:
compare the two rows of one run.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
sys.dont_write_bytecode = True
import cdp  # noqa: E402
import gkserver  # noqa: E402

HZ = 60


def cpu_ns(pid):
    total = 0
    for path in glob.glob('/proc/%d/task/*/schedstat' % pid):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def room_steps(srv, code):
    for r in srv.admin_get('/rooms')['rooms']:
        if r['code'] == code:
            return r['step'], r.get('spectators', 0)
    return None, 0


def window(srv, code, seconds):
    """gk-server's CPU ns per room step over `seconds`."""
    pid = srv.proc.pid
    s0, _ = room_steps(srv, code)
    c0 = cpu_ns(pid)
    time.sleep(seconds)
    s1, n = room_steps(srv, code)
    c1 = cpu_ns(pid)
    if s0 is None or s1 is None or s1 <= s0:
        raise RuntimeError('room %s did not step (%s -> %s)' % (code, s0, s1))
    return (c1 - c0) / (s1 - s0), s1 - s0, n


def bots(args, srv, steps, extra=()):
    port = [e for e in srv.events() if e.get('event') == 'listening'][0]['port']
    seen = {e.get('room') for e in srv.events()
            if e.get('event') == 'match_start'}
    p = subprocess.Popen([args.bot, '--server', '127.0.0.1:%d' % port,
                          '--genre', 'survivors', '--rooms', '1',
                          '--players', '2', '--steps', str(steps),
                          '--timeout', str(steps // HZ + 120)] + list(extra),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for e in srv.events():
            if e.get('event') == 'match_start' and e.get('room') not in seen:
                return p, e['room']
        time.sleep(0.05)
    p.kill()
    raise RuntimeError('no match started')


def first_draws(b, srv, code, n):
    out = []
    for _ in range(n):
        p = b.new_page(srv.url('/watch.html?room=' + code))
        p.send('Page.bringToFront')
        ms = p.wait_for('window.watch && (watch.firstDrawMs || '
                        '(watch.errors.length && -1))', timeout=30)
        if ms < 0:
            raise RuntimeError('the page failed: %s' % p.eval('watch.errors'))
        out.append(ms)
        p.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--server', default=os.path.join(
        ROOT, 'build', 'src', 'server', 'gk-server'))
    ap.add_argument('--bot', default=os.path.join(
        ROOT, 'build', 'tools', 'bot', 'gk-bot'))
    ap.add_argument('--opens', type=int, default=7)
    ap.add_argument('--watchers', type=int, default=8)
    ap.add_argument('--seconds', type=float, default=15.0)
    args = ap.parse_args()
    k = args.watchers
    srv = gkserver.GkServer(
        os.path.abspath(args.server),
        ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'spectator': {'per_room': max(16, k), 'max': 64},
                'log_level': 'info'})
    procs = []
    try:
        with cdp.Browser() as b:
            steps = int(HZ * (args.opens * 4 + 3 * args.seconds + 30))
            p, code = bots(args, srv, steps)
            procs.append(p)
            time.sleep(1.0)
            ms = first_draws(b, srv, code, args.opens)
            print('first drawn state (ms from opening): %s; median %.0f'
                  % (', '.join('%.0f' % x for x in ms), statistics.median(ms)))
            alone, n0, _ = window(srv, code, args.seconds)
            pages = []
            for _ in range(k):
                pg = b.new_page(srv.url('/watch.html?room=' + code))
                pages.append(pg)
            for pg in pages:
                pg.wait_for('window.watch && watch.step >= 0', timeout=30)
            time.sleep(1.0)
            web, n1, seen = window(srv, code, args.seconds)
            per_web = (web - alone) / k
            print('browser: gk-server %.1f us/step alone (%d steps), %.1f '
                  'with %d pages (%d steps, %d spectators seen): %.2f us '
                  'per watcher per step' % (alone / 1e3, n0, web / 1e3, k,
                                            n1, seen, per_web / 1e3))
            p.kill()
            p.wait(5)
        # native spectators: they join a quarter of the way in
        nsteps = int(HZ * args.seconds * 4 + HZ * 8)
        p, code = bots(args, srv, nsteps, ['--spectators', str(k)])
        procs.append(p)
        time.sleep(1.0)
        alone_n, m0, _ = window(srv, code, args.seconds)
        deadline = time.monotonic() + 60
        while room_steps(srv, code)[1] < k and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        nat, m1, seen_n = window(srv, code, args.seconds)
        per_nat = (nat - alone_n) / k
        print('native: gk-server %.1f us/step alone (%d steps), %.1f with %d '
              'gk-bot spectators (%d steps, %d seen): %.2f us per spectator '
              'per step' % (alone_n / 1e3, m0, nat / 1e3, k, m1, seen_n,
                            per_nat / 1e3))
        if per_nat > 0:
            print('browser / native per watcher per step: %.2fx'
                  % (per_web / per_nat))
        print(json.dumps({'first_draw_ms_median': statistics.median(ms),
                          'first_draw_ms': ms,
                          'web_us_per_watcher_step': per_web / 1e3,
                          'native_us_per_spectator_step': per_nat / 1e3}))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)
        srv.close()


if __name__ == '__main__':
    main()
