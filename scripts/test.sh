#!/bin/sh
# scripts/test.sh: installs what is missing (Debian 12) and runs three legs:
#   gcc    build/: every test suite (gcc, -O2), then the SDK check
#          (scripts/sdk_check.sh: install into a temporary prefix, build
#          examples/rts out of tree, play it through the installed programs)
#          and clang-tidy over the gcc tree (scripts/lint.sh --tidy, beside
#          the tests, counted as one test).
#          The browser suite "web" (tests/web: headless chromium over the
#          DevTools protocol) is in it, with GK_WEB_REQUIRED=1: a missing
#          chromium fails it instead of skipping.
#   asan   build-asan/: every test suite again but "web", "roomplay" and
#          "timing", gcc with AddressSanitizer + UndefinedBehaviorSanitizer
#          ("roomplay": end-to-end tests of what a room decides, which
#          tests/room checks in process under this leg too; "timing":
#          assertions on latency, noise under a sanitizer); of "web" only the
#          C glue's own tests ("gk_web glue", "gk_web_replay glue"): the
#          rest of that suite drives the same wasm and pages as in the gcc
#          leg, and its server side is the "server" suite's (CI time,
#          .ci/run under 30 minutes); three tests at a time
#   clang  build-clang/: the whole project (tests, bench, fuzz corpus
#          drivers, tools) with clang -O0 -Werror; every suite but the
#          end-to-end ones (suites "server", "roomplay" and "loopwork":
#          processes that play matches on the clock, which the other two
#          legs run; the in-process "server config" and "server match
#          options" do run; nor "web"), then
#          scripts/replay_xcc.sh: replays recorded by a gcc -O3 gk-replay
#          (build-gcc-O3/) verify in the clang -O0 one and the other way
#          round, byte-identical.
# It ends with one line that counts the individual tests of all three
# legs (scripts/count_tests.py), and those of the logs named in
# GK_EXTRA_TEST_LOGS (.ci/run: the TSan leg's): "N passed, N failed".
# Exits non-zero if any failed.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES $GK_TEST_PACKAGES $GK_BROWSER_PACKAGES \
  $GK_CLANG_PACKAGES
gk_npm_ci web/gamekit/test/types
gk_build build
# (-Dweb_client=false: the two legs run no browser test, and build no
# gamekit.wasm; the ASan leg builds only what its tests run, through
# meson test: no benchmarks)
gk_setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all -Dweb_client=false
(CC=clang && export CC &&
  gk_setup build-clang -Dbuildtype=debug -Dweb_client=false)
status=0
GK_WEB_REQUIRED=1
export GK_WEB_REQUIRED
# The other two legs' trees build while the gcc leg's tests run, as
# SCHED_IDLE tasks (chrt --idle): they take only CPU time no other task
# wants, and a test's process that wakes preempts them at once. The gcc
# leg's browser tests keep both cores busy, but its end-to-end tests wait
# on a match's clock and leave 70-90% of the CPU idle (a clean-clone run:
# 15-33% busy from its fifth minute on); the two builds were 3 minutes of
# wall time between the legs. A build that fails here fails again, in the
# foreground and with its errors shown, in its leg's own commands below.
# clang-tidy (scripts/lint.sh --tidy, over the gcc tree) runs beside them
# the same way; its verdict is counted with the tests (tidy.json).
# The clang tree builds after the ASan tree (a marker file says when), so
# the ASan leg need not wait for it.
rm -f build-asan/background-build.done
(chrt --idle 0 ninja -C build-asan >build-asan/background-build.log 2>&1
  touch build-asan/background-build.done) &
asan_build=$!
# (or, should the ASan build be gone without it, at once: no orphan waits)
(while [ ! -e build-asan/background-build.done ] &&
  kill -0 "$asan_build" 2>/dev/null; do sleep 1; done
  chrt --idle 0 ninja -C build-clang >build-clang/background-build.log \
    2>&1) &
clang_build=$!
chrt --idle 0 sh scripts/lint.sh --tidy build >build/meson-logs/tidy.txt 2>&1 &
tidy=$!
# three at a time on two cores: most end-to-end and browser tests wait on
# a match's 60 steps/s clock, not on the CPU (the timing tests still run
# alone: is_parallel false)
meson test -C build --print-errorlogs --num-processes 3 || status=1
wait $asan_build || true
# three at a time here too: the end-to-end tests wait on the match clock
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --timeout-multiplier 3 \
  --num-processes 3 --no-suite web --no-suite roomplay --no-suite timing \
  || status=1
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --logbase web-glue \
  "gk_web glue" "gk_web_replay glue" || status=1
sh scripts/sdk_check.sh build || status=1
wait $clang_build || true
meson compile -C build-clang || status=1
meson test -C build-clang --print-errorlogs --no-suite server \
  --no-suite web --no-suite roomplay --no-suite loopwork || status=1
meson test -C build-clang --print-errorlogs --logbase server-in-process \
  "server config" "server match options" || status=1
sh scripts/replay_xcc.sh build-clang build-gcc-O3 || status=1
wait $tidy || cat build/meson-logs/tidy.txt
# GK_EXTRA_TEST_LOGS: more meson-style logs to count with these (.ci/run
# passes the ThreadSanitizer leg's, scripts/tsan.sh).
# shellcheck disable=SC2086
python3 scripts/count_tests.py build/meson-logs/testlog.json \
  build/meson-logs/tidy.json \
  build-asan/meson-logs/testlog.json build-asan/meson-logs/web-glue.json \
  build/meson-logs/sdk-check.json \
  build-clang/meson-logs/testlog.json \
  build-clang/meson-logs/server-in-process.json \
  build-clang/meson-logs/replay-xcc.json ${GK_EXTRA_TEST_LOGS:-} || status=1
exit $status
