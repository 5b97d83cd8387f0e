// decode_map.mjs: decodeMap's integers, exactly as the reference reads
// them (a BigInt of the two halves: a Number within +/-(2^53 - 1), else
// its decimal text), at the edges of its fast path and at random. TAP.
//
//   node decode_map.mjs
import { decodeMap } from "../gamekit.js";
import { FIELD } from "../constants.js";

const EXACT = (1n << 53n) - 1n;
const reference = (signed, v) => {
  const b = signed ? BigInt.asIntN(64, v) : BigInt.asUintN(64, v);
  return b > EXACT || b < -EXACT ? b.toString() : Number(b);
};

// A "GKS1" map (gk_web.h) of one integer field per value, path "vN".
function map(kind, values) {
  const parts = [];
  for (let i = 0; i < values.length; i++) {
    const path = new TextEncoder().encode("v" + i);
    const e = new Uint8Array(3 + path.length + 8);
    const dv = new DataView(e.buffer);
    e[0] = kind;
    e[1] = 0;
    e[2] = path.length;
    e.set(path, 3);
    dv.setBigUint64(3 + path.length, BigInt.asUintN(64, values[i]), true);
    parts.push(e);
  }
  const head = new Uint8Array(24);
  head.set(new TextEncoder().encode("GKS1"), 0);
  new DataView(head.buffer).setUint32(20, values.length, true);
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 24));
  all.set(head, 0);
  let o = 24;
  for (const p of parts) { all.set(p, o); o += p.length; }
  return all;
}

const edges = [0n, 1n, -1n, (1n << 31n), -(1n << 31n), (1n << 32n) - 1n,
  1n << 32n, -(1n << 32n), EXACT, EXACT + 1n, -EXACT, -EXACT - 1n,
  (1n << 53n) - (1n << 32n), -(1n << 53n) + (1n << 32n),
  (1n << 63n) - 1n, -(1n << 63n), (1n << 64n) - 1n, 0x1fffffn << 32n,
  0x200000n << 32n, -(0x200000n << 32n), -(0x1fffffn << 32n)];
let seed = 12345n;
const random = () => {
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
  const shift = seed % 64n;
  return BigInt.asIntN(64, seed >> shift);
};
const values = edges.concat(Array.from({ length: 2000 }, random));
let n = 0, failed = 0;
console.log("1..2");
for (const [name, kind, signed] of [["I64", FIELD.I64, true], ["U64", FIELD.U64, false]]) {
  const got = decodeMap(map(kind, values)).state;
  const bad = values.findIndex((v, i) => got["v" + i] !== reference(signed, v));
  n++;
  if (bad >= 0) failed++;
  console.log(`${bad < 0 ? "ok" : "not ok"} ${n} - ${name} fields read as the reference reads them` +
    (bad < 0 ? "" : `\n# value ${values[bad]}: got ${JSON.stringify(got["v" + bad])}, want ${JSON.stringify(reference(signed, values[bad]))}`));
}
process.exit(failed ? 1 : 0);
