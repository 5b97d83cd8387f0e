#!/bin/sh
# scripts/test.sh: installs what is missing (Debian 12), builds the project
# twice (plain, and with AddressSanitizer + UndefinedBehaviorSanitizer),
# runs every test suite in both builds, and ends with one line that counts
# the individual tests: "N passed, N failed". Exits non-zero if any failed.
# The SDK check (scripts/sdk_check.sh: install into a temporary prefix,
# build examples/rts out of tree, play it through the installed programs)
# runs after the plain tests; each of its checks is counted too, and so
# are the logs named in GK_EXTRA_TEST_LOGS (.ci/run: the TSan leg's).
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES $GK_TEST_PACKAGES $GK_BROWSER_PACKAGES
gk_build build
gk_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all
status=0
meson test -C build --print-errorlogs || status=1
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --timeout-multiplier 3 || status=1
sh scripts/sdk_check.sh build || status=1
# GK_EXTRA_TEST_LOGS: more meson-style logs to count with these (.ci/run
# passes the ThreadSanitizer leg's, scripts/tsan.sh).
# shellcheck disable=SC2086
python3 scripts/count_tests.py build/meson-logs/testlog.json \
  build-asan/meson-logs/testlog.json build/meson-logs/sdk-check.json \
  ${GK_EXTRA_TEST_LOGS:-} || status=1
exit $status
