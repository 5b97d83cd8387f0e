// web/play.js: the play page (web/index.html). Creates a room on the
// gk-server that served the page (its WebSocket listener, same host and
// port, path /play) or joins one by code (?room=CODE), then plays it:
// web/views/input.js feeds keyboard and gamepad to web/gamekit's client,
// the genre's view draws the client's state and HUD sample each frame, and
// a click the view's hit() resolves (a level-up card, undo/restart) is a
// press for the next sampled step. window.play exposes the client and the
// counters the page shows (tests read them).
// play.hold = true stops drawing (tests: play.drawnState is then the
// state on screen, play.view.layout() its mapping).
// A reload (or a dropped connection, then a reload) mid-match takes the
// seat back: the room code, slot and reconnect secret are kept in
// sessionStorage (this tab only) from the server's RECONNECT_SECRET until
// the match ends, and a page that finds them rejoins from a snapshot.
// That needs the server to hold a dropped seat (reconnect.hold_ms, on in
// configs/server.json); a refused rejoin shows why and the lobby again.
import { connect } from './gamekit/gamekit.js';
import { errorSentence } from './gamekit/constants.js';
import { slotLabel } from './views/survivors.js';
import { createInput } from './views/input.js';
import * as survivors from './views/survivors.js';
import * as pushPuzzle from './views/push_puzzle.js';

const VIEWS = { survivors, 'push-puzzle': pushPuzzle };
const STEP_MS = 1000 / 60; // both genres step at 1/60 s (gk_sim step_seconds)
const $ = (id) => document.getElementById(id);
const play = { client: null, genre: null, code: null, slot: -1, step: -1,
  desyncs: 0, started: false, ended: null, error: null, rejoined: false,
  options: null, // options: extra genre options for create (e.g. levels)
  solved: [], fell: {}, results: null,
  rollbacks: 0, // the predicted head's restores (docs/PROTOCOL.md)
  predict: true }; // false: draw confirmed steps only (set before create)
window.play = play;
const KEEP = 'gamekit.play.seat'; // sessionStorage: {code, slot, secret}
const AGAIN = 'gamekit.play.again'; // sessionStorage: the last room's settings
const hex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0'))
  .join('');
const unhex = (t) => Uint8Array.from(t.match(/../g), (h) => parseInt(h, 16));

// What the page says about a failure: a refusal's sentence (constants.js,
// from gk_err.h), never a raw code (kept in play.errorCode for tests).
function sentence(e) {
  if (e && typeof e.code === 'number') {
    play.errorCode = e.code;
    return e.sentence || errorSentence(e.code);
  }
  return String((e && e.message) || e);
}

function status(text, err = false) {
  $('status').textContent = text;
  $('status').className = err ? 'err' : '';
  if (err) play.error = text;
}

function wsUrl() {
  return (location.protocol === 'https:' ? 'wss://' : 'ws://') +
    location.host + '/play';
}

async function client() {
  // predict: the page draws the head, its own input at once; the
  // confirmed state is what it hashes and reports
  const c = await connect(wsUrl(), { predict: play.predict !== false });
  play.client = c;
  c.on('step', (step) => { play.step = step; });
  c.on('rollback', () => { play.rollbacks++; });
  c.on('desync', () => { play.desyncs++; });
  c.on('started', (m) => begin(c, m));
  c.on('secret', (e) => sessionStorage.setItem(KEEP, JSON.stringify(
    { code: c.code || play.code, slot: e.slot, secret: hex(e.secret) })));
  c.on('message', (m) => {
    if (m.type === 'error' && play.rejoining) refused(m);
  });
  c.on('step', () => solvedNote(c));
  c.on('ended', (e) => {
    play.ended = e || true;
    sessionStorage.removeItem(KEEP);
    bar();
    results(c, e);
  });
  // a refused request's connection is closed by the server after its
  // ERROR: keep the refusal's words; say the connection was lost only
  // in a room
  c.on('close', () => {
    if (!play.ended && play.code) {
      status('The connection to the server was lost.', true);
    }
  });
  return c;
}

// play.code: the room's code as the server sent it (padded; its /rooms
// and logs name it so) or as typed; play.shown: as people read it.
function showRoom(code, creator) {
  play.code = code;
  play.shown = play.client.shownCode(code) || code;
  $('room').hidden = false;
  $('code').textContent = grouped(play.shown);
  const link = location.origin + location.pathname + '?room=' +
    encodeURIComponent(play.shown);
  $('link').href = link;
  $('link').textContent = link;
  $('start').hidden = !creator;
  $('who').textContent = creator
    ? 'Share the code or link; press Start when everyone is in.'
    : 'Joined; waiting for the host to start.';
}

async function create() {
  const genre = $('genre').value;
  const seats = Math.max(1, $('seats').value | 0);
  const bots = Math.max(0, $('bots').value | 0);
  lock(true);
  try {
    const c = await client();
    const options = { ...(play.options || {}) };
    if (bots) options.room = { bots };
    const r = await c.createRoom({ genre, maxPlayers: seats, options });
    play.created = { genre, seats, bots, options: play.options };
    play.genre = genre;
    play.slot = r.slot;
    play.host = true;
    showRoom(r.code, true);
    status('');
  } catch (e) {
    status(sentence(e), true);
    lock(false);
  }
}

async function join(code) {
  code = code.trim();
  if (!code) return;
  lock(true);
  try {
    const c = await client();
    const r = await c.join(code);
    play.slot = r.slot;
    showRoom(code, false);
    status('');
  } catch (e) {
    status(sentence(e), true);
    lock(false);
  }
}

// The seat this tab held before a reload, taken back from a snapshot.
async function rejoin(kept) {
  lock(true);
  play.rejoining = true;
  status(`taking seat ${kept.slot} of room ${kept.code} back...`);
  try {
    const c = await client();
    play.code = kept.code;
    play.slot = kept.slot;
    c.on('resumed', () => {
      play.rejoining = false;
      play.rejoined = true;
      status('');
    });
    c.rejoin(kept.code, kept.slot, unhex(kept.secret));
  } catch (e) {
    refused(e);
  }
}

function refused(e) {
  play.rejoining = false;
  sessionStorage.removeItem(KEEP);
  status(`Could not take the seat back. ${sentence(e)}`, true);
  $('lobby').style.display = '';
  $('game').style.display = 'none';
  lock(false);
}

function lock(on) {
  for (const id of ['create', 'join']) $(id).disabled = on;
}

// A room code as shown: a short one whole, an older 16-character one in
// groups of four, easier to read aloud.
const grouped = (code) => (code || '').length <= 8 ? (code || '')
  : code.replace(/(.{4})(?=.)/g, '$1 ');

function bar() {
  const s = play.client && play.client.state();
  const h = play.client && play.client.predictedState();
  const m = play.client && play.client.match;
  const parts = [`room ${grouped(play.shown)}`, `${play.genre}`,
    `you are ${slotLabel(play.slot)}`, `step ${s ? s.step : '-'}`];
  if (h && s && h.step !== s.step) parts.push(`head ${h.step}`);
  if (play.rollbacks) parts.push(`rollbacks ${play.rollbacks}`);
  if (m) parts.push(`input delay ${m.inputDelay} steps ` +
    `(${Math.round(m.inputDelay * STEP_MS)} ms)`);
  if (play.desyncs) parts.push(`desyncs ${play.desyncs}`);
  if (play.ended) parts.push('match ended');
  $('bartext').textContent = parts.join(' · ');
  $('end').hidden = !play.host || !!play.ended;
}

// The page's camera, an argument of every draw: survivors follows the
// page's own player (the whole arena in the minimap).
function camera() {
  return play.genre === 'survivors' ? { mode: 'follow', follow: play.slot }
    : null;
}

// push-puzzle: a level solved (the genre starts the next at once) is
// shown as "Solved in N moves" for 2.5 s: N is the last moves count seen
// on that level plus the solving move.
function solvedNote(c) {
  const s = c.state();
  if (!s) return;
  if (play.genre === 'survivors') {
    // survivors: when each player fell (its time survived), as seen
    for (let i = 0; i < (s.state.players || 0); i++)
      if (s.state[`players[${i}].alive`] === false && !(i in play.fell))
        play.fell[i] = s.state.play_steps;
    return;
  }
  const level = s.state.level, moves = s.state.moves;
  const last = play.lastLevel;
  play.lastLevel = { level, moves, solved: s.state.solved };
  if (!last || !(level > last.level || (s.state.solved && !last.solved)))
    return;
  const n = s.state.solved && level === last.level ? moves : last.moves + 1;
  play.solved.push({ level: last.level + 1, moves: n, step: s.step });
  const el = $('note');
  el.textContent = `Level ${last.level + 1} solved in ${n} ` +
    `${n === 1 ? "move" : "moves"}!`;
  el.hidden = false;
  clearTimeout(play.noteTimer);
  play.noteTimer = setTimeout(() => { el.hidden = true; }, 2500);
}

// The results screen when the match ends: survivors, each player's time
// survived, kills and level; push-puzzle, moves, pushes, levels solved.
const WHY = { 1: 'Game over', 2: 'The host ended the match',
  3: 'Everyone left', 4: 'The server is shutting down',
  5: 'The match ended after a desync', 6: 'You were removed' };
function results(c, e) {
  const s = c.state();
  const g = s ? s.state : {};
  const rows = [];
  const clock = (steps) => {
    const t = Math.floor(steps / 60);
    return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`;
  };
  if (play.genre === 'survivors') {
    rows.push(['player', 'time survived', 'kills', 'level']);
    for (let i = 0; i < (g.players || 0); i++) {
      const k = `players[${i}].`;
      if (g[k + 'gone'] === 2) continue; // never joined
      const lived = g[k + 'alive'] ? g.play_steps : play.fell[i] ??
        g.play_steps;
      rows.push([slotLabel(i) + (i === play.slot ? ' (you)' : ''),
        clock(lived || 0), g[k + 'kills'] ?? 0, g[k + 'level'] ?? 1]);
    }
  } else {
    const solved = play.solved.length;
    rows.push(['', 'moves', 'pushes', 'levels solved']);
    rows.push(['this level', g.moves ?? 0, g.pushes ?? 0, solved]);
    play.solved.forEach((x) => rows.push([`level ${x.level}`, x.moves, '', '']));
  }
  play.results = rows;
  $('rwhy').textContent = `${WHY[e && e.reason] || 'The match ended'}` +
    (s ? ` at step ${s.step}.` : '.');
  $('rtable').innerHTML = rows.map((r, i) => '<tr>' + r.map((v) =>
    i ? `<td>${v}</td>` : `<th>${v}</th>`).join('') + '</tr>').join('');
  $('again').hidden = !play.host;
  $('results').hidden = false;
}

// Play again (the host): a new room with the same genre, seats, bots and
// options; its code and link are shown to share.
function again() {
  const last = play.created;
  sessionStorage.setItem(AGAIN, JSON.stringify(last));
  location.href = location.pathname + '?again=1';
}

// Leave: the seat is given up (no rejoin from this tab) and the lobby is
// shown again.
function leave() {
  sessionStorage.removeItem(KEEP);
  play.left = true;
  if (play.client) play.client.close();
  location.href = location.pathname;
}

function begin(c, match) {
  play.genre = match.genre || play.genre;
  play.slot = match.slot;
  play.started = true;
  const mod = VIEWS[play.genre];
  if (!mod) {
    status(`no view for genre ${play.genre}`, true);
    return;
  }
  $('lobby').style.display = 'none';
  $('game').style.display = 'flex';
  const canvas = $('c');
  // the page's CSS sizes the canvas (the rest of the window below the
  // bar); set inline, so the view's fitCanvas does not pin the first size
  canvas.style.width = '100%';
  canvas.style.height = '100%';
  const view = mod.createView(canvas, play.genre === 'survivors'
    ? { localPlayer: match.slot, mark: true, viewUnits: 600, minScale: 1.25,
      minimap: 140 }
    : { localPlayer: match.slot });
  const input = createInput({ genre: play.genre, client: c });
  const tap = (x, y) => {
    const h = view.hit(x, y);
    // survivors: a level-up card, {pick}; push-puzzle: {press}
    if (h) input.press(h.press || `pick${h.pick}`);
  };
  input.attachTouch(canvas, tap);
  play.input = input;
  play.view = view;
  canvas.focus();
  // What is on screen: [state, sample, camera] of the last draw.
  let shown = null;
  // The canvas's own size (the bar above it wraps as its text grows, a
  // phone turns), not the window's. Resizing clears the canvas, and this
  // runs after the frame's draw, before paint: the same picture is drawn
  // again at once, so a resize never shows a blank frame (nor leaves one
  // while play.hold stops drawing).
  new ResizeObserver(() => {
    view.resize();
    if (shown) view.draw(...shown);
  }).observe(canvas);
  canvas.addEventListener('click', (e) => tap(e.offsetX, e.offsetY));
  requestAnimationFrame(function frame() {
    input.poll();
    // the head (the confirmed state when not predicting)
    const s = play.hold ? null : c.predictedState();
    if (s) {
      const smp = c.sample();
      play.camera = camera();
      shown = [s.state, smp ? smp.state : null, play.camera];
      view.draw(...shown);
      play.drawnState = s.state;
    }
    bar();
    if (!c.closed) requestAnimationFrame(frame);
  });
}

$('leave').onclick = leave;
$('lobbyback').onclick = leave;
$('again').onclick = again;
$('end').onclick = () => {
  try {
    play.client.endMatch();
  } catch (e) {
    status(sentence(e), true);
  }
};
$('create').onclick = create;
$('join').onclick = () => join($('joincode').value);
$('start').onclick = () => {
  try {
    play.client.start();
    $('start').disabled = true;
  } catch (e) {
    status(sentence(e), true);
  }
};
$('genre').onchange = () => {
  $('bots').value = $('genre').value === 'survivors' ? 3 : 0;
};
const room = new URLSearchParams(location.search).get('room');
const kept = JSON.parse(sessionStorage.getItem(KEEP) || 'null');
const last = JSON.parse(sessionStorage.getItem(AGAIN) || 'null');
sessionStorage.removeItem(AGAIN);
if (last && new URLSearchParams(location.search).get('again')) {
  $('genre').value = last.genre;
  $('seats').value = last.seats;
  $('bots').value = last.bots;
  play.options = last.options;
  history.replaceState(null, '', location.pathname);
  create();
} else if (kept && (!room || room === kept.code)) {
  rejoin(kept);
} else if (room) {
  $('joincode').value = room;
  join(room);
}
play.ready = true;
