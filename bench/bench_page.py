#!/usr/bin/python3
"""bench_page.py: the play-in-the-browser figures (a benchmark, not a test).

A real gk-server on 127.0.0.1 (tests/web/gkserver.py, the tree's web/ as
its static files), headless Chromium (tests/web/cdp.py) and
web/test/peer.html (gamekit.js, the genre's bot), and prints:

  load      page load to first step: navigation start (performance's
            time origin) to the page's first step event, for a one-seat
            survivors room the page creates and starts at once
            (peer.html?auto=solo): the module, the .wasm, the WebSocket,
            CREATE_ROOM, START_MATCH, MATCH_START, step 0. Median (and
            min, max) of --loads navigations with the HTTP cache, and of
            as many with it disabled (Network.setCacheDisabled).
  latency   confirm latency in the page: for each step the page sampled,
            the time from that sample (performance.now() around the
            engine's timeout call that took it) to the page running that
            step (its step event), p50 / p99 / max over --steps steps of
            a 3-seat room (the page and two gk-web-native peers over
            ENet), lockstep.input_delay fixed at --delay (so a sample's
            step is first_step + delay + samples before it). The step
            period and the goal (p99 <= 2 periods) printed with it; the
            figure includes the input delay's wait whenever the engine
            runs a step only at its deadline.
  cpu       the page's CPU at 60 Hz, over --cpu-s seconds of that match:
            Chromium's Performance.getMetrics TaskDuration (the renderer
            main thread's tasks: script, style, layout, paint) and
            ScriptDuration, as % of one core of the wall interval; once
            without drawing, once drawing the survivors view every frame.

The machine's load changes every figure: record one run.

  bench_page.py [--server build/src/server/gk-server]
      [--native build/web/gamekit/test/gk-web-native] [--loads 9]
      [--steps 1800] [--delay 3] [--cpu-s 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
import cdp  # noqa: E402
import gkserver  # noqa: E402


def summary(xs):
    return 'median %.1f ms (min %.1f, max %.1f, n %d)' % (
        statistics.median(xs), min(xs), max(xs), len(xs))


def load_figure(b, srv, loads, cache):
    times = []
    for i in range(loads):
        p = b.new_page()
        p.send('Network.enable')
        p.send('Network.setCacheDisabled', {'cacheDisabled': not cache})
        p.goto(srv.url('/test/peer.html?auto=solo&seed=%d' % (i + 1)),
               timeout=30)
        p.wait_for('peer.firstStepMs !== null || peer.error', timeout=30)
        if p.eval('peer.error'):
            raise SystemExit('load: %s' % p.eval('peer.error'))
        times.append(p.eval('peer.firstStepMs'))
        p.eval('peer.client.close()')
        p.close()
        b.pages.remove(p)
    return times


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def metrics(p):
    m = p.send('Performance.getMetrics')['metrics']
    return {x['name']: x['value'] for x in m}


def cpu_share(p, secs):
    a, t0 = metrics(p), time.monotonic()
    time.sleep(secs)
    z, t1 = metrics(p), time.monotonic()
    wall = t1 - t0
    return (100 * (z['TaskDuration'] - a['TaskDuration']) / wall,
            100 * (z['ScriptDuration'] - a['ScriptDuration']) / wall)


def match_figures(b, srv, native, steps, cpu_s, tmp):
    p = b.new_page(srv.url('/test/peer.html'))
    p.wait_for('window.peer && peer.ready', timeout=20)
    code = p.eval('peer.create({maxPlayers: 3, seed: 11})', timeout=20)
    enet = [e['port'] for e in srv.events(full=True)
            if e.get('event') == 'listening'][0]
    nats = []
    for i in (1, 2):
        nats.append(subprocess.Popen(
            [native, '127.0.0.1:%d' % enet, code, str(20 + i),
             os.path.join(tmp, 'n%d.hashes' % i), '300'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        joined = [e for e in srv.events(full=True)
                  if e.get('event') == 'player_joined'
                  and e.get('room') == code]
        if len(joined) >= 2:
            break
        time.sleep(0.1)
    p.send('Performance.enable', {'timeDomain': 'threadTicks'})
    p.eval('peer.start()')
    p.wait_for('peer.last >= 120 || peer.error', timeout=30)
    bare = cpu_share(p, cpu_s)
    p.eval('peer.draw(true)')
    drawn = cpu_share(p, cpu_s)
    p.eval('peer.draw(false)')
    p.wait_for('peer.last >= %d || peer.error' % steps, timeout=steps / 20)
    samples, ran, match = p.eval('[peer.samples, peer.ran, '
                                 'peer.client.match]', timeout=30)
    p.eval('peer.client.endMatch(2)')
    p.wait_for('peer.ended || peer.error', timeout=20)
    for n in nats:
        n.wait(30)
    at = {s: t for s, t in samples}
    lat = [t - at[s] for s, t in ran if s in at and s >= 60]
    return lat, match, bare, drawn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', default=os.path.join(
        ROOT, 'build', 'src', 'server', 'gk-server'))
    ap.add_argument('--native', default=os.path.join(
        ROOT, 'build', 'web', 'gamekit', 'test', 'gk-web-native'))
    ap.add_argument('--loads', type=int, default=9)
    ap.add_argument('--steps', type=int, default=1800)
    ap.add_argument('--delay', type=int, default=3)
    ap.add_argument('--cpu-s', type=float, default=10.0)
    a = ap.parse_args()
    why = cdp.chromium_missing()
    if why:
        raise SystemExit(why)
    tmp = tempfile.mkdtemp(prefix='gk-bench-page-')
    srv = gkserver.GkServer(
        os.path.abspath(a.server), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'lockstep': {'input_delay': a.delay}, 'log_level': 'info'})
    b = cdp.Browser()
    try:
        warm = load_figure(b, srv, a.loads, True)
        cold = load_figure(b, srv, a.loads, False)
        lat, match, bare, drawn = match_figures(b, srv, a.native, a.steps,
                                                a.cpu_s, tmp)
    finally:
        b.close()
        srv.close()
    period = 1000.0 / 60
    print('page load to first step (loopback, one-seat room): HTTP cache '
          'on: %s; cache disabled: %s' % (summary(warm), summary(cold)))
    print('confirm latency (sample to step run; input delay %d, steps '
          '60..%d, n %d): p50 %.1f ms, p99 %.1f ms, max %.1f ms; period '
          '%.1f ms, goal p99 <= %.1f ms: %s'
          % (match['inputDelay'], a.steps, len(lat), percentile(lat, 0.5),
             percentile(lat, 0.99), max(lat), period, 2 * period,
             'met' if percentile(lat, 0.99) <= 2 * period else 'NOT met'))
    print('page CPU at 60 Hz (%% of one core, %.0f s each): engine only: '
          'tasks %.1f%%, script %.1f%%; drawing the survivors view each '
          'frame: tasks %.1f%%, script %.1f%%'
          % (a.cpu_s, bare[0], bare[1], drawn[0], drawn[1]))
    print(json.dumps({'load_warm_ms': warm, 'load_cold_ms': cold,
                      'latency_p50_ms': percentile(lat, 0.5),
                      'latency_p99_ms': percentile(lat, 0.99),
                      'cpu_tasks_pct': bare[0], 'cpu_script_pct': bare[1],
                      'cpu_drawn_tasks_pct': drawn[0],
                      'cpu_drawn_script_pct': drawn[1]}))


if __name__ == '__main__':
    main()
