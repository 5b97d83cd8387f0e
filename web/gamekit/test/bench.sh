#!/bin/sh
# web/gamekit/test/bench.sh NATIVE_BUILD [WEB_BUILD]: wasm step / native
# step for survivors, the same benchmark program (bench/bench_survivors.c)
# built natively (NATIVE_BUILD, -O2 in debugoptimized) and as WebAssembly
# (WEB_BUILD, default build-web: -O2, run under node), pinned to one CPU:
#   early   2 players, the default config, steps 301..2300 (the mean of
#           one clock pair around them all, the bots' input recorded on a
#           first run: per-step clock reads, in wasm32 a call out to
#           JavaScript each, weighed more than the step); node runs it
#           three times: V8's default tiering
#           cold (its baseline compiler, a match's first seconds), the same
#           after 10 untimed runs of those steps (warm: the code a match
#           runs after its first seconds; native gets the same warm-up),
#           and --no-liftoff (optimised code from the first call)
#   dense   8 players, 2,000 enemies, 1,000 projectiles (medians of 15
#           batches of 200 steps)
# GK_BENCH_CALLGRIND=1 adds instruction counts (below), which do not
# wobble. Both must print the same checksum (the states are the same). Wall-clock
# figures on a shared machine wobble: take ratios from one run.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
nat=$1/bench/bench_survivors
web=${2:-$root/build-web}
NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
export NODE_PATH
[ -f "$web/build.ninja" ] || sh "$root/web/gamekit/build.sh" "$web" >/dev/null
ninja -C "$web" web/gamekit/bench_survivors.js >/dev/null
js="$web/web/gamekit/bench_survivors.js"
cpu=${GK_BENCH_CPU:-1}
field() { awk -v k="$1" '$0 ~ k {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) {print $i; exit}}'; }
n_early=$(taskset -c "$cpu" "$nat" --early 2000 | field "ns/step .mean")
w_early=$(taskset -c "$cpu" node --no-experimental-fetch "$js" --early 2000 | field "ns/step .mean")
w_early_tf=$(taskset -c "$cpu" node --no-experimental-fetch --no-liftoff "$js" --early 2000 | field "ns/step .mean")
n_warm=$(taskset -c "$cpu" "$nat" --early 2000 10 | field "ns/step .mean")
w_warm=$(taskset -c "$cpu" node --no-experimental-fetch "$js" --early 2000 10 | field "ns/step .mean")
n_out=$(taskset -c "$cpu" "$nat" 15 200)
w_out=$(taskset -c "$cpu" node --no-experimental-fetch "$js" 15 200)
n_sum=$(echo "$n_out" | grep checksum)
w_sum=$(echo "$w_out" | grep checksum)
[ "$n_sum" = "$w_sum" ] || { echo "checksums differ: $n_sum / $w_sum" >&2; exit 1; }
n_step=$(echo "$n_out" | field "^  step  ")
w_step=$(echo "$w_out" | field "^  step  ")
n_sh=$(echo "$n_out" | field "step \\+ hash")
w_sh=$(echo "$w_out" | field "step \\+ hash")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "survivors early (2 players): native $n_early ns/step, wasm $w_early" \
  "(x$(ratio "$w_early" "$n_early")), wasm --no-liftoff $w_early_tf" \
  "(x$(ratio "$w_early_tf" "$n_early")); warm: native $n_warm, wasm" \
  "$w_warm (x$(ratio "$w_warm" "$n_warm"))"
echo "survivors dense (8 players, 2,000 enemies): step native $n_step ns," \
  "wasm $w_step (x$(ratio "$w_step" "$n_step")); step + hash native" \
  "$n_sh, wasm $w_sh (x$(ratio "$w_sh" "$n_sh")); $n_sum"
echo "gamekit.wasm: $(wc -c < "$root/web/gamekit/dist/gamekit.wasm") bytes"
# Instructions, which do not wobble (--callgrind, or GK_BENCH_CALLGRIND=1):
# each program runs twice under callgrind counting everything, and the
# difference is divided by the extra work, so start-up (node's, V8's
# compile of the module) cancels out: early --early 1200 minus --early 200
# = 1,000 steps; dense "3 100" minus "1 100" = 400 steps + 400 hashes.
# V8 runs with --no-liftoff so both runs execute optimised code.
[ "${GK_BENCH_CALLGRIND:-0}" = 1 ] || exit 0
ir() { # CMD...: total instructions of CMD under callgrind
  out=$(mktemp)
  valgrind --tool=callgrind --smc-check=all-non-file \
    --callgrind-out-file="$out" "$@" > /dev/null 2>&1
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out"
  rm -f "$out"
}
wnode="node --no-experimental-fetch --no-liftoff $js"
# (--early N runs N steps twice: recording the bots' input, then through
# the records: 2,000 steps' worth, the bots' input of 1,000 in them)
e_n=$(( ($(ir "$nat" --early 1200) - $(ir "$nat" --early 200)) / 2000 ))
# shellcheck disable=SC2086
e_w=$(( ($(ir $wnode --early 1200) - $(ir $wnode --early 200)) / 2000 ))
d_n=$(( ($(ir "$nat" 3 100) - $(ir "$nat" 1 100)) / 400 ))
# shellcheck disable=SC2086
d_w=$(( ($(ir $wnode 3 100) - $(ir $wnode 1 100)) / 400 ))
echo "callgrind early step: native $e_n, wasm $e_w instructions" \
  "(x$(ratio "$e_w" "$e_n"))"
echo "callgrind dense step + hash: native $d_n, wasm $d_w instructions" \
  "(x$(ratio "$d_w" "$d_n"))"
