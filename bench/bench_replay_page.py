#!/usr/bin/python3
"""bench_replay_page.py: the replay page's figures, in headless Chromium.

  verify speed  the page's "verify" button (web/replay.js: the C verifier
                in gamekit.wasm, chunks of 8192 steps with a yield between
                them) on a 36,000-step survivors replay of 2 bots (config
                player_health 1000000: both alive to the end; with the
                default the bots die by step ~12,000 and the rest is an
                empty arena) and on
                push-puzzle's longest bundled solution (xsokoban #89), as
                steps/s and as a multiple of real time (the header's
                step_seconds); the median of RUNS clicks each.
  seek          the seek bar to SEEKS random positions of the 36,000-step
                replay: "cold" right after opening (before the page's scan
                ran ahead: the seek runs from the furthest kept state) and
                "warm" once the scan reached the end (scan_ms after the
                open: every 256th state kept); median and max of the time
                the page measured around replay.seek().

Files are recorded offline with gk-replay record; the page is served by a
real gk-server (static files on its WebSocket port). Prints one JSON
object. One run; the machine may be loaded (say so with the figures).

usage: bench_replay_page.py [RUNS [SEEKS]]
  (GK_SERVER, GK_REPLAY: the programs; default the in-tree build's)
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
sys.dont_write_bytecode = True
import cdp  # noqa: E402
import gkserver  # noqa: E402

REPLAY = os.environ.get('GK_REPLAY') or os.path.join(
    ROOT, 'build', 'tools', 'replay', 'gk-replay')
PP = os.path.join(ROOT, 'tests', 'data', 'push-puzzle', 'xsokoban')


def record(tmp):
    sv = os.path.join(tmp, 'survivors-2p-36000.gkr')
    pp = os.path.join(tmp, 'push-puzzle-89.gkr')
    cfg = os.path.join(tmp, 'tough.json')
    with open(cfg, 'w') as f:  # both bots alive for all 36,000 steps
        json.dump({'player_health': 1000000}, f)
    subprocess.run([REPLAY, 'record', '--genre', 'survivors', '--players',
                    '2', '--seed', '29', '--steps', '36000', '--config', cfg,
                    '--out', sv],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([REPLAY, 'record', '--genre', 'push-puzzle', '--level',
                    os.path.join(PP, 'xsokoban0089.sok'), '--lurd',
                    '@' + os.path.join(PP, 'xsokoban0089.sol'), '--out', pp],
                   check=True, capture_output=True, timeout=120)
    return sv, pp


def open_file(p, path):
    n = p.eval("document.getElementById('file').value = ''; "
               "replayPage.opened")
    oid = p.send('Runtime.evaluate', {
        'expression': "document.getElementById('file')"})['result']['objectId']
    p.send('DOM.setFileInputFiles', {'files': [path], 'objectId': oid})
    p.wait_for('replayPage.opened > %d' % n, timeout=30)


def verify(p, runs):
    rates, real = [], []
    for _ in range(runs):
        p.eval('replayPage.verifyResult = null; '
               "document.getElementById('verify').click()")
        res = p.wait_for('replayPage.verifyResult', timeout=120)
        if res['status'] != 'ok' or not res['done']:
            raise RuntimeError('verify: %s' % res['text'])
        rates.append(res['stepsPerSecond'])
        real.append(res['realtime'])
    return {'steps': res['steps'], 'steps_per_s': round(statistics.median(rates)),
            'x_real_time': round(statistics.median(real)), 'runs': runs}


def loop_rate(p, reps):
    """The same C run, `reps` whole passes timed as one (a short replay's
    one pass is below performance.now()'s resolution)."""
    r = p.eval("(() => { const r = replayPage.replay, n = r.info.steps; "
               "const t0 = performance.now(); for (let i = 0; i < %d; i++) "
               "{ r.seek(0); r.run(n); } const s = (performance.now() - t0) "
               "/ 1000; const [a, b] = r.info.stepSeconds; return "
               "[n * %d / s, n * %d / s / (b / a), r.verdict().status]; })()"
               % (reps, reps, reps))
    if r[2] != 'ok':
        raise RuntimeError('loop: %s' % r[2])
    return {'reps': reps, 'steps_per_s': round(r[0]),
            'x_real_time': round(r[1])}


def seeks(p, positions):
    p.eval('replayPage.seekMs = []')
    for s in positions:
        p.eval("(() => { const e = document.getElementById('seek'); "
               "e.value = '%d'; e.dispatchEvent(new Event('input')); })()" % s)
    ms = p.eval('replayPage.seekMs')
    return {'n': len(ms), 'median_ms': round(statistics.median(ms), 2),
            'max_ms': round(max(ms), 2)}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    nseek = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    tmp = tempfile.mkdtemp(prefix='gk-bench-replay-page-')
    out = {}
    try:
        sv, pp = record(tmp)
        rnd = random.Random(29)
        with gkserver.GkServer(gkserver.server_exe(),
                               ws={'static_dir': os.path.join(ROOT, 'web')}) as srv, \
                cdp.Browser() as b:
            p = b.new_page(srv.url('/replay.html'))
            p.wait_for('window.replayPage !== undefined', timeout=20)
            # cold: a fresh open before each seek, before the scan ran
            cold = []
            for _ in range(min(nseek, 10)):
                open_file(p, sv)
                cold.append(seeks(p, [rnd.randrange(36001)])['max_ms'])
            open_file(p, sv)
            t = p.eval('performance.now()')
            p.wait_for('replayPage.scanned === 36000', timeout=60)
            out['scan_ms'] = round(p.eval('performance.now()') - t)
            out['seek_cold'] = {'n': len(cold),
                                'median_ms': round(statistics.median(cold), 2),
                                'max_ms': round(max(cold), 2)}
            open_file(p, sv)
            out['seek_warm'] = seeks(p, [rnd.randrange(36001)
                                         for _ in range(nseek)])
            out['survivors_2p'] = verify(p, runs)
            out['survivors_2p_loop'] = loop_rate(p, 5)
            out['snapshots'] = p.eval('replayPage.replay.where()')
            open_file(p, pp)
            out['push_puzzle'] = verify(p, runs)
            out['push_puzzle_loop'] = loop_rate(p, 200)
            out['chromium'] = p.eval('navigator.userAgent')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
