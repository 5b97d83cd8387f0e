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
#   sh scripts/bench.sh [--quick] [--minutes N]
#     --quick: fewer repetitions and rooms, a 1-minute soak
#     --minutes N: the soak (bench/soak.py: 64 rooms churning, 2% loss) runs
#       N minutes (default 3; a full soak is 30)
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
soak_minutes=3
search=""
while [ $# -gt 0 ]; do
  case $1 in
  --quick)
    reps=3
    rooms=4,8
    soak_minutes=1
    search="--search-s 30"
    ;;
  --minutes)
    soak_minutes=${2:?--minutes needs a value}
    shift
    ;;
  *)
    echo "usage: sh scripts/bench.sh [--quick] [--minutes N]" >&2
    exit 2
    ;;
  esac
  shift
done
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
run metrics $b/bench/bench_metrics
run rejoin $b/bench/bench_rejoin
run desync $b/bench/bench_desync
# shellcheck disable=SC2086
run server python3 bench/bench_server.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot --udp $b/bench/bench_udp --rooms "$rooms" $search
soak_warmup=1
[ "$soak_minutes" -ge 5 ] 2>/dev/null && soak_warmup=2
run soak python3 bench/soak.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot --replay $b/tools/replay/gk-replay \
  --minutes "$soak_minutes" --warmup "$soak_warmup" --pin
run delay python3 bench/bench_delay.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot
run ws-memory python3 bench/bench_ws_memory.py \
  --server $b/src/server/gk-server
run ws-loss python3 bench/bench_ws_loss.py --server $b/src/server/gk-server \
  --bot $b/tools/bot/gk-bot
run survivors-early sh bench/callgrind_steps.sh 300 \
  $b/bench/bench_survivors --early 300
echo
python3 scripts/bench_table.py "$out"
