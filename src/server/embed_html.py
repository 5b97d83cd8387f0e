#!/usr/bin/env python3
"""embed_html.py IN OUT NAME: writes a C header with the bytes of IN as
`static const char NAME[]` (a string literal, NUL-terminated), so the
server serves a file from its own binary. Run by meson at build time."""
import sys


def main():
    src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(src, "rb").read()
    lines = ["/* generated from %s by embed_html.py: do not edit */" %
             src.rsplit("/", 1)[-1],
             "static const char %s[] =" % name]
    for raw in data.splitlines(keepends=True):
        esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\?' else
                      "\\%03o" % ord(c) for c in raw.decode("latin-1"))
        lines.append('    "%s"' % esc)
    lines[-1] += ";"
    open(dst, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
