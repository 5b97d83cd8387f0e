#!/bin/sh
# scripts/tsan.sh [SUITE...]: the ThreadSanitizer leg.
#
# Sets up build-tsan with -Db_sanitize=thread (gcc, whose libtsan comes
# with gcc-12 on Debian 12; clang when gcc cannot link a TSan program;
# -Dweb_client=false: no gamekit.wasm), and builds only what the suites
# run.
# Debian's libcjson is not instrumented, so ThreadSanitizer cannot see
# cJSON's process-global error pointer, the state the "no cJSON call off
# the loop thread" rule protects: in this build every program links
# tests/tsan_cjson.c, whose wrappers of cJSON's parsers (ld --wrap) write
# one global in instrumented code, so two parses on two threads at once
# are reported. Then runs the suites (default: server and net) with a
# timeout multiplier, less those in suites timing (latency assertions),
# hostile (bad bytes on the loop thread alone), netns (a loss test in
# a network namespace) and roomplay (end-to-end tests of what a room
# decides, in real time; tests/room checks those decisions in process)
# and loopwork (end-to-end tests of the loop thread's own work: links,
# admin, auth, figures, the lockstep peers): nothing there runs on a
# second thread that the rest does not. What does run on one: the
# recordings' and desync bundles' jobs (libuv's pool) in "server end to
# end", "server faults" and "server desync", and static files read on
# the pool in "server ws limits" (a slow disk), which stay.
#
# Every process writes its reports to build-tsan/meson-logs/tsan/report.PID
# (TSAN_OPTIONS log_path): the test binaries and the gk-server / gk-bot /
# gk-replay children they spawn (build-tsan's own, so TSan builds too;
# their stderr goes to the e2e logs, so it is not where reports are looked
# for). halt_on_error=1 exitcode=66 makes a report end that process.
# scripts/tsan.supp holds the suppressions (each entry says why).
#
# Writes build-tsan/meson-logs/tsan.json, one meson-style test log record
# ("tsan reports", TAP: ok when no process reported, else one `not ok` per
# report file, with its text), which scripts/count_tests.py counts with
# build-tsan/meson-logs/testlog.json (.ci/run hands both to
# scripts/test.sh). Prints the reports and the wall time. Exits non-zero
# if a test failed or anything was reported.
set -u
cd "$(dirname "$0")/.."
. scripts/lib.sh
root=$(pwd)
build=build-tsan
t0=$(date +%s)
# shellcheck disable=SC2086
gk_install $GK_PACKAGES $GK_TEST_PACKAGES

# The compiler: the first that builds and runs a TSan program here.
pick_cc() {
  probe=$(mktemp -d /tmp/gk-tsan-cc.XXXXXX)
  printf '%s\n' '#include <pthread.h>' \
    'static void *f(void *a) { return a; }' \
    'int main(void) { pthread_t t; pthread_create(&t, 0, f, 0);' \
    '  return pthread_join(t, 0); }' > "$probe/t.c"
  for c in gcc clang; do
    if command -v "$c" >/dev/null 2>&1 &&
        "$c" -fsanitize=thread "$probe/t.c" -o "$probe/t" -lpthread \
          >/dev/null 2>&1 && "$probe/t" >/dev/null 2>&1; then
      rm -rf "$probe"
      echo "$c"
      return 0
    fi
  done
  rm -rf "$probe"
  return 1
}

if [ ! -f "$build/build.ninja" ]; then
  cc=$(pick_cc) || { echo "tsan: no compiler builds a TSan program"; exit 1; }
  echo "tsan: building $build with $cc"
  CC=$cc meson setup "$build" -Db_sanitize=thread -Db_lundef=false \
    -Dweb_client=false >/dev/null || exit 1
fi
# only what the suites run (meson test builds each test's depends), not
# the fuzz drivers, benchmarks or gamekit.wasm

t1=$(date +%s)

logs="$root/$build/meson-logs"
reports="$logs/tsan"
rm -rf "$reports"
mkdir -p "$reports"
rm -f "$logs/tsan.json"
[ $# -gt 0 ] || set -- server net
suites=""
for s in "$@"; do suites="$suites --suite $s"; done
suites="$suites --no-suite timing --no-suite hostile --no-suite netns \
--no-suite roomplay --no-suite loopwork"
status=0
# shellcheck disable=SC2086
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 \
log_path=$reports/report suppressions=$root/scripts/tsan.supp" \
  meson test -C "$build" --print-errorlogs --timeout-multiplier 4 \
  $suites || status=1

n=0
tap=$(mktemp /tmp/gk-tsan-tap.XXXXXX)
for f in "$reports"/report.*; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  echo "tsan: $(basename "$f"):"
  cat "$f"
  {
    echo "not ok $n - ThreadSanitizer report in $(basename "$f")"
    sed 's/^/# /' "$f" | head -n 60
  } >> "$tap"
done
if [ "$n" -eq 0 ]; then
  echo "ok 1 - no ThreadSanitizer report from any process (suites:$suites)" \
    > "$tap"
  plan=1
  result=OK
else
  plan=$n
  result=FAIL
  status=1
fi
python3 -c 'import json, sys
print(json.dumps({"name": "tsan reports", "result": sys.argv[1],
                  "stdout": "TAP version 13\n1..%s\n%s" % (sys.argv[2],
                            open(sys.argv[3]).read())}))' \
  "$result" "$plan" "$tap" > "$logs/tsan.json"
rm -f "$tap"
t2=$(date +%s)
echo "tsan: $n report(s); suites:$suites; wall time $((t2 - t0)) s" \
  "(setup $((t1 - t0)) s, build and tests $((t2 - t1)) s)"
exit $status
