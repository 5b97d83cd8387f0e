#!/usr/bin/python3
"""test_redirect_pages.py: the play and watch pages through a fleet's
REDIRECT, in headless Chromium (cdp.py).

A real redis-server and three real gk-server nodes (gkfleet.py), each
serving the tree's web/: B holds the rooms; the pages are opened at A,
whose node answers their JOIN_ROOM and SPECTATE with REDIRECT to B's
WebSocket URL; gamekit.js sends the same request again there. C
advertises A's URL as its own (a misconfigured node), so a page sent on
to it meets a second REDIRECT. Prints TAP. Skips without redis-server,
Chromium or web/gamekit/dist (fails then with GK_WEB_REQUIRED=1).

usage: test_redirect_pages.py   (GK_SERVER: gk-server)
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cdp  # noqa: E402
import gkfleet  # noqa: E402
import gkserver  # noqa: E402

STEPS = 300
nodes = {}
CHAIN, agree = gkfleet.CHAIN, gkfleet.agree


def open_play(b, node, query=''):
    p = b.new_page(nodes[node].url('/' + query))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def create(p, seats=2):
    p.eval("(() => { document.getElementById('genre').value = 'survivors'; "
           "document.getElementById('seats').value = %d; "
           "document.getElementById('bots').value = 0; "
           "document.getElementById('create').click(); })()" % seats)
    p.wait_for('play.code || play.error', timeout=20)
    if p.eval('play.error'):
        raise AssertionError('create: %s' % p.eval('play.error'))
    return p.eval('play.code')


def joined_through_a(p):
    """The page's client followed one REDIRECT from A to B."""
    got = p.eval('[play.client.redirects, play.client.ws.url]')
    if got != [1, nodes['b'].ws_url]:
        raise AssertionError('redirects, socket: %s, want [1, %s]'
                             % (got, nodes['b'].ws_url))


def the_play_page_on_a_joins_a_room_on_b_and_plays(b):
    """the play page on node A joins a room made on B, through REDIRECT"""
    host = open_play(b, 'b')
    code = create(host)
    host.eval(CHAIN)
    guest = open_play(b, 'a', '?room=' + code)
    guest.wait_for('play.slot === 1 || play.error', timeout=20)
    if guest.eval('play.error'):
        raise AssertionError('join: %s' % guest.eval('play.error'))
    joined_through_a(guest)
    guest.eval(CHAIN)
    host.send('Page.bringToFront')
    host.eval("document.getElementById('start').click()")
    # a match is watched once it runs (a lobby is not shown to spectators)
    host.wait_for('play.step >= 1 || play.error', timeout=20)
    watcher = b.new_page(nodes['a'].url('/watch.html?room=' + code))
    host.send('Page.bringToFront')
    for p in (host, guest):
        p.wait_for('play.step >= %d || play.error' % STEPS, timeout=30)
        if p.eval('play.error'):
            raise AssertionError('play: %s' % p.eval('play.error'))
    watcher.wait_for('watch.step >= %d || watch.errors.length' % (STEPS // 2),
                     timeout=20)
    if watcher.eval('watch.errors.length'):
        raise AssertionError('watch: %s' % watcher.eval('watch.errors'))
    got = watcher.eval('[watch.client.redirects, watch.client.ws.url]')
    if got != [1, nodes['b'].ws_url]:
        raise AssertionError('the watch page: redirects, socket %s' % got)
    r = nodes['b'].admin_get('/rooms/' + code)
    kinds = [pl['transport'] for pl in r['players']]
    if kinds != ['websocket', 'websocket'] or r['desyncs'] != 0 or \
            r['steps_confirmed'] < STEPS or r['spectators'] != 1:
        raise AssertionError('room %s at B: players %s, desyncs %s, steps '
                             'confirmed %s, spectators %s' % (
                                 code, kinds, r['desyncs'],
                                 r['steps_confirmed'], r['spectators']))
    chains = [p.eval('chain') for p in (host, guest)]
    n = agree(chains[0], chains[1], STEPS)
    w = agree(chains[0], watcher.eval('watch.hashes'), 50, 'the watch page')
    if guest.eval('play.desyncs') or host.eval('play.desyncs'):
        raise AssertionError('a page counted a desync')
    print('# room %s at B: %d steps confirmed; the pages agree at %d steps, '
          'the watch page at %d' % (code, r['steps_confirmed'], n, w))


def a_second_redirect_reads_as_a_sentence(b):
    """a page sent on twice says so in a sentence and may try again"""
    code = create(open_play(b, 'c'))
    p = open_play(b, 'a', '?room=' + code)
    p.wait_for('play.error', timeout=20)
    got = p.eval("[document.getElementById('status').textContent, "
                 "play.client.redirects, play.client.closed, "
                 "document.getElementById('join').disabled]")
    want = ["The room's server sent this page on twice; try again.", 1,
            True, False]
    if got != want:
        raise AssertionError('the page: %s, want %s' % (got, want))
    print('# %r' % got[0])


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    gkfleet.require_redis()
    web = {'static_dir': os.path.join(ROOT, 'web')}
    with gkfleet.Fleet(gkserver.server_exe()) as fleet:
        nodes = fleet.nodes
        for n in ('a', 'b'):
            fleet.add(n, ws=web)
        fleet.add('c', ws=web, advertise=nodes['a'].ws_url)
        cdp.run([the_play_page_on_a_joins_a_room_on_b_and_plays,
                 a_second_redirect_reads_as_a_sentence], timeout=60)
