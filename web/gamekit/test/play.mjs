// play.mjs: one gamekit.js client under node, for test_web.py.
//
//   node --experimental-websocket play.mjs URL MODE ARG [options]
//     MODE create  ARG = max players: creates a survivors room, prints
//                  {"event":"room","code":...}, and starts the match when
//                  a line "start" arrives on stdin
//     MODE join    ARG = room code
//     MODE spectate ARG = room code: watches from a snapshot
//   options: --seed S (the bot's seed; the client plays the genre's bot),
//            --steps N (the creator ends the match after N steps),
//            --hashes FILE ("STEP HASH" per step, as gk-web-native),
//            --perturb STEP:PATH, --drop-at STEP (close the socket after
//            STEP and rejoin on a fresh connection from the snapshot),
//            --state-at STEP (print the state map after STEP; with
//            --predict also the predicted head's, {"event":"predicted"}),
//            --predict 1 (draw a predicted head; "rollback" events are
//            counted and printed at the end),
//            --name NAME (set once in the room: NAME; every ROSTER is
//            printed, {"event":"roster","names":[...]}),
//            --service-at STEP (after STEP, the thread busy for 60 ms,
//            then service(): {"event":"service"} with the samples before
//            and after it, none of them run by the engine's timer),
//            --timeout S (default 120)
// Every event is one JSON line on stdout; exit 0 once the match ended.
import fs from "node:fs";
import readline from "node:readline";
import { connect } from "../gamekit.js";

const [url, mode, arg, ...rest] = process.argv.slice(2);
const opt = {};
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, "")] = rest[i + 1];
const seed = Number(opt.seed || 1);
const steps = Number(opt.steps || 0);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const hashes = opt.hashes ? fs.openSync(opt.hashes, "w") : null;
const guard = setTimeout(() => {
  say({ event: "timeout" });
  process.exit(1);
}, Number(opt.timeout || 120) * 1000);
let lines = [];

function flush() {
  if (hashes !== null && lines.length) {
    fs.writeSync(hashes, lines.join(""));
    lines = [];
  }
}

function attach(c, state) {
  c.on("step", (step, hash) => {
    lines.push(step + " " + hash + "\n");
    if (lines.length >= 256) flush();
    state.last = step;
    if (opt["state-at"] !== undefined && step === Number(opt["state-at"])) {
      say({ event: "state", map: c.state() });
      if (opt.predict) say({ event: "predicted", map: c.predictedState() });
    }
    if (opt["service-at"] !== undefined && step === Number(opt["service-at"]) &&
        !state.serviced) {
      state.serviced = true;
      setTimeout(() => busyThenService(c), 0);
    }
    if (mode === "create" && steps && step + 1 === steps && !state.endSent) {
      state.endSent = true;
      c.endMatch(2);
    }
    if (opt["drop-at"] !== undefined && step === Number(opt["drop-at"]) && !state.dropped) {
      state.dropped = true;
      say({ event: "drop", step });
      setImmediate(() => rejoin(c, state));
    }
  });
  c.on("started", (m) => say({ event: "started", match: m }));
  c.on("desync", (d) => say({ event: "desync", ...d }));
  c.on("snapshot", (s) => say({ event: "snapshot", ...s }));
  c.on("resumed", () => say({ event: "resumed", stats: c.stats() }));
  c.on("roster", (r) => say({ event: "roster", names: r.names }));
  c.on("message", (m) => {
    if (m.type === "error") say({ event: "error", ...m });
  });
  c.onRollback(() => state.rollbacks++);
  c.on("ended", (e) => {
    flush();
    say({ event: "ended", ...e, stats: c.stats(), perturbed: c.m._gk_webx_perturbed(c.w),
      rollbacks: state.rollbacks });
    clearTimeout(guard);
    c.close();
    process.exit(0);
  });
  c.on("close", () => {
    if (!state.dropped || state.rejoined) {
      say({ event: "closed" });
      process.exit(1);
    }
  });
}

// A busy thread (60 ms: the engine's timer is due and cannot run), then
// service(): the samples due meanwhile run in that call.
function busyThenService(c) {
  const end = performance.now() + 60;
  while (performance.now() < end);
  const before = c.stats().samples;
  c.service();
  say({ event: "service", before, after: c.stats().samples });
}

// The socket closes at once (no goodbye); a fresh client takes the slot
// back with the reconnect secret.
async function rejoin(old, state) {
  const { code, slot, secret } = old;
  flush();
  old.ws.onclose = null;
  old.close();
  const c = await connect(url, { bot: true, seed });
  state.rejoined = true;
  attach(c, state);
  c.rejoin(code, slot, secret);
}

const c = await connect(url, { bot: true, seed, predict: !!opt.predict });
const state = { last: -1, endSent: false, dropped: false, rejoined: false,
  rollbacks: 0 };
attach(c, state);
if (opt.perturb) {
  const k = opt.perturb.indexOf(":");
  c.perturb(Number(opt.perturb.slice(0, k)), opt.perturb.slice(k + 1), 1);
}
if (mode === "create") {
  const r = await c.createRoom({ genre: "survivors", maxPlayers: Number(arg),
    options: opt.options ? JSON.parse(opt.options) : null });
  say({ event: "room", code: r.code, slot: r.slot });
  if (opt.name) c.setName(opt.name);
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (l) => {
    if (l.trim() === "start") c.start();
  });
} else if (mode === "spectate") {
  c.spectate(arg);
  say({ event: "spectating" });
} else {
  const j = await c.join(arg);
  say({ event: "joined", slot: j.slot });
}
