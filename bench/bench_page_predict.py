#!/usr/bin/python3
"""bench_page_predict.py: the play page's frame cost with prediction, wasm
(a benchmark, not a test; docs/PROTOCOL.md "Prediction").

A real gk-server on 127.0.0.1 (tests/web/gkserver.py, the tree's web/),
headless Chromium (tests/web/cdp.py) and the play page (web/index.html)
loaded through a TCP relay that holds every byte --rtt/2 each way
(tests/web/delayrelay.py: the page's WebSocket sees the round trip). The
page hosts survivors for 8: itself and 7 server bots (room.bots), with
options that make the state dense within a few seconds (2,000 enemies,
1,000 projectiles, level-5 wands, players that do not die) and an arrow
key the page holds, turning every second. Twice, the same match: with
prediction (the room's option on, the page drawing the head) and
without (the option off, play.predict false: the confirmed run only).
After --warm seconds it measures for --seconds, with performance.now()
(Chromium's resolution, printed, coarsens it) around:

  engine/frame  the wasm engine's calls (gk_webx_timeout: sampling, steps,
                the head; gk_webx_handle: a message, its confirmed steps)
                between two animation frames, summed: its p50 / p99 / max
  restore call  the engine calls that restored the head (a "rollback"
                event after it): the predict step with its re-simulation,
                p50 / p99 / max, and the steps the head then stood past
                the confirmed run (re-simulated) p50 / p99
  draw          the survivors view's draw of the frame, p50 / p99
  state maps    the client's state maps read in the frame (gamekit.js
                map(): the head's each frame, the confirmed state's and
                the HUD sample's; wasm writer + JS decode), p50 / p99
  main thread   Chromium's Performance.getMetrics TaskDuration and
                ScriptDuration over the measured seconds, % of the wall
  frame         the work of a frame: engine/frame + draw + state maps,
                p50 / p99 (the goal: p99 <= 16 ms); and the rAF interval
                p50 / p99; steps/s: the match's pace (60 when nothing
                holds it back)
  entities      enemies and projectiles in the state at the end

The machine's load changes every figure: record one run.

With --map-every N the page decodes a state map once in N reads (the
others get the last one): the maps' cost, not the engine's, is what holds
a dense page below 60 steps/s, so this measures the engine at the pace.
The page draws the head with its entities in columns (gamekit.js
predictedState({ columns })); --paths draws it from paths only, as
before.

  bench_page_predict.py [--server build/src/server/gk-server]
      [--rtt 100] [--warm 8] [--seconds 20] [--map-every N] [--paths]
      [--sparse]
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
import cdp  # noqa: E402
import delayrelay  # noqa: E402
import gkserver  # noqa: E402

# a dense survivors match that stays dense: enemies fill their cap in
# about 100 steps, nobody dies, a level-up never holds the world
DENSE = {'max_enemies': 2000, 'max_projectiles': 1000, 'spawn_batch': 40,
         'spawn_interval_start': 2, 'spawn_interval_min': 1,
         'enemy_health_pct': 1000, 'start_weapon_level': 5,
         'player_health': 1000000, 'pick_timeout_steps': 1}

# the same without the crowd (the default spawns), for comparison
SPARSE = {'player_health': 1000000, 'pick_timeout_steps': 1}

# Installed once the match started: wraps the engine's two wasm entry
# points and the view's draw; one row per animation frame.
PROBE = """(() => {
  const c = play.client, m = c.m, v = play.view;
  const B = window.bench = { on: false, frames: [], restores: [],
    engine: 0, calls: 0, draw: 0, last: null, res: Infinity, t: 0 };
  for (const name of ['_gk_webx_timeout', '_gk_webx_handle']) {
    const f = m[name];
    m[name] = (...a) => {
      const t0 = performance.now();
      const r = f(...a);
      const dt = performance.now() - t0;
      B.engine += dt; B.calls++; B.t = dt;
      if (dt > 0 && dt < B.res) B.res = dt;
      return r;
    };
  }
  const map = c.map.bind(c), every = MAP_EVERY, cache = {}, age = {};
  B.maps = 0;
  // every read (state, sample, head; with columns or not) goes through
  // map(kind, columns); PATHS: the columns asked for are not given
  c.map = (kind, columns) => {
    const cols = PATHS ? undefined : columns, k = kind + ':' + cols;
    if (every > 1 && cache[k] && ++age[k] < every) return cache[k];
    const t0 = performance.now();
    const r = map(kind, cols);
    B.maps += performance.now() - t0;
    cache[k] = r; age[k] = 0;
    return r;
  };
  B.desyncs = [];
  c.on('desync', (e) => { B.desyncs.push(e); });
  c.on('rollback', (e) => {
    if (B.on) B.restores.push([B.t, e.head - e.confirmed]);
  });
  const draw = v.draw.bind(v);
  v.draw = (...a) => {
    const t0 = performance.now();
    const r = draw(...a);
    B.draw += performance.now() - t0;
    return r;
  };
  requestAnimationFrame(function frame(now) {
    if (B.on && B.last !== null)
      B.frames.push([now - B.last, B.engine, B.calls, B.draw, B.maps]);
    B.last = now; B.engine = 0; B.calls = 0; B.draw = 0; B.maps = 0;
    if (!c.closed) requestAnimationFrame(frame);
  });
})()"""

KEYS = [('ArrowRight', 39), ('ArrowDown', 40), ('ArrowLeft', 37),
        ('ArrowUp', 38)]


def key(p, kind, k):
    p.send('Input.dispatchKeyEvent', {
        'type': kind, 'code': k[0], 'key': k[0],
        'windowsVirtualKeyCode': k[1]})


def pct(xs, q):
    if not xs:
        return float('nan')
    s = sorted(xs)
    return s[min(len(s) - 1, int(q / 100.0 * len(s)))]


def run(b, srv, relay, predict, args):
    p = b.new_page('http://127.0.0.1:%d/' % relay.port)
    p.send('Page.bringToFront')
    p.send('Performance.enable')
    p.wait_for('window.play && window.play.ready === true', timeout=30)
    opts = dict(DENSE if not args.sparse else SPARSE)
    opts['room'] = {'prediction': predict}
    p.eval("(() => { play.predict = %s; play.options = %s; const $ = (i) => "
           "document.getElementById(i); $('genre').value = 'survivors'; "
           "$('seats').value = 1; $('bots').value = 7; $('create').click(); "
           "})()" % (json.dumps(predict), json.dumps(opts)))
    p.wait_for('play.code || play.error', timeout=30)
    p.eval("document.getElementById('start').click()")
    p.wait_for('play.started && play.view && play.step >= 0 || play.error',
               timeout=30)
    if p.eval('play.error'):
        raise RuntimeError('the page failed: %s' % p.eval('play.error'))
    p.eval(PROBE.replace('MAP_EVERY', str(args.map_every)).replace(
        'PATHS', 'true' if args.paths else 'false'))
    t_end = time.monotonic() + args.warm + args.seconds
    t_on = time.monotonic() + args.warm
    i, m0 = 0, None
    while time.monotonic() < t_end:
        if time.monotonic() >= t_on and m0 is None:
            m0 = metrics(p), time.monotonic()
            p.eval('bench.on = true; bench.r0 = play.rollbacks; '
                   'bench.s0 = play.step; bench.t0 = performance.now(); 0')
        k = KEYS[i % len(KEYS)]
        key(p, 'keyDown', k)
        time.sleep(1.0)
        key(p, 'keyUp', k)
        i += 1
    m1 = metrics(p), time.monotonic()
    r = p.eval("(() => { const s = play.client.state(); return {"
               "frames: bench.frames, restores: bench.restores, "
               "res: bench.res, rollbacks: play.rollbacks - bench.r0, "
               "steps: play.step - bench.s0, "
               "secs: (performance.now() - bench.t0) / 1000, desyncs: play.desyncs, "
               "desync: bench.desyncs, "
               "top: Object.fromEntries(Object.entries(s.state).filter("
               "([k]) => !k.includes('.'))), error: play.error }; })()",
               timeout=30)
    wall = m1[1] - m0[1]
    r['busy'] = 100 * (m1[0]['TaskDuration'] - m0[0]['TaskDuration']) / wall
    r['script'] = 100 * (m1[0]['ScriptDuration'] -
                         m0[0]['ScriptDuration']) / wall
    p.eval('play.client.endMatch(); 0')
    p.close()
    return r


def metrics(p):
    m = p.send('Performance.getMetrics')['metrics']
    return {x['name']: x['value'] for x in m}


def report(name, r):
    fr = r['frames']
    eng = [f[1] for f in fr]
    draw = [f[3] for f in fr]
    maps = [f[4] for f in fr]
    work = [f[1] + f[3] + f[4] for f in fr]
    gap = [f[0] for f in fr]
    rs = [x[0] for x in r['restores']]
    rsim = [x[1] for x in r['restores']]
    print('%s: %d frames, %d steps (%.1f/s), %d rollbacks, %d restores, desyncs %d, '
          'state %s' % (
              name, len(fr), r['steps'], r['steps'] / r['secs'],
              r['rollbacks'], len(rs),
              r['desyncs'], r['top']))
    for d in r['desync']:
        print('  DESYNC %s' % d)
    print('  engine/frame  p50 %.2f  p99 %.2f  max %.2f ms' % (
        pct(eng, 50), pct(eng, 99), max(eng)))
    if rs:
        print('  restore call  p50 %.2f  p99 %.2f  max %.2f ms; '
              're-simulated p50 %d p99 %d steps' % (
                  pct(rs, 50), pct(rs, 99), max(rs), pct(rsim, 50),
                  pct(rsim, 99)))
    print('  draw          p50 %.2f  p99 %.2f ms' % (pct(draw, 50),
                                                    pct(draw, 99)))
    print('  state maps    p50 %.2f  p99 %.2f ms' % (pct(maps, 50),
                                                    pct(maps, 99)))
    print('  main thread   %.0f%% busy (script %.0f%%) of the wall time' % (
        r['busy'], r['script']))
    print('  frame work    p50 %.2f  p99 %.2f  max %.2f ms; rAF interval '
          'p50 %.1f p99 %.1f ms' % (pct(work, 50), pct(work, 99), max(work),
                                     pct(gap, 50), pct(gap, 99)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', default=os.environ.get('GK_SERVER'))
    ap.add_argument('--rtt', type=int, default=100)
    ap.add_argument('--warm', type=float, default=8)
    ap.add_argument('--seconds', type=float, default=20)
    ap.add_argument('--map-every', type=int, default=1,
                    help='decode a state map once in N reads (the others '
                    'get the last one): the page then keeps its pace and '
                    "the engine's cost is measured at 60 steps/s")
    ap.add_argument('--paths', action='store_true',
                    help='the head as paths only, as the page drew before '
                    'columns (gamekit.js predictedState({ columns }))')
    ap.add_argument('--sparse', action='store_true',
                    help="the genre's default crowd, not the dense one")
    ap.add_argument('--json', help='also write the raw figures here')
    ap.add_argument('--desyncs', default='/tmp/gk-bench-pp-desyncs',
                    help="the server's desync bundles (there should be none)")
    args = ap.parse_args()
    if args.server:
        os.environ['GK_SERVER'] = args.server
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'lockstep': {'prediction': {'mode': 'genre'}},
                'desync': {'policy': 'report', 'dir': args.desyncs}})
    relay = delayrelay.DelayRelay(srv.ws_port, args.rtt // 2)
    out = {}
    try:
        with cdp.Browser(timeout=30) as b:
            print('survivors, 8 players (the page + 7 server bots), %s; '
                  'round trip %d ms in the transport; %g s measured after '
                  '%g s; a state map decoded once in %d reads' % (
                      'sparse' if args.sparse else 'dense', args.rtt,
                      args.seconds, args.warm, args.map_every))
            for name, predict in (('prediction', True), ('none', False)):
                r = run(b, srv, relay, predict, args)
                out[name] = r
                report(name, r)
            print('performance.now() resolution seen: %.3f ms' % min(
                out[n]['res'] for n in out))
    finally:
        relay.close()
        srv.close()
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(out, f)


if __name__ == '__main__':
    main()
