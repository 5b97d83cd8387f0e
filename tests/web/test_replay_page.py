#!/usr/bin/python3
"""test_replay_page.py: web/replay.html, the replay page gk-server serves.

A real gk-server (tests/web/gkserver.py) with static_dir the tree's web/,
replays and desync reports on; real gk-bots play its matches; files are
handed to the page's file input with DOM.setFileInputFiles, as a person
picking them would. What the page says is compared with what gk-replay
(verify, dump, diff) says about the same files. Prints TAP. Skips without
web/gamekit/dist (fails then with GK_WEB_REQUIRED=1).

usage: test_replay_page.py  (GK_SERVER, GK_REPLAY, GK_BOT: the programs)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cdp  # noqa: E402
import gkserver  # noqa: E402

srv = None
tmp = None
replays = None
desyncs = None


def tool(*args, ok=(0,), timeout=120):
    """gk-replay ARGS: its stdout (the exit status must be in `ok`)."""
    r = subprocess.run([os.environ['GK_REPLAY']] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode not in ok:
        raise AssertionError('gk-replay %s: exit %d: %s %s'
                             % (' '.join(args), r.returncode, r.stdout,
                                r.stderr))
    return r.stdout


def enet_port():
    for ev in srv.events():
        if ev.get('event') == 'listening':
            return ev['port']
    raise AssertionError('no listening line in the server log')


def bots(players, steps, extra=()):
    """One room of `players` gk-bots played to `steps`; waits for gk-bot."""
    args = [os.environ['GK_BOT'], '--server', '127.0.0.1:%d' % enet_port(),
            '--genre', 'survivors', '--rooms', '1', '--players',
            str(players), '--steps', str(steps), '--timeout', '60']
    r = subprocess.run(args + list(extra), capture_output=True, text=True,
                       timeout=120)
    return r


def new_files(pattern, before, timeout=20):
    """Files matching `pattern` that were not in `before` (bounded wait
    until the server has written them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = sorted(set(glob.glob(pattern)) - before)
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError('nothing new at %s within %d s' % (pattern, timeout))


def server_replay(players=2, steps=600):
    before = set(glob.glob(os.path.join(replays, '*.gkr')))
    r = bots(players, steps)
    if r.returncode != 0:
        raise AssertionError('gk-bot exited %d: %s' % (r.returncode,
                                                       r.stderr[-2000:]))
    return new_files(os.path.join(replays, '*.gkr'), before)[-1]


def open_page(b):
    p = b.new_page(srv.url('/replay.html'))
    p.wait_for('window.replayPage !== undefined', timeout=20)
    return p


def pick(p, paths):
    """Hands `paths` to the page's file input and waits until it opened
    them."""
    n = p.eval("document.getElementById('file').value = ''; "
               "replayPage.opened")
    oid = p.send('Runtime.evaluate', {
        'expression': "document.getElementById('file')"})['result']['objectId']
    p.send('DOM.setFileInputFiles', {'files': [os.path.abspath(x)
                                               for x in paths],
                                     'objectId': oid})
    p.wait_for('replayPage.opened > %d || replayPage.error' % n, timeout=30)


def verify_in_page(p, timeout=60):
    p.eval("document.getElementById('verify').click()")
    p.wait_for('replayPage.verifyResult !== null || replayPage.error',
               timeout=timeout)
    return p.eval('replayPage.verifyResult')


def cli_text(path):
    """gk-replay verify's line without its "FILE: " head."""
    out = tool('verify', path, ok=(0, 1, 2)).strip()
    head = path + ': '
    if not out.startswith(head):
        raise AssertionError('gk-replay verify said %r' % out)
    return out[len(head):]


def the_page_verifies_a_server_replay_to_its_end(b):
    """the page verifies a server replay of 2 gk-bots to its end"""
    path = server_replay()
    want = cli_text(path)
    if not want.startswith('ok: '):
        raise AssertionError('gk-replay verify: %s' % want)
    p = open_page(b)
    pick(p, [path])
    res = verify_in_page(p)
    if res is None:
        raise AssertionError('the page failed: %s' % p.eval('replayPage.error'))
    steps = p.eval('replayPage.replay.info.steps')
    if res['text'] != want or not res['done'] or res['stepsChecked'] != steps:
        raise AssertionError('page %r, gk-replay %r' % (res, want))
    shown = p.eval("document.getElementById('verdict').textContent")
    if want not in shown:
        raise AssertionError('the verdict line shows %r' % shown)
    print('# %s: %d steps, %.0f steps/s in the page (%.0fx real time)'
          % (os.path.basename(path), steps, res['stepsPerSecond'],
             res['realtime']))


def one_flipped_byte_is_named_as_gk_replay_verify_names_it(b):
    """one flipped byte: the page stops at the step and block gk-replay names"""
    src = server_replay()
    data = bytearray(open(src, 'rb').read())
    at = len(data) * 3 // 5  # inside a steps block, past the header
    data[at] ^= 0x20
    bad = os.path.join(tmp, 'flipped-%d.gkr' % at)
    with open(bad, 'wb') as f:
        f.write(data)
    want = cli_text(bad)
    if 'INVALID' not in want or 'block' not in want:
        raise AssertionError('gk-replay verify said %r' % want)
    p = open_page(b)
    pick(p, [bad])
    res = verify_in_page(p)
    v = p.eval('replayPage.verdict')
    if res['text'] != want or v['status'] != 'invalid':
        raise AssertionError('page %r, gk-replay %r' % (v, want))
    # the first bad step: the first of the damaged block, as the message's
    # "the N steps before it verified" counts them
    if ('the %d steps before it verified' % v['firstBadStep']) not in want:
        raise AssertionError('first bad step %s, gk-replay %r'
                             % (v['firstBadStep'], want))
    print('# byte %d flipped: %s' % (at, want))


def seeking_to_90_percent_shows_the_state_the_file_holds(b):
    """seeking to 90% of a 36,000-step replay shows the state the file hashes"""
    path = os.path.join(tmp, 'sv36k.gkr')
    if not os.path.exists(path):
        # players that outlive the 36,000 steps (bots die by step ~12,000
        # with the default health, and the rest would be an empty arena)
        cfg = os.path.join(tmp, 'tough.json')
        with open(cfg, 'w') as f:
            json.dump({'player_health': 1000000}, f)
        tool('record', '--genre', 'survivors', '--players', '2', '--seed',
             '29', '--steps', '36000', '--config', cfg, '--out', path)
    p = open_page(b)
    pick(p, [path])
    # the page scans ahead after opening, keeping a state every 256 steps
    p.wait_for('replayPage.scanned === 36000 || replayPage.error', timeout=60)
    target = 32400  # the state after 32,400 steps: dump --step 32399
    p.eval("(() => { const s = document.getElementById('seek'); s.value = "
           "'%d'; s.dispatchEvent(new Event('input')); })()" % target)
    got = p.wait_for('replayPage.seekMs.length > 0 && '
                     '[replayPage.replay.state().hash, '
                     'replayPage.replay.state().step, replayPage.seekMs[0]]',
                     timeout=30)
    dump = json.loads(tool('dump', '--step', str(target - 1), '--json', path))
    if got[1] != target or '0x' + got[0] != dump['hash']:
        raise AssertionError('page at %s hash %s; gk-replay dump %s'
                             % (got[1], got[0], dump['hash']))
    rec = p.eval('replayPage.replay.recordedHash(%d)' % (target - 1))
    if '0x' + rec != dump['hash']:
        raise AssertionError('recorded %s, dump %s' % (rec, dump['hash']))
    if dump['state'].get('players[0].alive') is not True:
        raise AssertionError('player 0 is not alive at the 90%% mark')
    page_state = p.eval('replayPage.replay.state().state')
    for k, v in dump['state'].items():
        if page_state.get(k) != v:
            raise AssertionError('%s: page %r, dump %r'
                                 % (k, page_state.get(k), v))
    # a second seek, back, goes through a kept snapshot
    p.eval("(() => { const s = document.getElementById('seek'); s.value = "
           "'1000'; s.dispatchEvent(new Event('input')); })()")
    back = p.wait_for('replayPage.seekMs.length > 1 && replayPage.seekMs[1]',
                      timeout=30)
    if got[2] > 500 or back > 500:
        raise AssertionError('seeks took %.0f and %.0f ms' % (got[2], back))
    print('# seek to %d: %.1f ms; back to 1000: %.1f ms (from kept states)'
          % (target, got[2], back))


def a_desync_bundle_lists_the_field_gk_replay_diff_names_first(b):
    """a desync bundle opens: both states, gk-replay diff's first field"""
    before = set(glob.glob(os.path.join(desyncs, '*')))
    r = bots(3, 600, ['--perturb', '1:400:players[0].kills'])
    if r.returncode == 0:
        raise AssertionError('the perturbed gk-bot saw no desync')
    bundle = None
    deadline = time.monotonic() + 20
    while bundle is None and time.monotonic() < deadline:
        for d in new_files(os.path.join(desyncs, '*'), before):
            if all(os.path.exists(os.path.join(d, n)) for n in
                   ('replay.gkr', 'referee.state', 'peer.state', 'diff.json')):
                bundle = d
        time.sleep(0.1)
    if bundle is None:
        raise AssertionError('no complete bundle in %s' % desyncs)
    want = json.loads(tool('diff', '--json', bundle, ok=(1,)))
    first = want['fields'][0]['path']
    p = open_page(b)
    pick(p, [os.path.join(bundle, n) for n in
             ('replay.gkr', 'referee.state', 'peer.state')])
    got = p.wait_for('replayPage.bundle || replayPage.error', timeout=30)
    if not isinstance(got, dict) or got['first'] != first:
        raise AssertionError('page %r (error %r), gk-replay diff first %s'
                             % (got if not isinstance(got, dict) else
                                got['first'], p.eval('replayPage.error'),
                                first))
    if got['diff']['total'] != want['total']:
        raise AssertionError('page counts %s, gk-replay diff %s'
                             % (got['diff']['total'], want['total']))
    li = p.eval("document.querySelector('#difflist li').textContent")
    rows = p.eval("[...document.querySelectorAll('#ta tr.diff td:first-child')]"
                  ".map(td => td.textContent)")
    if not li.startswith(first + ':') or first not in rows:
        raise AssertionError('list %r, highlighted %r' % (li, rows))
    print('# %s: %d field(s) differ, first %s'
          % (os.path.basename(bundle), want['total'], first))


def files_that_are_not_replays_get_clear_errors(b):
    """a file that is not a replay, and half a bundle, get clear errors"""
    junk = os.path.join(tmp, 'notes.gkr')
    with open(junk, 'wb') as f:
        f.write(b'PK\x03\x04 this is a zip, not a replay\n' * 4)
    want = cli_text(junk)
    p = open_page(b)
    pick(p, [junk])
    v = p.wait_for('replayPage.verdict', timeout=10)
    shown = p.eval("document.getElementById('verdict').textContent")
    if v['text'] != want or want not in shown or \
            p.eval("document.getElementById('play').disabled") is not True:
        raise AssertionError('page %r (%r), gk-replay %r' % (v, shown, want))
    half = os.path.join(tmp, 'referee.state')
    with open(half, 'wb') as f:
        f.write(b'\0' * 16)
    pick(p, [half])
    err = p.eval('replayPage.error') or ''
    if 'missing: replay.gkr, peer.state' not in err:
        raise AssertionError('half a bundle: %r' % err)
    if p.eval('replayPage.bundle') is not None or p.exceptions:
        raise AssertionError('bundle %r, exceptions %r'
                             % (p.eval('replayPage.bundle'), p.exceptions))
    print('# %s; %s' % (want, err))


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    tmp = tempfile.mkdtemp(prefix='gk-replay-page-')
    replays = os.path.join(tmp, 'replays')
    desyncs = os.path.join(tmp, 'desyncs')
    os.makedirs(replays)
    os.makedirs(desyncs)
    # a fixed input delay: the bots' inputs (so the game at the perturbed
    # step) do not depend on the machine's load
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'replays': {'enabled': True, 'dir': replays},
                'desync': {'policy': 'report', 'dir': desyncs},
                'lockstep': {'input_delay': 2}})
    try:
        cdp.run([the_page_verifies_a_server_replay_to_its_end,
                 one_flipped_byte_is_named_as_gk_replay_verify_names_it,
                 seeking_to_90_percent_shows_the_state_the_file_holds,
                 a_desync_bundle_lists_the_field_gk_replay_diff_names_first,
                 files_that_are_not_replays_get_clear_errors],
                timeout=300)
    finally:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)
