#!/usr/bin/env python3
"""test_types.py: web/gamekit's hand-written declarations (gamekit.d.ts,
replay.d.ts) checked against the JavaScript they describe, by tsc.

tsc (typescript, pinned in types/package-lock.json and installed there by
scripts/test.sh with `npm ci`) first writes the declarations it infers
from gamekit.js and replay.js (allowJs), then compiles a check file with
--strict that:
  - a user's module that imports both packages compiles (the .d.ts files
    are type-checked with it);
  - asserts that every value the .d.ts files export, and every member of
    Client and Replay they declare, is one the JavaScript has (so a method
    renamed or removed in the JS fails here);
  - asserts that every value the JavaScript exports is declared, but for
    INTERNAL (helpers replay.js shares with gamekit.js).

Exit 77 (skipped) without node or the installed typescript unless
GK_WEB_REQUIRED=1; 0 pass, 1 fail (tsc's messages name the key).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.normpath(os.path.join(HERE, ".."))
TYPES = os.path.join(HERE, "types")
TSC = os.path.join(TYPES, "node_modules", "typescript", "bin", "tsc")
INTERNAL = ["kvLeaves", "cstr"]  # gamekit.js helpers for replay.js

CHECK = """\
import type * as Hand from "{pkg}/gamekit.js";
import type * as HandReplay from "{pkg}/replay.js";
import type * as Gen from "./gen/gamekit.js";
import type * as GenReplay from "./gen/replay.js";

// A key listed in an error below is declared on one side only.
type Only<A, B> = Exclude<keyof A, keyof B>;
type None<T extends never> = T;

export type DeclaredValuesExist = None<Only<typeof Hand, typeof Gen>>;
export type DeclaredReplayValuesExist =
  None<Only<typeof HandReplay, typeof GenReplay>>;
export type ClientMembersExist = None<Only<Hand.Client, Gen.Client>>;
export type ReplayMembersExist =
  None<Only<HandReplay.Replay, GenReplay.Replay>>;
export type ExportedValuesAreDeclared =
  None<Exclude<Only<typeof Gen, typeof Hand>, {internal}>>;
export type ExportedReplayValuesAreDeclared =
  None<Only<typeof GenReplay, typeof HandReplay>>;
"""


USE = """\
import {{ connect, load, ERRORS, errorSentence, BUTTONS }} from "{pkg}/gamekit.js";
import type {{ Client, MatchInfo }} from "{pkg}/gamekit.js";
import {{ openReplay }} from "{pkg}/replay.js";

export async function play(url: string): Promise<number> {{
  await load();
  const c: Client = await connect(url, {{}});
  c.on("started", (m: MatchInfo) => void m.players);
  const sentence: string = errorSentence(-11);
  const names: string[] = Object.keys(ERRORS).concat(Object.keys(BUTTONS));
  const r = await openReplay(new Uint8Array(0));
  return sentence.length + names.length + (r ? 1 : 0);
}}
"""


def skip(why):
    print("skip: " + why)
    sys.exit(1 if os.environ.get("GK_WEB_REQUIRED") == "1" else 77)


def tsc(node, args, what):
    p = subprocess.run([node, TSC] + args, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        sys.stdout.write(p.stdout + p.stderr)
        print("not ok - %s" % what)
        sys.exit(1)


def main():
    node = os.environ.get("NODE") or shutil.which("node")
    if not node:
        skip("no node")
    if not os.path.exists(TSC):
        skip("typescript is not installed in %s (scripts/test.sh runs "
             "npm ci there)" % TYPES)
    tmp = tempfile.mkdtemp(prefix="gk-types-")
    try:
        common = ["--target", "es2022", "--module", "es2022",
                  "--moduleResolution", "bundler", "--lib", "es2022,dom"]
        tsc(node, ["--allowJs", "--declaration", "--emitDeclarationOnly",
                   "--outDir", os.path.join(tmp, "gen"),
                   os.path.join(PKG, "gamekit.js"),
                   os.path.join(PKG, "replay.js")] + common,
            "tsc reads gamekit.js and replay.js")
        internal = " | ".join('"%s"' % k for k in INTERNAL)
        check = os.path.join(tmp, "check.ts")
        with open(check, "w") as f:
            f.write(CHECK.format(pkg=PKG, internal=internal))
        use = os.path.join(tmp, "use.ts")
        with open(use, "w") as f:
            f.write(USE.format(pkg=PKG))
        tsc(node, ["--noEmit", "--strict", use] + common,
            "gamekit.d.ts and replay.d.ts compile under --strict")
        # tsc's own declarations of the JS do not all compile (names from
        # its JSDoc): only their keys are compared, so no lib check here
        tsc(node, ["--noEmit", "--strict", "--skipLibCheck", check] + common,
            "the declarations match the JavaScript")
        print("1..1\nok 1 - gamekit.d.ts and replay.d.ts match their "
              "JavaScript under tsc --strict")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
