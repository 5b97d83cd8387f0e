// replay_headers.mjs: the forged-header corpus (tests/data/replays/headers)
// read by the browser side: replay.js under node, its header through
// JSON.parse, then every step run. tests/replay/replay_headers.c wrote each
// corpus text into a sealed copy of the base replay (FORGED/NAME.gkr) and
// checks gk-replay's verdict line against verdicts.txt; this computes the
// same line (name, verdict status and message, the header's values) and
// checks it against the same verdicts.txt, so both sides give one verdict
// and read the same values. TAP on stdout.
//
//   node replay_headers.mjs FORGED_DIR CORPUS_DIR
import fs from "node:fs";
import path from "node:path";
import { openReplay } from "../replay.js";

const [forged, corpus] = process.argv.slice(2);
const want = new Map();
for (const line of fs.readFileSync(path.join(corpus, "verdicts.txt"), "utf8").split("\n"))
  if (line) want.set(line.split("\t")[0], line);
const names = fs.readdirSync(corpus).filter((f) => f.endsWith(".header"))
  .map((f) => f.slice(0, -".header".length)).sort();

// Bytes below 0x20 and backslashes as \xHH, UTF-8 kept (as the C side).
function escaped(s) {
  const out = [];
  for (const b of new TextEncoder().encode(s))
    if (b < 0x20 || b === 0x5c) out.push(...new TextEncoder().encode("\\x" + b.toString(16).padStart(2, "0")));
    else out.push(b);
  return new TextDecoder().decode(new Uint8Array(out));
}

async function verdictLine(name) {
  const r = await openReplay(fs.readFileSync(path.join(forged, name + ".gkr")));
  try {
    const v = r.playable ? r.run(r.info.steps) : r.verdict();
    let values = "-";
    const i = r.info;
    if (i.headerOk)
      values = `genre=${i.genre} version=${i.genreVersion} seed=${i.seed} ` +
        `players=${i.players} input_size=${i.inputSize} ` +
        `step=${i.stepSeconds[0]}/${i.stepSeconds[1]} lockstep=` +
        (i.lockstep ? `${i.lockstep.inputDelay}/${i.lockstep.lead}` : "none") +
        " origin=" + escaped(i.origin !== null ? i.origin : "(none)");
    return [name, v.status, escaped(v.message), values].join("\t");
  } finally {
    r.close();
  }
}

console.log(`1..${names.length}`);
let failed = 0;
for (const [k, name] of names.entries()) {
  const line = await verdictLine(name);
  if (want.get(name) === line) {
    console.log(`ok ${k + 1} - ${name}`);
  } else {
    failed++;
    console.log(`not ok ${k + 1} - ${name}\n# verdicts.txt: ${want.get(name)}\n# replay.js:    ${line}`);
  }
}
process.exit(failed ? 1 : 0);
