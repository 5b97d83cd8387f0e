#!/usr/bin/env python3
"""TAP test: bench_server.py's capacity rule (good, held_share) on rows
made by hand: every room done, at most 1% of the steps late or held by
stalls (stalled_ms at the step period), the step timer at >= 59.4 Hz.

  test_bench_rule.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_server  # noqa: E402


def row(**over):
    """A 100-room run of 1,000 steps each that holds, changed by `over`."""
    r = {"rooms": 100, "completed": 100, "late_share": 0.0,
         "steps_confirmed": 100000, "room_steps": 100000, "stalled_ms": 0,
         "tick_hz": 60.0}
    r.update(over)
    return r


# (name, row, held share expected, good expected)
CASES = [
    ("a quiet run holds", row(), 0.0, True),
    ("1% late holds", row(late_share=0.01), 0.01, True),
    ("1.1% late fails", row(late_share=0.011), 0.011, False),
    # 60 steps per second: 16,000 ms stalled hold 960 steps of 100,000
    ("stalls holding 0.96% of the steps hold",
     row(stalled_ms=16000), 0.0096, True),
    ("stalls holding 1.2% of the steps fail, though none is late",
     row(stalled_ms=20000), 0.012, False),
    ("late and stalled add up", row(late_share=0.006, stalled_ms=10000),
     0.012, False),
    ("one room lost fails", row(completed=99), 0.0, False),
    ("a step timer at 59.4 Hz holds", row(tick_hz=59.4), 0.0, True),
    ("a step timer at 59.3 Hz fails", row(tick_hz=59.3), 0.0, False),
    ("no tick rate reported fails", row(tick_hz=None), 0.0, False),
    ("steps_confirmed missing: the room steps count",
     row(steps_confirmed=None, stalled_ms=20000), 0.012, False),
]


def main():
    print("1..%d" % len(CASES))
    failed = 0
    for i, (name, r, held, good) in enumerate(CASES, 1):
        got_held = bench_server.held_share(r)
        got_good = bench_server.good(r)
        ok = abs(got_held - held) < 1e-9 and got_good == good
        if not ok:
            failed += 1
        print("%s %d - %s%s" % (
            "ok" if ok else "not ok", i, name,
            "" if ok else " (held %.6f, good %s; want %.6f, %s)"
            % (got_held, got_good, held, good)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
