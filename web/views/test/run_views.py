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
import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import views_harness as h  # noqa: E402
from views_harness import check  # noqa: E402
from views_push_puzzle import test_push_puzzle  # noqa: E402
from views_survivors import sv_bench, test_survivors  # noqa: E402


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
    ('client pp left down', ['setInput -127,0', 'press left']),
    ('client pp auto-repeat', []),
    ('client pp left up', ['setInput 0,0']),
    ('client pp undo', ['press undo']),
    ('client pp pad right', ['setInput 127,0', 'press right']),
    ('client pp pad released', ['setInput 0,0']),
    ('client sv right and up', ['setInput 127,0', 'setInput 127,-127']),
    ('client sv pick 1', ['setInput 0,-127', 'setInput 0,0', 'press pick1']),
    ('client sv stick', ['setInput -127,64']),
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
    srv = h.Server(work)
    try:
        chrome = h.Chromium(a.chromium, work)
        tools = h.Tools(a.replay, work)
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
    print("%d failed checks" % len(h.failures))
    return 1 if h.failures else 0


if __name__ == '__main__':
    sys.exit(main())

