// token_length.mjs: gamekit.js (under node, the real gamekit.wasm) refuses
// a connect token that is not exactly a token's bytes, before anything is
// sent: a token one byte longer is never cut to size and sent. The
// WebSocket is a recorder (no server: nothing here is the server's to
// judge). A refused call leaves no reply awaited: the next call's reply
// resolves the next call's promise. TAP on stdout.
//
//   node token_length.mjs
import { connect } from "../gamekit.js";

class Recorder {
  constructor(url, protocol) {
    this.sent = [];
    this.bufferedAmount = 0;
    this.readyState = 0; // CONNECTING, then OPEN (the WebSocket API's)
    setTimeout(() => {
      this.readyState = 1;
      if (this.onopen) this.onopen();
    }, 0);
  }
  send(bytes) {
    this.sent.push(new Uint8Array(bytes));
  }
  close() {}
}

const code = "AAAAAAAAAAAAAAAA";
let n = 0, failed = 0;
const check = (ok, what, why = "") => {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} ${n} - ${what}${ok || !why ? "" : "\n# " + why}`);
};

async function attempt(len, call) {
  const c = await connect("ws://recorder/play", { WebSocket: Recorder,
    token: new Uint8Array(len).fill(0xab) });
  let error = null;
  try {
    const p = call(c);
    if (p && p.catch) p.catch(() => {}); // a reply never comes
  } catch (e) {
    error = e;
  }
  const sent = c.ws.sent.length, waiting = c.waiters.length;
  c.close();
  return { error, sent, waiting };
}

// a reply awaited by a refused call is rejected at close: counted above
process.on("unhandledRejection", () => {});
console.log("1..8");
const calls = {
  createRoom: (c) => c.createRoom({ genre: "survivors" }),
  join: (c) => c.join(code),
  spectate: (c) => c.spectate(code),
  rejoin: (c) => c.rejoin(code, 0, new Uint8Array(16)),
};
for (const [name, call] of Object.entries(calls)) {
  for (const len of [149, 147]) {
    if (len === 147 && name !== "join") continue;
    const r = await attempt(len, call);
    check(r.error !== null && r.error.message.startsWith("gamekit: " + name + ": ") &&
      r.sent === 0 && r.waiting === 0,
    `${name} with a ${len}-byte token is refused, nothing sent or awaited`,
    `error: ${r.error && r.error.message}, frames sent: ${r.sent}, ` +
    `replies awaited: ${r.waiting}`);
  }
}
{
  const r = await attempt(148, calls.join);
  check(r.error === null && r.sent === 1, "join with a 148-byte token sends one frame",
    `error: ${r.error && r.error.message}, frames sent: ${r.sent}`);
}
{
  const r = await attempt(0, calls.join);
  check(r.error === null && r.sent === 1, "join with no token sends one frame",
    `error: ${r.error && r.error.message}, frames sent: ${r.sent}`);
}
{
  const big = await attempt(149, (c) => c.join(code, { token: new Uint8Array(148) }));
  check(big.error === null && big.sent === 1, "a call's own 148-byte token is used",
    `error: ${big.error && big.error.message}, frames sent: ${big.sent}`);
}
process.exit(failed ? 1 : 0);
