#!/usr/bin/env python3
"""test_web.py: gamekit.js (gamekit.wasm under node) against a real gk-server.

  test_web.py agree | desync | rejoin

Starts gk-server on 127.0.0.1 (ENet and WebSocket listeners on ephemeral
ports, JSON log read from its output), then one node client (play.mjs,
the room's creator, slot 0) and two native peers (gk-web-native, which
join by the room code). Every process plays the genre's bot.

  agree   3,000 steps: the server's match_end says every hash was compared
          and 0 desyncs (the client's thread once busy for 60 ms: its
          service() runs the samples due meanwhile, 3 or more); the client's per-step hash chain equals both
          native peers' chains, step for step; gk-replay verify accepts
          the server's replay.
  desync  the client perturbs its own state after step K: the server logs
          a desync for slot 0 at K + 1, the client answers its state
          request, and desync_report is "diffed" and names the field.
  rejoin  the client's WebSocket closes after step 1,000; a fresh client
          rejoins with the reconnect secret from the snapshot, catches up,
          and its chain agrees with the natives' to the end.

Environment: GK_SERVER, GK_WEB_NATIVE, GK_REPLAY, NODE (meson sets them).
Every wait is bounded; exit 0 pass, 1 fail (with the reason on stderr).
"""
import json
import os
import queue
import subprocess
import sys
import shutil
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "web"))
sys.dont_write_bytecode = True
from gkserver import read_chain  # noqa: E402  (STEP HASH chain files)
STEPS = 3000
PERTURB_STEP = 600
# A field no step can undo: the kill counter only counts up. A position
# can be (a player at the arena's edge is clamped back, and the room's
# seed, from the server, differs every run): once, players[0].x + 1 at a
# wall gave the same state after step 601 and no desync at all.
PERTURB_PATH = "players[0].kills"
DROP_STEP = 1000
STATE_STEP = 1500
SERVICE_STEP = 1200  # the client's thread busy 60 ms, then service()
OPTIONS = {"spawn_batch": 3, "spawn_interval_start": 20, "spawning": True}


NAME = "Zo\u00eb \u2605"  # UTF-8 of more than one byte per character


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Proc:
    """A child whose output lines (JSON where they parse) land in a queue."""

    def __init__(self, argv, tag, tmp, stdin=False):
        self.tag = tag
        self.lines = queue.Queue()
        self.all = []
        self.err = open(os.path.join(tmp, tag + ".err"), "w")
        self.out = open(os.path.join(tmp, tag + ".out"), "w")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                  stderr=self.err,
                                  stdin=subprocess.PIPE if stdin else None,
                                  text=True)
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        for line in self.p.stdout:
            self.out.write(line)
            self.out.flush()
            try:
                o = json.loads(line)
            except ValueError:
                o = {"text": line.rstrip("\n")}
            self.all.append(o)
            self.lines.put(o)

    def wait_for(self, pred, secs, what):
        end = time.time() + secs
        while time.time() < end:
            try:
                o = self.lines.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if pred(o):
                return o
        fail("%s: no %s within %d s" % (self.tag, what, secs))

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
        self.err.close()


def server_config(tmp):
    cfg = {
        "listen": {"host": "127.0.0.1", "port": 0},
        "log_level": "info",
        "step_hz": 120,
        "replays": {"dir": os.path.join(tmp, "replays")},
        "desync": {"policy": "report", "dir": os.path.join(tmp, "desyncs")},
        "websocket": {"enabled": True, "host": "127.0.0.1", "port": 0},
        "reconnect": {"hold_ms": 30000, "while_away": "stall"},
        "shutdown_grace_ms": 1000,
    }
    path = os.path.join(tmp, "server.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def compare(name_a, a, name_b, b, first, last):
    """a and b agree on every step first..last (both have each)."""
    for s in range(first, last + 1):
        if s not in a or s not in b:
            fail("step %d missing (%s has %s, %s has %s)" %
                 (s, name_a, s in a, name_b, s in b))
        if a[s] != b[s]:
            fail("step %d: %s hash %s, %s hash %s" %
                 (s, name_a, a[s], name_b, b[s]))


def node_has_websocket(node):
    r = subprocess.run([node, "--experimental-websocket", "-e",
                        "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                       capture_output=True, timeout=30)
    return r.returncode == 0


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "agree"
    env = os.environ
    node = env.get("NODE", "node")
    if not node_has_websocket(node):
        print("skip: %s has no global WebSocket (node 20 or later needed)" %
              node)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gk-web-")
    procs = []
    passed = False
    try:
        srv = Proc([env["GK_SERVER"], "--config", server_config(tmp)],
                   "server", tmp)
        procs.append(srv)
        lst = srv.wait_for(lambda o: o.get("event") == "listening", 10,
                           "listening line")
        port, ws_port = lst["port"], lst["ws_port"]
        url = "ws://127.0.0.1:%d/play" % ws_port
        args = [node, "--experimental-websocket", "--no-warnings",
                os.path.join(HERE, "play.mjs"), url, "create", "3",
                "--seed", "11", "--steps", str(STEPS),
                "--hashes", os.path.join(tmp, "client.hashes")]
        if mode == "desync":
            args += ["--perturb", "%d:%s" % (PERTURB_STEP, PERTURB_PATH)]
        if mode == "rejoin":
            args += ["--drop-at", str(DROP_STEP)]
        if mode != "desync":  # a name: every engine gets the roster
            args += ["--name", NAME]
        if mode == "agree":
            # options reach every engine: the client's through JSON.parse
            # and gk_config_kv, the natives' and the referee's through cJSON
            # and the client predicts (docs/PROTOCOL.md "Prediction"): its
            # confirmed chain and state must be what they are without
            args += ["--state-at", str(STATE_STEP), "--options",
                     json.dumps(OPTIONS), "--predict", "1",
                     "--service-at", str(SERVICE_STEP)]
        cli = Proc(args, "client", tmp, stdin=True)
        procs.append(cli)
        room = cli.wait_for(lambda o: o.get("event") == "room", 15, "room")
        code = room["code"]
        natives = []
        for i in (1, 2):
            h = os.path.join(tmp, "native%d.hashes" % i)
            p = Proc([env["GK_WEB_NATIVE"], "127.0.0.1:%d" % port, code,
                      str(20 + i), h, "180"], "native%d" % i, tmp)
            procs.append(p)
            natives.append((p, h))
            srv.wait_for(lambda o: o.get("event") == "player_joined" and
                         o.get("room") == code and o.get("slot") == i, 15,
                         "player_joined slot %d" % i)
        cli.send("start")
        spec = None
        if mode == "agree":
            # a node spectator from a snapshot once the match runs
            srv.wait_for(lambda o: o.get("event") == "match_start" and
                         o.get("room") == code, 15, "match_start")
            time.sleep(2)
            spec = Proc([node, "--experimental-websocket", "--no-warnings",
                         os.path.join(HERE, "play.mjs"), url, "spectate",
                         code, "--hashes",
                         os.path.join(tmp, "spectator.hashes")],
                        "spectator", tmp)
            procs.append(spec)
        end = srv.wait_for(lambda o: o.get("event") == "match_end" and
                           o.get("room") == code, 240, "match_end")
        cli.wait_for(lambda o: o.get("event") == "ended", 30, "client end")
        for p, _ in natives:
            if p.p.wait(30) != 0:
                fail("%s exited %s" % (p.tag, p.p.returncode))
        if cli.p.wait(30) != 0:
            fail("client exited %s: %s" % (cli.p.returncode, cli.all[-3:]))
        last = end["steps"] - 1
        if last + 1 < STEPS:
            fail("the match ran %d steps, not %d" % (last + 1, STEPS))
        chain = read_chain(os.path.join(tmp, "client.hashes"))
        nat = [read_chain(h) for _, h in natives]
        compare("native1", nat[0], "native2", nat[1], 0, last)
        if mode == "agree":
            check_agree(cli, end, chain, nat, last, tmp)
            check_spectator(spec, nat, last, tmp)
        elif mode == "desync":
            check_desync(srv, cli, end, chain, nat, code)
        else:
            check_rejoin(cli, end, chain, nat, last)
        print("ok: %s, %d steps, %d hashes compared, %d desyncs" %
              (mode, last + 1, end["hashes_compared"], end["desyncs"]))
        passed = True
    finally:
        for p in procs:
            p.stop()
        if passed:
            shutil.rmtree(tmp, ignore_errors=True)
        else:  # the server's, clients' and natives' logs explain it
            print("kept the run's logs in %s" % tmp, file=sys.stderr)


def check_agree(cli, end, chain, nat, last, tmp):
    if end["desyncs"] != 0:
        fail("the server counted %d desyncs" % end["desyncs"])
    # every player's hash of every step reached the referee
    if end["hashes_compared"] < 3 * (last + 1) - 3 * 64:
        fail("only %d hashes compared" % end["hashes_compared"])
    compare("client", chain, "native1", nat[0], 0, last)
    rdir = os.path.join(tmp, "replays")
    reps = [f for f in os.listdir(rdir) if f.endswith(".gkr")]
    if len(reps) != 1:
        fail("replays: %s" % reps)
    v = subprocess.run([os.environ["GK_REPLAY"], "verify",
                        os.path.join(rdir, reps[0])],
                       capture_output=True, text=True, timeout=120)
    if v.returncode != 0:
        fail("gk-replay verify: %s %s" % (v.stdout, v.stderr))
    # the client's state() is gk-replay dump --json's "state", path for path
    got = [o for o in cli.all if o.get("event") == "state"]
    if not got:
        fail("the client printed no state")
    mine = got[0]["map"]
    # taken in the step callback of STATE_STEP: the client may have run
    # a few more confirmed steps in the same batch; the dump at its own
    # step is what it must equal
    if not STATE_STEP + 1 <= mine["step"] <= STATE_STEP + 32:
        fail("state map at step %s, asked at %d" % (mine["step"], STATE_STEP))
    d = subprocess.run([os.environ["GK_REPLAY"], "dump", "--step",
                        str(mine["step"] - 1), "--json",
                        os.path.join(rdir, reps[0])],
                       capture_output=True, text=True, timeout=120)
    if d.returncode != 0:
        fail("gk-replay dump: %s" % d.stderr)
    want = json.loads(d.stdout)
    if int(want["hash"], 16) != int(mine["hash"], 16):
        fail("state map step %s hash %s, dump hash %s" %
             (mine["step"], mine["hash"], want["hash"]))
    if mine["state"] != want["state"]:
        diff = [k for k in set(mine["state"]) | set(want["state"])
                if mine["state"].get(k) != want["state"].get(k)]
        fail("state map differs from dump at %d paths, e.g. %s" %
             (len(diff), sorted(diff)[:5]))
    if len(mine["state"]) < 20:
        fail("state map has only %d paths" % len(mine["state"]))
    # service(): the samples due while the thread was busy ran in it (60 ms
    # at 60 steps a second: 3 or more; not 0, left to the late timer)
    svc = [o for o in cli.all if o.get("event") == "service"]
    if not svc or svc[0]["after"] - svc[0]["before"] < 3:
        fail("service() after 60 ms busy ran %s samples" %
             (svc[0]["after"] - svc[0]["before"] if svc else "no"))
    print("service() after 60 ms busy: %d samples" %
          (svc[0]["after"] - svc[0]["before"]))
    # the head beside it: never hashed, at or past the confirmed step
    head = [o for o in cli.all if o.get("event") == "predicted"]
    if not head or head[0]["map"] is None:
        fail("the client printed no predicted state")
    h = head[0]["map"]
    if int(h["hash"], 16) != 0 or h["step"] < mine["step"] or \
            len(h["state"]) != len(mine["state"]):
        fail("predicted state: step %s hash %s, %d paths" %
             (h["step"], h["hash"], len(h["state"])))


def check_spectator(spec, nat, last, tmp):
    spec.wait_for(lambda o: o.get("event") == "ended", 30, "spectator end")
    snaps = [o for o in spec.all if o.get("event") == "snapshot"]
    if not snaps or snaps[0]["rc"] != 0 or snaps[0]["kind"] != 2:
        fail("the spectator adopted no snapshot: %s" % snaps)
    s0 = snaps[0]["step"]
    if s0 == 0 or s0 > last:
        fail("spectator snapshot at step %d" % s0)
    compare("spectator", read_chain(os.path.join(tmp, "spectator.hashes")),
            "native1", nat[0], s0, last)
    rosters = [o["names"] for o in spec.all if o.get("event") == "roster"]
    if not rosters or rosters[0][:1] != [NAME]:
        fail("the spectator got no roster naming slot 0 %r: %s" %
             (NAME, rosters))
    # on a WebSocket a spectator reports once every 4 steps
    # (GK_NET_PEER_ACK_EVERY_STREAM), not every step: about a quarter as
    # many messages as steps watched (a snapshot's acknowledgement and the
    # end's repeats besides)
    end = [o for o in spec.all if o.get("event") == "ended"][0]
    sent, watched = end["stats"]["packetsOut"], last - s0
    if sent > watched // 3 + 20 or sent < watched // 8:
        fail("the spectator sent %d messages over %d steps, want about "
             "a quarter" % (sent, watched))
    print("# spectator: %d messages over %d steps" % (sent, watched))


def check_desync(srv, cli, end, chain, nat, code):
    k = PERTURB_STEP
    compare("client", chain, "native1", nat[0], 0, k)
    if chain.get(k + 1) == nat[0].get(k + 1):
        fail("the perturbed client's hash did not change at %d" % (k + 1))
    ds = [o for o in srv.all if o.get("event") == "desync" and
          o.get("room") == code]
    if not ds:
        fail("no desync logged")
    if ds[0].get("step") != k + 1 or ds[0].get("slot", ds[0].get("player")) != 0:
        fail("desync logged as %s" % ds[0])
    reps = [o for o in srv.all if o.get("event") == "desync_report"]
    rep = reps[0] if reps else srv.wait_for(
        lambda o: o.get("event") == "desync_report", 30, "desync_report")
    if rep.get("result") != "diffed":
        fail("desync_report: %s" % rep)
    paths = [f.get("path") for f in rep.get("diff", {}).get("fields", [])]
    if rep.get("first_path") != PERTURB_PATH and PERTURB_PATH not in paths:
        fail("desync_report names %s, %s" % (rep.get("first_path"), paths))
    got = [o for o in cli.all if o.get("event") == "ended"]
    if not got or got[0]["stats"]["stateRequests"] < 1:
        fail("the client took no state request: %s" % got)


def check_rejoin(cli, end, chain, nat, last):
    if end["desyncs"] != 0:
        fail("the server counted %d desyncs" % end["desyncs"])
    snaps = [o for o in cli.all if o.get("event") == "snapshot"]
    if not snaps or snaps[0]["rc"] != 0:
        fail("no snapshot adopted: %s" % snaps)
    if not any(o.get("event") == "resumed" for o in cli.all):
        fail("the rejoined client never resumed")
    s0 = snaps[0]["step"]
    rosters = [o["names"] for o in cli.all if o.get("event") == "roster"]
    if len(rosters) < 2 or rosters[-1][:1] != [NAME]:
        fail("the rejoined seat was not told its name %r: %s" %
             (NAME, rosters))
    # steps up to the drop from the first client, from the snapshot on
    # from the second
    compare("client", chain, "native1", nat[0], 0, DROP_STEP)
    compare("client", chain, "native1", nat[0], s0, last)


if __name__ == "__main__":
    main()
