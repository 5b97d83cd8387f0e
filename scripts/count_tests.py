#!/usr/bin/env python3
"""Counts individual tests in meson test logs and prints "N passed, N failed".

A TAP test (Criterion with --tap) counts each `ok` / `not ok` line, and any
planned test that never reported (a crash) as failed. Any other test counts
as one. build/meson-logs/sdk-check.json (scripts/sdk_check.sh) is a
record of the same shape whose TAP lines count like a suite's; a log that
is missing counts as one failure. So is build-tsan/meson-logs/tsan.json
(scripts/tsan.sh: one `not ok` per ThreadSanitizer report file). A
sanitizer report anywhere in a test's output (a leak found at a forked
test's exit, which Criterion itself does not see; a ThreadSanitizer
warning) counts as one more failure. Exits 1 if anything failed or no test ran.
"""
import json
import re
import sys

SANITIZER_REPORTS = ("ERROR: LeakSanitizer", "ERROR: AddressSanitizer",
                     "runtime error:", "WARNING: ThreadSanitizer",
                     "ERROR: ThreadSanitizer")


def why(out, n=2):
    """The exception lines of the diagnostics after each `not ok` (a Python
    test's AssertionError with its figures), at most n per failure."""
    said, after = [], 0
    for ln in out.splitlines():
        if ln.startswith("not ok"):
            after = n
        elif after and ln.startswith("#") and re.search(r"\w(Error|Exception)\b", ln):
            said.append(ln[:400])
            after -= 1
    return "".join(f"\n    {ln}" for ln in said)


def tail(rec, n=6):
    """What a failed test said: its assertion lines first, then the last
    lines of its stderr."""
    err = (rec.get("stderr") or "").strip().splitlines()
    said = [ln for ln in err if re.search(r"Assert|assert|Error:", ln)][:4]
    return "".join(f"\n    {ln[:200]}" for ln in said + err[-n:])


passed = failed = 0
failures = []  # what failed, printed before the count so a CI tail names it
for path in sys.argv[1:]:
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        failures.append(f"missing test log: {path}")
        failed += 1
        continue
    with f:
        for line in f:
            rec = json.loads(line)
            out = rec.get("stdout") or ""
            if out.startswith("TAP version") or re.search(r"^1\.\.\d+", out, re.M):
                ok = len(re.findall(r"^ok\b", out, re.M))
                bad = len(re.findall(r"^not ok\b", out, re.M))
                plan = re.search(r"^1\.\.(\d+)", out, re.M)
                missing = max(0, int(plan.group(1)) - ok - bad) if plan else 0
                bad += missing
                if rec.get("result") not in ("OK", "EXPECTEDFAIL") and bad == 0:
                    bad = 1
                if bad:
                    lines = re.findall(r"^not ok\b.*$", out, re.M)
                    failures.append(f"{path}: '{rec.get('name')}' "
                                    f"{rec.get('result')}: "
                                    + ("; ".join(lines) or f"{missing} planned tests never reported")
                                    + why(out) + tail(rec))
                passed += ok
                failed += bad
            elif rec.get("result") == "SKIP":
                continue
            elif rec.get("result") in ("OK", "EXPECTEDFAIL"):
                passed += 1
            else:
                failed += 1
                failures.append(f"{path}: '{rec.get('name')}' {rec.get('result')}"
                                + tail(rec))
            text = out + (rec.get("stderr") or "")
            for pat in SANITIZER_REPORTS:
                if pat in text:
                    failures.append(f"sanitizer report in '{rec.get('name')}': {pat}")
                    failed += 1
                    break
for line in failures:
    print(f"failed: {line}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or not passed else 0)
