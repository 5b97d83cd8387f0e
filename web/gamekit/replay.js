// replay.js: a .gkr replay opened, verified and seeked in the browser.
//
// The reader, the hash-checking run and the verdict are the C ones
// (src/replay, as gk-replay verify runs them) in gamekit.wasm
// (src/gk_web_replay.c): this module hands the file's bytes over, parses
// the header block's JSON text when the reader asks for it (JSON.parse:
// the browser build has no JSON parser in C) and feeds the header's
// config to the genre one flattened key at a time (gk_config_kv.h, path
// "config"). Nothing of the block format is parsed here. See README.md.
//
//   const r = await openReplay(bytes);   // Uint8Array of a .gkr file
//   r.info                 // genre, players, steps, seed, damage, ...
//   r.run(n); r.step(); r.seek(n)        // positions: steps run, 0..steps
//   r.scan(n)              // run ahead in idle time: snapshots for seeks
//   r.state(); r.sample()  // decodeMap() of the state after the position
//   r.verdict()            // ok / mismatch / invalid, gk-replay's message
//   await r.verify({ onProgress })       // as fast as it goes

import { load, decodeMap, cstr, kvLeaves } from "./gamekit.js";

const TWO32 = 4294967296;
const STATUS = ["ok", "mismatch", "invalid"];
// gk_replay_fields.have (src/replay/gk_replay.h)
const HAVE = { FORMAT: 1, GENRE: 2, GENRE_VERSION: 4, SEED: 8, PLAYERS: 16,
  INPUT_SIZE: 32, STEP_SECONDS: 64, CONFIG: 128, ORIGIN: 256,
  ORIGIN_TEXT: 512, LOCKSTEP: 1024, LOCKSTEP_OK: 2048 };
const EPARSE = -14;
/** Steps between kept snapshots (the seek cost is at most this many). */
export const SNAPSHOT_EVERY = 256;

const hex = (lo, hi) => "0x" + hi.toString(16).padStart(8, "0") +
  lo.toString(16).padStart(8, "0");
const n64 = (v, i) => v[i] + v[i + 1] * TWO32;
const isU32 = (v) => Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

function heapBytes(m, bytes) {
  const p = m._malloc(bytes.length || 1);
  m.HEAPU8.set(bytes, p);
  return p;
}

// The replay whose header the reader is parsing (one at a time: open is
// synchronous).
let parsing = null;

// Module.gkReplayHeader: JSON.parse the header text into gk_replay_fields
// through the setter exports; the C reader judges the values.
function parseHeader(m, f, text, len) {
  const fail = (what) => {
    const p = cstr(m, what);
    m._gk_webrx_field_fail(f, 0, p);
    m._free(p);
    return EPARSE;
  };
  let h;
  try {
    h = JSON.parse(new TextDecoder().decode(m.HEAPU8.subarray(text, text + len)));
  } catch (e) {
    return fail("expected header JSON, parse error");
  }
  if (h === null || typeof h !== "object" || Array.isArray(h))
    return fail("expected a header JSON object");
  if (parsing) parsing.header = h;
  let have = 0;
  const u32 = (key, which, bit) => {
    if (isU32(h[key])) {
      m._gk_webrx_field_u32(f, which, h[key]);
      have |= bit;
    }
  };
  const text2 = (v, which, bit) => {
    if (typeof v !== "string") return;
    const p = cstr(m, v.slice(0, 200));
    m._gk_webrx_field_text(f, which, p);
    m._free(p);
    have |= bit;
  };
  u32("format", 0, HAVE.FORMAT);
  text2(h.genre, 0, HAVE.GENRE);
  u32("genre_version", 1, HAVE.GENRE_VERSION);
  text2(h.seed, 1, HAVE.SEED);
  u32("players", 2, HAVE.PLAYERS);
  u32("input_size", 3, HAVE.INPUT_SIZE);
  const ss = h.step_seconds;
  if (Array.isArray(ss) && ss.length === 2) {
    have |= HAVE.STEP_SECONDS;
    ss.forEach((v, i) => m._gk_webrx_field_u32(f, 4 + i, isU32(v) && v >= 1 ? v : 0));
  }
  const c = h.config;
  if (c !== null && typeof c === "object" && !Array.isArray(c)) have |= HAVE.CONFIG;
  if ("origin" in h) have |= HAVE.ORIGIN;
  if (typeof h.origin === "string") have |= HAVE.ORIGIN_TEXT;
  const l = h.lockstep;
  if (l !== undefined) have |= HAVE.LOCKSTEP;
  if (l !== null && typeof l === "object" && !Array.isArray(l) &&
      isU32(l.input_delay) && isU32(l.lead)) {
    m._gk_webrx_field_u32(f, 6, l.input_delay);
    m._gk_webrx_field_u32(f, 7, l.lead);
    have |= HAVE.LOCKSTEP_OK;
  }
  m._gk_webrx_field_have(f, have);
  return 0;
}

// The header's config, one leaf at a time in document order (as the C
// JSON walker does it). Returns null or the refusal's message.
function applyConfig(m, w, config) {
  const err = m._malloc(512);
  try {
    const rc = kvLeaves(m, config || {}, "config", {
      number: (kp, v) => m._gk_webrx_kv_number(w, kp, v, err, 512),
      bool: (kp, v) => m._gk_webrx_kv_bool(w, kp, v, err, 512),
      text: (kp, vp) => m._gk_webrx_kv_text(w, kp, vp, err, 512),
    }, err, 512);
    return rc !== 0 ? [rc, m.UTF8ToString(err)] : null;
  } finally {
    m._free(err);
  }
}

/** A replay opened in the wasm engine. Use openReplay(). */
export class Replay {
  constructor(m) {
    this.m = m;
    this.w = m._gk_webrx_new();
    if (!this.w) throw new Error("replay: out of memory");
    this.out = m._malloc(128);
    this.header = null;
    this.info = null;
    this.playable = false;
    this.error = null;
  }

  u32s(n) {
    return this.m.HEAPU32.subarray(this.out >> 2, (this.out >> 2) + n);
  }

  open(bytes, every) {
    const m = this.m;
    const p = heapBytes(m, bytes);
    parsing = this;
    try {
      m._gk_webrx_open(this.w, p, bytes.length);
    } finally {
      parsing = null;
      m._free(p);
    }
    m._gk_webrx_info(this.w, this.out);
    const v = this.u32s(23);
    const code = v[12] | 0;
    this.info = {
      headerOk: v[0] === 1, format: v[1], players: v[2], inputSize: v[3],
      genreVersion: v[4], stepSeconds: [v[5], v[6]],
      lockstep: v[7] ? { inputDelay: v[8], lead: v[9] } : null,
      complete: v[10] === 1, cutShort: v[11] === 1, steps: n64(v, 13),
      seed: (BigInt(v[15]) | (BigInt(v[16]) << 32n)).toString(),
      finalHash: hex(v[17], v[18]), size: n64(v, 21),
      genre: v[0] ? m.UTF8ToString(m._gk_webrx_genre(this.w)) : null,
      origin: this.header && typeof this.header.origin === "string" ? this.header.origin : null,
      damage: code === 0 ? null : { code, name: m.UTF8ToString(m._gk_webrx_err_name(code)),
        offset: n64(v, 19), what: m.UTF8ToString(m._gk_webrx_damage(this.w)) },
    };
    if (m._gk_webrx_prepare(this.w) !== 0) {
      this.error = this.verdict().message;
      return;
    }
    const bad = applyConfig(m, this.w, this.header.config);
    if (bad) {
      const wp = cstr(m, bad[1]);
      m._gk_webrx_refuse(this.w, bad[0], wp);
      m._free(wp);
      this.error = this.verdict().message;
      return;
    }
    if (m._gk_webrx_start(this.w, every) !== 0) {
      this.error = this.verdict().message;
      return;
    }
    this.playable = true;
  }

  check(rc, what) {
    if (rc < 0) throw new Error("replay: " + what + ": " +
      this.m.UTF8ToString(this.m._gk_webrx_error(this.w)));
    return rc;
  }

  /** Steps run (the position), the furthest position whose steps all
   * matched, and the kept snapshots. */
  where() {
    this.m._gk_webrx_where(this.w, this.out);
    const v = this.u32s(10);
    return { position: n64(v, 0), verified: n64(v, 2), snapshotBytes: n64(v, 4),
      snapshots: v[6], scanned: n64(v, 8) };
  }
  get position() {
    return this.where().position;
  }

  /** Runs on to position `until` (checking every hash). */
  run(until) {
    if (!this.playable) return this.verdict();
    const u = Math.max(0, Math.min(until, this.info.steps));
    this.check(this.m._gk_webrx_run(this.w, u % TWO32, Math.floor(u / TWO32)), "run");
    return this.verdict();
  }
  /** Runs the scan loop `n` steps further: it runs ahead of the position,
   * keeping a snapshot every SNAPSHOT_EVERY steps and checking every hash
   * (the verdict), so later seeks are short. A page calls it in idle
   * time after opening. Returns the verdict. */
  scan(n = 4096) {
    if (!this.playable) return this.verdict();
    this.check(this.m._gk_webrx_scan(this.w, n), "scan");
    return this.verdict();
  }
  /** n more steps. */
  step(n = 1) {
    return this.run(this.position + n);
  }
  /** Moves to position `to` (the state after `to` steps; gk-replay dump
   * --step S shows position S + 1) from the nearest kept snapshot. */
  seek(to) {
    if (!this.playable) return this.verdict();
    const t = Math.max(0, Math.min(Math.floor(to), this.info.steps));
    this.check(this.m._gk_webrx_seek(this.w, t % TWO32, Math.floor(t / TWO32)), "seek");
    return this.verdict();
  }

  /** The recorded hash after step `step` (0-based) as 16 hex digits (as
   * state().hash), or null. */
  recordedHash(step) {
    if (step < 0 || step >= this.info.steps) return null;
    if (this.m._gk_webrx_step_hash(this.w, step % TWO32, Math.floor(step / TWO32), this.out) !== 0)
      return null;
    const v = this.u32s(2);
    return hex(v[0], v[1]).slice(2);
  }

  /** { done, status: "ok"|"mismatch"|"invalid", stepsChecked, step,
   * expected, actual, offset, code, message (the C verdict's), text (what
   * gk-replay verify prints after "FILE: ") }. Before the last step ran,
   * status "ok" with done false. */
  verdict() {
    const m = this.m;
    const msg = m.UTF8ToString(m._gk_webrx_verdict(this.w, this.out));
    const v = this.u32s(13);
    const o = { done: v[0] === 1, status: STATUS[v[1]] || "invalid",
      code: v[2] | 0, stepsChecked: n64(v, 3), step: n64(v, 5),
      expected: hex(v[7], v[8]), actual: hex(v[9], v[10]), offset: n64(v, 11),
      message: msg };
    if (o.status === "ok")
      o.text = o.done ? "ok: " + o.stepsChecked + " steps verified, final hash " +
        this.info.finalHash + (this.info.cutShort ? " (recovered: cut short, see gk-replay info)" : "")
        : "verified " + o.stepsChecked + " steps so far";
    else if (o.status === "mismatch")
      o.text = "MISMATCH at step " + o.step + ": expected hash " + o.expected +
        ", actual " + o.actual;
    else o.text = "INVALID: " + msg;
    return o;
  }

  /** Runs every step as fast as it goes, `chunk` steps per task (yielding
   * between them), from where it is. Resolves the verdict with steps,
   * seconds and stepsPerSecond. onProgress(done, total) after each chunk;
   * shouldStop() true ends it early. */
  async verify({ chunk = 8192, onProgress = null, shouldStop = null } = {}) {
    const total = this.info.steps;
    const t0 = performance.now();
    const from = this.position;
    let v = this.verdict();
    while (this.playable && v.status === "ok" && this.position < total) {
      v = this.run(this.position + chunk);
      if (onProgress) onProgress(this.position, total);
      if (shouldStop && shouldStop()) break;
      await new Promise((r) => setTimeout(r, 0));
    }
    const seconds = (performance.now() - t0) / 1000;
    const steps = this.position - from;
    return { ...this.verdict(), steps, seconds,
      stepsPerSecond: seconds > 0 ? steps / seconds : 0 };
  }

  map(sample) {
    const p = this.m._gk_webrx_state(this.w, sample ? 1 : 0, this.out);
    const n = this.u32s(1)[0];
    return p ? decodeMap(this.m.HEAPU8.subarray(p, p + n)) : null;
  }
  /** The canonical state at the position: { step (steps run), hash (the
   * state's, computed), state: { path: value } }, or null. */
  state() {
    return this.playable ? this.map(false) : null;
  }
  /** The HUD sample, the same shape. */
  sample() {
    return this.playable ? this.map(true) : null;
  }

  /** A .state file (canonical bytes of this genre and config, e.g. a
   * desync bundle's referee.state) as a map; throws if it does not read
   * back. */
  stateOf(bytes) {
    const m = this.m;
    const p = heapBytes(m, bytes);
    try {
      const q = m._gk_webrx_state_of(this.w, p, bytes.length, this.out);
      const n = this.u32s(1)[0];
      if (!q) throw new Error("replay: the state does not read back: " +
        m.UTF8ToString(m._gk_webrx_error(this.w)));
      return decodeMap(m.HEAPU8.subarray(q, q + n));
    } finally {
      m._free(p);
    }
  }

  /** The fields two canonical states disagree on (gk_state_diff, as
   * gk-replay diff --json prints them): { total, first_byte, fields:
   * [{ path, a, b }] }, at most `max` listed. */
  diff(a, b, max = 100) {
    const m = this.m;
    const pa = heapBytes(m, a), pb = heapBytes(m, b);
    try {
      const t = m._gk_webrx_diff(this.w, pa, a.length, pb, b.length, max);
      if (!t) throw new Error("replay: diff: " + m.UTF8ToString(m._gk_webrx_error(this.w)));
      return JSON.parse(m.UTF8ToString(t));
    } finally {
      m._free(pa);
      m._free(pb);
    }
  }

  /** Frees the engine's replay. */
  close() {
    if (!this.w) return;
    this.m._gk_webrx_free(this.w);
    this.m._free(this.out);
    this.w = 0;
  }
}

/** Opens a .gkr file's bytes. Always resolves a Replay: r.info says what
 * the reader found (r.info.damage: the first damage, after whose steps
 * the verdict becomes "invalid"); r.playable is false when the file
 * cannot be run at all (no valid header, a genre this build lacks, a
 * config the genre refuses), and r.error then holds gk-replay verify's
 * message. opts: every (steps between snapshots), and load()'s
 * wasmBinary / locateFile. */
export async function openReplay(bytes, opts = {}) {
  const m = await load(opts);
  m.gkReplayHeader = (f, text, len) => parseHeader(m, f, text, len);
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const r = new Replay(m);
  r.open(u8, opts.every || SNAPSHOT_EVERY);
  return r;
}
