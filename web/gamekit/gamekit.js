// gamekit.js: a browser (or node) player as a first-class lockstep peer.
//
// The peer engine is the C one (src/net/gk_net_peer.c) in gamekit.wasm:
// this module only carries bytes between a WebSocket and the engine, keeps
// the engine's deadline with one timer, and turns its out queue into
// callbacks. Time crosses into the engine as integer nanoseconds (two u32
// halves); nothing in the step path is a float, so every step's hash is the
// referee's. See README.md.
//
// Sampling schedule (ADR-0012): the engine samples the local input on its
// own deadlines (t0 + k * step) and calls the source's end_step after each
// sample and end_frame after the last sample of a timeout call; this module
// only calls the engine when its deadline has passed. It runs on the thread
// that imports it. On a page's main thread a page whose timers stop (a
// frozen tab; Chromium does not throttle a hidden tab with an open
// WebSocket, README.md) stops sampling and stalls every player until the
// host removes it (ADR-0012): run it in a Worker to keep playing in the
// background.

import createGamekit from "./dist/gamekit.mjs";

import { EV, MSG, BTN, FIELD, ERRORS, errorSentence } from "./constants.js";

export { ERRORS, errorSentence } from "./constants.js";
/** Buttons for press(): names to the engine's GK_WEB_BTN_* bits
 * (constants.js, generated from gk_web.h). */
export const BUTTONS = Object.freeze(Object.fromEntries(
  Object.entries(BTN).map(([k, v]) => [k.toLowerCase(), v])));
const TWO32 = 4294967296;
const EXACT = 9007199254740991; // 2^53 - 1: dump prints larger as text
/** Unreliable frames (INPUT) are skipped while the socket holds this many
 * unsent bytes: the engine repeats every unacknowledged record, so a newer
 * INPUT replaces the skipped one and a slow link does not grow latency. */
const BACKLOG = 16384;

let modulePromise = null;

/** Loads gamekit.wasm once. opts.wasmBinary (bytes) or opts.locateFile
 * (file name -> URL) say where it is; default: next to dist/gamekit.mjs. */
export function load(opts = {}) {
  if (modulePromise === null || opts.wasmBinary || opts.locateFile) {
    const init = { gkOptions: null };
    if (opts.wasmBinary) init.wasmBinary = opts.wasmBinary;
    if (opts.locateFile) init.locateFile = opts.locateFile;
    const p = nodeBinary(init).then(createGamekit).then((m) => {
      m.gkOptions = (ctx, sim, cfg, text, len, err, errlen) =>
        applyOptions(m, sim, cfg, text, len, err, errlen);
      return m;
    });
    if (opts.wasmBinary || opts.locateFile) return p;
    modulePromise = p;
  }
  return modulePromise;
}

// Under node the loader (built for web and worker) gets the .wasm's bytes.
async function nodeBinary(init) {
  const node = typeof process === "object" && process.versions && process.versions.node;
  if (!node || init.wasmBinary || init.locateFile) return init;
  const fs = await import("node:fs");
  init.wasmBinary = fs.readFileSync(new URL("./dist/gamekit.wasm", import.meta.url));
  return init;
}

// MATCH_START's options: JSON.parse, then one flattened key per leaf in
// document order (src/config/gk_config_kv.h), path "options".
function applyOptions(m, sim, cfg, text, len, err, errlen) {
  let obj;
  const fail = (code, msg) => {
    m.stringToUTF8(msg, err, errlen);
    return code;
  };
  try {
    obj = JSON.parse(m.UTF8ToString(text, len));
  } catch (e) {
    return fail(-14, "options: " + e.message);
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj))
    return fail(-1, "options: not a JSON object");
  return kvLeaves(m, obj, "options", {
    number: (kp, v) => m._gk_webx_kv_number(sim, cfg, kp, v, err, errlen),
    bool: (kp, v) => m._gk_webx_kv_bool(sim, cfg, kp, v, err, errlen),
    text: (kp, vp) => m._gk_webx_kv_text(sim, cfg, kp, vp, err, errlen),
  }, err, errlen);
}

/** Feeds `obj` to gk_config_kv (src/config/gk_config_kv.h) in document
 * order, as the C walker over cJSON's tree does: every member is judged
 * by gk_config_kv_node (an empty or long name, nesting, an empty object
 * or array, null, the key count: the walker's refusals, in its words),
 * and every leaf goes to set.number(kp, v), set.bool(kp, 0 or 1) or
 * set.text(kp, vp) with kp its dotted key (a C string) and vp a C string
 * freed after the call; each returns 0 or a GK_E* code. Returns 0 or the
 * first failure's code, with the message in err. For replay.js too; not
 * part of the package's API. */
export function kvLeaves(m, obj, path, set, err, errlen) {
  const w = m._gk_webx_walk_new(); // starts with the node's dotted key
  if (!w) throw new Error("gamekit: out of memory");
  const pp = cstr(m, path);
  const walk = (node, keylen, depth) => {
    const array = Array.isArray(node);
    let index = 0;
    for (const [k, v] of Object.entries(node)) {
      const kind = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
      const container = kind === "object" || kind === "array";
      const kp = array ? 0 : cstr(m, k);
      const kd = cstr(m, kind);
      let rc = m._gk_webx_walk_node(w, keylen, kp, index++, kd,
        container ? Object.keys(v).length : 0, depth, pp, err, errlen);
      m._free(kd);
      if (kp) m._free(kp);
      if (rc === 0 && container) rc = walk(v, m.lengthBytesUTF8(m.UTF8ToString(w)), depth + 1);
      else if (rc === 0 && kind === "number") rc = set.number(w, v);
      else if (rc === 0 && kind === "boolean") rc = set.bool(w, v ? 1 : 0);
      else if (rc === 0) {
        const vp = cstr(m, v);
        rc = set.text(w, vp);
        m._free(vp);
      }
      if (rc !== 0) return rc;
    }
    return 0;
  };
  try {
    return walk(obj, 0, 0);
  } finally {
    m._free(pp);
    m._free(w);
  }
}

/** A C copy of `s` on the wasm heap (the caller frees it). For
 * replay.js too. */
export function cstr(m, s) {
  const n = m.lengthBytesUTF8(s) + 1;
  const p = m._malloc(n);
  m.stringToUTF8(s, p, n);
  return p;
}

function bytesIn(m, bytes) {
  if (!bytes || bytes.length === 0) return [0, 0];
  const p = m._malloc(bytes.length);
  m.HEAPU8.set(bytes, p);
  return [p, bytes.length];
}

const u64 = (dv, o) => BigInt(dv.getUint32(o, true)) |
  (BigInt(dv.getUint32(o + 4, true)) << 32n);
const num64 = (dv, o) => dv.getUint32(o, true) + dv.getUint32(o + 4, true) * TWO32;
const hex16 = (h) => h.toString(16).padStart(16, "0");
const latin = (u8) => String.fromCharCode(...u8);
const utf8 = new TextDecoder();

// ROSTER's body (docs/PROTOCOL.md "Names") as names by slot ("" none).
function roster(body) {
  const names = [];
  for (let i = 0, p = 3; i < body[2]; i++) {
    const slot = body[p], n = body[p + 1];
    while (names.length < slot) names.push("");
    names[slot] = utf8.decode(body.subarray(p + 2, p + 2 + n));
    p += 2 + n;
  }
  return names;
}

/** Integer nanoseconds on a monotonic clock (performance.now()'s
 * milliseconds turned into an integer once, here at the edge). */
export function nowNs() {
  return Math.floor(performance.now() * 1e6);
}

/** A map's 64-bit integer (two u32 halves) as a Number within
 * +/-EXACT, else as its decimal text. Exact in doubles without a BigInt
 * while the high half is below 2^21 in size (nearly every field); a dense
 * survivors state has tens of thousands. */
function intOf(signed, lo, hi) {
  const h = signed ? hi | 0 : hi;
  if (h > -0x200000 && h < 0x200000) return h * TWO32 + lo;
  const b = (BigInt(hi) << 32n) | BigInt(lo);
  const v = signed ? BigInt.asIntN(64, b) : b;
  return v > BigInt(EXACT) || v < -BigInt(EXACT) ? v.toString() : Number(v);
}

/** Where a state map's columns are (predictedState({ columns })): a
 * symbol-keyed property of its `state`, so paths never meet it; views
 * read it with the same Symbol.for. */
export const COLUMNS = Symbol.for("gamekit.columns");

// The columns section after a map's fields (gk_web.h, "Columns"):
// { list: { key: Float64Array } }, exact within 2^53.
function decodeColumns(u8, dv, o) {
  const cols = {};
  const n = dv.getUint32(o + 4, true);
  o += 8;
  for (let i = 0; i < n; i++) {
    const list = latin(u8.subarray(o + 1, o + 1 + u8[o]));
    o += 1 + u8[o];
    const key = latin(u8.subarray(o + 1, o + 1 + u8[o]));
    o += 1 + u8[o];
    const kind = u8[o], count = dv.getUint32(o + 1, true);
    const signed = kind >= FIELD.I8 && kind <= FIELD.I64;
    const v = new Float64Array(count);
    o += 5;
    for (let k = 0; k < count; k++, o += 8) {
      const lo = dv.getUint32(o, true), hi = dv.getUint32(o + 4, true);
      v[k] = (signed ? hi | 0 : hi) * TWO32 + lo;
    }
    (cols[list] || (cols[list] = {}))[key] = v;
  }
  return cols;
}

/** Decodes a state/sample map (gk_web.h, "GKS1") into
 * { step, hash, state: { path: value } }: numbers (text beyond 2^53, as
 * gk-replay dump --json), booleans, and hex strings for bytes; with a
 * columns section, those fields in state[COLUMNS] instead. */
export function decodeMap(u8) {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (latin(u8.subarray(0, 4)) !== "GKS1") throw new Error("not a state map");
  const out = { step: num64(dv, 4), hash: hex16(u64(dv, 12)), state: {} };
  const count = dv.getUint32(20, true);
  let o = 24, prev = "";
  for (let i = 0; i < count; i++) {
    const kind = u8[o] & 0x7f, cont = (u8[o] & 0x80) !== 0;
    const keep = u8[o + 1], add = u8[o + 2];
    const path = prev.slice(0, keep) + latin(u8.subarray(o + 3, o + 3 + add));
    o += 3 + add;
    if (kind === FIELD.BYTES) {
      const n = dv.getUint32(o, true);
      let h = "";
      for (let j = 0; j < n; j++) h += u8[o + 4 + j].toString(16).padStart(2, "0");
      out.state[path] = cont ? (out.state[path] || "") + h : h;
      o += 4 + n;
    } else {
      const lo = dv.getUint32(o, true), hi = dv.getUint32(o + 4, true);
      out.state[path] = kind === FIELD.BOOL ? lo !== 0
        : intOf(kind >= FIELD.I8 && kind <= FIELD.I64, lo, hi);
      o += 8;
    }
    prev = path;
  }
  if (o + 8 <= u8.length && latin(u8.subarray(o, o + 4)) === "GKC1")
    out.state[COLUMNS] = decodeColumns(u8, dv, o);
  return out;
}

/** An Error for a GK code: message "gamekit: TEXT (CODE)", code (the
 * number) and sentence (errorSentence(code), what a page shows). */
export function refusal(code, text) {
  const e = new Error("gamekit: " + text + " (" + code + ")");
  e.code = code;
  e.sentence = errorSentence(code);
  return e;
}

// A GK code by its name (constants.js), for the client's own refusals.
const codeOf = (name) => Number(Object.keys(ERRORS).find((k) =>
  ERRORS[k].name === name));

/** One lockstep peer over one WebSocket. Use connect(). */
/** The WebSocket URL of `path` beside the page at `href` (default: this
 * page's): relative, so a page served under a prefix (deploy/fleet's
 * https://HOST/node/1/) reaches its own node (wss://HOST/node/1/play),
 * and at / it is /play; http gives ws:, https wss:. */
export function socketUrl(path = "play", href = globalThis.location.href) {
  const u = new URL(path, href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  u.hash = "";
  return u.href;
}

// A room code as people see it (gk_web_code_shown), with module m.
function codeShown(m, code) {
  const c = cstr(m, String(code));
  const out = m._malloc(17);
  try {
    return m._gk_webx_code_shown(c, out) === 0 ? m.UTF8ToString(out) : null;
  } finally {
    m._free(c);
    m._free(out);
  }
}

/** Client.shownCode without a client (a page listing rooms before it
 * connects): loads gamekit.wasm once, then resolves the code as people
 * see it, or null if it is no code. */
export async function shownCode(code, opts = {}) {
  return codeShown(await load(opts), code);
}

export class Client {
  constructor(m, ws, opts) {
    this.m = m;
    this.now = opts.now || nowNs;
    this.opts = opts;
    this.w = this.engine();
    this.out2 = m._malloc(80); // stats(): 9 u64
    this.token = opts.token || null;
    this.timer = null;
    this.closed = false;
    this.waiters = [];
    this.handlers = {};
    this.slot = -1;
    this.code = null;
    this.secret = null;
    this.match = null;
    this.ended = null;
    this.request = null; // the last JOIN/REJOIN/SPECTATE, to send again
    this.redirected = false; // that request followed its REDIRECT
    this.redirects = 0;
    this.attach(ws);
  }

  // GK_WEB_PREDICT (0x100): a predicted head (predictedState, "rollback")
  engine() {
    const o = this.opts, seed = o.seed || 0;
    const w = this.m._gk_webx_new((o.bot ? 1 : 0) | (o.predict ? 0x100 : 0),
      seed % TWO32, Math.floor(seed / TWO32));
    if (!w) throw new Error("gamekit: out of memory");
    return w;
  }

  attach(ws) {
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    ws.onmessage = (e) => this.receive(new Uint8Array(e.data));
    ws.onclose = () => this.closedSocket();
  }

  /** on(name, fn): "step" (step, hash hex), "started" (match), "desync",
   * "stall", "removed", "ended", "snapshot", "resumed", "message",
   * "secret", "close", "error", "rollback" ({ head, confirmed, rollbacks }:
   * with `predict`, the head was restored and re-simulated), "redirect"
   * ({ code, enet, wsUrl }: a request sent on to the room's node). */
  on(name, fn) {
    (this.handlers[name] ||= []).push(fn);
    return this;
  }
  onStep(fn) {
    return this.on("step", fn);
  }
  onRollback(fn) {
    return this.on("rollback", fn);
  }
  emit(name, ...args) {
    for (const fn of this.handlers[name] || []) fn(...args);
  }

  call(fn, ...args) {
    if (this.closed) throw new Error("gamekit: client closed");
    const t = this.now();
    const rc = fn(this.w, t % TWO32, Math.floor(t / TWO32), ...args);
    this.drain();
    this.arm();
    return rc;
  }

  receive(bytes) {
    if (this.closed) return;
    const [p, n] = bytesIn(this.m, bytes);
    this.call((w, lo, hi) => this.m._gk_webx_handle(w, p, n, lo, hi));
    if (p) this.m._free(p);
  }

  // The engine's next deadline in ns, or null (it waits for bytes).
  deadline() {
    this.m._gk_webx_deadline(this.w, this.out2);
    const v = this.m.HEAPU32.subarray(this.out2 >> 2, (this.out2 >> 2) + 2);
    if (v[0] === 0xffffffff && v[1] === 0xffffffff) return null;
    return v[0] + v[1] * TWO32;
  }

  timeout() {
    this.call((w, lo, hi) => this.m._gk_webx_timeout(w, lo, hi, this.out2));
  }

  // One timer at the engine's deadline (none: the engine waits for bytes).
  arm() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.closed) return;
    const d = this.deadline();
    if (d === null) return;
    const ms = Math.max(0, Math.ceil((d - this.now()) / 1e6));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.timeout();
    }, ms);
  }

  /** Runs now what is due (samples and steps whose time came) instead of
   * at the timer, which a busy thread runs late. A page calls it before
   * it draws a frame: the frame shows every step due by then, so a late
   * timer costs no frame. Nothing else changes (the same calls, at most
   * as early as the timer's). */
  service() {
    if (this.closed) return;
    const d = this.deadline();
    if (d !== null && d <= this.now()) this.timeout();
  }

  drain() {
    const m = this.m;
    const len = m._gk_webx_out_len(this.w);
    if (len === 0) return;
    const base = m._gk_webx_out(this.w);
    const u8 = m.HEAPU8.slice(base, base + len);
    m._gk_webx_out_clear(this.w);
    const dv = new DataView(u8.buffer);
    for (let o = 0; o < len;) {
      const type = u8[o], n = dv.getUint32(o + 1, true), b = o + 5;
      this.event(type, u8.subarray(b, b + n), new DataView(u8.buffer, b, n));
      o = b + n;
    }
  }

  event(type, body, dv) {
    switch (type) {
    case EV.SEND:
      if (this.ws.readyState !== 1) return;
      if (body[0] === 0 && this.ws.bufferedAmount > BACKLOG) return;
      this.ws.send(body.slice(1));
      return;
    case EV.STEP:
      this.emit("step", num64(dv, 0), hex16(u64(dv, 8)));
      return;
    case EV.STARTED:
      this.slot = body[0];
      this.match = { slot: body[0], players: body[1],
        activeMask: dv.getUint32(2, true), firstStep: num64(dv, 6),
        inputDelay: body[14], seed: hex16(u64(dv, 15)),
        genre: latin(body.subarray(23)) };
      this.emit("started", this.match);
      return;
    case EV.MESSAGE:
      this.message(body, dv);
      return;
    case EV.STALL:
      this.emit("stall", { step: num64(dv, 0), awaited: dv.getUint32(8, true),
        waitedMs: dv.getUint32(12, true) });
      return;
    case EV.DESYNC:
      this.emit("desync", { step: num64(dv, 0), player: body[8],
        hostHash: hex16(u64(dv, 9)), peerHash: hex16(u64(dv, 17)) });
      return;
    case EV.REMOVED:
      this.emit("removed", { slot: dv.getUint32(0, true), step: num64(dv, 4) });
      return;
    case EV.ENDED:
      this.ended = { step: num64(dv, 0), reason: dv.getInt32(8, true) };
      this.emit("ended", this.ended);
      return;
    case EV.SNAPSHOT:
      this.emit("snapshot", { rc: dv.getInt32(0, true), kind: body[4],
        step: num64(dv, 5), nextInput: num64(dv, 13),
        error: latin(body.subarray(21)) });
      return;
    case EV.ROLLBACK:
      this.emit("rollback", { head: num64(dv, 0), confirmed: num64(dv, 8),
        rollbacks: num64(dv, 16) });
      return;
    case EV.RESUMED:
      this.emit("resumed");
      return;
    case EV.REDIRECT: {
      const e = body[16];
      this.redirect({ code: latin(body.subarray(0, 16)),
        enet: latin(body.subarray(17, 17 + e)),
        wsUrl: latin(body.subarray(17 + e)) });
      return;
    }
    }
  }

  // A fleet's REDIRECT (docs/PROTOCOL.md): the room is on another node.
  // Followed once per request: a fresh engine on a socket to its ws_url,
  // the same request sent again (token included). A second REDIRECT, or
  // one to a node without WebSocket, fails the request.
  redirect(r) {
    const to = r.wsUrl || r.enet;
    if (!this.request)
      return this.refuse("EPROTO", "a REDIRECT for no room request (to " + to + ")");
    if (this.redirected)
      return this.refuse("EPROTO", "a second REDIRECT for room " + r.code +
        " (to " + to + ")", "The room's server sent this page on twice; try again.");
    if (!r.wsUrl)
      return this.refuse("EUNAVAILABLE", "room " + r.code + " is on a server " +
        "that takes no WebSocket players (" + r.enet + ")",
        "The room is on a server that takes no browser players.");
    this.redirected = true;
    this.redirectCode = r.code; // quick play asks there for that room
    this.redirects++;
    this.emit("redirect", r);
    const old = this.ws;
    old.onmessage = old.onclose = null; // the old node closes it: not ours
    try {
      old.close();
    } catch (e) { /* already closed */ }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.m._gk_webx_free(this.w);
    this.w = this.engine();
    openSocket(this.opts, r.wsUrl).then((ws) => {
      if (this.closed) return ws.close();
      this.attach(ws);
      this.request();
    }, (e) => this.refuse("EUNAVAILABLE", e.message.replace(/^gamekit: /, ""),
      "The server that holds the room cannot be reached; try again in a moment."));
  }

  // The client's own refusal of a request, as the server's are told: an
  // "error" message and the pending call rejected; then it closes.
  refuse(name, text, sentence) {
    const code = codeOf("GK_" + name);
    const err = refusal(code, text);
    if (sentence) err.sentence = sentence;
    this.emit("message", { type: "error", code, text, sentence: err.sentence });
    const w = this.waiters.shift();
    if (w) w.reject(err);
    this.close();
  }

  // Host messages the engine passed on (wire layout: docs/PROTOCOL.md).
  message(body, dv) {
    const type = body[1];
    let ev = { type, bytes: body.slice() };
    if (type === MSG.ROOM_CREATED) {
      this.code = latin(body.subarray(2, 18));
      this.slot = body[18];
      ev = { type: "room_created", code: this.code, slot: this.slot };
    } else if (type === MSG.JOINED) {
      this.slot = body[2];
      ev = { type: "joined", slot: body[2], players: body[3] };
    } else if (type === MSG.ROSTER) {
      this.names = roster(body);
      ev = { type: "roster", names: this.names };
      this.emit("roster", ev);
    } else if (type === MSG.QUICK_JOINED) {
      this.code = latin(body.subarray(2, 18));
      this.slot = body[18];
      ev = { type: "quick_joined", code: this.code, slot: body[18],
        players: body[19] };
    } else if (type === MSG.ERROR) {
      ev = { type: "error", code: dv.getInt16(2, true),
        text: latin(body.subarray(5, 5 + body[4])) };
    } else if (type === MSG.RECONNECT_SECRET) {
      this.secret = body.slice(3, 19);
      ev = { type: "secret", slot: body[2], secret: this.secret };
      this.emit("secret", ev);
    } else if (type === MSG.SHUTDOWN) {
      ev = { type: "shutdown", graceMs: dv.getUint32(2, true) };
    } else if (type === MSG.NEXT_ROOM) {
      // the host of the room this client was in made its next room
      const code = latin(body.subarray(2, 18));
      ev = { type: "next_room", code, shown: codeShown(this.m, code) || code };
      this.emit("next_room", ev);
    }
    this.emit("message", ev);
    const w = this.waiters.shift();
    if (w && (ev.type === "error" || ev.type === w.want)) {
      if (ev.type === "error") w.reject(refusal(ev.code, ev.text));
      else w.resolve(ev);
    } else if (w) this.waiters.unshift(w);
  }

  expect(want) {
    return new Promise((resolve, reject) => this.waiters.push({ want, resolve, reject }));
  }

  withToken(token, fn) {
    const t = token || this.token;
    const [p, n] = bytesIn(this.m, t);
    try {
      return fn(p, n);
    } finally {
      if (p) this.m._free(p);
    }
  }

  check(rc, what) {
    if (rc < 0) throw refusal(rc, what + ": " +
      this.m.UTF8ToString(this.m._gk_webx_strerror(rc)));
  }

  /** Creates a room: { genre, maxPlayers, inputDelay, options (object),
   * token }. Resolves { code, slot }. */
  createRoom({ genre, maxPlayers = 2, inputDelay = 0, options = null, token } = {}) {
    this.request = null; // a room is made here: nothing to follow
    const g = cstr(this.m, genre);
    const o = cstr(this.m, options ? JSON.stringify(options) : "");
    try {
      this.withToken(token, (tp, tn) => this.check(this.call((w, lo, hi) =>
        this.m._gk_webx_create_room(w, lo, hi, maxPlayers, inputDelay, g, o, tp, tn)),
      "createRoom"));
    } finally {
      this.m._free(g);
      this.m._free(o);
    }
    // awaited once sent (a reply cannot come before this returns): a
    // refused call leaves no waiter for the next call's reply
    return this.expect("room_created");
  }

  /** A room code as people see it (4 to 8 characters, or 16 of an older
   * server), from one as typed (any case) or as on the wire (padded with
   * '2's); null if it is not a room code. join, spectate and rejoin take
   * either form. */
  shownCode(code) {
    return codeShown(this.m, code);
  }

  // Sends a room request now, and again at the node a REDIRECT names.
  roomRequest(send) {
    this.request = send;
    this.redirected = false;
    this.redirectCode = "";
    send();
  }

  /** This player's name in its room (docs/PROTOCOL.md "Names"): 1 to 24
   * bytes of UTF-8, no control characters; every player and spectator
   * gets the room's names as a "roster" event ({ names }: by slot, ""
   * for none). Names never touch the simulation or its hashes. */
  setName(name) {
    const c = cstr(this.m, String(name));
    try {
      this.check(this.call((w, lo, hi) => this.m._gk_webx_name(w, lo, hi, c)),
        "setName");
    } finally {
      this.m._free(c);
    }
  }

  /** Play again (docs/PROTOCOL.md "Play again"): from the host of a room
   * whose match ended, on that room's connection, the code of the room it
   * made next (on any connection); the server sends the old room's other
   * players and spectators a "next_room" event with it, once. */
  nextRoom(code) {
    const c = cstr(this.m, String(code));
    try {
      this.check(this.call((w, lo, hi) => this.m._gk_webx_next_room(w, lo, hi,
        c)), "nextRoom");
    } finally {
      this.m._free(c);
    }
  }

  /** Quick play (docs/PROTOCOL.md): a seat in the fullest open room of
   * this kind ({ genre, maxPlayers, inputDelay, options }: rooms asked
   * for with the same values are shared), or a new one; its match starts
   * once every seat is taken. Resolves { code, slot, players }. Follows
   * one REDIRECT (a fleet) to the room's node. */
  quickPlay({ genre, maxPlayers = 2, inputDelay = 0, options = null } = {}) {
    this.roomRequest(() => {
      const c = cstr(this.m, this.redirectCode);
      const g = cstr(this.m, genre);
      const o = cstr(this.m, options ? JSON.stringify(options) : "");
      try {
        this.check(this.call((w, lo, hi) => this.m._gk_webx_quick_play(w, lo,
          hi, c, maxPlayers, inputDelay, g, o)), "quickPlay");
      } finally {
        this.m._free(c);
        this.m._free(g);
        this.m._free(o);
      }
    });
    return this.expect("quick_joined");
  }

  /** Joins room `code` as a player. Resolves { slot, players }. Follows
   * one REDIRECT (a fleet) to the room's node. */
  join(code, { token } = {}) {
    this.roomRequest(() => {
      const c = cstr(this.m, code);
      try {
        this.withToken(token, (tp, tn) => this.check(this.call((w, lo, hi) =>
          this.m._gk_webx_join(w, lo, hi, c, 0, tp, tn)), "join"));
      } finally {
        this.m._free(c);
      }
    });
    this.code = code;
    return this.expect("joined"); // once sent, as createRoom
  }

  /** Watches room `code`: a snapshot, then every confirmed step. Follows
   * one REDIRECT, as join. */
  spectate(code, { token } = {}) {
    this.roomRequest(() => {
      const c = cstr(this.m, code);
      try {
        this.withToken(token, (tp, tn) => this.check(this.call((w, lo, hi) =>
          this.m._gk_webx_spectate(w, lo, hi, c, tp, tn)), "spectate"));
      } finally {
        this.m._free(c);
      }
    });
    this.code = code;
  }

  /** Takes `slot` of room `code` back with its reconnect secret (16 bytes,
   * from the "secret" event of the first connection) on a fresh client. */
  rejoin(code, slot, secret, { token } = {}) {
    this.roomRequest(() => {
      const c = cstr(this.m, code);
      const [sp] = bytesIn(this.m, secret);
      try {
        this.withToken(token, (tp, tn) => this.check(this.call((w, lo, hi) =>
          this.m._gk_webx_rejoin(w, lo, hi, c, slot, sp, tp, tn)), "rejoin"));
      } finally {
        this.m._free(c);
        this.m._free(sp);
      }
    });
    this.code = code;
  }

  /** The creator starts the match. */
  start() {
    this.check(this.call((w, lo, hi) => this.m._gk_webx_start_match(w, lo, hi)), "start");
  }
  /** The creator ends the match (reason 2: the host). */
  endMatch(reason = 2) {
    this.check(this.call((w, lo, hi) => this.m._gk_webx_end_match(w, lo, hi, reason)), "endMatch");
  }
  removePlayer(slot) {
    this.check(this.call((w, lo, hi) => this.m._gk_webx_remove_player(w, lo, hi, slot)), "removePlayer");
  }

  /** Axes held now, -127..127 each (survivors: its move vector; push-puzzle:
   * their signs are the directions held). */
  setInput({ x = 0, y = 0 } = {}) {
    this.m._gk_webx_axes(this.w, x | 0, y | 0);
  }
  /** Presses for exactly the next sampled step: names of BUTTONS. */
  press(...names) {
    let bits = 0;
    for (const n of names) bits |= BUTTONS[n] || 0;
    this.m._gk_webx_press(this.w, bits);
  }

  map(kind, columns) {
    if (columns && columns.length) return this.mapCols(kind, columns);
    const p = this.m._gk_webx_state(this.w, kind, this.out2);
    const n = this.m.HEAPU32[this.out2 >> 2];
    return p ? decodeMap(this.m.HEAPU8.subarray(p, p + n)) : null;
  }
  // A map with the fields of the named top-level arrays in columns.
  mapCols(kind, columns) {
    const lists = columns.join(",");
    if (this.colsText !== lists) {
      if (this.colsPtr) this.m._free(this.colsPtr);
      this.colsPtr = cstr(this.m, lists);
      this.colsText = lists;
    }
    const p = this.m._gk_webx_map_cols(this.w, kind, this.colsPtr, this.out2);
    const n = this.m.HEAPU32[this.out2 >> 2];
    return p ? decodeMap(this.m.HEAPU8.subarray(p, p + n)) : null;
  }
  /** The canonical state after the last step run: { step, hash, state }
   * with `gk-replay dump --json`'s paths and values; null before a run.
   * `columns` as for predictedState. */
  state({ columns } = {}) {
    return this.map(0, columns);
  }
  /** The genre's HUD sample, the same shape. */
  sample() {
    return this.map(1);
  }
  /** With `predict`: the predicted head's state, the same shape (`step`:
   * the steps it ran; `hash` 0: never hashed); else the same as state().
   * Draw this; compare and report state(). `columns`: names of top-level
   * arrays ("enemies") whose fields come as columns instead of paths,
   * state[COLUMNS].enemies.x a Float64Array by element (a frame's few
   * thousand fields without a key each). */
  predictedState({ columns } = {}) {
    return this.map(2, columns);
  }

  /** Tests: after step `step` add `delta` to the field at `path` of this
   * peer's own state (its hash then differs from step + 1 on). */
  perturb(step, path, delta = 1) {
    const c = cstr(this.m, path);
    try {
      this.check(this.m._gk_webx_perturb(this.w, step % TWO32,
        Math.floor(step / TWO32), c, delta), "perturb");
    } finally {
      this.m._free(c);
    }
  }

  /** Counters: steps, samples, waits, packetsIn, packetsOut, dropped,
   * stateRequests, snapshots. */
  stats() {
    this.m._gk_webx_stats(this.w, this.out2);
    const v = this.m.HEAPU32.subarray(this.out2 >> 2, (this.out2 >> 2) + 20);
    // rttMs: the smoothed round trip of this player's inputs to the
    // server's acknowledgement (null until one came): the player's ping
    const names = ["steps", "samples", "waits", "packetsIn", "packetsOut",
      "dropped", "stateRequests", "snapshots", "rttMs", "rttSamples"];
    const o = {};
    names.forEach((n, i) => { o[n] = v[2 * i] + v[2 * i + 1] * TWO32; });
    if (!o.rttSamples) o.rttMs = null;
    return o;
  }

  closedSocket() {
    if (!this.closed) this.emit("close");
    this.close();
  }

  /** Closes the socket and frees the engine. */
  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    try {
      this.ws.close();
    } catch (e) { /* already closed */ }
    this.m._gk_webx_free(this.w);
    this.m._free(this.out2);
    if (this.colsPtr) this.m._free(this.colsPtr);
    this.colsPtr = 0;
    for (const w of this.waiters) w.reject(new Error("gamekit: closed"));
    this.waiters = [];
  }
}

/** Opens a WebSocket to a gk-server's listener (ws://HOST:PORT/play,
 * subprotocol gamekit.1) and resolves a Client once it is open. opts:
 * token (a connect token's 148 bytes, sent with every request), bot (play
 * the genre's bot instead of setInput/press), seed (the bot's seed),
 * WebSocket (a constructor, default the global one), wasmBinary,
 * locateFile, now (a clock in integer ns). */
export async function connect(url, opts = {}) {
  const m = await load(opts);
  return new Client(m, await openSocket(opts, url), opts);
}

// A WebSocket to url, resolved once it is open.
async function openSocket(opts, url) {
  const WS = opts.WebSocket || globalThis.WebSocket;
  if (!WS) throw new Error("gamekit: no WebSocket (node: --experimental-websocket)");
  const ws = new WS(url, "gamekit.1");
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("gamekit: cannot connect to " + url));
  });
  ws.onerror = null;
  return ws;
}
