#!/usr/bin/python3
"""test_play_pages.py: the play page (web/index.html) as a product: what it
says when a request is refused, and server bots that do not hold the world.

A real gk-server (tests/web/gkserver.py) serving the tree's web/, pages in
headless Chromium (cdp.py). Prints TAP. Skips without web/gamekit/dist
(fails then with GK_WEB_REQUIRED=1).

usage: test_play_pages.py   (GK_SERVER: gk-server)
"""
import json
import os
import sys

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
  const seen = [false, false, false, false];
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
        if (seen[k] && !on) picks.made[k]++;
        seen[k] = on;
        picks.level[k] = g[`players[${k}].level`];
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


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    srv = gkserver.GkServer(
        gkserver.server_exe(), ws={'static_dir': os.path.join(ROOT, 'web')})
    try:
        cdp.run([a_full_room_an_unknown_code_and_an_ended_room_read_as_sentences,
                 server_bots_pick_at_once],
                timeout=200)
    finally:
        srv.close()
