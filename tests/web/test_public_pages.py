#!/usr/bin/python3
"""test_public_pages.py: the play page's list of public rooms in a fleet,
in headless Chromium (cdp.py).

A real redis-server and two real gk-server nodes (gkfleet.py), each
serving the tree's web/. A page at node A, phone-sized (390x844), shows
that there are no public rooms; a page at B makes a public room ("Make it
public"), another page at B a private one. A's page lists the public one
(node b, 1 taken, 1 free, in the lobby) without a reload, never the
private one, and a second of reads of A's list costs Redis no more
commands than a second without (the list is answered from memory); its Join button, clicked where it is drawn, joins through
A's REDIRECT to B, and the match plays: both pages' hashes agree at every
step and B counts no desync. A fresh page at A then shows the room as
playing, without Join, after a press of Refresh. Prints TAP. Skips
without redis-server, Chromium or web/gamekit/dist (fails then with
GK_WEB_REQUIRED=1).

Quick play from two pages, one at each node, each with a name: both are
seated in one room (one REDIRECT between them), it starts by itself,
each bar says who it is by name and its ping, both pages agree, the
watch page and the room node's status page show both names; when the
match ends (survivors' duration_steps) both press Play again and share a
new room, which starts again.

usage: test_public_pages.py   (GK_SERVER: gk-server)
"""
import json
import os
import re
import sys
import time
import urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cdp  # noqa: E402
import gkfleet  # noqa: E402
import gkserver  # noqa: E402

STEPS = 240
PHONE = (390, 844)
nodes = {}
REDIS = []
CHAIN, agree = gkfleet.CHAIN, gkfleet.agree


def open_play(b, node, size=None):
    p = b.new_page('about:blank')
    if size:
        p.send('Emulation.setDeviceMetricsOverride', {
            'width': size[0], 'height': size[1], 'deviceScaleFactor': 1,
            'mobile': True})
    p.goto(nodes[node].url('/'))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def create(p, listed):
    p.eval("(() => { document.getElementById('genre').value = 'survivors'; "
           "document.getElementById('seats').value = 2; "
           "document.getElementById('bots').value = 0; "
           "document.getElementById('listed').checked = %s; "
           "document.getElementById('create').click(); })()"
           % ('true' if listed else 'false'))
    p.wait_for('play.code || play.error', timeout=20)
    if p.eval('play.error'):
        raise AssertionError('create: %s' % p.eval('play.error'))
    return p.eval('play.code')


def listed_at(node):
    """GET /rooms/public on the node's WebSocket port: the codes."""
    with urllib.request.urlopen(nodes[node].url('/rooms/public'),
                                timeout=5) as r:
        return [x['code'] for x in json.loads(r.read())['rooms']]


def asked_redis(reads=200):
    """Reads of A's list cost Redis no command: `reads` of them run no
    more commands than as long a time without reads (the nodes' heartbeats
    and list refreshes), give or take half (a heartbeat falls in one
    window or the other), while a command per read would be hundreds
    more. A count of reads, not a time: a loaded machine reads slower."""
    before, t0 = REDIS[0].commands(), time.monotonic()
    for _ in range(reads):
        listed_at('a')
    seconds = time.monotonic() - t0
    busy = REDIS[0].commands() - before - 1  # INFO itself
    before = REDIS[0].commands()
    time.sleep(seconds)
    idle = REDIS[0].commands() - before - 1
    if busy > idle + max(50, idle // 2):
        raise AssertionError('%d reads of /rooms/public in %.1f s: Redis '
                             'ran %d commands, %d in as long without reads'
                             % (reads, seconds, busy, idle))
    print('# %d reads of the list in %.1f s: Redis ran %d commands, %d in '
          'as long without reads' % (reads, seconds, busy, idle))


def row(p, code):
    """The page's row for `code`: its text and Join button's centre (or
    None), and whether the button is the element drawn there."""
    return p.eval("""(() => {
      const li = [...document.querySelectorAll('#pubrooms li')]
        .find((e) => e.dataset.code === %s);
      if (!li) return null;
      const b = li.querySelector('.pjoin');
      const shown = li.querySelector('.pcode').textContent;
      if (!b) return { text: li.textContent, shown, join: null };
      b.scrollIntoView({ block: 'center' });
      const r = b.getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      return { text: li.textContent, shown, join: [x, y],
        hit: document.elementFromPoint(x, y) === b,
        inside: r.left >= 0 && r.right <= innerWidth };
    })()""" % json.dumps(code))


def click(p, x, y):
    for kind in ('mousePressed', 'mouseReleased'):
        p.send('Input.dispatchMouseEvent', {'type': kind, 'x': x, 'y': y,
                                            'button': 'left',
                                            'clickCount': 1})


def a_page_on_a_lists_a_public_room_of_b_joins_it_and_plays(b):
    """the play page on A lists B's public room (never a private one, nor asking Redis per read), joins it through REDIRECT and plays"""
    guest = open_play(b, 'a', PHONE)
    guest.wait_for('play.publicReads >= 1', timeout=10)
    note = guest.eval("document.getElementById('pubnote').textContent")
    if guest.eval('play.publicRooms.length') != 0 or \
            not note.startswith('No public rooms right now.'):
        raise AssertionError('an empty list: %r, rooms %s'
                             % (note, guest.eval('play.publicRooms')))
    host = open_play(b, 'b')
    code = create(host, True)
    host.eval(CHAIN)
    private = create(open_play(b, 'b'), False)
    # no reload: the lobby reads the list again by itself
    guest.wait_for('(play.publicRooms || []).some((r) => r.code === %s)'
                   % json.dumps(code), timeout=12)
    rooms = guest.eval('play.publicRooms')
    mine = [r for r in rooms if r['code'] == code][0]
    want = {'genre': 'survivors', 'code': code, 'seats_taken': 1,
            'seats_free': 1, 'state': 'lobby', 'node': 'b'}
    if mine != want or any(r['code'] == private for r in rooms):
        raise AssertionError('A lists %s, want %s and not %s'
                             % (rooms, want, private))
    asked_redis()
    if private in listed_at('a') or private in listed_at('b') or \
            code not in listed_at('b'):
        raise AssertionError('GET /rooms/public: a %s, b %s (public %s, '
                             'private %s)' % (listed_at('a'), listed_at('b'),
                                              code, private))
    r = row(guest, code)
    if not r or not r.get('join') or not r['hit'] or not r['inside']:
        raise AssertionError('the row for %s: %s' % (code, r))
    if '1 taken, 1 free' not in r['text'] or 'in the lobby' not in r['text']:
        raise AssertionError('the row reads %r' % r['text'])
    width = guest.eval('document.documentElement.scrollWidth')
    if width > PHONE[0]:
        raise AssertionError('the lobby is %d px wide on a %d px phone'
                             % (width, PHONE[0]))
    click(guest, *r['join'])
    guest.wait_for('play.slot === 1 || play.error', timeout=20)
    if guest.eval('play.error'):
        raise AssertionError('join: %s' % guest.eval('play.error'))
    got = guest.eval('[play.client.redirects, play.client.ws.url]')
    if got != [1, nodes['b'].ws_url]:
        raise AssertionError('redirects, socket: %s, want [1, %s]'
                             % (got, nodes['b'].ws_url))
    shown = guest.eval('play.shown')
    if r['shown'].replace(' ', '') != shown or shown == code:
        raise AssertionError('the list shows %r, the room is %r (code %s)'
                             % (r['shown'], shown, code))
    guest.eval(CHAIN)
    host.send('Page.bringToFront')
    host.eval("document.getElementById('start').click()")
    for p in (host, guest):
        p.wait_for('play.step >= %d || play.error' % STEPS, timeout=30)
        if p.eval('play.error'):
            raise AssertionError('play: %s' % p.eval('play.error'))
    n = agree(host.eval('chain'), guest.eval('chain'), STEPS)
    room = nodes['b'].admin_get('/rooms/' + code)
    if room['desyncs'] != 0 or host.eval('play.desyncs') or \
            guest.eval('play.desyncs'):
        raise AssertionError('desyncs: B %s, pages %s %s' % (
            room['desyncs'], host.eval('play.desyncs'),
            guest.eval('play.desyncs')))
    print('# room %s (shown %s) made at B, joined from A\'s list: the pages '
          'agree at %d steps' % (code, shown, n))
    # a fresh lobby at A, its timer stopped: Refresh reads the list again
    late = open_play(b, 'a')
    late.wait_for('play.publicReads >= 1', timeout=10)
    late.eval('clearInterval(play.publicTimer); window.reads = '
              'play.publicReads; 0')
    late.wait_for('!play.readingPublic', timeout=5)
    late.eval("window.reads = play.publicReads; "
              "document.getElementById('pubrefresh').click(); 0")
    late.wait_for('play.publicReads > window.reads', timeout=5)
    r = row(late, code)
    if not r or r['join'] is not None or 'playing' not in r['text']:
        raise AssertionError('a playing room reads %s' % r)


NAMES = ('Zo\u00eb \u2605', 'bob')


def quick_page(b, node, name):
    p = open_play(b, node)
    p.eval("(() => { document.getElementById('name').value = %s; "
           "document.getElementById('genre').value = 'survivors'; "
           "document.getElementById('seats').value = 2; "
           "play.options = { duration_steps: 600 }; 0 })()"
           % json.dumps(name))
    return p


def quick_seated(pages):
    for p in pages:
        p.wait_for('(play.started && play.names && play.names.length === 2)'
                   ' || play.error', timeout=20)
        if p.eval('play.error'):
            raise AssertionError('quick play: %s' % p.eval('play.error'))
    codes = [p.eval('play.code') for p in pages]
    redirects = sum(p.eval('play.client.redirects') for p in pages)
    if codes[0] != codes[1] or redirects != 1:
        raise AssertionError('quick play seats the pages in %s with %d '
                             'REDIRECTs, want one room and 1' % (codes,
                                                                 redirects))
    return codes[0]


def two_pages_quick_play_at_two_nodes_into_one_named_room_and_play_again(b):
    """quick play from pages at A and B: one room, named players, ping, watch and status pages, Play again together"""
    pages = [quick_page(b, 'a', NAMES[0]), quick_page(b, 'b', NAMES[1])]
    for p in pages:
        p.eval("document.getElementById('quick').click()")
    code = quick_seated(pages)
    where = 'a' if pages[0].eval('play.client.redirects') == 0 else 'b'
    for p in pages:
        p.eval(CHAIN)
    for i, p in enumerate(pages):
        p.wait_for('play.step >= 120 || play.error', timeout=20)
        p.send('Page.bringToFront')  # frames (and the bar) draw in front
        p.wait_for("/ping \\d+ ms/.test(document.getElementById('bartext')"
                   ".textContent)", timeout=10)
        names = p.eval('play.names')
        bar = p.eval("document.getElementById('bartext').textContent")
        slot = p.eval('play.slot')
        if sorted(names) != sorted(NAMES) or names[slot] != NAMES[i] or \
                ('you are ' + NAMES[i]) not in bar or \
                not re.search(r'ping \d+ ms', bar):
            raise AssertionError('page %d: names %s, slot %d, bar %r'
                                 % (i, names, slot, bar))
    watch = b.new_page('about:blank')
    watch.goto(nodes['a'].url('/watch.html?room=' + code))
    watch.wait_for('window.watch && watch.names && watch.names.length === 2',
                   timeout=20)
    text = watch.eval("document.getElementById('players').textContent")
    status = b.new_page('about:blank')
    status.goto('http://127.0.0.1:%d/' % nodes[where].admin_port)
    status.wait_for("document.getElementById('rooms').textContent"
                    ".includes(%s)" % json.dumps(NAMES[0]), timeout=10)
    row = status.eval("document.getElementById('rooms').textContent")
    if not all(n in text for n in NAMES) or NAMES[1] not in row:
        raise AssertionError('names: watch %r, status %r' % (text, row))
    for p in pages:
        p.wait_for('play.ended && !document.getElementById("results").hidden'
                   ' && !document.getElementById("again").hidden',
                   timeout=30)
    chains = [p.eval('chain') for p in pages]
    print('# chains: %s, ended %s' % (
        [(len(c), min(map(int, c)), max(map(int, c))) for c in chains],
        [p.eval("[JSON.stringify(play.ended), document.getElementById('rwhy')"
                ".textContent]") for p in pages]))
    n = agree(chains[0], chains[1], 400)
    print('# quick play: room %s at node %s, %d steps agree, names on the '
          'watch and status pages' % (code, where, n))
    for p in pages:
        p.eval("document.getElementById('again').click()")
    for p in pages:
        p.wait_for('window.play && window.play.ready === true', timeout=20)
    again = quick_seated(pages)
    if again == code:
        raise AssertionError('Play again went back to room %s' % code)
    print('# Play again: both pages in the new room %s' % again)


if __name__ == '__main__':
    cdp.require_gamekit_dist()
    gkfleet.require_redis()
    web = {'static_dir': os.path.join(ROOT, 'web')}
    with gkfleet.Fleet(gkserver.server_exe()) as fleet:
        nodes = fleet.nodes
        REDIS.append(fleet.redis)
        for n in ('a', 'b'):
            fleet.add(n, ws=web)
        cdp.run([a_page_on_a_lists_a_public_room_of_b_joins_it_and_plays,
                 two_pages_quick_play_at_two_nodes_into_one_named_room_and_play_again],
                timeout=60)
