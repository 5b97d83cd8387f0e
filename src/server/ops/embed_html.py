#!/usr/bin/env python3
"""embed_html.py IN OUT NAME: writes a C header with the bytes of IN as
`static const char NAME[]`, NUL-terminated, so the server serves a file
from its own binary (sizeof(NAME) - 1 is the file's length). The bytes are
an initializer list, not a string literal: C11 compilers need only take
literals of 4095 characters, and -Woverlength-strings (-Wpedantic) says
so. Run by meson at build time."""
import sys


def main():
    src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(src, "rb").read() + b"\0"
    lines = ["/* generated from %s by embed_html.py: do not edit */" %
             src.rsplit("/", 1)[-1],
             "static const char %s[] = {" % name]
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join("%d" % b for b in data[i:i + 16]) +
                     ",")
    lines.append("};")
    open(dst, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
