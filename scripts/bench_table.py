#!/usr/bin/env python3
"""bench_table.py LOG_DIR: one table from the benchmark logs scripts/bench.sh
wrote (one file per benchmark). Every figure is the benchmark's own median
(or percentile) from this one run; ratios are taken within the run."""
import json
import os
import re
import sys

d = sys.argv[1]
rows = []


def log(name):
    p = os.path.join(d, name + ".txt")
    return open(p, encoding="utf-8").read() if os.path.exists(p) else ""


def add(area, figure, value):
    rows.append((area, figure, value))


t = log("push-puzzle")
m = re.search(r"median of \d+ passes: (\d+) steps/s, ([\d.]+) ns/step", t)
if m:
    add("push-puzzle step (90 solutions, hash every step)", "steps/s",
        m.group(1))
    add("push-puzzle step (90 solutions, hash every step)", "ns/step",
        m.group(2))

t = log("ws-memory")
m = re.search(r"per idle WebSocket connection: ([\d.]+) KiB \(0 -> (\d+)\)", t)
if m:
    add("gk-server, idle WebSocket connections (" + m.group(2) + ")",
        "RSS KiB per connection", m.group(1))

t = log("survivors")
for key, label in (("step", "step alone"), ("step \\+ hash", "step + hash")):
    m = re.search(r"^\s*" + key + r"\s+(\d+) ns/step", t, re.M)
    if m:
        add("survivors, 2,000 enemies + 1,000 projectiles", label + " ns/step",
            m.group(1))
m = re.search(r"hash alone\s+(\d+) ns", t)
if m:
    add("survivors, 2,000 enemies + 1,000 projectiles", "hash alone ns",
        m.group(1))
m = re.search(r"state size\s+(\d+) bytes", t)
if m:
    add("survivors, 2,000 enemies + 1,000 projectiles", "state bytes",
        m.group(1))

t = log("hash")
for line in t.splitlines()[1:]:
    f = line.split()
    if len(f) == 6:
        add("hash vs memcpy (" + f[0] + ", " + f[1] + " B state)",
            "hash / xxh3 only / memcpy ns", f"{f[2]} / {f[3]} / {f[4]}")
        add("hash vs memcpy (" + f[0] + ", " + f[1] + " B state)",
            "hash / memcpy", f[5])

t = log("replay")
for m in re.finditer(r"^(.+?)\s+verify\s+(\d+) steps\s+median\s+[\d.]+ ms\s+(\d+) steps/s",
                     t, re.M):
    add("gk-replay verify: " + m.group(1).strip(), "steps/s", m.group(3))
for m in re.finditer(r"^(.+?)\s+verify/bare ([\d.]+)\s+hashed/bare ([\d.]+)\s+verify/hashed ([\d.]+)",
                     t, re.M):
    add("gk-replay verify: " + m.group(1).strip(),
        "verify/bare, hashed/bare, verify/hashed",
        f"{m.group(2)}, {m.group(3)}, {m.group(4)}")

t = log("net")
for m in re.finditer(r"^(clean|loss 5%)\s+samples\s+(\d+)\s+p50\s+([\d.]+) ms\s+p99\s+([\d.]+) ms.*?budget.*?([\d.]+) ms\s+over budget\s+([\d.]+%)",
                     t, re.M):
    add("confirm latency, loopback, " + m.group(1),
        "p50 / p99 ms (budget delay x step + RTT)",
        f"{m.group(3)} / {m.group(4)} ({m.group(5)}), over budget {m.group(6)}")

t = log("token")
for key, label in (("open", "open a valid token (server check)"),
                   ("refused", "open a forged token (refused at the seal)"),
                   ("mint", "mint (backend)"),
                   ("seen", "replay cache, 1,000 ids (already used)")):
    m = re.search(r"^token " + key + r"\s+(\d+) ns/op", t, re.M)
    if m:
        add("connect token: " + label, "ns/op (median)", m.group(1))

t = log("server")
m = re.search(r"bare UDP send\+receive on loopback: (\d+) ns CPU per datagram", t)
bare = int(m.group(1)) if m else 0
if m:
    add("bare UDP send+receive loop (same run)", "CPU ns/datagram", m.group(1))
for line in t.splitlines():
    if not line.startswith("{"):
        continue
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "rooms" not in r or "cpu_us_per_room_step" not in r:
        continue
    ratio = f" ({r['cpu_ns_per_packet'] / bare:.1f}x bare UDP)" if bare else ""
    dg = r.get("datagrams_per_room_step")
    add(f"gk-server, {r['rooms']} 2-player rooms at 60 Hz",
        "CPU us/room-step, ns/packet, late steps, datagrams/room-step",
        f"{r['cpu_us_per_room_step']:.1f}, {r['cpu_ns_per_packet']:.0f}{ratio}, "
        f"{100 * r['late_share']:.2f}%, {dg if dg is not None else '-'}")
m = re.search(r"largest room count with <= 1% late steps: (\d+)", t)
load = re.search(r"^load: (.+)$", t, re.M)
if m:
    add("gk-server capacity" + (f" ({load.group(1)})" if load else ""),
        "most rooms with <= 1% late steps", m.group(1))
m = re.search(r"step timer over (\d+) s: ([\d.]+) ticks/s", t)
if m:
    add("gk-server step timer", f"ticks/s over {m.group(1)} s (step_hz 60)",
        m.group(2))

t = log("soak")
m = re.search(r"after warm-up \((\d+) intervals.*?\): RSS ([+-]\d+) KiB.*?fds "
              r"([+-]\d+).*?late share max ([\d.]+)%", t)
if m:
    add("gk-server soak (64 rooms churning, 2% loss)",
        f"growth over {m.group(1)} min after warm-up: RSS KiB, fds; late max",
        f"{m.group(2)}, {m.group(3)}; {m.group(4)}%")

t = log("desync")
reps = re.search(r"median of (\d+) runs", t)
m = re.search(r"mismatch -> report written: ([\d.]+) ms", t)
b = re.search(r"answer (\d+) \(STATE_BEGIN", t)
st = re.search(r"peer state (\d+) bytes", t)
mem = re.search(r"peer memory kept to answer: (\d+) bytes now, (\d+) peak", t)
if m:
    area = "desync forensics (survivors, 2,000 enemies, loopback%s)" % (
        ", median of " + reps.group(1) if reps else "")
    add(area, "mismatch -> written report ms", m.group(1))
    if b and st:
        add(area, "bytes moved (state bytes)", f"{b.group(1)} ({st.group(1)})")
    if mem:
        add(area, "peer history bytes (peak)",
            f"{mem.group(1)} ({mem.group(2)})")

t = log("survivors-early")
m = re.search(r"callgrind: (\d+) instructions over (\d+) steps = (\d+) "
              r"instructions/step", t)
e = re.search(r"enemies (\d+)\.\.(\d+)", t)
if m:
    add("survivors early step (2 players, %s enemies; callgrind)" % (
        e.group(2) if e else "few"), "instructions/step", m.group(3))

if not rows:
    print("no benchmark figures found in " + d)
    sys.exit(1)
w1 = max(len(r[0]) for r in rows)
w2 = max(len(r[1]) for r in rows)
print(f"{'benchmark':<{w1}}  {'figure':<{w2}}  value")
print(f"{'-' * w1}  {'-' * w2}  -----")
for a, f, v in rows:
    print(f"{a:<{w1}}  {f:<{w2}}  {v}")
