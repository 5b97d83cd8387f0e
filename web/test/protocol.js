// protocol.js: the room messages of the gamekit wire protocol, written
// from docs/PROTOCOL.md ("The room messages, byte by byte") alone, and a
// WebSocket client of the lobby (subprotocol gamekit.1) for the test page.
// Every integer little-endian; str8/str16: a u8/u16 length, then bytes.

export const VERSION = 2;
export const MAX_MESSAGE = 1200;
export const TYPES = {
  CREATE_ROOM: 16, ROOM_CREATED: 17, JOIN_ROOM: 18, JOINED: 19,
  START_MATCH: 20, MATCH_START: 21, SHUTDOWN: 22, ERROR: 23,
};
const NAMES = Object.fromEntries(Object.entries(TYPES).map(([k, v]) => [v, k]));
const CODE_LEN = 16;
const TOKEN_BYTES = 148;
const GENRE_RE = /^[a-z0-9_-]{1,32}$/;
const CODE_RE = /^[A-Z2-7]{16}$/;

export class ProtocolError extends Error {}

class Writer {
  constructor() { this.bytes = []; }
  u8(v) {
    if (!Number.isInteger(v) || v < 0 || v > 255) throw new ProtocolError(`u8 ${v}`);
    this.bytes.push(v);
  }
  u16(v) { this.u8(v & 0xff); this.u8(v >>> 8); }
  raw(arr) { for (const b of arr) this.u8(b); }
  ascii(s) { for (let i = 0; i < s.length; i++) this.u8(s.charCodeAt(i)); }
  done() {
    if (this.bytes.length > MAX_MESSAGE) throw new ProtocolError('over 1200 bytes');
    return new Uint8Array(this.bytes);
  }
}

class Reader {
  constructor(bytes) { this.b = bytes; this.pos = 0; }
  need(n) {
    if (this.pos + n > this.b.length) throw new ProtocolError('truncated');
  }
  u8() { this.need(1); return this.b[this.pos++]; }
  u16() { const lo = this.u8(); return lo | (this.u8() << 8); }
  i16() { const v = this.u16(); return v >= 0x8000 ? v - 0x10000 : v; }
  u32() { const lo = this.u16(); return (lo + this.u16() * 0x10000); }
  u64() { const lo = this.u32(); return BigInt(lo) + (BigInt(this.u32()) << 32n); }
  raw(n) { this.need(n); const s = this.b.subarray(this.pos, this.pos + n); this.pos += n; return s; }
  text(n) { return new TextDecoder().decode(this.raw(n)); }
  str8() { return this.text(this.u8()); }
  str16() { return this.text(this.u16()); }
  end() {
    if (this.pos !== this.b.length) throw new ProtocolError('trailing bytes');
  }
}

function header(w, type) { w.u8(VERSION); w.u8(type); }

function token(w, tok) {
  if (!tok || tok.length === 0) { w.u8(0); return; }
  if (tok.length !== TOKEN_BYTES) throw new ProtocolError('a token is 148 bytes');
  w.u8(TOKEN_BYTES);
  w.raw(tok);
}

// CREATE_ROOM: max_players u8 | input_delay u8 | genre str8 | config str16
// | token_len u8 | token.
export function encodeCreateRoom({ maxPlayers, inputDelay = 0, genre,
                                   config = '', token: tok = null }) {
  if (maxPlayers < 1 || maxPlayers > 16) throw new ProtocolError('max_players 1..16');
  if (!GENRE_RE.test(genre)) throw new ProtocolError(`genre ${genre}`);
  const cfg = new TextEncoder().encode(config);
  if (cfg.length > 768) throw new ProtocolError('config over 768 bytes');
  const w = new Writer();
  header(w, TYPES.CREATE_ROOM);
  w.u8(maxPlayers);
  w.u8(inputDelay);
  w.u8(genre.length);
  w.ascii(genre);
  w.u16(cfg.length);
  w.raw(cfg);
  token(w, tok);
  return w.done();
}

// JOIN_ROOM: code (16 bytes) | role u8 | token_len u8 | token.
export function encodeJoinRoom({ code, role = 0, token: tok = null }) {
  if (!CODE_RE.test(code)) throw new ProtocolError(`room code ${code}`);
  const w = new Writer();
  header(w, TYPES.JOIN_ROOM);
  w.ascii(code);
  w.u8(role);
  token(w, tok);
  return w.done();
}

export function encodeStartMatch() {
  const w = new Writer();
  header(w, TYPES.START_MATCH);
  return w.done();
}

// Decodes one server message; throws ProtocolError on any mismatch
// (a wrong version, a truncated field, trailing bytes, a bad code).
export function decode(bytes) {
  const r = new Reader(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  const version = r.u8();
  if (version !== VERSION) throw new ProtocolError(`version ${version}`);
  const type = r.u8();
  const m = { type, name: NAMES[type] || `type ${type}` };
  switch (type) {
    case TYPES.ROOM_CREATED:
      m.code = r.text(CODE_LEN);
      if (!CODE_RE.test(m.code)) throw new ProtocolError(`room code ${m.code}`);
      m.slot = r.u8();
      break;
    case TYPES.JOINED:
      m.slot = r.u8();
      m.players = r.u8();
      break;
    case TYPES.MATCH_START:
      m.seed = r.u64().toString();
      m.players = r.u8();
      m.slot = r.u8();
      m.activeMask = r.u32();
      m.firstStep = r.u64().toString();
      m.inputDelay = r.u8();
      m.lead = r.u8();
      m.stepNum = r.u32();
      m.stepDen = r.u32();
      m.genre = r.str8();
      m.config = r.str16();
      break;
    case TYPES.SHUTDOWN:
      m.graceMs = r.u32();
      break;
    case TYPES.ERROR:
      m.code = r.i16();
      m.text = r.str8();
      break;
    default:
      r.pos = r.b.length; // not a room message: kept whole, unread
      m.bytes = Array.from(bytes);
  }
  r.end();
  return m;
}

// One lobby connection: open(url) resolves once the WebSocket is open
// (with gamekit.1 agreed); next(timeoutMs) resolves with the next decoded
// message (rejects on a timeout, a close or a message that does not
// decode). Every message received is kept in `log`.
export class Lobby {
  constructor() { this.queue = []; this.waiters = []; this.log = []; this.closed = null; }

  open(url, timeoutMs = 5000) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, 'gamekit.1');
      ws.binaryType = 'arraybuffer';
      this.ws = ws;
      const t = setTimeout(() => reject(new Error('open timed out')), timeoutMs);
      ws.onopen = () => {
        clearTimeout(t);
        if (ws.protocol !== 'gamekit.1') reject(new Error(`subprotocol "${ws.protocol}"`));
        else resolve(this);
      };
      ws.onerror = () => { clearTimeout(t); reject(new Error('WebSocket error')); };
      ws.onclose = (e) => {
        this.closed = { code: e.code, reason: e.reason };
        for (const w of this.waiters.splice(0)) w.reject(new Error(`closed ${e.code}`));
      };
      ws.onmessage = (e) => {
        let m;
        if (!(e.data instanceof ArrayBuffer)) m = { error: 'a text frame' };
        else {
          try { m = decode(new Uint8Array(e.data)); } catch (err) { m = { error: String(err) }; }
        }
        this.log.push(m);
        const w = this.waiters.shift();
        if (w) w.settle(m); else this.queue.push(m);
      };
    });
  }

  send(bytes) { this.ws.send(bytes); }

  next(timeoutMs = 5000) {
    const settleOne = (m, resolve, reject) =>
      m.error ? reject(new ProtocolError(m.error)) : resolve(m);
    if (this.queue.length) {
      return new Promise((res, rej) => settleOne(this.queue.shift(), res, rej));
    }
    if (this.closed) return Promise.reject(new Error(`closed ${this.closed.code}`));
    return new Promise((resolve, reject) => {
      const w = {
        settle: (m) => { clearTimeout(w.t); settleOne(m, resolve, reject); },
        reject: (e) => { clearTimeout(w.t); reject(e); },
      };
      w.t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error('no message within ' + timeoutMs + ' ms'));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  close() { if (this.ws) this.ws.close(1000); }
}

// The WebSocket URL of this page's origin: wss:// under https://.
export function playUrl(path = '/play') {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${path}`;
}
