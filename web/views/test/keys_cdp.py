#!/usr/bin/python3
"""keys_cdp.py: web/views/input.js under real key events.

The keys come through Chromium's input pipeline (DevTools
Input.dispatchKeyEvent, as a keyboard would: trusted events, the
browser's own `repeat` flag), driven by tests/web/cdp.py; keys.html runs
the client's step (poll, record, endStep) on request. Prints TAP.

usage: keys_cdp.py   (skips without Chromium, fails then with
                      GK_WEB_REQUIRED=1, as every tests/web program)
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'web'))
import cdp  # noqa: E402
import views_harness  # noqa: E402  (its Server: web/ on 127.0.0.1:0)

# code -> (key, Windows virtual key code) for the keys used here
KEYS = {'ArrowLeft': ('ArrowLeft', 37), 'ArrowUp': ('ArrowUp', 38),
        'ArrowRight': ('ArrowRight', 39), 'ArrowDown': ('ArrowDown', 40),
        'KeyZ': ('z', 90), 'KeyR': ('r', 82), 'KeyP': ('p', 80),
        'Digit3': ('3', 51)}

srv = None


def page(b):
    p = b.new_page(srv.url('keys.html'))
    p.send('Page.bringToFront')
    p.wait_for('window.ready === true')
    return p


def key(p, kind, code, repeat=False):
    name, vk = KEYS[code]
    ev = {'type': 'keyDown' if kind == 'down' else 'keyUp', 'code': code,
          'key': name, 'windowsVirtualKeyCode': vk, 'autoRepeat': repeat}
    if kind == 'down' and len(name) == 1:
        ev['text'] = name
    p.send('Input.dispatchKeyEvent', ev)


def step(p, genre):
    return p.eval("step('%s')" % genre)


def expect(got, want, what):
    if got != want:
        raise AssertionError('%s: %s, want %s' % (what, got, want))


def a_held_arrow_is_one_press_then_held_and_auto_repeat_is_ignored(b):
    """push-puzzle: an arrow is one press, then held; auto-repeat adds none

    The genre repeats a held direction itself, counted in steps."""
    p = page(b)
    key(p, 'down', 'ArrowLeft')
    expect(step(p, 'push-puzzle'), [1, 1], 'pressed')
    expect(step(p, 'push-puzzle'), [1, 0], 'held')
    key(p, 'down', 'ArrowLeft', repeat=True)
    key(p, 'down', 'ArrowLeft', repeat=True)
    expect(step(p, 'push-puzzle'), [1, 0], 'auto-repeated')
    key(p, 'up', 'ArrowLeft')
    expect(step(p, 'push-puzzle'), [0, 0], 'released')


def a_tap_between_two_steps_reaches_exactly_one(b):
    """push-puzzle: undo or restart tapped between steps lands in one step"""
    p = page(b)
    key(p, 'down', 'KeyZ')
    key(p, 'up', 'KeyZ')
    expect(step(p, 'push-puzzle'), [0, 16], 'undo tapped')
    expect(step(p, 'push-puzzle'), [0, 0], 'the step after')
    key(p, 'down', 'KeyR')
    expect(step(p, 'push-puzzle'), [0, 32], 'restart')
    key(p, 'up', 'KeyR')
    expect(step(p, 'push-puzzle'), [0, 0], 'after restart')


def survivors_keys_move_pause_and_pick(b):
    """survivors: two arrows are a diagonal, P one pause, 3 one pick"""
    p = page(b)
    key(p, 'down', 'ArrowRight')
    key(p, 'down', 'ArrowUp')
    expect(step(p, 'survivors'), [127, 129, 0, 0], 'right and up')
    key(p, 'up', 'ArrowRight')
    key(p, 'up', 'ArrowUp')
    key(p, 'down', 'KeyP')
    key(p, 'up', 'KeyP')
    expect(step(p, 'survivors'), [0, 0, 1, 0], 'pause')
    key(p, 'down', 'Digit3')
    expect(step(p, 'survivors'), [0, 0, 0, 3], 'pick 3')
    expect(step(p, 'survivors'), [0, 0, 0, 0], 'pick 3 held')
    key(p, 'up', 'Digit3')


if __name__ == '__main__':
    srv = views_harness.Server(HERE)
    try:
        cdp.run([a_held_arrow_is_one_press_then_held_and_auto_repeat_is_ignored,
                 a_tap_between_two_steps_reaches_exactly_one,
                 survivors_keys_move_pause_and_pick], timeout=120)
    finally:
        srv.close()
