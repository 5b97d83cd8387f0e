#!/usr/bin/python3
"""test_fleet_nginx.py: deploy/fleet/gamekit-fleet.conf in front of a
fleet, in headless Chromium over https:// (cdp.py, gknginx.py).

A real redis-server, two real gk-server nodes serving the tree's web/ on
the WebSocket ports the file routes to (7800 + node, shifted by a prefix
digit so a running fleet is left alone), each advertising
wss://HOST/node/N/play, and Debian's nginx running that very file (only
its listen port, certificate paths and that port prefix changed). The
play page at /node/1/ makes a public room through wss://HOST/node/1/play;
the play page at /node/2/ lists it from /node/2/rooms/public, joins it
through node 2's REDIRECT to /node/1/play, and the match plays (the
pages' hashes agree, node 1 counts no desync). /node/N/rooms/public
passes through with its Cache-Control: no-store and its 400 and 405.
Prints TAP. Skips without redis-server, nginx, openssl, Chromium or
web/gamekit/dist (fails then with GK_WEB_REQUIRED=1).

usage: test_fleet_nginx.py   (GK_SERVER: gk-server)
"""
import json
import os
import re
import shutil
import socket
import ssl
import sys
import tempfile
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cdp  # noqa: E402
import gkfleet  # noqa: E402
import gknginx  # noqa: E402
import gkserver  # noqa: E402

STEPS = 180
CHAIN, agree = gkfleet.CHAIN, gkfleet.agree


class Env:
    dir = tls = prefix = cert = key = spki = None
    nodes = {}


def node_port(prefix, n):
    return int('%d%d' % (prefix, 7800 + n))


def free_prefix():
    """A digit that puts nodes 1 and 2 on free ports (27801, 27802, ...):
    none listening (SO_REUSEADDR, as the server binds: a port an earlier
    run left in TIME_WAIT is free to it)."""
    for prefix in (2, 3, 4, 5, 6):
        try:
            for n in (1, 2):
                with socket.socket() as s:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind(('127.0.0.1', node_port(prefix, n)))
                    s.listen(1)
            return prefix
        except OSError:
            continue
    raise RuntimeError('no free pair of node ports')


def rewrite(conf, tls_port, prefix, cert, key):
    """The file for this run; each change must match as often as the file
    has it, or the test fails."""
    subs = [
        (r"^(\s*)listen 443 ssl;$", r"\1listen 127.0.0.1:%d ssl;" % tls_port),
        (r"^(\s*)ssl_certificate\s+\S+;$", r"\1ssl_certificate %s;" % cert),
        (r"^(\s*)ssl_certificate_key\s+\S+;$",
         r"\1ssl_certificate_key %s;" % key),
        (r"(\s)780\$gk_n;$", r"\g<1>%d780$gk_n;" % prefix),
        (r"(\s)78\$gk_n;$", r"\g<1>%d78$gk_n;" % prefix),
    ]
    for pat, rep in subs:
        conf, n = re.subn(pat, rep, conf, flags=re.M)
        assert n == 1, 'gamekit-fleet.conf: %r matched %d times' % (pat, n)
    return conf


def https(path):
    return 'https://127.0.0.1:%d%s' % (Env.tls, path)


def get(path, method='GET'):
    """(status, headers, body) through nginx."""
    ctx = ssl.create_default_context(cafile=Env.cert)
    req = urllib.request.Request(https(path), method=method)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def open_play(b, n):
    p = b.new_page(https('/node/%d/' % n))
    p.send('Page.bringToFront')
    p.wait_for('window.play && window.play.ready === true', timeout=20)
    return p


def a_page_at_node_2_joins_a_public_room_of_node_1_through_nginx(b):
    """pages, WebSocket and the public list reach each node by its path"""
    host = open_play(b, 1)
    host.eval("(() => { document.getElementById('genre').value = "
              "'survivors'; document.getElementById('seats').value = 2; "
              "document.getElementById('bots').value = 0; "
              "document.getElementById('listed').checked = true; "
              "document.getElementById('create').click(); })()")
    host.wait_for('play.code || play.error', timeout=20)
    if host.eval('play.error'):
        raise AssertionError('create: %s' % host.eval('play.error'))
    code = host.eval('play.code')
    wss1 = 'wss://127.0.0.1:%d/node/1/play' % Env.tls
    if host.eval('play.client.ws.url') != wss1:
        raise AssertionError('the page at /node/1/ opened %s, want %s'
                             % (host.eval('play.client.ws.url'), wss1))
    host.eval(CHAIN)
    guest = open_play(b, 2)
    guest.wait_for('(play.publicRooms || []).some((r) => r.code === %s)'
                   % json.dumps(code), timeout=12)
    st, hdrs, body = get('/node/2/rooms/public?genre=survivors')
    rooms = json.loads(body)['rooms'] if st == 200 else []
    if st != 200 or hdrs['Cache-Control'] != 'no-store' or \
            [r['node'] for r in rooms if r['code'] == code] != ['node-1']:
        raise AssertionError('/node/2/rooms/public: %s %s %s'
                             % (st, dict(hdrs), body))
    for path, method, want in (('/node/2/rooms/public?since=1', 'GET', 400),
                               ('/node/1/rooms/public', 'POST', 405)):
        st, _, body = get(path, method)
        if st != want or b'"error"' not in body:
            raise AssertionError('%s %s: %s %s, want %d'
                                 % (method, path, st, body, want))
    guest.eval("[...document.querySelectorAll('#pubrooms li')].find((e) => "
               "e.dataset.code === %s).querySelector('.pjoin').click()"
               % json.dumps(code))
    guest.wait_for('play.slot === 1 || play.error', timeout=20)
    if guest.eval('play.error'):
        raise AssertionError('join: %s' % guest.eval('play.error'))
    got = guest.eval('[play.client.redirects, play.client.ws.url]')
    if got != [1, wss1]:
        raise AssertionError('redirects, socket: %s, want [1, %s]'
                             % (got, wss1))
    guest.eval(CHAIN)
    host.send('Page.bringToFront')
    host.eval("document.getElementById('start').click()")
    for p in (host, guest):
        p.wait_for('play.step >= %d || play.error' % STEPS, timeout=30)
        if p.eval('play.error'):
            raise AssertionError('play: %s' % p.eval('play.error'))
    n = agree(host.eval('chain'), guest.eval('chain'), STEPS)
    room = Env.nodes[1].admin_get('/rooms/' + code)
    if room['desyncs'] != 0:
        raise AssertionError('node 1 counted %d desyncs' % room['desyncs'])
    print('# room %s at node 1, joined from /node/2/: the pages agree at %d '
          'steps' % (code, n))


def main():
    why = gknginx.missing_tool()
    if why is not None:
        cdp.skip_or_bail('%s (Debian packages nginx, openssl)' % why)
    cdp.require_gamekit_dist()
    gkfleet.require_redis()
    Env.dir = tempfile.mkdtemp(prefix='gk-fleet-nginx-')
    fleet = nginx = None
    try:
        Env.cert, Env.key, Env.spki = gknginx.make_cert(Env.dir)
        Env.tls, Env.prefix = gknginx.free_port(), free_prefix()
        fleet = gkfleet.Fleet(gkserver.server_exe())
        for n in (1, 2):
            Env.nodes[n] = fleet.add(
                'node-%d' % n,
                advertise='wss://127.0.0.1:%d/node/%d/play' % (Env.tls, n),
                ws={'static_dir': os.path.join(ROOT, 'web'),
                    'port': node_port(Env.prefix, n),
                    'trusted_proxies': ['127.0.0.1']})
        with open(os.path.join(ROOT, 'deploy', 'fleet',
                               'gamekit-fleet.conf')) as f:
            site = rewrite(f.read(), Env.tls, Env.prefix, Env.cert, Env.key)
        nginx = gknginx.Nginx(Env.dir, site, Env.tls)
        cdp.run([a_page_at_node_2_joins_a_public_room_of_node_1_through_nginx],
                timeout=60,
                flags=['--ignore-certificate-errors-spki-list=' + Env.spki])
    finally:
        if nginx is not None:
            nginx.stop()
        if fleet is not None:
            fleet.close()
        shutil.rmtree(Env.dir, ignore_errors=True)


main()
