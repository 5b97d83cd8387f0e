// flat.js: reading the flat state map (path -> value) the views draw.
//
// A state is the object `gk-replay dump --step N --json` prints as "state"
// (and web/gamekit hands out): one key per canonical field, named by its
// path (src/sim/gk_state_path.c), e.g. "players[0].weapons[1].level".
// Integers are numbers (64-bit ones beyond 2^53 decimal text), BOOLs
// booleans, byte fields lowercase hex strings. Fixed-point values (Q16.16)
// stay integers here; views convert them only to draw. A Map works as
// well as a plain object.

/** The value at `path`, or `def` when the state has no such field. */
export function get(state, path, def) {
  const v = state instanceof Map ? state.get(path) : state[path];
  return v === undefined ? def : v;
}

/** The integer at `path` (booleans read as 0/1), or `def`. */
export function int(state, path, def = 0) {
  const v = get(state, path, undefined);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return def;
}

/** True when the field at `path` is true or a non-zero integer. */
export function flag(state, path) {
  return int(state, path, 0) !== 0;
}

/** A byte field (hex text) as a Uint8Array; empty when absent or bad. */
export function bytes(state, path) {
  const v = get(state, path, '');
  if (typeof v !== 'string' || v.length % 2 !== 0 || /[^0-9a-f]/i.test(v))
    return new Uint8Array(0);
  const out = new Uint8Array(v.length / 2);
  for (let i = 0; i < out.length; i++)
    out[i] = parseInt(v.substr(2 * i, 2), 16);
  return out;
}

/** Q16.16 to a float, for drawing only. */
export const FX_ONE = 65536;
export function fx(v) {
  return v / FX_ONE;
}

/**
 * Sizes a canvas's backing store to its CSS box times devicePixelRatio;
 * returns {w, h, dpr} in CSS pixels. A canvas with no layout box (not in
 * the document, display:none) keeps its width/height attributes.
 */
export function fitCanvas(canvas) {
  const dpr = (typeof devicePixelRatio === 'number' && devicePixelRatio) || 1;
  const cw = canvas.clientWidth || canvas.width / dpr;
  const ch = canvas.clientHeight || canvas.height / dpr;
  // pin the CSS box, so a larger backing store does not grow the layout
  if (!canvas.style.width) canvas.style.width = `${cw}px`;
  if (!canvas.style.height) canvas.style.height = `${ch}px`;
  const bw = Math.max(1, Math.round(cw * dpr));
  const bh = Math.max(1, Math.round(ch * dpr));
  if (canvas.width !== bw) canvas.width = bw;
  if (canvas.height !== bh) canvas.height = bh;
  return { w: cw, h: ch, dpr };
}
