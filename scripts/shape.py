#!/usr/bin/env python3
"""scripts/shape.py: the code-shape limits of docs/ARCHITECTURE.md.

Fails (exit 1) when any tracked .c file is over 800 lines, or a
function outside tests/ (and genres/*/tests, fuzzing/) is over 100 lines.
Functions are found as top-level brace blocks whose opening line is not a
struct/enum/union/array initialiser: good enough for this tree's style
(clang-format'ed C11, one function per top-level block)."""
import re
import subprocess
import sys

FILE_MAX, FUNC_MAX = 800, 100


def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    depth, start, name = 0, None, None
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"|//.*$', '""', line)
        if depth == 0 and "{" in code and start is None:
            head = " ".join(re.sub(r"/\*.*?(\*/|$)|^\s*\*.*$", "", x)
                            for x in lines[max(0, i - 3):i + 1])
            ms = list(re.finditer(r"(\w+)\s*\(", head))
            m = ms[0] if ms else None
            for c in ms:  # the declarator: the first call-like name
                if c.group(1) not in ("if", "for", "while", "switch",
                                      "return", "sizeof"):
                    m = c
                    break
            if m and not re.search(r"=\s*\{|\b(struct|enum|union)\b[^(]*\{", code):
                start, name = i, m.group(1)
        depth += code.count("{") - code.count("}")
        if depth == 0 and start is not None and "}" in code:
            yield name, start + 1, i - start + 1
            start = None


def main():
    files = subprocess.run(["git", "ls-files", "*.c"], capture_output=True,
                           text=True, check=True).stdout.split()
    bad = 0
    for f in files:
        in_tests = f.startswith(("tests/", "fuzzing/")) or "/tests/" in f
        n = sum(1 for _ in open(f, encoding="utf-8", errors="replace"))
        if n > FILE_MAX:  # every .c file, tests and genres included
            print(f"{f}: {n} lines (limit {FILE_MAX})")
            bad += 1
        if in_tests:
            continue
        for name, line, length in functions(f):
            if length > FUNC_MAX:
                print(f"{f}:{line}: {name} is {length} lines (limit {FUNC_MAX})")
                bad += 1
    print(f"shape: {bad} over the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
