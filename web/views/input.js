// input.js: keyboard and gamepad -> one genre's input record per step.
//
// The input layer reports what the devices do and nothing more: keys and
// buttons held now, and presses since the last step. Hold-to-repeat in
// push-puzzle is the genre's (counted in steps, part of its state), so a
// browser's key auto-repeat is ignored here. One press reaches exactly one
// step: record() gives the input of the next step, endStep() after that
// step drops the presses it carried (ADR-0004); a press made between the
// two waits for the next step.
//
//   const input = createInput({ genre: 'push-puzzle' });
//   // per step: input.poll(); bytes = input.record(); step(bytes);
//   //           input.endStep();
//
// With the browser client (web/gamekit's Client), which builds the
// records and ends each step itself, the input layer only forwards:
//
//   const input = createInput({ genre: 'survivors', client: c });
//   // per frame, for gamepads: input.poll();
//
// every press becomes c.press(name) and every change of what is held
// c.setInput({x, y}) (push-puzzle: the signs are the directions held).

import { PP as GK_PP } from '../gamekit/constants.js';

/** push-puzzle's record bits by action name (gk_push_puzzle.h GK_PP_*). */
export const PP = Object.freeze({ left: GK_PP.LEFT, up: GK_PP.UP,
  right: GK_PP.RIGHT, down: GK_PP.DOWN, undo: GK_PP.UNDO,
  restart: GK_PP.RESTART });
const DIRS = ['left', 'up', 'right', 'down'];

// KeyboardEvent.code -> action, per genre (the layout-independent key).
export const KEYS = {
  'push-puzzle': {
    ArrowLeft: 'left', KeyA: 'left', ArrowUp: 'up', KeyW: 'up',
    ArrowRight: 'right', KeyD: 'right', ArrowDown: 'down', KeyS: 'down',
    KeyZ: 'undo', KeyU: 'undo', Backspace: 'undo', KeyR: 'restart',
  },
  survivors: {
    ArrowLeft: 'left', KeyA: 'left', ArrowUp: 'up', KeyW: 'up',
    ArrowRight: 'right', KeyD: 'right', ArrowDown: 'down', KeyS: 'down',
    KeyP: 'pause', Escape: 'pause', Digit1: 'pick1', Digit2: 'pick2',
    Digit3: 'pick3', Numpad1: 'pick1', Numpad2: 'pick2', Numpad3: 'pick3',
  },
};

// Standard-mapping gamepad buttons -> action, per genre.
export const PAD_BUTTONS = {
  'push-puzzle': { 12: 'up', 13: 'down', 14: 'left', 15: 'right', 2: 'undo',
    4: 'undo', 8: 'restart' },
  survivors: { 12: 'up', 13: 'down', 14: 'left', 15: 'right', 9: 'pause',
    2: 'pick1', 3: 'pick2', 1: 'pick3' },
};

// What each genre's record carries as presses (web/gamekit's press names).
export const PRESSES = {
  'push-puzzle': ['left', 'up', 'right', 'down', 'undo', 'restart'],
  survivors: ['pause', 'pick1', 'pick2', 'pick3'],
};

const clamp127 = (v) => Math.max(-127, Math.min(127, Math.round(v)));

// Touch (attachTouch): a survivors drag is a stick whose full tilt is
// this far (CSS px) from where the finger went down; a push-puzzle swipe
// is a move once it is this long, and a touch that moved less is a tap.
export const TOUCH = { stick: 60, swipe: 24, tap: 10 };

/**
 * options: genre ('push-puzzle' | 'survivors'), target (what gets key
 * events: window by default), getGamepads (default navigator.getGamepads),
 * pad (index of the gamepad to read, or -1 for every connected one),
 * deadzone (stick, 0..1, default 0.25), client (an object with
 * setInput({x, y}) and press(name), e.g. web/gamekit's Client: fed as
 * the devices change).
 */
export function createInput(options = {}) {
  const genre = options.genre;
  const keys = KEYS[genre], padButtons = PAD_BUTTONS[genre];
  if (!keys) throw new Error(`input.js: unknown genre ${genre}`);
  const target = options.target || globalThis;
  const getPads = options.getGamepads ||
    (() => (globalThis.navigator && navigator.getGamepads
      ? navigator.getGamepads() : []));
  const pad = options.pad === undefined ? -1 : options.pad;
  const deadzone = options.deadzone === undefined ? 0.25 : options.deadzone;
  const client = options.client || null;
  let sent = null; // the axes last given to client.setInput, "x,y"

  const keyHeld = new Set(); // codes held now
  let padHeld = new Set(); // actions held on the gamepad at the last poll
  let stick = [0, 0]; // the last poll's left stick, past the deadzone
  let drag = null; // survivors: a touch drag's stick [x, y] (-1..1), or null
  let pending = new Set(); // presses not yet carried by a step
  let sinceRecord = new Set(); // presses made after the last record()

  function press(action) {
    pending.add(action);
    sinceRecord.add(action);
    if (client) {
      sync(); // what is held first: a direction's press comes with its hold
      if (PRESSES[genre].includes(action)) client.press(action);
    }
  }

  /** Axes from what is held: keys first, then the stick (-127..127). */
  function axes() {
    let x = (held('right') ? 127 : 0) - (held('left') ? 127 : 0);
    let y = (held('down') ? 127 : 0) - (held('up') ? 127 : 0);
    if (x === 0 && y === 0 && genre === 'survivors') {
      const [sx, sy] = drag || stick;
      x = clamp127(sx * 127);
      y = clamp127(sy * 127);
    }
    return { x, y };
  }

  function sync() {
    if (!client) return;
    const a = axes(), key = `${a.x},${a.y}`;
    if (key === sent) return;
    sent = key;
    client.setInput(a);
  }

  function onKey(e) {
    const action = keys[e.code];
    if (!action) return;
    e.preventDefault();
    if (e.type === 'keydown') {
      if (e.repeat || keyHeld.has(e.code)) return; // the genre repeats
      keyHeld.add(e.code);
      press(action);
    } else {
      keyHeld.delete(e.code);
    }
    sync();
  }
  function onBlur() {
    keyHeld.clear(); // key-ups are lost while unfocused
    sync();
  }
  target.addEventListener('keydown', onKey);
  target.addEventListener('keyup', onKey);
  target.addEventListener('blur', onBlur);

  function held(action) {
    for (const code of keyHeld) if (keys[code] === action) return true;
    return padHeld.has(action);
  }

  /** Reads the gamepads: buttons that went down since the last poll are
   * presses. Call it once per step (or per frame), before record(). */
  function poll() {
    const list = Array.from(getPads() || []).filter((p) => p && p.connected !== false);
    const pads = pad >= 0 ? list.filter((p) => p.index === pad) : list;
    const now = new Set();
    let sx = 0, sy = 0;
    for (const p of pads) {
      (p.buttons || []).forEach((b, i) => {
        const down = typeof b === 'object' ? b.pressed : b > 0.5;
        if (down && padButtons[i]) now.add(padButtons[i]);
      });
      const ax = (p.axes && p.axes[0]) || 0, ay = (p.axes && p.axes[1]) || 0;
      if (Math.hypot(ax, ay) > deadzone) {
        sx = ax;
        sy = ay;
      }
    }
    if (genre === 'push-puzzle') { // a pushed stick is a held direction
      if (sx < -0.5) now.add('left');
      if (sx > 0.5) now.add('right');
      if (sy < -0.5) now.add('up');
      if (sy > 0.5) now.add('down');
    }
    const fresh = [...now].filter((a) => !padHeld.has(a));
    padHeld = now;
    stick = [sx, sy];
    for (const a of fresh) press(a);
    sync();
  }

  function recordPushPuzzle() {
    let hold = 0, bits = 0;
    DIRS.forEach((d) => {
      if (held(d)) hold |= PP[d];
      if (pending.has(d)) bits |= PP[d];
    });
    if (pending.has('undo')) bits |= PP.undo;
    if (pending.has('restart')) bits |= PP.restart;
    return Uint8Array.of(hold, bits);
  }

  function recordSurvivors() {
    const { x, y } = axes();
    let pick = 0;
    for (const k of [1, 2, 3]) if (pending.has(`pick${k}`)) pick = k;
    return Uint8Array.of(x & 0xff, y & 0xff, pending.has('pause') ? 1 : 0, pick);
  }

  /** Touch on `el` (a canvas): survivors, drag-to-move (the finger's
   * offset from where it went down, full speed at TOUCH.stick px);
   * push-puzzle, a swipe is one move press in its main direction. A touch
   * that stays within TOUCH.tap px is a tap: onTap(x, y) with CSS px in
   * `el` (a view's hit(): a card, undo, restart). Returns a detach. */
  function attachTouch(el, onTap = () => {}) {
    let start = null, moved = false;
    const at = (t) => {
      const r = el.getBoundingClientRect();
      return [t.clientX - r.left, t.clientY - r.top];
    };
    const down = (e) => {
      if (start || !e.changedTouches.length) return;
      e.preventDefault();
      const t = e.changedTouches[0];
      start = { id: t.identifier, p: at(t) };
      moved = false;
    };
    const move = (e) => {
      const t = start && [...e.changedTouches].find((k) => k.identifier === start.id);
      if (!t) return;
      e.preventDefault();
      const [x, y] = at(t), dx = x - start.p[0], dy = y - start.p[1];
      if (Math.hypot(dx, dy) > TOUCH.tap) moved = true;
      if (genre === 'survivors' && moved) {
        const k = Math.max(1, Math.hypot(dx, dy) / TOUCH.stick);
        drag = [dx / TOUCH.stick / k, dy / TOUCH.stick / k];
        sync();
      }
    };
    const up = (e) => {
      const t = start && [...e.changedTouches].find((k) => k.identifier === start.id);
      if (!t) return;
      e.preventDefault();
      const [x, y] = at(t), dx = x - start.p[0], dy = y - start.p[1];
      const p = start.p;
      start = null;
      drag = null;
      sync();
      if (!moved && Math.hypot(dx, dy) <= TOUCH.tap) onTap(p[0], p[1]);
      else if (genre === 'push-puzzle' && Math.hypot(dx, dy) >= TOUCH.swipe)
        press(Math.abs(dx) > Math.abs(dy) ? (dx < 0 ? 'left' : 'right')
          : (dy < 0 ? 'up' : 'down'));
    };
    const opts = { passive: false };
    el.addEventListener('touchstart', down, opts);
    el.addEventListener('touchmove', move, opts);
    el.addEventListener('touchend', up, opts);
    el.addEventListener('touchcancel', up, opts);
    return () => {
      for (const [n, f] of [['touchstart', down], ['touchmove', move],
        ['touchend', up], ['touchcancel', up]]) el.removeEventListener(n, f);
    };
  }

  return {
    attachTouch,
    /** Stops reading the keys (the page's next match makes its own). */
    detach() {
      target.removeEventListener('keydown', onKey);
      target.removeEventListener('keyup', onKey);
      target.removeEventListener('blur', onBlur);
    },
    /** The input record of the next step (a new Uint8Array). */
    record() {
      sinceRecord = new Set();
      return genre === 'survivors' ? recordSurvivors() : recordPushPuzzle();
    },
    /** After the step that carried the last record(): its presses are spent. */
    endStep() {
      pending = sinceRecord;
      sinceRecord = new Set();
    },
    poll,
    /** A press from elsewhere (an on-screen button, a view's hit()):
     * 'undo', 'restart', 'pause', 'pick1'..'pick3', or a direction. */
    press(action) {
      press(action);
    },
    close() {
      target.removeEventListener('keydown', onKey);
      target.removeEventListener('keyup', onKey);
      target.removeEventListener('blur', onBlur);
      keyHeld.clear();
      pending.clear();
    },
  };
}
