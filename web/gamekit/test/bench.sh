#!/bin/sh
# web/gamekit/test/bench.sh NATIVE_BUILD [WEB_BUILD]: wasm step / native
# step for survivors, the same benchmark program (bench/bench_survivors.c)
# built natively (NATIVE_BUILD, -O2 in debugoptimized) and as WebAssembly
# (WEB_BUILD, default build-web: -O2, run under node), pinned to one CPU:
#   early   2 players, the default config, steps 301..2300 (per-step mean;
#           node runs it twice: V8's default tiering, which starts in its
#           baseline compiler, and --no-liftoff, optimised code from the
#           first call)
#   dense   8 players, 2,000 enemies, 1,000 projectiles (medians of 15
#           batches of 200 steps)
# Both must print the same checksum (the states are the same). Wall-clock
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
  "(x$(ratio "$w_early_tf" "$n_early"))"
echo "survivors dense (8 players, 2,000 enemies): step native $n_step ns," \
  "wasm $w_step (x$(ratio "$w_step" "$n_step")); step + hash native" \
  "$n_sh, wasm $w_sh (x$(ratio "$w_sh" "$n_sh")); $n_sum"
echo "gamekit.wasm: $(wc -c < "$root/web/gamekit/dist/gamekit.wasm") bytes"
