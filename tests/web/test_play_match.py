#!/usr/bin/python3
"""test_play_match.py: gamekit.js playing whole matches in headless Chromium.

  test_play_match.py match    a mixed match and the survivors view's pixels
  test_play_match.py faults   a perturbed page, a reloaded page that
                              rejoins, a hidden then frozen page

A real gk-server (gkserver.py; replays and desync reports on, ENet and
WebSocket on ephemeral ports of 127.0.0.1) per case, pages of
web/test/peer.html (peer.js: one seat played by the genre's bot,
connect(url, {bot: true, seed})) in Chromium (cdp.py), and native peers
that join by the room code: gk-bot --join (the C engine over ENet, the
genre's bot; its players agree with each other step by step, and
--hashes writes its player 0's chain) and, in the perturbed-page case
only, gk-web-native (the same engine, one player, its chain in a file):
gk-bot counts every DESYNC notice of its room as a failure (exit 1),
and that case desyncs the page on purpose. Prints TAP. Skips without
web/gamekit/dist (fails then with GK_WEB_REQUIRED=1). A failing case
keeps the server's, the natives' and the pages' logs in a temp
directory and says where.

Environment: GK_SERVER, GK_BOT, GK_WEB_NATIVE, GK_REPLAY (meson sets
them).
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
sys.path.insert(0, os.path.join(ROOT, 'web', 'views', 'test'))
import cdp  # noqa: E402
import gkserver  # noqa: E402
import pngread  # noqa: E402
import views_harness  # noqa: E402
import views_survivors  # noqa: E402

STEPS = 3000
PERTURB_STEP = 600
# the kill counter only counts up: no step can undo the perturbation (a
# position can be clamped back at a wall; web/gamekit/test/test_web.py)
PERTURB_PATH = 'players[0].kills'
DROP_STEP = 1000
HIDE_STEP = 300
HIDE_S = 4.0
FREEZE_S = 4.0
PIXEL_STEP = 300
STALL_NOTICE_MS = 500
# enemies early (the pixels case wants some on screen at step 300)
CROWD = {'spawn_batch': 3, 'spawn_interval_start': 20}


class Match:
    """A server, its natives and the case's pages; logs kept on failure."""

    def __init__(self, name, config=None):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix='gk-match-')
        self.replays = os.path.join(self.tmp, 'replays')
        cfg = {'replays': {'enabled': True, 'dir': self.replays},
               'desync': {'policy': 'report',
                          'dir': os.path.join(self.tmp, 'desyncs')},
               'reconnect': {'hold_ms': 30000, 'while_away': 'stall'},
               'log_level': 'info'}
        cfg.update(config or {})
        self.srv = gkserver.GkServer(
            gkserver.server_exe(),
            ws={'static_dir': os.path.join(ROOT, 'web')}, config=cfg)
        self.natives = []
        self.pages = []

    def page(self, b):
        p = b.new_page(self.srv.url('/test/peer.html'))
        p.wait_for('window.peer && peer.ready === true', timeout=20)
        self.pages.append(p)
        return p

    def native(self, code, seed, slot):
        """A gk-web-native in room `code`; waits until it has joined."""
        hashes = os.path.join(self.tmp, 'native%d.hashes' % seed)
        err = open(os.path.join(self.tmp, 'native%d.err' % seed), 'w')
        p = subprocess.Popen([os.environ['GK_WEB_NATIVE'],
                              '127.0.0.1:%d' % self.enet_port(), code,
                              str(seed), hashes, '240'],
                             stdout=err, stderr=err, stdin=subprocess.DEVNULL)
        self.natives.append((p, hashes, err))
        self.wait_event(lambda e: e.get('event') == 'player_joined' and
                        e.get('room') == code and e.get('slot') == slot,
                        20, 'player_joined slot %d' % slot)
        return hashes

    def bots(self, code, seed, slots):
        """One gk-bot --join with a player per slot in `slots` (the free
        seats, taken in any order) in room `code`; waits until all have
        joined. Returns its --hashes file (its player 0's chain)."""
        hashes = os.path.join(self.tmp, 'bot%d.hashes' % seed)
        err = open(os.path.join(self.tmp, 'bot%d.err' % seed), 'w')
        out = os.path.join(self.tmp, 'bot%d.json' % seed)
        p = subprocess.Popen([os.environ['GK_BOT'],
                              '--server', '127.0.0.1:%d' % self.enet_port(),
                              '--genre', 'survivors', '--join', code,
                              '--players', str(len(slots)),
                              '--seed', str(seed), '--timeout', '240',
                              '--hashes', hashes],
                             stdout=open(out, 'w'), stderr=err,
                             stdin=subprocess.DEVNULL)
        self.natives.append((p, out, err))
        self.wait_event(lambda e: len(set(
            x.get('slot') for x in self.events()
            if x.get('event') == 'player_joined' and x.get('room') == code) &
            set(slots)) == len(slots), 20, 'player_joined slots %s' % slots)
        return hashes

    def enet_port(self):
        for e in self.events():
            if e.get('event') == 'listening':
                return e['port']
        raise AssertionError('no listening line')

    def events(self):
        return self.srv.events(full=True)

    def wait_event(self, pred, secs, what):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            got = [e for e in self.events() if pred(e)]
            if got:
                return got[0]
            time.sleep(0.1)
        raise AssertionError('server: no %s within %d s' % (what, secs))

    def match_end(self, code, secs):
        return self.wait_event(lambda e: e.get('event') == 'match_end' and
                               e.get('room') == code, secs, 'match_end')

    def natives_done(self):
        """Every native exited 0; a gk-bot's summary also says its room
        completed with 0 desyncs and its players agreed."""
        for p, out, _ in self.natives:
            what = 'gk-bot' if out.endswith('.json') else 'gk-web-native'
            if p.wait(30) != 0:
                raise AssertionError('%s exited %d' % (what, p.returncode))
            if what == 'gk-bot':
                with open(out) as f:
                    s = json.load(f)
                r = s['room_results'][0]
                if s['rooms_completed'] != 1 or s['desyncs'] != 0 or \
                        r['agree'] is not True:
                    raise AssertionError('gk-bot: %s' % s)

    def replay(self, code):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rooms = [r for r in self.srv.admin_get('/rooms')['rooms']
                     if r['code'] == code]
            files = glob.glob(os.path.join(self.replays, '*.gkr'))
            if not rooms and files:
                return max(files, key=os.path.getmtime)
            time.sleep(0.1)
        raise AssertionError('no finished replay of room %s' % code)

    def close(self, ok):
        for p, _, err in self.natives:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)
            err.close()
        if not ok:
            shutil.copy(self.srv.log_path, os.path.join(self.tmp, 'server.log'))
            for i, p in enumerate(self.pages):
                try:
                    ev = p.eval('JSON.stringify(peer.events)', timeout=5)
                except cdp.CdpError as e:
                    ev = repr(e)
                with open(os.path.join(self.tmp, 'page%d.txt' % i), 'w') as f:
                    f.write(p.report() + '\n' + str(ev) + '\n')
        self.srv.close()
        if ok:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print('# %s: kept the logs in %s' % (self.name, self.tmp))


def case(fn):
    """Runs fn(b, m) with a fresh Match, keeping its logs if it fails."""
    def run(b):
        m = Match(fn.__name__)
        ok = False
        try:
            fn(b, m)
            ok = True
        finally:
            m.close(ok)
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def page_chain(p):
    arr = p.eval('peer.chain.map((h) => h || null)', timeout=20)
    return {i: h for i, h in enumerate(arr) if h}


def compare(name_a, a, name_b, b, first, last):
    for s in range(first, last + 1):
        if s not in a or s not in b:
            raise AssertionError('step %d missing (%s has it: %s, %s: %s)'
                                 % (s, name_a, s in a, name_b, s in b))
        if a[s] != b[s]:
            raise AssertionError('step %d: %s hash %s, %s hash %s'
                                 % (s, name_a, a[s], name_b, b[s]))


def page_ok(p):
    err = p.eval('peer.error')
    if err:
        raise AssertionError('the page failed: %s' % err)


def three_seats(b, m, steps, seed=11, options=None, natives=False):
    """A page hosting a 3-seat room, two native players in it (one gk-bot
    --join with two players, or with natives=True two gk-web-native);
    returns p, code, the native hash files (gk-bot: one, its player 0's;
    the players agree with each other or gk-bot fails) (not started)."""
    p = m.page(b)
    code = p.eval('peer.create({maxPlayers: 3, seed: %d, steps: %d, '
                  'options: %s})' % (seed, steps, json.dumps(options)),
                  timeout=20)
    if natives:
        return p, code, [m.native(code, 21, 1), m.native(code, 22, 2)]
    return p, code, [m.bots(code, 21, [1, 2])]


def wait_across_reload(p, expr, secs):
    """wait_for that also rides out a navigation (the evaluation fails
    while the old document goes and the new one comes)."""
    deadline = time.monotonic() + secs
    last = None
    for _ in range(int(secs / 0.1) + 2):
        if time.monotonic() >= deadline:
            break
        try:
            last = p.eval(expr, timeout=5)
            if last:
                return last
        except cdp.CdpError as e:
            if p.browser._dead is not None:
                raise
            last = 'threw: %s' % e
        time.sleep(0.1)
    raise AssertionError('not true within %d s: %s (last %r)'
                         % (secs, expr, last))


def wait_ended(p, secs):
    p.wait_for('peer.ended || peer.error', timeout=secs)
    page_ok(p)


def verify(m, code):
    path = m.replay(code)
    v = subprocess.run([os.environ['GK_REPLAY'], 'verify', path],
                       capture_output=True, text=True, timeout=120)
    if v.returncode != 0:
        raise AssertionError('gk-replay verify: %s %s' % (v.stdout, v.stderr))
    return path


# --- match -------------------------------------------------------------------

@case
def a_page_plays_3000_steps_with_two_native_peers_and_agrees(b, m):
    """a page plays 3,000 steps with two gk-bot --join players; agree"""
    p, code, hashes = three_seats(b, m, STEPS)
    p.eval('peer.start()')
    end = m.match_end(code, 150)
    wait_ended(p, 30)
    m.natives_done()
    last = end['steps'] - 1
    if last + 1 < STEPS:
        raise AssertionError('the match ran %d steps, not %d' % (last + 1,
                                                                 STEPS))
    if end['desyncs'] != 0:
        raise AssertionError('the server counted %d desyncs' % end['desyncs'])
    # every player's hash of (nearly) every step reached the referee: the
    # last few of each are in flight when the match ends
    if end['hashes_compared'] < 3 * (last + 1) - 3 * 64:
        raise AssertionError('only %d hashes compared of %d steps'
                             % (end['hashes_compared'], last + 1))
    # gk-bot compared its two players step by step (natives_done: they
    # agree); its player 0's chain against the page's
    nat = gkserver.read_chain(hashes[0])
    chain = page_chain(p)
    compare('page', chain, 'gk-bot', nat, 0, last)
    if p.eval('peer.events.filter((e) => e.type === "desync").length'):
        raise AssertionError('the page heard a desync')
    path = verify(m, code)
    print('# %d steps, %d hashes compared, 0 desyncs; %s verified'
          % (last + 1, end['hashes_compared'], os.path.basename(path)))


@case
def the_survivors_view_draws_what_the_state_says_after_300_steps(b, m):
    """the survivors view after 300 live steps: players, enemies in place"""
    p, code, _ = three_seats(b, m, 0, seed=5, options=CROWD)
    p.send('Emulation.setDeviceMetricsOverride', {
        'width': 900, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False})
    # a crowd early, so there are enemies to find at step 300
    p.eval('peer.draw(true)')
    p.eval('peer.start()')
    p.wait_for('peer.last >= %d || peer.error' % PIXEL_STEP, timeout=60)
    page_ok(p)
    # a state with no level-up cards or pause banner (they dim the arena)
    got = None
    for _ in range(120):
        got = p.eval('peer.still()')
        st = got['state']
        if not st.get('paused') and not st.get('over') and not any(
                st.get('players[%d].pick_pending' % i)
                for i in range(st['players'])):
            break
        p.eval('peer.draw(true)')
        time.sleep(0.1)
    else:
        raise AssertionError('paused or a level-up pick pending for 12 s')
    time.sleep(0.3)  # a frame: the still drawing is on screen
    png = os.path.join(m.tmp, 'view.png')
    p.screenshot(png)
    st, lay = got['state'], got['layout']
    palette = p.eval('peer.palette')
    p.eval('peer.client.endMatch(2)')
    img = pngread.read(png)
    if (img.w, img.h) != (900, 900) or (lay['w'], lay['h']) != (900, 900):
        raise AssertionError('screenshot %dx%d, view %s' % (img.w, img.h, lay))
    # the checks of web/views/test (the mapping as README.md documents
    # it, each entity no later layer can cover, in its colour)
    views_harness.failures.clear()
    counts = views_survivors.sv_check_entities(
        img, st, palette, {'arenaWidth': 1600, 'arenaHeight': 1600,
                           'camera': 'arena'}, 900, 900, 'step %d' % got['step'])
    if views_harness.failures:
        raise AssertionError('; '.join(views_harness.failures[:5]))
    players = sum(v for k, v in counts.items() if k.startswith('player'))
    enemies = sum(v for k, v in counts.items() if k.startswith('enemy'))
    if players < 2 or enemies < 3:
        raise AssertionError('too few uncovered entities checked: %s (%d '
                             'enemies)' % (counts, st['enemy_count']))
    print('# step %d: checked %s (%d enemies in the state)'
          % (got['step'], sorted(counts.items()), st['enemy_count']))


# --- faults ------------------------------------------------------------------

@case
def a_perturbed_page_is_reported_at_the_next_step_with_the_field(b, m):
    """a page perturbed after step 600: desync at 601 naming the field"""
    k = PERTURB_STEP
    # gk-web-native: gk-bot would fail on the desync this case makes
    p, code, hashes = three_seats(b, m, k + 300, natives=True)
    p.eval('peer.perturb(%d, %s)' % (k, json.dumps(PERTURB_PATH)))
    p.eval('peer.start()')
    end = m.match_end(code, 60)
    wait_ended(p, 30)
    m.natives_done()
    nat = gkserver.read_chain(hashes[0])
    chain = page_chain(p)
    compare('page', chain, 'native1', nat, 0, k)
    if chain.get(k + 1) == nat.get(k + 1):
        raise AssertionError('the perturbed hash did not change at %d' % (k + 1))
    ds = [e for e in m.events() if e.get('event') == 'desync' and
          e.get('room') == code]
    if not ds or ds[0].get('step') != k + 1 or \
            ds[0].get('slot', ds[0].get('player')) != 0:
        raise AssertionError('desync logged as %s' % ds[:1])
    rep = m.wait_event(lambda e: e.get('event') == 'desync_report' and
                       e.get('room') == code, 30, 'desync_report')
    if rep.get('result') != 'diffed' or rep.get('slot') != 0:
        raise AssertionError('desync_report: %s' % rep)
    paths = [f.get('path') for f in rep.get('diff', {}).get('fields', [])]
    if rep.get('first_path') != PERTURB_PATH and PERTURB_PATH not in paths:
        raise AssertionError('desync_report names %s, %s'
                             % (rep.get('first_path'), paths))
    if p.eval('peer.ended.stats.stateRequests') < 1:
        raise AssertionError('the page answered no state request')
    print('# desync at step %d for slot 0, report %s names %s; %d desyncs'
          % (ds[0]['step'], rep['result'], PERTURB_PATH, end['desyncs']))


@case
def a_page_reloaded_at_step_1000_rejoins_and_agrees_to_the_end(b, m):
    """a page whose socket closes at step 1,000 reloads, rejoins, agrees"""
    p, code, hashes = three_seats(b, m, 0)
    p.eval('peer.dropAt(%d)' % DROP_STEP)
    p.eval('peer.start()')
    m.wait_event(lambda e: e.get('event') == 'match_start' and
                 e.get('room') == code, 20, 'match_start')
    # the reloaded page (a new document) rejoins by itself
    wait_across_reload(p, 'window.peer && peer.rejoined && peer.events.some('
                       '(e) => e.type === "resumed") || window.peer && '
                       'peer.error', 60)
    page_ok(p)
    snap = p.eval('peer.events.find((e) => e.type === "snapshot")')
    if not snap or snap['rc'] != 0:
        raise AssertionError('no snapshot adopted: %s' % snap)
    target = DROP_STEP + 1000
    p.wait_for('peer.last >= %d || peer.error' % target, timeout=60)
    page_ok(p)
    p.eval('peer.client.endMatch(2)')
    end = m.match_end(code, 30)
    wait_ended(p, 30)
    m.natives_done()
    last = end['steps'] - 1
    if end['desyncs'] != 0:
        raise AssertionError('the server counted %d desyncs' % end['desyncs'])
    nat = gkserver.read_chain(hashes[0])
    chain = page_chain(p)
    dropped = p.eval('peer.dropped')
    if dropped != DROP_STEP:
        raise AssertionError('dropped after step %s' % dropped)
    compare('page', chain, 'gk-bot', nat, 0, DROP_STEP)
    s0 = snap['step']
    if not DROP_STEP < s0 < last:
        raise AssertionError('snapshot at step %d' % s0)
    compare('page (rejoined)', chain, 'gk-bot', nat, s0, last)
    rej = [e for e in m.events() if e.get('room') == code and
           'rejoin' in e.get('event', '')]
    verify(m, code)
    print('# dropped after %d, snapshot at %d, agreed to %d; server: %s'
          % (DROP_STEP, s0, last, [e['event'] for e in rej]))


def steps_in(chain_path):
    try:
        return len(gkserver.read_chain(chain_path))
    except (OSError, ValueError):
        return 0


@case
def a_hidden_page_plays_on_and_frozen_stalls_everyone_until_removed(b, m):
    """a hidden page plays on; frozen, it stalls all until the host removes it"""
    m.srv.close()  # this case wants a quicker stall notice
    m.srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')},
        config={'replays': {'enabled': True, 'dir': m.replays},
                'stall': {'notice_ms': STALL_NOTICE_MS},
                'log_level': 'info'})
    host = m.page(b)
    code = host.eval('peer.create({maxPlayers: 3, seed: 11})', timeout=20)
    guest = m.page(b)
    slot = guest.eval('peer.join(%s, 12)' % json.dumps(code), timeout=20)
    hashes = m.bots(code, 21, [2])
    host.eval('peer.start()')
    guest.wait_for('peer.last >= %d || peer.error' % HIDE_STEP, timeout=60)
    # hidden (its window minimised): Chromium does not throttle the
    # timers of a page with an open WebSocket, so it keeps the pace
    guest.hide()
    g0, w0 = guest.eval('peer.last'), time.monotonic()
    time.sleep(HIDE_S)
    g1, w1 = guest.eval('peer.last'), time.monotonic()
    pace = (g1 - g0) / (w1 - w0)
    if pace < 30:  # 60 a second nominal; a loaded machine is slower
        raise AssertionError('hidden, the page ran %.1f steps a second (%d '
                             '-> %d)' % (pace, g0, g1))
    hid = [e for e in m.events() if e.get('event') == 'stall' and
           e.get('step', 0) >= g0]
    if hid:
        raise AssertionError('a stall while hidden: %s' % hid[:3])
    # frozen (what Chromium does to a background tab in the end): no
    # timer, no socket event
    guest.freeze()
    t0 = time.monotonic()
    at = guest.eval('peer.last')  # eval still runs in a frozen page
    time.sleep(FREEZE_S)
    # everyone waits: the host and the native ran only the steps the
    # guest's records already covered (input delay + lead)
    h0, n0 = host.eval('peer.last'), steps_in(hashes)
    time.sleep(1.0)
    h1, n1 = host.eval('peer.last'), steps_in(hashes)
    frozen = guest.eval('peer.last')
    if h1 != h0 or n1 != n0 or frozen != at:
        raise AssertionError('steps ran while frozen: host %d -> %d, native '
                             '%d -> %d, guest %d -> %d'
                             % (h0, h1, n0, n1, at, frozen))
    if h1 > at + 30:
        raise AssertionError('the host ran to %d, the frozen page stopped at '
                             '%d' % (h1, at))
    stalls = [e for e in m.events() if e.get('event') == 'stall' and
              e.get('room') == code and at < e.get('step', 0) <= h1 + 1]
    if not stalls or any(e['awaited_mask'] != 1 << slot for e in stalls):
        raise AssertionError('stall log after step %d: %s (want the mask of '
                             'slot %d)' % (at, stalls[:3], slot))
    heard = host.eval('peer.events.filter((e) => e.type === "stall")'
                      '.map((e) => e.awaited)')
    if not heard or set(heard) != {1 << slot}:
        raise AssertionError('the host heard stalls %s' % heard)
    # the host removes it; the others play on to the end
    held = time.monotonic() - t0
    host.eval('peer.client.removePlayer(%d)' % slot)
    rem = m.wait_event(lambda e: e.get('event') == 'player_removed' and
                       e.get('room') == code, 10, 'player_removed')
    if rem['slot'] != slot:
        raise AssertionError('removed %s' % rem)
    host.wait_for('peer.last >= %d || peer.error' % (h1 + 600), timeout=30)
    page_ok(host)
    host.eval('peer.client.endMatch(2)')
    end = m.match_end(code, 30)
    wait_ended(host, 30)
    m.natives_done()
    guest.resume()
    last = end['steps'] - 1
    if end['desyncs'] != 0:
        raise AssertionError('the server counted %d desyncs' % end['desyncs'])
    # no step dropped: every step 0..last in the host's and the native's
    # chains, and equal
    compare('host', page_chain(host), 'gk-bot', gkserver.read_chain(hashes), 0, last)
    verify(m, code)
    print('# hidden: %.1f steps a second; frozen at step %d for %.1f s: the '
          'others stopped at %d, %d stall notices for slot %d; removed at '
          'step %d, played on to %d' % (pace, at, held, h1, len(stalls), slot,
                                        rem['step'], last))


CASES = {
    'match': [a_page_plays_3000_steps_with_two_native_peers_and_agrees,
              the_survivors_view_draws_what_the_state_says_after_300_steps],
    'faults': [a_perturbed_page_is_reported_at_the_next_step_with_the_field,
               a_page_reloaded_at_step_1000_rejoins_and_agrees_to_the_end,
               a_hidden_page_plays_on_and_frozen_stalls_everyone_until_removed],
}

if __name__ == '__main__':
    which = sys.argv[1] if len(sys.argv) > 1 else 'match'
    cdp.require_gamekit_dist()
    cdp.run(CASES[which], timeout=280)
