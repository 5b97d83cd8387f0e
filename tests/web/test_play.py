#!/usr/bin/python3
"""test_play.py: web/index.html, the play page gk-server serves at /.

A real gk-server (tests/web/gkserver.py) with static_dir the tree's web/
and replays on, the page in headless Chromium (cdp.py), driven as a
newcomer would: the lobby form's fields and buttons, real key events
through Input.dispatchKeyEvent. Prints TAP. Skips without web/gamekit/dist
(fails then with GK_WEB_REQUIRED=1).

usage: test_play.py   (GK_SERVER: gk-server, GK_REPLAY: gk-replay)
"""
import glob
import json
import os
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

KEYS = {'ArrowRight': 39, 'ArrowLeft': 37}
srv = None
replays = None


def key(p, kind, code):
    p.send('Input.dispatchKeyEvent', {
        'type': 'keyDown' if kind == 'down' else 'keyUp', 'code': code,
        'key': code, 'windowsVirtualKeyCode': KEYS[code]})


def open_page(b, query=''):
    p = b.new_page(srv.url('/' + query))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def create(p, genre, seats, bots, options=None):
    p.eval("(() => { play.options = %s; document.getElementById('genre')"
           ".value = '%s'; document.getElementById('seats').value = %d; "
           "document.getElementById('bots').value = %d; "
           "document.getElementById('create').click(); })()"
           % (json.dumps(options),
              genre, seats, bots))
    return p.wait_for('play.code || play.error', timeout=20)


def expect_ok(p):
    err = p.eval('play.error')
    if err:
        raise AssertionError('the page failed: %s' % err)


def start(p):
    p.eval("document.getElementById('start').click()")
    p.wait_for('play.started && play.step >= 0 || play.error', timeout=20)
    expect_ok(p)


def room(code):
    rooms = [r for r in srv.admin_get('/rooms')['rooms'] if r['code'] == code]
    if len(rooms) != 1:
        raise AssertionError('admin /rooms has no room %s' % code)
    return rooms[0]


def the_page_plays_survivors_with_three_server_bots(b):
    """the index page plays survivors with 3 server bots; replay verifies"""
    p = open_page(b)
    code = create(p, 'survivors', 1, 3)
    expect_ok(p)
    start(p)
    x0 = p.eval("play.client.state().state['players[0].x']")
    key(p, 'down', 'ArrowRight')
    p.wait_for('play.step >= 300 || play.error', timeout=60)
    expect_ok(p)
    x1 = p.eval("play.client.state().state['players[0].x']")
    r = room(code)
    kinds = [pl['transport'] for pl in r['players']]
    if r['state'] != 'playing' or sorted(kinds) != ['bot'] * 3 + ['websocket']:
        raise AssertionError('room %s: %s, players %s' % (code, r['state'],
                                                          kinds))
    key(p, 'up', 'ArrowRight')
    if not x1 > x0:
        raise AssertionError('ArrowRight held: x %s -> %s' % (x0, x1))
    if r['desyncs'] != 0 or p.eval('play.desyncs') != 0:
        raise AssertionError('desyncs: server %s, page %s'
                             % (r['desyncs'], p.eval('play.desyncs')))
    p.eval('play.client.close()')
    path = wait_replay(code)
    v = subprocess.run([os.environ['GK_REPLAY'], 'verify', path],
                       capture_output=True, text=True, timeout=60)
    if v.returncode != 0:
        raise AssertionError('gk-replay verify: %s %s' % (v.stdout, v.stderr))
    print('# x %s -> %s; %s verified' % (x0, x1, os.path.basename(path)))


def wait_replay(code):
    deadline = time.time() + 15
    while time.time() < deadline:
        rs = [r for r in srv.admin_get('/rooms')['rooms'] if r['code'] == code]
        files = glob.glob(os.path.join(replays, '*.gkr'))
        if not rs and files:
            return max(files, key=os.path.getmtime)
        time.sleep(0.1)
    raise AssertionError('no finished replay of room %s' % code)


def a_second_tab_joins_by_the_room_link(b):
    """a second tab joins by the ?room=CODE link; both play, 0 desyncs"""
    a = open_page(b)
    code = create(a, 'survivors', 2, 0)
    expect_ok(a)
    link = a.eval("document.getElementById('link').href")
    if not link.endswith('?room=' + code):
        raise AssertionError('share link %s' % link)
    c = open_page(b, '?room=' + code)
    c.wait_for('play.slot === 1 || play.error', timeout=20)
    expect_ok(c)
    start(a)
    for p in (a, c):
        p.wait_for('play.step >= 200 || play.error', timeout=60)
        expect_ok(p)
    r = room(code)
    kinds = [pl['transport'] for pl in r['players']]
    if kinds != ['websocket', 'websocket'] or r['desyncs'] != 0:
        raise AssertionError('room %s: players %s, desyncs %s'
                             % (code, kinds, r['desyncs']))
    if a.eval('play.desyncs') or c.eval('play.desyncs'):
        raise AssertionError('a page counted a desync')


CORRIDOR = '#' * 36 + '\n#@' + ' ' * 30 + '$.#\n' + '#' * 36 + '\n'
TRACK = ("(() => { window.moves = []; let last = null; "
         "play.client.on('step', (step) => { const s = play.client.state()"
         ".state; const x = s['pusher[0].x']; if (last !== null && x !== last)"
         " moves.push(step); last = x; }); })()")


def push_puzzle_repeats_a_held_arrow_in_steps(b):
    """push-puzzle: held arrow moves at 0, 12, 18, 24...; a tap: next step"""
    p = open_page(b)
    create(p, 'push-puzzle', 1, 0, {'levels': CORRIDOR})
    expect_ok(p)
    start(p)
    p.eval(TRACK)
    # the step the next sample is for: the match's first step, its input
    # delay and the samples taken (docs: gk_net_peer.h, the schedule)
    p.eval("addEventListener('keydown', () => { const m = play.client.match;"
           " window.atKey = m.firstStep + m.inputDelay + "
           "play.client.stats().samples; }, true)")
    key(p, 'down', 'ArrowRight')
    p.wait_for('moves.length >= 5 || play.error', timeout=30)
    key(p, 'up', 'ArrowRight')
    m, held_at = p.eval('[moves.slice(0, 5), atKey]')
    if m[0] != held_at:
        raise AssertionError('the press sampled for step %s moved at %s'
                             % (held_at, m[0]))
    gaps = [m[i + 1] - m[i] for i in range(4)]
    if gaps != [12, 6, 6, 6]:
        raise AssertionError('held: moves at steps %s (gaps %s, want 12 6 6 6)'
                             % (m, gaps))
    p.wait_for('play.step >= moves[moves.length - 1] + 20', timeout=10)
    n = p.eval('moves.length')
    key(p, 'down', 'ArrowRight')
    key(p, 'up', 'ArrowRight')
    p.wait_for('moves.length > %d' % n, timeout=10)
    p.wait_for('play.step >= moves[moves.length - 1] + 20', timeout=10)
    tap, at = p.eval('[moves.slice(%d), atKey]' % n)
    if len(tap) != 1 or tap[0] != at:
        raise AssertionError('a tap between steps: moves at %s, sampled '
                             'steps at the key %s' % (tap, at))
    print('# held: %s; tap at sample %s moved at step %s' % (m, at, tap[0]))


if __name__ == '__main__':
    if not os.path.exists(os.path.join(ROOT, 'web', 'gamekit', 'dist',
                                       'gamekit.wasm')):
        why = 'web/gamekit/dist is not built (sh web/gamekit/build.sh)'
        if os.environ.get('GK_WEB_REQUIRED') == '1':
            print('Bail out! %s, and GK_WEB_REQUIRED=1' % why)
            sys.exit(1)
        print('1..0 # SKIP %s' % why)
        sys.exit(0)
    replays = tempfile.mkdtemp(prefix='gk-play-rep-')
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'replays': {'enabled': True, 'dir': replays}})
    try:
        cdp.run([the_page_plays_survivors_with_three_server_bots,
                 a_second_tab_joins_by_the_room_link,
                 push_puzzle_repeats_a_held_arrow_in_steps], timeout=200)
    finally:
        srv.close()
