#!/bin/sh
# scripts/sdk_check.sh [BUILD_DIR]: the SDK, checked from a temporary
# install prefix the way a studio uses it.
#
#   1. meson install BUILD_DIR (default build, already built) into a
#      temporary prefix (--destdir; the .pc files' prefix is pointed at it)
#   2. a C file that includes <gamekit/gk_loop.h> builds and runs with
#      `pkg-config --cflags --libs gamekit-core` and nothing else, and
#      links no library but libc
#   3. examples/rts is configured OUT OF TREE against the installed .pc
#      files, built, and its tests run (engines in one process over ENet
#      with the installed test kit, sync test, determinism probe)
#   4. the installed gk-server loads librts.so from its config, the
#      installed gk-bot (--genre-lib) plays two rooms of it, and the
#      installed gk-replay (--genre-lib) verifies the replays the server
#      wrote
#
# Prints TAP (one line per check) and writes the same as one meson-style
# test log record to BUILD_DIR/meson-logs/sdk-check.json, which
# scripts/count_tests.py counts with the test suites. Exits non-zero if a
# check failed. Needs only what scripts/test.sh installs.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
build=${1:-build}
rm -f "$build/meson-logs/sdk-check.json"
work=$(mktemp -d /tmp/gk-sdk.XXXXXX)
tap="$work/tap"
n=0
failed=0
server_pid=""

check() { # check NAME COMMAND...: one TAP line; output kept in $work/log
  name=$1
  shift
  n=$((n + 1))
  if "$@" > "$work/log" 2>&1; then
    echo "ok $n - $name" >> "$tap"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name" >> "$tap"
    sed 's/^/# /' "$work/log" | tail -n 30 >> "$tap"
  fi
}

cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

install_sdk() {
  meson install -C "$build" --destdir "$work/stage" --no-rebuild || return 1
  prefix=$(find "$work/stage" -name gamekit-core.pc | head -n 1)
  [ -n "$prefix" ] || return 1
  pcdir=$(dirname "$prefix")
  prefix="$work/stage$(sed -n 's/^prefix=//p' "$pcdir/gamekit-core.pc")"
  sed -i "s|^prefix=.*|prefix=$prefix|" "$pcdir"/gamekit-*.pc
  bin="$prefix/bin"
  export PKG_CONFIG_PATH="$pcdir"
  for f in gk-server gk-bot gk-replay gk-token; do
    [ -x "$bin/$f" ] || { echo "missing $bin/$f"; return 1; }
  done
}

core_only_program() {
  cat > "$work/hello.c" <<'C'
#include <gamekit/gk_loop.h>
#include <gamekit/gk_genres.h>
#include <stdio.h>
int main(void) {
  const gk_sim *sim = gk_genre_at(0);
  gk_loop loop;
  char err[GK_ERRMSG_MAX];
  void *cfg = NULL;
  if (sim == NULL || gk_loop_init(&loop, NULL) != 0) return 1;
  static max_align_t mem[1 << 14];
  if (sim->config_size > sizeof mem) return 1;
  cfg = mem;
  sim->config_default(cfg);
  if (gk_loop_start(&loop, sim, cfg, 1, sim->players_min, err, sizeof err))
    return puts(err), 1;
  gk_const_input in;
  gk_const_input_init(&in, NULL, sim->players_min, sim->input_size);
  int ran = gk_loop_frame(&loop, &in.base, gk_budget_steps(10), 0);
  printf("%s: %d steps, hash %016llx\n", sim->name, ran,
         (unsigned long long)loop.last_hash);
  gk_loop_close(&loop);
  return ran != 10;
}
C
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Werror -o "$work/hello" "$work/hello.c" \
    $(pkg-config --cflags --libs gamekit-core) || return 1
  "$work/hello" || return 1
  libs=$(readelf -d "$work/hello" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  echo "needs: $libs"
  [ "$libs" = "libc.so.6" ]
}

build_example() {
  meson setup "$work/rts" "$root/examples/rts" &&
    meson compile -C "$work/rts"
}

play_example() {
  mkdir -p "$work/play" && cp "$work/rts/librts.so" "$work/play/" &&
    cat > "$work/play/server.json" <<'J'
{
  "listen": { "host": "127.0.0.1", "port": 0 },
  "replays": { "enabled": true, "dir": "replays" },
  "shutdown_grace_ms": 2000,
  "genres": { "rts": { "path": "librts.so", "options": { "hp": 400 } } }
}
J
  (cd "$work/play" && exec "$bin/gk-server" --config server.json \
    > "$work/play/server.log" 2>&1) &
  server_pid=$!
  port=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*"event":"listening".*"port":\([0-9]*\).*/\1/p' \
      "$work/play/server.log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/play/server.log"; return 1; }
  "$bin/gk-bot" --genre-lib "$work/play/librts.so" --server "127.0.0.1:$port" \
    --genre rts --rooms 2 --players 3 --steps 600 --timeout 120 || return 1
  kill -INT "$server_pid" && wait "$server_pid"
  server_pid=""
  ls "$work/play/replays/"*.gkr > /dev/null || return 1
  "$bin/gk-replay" verify --genre-lib "$work/play/librts.so" \
    "$work/play/replays/"*.gkr
}

bin=/nonexistent
check "meson install into a temporary prefix" install_sdk
check "a <gamekit/gk_loop.h> program builds with gamekit-core alone and \
needs only libc" core_only_program
check "examples/rts builds out of tree against the installed .pc files" \
  build_example
check "examples/rts tests pass (engines over ENet, sync test, probe)" \
  meson test -C "$work/rts" --print-errorlogs
check "the installed gk-server hosts rts from its config, gk-bot plays it, \
gk-replay verifies the replays" play_example

{
  echo "TAP version 13"
  echo "1..$n"
  cat "$tap"
} > "$work/out"
cat "$work/out"
mkdir -p "$build/meson-logs"
result=OK
[ "$failed" -eq 0 ] || result=FAIL
python3 -c 'import json, sys
print(json.dumps({"name": "sdk check", "result": sys.argv[1],
                  "stdout": open(sys.argv[2]).read()}))' \
  "$result" "$work/out" > "$build/meson-logs/sdk-check.json"
[ "$failed" -eq 0 ]
