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
// The lobby lists the public rooms (GET /rooms/public on this page's own
// origin, docs/PROTOCOL.md "Public rooms"), every PUBLIC_MS while it is
// shown and on Refresh; Join takes a seat through the usual join (a room
// on another node of a fleet is reached through its REDIRECT).
import { connect, shownCode, socketUrl } from './gamekit/gamekit.js';
import { errorSentence } from './gamekit/constants.js';
import { slotLabel } from './views/survivors.js';
import { createInput } from './views/input.js';
import * as survivors from './views/survivors.js';
import * as pushPuzzle from './views/push_puzzle.js';

const VIEWS = { survivors, 'push-puzzle': pushPuzzle };
// The top-level arrays each genre's view reads as columns (survivors.js
// columns()): a frame's state without a path per entity field.
const DRAW_COLUMNS = { survivors: ['enemies', 'gems', 'projectiles'] };
const STEP_MS = 1000 / 60; // both genres step at 1/60 s (gk_sim step_seconds)
const PUBLIC_MS = 3000; // the public room list's refresh while in the lobby
const $ = (id) => document.getElementById(id);
const play = { client: null, genre: null, code: null, slot: -1, step: -1,
  desyncs: 0, started: false, ended: null, error: null, rejoined: false,
  options: null, // options: extra genre options for create (e.g. levels)
  solved: [], fell: {}, results: null,
  publicRooms: null, publicReads: 0, // the list on screen; reads done
  rollbacks: 0, // the predicted head's restores (docs/PROTOCOL.md)
  predict: true, // false: draw confirmed steps only (set before create)
  inputDelay: 0 }; // steps asked of the room; 0: the server's choice
window.play = play;
const KEEP = 'gamekit.play.seat'; // sessionStorage: {code, slot, secret}
const AGAIN = 'gamekit.play.again'; // sessionStorage: the last room's settings
const NAME = 'gamekit.name'; // localStorage: the player's name
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

async function client() {
  // predict: the page draws the head, its own input at once; the
  // confirmed state is what it hashes and reports
  const c = await connect(socketUrl('play'), { predict: play.predict !== false });
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
  // Play again in a room someone else made: its host made the next room
  // (it may come before this page has run the last step: the results
  // show it then)
  c.on('next_room', (r) => {
    if (c !== play.client) return;
    play.next = r;
    if (play.ended) showNext();
  });
  c.on('roster', (r) => { // names by slot: the bar, the view, the results
    play.names = r.names;
    if (play.view && play.view.setNames) play.view.setNames(r.names);
  });
  c.on('ended', (e) => {
    if (c !== play.client) return; // a room this page left (Play again)
    play.ended = e || true;
    sessionStorage.removeItem(KEEP);
    bar();
    results(c, e);
  });
  // a refused request's connection is closed by the server after its
  // ERROR: keep the refusal's words; say the connection was lost only
  // in a room
  c.on('close', () => {
    if (c === play.client && !play.ended && play.code) {
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

// The player's name (localStorage) to its room once it has a seat; a
// name the server cannot take is said, and play goes on without it.
function sendName() {
  const name = $('name').value.trim();
  localStorage.setItem(NAME, name);
  if (!name || !play.client) return;
  try {
    play.client.setName(name);
  } catch (e) {
    status(`Your name was not sent: ${sentence(e)}`, true);
  }
}

async function create() {
  const genre = $('genre').value;
  const seats = Math.max(1, $('seats').value | 0);
  const bots = Math.max(0, $('bots').value | 0);
  lock(true);
  try {
    const c = await client();
    const listed = $('listed').checked;
    const options = { ...(play.options || {}) };
    if (bots || listed) options.room = { ...(bots ? { bots } : {}),
      ...(listed ? { listed } : {}) };
    const r = await c.createRoom({ genre, maxPlayers: seats, options,
      inputDelay: play.inputDelay | 0 });
    play.created = { genre, seats, bots, listed, options: play.options };
    play.genre = genre;
    play.slot = r.slot;
    play.host = true;
    showRoom(r.code, true);
    status('');
    sendName();
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
    sendName();
  } catch (e) {
    status(sentence(e), true);
    lock(false);
  }
}

// Quick play: a seat in the fullest open quick-play room of the genre and
// seats chosen above (at least 2), or a new one; it starts when full.
async function quick(rematch) {
  const genre = $('genre').value;
  const seats = Math.max(2, $('seats').value | 0);
  lock(true);
  try {
    const c = await client();
    // Play again: the players of one ended room ask with its code as
    // room.rematch, which only they share: one new room for them
    const options = { ...(play.options || {}),
      ...(rematch ? { room: { rematch } } : {}) };
    const r = await c.quickPlay({ genre, maxPlayers: seats, options });
    play.genre = genre;
    play.slot = r.slot;
    play.quick = { genre, seats, options: play.options };
    showRoom(r.code, false);
    $('who').textContent = `Quick play: ${r.players} of ${seats} seats taken;` +
      ' the match starts when all are.';
    status('');
    sendName();
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
      sendName();
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
  play.locked = on;
  for (const id of ['create', 'join', 'quick']) $(id).disabled = on;
  for (const b of document.querySelectorAll('#pubrooms .pjoin'))
    b.disabled = on;
}

// --- the public room list ----------------------------------------------

// One room of GET /rooms/public as a row: genre, code as people read it,
// seats, lobby or playing, and Join while it has a free seat in its lobby.
function publicRow(r, shown) {
  const li = document.createElement('li');
  li.dataset.code = r.code;
  const cell = (cls, text) => {
    const el = document.createElement('span');
    el.className = cls;
    el.textContent = text;
    li.append(el);
  };
  cell('pgenre', r.genre);
  cell('pcode', grouped(shown || r.code));
  cell('pseats', `${r.seats_taken} taken, ${r.seats_free} free`);
  cell('pstate', r.state === 'playing' ? 'playing' : 'in the lobby');
  if (r.state === 'lobby' && r.seats_free > 0) {
    const b = document.createElement('button');
    b.className = 'pjoin';
    b.textContent = 'Join';
    b.disabled = !!play.locked;
    b.onclick = () => join(shown || r.code);
    li.append(b);
  }
  return li;
}

// The list drawn again only when it changed: a Join being pressed (or
// focused) is not replaced under the finger.
async function showPublic(rooms) {
  const key = JSON.stringify(rooms);
  if (key !== play.publicKey) {
    const shown = await Promise.all(rooms.map((r) => shownCode(r.code)));
    $('pubrooms').replaceChildren(...rooms.map((r, i) =>
      publicRow(r, shown[i])));
    play.publicKey = key;
  }
  $('pubnote').textContent = rooms.length ? ''
    : 'No public rooms right now. Make one public, or refresh later.';
}

// Reads the list now (the lobby is shown); a failure is said in the list.
async function refreshPublic() {
  if (play.started || play.readingPublic) return;
  play.readingPublic = true;
  try {
    const res = await fetch('rooms/public', { cache: 'no-store' });
    const body = await res.json().catch(() => ({}));
    if (!res.ok || !Array.isArray(body.rooms))
      throw new Error(body.error || `HTTP ${res.status}`);
    await showPublic(body.rooms);
    play.publicRooms = body.rooms; // once on screen
  } catch (e) {
    $('pubnote').textContent =
      `Could not read the public rooms (${e.message}); retrying.`;
  } finally {
    play.readingPublic = false;
    play.publicReads++;
  }
}

// A room code as shown: a short one whole, an older 16-character one in
// groups of four, easier to read aloud.
const grouped = (code) => (code || '').length <= 8 ? (code || '')
  : code.replace(/(.{4})(?=.)/g, '$1 ');

function bar() {
  // the engine's counters, not a state map: a dense state's map costs
  // milliseconds, and this runs every frame
  const st = play.client ? play.client.stats() : null;
  const m = play.client && play.client.match;
  const rtt = st ? st.rttMs : null;
  const parts = [`room ${grouped(play.shown)}`, `${play.genre}`,
    `you are ${slotLabel(play.slot, play.names)}`,
    `step ${st && st.steps ? st.steps : '-'}`,
    `ping ${rtt === null ? '-' : rtt + ' ms'}`];
  // the head of the last frame drawn, while it is ahead (play.hold stops
  // the drawing, not the steps)
  if (st && play.headStep > st.steps) parts.push(`head ${play.headStep}`);
  if (play.rollbacks) parts.push(`rollbacks ${play.rollbacks}`);
  if (m) parts.push(`input delay ${m.inputDelay} steps ` +
    `(${Math.round(m.inputDelay * STEP_MS)} ms)`);
  if (play.desyncs) parts.push(`desyncs ${play.desyncs}`);
  if (play.ended) parts.push('match ended');
  $('bartext').textContent = parts.join(' · ');
  $('end').hidden = !play.host || !!play.ended;
}

// The page's camera, an argument of every draw: survivors follows the
// page's own player (the whole arena in the minimap), or shows the whole
// arena while play.wholeArena is set (the prediction test reads the
// player's own pixels so).
function camera() {
  if (play.genre !== 'survivors') return null;
  return play.wholeArena ? { mode: 'arena' }
    : { mode: 'follow', follow: play.slot };
}

// push-puzzle: a level solved (the genre starts the next at once) is
// shown as "Solved in N moves" for 2.5 s: N is the last moves count seen
// on that level plus the solving move.
function solvedNote(c) {
  const s = c.state({ columns: DRAW_COLUMNS[play.genre] });
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
      rows.push([slotLabel(i, play.names) + (i === play.slot ? ' (you)' : ''),
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
  // names are anyone's text: cells are set as text, never parsed
  $('rtable').replaceChildren(...rows.map((r, i) => {
    const tr = document.createElement('tr');
    for (const v of r) {
      const td = document.createElement(i ? 'td' : 'th');
      td.textContent = String(v);
      tr.appendChild(td);
    }
    return tr;
  }));
  $('again').hidden = !play.host && !play.quick;
  $('results').hidden = false;
  if (play.next) showNext();
}

// The host's next room on the results screen (Play again, NEXT_ROOM).
function showNext() {
  $('nextwho').textContent = `${slotLabel(0, play.names)} made a new ` +
    `room, ${grouped(play.next.shown)}.`;
  $('nextroom').hidden = false;
}

// Play again. Anyone in a quick-play room: quick play again with the
// room's code as room.rematch, so the players who press it share one new
// room. The host of a room it made: a new room with the same genre,
// seats, bots and options, on a new connection, in this page; then
// NEXT_ROOM with its code on the old room's connection, which the server
// sends on to the room's other players and watchers (their pages offer
// to join it, docs/PROTOCOL.md "Play again"); its code and link are
// shown to share too.
async function again() {
  if (play.quick) {
    sessionStorage.setItem(AGAIN, JSON.stringify(
      { quick: true, ...play.quick, rematch: play.shown || play.code }));
    location.href = location.pathname + '?again=1';
    return;
  }
  const old = play.client, made = play.created;
  toLobby();
  $('genre').value = made.genre;
  $('seats').value = made.seats;
  $('bots').value = made.bots;
  $('listed').checked = !!made.listed;
  play.options = made.options;
  await create();
  try {
    if (play.code && !old.closed) old.nextRoom(play.code);
  } catch (e) {
    status(`The others were not told the new room: ${sentence(e)}`, true);
  }
  old.close();
}

// Back from a match to the lobby in this page (Play again): the old
// match's input, canvas listeners and state go; play.client is replaced
// by the next room's.
function toLobby() {
  if (play.input) play.input.detach();
  const canvas = $('c');
  canvas.replaceWith(canvas.cloneNode(false));
  Object.assign(play, { client: null, code: null, shown: null, slot: -1,
    step: -1, started: false, ended: null, error: null, host: false,
    view: null, input: null, solved: [], fell: {}, results: null,
    lastLevel: null, drawnState: null, names: null, next: null,
    headStep: 0 });
  $('results').hidden = true;
  $('nextroom').hidden = true;
  $('game').style.display = 'none';
  $('lobby').style.display = '';
  $('room').hidden = true;
  $('start').disabled = false;
  status('');
  lock(false);
  refreshPublic();
  play.publicTimer = setInterval(refreshPublic, PUBLIC_MS);
}

// A guest's or a watcher's way into the host's next room: this page
// leaves the old one and joins it by code.
function joinNext() {
  const code = play.next && play.next.shown;
  if (!code) return;
  sessionStorage.removeItem(KEEP);
  location.href = location.pathname + '?room=' + encodeURIComponent(code);
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
  clearInterval(play.publicTimer);
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
  if (view.setNames && play.names) view.setNames(play.names);
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
    if (!c.closed) c.service(); // what is due now, even if the timer is late
    // the head (the confirmed state when not predicting); survivors'
    // thousands of entities as columns (no path per field)
    const s = play.hold ? null : c.predictedState({ columns: DRAW_COLUMNS[
      play.genre] });
    if (s) {
      const smp = c.sample();
      play.camera = camera();
      play.headStep = s.step;
      shown = [s.state, smp ? smp.state : null, play.camera];
      view.draw(...shown);
      play.drawnState = s.state;
    }
    if (c !== play.client) return; // the page went on (Play again)
    bar();
    if (!c.closed) requestAnimationFrame(frame);
  });
}

$('leave').onclick = leave;
$('lobbyback').onclick = leave;
$('again').onclick = again;
$('nextjoin').onclick = joinNext;
$('end').onclick = () => {
  try {
    play.client.endMatch();
  } catch (e) {
    status(sentence(e), true);
  }
};
$('create').onclick = create;
$('quick').onclick = () => quick();
$('name').value = localStorage.getItem(NAME) || '';
$('pubrefresh').onclick = refreshPublic;
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
if (last && last.quick && new URLSearchParams(location.search).get('again')) {
  $('genre').value = last.genre; // everyone who presses it: one new room
  $('seats').value = last.seats;
  play.options = last.options;
  history.replaceState(null, '', location.pathname);
  quick(last.rematch);
} else if (last && new URLSearchParams(location.search).get('again')) {
  $('genre').value = last.genre;
  $('seats').value = last.seats;
  $('bots').value = last.bots;
  $('listed').checked = !!last.listed;
  play.options = last.options;
  history.replaceState(null, '', location.pathname);
  create();
} else if (kept && (!room || room === kept.code)) {
  rejoin(kept);
} else if (room) {
  $('joincode').value = room;
  join(room);
}
refreshPublic();
play.publicTimer = setInterval(refreshPublic, PUBLIC_MS);
play.ready = true;
