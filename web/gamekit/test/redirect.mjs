// redirect.mjs: gamekit.js (under node, the real gamekit.wasm) follows a
// fleet's REDIRECT once, against real gk-server nodes sharing a real
// redis-server (test_redirect.py starts them). TAP on stdout.
//
//   node --experimental-websocket redirect.mjs A B C D
//     A, B  nodes' WebSocket URLs (B: the door every client knocks at)
//     C     a node whose advertised ws_url is B's (a second REDIRECT)
//     D     a node that advertises no ws_url
//
// A room made on A is joined through B (redirected, same request sent
// again), watched through B, and its joiner's socket closed mid-match
// and its seat taken back through B with the reconnect secret; every
// client's hash agrees with the creator's at every step both ran. A join
// and a spectate through B for C's room meet a second REDIRECT, a join
// for D's room a REDIRECT with no WebSocket URL: each is a refusal with
// its sentence, never a third socket.
import { connect, ERRORS } from "../gamekit.js";

const [A, B, C, D] = process.argv.slice(2);
const STEPS = 360, DROP = 120;
let n = 0, failed = 0;
const check = (ok, what, why = "") => {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} ${n} - ${what}${ok || !why ? "" : "\n# " + why}`);
};
const guard = setTimeout(() => {
  console.log("not ok - timed out (60 s)");
  process.exit(1);
}, 60000);
const codeOf = (name) => Number(Object.keys(ERRORS).find((k) => ERRORS[k].name === name));
const sockets = [];
const WS = class extends globalThis.WebSocket {
  constructor(url, p) {
    super(url, p);
    sockets.push(url);
  }
};
const opts = (o) => ({ ...o, WebSocket: WS });

// A client's steps as { step: hash }, and its end.
function record(c) {
  const r = { chain: {}, ended: null, snapshots: [], resumed: false, errors: [] };
  c.on("step", (s, h) => { r.chain[s] = h; });
  c.on("snapshot", (s) => r.snapshots.push(s));
  c.on("resumed", () => { r.resumed = true; });
  c.on("message", (m) => { if (m.type === "error") r.errors.push(m); });
  r.done = new Promise((resolve) => c.on("ended", (e) => {
    r.ended = e;
    resolve();
  }));
  return r;
}

// Steps of `b` that `a` also ran, and the first that differs.
function agree(a, b) {
  let both = 0, first = null;
  for (const s of Object.keys(b.chain)) {
    if (!(s in a.chain)) continue;
    both++;
    if (a.chain[s] !== b.chain[s] && first === null) first = s;
  }
  return { both, first };
}

process.on("unhandledRejection", () => {});
console.log("1..13");

// --- quick play at A and at B at once: one room, one REDIRECT -----------
// First, while no node has a room: the new room then goes to the node
// asked first (a tie goes to the asking node), never to C, whose
// advertised URL is B's (a WebSocket player is never sent to D).
{
  const a = await connect(A, opts({ bot: true, seed: 3 }));
  const b = await connect(B, opts({ bot: true, seed: 4 }));
  const ar = record(a), br = record(b);
  const want = { genre: "survivors", maxPlayers: 2 };
  const [qa, qb] = await Promise.all([a.quickPlay(want), b.quickPlay(want)]);
  check(qa.code === qb.code && qa.slot !== qb.slot && a.redirects + b.redirects === 1 &&
    a.ws.url === b.ws.url,
  "quick play at A and at B at once seats both in one room, one REDIRECT",
  `A: ${JSON.stringify(qa)} (${a.redirects} redirects), B: ${JSON.stringify(qb)} ` +
  `(${b.redirects}), sockets ${a.ws.url} ${b.ws.url}`);
  await Promise.all([a, b].map((c) => new Promise((resolve) => c.on("step", (s) => {
    if (s === 240) resolve();
  }))));
  const g = agree(ar, br);
  check(g.first === null && g.both >= 200,
    "the quick-play room started by itself and both players agree",
    `${g.both} steps both ran, first that differs: ${g.first}`);
  a.close();
  b.close();
}

// --- a match on A, joined, watched and rejoined through B ---------------
const host = await connect(A, opts({ bot: true, seed: 1 }));
const hr = record(host);
const { code } = await host.createRoom({ genre: "survivors", maxPlayers: 2 });
const joiner = await connect(B, opts({ bot: true, seed: 2 }));
const redirects = [];
joiner.on("redirect", (r) => redirects.push(r));
const j = await joiner.join(code);
check(j.slot === 1 && joiner.redirects === 1 && joiner.ws.url === A &&
  redirects.length === 1 && redirects[0].code === code && redirects[0].wsUrl === A,
"a join through B is redirected once to A and seated",
`slot ${j.slot}, redirects ${joiner.redirects} ${JSON.stringify(redirects)}, socket ${joiner.ws.url}`);
const jr = record(joiner);
let secret = null;
joiner.on("secret", (e) => { secret = e; });
host.on("step", (s) => {
  if (s + 1 === STEPS) host.endMatch(2);
});
host.start();
await new Promise((resolve) => host.on("started", resolve));

const watcher = await connect(B, opts());
const wr = record(watcher);
watcher.spectate(code);

// the joiner's socket closes at DROP; a fresh client takes the seat back
// through B
const back = await new Promise((resolve) => joiner.on("step", (s) => {
  if (s !== DROP) return;
  setImmediate(async () => {
    joiner.ws.onclose = null;
    joiner.close();
    const c = await connect(B, opts({ bot: true, seed: 2 }));
    const r = record(c);
    c.rejoin(code, secret.slot, secret.secret);
    resolve({ c, r });
  });
}));
await Promise.all([hr.done, back.r.done, wr.done]);
check(back.c.redirects === 1 && back.r.resumed && back.c.ws.url === A,
  "a rejoin through B is redirected once to A and resumes",
  `redirects ${back.c.redirects}, resumed ${back.r.resumed}, errors ${JSON.stringify(back.r.errors)}`);
check(watcher.redirects === 1 && wr.snapshots.length >= 1 && wr.snapshots[0].rc === 0,
  "a spectator through B is redirected once to A and gets a snapshot",
  `redirects ${watcher.redirects}, snapshots ${JSON.stringify(wr.snapshots)}`);
check(hr.ended && Object.keys(hr.chain).length >= STEPS,
  `the creator ran the ${STEPS} steps`, `steps ${Object.keys(hr.chain).length}`);
for (const [who, r, min] of [["the joiner", jr, DROP], ["the rejoined seat", back.r, STEPS - DROP - 60],
  ["the spectator", wr, STEPS / 3]]) {
  const a = agree(hr, r);
  check(a.first === null && a.both >= min,
    `${who}'s hashes agree with the creator's at every step both ran`,
    `${a.both} steps both ran (want ${min}+), first that differs: ${a.first}`);
}
host.close();
back.c.close();
watcher.close();

// --- a second REDIRECT, and one with no WebSocket URL --------------------
async function refused(at, call) {
  const room = await (await connect(at, opts())).createRoom({ genre: "survivors", maxPlayers: 2 });
  const c = await connect(B, opts());
  const before = sockets.length;
  const errors = [];
  c.on("message", (m) => { if (m.type === "error") errors.push(m); });
  let err = null;
  try {
    await call(c, room.code, errors);
  } catch (e) {
    err = e;
  }
  return { c, err, errors, opened: sockets.length - before };
}
const spectated = (c, code, errors) => {
  c.spectate(code);
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (errors.length) reject(errors[0]);
      if (errors.length || c.closed) clearInterval(t);
    }, 10);
  });
};
for (const [what, call] of [["join", (c, k) => c.join(k)], ["spectate", spectated]]) {
  const r = await refused(C, call);
  const e = r.errors[0] || {};
  check(r.err && r.err.code === codeOf("GK_EPROTO") && /a second REDIRECT/.test(r.err.message ||
    r.err.text) && e.sentence && /twice/.test(e.sentence) && r.c.redirects === 1 &&
    r.opened === 1 && r.c.closed,
  `a ${what} that meets a second REDIRECT is refused with its sentence`,
  `error ${r.err && (r.err.message || r.err.text)}, messages ${JSON.stringify(r.errors)}, ` +
  `redirects ${r.c.redirects}, sockets opened after the first ${r.opened}`);
}
{
  const r = await refused(D, (c, k) => c.join(k));
  check(r.err && r.err.code === codeOf("GK_EUNAVAILABLE") &&
    /takes no WebSocket players \(127\.0\.0\.1:\d+\)/.test(r.err.message) &&
    /no browser players/.test(r.err.sentence) && r.c.redirects === 0 &&
    r.opened === 0 && r.c.closed,
  "a join redirected to a node without WebSocket is refused with its sentence",
  `error ${r.err && r.err.message}, sentence ${r.err && r.err.sentence}, ` +
  `redirects ${r.c.redirects}, sockets opened ${r.opened}`);
}
{
  const c = await connect(B, opts());
  const room = c.createRoom({ genre: "survivors", maxPlayers: 2 });
  const r = await room;
  check(r.code && c.redirects === 0, "a room made at B stays at B (no REDIRECT)",
    `code ${r.code}, redirects ${c.redirects}`);
  c.close();
}

clearTimeout(guard);
process.exit(failed ? 1 : 0);
