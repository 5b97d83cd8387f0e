#!/usr/bin/env python3
"""gen_constants.py ROOT [OUT]: writes web/gamekit/constants.js, the
pages' copy of the C constants they share with the core, read from the C
headers (nothing in it is typed by hand):

  ERRORS   src/sim/gk_err.h GK_ERRNO_MAP and GK_ERRNO_SAY: code ->
           { name, text (gk_strerror's phrase), say (a sentence for people) }
  MSG      src/net/gk_net_wire.h *_MSG_MAP: message ids
  END, ROLE, SNAP   src/net/gk_net_wire.h: MATCH_END reasons, JOIN_ROOM
           roles, snapshot kinds; WIRE: sizes of the wire
  EV, BTN  web/gamekit/src/gk_web.h: the engine's out-queue events and
           gk_web_press buttons
  FIELD    src/sim/gk_state.h: the state map's field kinds
  PP, SV   genres/push-puzzle/gk_push_puzzle.h, genres/survivors/gk_survivors.h

Without OUT it prints the module; --check FILE compares FILE with it. A code of GK_ERRNO_MAP without a sentence
in GK_ERRNO_SAY (or the other way round) is refused, as is a group that
comes out empty (a header renamed under us). meson's test
'web constants are generated from the C headers' compares the committed
file with a fresh generation."""
import difflib
import re
import sys

# (group, header, prefix, kinds): kinds says where names are taken from:
# enum members and/or #defines with an integer value.
GROUPS = [
    ("END", "src/net/gk_net_wire.h", "GK_WIRE_END_", "enum"),
    ("ROLE", "src/net/gk_net_wire.h", "GK_WIRE_ROLE_", "enum"),
    ("SNAP", "src/net/gk_net_wire.h", "GK_WIRE_SNAP_", "enum"),
    ("WIRE", "src/net/gk_net_wire.h", "GK_WIRE_", "define"),
    ("EV", "web/gamekit/src/gk_web.h", "GK_WEB_EV_", "enum"),
    ("BTN", "web/gamekit/src/gk_web.h", "GK_WEB_BTN_", "enum"),
    ("FIELD", "src/sim/gk_state.h", "GK_FIELD_", "enum"),
    ("PP", "genres/push-puzzle/gk_push_puzzle.h", "GK_PP_", "enum define"),
    ("SV", "genres/survivors/gk_survivors.h", "GK_SV_", "enum define"),
]

STRINGS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'


def fail(msg):
    sys.stderr.write("gen_constants.py: %s\n" % msg)
    sys.exit(1)


def unquote(lits):
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', lits)
    return "".join(p.encode().decode("unicode_escape") for p in parts)


def macro(text, name):
    """The body of #define NAME(X) ..., its continuation lines joined."""
    m = re.search(r"#define\s+%s\(X\)((?:.*\\\n)*.*)" % name, text)
    if not m:
        fail("no macro %s" % name)
    return m.group(1).replace("\\\n", " ")


def value(expr, known):
    """An integer C expression of literals and known names, or None."""
    expr = re.sub(r"/\*.*?\*/", "", expr).strip()
    expr = re.sub(r"\bU?INT\d+_C\(([^)]*)\)", r"(\1)", expr)
    expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", expr)
    expr = re.sub(r"\b([A-Z_][A-Z0-9_]*)\b",
                  lambda m: str(known[m.group(1)]) if m.group(1) in known
                  else m.group(1), expr)
    if not re.fullmatch(r"[0-9a-fx()<>|&+\-* ]+", expr):
        return None
    try:
        return int(eval(expr, {"__builtins__": {}}))
    except Exception:  # not an integer constant we can read
        return None


def integers(text):
    """Every integer enum member and #define of a header, in order."""
    out = {}
    kinds = {}
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            name, _, expr = item.partition("=")
            name = name.strip()
            v = value(expr, out) if expr else nxt
            if v is None:
                continue
            out[name] = v
            kinds[name] = "enum"
            nxt = v + 1
    for name, expr in re.findall(r"^#define\s+(GK_\w+)[ \t]+(.+)$", text,
                                 re.M):
        v = value(expr, out)
        if v is not None and name not in out:
            out[name] = v
            kinds[name] = "define"
    return out, kinds


def errors(root):
    text = open(root + "/src/sim/gk_err.h").read()
    codes = re.findall(r"X\((\w+),\s*(-\d+),\s*%s\)" % STRINGS,
                       macro(text, "GK_ERRNO_MAP"))
    says = dict((n, unquote(s)) for n, s in re.findall(
        r"X\((\w+),\s*%s\)" % STRINGS, macro(text, "GK_ERRNO_SAY")))
    if not codes:
        fail("GK_ERRNO_MAP has no codes")
    names = [n for n, _, _ in codes]
    for n in names:
        if n not in says:
            fail("GK_%s has no sentence in GK_ERRNO_SAY" % n)
    for n in says:
        if n not in names:
            fail("GK_ERRNO_SAY names GK_%s, which GK_ERRNO_MAP has not" % n)
    return [(int(c), "GK_" + n, unquote(t), says[n]) for n, c, t in codes]


def messages(root):
    text = open(root + "/src/net/gk_net_wire.h").read()
    out = []
    for name in re.findall(r"#define\s+(GK_WIRE_\w*MSG_MAP)\(X\)", text):
        out += re.findall(r"X\((\w+),\s*(\d+),", macro(text, name))
    if not out:
        fail("no message ids in gk_net_wire.h")
    return sorted(((n, int(v)) for n, v in out), key=lambda p: p[1])


def js(v):
    return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"')


def obj(pairs, indent="  "):
    return "{\n" + "".join("%s%s: %s,\n" % (indent, k, v)
                           for k, v in pairs) + "}"


def generate(root):
    out = ["// constants.js: generated by web/gamekit/gen_constants.py from "
           "the C headers;",
           "// do not edit (meson test 'web constants are generated from the "
           "C headers').", ""]
    out.append("/** Error codes (src/sim/gk_err.h): code -> { name, text, "
               "say }. */")
    out.append("export const ERRORS = Object.freeze(" + obj(
        ('"%d"' % c, "{ name: %s, text: %s,\n    say: %s }" %
         (js(n), js(t), js(s))) for c, n, t, s in errors(root)) + ");")
    out.append("")
    out.append("/** Message ids (src/net/gk_net_wire.h GK_WIRE_*MSG_MAP). */")
    out.append("export const MSG = Object.freeze(" +
               obj((n, str(v)) for n, v in messages(root)) + ");")
    cache = {}
    for group, header, prefix, kinds in GROUPS:
        if header not in cache:
            cache[header] = integers(open(root + "/" + header).read())
        vals, kind = cache[header]
        pairs = [(n[len(prefix):], str(v)) for n, v in vals.items()
                 if n.startswith(prefix) and kind[n] in kinds.split()
                 and not any(n.startswith(p) and p != prefix and
                             p.startswith(prefix) for _, h, p, _ in GROUPS
                             if h == header)]
        if not pairs:
            fail("no %s* names in %s" % (prefix, header))
        out.append("")
        out.append("/** %s* (%s). */" % (prefix, header))
        out.append("export const %s = Object.freeze(%s);" % (group,
                                                            obj(pairs)))
    out.append("")
    out.append("/** The sentence a page shows for a GK error code (a number);"
               " an unknown")
    out.append(" * code is named with its number. */")
    out.append("export function errorSentence(code) {")
    out.append("  const e = ERRORS[String(code)];")
    out.append("  return e ? e.say : `An unknown error happened (code "
               "${code}).`;")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 2:
        fail("usage: gen_constants.py ROOT [OUT | --check FILE]")
    text = generate(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--check":
        kept = open(sys.argv[3]).read()
        if kept != text:
            diff = difflib.unified_diff(kept.splitlines(), text.splitlines(),
                                        sys.argv[3], "fresh", lineterm="")
            fail("%s is not what the C headers make now (run "
                 "web/gamekit/gen_constants.py . %s):\n%s" %
                 (sys.argv[3], sys.argv[3], "\n".join(list(diff)[:40])))
        print("%s equals a fresh generation" % sys.argv[3])
    elif len(sys.argv) > 2:
        open(sys.argv[2], "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
