#!/bin/sh
# scripts/lint.sh [BUILD_DIR]: checks the tree against the project's
# .clang-format (every tracked .c/.h file must be formatted) and runs
# clang-tidy with .clang-tidy over the C files in BUILD_DIR's
# compile_commands.json (default: build) that live in src/, tools/ and
# genres/ (tests and fuzzers are not linted: they poke at edges on
# purpose), then scripts/shape.py (files <= 800 lines, functions <= 100).
# First of all it checks that no tracked file names a tracker number.
# Exits non-zero on any finding. Needs clang-format and
# clang-tidy (Debian: clang-format, clang-tidy).
#   sh scripts/lint.sh --tracker-refs   runs only the tracker check
#   sh scripts/lint.sh --no-tidy [DIR]  all but clang-tidy (.ci/run's lint
#                                       leg: scripts/test.sh runs the tidy)
#   sh scripts/lint.sh --tidy [DIR]     clang-tidy alone over DIR, already
#                                       built (scripts/test.sh runs it
#                                       beside the gcc leg's tests), and
#                                       writes DIR/meson-logs/tidy.json: a
#                                       record scripts/count_tests.py counts
set -eu
cd "$(dirname "$0")/.."

# Docs and comments name the feature ("late join", "desync forensics"),
# never a tracker number such as "(issue N)": that means nothing to a
# reader outside the tracker. Every tracked text file is searched; none
# is excluded, as the tree keeps no CHANGELOG-like history (if one comes,
# exclude its path here with ':!PATH' and say so). Prints file:line of
# each hit; returns 1 if there is any.
lint_tracker_refs() {
  refs=$(git grep -n -I -i -E '\bissues? [0-9]+' || true)
  [ -z "$refs" ] && return 0
  echo "lint: tracker numbers in docs or comments; name the feature instead:"
  printf '%s\n' "$refs"
  return 1
}
if [ "${1:-}" = "--tracker-refs" ]; then
  lint_tracker_refs && echo "lint: no tracker numbers"
  exit
fi

. scripts/lib.sh
gk_install clang-format clang-tidy
mode=all
case ${1:-} in
  --tidy | --no-tidy)
    mode=${1#--}
    shift
    ;;
esac
build=${1:-build}

# lint_tidy: clang-tidy over src/, tools/ and genres/ with BUILD's compile
# commands; prints its findings, returns 1 if there are any.
lint_tidy() {
  tidy=$(git ls-files 'src/*.c' 'tools/*.c' 'genres/*.c' | grep -v '/tests/')
  out=$(mktemp)
  rc=0
  # shellcheck disable=SC2086
  if ! printf '%s\n' $tidy | xargs -P "$(nproc)" -n 4 \
      clang-tidy -p "$build" --quiet 2>/dev/null >"$out"; then
    grep -E 'warning:|error:' "$out" | sort -u | head -40
    echo "lint: clang-tidy found the problems above"
    rc=1
  fi
  rm -f "$out"
  return $rc
}

if [ "$mode" = tidy ]; then
  t=$(date +%s)
  mkdir -p "$build/meson-logs"
  said=$(lint_tidy) && result=OK || result=FAIL
  [ -z "$said" ] || printf '%s\n' "$said"
  echo "lint: clang-tidy $result, $(($(date +%s) - t)) s"
  python3 -c 'import json, sys
print(json.dumps({"name": "clang-tidy over src, tools and genres",
                  "result": sys.argv[1], "stderr": sys.argv[2]}))' \
    "$result" "$said" > "$build/meson-logs/tidy.json"
  [ "$result" = OK ]
  exit
fi

status=0
lint_tracker_refs || status=1
files=$(git ls-files '*.c' '*.h')
# shellcheck disable=SC2086
if ! clang-format --dry-run --Werror $files 2>/tmp/gk-format.$$; then
  n=$(grep -c -E 'warning:|error:' /tmp/gk-format.$$ || true)
  echo "lint: $n places not formatted (fix: clang-format -i \$(git ls-files '*.c' '*.h'))"
  grep -E 'warning:|error:' /tmp/gk-format.$$ | cut -d: -f1 | sort | uniq -c | head -20
  status=1
fi
rm -f /tmp/gk-format.$$
if [ "$mode" = all ]; then
  # clang-tidy needs the compile commands and the generated headers
  # shellcheck disable=SC2086
  gk_install $GK_PACKAGES
  gk_build "$build" >/dev/null
  lint_tidy || status=1
fi
python3 scripts/shape.py || status=1
[ $status -eq 0 ] && echo "lint: tracker numbers, format, $([ "$mode" = all ] &&
  echo "clang-tidy ")and code shape clean"
exit $status
