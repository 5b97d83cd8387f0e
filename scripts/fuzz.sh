#!/bin/sh
# scripts/fuzz.sh [SECONDS_PER_TARGET]: builds every libFuzzer target with
# clang + ASan + UBSan, under the project's -Werror like every other build
# (build-fuzz/), and runs each for a bounded time over a scratch copy of
# its seed corpus. Fails on any finding; a finding's input is
# kept in build-fuzz/findings/ (add it to fuzzing/corpus/<name>/ with the
# fix, so it becomes a regression test).
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES clang libclang-rt-14-dev
secs=${1:-12}
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Dfuzz=true \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link
fi
meson compile -C build-fuzz
mkdir -p build-fuzz/findings
# fuzz_one NAME: one target for $secs over a scratch copy of its corpus;
# writes build-fuzz/NAME.status (0, or 1 on a finding) and its summary.
fuzz_one() {
  name=$1
  work=build-fuzz/corpus-$name
  rm -rf "$work"
  mkdir -p "$work"
  cp fuzzing/corpus/"$name"/* "$work"/ 2>/dev/null || true
  if ! UBSAN_OPTIONS=halt_on_error=1 "build-fuzz/fuzzing/${name}_fuzzer" \
      -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/findings/"$name"- \
      "$work" > build-fuzz/"$name".log 2>&1; then
    echo 1 > build-fuzz/"$name".status
  else
    echo 0 > build-fuzz/"$name".status
  fi
}
# Each libFuzzer run is one process on one core: run as many at once as
# the machine has cores (the same seconds each, so a batch ends together),
# then report in a fixed order.
names=""
for bin in build-fuzz/fuzzing/*_fuzzer; do
  [ -x "$bin" ] || continue
  names="$names $(basename "$bin" _fuzzer)"
done
[ -n "$names" ] || { echo "no fuzz targets were built"; exit 1; }
rm -f build-fuzz/*.status
echo "fuzz each of$names for ${secs}s, $(nproc) at a time"
# shellcheck disable=SC2086
gk_batches fuzz_one $names
status=0
ran=0
for name in $names; do
  if [ "$(cat build-fuzz/"$name".status 2>/dev/null)" != 0 ]; then
    echo "FINDING in $name:"
    tail -40 build-fuzz/"$name".log
    status=1
  else
    echo "$name: $(grep -E "stat::number_of_executed_units|Done [0-9]+ runs" \
      build-fuzz/"$name".log | tail -1)"
  fi
  ran=$((ran + 1))
done
echo "fuzzed $ran targets"
exit $status
