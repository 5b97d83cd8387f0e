"""views_push_puzzle.py: push_puzzle.js drawn from dumped states of
recorded solutions, checked cell by cell against a board played here
(see run_views.py)."""
import math
import os

from views_harness import CROSSING, LEVELS, WAREHOUSE, check, close, rgb

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


