// web/replay.js: the replay page (web/replay.html). Opens a .gkr file with
// web/gamekit/replay.js (the C reader and verifier in gamekit.wasm), plays
// it at x1/x4/x16 of real time (the header's step_seconds), steps, seeks
// through the snapshots a scan keeps after opening (it runs ahead in idle
// time), and in "verify" mode runs every step as fast as it goes and
// reports steps per second. Every step run is checked
// against the file's hash; the first bad step stops playing and the
// verdict is gk-replay verify's text. A desync bundle (gk-server's folder:
// replay.gkr, referee.state, peer.state) shows both states side by side
// with the differing fields, by path, highlighted. window.replayPage
// exposes what the page shows (tests read it).
import { openReplay } from './gamekit/replay.js';
import * as survivors from './views/survivors.js';
import * as pushPuzzle from './views/push_puzzle.js';

const VIEWS = { survivors, 'push-puzzle': pushPuzzle };
const $ = (id) => document.getElementById(id);
const page = { replay: null, name: null, verdict: null, error: null,
  playing: false, speed: 1, seekMs: [], verifyResult: null, bundle: null,
  opened: 0, scanned: 0, verifying: false };
window.replayPage = page;
let view = null;
let acc = 0, last = 0;

function show(id, text, cls = '') {
  $(id).textContent = text;
  $(id).className = cls;
}

function fail(text) {
  page.error = text;
  show('verdict', text, 'err');
}

function controls(on) {
  for (const id of ['play', 'step', 'speed', 'seek', 'verify']) $(id).disabled = !on;
}

// The verdict line: gk-replay verify's words, and the first bad step.
function verdictLine() {
  const r = page.replay;
  const v = r.verdict();
  v.firstBadStep = v.status === 'mismatch' ? v.step
    : v.status === 'invalid' ? v.stepsChecked : null;
  page.verdict = v;
  const cls = v.status === 'ok' ? (v.done ? 'ok' : '') : 'err';
  let text = page.name + ': ' + v.text;
  if (v.firstBadStep !== null) text += '\nfirst bad step: ' + v.firstBadStep;
  show('verdict', text, cls);
  if (v.status !== 'ok') stop();
  return v;
}

function draw() {
  const r = page.replay;
  if (!r || !r.playable) return;
  const s = r.state();
  const w = r.where();
  $('seek').value = String(w.position);
  const rec = w.position > 0 ? r.recordedHash(w.position - 1) : null;
  const bad = rec !== null && rec !== s.hash;
  show('where', `position ${w.position} / ${r.info.steps} steps (after step ` +
    `${w.position - 1}) · state hash ${s.hash}` +
    (rec !== null ? ` · file ${rec}` : '') + ` · verified ${w.verified}` +
    ` · ${w.snapshots} snapshots`, bad ? 'err' : '');
  if (view) {
    const smp = r.sample();
    view.draw(s.state, smp ? smp.state : null);
  }
  verdictLine();
}

function stop() {
  page.playing = false;
  $('play').textContent = 'Play';
}

function stepsPerSecond() {
  const [num, den] = page.replay.info.stepSeconds;
  return den / num;
}

function frame(t) {
  const r = page.replay;
  if (page.playing && r && r.playable) {
    const dt = Math.min(250, t - (last || t));
    acc += dt / 1000 * stepsPerSecond() * page.speed;
    const n = Math.floor(acc);
    acc -= n;
    if (n > 0) r.step(n);
    if (r.position >= r.info.steps) stop();
    draw();
  }
  last = t;
  requestAnimationFrame(frame);
}

function describe(r) {
  const i = r.info;
  if (!i.headerOk) return 'not a readable replay';
  const secs = i.steps * i.stepSeconds[0] / i.stepSeconds[1];
  let text = `${i.genre} v${i.genreVersion} · ${i.players} players · ` +
    `${i.steps} steps (${secs.toFixed(1)} s) · seed ${i.seed}`;
  if (i.origin) text += ` · ${i.origin}`;
  if (i.damage) text += `\ndamage at offset ${i.damage.offset}: ${i.damage.what} (${i.damage.name})`;
  return text;
}

async function openGkr(name, bytes) {
  stop();
  if (page.replay) page.replay.close();
  page.replay = null;
  page.verifyResult = null;
  page.seekMs = [];
  page.error = null;
  page.name = name;
  controls(false);
  const r = await openReplay(bytes);
  page.replay = r;
  show('info', describe(r), r.info.damage ? 'err' : '');
  if (!r.playable) {
    show('where', '');
    verdictLine();
    return r;
  }
  const mod = VIEWS[r.info.genre];
  view = mod ? mod.createView($('view'), r.info.genre === 'survivors'
    ? { localPlayer: 0 } : { buttons: false }) : null;
  $('seek').max = String(r.info.steps);
  controls(true);
  draw();
  scanAhead(r);
  return r;
}

// After opening: the scan loop runs ahead in idle time (a task per 4096
// steps, none while "verify" runs), keeping the snapshots seeks start
// from and checking every hash. replayPage.scanned: where it is.
async function scanAhead(r) {
  page.scanned = 0;
  for (;;) {
    await new Promise((res) => setTimeout(res, 0));
    if (page.replay !== r || !r.w) return;
    if (page.verifying) continue;
    const v = r.scan(4096);
    page.scanned = r.where().scanned;
    if (v.status !== 'ok' || page.scanned >= r.info.steps) break;
  }
  if (!page.playing) draw();
}

// --- desync bundles -----------------------------------------------------

function valueText(v) {
  return typeof v === 'string' && v.length > 64 ? v.slice(0, 64) + '…' : String(v);
}

// True if the state field at `path` is (or holds) a differing field.
function differs(path, paths) {
  for (const p of paths) if (p === path || p.startsWith(path + '[')) return true;
  return false;
}

function table(el, state, paths) {
  const t = document.createElement('table');
  for (const [path, v] of Object.entries(state)) {
    const tr = t.insertRow();
    if (differs(path, paths)) tr.className = 'diff';
    tr.insertCell().textContent = path;
    tr.insertCell().textContent = valueText(v);
  }
  el.replaceChildren(t);
}

async function openBundle(files) {
  const need = ['replay.gkr', 'referee.state', 'peer.state'];
  const missing = need.filter((n) => !files[n]);
  if (missing.length) {
    fail('a desync bundle needs ' + need.join(', ') + '; missing: ' + missing.join(', '));
    return;
  }
  const r = await openGkr('replay.gkr', files['replay.gkr']);
  if (!r.info.headerOk || !r.info.genre || r.error && !r.playable) {
    fail('the bundle\'s replay.gkr cannot be run: ' + (r.error || 'no header'));
    return;
  }
  try {
    const a = r.stateOf(files['referee.state']);
    const b = r.stateOf(files['peer.state']);
    const d = r.diff(files['referee.state'], files['peer.state'], 100);
    const paths = d.fields.map((f) => f.path);
    page.bundle = { diff: d, first: paths[0] || null, a, b };
    show('bsum', `${d.total} field(s) differ` + (paths[0] ? `, first ${paths[0]}` : ''));
    const ol = $('difflist');
    ol.replaceChildren(...d.fields.map((f) => {
      const li = document.createElement('li');
      li.textContent = `${f.path}: referee ${valueText(f.a)}, peer ${valueText(f.b)}`;
      return li;
    }));
    table($('ta'), a.state, paths);
    table($('tb'), b.state, paths);
    $('bundle').style.display = 'block';
    const mod = VIEWS[r.info.genre];
    if (mod) {
      mod.createView($('ca')).draw(a.state, null);
      mod.createView($('cb')).draw(b.state, null);
    }
  } catch (e) {
    fail(e.message);
  }
}

// Opens what was picked or dropped; replayPage.opened counts the opens
// finished (well or not: replayPage.error says).
async function openFiles(list) {
  const files = {};
  page.error = null;
  try {
    for (const f of list) files[f.name] = new Uint8Array(await f.arrayBuffer());
    const names = Object.keys(files);
    $('bundle').style.display = 'none';
    page.bundle = null;
    if (names.length === 0) return;
    if (names.length > 1 || files['referee.state'] || files['peer.state']) {
      await openBundle(files);
    } else {
      await openGkr(names[0], files[names[0]]);
    }
  } catch (e) {
    fail('cannot open: ' + e.message);
  } finally {
    page.opened++;
  }
}

// --- controls -----------------------------------------------------------

$('file').addEventListener('change', (e) => openFiles(e.target.files));
addEventListener('dragover', (e) => {
  e.preventDefault();
  document.body.classList.add('over');
});
addEventListener('dragleave', () => document.body.classList.remove('over'));
addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('over');
  openFiles(e.dataTransfer.files);
});
$('play').addEventListener('click', () => {
  if (!page.replay || !page.replay.playable) return;
  page.playing = !page.playing;
  acc = 0;
  if (page.playing && page.replay.position >= page.replay.info.steps) page.replay.seek(0);
  $('play').textContent = page.playing ? 'Pause' : 'Play';
});
$('step').addEventListener('click', () => {
  stop();
  page.replay.step(1);
  draw();
});
$('speed').addEventListener('change', (e) => { page.speed = Number(e.target.value); });
$('seek').addEventListener('input', (e) => {
  const t0 = performance.now();
  page.replay.seek(Number(e.target.value));
  page.seekMs.push(performance.now() - t0);
  draw();
});
$('verify').addEventListener('click', async () => {
  stop();
  const r = page.replay;
  controls(false);
  page.verifying = true;
  r.seek(0);
  show('where', 'verifying…');
  const res = await r.verify({ onProgress: (done, total) => {
    show('where', `verifying: ${done} / ${total} steps`);
  } });
  page.verifying = false;
  const realtime = res.stepsPerSecond / stepsPerSecond();
  page.verifyResult = { ...res, realtime };
  controls(true);
  draw();
  show('where', $('where').textContent + `\nverify: ${res.steps} steps in ` +
    `${res.seconds.toFixed(3)} s, ${Math.round(res.stepsPerSecond)} steps/s ` +
    `(${Math.round(realtime)}x real time)`);
});
requestAnimationFrame(frame);
