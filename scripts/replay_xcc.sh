#!/bin/sh
# scripts/replay_xcc.sh [CLANG_DIR [GCC_DIR]]: a replay recorded by one
# compiler's build verifies in the other's.
#
#   CLANG_DIR (default build-clang) is scripts/test.sh's clang -O0 build,
#   already built; GCC_DIR (default build-gcc-O3) is configured here with
#   gcc -O3 (buildtype release) and only its gk-replay is built.
#
# Each gk-replay records the same matches: the survivors bots (4 players,
# a fixed seed) and two published push-puzzle solutions. Each recording
# must pass `gk-replay verify` (the state hash after every step) in the
# OTHER build, and the two builds' recordings must be the same bytes.
#
# Prints TAP (one line per check) and writes the same as one meson-style
# test log record to CLANG_DIR/meson-logs/replay-xcc.json, which
# scripts/count_tests.py counts with the test suites. Exits non-zero if a
# check failed.
set -u
cd "$(dirname "$0")/.." || exit 1
clang_dir=${1:-build-clang}
gcc_dir=${2:-build-gcc-O3}
xsok=tests/data/push-puzzle/xsokoban
rm -f "$clang_dir/meson-logs/replay-xcc.json"
work=$(mktemp -d /tmp/gk-xcc.XXXXXX)
trap 'rm -rf "$work"' EXIT
tap="$work/tap"
: > "$tap"
n=0
failed=0
show=0

# check NAME COMMAND...: one TAP line, the command's output below it as
# comments if it failed (or if show=1: verify's verdict on each file).
check() {
  name=$1
  shift
  n=$((n + 1))
  if "$@" > "$work/log" 2>&1; then
    echo "ok $n - $name" >> "$tap"
    [ "$show" = 1 ] && sed "s|$work/||g; s/^/# /" "$work/log" >> "$tap"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name" >> "$tap"
    sed "s|$work/||g; s/^/# /" "$work/log" | tail -n 30 >> "$tap"
  fi
}

# what DIR: "gcc -O3", from the build's own records (the compiler its
# compile commands run, its optimization option).
what() {
  python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
cc = json.load(open(d + "/compile_commands.json"))[0]["command"].split()[0]
opt = [o["value"] for o in
       json.load(open(d + "/meson-info/intro-buildoptions.json"))
       if o["name"] == "optimization"][0]
print(f"{os.path.basename(cc)} -O{opt}")
PY
}

build_gcc() {
  if [ ! -f "$gcc_dir/build.ninja" ]; then
    CC=gcc meson setup "$gcc_dir" -Dbuildtype=release || return 1
  fi
  meson compile -C "$gcc_dir" gk-replay
}

# record BUILD TAG: the matches, recorded by BUILD's gk-replay into
# $work/TAG-*.gkr.
record() {
  bin=$1/tools/replay/gk-replay
  "$bin" record --genre survivors --players 4 --seed 20261201 --steps 6000 \
    --out "$work/$2-survivors.gkr" || return 1
  for lv in 0001 0042; do
    "$bin" record --genre push-puzzle --level "$xsok/xsokoban$lv.sok" \
      --lurd "@$xsok/xsokoban$lv.sol" --out "$work/$2-pp$lv.gkr" || return 1
  done
}

# verify BUILD TAG: BUILD's gk-replay verifies $work/TAG-*.gkr.
verify() {
  "$1/tools/replay/gk-replay" verify "$work/$2"-*.gkr
}

same_bytes() {
  for f in "$work"/gcc-*.gkr; do
    cmp "$f" "$work/clang-${f##*/gcc-}" || return 1
  done
}

# is DIR WHAT: DIR's gk-replay is built, by WHAT ("clang -O0").
is() {
  test -x "$1/tools/replay/gk-replay" || return 1
  got=$(what "$1") || return 1
  [ "$got" = "$2" ] || { echo "$1 is a $got build, not $2"; return 1; }
}

check "gcc -O3 gk-replay builds ($gcc_dir)" build_gcc
check "$gcc_dir is a gcc -O3 build" is "$gcc_dir" "gcc -O3"
check "$clang_dir is a clang -O0 build with gk-replay" \
  is "$clang_dir" "clang -O0"
g="gcc -O3"
c="clang -O0"
check "$g records survivors and push-puzzle replays" record "$gcc_dir" gcc
check "$c records the same matches" record "$clang_dir" clang
show=1
check "$c verifies the $g replays" verify "$clang_dir" gcc
check "$g verifies the $c replays" verify "$gcc_dir" clang
show=0
check "$g and $c recorded the same bytes" same_bytes

{
  echo "TAP version 13"
  echo "1..$n"
  cat "$tap"
} > "$work/out"
cat "$work/out"
mkdir -p "$clang_dir/meson-logs"
result=OK
[ "$failed" -eq 0 ] || result=FAIL
python3 -c 'import json, sys
print(json.dumps({"name": "replay across compilers", "result": sys.argv[1],
                  "stdout": open(sys.argv[2]).read()}))' \
  "$result" "$work/out" > "$clang_dir/meson-logs/replay-xcc.json"
[ "$failed" -eq 0 ]
