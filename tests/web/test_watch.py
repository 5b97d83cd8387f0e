#!/usr/bin/python3
"""test_watch.py: web/watch.html, the watch page on gk-server's WebSocket port.

A real gk-server (tests/web/gkserver.py, static_dir the tree's web/), a
room of native gk-bot players over ENet (tools/bot, `--hashes` writes room
0 player 0's hash after every step), and the watch page in headless
Chromium (cdp.py) opened as /watch.html?room=CODE[&token=HEX]. Prints TAP.
Skips without web/gamekit/dist (fails then with GK_WEB_REQUIRED=1). A
failing case prints the tail of the server's log.

usage: test_watch.py [CASE...]   (GK_SERVER, GK_BOT, GK_TOKEN: the tools;
                                  default: the in-tree build's)
"""
import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

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

# a spectator 10 steps behind; 120 steps (2 s at 60 steps/s) further
# behind, a newer snapshot
SPECTATOR = {'delay_steps': 10, 'behind_steps': 120, 'per_room': 4,
             'max': 64}
# Many enemies at once; the players never fall (P2 must be there to
# follow: in a crowd a gk-bot player could fall before the case looked,
# and it failed 'P2 was never alive to follow'), and a level-up pick,
# which dims the arena, waits one step instead of the bots' random
# seconds.
CROWD = {'spawn_interval_start': 4, 'spawn_interval_min': 2, 'spawn_batch': 3,
         'player_health': 1000000, 'pick_timeout_steps': 1}


def tool(env, *rel):
    exe = os.environ.get(env) or os.path.join(ROOT, 'build', *rel)
    if not os.access(exe, os.X_OK):
        raise RuntimeError('no %s at %s (set %s)' % (rel[-1], exe, env))
    return exe


class Room:
    """A gk-server and one room of gk-bot players (survivors, ENet)."""

    def __init__(self, steps, players=2, options=None, auth=False,
                 extra=()):
        self.tmp = tempfile.mkdtemp(prefix='gk-watch-')
        config = {'spectator': SPECTATOR, 'log_level': 'info'}
        self.key = None
        if auth:
            self.key = os.path.join(self.tmp, 'server.key')
            subprocess.run([tool('GK_TOKEN', 'tools', 'token', 'gk-token'),
                            'keygen', '--out', self.key], check=True,
                           timeout=20, capture_output=True)
            os.chmod(self.key, 0o600)
            config['auth'] = {'mode': 'token', 'key_file': self.key}
        self.srv = gkserver.GkServer(
            gkserver.server_exe(),
            ws={'static_dir': os.path.join(ROOT, 'web')}, config=config)
        self.hashes = os.path.join(self.tmp, 'bot.hashes')
        argv = [tool('GK_BOT', 'tools', 'bot', 'gk-bot'), '--server',
                '127.0.0.1:%d' % self.enet_port(), '--genre', 'survivors',
                '--rooms', '1', '--players', str(players), '--steps',
                str(steps), '--seed', '7', '--hashes', self.hashes,
                '--timeout', '120']
        if options:
            argv += ['--options', json.dumps(options)]
        if auth:
            argv += ['--key', self.key]
        argv += list(extra)
        self.out = open(os.path.join(self.tmp, 'bot.json'), 'w+')
        self.bot = subprocess.Popen(argv, stdout=self.out,
                                    stderr=subprocess.STDOUT)
        self.code = self.wait_event('match_start', 20)['room']

    def enet_port(self):
        for ev in self.srv.events():
            if ev.get('event') == 'listening':
                return ev['port']
        raise AssertionError('no listening line')

    def wait_event(self, name, secs):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            for ev in self.srv.events():
                if ev.get('event') == name:
                    return ev
            if self.bot.poll() is not None and name != 'match_end':
                raise AssertionError('gk-bot exited %d before %s'
                                     % (self.bot.returncode, name))
            time.sleep(0.05)
        raise AssertionError('no %s in the server log within %d s'
                             % (name, secs))

    def finish(self, secs=90, want_rc=0):
        """gk-bot's exit status want_rc and summary; room 0 player 0's
        chain."""
        try:
            rc = self.bot.wait(secs)
        except subprocess.TimeoutExpired:
            raise AssertionError('gk-bot still runs after %d s' % secs)
        self.out.seek(0)
        text = self.out.read()
        if rc != want_rc:
            raise AssertionError('gk-bot exited %d: %s' % (rc, text[-2000:]))
        chain = gkserver.read_chain(self.hashes)
        res = json.loads(text)['room_results'][0]
        if want_rc != 0:
            return res, chain
        # the players agree with each other step by step (gk-bot compares
        # them) and the server compared each one's hashes with its own
        if res['agree'] is not True or res['desyncs'] != 0 or \
                res['final_hash'] != chain[max(chain)]:
            raise AssertionError('gk-bot: %s' % res)
        return res, chain

    def metrics(self):
        url = 'http://127.0.0.1:%d/metrics' % self.srv.admin_port
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith('#'):
                name, _, value = line.rpartition(' ')
                out[name] = float(value)
        return out

    def room_json(self):
        rs = [r for r in self.srv.admin_get('/rooms')['rooms']
              if r['code'] == self.code]
        return rs[0] if rs else None

    def mint(self, client, spectator=True):
        argv = [tool('GK_TOKEN', 'tools', 'token', 'gk-token'), 'mint',
                '--key', self.key, '--client', str(client), '--join', self.code]
        if spectator:
            argv.append('--spectator')
        r = subprocess.run(argv, check=True, timeout=20, capture_output=True,
                           text=True)
        t = r.stdout.strip()
        return base64.urlsafe_b64decode(t + '=' * (-len(t) % 4)).hex()

    def close(self, failed):
        if self.bot.poll() is None:
            self.bot.kill()
            self.bot.wait(5)
        self.out.close()
        self.srv.close()
        if failed:
            print('# server log (tail):')
            for line in self.srv.final_log.splitlines()[-40:]:
                print('# ' + line)


def with_room(steps, **kw):
    """Runs case(b, room) with a fresh Room, closed after it."""
    def wrap(case):
        def run(b):
            room = Room(steps, **kw)
            failed = True
            try:
                case(b, room)
                failed = False
            finally:
                room.close(failed)
        run.__name__ = case.__name__
        run.__doc__ = case.__doc__
        return run
    return wrap


def open_watch(b, room, query):
    p = b.new_page(room.srv.url('/watch.html' + query))
    p.send('Page.bringToFront')
    p.wait_for('window.watch && window.watch.ready === true', timeout=20)
    return p


def page_chain(p):
    return {int(k): v for k, v in p.eval('watch.hashes').items()}


def expect_no_errors(p):
    errs = p.eval('watch.errors')
    if errs:
        raise AssertionError('the page says: %s' % errs)


def agree(page, bots, first, last, what):
    for s in range(first, last + 1):
        if s not in page:
            raise AssertionError('%s: the page has no hash of step %d' %
                                 (what, s))
        if bots.get(s) != page[s]:
            raise AssertionError('%s: step %d: page %s, players %s' %
                                 (what, s, page[s], bots.get(s)))


def wait_end(p, last):
    p.wait_for('watch.ended && watch.step >= %d || watch.errors.length'
               % last, timeout=30)
    expect_no_errors(p)


@with_room(900)
def a_watch_page_agrees_with_the_players_to_the_end(b, room):
    """a watch page on gk-bots: every step's hash is the players' to the end"""
    p = open_watch(b, room, '?room=' + room.code)
    p.wait_for('watch.started && watch.step >= 0 || watch.errors.length',
               timeout=20)
    expect_no_errors(p)
    r = room.room_json()
    if r is None or r['spectators'] != 1:
        raise AssertionError('admin /rooms: %s' % r)
    summary, bots = room.finish()
    last = max(bots)
    wait_end(p, last)
    chain = page_chain(p)
    first = min(chain)
    agree(chain, bots, first, last, 'the watch page')
    if max(chain) != last or p.eval('watch.jumps.length') != 0:
        raise AssertionError('page ran to %d (players %d), jumps %s'
                             % (max(chain), last, p.eval('watch.jumps')))
    m = room.metrics()
    want = {'gk_spectators_joined_total': 1, 'gk_spectator_desyncs_total': 0,
            'gk_spectator_refreshes_total': 0, 'gk_spectators_refused_total': 0}
    got = {k: m.get(k) for k in want}
    if got != want:
        raise AssertionError('metrics %s, want %s' % (got, want))
    compared = m.get('gk_spectator_hashes_total', 0)
    # the page reports every step it ran; the server compares those it ran
    if not (last - first) * 0.9 <= compared <= last - first + 1:
        raise AssertionError('%d spectator hashes compared for steps %d..%d'
                             % (compared, first, last))
    panel = p.eval("document.getElementById('panel').innerText")
    for want_text in ('P1', 'P2', 'step %d' % last, 'input delay',
                      'stalls 0', 'desyncs 0', 'match ended'):
        if want_text not in panel:
            raise AssertionError('the panel lacks %r: %s' % (want_text, panel))
    print('# steps %d..%d agree with the players (final %s, agree %s); '
          '%d spectator hashes compared' % (
              first, last, bots[last], summary['agree'],
              compared))


@with_room(1500)
def a_paused_watch_page_jumps_to_a_newer_snapshot_and_agrees(b, room):
    """a watch page paused past behind_steps jumps to a newer snapshot, agrees"""
    p = open_watch(b, room, '?room=' + room.code)
    p.wait_for('watch.step >= 200 || watch.errors.length', timeout=30)
    expect_no_errors(p)
    # the page's JavaScript paused (a frozen page, Page Lifecycle, would
    # lose its WebSocket to the back-forward cache): its socket keeps
    # taking bytes, its engine runs nothing and acknowledges nothing
    paused_at = p.eval('watch.step')
    p.send('Debugger.enable')
    p.send('Debugger.pause')
    time.sleep(4.0)  # 240 steps: past delay_steps + behind_steps
    p.send('Debugger.resume')
    p.send('Debugger.disable')
    p.wait_for('watch.jumps.length >= 1 || watch.errors.length', timeout=20)
    expect_no_errors(p)
    # the last jump and the page's line about it, read in one evaluation:
    # a page that falls behind again jumps again (a busy machine)
    j, text = p.wait_for("document.getElementById('jump').textContent && "
                         "[watch.jumps[watch.jumps.length - 1], "
                         "document.getElementById('jump').textContent]", 5)
    if 'jumped from step %d to %d' % (j['from'], j['to']) not in text:
        raise AssertionError('the page shows %r for %s' % (text, j))
    # it skipped steps, and it came back well past where it stopped
    if not (j['to'] > j['from'] + 1 and
            j['to'] > paused_at + SPECTATOR['behind_steps']):
        raise AssertionError('a jump of %s, paused at step %d'
                             % (j, paused_at))
    summary, bots = room.finish()
    last = max(bots)
    wait_end(p, last)
    chain = page_chain(p)
    # every step the page ran agrees; after the last jump (a later one if
    # the page fell behind again), every one to the end
    jumps = p.eval('watch.jumps')
    agree({s: chain[s] for s in chain}, bots, jumps[-1]['to'], last,
          'after the jump')
    for s, h in chain.items():
        if bots.get(s) != h:
            raise AssertionError('step %d: page %s, players %s'
                                 % (s, h, bots.get(s)))
    m = room.metrics()
    if m.get('gk_spectator_refreshes_total', 0) < 1 or \
            m.get('gk_spectator_desyncs_total') != 0:
        raise AssertionError('refreshes %s, spectator desyncs %s' % (
            m.get('gk_spectator_refreshes_total'),
            m.get('gk_spectator_desyncs_total')))
    print('# paused at step %d; jumps %s; %d steps ran, all agree; the page '
          'says %r' % (paused_at, jumps, len(chain), text))


@with_room(900, auth=True)
def in_token_mode_a_spectator_token_watches_and_others_are_refused(b, room):
    """token mode: a spectator token watches; none, wrong or bad hex: an error"""
    good = open_watch(b, room, '?room=%s&token=%s' % (room.code,
                                                room.mint(1)))
    good.wait_for('watch.step >= 30 || watch.errors.length', timeout=20)
    expect_no_errors(good)
    cases = []
    none = open_watch(b, room, '?room=' + room.code)
    # the sentences of web/gamekit/constants.js (gk_err.h GK_ERRNO_SAY),
    # whole, never the server's text or a raw code
    cases.append((none, 'This server needs a connect token. Give a '
                  'spectator token (?token=HEX or the form).', ''))
    bad = bytearray.fromhex(room.mint(2))
    bad[-5] ^= 0x01  # one byte of the sealed part
    wrong = open_watch(b, room, '?room=%s&token=%s' % (room.code, bad.hex()))
    cases.append((wrong, 'The token is not from this server, or it was '
                  'changed.', ''))
    player = open_watch(b, room, '?room=%s&token=%s' % (
        room.code, room.mint(3, spectator=False)))
    cases.append((player, "The token is for another role (a player's or a "
                  "spectator's). This one is a player's token, not a "
                  "spectator's.", ''))
    form = open_watch(b, room, '')
    form.eval("document.getElementById('code').value = %s; "
              "document.getElementById('token').value = 'abcz'; "
              "document.getElementById('watch').click()"
              % json.dumps(room.code))
    cases.append((form, 'only hex digits', ''))
    short = open_watch(b, room, '?room=%s&token=abcd' % room.code)
    cases.append((short, '296 hex digits, this one has 4', ''))
    for p, text, code in cases:
        p.wait_for('watch.errors.length > 0', timeout=15)
        shown = p.eval("document.getElementById('status').textContent")
        if text not in shown or code not in shown or p.eval('watch.started'):
            raise AssertionError('the page shows %r, want %r %r'
                                 % (shown, text, code))
        print('# %s' % shown)
    # the form works again after a refusal: with a fresh token, it watches
    none.eval("document.getElementById('token').value = %s; "
              "document.getElementById('watch').click()"
              % json.dumps(room.mint(4)))
    none.wait_for('watch.started && watch.step >= 0', timeout=20)
    room.finish()
    wait_end(good, 0)


def follow_a_player(p, tmp):
    """The camera select set to follow P2: P2 is drawn, in its colour,
    where its state and the view's mapping put it, zoomed in from the
    whole arena, with the minimap."""
    arena_s = p.eval('watch.view.layout().s')
    p.eval("(() => { const s = document.getElementById('camera'); "
           "s.value = '1'; s.dispatchEvent(new Event('change')); "
           "watch.hold = false; })()")
    for _ in range(40):
        time.sleep(0.25)
        at = p.eval("""(() => {
          const g = watch.drawnState, m = watch.view.layout();
          if (!g || !g['players[1].alive'] || g.paused) return null;
          for (let i = 0; i < g.players; i++)  // a pick dims the arena
            if (g[`players[${i}].pick_pending`]) return null;
          watch.hold = true;
          return { x: m.ox + g['players[1].x'] / 65536 * m.s,
                   y: m.oy + g['players[1].y'] / 65536 * m.s, s: m.s,
                   minimap: m.minimap };
        })()""")
        if at:
            break
    else:
        raise AssertionError('P2 was never alive to follow')
    time.sleep(0.2)
    png = os.path.join(tmp, 'watch-follow.png')
    _, _, rows = cdp.decode_png(p.screenshot(png))
    x, y = int(round(at['x'])), int(round(at['y']))
    px = rows[y][4 * x:4 * x + 3]
    want = (0xff, 0x9f, 0x1c)  # PLAYER_COLORS[1]
    if not all(abs(px[i] - want[i]) <= 40 for i in range(3)) or \
            not at['s'] > arena_s or not at['minimap']:
        raise AssertionError('following P2: pixel %s at (%d, %d), scale %s '
                             '(arena %s), minimap %s; %s' % (
                                 list(px), x, y, at['s'], arena_s,
                                 at['minimap'], png))
    print('# follow P2: drawn at (%d, %d), scale %.2f (arena %.2f); %s'
          % (x, y, at['s'], arena_s, png))


@with_room(1200, options=CROWD)
def a_watch_page_draws_the_state_it_holds(b, room):
    """a watch page's screenshot shows each player and enemy where its state says"""
    p = open_watch(b, room, '?room=' + room.code)
    p.wait_for('watch.step >= 300 || watch.errors.length', timeout=40)
    expect_no_errors(p)
    page = p.eval("import('/views/survivors.js').then((v) => ({ colors: "
                  "v.COLORS, player_colors: v.PLAYER_COLORS }))")
    tmp = tempfile.mkdtemp(prefix='gk-watch-png-')
    for attempt in range(8):
        # hold the drawing at a state with no pause and no pick pending
        # (those dim the arena)
        st = p.wait_for(
            "(() => { const s = watch.drawnState; if (!s || s.paused) "
            "return null; for (let i = 0; i < s.players; i++) "
            "if (s[`players[${i}].pick_pending`]) return null; "
            "watch.hold = true; return s; })()", timeout=40)
        box = p.eval("(() => { const r = document.getElementById('c')"
                     ".getBoundingClientRect(); return [r.left, r.top, "
                     "r.width, r.height]; })()")
        if box[0] != 0 or box[1] != 0:
            raise AssertionError('the canvas is at %s' % box)
        png = os.path.join(tmp, 'watch%d.png' % attempt)
        p.screenshot(png)
        img = pngread.read(png)
        views_harness.failures.clear()
        counts = views_survivors.sv_check_entities(
            img, st, page, {'arenaWidth': 1600, 'arenaHeight': 1600,
                            'camera': 'arena'}, int(box[2]), int(box[3]),
            'watch')
        if views_harness.failures:
            raise AssertionError('; '.join(views_harness.failures[:5]))
        players = sum(v for k, v in counts.items() if k.startswith('player'))
        if players >= 1:
            print('# step %s drawn: checked %s' % (st['step'],
                                                   sorted(counts.items())))
            follow_a_player(p, tmp)
            room.finish()
            return
        p.eval('watch.hold = false')  # every player covered: another state
        time.sleep(0.5)
    raise AssertionError('no drawn state with a player in view')


PERTURB_STEP = 500


@with_room(900, extra=['--perturb', '1:%d:players[1].kills' % PERTURB_STEP])
def the_watch_page_shows_the_stalls_and_desyncs_the_server_notices(b, room):
    """the watch page shows a stall and a desync the server notices"""
    p = open_watch(b, room, '?room=' + room.code)
    p.wait_for('watch.step >= 200 || watch.errors.length', timeout=30)
    expect_no_errors(p)
    # every player stops: the server's stall notice (stall.notice_ms, 1 s)
    room.bot.send_signal(signal.SIGSTOP)
    try:
        p.wait_for('watch.stalls.length >= 1', timeout=10)
    finally:
        room.bot.send_signal(signal.SIGCONT)
    st = p.eval('watch.stalls[0]')
    # the stopped gk-bot plays both seats; one of them may have sent its
    # input for the stalled step before the stop, so it names one or both
    if st['awaited'] & 3 == 0 or st['awaited'] & ~3:
        raise AssertionError('a stall awaiting %s, want slot 0, 1 or both'
                             % st)
    waited = ', '.join(str(i) for i in range(2) if st['awaited'] >> i & 1)
    # slot 1 changes its own state after PERTURB_STEP: a desync there
    d = p.wait_for('watch.desyncs[0]', timeout=30)
    if d['player'] != 1 or d['step'] != PERTURB_STEP + 1:
        raise AssertionError('desync notice %s' % d)
    _, bots = room.finish(want_rc=1)
    last = max(bots)
    wait_end(p, last)
    chain = page_chain(p)
    agree(chain, bots, min(chain), last, 'the watch page (slot 0 agrees)')
    panel = p.eval("document.getElementById('health').textContent")
    want = 'desyncs 1 (last: P2 at step %d)' % (PERTURB_STEP + 1)
    if 'stalls 1 (last at step %d, waiting for %s)' % (
            st['step'], ', '.join('P%d' % (int(k) + 1)
                                  for k in str(waited).split(', '))) \
            not in panel or want not in panel:
        raise AssertionError('the health line says %r' % panel)
    m = room.metrics()
    if m.get('gk_desyncs_total') != 1 or m.get('gk_stalls_total', 0) < 1:
        raise AssertionError('server: desyncs %s, stalls %s' % (
            m.get('gk_desyncs_total'), m.get('gk_stalls_total')))
    print('# the page says %r' % panel)


CASES = [a_watch_page_agrees_with_the_players_to_the_end,
         a_paused_watch_page_jumps_to_a_newer_snapshot_and_agrees,
         in_token_mode_a_spectator_token_watches_and_others_are_refused,
         a_watch_page_draws_the_state_it_holds,
         the_watch_page_shows_the_stalls_and_desyncs_the_server_notices]

if __name__ == '__main__':
    cdp.require_gamekit_dist()
    pick = [c for c in CASES if not sys.argv[1:] or c.__name__ in sys.argv]
    cdp.run(pick, timeout=400)
