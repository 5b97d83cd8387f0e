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
    # survivors predicts: the page draws the head, never behind the
    # confirmed state and never hashed; the bar names the confirmed step
    head, conf, bar = p.eval("[play.client.predictedState(), "
                             "play.client.state().step, "
                             "document.getElementById('bar').textContent]")
    # (a head that has caught up, no step predicted at that moment, is the
    # confirmed state itself, with its hash)
    if head is None or head['step'] < conf or 'step ' not in bar or (
            head['step'] > conf and int(head['hash'], 16) != 0):
        raise AssertionError('head %s, confirmed %s, bar %r' % (
            head and (head['step'], head['hash']), conf, bar))
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


def a_reloaded_page_takes_its_seat_back_from_a_snapshot(b):
    """a page reloaded mid-match takes its seat back; 0 desyncs; verifies"""
    global srv
    main_srv = srv
    rep = tempfile.mkdtemp(prefix='gk-play-hold-')
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'replays': {'enabled': True, 'dir': rep},
                'reconnect': {'hold_ms': 20000, 'while_away': 'stall'}})
    try:
        p = open_page(b)
        code = create(p, 'survivors', 1, 3)
        expect_ok(p)
        start(p)
        p.wait_for('play.step >= 200 || play.error', timeout=30)
        expect_ok(p)
        before = p.eval('play.step')
        p.send('Page.reload', {'ignoreCache': False})
        got = p.wait_for('window.play && (play.rejoined && play.step >= %d '
                         '|| play.error)' % (before + 200), timeout=40)
        expect_ok(p)
        if not got or p.eval('play.slot') != 0:
            raise AssertionError('the reloaded page: slot %s, step %s'
                                 % (p.eval('play.slot'), p.eval('play.step')))
        ev = [e for e in srv.events(full=True)
              if e.get('event') == 'player_rejoined' and e.get('room') == code]
        if len(ev) != 1:
            raise AssertionError('player_rejoined logged %d times' % len(ev))
        if room(code)['desyncs'] != 0 or p.eval('play.desyncs') != 0:
            raise AssertionError('desyncs after the rejoin')
        p.eval('play.client.endMatch()')
        p.wait_for('play.ended', timeout=20)
        if p.eval('sessionStorage.length') != 0:
            raise AssertionError('the seat is still kept after the end')
        path = wait_replay(code, rep)
        v = subprocess.run([os.environ['GK_REPLAY'], 'verify', path],
                           capture_output=True, text=True, timeout=60)
        if v.returncode != 0:
            raise AssertionError('gk-replay verify: %s %s'
                                 % (v.stdout, v.stderr))
        print('# reloaded at step %d, rejoined from the snapshot at step %s;'
              ' %s verified' % (before, ev[0].get('snapshot_step'),
                                os.path.basename(path)))
    finally:
        srv.close()
        srv = main_srv


def wait_replay(code, folder=None):
    deadline = time.time() + 15
    while time.time() < deadline:
        rs = [r for r in srv.admin_get('/rooms')['rooms'] if r['code'] == code]
        files = glob.glob(os.path.join(folder or replays, '*.gkr'))
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
    shown = a.eval('play.shown')
    # the short code people read, without the wire's '2' padding
    if not (4 <= len(shown) <= 8 and code == shown.ljust(16, '2')
            and link.endswith('?room=' + shown)
            and a.eval("document.getElementById('code').textContent")
            == shown):
        raise AssertionError('share link %s, shown %r, code %s'
                             % (link, shown, code))
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
# The page's state after each step event: when pusher[0].x changed between
# two states the page held, [lo, hi, dx]: dx moves in steps lo..hi (a call
# can run several steps). A state's `step` counts the steps run, so the
# state after step k says k + 1; the lobby and keys count steps from 0.
TRACK = ("(() => { window.obs = []; let last = play.client.state(); "
         "play.client.on('step', () => { const s = play.client.state(); "
         "if (s.step === last.step) return; const x = s.state['pusher[0].x']"
         ", lx = last.state['pusher[0].x']; if (x !== lx) obs.push([last.step"
         ", s.step - 1, x - lx]); last = s; }); })()")
# the step the next sample is for when a key goes down: the match's first
# step, its input delay and the samples taken (gk_net_peer.h, the schedule)
AT_KEY = ("addEventListener('keydown', () => { const m = play.client.match;"
          " window.atKey = m.firstStep + m.inputDelay + "
          "play.client.stats().samples; }, true)")


def check_moves(obs, want, what):
    """Each observation's dx must be the number of wanted steps in it."""
    for lo, hi, dx in obs:
        n = sum(1 for e in want if lo <= e <= hi)
        if n != dx:
            raise AssertionError('%s: %d moves in steps %d..%d, want %d '
                                 '(wanted at %s; seen %s)'
                                 % (what, dx, lo, hi, n, want, obs))


MOVED = 'obs.reduce((n, o) => n + o[2], 0)'  # moves seen so far


def push_puzzle_repeats_a_held_arrow_in_steps(b):
    """push-puzzle: held arrow moves at 0, 12, 18, 24...; a tap: next step"""
    p = open_page(b)
    create(p, 'push-puzzle', 1, 0, {'levels': CORRIDOR})
    expect_ok(p)
    start(p)
    p.eval(TRACK)
    p.eval(AT_KEY)
    key(p, 'down', 'ArrowRight')
    p.wait_for('%s >= 5 || play.error' % MOVED, timeout=30)
    key(p, 'up', 'ArrowRight')
    obs, at = p.eval('[obs.slice(), atKey]')
    want = [at] + [at + 12 + 6 * k for k in range(4)]
    held = [o for o in obs if o[0] <= want[-1]]
    check_moves(held, want, 'held')
    # quiet for 20 steps (no repeat once released), then a tap
    p.wait_for('play.step >= %d' % (obs[-1][1] + 20), timeout=10)
    n = len(p.eval('obs'))
    key(p, 'down', 'ArrowRight')
    key(p, 'up', 'ArrowRight')
    at2 = p.eval('atKey')
    p.wait_for('play.step >= %d' % (at2 + 20), timeout=10)
    tap = p.eval('obs.slice(%d)' % n)
    check_moves(tap, [at2], 'a tap between steps')
    if sum(o[2] for o in tap) != 1:
        raise AssertionError('a tap between steps: moves %s' % tap)
    print('# held from step %d: seen %s; tap for step %d: seen %s'
          % (at, held, at2, tap))

# the upgrade ids (web/views/survivors.js UPGRADES) to the counters they
# raise in the state (Heal, id 6, raises none)
UPGRADE_FIELDS = ['weapons[0].level', 'weapons[1].level', 'weapons[2].level',
                  'ups_health', 'ups_speed', 'ups_magnet']
CROWD = {'spawn_interval_start': 4, 'spawn_interval_min': 2, 'spawn_batch': 3}


def a_clicked_level_up_card_is_the_pick(b):
    """survivors: a click on a level-up card picks it in the next steps"""
    p = open_page(b)
    create(p, 'survivors', 1, 0, CROWD)
    expect_ok(p)
    start(p)
    st = "play.client.state().state"
    p.wait_for("%s['players[0].pick_pending'] || play.error" % st, timeout=60)
    expect_ok(p)
    # the frame after the pick appeared has drawn the cards
    cards = p.wait_for("(() => { const c = play.view.layout().cards; "
                       "return c.length === 3 ? c : null; })()", timeout=10)
    timer, step0, before = p.eval("[%s['players[0].pick_timer'], play.step, "
                                  "%s]" % (st, st))
    c = cards[1]
    x, y = c['x'] + c['w'] / 2, c['y'] + c['h'] / 2
    top = p.eval("(() => { const r = document.getElementById('c')"
                 ".getBoundingClientRect(); return [r.left, r.top]; })()")
    for kind in ('mousePressed', 'mouseReleased'):
        p.send('Input.dispatchMouseEvent', {
            'type': kind, 'x': top[0] + x, 'y': top[1] + y,
            'button': 'left', 'clickCount': 1})
    p.wait_for("!%s['players[0].pick_pending'] || play.error" % st,
               timeout=10)
    expect_ok(p)
    step1, after = p.eval("[play.step, %s]" % st)
    # the upgrade taken is card 2's: its counter went up (Heal has none)
    opts = [before['players[0].options[%d]' % k] for k in range(3)]
    if opts[1] < len(UPGRADE_FIELDS):
        f = 'players[0].' + UPGRADE_FIELDS[opts[1]]
        if after[f] != before[f] + 1:
            raise AssertionError('card 2 (upgrade %d): %s %s -> %s'
                                 % (opts[1], f, before[f], after[f]))
    # the genre picks by itself only after pick_timeout_steps (600)
    if step1 - step0 > 60:
        raise AssertionError('the pick came %d steps after the click '
                             '(timer %d): not the click' % (step1 - step0,
                                                            timer))
    if p.eval("play.desyncs") != 0:
        raise AssertionError('desyncs')
    print('# card 2 (upgrade %d of %s) clicked at step %d, picked by step %d'
          % (opts[1], opts, step0, step1))


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    replays = tempfile.mkdtemp(prefix='gk-play-rep-')
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'replays': {'enabled': True, 'dir': replays}})
    try:
        cdp.run([the_page_plays_survivors_with_three_server_bots,
                 a_second_tab_joins_by_the_room_link,
                 push_puzzle_repeats_a_held_arrow_in_steps,
                 a_clicked_level_up_card_is_the_pick,
                 a_reloaded_page_takes_its_seat_back_from_a_snapshot],
                timeout=280)
    finally:
        srv.close()
