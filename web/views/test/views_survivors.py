"""views_survivors.py: survivors.js drawn from dumped states of a bot
run, checked pixel by pixel (see run_views.py)."""
import json
import math
import os

import pngread
from views_harness import FX, check, close, rgb

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


# A HUD row's text ("P2 Lv 2 999987/1000000") starts right of the bars
# and runs past the panel when the numbers are long: at most this many
# pixels a character (12px sans-serif).
HUD_CHAR_PX = 8


def hud_right(st):
    """The right edge of the HUD: its panel, or its longest row's text."""
    longest = 0
    for i in range(st['players']):
        p = 'players[%d].' % i
        longest = max(longest, len('P%d Lv %d %d/%d' % (
            i + 1, st.get(p + 'level', 0), st.get(p + 'health', 0),
            st.get(p + 'max_health', 0))))
    text_left = HUD['x'] + HUD['barX'] + HUD['barW'] + 6
    return max(HUD['x'] + HUD['w'], text_left + HUD_CHAR_PX * longest)


def sv_visible(ents, s, ox, oy, w, h, hud_rows, hud_x2=None):
    """Entities whose centre pixel no later layer (or the HUD: its panel,
    to hud_x2 with the text that overflows it) can cover."""
    scr = [(k, ox + x * s, oy + y * s, max(2, r * s)) for k, x, y, r in ents]
    hud = (HUD['x'], HUD['y'], hud_x2 or HUD['x'] + HUD['w'],
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
                                 st['players'], hud_right(st)):
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
    sv_check_long_hud(srv, chrome, work, name, base)
    test_survivors_pick(tools, srv, chrome, work, gkr, pick, base)


def sv_check_long_hud(srv, chrome, work, name, base):
    """A CROWD room's 7-digit health: the HUD panel grows to its longest
    row's text (an empty arena under it, the players at its centre)."""
    with open(os.path.join(work, name)) as f:
        doc = json.load(f)
    st = doc['state']
    for k in ('enemy_count', 'projectile_count', 'gem_count'):
        st[k] = 0
    for i in range(st['players']):
        p = 'players[%d].' % i
        st[p + 'health'] = st[p + 'max_health'] = 9999999
        st[p + 'x'] = SV_CFG['arena_width'] // 2 * FX
        st[p + 'y'] = SV_CFG['arena_height'] // 2 * FX
    with open(os.path.join(work, 'sv_long_hud.json'), 'w') as f:
        json.dump(doc, f)
    url = srv.url('view.html', genre='survivors', case='/case/sv_long_hud.json',
                  w=800, h=600, opts=json.dumps(dict(base, camera='arena')))
    page = chrome.report(url, 800, 600)
    img = chrome.screenshot(url, 800, 600, os.path.join(work, 'long_hud.png'))
    floor = rgb(page['colors']['floor'])
    # the panel (black at 0.6) darkens the floor in its bottom padding, 20
    # px past its narrowest width, where "P1 Lv 1 9999999/9999999" runs
    y = HUD['y'] + HUD['pad'] + HUD['row'] * st['players'] + HUD['pad'] // 2
    for x in (HUD['x'] + 10, HUD['x'] + HUD['w'] + 20):
        got = img.px(x, y)
        want = tuple(round(c * 0.4) for c in floor)
        check(close(got, want), 'survivors long HUD: panel at (%d,%d): %s, '
              'want %s (the floor %s darkened)' % (x, y, got, want, floor))


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


