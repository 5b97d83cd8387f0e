// input_page.js: the scenario of input.html. Each entry of the report is
// [label, record bytes]; run_views.py holds the expected bytes.
import { createInput } from '../input.js';

const out = document.getElementById('out');
const target = document.getElementById('target');
const report = [];

function key(type, code, repeat = false) {
  target.dispatchEvent(new KeyboardEvent(type, { code, repeat, bubbles: true,
    cancelable: true }));
}

// A scripted gamepad list in the standard mapping (no real pad here).
let pads = [];
function pad(buttons = [], axes = [0, 0]) {
  const b = Array.from({ length: 17 }, (_, i) => ({ pressed: buttons.includes(i),
    value: buttons.includes(i) ? 1 : 0 }));
  pads = [{ index: 0, connected: true, buttons: b, axes }];
}

// One step as a client runs it: poll, read the record, step, endStep.
function step(input, label) {
  input.poll();
  report.push([label, Array.from(input.record())]);
  input.endStep();
}

function pushPuzzle() {
  const input = createInput({ genre: 'push-puzzle', target, getGamepads: () => pads });
  key('keydown', 'ArrowLeft');
  step(input, 'pp left pressed');
  step(input, 'pp left held');
  key('keydown', 'ArrowLeft', true); // the browser's auto-repeat
  step(input, 'pp left auto-repeat');
  key('keyup', 'ArrowLeft');
  step(input, 'pp left released');
  key('keydown', 'KeyZ');
  key('keyup', 'KeyZ'); // a tap between two steps
  step(input, 'pp undo tapped');
  step(input, 'pp after undo');
  input.poll();
  input.record();
  key('keydown', 'KeyR'); // after the record, before the step ends
  input.endStep();
  key('keyup', 'KeyR');
  step(input, 'pp restart after record');
  key('keydown', 'ArrowUp');
  key('keydown', 'ArrowRight');
  step(input, 'pp up and right');
  key('keyup', 'ArrowUp');
  key('keyup', 'ArrowRight');
  pad([14]);
  step(input, 'pp pad left pressed');
  step(input, 'pp pad left held');
  pad([]);
  step(input, 'pp pad released');
  pad([], [0.9, 0.1]);
  step(input, 'pp pad stick right');
  pad([2]);
  step(input, 'pp pad undo');
  pad([]);
  input.press('restart');
  step(input, 'pp on-screen restart');
  key('keydown', 'KeyX');
  step(input, 'pp unbound key');
  key('keyup', 'KeyX');
  input.close();
  key('keydown', 'ArrowDown');
  report.push(['pp closed ignores keys', Array.from(input.record())]);
}

function survivors() {
  pads = [];
  const input = createInput({ genre: 'survivors', target, getGamepads: () => pads });
  key('keydown', 'ArrowRight');
  key('keydown', 'ArrowDown');
  step(input, 'sv right and down');
  key('keydown', 'ArrowLeft');
  step(input, 'sv left, right and down');
  key('keyup', 'ArrowRight');
  key('keyup', 'ArrowDown');
  key('keyup', 'ArrowLeft');
  key('keydown', 'Digit2');
  step(input, 'sv pick 2');
  step(input, 'sv pick 2 held');
  key('keyup', 'Digit2');
  key('keydown', 'KeyP');
  key('keyup', 'KeyP');
  step(input, 'sv pause');
  step(input, 'sv after pause');
  pad([], [0.5, -1]);
  step(input, 'sv stick');
  pad([], [0.1, 0.1]);
  step(input, 'sv stick in deadzone');
  pad([9]);
  step(input, 'sv pad start');
  step(input, 'sv pad start held');
  pad([]);
  target.dispatchEvent(new Event('blur'));
  key('keydown', 'KeyA');
  target.dispatchEvent(new Event('blur')); // the key-up never comes
  step(input, 'sv blur drops held keys');
  input.close();
}

// What input.js tells a client (web/gamekit's setInput and press), as
// one entry per step of the scenario: the calls since the last entry.
function withClient() {
  pads = [];
  const calls = [];
  const client = {
    setInput: ({ x, y }) => calls.push(`setInput ${x},${y}`),
    press: (name) => calls.push(`press ${name}`),
  };
  const mark = (label) => report.push([label, calls.splice(0)]);
  let input = createInput({ genre: 'push-puzzle', target, client,
    getGamepads: () => pads });
  key('keydown', 'ArrowLeft');
  mark('client pp left down');
  key('keydown', 'ArrowLeft', true);
  mark('client pp auto-repeat');
  key('keyup', 'ArrowLeft');
  mark('client pp left up');
  key('keydown', 'KeyZ');
  key('keyup', 'KeyZ');
  mark('client pp undo');
  pad([15]);
  input.poll();
  input.poll();
  mark('client pp pad right');
  pad([]);
  input.poll();
  mark('client pp pad released');
  input.close();
  input = createInput({ genre: 'survivors', target, client,
    getGamepads: () => pads });
  key('keydown', 'ArrowRight');
  key('keydown', 'ArrowUp');
  mark('client sv right and up');
  key('keyup', 'ArrowRight');
  key('keyup', 'ArrowUp');
  key('keydown', 'Digit1');
  key('keyup', 'Digit1');
  mark('client sv pick 1');
  pad([], [-1, 0.5]);
  input.poll();
  mark('client sv stick');
  input.close();
}

try {
  pushPuzzle();
  survivors();
  withClient();
  out.textContent = JSON.stringify(report);
  document.title = 'done';
} catch (e) {
  out.textContent = JSON.stringify({ error: String(e && e.stack || e) });
  document.title = 'error';
}
