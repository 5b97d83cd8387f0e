#!/bin/sh
# bench/callgrind_steps.sh STEPS CMD [ARG...]: instructions per step of a
# benchmark that brackets its measured steps with callgrind client requests
# (CALLGRIND_TOGGLE_COLLECT, e.g. bench_survivors --early STEPS).
#
# Runs CMD under `valgrind --tool=callgrind --collect-atstart=no`, so only
# the bracketed code is counted, prints CMD's own output, the top five
# functions, then one line:
#   callgrind: N instructions over STEPS steps = M instructions/step
# Without valgrind, or when nothing was collected (the benchmark was built
# without valgrind's headers), it says so and exits 0: a figure is missing,
# no benchmark fails.
set -eu
steps=${1:?usage: callgrind_steps.sh STEPS CMD [ARG...]}
shift
if ! command -v valgrind > /dev/null 2>&1; then
  echo "callgrind: valgrind is not installed: no instruction count"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
valgrind --tool=callgrind --collect-atstart=no \
  --callgrind-out-file="$tmp/cg.out" "$@" 2> "$tmp/vg.txt"
total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg.out" | head -1)
total=${total:-0}
if [ "$total" -eq 0 ]; then
  echo "callgrind: nothing collected (built without valgrind/callgrind.h?)"
  exit 0
fi
callgrind_annotate "$tmp/cg.out" 2> /dev/null |
  grep -E '^ *[0-9,]+ +\([ 0-9.]+%\) +[^ ]+:' | grep -v 'PROGRAM TOTALS' |
  head -5 | sed 's/ \[.*\]$//; s/^/  top: /'
echo "callgrind: $total instructions over $steps steps =" \
  "$((total / steps)) instructions/step"
