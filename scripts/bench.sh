#!/bin/sh
# scripts/bench.sh: every benchmark, one table.
#
# Installs what is missing, builds an optimised tree (build-bench,
# buildtype=release), runs each benchmark once (each reports medians over
# its own repetitions), keeps their full output in build-bench/bench-logs/,
# and prints one table of the figures at the end. Benchmarks are not tests:
# no test asserts a time. The machine's load shows in seconds; instruction
# counts (valgrind --tool=callgrind) are the stable figures, see the notes
# in each bench/*.c.
#   sh scripts/bench.sh [--quick]   (--quick: fewer repetitions and rooms)
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES
gk_build build-bench -Dbuildtype=release
b=build-bench
out=$b/bench-logs
mkdir -p "$out"
reps=9
rooms=8,16,32,64,128
if [ "${1:-}" = "--quick" ]; then
  reps=3
  rooms=4,8
fi
run() {
  name=$1
  shift
  echo "== $name: $*"
  "$@" 2>&1 | tee "$out/$name.txt"
}
run push-puzzle $b/bench/bench_push_puzzle "$reps"
run survivors $b/bench/bench_survivors "$reps" 50
run hash $b/bench/bench-hash
run replay $b/bench/bench_replay --reps "$reps"
run net $b/bench/bench_net
run token $b/bench/bench_token
run server python3 bench/bench_server.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot --udp $b/bench/bench_udp --rooms "$rooms"
run delay python3 bench/bench_delay.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot
echo
python3 scripts/bench_table.py "$out"
