#!/bin/sh
# scripts/fleet.sh N: a local fleet for trying it: one redis-server on a
# unix socket and N gk-server nodes (1..16) sharing its room directory
# (the `fleet` config section, src/fleet/README.md). Node i listens for
# ENet on 127.0.0.1:(7700+i), WebSocket (and the play page) on 7800+i,
# admin on 7900+i; its config, log and replays are in fleet-run/node-i/.
# Once every node reached the directory it prints each node's addresses
# and "fleet.sh: N nodes up". A room made on one node is joined at any
# other: that node answers REDIRECT and the client goes to the room's
# node, e.g.
#   build/tools/bot/gk-bot --server 127.0.0.1:7702 --genre survivors \
#     --join CODE --players 1
# for a CODE made at 127.0.0.1:7701. Ctrl-C (or SIGTERM) stops them all
# and waits for them (exit 0); a node that stops by itself stops the rest
# (exit 1).
# Environment (tests/fleet runs it so):
#   GK_FLEET_BUILD=DIR  a build directory already built: nothing is
#                       installed or built (default: install, build build/)
#   GK_FLEET_RUN=DIR    the nodes' folders and Redis (default fleet-run/)
#   GK_FLEET_PORT=B     ports B+i, B+100+i, B+200+i (default 7700); 0:
#                       ports the system picks, printed from the logs
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
n=${1:-2}
case $n in '' | *[!0-9]*) echo "usage: sh scripts/fleet.sh N (1..16)" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$n" -le 16 ] || { echo "fleet.sh: N must be 1..16" >&2; exit 2; }
base=${GK_FLEET_PORT:-7700}
case $base in '' | *[!0-9]*) echo "fleet.sh: GK_FLEET_PORT must be a number" >&2; exit 2 ;; esac
[ "$base" -eq 0 ] || [ "$base" -le 65000 ] || { echo "fleet.sh: GK_FLEET_PORT must be 0..65000" >&2; exit 2; }
build=${GK_FLEET_BUILD:-}
if [ -z "$build" ]; then
  # shellcheck disable=SC2086
  gk_install $GK_PACKAGES redis-server
  gk_build build
  build=build
fi
server=$build/src/server/gk-server
[ -x "$server" ] || { echo "fleet.sh: no $server (build it first)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "fleet.sh: no redis-server" >&2; exit 1; }
run=${GK_FLEET_RUN:-$(pwd)/fleet-run}
mkdir -p "$run"
run=$(cd "$run" && pwd)
sock=$run/redis.sock
pids=""
stop() {
  trap - INT TERM EXIT
  for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
  # every node and Redis has stopped once this returns
  for p in $pids; do wait "$p" 2>/dev/null || true; done
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

# port I OFFSET: node I's port at OFFSET (0 ENet, 100 WebSocket, 200
# admin), or 0 for ephemeral ports.
port() { [ "$base" -eq 0 ] && echo 0 || echo $((base + $2 + $1)); }
# logged LOG EVENT KEY: KEY's number in the last EVENT line of a node's log.
logged() {
  sed -n "s/.*\"event\":\"$2\".*\"$3\":\([0-9][0-9]*\).*/\1/p" "$1" | tail -n 1
}

rm -f "$sock" # a killed run's socket would pass for a live one
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
  --dir "$run" > "$run/redis.log" 2>&1 &
pids="$!"
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$sock" ] || { echo "fleet.sh: redis-server did not start ($run/redis.log)" >&2; exit 1; }
i=1
while [ "$i" -le "$n" ]; do
  d=$run/node-$i
  mkdir -p "$d"
  cat > "$d/server.json" <<JSON
{"listen": {"host": "127.0.0.1", "port": $(port "$i" 0)},
 "replays": {"dir": "$d/replays"},
 "websocket": {"enabled": true, "host": "127.0.0.1", "port": $(port "$i" 100),
               "static_dir": "web"},
 "admin": {"enabled": true, "listen": "127.0.0.1:$(port "$i" 200)"},
 "fleet": {"enabled": true, "redis": "unix:$sock", "node": "node-$i",
           "enet": "127.0.0.1:$(port "$i" 0)",
           "ws_url": "ws://127.0.0.1:$(port "$i" 100)/play"}}
JSON
  "$server" --config "$d/server.json" > "$d/server.log" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
# Each node up (it logged fleet_up) within 10 s, or the whole fleet stops.
i=1
for p in $pids; do
  [ "$p" = "${pids%% *}" ] && continue # Redis
  log=$run/node-$i/server.log
  t=0
  while ! grep -q '"event":"fleet_up"' "$log" 2>/dev/null; do
    if ! kill -0 "$p" 2>/dev/null || [ $t -ge 200 ]; then
      echo "fleet.sh: node-$i did not start; its log ($log):" >&2
      tail -n 5 "$log" >&2
      exit 1
    fi
    sleep 0.05
    t=$((t + 1))
  done
  echo "node-$i: ENet 127.0.0.1:$(logged "$log" listening port)," \
    "page http://127.0.0.1:$(logged "$log" listening ws_port)/," \
    "admin http://127.0.0.1:$(logged "$log" admin_listening port)/ (log $log)"
  i=$((i + 1))
done
echo "fleet.sh: $n nodes up on $sock; Ctrl-C stops them"
# Until a signal, or until any of them stops by itself.
while :; do
  for p in $pids; do
    kill -0 "$p" 2>/dev/null && continue
    echo "fleet.sh: process $p stopped; stopping the fleet" >&2
    exit 1
  done
  sleep 0.5
done
