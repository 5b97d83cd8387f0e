#!/bin/sh
# check_golden.sh GK_CHAIN GK_REPLAY ROOT: the probe's runs that replay the
# inputs of the committed golden replays must end on the final hash those
# replays record. This ties the determinism matrix (which compares probe
# output across compilers and CPUs) to the golden replays themselves.
set -eu
chain=$1
replay=$2
root=$3
out=$("$chain" --steps 1 "$root/tests/data/push-puzzle")
fail=0
check() { # LABEL-REGEX GKR
  mine=$(printf '%s\n' "$out" | grep -E "$1" | sed -n 's/.*final=\([0-9a-f]*\).*/\1/p')
  theirs=$("$replay" info --json "$2" | sed -n 's/.*"final_hash":"0x\([0-9a-f]*\)".*/\1/p')
  if [ -n "$mine" ] && [ "$mine" = "$theirs" ]; then
    echo "ok: $(basename "$2") final hash $mine"
  else
    echo "MISMATCH: $(basename "$2"): probe '$mine', replay '$theirs'"
    fail=1
  fi
}
check '^golden survivors players=2 seed=7 steps=3000 ' \
  "$root/tests/data/replays/survivors-2p-seed7-3000.gkr"
check '^solution xsokoban0001 ' \
  "$root/tests/data/replays/push-puzzle-xsokoban0001.gkr"
exit $fail
