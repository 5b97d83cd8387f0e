// web/watch.js: the watch page (web/watch.html). Spectates a room of the
// gk-server that served the page (its WebSocket listener, same host and
// port, path /play) by code: ?room=CODE or the form, with ?token=HEX (a
// spectator connect token's 148 bytes as 296 hex digits) or the form's
// token field on a server in token mode. web/gamekit's client adopts the
// SPECTATE snapshot and runs every confirmed step it is sent (the server
// holds them spectator.delay_steps behind); the genre's view draws its
// state each frame. The panel shows each player's slot, the step, the
// input delay the page started with, the room's health as the server
// tells spectators (its STALL and DESYNC notices, docs/PROTOCOL.md) and
// each jump: a watcher that fell spectator.behind_steps behind gets a
// newer snapshot (kind REFRESH) and skips the steps between.
//
// window.watch exposes what tests read: hashes (step -> 16 hex digits, the
// hash after each step the page ran), step, jumps [{from, to}], errors,
// stalls, desyncs, snapshots, firstDrawMs (performance.now() at the first
// drawn state), and hold (true: stop drawing; drawnState is the last one
// drawn, for a screenshot).
import { connect, socketUrl } from './gamekit/gamekit.js';
import { ERRORS, SNAP, errorSentence } from './gamekit/constants.js';
import * as survivors from './views/survivors.js';
import { slotLabel } from './views/survivors.js';
import * as pushPuzzle from './views/push_puzzle.js';

const VIEWS = { survivors, 'push-puzzle': pushPuzzle };
const TOKEN_BYTES = 148;
const KEEP_HASHES = 100000; // steps of hash chain kept (older ones dropped)
const QUIET_MS = 1500;      // no step for this long: the stream is said to wait
const $ = (id) => document.getElementById(id);
// What a watcher can do about a refusal, beyond its sentence (constants.js,
// from gk_err.h), by the code's name.
const ADVICE = { GK_ENOTOKEN: 'Give a spectator token (?token=HEX or the ' +
  'form).', GK_EROLE: 'This one is a player\'s token, not a spectator\'s.' };

const watch = { ready: false, code: null, client: null, genre: null,
  match: null, step: -1, hashes: {}, hashFrom: 0, jumps: [], errors: [],
  stalls: [], desyncs: [], removed: [], snapshots: [], ended: null,
  started: false, firstDrawMs: null, lastStepMs: 0, hold: false,
  drawnState: null, view: null, names: [] };
window.watch = watch;

function status(text, err = false) {
  $('status').textContent = text;
  $('status').className = err ? 'err' : '';
}

function error(text) {
  watch.errors.push(text);
  status(text, true);
  $('perr').textContent = text;
}

/** A spectator token from hex text: null for none, else 148 bytes; throws
 * an Error saying what is wrong. */
export function parseToken(text) {
  const t = (text || '').replace(/\s+/g, '');
  if (t === '') return null;
  if (!/^[0-9a-fA-F]*$/.test(t))
    throw new Error('token: only hex digits (0-9, a-f) please');
  if (t.length !== 2 * TOKEN_BYTES)
    throw new Error(`token: ${TOKEN_BYTES} bytes are ${2 * TOKEN_BYTES} ` +
      `hex digits, this one has ${t.length}`);
  const out = new Uint8Array(TOKEN_BYTES);
  for (let i = 0; i < TOKEN_BYTES; i++)
    out[i] = parseInt(t.substr(2 * i, 2), 16);
  return out;
}

function lock(on) {
  for (const id of ['watch', 'code', 'token']) $(id).disabled = on;
}

function hooks(c) {
  c.on('step', (step, hash) => {
    watch.step = step;
    watch.lastStepMs = performance.now();
    watch.hashes[step] = hash;
    while (step - watch.hashFrom >= KEEP_HASHES) delete watch.hashes[watch.hashFrom++];
  });
  c.on('started', (m) => begin(c, m));
  c.on('snapshot', (s) => {
    watch.snapshots.push(s);
    if (s.rc < 0) {
      error(`the snapshot of step ${s.step} was refused: ${s.error}`);
      return;
    }
    if (s.kind === SNAP.REFRESH) {
      // the steps between were skipped: the chain has none of them
      watch.jumps.push({ from: watch.step, to: s.step });
      $('jump').textContent = `jumped from step ${watch.step} to ` +
        `${s.step} (the page fell behind; a newer snapshot)`;
    }
  });
  c.on('roster', (r) => { // names by slot: the panel, the view, the camera
    watch.names = r.names;
    if (watch.view && watch.view.setNames) watch.view.setNames(r.names);
    if (watch.match) cameras(watch.match, true);
  });
  c.on('stall', (s) => watch.stalls.push(s));
  c.on('desync', (d) => watch.desyncs.push(d));
  c.on('removed', (r) => watch.removed.push(r));
  c.on('ended', (e) => { watch.ended = e || true; });
  // Play again: the room's host made its next room; watch it from here
  c.on('next_room', (r) => {
    watch.next = r;
    const a = document.getElementById('nextroom');
    a.href = location.pathname + '?room=' + encodeURIComponent(r.shown);
    a.textContent = `The host made a new room, ${r.shown}: watch it`;
    a.hidden = false;
  });
  c.on('message', (m) => {
    if (m.type === 'error') refused(c, m);
  });
  c.on('close', () => {
    if (!watch.started) refused(c, null);
    else if (!watch.ended) error('disconnected from the server');
  });
}

// A refusal (ERROR) or a close before the match was seen: say why, and let
// the form try again.
function refused(c, m) {
  if (m) {
    const name = (ERRORS[m.code] || {}).name;
    error(`The server refused to show room ${watch.code}. ` +
      (m.sentence || errorSentence(m.code)) + (ADVICE[name] ? ' ' + ADVICE[name] : ''));
  }
  else if (!watch.errors.length) error('the server closed the connection');
  if (!watch.started) {
    c.close();
    watch.client = null;
    lock(false);
  }
}

async function start(code, tokenText) {
  code = (code || '').trim().toUpperCase();
  if (!code) return;
  let token;
  try {
    token = parseToken(tokenText);
  } catch (e) {
    error(e.message);
    return;
  }
  lock(true);
  $('perr').textContent = '';
  status(`connecting to room ${code}...`);
  watch.code = code;
  try {
    const c = await connect(socketUrl('play'));
    watch.client = c;
    const shown = c.shownCode(code);
    if (!shown) {
      c.close();
      throw new Error('a room code is 4 to 8 letters and digits ' +
        '(16 from an older server)');
    }
    watch.code = shown;
    hooks(c);
    c.spectate(code, token ? { token } : {});
  } catch (e) {
    error(String(e.message || e));
    lock(false);
  }
}

function slotsOf(mask, n) {
  const out = [];
  for (let i = 0; i < n; i++) if (mask >> i & 1) out.push(i);
  return out;
}

function players(s) {
  const m = watch.match;
  const gone = new Set(watch.removed.map((r) => r.slot));
  const rows = [];
  for (let i = 0; i < m.players; i++) {
    let t = slotLabel(i, watch.names);
    if (!(m.activeMask >> i & 1) || gone.has(i)) t += ' (not playing)';
    const h = s ? s.state[`players[${i}].health`] : undefined;
    if (h !== undefined)
      t += ` · health ${h}/${s.state[`players[${i}].max_health`]}`;
    rows.push(t);
  }
  return rows;
}

function panel(s) {
  const m = watch.match;
  $('room').textContent = `room ${watch.code} · ${watch.genre}`;
  // names are anyone's text: set as text, never parsed as HTML
  const rows = players(s), ul = $('players');
  if (ul.children.length !== rows.length ||
      rows.some((t, i) => ul.children[i].textContent !== t))
    ul.replaceChildren(...rows.map((t) => {
      const li = document.createElement('li');
      li.textContent = t;
      return li;
    }));
  const quiet = !watch.ended && watch.lastStepMs &&
    performance.now() - watch.lastStepMs > QUIET_MS;
  $('match').textContent = [`step ${watch.step}`,
    `input delay ${m.inputDelay} steps (when the page joined)`,
    watch.ended ? `match ended at step ${watch.ended.step}` :
      quiet ? 'waiting for steps' : 'live'].join(' · ');
  const st = watch.stalls.at(-1), ds = watch.desyncs.at(-1);
  const parts = [`stalls ${watch.stalls.length}` + (st ? ` (last at step ` +
    `${st.step}, waiting for ` +
    `${slotsOf(st.awaited, m.players).map((k) => slotLabel(k, watch.names)).join(', ')})`
    : ''),
  `desyncs ${watch.desyncs.length}` + (ds ? ` (last: ${slotLabel(ds.player, watch.names)} at ` +
    `step ${ds.step})` : ''), `jumps ${watch.jumps.length}`];
  $('health').textContent = parts.join(' · ');
  $('health').className = watch.desyncs.length ? 'err' : '';
}

// survivors: the camera shows the whole arena or follows one player (the
// panel's choice, an argument of every draw: watch.camera).
function cameras(match, keep) {
  const sel = $('camera');
  const was = sel.value;
  sel.parentElement.hidden = watch.genre !== 'survivors';
  const opts = [['arena', 'the whole arena']];
  for (let i = 0; i < match.players; i++)
    opts.push([String(i), `follow ${slotLabel(i, watch.names)}`]);
  sel.replaceChildren(...opts.map(([v, t]) => new Option(t, v)));
  if (keep) { // new names: the same choice
    sel.value = was;
    return;
  }
  sel.onchange = () => {
    watch.camera = sel.value === 'arena' ? { mode: 'arena' }
      : { mode: 'follow', follow: Number(sel.value) };
  };
  watch.camera = { mode: 'arena' };
}

function begin(c, match) {
  watch.match = match;
  watch.genre = match.genre;
  watch.started = true;
  const mod = VIEWS[watch.genre];
  if (!mod) {
    error(`no view for genre ${watch.genre}`);
    return;
  }
  status('');
  $('form').style.display = 'none';
  $('game').style.display = 'block';
  const view = mod.createView($('c'), watch.genre === 'survivors'
    ? { localPlayer: -1, minimap: 140 } : { buttons: false });
  watch.view = view;
  if (view.setNames) view.setNames(watch.names);
  cameras(match);
  new ResizeObserver(() => view.resize()).observe($('c'));
  requestAnimationFrame(function frame() {
    if (!c.closed) c.service(); // what is due now, even if the timer is late
    const s = c.closed ? null : c.state();
    if (s && !watch.hold) {
      const smp = c.sample();
      view.draw(s.state, smp ? smp.state : null, watch.camera);
      watch.drawnState = s.state;
      if (watch.firstDrawMs === null) watch.firstDrawMs = performance.now();
    }
    panel(s);
    if (!c.closed) requestAnimationFrame(frame);
  });
}

$('watch').onclick = () => start($('code').value, $('token').value);
const q = new URLSearchParams(location.search);
if (q.get('token')) $('token').value = q.get('token');
if (q.get('room')) {
  $('code').value = q.get('room');
  start(q.get('room'), q.get('token'));
}
watch.ready = true;
