#!/usr/bin/python3
"""test_play_pages.py: the play page (web/index.html) as a product: what it
says when a request is refused, server bots that do not hold the world,
the own player marked and readable at desktop and phone sizes (the
screenshots go to $GK_SHOTS or a temp directory), touch input.

A real gk-server (tests/web/gkserver.py) serving the tree's web/, pages in
headless Chromium (cdp.py). Prints TAP. Skips without web/gamekit/dist
(fails then with GK_WEB_REQUIRED=1).

usage: test_play_pages.py   (GK_SERVER: gk-server)
"""
import json
import os
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
# The sentences of src/sim/gk_err.h GK_ERRNO_SAY, as the page must show
# them: whole, with no code and no "gamekit:" prefix.
SAY = {
    -11: 'It is full: the room has no free seat, or the server no free room.',
    -13: 'No room has that code: check it, or its match may have ended.',
    -22: 'The match has ended, or the server is shutting down.',
}


def open_page(b, query=''):
    p = b.new_page(srv.url('/' + query))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def create(p, genre, seats, bots):
    p.eval("(() => { document.getElementById('genre').value = '%s'; "
           "document.getElementById('seats').value = %d; "
           "document.getElementById('bots').value = %d; "
           "document.getElementById('create').click(); })()"
           % (genre, seats, bots))
    p.wait_for('play.code || play.error', timeout=20)
    if p.eval('play.error'):
        raise AssertionError('create: %s' % p.eval('play.error'))
    return p.eval('play.code')


def start(p):
    p.eval("document.getElementById('start').click()")
    p.wait_for('play.started && play.step >= 0 || play.error', timeout=20)
    if p.eval('play.error'):
        raise AssertionError('start: %s' % p.eval('play.error'))


def shown_sentence(b, code, allowed):
    """A page that joins `code`: its status line is one of the allowed
    codes' whole sentence, and nothing else."""
    p = open_page(b, '?room=' + code)
    p.wait_for('play.error', timeout=20)
    got = p.eval("document.getElementById('status').textContent")
    rc = p.eval('play.errorCode')
    if rc not in allowed or got != SAY[rc]:
        raise AssertionError('joining %s shows %r (code %s), want one of %s'
                             % (code, got, rc,
                                [SAY[c] for c in allowed]))
    print('# join %s: %r' % (code, got))
    return p


def a_full_room_an_unknown_code_and_an_ended_room_read_as_sentences(b):
    """full room, unknown code, ended room: each shows its whole sentence"""
    host = open_page(b)
    code = create(host, 'push-puzzle', 1, 0)
    shown_sentence(b, code, [-11])
    shown_sentence(b, 'AAAAAAAAAAAAAAAA', [-13])
    start(host)
    host.eval('play.client.endMatch()')
    host.wait_for('play.ended', timeout=20)
    # the room may still be closing (ECLOSED) or be gone (ENOTFOUND)
    shown_sentence(b, code, [-22, -13])


# Per drawn frame: for each bot slot, the longest wait of a pending pick
# seen (pick_timeout_steps - pick_timer, the steps the world stood still
# for it) and how many picks it made; the page's own player picks card 1
# at once, so only bots can hold the world.
WATCH_PICKS = """(() => {
  window.picks = { wait: [0, 0, 0, 0], made: [0, 0, 0, 0], level: [] };
  const st = () => play.client.state();
  (function frame() {
    const s = st();
    if (s) {
      const g = s.state;
      if (g['players[0].pick_pending']) play.input.press('pick1');
      for (let k = 1; k <= 3; k++) {
        const on = g[`players[${k}].pick_pending`];
        if (on) picks.wait[k] = Math.max(picks.wait[k],
          TIMEOUT - g[`players[${k}].pick_timer`]);
        // from the state, not from frames that saw the pick open: a bot
        // picks within a step or two, between two frames of a slow page
        // (a level up opens a pick; every level but the first and the
        // one still open was picked)
        const level = g[`players[${k}].level`];
        picks.made[k] = Math.max(0, level - 1 - (on ? 1 : 0));
        picks.level[k] = level;
      }
    }
    if (!play.ended) requestAnimationFrame(frame);
  })();
})()"""


def server_bots_pick_at_once(b):
    """3 server bots: no bot's level-up pick holds the world > 10 steps"""
    p = open_page(b)
    create(p, 'survivors', 1, 3)
    start(p)
    timeout = p.eval("play.client.state().state['config.pick_timeout_steps']"
                     " || 600")
    p.eval(WATCH_PICKS.replace('TIMEOUT', str(timeout)))
    p.wait_for('picks.made[1] + picks.made[2] + picks.made[3] >= 3 || '
               'play.error || play.ended', timeout=90)
    picks = p.eval('picks')
    made = sum(picks['made'][1:])
    if made < 3:
        raise AssertionError('the bots made %d picks in 90 s (step %s): %s'
                             % (made, p.eval('play.step'), picks))
    worst = max(picks['wait'][1:])
    if worst > 10:
        raise AssertionError('a bot held the world %d steps for its pick '
                             '(timer %d): %s' % (worst, timeout, picks))
    print('# bots made %s picks (levels %s); the longest wait %d steps, at '
          'step %s' % (picks['made'][1:], picks['level'][1:], worst,
                       p.eval('play.step')))


SHOTS = os.environ.get('GK_SHOTS') or tempfile.mkdtemp(prefix='gk-pages-')
os.makedirs(SHOTS, exist_ok=True)
PLAYER = (0x4d, 0xa3, 0xff)  # PLAYER_COLORS[0], slot 0 (P1)
RING = (0xff, 0xff, 0xff)    # MARK.color


def near(px, colour, d=40):
    return all(abs(px[i] - colour[i]) <= d for i in range(3))


def open_sized(b, w, h, touch, query=''):
    """The play page in a w x h viewport; touch: a phone (touch events)."""
    p = b.new_page('about:blank')
    p.send('Emulation.setDeviceMetricsOverride', {
        'width': w, 'height': h, 'deviceScaleFactor': 1, 'mobile': touch})
    if touch:
        p.send('Emulation.setTouchEmulationEnabled', {'enabled': True,
                                                      'maxTouchPoints': 5})
    p.goto(srv.url('/' + query))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def touch(p, kind, x, y):
    p.send('Input.dispatchTouchEvent', {
        'type': kind, 'touchPoints': [] if kind == 'touchEnd' else
        [{'x': x, 'y': y, 'id': 1}]})


def held_screen(p):
    """Stops drawing; returns the own player's centre and radius in CSS px
    of the viewport, from the state on screen and the view's mapping."""
    p.eval('play.hold = true')
    time.sleep(0.2)  # a frame already begun finishes
    return p.eval("""(() => {
      const g = play.drawnState, m = play.view.layout();
      const r = document.getElementById('c').getBoundingClientRect();
      const k = `players[${play.slot}].`;
      return { x: r.left + m.ox + g[k + 'x'] / 65536 * m.s,
               y: r.top + m.oy + g[k + 'y'] / 65536 * m.s, r: m.radius,
               minimap: m.minimap, s: m.s, w: m.w };
    })()""")


def span(rows, x, y, colour):
    """Pixels of `colour` in row y through x, left to right."""
    n, row = 0, rows[y]
    for dx in (-1, 1):
        k = x if dx == 1 else x - 1
        while 0 <= k < len(row) // 4 and near(row[4 * k:4 * k + 3], colour):
            n += 1
            k += dx
    return n


def check_marked(p, name, width):
    """The held screen shows the own player at its state position, ringed,
    >= 24 px across, with a minimap, on a canvas as wide as the viewport
    (`width`); screenshot SHOTS/play-NAME.png."""
    at = held_screen(p)
    if abs(at['w'] - width) > 1:
        raise AssertionError('%s: the canvas is %s px wide in a %d px '
                             'viewport' % (name, at['w'], width))
    png = p.screenshot(os.path.join(SHOTS, 'play-%s.png' % name))
    _, _, rows = cdp.decode_png(png)
    cx, cy = int(round(at['x'])), int(round(at['y']))
    across = span(rows, cx, cy, PLAYER)
    ring = int(round(at['r'] + 5))  # MARK.ring outside the figure
    ringed = [near(rows[cy][4 * (cx + d):4 * (cx + d) + 3], RING) or
              near(rows[cy][4 * (cx + d + 1):4 * (cx + d + 1) + 3], RING)
              for d in (ring - 1, -ring - 1)]
    if across < 24 or not all(ringed) or not at['minimap']:
        raise AssertionError('%s: the player at (%d, %d) is %d px of '
                             'its colour across, ring %s, minimap %s; '
                             'screenshot %s' % (name, cx, cy, across,
                                                ringed, at['minimap'],
                                                SHOTS))
    print('# %s: player at (%d, %d), %d px across, ringed; %s'
          % (name, cx, cy, across, SHOTS))


def the_player_is_marked_where_the_state_says_on_desktop_and_phone(b):
    """1280x800, 390x844 and that phone turned: the own player ringed at its state position, >= 24 px"""
    for w, h, phone in ((1280, 800, False), (390, 844, True)):
        p = open_sized(b, w, h, phone)
        create(p, 'survivors', 1, 3)
        start(p)
        p.wait_for('play.step >= 90 || play.error', timeout=20)
        check_marked(p, '%dx%d' % (w, h), w)
        if phone:
            # turned while held: the resize clears the canvas, and the
            # page draws the same state again at once (no new frame comes)
            p.send('Emulation.setDeviceMetricsOverride', {
                'width': h, 'height': w, 'deviceScaleFactor': 1,
                'mobile': True})
            time.sleep(0.3)
            check_marked(p, '%dx%d-turned' % (w, h), h)
        p.eval('play.client.close()')


def a_touch_drag_moves_the_player_in_survivors(b):
    """a phone: a touch drag to the right moves the player right"""
    p = open_sized(b, 390, 844, True)
    create(p, 'survivors', 1, 0)
    start(p)
    p.wait_for('play.step >= 30', timeout=20)
    x0 = p.eval("play.client.state().state['players[0].x']")
    touch(p, 'touchStart', 195, 500)
    touch(p, 'touchMove', 235, 500)
    touch(p, 'touchMove', 275, 500)
    s0 = p.eval('play.step')
    p.wait_for('play.step >= %d' % (s0 + 60), timeout=20)
    touch(p, 'touchEnd', 275, 500)
    x1 = p.eval("play.client.state().state['players[0].x']")
    s1 = p.eval('play.step')
    # the inputs already sent (the input delay: more steps on a busy
    # machine) still move it; after those it stands
    p.wait_for('play.step >= %d' % (s1 + 15), timeout=20)
    xr = p.eval("play.client.state().state['players[0].x']")
    p.wait_for('play.step >= %d' % (s1 + 30), timeout=20)
    x2 = p.eval("play.client.state().state['players[0].x']")
    if not x1 > x0 + 30 * 65536 or xr < x1 or abs(x2 - xr) > 1 * 65536:
        raise AssertionError('drag right: x %s -> %s, then released %s, '
                             '%s' % (x0 / 65536, x1 / 65536, xr / 65536,
                                     x2 / 65536))
    print('# x %.1f -> %.1f under the drag, %.1f after release'
          % (x0 / 65536, x1 / 65536, x2 / 65536))


def swipes_move_in_push_puzzle_and_a_tapped_undo_takes_one_back(b):
    """a phone: swipes move the pusher in push-puzzle; a tapped undo works"""
    p = open_sized(b, 390, 844, True)
    create(p, 'push-puzzle', 1, 0)
    start(p)
    p.wait_for('play.step >= 10', timeout=20)
    top = "document.getElementById('c').getBoundingClientRect().top"
    top0 = p.eval(top)
    # the bar's text grows (a busy machine's predicted head, rollbacks,
    # here a line's worth more): the game must not move under the finger
    p.eval("play.rollbacks = 123456; play.desyncs = '77 '.repeat(20)")
    p.wait_for("document.getElementById('bartext').textContent"
               ".includes('desyncs 77 77')", timeout=10)
    if p.eval(top) != top0:
        raise AssertionError('the game moved from y %s to %s as the bar '
                             'grew' % (top0, p.eval(top)))
    p.eval('play.rollbacks = 0; play.desyncs = 0')
    st = "play.client.state().state"
    moves = lambda: p.eval(st + "['moves']")  # noqa: E731
    swipes = {'left': (-80, 0), 'right': (80, 0), 'up': (0, -80),
              'down': (0, 80)}
    done = []
    for name, (dx, dy) in swipes.items():
        before = moves()
        touch(p, 'touchStart', 195, 420)
        touch(p, 'touchMove', 195 + dx / 2, 420 + dy / 2)
        touch(p, 'touchMove', 195 + dx, 420 + dy)
        touch(p, 'touchEnd', 195 + dx, 420 + dy)
        p.wait_for("%s > %d || play.step > %d" % (
            st + "['moves']", before, p.eval('play.step') + 30), timeout=10)
        if moves() > before:
            done.append(name)
    if not done:
        raise AssertionError('no swipe moved the pusher (moves %d)' % moves())
    # a swipe whose move had not landed within its 30 steps (a busy
    # machine's longer input delay) lands before the count the undo is
    # measured from
    p.wait_for('play.step > %d' % (p.eval('play.step') + 60), timeout=20)
    before = moves()
    undo = p.eval("play.view.layout().buttons.find((k) => k.bits === 16)")
    r = p.eval("(() => { const r = document.getElementById('c')"
               ".getBoundingClientRect(); return [r.left, r.top]; })()")
    tx, ty = r[0] + undo['x'] + undo['w'] / 2, r[1] + undo['y'] + undo['h'] / 2
    # what is under the tap, for a failure's message
    under = p.eval("(() => { const e = document.elementFromPoint(%f, %f); "
                   "return e ? e.tagName + '#' + e.id : null; })()"
                   % (tx, ty))
    step = p.eval('play.step')
    touch(p, 'touchStart', tx, ty)
    touch(p, 'touchEnd', tx, ty)
    try:
        p.wait_for("%s < %d" % (st + "['moves']", before), timeout=10)
    except cdp.Timeout:
        raise AssertionError(
            'undo tapped at (%.0f, %.0f) on %s at step %d (button %s): '
            'moves %d -> %d by step %d; swipes that moved: %s' % (
                tx, ty, under, step, undo, before, moves(),
                p.eval('play.step'), done))
    print('# swipes that moved: %s; undo took moves %d -> %d'
          % (done, before, moves()))


def results(p):
    p.wait_for("!document.getElementById('results').hidden", timeout=20)
    return p.eval('play.results'), p.eval(
        "document.getElementById('rwhy').textContent")


def settled(p, expr, timeout=20):
    """wait_for across the page's own navigation."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            if p.wait_for(expr, timeout=max(0.5, end - time.time())):
                return
        except cdp.CdpError:
            time.sleep(0.3)
    raise AssertionError('never true: %s' % expr)


def end_match_results_play_again_and_leave(b):
    """two pages, a watcher and a bot: End match, results for each, Play
    again takes the guest and the watcher to the host's next room, Leave"""
    host = open_page(b)
    create(host, 'survivors', 2, 1)
    code = host.eval('play.code')
    guest = open_page(b, '?room=' + code)
    guest.wait_for('play.slot === 1 || play.error', timeout=20)
    start(host)
    guest.wait_for('play.started && play.step >= 120', timeout=20)
    watcher = b.new_page(srv.url('/watch.html?room=' + host.eval('play.shown')))
    watcher.wait_for('window.watch && watch.started && watch.step >= 0',
                     timeout=20)
    host.send('Page.bringToFront')  # a background tab draws no frames
    time.sleep(0.3)
    if host.eval("document.getElementById('end').hidden") or \
            not guest.eval("document.getElementById('end').hidden"):
        raise AssertionError('End match: shown to the host only')
    host.eval("document.getElementById('end').click()")
    for p, me in ((host, 'P1 (you)'), (guest, 'P2 (you)')):
        rows, why = results(p)
        names = [r[0] for r in rows[1:]]
        if rows[0] != ['player', 'time survived', 'kills', 'level'] or \
                me not in names or len(names) != 3 or \
                not why.startswith('The host ended the match'):
            raise AssertionError('results: %s, %r' % (rows, why))
    print('# results: %s' % host.eval('play.results'))
    if not guest.eval("document.getElementById('again').hidden"):
        raise AssertionError('Play again is the host\'s')
    host.eval("setTimeout(() => document.getElementById('again').click(),"
              " 0)")
    settled(host, "window.play && play.ready && play.code && play.code "
            "!== %s || window.play && play.error" % json.dumps(code))
    got = host.eval("[play.code, document.getElementById('genre').value, "
                    "document.getElementById('seats').value, "
                    "document.getElementById('bots').value]")
    if got[0] == code or got[1:] != ['survivors', '2', '1']:
        raise AssertionError('play again: %s' % got)
    shown = host.eval('play.shown')
    # the guest's results offer the new room; the watcher's panel too
    guest.wait_for("!document.getElementById('nextroom').hidden", timeout=10)
    said = guest.eval("document.getElementById('nextwho').textContent")
    if shown not in said.replace(' ', ''):
        raise AssertionError('the guest was offered %r, not %s' % (said,
                                                                    shown))
    watcher.wait_for("!document.getElementById('nextroom').hidden",
                     timeout=10)
    href = watcher.eval("document.getElementById('nextroom').href")
    if not href.endswith('?room=' + shown):
        raise AssertionError('the watcher was offered %s' % href)
    guest.send('Page.bringToFront')
    guest.eval("setTimeout(() => document.getElementById('nextjoin')"
               ".click(), 0)")
    settled(guest, "window.play && play.ready && play.slot === 1 && "
            "play.shown === %s" % json.dumps(shown))
    # Leave: the guest gives the seat up and is back in the lobby
    guest.eval("setTimeout(() => document.getElementById('leave')"
               ".click(), 0)")
    settled(guest, "window.play && play.ready && !play.code && "
            "!location.search")
    print('# play again: room %s -> %s (%s); the guest joined it from its '
          'results, the watcher was offered it (%s); the guest left'
          % (code, got[0], got[1:], said))


TWO_LEVELS = '#####\n#@$.#\n#####\n\n######\n#@ $.#\n######\n'


def a_solved_level_says_in_how_many_moves(b):
    """push-puzzle: a solved level shows 'Level 1 solved in 1 move!'"""
    p = open_page(b)
    p.eval('play.options = %s' % json.dumps({'levels': TWO_LEVELS}))
    create(p, 'push-puzzle', 1, 0)
    start(p)
    p.wait_for('play.step >= 10', timeout=20)
    p.eval("play.input.press('right')")
    p.wait_for('play.solved.length >= 1', timeout=10)
    note = p.eval("[document.getElementById('note').textContent, "
                  "document.getElementById('note').hidden]")
    if note != ['Level 1 solved in 1 move!', False]:
        raise AssertionError('the note: %s' % note)
    p.eval("play.input.press('right')")
    time.sleep(0.3)
    p.eval("play.input.press('right')")
    p.wait_for('play.solved.length >= 2 && '
               "document.getElementById('note').textContent === "
               "'Level 2 solved in 2 moves!'", timeout=10)
    rows, why = results(p)
    print('# %r; results %s, %r' % (note[0], rows, why))


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')})
    try:
        cdp.run([a_full_room_an_unknown_code_and_an_ended_room_read_as_sentences,
                 server_bots_pick_at_once,
                 the_player_is_marked_where_the_state_says_on_desktop_and_phone,
                 a_touch_drag_moves_the_player_in_survivors,
                 swipes_move_in_push_puzzle_and_a_tapped_undo_takes_one_back,
                 end_match_results_play_again_and_leave,
                 a_solved_level_says_in_how_many_moves],
                timeout=200)
    finally:
        srv.close()
