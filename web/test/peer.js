// web/test/peer.js: one bot seat of a gk-server room in a page, for the
// browser match tests (tests/web/test_play_match.py) and the page
// figures (bench/bench_page.py). Everything is on window.peer:
//
//   await peer.create({maxPlayers, seed, steps, options, inputDelay})
//                           -> room code (this page hosts; with `steps`
//                              it ends the match once it ran that many)
//   await peer.join(code, seed)      -> slot
//   peer.start()                     the host starts the match
//   peer.perturb(step, path)         gamekit.js perturb (a test desync)
//   peer.dropAt(step)                after that step: keep code, slot,
//                                    secret and the chain so far in
//                                    sessionStorage, close the socket,
//                                    reload; the reloaded page rejoins
//   peer.draw(on)                    the survivors view each frame
//   peer.still()                     stop drawing, draw the current
//                                    state once: {state, layout}
//   peer.palette                     the view's colours (the pixel checks)
//   peer.chain[step] = hash (16 hex digits), peer.last, peer.events,
//   peer.samples (performance.now() of each sample: [step, ms]) and
//   peer.ran (of each step run: [step, ms]), peer.ended, peer.error.
// ?auto=solo&seed=S&steps=N: create a one-seat room and start it at once
// (the figures' page load to first step).
import { connect } from '../gamekit/gamekit.js';
import { createView, COLORS, PLAYER_COLORS } from '../views/survivors.js';

const KEEP = 'gk-peer-rejoin';
const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') +
  location.host + '/play';
const peer = { client: null, code: null, slot: -1, chain: [], last: -1,
  events: [], samples: [], ran: [], firstStepMs: null, ended: null,
  error: null, rejoined: false, seed: 1, steps: 0, drop: -1,
  drawing: false, view: null, ready: false,
  palette: { colors: COLORS, player_colors: PLAYER_COLORS } };
window.peer = peer;

const note = (type, o = {}) => peer.events.push({ type, ms: performance.now(), ...o });

// The step a sample is for: the match's first step + the input delay +
// the samples taken before it (the schedule, gk_net_peer.h). Exact while
// the delay is fixed (lockstep.input_delay a number).
function watchSamples(c) {
  const call = c.call.bind(c);
  let taken = 0;
  c.call = (fn, ...args) => {
    const t = performance.now();
    const rc = call(fn, ...args);
    if (!c.closed && c.match) {
      const n = c.stats().samples;
      for (; taken < n; taken++)
        peer.samples.push([c.match.firstStep + c.match.inputDelay + taken, t]);
    }
    return rc;
  };
}

function attach(c) {
  peer.client = c;
  watchSamples(c);
  c.on('step', (step, hash) => {
    const t = performance.now();
    if (peer.firstStepMs === null) peer.firstStepMs = t;
    peer.chain[step] = hash;
    peer.last = step;
    peer.ran.push([step, t]);
    if (peer.steps && step + 1 === peer.steps && !peer.endSent) {
      peer.endSent = true;
      c.endMatch(2);
    }
    if (step === peer.drop && !peer.rejoined) drop(c);
  });
  c.on('started', (m) => note('started', { match: m }));
  c.on('desync', (d) => note('desync', d));
  c.on('stall', (s) => note('stall', s));
  c.on('removed', (r) => note('removed', r));
  c.on('snapshot', (s) => note('snapshot', s));
  c.on('resumed', () => note('resumed'));
  c.on('message', (m) => { if (m.type === 'error') note('error', m); });
  c.on('ended', (e) => {
    peer.ended = { ...e, stats: c.stats() };
    note('ended', peer.ended);
  });
  c.on('close', () => note('close'));
}

const hex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('');
const unhex = (s) => Uint8Array.from(s.match(/../g), (h) => parseInt(h, 16));

// The socket closes at once (no goodbye) and the page reloads; what the
// rejoin needs survives in sessionStorage.
function drop(c) {
  sessionStorage.setItem(KEEP, JSON.stringify({ code: c.code, slot: c.slot,
    secret: hex(c.secret), seed: peer.seed, chain: peer.chain,
    dropped: peer.last }));
  c.ws.onclose = null;
  c.close();
  location.reload();
}

async function rejoin(kept) {
  peer.seed = kept.seed;
  peer.chain = kept.chain.map((h) => h || undefined);
  peer.dropped = kept.dropped;
  peer.code = kept.code;
  peer.slot = kept.slot;
  peer.rejoined = true;
  const c = await connect(url, { bot: true, seed: kept.seed });
  attach(c);
  c.rejoin(kept.code, kept.slot, unhex(kept.secret));
}

peer.create = async ({ maxPlayers = 3, seed = 1, steps = 0, options = null,
  inputDelay = 0 } = {}) => {
  peer.seed = seed;
  peer.steps = steps;
  const c = await connect(url, { bot: true, seed });
  attach(c);
  const r = await c.createRoom({ genre: 'survivors', maxPlayers, inputDelay,
    options });
  peer.code = r.code;
  peer.slot = r.slot;
  return r.code;
};

peer.join = async (code, seed = 1) => {
  peer.seed = seed;
  const c = await connect(url, { bot: true, seed });
  attach(c);
  const r = await c.join(code);
  peer.code = code;
  peer.slot = r.slot;
  return r.slot;
};

peer.start = () => peer.client.start();
peer.perturb = (step, path) => peer.client.perturb(step, path, 1);
peer.dropAt = (step) => { peer.drop = step; };

function drawNow() {
  const s = peer.client && peer.client.state();
  if (!s) return null;
  if (!peer.view) peer.view = createView(document.getElementById('c'), { localPlayer: peer.slot });
  const smp = peer.client.sample();
  peer.view.draw(s.state, smp ? smp.state : null);
  return s;
}

peer.draw = (on = true) => {
  peer.drawing = on;
  if (!on) return;
  requestAnimationFrame(function frame() {
    if (!peer.drawing) return;
    drawNow();
    requestAnimationFrame(frame);
  });
};

peer.still = () => {
  peer.drawing = false;
  const s = drawNow();
  return s && { state: s.state, step: s.step, layout: peer.view.layout() };
};

const q = new URLSearchParams(location.search);
const kept = sessionStorage.getItem(KEEP);
if (kept) {
  sessionStorage.removeItem(KEEP);
  rejoin(JSON.parse(kept)).catch((e) => { peer.error = String(e.message || e); });
} else if (q.get('auto') === 'solo') {
  peer.create({ maxPlayers: 1, seed: Number(q.get('seed') || 1),
    steps: Number(q.get('steps') || 0) })
    .then(() => peer.start())
    .catch((e) => { peer.error = String(e.message || e); });
}
peer.ready = true;
