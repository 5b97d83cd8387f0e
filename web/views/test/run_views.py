#!/usr/bin/python3
"""run_views.py: the web views drawn in Chromium, checked pixel by pixel.

Records real runs with the native gk-replay (survivors bots, a push-puzzle
solution prefix and push-puzzle bots), dumps states with `gk-replay dump
--step N --json`, serves web/ and the dumps on 127.0.0.1 (an ephemeral
port), draws each state with web/views/test/view.html in headless Chromium,
screenshots it and checks the pixels at the places the state gives: each
player's and enemy's colour at its mapped screen position, the HUD health
bars, the level-up cards and what a click on them sends, and the
push-puzzle board cell by cell against a board this script plays itself.
input.html checks the keyboard/gamepad records of web/views/input.js.

usage: run_views.py --replay BUILD/tools/replay/gk-replay [--chromium PATH]
                    [--keep DIR] [--bench]
--bench prints the median time to draw 2,000 enemies, batched by kind and
one fill per enemy (a figure; it checks nothing).
Exit status 0 when every check passed, 1 on a failed check, 77 (skip) when
no Chromium is installed, unless GK_WEB_REQUIRED=1 (then that fails too,
as in tests/web).
"""
import argparse
import functools
import http.server
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pngread  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.dirname(os.path.dirname(HERE))  # web/
ROOT = os.path.dirname(WEB)
LEVELS = os.path.join(ROOT, 'genres', 'push-puzzle', 'levels', 'intro.sok')
# The shipped solution of level 4 ("Warehouse"), as in test_pp_solutions.c.
WAREHOUSE = 'RurrddddlDRuuuuLLLrdRDrddlLdllUUdR'
CROSSING = 'luUluRRRDLulDrrrruLL'  # level 5
FX = 65536
TOL = 10  # per channel: screenshots of solid fills are exact; a little slack

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print('FAIL:', what)
    return ok


def rgb(hexcolor):
    h = hexcolor.lstrip('#')
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def close(a, b, tol=TOL):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


class Server:
    """web/ at /web/, the case directory at /case/, on 127.0.0.1:0."""

    def __init__(self, case_dir):
        handler = functools.partial(self.Handler, directory=ROOT)
        self.Handler.case_dir = case_dir
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    class Handler(http.server.SimpleHTTPRequestHandler):
        case_dir = None

        def translate_path(self, path):
            p = urllib.parse.urlparse(path).path
            if p.startswith('/case/'):
                name = os.path.basename(p)
                return os.path.join(self.case_dir, name)
            if not p.startswith('/web/'):
                return os.path.join(self.case_dir, 'missing')
            return super().translate_path(path)

        def end_headers(self):
            self.send_header('Cache-Control', 'no-store')
            super().end_headers()

        def log_message(self, *args):
            pass

    def url(self, page, **query):
        return 'http://127.0.0.1:%d/web/views/test/%s?%s' % (
            self.port, page, urllib.parse.urlencode(query))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Chromium:
    def __init__(self, exe, work):
        self.exe = exe
        self.work = work
        self.n = 0

    def _run(self, extra, url, w, h, virtual_time=True, dpr=1):
        self.n += 1
        profile = os.path.join(self.work, 'profile%d' % self.n)
        cmd = [self.exe, '--headless', '--no-sandbox', '--disable-gpu',
               '--hide-scrollbars', '--force-device-scale-factor=%d' % dpr,
               '--user-data-dir=' + profile, '--window-size=%d,%d' % (w, h)]
        if virtual_time:  # runs the page's fetches and tasks, then stops
            cmd.append('--virtual-time-budget=5000')
        cmd += extra + [url]
        # a group of its own: on a timeout the renderer and helpers go too
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError('chromium: no result within 90 s: %s' % url)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def screenshot(self, url, w, h, png, dpr=1):
        r = self._run(['--screenshot=' + png], url, w, h, dpr=dpr)
        if r.returncode != 0 or not os.path.exists(png):
            raise RuntimeError('chromium screenshot failed: %s' %
                               r.stderr.decode(errors='replace')[-2000:])
        return pngread.read(png)

    def report(self, url, w=800, h=600, virtual_time=True):
        """The JSON in the page's #out after it ran."""
        r = self._run(['--dump-dom'], url, w, h, virtual_time)
        dom = r.stdout.decode()
        start = dom.find('<pre id="out"')
        start = dom.find('>', start) + 1
        end = dom.find('</pre>', start)
        text = dom[start:end].replace('&quot;', '"').replace('&lt;', '<') \
            .replace('&gt;', '>').replace('&amp;', '&')
        try:
            out = json.loads(text)
        except ValueError:
            raise RuntimeError('no report from %s: %r' % (url, dom[-500:]))
        if isinstance(out, dict) and 'error' in out:
            raise RuntimeError('page error: %s' % out['error'])
        return out


class Tools:
    def __init__(self, replay, work):
        self.replay = replay
        self.work = work

    def run(self, *args):
        r = subprocess.run([self.replay] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0:
            raise RuntimeError('gk-replay %s: %s' % (' '.join(args),
                               r.stderr.decode(errors='replace')))
        return r.stdout

    def dump(self, gkr, step, name):
        out = self.run('dump', gkr, '--step', str(step), '--json')
        path = os.path.join(self.work, name)
        with open(path, 'wb') as f:
            f.write(out)
        return json.loads(out)['state'], name


# --- survivors -----------------------------------------------------------

SV_CFG = {'arena_width': 2000, 'arena_height': 1200,
          'spawn_interval_start': 6, 'spawn_interval_min': 2,
          'spawn_batch': 3, 'max_enemies': 2000, 'wave_steps': 400}
ENEMY_R = [8, 12, 20]
# corner of each kind's rectangle (README.md), in radii: bat 1 x 0.45 wide,
# zombie 0.6 x 1 tall, brute a square
ENEMY_REACH = [1.1, 1.17, 1.42]
PLAYER_R, PROJ_R, ORBIT_R, ORB_R = 12, 4, 72, 12
HUD = dict(x=8, y=8, w=236, row=22, pad=6, barX=34, barW=110)


def sv_mapping(w, h, opts, focus):
    """The mapping README.md documents (independent of survivors.js)."""
    aw, ah = opts['arenaWidth'], opts['arenaHeight']
    if opts.get('camera') != 'follow':
        s = min(w / aw, h / ah)
        return s, (w - aw * s) / 2, (h - ah * s) / 2
    s = min(w, h) / opts['viewUnits']

    def clamp(c, size, px):
        half = px / 2 / s
        if size * s <= px:
            return size / 2
        return min(max(c, half), size - half)
    cx, cy = clamp(focus[0], aw, w), clamp(focus[1], ah, h)
    return s, w / 2 - cx * s, h / 2 - cy * s


def sv_entities(st):
    """(kind, x, y, radius) in world units, in drawing order's layers."""
    ents = []
    for i in range(st['gem_count']):
        ents.append(('gem', st['gems[%d].x' % i] / FX,
                     st['gems[%d].y' % i] / FX, 4 * 1.42))
    for i in range(st['enemy_count']):
        k = st['enemies[%d].kind' % i]
        ents.append(('enemy%d' % k, st['enemies[%d].x' % i] / FX,
                     st['enemies[%d].y' % i] / FX, ENEMY_R[k] * ENEMY_REACH[k]))
    for i in range(st['projectile_count']):
        ents.append(('proj', st['projectiles[%d].x' % i] / FX,
                     st['projectiles[%d].y' % i] / FX, PROJ_R * 1.42))
    for i in range(st['players']):
        p = 'players[%d].' % i
        if st[p + 'gone'] != 0:
            continue
        x, y = st[p + 'x'] / FX, st[p + 'y'] / FX
        ents.append(('player%d' % i, x, y, PLAYER_R + 2))
        aura = st[p + 'weapons[1].level']
        if st[p + 'alive'] and aura > 0:  # tints the gems under it
            ents.append(('aura', x, y, 44 + 8 * (aura - 1)))
        if st[p + 'alive'] and st[p + 'weapons[2].level'] > 0:
            ents.append(('orbs', x, y, ORBIT_R + ORB_R))  # the orbit's ring
    return ents


# Layers: what is drawn later covers what is drawn earlier.
LAYER = {'gem': 0, 'aura': 0.5, 'enemy2': 1, 'enemy1': 2, 'enemy0': 3, 'proj': 4,
         'orbs': 5}


def layer(kind):
    return LAYER.get(kind, 6)  # players last


def sv_visible(ents, s, ox, oy, w, h, hud_rows):
    """Entities whose centre pixel no later layer (or the HUD) can cover."""
    scr = [(k, ox + x * s, oy + y * s, max(2, r * s)) for k, x, y, r in ents]
    hud = (HUD['x'], HUD['y'], HUD['x'] + HUD['w'],
           HUD['y'] + 2 * HUD['pad'] + HUD['row'] * hud_rows)
    out = []
    for i, (k, x, y, r) in enumerate(scr):
        if not (r + 2 <= x < w - r - 2 and 30 <= y < h - r - 2):
            continue
        if hud[0] - 2 <= x < hud[2] + 2 and hud[1] - 2 <= y < hud[3] + 2:
            continue
        covered = False
        for j, (k2, x2, y2, r2) in enumerate(scr):
            if j == i or layer(k2) <= layer(k) and k2 != k:
                continue
            if k2 == k and layer(k) < 6:
                continue  # the same colour
            if math.hypot(x - x2, y - y2) <= r2 + 2.5:
                covered = True
                break
        if not covered:
            out.append((k, x, y, r))
    return out


def sv_check_entities(img, st, page, opts, w, h, label):
    focus = None
    if opts.get('camera') == 'follow':
        f = 'players[%d].' % opts['follow']
        focus = (st[f + 'x'] / FX, st[f + 'y'] / FX)
    s, ox, oy = sv_mapping(w, h, opts, focus)
    pal = page['colors']
    counts = {}
    for k, x, y, r in sv_visible(sv_entities(st), s, ox, oy, w, h,
                                 st['players']):
        if k.startswith('enemy'):
            want = pal['enemy'][int(k[5:])]
        elif k.startswith('player'):
            i = int(k[6:])
            if not st['players[%d].alive' % i]:
                continue
            want = page['player_colors'][i]
        elif k == 'proj':
            want = pal['projectile']
        elif k == 'gem':
            want = pal['gem']
        else:
            continue
        got = img.px(int(x), int(y))
        check(close(got, rgb(want)), '%s: %s at (%d,%d): %s, want %s' % (
            label, k, x, y, got, want))
        counts[k] = counts.get(k, 0) + 1
    return counts


def sv_check_hud(img, st, page, label):
    pal = page['colors']
    for i in range(st['players']):
        p = 'players[%d].' % i
        top = HUD['y'] + HUD['pad'] + i * HUD['row']
        left = HUD['x'] + HUD['barX']
        frac = st[p + 'health'] / max(1, st[p + 'max_health'])
        edge = left + HUD['barW'] * frac
        y = top + 2 + 3
        if frac > 0.05:
            check(close(img.px(int(edge) - 3, y), rgb(pal['health'])),
                  '%s: P%d health bar filled to %d' % (label, i + 1, edge))
        if frac < 0.95:
            check(close(img.px(int(edge) + 3, y), rgb(pal['bar'])),
                  '%s: P%d health bar empty after %d' % (label, i + 1, edge))
        check(close(img.px(HUD['x'] + 15, top + 10),
                    rgb(page['player_colors'][i])),
              '%s: P%d swatch' % (label, i + 1))


def sv_find_steps(tools, gkr, steps):
    """A busy step (all three kinds, projectiles, all alive, no pick) and a
    step where player 0 has a pick pending and player 1 none."""
    busy = pick = None
    for step in steps:
        st, _ = tools.dump(gkr, step, 'scan.json')
        n = st['players']
        kinds = {st['enemies[%d].kind' % i] for i in range(st['enemy_count'])}
        alive = all(st['players[%d].alive' % i] for i in range(n)) and \
            not st['paused']
        pending = [st['players[%d].pick_pending' % i] for i in range(n)]
        if busy is None and kinds == {0, 1, 2} and alive and \
                st['projectile_count'] > 0 and not any(pending):
            busy = step
        if pick is None and pending[0] and not pending[1] and alive:
            pick = step
        if busy is not None and pick is not None:
            break
    return busy, pick


def test_survivors(tools, srv, chrome, work):
    cfg = os.path.join(work, 'sv_cfg.json')
    with open(cfg, 'w') as f:
        json.dump(SV_CFG, f)
    gkr = os.path.join(work, 'sv.gkr')
    tools.run('record', '--genre', 'survivors', '--players', '3', '--seed',
              '11', '--steps', '2400', '--config', cfg, '--out', gkr)
    busy, pick = sv_find_steps(tools, gkr, list(range(1499, 2400, 25)) +
                               list(range(299, 1499, 20)))
    if not check(busy is not None and pick is not None,
                 'survivors: a busy step and a pick step in the run'):
        return
    st, name = tools.dump(gkr, busy, 'sv_busy.json')
    base = {'arenaWidth': SV_CFG['arena_width'],
            'arenaHeight': SV_CFG['arena_height']}
    # follow the player farthest from the centre with a wide view: the
    # camera is clamped to the arena on at least one axis
    far = max(range(st['players']), key=lambda i: abs(
        st['players[%d].x' % i] / FX - SV_CFG['arena_width'] / 2) + abs(
        st['players[%d].y' % i] / FX - SV_CFG['arena_height'] / 2))
    cases = [('arena', 800, 600, dict(base, camera='arena')),
             ('follow', 640, 480, dict(base, camera='follow', follow=1,
                                       viewUnits=500)),
             ('follow_edge', 640, 480, dict(base, camera='follow', follow=far,
                                            viewUnits=1100))]
    for label, w, h, opts in cases:
        url = srv.url('view.html', genre='survivors', case='/case/' + name,
                      w=w, h=h, opts=json.dumps(opts))
        page = chrome.report(url, w, h)
        img = chrome.screenshot(url, w, h, os.path.join(work, label + '.png'))
        counts = sv_check_entities(img, st, page, opts, w, h,
                                   'survivors ' + label)
        print('survivors %s, step %d: %d enemies, checked %s' % (
            label, busy, st['enemy_count'], sorted(counts.items())))
        # the arena shows everything; a follow camera a part around one
        need = ['enemy0', 'enemy1', 'enemy2', 'player0', 'player1',
                'player2'] if label == 'arena' else [
                    'enemy0', 'enemy1', 'player%d' % opts['follow']]
        if label == 'follow_edge':
            f = 'players[%d].' % far
            sc, ox, oy = sv_mapping(w, h, opts, (st[f + 'x'] / FX,
                                                 st[f + 'y'] / FX))
            px, py = ox + st[f + 'x'] / FX * sc, oy + st[f + 'y'] / FX * sc
            check(abs(px - w / 2) > 1 or abs(py - h / 2) > 1,
                  'survivors follow_edge: the camera is clamped (P%d at '
                  '%d,%d)' % (far + 1, px, py))
        for k in need:
            check(counts.get(k, 0) >= (3 if k.startswith('enemy') else 1),
                  'survivors %s: enough visible %s (%d)' % (label, k,
                                                            counts.get(k, 0)))
        sv_check_hud(img, st, page, 'survivors ' + label)
        # every player colour and enemy colour is distinct from the floor
        cols = [page['colors']['floor']] + page['colors']['enemy'] + \
            page['player_colors'][:st['players']]
        check(len({c.lower() for c in cols}) == len(cols),
              'survivors: distinct colours')
    # the arena camera leaves bands outside a 2000x1200 arena on 800x600
    img = pngread.read(os.path.join(work, 'arena.png'))
    check(close(img.px(400, 595), rgb(page_colors(chrome, srv, name)['outside'])),
          'survivors arena: outside the arena below it')
    test_survivors_pick(tools, srv, chrome, work, gkr, pick, base)


def page_colors(chrome, srv, name):
    url = srv.url('view.html', genre='survivors', case='/case/' + name,
                  w=200, h=200)
    return chrome.report(url, 200, 200)['colors']


def test_survivors_pick(tools, srv, chrome, work, gkr, step, base):
    st, name = tools.dump(gkr, step, 'sv_pick.json')
    w, h = 800, 600
    gap, ch = 12, 90
    cw = min(180, (w - 4 * gap) / 3)
    x0, y0 = (w - 3 * cw - 2 * gap) / 2, h / 2 - ch / 2
    centres = [(x0 + k * (cw + gap) + cw / 2, y0 + 45) for k in range(3)]
    probes = centres + [(10, h - 10)]
    opts = dict(base, localPlayer=0)
    url = srv.url('view.html', genre='survivors', case='/case/' + name, w=w,
                  h=h, opts=json.dumps(opts),
                  hits=';'.join('%d,%d' % p for p in probes))
    page = chrome.report(url, w, h)
    img = chrome.screenshot(url, w, h, os.path.join(work, 'pick.png'))
    for k, (x, y) in enumerate(centres):
        check(close(img.px(int(x), int(y)), rgb(page['colors']['card'])),
              'survivors pick: card %d at (%d,%d)' % (k + 1, x, y))
        hit = page['hits'][k]
        check(hit is not None and hit['pick'] == k + 1 and hit['player'] == 0
              and hit['record'] == [0, 0, 0, k + 1],
              'survivors pick: a click on card %d gives %s' % (k + 1, hit))
    check(page['hits'][3] is None, 'survivors pick: a click off the cards')
    # everything under the cards is dimmed: the band below the arena too
    dimmed = tuple(round(c * 0.45) for c in rgb(page['colors']['outside']))
    check(close(img.px(w // 2, h - 5), dimmed, 3),
          'survivors pick: the screen is dimmed (%s, want %s)' % (
              img.px(w // 2, h - 5), dimmed))
    options = [st['players[0].options[%d]' % k] for k in range(3)]
    print('survivors pick, step %d: options %s' % (step, options))


def sv_bench(srv, chrome):
    # no virtual time here: it would freeze performance.now()
    url = srv.url('bench.html', n=2000, frames=60)
    out = chrome.report(url, 800, 600, virtual_time=False)
    print('bench: %s' % json.dumps(out))


# --- push-puzzle ---------------------------------------------------------

def xsb_level(path, n):
    """Level n (1-based) of an XSB file: rows of the map."""
    levels, cur = [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line and set(line) <= set('#@+$*.-_ ') and '#' in line:
                cur.append(line)
            elif cur:
                levels.append(cur)
                cur = []
    if cur:
        levels.append(cur)
    return levels[n - 1]


def pp_play(rows, lurd):
    """Plays moves with pusher 0 (the others stand, in reading order) on
    the level; returns (w, h, walls, goals, boxes, [pusher positions])."""
    h, w = len(rows), max(len(r) for r in rows)
    grid = [[r[x] if x < len(r) else ' ' for x in range(w)] for r in rows]
    walls = {(x, y) for y in range(h) for x in range(w) if grid[y][x] == '#'}
    goals = {(x, y) for y in range(h) for x in range(w) if grid[y][x] in '.+*'}
    boxes = {(x, y) for y in range(h) for x in range(w) if grid[y][x] in '$*'}
    pushers = [(x, y) for y in range(h) for x in range(w) if grid[y][x] in '@+']
    d = {'l': (-1, 0), 'u': (0, -1), 'r': (1, 0), 'd': (0, 1)}
    for m in lurd.lower():
        dx, dy = d[m]
        px, py = pushers[0]
        t = (px + dx, py + dy)
        if t in walls or t in pushers:
            continue
        if t in boxes:
            b = (t[0] + dx, t[1] + dy)
            if b in walls or b in boxes or b in pushers:
                continue
            boxes.remove(t)
            boxes.add(b)
        pushers[0] = t
    return w, h, walls, goals, boxes, pushers


def pp_cells_of_dump(st):
    w, h = st['width'], st['height']
    raw = bytes.fromhex(st['cells'])
    return w, h, raw, [(st['pusher[%d].x' % i], st['pusher[%d].y' % i])
                       for i in range(st['pushers'])]


def pp_mapping(cw, ch, w, h):
    hud, margin = 28, 8
    aw, ah = cw - 2 * margin, ch - hud - 2 * margin
    cell = max(4, math.floor(min(aw / w, ah / h, 64)))
    return cell, (cw - cell * w) // 2, hud + margin + (ah - cell * h) // 2


def pp_check_board(img, page, st, label, cw, ch, dpr=1):
    """Every cell's base (corner) and content (centre) colour; cw, ch and
    the layout in CSS pixels, the screenshot in device pixels."""
    pal, pus = page['colors'], page['pusher_colors']
    w, h, raw, pushers = pp_cells_of_dump(st)
    cell, ox, oy = pp_mapping(cw, ch, w, h)
    bad = 0
    for y in range(h):
        for x in range(w):
            c = raw[y * w + x]
            if c & 8:
                base = content = pal['background']
            elif c & 1:
                base = content = pal['wall']
            else:
                base = pal['goalFloor'] if c & 2 else pal['floor']
                content = pal['goal'] if c & 2 else base
                if c & 4:
                    content = pal['boxOnGoal'] if c & 2 else pal['box']
            if (x, y) in pushers:
                content = pus[pushers.index((x, y))]
            px, py = ox + x * cell, oy + y * cell
            got_b = img.px(dpr * (px + 1), dpr * (py + 1))
            got_c = img.px(dpr * (px + cell // 2), dpr * (py + cell // 2))
            # the cell's first and last device pixel: sharp edges (a canvas
            # not sized for the ratio would be scaled up, edges blended)
            mid = dpr * (py + cell // 2) + 1
            got_l = img.px(dpr * px, mid)
            got_r = img.px(dpr * (px + cell) - 1, mid)
            if not close(got_b, rgb(base)) or not close(got_c, rgb(content)) \
                    or not close(got_l, rgb(base)) or \
                    not close(got_r, rgb(base)):
                bad += 1
                check(False, '%s: cell (%d,%d) bits %d: corner %s want %s, '
                      'centre %s want %s, edges %s %s' % (
                          label, x, y, c, got_b, base, got_c, content, got_l,
                          got_r))
    return bad


# Two pushers (slots 0 and 1), two boxes: the second pusher's colour.
DUO = '''#######
#@ $ .#
#     #
#@ $ .#
#######
Title: Duo
'''


def pp_case(tools, work, level, lurd, label, levels=LEVELS, players=1):
    """Records lurd on level (1-based) of levels; dumps the state after
    its last move and checks it is the board this script plays."""
    gkr = os.path.join(work, label + '.gkr')
    tools.run('record', '--genre', 'push-puzzle', '--level',
              '%s#%d' % (levels, level), '--lurd', lurd, '--players',
              str(players), '--out', gkr)
    st, name = tools.dump(gkr, len(lurd) - 1, label + '.json')
    w, h, walls, goals, boxes, pusher = pp_play(xsb_level(levels, level), lurd)
    dw, dh, raw, pushers = pp_cells_of_dump(st)
    want = bytearray(dw * dh)
    for (x, y) in walls:
        want[y * dw + x] |= 1
    for (x, y) in goals:
        want[y * dw + x] |= 2
    for (x, y) in boxes:
        want[y * dw + x] |= 4
    genre = bytes(b & 7 for b in raw)
    check((dw, dh) == (w, h) and genre == bytes(want) and
          pushers == pusher, '%s: the dump after %s is the board played '
          'here' % (label, lurd))
    check(st['moves'] == len(lurd) and st['level'] == level - 1,
          '%s: moves %d level %d' % (label, st['moves'], st['level']))
    return st, name


def test_push_puzzle(tools, srv, chrome, work):
    # the last at devicePixelRatio 2: a backing store of twice the CSS size
    duo = os.path.join(work, 'duo.sok')
    with open(duo, 'w') as f:
        f.write(DUO)
    cases = [('pp_warehouse', LEVELS, 4, 1, WAREHOUSE[:14], 640, 480, 1),
             ('pp_crossing', LEVELS, 5, 1, CROSSING[:9], 500, 420, 1),
             ('pp_crossing_dpr2', LEVELS, 5, 1, CROSSING[:13], 400, 300, 2),
             ('pp_duo', duo, 1, 2, 'rRRd', 420, 300, 1)]
    for label, levels, level, players, lurd, cw, ch, dpr in cases:
        st, name = pp_case(tools, work, level, lurd, label, levels, players)
        url = srv.url('view.html', genre='push-puzzle', case='/case/' + name,
                      w=cw, h=ch)
        page = chrome.report(url, cw, ch)
        img = chrome.screenshot(url, cw, ch, os.path.join(work, label + '.png'),
                                dpr)
        check((img.w, img.h) == (cw * dpr, ch * dpr), '%s: screenshot %dx%d' %
              (label, img.w, img.h))
        bad = pp_check_board(img, page, st, label, cw, ch, dpr)
        print('%s: %dx%d board after %s, %d cells differ' % (
            label, st['width'], st['height'], lurd, bad))
    name = 'pp_warehouse.json'
    # undo and restart buttons give the genre's presses
    url = srv.url('view.html', genre='push-puzzle', case='/case/' + name,
                  w=640, h=480, hits='630,14;10,200')
    page = chrome.report(url, 640, 480)
    b = page['layout']['buttons']
    probes = ['%d,%d' % (k['x'] + k['w'] / 2, k['y'] + k['h'] / 2) for k in b]
    url = srv.url('view.html', genre='push-puzzle', case='/case/' + name,
                  w=640, h=480, hits=';'.join(probes + ['10,200']))
    hits = chrome.report(url, 640, 480)['hits']
    got = sorted((x['press'], x['record']) for x in hits[:-1] if x)
    check(got == [('restart', [0, 32]), ('undo', [0, 16])] and
          hits[-1] is None, 'push-puzzle: undo/restart buttons give %s' % got)


# --- bad states ----------------------------------------------------------

BAD_STATES = [
    ('survivors', 'sv_empty', {}),
    ('survivors', 'sv_huge', {'players': 99, 'enemy_count': 10 ** 9,
                              'gem_count': -5, 'enemies[0].kind': 7,
                              'enemies[0].x': 'x', 'players[0].alive': 'yes',
                              'players[0].pick_pending': True}),
    ('push-puzzle', 'pp_empty', {}),
    ('push-puzzle', 'pp_huge', {'width': 100000, 'height': 3, 'cells': 'zz',
                                'pushers': 10 ** 6, 'level': -1}),
]


def test_bad_states(srv, chrome, work):
    """States no genre writes (missing fields, counts past every cap,
    values of the wrong type) draw something and return: no exception, no
    long loop (the page must finish within Chromium's virtual time)."""
    for genre, label, state in BAD_STATES:
        with open(os.path.join(work, label + '.json'), 'w') as f:
            json.dump({'state': state}, f)
        url = srv.url('view.html', genre=genre, case='/case/%s.json' % label,
                      w=320, h=240)
        try:
            page = chrome.report(url, 320, 240)
            ok = 'layout' in page
        except RuntimeError as e:
            ok = False
            print(e)
        check(ok, 'bad state %s: drawn without an error' % label)
    print('bad states: %d drawn' % len(BAD_STATES))


# --- input ---------------------------------------------------------------

INPUT_WANT = [
    ('pp left pressed', [1, 1]), ('pp left held', [1, 0]),
    ('pp left auto-repeat', [1, 0]), ('pp left released', [0, 0]),
    ('pp undo tapped', [0, 16]), ('pp after undo', [0, 0]),
    ('pp restart after record', [0, 32]), ('pp up and right', [6, 6]),
    ('pp pad left pressed', [1, 1]), ('pp pad left held', [1, 0]),
    ('pp pad released', [0, 0]), ('pp pad stick right', [4, 4]),
    ('pp pad undo', [0, 16]), ('pp on-screen restart', [0, 32]),
    ('pp unbound key', [0, 0]), ('pp closed ignores keys', [0, 0]),
    ('sv right and down', [127, 127, 0, 0]),
    ('sv left, right and down', [0, 127, 0, 0]),
    ('sv pick 2', [0, 0, 0, 2]), ('sv pick 2 held', [0, 0, 0, 0]),
    ('sv pause', [0, 0, 1, 0]), ('sv after pause', [0, 0, 0, 0]),
    ('sv stick', [64, 129, 0, 0]), ('sv stick in deadzone', [0, 0, 0, 0]),
    ('sv pad start', [0, 0, 1, 0]), ('sv pad start held', [0, 0, 0, 0]),
    ('sv blur drops held keys', [0, 0, 0, 0]),
]


def test_input(srv, chrome):
    got = chrome.report(srv.url('input.html'))
    check([g[0] for g in got] == [w[0] for w in INPUT_WANT],
          'input: the scenario ran every step')
    for (label, rec), (_, want) in zip(got, INPUT_WANT):
        check(rec == want, 'input: %s: %s, want %s' % (label, rec, want))
    print('input: %d records checked' % len(got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--replay', required=True)
    ap.add_argument('--chromium', default=shutil.which('chromium'))
    ap.add_argument('--keep', help='keep screenshots and dumps in DIR')
    ap.add_argument('--bench', action='store_true',
                    help='only time drawing 2,000 enemies (a figure, no checks)')
    a = ap.parse_args()
    if not a.chromium:
        if os.environ.get('GK_WEB_REQUIRED') == '1':
            print('FAIL: no chromium, and GK_WEB_REQUIRED=1')
            return 1
        print('SKIP: no chromium')
        return 77
    work = a.keep or tempfile.mkdtemp(prefix='gk-views-')
    os.makedirs(work, exist_ok=True)
    srv = Server(work)
    try:
        chrome = Chromium(a.chromium, work)
        tools = Tools(a.replay, work)
        if a.bench:
            sv_bench(srv, chrome)
        else:
            test_input(srv, chrome)
            test_bad_states(srv, chrome, work)
            test_push_puzzle(tools, srv, chrome, work)
            test_survivors(tools, srv, chrome, work)
    finally:
        srv.close()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print('%d failed checks' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
